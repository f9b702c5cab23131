//! `lossless watch`: live per-priority PAUSE/PFC counters both ways on an interface, SONiC
//! pfcwd's storm verdicts and a deadlock suspicion.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration as StdDuration, Instant as StdInstant};

use anyhow::Context;
use lossless_files::OutputError;
use lossless_live::counters::CounterVerdict;
use lossless_live::kernel::{CountersReport, KernelCounters};
use lossless_live::link::{LinkEvent, LinkEventKind, LinkSnapshot, SlotVerdict};
use lossless_live::monitor::slot_name;
use lossless_live::prometheus::{Exporter, render, render_kernel};
use lossless_live::signals;
use lossless_live::watch::Watcher;
use lossless_live::watchdog::pfcwd::{self, Status};
use lossless_proto::units::{Duration, Instant, Rate};

/// Arguments of `lossless watch`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless watch --iface eth1
      a table refreshed every second; speed from /sys/class/net/eth1/speed
  lossless watch --iface veth0 --speed 100G --json
      JSON lines: storm and deadlock events as they happen, a snapshot every second, totals at exit
  lossless watch --iface eth1 --prometheus 127.0.0.1:9808 --detection-ms 400 --poll-ms 100
      Prometheus metrics at http://127.0.0.1:9808/metrics
  lossless watch --iface eth1 --rule mellanox-legacy --count-data
      SONiC's pre-2024 Mellanox rule, with this port's tagged data frames as \"packets sent\"

What it sees: every PAUSE/PFC frame the interface receives (rx: the peer pauses this port)
and sends (tx: this port pauses the peer; frames sent with PACKET_QDISC_BYPASS, e.g. lossless
gen's default, skip the kernel's taps and are not seen). Paused time is estimated from the
requested quanta at the link speed from sysfs (virtual interfaces report none or a nominal
one, e.g. veth 10000 Mb/s: give --speed). Needs CAP_NET_RAW. Ctrl-C prints the totals.

And what the kernel counts (unless --no-counters): the driver's per-priority pause counters
of `ethtool -S` (mlx5_core rx_prio3_pause, rx_prio3_pause_duration, tx_pause_storm_*_events;
bnxt_en rx_pfc_ena_frames_pri3, pfc_pri3_rx_duration_us; ice rx_priority_3_xoff.nic; i40e
port.rx_priority_3_xoff_rx; table in docs/live-tools.md) and ethtool's standard PAUSE
statistics (ETHTOOL_MSG_PAUSE_GET). A NIC pausing in hardware sends and honours PFC frames the
taps never see: there the counters are the only witness. Every figure says where it came
from (\"frames\" in the table and snapshot; \"kernel_counters\" with each counter's name), and
pfcwd also runs on the counters every poll as SONiC runs it on an ASIC's (where the driver
gives what the rule needs: a pause duration, mlx5_core and bnxt_en). On veth neither source
exists and watch says so: only frames are seen.

