//! A simulator that owns part of a fabric (issue 22): it handles only the events of its own
//! nodes, sends the frames that leave on a cut link as messages, and takes in the frames that
//! arrive on one; the parts of one run merge back into one simulator for the report.
//!
//! Every partition is built from the whole configuration (the same ids, routes, flows and
//! random streams everywhere) and discards, unhandled, the events of nodes it does not own that
//! the build scheduled; the workloads' arrival processes run in every partition (so that flow
//! ids agree) and a flow's frames only in its source's. The order of simultaneous events is
//! the same as in one simulator (`order.rs`): a message carries the tie its arrival was
//! scheduled with, and one partition's messages are taken in the order it sent them.
//!
//! Supported: flows and workloads, RoCEv2 QPs under every congestion control (each end's
//! state and timer is its host's; HPCC's INT field and TIMELY's timestamp cross a cut link
//! in the message beside the frame), PAUSE and PFC, shared buffers, ETS, ECN marking.
//! Refused (for now): DCBX (its LLDPDUs' bytes cross the link beside the frame), QCN, link
//! bit errors, the pathology parts.

use lossless_proto::units::Instant;

use crate::config::SimConfig;
use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::{NoObserver, Observer, WireFrame};
pub use crate::sim::features::hpcc::Carried;
use crate::sim::{BuildError, Event, Simulator, order};
use crate::stats::{FlowStats, Totals};

/// A frame that left on a cut link: it arrives at `to` (from `from`) at `at`.
#[derive(Clone, Copy, Debug)]
pub struct Message {
    /// The receiving port.
    pub to: PortId,
    /// The sending port.
    pub from: PortId,
    /// When its last bit arrives.
    pub at: Instant,
    /// The tie its arrival was scheduled with (`order.rs`).
    pub tie: u64,
    /// The frame.
    pub frame: WireFrame,
    /// What it carries beside the frame for its QP's congestion control (HPCC's INT field,
    /// TIMELY's timestamp).
    pub carried: Carried,
}

/// What a partition knows of the split.
#[derive(Debug)]
pub(crate) struct PartState {
    /// This partition's number.
    pub(crate) me: u16,
    /// Partition of each node.
    pub(crate) of_node: Vec<u16>,
    /// Frames sent on cut links since the last [`Simulator::take_outbox`].
    pub(crate) outbox: Vec<Message>,
    /// Events popped but not handled here (another partition's nodes).
    pub(crate) skipped: u64,
    /// Events handled here that every partition handles (the workloads' arrivals), when this
    /// is not partition 0: not counted in the merged run.
    pub(crate) replicated: u64,
}

/// Why a fabric cannot be split.
#[derive(Debug, thiserror::Error)]
pub enum PartitionError {
    /// The build failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A feature the partitioned engine does not have yet.
    #[error("the partitioned engine does not support {0} yet; run it on one thread")]
    Unsupported(&'static str),
    /// A partition map that does not fit the fabric.
    #[error("the partition map has {found} entries for {nodes} nodes")]
    Map {
        /// Entries given.
        found: usize,
        /// Nodes of the fabric.
        nodes: usize,
    },
}

/// The first feature of `config` that the partitioned engine does not support, if any.
pub fn unsupported(config: &SimConfig) -> Option<&'static str> {
    use crate::config::NodeKind;
    if config.nodes.iter().any(|n| n.dcbx.is_some()) {
        return Some("DCBX");
    }
    if config.links.iter().any(|l| l.ber > 0.0) {
        return Some("link bit errors");
    }
    if config
        .nodes
        .iter()
        .any(|n| matches!(&n.kind, NodeKind::Switch(s) if s.qcn.is_some()))
    {
        return Some("QCN");
    }
    let p = &config.pathology;
    if !p.hosts.is_empty() || !p.pfcwd.is_empty() || !p.routes.is_empty() || !p.events.is_empty() {
        return Some("receiver stalls, pfcwd, static routes or topology events");
    }
    if p.deadlock.is_some() || p.victims.is_some() {
        return Some("the deadlock detector or victim flows");
    }
    None
}

