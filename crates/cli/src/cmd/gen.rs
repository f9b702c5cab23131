//! `lossless gen`: send PAUSE or PFC frames on interfaces (SONiC pfc_gen.py and more).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use lossless_live::generator::{self, DEFAULT_BATCH, FrameSpec, GenRun, Pacing};
use lossless_live::{RawSocket, signals};
use lossless_proto::units::Rate;
use lossless_wire::mac_control::MacControlRepr;

/// Arguments of `lossless gen`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless gen -i eth1 -p 8 -t 65535 -n 1000
      1000 PFC frames pausing priority 3 (bitmap 0x08) for 65535 quanta (pfc_gen.py -p 8 -t 65535 -n 1000)
  lossless gen -i eth1 --dscp 26 -n 1000
      the same for the priority DSCP 26 maps to (3 by the ConnectX default map; --dscp2prio 26=5 for another)
  lossless gen -i eth1 --prio 3=65535 --prio 4=100 --rate 1000 --duration 5
      per-priority times, 1000 frames/s for 5 s
  lossless gen -i eth1 -g -t 0 -n 1
      one 802.3 link PAUSE with time 0 (XON)
  lossless gen -i eth1,eth2 -p 8 -t 65535 --storm --speed 100G --oversubscription 2
      a storm on two interfaces: 2 frames per longest pause time at 100 Gb/s (5960 frames/s)
  lossless gen -i veth0 -p 255 -t 65535 -n 10000000
      as fast as possible (PACKET_MMAP TX ring, qdisc bypass; --sendmmsg for sendmmsg batches)
  lossless gen -i eth1 --prio 3=65535 --storm
      a stuck NIC: priority 3 paused until Ctrl-C (speed from sysfs), to test the switch's pfcwd
  lossless gen -i eth1 --prio 3=65535 --storm --prevention-tout auto
      the same NIC with mlx5's storm prevention at 100 ms: tx_pause_storm_warning at 85 ms,
      tx_pause_storm_error at 100 ms, where pause stops (pfcwd should then see no storm)