Verdicts per priority (p0..p7, pause = 802.3 link PAUSE):
  storm      SONiC pfcwd declared one direction stormed: it polls every --poll-ms and a
             priority that stays paused through --detection-ms of polls is stormed (at most
             detection + poll after the storm starts); restored after --restoration-ms of
             polls without a PAUSE/PFC frame. Counters as SONiC names them:
             pfc_wd_status, pfc_wd_queue_stats_deadlock_detected/_restored (SONiC's
             \"deadlock\" is a storm). Occupancy is not visible from here: the paused queue is
             taken to hold frames, as a storm that harms anyone needs.
  deadlock_suspected
             both directions paused at once for --deadlock-ms: this port waits on the peer
             while the peer waits on it, which a cyclic buffer dependency through this link
             does (and which two ends congested at once also do for a while). One port cannot
             see the cycle, its other members or whether frames wait: run watch on the other
             ports, or lossless sim's detector, to know. A storm is one direction only.
  paused     paused now, no verdict.
storm_detected/storm_restored events are the exact instants (pause start + detection, pause end
+ restoration) as lossless analyze reports them; storm/restore events are pfcwd's, at its polls.

Ranges: --interval 0.01..=1e9 s, --duration 0..=1e9 s; SONiC's: --detection-ms 100..=5000,
--restoration-ms 100..=60000, --poll-ms 1..=1000 and at most either time; --deadlock-ms
1..=60000.

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
    /// pfcwd detection time, ms, 100..=5000 (SONiC default 200).
    #[arg(long, default_value_t = pfcwd::DEFAULT_MS)]
    pub detection_ms: u64,
    /// pfcwd restoration time, ms, 100..=60000 (SONiC default 200).
    #[arg(long, default_value_t = pfcwd::DEFAULT_MS)]
    pub restoration_ms: u64,
    /// pfcwd poll interval, ms, 1..=1000 and at most either time (SONiC default 200).
    #[arg(long, default_value_t = pfcwd::DEFAULT_MS, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub poll_ms: u64,
    /// pfcwd's detection plugin.
    #[arg(long, value_enum, default_value_t = RuleArg::Mellanox)]
    pub rule: RuleArg,
    /// pfcwd's action (only `alert` changes what watch reports: its storm ends at the first
    /// poll without the storm condition instead of after the restoration time).
    #[arg(long, value_enum, default_value_t = ActionArg::Drop)]
    pub action: ActionArg,
    /// Both directions paused at once this long, ms, raise a deadlock suspicion, 1..=60000
    /// (default: the detection time).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub deadlock_ms: Option<u64>,
    /// Also count 802.1Q-tagged data frames per priority both ways (the legacy rule's
    /// "packets the paused queue sent"; costs a copy of every tagged frame's header).
    #[arg(long)]
    pub count_data: bool,
    /// Seconds between table refreshes / JSON snapshots, 0.01..=1e9.
    #[arg(long, default_value_t = 1.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Stop after this many seconds, 0..=1e9 (default: until Ctrl-C).
    #[arg(long, value_parser = super::r#gen::parse_secs)]
    pub duration: Option<f64>,
    /// JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Do not read the kernel's pause counters (ethtool -S, ethtool pause statistics).
    #[arg(long)]
    pub no_counters: bool,
    /// Serve Prometheus metrics on ADDR (loopback unless you give another address).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:9808")]
    pub prometheus: Option<SocketAddr>,
}

/// `--rule`: SONiC's detection plugins.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleArg {
    /// pfc_detect_mellanox.lua since sonic-swss#3036: paused over 99 % of the poll, PFC received.
    Mellanox,
    /// pfc_detect_mellanox.lua before: PFC received and no packet sent (or paused over 80 %).
    MellanoxLegacy,
    /// pfc_detect_broadcom.lua: paused at two samples, PFC received, no new pause began.
    Broadcom,
}

/// `--action`: what SONiC does to a stormed queue.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionArg {
    /// Drop the queue's frames (SONiC's default).
    Drop,
    /// Ignore PFC for it.
    Forward,
    /// Count only.
    Alert,
}

/// How often the socket is read and time advanced when pfcwd polls less often.
const STEP: StdDuration = StdDuration::from_millis(10);

/// An `--interval` that is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum IntervalError {
    /// Not a number.
    NotANumber(String),
    /// Outside 0.01..=1e9 seconds.
    Range(String),
}

impl std::fmt::Display for IntervalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IntervalError::NotANumber(s) => write!(f, "{s:?} is not a number"),
            IntervalError::Range(s) => write!(f, "{s} s is out of range: allowed 0.01..=1e9 seconds"),
        }
    }
}

impl std::error::Error for IntervalError {}

