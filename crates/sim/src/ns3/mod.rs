//! Reading the inputs of the HPCC ns-3 simulator (`alibaba-edu/High-Precision-Congestion-
//! Control`, `simulation/`, run as `third <config>`): its `config.txt`, topology file and flow
//! file, and its `fct.txt` output; and turning a run's inputs into a [`SimConfig`](crate::config::SimConfig) with the
//! reference's modelling choices (`[model] preset = "hpcc-ns3"`, the `hpcc_ns3` engine presets
//! with the config's values laid over them). `/work/shared/corpus/hpcc-ns3/MODEL.md` says
//! what the reference does; [`Config`] lists which keys are used, which are accepted and
//! ignored (and why), and which values are refused because the simulator does not model them.
//!
//! Every error names the file, the line, the key or field, what was found and what is allowed.

mod convert;
mod output;
mod parse;
pub mod run;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lossless_proto::units::{Duration, Instant, Rate};

pub use output::{
    Ns3Observer, OutputKeys, PfcLine, QlenMonitor, Resolved, resolve_input, write_fct, write_pfc,
};
pub use parse::ns_of_seconds;
use parse::{Tokens, micros};

/// A file that could not be used, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ns3Error {
    /// The file.
    pub file: String,
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// The key or field at fault.
    pub what: String,
    /// What was found and what is allowed.
    pub message: String,
}

impl std::fmt::Display for Ns3Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}: {}", self.file, self.line, self.what, self.message)
    }
}

impl std::error::Error for Ns3Error {}

/// A config key the reader accepted but does not use, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredKey {
    /// The key.
    pub key: String,
    /// Its line.
    pub line: usize,
    /// Why nothing depends on it here.
    pub why: &'static str,
}

/// The reference's `config.txt`, the keys this simulator uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `CC_MODE`: 1 = DCQCN; 3, 7, 8, 10 (HPCC, TIMELY, DCTCP, PINT) are refused; any other
    /// value is no congestion control (as in the reference).
    pub cc_mode: u32,
    /// `ENABLE_QCN`: switches ECN-mark.
    pub enable_qcn: bool,
    /// `PACKET_PAYLOAD_SIZE`: payload bytes per packet.
    pub packet_payload_size: u32,
    /// `TOPOLOGY_FILE` as written.
    pub topology_file: String,
    /// `FLOW_FILE` as written.
    pub flow_file: String,
    /// `SIMULATOR_STOP_TIME`, seconds.
    pub stop_time: Duration,
    /// `ALPHA_RESUME_INTERVAL` (µs in the file).
    pub alpha_resume_interval: Duration,
    /// `RATE_DECREASE_INTERVAL` (µs).
    pub rate_decrease_interval: Duration,
    /// `RP_TIMER` (µs).
    pub rp_timer: Duration,
    /// `CLAMP_TARGET_RATE`.
    pub clamp_target_rate: bool,
    /// `EWMA_GAIN` in 1/1024 (the file's fraction must be a multiple of 1/1024).
    pub ewma_gain_1024: u32,
    /// `FAST_RECOVERY_TIMES`.
    pub fast_recovery_times: u32,
    /// `RATE_AI`.
    pub rate_ai: Rate,
    /// `RATE_HAI`.
    pub rate_hai: Rate,
    /// `MIN_RATE`.
    pub min_rate: Rate,
    /// `KMIN_MAP`: link rate → Kmin in KB of 1000 bytes.
    pub kmin_kb: Vec<(Rate, u64)>,
    /// `KMAX_MAP`.
    pub kmax_kb: Vec<(Rate, u64)>,
    /// `PMAX_MAP`.
    pub pmax: Vec<(Rate, f64)>,
    /// `BUFFER_SIZE`, MiB per switch.
    pub buffer_mib: u64,
    /// `ACK_HIGH_PRIO`: a host's ACK queue obeys class 0's pauses (which no switch sends)
    /// rather than class 3's; the fork's default is 0.
    pub ack_high_prio: bool,
    /// Keys read and ignored.
    pub ignored: Vec<IgnoredKey>,
    /// The output files the config names (`FCT_OUTPUT_FILE`, `PFC_OUTPUT_FILE`, the queue
    /// monitor's `QLEN_MON_*`).
    pub outputs: OutputKeys,
    /// The config's name, as errors give it.
    pub file: String,
    /// The line each key was last given on (the fork keeps the last value of a key given
    /// twice): [`Config::line_of`].
    pub lines: HashMap<String, usize>,
    /// The line of each ECN map entry, by map and rate (b/s).
    pub map_lines: HashMap<(String, u64), usize>,
}

/// Largest Kmin/Kmax in KB: the fork keeps them in bytes in 32 bits (`kmin * 1000` in a
/// `uint32_t`), so a larger value wraps there.
pub const MAX_ECN_KB: u64 = (u32::MAX / 1000) as u64;

/// Largest `BUFFER_SIZE` in MiB: the fork computes the bytes in 32 bits
/// (`buffer_size * 1024 * 1024`), so 4096 MiB wraps to 0 there.
pub const MAX_BUFFER_MIB: u64 = 4095;

