//! `lossless sim`: run a simulation scenario (a built-in by name, or a TOML file) and print
//! what PFC did: per port × priority and per flow, with a frame conservation check.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant as WallClock;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lossless_proto::units::Duration;
use lossless_sim::html::HtmlReport;
use lossless_sim::observer::{NoObserver, Observer};
use lossless_sim::pcap::PcapSink;
use lossless_sim::scenario::{self, BUILTINS, Overrides};
use lossless_sim::vcd::VcdSink;
use lossless_sim::{Report, Simulator};

/// Arguments of `lossless sim`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless sim
      four-bridge (the default): congestion spreading hop by hop back to three clients
  lossless sim two-chip --vcd two-chip.vcd
      document 002's two MACs, both release cases; open the waveform in GTKWave
  lossless sim incast --set senders=32 --json out.json --report rpt/
      32-to-1 incast at 100 Gb/s; metrics with units in their keys, HTML report with plots
  lossless sim four-bridge --set 'defaults.flow_control=\"off\"'
      the same fabric without PFC: lossless frames are dropped
  lossless sim incast --set 'defaults.interface_delay=\"802.3\"'
      with the PHY delays 802.1Qbb Annex N headroom counts
  lossless sim --show incast > my.toml && lossless sim my.toml
      start your own scenario from a built-in (examples/scenarios/README.md lists every key)
  lossless sim incast --sweep senders=2..=64/2 --sweep seed=1..=3 --json sweep.jsonl
      a sweep on every CPU, one JSON line per point; add --shard I/N to split it over machines
  lossless sim incast-dcqcn --report rpt/
      8 RoCEv2 QPs under DCQCN converge to fair shares; the report plots each QP's rate
  lossless sim four-bridge-cn
      document 003 §3.3: the four-bridge fabric with congestion notification, run side by side
      with a twin without it: how much less PFC fired, what the victim flow gained
  lossless sim incast-dcqcn --set 'qp.preset=\"connectx\"' --set senders=16
      the same incast with NVIDIA's DCQCN defaults (a [[flow]] with transport = \"rocev2\" is a
      QP; [qp], [ecn], [qcn] and qp.dcqcn.NAME set congestion notification)

Exit status: 0 when the run conserved every frame, 1 when the conservation check or an engine
failed, 2 for a scenario that does not load (the message names file, line and key).")]
pub struct SimArgs {
    /// Built-in scenario name (see --list) or a scenario TOML file; default: four-bridge.
    pub scenario: Option<String>,
    /// List the built-in scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// Seed of every random choice (replaces the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Simulated time to run, e.g. 500us, 2ms (replaces the scenario's).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Override a scenario value: PATH=VALUE, e.g. `senders=32`, `defaults.flow_control="off"`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Write the metrics as JSON (every key names its unit).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one pcapng per link direction into DIR (PFC/PAUSE as MAC Control frames).
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// Write a VCD waveform (GTKWave) of every port: tx state, request (fc_rdy), paused (fc),
    /// received pause time.
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// Write an HTML report with SVG plots (throughput per priority, buffer occupancy, pause
    /// timeline per link, flow completion time CDF) into DIR; it opens with no network.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Print the scenario file of a built-in and exit.
    #[arg(long)]
    pub show: bool,
    /// Do not print the summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not run the twin without congestion notification. By default a scenario with ECN
    /// marking, QCN or DCQCN/QCN QPs is also run with all of it off (in parallel), and the
    /// summary and JSON say how much less PFC fired and what each flow got without it.
    #[arg(long)]
    pub no_twin: bool,
    /// Run the scenario once per value: PATH=V1,V2,... or PATH=A..=B[/STEP] (integers); repeat
    /// for a cartesian product, e.g. `--sweep senders=2..=64/2 --sweep seed=1..=5`. PATH is
    /// `seed` or any --set path. Prints a table; --json FILE gets one JSON line per point.
    #[arg(long, value_name = "PATH=VALUES", value_parser = super::sweep::parse_axis)]
    pub sweep: Vec<super::sweep::Axis>,
    /// Run only part of a sweep, for splitting it across machines: shard I of N (1 ≤ I ≤ N)
    /// takes points I-1, I-1+N, ...; each JSON line keeps its point number, so the shards'
    /// files concatenate and sort into the whole sweep.
    #[arg(long, value_name = "I/N", value_parser = super::sweep::parse_shard, requires = "sweep")]
    pub shard: Option<super::sweep::Shard>,
    /// Worker threads for a sweep (default: one per CPU); every point is single-threaded and
    /// deterministic, so the results do not depend on this.
    #[arg(long, value_name = "N", requires = "sweep")]
    pub jobs: Option<usize>,
}

/// `--duration`: a positive duration (a run of no time is refused here, naming the option).
fn parse_duration(s: &str) -> Result<Duration, String> {
    match scenario::parse_duration(s)? {
        d if d == Duration::ZERO => Err(format!("found {s:?}, allowed a positive duration")),
        d => Ok(d),
    }
}

