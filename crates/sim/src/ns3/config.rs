//! The reference's `config.txt`: the keys used, those accepted and ignored (with why), and
//! the values refused because the simulator does not model them.

use std::collections::HashMap;

use lossless_proto::units::{Duration, Rate};

use super::Ns3Error;
use super::output::OutputKeys;
use super::parse::{Tokens, micros, ns_of_seconds};

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
    /// `CC_MODE`: 1 = DCQCN, 3 = HPCC, 7 = TIMELY, 8 = DCTCP, 10 = HPCC-PINT; any other value
    /// is no congestion control (as in the reference).
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
    /// `EWMA_GAIN` in 1/1024 (DCQCN: the file's fraction must be a multiple of 1/1024).
    pub ewma_gain_1024: u32,
    /// `EWMA_GAIN` as written (DCTCP's g; 0 when not given, as the fork's default `1 / 16` is
    /// an integer division).
    pub ewma_gain: f64,
    /// `DCTCP_RATE_AI`: DCTCP's increase per batch.
    pub dctcp_rate_ai: Rate,
    /// `HAS_WIN`: every QP has a window of bytes in flight (MODEL.md §9.3; the fork's default
    /// is 1).
    pub has_win: bool,
    /// `VAR_WIN`: the window scales with the QP's rate.
    pub var_win: bool,
    /// `GLOBAL_T`: the window is the largest BDP of any host pair (1) or the pair's own (0).
    pub global_t: bool,
    /// `FAST_RECOVERY_TIMES`.
    pub fast_recovery_times: u32,
    /// `FAST_REACT`: HPCC reacts on every ACK between full updates.
    pub fast_react: bool,
    /// `U_TARGET`: HPCC's η.
    pub u_target: f64,
    /// `MI_THRESH`: HPCC's additive stages before a multiplicative update.
    pub mi_thresh: u32,
    /// `INT_MULTI`: HPCC's INT unit multiplier.
    pub int_multi: u32,
    /// `MULTI_RATE`: HPCC's per-hop rates (only 0 is modelled).
    pub multi_rate: bool,
    /// `SAMPLE_FEEDBACK`: HPCC's fast reactions skip hops with an empty queue.
    pub sample_feedback: bool,
    /// `PINT_LOG_BASE`: the base of HPCC-PINT's code (the fork's default 1.05).
    pub pint_log_base: f64,
    /// `PINT_PROB`: the fraction of ACKs an HPCC-PINT sender reacts to.
    pub pint_prob: f64,
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
const IGNORED: [(&str, &str); 4] = [
    ("TRACE_FILE", "packet traces are not written (use --pcap)"),
    ("TRACE_OUTPUT_FILE", "packet traces are not written (use --pcap)"),
    ("ENABLE_TRACE", "packet traces are not written"),
    (
        "L2_CHUNK_SIZE",
        "adds ACKs at chunk boundaries, which changes nothing when every packet is ACKed (L2_ACK_INTERVAL, MODEL.md §2)",
    ),
];
/// More ignored keys (split to keep the table readable).
const IGNORED_2: [(&str, &str); 5] = [
    (
        "DATA_RATE",
        "read and unused by the fork (link rates come from the topology file)",
    ),
    (
        "LINK_DELAY",
        "read and unused by the fork (link delays come from the topology file)",
    ),
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
        let mut c = Config::defaults(file);
        let mut seen_topology = false;
        let mut seen_flows = false;
        while !t.done() {
            let (key, line) = t.next("key")?;
            c.lines.insert(key.to_string(), line);
            match key {
                "TOPOLOGY_FILE" => {
                    c.topology_file = t.next(key)?.0.to_string();
                    seen_topology = true;
                }
                "FLOW_FILE" => {
                    c.flow_file = t.next(key)?.0.to_string();
                    seen_flows = true;
                }
                _ => {
                    // each key is read by exactly one of these; a key none reads is ignored
                    // (with its reason) or refused
                    let read = c.read_run_key(&mut t, key, line)?
                        || c.read_dcqcn_key(&mut t, key, line)?
                        || c.read_hpcc_key(&mut t, key, line)?
                        || c.read_ecn_map(&mut t, key)?
                        || refuse_unmodelled(&mut t, key, line)?;
                    if !read {
                        c.read_ignored(&mut t, key, line)?;
                    }
                }
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
        c.check_thresholds_in_order()?;
        c.check_ewma_gain()?;
        c.check_hpcc()?;
        c.check_pint()?;
        c.list_keys_without_effect();
        Ok(c)
    }

    /// HPCC (`CC_MODE 3`) is modelled with one rate per QP (`MULTI_RATE 0`) and needs a
    /// window (`HAS_WIN 1`: it divides by it).
    fn check_hpcc(&self) -> Result<(), Ns3Error> {
        if self.cc_mode != 3 {
            return Ok(());
        }
        if self.multi_rate {
            let line = self.lines.get("MULTI_RATE").copied().unwrap_or(0);
            return Err(Ns3Error {
                file: self.file.clone(),
                line,
                what: "MULTI_RATE".into(),
                message: format!(
                    "found 1{}: HPCC's per-hop rates are not modelled; allowed 0 (one rate per QP, run.py's `hp` profile)",
                    if line == 0 {
                        " (the fork's default when the key is missing)"
                    } else {
                        ""
                    }
                ),
            });
        }
        if !self.has_win {
            return Err(Ns3Error {
                file: self.file.clone(),
                line: self.line_of("HAS_WIN"),
                what: "HAS_WIN".into(),
                message: "found 0 with CC_MODE 3: HPCC divides by the window (the fork's u is infinite then); allowed 1".into(),
            });
        }
        Ok(())
    }

    /// HPCC-PINT (`CC_MODE 10`): a log base whose codes fit the fork's 2-byte field, a
    /// sampling probability.
    fn check_pint(&self) -> Result<(), Ns3Error> {
        if self.cc_mode != 10 {
            return Ok(());
        }
        let err = |key: &str, message: String| Ns3Error {
            file: self.file.clone(),
            line: self.line_of(key),
            what: key.into(),
            message,
        };
        let b = self.pint_log_base;
        if let Err(e) = lossless_proto::hpcc_pint::PintCodec::new(b) {
            return Err(err("PINT_LOG_BASE", format!("found {b}, allowed {}", e.allowed)));
        }
        let p = self.pint_prob;
        if !(0.0..=1.0).contains(&p) {
            return Err(err(
                "PINT_PROB",
                format!("found {p}, allowed a probability 0..=1"),
            ));
        }
        Ok(())
    }

    /// DCQCN keeps its gain in 1/1024: refuses a gain that is not a multiple (`CC_MODE 1`).
    fn check_ewma_gain(&mut self) -> Result<(), Ns3Error> {
        if !self.lines.contains_key("EWMA_GAIN") {
            return Ok(());
        }
        let g = self.ewma_gain;
        let k = g * 1024.0;
        if self.cc_mode == 1 && k.fract() != 0.0 {
            return Err(Ns3Error {
                file: self.file.clone(),
                line: self.line_of("EWMA_GAIN"),
                what: "EWMA_GAIN".into(),
                message: format!(
                    "found {g}, allowed a multiple of 1/1024 in 0..=1 (the reaction point keeps alpha's gain in 1/1024)"
                ),
            });
        }
        self.ewma_gain_1024 = k as u32;
        Ok(())
    }

    /// Lists, with the keys ignored, those read but without effect in this run's mode (the
    /// other mode's congestion-control keys, the window's keys without `HAS_WIN`), in line
    /// order.
    fn list_keys_without_effect(&mut self) {
        let mut add = |key: &'static str, why: &'static str| {
            if let Some(&line) = self.lines.get(key) {
                self.ignored.push(IgnoredKey {
                    key: key.to_string(),
                    line,
                    why,
                });
            }
        };
        if self.cc_mode != 8 {
            add("DCTCP_RATE_AI", "DCTCP only (CC_MODE 8)");
        }
        if !self.has_win {
            add("GLOBAL_T", "window-based CC only (HAS_WIN 1)");
            add("VAR_WIN", "window-based CC only (HAS_WIN 1)");
        }
        if self.cc_mode != 3 && self.cc_mode != 10 {
            add("U_TARGET", "HPCC only (CC_MODE 3) and HPCC-PINT (CC_MODE 10)");
            add("MI_THRESH", "HPCC only (CC_MODE 3) and HPCC-PINT (CC_MODE 10)");
        }
        if self.cc_mode != 3 {
            for key in ["FAST_REACT", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK"] {
                add(
                    key,
                    if self.cc_mode == 10 {
                        "HPCC only (CC_MODE 3); HPCC-PINT (CC_MODE 10) does not read it (MODEL.md §9.6)"
                    } else {
                        "HPCC only (CC_MODE 3)"
                    },
                );
            }
        }
        if self.cc_mode != 10 {
            add("PINT_LOG_BASE", "PINT only");
            add("PINT_PROB", "PINT only");
        }
        if self.cc_mode == 10 {
            for key in [
                "ALPHA_RESUME_INTERVAL",
                "RATE_DECREASE_INTERVAL",
                "RP_TIMER",
                "CLAMP_TARGET_RATE",
                "FAST_RECOVERY_TIMES",
                "RATE_HAI",
                "EWMA_GAIN",
            ] {
                add(
                    key,
                    "DCQCN only (CC_MODE 1); HPCC-PINT (CC_MODE 10) does not read it (MODEL.md §9.2)",
                );
            }
        }
        if self.cc_mode == 3 {
            for key in [
                "ALPHA_RESUME_INTERVAL",
                "RATE_DECREASE_INTERVAL",
                "RP_TIMER",
                "CLAMP_TARGET_RATE",
                "FAST_RECOVERY_TIMES",
                "RATE_HAI",
                "EWMA_GAIN",
            ] {
                add(
                    key,
                    "DCQCN only (CC_MODE 1); HPCC (CC_MODE 3) does not read it (MODEL.md §9.2)",
                );
            }
        }
        if self.cc_mode == 7 {
            for key in [
                "ALPHA_RESUME_INTERVAL",
                "RATE_DECREASE_INTERVAL",
                "RP_TIMER",
                "CLAMP_TARGET_RATE",
                "FAST_RECOVERY_TIMES",
                "EWMA_GAIN",
            ] {
                add(
                    key,
                    "DCQCN only (CC_MODE 1); TIMELY (CC_MODE 7) does not read it (MODEL.md §9.2)",
                );
            }
        }
        if self.cc_mode == 8 {
            for key in [
                "ALPHA_RESUME_INTERVAL",
                "RATE_DECREASE_INTERVAL",
                "RP_TIMER",
                "CLAMP_TARGET_RATE",
                "FAST_RECOVERY_TIMES",
                "RATE_AI",
                "RATE_HAI",
            ] {
                add(
                    key,
                    "DCQCN only (CC_MODE 1); DCTCP (CC_MODE 8) does not read it (MODEL.md §9.2)",
                );
            }
        }
        self.ignored.sort_by_key(|k| k.line);
    }

    /// The fork's values of the keys a config may leave out.
    fn defaults(file: &str) -> Config {
        Config {
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
            // the fork's `double ewma_gain = 1 / 16`: integer division, so 0
            ewma_gain: 0.0,
            dctcp_rate_ai: Rate::from_mbps(1000),
            has_win: true,
            var_win: false,
            global_t: true,
            fast_recovery_times: 5,
            fast_react: true,
            u_target: 0.95,
            mi_thresh: 5,
            int_multi: 1,
            multi_rate: true,
            sample_feedback: false,
            pint_log_base: 1.05,
            pint_prob: 1.0,
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
        }
    }

    /// The value of `key` (given on `line`) if it is a key of the run as a whole: congestion
    /// control, packet size, stop time, buffer, ACK priority, output files. `false`: not one.
    fn read_run_key(&mut self, t: &mut Tokens<'_>, key: &str, line: usize) -> Result<bool, Ns3Error> {
        match key {
            "CC_MODE" => self.cc_mode = t.num(key, "a whole number")?,
            "ENABLE_QCN" => self.enable_qcn = flag(t, key)?,
            "PACKET_PAYLOAD_SIZE" => {
                self.packet_payload_size = t.num(key, "a number of bytes")?;
                if !(256..=4096).contains(&self.packet_payload_size) {
                    return Err(t.err(
                        line,
                        key,
                        format!(
                            "found {}, allowed 256..=4096 (the RoCEv2 MTUs)",
                            self.packet_payload_size
                        ),
                    ));
                }
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
                self.stop_time = Duration::from_ns(ns);
            }
            "BUFFER_SIZE" => {
                self.buffer_mib = t.num(key, "MiB")?;
                if !(1..=MAX_BUFFER_MIB).contains(&self.buffer_mib) {
                    return Err(t.err(
                        line,
                        key,
                        format!(
                            "found {} MiB, allowed 1..={MAX_BUFFER_MIB} (the fork computes the bytes in 32 \
                             bits: 4096 MiB and more wrap there)",
                            self.buffer_mib
                        ),
                    ));
                }
            }
            "ACK_HIGH_PRIO" => self.ack_high_prio = flag(t, key)?,
            "FCT_OUTPUT_FILE" | "PFC_OUTPUT_FILE" | "QLEN_MON_FILE" | "QLEN_MON_START" | "QLEN_MON_END" => {
                self.outputs.read(t, key, line)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The value of `key` (given on `line`) if it is a DCQCN reaction point's key. `false`:
    /// not one.
    fn read_dcqcn_key(&mut self, t: &mut Tokens<'_>, key: &str, line: usize) -> Result<bool, Ns3Error> {
        match key {
            "ALPHA_RESUME_INTERVAL" => self.alpha_resume_interval = us(t, key)?,
            "RATE_DECREASE_INTERVAL" => self.rate_decrease_interval = us(t, key)?,
            "RP_TIMER" => self.rp_timer = us(t, key)?,
            "CLAMP_TARGET_RATE" => self.clamp_target_rate = flag(t, key)?,
            "EWMA_GAIN" => {
                let g: f64 = t.num(key, "a fraction")?;
                if !(0.0..=1.0).contains(&g) {
                    return Err(t.err(
                        line,
                        key,
                        format!("found {g}, allowed 0..=1 (a multiple of 1/1024 with CC_MODE 1: DCQCN keeps alpha's gain in 1/1024)"),
                    ));
                }
                // DCQCN's 1/1024 rule is checked once CC_MODE is known
                self.ewma_gain = g;
            }
            "DCTCP_RATE_AI" => self.dctcp_rate_ai = t.rate(key)?,
            "HAS_WIN" => self.has_win = flag(t, key)?,
            "VAR_WIN" => self.var_win = flag(t, key)?,
            "GLOBAL_T" => self.global_t = flag(t, key)?,
            "FAST_RECOVERY_TIMES" => self.fast_recovery_times = t.num(key, "a count")?,
            "RATE_AI" => self.rate_ai = t.rate(key)?,
            "RATE_HAI" => self.rate_hai = t.rate(key)?,
            "MIN_RATE" => self.min_rate = t.rate(key)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The value of `key` (given on `line`) if it is one of HPCC's keys. `false`: not one.
    fn read_hpcc_key(&mut self, t: &mut Tokens<'_>, key: &str, line: usize) -> Result<bool, Ns3Error> {
        match key {
            "FAST_REACT" => self.fast_react = flag(t, key)?,
            "U_TARGET" => {
                let u: f64 = t.num(key, "a fraction")?;
                if !(u > 0.0 && u <= 1.0) {
                    return Err(t.err(line, key, format!("found {u}, allowed above 0, at most 1")));
                }
                self.u_target = u;
            }
            "MI_THRESH" => self.mi_thresh = t.num(key, "a count")?,
            "INT_MULTI" => {
                self.int_multi = t.num(key, "a whole number")?;
                if !(1..=400).contains(&self.int_multi) {
                    return Err(t.err(
                        line,
                        key,
                        format!(
                            "found {}, allowed 1..=400 (the INT queue field's unit, 80 × INT_MULTI bytes, is kept in 32 bits)",
                            self.int_multi
                        ),
                    ));
                }
            }
            // checked once CC_MODE is known (`check_pint`): other modes do not read them
            "PINT_LOG_BASE" => self.pint_log_base = t.num(key, "a number above 1")?,
            "PINT_PROB" => self.pint_prob = t.num(key, "a probability")?,
            "MULTI_RATE" => self.multi_rate = flag(t, key)?,
            "SAMPLE_FEEDBACK" => self.sample_feedback = flag(t, key)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The entries of `key` if it is an ECN map (`KMAX_MAP`, `KMIN_MAP`, `PMAX_MAP`): a count,
    /// then (rate, value) pairs. `false`: not one.
    fn read_ecn_map(&mut self, t: &mut Tokens<'_>, key: &str) -> Result<bool, Ns3Error> {
        if !matches!(key, "KMAX_MAP" | "KMIN_MAP" | "PMAX_MAP") {
            return Ok(false);
        }
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
                            &mut self.kmax_kb
                        } else {
                            &mut self.kmin_kb
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
                    put(&mut self.pmax, rate, p);
                }
            }
            self.map_lines.insert((key.to_string(), bps), t.line());
        }
        Ok(true)
    }

    /// A key of [`IGNORED`] or [`IGNORED_2`] (its value skipped, the key listed with its
    /// reason); any other key is refused.
    fn read_ignored(&mut self, t: &mut Tokens<'_>, key: &str, line: usize) -> Result<(), Ns3Error> {
        match IGNORED.iter().chain(IGNORED_2.iter()).find(|(n, _)| *n == key) {
            Some(&(_, why)) => {
                t.next(key)?;
                self.ignored.push(IgnoredKey {
                    key: key.to_string(),
                    line,
                    why,
                });
                Ok(())
            }
            None => Err(t.err(
                line,
                "key",
                format!("found {key:?}: not a key of the reference's config.txt"),
            )),
        }
    }

    /// Each rate's thresholds in order (Kmin ≤ Kmax), named by their own lines.
    fn check_thresholds_in_order(&self) -> Result<(), Ns3Error> {
        for &(rate, kmin) in &self.kmin_kb {
            if let Some(&(_, kmax)) = self.kmax_kb.iter().find(|(r, _)| *r == rate)
                && kmin > kmax
            {
                let kmax_line = self.map_line("KMAX_MAP", rate);
                return Err(Ns3Error {
                    file: self.file.clone(),
                    line: self.map_line("KMIN_MAP", rate),
                    what: "KMIN_MAP".into(),
                    message: format!(
                        "found Kmin {kmin} KB for {rate}, above its Kmax {kmax} KB (KMAX_MAP, line {kmax_line}); \
                         allowed Kmin ≤ Kmax"
                    ),
                });
            }
        }
        Ok(())
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

/// A 0-or-1 flag of `key`: whether it is not 0.
fn flag(t: &mut Tokens<'_>, key: &str) -> Result<bool, Ns3Error> {
    Ok(t.num::<u32>(key, "0 or 1")? != 0)
}

/// A number of microseconds of `key`.
fn us(t: &mut Tokens<'_>, key: &str) -> Result<Duration, Ns3Error> {
    let (v, l) = t.next(key)?;
    micros(v).ok_or_else(|| t.err(l, key, format!("found {v:?}, allowed a number of microseconds")))
}

/// Refuses a value of `key` (given on `line`) that asks for what the simulator does not
/// model: link errors, going back to a chunk boundary, unpaced QPs, links going
/// down. `false`: not such a key.
fn refuse_unmodelled(t: &mut Tokens<'_>, key: &str, line: usize) -> Result<bool, Ns3Error> {
    match key {
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
            if flag(t, key)? {
                return Err(t.err(
                    line,
                    key,
                    "found 1: going back to a chunk boundary re-delivers bytes (MODEL.md §2) and is not modelled; allowed 0".into(),
                ));
            }
        }
        "RATE_BOUND" => {
            if !flag(t, key)? {
                return Err(t.err(
                    line,
                    key,
                    "found 0: QPs are always paced at their rate here; allowed 1".into(),
                ));
            }
        }
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
        _ => return Ok(false),
    }
    Ok(true)
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
        let c = Config::parse(
            &format!("{CONFIG}CC_MODE 10\nPINT_LOG_BASE 1.01\nPINT_PROB 0.5\n"),
            "c.txt",
        )
        .unwrap();
        assert_eq!((c.cc_mode, c.pint_log_base, c.pint_prob), (10, 1.01, 0.5));
        assert!(c.ignored.iter().any(|k| k.key == "RP_TIMER"), "{:?}", c.ignored);
        assert!(
            !c.ignored.iter().any(|k| k.key.starts_with("PINT")),
            "{:?}",
            c.ignored
        );
        let e = Config::parse(&format!("{CONFIG}CC_MODE 10\nPINT_LOG_BASE 1.0001\n"), "c.txt").unwrap_err();
        assert_eq!((e.what.as_str(), e.line), ("PINT_LOG_BASE", 12));
        assert!(e.message.contains("16 bits"), "{e}");
        let e = Config::parse(&format!("{CONFIG}CC_MODE 10\nPINT_PROB 2\n"), "c.txt").unwrap_err();
        assert_eq!(e.what, "PINT_PROB");
        // other modes do not read them: listed, not checked
        let c = Config::parse(&format!("{CONFIG}PINT_LOG_BASE 1.0001\n"), "c.txt").unwrap();
        assert!(
            c.ignored.iter().any(|k| k.key == "PINT_LOG_BASE"),
            "{:?}",
            c.ignored
        );
        let c = Config::parse(&format!("{CONFIG}CC_MODE 7\n"), "c.txt").unwrap();
        assert!(c.ignored.iter().any(|k| k.key == "RP_TIMER"), "{:?}", c.ignored);
        let e = Config::parse(&format!("{CONFIG}CC_MODE 3\n"), "c.txt").unwrap_err();
        assert_eq!(e.what, "MULTI_RATE");
        assert!(e.message.contains("default"), "{e}");
        let e = Config::parse(&format!("{CONFIG}CC_MODE 3\nMULTI_RATE 0\nHAS_WIN 0\n"), "c.txt").unwrap_err();
        assert_eq!((e.what.as_str(), e.line), ("HAS_WIN", 13));
        let c = Config::parse(
            &format!("{CONFIG}CC_MODE 3\nMULTI_RATE 0\nINT_MULTI 4\n"),
            "c.txt",
        )
        .unwrap();
        assert_eq!((c.cc_mode, c.int_multi, c.mi_thresh), (3, 4, 5));
        assert!(c.ignored.iter().any(|k| k.key == "RP_TIMER"), "{:?}", c.ignored);
        assert!(!c.ignored.iter().any(|k| k.key == "INT_MULTI"), "{:?}", c.ignored);
        let e = Config::parse(&format!("{CONFIG}EWMA_GAIN 0.3\n"), "c.txt").unwrap_err();
        assert!(e.message.contains("1/1024"), "{e}");
        let e = Config::parse(&format!("{CONFIG}KMIN_MAP 2 100000000000\n"), "c.txt").unwrap_err();
        assert!(e.message.contains("missing"), "{e}");
        let e = Config::parse("ENABLE_QCN 1\n", "c.txt").unwrap_err();
        assert_eq!(e.what, "TOPOLOGY_FILE");
    }
}
