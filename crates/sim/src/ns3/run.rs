//! Running an experiment of the HPCC ns-3 fork from its own files (`lossless sim --ns3
//! CONFIG`), in the steps a front end interleaves with its own outputs and progress display:
//!
//! 1. [`Experiment::load`] reads `config.txt` and the topology and flow files it names (or
//!    the given ones), converts them into a [`SimConfig`] and says on the way what it read
//!    and what it ignores;
//! 2. [`Experiment::outputs`] places `fct.txt`, `pfc.txt` and `qlen.txt` (at the config's
//!    paths, or under one directory) and [`Experiment::claim`] checks them against the inputs;
//! 3. [`OutputPaths::create`] opens them; [`ForkOutputs::step`] runs the simulator with the
//!    fork's queue monitor sampling on the way; [`ForkOutputs::write`] writes the fork's files
//!    from the run and stages them, to be put in place with the front end's other outputs.

use std::fmt;
use std::path::{Path, PathBuf};

use lossless_files::{Claims, ClashError, Commit, InputError, Output, OutputError};
use lossless_proto::units::Instant;

use super::{
    Config, FctLine, Ns3Error, OutputKeys, PfcLine, QlenMonitor, QlenPart, Run, parse_fct, resolve_input,
};
use super::{write_fct, write_pfc};
use crate::config::SimConfig;
use crate::observer::Observer;
use crate::report::Report;
use crate::sim::Simulator;

/// Largest config.txt read, bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Largest topology file read, bytes.
pub const MAX_TOPOLOGY_BYTES: u64 = 64 << 20;
/// Largest flow file read, bytes; its flows are limited by count too
/// ([`MAX_FLOWS`](super::MAX_FLOWS), 1 M: about 5.8 GB of QPs).
pub const MAX_FLOW_BYTES: u64 = 256 << 20;

/// What the fork models and this simulator models otherwise, said once per run.
pub const NOT_HONOURED: [&str; 3] = [
    "ECN marks: drawn from this simulator's seeded generators, not ns-3's, so marked packets differ one by one (not in distribution)",
    "a NIC's round robin over its QPs: continues after the QP served last, where the fork's list index can go stale when finished QPs are removed (docs/ns3.md)",
    "events at the same nanosecond: run in the order this simulator schedules them, which is not always the fork's (ns-3 orders them by when each was scheduled)",
];

/// What the fork's HPCC-PINT (`CC_MODE 10`) does and this simulator does otherwise, said on
/// its runs.
pub const PINT_NOT_HONOURED: &str = "HPCC-PINT's random rounding: drawn from seeded per-port and per-flow streams, not the fork's one unseeded C rand() stream, so the codes differ packet by packet (not in distribution; docs/ns3.md)";

/// What an experiment is run from.
#[derive(Debug, Clone, Copy)]
pub struct Ns3Options<'a> {
    /// The fork's `config.txt`.
    pub config: &'a Path,
    /// The topology file instead of the config's `TOPOLOGY_FILE`.
    pub topology: Option<&'a Path>,
    /// The flow file instead of the config's `FLOW_FILE`.
    pub flows: Option<&'a Path>,
    /// The seed of every random choice instead of the converted config's.
    pub seed: Option<u64>,
}

