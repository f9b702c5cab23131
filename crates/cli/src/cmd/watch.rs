//! `lossless watch`: live per-priority PAUSE/PFC counters, paused time and PFC storms on an interface.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration as StdDuration, Instant as StdInstant};

use anyhow::Context;
use lossless_files::OutputError;
use lossless_live::monitor::{Snapshot, slot_name};
use lossless_live::prometheus::{Exporter, render};
use lossless_live::signals;
use lossless_live::watch::Watcher;
use lossless_live::watchdog::{StormEvent, StormKind, Watchdog};
use lossless_proto::units::{Duration, Rate};

/// Arguments of `lossless watch`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless watch --iface eth1
      a table refreshed every second; speed from /sys/class/net/eth1/speed
  lossless watch --iface veth0 --speed 100G --json
      JSON lines: storm events as they happen, a snapshot every second, totals at exit
  lossless watch --iface eth1 --prometheus 127.0.0.1:9808 --detection-ms 400
      Prometheus metrics at http://127.0.0.1:9808/metrics

Storms follow SONiC pfcwd: a priority paused continuously longer than the detection time is
stormed; it is restored after no pause for the restoration time. Paused time is estimated from
the requested quanta at the link speed from sysfs (virtual interfaces report none or a nominal
one, e.g. veth 10000 Mb/s: give --speed). Needs CAP_NET_RAW. Ctrl-C prints the totals.

Ranges: --interval 0.01..=1e9 s, --duration 0..=1e9 s, --poll-ms 1..=1000.

Exit status: 0 at the end of --duration or on Ctrl-C/SIGTERM; 1 when the interface went down
or was deleted while watching (the totals counted until then are printed first); 2 when
watching could not start (command line, missing interface, no speed, no CAP_NET_RAW) or the
output failed.")]
pub struct WatchArgs {
    /// The interface to watch.
    #[arg(short = 'i', long)]
    pub iface: String,
    /// Link speed (e.g. 100G); default: what sysfs reports.
    #[arg(long)]
    pub speed: Option<Rate>,
    /// Storm detection time, ms (SONiC default 200).
    #[arg(long, default_value_t = 200)]
    pub detection_ms: u64,
    /// Storm restoration time, ms (SONiC default 200).
    #[arg(long, default_value_t = 200)]
    pub restoration_ms: u64,
    /// Seconds between table refreshes / JSON snapshots, 0.01..=1e9.
    #[arg(long, default_value_t = 1.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Watchdog polling period, ms, 1..=1000.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub poll_ms: u64,
    /// Stop after this many seconds, 0..=1e9 (default: until Ctrl-C).
    #[arg(long, value_parser = super::r#gen::parse_secs)]
    pub duration: Option<f64>,
    /// JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Serve Prometheus metrics on ADDR (loopback unless you give another address).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:9808")]
    pub prometheus: Option<SocketAddr>,
}

fn parse_interval(s: &str) -> Result<f64, String> {
    match super::r#gen::parse_secs(s) {
        Ok(d) if d >= 0.01 => Ok(d),
        _ if s.trim().parse::<f64>().is_err() => Err(format!("{s:?} is not a number")),
        _ => Err(format!("{s} s is out of range: allowed 0.01..=1e9 seconds")),
    }
}