A stuck NIC (--storm): its receive pipeline stalled, it keeps requesting XOFF forever (until
--duration or Ctrl-C). With --prevention-tout the stall is timed as mlx5 times it (ethtool
--set-tunable DEV pfc-prevention-tout N|auto): from the first frame, a warning at max(80 ms,
85 %) of the timeout, an error at the timeout, and the NIC stops sending pause there (the run
ends; the last frame's pause then runs out at the peer). Events and mlx5's counters
tx_pause_storm_warning_events/_error_events are printed (and in --json).

Needs CAP_NET_RAW. Ctrl-C stops and prints what was sent.

Ranges: --rate 0.001..=1e10 frames/s (also the rate --storm computes), --duration 0..=1e9 s,
--oversubscription above 0 up to 1e6, --batch 1..=1024, --prevention-tout 80..=8000 ms, auto
(100) or off.

Exit status: 0 when the frames were sent (also when stopped by Ctrl-C); 1 when the interface
went down or was deleted while sending (the frames sent before are printed); 2 when sending
could not start (command line, missing interface, no CAP_NET_RAW) or the output failed.")]
pub struct GenArgs {
    /// Interfaces to send on (comma-separated or repeated); each gets every frame.
    #[arg(short = 'i', long = "iface", value_delimiter = ',', required = true)]
    pub iface: Vec<String>,
    /// PFC priority enable bitmap 0..=255 (bit n = priority n), all with the time --time.
    #[arg(short = 'p', long = "priority", value_name = "BITMAP", value_parser = parse_u8)]
    pub bitmap: Option<u8>,
    /// Pause time in quanta (0..=65535) for the --priority bitmap or the link PAUSE.
    #[arg(short = 't', long = "time", value_name = "QUANTA", default_value_t = 65535)]
    pub time: u16,
    /// A priority and its own pause time, `P=QUANTA` (repeatable; adds P to the enable vector).
    #[arg(long = "prio", value_name = "P=QUANTA", value_parser = parse_prio)]
    pub prio: Vec<(u8, u16)>,
    /// Pause the priority DSCP D maps to, with --time (repeatable): where RoCE runs untagged
    /// and a switch trusts DSCP, the priority its packets are queued on (--dscp2prio, default
    /// DSCP / 8 as ConnectX: 26 → 3).
    #[arg(long = "dscp", value_name = "D", value_parser = clap::value_parser!(u8).range(0..=63))]
    pub dscp: Vec<u8>,
    /// With --dscp: DSCP=PRIORITY entries over the default map, e.g. 26=5.
    #[arg(long, value_name = "D=P", value_delimiter = ',', requires = "dscp")]
    pub dscp2prio: Vec<String>,
    /// Send 802.3 link PAUSE (opcode 0x0001) instead of PFC (pfc_gen.py's -g).
    #[arg(short = 'g', long = "global")]
    pub global: bool,
    /// Frames to send on each interface (default: until --duration or Ctrl-C).
    #[arg(short = 'n', long = "count")]
    pub count: Option<u64>,
    /// Frames per second on each interface, 0.001..=1e10 (default: as fast as possible).
    #[arg(short = 'r', long = "rate", conflicts_with = "storm", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Stop after this many seconds, 0..=1e9.
    #[arg(short = 'd', long = "duration", value_name = "SECS", value_parser = parse_secs)]
    pub duration: Option<f64>,
    /// Storm mode, a stuck NIC: rate = oversubscription / (Q·512 / speed), Q the shortest pause
    /// time the frames carry (1..=65535 quanta), which keeps the priorities paused, until
    /// --duration, --prevention-tout or Ctrl-C.
    #[arg(long)]
    pub storm: bool,
    /// Link speed for --storm (e.g. 100G, 25G, 10G); default: the fastest the interfaces'
    /// sysfs reports.
    #[arg(long)]
    pub speed: Option<Rate>,
    /// mlx5's PFC storm prevention for --storm: ms (80..=8000), `auto` (100 ms) or `off`.
    #[arg(long, value_name = "MS|auto|off", requires = "storm", value_parser = parse_prevention)]
    pub prevention_tout: Option<Prevention>,
    /// Frames per pause time (the shortest the frames carry) in --storm mode (above 0, at most
    /// 1e6).
    #[arg(long, default_value_t = 2.0, value_parser = parse_oversubscription)]
    pub oversubscription: f64,
    /// Source MAC (default: the interface's).
    #[arg(short = 's', long = "src", value_parser = parse_mac)]
    pub src: Option<[u8; 6]>,
    /// Destination MAC.
    #[arg(long = "dst", value_parser = parse_mac, default_value = "01:80:c2:00:00:01")]
    pub dst: [u8; 6],
    /// Frames per TX ring flush (the ring holds 4 batches) or per sendmmsg call, 1..=1024.
    #[arg(long, default_value_t = DEFAULT_BATCH as u16,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub batch: u16,
    /// Send through a PACKET_MMAP TX ring: frames are written once into memory shared with
    /// the kernel and one send() hands over a whole batch (the default; kept for scripts).
    #[arg(long, conflicts_with = "sendmmsg")]
    pub tx_ring: bool,
    /// Send with one sendmmsg() call per batch instead of the TX ring: the kernel copies each
    /// frame in from user memory and pays per-message syscall work: 10-45% fewer frames/s
    /// from one core on a veth pair (docs/benchmarks.md); for comparison or where a TX ring
    /// is unavailable.
    #[arg(long)]
    pub sendmmsg: bool,
    /// Queue through the qdisc layer instead of bypassing it.
    #[arg(long)]
    pub no_qdisc_bypass: bool,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Frame rates `--rate` (and the rate `--storm` computes) may take, frames per second.
pub const RATE_RANGE: std::ops::RangeInclusive<f64> = 1e-3..=1e10;

/// Longest `--duration`, seconds (about 31 years).
pub const MAX_SECS: f64 = 1e9;

/// Largest `--oversubscription`.
pub const MAX_OVERSUBSCRIPTION: f64 = 1e6;

/// A value of an option of `lossless gen` (or `lossless watch`) that is refused: what was
/// found and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    /// Not a number.
    NotANumber(String),
    /// A rate outside [`RATE_RANGE`].
    Rate(String),
    /// Seconds outside 0..=[`MAX_SECS`].
    Secs(String),
    /// An oversubscription outside (0, [`MAX_OVERSUBSCRIPTION`]].
    Oversubscription(String),
    /// A prevention timeout outside the NIC's range, ms.
    PreventionRange(u64),
    /// A prevention timeout that is neither milliseconds nor `auto`/`off`.
    Prevention(String),
    /// A byte above 255.
    ByteRange(u16),
    /// A priority's quanta not given as `P=QUANTA`.
    PrioForm(String),
    /// A priority outside 0..=7.
    Priority(String),
    /// Quanta outside 0..=65535.
    Quanta(String),
    /// Not a MAC address.
    Mac(String),
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use lossless_proto::watchdog::nic::{AUTO_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS};
        match self {
            ValueError::NotANumber(s) => write!(f, "{s:?} is not a number"),
            ValueError::Rate(s) => write!(
                f,
                "{s} frames/s is out of range: allowed {:e}..={:e}",
                RATE_RANGE.start(),
                RATE_RANGE.end()
            ),
            ValueError::Secs(s) => write!(f, "{s} s is out of range: allowed 0..={MAX_SECS:e} seconds"),
            ValueError::Oversubscription(s) => write!(
                f,
                "{s} is out of range: allowed above 0, at most {MAX_OVERSUBSCRIPTION:e} frames per longest pause"
            ),
            ValueError::PreventionRange(ms) => write!(
                f,
                "{ms} ms is out of range: allowed {MIN_TIMEOUT_MS}..={MAX_TIMEOUT_MS} ms, auto ({AUTO_TIMEOUT_MS} ms) or off"
            ),
            ValueError::Prevention(s) => write!(f, "{s:?}: expected milliseconds, auto or off"),
            ValueError::ByteRange(v) => write!(f, "{v} is out of range 0..=255"),
            ValueError::PrioForm(s) => write!(f, "{s:?}: expected P=QUANTA, e.g. 3=65535"),
            ValueError::Priority(p) => write!(f, "{p:?}: priority must be 0..=7"),
            ValueError::Quanta(q) => write!(f, "{q:?}: quanta must be 0..=65535"),
            ValueError::Mac(s) => write!(f, "{s:?} is not a MAC address (aa:bb:cc:dd:ee:ff)"),
        }
    }
}