/// Runs `lossless sim`.
pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        let w = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(0);
        for b in BUILTINS {
            println!("{:<w$}  {}", b.name, b.summary);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let name = args.scenario.as_deref().unwrap_or(BUILTINS[0].name);
    if args.show {
        let b = scenario::builtin(name)
            .with_context(|| format!("{name} is not a built-in scenario (see --list)"))?;
        print!("{}", b.text);
        return Ok(ExitCode::SUCCESS);
    }
    if !args.sweep.is_empty() {
        return super::sweep::run(&args, name);
    }
    let ov = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        duration: args.duration,
    };
    let config = match scenario::load(name, &ov) {
        Ok(c) => c,
        Err(e) => {
            // the message names file, line, key, what was found and what is allowed
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if !args.quiet && !config.description.is_empty() {
        println!("{}: {}\n", config.name, config.description);
    }
    // the twin without congestion notification runs on another thread meanwhile
    let twin_config = if args.no_twin {
        None
    } else {
        lossless_sim::cn_report::cn_off(&config)
    };
    let mut twin = twin_config.map(|c| {
        std::thread::spawn(move || {
            let mut sim = Simulator::new(c).ok()?;
            sim.run();
            Some(Report::collect(&sim))
        })
    });
    let mut twin_report = || twin.take().and_then(|h| h.join().ok().flatten());
    let pcap = match &args.pcap {
        Some(dir) => Some(PcapSink::create(dir, &config)?),
        None => None,
    };
    let vcd = args.vcd.as_ref().map(|_| VcdSink::new(&config));
    let html = args.report.as_ref().map(|_| HtmlReport::new(&config));
    let report = if pcap.is_some() || vcd.is_some() || html.is_some() {
        let mut sim = Simulator::with_observer(config, (pcap, (vcd, html)))
            .with_context(|| format!("{name}: the scenario loads but cannot be built"))?;
        let report = execute(&mut sim, &args, &mut twin_report);
        let end = sim.now();
        let (pcap, (vcd, html)) = sim.observer_mut();
        if let (Some(sink), Some(dir)) = (html, &args.report) {
            let path = sink
                .write(dir, end, &report)
                .with_context(|| format!("writing {}", dir.display()))?;
            if !args.quiet {
                println!("wrote {}", path.display());
            }
        }
        if let Some(sink) = pcap {
            let files = sink.finish()?;
            if !args.quiet {
                let dir = args
                    .pcap
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                println!("wrote {} pcapng files to {dir}", files.len());
            }
        }
        if let (Some(sink), Some(path)) = (vcd, &args.vcd) {
            sink.write(path)
                .with_context(|| format!("writing {}", path.display()))?;
            if !args.quiet {
                println!("wrote {}", path.display());
            }
        }
        report
    } else {
        let mut sim = Simulator::with_observer(config, NoObserver)
            .with_context(|| format!("{name}: the scenario loads but cannot be built"))?;
        execute(&mut sim, &args, &mut twin_report)
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    if let Err(e) = report.check() {
        // the run itself went wrong (an engine fault or a frame unaccounted for): exit 1, as a
        // sweep point does; 2 stays for input that does not load
        eprintln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a simulator to its end with a progress bar after one second; adds the comparison
/// with the twin run without congestion notification (`twin` waits for it); prints the
/// summary.
fn execute<O: Observer>(
    sim: &mut Simulator<O>,
    args: &SimArgs,
    twin: &mut dyn FnMut() -> Option<Report>,
) -> Report {
    let wall = WallClock::now();
    let end = sim.end();
    let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulating [{bar:40}] {percent}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let step = Duration::from_ps((end.as_ps() / 1000).max(1));
    let mut shown = false;
    loop {
        let next = sim.now().saturating_add(step);
        let done = sim.run_until(next);
        if !shown && wall.elapsed().as_secs_f64() > 1.0 {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        if shown {
            // only once visible: a hidden bar's updates still cost a lock and a format!
            bar.set_position((sim.now().as_ps() * 1000 / end.as_ps().max(1)) as u64);
            bar.set_message(format!("{} events", sim.events()));
        }
        if done {
            break;
        }
    }
    bar.finish_and_clear();
    let elapsed = wall.elapsed();
    let mut report = Report::collect(&*sim);
    if let Some(without) = twin() {
        report.compare_with_cn_off(&without);
    }
    if !args.quiet {
        print!("{}", report.summary());
        println!(
            "wall {:.3} s, {:.2} M events/s, {:.3} ms simulated per wall second",
            elapsed.as_secs_f64(),
            sim.events() as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6,
            end.since_epoch().as_secs_f64() * 1e3 / elapsed.as_secs_f64().max(1e-9)
        );
    }
    report
}