/// Keys accepted and not used, and why.
const IGNORED: [(&str, &str); 13] = [
    ("TRACE_FILE", "packet traces are not written (use --pcap)"),
    ("TRACE_OUTPUT_FILE", "packet traces are not written (use --pcap)"),
    ("ENABLE_TRACE", "packet traces are not written"),
    ("DCTCP_RATE_AI", "DCTCP only (CC_MODE 8)"),
    ("GLOBAL_T", "window-based CC only (HAS_WIN 1)"),
    ("VAR_WIN", "window-based CC only (HAS_WIN 1)"),
    ("FAST_REACT", "HPCC only"),
    ("U_TARGET", "HPCC only"),
    ("MI_THRESH", "HPCC only"),
    ("INT_MULTI", "HPCC/PINT only"),
    ("MULTI_RATE", "HPCC only"),
    ("SAMPLE_FEEDBACK", "HPCC only"),
    (
        "L2_CHUNK_SIZE",
        "adds ACKs at chunk boundaries, which changes nothing when every packet is ACKed (L2_ACK_INTERVAL, MODEL.md §2)",
    ),
];
/// More ignored keys (split to keep the table readable).
const IGNORED_2: [(&str, &str); 7] = [
    ("PINT_LOG_BASE", "PINT only"),
    (
        "DATA_RATE",
        "read and unused by the fork (link rates come from the topology file)",
    ),
    (
        "LINK_DELAY",
        "read and unused by the fork (link delays come from the topology file)",
    ),
    ("PINT_PROB", "PINT only"),
    (
        "USE_DYNAMIC_PFC_THRESHOLD",
        "no effect in the reference: its PFC threshold is always dynamic",
    ),
    (
        "PAUSE_TIME",
        "no effect in the reference beyond being > 0 (its pauses last until a resume)",
    ),
    (
        "L2_ACK_INTERVAL",
        "every packet is ACKed whatever the value (the reference resets its milestone on every packet, MODEL.md §2)",
    ),
];

