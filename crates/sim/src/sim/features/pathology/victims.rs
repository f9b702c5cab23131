//! Victim accounting (`[victims]`): per flow and per hop of its path, the time the hop's
//! queue was paused by PFC while it held a frame of the flow, and whether the congestion
//! behind that pause was on the flow's own path.
//!
//! Cost: a flow's hops are slots in one flat array, indexed by the frame's hop counter, so a
//! frame entering or leaving a queue touches one slot; the pause clock (the port engine's
//! running paused-time total for the priority) is read only when the flow's first frame
//! enters the queue or its last one leaves. Nothing walks a path per frame and nothing
//! allocates per event (a flow's slots are made when the flow is, its path found once by
//! the same routing the frames take).
//!
//! The cause of a pause: when a switch raises XOFF for (ingress port, priority), the egress
//! queue of that switch holding most of the ingress's bytes at that priority is recorded
//! (one scan of the switch's queues of that priority, per XOFF raised); a host's own request
//! records its receiver. A hop's blocked time is **off path** when the recorded cause is not
//! the flow's next hop (its frames are held for congestion of frames going elsewhere:
//! head-of-line blocking); a flow blocked off its path for at least `min_blocked_ratio` of
//! its active time is a **victim**, paused by the ports that sent those pauses.

use lossless_proto::units::{Duration, Instant};

use crate::config::pathology::VictimConfig;
use crate::event::EventQueue;
use crate::frame::{FlowId, Frame, NO_PORT, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::{Event, Node, Simulator};

/// The cause recorded for a host's own pause request: its receiver.
pub(crate) const RECEIVER: PortId = u32::MAX - 1;

/// One hop of one flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Slot {
    /// The egress port of this hop (the source NIC's port at hop 0).
    pub(crate) port: PortId,
    /// Frames of the flow in that queue now.
    pub(crate) present: u32,
    /// The pause clock when the flow's first frame entered.
    pub(crate) clock_at: Duration,
    /// Time the queue was paused while holding a frame of the flow.
    pub(crate) blocked: Duration,
    /// Of that, time whose pause was caused off the flow's path.
    pub(crate) off_path: Duration,
    /// The egress that caused the last off-path pause (at the switch behind this hop).
    pub(crate) off_cause: PortId,
}

impl Slot {
    /// The egress that caused the last off-path pause of this hop, when one did (`None`
    /// before any, or when the pause was a host receiver's own).
    pub(crate) fn off_path_cause(&self) -> Option<PortId> {
        (self.off_cause != NO_PORT && self.off_cause != RECEIVER).then_some(self.off_cause)
    }

    fn new(port: PortId) -> Self {
        Slot {
            port,
            present: 0,
            clock_at: Duration::ZERO,
            blocked: Duration::ZERO,
            off_path: Duration::ZERO,
            off_cause: NO_PORT,
        }
    }
}

/// Victim accounting state.
pub(crate) struct Victims {
    pub(crate) cfg: VictimConfig,
    /// Per flow: first slot and number of hops.
    pub(crate) flows: Vec<(u32, u32)>,
    pub(crate) slots: Vec<Slot>,
    /// Per port x, per priority: the egress (at x's node) whose backlog from x raised x's
    /// latest XOFF, [`RECEIVER`] for a host, [`NO_PORT`] before any.
    pub(crate) cause: Vec<[PortId; 8]>,
    /// A split fabric: blocked time of slots whose pauser (the next hop's ingress) is another
    /// partition's port, classified when the partitions merge ([`Victims::settle`]).
    pub(crate) deferred: Vec<Deferred>,
    /// A split fabric: each change of the cause at a port whose peer is another partition's.
    pub(crate) history: Vec<CauseChange>,
}

/// Blocked time whose cause is recorded in another partition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Deferred {
    /// The event that ended the blocked interval: time and tie (`order.rs`).
    pub(crate) at: (Instant, u64),
    /// The slot blocked.
    pub(crate) slot: u32,
    /// The port whose XOFF blocked it (the next hop's ingress).
    pub(crate) pauser: PortId,
    /// The slot's flow.
    pub(crate) flow: FlowId,
    /// The priority paused.
    pub(crate) prio: u8,
    /// The blocked time.
    pub(crate) delta: Duration,
}

/// The cause recorded at (`port`, `prio`) from the event at `at` (time and tie) on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CauseChange {
    /// When: time and tie.
    pub(crate) at: (Instant, u64),
    /// The port.
    pub(crate) port: PortId,
    /// The priority.
    pub(crate) prio: u8,
    /// The cause recorded.
    pub(crate) cause: PortId,
}

impl Victims {
    pub(crate) fn new(cfg: VictimConfig, ports: usize) -> Self {
        Victims {
            cfg,
            flows: Vec::new(),
            slots: Vec::new(),
            cause: vec![[NO_PORT; 8]; ports],
            deferred: Vec::new(),
            history: Vec::new(),
        }
    }

