//! The deadlock and storm detector (`[deadlock]`): every `interval` it builds the wait-for
//! graph of blocked queues and reports what persists longer than `threshold`.
//!
//! - A queue (port, priority) is **blocked** at a scan when it holds frames, its peer pauses
//!   it now, and it sent nothing since the previous scan.
//! - A blocked queue at switch S towards switch T waits for T's ingress (port facing S,
//!   priority), which drains only through T's egress queues holding its frames: an edge
//!   goes from it to every blocked queue of T holding a frame that entered T from S.
//! - A blocked queue towards a host waits for that host's receiver: a **sink**.
//! - A cycle of blocked queues (a strongly connected component with a cycle) is a
//!   **deadlock**: nothing in it can move, whatever the timers. Blocked queues that lead to
//!   a sink whose NIC keeps pausing are a **storm** (congestion spreading from a receiver
//!   that never drains). A timer-based watchdog sees both as "paused too long"; the graph
//!   tells them apart.
//!
//! A deadlock or storm is reported once its members (a deadlock's component, a storm's sink)
//! have been blocked at every scan for `threshold`: with the cycle itself
//! (`switch.port:prio → …`), the members, when it formed (to within one scan), when it was
//! found, which flows have frames stuck in it, and when it went away if it did. With `stop`,
//! the run ends at the first deadlock.
//!
//! Cost: per scan, a pass over every port's queues plus the frames of blocked queues; the
//! scratch arrays keep their capacity, so scans allocate nothing once warm (a finding does).

use lossless_proto::flow_control::Mode;
use lossless_proto::units::Instant;

use crate::config::pathology::DeadlockConfig;
use crate::event::EventQueue;
use crate::frame::{FlowId, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::features::pathology::Timer;
use crate::sim::order::schedule;
use crate::sim::{Event, Node, Simulator};

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A cycle of blocked queues.
    Deadlock,
    /// Blocked queues leading to a host that keeps pausing.
    Storm,
}

impl Kind {
    /// Its name in the report: `deadlock` or `storm`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Deadlock => "deadlock",
            Kind::Storm => "storm",
        }
    }
}

/// A deadlock or storm the detector reported.
#[derive(Clone, Debug)]
pub(crate) struct Finding {
    pub(crate) kind: Kind,
    /// Deadlock: one cycle, in order. Storm: the queue facing the sink.
    pub(crate) cycle: Vec<(PortId, u8)>,
    /// Every blocked queue of the component (deadlock) or leading to the sink (storm).
    pub(crate) members: Vec<(PortId, u8)>,
    /// Storm: the host.
    pub(crate) sink: Option<NodeId>,
    pub(crate) formed_at: Instant,
    pub(crate) detected_at: Instant,
    pub(crate) resolved_at: Option<Instant>,
    /// Flows with frames in the members when found (sorted, at most [`MAX_FLOWS`]).
    pub(crate) flows: Vec<FlowId>,
    /// How many distinct flows that was.
    pub(crate) flows_total: usize,
}

/// Flows named per finding.
pub(crate) const MAX_FLOWS: usize = 64;

const NONE: u32 = u32::MAX;

/// One scan's blocked queues among the ports one simulator owns (all of them, or one
/// partition's: `partition.rs`), with what the wait-for graph needs of each: the ports its
/// frames entered their switch by, and the flows they belong to. The partitions of a split
/// run each take their part at the same point of the order of events; every partition then
/// builds the graph from all the parts, which is the graph of one simulator.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanPart {
    /// Blocked queues in (port, priority) order: the port, the priority, and the ends of its
    /// ranges in `ingress` and `flows`.
    pub(crate) queues: Vec<(PortId, u8, u32, u32)>,
    /// The distinct ingress ports of each blocked queue's frames.
    pub(crate) ingress: Vec<PortId>,
    /// The distinct flows of each blocked queue's frames, sorted.
    pub(crate) flows: Vec<FlowId>,
}

impl ScanPart {
    fn clear(&mut self) {
        self.queues.clear();
        self.ingress.clear();
        self.flows.clear();
    }

    /// Queue `k`'s ingress ports and flows.
    fn ranges(&self, k: usize) -> (&[PortId], &[FlowId]) {
        let (i0, f0) = match k {
            0 => (0, 0),
            _ => (self.queues[k - 1].2 as usize, self.queues[k - 1].3 as usize),
        };
        let (_, _, i1, f1) = self.queues[k];
        (&self.ingress[i0..i1 as usize], &self.flows[f0..f1 as usize])
    }
}

/// Something persisting across scans.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    kind: Kind,
    key: u64,
    since: Instant,
    finding: Option<usize>,
    seen: bool,
}