impl Config {
    /// Parses the text of a `config.txt` named `file`.
    pub fn parse(text: &str, file: &str) -> Result<Config, Ns3Error> {
        let mut t = Tokens::new(file, text);
        let mut c = Config {
            cc_mode: 1,
            enable_qcn: true,
            packet_payload_size: 1000,
            topology_file: String::new(),
            flow_file: String::new(),
            stop_time: Duration::from_ms(3_010),
            alpha_resume_interval: Duration::from_us(55),
            rate_decrease_interval: Duration::from_us(4),
            rp_timer: Duration::from_us(1500),
            clamp_target_rate: false,
            ewma_gain_1024: 64,
            fast_recovery_times: 5,
            rate_ai: Rate::from_mbps(5),
            rate_hai: Rate::from_mbps(50),
            min_rate: Rate::from_mbps(100),
            kmin_kb: Vec::new(),
            kmax_kb: Vec::new(),
            pmax: Vec::new(),
            buffer_mib: 16,
            ack_high_prio: false,
            ignored: Vec::new(),
            outputs: OutputKeys::default(),
            file: file.to_string(),
            lines: HashMap::new(),
            map_lines: HashMap::new(),
        };
        let mut seen_topology = false;
        let mut seen_flows = false;
        while !t.done() {
            let (key, line) = t.next("key")?;
            c.lines.insert(key.to_string(), line);
            let flag =
                |t: &mut Tokens<'_>| -> Result<bool, Ns3Error> { Ok(t.num::<u32>(key, "0 or 1")? != 0) };
            let us = |t: &mut Tokens<'_>| -> Result<Duration, Ns3Error> {
                let (v, l) = t.next(key)?;
                micros(v)
                    .ok_or_else(|| t.err(l, key, format!("found {v:?}, allowed a number of microseconds")))
            };
            match key {
                "CC_MODE" => {
                    c.cc_mode = t.num(key, "a whole number")?;
                    if matches!(c.cc_mode, 3 | 7 | 8 | 10) {
                        return Err(t.err(
                            line,
                            key,
                            format!(
                                "found {}: HPCC (3), TIMELY (7), DCTCP (8) and PINT (10) are not modelled; allowed 1 (DCQCN) or a mode the reference does not handle (no congestion control)",
                                c.cc_mode
                            ),
                        ));
                    }
                }
                "ENABLE_QCN" => c.enable_qcn = flag(&mut t)?,
                "PACKET_PAYLOAD_SIZE" => {
                    c.packet_payload_size = t.num(key, "a number of bytes")?;
                    if !(256..=4096).contains(&c.packet_payload_size) {
                        return Err(t.err(
                            line,
                            key,
                            format!(
                                "found {}, allowed 256..=4096 (the RoCEv2 MTUs)",
                                c.packet_payload_size
                            ),
                        ));
                    }
                }
                "TOPOLOGY_FILE" => {
                    c.topology_file = t.next(key)?.0.to_string();
                    seen_topology = true;
                }
                "FLOW_FILE" => {
                    c.flow_file = t.next(key)?.0.to_string();
                    seen_flows = true;
                }
                "SIMULATOR_STOP_TIME" => {
                    let s: f64 = t.num(key, "a number of seconds")?;
                    // a run of no time "completes" with nothing done: refused
                    let ns = ns_of_seconds(s).filter(|&ns| ns > 0).ok_or_else(|| {
                        t.err(
                            line,
                            key,
                            format!("found {s}, allowed a positive number of seconds (at least 1 ns)"),
                        )
                    })?;
                    c.stop_time = Duration::from_ns(ns);
                }
                "ALPHA_RESUME_INTERVAL" => c.alpha_resume_interval = us(&mut t)?,
                "RATE_DECREASE_INTERVAL" => c.rate_decrease_interval = us(&mut t)?,
                "RP_TIMER" => c.rp_timer = us(&mut t)?,
                "CLAMP_TARGET_RATE" => c.clamp_target_rate = flag(&mut t)?,
                "EWMA_GAIN" => {
                    let g: f64 = t.num(key, "a fraction")?;
                    let k = g * 1024.0;
                    if !(0.0..=1.0).contains(&g) || k.fract() != 0.0 {
                        return Err(t.err(
                            line,
                            key,
                            format!("found {g}, allowed a multiple of 1/1024 in 0..=1 (the reaction point keeps alpha's gain in 1/1024)"),
                        ));
                    }
                    c.ewma_gain_1024 = k as u32;
                }
                "FAST_RECOVERY_TIMES" => c.fast_recovery_times = t.num(key, "a count")?,
                "RATE_AI" => c.rate_ai = t.rate(key)?,
                "RATE_HAI" => c.rate_hai = t.rate(key)?,
                "MIN_RATE" => c.min_rate = t.rate(key)?,
                "KMAX_MAP" | "KMIN_MAP" | "PMAX_MAP" => {
                    let n: u32 = t.num(key, "the number of (rate, value) pairs")?;
                    for _ in 0..n {
                        let bps: u64 = t.num(key, "a link rate in b/s")?;
                        let at = t.line();
                        let rate = Rate::from_bps(bps)
                            .ok_or_else(|| t.err(at, key, "found rate 0, allowed a positive rate".into()))?;
                        // a rate given again (in this map or on another line of the key)
                        // replaces the value, as the fork's `rate2kmax[rate] = k` does
                        fn put<T>(m: &mut Vec<(Rate, T)>, rate: Rate, v: T) {
                            match m.iter_mut().find(|(r, _)| *r == rate) {
                                Some(e) => e.1 = v,
                                None => m.push((rate, v)),
                            }
                        }
                        match key {
                            "KMAX_MAP" | "KMIN_MAP" => {
                                let kb: u64 = t.num(key, "KB (of 1000 bytes)")?;
                                if kb > MAX_ECN_KB {
                                    return Err(t.err(
                                        t.line(),
                                        key,
                                        format!(
                                            "found {kb} KB for {rate}, allowed 0..={MAX_ECN_KB} KB (the fork keeps \
                                             the threshold in bytes in 32 bits: {kb} × 1000 wraps there)"
                                        ),
                                    ));
                                }
                                put(
                                    if key == "KMAX_MAP" {
                                        &mut c.kmax_kb
                                    } else {
                                        &mut c.kmin_kb
                                    },
                                    rate,
                                    kb,
                                );
                            }
                            _ => {
                                let p: f64 = t.num(key, "a probability")?;
                                if !(0.0..=1.0).contains(&p) {
                                    return Err(t.err(
                                        t.line(),
                                        key,
                                        format!("found {p} for {rate}, allowed a probability 0..=1"),
                                    ));
                                }
                                put(&mut c.pmax, rate, p);
                            }
                        }
                        c.map_lines.insert((key.to_string(), bps), t.line());
                    }
                }
                "BUFFER_SIZE" => {
                    c.buffer_mib = t.num(key, "MiB")?;
                    if !(1..=MAX_BUFFER_MIB).contains(&c.buffer_mib) {
                        return Err(t.err(
                            line,
                            key,
                            format!(
                                "found {} MiB, allowed 1..={MAX_BUFFER_MIB} (the fork computes the bytes in 32 \
                                 bits: 4096 MiB and more wrap there)",
                                c.buffer_mib
                            ),
                        ));
                    }
                }
                "FCT_OUTPUT_FILE" | "PFC_OUTPUT_FILE" | "QLEN_MON_FILE" | "QLEN_MON_START"
                | "QLEN_MON_END" => c.outputs.read(&mut t, key, line)?,
                "ERROR_RATE_PER_LINK" => {
                    let e: f64 = t.num(key, "a probability")?;
                    if e != 0.0 {
                        return Err(t.err(
                            line,
                            key,
                            format!("found {e}: random link errors are not modelled; allowed 0"),
                        ));
                    }
                }
                "L2_BACK_TO_ZERO" => {
                    if flag(&mut t)? {
                        return Err(t.err(
                            line,
                            key,
                            "found 1: going back to a chunk boundary re-delivers bytes (MODEL.md §2) and is not modelled; allowed 0".into(),
                        ));
                    }
                }
                "HAS_WIN" => {
                    if flag(&mut t)? {
                        return Err(t.err(
                            line,
                            key,
                            "found 1: window-based sending is not modelled; allowed 0".into(),
                        ));
                    }
                }
                "RATE_BOUND" => {
                    if !flag(&mut t)? {
                        return Err(t.err(
                            line,
                            key,
                            "found 0: QPs are always paced at their rate here; allowed 1".into(),
                        ));
                    }
                }
                "ACK_HIGH_PRIO" => c.ack_high_prio = flag(&mut t)?,
                "LINK_DOWN" => {
                    let at: u64 = t.num(key, "a time in ns")?;
                    let _: u32 = t.num(key, "a node id")?;
                    let _: u32 = t.num(key, "a node id")?;
                    if at != 0 {
                        return Err(t.err(
                            line,
                            key,
                            format!("found a link going down at {at} ns: not modelled; allowed 0 0 0"),
                        ));
                    }
                }
                k => match IGNORED.iter().chain(IGNORED_2.iter()).find(|(n, _)| *n == k) {
                    Some(&(_, why)) => {
                        t.next(k)?;
                        c.ignored.push(IgnoredKey {
                            key: k.to_string(),
                            line,
                            why,
                        });
                    }
                    None => {
                        return Err(t.err(
                            line,
                            "key",
                            format!("found {k:?}: not a key of the reference's config.txt"),
                        ));
                    }
                },
            }
        }
        if !seen_topology || !seen_flows {
            let k = if seen_topology {
                "FLOW_FILE"
            } else {
                "TOPOLOGY_FILE"
            };
            return Err(Ns3Error {
                file: file.to_string(),
                line: 0,
                what: k.into(),
                message: "missing: the config must name it".into(),
            });
        }
        // each rate's thresholds in order, named by their own lines
        for &(rate, kmin) in &c.kmin_kb {
            if let Some(&(_, kmax)) = c.kmax_kb.iter().find(|(r, _)| *r == rate)
                && kmin > kmax
            {
                let kmax_line = c.map_line("KMAX_MAP", rate);
                return Err(Ns3Error {
                    file: file.to_string(),
                    line: c.map_line("KMIN_MAP", rate),
                    what: "KMIN_MAP".into(),
                    message: format!(
                        "found Kmin {kmin} KB for {rate}, above its Kmax {kmax} KB (KMAX_MAP, line {kmax_line}); \
                         allowed Kmin ≤ Kmax"
                    ),
                });
            }
        }
        Ok(c)
    }

    /// The line `key` was last given on (0: not in the file).
    pub fn line_of(&self, key: &str) -> usize {
        self.lines.get(key).copied().unwrap_or(0)
    }

    /// The line of the entry for `rate` of the ECN map `key` (0: none).
    pub fn map_line(&self, key: &str, rate: Rate) -> usize {
        self.map_lines
            .get(&(key.to_string(), rate.bps()))
            .copied()
            .unwrap_or(0)
    }
}

