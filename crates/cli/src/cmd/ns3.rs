//! `lossless sim --ns3 CONFIG`: runs an experiment of the HPCC ns-3 simulator
//! (`alibaba-edu/High-Precision-Congestion-Control`, `simulation/`) from its own files and
//! writes its outputs in its formats ([`lossless_sim::ns3`]).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use lossless_files::{Claims, Commit, Output};
use lossless_live::signals;
use lossless_proto::units::Instant;
use lossless_sim::experiments::ranks::Transport;
use lossless_sim::ns3::run::{Experiment, ForkOutputs, Ns3Options, Slowdown, stage};
use lossless_sim::ns3::{Ns3Observer, PfcLine, merge_pfc};
use lossless_sim::trace::split::Recorder;
use lossless_sim::trace::vcd::VcdSink;
use lossless_sim::{Simulator, SummaryOptions};

use super::Say;
use super::sim::{
    Extras, Ran, SimArgs, claim_extras, execute_with, extras_failed, finish_extras, interrupted, open_extras,
    simulate_ranks, simulate_threads,
};

/// Runs `lossless sim --ns3 CONFIG`: the library's steps ([`lossless_sim::ns3::run`]) with
/// this command's outputs (`--json`, `--pcap`, `--vcd`, `--report`, `--series`), progress and
/// summary between them; with `mpi`, as rank 0 of the ranks it reaches (`lossless sim --mpi`).
pub fn run(args: &SimArgs, config_path: &Path, mpi: Option<&mut dyn Transport>) -> anyhow::Result<ExitCode> {
    let opts = Ns3Options {
        config: config_path,
        topology: args.ns3_topology.as_deref(),
        flows: args.ns3_flows.as_deref(),
        seed: args.seed,
    };
    // input that does not load is said as it is, with exit status 2
    let experiment = match Experiment::load(&opts, &mut |line| errln!("{line}")) {
        Ok(e) => e,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if args.show_partition {
        return super::sim::show_partition(args, &experiment.sim_config);
    }
    let stop_ns = experiment.stop_ns();
    // outputs: checked against the inputs and each other, then opened, before the run
    let out_dir = args.ns3_out.as_deref();
    let paths = match experiment.outputs(out_dir) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut claims = Claims::new();
    experiment.claim(&paths, out_dir, &mut claims)?;
    if let Some(j) = &args.json {
        claims.output("--json", j)?;
    }
    claim_extras(args, &experiment.sim_config, &mut claims)?;
    if let Some(note) = experiment.monitor_note(&paths) {
        errln!("{note}");
    }
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let mut fork = paths.create(&experiment)?;
    let mut json = args.json.as_deref().map(Output::create).transpose()?;
    let vcd = match &args.vcd {
        Some(p) => Some(VcdSink::new(&experiment.sim_config, Output::create(p)?)?),
        None => None,
    };
    let to_stdout = fork.is_stdout()
        || json.as_ref().is_some_and(Output::is_stdout)
        || vcd.as_ref().is_some_and(|v| v.get_ref().is_stdout());
    let say = Say::new(args.quiet, to_stdout);
    let (pcap, html) = open_extras(args, &experiment.sim_config)?;
    let config = &experiment.sim_config;
    say.line(format_args!("{}: {}\n", config.name, config.description))?;
    let mut wrote = Vec::new();
    // every output file waits here until all are written: one that fails leaves the others'
    // old files as they were
    let mut all = Commit::new();
    let extras = (pcap, (vcd, html));
    let (ran, pfc, mut extras, end) = match simulate(
        args,
        &experiment.name,
        experiment.sim_config,
        &mut fork,
        extras,
        (&mut wrote, &mut all),
        mpi,
    )? {
        Ok(done) => done,
        Err(status) => return Ok(status),
    };
    let report = ran.report;
    let written = fork.write(&experiment.run, &report, &pfc, &mut all, &mut wrote)?;
    if let Some(out) = json.as_mut() {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        out.write_all_named(b"\n")?;
    }
    if let Some(out) = json {
        stage(out, "the report".into(), &mut all, &mut wrote)?;
    }
    finish_extras(args, &mut extras, end, &report, &mut wrote, &mut all)?;
    all.commit()?;
    say.text(&report.summary_with(&SummaryOptions {
        top: args.top as usize,
        full: args.full,
    }))?;
    if let Some(slow) = Slowdown::of(&written.lines) {
        say.line(format_args!("{slow}"))?;
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
    if written.unfinished > 0 {
        errln!(
            "{} flows did not finish before SIMULATOR_STOP_TIME ({stop_ns} ns): not in fct.txt, as in the fork",
            written.unfinished
        );
    }
    let _ = std::io::stdout().flush();
    Ok(super::sim::run_status(&report))
}

/// A finished run: what it came to, the PFC frames `pfc.txt` lists, the other outputs to
/// finish and the simulated instant it ended at.
type Simulated = (Ran, Vec<PfcLine>, Extras, Instant);

/// Runs the experiment `name` with the fork's queue monitor and the other outputs observing;
/// After a split run: `qlen.txt` from the parts' queue monitors, when the experiment has one.
fn write_monitored(fork: &mut ForkOutputs, parts: &mut [Ns3Observer]) -> anyhow::Result<()> {
    let mut monitors: Vec<_> = parts.iter_mut().filter_map(Ns3Observer::qlen_mut).collect();
    if !monitors.is_empty() {
        fork.monitored_parts(&mut monitors);
        fork.ran(false)?;
    }
    Ok(())
}

/// `Ok(Err(status))` when a signal interrupted it (nothing is written).
fn simulate(
    args: &SimArgs,
    name: &str,
    config: lossless_sim::config::SimConfig,
    fork: &mut ForkOutputs,
    (pcap, (vcd, html)): Extras,
    (wrote, all): (&mut Vec<String>, &mut Commit),
    mpi: Option<&mut dyn Transport>,
) -> anyhow::Result<Result<Simulated, ExitCode>> {
    let built = || format!("{name}: the experiment loads but cannot be built");
    let traced = pcap.is_some() || vcd.is_some() || html.0.is_some() || html.1.is_some();
    // (by default, the threads that help, where the run can be split)
    let threads = match args.threads {
        None if (traced && args.partition.is_none()) || fork.monitors() || mpi.is_some() => None,
        _ => {
            let t = super::sim::threads_for(args, &config, false)?;
            super::sim::splits(args, t)?.then_some(t)
        }
    };
    if threads.is_some() || mpi.is_some() {
        // (each part samples its own switch ports at the monitor's instants; over ranks, the
        // other ranks' parts ship their samples with their pfc.txt lines)
        let qlen = fork.part_monitor(&config);
        if traced {
            // pfc.txt and qlen.txt from each part's own observer (over ranks, the other ranks'
            // shipped after the run), the other outputs' records merged (`trace::split`; over
            // ranks, gathered on rank 0 window by window)
            let part = |_| {
                (
                    Ns3Observer::for_part(&config).with_qlen(qlen.clone()),
                    Recorder::<Extras>::new(),
                )
            };
            let extras = (pcap, (vcd, html));
            let ran = match mpi {
                Some(tr) => {
                    super::sim::simulate_traced_ranks(args, name, &config, tr, extras, &part, |o| &mut o.1)?
                }
                None => {
                    let threads = threads.unwrap_or(1);
                    super::sim::simulate_traced(args, name, &config, threads, extras, &part, |o| &mut o.1)?
                }
            };
            let (ran, parts, extras) = match ran {
                Ok(done) => done,
                Err(status) => return Ok(Err(status)),
            };
            let end = ran.end;
            let mut parts: Vec<Ns3Observer> = parts.into_iter().map(|(ns3, _)| ns3).collect();
            write_monitored(fork, &mut parts)?;
            return Ok(Ok((ran, merge_pfc(parts), extras, end)));
        }
        let part = |_| Ns3Observer::for_part(&config).with_qlen(qlen.clone());
        let ran = match mpi {
            Some(tr) => simulate_ranks(args, name, &config, tr, &part)?,
            None => simulate_threads(args, name, &config, threads.unwrap_or(1), &part, &|_, _| {})?,
        };
        let ran = match ran {
            Ok(done) => done,
            Err(status) => return Ok(Err(status)),
        };
        let (ran, mut parts) = ran;
        write_monitored(fork, &mut parts)?;
        let end = Instant::ZERO + config.duration;
        return Ok(Ok((ran, merge_pfc(parts), Extras::default(), end)));
    }
    let observer = Ns3Observer::new(&config);
    // the pcapng, VCD and HTML observers only when asked for: the plain run observes no more
    // than pfc.txt needs
    if pcap.is_some() || vcd.is_some() || html.0.is_some() || html.1.is_some() {
        let mut sim =
            Simulator::with_observer(config, (observer, (pcap, (vcd, html)))).with_context(built)?;
        let ran = execute_with(
            &mut sim,
            &|sim| extras_failed(&sim.observer().1),
            &mut |sim, until| fork.step(sim, until),
        );
        fork.ran(ran.interrupted)?;
        if ran.interrupted {
            return Ok(Err(interrupted(&sim)));
        }
        let end = sim.now();
        let (ns3, extras) = sim.observer_mut();
        if extras_failed(extras) {
            // a streamed output broke and stopped the run: its error, and nothing written
            finish_extras(args, extras, end, &ran.report, wrote, all)?;
        }
        // the other outputs go in place after the fork's files are written
        let extras: Extras = std::mem::take(extras);
        Ok(Ok((ran, std::mem::take(&mut ns3.pfc), extras, end)))
    } else {
        let mut sim = Simulator::with_observer(config, observer).with_context(built)?;
        let ran = execute_with(&mut sim, &|_| false, &mut |sim, until| fork.step(sim, until));
        fork.ran(ran.interrupted)?;
        if ran.interrupted {
            return Ok(Err(interrupted(&sim)));
        }
        let end = sim.now();
        let pfc = std::mem::take(&mut sim.observer_mut().pfc);
        Ok(Ok((ran, pfc, Extras::default(), end)))
    }
}
