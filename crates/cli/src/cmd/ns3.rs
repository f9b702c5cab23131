//! `lossless sim --ns3 CONFIG`: runs an experiment of the HPCC ns-3 simulator
//! (`alibaba-edu/High-Precision-Congestion-Control`, `simulation/`) from its own files and
//! writes its outputs in its formats ([`lossless_sim::ns3`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use lossless_files::{Claims, Commit, Output};
use lossless_live::signals;
use lossless_proto::units::Instant;
use lossless_sim::ns3::{
    Config, IgnoredKey, Ns3Error, Ns3Observer, QlenMonitor, Run, parse_fct, resolve_input, write_fct,
    write_pfc,
};
use lossless_sim::observer::Observer;
use lossless_sim::trace::vcd::VcdSink;
use lossless_sim::{Simulator, SummaryOptions};

use super::Say;
use super::sim::{
    Extras, Ran, SimArgs, claim_extras, execute_with, extras_failed, finish_extras, interrupted, open_extras,
};

/// Largest config.txt read, bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Largest topology file read, bytes.
pub const MAX_TOPOLOGY_BYTES: u64 = 64 << 20;
/// Largest flow file read, bytes; its flows are limited by count too
/// (`lossless_sim::ns3::MAX_FLOWS`, 1 M: about 5.8 GB of QPs).
pub const MAX_FLOW_BYTES: u64 = 256 << 20;

/// What the fork models and this simulator models otherwise, said once per run.
const NOT_HONOURED: [&str; 3] = [
    "ECN marks: drawn from this simulator's seeded generators, not ns-3's, so marked packets differ one by one (not in distribution)",
    "a NIC's round robin over its QPs: continues after the QP served last, where the fork's list index can go stale when finished QPs are removed (docs/ns3.md)",
    "events at the same nanosecond: run in the order this simulator schedules them, which is not always the fork's (ns-3 orders them by when each was scheduled)",
];

fn input_error(e: Ns3Error) -> anyhow::Result<ExitCode> {
    errln!("error: {e}");
    Ok(ExitCode::from(2))
}

/// Where an output the config names goes: its path as written (relative to the current
/// directory, as the fork opens it), or its file name under `--ns3-out`.
fn output_path(key: &str, named: &str, line: usize, out: Option<&Path>) -> Result<PathBuf, Ns3Error> {
    match out {
        None => Ok(PathBuf::from(named)),
        Some(dir) => Path::new(named)
            .file_name()
            .map(|n| dir.join(n))
            .ok_or_else(|| Ns3Error {
                file: "config".into(),
                line,
                what: key.into(),
                message: format!("found {named:?}, allowed a path ending in a file name"),
            }),
    }
}

/// The nearest-rank quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

/// Runs `sim` to its end with the fork's queue monitor sampling on the way (when qlen.txt is
/// written); a failure to write qlen.txt stops the run and is the error.
fn run_monitored<O: Observer>(
    sim: &mut Simulator<O>,
    monitor: &mut Option<QlenMonitor>,
    qlen_out: &mut Option<Output>,
    failed: &dyn Fn(&Simulator<O>) -> bool,
) -> anyhow::Result<Ran> {
    let mut qlen_error = None;
    let ran = execute_with(
        sim,
        failed,
        &mut |sim, until: Instant| match (&mut *monitor, &mut *qlen_out) {
            (Some(m), Some(out)) if qlen_error.is_none() => match m.run_until(sim, until, out) {
                Ok(done) => done,
                Err(e) => {
                    qlen_error = Some(out.error(e));
                    true
                }
            },
            _ => sim.run_until(until),
        },
    );
    match qlen_error {
        Some(e) if !ran.interrupted => Err(e.into()),
        _ => Ok(ran),
    }
}