impl std::error::Error for ValueError {}

fn parse_float(s: &str) -> Result<f64, ValueError> {
    s.trim()
        .parse::<f64>()
        .map_err(|_| ValueError::NotANumber(s.to_string()))
}

fn parse_rate(s: &str) -> Result<f64, ValueError> {
    let r = parse_float(s)?;
    if RATE_RANGE.contains(&r) {
        Ok(r)
    } else {
        Err(ValueError::Rate(s.to_string()))
    }
}

/// Parses a number of seconds in 0..=[`MAX_SECS`].
pub fn parse_secs(s: &str) -> Result<f64, ValueError> {
    let d = parse_float(s)?;
    if (0.0..=MAX_SECS).contains(&d) {
        Ok(d)
    } else {
        Err(ValueError::Secs(s.to_string()))
    }
}

fn parse_oversubscription(s: &str) -> Result<f64, ValueError> {
    let x = parse_float(s)?;
    if x > 0.0 && x <= MAX_OVERSUBSCRIPTION {
        Ok(x)
    } else {
        Err(ValueError::Oversubscription(s.to_string()))
    }
}

/// `--prevention-tout`: a timeout, or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prevention(pub Option<u64>);

fn parse_prevention(s: &str) -> Result<Prevention, ValueError> {
    use lossless_proto::watchdog::nic::{AUTO_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS};
    match s.trim() {
        "auto" => Ok(Prevention(Some(AUTO_TIMEOUT_MS))),
        "off" => Ok(Prevention(None)),
        t => match t.parse::<u64>() {
            Ok(ms) if (MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&ms) => Ok(Prevention(Some(ms))),
            Ok(ms) => Err(ValueError::PreventionRange(ms)),
            Err(_) => Err(ValueError::Prevention(s.to_string())),
        },
    }
}

fn parse_u8(s: &str) -> Result<u8, ValueError> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u16::from_str_radix(h, 16),
        None => s.parse::<u16>(),
    }
    .map_err(|_| ValueError::NotANumber(s.to_string()))?;
    u8::try_from(v).map_err(|_| ValueError::ByteRange(v))
}

fn parse_prio(s: &str) -> Result<(u8, u16), ValueError> {
    let (p, q) = s
        .split_once('=')
        .ok_or_else(|| ValueError::PrioForm(s.to_string()))?;
    let p: u8 = p
        .parse()
        .ok()
        .filter(|p| *p < 8)
        .ok_or_else(|| ValueError::Priority(p.to_string()))?;
    let q: u16 = q.parse().map_err(|_| ValueError::Quanta(q.to_string()))?;
    Ok((p, q))
}

