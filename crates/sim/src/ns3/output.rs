//! The HPCC ns-3 fork's output files, written from a run of this simulator in the fork's exact
//! formats (`scratch/third.cc`, MODEL.md §8), so that the scripts that read them keep working:
//!
//! - `fct.txt` ([`write_fct`]): one line per finished flow, in order of completion,
//!   `sip dip sport dport size start_ns fct_ns standalone_fct_ns` (`%08x %08x %u %u %lu %lu %lu %lu`).
//! - `pfc.txt` ([`write_pfc`], lines gathered by [`Ns3Observer`]): one line per PFC frame a
//!   device received, `time_ns node_id node_type if_index type` (node_type 0 host, 1 switch;
//!   if_index the device, 1 for a host's NIC and the k-th link of the topology file touching a
//!   switch for its port k; type 1 pause, 0 resume).
//! - `qlen.txt` ([`QlenMonitor`]): from `QLEN_MON_START` every 100 ns until the first sample at
//!   or after `QLEN_MON_END`, each switch port's egress bytes (all classes, the frame being sent
//!   not counted) binned by 1000 bytes; at every sample whose time is a multiple of 100 ms a
//!   block `time: T` and one line `switch port c0 c1 ...` per switch port, counts cumulative.
//!
//! Where this simulator's model differs, the lines differ in content, never in layout: a PFC
//! frame here is an 802.1Qbb frame with pause times, so a long pause may be refreshed (one more
//! `type 1` line each time) where the fork's pause lasts until its resume; a PFC frame that
//! names several classes gives one line per class. A queue sample is taken before the events of
//! its instant (the fork's order among same-instant events depends on when each was scheduled).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::{Duration, Instant};

use super::parse::Tokens;
use super::{Ns3Error, Run};
use crate::config::model::ns3_ip;
use crate::config::{NodeKind, SimConfig};
use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::Observer;
use crate::report::FlowReport;
use crate::sim::exchange::{Dec, DecodeError, Enc, Shipped};
use crate::sim::{Event, Simulator};

/// The fork's queue monitor period (`qlen_mon_interval`, 100 ns).
pub const QLEN_INTERVAL_NS: u64 = 100;
/// The fork's dump period of the queue monitor (`qlen_dump_interval`, 100 ms).
pub const QLEN_DUMP_NS: u64 = 100_000_000;

/// The output keys of a `config.txt`, with the fork's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputKeys {
    /// `FCT_OUTPUT_FILE` (default `fct.txt`) and its line (0: the default).
    pub fct_file: (String, usize),
    /// `PFC_OUTPUT_FILE` (default `pfc.txt`) and its line.
    pub pfc_file: (String, usize),
    /// `QLEN_MON_FILE` and its line; without it the fork has no queue monitor file.
    pub qlen_file: Option<(String, usize)>,
    /// `QLEN_MON_START`, ns (default 2,000,000,000).
    pub qlen_start_ns: u64,
    /// `QLEN_MON_END`, ns (default 2,100,000,000).
    pub qlen_end_ns: u64,
}

impl Default for OutputKeys {
    fn default() -> Self {
        OutputKeys {
            fct_file: ("fct.txt".into(), 0),
            pfc_file: ("pfc.txt".into(), 0),
            qlen_file: None,
            qlen_start_ns: 2_000_000_000,
            qlen_end_ns: 2_100_000_000,
        }
    }
}

impl OutputKeys {
    /// Reads the value of output key `key` (at `line`).
    pub(super) fn read(&mut self, t: &mut Tokens<'_>, key: &str, line: usize) -> Result<(), Ns3Error> {
        match key {
            "QLEN_MON_START" => self.qlen_start_ns = t.num(key, "a time in ns")?,
            "QLEN_MON_END" => self.qlen_end_ns = t.num(key, "a time in ns")?,
            _ => {
                let v = t.next(key)?.0.to_string();
                match key {
                    "FCT_OUTPUT_FILE" => self.fct_file = (v, line),
                    "PFC_OUTPUT_FILE" => self.pfc_file = (v, line),
                    _ => self.qlen_file = Some((v, line)),
                }
            }
        }
        Ok(())
    }
}

/// Where an input file the config names was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Given on the command line instead of the config's path.
    Given,
    /// An absolute path, as written.
    Absolute,
    /// Relative to the current directory, as the fork opens it.
    CurrentDir,
    /// Not in the current directory, but relative to the config's directory.
    ConfigDir,
}