/// One link of a topology file.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// One end (node id).
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Its rate.
    pub rate: Rate,
    /// Its one-way delay.
    pub delay: Duration,
    /// Its line in the file.
    pub line: usize,
}

/// A topology file: `nodes switches links`, the switch ids, then `a b rate delay error_rate`
/// per link.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Number of nodes (ids 0..nodes).
    pub nodes: u32,
    /// Which nodes are switches.
    pub is_switch: Vec<bool>,
    /// The links, in file order (the order gives the reference's port numbers).
    pub links: Vec<Link>,
}

impl Topology {
    /// Parses the text of a topology file named `file`.
    pub fn parse(text: &str, file: &str) -> Result<Topology, Ns3Error> {
        let mut t = Tokens::new(file, text);
        let nodes: u32 = t.num("node count", "a whole number")?;
        let switches: u32 = t.num("switch count", "a whole number")?;
        let links: u32 = t.num("link count", "a whole number")?;
        if links > MAX_LINKS {
            return Err(t.err(
                1,
                "link count",
                format!("found {links}, allowed at most {MAX_LINKS}"),
            ));
        }
        const MAX_NODES: u32 = 1 << 16;
        if nodes > MAX_NODES || switches > nodes {
            return Err(t.err(
                1,
                "node count",
                format!(
                    "found {nodes} nodes and {switches} switches, allowed switches ≤ nodes ≤ {MAX_NODES}"
                ),
            ));
        }
        let mut is_switch = vec![false; nodes as usize];
        for _ in 0..switches {
            let id: u32 = t.num("switch id", "a node id")?;
            if id >= nodes {
                return Err(t.err(t.line(), "switch id", format!("found {id}, allowed 0..{nodes}")));
            }
            is_switch[id as usize] = true;
        }
        let mut out = Vec::new();
        for _ in 0..links {
            let a: u32 = t.num("link end", "a node id")?;
            let line = t.line();
            let b: u32 = t.num("link end", "a node id")?;
            for x in [a, b] {
                if x >= nodes {
                    return Err(t.err(line, "link end", format!("found {x}, allowed 0..{nodes}")));
                }
            }
            if a == b {
                return Err(t.err(
                    line,
                    "link end",
                    format!("found {a} twice, allowed two different nodes"),
                ));
            }
            let rate = t.rate("link rate")?;
            if !rate.is_byte_exact() {
                return Err(t.err(
                    line,
                    "link rate",
                    format!("found {rate}: a byte must last whole picoseconds"),
                ));
            }
            if !(crate::scenario::MIN_LINK_RATE..=crate::scenario::MAX_LINK_RATE).contains(&rate) {
                return Err(t.err(
                    line,
                    "link rate",
                    format!("found {rate}, allowed 10Mbps … 1.6Tbps (Ethernet's rates)"),
                ));
            }
            let delay = t.time("link delay")?;
            if delay > crate::scenario::MAX_LINK_DELAY {
                return Err(t.err(
                    line,
                    "link delay",
                    format!(
                        "found {delay}, allowed at most {} (200,000 km of cable)",
                        crate::scenario::MAX_LINK_DELAY
                    ),
                ));
            }
            let e: f64 = t.num("link error rate", "a probability")?;
            if e != 0.0 {
                return Err(t.err(
                    line,
                    "link error rate",
                    format!("found {e}: random link errors are not modelled; allowed 0"),
                ));
            }
            out.push(Link {
                a,
                b,
                rate,
                delay,
                line,
            });
        }
        if !t.done() {
            let (x, l) = t.next("end")?;
            return Err(t.err(
                l,
                "end",
                format!("found {x:?} after the {links} links the first line announces"),
            ));
        }
        // a host has one NIC port: exactly one link (the simulator builds nothing else)
        let mut first: Vec<Option<usize>> = vec![None; nodes as usize];
        for l in &out {
            for x in [l.a, l.b] {
                if is_switch[x as usize] {
                    continue;
                }
                if let Some(at) = first[x as usize] {
                    return Err(t.err(
                        l.line,
                        "link end",
                        format!(
                            "host {x} (not in the switch list) has a second link (its first at line {at}); \
                             allowed one link per host"
                        ),
                    ));
                }
                first[x as usize] = Some(l.line);
            }
        }
        if let Some(h) = (0..nodes as usize).find(|&h| !is_switch[h] && first[h].is_none()) {
            return Err(t.err(
                1,
                "node count",
                format!("host {h} (not in the switch list) has no link; allowed hosts with one link each"),
            ));
        }
        Ok(Topology {
            nodes,
            is_switch,
            links: out,
        })
    }
}