/// Runs `lossless watch`.
pub fn run(args: WatchArgs) -> anyhow::Result<ExitCode> {
    // in range (parsed so): the conversions cannot fail
    let interval = StdDuration::try_from_secs_f64(args.interval).context("--interval")?;
    let duration = args
        .duration
        .map(|d| StdDuration::try_from_secs_f64(d).context("--duration"))
        .transpose()?;
    let poll = StdDuration::from_millis(args.poll_ms);
    let wd = Watchdog::new(
        Duration::from_ms(args.detection_ms),
        Duration::from_ms(args.restoration_ms),
    );
    let mut w = Watcher::open(&args.iface, args.speed, wd)?;
    let exporter = match args.prometheus {
        Some(a) => {
            let e = Exporter::start(a).with_context(|| format!("listening for Prometheus on {a}"))?;
            errln!("Prometheus metrics on http://{}/metrics", e.addr());
            Some(e)
        }
        None => None,
    };
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let start = StdInstant::now();
    let mut next_print = start + interval;
    let tty = std::io::stdout().is_terminal();
    errln!(
        "watching {} at {} (detection {} ms, restoration {} ms)",
        args.iface,
        w.speed(),
        args.detection_ms,
        args.restoration_ms
    );
    let mut drops = 0u64;
    // an interface that goes down or is deleted ends the watch, after the totals
    let mut failed = None;
    loop {
        let stop = signals::stop_requested() || duration.is_some_and(|d| start.elapsed() >= d);
        if stop {
            break;
        }
        if let Err(e) = w.step(poll, &signals::stop_requested) {
            failed = Some(e);
            break;
        }
        match w.take_drops() {
            Ok(d) => drops += u64::from(d),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
        let events = w.monitor_mut().take_events();
        for e in &events {
            print_event(e, args.json, w.now().since_epoch().as_secs_f64())?;
        }
        if StdInstant::now() >= next_print {
            next_print += interval;
            let snap = w.monitor().snapshot(w.now());
            if let Some(e) = &exporter {
                e.publish(render(&snap, &args.iface));
            }
            if args.json {
                outln!(
                    "{}",
                    serde_json::json!({ "snapshot": snap, "kernel_drops": drops })
                )?;
            } else {
                if tty {
                    out!("\x1b[2J\x1b[H")?;
                }
                print_table(&snap, drops)?;
            }
            std::io::stdout()
                .flush()
                .map_err(|source| lossless_files::OutputError {
                    path: "-".into(),
                    source,
                })?;
        }
    }
    let now = w.now();
    w.monitor_mut().tick(now);
    for e in &w.monitor_mut().take_events() {
        print_event(e, args.json, now.since_epoch().as_secs_f64())?;
    }
    let snap = w.monitor().snapshot(now);
    if args.json {
        outln!("{}", serde_json::json!({ "totals": snap, "kernel_drops": drops }))?;
    } else {
        outln!("totals:")?;
        print_table(&snap, drops)?;
    }
    if let Some(e) = failed {
        errln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_event(e: &StormEvent, json: bool, observed_s: f64) -> Result<(), OutputError> {
    let kind = match e.kind {
        StormKind::Detected => "storm_detected",
        StormKind::Restored => "storm_restored",
    };
    let at = e.at.since_epoch().as_secs_f64();
    if json {
        outln!(
            "{}",
            serde_json::json!({ "event": kind, "slot": slot_name(e.slot), "at_s": at, "observed_s": observed_s })
        )
    } else {
        outln!("{at:10.3} s  {}  {kind}", slot_name(e.slot))
    }
}

fn print_table(s: &Snapshot, drops: u64) -> Result<(), OutputError> {
    outln!(
        "t={:.1}s speed={}bps frames={} malformed={} warnings={} unknown-opcode={} kernel-drops={}",
        s.time_s,
        s.speed_bps,
        s.frames,
        s.malformed,
        s.with_warnings,
        s.unknown_opcode,
        drops
    )?;
    outln!(
        "{:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>12} {:>6} {:>6}",
        "slot",
        "frames",
        "xoff",
        "xon",
        "->xoff",
        "->xon",
        "paused_s",
        "now",
        "storm"
    )?;
    for x in &s.slots {
        let c = &x.counters;
        outln!(
            "{:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>12.6} {:>6} {:>6}",
            x.slot,
            c.frames,
            c.xoff_frames,
            c.xon_frames,
            c.xoff_transitions,
            c.xon_transitions,
            x.paused_s,
            if x.paused_now { "XOFF" } else { "-" },
            if x.stormed { "STORM" } else { "-" }
        )?;
    }
    if !s.top_talkers.is_empty() {
        let t: Vec<String> = s
            .top_talkers
            .iter()
            .map(|t| format!("{} ({})", t.source, t.frames))
            .collect();
        outln!("top talkers: {}", t.join(", "))?;
    }
    Ok(())
}