impl std::fmt::Display for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Resolved::Given => "given on the command line",
            Resolved::Absolute => "absolute path",
            Resolved::CurrentDir => "relative to the current directory, as the fork opens it",
            Resolved::ConfigDir => "not in the current directory; found relative to the config's directory",
        })
    }
}

/// Finds the file a config (at `config`) names as `key` = `named` on its `line`: `given` if
/// set; else as the fork opens it (relative to the current directory); else relative to the
/// config's directory. The error names the key, its line and every place tried.
pub fn resolve_input(
    config: &Path,
    key: &str,
    named: &str,
    line: usize,
    given: Option<&Path>,
) -> Result<(PathBuf, Resolved), Ns3Error> {
    if let Some(g) = given {
        return Ok((g.to_path_buf(), Resolved::Given));
    }
    let p = Path::new(named);
    if p.is_absolute() {
        return Ok((p.to_path_buf(), Resolved::Absolute));
    }
    if p.is_file() {
        return Ok((p.to_path_buf(), Resolved::CurrentDir));
    }
    let dir = config.parent().unwrap_or(Path::new(""));
    let q = dir.join(p);
    if q.is_file() {
        return Ok((q, Resolved::ConfigDir));
    }
    let cwd = std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string());
    Err(Ns3Error {
        file: config.display().to_string(),
        line,
        what: key.to_string(),
        message: format!(
            "{named:?} not found: tried {named} in the current directory ({cwd}) and {}; give the file with --ns3-{}",
            q.display(),
            if key == "TOPOLOGY_FILE" {
                "topology"
            } else {
                "flows"
            }
        ),
    })
}

/// One line of `pfc.txt`: a PFC frame a device received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcLine {
    /// When its last bit arrived, ns (rounded down).
    pub time_ns: u64,
    /// The receiving node's id.
    pub node: u32,
    /// Whether that node is a switch (node_type 1).
    pub switch: bool,
    /// The receiving device: 1 + the port's index among its node's links, in file order.
    pub if_index: u32,
    /// Pause (type 1) or resume (type 0).
    pub pause: bool,
}

/// Gathers the `pfc.txt` lines of a run: every PFC or PAUSE frame a port received.
#[derive(Debug, Clone)]
pub struct Ns3Observer {
    /// Per port (the simulator's numbering): node id, device index, whether a switch.
    ports: Vec<(u32, u32, bool)>,
    /// The lines, in time order.
    pub pfc: Vec<PfcLine>,
    /// In a part of a split run: each line's event (instant in ps, tie) and receiving port,
    /// by which the parts' lines merge into one run's order ([`merge_pfc`]).
    keys: Option<Vec<(u128, u64, PortId)>>,
    /// The event being handled (kept only in a part of a split run).
    now: (u128, u64),
    /// In a part of a split run with the queue monitor: its ports' samples ([`QlenPart`]).
    qlen: Option<Box<QlenPart>>,
}

/// Every port of `config` in the simulator's order (link i's ports 2i at `a` and 2i + 1 at
/// `b`) as (node, ns-3 device index, whether the node is a switch): a node's devices count
/// its links in order from 1.
fn ns3_devices(config: &SimConfig) -> impl Iterator<Item = (u32, u32, bool)> + '_ {
    let mut next = vec![0u32; config.nodes.len()];
    config.links.iter().flat_map(|l| [l.a, l.b]).map(move |n| {
        next[n as usize] += 1;
        let switch = matches!(config.nodes[n as usize].kind, NodeKind::Switch(_));
        (n, next[n as usize], switch)
    })
}

impl Ns3Observer {
    /// An observer for a simulation of `config` (ports numbered as the simulator numbers them:
    /// link i has ports 2i at `a` and 2i + 1 at `b`; devices count each node's links in order).
    pub fn new(config: &SimConfig) -> Self {
        let ports = ns3_devices(config).collect();
        Ns3Observer {
            ports,
            pfc: Vec::new(),
            keys: None,
            now: (0, 0),
            qlen: None,
        }
    }

    /// Its part's queue monitor, if it keeps one ([`Ns3Observer::with_qlen`]).
    pub fn qlen_mut(&mut self) -> Option<&mut QlenPart> {
        self.qlen.as_deref_mut()
    }