impl<Q: EventQueue<Event>> Simulator<NoObserver, Q> {
    /// Partition `me` of `config` split by `of_node` (each node's partition), on `queue`.
    pub fn partition(
        config: SimConfig,
        of_node: Vec<u16>,
        me: u16,
        queue: Q,
    ) -> Result<Self, PartitionError> {
        Simulator::partition_observed(config, of_node, me, NoObserver, queue)
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Partition `me` of `config` split by `of_node`, on `queue`, observed by `observer`
    /// (which sees only this partition's events).
    pub fn partition_observed(
        config: SimConfig,
        of_node: Vec<u16>,
        me: u16,
        observer: O,
        queue: Q,
    ) -> Result<Self, PartitionError> {
        if let Some(what) = unsupported(&config) {
            return Err(PartitionError::Unsupported(what));
        }
        if of_node.len() != config.nodes.len() {
            return Err(PartitionError::Map {
                found: of_node.len(),
                nodes: config.nodes.len(),
            });
        }
        let mut sim = Simulator::build(config, observer, queue)?;
        sim.part = Some(Box::new(PartState {
            me,
            of_node,
            outbox: Vec::new(),
            skipped: 0,
            replicated: 0,
        }));
        Ok(sim)
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Whether this simulator handles what `scheduler` (the node of the event about to be
    /// handled, `order.rs`) does; counts it as skipped if not.
    #[inline(always)]
    pub(in crate::sim) fn here(&mut self) -> bool {
        let Some(ps) = self.part.as_deref_mut() else {
            return true;
        };
        let mine = match order::scheduler_node(self.scheduler) {
            Some(n) => ps.of_node[n as usize] == ps.me,
            None if self.scheduler == order::WORKLOADS => {
                if ps.me != 0 {
                    ps.replicated += 1;
                }
                true
            }
            None => ps.me == 0,
        };
        if !mine {
            ps.skipped += 1;
        }
        mine
    }

    /// Puts `w`, which `p` started sending, on the wire: to arrive at the peer at `arrive`, in
    /// this simulator or, across a cut link, as a message.
    #[inline(always)]
    pub(in crate::sim) fn put_on_wire(&mut self, p: PortId, w: WireFrame, arrive: Instant) {
        let peer = self.ports[p as usize].peer;
        if let Some(ps) = self.part.as_deref_mut()
            && ps.of_node[self.ports[peer as usize].node as usize] != ps.me
        {
            let tie = order::tie(self.now, arrive, self.scheduler);
            let carried = match &w {
                WireFrame::Data(f) if self.flows[f.flow as usize].qp.is_some() => self.telemetry_out(f),
                _ => Carried::None,
            };
            let ps = self.part.as_deref_mut().expect("checked above");
            ps.outbox.push(Message {
                to: peer,
                from: p,
                at: arrive,
                tie,
                frame: w,
                carried,
            });
            return;
        }
        self.ports[p as usize].inflight.push_back(w);
        order::schedule!(self, arrive, Event::Arrive(peer));
    }

    /// The frames sent on cut links since the last call, in the order they were sent.
    pub fn take_outbox(&mut self, into: &mut Vec<Message>) {
        if let Some(ps) = self.part.as_deref_mut() {
            into.append(&mut ps.outbox);
        }
    }

    /// Takes in a frame that another partition sent on a cut link to one of this one's ports.
    pub fn take_in(&mut self, m: &Message) {
        if let (WireFrame::Data(f), false) = (&m.frame, m.carried == Carried::None) {
            let holds_sender = self
                .part
                .as_deref()
                .is_none_or(|ps| ps.of_node[self.flows[f.flow as usize].spec.src as usize] == ps.me);
            self.telemetry_in(f, &m.carried, holds_sender);
        }
        self.ports[m.from as usize].inflight.push_back(m.frame);
        self.queue.push_tied(m.at, m.tie, Event::Arrive(m.to));
    }

    /// The node port `p` belongs to.
    pub fn node_of_port(&self, p: PortId) -> crate::frame::NodeId {
        self.ports[p as usize].node
    }

    /// When the next pending event is due.
    pub fn next_event_at(&self) -> Option<Instant> {
        self.queue.peek_time()
    }

    /// The partitions of one run (in partition order, all run to the same end, every
    /// message delivered) as one simulator: each node and port from its owner, the frames on
    /// a cut link from the receiver's side, flows' counters summed and their times joined.
    pub fn merge(mut parts: Vec<Self>) -> Self {
        let of_node: Vec<u16> = parts[0]
            .part
            .as_ref()
            .map_or_else(Vec::new, |p| p.of_node.clone());
        let owner_of_port = |sim: &Self, p: usize| -> usize {
            let n = sim.ports[p].node as usize;
            of_node.get(n).copied().unwrap_or(0) as usize
        };
        let nports = parts[0].ports.len();
        // the frames on the wire towards a port are in its receiver's copy of the sender
        let mut wire: Vec<Option<std::collections::VecDeque<WireFrame>>> = vec![None; nports];
        for (p, slot) in wire.iter_mut().enumerate() {
            let peer = parts[0].ports[p].peer as usize;
            let rx = owner_of_port(&parts[0], peer);
            if rx != owner_of_port(&parts[0], p) {
                *slot = Some(std::mem::take(&mut parts[rx].ports[p].inflight));
            }
        }
        // a QP's receiver side is its destination's partition's
        let mut receivers: Vec<Option<crate::sim::features::qp::ReceiverSide>> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            receivers.resize_with(part.flows.len(), || None);
            for (f, fs) in part.flows.iter().enumerate() {
                if of_node.get(fs.spec.dst as usize).copied().unwrap_or(0) as usize == i
                    && let Some(qp) = fs.qp.as_deref()
                {
                    receivers[f] = Some(qp.receiver_side());
                }
            }
        }
        let mut merged = parts.remove(0);
        let mut events = merged.events - merged.part.as_ref().map_or(0, |p| p.skipped + p.replicated);
        let mut flows: Vec<FlowStats> = merged.flows.iter().map(|f| f.stats).collect();
        for (i, mut other) in parts.into_iter().enumerate() {
            let i = i + 1;
            events += other.events - other.part.as_ref().map_or(0, |p| p.skipped + p.replicated);
            add_totals(&mut merged.totals, &other.totals);
            for ((mine, theirs), &owner) in merged.nodes.iter_mut().zip(&mut other.nodes).zip(&of_node) {
                if owner as usize == i {
                    std::mem::swap(mine, theirs);
                }
            }
            for p in 0..nports {
                if owner_of_port(&merged, p) == i {
                    std::mem::swap(&mut merged.ports[p], &mut other.ports[p]);
                }
            }
            // (workloads create the same flows in every partition)
            for (f, m) in flows.iter_mut().enumerate() {
                add_flow(m, &other.flows[f].stats);
                if of_node[other.flows[f].spec.src as usize] as usize == i {
                    std::mem::swap(&mut merged.flows[f], &mut other.flows[f]);
                }
            }
            if merged.fault.is_none() {
                merged.fault = other.fault.take();
            }
        }
        for (f, s) in flows.into_iter().enumerate() {
            merged.flows[f].stats = s;
        }
        for (fs, r) in merged.flows.iter_mut().zip(receivers) {
            if let (Some(qp), Some(r)) = (fs.qp.as_deref_mut(), r) {
                qp.set_receiver_side(r);
            }
        }
        for (p, w) in wire.into_iter().enumerate() {
            if let Some(w) = w {
                merged.ports[p].inflight = w;
            }
        }
        merged.events = events;
        merged.part = None;
        merged
    }
}

/// `a += b`, counter by counter.
pub(super) fn add_totals(a: &mut Totals, b: &Totals) {
    a.injected += b.injected;
    a.delivered += b.delivered;
    a.misdelivered += b.misdelivered;
    for (x, y) in a.dropped.iter_mut().zip(&b.dropped) {
        *x += y;
    }
}

/// A flow's counters from two partitions: sums, and the earliest first and latest last times.
pub(super) fn add_flow(a: &mut FlowStats, b: &FlowStats) {
    a.sent_frames += b.sent_frames;
    a.sent_bytes += b.sent_bytes;
    a.delivered_frames += b.delivered_frames;
    a.delivered_bytes += b.delivered_bytes;
    a.dropped_frames += b.dropped_frames;
    a.first_sent = min_some(a.first_sent, b.first_sent);
    a.last_delivery = a.last_delivery.max(b.last_delivery);
    a.completed = a.completed.max(b.completed);
    a.transport_delivered_bytes += b.transport_delivered_bytes;
    a.dropped_control_frames += b.dropped_control_frames;
    a.cnms_unanswered += b.cnms_unanswered;
}

fn min_some(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}