    /// Forgets the deferred blocked time of the slots in `range` (they start afresh).
    fn forget(&mut self, range: std::ops::Range<u32>) {
        if !self.deferred.is_empty() {
            self.deferred.retain(|e| !range.contains(&e.slot));
        }
    }

    /// Classifies the blocked time `parts` deferred (in partition order, each part's in the
    /// order its events ran) with the cause their pausers' partitions recorded at the time:
    /// the classification one simulator made when the interval ended.
    pub(crate) fn settle(&mut self, parts: &[(Vec<Deferred>, Vec<CauseChange>)]) {
        // per (port, priority): when (time, tie) each cause was recorded, in order
        type Causes = Vec<((Instant, u64), PortId)>;
        let mut history: std::collections::HashMap<(PortId, u8), Causes> = std::collections::HashMap::new();
        for (_, h) in parts {
            for c in h {
                history.entry((c.port, c.prio)).or_default().push((c.at, c.cause));
            }
        }
        for (deferred, _) in parts {
            for e in deferred {
                let cause = history.get(&(e.pauser, e.prio)).map_or(NO_PORT, |h| {
                    let i = h.partition_point(|&(at, _)| at < e.at);
                    if i == 0 { NO_PORT } else { h[i - 1].1 }
                });
                classify(self, e.slot as usize, cause, e.flow, e.delta);
            }
        }
    }