/// Parses `aa:bb:cc:dd:ee:ff` (or with dashes).
pub fn parse_mac(s: &str) -> Result<[u8; 6], ValueError> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    let mut m = [0u8; 6];
    if parts.len() != 6 {
        return Err(ValueError::Mac(s.to_string()));
    }
    for (d, p) in m.iter_mut().zip(parts) {
        *d = u8::from_str_radix(p, 16).map_err(|_| ValueError::Mac(s.to_string()))?;
    }
    Ok(m)
}

/// The MAC Control payload the arguments ask for.
fn control(args: &GenArgs) -> anyhow::Result<MacControlRepr> {
    if args.global {
        if args.bitmap.is_some() || !args.prio.is_empty() || !args.dscp.is_empty() {
            bail!("--global sends link PAUSE, which has no priorities: drop --priority/--prio/--dscp");
        }
        return Ok(MacControlRepr::Pause {
            pause_time: args.time,
        });
    }
    let mut vector = args.bitmap.unwrap_or(0);
    let mut time = [0u16; 8];
    for (p, t) in time.iter_mut().enumerate() {
        if vector & (1 << p) != 0 {
            *t = args.time;
        }
    }
    if !args.dscp.is_empty() {
        let map = lossless_capture::filter::parse_dscp2prio(args.dscp2prio.iter().map(String::as_str))
            .map_err(|e| anyhow::anyhow!("--dscp2prio: {e}"))?;
        for &d in &args.dscp {
            let p = map[usize::from(d & 63)];
            vector |= 1 << p;
            time[usize::from(p)] = args.time;
        }
    }
    for &(p, q) in &args.prio {
        vector |= 1 << p;
        time[usize::from(p)] = q;
    }
    if vector == 0 && args.bitmap.is_none() {
        bail!(
            "say which priorities to pause: --priority BITMAP, --prio P=QUANTA, --dscp D, or --global for link PAUSE"
        );
    }
    Ok(MacControlRepr::Pfc {
        priority_enable_vector: vector.into(),
        time,
    })
}

/// The shortest pause time (quanta) the storm's frames carry; an error when one of the
/// priorities they name (or the link PAUSE) has 0 quanta, which releases instead of pausing.
fn storm_quanta(control: &MacControlRepr) -> anyhow::Result<u16> {
    let times: Vec<(Option<usize>, u16)> = match control {
        MacControlRepr::Pause { pause_time } => vec![(None, *pause_time)],
        MacControlRepr::Pfc {
            priority_enable_vector,
            time,
        } => (0..8)
            .filter(|p| *priority_enable_vector & (1 << p) != 0)
            .map(|p| (Some(p), time[p]))
            .collect(),
        _ => Vec::new(),
    };
    if let Some((p, _)) = times.iter().find(|(_, q)| *q == 0) {
        let what = p.map_or("the link PAUSE".to_string(), |p| format!("priority {p}"));
        bail!(
            "--storm with {what} at 0 quanta: a frame with pause time 0 releases the priority (XON), so it \
             would never stay paused; allowed 1..=65535 quanta for every priority a storm sends (--time, --prio P=QUANTA)"
        );
    }
    times
        .iter()
        .map(|&(_, q)| q)
        .min()
        .context("--storm needs a priority to pause: --priority BITMAP, --prio P=QUANTA or --global")
}