/// Runs `lossless sim --ns3 CONFIG`.
pub fn run(args: &SimArgs, config_path: &Path) -> anyhow::Result<ExitCode> {
    let cname = config_path.display().to_string();
    let text = match lossless_files::read_input_text(config_path, "config", MAX_CONFIG_BYTES) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let config = match Config::parse(&text, &cname) {
        Ok(c) => c,
        Err(e) => return input_error(e),
    };
    // the line a key was last given on: the fork keeps the last value of a key given twice
    let line_of = |key: &str| config.line_of(key);
    let mut files = Vec::new();
    for (key, named, given) in [
        (
            "TOPOLOGY_FILE",
            &config.topology_file,
            args.ns3_topology.as_deref(),
        ),
        ("FLOW_FILE", &config.flow_file, args.ns3_flows.as_deref()),
    ] {
        match resolve_input(config_path, key, named, line_of(key), given) {
            Ok((p, how)) => {
                errln!("{key} {named}: reading {} ({how})", p.display());
                files.push(p);
            }
            Err(e) => return input_error(e),
        }
    }
    let (tp, fp) = (files[0].clone(), files[1].clone());
    let read = |p: &Path, what: &str, limit| lossless_files::read_input_text(p, what, limit);
    let (topo_text, flow_text) = match (
        read(&tp, "topology", MAX_TOPOLOGY_BYTES),
        read(&fp, "flows", MAX_FLOW_BYTES),
    ) {
        (Ok(t), Ok(f)) => (t, f),
        (Err(e), _) | (_, Err(e)) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let ignored: Vec<IgnoredKey> = config.ignored.clone();
    let keys = config.outputs.clone();
    let run = match Run::from_parts(
        config,
        (&topo_text, &tp.display().to_string()),
        (&flow_text, &fp.display().to_string()),
    ) {
        Ok(r) => r,
        Err(e) => return input_error(e),
    };
    drop((topo_text, flow_text));
    for k in &ignored {
        errln!("{cname}:{}: {} ignored: {}", k.line, k.key, k.why);
    }
    for n in NOT_HONOURED {
        errln!("not modelled as in the fork: {n}");
    }
    let mut sim_config = match run.to_sim_config(&cname) {
        Ok(c) => c,
        Err(e) => return input_error(e),
    };
    if let Some(s) = args.seed {
        sim_config.seed = s;
    }
    let stop_ns = (sim_config.duration.as_ps() / 1000) as u64;

    // outputs: checked against the inputs and each other, then opened, before the run
    let out_dir = args.ns3_out.as_deref();
    let paths = (|| -> Result<_, Ns3Error> {
        let fct = output_path("FCT_OUTPUT_FILE", &keys.fct_file.0, keys.fct_file.1, out_dir)?;
        let pfc = output_path("PFC_OUTPUT_FILE", &keys.pfc_file.0, keys.pfc_file.1, out_dir)?;
        let qlen = keys
            .qlen_file
            .as_ref()
            .map(|(n, l)| output_path("QLEN_MON_FILE", n, *l, out_dir))
            .transpose()?;
        Ok((fct, pfc, qlen))
    })();
    let (fct_path, pfc_path, qlen_path) = match paths {
        Ok(p) => p,
        Err(e) => return input_error(Ns3Error { file: cname, ..e }),
    };
    if out_dir.is_none() {
        // the fork writes into the directories its config names and does not create them;
        // neither does lossless, but it says how to go on
        let named = [
            ("FCT_OUTPUT_FILE", &fct_path, keys.fct_file.1),
            ("PFC_OUTPUT_FILE", &pfc_path, keys.pfc_file.1),
        ]
        .into_iter()
        .chain(
            qlen_path
                .as_ref()
                .zip(keys.qlen_file.as_ref())
                .map(|(p, k)| ("QLEN_MON_FILE", p, k.1)),
        );
        for (key, path, line) in named {
            let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
            if let Some(d) = parent.filter(|d| !d.exists()) {
                errln!(
                    "error: {cname}:{line}: {key} {}: the directory {} does not exist (the fork does not create it either): create it (mkdir -p {}) or put the outputs in one directory with --ns3-out DIR",
                    path.display(),
                    d.display(),
                    d.display()
                );
                return Ok(ExitCode::from(2));
            }
        }
    }
    let mut claims = Claims::new();
    claims.input("the config", config_path);
    claims.input("the topology", &tp);
    claims.input("the flows", &fp);
    if let Some(d) = out_dir {
        lossless_files::create_output_dir(d)?;
    }
    claims.output("FCT_OUTPUT_FILE", &fct_path)?;
    claims.output("PFC_OUTPUT_FILE", &pfc_path)?;
    if let Some(q) = &qlen_path {
        claims.output("QLEN_MON_FILE", q)?;
    }
    if let Some(j) = &args.json {
        claims.output("--json", j)?;
    }
    claim_extras(args, &sim_config, &mut claims)?;
    match &qlen_path {
        None => errln!("QLEN_MON_FILE not set: no queue monitor (as in the fork)"),
        Some(_) if keys.qlen_start_ns >= stop_ns => errln!(
            "QLEN_MON_START {} ns is not before SIMULATOR_STOP_TIME ({stop_ns} ns): the queue monitor never samples and qlen.txt is empty, as the fork's",
            keys.qlen_start_ns
        ),
        Some(_) => {}
    }
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let mut fct_out = Output::create(&fct_path)?;
    let mut pfc_out = Output::create(&pfc_path)?;
    let mut qlen_out = qlen_path.as_deref().map(Output::create).transpose()?;
    let mut json = args.json.as_deref().map(Output::create).transpose()?;
    let vcd = match &args.vcd {
        Some(p) => Some(VcdSink::new(&sim_config, Output::create(p)?)?),
        None => None,
    };
    let to_stdout = [Some(&fct_out), Some(&pfc_out), qlen_out.as_ref(), json.as_ref()]
        .into_iter()
        .flatten()
        .any(Output::is_stdout)
        || vcd.as_ref().is_some_and(|v| v.get_ref().is_stdout());
    let say = Say::new(args.quiet, to_stdout);
    let (pcap, html) = open_extras(args, &sim_config)?;

    let observer = Ns3Observer::new(&sim_config);
    let mut monitor = qlen_out
        .as_ref()
        .map(|_| QlenMonitor::new(&sim_config, keys.qlen_start_ns, keys.qlen_end_ns));
    say.line(format_args!("{}: {}\n", sim_config.name, sim_config.description))?;
    let built = || format!("{cname}: the experiment loads but cannot be built");
    let mut wrote = Vec::new();
    // every output file waits here until all are written: one that fails leaves the others'
    // old files as they were
    let mut all = Commit::new();
    // the pcapng, VCD and HTML observers only when asked for: the plain run observes no more
    // than pfc.txt needs
    let (ran, pfc, mut extras, end) =
        if pcap.is_some() || vcd.is_some() || html.0.is_some() || html.1.is_some() {
            let mut sim =
                Simulator::with_observer(sim_config, (observer, (pcap, (vcd, html)))).with_context(built)?;
            let ran = run_monitored(&mut sim, &mut monitor, &mut qlen_out, &|sim| {
                extras_failed(&sim.observer().1)
            })?;
            if ran.interrupted {
                return Ok(interrupted(&sim));
            }
            let end = sim.now();
            let (ns3, extras) = sim.observer_mut();
            if extras_failed(extras) {
                // a streamed output broke and stopped the run: its error, and nothing written
                finish_extras(args, extras, end, &ran.report, &mut wrote, &mut all)?;
            }
            // the other outputs go in place after the fork's files are written
            let extras: Extras = std::mem::take(extras);
            (ran, std::mem::take(&mut ns3.pfc), extras, end)
        } else {
            let mut sim = Simulator::with_observer(sim_config, observer).with_context(built)?;
            let ran = run_monitored(&mut sim, &mut monitor, &mut qlen_out, &|_| false)?;
            if ran.interrupted {
                return Ok(interrupted(&sim));
            }
            let end = sim.now();
            (
                ran,
                std::mem::take(&mut sim.observer_mut().pfc),
                Extras::default(),
                end,
            )
        };
    let report = ran.report;
    // fct.txt is read back with the fork's field layout before it is written
    let mut fct_text = Vec::new();
    let unfinished = write_fct(&run, &report.flows, &mut fct_text)?;
    let lines = parse_fct(
        &String::from_utf8_lossy(&fct_text),
        &fct_path.display().to_string(),
    )?;
    fct_out.write_all_named(&fct_text)?;
    let mut pfc_text = Vec::new();
    write_pfc(&pfc, &mut pfc_text)?;
    pfc_out.write_all_named(&pfc_text)?;
    let mut stage = |out: Output, what: String, all: &mut Commit| -> anyhow::Result<()> {
        if !out.is_stdout() {
            wrote.push(format!("{} ({what})", out.path().display()));
        }
        all.add(out.finish()?);
        Ok(())
    };
    stage(
        fct_out,
        format!("{} flows finished, {unfinished} did not", lines.len()),
        &mut all,
    )?;
    stage(pfc_out, format!("{} PFC frames received", pfc.len()), &mut all)?;
    if let (Some(out), Some(m)) = (qlen_out, monitor) {
        stage(
            out,
            format!("{} samples of every switch port", m.samples),
            &mut all,
        )?;
    }
    if let Some(out) = json.as_mut() {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        out.write_all_named(b"\n")?;
    }
    if let Some(out) = json {
        stage(out, "the report".into(), &mut all)?;
    }
    finish_extras(args, &mut extras, end, &report, &mut wrote, &mut all)?;
    all.commit()?;
    say.text(&report.summary_with(&SummaryOptions {
        top: args.top as usize,
        full: args.full,
    }))?;
    let mut slow: Vec<f64> = lines
        .iter()
        .map(|l| l.fct_ns as f64 / l.standalone_ns.max(1) as f64)
        .collect();
    slow.sort_by(f64::total_cmp);
    if !slow.is_empty() {
        say.line(format_args!(
            "fct.txt slowdown (fct / standalone fct): p50 {:.3}, p95 {:.3}, p99 {:.3}, max {:.3} over {} flows",
            quantile(&slow, 0.5),
            quantile(&slow, 0.95),
            quantile(&slow, 0.99),
            slow[slow.len() - 1],
            slow.len()
        ))?;
    }
    say.line(format_args!(
        "wall {:.3} s, {:.2} M events/s, {:.3} ms simulated per wall second",
        ran.wall_s,
        report.events as f64 / ran.wall_s.max(1e-9) / 1e6,
        ran.simulated_s * 1e3 / ran.wall_s.max(1e-9)
    ))?;
    for w in &wrote {
        say.line(format_args!("wrote {w}"))?;
    }
    if unfinished > 0 {
        errln!(
            "{unfinished} flows did not finish before SIMULATOR_STOP_TIME ({stop_ns} ns): not in fct.txt, as in the fork"
        );
    }
    let _ = std::io::stdout().flush();
    Ok(super::sim::run_status(&report))
}