    /// The slot of `frame` at port `p`, if the flow's path has it there.
    #[inline]
    fn slot(&mut self, p: PortId, frame: &Frame) -> Option<usize> {
        let &(start, len) = self.flows.get(frame.flow as usize)?;
        let h = u32::from(frame.hops);
        if h >= len {
            return None;
        }
        let i = (start + h) as usize;
        (self.slots[i].port == p).then_some(i)
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The ports flow `f`'s frames leave by, from its source NIC to the last switch.
    fn flow_path(&self, f: FlowId) -> Vec<PortId> {
        let spec = &self.flows[f as usize].spec;
        let first = self.host_port(spec.src);
        let mut path = vec![first];
        let mut node = self.ports[self.ports[first as usize].peer as usize].node;
        while matches!(self.nodes[node as usize], Node::Switch(_))
            && path.len() <= usize::from(self.patho.hop_limit)
        {
            let Some(out) = self.route_of(node, f, spec.dst) else {
                break;
            };
            path.push(out);
            node = self.ports[self.ports[out as usize].peer as usize].node;
        }
        path
    }

    /// Gives flow `f` its slots (a new flow, or a path that changed).
    pub(in crate::sim::features) fn victims_add_flow(&mut self, f: FlowId) {
        if self.patho.victims.is_none() {
            return;
        }
        let path = self.flow_path(f);
        let Some(v) = self.patho.victims.as_deref_mut() else {
            return;
        };
        let fi = f as usize;
        if v.flows.len() <= fi {
            v.flows.resize(fi + 1, (0, 0));
        }
        let (start, len) = v.flows[fi];
        let same = len as usize == path.len()
            && path
                .iter()
                .enumerate()
                .all(|(i, &p)| v.slots[start as usize + i].port == p);
        if same {
            return;
        }
        if len as usize == path.len() {
            // the same number of hops: changed ports start afresh (frames still queued on
            // the old path are not counted there)
            for (i, &p) in path.iter().enumerate() {
                let k = start + i as u32;
                if v.slots[k as usize].port != p {
                    v.slots[k as usize] = Slot::new(p);
                    v.forget(k..k + 1);
                }
            }
            return;
        }
        v.forget(start..start + len);
        let start = v.slots.len() as u32;
        v.slots.extend(path.iter().map(|&p| Slot::new(p)));
        v.flows[fi] = (start, path.len() as u32);
    }

    /// Every flow's path again (routes changed).
    pub(in crate::sim) fn victims_paths_changed(&mut self) {
        if self.patho.victims.is_none() {
            return;
        }
        for f in 0..self.flows.len() {
            self.victims_add_flow(f as FlowId);
        }
    }

    /// A frame joined the queue of port `p`.
    #[inline]
    pub(in crate::sim::features) fn victims_enqueued(&mut self, p: PortId, frame: &Frame) {
        let Some(v) = self.patho.victims.as_deref_mut() else {
            return;
        };
        let Some(i) = v.slot(p, frame) else {
            return;
        };
        let s = &mut v.slots[i];
        s.present += 1;
        if s.present == 1 {
            s.clock_at = self.ports[p as usize]
                .mac
                .rx_pause_duration(self.now, frame.priority);
        }
    }

    /// A frame left the queue of port `p` (sent or discarded).
    #[inline]
    pub(in crate::sim::features) fn victims_dequeued(&mut self, p: PortId, frame: &Frame) {
        let pauser = self.ports[p as usize].peer;
        // a split fabric: the cause at a pauser of another partition is known at the merge
        let defer = self.is_partition() && !self.owns_port(pauser);
        let tie = self.tie;
        let Some(v) = self.patho.victims.as_deref_mut() else {
            return;
        };
        let Some(i) = v.slot(p, frame) else {
            return;
        };
        let s = &mut v.slots[i];
        if s.present == 0 {
            return;
        }
        s.present -= 1;
        if s.present > 0 {
            return;
        }
        let port = &self.ports[p as usize];
        let delta = port
            .mac
            .rx_pause_duration(self.now, frame.priority)
            .saturating_sub(s.clock_at);
        if delta == Duration::ZERO {
            return;
        }
        if defer {
            v.deferred.push(Deferred {
                at: (self.now, tie),
                slot: i as u32,
                pauser,
                flow: frame.flow,
                prio: frame.priority,
                delta,
            });
        } else {
            let cause = v.cause[pauser as usize][frame.priority as usize & 7];
            classify(v, i, cause, frame.flow, delta);
        }
    }

    /// Records `cause` at (`x`, `prio`); in a split fabric, with the event's time and tie when
    /// `x`'s peer, which reads it, is another partition's.
    fn victims_set_cause(&mut self, x: PortId, prio: u8, cause: PortId) {
        let keep = self.is_partition() && !self.owns_port(self.ports[x as usize].peer);
        let at = (self.now, self.tie);
        if let Some(v) = self.patho.victims.as_deref_mut() {
            v.cause[x as usize][prio as usize & 7] = cause;
            if keep {
                v.history.push(CauseChange {
                    at,
                    port: x,
                    prio: prio & 7,
                    cause,
                });
            }
        }
    }

    /// Switch `node` raised XOFF for (`x`, `prio`): records the egress holding most of `x`'s
    /// bytes at `prio` as the cause.
    pub(in crate::sim::features) fn victims_xoff(&mut self, node: NodeId, x: PortId, prio: u8) {
        if self.patho.victims.is_none() {
            return;
        }
        let Node::Switch(sw) = &self.nodes[node as usize] else {
            return;
        };
        let mut best = (0u64, NO_PORT);
        for &o in &sw.ports {
            let port = &self.ports[o as usize];
            if port.queues[prio as usize].bytes <= best.0 {
                continue;
            }
            let bytes: u64 = port.queues[prio as usize]
                .frames
                .iter()
                .filter(|f| f.ingress == x)
                .map(|f| f.len as u64)
                .sum();
            if bytes > best.0 {
                best = (bytes, o);
            }
        }
        self.victims_set_cause(x, prio, best.1);
    }

    /// Host NIC port `p` raised its own request: its receiver is the cause.
    pub(in crate::sim::features) fn victims_receiver_xoff(&mut self, p: PortId) {
        if self.patho.victims.is_some() {
            for prio in 0..8 {
                self.victims_set_cause(p, prio, RECEIVER);
            }
        }
    }

    /// The slots with the blocked time of intervals still open at `now` added (for a
    /// report; the running state is not changed).
    pub(crate) fn victims_settled(&self) -> Option<Vec<Slot>> {
        let v = self.patho.victims.as_deref()?;
        let mut view = Victims {
            cfg: v.cfg,
            flows: v.flows.clone(),
            slots: v.slots.clone(),
            cause: v.cause.clone(),
            deferred: Vec::new(),
            history: Vec::new(),
        };
        for (f, &(start, len)) in v.flows.iter().enumerate() {
            let prio = self.flows[f].spec.priority;
            for h in 0..len {
                let i = (start + h) as usize;
                let s = view.slots[i];
                if s.present == 0 {
                    continue;
                }
                let port = &self.ports[s.port as usize];
                let delta = self.rx_paused(s.port, prio).saturating_sub(s.clock_at);
                if delta > Duration::ZERO {
                    let cause = view.cause[port.peer as usize][prio as usize & 7];
                    classify(&mut view, i, cause, f as FlowId, delta);
                }
            }
        }
        Some(view.slots)
    }
}

/// Adds `delta` of blocked time to slot `i` (of `flow`, paused by a port whose recorded cause
/// was `cause`): off path when that cause is not the flow's next hop.
fn classify(v: &mut Victims, i: usize, cause: PortId, flow: FlowId, delta: Duration) {
    let (start, len) = v.flows[flow as usize];
    let last = i + 1 >= (start + len) as usize;
    let next = if last { RECEIVER } else { v.slots[i + 1].port };
    let s = &mut v.slots[i];
    s.blocked += delta;
    if cause != NO_PORT && cause != next {
        s.off_path += delta;
        s.off_cause = cause;
    }
}