fn parse_interval(s: &str) -> Result<f64, IntervalError> {
    match super::r#gen::parse_secs(s) {
        Ok(d) if d >= 0.01 => Ok(d),
        _ if s.trim().parse::<f64>().is_err() => Err(IntervalError::NotANumber(s.to_string())),
        _ => Err(IntervalError::Range(s.to_string())),
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
    let cfg = pfcwd::Config {
        detection: Duration::from_ms(args.detection_ms),
        restoration: Duration::from_ms(args.restoration_ms),
        poll: Duration::from_ms(args.poll_ms),
        action: match args.action {
            ActionArg::Drop => pfcwd::Action::Drop,
            ActionArg::Forward => pfcwd::Action::Forward,
            ActionArg::Alert => pfcwd::Action::Alert,
        },
        rule: match args.rule {
            RuleArg::Mellanox => pfcwd::Rule::Mellanox,
            RuleArg::MellanoxLegacy => pfcwd::Rule::MellanoxLegacy,
            RuleArg::Broadcom => pfcwd::Rule::Broadcom,
        },
    };
    cfg.validate()
        .map_err(|e| anyhow::anyhow!("pfcwd settings (--detection-ms, --restoration-ms, --poll-ms): {e}"))?;
    let deadlock_ms = args.deadlock_ms.unwrap_or(args.detection_ms);
    let step = STEP.min(StdDuration::from_millis(args.poll_ms));
    let mut w = Watcher::open(
        &args.iface,
        args.speed,
        cfg,
        Duration::from_ms(deadlock_ms),
        args.count_data,
    )?;
    let mut counters = if args.no_counters {
        None
    } else {
        let k = KernelCounters::open(&args.iface, cfg);
        if k.any() {
            let r = k.report();
            errln!(
                "kernel counters of {}{}: ethtool -S: {}; pause statistics: {}; pfcwd {}",
                args.iface,
                r.driver.as_deref().map(|d| format!(" ({d})")).unwrap_or_default(),
                r.ethtool_stats,
                r.pause_stats,
                r.pfcwd
            );
        } else {
            errln!("{}", k.frames_only_line());
        }
        Some(k)
    };
    let counter_poll = StdDuration::from_millis(args.poll_ms);
    let mut last_counter_poll = StdInstant::now();
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
        "watching {} at {} both ways (pfcwd {} rule: detection {} ms, restoration {} ms, poll {} ms; deadlock suspicion after {} ms)",
        args.iface,
        w.speed(),
        clap::ValueEnum::to_possible_value(&args.rule)
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default(),
        args.detection_ms,
        args.restoration_ms,
        args.poll_ms,
        deadlock_ms
    );
    let mut drops = 0u64;
    // an interface that goes down or is deleted ends the watch, after the totals
    let mut failed = None;
    loop {
        let stop = signals::stop_requested() || duration.is_some_and(|d| start.elapsed() >= d);
        if stop {
            break;
        }
        if let Err(e) = w.step(step, &signals::stop_requested) {
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
        let observed = w.now();
        for e in &w.link_mut().take_events() {
            print_event(e, args.json, observed)?;
        }
        if let Some(k) = counters.as_mut()
            && last_counter_poll.elapsed() >= counter_poll
        {
            let elapsed = last_counter_poll.elapsed();
            last_counter_poll = StdInstant::now();
            match k.poll(Duration::from_std(elapsed)) {
                Ok(vs) => {
                    for v in &vs {
                        print_counter_event(v, args.json, observed)?;
                    }
                }
                Err(e) => {
                    errln!(
                        "kernel counters of {} no longer readable ({e}): frames only from here on",
                        args.iface
                    );
                    counters = None;
                }
            }
        }
        if StdInstant::now() >= next_print {
            next_print += interval;
            let snap = w.link().snapshot(w.now());
            let kr = counters.as_ref().map(KernelCounters::report);
            if let Some(e) = &exporter {
                let mut text = render(&snap, &args.iface);
                if let Some(k) = &kr {
                    text += &render_kernel(k, &args.iface);
                }
                e.publish(text);
            }
            if args.json {
                outln!(
                    "{}",
                    serde_json::json!({ "snapshot": snap, "kernel_drops": drops, "kernel_counters": kr })
                )?;
            } else {
                if tty {
                    out!("\x1b[2J\x1b[H")?;
                }
                print_table(&snap, drops)?;
                print_counters(kr.as_ref())?;
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
    w.link_mut().tick(now);
    for e in &w.link_mut().take_events() {
        print_event(e, args.json, now)?;
    }
    let snap = w.link().snapshot(now);
    let kr = counters.as_ref().map(KernelCounters::report);
    if args.json {
        outln!(
            "{}",
            serde_json::json!({ "totals": snap, "kernel_drops": drops, "kernel_counters": kr })
        )?;
    } else {
        outln!("totals:")?;
        print_table(&snap, drops)?;
        print_counters(kr.as_ref())?;
    }
    if let Some(e) = failed {
        errln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn secs(t: Instant) -> f64 {
    t.since_epoch().as_secs_f64()
}

fn print_event(e: &LinkEvent, json: bool, observed: Instant) -> Result<(), OutputError> {
    let kind = e.kind.name();
    let slot = slot_name(e.slot);
    let dir = e.direction.map(|d| d.name());
    if json {
        let mut v = serde_json::json!({
            "event": kind,
            "slot": slot,
            "at_s": secs(e.at),
            "observed_s": secs(observed),
        });
        if let Some(d) = dir {
            v["direction"] = d.into();
        }
        if let Some(p) = e.paused_since {
            v["paused_since_s"] = secs(p).into();
        }
        if let Some(l) = e.last_frame {
            v["last_frame_s"] = secs(l).into();
        }
        if e.kind == LinkEventKind::Storm {
            v["deadlock_suspected"] = e.deadlock_suspected.into();
        }
        return outln!("{v}");
    }
    let since = |p: Option<Instant>| {
        p.map(|p| format!(", paused since {:.3} s", secs(p)))
            .unwrap_or_default()
    };
    let what = match e.kind {
        LinkEventKind::Storm => format!(
            "storm (pfcwd){}{}",
            since(e.paused_since),
            if e.deadlock_suspected {
                "; both ways paused: a deadlock is suspected"
            } else {
                ""
            }
        ),
        LinkEventKind::Restore => format!(
            "restore (pfcwd){}",
            e.last_frame
                .map(|l| format!(", last PAUSE/PFC at {:.3} s", secs(l)))
                .unwrap_or_default()
        ),
        LinkEventKind::StormDetected => format!("storm_detected (exact){}", since(e.paused_since)),
        LinkEventKind::StormRestored => "storm_restored (exact)".to_owned(),
        LinkEventKind::DeadlockSuspected => format!(
            "deadlock suspected: paused both ways{} (this port and its peer wait on each other; one port cannot see the rest of a cycle)",
            since(e.paused_since)
        ),
        LinkEventKind::DeadlockCleared => "deadlock cleared: no longer paused both ways".to_owned(),
    };
    outln!(
        "{:10.3} s  {slot:>5}  {:>2}  {what}",
        secs(e.at),
        dir.unwrap_or("--")
    )
}

fn print_counter_event(v: &CounterVerdict, json: bool, observed: Instant) -> Result<(), OutputError> {
    let kind = match v.verdict {
        pfcwd::Verdict::Storm => "storm",
        pfcwd::Verdict::Restore => "restore",
    };
    let slot = slot_name(v.slot);
    if json {
        return outln!(
            "{}",
            serde_json::json!({
                "event": kind,
                "source": "kernel_counters",
                "slot": slot,
                "direction": v.direction.name(),
                "observed_s": secs(observed),
            })
        );
    }
    outln!(
        "{:10.3} s  {slot:>5}  {:>2}  {kind} (pfcwd on the kernel's counters)",
        secs(observed),
        v.direction.name()
    )
}

fn print_counters(r: Option<&CountersReport>) -> Result<(), OutputError> {
    let Some(r) = r else { return Ok(()) };
    if r.only_frames_seen {
        return outln!(
            "kernel counters: none (ethtool -S: {}; pause statistics: {}): only frames are seen",
            r.ethtool_stats,
            r.pause_stats
        );
    }
    outln!(
        "kernel counters{} since start (pfcwd {}):",
        r.driver
            .as_deref()
            .map(|d| format!(" of {d}"))
            .unwrap_or_default(),
        r.pfcwd
    )?;
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    for s in &r.slots {
        outln!(
            "{:>5} {:>2} frames {:>9} xoff {:>9} paused_s {:>10} ->xoff {:>7} pfcwd {}{}/{}  from {}",
            s.slot,
            s.direction.name(),
            opt(s.frames),
            opt(s.xoff),
            s.paused_s
                .map(|p| format!("{p:.6}"))
                .unwrap_or_else(|| "-".into()),
            opt(s.transitions),
            if s.pfc_wd_status == Status::Stormed {
                "STORM "
            } else {
                ""
            },
            s.pfc_wd_queue_stats_deadlock_detected,
            s.pfc_wd_queue_stats_deadlock_restored,
            s.from.join(", ")
        )?;
    }
    if r.storm_warning_events.is_some() || r.storm_error_events.is_some() {
        outln!(
            "mlx5 stall prevention: tx_pause_storm_warning_events {} tx_pause_storm_error_events {}",
            opt(r.storm_warning_events),
            opt(r.storm_error_events)
        )?;
    }
    Ok(())
}

fn print_table(s: &LinkSnapshot, drops: u64) -> Result<(), OutputError> {
    outln!(
        "t={:.1}s speed={}bps frames rx={} tx={} malformed={} warnings={} unknown-opcode={} kernel-drops={}",
        s.rx.time_s,
        s.rx.speed_bps,
        s.rx.frames,
        s.tx.frames,
        s.rx.malformed + s.tx.malformed,
        s.rx.with_warnings + s.tx.with_warnings,
        s.rx.unknown_opcode + s.tx.unknown_opcode,
        drops
    )?;
    outln!(
        "{:>5} | {:>9} {:>7} {:>7} {:>10} {:>4} {:>11} | {:>9} {:>7} {:>7} {:>10} {:>4} {:>11} | {:>18}",
        "slot",
        "rx frames",
        "xoff",
        "->xoff",
        "paused_s",
        "now",
        "pfcwd",
        "tx frames",
        "xoff",
        "->xoff",
        "paused_s",
        "now",
        "pfcwd",
        "verdict"
    )?;
    let wd = |st: &lossless_live::link::PfcwdStats| {
        format!(
            "{}{}/{}",
            if st.pfc_wd_status == Status::Stormed {
                "STORM "
            } else {
                ""
            },
            st.pfc_wd_queue_stats_deadlock_detected,
            st.pfc_wd_queue_stats_deadlock_restored
        )
    };
    for ((r, t), j) in s.rx.slots.iter().zip(&s.tx.slots).zip(&s.verdicts) {
        let verdict = match j.verdict {
            SlotVerdict::DeadlockSuspected => "DEADLOCK SUSPECTED",
            SlotVerdict::Storm => "STORM",
            SlotVerdict::Paused => "paused",
            SlotVerdict::Ok => "-",
        };
        outln!(
            "{:>5} | {:>9} {:>7} {:>7} {:>10.6} {:>4} {:>11} | {:>9} {:>7} {:>7} {:>10.6} {:>4} {:>11} | {:>18}",
            r.slot,
            r.counters.frames,
            r.counters.xoff_frames,
            r.counters.xoff_transitions,
            r.paused_s,
            if r.paused_now { "XOFF" } else { "-" },
            wd(&j.rx),
            t.counters.frames,
            t.counters.xoff_frames,
            t.counters.xoff_transitions,
            t.paused_s,
            if t.paused_now { "XOFF" } else { "-" },
            wd(&j.tx),
            verdict
        )?;
    }
    outln!(
        "pfcwd: detected/restored storms (SONiC's pfc_wd_queue_stats_deadlock_detected/_restored); every figure above from frames seen on the taps"
    )?;
    for (dir, x) in [("rx", &s.rx), ("tx", &s.tx)] {
        if !x.top_talkers.is_empty() {
            let t: Vec<String> = x
                .top_talkers
                .iter()
                .map(|t| format!("{} ({})", t.source, t.frames))
                .collect();
            outln!("top talkers {dir}: {}", t.join(", "))?;
        }
    }
    Ok(())
}