/// The detector's state.
pub(crate) struct Detector {
    pub(crate) cfg: DeadlockConfig,
    last_scan: Option<Instant>,
    /// Per port: frames sent per priority at the previous scan.
    last_tx: Vec<[u64; 8]>,
    /// Per port, per priority: since when the queue has been blocked (`Instant::MAX`: not).
    pub(crate) blocked_since: Vec<[Instant; 8]>,
    /// This simulator's part of the scan being made (taken by a split run's driver).
    pub(crate) local: ScanPart,
    // scratch, kept between scans
    nodes: Vec<(PortId, u8)>,
    /// Per graph node: the part and the queue in it that it came from.
    source: Vec<(u32, u32)>,
    /// The nodes of several parts with their sources, sorted together.
    order: Vec<((PortId, u8), (u32, u32))>,
    index: Vec<[u32; 8]>,
    edges: Vec<(u32, u32)>,
    adj: Vec<u32>,
    stamp: Vec<u32>,
    epoch: u32,
    scc: Vec<u32>,
    tarjan: Tarjan,
    tracked: Vec<Tracked>,
    pub(crate) findings: Vec<Finding>,
}

/// Iterative Tarjan scratch.
#[derive(Default)]
struct Tarjan {
    idx: Vec<u32>,
    low: Vec<u32>,
    on: Vec<bool>,
    stack: Vec<u32>,
    call: Vec<(u32, u32)>,
}

impl Detector {
    pub(crate) fn new(cfg: DeadlockConfig, ports: usize) -> Self {
        Detector {
            cfg,
            last_scan: None,
            last_tx: vec![[0; 8]; ports],
            blocked_since: vec![[Instant::MAX; 8]; ports],
            local: ScanPart::default(),
            nodes: Vec::new(),
            source: Vec::new(),
            order: Vec::new(),
            index: vec![[NONE; 8]; ports],
            edges: Vec::new(),
            adj: Vec::new(),
            stamp: vec![0; ports],
            epoch: 0,
            scc: Vec::new(),
            tarjan: Tarjan::default(),
            tracked: Vec::new(),
            findings: Vec::new(),
        }
    }

    /// Successors of node `n` (edges sorted by source).
    fn succ(&self, n: u32) -> &[(u32, u32)] {
        let a = self.adj[n as usize] as usize;
        let b = self.adj[n as usize + 1] as usize;
        &self.edges[a..b]
    }

    /// Strongly connected components of the graph into `scc` (component id per node).
    fn components(&mut self) {
        let n = self.nodes.len();
        let t = &mut self.tarjan;
        t.idx.clear();
        t.idx.resize(n, NONE);
        t.low.clear();
        t.low.resize(n, 0);
        t.on.clear();
        t.on.resize(n, false);
        t.stack.clear();
        self.scc.clear();
        self.scc.resize(n, NONE);
        let mut counter = 0u32;
        let mut comp = 0u32;
        for root in 0..n as u32 {
            if self.tarjan.idx[root as usize] != NONE {
                continue;
            }
            self.tarjan.call.clear();
            self.tarjan.call.push((root, 0));
            while let Some(&(v, ei)) = self.tarjan.call.last() {
                let vi = v as usize;
                if ei == 0 && self.tarjan.idx[vi] == NONE {
                    self.tarjan.idx[vi] = counter;
                    self.tarjan.low[vi] = counter;
                    counter += 1;
                    self.tarjan.stack.push(v);
                    self.tarjan.on[vi] = true;
                }
                let a = self.adj[vi] as usize;
                let b = self.adj[vi + 1] as usize;
                if (a + ei as usize) < b {
                    let w = self.edges[a + ei as usize].1;
                    if let Some(top) = self.tarjan.call.last_mut() {
                        top.1 += 1;
                    }
                    let wi = w as usize;
                    if self.tarjan.idx[wi] == NONE {
                        self.tarjan.call.push((w, 0));
                    } else if self.tarjan.on[wi] {
                        self.tarjan.low[vi] = self.tarjan.low[vi].min(self.tarjan.idx[wi]);
                    }
                    continue;
                }
                self.tarjan.call.pop();
                if let Some(&(u, _)) = self.tarjan.call.last() {
                    let ui = u as usize;
                    self.tarjan.low[ui] = self.tarjan.low[ui].min(self.tarjan.low[vi]);
                }
                if self.tarjan.low[vi] == self.tarjan.idx[vi] {
                    while let Some(w) = self.tarjan.stack.pop() {
                        self.tarjan.on[w as usize] = false;
                        self.scc[w as usize] = comp;
                        if w == v {
                            break;
                        }
                    }
                    comp += 1;
                }
            }
        }
    }