/// Most flows a flow file may announce on its first line. Every flow is a RoCEv2 QP, about
/// 5.8 kB of memory each (docs/limits.md: measured peak RSS per flow), so the limit bounds a
/// run at about 5.8 GB; a larger count is refused before a flow is read.
pub const MAX_FLOWS: u32 = 1_000_000;

/// Most links a topology file may announce on its first line (as many as a scenario's
/// elements, `scenario::MAX_SCENARIO_SIZE`).
pub const MAX_LINKS: u32 = 200_000;

/// One flow of a flow file: `src dst pg dport size start_s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Priority class.
    pub pg: u8,
    /// UDP destination port.
    pub dport: u16,
    /// Bytes.
    pub size: u64,
    /// Start, as the reference rounds the file's seconds (down to a nanosecond).
    pub start: Instant,
    /// Its line.
    pub line: usize,
}

/// Parses a flow file named `file`: the count, then one flow per line.
pub fn parse_flows(text: &str, file: &str) -> Result<Vec<Flow>, Ns3Error> {
    let mut t = Tokens::new(file, text);
    let n: u32 = t.num("flow count", "a whole number")?;
    if n > MAX_FLOWS {
        // refused by count: every flow becomes a RoCEv2 QP of several kB (docs/limits.md)
        return Err(t.err(
            t.line(),
            "flow count",
            format!("found {n}, allowed at most {MAX_FLOWS} flows"),
        ));
    }
    let mut flows = Vec::new();
    for _ in 0..n {
        let src: u32 = t.num("src", "a node id")?;
        let line = t.line();
        let dst = t.num("dst", "a node id")?;
        let pg: u8 = t.num("pg", "a priority 0..=7")?;
        if pg > 7 {
            return Err(t.err(line, "pg", format!("found {pg}, allowed 0..=7")));
        }
        let dport = t.num("dport", "a UDP port")?;
        let size: u64 = t.num("size", "a number of bytes")?;
        if size == 0 {
            // a flow of no bytes "completes" without sending anything
            return Err(t.err(line, "size", "found 0, allowed at least 1 byte".into()));
        }
        let s: f64 = t.num("start time", "seconds")?;
        let ns = ns_of_seconds(s)
            .ok_or_else(|| t.err(line, "start time", format!("found {s}, allowed seconds ≥ 0")))?;
        flows.push(Flow {
            src,
            dst,
            pg,
            dport,
            size,
            start: Instant::from_ps(u128::from(ns) * 1_000),
            line,
        });
    }
    if !t.done() {
        let (x, l) = t.next("end")?;
        return Err(t.err(
            l,
            "end",
            format!("found {x:?} after the {n} flows the first line announces"),
        ));
    }
    Ok(flows)
}