/// Why an experiment could not be loaded, placed, run or written.
#[derive(Debug, thiserror::Error)]
pub enum Ns3RunError {
    /// An input file could not be read.
    #[error(transparent)]
    Read(#[from] InputError),
    /// An input file's content was refused (file, line, key, found and allowed).
    #[error(transparent)]
    Input(#[from] Ns3Error),
    /// The directory of an output the config names does not exist.
    #[error(
        "{file}:{line}: {key} {}: the directory {} does not exist (the fork does not create it either): create it (mkdir -p {}) or put the outputs in one directory with --ns3-out DIR",
        path.display(),
        dir.display(),
        dir.display()
    )]
    NoDirectory {
        /// The config.
        file: String,
        /// The key's line.
        line: usize,
        /// The key.
        key: &'static str,
        /// The output's path.
        path: PathBuf,
        /// Its missing directory.
        dir: PathBuf,
    },
    /// An output is an input or another output.
    #[error(transparent)]
    Clash(#[from] ClashError),
    /// An output could not be created or written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A file could not be formatted.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// An experiment of the fork, read and converted.
#[derive(Debug)]
pub struct Experiment {
    /// The config's name in messages.
    pub name: String,
    /// The config.
    pub config_path: PathBuf,
    /// The topology file read.
    pub topology_path: PathBuf,
    /// The flow file read.
    pub flows_path: PathBuf,
    /// The fork's inputs.
    pub run: Run,
    /// The output files the config names.
    pub keys: OutputKeys,
    /// The simulator's config (with the seed given, if any).
    pub sim_config: SimConfig,
}

/// Where the fork's output files go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPaths {
    /// `FCT_OUTPUT_FILE`.
    pub fct: PathBuf,
    /// `PFC_OUTPUT_FILE`.
    pub pfc: PathBuf,
    /// `QLEN_MON_FILE`, when set.
    pub qlen: Option<PathBuf>,
}

impl Experiment {
    /// Reads the config, the files it names and converts them; `note` is told each line to
    /// say on the way (which file is read and why there, the keys ignored, what is modelled
    /// otherwise than in the fork).
    pub fn load(
        opts: &Ns3Options<'_>,
        note: &mut dyn FnMut(fmt::Arguments<'_>),
    ) -> Result<Experiment, Ns3RunError> {
        let config_path = opts.config;
        let name = config_path.display().to_string();
        let text = lossless_files::read_input_text(config_path, "config", MAX_CONFIG_BYTES)?;
        let config = Config::parse(&text, &name)?;
        let mut files = Vec::new();
        for (key, named, given) in [
            ("TOPOLOGY_FILE", &config.topology_file, opts.topology),
            ("FLOW_FILE", &config.flow_file, opts.flows),
        ] {
            // the line a key was last given on: the fork keeps the last value of a key given twice
            let (p, how) = resolve_input(config_path, key, named, config.line_of(key), given)?;
            note(format_args!("{key} {named}: reading {} ({how})", p.display()));
            files.push(p);
        }
        let (tp, fp) = (files[0].clone(), files[1].clone());
        let read = |p: &Path, what: &str, limit| lossless_files::read_input_text(p, what, limit);
        let (topo_text, flow_text) = match (
            read(&tp, "topology", MAX_TOPOLOGY_BYTES),
            read(&fp, "flows", MAX_FLOW_BYTES),
        ) {
            (Ok(t), Ok(f)) => (t, f),
            (Err(e), _) | (_, Err(e)) => return Err(e.into()),
        };
        let ignored = config.ignored.clone();
        let keys = config.outputs.clone();
        let run = Run::from_parts(
            config,
            (&topo_text, &tp.display().to_string()),
            (&flow_text, &fp.display().to_string()),
        )?;
        drop((topo_text, flow_text));
        for k in &ignored {
            note(format_args!("{name}:{}: {} ignored: {}", k.line, k.key, k.why));
        }
        for n in NOT_HONOURED {
            note(format_args!("not modelled as in the fork: {n}"));
        }
        if run.config.cc_mode == 10 {
            note(format_args!("not modelled as in the fork: {PINT_NOT_HONOURED}"));
        }
        let mut sim_config = run.to_sim_config(&name)?;
        if let Some(s) = opts.seed {
            sim_config.seed = s;
        }
        Ok(Experiment {
            name,
            config_path: config_path.to_path_buf(),
            topology_path: tp,
            flows_path: fp,
            run,
            keys,
            sim_config,
        })
    }

    /// The fork's `SIMULATOR_STOP_TIME`, ns.
    pub fn stop_ns(&self) -> u64 {
        (self.sim_config.duration.as_ps() / 1000) as u64
    }

    /// Where the outputs go: at the paths the config names (relative to the current
    /// directory, as the fork opens them), whose directories must exist as the fork does not
    /// create them; or by their file names under `out_dir`.
    pub fn outputs(&self, out_dir: Option<&Path>) -> Result<OutputPaths, Ns3RunError> {
        let keys = &self.keys;
        let place =
            |key: &str, (named, line): &(String, usize)| output_path(&self.name, key, named, *line, out_dir);
        let paths = OutputPaths {
            fct: place("FCT_OUTPUT_FILE", &keys.fct_file)?,
            pfc: place("PFC_OUTPUT_FILE", &keys.pfc_file)?,
            qlen: keys
                .qlen_file
                .as_ref()
                .map(|k| place("QLEN_MON_FILE", k))
                .transpose()?,
        };
        if out_dir.is_none() {
            // the fork writes into the directories its config names and does not create them;
            // neither does lossless, but it says how to go on
            let named = [
                ("FCT_OUTPUT_FILE", &paths.fct, keys.fct_file.1),
                ("PFC_OUTPUT_FILE", &paths.pfc, keys.pfc_file.1),
            ]
            .into_iter()
            .chain(
                paths
                    .qlen
                    .as_ref()
                    .zip(keys.qlen_file.as_ref())
                    .map(|(p, k)| ("QLEN_MON_FILE", p, k.1)),
            );
            for (key, path, line) in named {
                let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
                if let Some(d) = parent.filter(|d| !d.exists()) {
                    return Err(Ns3RunError::NoDirectory {
                        file: self.name.clone(),
                        line,
                        key,
                        path: path.clone(),
                        dir: d.to_path_buf(),
                    });
                }
            }
        }
        Ok(paths)
    }

    /// Claims the inputs and the outputs at `paths` (creating `out_dir` first, when given):
    /// none may be an input or another output.
    pub fn claim(
        &self,
        paths: &OutputPaths,
        out_dir: Option<&Path>,
        claims: &mut Claims,
    ) -> Result<(), Ns3RunError> {
        claims.input("the config", &self.config_path);
        claims.input("the topology", &self.topology_path);
        claims.input("the flows", &self.flows_path);
        if let Some(d) = out_dir {
            lossless_files::create_output_dir(d)?;
        }
        claims.output("FCT_OUTPUT_FILE", &paths.fct)?;
        claims.output("PFC_OUTPUT_FILE", &paths.pfc)?;
        if let Some(q) = &paths.qlen {
            claims.output("QLEN_MON_FILE", q)?;
        }
        Ok(())
    }

    /// What to say about the queue monitor before the run: that there is none, or that it
    /// never samples; nothing when it samples.
    pub fn monitor_note(&self, paths: &OutputPaths) -> Option<String> {
        let stop_ns = self.stop_ns();
        match &paths.qlen {
            None => Some("QLEN_MON_FILE not set: no queue monitor (as in the fork)".into()),
            Some(_) if self.keys.qlen_start_ns >= stop_ns => Some(format!(
                "QLEN_MON_START {} ns is not before SIMULATOR_STOP_TIME ({stop_ns} ns): the queue monitor never samples and qlen.txt is empty, as the fork's",
                self.keys.qlen_start_ns
            )),
            Some(_) => None,
        }
    }
}

/// Where an output the config `file` names as `key` = `named` (on `line`) goes: its path as
/// written, or its file name under `out`.
fn output_path(
    file: &str,
    key: &str,
    named: &str,
    line: usize,
    out: Option<&Path>,
) -> Result<PathBuf, Ns3Error> {
    match out {
        None => Ok(PathBuf::from(named)),
        Some(dir) => Path::new(named)
            .file_name()
            .map(|n| dir.join(n))
            .ok_or_else(|| Ns3Error {
                file: file.to_string(),
                line,
                what: key.into(),
                message: format!("found {named:?}, allowed a path ending in a file name"),
            }),
    }
}

impl OutputPaths {
    /// Opens the outputs of `experiment` (each written beside its final name until put in
    /// place), with the queue monitor when `qlen.txt` is written.
    pub fn create(&self, experiment: &Experiment) -> Result<ForkOutputs, OutputError> {
        let fct = Output::create(&self.fct)?;
        let pfc = Output::create(&self.pfc)?;
        let qlen = self.qlen.as_deref().map(Output::create).transpose()?;
        let keys = &experiment.keys;
        let monitor = qlen
            .as_ref()
            .map(|_| QlenMonitor::new(&experiment.sim_config, keys.qlen_start_ns, keys.qlen_end_ns));
        Ok(ForkOutputs {
            monitor_samples: monitor.is_some() && keys.qlen_start_ns < experiment.stop_ns(),
            fct,
            pfc,
            qlen,
            monitor,
            qlen_error: None,
        })
    }
}

/// The fork's output files of a run, open, and its queue monitor.
pub struct ForkOutputs {
    fct: Output,
    pfc: Output,
    qlen: Option<Output>,
    monitor: Option<QlenMonitor>,
    /// Whether the monitor samples before the run ends.
    monitor_samples: bool,
    /// The first failure to write `qlen.txt`, which stopped the run.
    qlen_error: Option<OutputError>,
}

/// What [`ForkOutputs::write`] wrote.
#[derive(Debug)]
pub struct Written {
    /// The lines of `fct.txt`, read back with the fork's field layout.
    pub lines: Vec<FctLine>,
    /// The flows that did not finish before `SIMULATOR_STOP_TIME` (not in `fct.txt`).
    pub unfinished: usize,
}

impl ForkOutputs {
    /// Whether the queue monitor samples during the run (`QLEN_MON_FILE` set and
    /// `QLEN_MON_START` before the end).
    pub fn monitors(&self) -> bool {
        self.monitor_samples
    }