    /// Whether component `c` holds a cycle (more than one node, or a self-loop).
    fn cyclic(&self, c: u32) -> bool {
        let mut members = (0..self.nodes.len() as u32).filter(|&n| self.scc[n as usize] == c);
        let Some(first) = members.next() else {
            return false;
        };
        members.next().is_some() || self.succ(first).iter().any(|e| e.1 == first)
    }

    /// A shortest cycle through `start` within its component.
    fn cycle_through(&self, start: u32) -> Vec<u32> {
        let c = self.scc[start as usize];
        let n = self.nodes.len();
        let mut prev = vec![NONE; n];
        let mut q = std::collections::VecDeque::from([start]);
        let mut end = NONE;
        'bfs: while let Some(v) = q.pop_front() {
            for &(_, w) in self.succ(v) {
                if self.scc[w as usize] != c {
                    continue;
                }
                if w == start {
                    end = v;
                    break 'bfs;
                }
                if prev[w as usize] == NONE {
                    prev[w as usize] = v;
                    q.push_back(w);
                }
            }
        }
        let mut path = Vec::new();
        let mut v = end;
        while v != NONE && v != start {
            path.push(v);
            v = prev[v as usize];
        }
        path.push(start);
        path.reverse();
        path
    }
}

fn mix(h: u64, x: u64) -> u64 {
    crate::sim::splitmix64(h ^ x)
}