/// One line of the reference's `fct.txt`: `sip dip sport dport size start_ns fct_ns
/// standalone_fct_ns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FctLine {
    /// Source node (from the IPv4 address).
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Bytes.
    pub size: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// Flow completion time, ns.
    pub fct_ns: u64,
    /// The reference's ideal ("standalone") FCT, ns.
    pub standalone_ns: u64,
}

/// Parses an `fct.txt` named `file`.
pub fn parse_fct(text: &str, file: &str) -> Result<Vec<FctLine>, Ns3Error> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let err = |what: &str, m: String| Ns3Error {
            file: file.to_string(),
            line,
            what: what.to_string(),
            message: m,
        };
        if f.len() != 8 {
            return Err(err(
                "line",
                format!(
                    "found {} fields, allowed 8 (sip dip sport dport size start fct standalone)",
                    f.len()
                ),
            ));
        }
        let ip = |s: &str, what: &str| {
            u32::from_str_radix(s, 16)
                .map(|ip| (ip >> 8) & 0xffff)
                .map_err(|_| err(what, format!("found {s:?}, allowed 8 hex digits")))
        };
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| err(what, format!("found {s:?}, allowed a whole number")))
        };
        out.push(FctLine {
            src: ip(f[0], "sip")?,
            dst: ip(f[1], "dip")?,
            sport: num(f[2], "sport")? as u16,
            dport: num(f[3], "dport")? as u16,
            size: num(f[4], "size")?,
            start_ns: num(f[5], "start")?,
            fct_ns: num(f[6], "fct")?,
            standalone_ns: num(f[7], "standalone fct")?,
        });
    }
    Ok(out)
}

/// A reference run's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The config.
    pub config: Config,
    /// The topology.
    pub topology: Topology,
    /// The flows, in file order.
    pub flows: Vec<Flow>,
}

fn read(path: &Path) -> Result<String, Ns3Error> {
    std::fs::read_to_string(path).map_err(|e| Ns3Error {
        file: path.display().to_string(),
        line: 0,
        what: "file".into(),
        message: format!("cannot read: {e}"),
    })
}

impl Run {
    /// Loads a config and the files it names, or the given `topology` and `flows` files
    /// instead (the reference's paths are relative to its `simulation/` folder; without an
    /// override a named file is looked up next to the config, by its path and then by its
    /// file name).
    pub fn load(config: &Path, topology: Option<&Path>, flows: Option<&Path>) -> Result<Run, Ns3Error> {
        let c = Config::parse(&read(config)?, &config.display().to_string())?;
        let dir = config.parent().unwrap_or(Path::new("."));
        let find = |named: &str, given: Option<&Path>| -> PathBuf {
            if let Some(g) = given {
                return g.to_path_buf();
            }
            let p = dir.join(named);
            if p.exists() {
                return p;
            }
            Path::new(named).file_name().map_or(p.clone(), |n| dir.join(n))
        };
        let tp = find(&c.topology_file, topology);
        let fp = find(&c.flow_file, flows);
        Run::from_parts(
            c,
            (&read(&tp)?, &tp.display().to_string()),
            (&read(&fp)?, &fp.display().to_string()),
        )
    }