    /// Whether any of the outputs is standard output.
    pub fn is_stdout(&self) -> bool {
        [Some(&self.fct), Some(&self.pfc), self.qlen.as_ref()]
            .into_iter()
            .flatten()
            .any(Output::is_stdout)
    }

    /// Runs `sim` until `until` with the queue monitor sampling on the way (when `qlen.txt`
    /// is written); says whether the run is over: at its end, or stopped by a failure to
    /// write `qlen.txt` (which [`ForkOutputs::ran`] returns).
    pub fn step<O: Observer>(&mut self, sim: &mut Simulator<O>, until: Instant) -> bool {
        match (&mut self.monitor, &mut self.qlen) {
            (Some(m), Some(out)) if self.qlen_error.is_none() => match m.run_until(sim, until, out) {
                Ok(done) => done,
                Err(e) => {
                    self.qlen_error = Some(out.error(e));
                    true
                }
            },
            _ => sim.run_until(until),
        }
    }

    /// The queue monitor of one part of a split run of `config` (each part samples its own
    /// ports at the same instants: [`QlenPart`]), when the monitor samples.
    pub fn part_monitor(&self, config: &SimConfig) -> Option<QlenPart> {
        let m = self.monitor.as_ref().filter(|_| self.monitor_samples)?;
        let start = m.next_ns?;
        Some(QlenPart::new(
            config,
            start,
            m.end_ns,
            Instant::ZERO + config.duration,
        ))
    }