    /// The same observer sampling its part's switch ports for the queue monitor as `qlen`
    /// says ([`ForkOutputs::part_monitor`](super::run::ForkOutputs::part_monitor)).
    pub fn with_qlen(mut self, qlen: Option<QlenPart>) -> Self {
        self.qlen = qlen.map(Box::new);
        self
    }

    /// An observer for one part of a split run of `config`: it also keeps what orders its
    /// lines among the other parts' ([`merge_pfc`]).
    pub fn for_part(config: &SimConfig) -> Self {
        Ns3Observer {
            keys: Some(Vec::new()),
            ..Ns3Observer::new(config)
        }
    }
}

/// The `pfc.txt` lines of a split run's parts (each observed by [`Ns3Observer::for_part`])
/// in the order one simulator gives them: by instant, then the tie of the event that received
/// the frame (`sim/order.rs`), each part's lines in its own order; two parts' lines of one
/// instant and tie (frames one node sent at one instant on two links) by receiving port.
pub fn merge_pfc(parts: Vec<Ns3Observer>) -> Vec<PfcLine> {
    let mut heads: Vec<_> = parts
        .into_iter()
        .map(|o| o.keys.unwrap_or_default().into_iter().zip(o.pfc).peekable())
        .collect();
    let mut out = Vec::new();
    loop {
        let mut best: Option<(usize, (u128, u64, PortId))> = None;
        for (i, h) in heads.iter_mut().enumerate() {
            if let Some(&(k, _)) = h.peek()
                && best.is_none_or(|(_, b)| k < b)
            {
                best = Some((i, k));
            }
        }
        let Some((i, k)) = best else {
            return out;
        };
        // every line of that event (a PFC frame naming several priorities gives several)
        while let Some((_, line)) = heads[i].next_if(|(kk, _)| *kk == k) {
            out.push(line);
        }
    }
}

/// A part's `pfc.txt` lines, with what orders them among the other parts' ([`merge_pfc`]),
/// sent to the first rank of a run over MPI ranks: the count, each line (time in ns, node,
/// switch flag, device, pause flag), then whether keys follow and, if so, each line's (instant
/// in ps, tie, receiving port); then whether its queue monitor follows and, if so, the ports
/// its events touched (`QlenPart::ship`).
impl Shipped for Ns3Observer {
    fn ship(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        e.len(self.pfc.len());
        for l in &self.pfc {
            e.u64(l.time_ns);
            e.u32(l.node);
            e.u8(u8::from(l.switch));
            e.u32(l.if_index);
            e.u8(u8::from(l.pause));
        }
        match &self.keys {
            Some(keys) => {
                e.u8(1);
                e.len(keys.len());
                for &(at, tie, port) in keys {
                    e.u128(at);
                    e.u64(tie);
                    e.u32(port);
                }
            }
            None => e.u8(0),
        }
        match &self.qlen {
            Some(q) => {
                e.u8(1);
                q.ship(&mut e);
            }
            None => e.u8(0),
        }
    }

    fn unship(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        let n = d.len(18)?;
        for _ in 0..n {
            self.pfc.push(PfcLine {
                time_ns: d.u64()?,
                node: d.u32()?,
                switch: d.bool()?,
                if_index: d.u32()?,
                pause: d.bool()?,
            });
        }
        if d.bool()? {
            if d.len(28)? != n {
                return Err(d.err("pfc.txt lines and keys that do not match"));
            }
            let keys = self.keys.get_or_insert_with(Vec::new);
            for _ in 0..n {
                keys.push((d.u128()?, d.u64()?, d.u32()?));
            }
        } else {
            self.keys = None;
        }
        if d.bool()? {
            self.qlen
                .as_deref_mut()
                .ok_or_else(|| d.err("a queue monitor's samples for a run without one"))?
                .unship(d)?;
        }
        Ok(())
    }
}

impl Observer for Ns3Observer {
    // (the fork's outputs hold no buffer occupancy: the simulator need not read it per frame)
    const BUFFER_STATE: bool = false;