    /// A run from its parsed config and the texts of its topology and flow files (each with
    /// the name errors give it); checks that every flow goes between two hosts.
    pub fn from_parts(c: Config, topology: (&str, &str), flows: (&str, &str)) -> Result<Run, Ns3Error> {
        let topology_name = topology.1;
        let topology = Topology::parse(topology.0, topology.1)?;
        let fp = flows.1;
        let flows = parse_flows(flows.0, fp)?;
        for f in &flows {
            if f.src == f.dst {
                return Err(Ns3Error {
                    file: fp.to_string(),
                    line: f.line,
                    what: "dst".into(),
                    message: format!("found node {} as both source and destination", f.src),
                });
            }
            for (x, what) in [(f.src, "src"), (f.dst, "dst")] {
                if x >= topology.nodes || topology.is_switch[x as usize] {
                    return Err(Ns3Error {
                        file: fp.to_string(),
                        line: f.line,
                        what: what.into(),
                        message: format!("found node {x}, allowed a host of the topology"),
                    });
                }
            }
        }
        // hosts do not forward: a flow's two hosts reach each other through linked switches
        // (or one link between them)
        let mut parent: Vec<u32> = (0..topology.nodes).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        for l in &topology.links {
            if topology.is_switch[l.a as usize] || topology.is_switch[l.b as usize] {
                let (ra, rb) = (find(&mut parent, l.a), find(&mut parent, l.b));
                parent[ra as usize] = rb;
            }
        }
        let direct = |a: u32, b: u32| {
            topology
                .links
                .iter()
                .any(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
        };
        for f in &flows {
            let (ra, rb) = (find(&mut parent, f.src), find(&mut parent, f.dst));
            if ra != rb && !direct(f.src, f.dst) {
                return Err(Ns3Error {
                    file: fp.to_string(),
                    line: f.line,
                    what: "dst".into(),
                    message: format!(
                        "no path from host {} to host {} in {} (their switches are not linked, and hosts \
                         do not forward); allowed hosts that reach each other",
                        f.src, f.dst, topology_name
                    ),
                });
            }
        }
        let run = Run {
            config: c,
            topology,
            flows,
        };
        run.check(topology_name)?;
        Ok(run)
    }

    /// What the simulator would refuse to build (or the fork would assert), named at its
    /// file, line and config key: an ECN map without an entry for a switch port's rate, the
    /// DCQCN values against the senders' line rates, a buffer smaller than the headroom its
    /// ports reserve.
    fn check(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        let at = |key: &str, message: String| Ns3Error {
            file: c.file.clone(),
            line: c.line_of(key),
            what: key.into(),
            message,
        };
        if c.enable_qcn {
            for l in t
                .links
                .iter()
                .filter(|l| t.is_switch[l.a as usize] || t.is_switch[l.b as usize])
            {
                let has = [
                    ("KMIN_MAP", c.kmin_kb.iter().any(|(r, _)| *r == l.rate)),
                    ("KMAX_MAP", c.kmax_kb.iter().any(|(r, _)| *r == l.rate)),
                    ("PMAX_MAP", c.pmax.iter().any(|(r, _)| *r == l.rate)),
                ];
                if let Some((key, _)) = has.into_iter().find(|(_, has)| !has) {
                    let missing = if c.line_of(key) == 0 {
                        " (the key is missing)"
                    } else {
                        ""
                    };
                    return Err(at(
                        key,
                        format!(
                            "no entry for {}, the rate of the link at {topology_name}:{}{missing}; allowed a \
                             map with an entry for every switch port's rate (the fork asserts one; ENABLE_QCN 0 \
                             marks nothing)",
                            l.rate, l.line
                        ),
                    ));
                }
            }
        }
        if c.cc_mode == 1 {
            let rp = self.rp_params();
            // each host's one link
            let mut link_of: Vec<Option<&Link>> = vec![None; t.nodes as usize];
            for l in &t.links {
                link_of[l.a as usize].get_or_insert(l);
                link_of[l.b as usize].get_or_insert(l);
            }
            let mut checked: Vec<Rate> = Vec::new();
            for f in &self.flows {
                let Some(l) = link_of[f.src as usize] else {
                    continue;
                };
                if checked.contains(&l.rate) {
                    continue;
                }
                checked.push(l.rate);
                if let Err(e) = rp.validate(l.rate) {
                    // the config's key and its own value, not the reaction point's field
                    let (key, message) = match e.field {
                        "rpg_min_rate" | "rate_to_set_on_first_cnp" => (
                            "MIN_RATE",
                            format!(
                                "found {}, above the line rate {} of host {} (its link at {topology_name}:{}); \
                                 allowed up to the slowest sender's line rate",
                                c.min_rate, l.rate, f.src, l.line
                            ),
                        ),
                        "rpg_time_reset" => (
                            "RP_TIMER",
                            "found 0 µs: the rate would never rise again after a cut; allowed a period above 0".into(),
                        ),
                        "dce_tcp_rtt" => (
                            "ALPHA_RESUME_INTERVAL",
                            "found 0 µs, allowed a period above 0".into(),
                        ),
                        "rate_reduce_monitor_period" => (
                            "RATE_DECREASE_INTERVAL",
                            "found 0 µs, allowed a period above 0".into(),
                        ),
                        "dce_tcp_g" => ("EWMA_GAIN", format!("found {}, allowed 0..=1", e.found)),
                        "rpg_threshold" => ("FAST_RECOVERY_TIMES", format!("found {}, allowed {}", e.found, e.allowed)),
                        "rpg_ai_rate" => ("RATE_AI", format!("found {}, allowed {}", e.found, e.allowed)),
                        "rpg_hai_rate" => ("RATE_HAI", format!("found {}, allowed {}", e.found, e.allowed)),
                        "clamp_tgt_rate" => ("CLAMP_TARGET_RATE", format!("found {}, allowed {}", e.found, e.allowed)),
                        other => (
                            "CC_MODE",
                            format!("DCQCN (CC_MODE 1) cannot run with these values: {other}: found {}, allowed {}", e.found, e.allowed),
                        ),
                    };
                    return Err(at(key, message));
                }
            }
        }
        // every switch's buffer holds the headroom its ports reserve (3 × rate × delay of its
        // fastest port, per lossless priority, as convert.rs sets it)
        let mut lossless = 0u8;
        for f in &self.flows {
            lossless |= 1 << f.pg;
        }
        let no_ecn =
            |_: &[&Link]| -> Result<Option<crate::config::transport::EcnSpec>, std::convert::Infallible> {
                Ok(None)
            };
        let Ok(sim) = t.sim_config(
            &c.file,
            c.buffer_mib * 1024 * 1024,
            lossless,
            u64::from(c.packet_payload_size),
            no_ecn,
        );
        for (id, node) in sim.nodes.iter().enumerate() {
            let crate::config::NodeKind::Switch(sw) = &node.kind else {
                continue;
            };
            let (ports, total) = crate::config::headroom::switch_reserves(&sim, id as u32, sw);
            if total <= u128::from(sw.buffer_bytes) {
                continue;
            }
            let widest = t
                .links
                .iter()
                .filter(|l| l.a == id as u32 || l.b == id as u32)
                .max_by_key(|l| u128::from(l.rate.bps()) * l.delay.as_ps())
                .map_or(0, |l| l.line);
            let need_mib = total.div_ceil(1 << 20);
            let allowed = if need_mib < u128::from(MAX_BUFFER_MIB) {
                format!(
                    "a BUFFER_SIZE above {need_mib} MiB (room to share besides the headroom), or shorter link delays"
                )
            } else {
                format!("shorter link delays (BUFFER_SIZE holds at most {MAX_BUFFER_MIB} MiB)")
            };
            return Err(at(
                "BUFFER_SIZE",
                format!(
                    "found {} MiB, but switch {id}'s {} ports reserve {total} bytes: each its headroom of 3 × rate \
                     × delay (the longest at {topology_name}:{widest}) and 4096 bytes, as the fork's MMU takes them \
                     out of the buffer; allowed {allowed}",
                    c.buffer_mib,
                    ports.len(),
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "ENABLE_QCN 1\nPACKET_PAYLOAD_SIZE 1000\nTOPOLOGY_FILE t.txt\nFLOW_FILE f.txt\nTRACE_FILE x\nCC_MODE 1\nRP_TIMER 300\nEWMA_GAIN 0.00390625\nRATE_AI 20Mb/s\nKMAX_MAP 2 100000000000 1600 400000000000 6400\n";

    #[test]
    fn a_config_gives_its_values_and_lists_the_keys_it_ignores() {
        let c = Config::parse(CONFIG, "config.txt").unwrap();
        assert_eq!(c.rp_timer, Duration::from_us(300));
        assert_eq!(c.ewma_gain_1024, 4);
        assert_eq!(c.rate_ai, Rate::from_mbps(20));
        assert_eq!(
            c.kmax_kb,
            vec![(Rate::from_gbps(100), 1600), (Rate::from_gbps(400), 6400)]
        );
        assert_eq!(c.ignored.len(), 1);
        assert_eq!((c.ignored[0].key.as_str(), c.ignored[0].line), ("TRACE_FILE", 5));
    }

    #[test]
    fn config_errors_name_the_file_line_key_found_and_allowed() {
        let e = Config::parse(&CONFIG.replace("RP_TIMER 300", "RP_TIMER soon"), "c.txt").unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.what.as_str()),
            ("c.txt", 7, "RP_TIMER")
        );
        assert!(
            e.message.contains("soon") && e.message.contains("microseconds"),
            "{e}"
        );
        let e = Config::parse(&format!("{CONFIG}FOO 1\n"), "c.txt").unwrap_err();
        assert_eq!(e.line, 11);
        assert!(e.to_string().contains("FOO"), "{e}");
        let e = Config::parse(&format!("{CONFIG}CC_MODE 3\n"), "c.txt").unwrap_err();
        assert!(e.message.contains("HPCC"), "{e}");
        let e = Config::parse(&format!("{CONFIG}EWMA_GAIN 0.3\n"), "c.txt").unwrap_err();
        assert!(e.message.contains("1/1024"), "{e}");
        let e = Config::parse(&format!("{CONFIG}KMIN_MAP 2 100000000000\n"), "c.txt").unwrap_err();
        assert!(e.message.contains("missing"), "{e}");
        let e = Config::parse("ENABLE_QCN 1\n", "c.txt").unwrap_err();
        assert_eq!(e.what, "TOPOLOGY_FILE");
    }

    #[test]
    fn topology_and_flow_errors_name_the_line() {
        let e = Topology::parse("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 7 100Gbps 1us 0\n", "t.txt").unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (4, "link end"));
        assert!(e.message.contains("0..3"), "{e}");
        let e = Topology::parse("3 1 1\n2\n0 2 fast 1000ns 0\n", "t.txt").unwrap_err();
        assert!(e.message.contains("fast") && e.message.contains("Gbps"), "{e}");
        let e = Topology::parse("3 1 1\n2\n0 2 100Gbps 1000ns 0.01\n", "t.txt").unwrap_err();
        assert!(e.message.contains("not modelled"), "{e}");
        let e = parse_flows("2\n0 1 3 100 1000 0\n", "f.txt").unwrap_err();
        assert_eq!(e.what, "src");
        assert!(e.message.contains("missing"), "{e}");
        let e = parse_flows("1\n0 1 9 100 1000 0\n", "f.txt").unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (2, "pg"));
        let f = parse_flows("1\n0 1 3 100 1000 2.000013122\n", "f.txt").unwrap();
        assert_eq!(f[0].start, Instant::from_ps(2_000_013_121_000));
    }

    #[test]
    fn fct_lines_give_nodes_from_their_addresses() {
        let l = parse_fct("0b000101 0b000801 10000 100 1000000 0 1068079 88000\n", "fct.txt").unwrap();
        assert_eq!(
            (l[0].src, l[0].dst, l[0].fct_ns, l[0].standalone_ns),
            (1, 8, 1_068_079, 88_000)
        );
        let e = parse_fct("0b000101 x 1 2\n", "fct.txt").unwrap_err();
        assert!(e.message.contains("8"), "{e}");
    }
}