/// Runs `lossless gen`.
pub fn run(args: GenArgs) -> anyhow::Result<ExitCode> {
    let control = control(&args)?;
    let speed = match (args.storm, args.speed) {
        (true, None) => {
            let fastest = args
                .iface
                .iter()
                .filter_map(|i| lossless_live::watch::link_speed(i))
                .max_by_key(|r| r.bps());
            match fastest {
                Some(s) => Some(s),
                None => bail!(
                    "--storm needs the link speed to keep the priority paused: /sys/class/net/{}/speed reports none; give --speed (e.g. 100G)",
                    args.iface.join(",")
                ),
            }
        }
        (_, s) => s,
    };
    let rate = match (args.storm, speed) {
        (true, Some(speed)) => {
            // the storm keeps every priority it names paused: the shortest pause sets the rate,
            // and a priority sent with 0 quanta (an XON) would be released by every frame
            let quanta = storm_quanta(&control)?;
            let r = generator::storm_rate(speed, quanta, args.oversubscription);
            if !RATE_RANGE.contains(&r) {
                bail!(
                    "--storm at {speed} with --oversubscription {} is {r:e} frames/s: allowed {:e}..={:e}",
                    args.oversubscription,
                    RATE_RANGE.start(),
                    RATE_RANGE.end()
                );
            }
            Some(r)
        }
        _ => args.rate,
    };
    // both parsed in range: the conversions cannot fail
    let duration = args
        .duration
        .map(|d| Duration::try_from_secs_f64(d).context("--duration"))
        .transpose()?;
    let mut socks = Vec::new();
    for i in &args.iface {
        let s = RawSocket::open(i, 0)?;
        if !args.no_qdisc_bypass {
            s.set_qdisc_bypass(true)?;
        }
        socks.push(s);
    }
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let spec = FrameSpec {
        control,
        src: args.src,
        dst: args.dst,
    };
    let pacing = Pacing {
        count: args.count,
        rate,
        duration,
        batch: usize::from(args.batch),
        tx_ring: !args.sendmmsg,
        prevention: args
            .prevention_tout
            .and_then(|p| p.0)
            .map(lossless_proto::units::Duration::from_ms),
    };
    if args.storm && !args.json {
        errln!(
            "storm on {} at {:.1} frames/s{}",
            args.iface.join(","),
            rate.unwrap_or_default(),
            match pacing.prevention {
                Some(t) => format!(" until the storm prevention timeout {t}"),
                None => " until Ctrl-C".to_owned(),
            }
        );
    }
    let GenRun { report, error } = generator::run(&socks, &spec, &pacing, &signals::stop_requested)?;
    // what was sent is always reported, also when the interface failed midway
    if args.json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        for i in &report.interfaces {
            outln!("{}: sent {} frames", i.iface, i.sent)?;
        }
        outln!(
            "{:.3} s, {:.0} frames/s per interface{}",
            report.elapsed_s,
            report.rate_fps,
            if report.interrupted { " (interrupted)" } else { "" }
        )?;
        if let Some(p) = &report.prevention {
            for e in &p.events {
                outln!(
                    "{:.3} s  {}{}",
                    e.at_s,
                    e.event,
                    if e.event == "tx_pause_storm_error" {
                        ": pause stopped (the timeout)"
                    } else {
                        ": stalled past the warning watermark"
                    }
                )?;
            }
            outln!(
                "storm prevention (timeout {} ms, warning at {} ms): tx_pause_storm_warning_events {}, tx_pause_storm_error_events {}",
                p.timeout_ms,
                p.warning_ms,
                p.counters.tx_pause_storm_warning_events,
                p.counters.tx_pause_storm_error_events
            )?;
        }
    }
    if let Some(e) = error {
        errln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        gen_args: GenArgs,
    }

    fn control_of(args: &[&str]) -> anyhow::Result<MacControlRepr> {
        let cli = Cli::try_parse_from(std::iter::once("gen").chain(args.iter().copied()))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        control(&cli.gen_args)
    }

    #[test]
    fn dscp_pauses_the_priority_the_dscp_maps_to() {
        let MacControlRepr::Pfc {
            priority_enable_vector,
            time,
        } = control_of(&["-i", "x", "--dscp", "26", "-t", "100"]).unwrap()
        else {
            panic!("a PFC frame");
        };
        assert_eq!(priority_enable_vector, 1 << 3);
        assert_eq!(time, [0, 0, 0, 100, 0, 0, 0, 0]);
        let MacControlRepr::Pfc {
            priority_enable_vector,
            ..
        } = control_of(&["-i", "x", "--dscp", "26", "--dscp", "48", "--dscp2prio", "26=5"]).unwrap()
        else {
            panic!("a PFC frame");
        };
        assert_eq!(priority_enable_vector, (1 << 5) | (1 << 6));
    }

    #[test]
    fn bad_dscp_options_are_refused_with_what_is_allowed() {
        assert!(
            control_of(&["-i", "x", "--dscp", "64"])
                .unwrap_err()
                .to_string()
                .contains("64")
        );
        assert!(
            control_of(&["-i", "x", "--dscp", "26", "--dscp2prio", "26=9"])
                .unwrap_err()
                .to_string()
                .contains("allowed 0..=7")
        );
        assert!(
            control_of(&["-i", "x", "--dscp2prio", "26=1"]).is_err(),
            "--dscp2prio needs --dscp"
        );
        assert!(
            control_of(&["-i", "x", "--dscp", "26", "-g"])
                .unwrap_err()
                .to_string()
                .contains("drop --priority/--prio/--dscp")
        );
    }
}