    /// After a split run: writes `qlen.txt` from its parts' monitors (in partition order), as
    /// one simulator's monitor writes it; a failure to write it is returned by
    /// [`ForkOutputs::ran`].
    pub fn monitored_parts(&mut self, parts: &mut [&mut QlenPart]) {
        if let (Some(m), Some(out)) = (&mut self.monitor, &mut self.qlen)
            && self.qlen_error.is_none()
        {
            match QlenPart::merge(parts, out) {
                Ok(samples) => {
                    m.samples = samples;
                    m.next_ns = None;
                }
                Err(e) => self.qlen_error = Some(out.error(e)),
            }
        }
    }

    /// After the run: the failure to write `qlen.txt` that stopped it, unless a signal
    /// `interrupted` it first.
    pub fn ran(&mut self, interrupted: bool) -> Result<(), OutputError> {
        match self.qlen_error.take() {
            Some(e) if !interrupted => Err(e),
            _ => Ok(()),
        }
    }

    /// Writes `fct.txt` (read back with the fork's field layout first), `pfc.txt` (from the
    /// `pfc` lines the run's [`Ns3Observer`](super::Ns3Observer) gathered) and `qlen.txt`
    /// from the run of `run` that `report` tells, stages each in `all`, and says in `wrote`
    /// what each file written (not standard output) holds.
    pub fn write(
        self,
        run: &Run,
        report: &Report,
        pfc: &[PfcLine],
        all: &mut Commit,
        wrote: &mut Vec<String>,
    ) -> Result<Written, Ns3RunError> {
        let ForkOutputs {
            mut fct,
            pfc: mut pfc_out,
            qlen,
            monitor,
            ..
        } = self;
        let mut fct_text = Vec::new();
        let unfinished = write_fct(run, &report.flows, &mut fct_text)?;
        let lines = parse_fct(
            &String::from_utf8_lossy(&fct_text),
            &fct.path().display().to_string(),
        )?;
        fct.write_all_named(&fct_text)?;
        let mut pfc_text = Vec::new();
        write_pfc(pfc, &mut pfc_text)?;
        pfc_out.write_all_named(&pfc_text)?;
        stage(
            fct,
            format!("{} flows finished, {unfinished} did not", lines.len()),
            all,
            wrote,
        )?;
        stage(pfc_out, format!("{} PFC frames received", pfc.len()), all, wrote)?;
        if let (Some(out), Some(m)) = (qlen, monitor) {
            stage(
                out,
                format!("{} samples of every switch port", m.samples),
                all,
                wrote,
            )?;
        }
        Ok(Written { lines, unfinished })
    }
}

/// Finishes `out` into `all`, saying `what` it holds in `wrote` unless it is standard output.
pub fn stage(
    out: Output,
    what: String,
    all: &mut Commit,
    wrote: &mut Vec<String>,
) -> Result<(), OutputError> {
    if !out.is_stdout() {
        wrote.push(format!("{} ({what})", out.path().display()));
    }
    all.add(out.finish()?);
    Ok(())
}

/// FCT slowdowns (FCT over the fork's standalone FCT) of the flows of an `fct.txt`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowdown {
    /// Median (nearest rank).
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
    /// Flows.
    pub flows: usize,
}

impl Slowdown {
    /// The slowdowns of `lines`; `None` when there are none.
    pub fn of(lines: &[FctLine]) -> Option<Slowdown> {
        let mut slow: Vec<f64> = lines
            .iter()
            .map(|l| l.fct_ns as f64 / l.standalone_ns.max(1) as f64)
            .collect();
        slow.sort_by(f64::total_cmp);
        let max = *slow.last()?;
        Some(Slowdown {
            p50: quantile(&slow, 0.5),
            p95: quantile(&slow, 0.95),
            p99: quantile(&slow, 0.99),
            max,
            flows: slow.len(),
        })
    }
}

impl fmt::Display for Slowdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fct.txt slowdown (fct / standalone fct): p50 {:.3}, p95 {:.3}, p99 {:.3}, max {:.3} over {} flows",
            self.p50, self.p95, self.p99, self.max, self.flows
        )
    }
}