    fn event_start(&mut self, at: Instant, tie: u64, _seq: u64) {
        if self.keys.is_some() {
            self.now = (at.as_ps(), tie);
        }
    }
    // (inlined: two queue changes a frame a switch, and without a monitor in this part —
    // every run on one thread — a call each cost ≈ 15 instructions for nothing)
    #[inline]
    fn queue_changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        if let Some(q) = self.qlen.as_deref_mut() {
            q.changed(port, prio, bytes, at);
        }
    }
    fn control_received(&mut self, port: PortId, frame: &ControlFrame, at: Instant) {
        let Some(&(node, if_index, switch)) = self.ports.get(port as usize) else {
            return;
        };
        let time_ns = (at.as_ps() / 1000) as u64;
        let mut line = |pause| {
            self.pfc.push(PfcLine {
                time_ns,
                node,
                switch,
                if_index,
                pause,
            })
        };
        match *frame {
            ControlFrame::Pause { quanta } => line(quanta > 0),
            ControlFrame::Pfc { enable_vector, time } => {
                for (c, &q) in time.iter().enumerate() {
                    if enable_vector & (1 << c) != 0 {
                        line(q > 0);
                    }
                }
            }
        }
        if let Some(keys) = &mut self.keys {
            let (at, tie) = self.now;
            keys.resize(self.pfc.len(), (at, tie, port));
        }
    }
}

/// Writes `pfc.txt` lines: `time_ns node_id node_type if_index type`.
pub fn write_pfc(lines: &[PfcLine], w: &mut dyn Write) -> io::Result<()> {
    for l in lines {
        writeln!(
            w,
            "{} {} {} {} {}",
            l.time_ns,
            l.node,
            u8::from(l.switch),
            l.if_index,
            u8::from(l.pause)
        )?;
    }
    Ok(())
}

/// Writes `fct.txt` for `run` from its report's `flows` (in the run's order): one line per
/// finished flow in order of completion (ties in flow-file order), sport 10000 + the flow's
/// index among the flows of its (src, dst) pair. Returns how many flows did not finish (the
/// fork writes nothing for them either).
pub fn write_fct(run: &Run, flows: &[FlowReport], w: &mut dyn Write) -> io::Result<usize> {
    let mut pair = std::collections::HashMap::new();
    let mut done = Vec::with_capacity(run.flows.len());
    let mut unfinished = 0;
    for (i, (f, r)) in run.flows.iter().zip(flows).enumerate() {
        let n = pair.entry((f.src, f.dst)).or_insert(0u32);
        let sport = 10_000 + *n;
        *n += 1;
        match (r.completion_ps, r.fct_ideal_ps) {
            (Some(fct), Some(ideal)) => {
                let start = f.start.as_ps();
                done.push((start + fct, i, sport, start / 1000, fct / 1000, ideal / 1000));
            }
            _ => unfinished += 1,
        }
    }
    unfinished += run.flows.len().saturating_sub(flows.len());
    done.sort_unstable_by_key(|d| (d.0, d.1));
    for (_, i, sport, start, fct, ideal) in done {
        let f = &run.flows[i];
        writeln!(
            w,
            "{:08x} {:08x} {} {} {} {} {} {}",
            ns3_ip(f.src),
            ns3_ip(f.dst),
            sport,
            f.dport,
            f.size,
            start,
            fct,
            ideal
        )?;
    }
    Ok(unfinished)
}

/// The fork's queue monitor: drives a simulator through its sampling instants and writes the
/// `qlen.txt` blocks as the fork does.
pub struct QlenMonitor {
    /// Per switch port in the fork's order (switch id, then port): the simulator's port, its
    /// switch's id and device index, and the count of samples per 1000-byte bin.
    ports: Vec<(PortId, u32, u32, Vec<u32>)>,
    /// The next sampling instant, ns (`None`: done).
    pub(super) next_ns: Option<u64>,
    pub(super) end_ns: u64,
    /// Samples taken.
    pub samples: u64,
}

impl QlenMonitor {
    /// A monitor of every switch port of `config` from `start_ns` until the first sample at or
    /// after `end_ns`.
    pub fn new(config: &SimConfig, start_ns: u64, end_ns: u64) -> Self {
        let mut ports: Vec<_> = ns3_devices(config)
            .enumerate()
            .filter(|&(_, (_, _, switch))| switch)
            .map(|(p, (n, dev, _))| (p as PortId, n, dev, Vec::new()))
            .collect();
        ports.sort_by_key(|p| (p.1, p.2));
        QlenMonitor {
            ports,
            next_ns: Some(start_ns),
            end_ns,
            samples: 0,
        }
    }