impl Detector {
    /// Takes the per-port state of `ports` (what each scan compares with the last) from
    /// `other`, the detector of the partition that owned them.
    pub(crate) fn take_ports(&mut self, other: &Detector, ports: impl Iterator<Item = usize>) {
        for p in ports {
            self.last_tx[p] = other.last_tx[p];
            self.blocked_since[p] = other.blocked_since[p];
        }
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// One scan: this simulator's part of it, then, unless the fabric is split (where the
    /// driver gathers every partition's part and calls [`Simulator::scan_parts`]), the graph.
    pub(in crate::sim) fn on_deadlock_scan(&mut self) {
        let now = self.now;
        let Some(mut d) = self.patho.detector.take() else {
            return;
        };
        self.scan_part(&mut d, now);
        schedule!(self, now + d.cfg.interval, Timer::DeadlockScan.event(0));
        if self.is_partition() {
            self.patho.detector = Some(d);
            return;
        }
        let local = std::mem::take(&mut d.local);
        self.patho.detector = Some(d);
        self.scan_parts(&[&local]);
        if let Some(d) = self.patho.detector.as_deref_mut() {
            d.local = local;
        }
    }

    /// The wait-for graph of the scan made now, from every part of it (a split fabric's
    /// partitions', in any order): what persists is tracked and reported; with `stop`, the
    /// run ends at the first deadlock.
    pub fn scan_parts(&mut self, parts: &[&ScanPart]) {
        let now = self.now;
        let Some(mut d) = self.patho.detector.take() else {
            return;
        };
        self.build_graph(&mut d, parts);
        d.components();
        for t in &mut d.tracked {
            t.seen = false;
        }
        let since = d.last_scan.unwrap_or(now);
        // deadlocks: cyclic components
        let comps = d
            .scc
            .iter()
            .copied()
            .filter(|&c| c != NONE)
            .max()
            .map_or(0, |m| m + 1);
        for c in 0..comps {
            if !d.cyclic(c) {
                continue;
            }
            let mut key = 0x5EED_u64;
            for (i, &(p, q)) in d.nodes.iter().enumerate() {
                if d.scc[i] == c {
                    key = mix(key, (u64::from(p) << 3) | u64::from(q));
                }
            }
            self.track(&mut d, Kind::Deadlock, key, since, now, |s, d| {
                s.deadlock_finding(d, parts, c)
            });
        }
        // storms: blocked queues facing a host that keeps pausing, and what leads to them
        for i in 0..d.nodes.len() {
            let (p, q) = d.nodes[i];
            let host = self.ports[self.ports[p as usize].peer as usize].node;
            if !matches!(self.nodes[host as usize], Node::Host(_)) {
                continue;
            }
            let key = mix(0x57_0E, (u64::from(p) << 3) | u64::from(q));
            self.track(&mut d, Kind::Storm, key, since, now, |s, d| {
                s.storm_finding(d, parts, i as u32, host)
            });
        }
        // what went away
        let mut k = 0;
        while k < d.tracked.len() {
            let t = d.tracked[k];
            if t.seen {
                k += 1;
                continue;
            }
            if let Some(f) = t.finding {
                d.findings[f].resolved_at = Some(now);
            }
            d.tracked.swap_remove(k);
        }
        d.last_scan = Some(now);
        let stop = d.cfg.stop && d.findings.iter().any(|f| f.kind == Kind::Deadlock);
        self.patho.detector = Some(d);
        if stop && self.patho.stopped_by_deadlock.is_none() {
            self.patho.stopped_by_deadlock = Some(now);
            self.end = now;
            self.patho.halted = true;
        }
    }

    /// Keeps (or starts) tracking `key`; reports it once it has persisted for the threshold.
    fn track(
        &self,
        d: &mut Detector,
        kind: Kind,
        key: u64,
        since: Instant,
        now: Instant,
        make: impl FnOnce(&Self, &Detector) -> Finding,
    ) {
        let i = match d.tracked.iter().position(|t| t.kind == kind && t.key == key) {
            Some(i) => i,
            None => {
                d.tracked.push(Tracked {
                    kind,
                    key,
                    since,
                    finding: None,
                    seen: false,
                });
                d.tracked.len() - 1
            }
        };
        d.tracked[i].seen = true;
        let t = d.tracked[i];
        if t.finding.is_none() && now.saturating_duration_since(t.since) >= d.cfg.threshold {
            let mut f = make(self, d);
            f.formed_at = t.since;
            f.detected_at = now;
            d.findings.push(f);
            d.tracked[i].finding = Some(d.findings.len() - 1);
        }
    }

    /// This simulator's part of the scan made now: its ports' blocked queues (a queue is
    /// blocked when it holds frames, its peer pauses it and it sent nothing since the last
    /// scan), with the ports their frames came in by and their flows.
    fn scan_part(&self, d: &mut Detector, now: Instant) {
        let first = d.last_scan.is_none();
        d.local.clear();
        for (pi, port) in self.ports.iter().enumerate() {
            if !self.owns_port(pi as PortId) {
                continue;
            }
            for q in 0..8usize {
                let tx = port.queues[q].sent_frames;
                let moved = tx != d.last_tx[pi][q];
                d.last_tx[pi][q] = tx;
                let blocked = !first
                    && !moved
                    && port.nonempty & (1 << q) != 0
                    && !port.fault.down
                    && port.mac.config().mode != Mode::Off
                    && !port.mac.may_transmit(now, q as u8);
                if !blocked {
                    d.blocked_since[pi][q] = Instant::MAX;
                    continue;
                }
                if d.blocked_since[pi][q] == Instant::MAX {
                    d.blocked_since[pi][q] = d.last_scan.unwrap_or(now);
                }
                d.epoch = d.epoch.wrapping_add(1);
                if d.epoch == 0 {
                    d.stamp.iter_mut().for_each(|s| *s = 0);
                    d.epoch = 1;
                }
                let f0 = d.local.flows.len();
                for f in &port.queues[q].frames {
                    d.local.flows.push(f.flow);
                    let x = f.ingress;
                    if x == crate::frame::NO_PORT || d.stamp[x as usize] == d.epoch {
                        continue;
                    }
                    d.stamp[x as usize] = d.epoch;
                    d.local.ingress.push(x);
                }
                let flows = &mut d.local.flows;
                flows[f0..].sort_unstable();
                let mut w = f0;
                for r in f0..flows.len() {
                    if w == f0 || flows[r] != flows[w - 1] {
                        flows[w] = flows[r];
                        w += 1;
                    }
                }
                flows.truncate(w);
                d.local.queues.push((
                    pi as PortId,
                    q as u8,
                    d.local.ingress.len() as u32,
                    d.local.flows.len() as u32,
                ));
            }
        }
    }

    /// The blocked queues of every part, in (port, priority) order, and their waits-for
    /// edges: U → E when the blocked queue E (at switch T) holds a frame that entered T by
    /// port x, and U, the queue feeding x from the other side, is blocked.
    fn build_graph(&self, d: &mut Detector, parts: &[&ScanPart]) {
        // reset the index of the previous scan's nodes
        for &(p, q) in &d.nodes {
            d.index[p as usize][q as usize] = NONE;
        }
        d.nodes.clear();
        d.source.clear();
        for (pi, part) in parts.iter().enumerate() {
            for (k, &(p, q, _, _)) in part.queues.iter().enumerate() {
                d.nodes.push((p, q));
                d.source.push((pi as u32, k as u32));
            }
        }
        if parts.len() > 1 {
            // each part is in order; together they are in the order of one simulator's scan
            d.order.clear();
            d.order
                .extend(d.nodes.iter().copied().zip(d.source.iter().copied()));
            d.order.sort_unstable();
            for (i, &(n, s)) in d.order.iter().enumerate() {
                d.nodes[i] = n;
                d.source[i] = s;
            }
        }
        for (i, &(p, q)) in d.nodes.iter().enumerate() {
            d.index[p as usize][q as usize] = i as u32;
        }
        d.edges.clear();
        for (e, &(pi, k)) in d.source.iter().enumerate() {
            let q = d.nodes[e].1;
            for &x in parts[pi as usize].ranges(k as usize).0 {
                let u = self.ports[x as usize].peer;
                let ui = d.index[u as usize][q as usize];
                if ui != NONE {
                    d.edges.push((ui, e as u32));
                }
            }
        }
        d.edges.sort_unstable();
        d.adj.clear();
        d.adj.resize(d.nodes.len() + 1, 0);
        let mut k = 0;
        for v in 0..=d.nodes.len() {
            while k < d.edges.len() && (d.edges[k].0 as usize) < v {
                k += 1;
            }
            d.adj[v] = k as u32;
        }
    }

    /// The name `switch.port:prio` of queue (`p`, `q`).
    pub(crate) fn queue_name(&self, p: PortId, q: u8) -> String {
        let port = &self.ports[p as usize];
        format!(
            "{}.{}:{}",
            self.config.nodes[port.node as usize].name, port.local, q
        )
    }

    /// The flows with frames in the graph nodes `members` (sorted, at most [`MAX_FLOWS`]),
    /// and how many there were.
    fn stuck_flows(
        d: &Detector,
        parts: &[&ScanPart],
        members: impl Iterator<Item = usize>,
    ) -> (Vec<FlowId>, usize) {
        let mut flows: Vec<FlowId> = members
            .flat_map(|i| {
                let (pi, k) = d.source[i];
                parts[pi as usize].ranges(k as usize).1.iter().copied()
            })
            .collect();
        flows.sort_unstable();
        flows.dedup();
        let total = flows.len();
        flows.truncate(MAX_FLOWS);
        (flows, total)
    }

    fn deadlock_finding(&self, d: &Detector, parts: &[&ScanPart], c: u32) -> Finding {
        let members: Vec<(PortId, u8)> = (0..d.nodes.len())
            .filter(|&i| d.scc[i] == c)
            .map(|i| d.nodes[i])
            .collect();
        let start = (0..d.nodes.len() as u32)
            .filter(|&i| d.scc[i as usize] == c)
            .min_by_key(|&i| d.nodes[i as usize])
            .unwrap_or(0);
        let cycle = d
            .cycle_through(start)
            .into_iter()
            .map(|i| d.nodes[i as usize])
            .collect();
        let (flows, flows_total) = Self::stuck_flows(d, parts, (0..d.nodes.len()).filter(|&i| d.scc[i] == c));
        Finding {
            kind: Kind::Deadlock,
            cycle,
            members,
            sink: None,
            formed_at: Instant::ZERO,
            detected_at: Instant::ZERO,
            resolved_at: None,
            flows,
            flows_total,
        }
    }

    fn storm_finding(&self, d: &Detector, parts: &[&ScanPart], sink_node: u32, host: NodeId) -> Finding {
        // every blocked queue with a path to the sink queue (reverse search)
        let n = d.nodes.len();
        let mut seen = vec![false; n];
        seen[sink_node as usize] = true;
        let mut work = vec![sink_node];
        while let Some(v) = work.pop() {
            for &(u, w) in &d.edges {
                if w == v && !seen[u as usize] {
                    seen[u as usize] = true;
                    work.push(u);
                }
            }
        }
        let members: Vec<(PortId, u8)> = (0..n).filter(|&i| seen[i]).map(|i| d.nodes[i]).collect();
        let (flows, flows_total) = Self::stuck_flows(d, parts, (0..n).filter(|&i| seen[i]));
        Finding {
            kind: Kind::Storm,
            cycle: vec![d.nodes[sink_node as usize]],
            members,
            sink: Some(host),
            formed_at: Instant::ZERO,
            detected_at: Instant::ZERO,
            resolved_at: None,
            flows,
            flows_total,
        }
    }

    /// Whether queue (`p`, `q`) has been blocked since at least `t` (the detector's ground
    /// truth, to within a scan), if the detector runs.
    pub(crate) fn blocked_since(&self, p: PortId, q: u8) -> Option<Instant> {
        let d = self.patho.detector.as_deref()?;
        let s = d.blocked_since[p as usize][q as usize & 7];
        (s != Instant::MAX).then_some(s)
    }
}