/// The nearest-rank quantile of sorted, non-empty `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(fct_ns: u64, standalone_ns: u64) -> FctLine {
        FctLine {
            src: 0,
            dst: 1,
            sport: 0,
            dport: 0,
            size: 1,
            start_ns: 0,
            fct_ns,
            standalone_ns,
        }
    }

    #[test]
    fn slowdown_quantiles_are_nearest_rank_and_none_without_flows() {
        assert_eq!(Slowdown::of(&[]), None);
        let lines: Vec<FctLine> = (1..=100).map(|i| line(i, 1)).collect();
        let s = Slowdown::of(&lines).unwrap();
        assert_eq!(
            (s.p50, s.p95, s.p99, s.max, s.flows),
            (50.0, 95.0, 99.0, 100.0, 100)
        );
        assert_eq!(
            s.to_string(),
            "fct.txt slowdown (fct / standalone fct): p50 50.000, p95 95.000, p99 99.000, max 100.000 over 100 flows"
        );
    }

    #[test]
    fn an_output_named_without_a_file_name_is_refused_under_an_output_directory() {
        let e = output_path("c.txt", "FCT_OUTPUT_FILE", "out/..", 4, Some(Path::new("d")));
        assert_eq!(
            e.unwrap_err().to_string(),
            "c.txt:4: FCT_OUTPUT_FILE: found \"out/..\", allowed a path ending in a file name"
        );
    }
}