    /// Runs `sim` until `until`, sampling at every monitor instant before it (and before the
    /// simulation's end) and writing each dump to `out`. Returns true when `sim` has reached
    /// its end.
    pub fn run_until<O: Observer, Q: EventQueue<Event>>(
        &mut self,
        sim: &mut Simulator<O, Q>,
        until: Instant,
        out: &mut dyn Write,
    ) -> io::Result<bool> {
        while let Some(t) = self.next_ns {
            let at = Instant::ZERO + Duration::from_ns(t);
            if at > until || at >= sim.end() {
                break;
            }
            sim.run_until(at);
            if sim.fault().is_some() {
                return Ok(true);
            }
            for (p, _, _, cnt) in &mut self.ports {
                let bytes: u64 = sim.ports[*p as usize].queues.iter().map(|q| q.bytes).sum();
                let kb = (bytes / 1000) as usize;
                if cnt.len() <= kb {
                    cnt.resize(kb + 1, 0);
                }
                cnt[kb] += 1;
            }
            self.samples += 1;
            if t % QLEN_DUMP_NS == 0 {
                writeln!(out, "time: {t}")?;
                for (_, sw, port, cnt) in &self.ports {
                    write!(out, "{sw} {port}")?;
                    for c in cnt {
                        write!(out, " {c}")?;
                    }
                    writeln!(out)?;
                }
            }
            self.next_ns = (t < self.end_ns).then(|| t + QLEN_INTERVAL_NS);
        }
        Ok(sim.run_until(until))
    }
}

/// The queue monitor of one part of a split run, kept by its [`Ns3Observer`]: the samples
/// [`QlenMonitor`] takes of every switch port at every instant, counted per port as its queue
/// changes (a sample at instant t sees the queue after the events before t: a change at t
/// counts from the next sample on). A port that no event of this part touched holds every
/// sample empty, as in its owner if that never touched it either; [`QlenPart::merge`] takes
/// each port from the part that touched it.
#[derive(Clone, Debug)]
pub struct QlenPart {
    start_ps: u128,
    /// Samples taken in the run (at `start + 100 ns × k`, k below it).
    samples: u64,
    /// The samples whose instant is a dump's (a multiple of 100 ms), in order.
    dumps: Vec<u64>,
    /// Per port (the simulator's numbering): the switch and device, in the fork's terms, or
    /// `None` for a host's.
    ports: Vec<Option<(u32, u32)>>,
    /// Per port: its queue's state and counts.
    state: Vec<PortSamples>,
}

#[derive(Clone, Debug, Default)]
struct PortSamples {
    prio: [u64; 8],
    /// Samples counted so far.
    done: u64,
    /// Count per 1000-byte bin.
    cnt: Vec<u32>,
    /// The counts at each dump passed.
    snaps: Vec<Vec<u32>>,
    touched: bool,
}

impl PortSamples {
    /// Counts the samples from `done` up to `upto` (exclusive) with the queue as it is,
    /// keeping the counts at each dump on the way.
    fn advance(&mut self, upto: u64, dumps: &[u64]) {
        let kb = (self.prio.iter().sum::<u64>() / 1000) as usize;
        while self.done < upto {
            let stop = match dumps.get(self.snaps.len()) {
                Some(&d) if d < upto => d + 1,
                _ => upto,
            };
            if self.cnt.len() <= kb {
                self.cnt.resize(kb + 1, 0);
            }
            self.cnt[kb] += (stop - self.done) as u32;
            self.done = stop;
            if dumps.get(self.snaps.len()) == Some(&(stop - 1)) {
                self.snaps.push(self.cnt.clone());
            }
        }
    }
}

impl QlenPart {
    /// The monitor of a part of a split run of `config` ending at `end`, sampling from
    /// `start_ns` until the first sample at or after `end_ns` (as [`QlenMonitor::new`]).
    pub fn new(config: &SimConfig, start_ns: u64, end_ns: u64, end: Instant) -> Self {
        let start_ps = u128::from(start_ns) * 1000;
        let end_ps = end.as_ps();
        // every sample before the run's end, up to the first at or after `end_ns`
        let before_end = if start_ps < end_ps {
            ((end_ps - start_ps - 1) / (u128::from(QLEN_INTERVAL_NS) * 1000) + 1) as u64
        } else {
            0
        };
        let to_end_ns = end_ns.saturating_sub(start_ns).div_ceil(QLEN_INTERVAL_NS) + 1;
        let samples = before_end.min(to_end_ns);
        let dumps = if start_ns.is_multiple_of(QLEN_INTERVAL_NS) {
            let first = (QLEN_DUMP_NS - start_ns % QLEN_DUMP_NS) % QLEN_DUMP_NS / QLEN_INTERVAL_NS;
            (first..samples)
                .step_by((QLEN_DUMP_NS / QLEN_INTERVAL_NS) as usize)
                .collect()
        } else {
            Vec::new()
        };
        let ports: Vec<_> = ns3_devices(config)
            .map(|(n, dev, switch)| switch.then_some((n, dev)))
            .collect();
        QlenPart {
            start_ps,
            samples,
            dumps,
            state: vec![PortSamples::default(); ports.len()],
            ports,
        }
    }

    /// Queue `prio` of `port` holds `bytes` from `at` on.
    #[inline(never)]
    fn changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        // (a host's queues are not monitored)
        let (Some(Some(_)), Some(st)) = (self.ports.get(port as usize), self.state.get_mut(port as usize))
        else {
            return;
        };
        let at = at.as_ps();
        // the samples at or before `at` saw the queue before the change
        let upto = if at < self.start_ps {
            0
        } else {
            (((at - self.start_ps) / (u128::from(QLEN_INTERVAL_NS) * 1000)) as u64 + 1).min(self.samples)
        };
        st.advance(upto, &self.dumps);
        st.prio[prio as usize & 7] = bytes;
        st.touched = true;
    }

    /// Appends the ports this part's events touched: their count, then each one's index, its
    /// queues' bytes per priority, the samples counted, the dumps passed, its counts per bin
    /// and its counts at each dump passed (each a count and 32-bit values).
    fn ship(&self, e: &mut Enc<'_>) {
        let touched: Vec<(usize, &PortSamples)> =
            self.state.iter().enumerate().filter(|(_, s)| s.touched).collect();
        e.len(touched.len());
        for (i, st) in touched {
            e.u32(i as u32);
            for &b in &st.prio {
                e.u64(b);
            }
            e.u64(st.done);
            e.len(st.snaps.len());
            for v in std::iter::once(&st.cnt).chain(&st.snaps) {
                e.len(v.len());
                for &c in v {
                    e.u32(c);
                }
            }
        }
    }

    /// Takes in what [`QlenPart::ship`] wrote, into a monitor made for the same run.
    fn unship(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        let n = d.len(4 + 64 + 8 + 16)?;
        for _ in 0..n {
            let i = d.u32()? as usize;
            let mut st = PortSamples {
                touched: true,
                ..PortSamples::default()
            };
            for b in &mut st.prio {
                *b = d.u64()?;
            }
            st.done = d.u64()?;
            let snaps = d.len(8)?;
            let read = |d: &mut Dec<'_>| -> Result<Vec<u32>, DecodeError> {
                let k = d.len(4)?;
                (0..k).map(|_| d.u32()).collect()
            };
            st.cnt = read(d)?;
            for _ in 0..snaps {
                st.snaps.push(read(d)?);
            }
            if st.done > self.samples || st.snaps.len() > self.dumps.len() {
                return Err(d.err("a queue monitor's samples past the run's"));
            }
            *self
                .state
                .get_mut(i)
                .filter(|_| self.ports.get(i).is_some_and(Option::is_some))
                .ok_or_else(|| d.err("a queue monitor's port that is not a switch port"))? = st;
        }
        Ok(())
    }

    /// `qlen.txt` of a split run whose parts (in partition order) kept `parts`, as
    /// [`QlenMonitor`] writes it for one simulator, and the samples taken.
    pub fn merge(parts: &mut [&mut QlenPart], out: &mut dyn Write) -> io::Result<u64> {
        for p in parts.iter_mut() {
            let (samples, dumps) = (p.samples, std::mem::take(&mut p.dumps));
            for st in &mut p.state {
                st.advance(samples, &dumps);
            }
            p.dumps = dumps;
        }
        let Some(first) = parts.first() else {
            return Ok(0);
        };
        let mut order: Vec<(u32, u32, usize)> = first
            .ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|(sw, dev)| (sw, dev, i)))
            .collect();
        order.sort_unstable();
        let owner: Vec<usize> = (0..first.ports.len())
            .map(|i| parts.iter().position(|p| p.state[i].touched).unwrap_or(0))
            .collect();
        for (j, &k) in first.dumps.iter().enumerate() {
            let t = (first.start_ps / 1000) as u64 + k * QLEN_INTERVAL_NS;
            writeln!(out, "time: {t}")?;
            for &(sw, dev, i) in &order {
                write!(out, "{sw} {dev}")?;
                for c in &parts[owner[i]].state[i].snaps[j] {
                    write!(out, " {c}")?;
                }
                writeln!(out)?;
            }
        }
        Ok(first.samples)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ns3::{Config, Flow};

    #[test]
    fn output_keys_are_read_with_their_lines_and_the_forks_defaults() {
        let c = Config::parse(
            "TOPOLOGY_FILE t\nFLOW_FILE f\nFCT_OUTPUT_FILE out/fct.txt\nQLEN_MON_FILE q.txt\nQLEN_MON_START 0\n",
            "c",
        )
        .unwrap();
        assert_eq!(c.outputs.fct_file, ("out/fct.txt".to_string(), 3));
        assert_eq!(c.outputs.pfc_file, ("pfc.txt".to_string(), 0));
        assert_eq!(c.outputs.qlen_file, Some(("q.txt".to_string(), 4)));
        assert_eq!(
            (c.outputs.qlen_start_ns, c.outputs.qlen_end_ns),
            (0, 2_100_000_000)
        );
        assert!(c.ignored.is_empty(), "output keys are honoured, not ignored");
        let e = Config::parse("TOPOLOGY_FILE t\nFLOW_FILE f\nQLEN_MON_END soon\n", "c").unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (3, "QLEN_MON_END"));
    }

    #[test]
    fn pfc_lines_have_the_forks_five_fields() {
        let mut s = Vec::new();
        let l = PfcLine {
            time_ns: 2_000_001_234,
            node: 17,
            switch: true,
            if_index: 3,
            pause: true,
        };
        write_pfc(&[l, PfcLine { pause: false, ..l }], &mut s).unwrap();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "2000001234 17 1 3 1\n2000001234 17 1 3 0\n"
        );
    }

    #[test]
    fn fct_lines_come_in_completion_order_with_pair_ports() {
        let flow = |src, dst, start_ns: u64| Flow {
            src,
            dst,
            pg: 3,
            dport: 100,
            size: 1000,
            start: Instant::ZERO + Duration::from_ns(start_ns),
            line: 0,
        };
        let run = Run {
            config: Config::parse("TOPOLOGY_FILE t\nFLOW_FILE f\n", "c").unwrap(),
            topology: crate::ns3::Topology::parse("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n", "t")
                .unwrap(),
            flows: vec![flow(0, 1, 0), flow(0, 1, 10), flow(1, 0, 5)],
        };
        let fr = |fct_ns: Option<u128>| FlowReport {
            name: String::new(),
            src: String::new(),
            dst: String::new(),
            priority: 3,
            offered_bps: 0,
            size_bytes: None,
            sent_frames: 0,
            sent_bytes: 0,
            delivered_frames: 0,
            delivered_bytes: 0,
            dropped_frames: 0,
            throughput_bps: 0,
            completion_ps: fct_ns.map(|n| n * 1000),
            fct_ideal_ps: Some(4_240_000),
            fct_slowdown_ratio: None,
            qp: None,
            throughput_without_cn_bps: None,
        };
        // flow 0 ends at 9000, flow 1 at 10 + 5000, flow 2 never
        let flows = [fr(Some(9000)), fr(Some(5000)), fr(None)];
        let mut s = Vec::new();
        assert_eq!(write_fct(&run, &flows, &mut s).unwrap(), 1);
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "0b000001 0b000101 10001 100 1000 10 5000 4240\n0b000001 0b000101 10000 100 1000 0 9000 4240\n"
        );
    }

    #[test]
    fn inputs_are_found_as_the_fork_opens_them_then_next_to_the_config() {
        let dir = std::env::temp_dir().join(format!("lossless-ns3-resolve-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("mix")).unwrap();
        std::fs::write(dir.join("mix/topo.txt"), "1 0 0\n").unwrap();
        let config = dir.join("config.txt");
        let (p, how) = resolve_input(&config, "TOPOLOGY_FILE", "mix/topo.txt", 5, None).unwrap();
        assert_eq!((p, how), (dir.join("mix/topo.txt"), Resolved::ConfigDir));
        let e = resolve_input(&config, "FLOW_FILE", "mix/none.txt", 6, None).unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (6, "FLOW_FILE"));
        assert!(e.message.contains("--ns3-flows"), "{e}");
        let given = Path::new("/x/flows");
        assert_eq!(
            resolve_input(&config, "FLOW_FILE", "mix/none.txt", 6, Some(given)).unwrap(),
            (given.to_path_buf(), Resolved::Given)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
