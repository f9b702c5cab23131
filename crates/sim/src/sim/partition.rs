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
//! What only one partition reads is built only there: a flow's QP in the partitions of its
//! two ends (everywhere under HPCC, PINT and TIMELY, whose packets' field the switches on the
//! path write into each partition's copy of the QP's rings: `build::holds_qp`), a switch
//! port's ECN markers and QCN congestion points in its switch's (`build::build_ports`), a
//! switch's shared buffer with its ports in its switch's (`build::build_nodes`; the others
//! keep one without ports). The rest (ports, nodes, routes) is still the whole fabric's in
//! every partition (docs/benchmarks.md, "Memory per partition").
//!
//! Supported: flows and workloads, RoCEv2 QPs under every congestion control (each end's
//! state and timer is its host's; HPCC's INT field and TIMELY's timestamp cross a cut link
//! in the message beside the frame), PAUSE and PFC, shared buffers, ETS, ECN marking.
//! The pathology parts too: receiver stalls and storm prevention (their host's), pfcwd (its
//! switch's), static routes and scripted topology events (every partition applies them to
//! the whole fabric's routes and acts on its own ports), the deadlock detector (every
//! partition takes its ports' part of a scan at the same point of the order of events, and
//! builds the graph from all of them: [`ScanPart`]) and victim accounting (blocked time whose
//! cause another partition records is classified at the merge), QCN and link bit errors
//! (their ports'), DCBX (each port's agent is its node's; an LLDPDU's bytes cross a cut link in
//! the message beside its frame, [`Carried::Lldp`], into the receiver's copy of the sending
//! port's wire). Over MPI ranks the same: a scan's parts are gathered from every rank, and
//! each partition's digest carries the feature state it owns (`exchange_features.rs`, DCBX
//! ports' reports included). `--ns3`'s queue monitor: each part's observer samples its own
//! ports (`ns3::QlenPart`). Refused by the drivers, not here: the trace outputs.

use lossless_proto::units::Instant;

use crate::config::SimConfig;
use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::{NoObserver, Observer, WireFrame};
pub use crate::sim::features::hpcc::Carried;
pub use crate::sim::features::pathology::deadlock::ScanPart;
use crate::sim::{BuildError, Event, Simulator, order};
use crate::stats::{FlowStats, Totals};

/// A frame that left on a cut link: it arrives at `to` (from `to`'s peer) at `at`. One cache
/// line, as partitions on different threads hand it over; what it carries beside the frame
/// (rare: HPCC's and TIMELY's fields, LLDPDUs' bytes) waits in its [`Mail`]'s extras.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
pub struct Message {
    /// When its last bit arrives.
    pub at: Instant,
    /// The tie its arrival was scheduled with (`order.rs`).
    pub tie: u64,
    /// The frame.
    pub frame: WireFrame,
    /// The receiving port.
    pub to: PortId,
    /// The index in its mail's [`Mail::extras`] of what it carries beside the frame
    /// ([`NO_EXTRA`]: nothing).
    pub extra: u32,
}

const _: () = assert!(std::mem::size_of::<Message>() == 64);

/// [`Message::extra`] of a message that carries nothing beside its frame.
pub const NO_EXTRA: u32 = u32::MAX;

/// What a message carries beside its frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extra {
    /// For its QP's congestion control (HPCC's INT field, TIMELY's timestamp), or an
    /// LLDPDU's bytes.
    pub carried: Carried,
    /// Its place among the events its sender's partition scheduled: twice the pushes of that
    /// partition's event queue before it (a local event queued as push `s` has `2s + 1`), so
    /// that the trace outputs order it among the events of its instant and tie as one
    /// simulator does (`trace::split`); 0 where the queue does not number its pushes (the
    /// runs without trace outputs).
    pub origin: u64,
}

/// The frames one partition sent another, in the order sent, with what they carry beside.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mail {
    /// The messages, in the order sent.
    pub messages: Vec<Message>,
    /// What some of them carry beside the frame, at their [`Message::extra`].
    pub extras: Vec<Extra>,
}

impl Mail {
    /// Appends the frame `frame` for port `to`, arriving at `at` with `tie`, carrying
    /// `carried` beside it, sent as `origin` (an extra only where either says something).
    #[inline(always)]
    pub fn push(
        &mut self,
        to: PortId,
        at: Instant,
        tie: u64,
        frame: WireFrame,
        carried: Carried,
        origin: u64,
    ) {
        let extra = if matches!(carried, Carried::None) && origin == 0 {
            NO_EXTRA
        } else {
            self.push_extra(Extra { carried, origin })
        };
        self.messages.push(Message {
            at,
            tie,
            frame,
            to,
            extra,
        });
    }

    /// Stores `x` in the extras: its index.
    #[cold]
    #[inline(never)]
    fn push_extra(&mut self, x: Extra) -> u32 {
        // (an index of 2^32 − 1 extras would need 256 GiB of them)
        let i = u32::try_from(self.extras.len()).unwrap_or(NO_EXTRA - 1);
        self.extras.push(x);
        i
    }

    /// What message `m` of this mail carries beside its frame, if anything.
    #[inline(always)]
    pub fn extra(&self, m: &Message) -> Option<&Extra> {
        if m.extra == NO_EXTRA {
            None
        } else {
            self.extras.get(m.extra as usize)
        }
    }

    /// Whether it holds no message.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The messages it holds.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Empties it, keeping its allocations.
    pub fn clear(&mut self) {
        self.messages.clear();
        self.extras.clear();
    }

    /// Moves `other`'s messages behind this one's (their extras' indices moved with them).
    pub fn append(&mut self, other: &mut Mail) {
        let base = self.extras.len() as u32;
        let start = self.messages.len();
        self.messages.append(&mut other.messages);
        if base != 0 {
            for m in &mut self.messages[start..] {
                if m.extra != NO_EXTRA {
                    m.extra += base;
                }
            }
        }
        self.extras.append(&mut other.extras);
    }
}

/// What a partition knows of the split.
#[derive(Debug)]
pub(crate) struct PartState {
    /// This partition's number.
    pub(crate) me: u16,
    /// Partition of each node.
    pub(crate) of_node: Vec<u16>,
    /// Partition of each port's node, by port: whether a frame's link is cut is read here,
    /// in 2 bytes a port, not in the receiving port's first line (cold when the frame starts).
    pub(crate) of_port: Box<[u16]>,
    /// Frames sent on cut links since they were last taken, by receiving partition, each in
    /// the order sent ([`Simulator::take_outbox`], [`Simulator::hand_over`]).
    pub(crate) outbox: Vec<Mail>,
    /// The receiving partitions with frames in `outbox`, in the order of their first frame.
    pub(crate) sent_to: Vec<u16>,
    /// Events popped but not handled here (another partition's nodes).
    pub(crate) skipped: u64,
    /// Events handled here that every partition handles (the workloads' arrivals, the
    /// fabric-wide timers), when this is not partition 0: not counted in the merged run.
    pub(crate) replicated: u64,
    /// A fabric-wide timer (its [`Event::Pathology`] payload) popped and held: the window
    /// ends before it, and every partition handles it once the frames sent before it are in
    /// ([`Simulator::handle_held`]).
    pub(crate) held: Option<u32>,
    /// This partition's part of a deadlock scan just made, for the driver to gather.
    pub(crate) scan: bool,
    /// Whether some flow's congestion control stamps its packets (HPCC, HPCC-PINT, TIMELY):
    /// only then may a data frame carry a field across a cut link ([`Carried`]).
    pub(crate) stamps: bool,
}

impl PartState {
    /// The outbox for partition `to`, noted in `sent_to` if it was empty.
    #[inline(always)]
    fn outbox_for(&mut self, to: u16) -> &mut Mail {
        let v = &mut self.outbox[usize::from(to)];
        if v.is_empty() {
            self.sent_to.push(to);
        }
        v
    }
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

/// The first feature of `config` that the partitioned engine does not support, if any (none
/// today: every feature of a configuration splits).
pub fn unsupported(_config: &SimConfig) -> Option<&'static str> {
    None
}

impl<Q: EventQueue<Event>> Simulator<NoObserver, Q> {
    /// Partition `me` of `config` split by `of_node` (each node's partition), on `queue`.
    pub fn partition(
        config: impl Into<std::sync::Arc<SimConfig>>,
        of_node: Vec<u16>,
        me: u16,
        queue: Q,
    ) -> Result<Self, PartitionError> {
        Simulator::partition_observed(config, of_node, me, NoObserver, queue)
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Partition `me` of `config` split by `of_node`, on `queue`, observed by `observer`
    /// (which sees only this partition's events). `config` may be an `Arc` that a process's
    /// partitions share: they only read it.
    pub fn partition_observed(
        config: impl Into<std::sync::Arc<SimConfig>>,
        of_node: Vec<u16>,
        me: u16,
        observer: O,
        queue: Q,
    ) -> Result<Self, PartitionError> {
        let config: std::sync::Arc<SimConfig> = config.into();
        if let Some(what) = unsupported(&config) {
            return Err(PartitionError::Unsupported(what));
        }
        if of_node.len() != config.nodes.len() {
            return Err(PartitionError::Map {
                found: of_node.len(),
                nodes: config.nodes.len(),
            });
        }
        let parts = of_node.iter().max().map_or(1, |&m| usize::from(m) + 1);
        let stamps = (config.flows.iter().map(|f| &f.transport))
            .chain(config.workloads.iter().map(|w| &w.transport))
            .any(|t| {
                t.as_deref()
                    .is_some_and(|t| crate::sim::features::qp::stamped(&t.cc))
            });
        // (a link's ports are 2·i and 2·i + 1, `build.rs`; a node out of range is the
        // build's to refuse)
        let of_port = (config.links.iter())
            .flat_map(|l| [l.a, l.b])
            .map(|n| of_node.get(n as usize).copied().unwrap_or(me))
            .collect();
        let ps = Box::new(PartState {
            me,
            of_node,
            of_port,
            outbox: (0..parts).map(|_| Mail::default()).collect(),
            sent_to: Vec::new(),
            skipped: 0,
            replicated: 0,
            held: None,
            scan: false,
            stamps,
        });
        let mut sim = Simulator::build_part(config, observer, queue, Some(&ps))?;
        sim.part = Some(ps);
        Ok(sim)
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Whether this simulator is a partition of a split fabric.
    #[inline(always)]
    pub(in crate::sim) fn is_partition(&self) -> bool {
        self.part.is_some()
    }

    /// Whether this simulator owns node `n` (a whole fabric owns every node).
    #[inline]
    pub(in crate::sim) fn owns_node(&self, n: crate::frame::NodeId) -> bool {
        self.part
            .as_deref()
            .is_none_or(|ps| ps.of_node[n as usize] == ps.me)
    }

    /// Whether this simulator owns port `p` (its node).
    #[inline]
    pub(in crate::sim) fn owns_port(&self, p: PortId) -> bool {
        self.owns_node(self.ports[p as usize].node)
    }

    /// A fabric-wide timer (the deadlock detector's scan, a scripted topology event) came
    /// due in a partition: it is held, and the window ends before it (`run_until` returns),
    /// so that the frames other partitions sent before it are taken in first. Every partition
    /// holds the same timer at the same point of the order of events.
    #[cold]
    pub(in crate::sim) fn hold_fabric_timer(&mut self, x: u32) {
        if let Some(ps) = self.part.as_deref_mut() {
            ps.held = Some(x);
            if ps.me != 0 {
                ps.replicated += 1;
            }
            self.patho.halted = true;
        }
    }

    /// Whether a fabric-wide timer is held (see [`Simulator::handle_held`]).
    pub fn holds_fabric_timer(&self) -> bool {
        self.part.as_deref().is_some_and(|ps| ps.held.is_some())
    }

    /// Handles the held fabric-wide timer, once every frame sent before it has been taken
    /// in. After a deadlock scan, [`Simulator::take_scan_part`] gives this partition's part
    /// of it, which every partition then gives to [`Simulator::scan_parts`].
    pub fn handle_held(&mut self) {
        let Some(x) = self.part.as_deref_mut().and_then(|ps| ps.held.take()) else {
            return;
        };
        self.patho.halted = false;
        self.scheduler = order::FABRIC;
        self.hook_pathology_timer(x);
        if crate::sim::features::pathology::is_scan(x)
            && let Some(ps) = self.part.as_deref_mut()
        {
            ps.scan = true;
        }
    }

    /// This partition's part of the deadlock scan just handled, if one was.
    pub fn take_scan_part(&mut self) -> Option<ScanPart> {
        let ps = self.part.as_deref_mut()?;
        if !std::mem::take(&mut ps.scan) {
            return None;
        }
        self.patho.detector.as_deref().map(|d| d.local.clone())
    }

    /// Whether the run has ended early (the deadlock detector's stop, an engine fault).
    pub fn halted(&self) -> bool {
        self.patho.halted
    }

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
    /// this simulator or, across a cut link, as a message. `peer` is `p`'s peer, which the
    /// caller holds.
    #[inline(always)]
    pub(in crate::sim) fn put_on_wire(&mut self, p: PortId, peer: PortId, w: WireFrame, arrive: Instant) {
        if let Some(to) = self.cut_to(peer) {
            // (a frame's flow is looked up only where some flow's packets are stamped)
            let stamps = self.part.as_deref().is_some_and(|ps| ps.stamps);
            let carried = match &w {
                WireFrame::Data(f) if stamps && self.flows[f.flow as usize].qp.is_some() => {
                    self.telemetry_out(f)
                }
                _ => Carried::None,
            };
            self.post(to, peer, w, arrive, carried);
            return;
        }
        self.ports[p as usize].inflight.push_back(w);
        order::schedule!(self, arrive, Event::Arrive(peer));
    }

    /// The partition of `peer`'s node if this is a partition and that is another one (the
    /// link to `peer` is cut).
    #[inline(always)]
    fn cut_to(&self, peer: PortId) -> Option<u16> {
        let ps = self.part.as_deref()?;
        let to = ps.of_port[peer as usize];
        (to != ps.me).then_some(to)
    }

    /// Sends `w`, which `p` started sending to `peer` in partition `to`, as a message that
    /// arrives at `arrive`, with what it `carried`.
    fn post(&mut self, to: u16, peer: PortId, w: WireFrame, arrive: Instant, carried: Carried) {
        let tie = order::tie(self.now, arrive, self.scheduler);
        let origin = 2 * self.queue.pushed();
        if let Some(ps) = self.part.as_deref_mut() {
            ps.outbox_for(to).push(peer, arrive, tie, w, carried, origin);
        }
    }

    /// The frames sent on cut links since they were last taken, grouped by receiving
    /// partition (in the order of each group's first frame), each group in the order sent.
    pub fn take_outbox(&mut self, into: &mut Mail) {
        self.hand_over(|_, v| into.append(v));
    }

    /// Hands the frames sent on cut links since they were last taken to `give`, one call per
    /// receiving partition (in the order of each one's first frame) with its frames in the
    /// order sent: `give` takes them out of the mail (swapping it for an empty one keeps
    /// both allocations in use, so that no frame is copied and nothing is allocated once the
    /// buffers have grown).
    pub fn hand_over(&mut self, mut give: impl FnMut(usize, &mut Mail)) {
        if let Some(ps) = self.part.as_deref_mut() {
            for &to in &ps.sent_to {
                let v = &mut ps.outbox[usize::from(to)];
                give(usize::from(to), v);
                v.clear();
            }
            ps.sent_to.clear();
        }
    }

    /// Puts LLDPDU `w` (its bytes `frame`), which `p` started sending, on the wire: to arrive at
    /// the peer at `arrive`, in this simulator or, across a cut link, as a message carrying
    /// the bytes (DCBX, `features/dcbx.rs`).
    pub(in crate::sim) fn put_lldp_on_wire(
        &mut self,
        p: PortId,
        w: WireFrame,
        frame: Vec<u8>,
        arrive: Instant,
    ) {
        let peer = self.ports[p as usize].peer;
        if let Some(to) = self.cut_to(peer) {
            self.post(to, peer, w, arrive, Carried::Lldp(frame.into_boxed_slice()));
            return;
        }
        let port = &mut self.ports[p as usize];
        port.inflight.push_back(w);
        port.lldp_wire.push_back(frame);
        order::schedule!(self, arrive, Event::Arrive(peer));
    }

    /// Takes in a frame that another partition sent on a cut link to one of this one's ports,
    /// with what it carries beside it (its mail's [`Mail::extra`]).
    // (inlined into the drivers' loops over the mail: a call per frame cost ≈ 9 instructions)
    #[inline(always)]
    pub fn take_in(&mut self, m: &Message, extra: Option<&Extra>) {
        // (without reading the receiving port's line, cold until its arrival is handled)
        let from = crate::sim::build::peer_of(m.to);
        if let Some(x) = extra {
            self.take_in_extra(m, from, &x.carried);
        }
        self.ports[from as usize].inflight.push_back(m.frame);
        self.observer
            .taken_in(self.queue.pushed(), m.tie, extra.map_or(0, |x| x.origin));
        self.queue.push_tied(m.at, m.tie, Event::Arrive(m.to));
    }

    /// What message `m`, sent by port `from`, carries beside its frame: its QP's field, or
    /// its LLDPDU's bytes.
    #[cold]
    #[inline(never)]
    fn take_in_extra(&mut self, m: &Message, from: PortId, carried: &Carried) {
        match (&m.frame, carried) {
            (_, Carried::None) => {}
            (WireFrame::Data(f), c) => {
                let holds_sender = self
                    .part
                    .as_deref()
                    .is_none_or(|ps| ps.of_node[self.flows[f.flow as usize].spec.src as usize] == ps.me);
                self.telemetry_in(f, c, holds_sender);
            }
            // (the bytes go where one simulator keeps them: the sending port's wire)
            (WireFrame::Lldp { .. }, Carried::Lldp(bytes)) => {
                self.ports[from as usize].lldp_wire.push_back(bytes.to_vec());
            }
            _ => {}
        }
    }

    /// Whether `to` is a port of this partition at the end of a cut link: where a message
    /// from another partition may go (checked for those that come from other ranks).
    pub fn receives_at(&self, to: PortId) -> bool {
        let Some(ps) = self.part.as_deref() else {
            return false;
        };
        let (Some(&here), Some(&there)) = (
            ps.of_port.get(to as usize),
            ps.of_port.get(crate::sim::build::peer_of(to) as usize),
        ) else {
            return false;
        };
        here == ps.me && there != ps.me
    }

    /// Gives every flow with a transport that has no QP here (a partition that holds neither
    /// of its ends, `build::holds_qp`) its QP as it starts: what such a partition's copy was
    /// before partitions built only their own QPs (the ends' state is then taken from their
    /// owners: the digests over MPI ranks, [`Simulator::absorb`]).
    pub(in crate::sim) fn restore_qps(&mut self) {
        for f in 0..self.flows.len() {
            let fs = &self.flows[f];
            let (Some(t), None) = (fs.spec.transport.as_deref(), fs.qp.as_ref()) else {
                continue;
            };
            let line = self.ports[self.host_port(fs.spec.src) as usize].rate;
            // (it was built once with the same arguments, in the partition of its source)
            if let Ok(qp) = crate::sim::build::new_qp(&fs.spec, t, fs.sport, line, self.config.seed) {
                self.flows[f].qp = Some(qp);
            }
        }
    }

    /// Each flow with a transport so far: its source, its destination, and whether this
    /// simulator holds its QP (a partition: only if one of its hosts is an end, or the QP's
    /// packets carry a field the switches stamp; see `build::holds_qp`).
    pub fn qps_held(&self) -> impl Iterator<Item = (crate::frame::NodeId, crate::frame::NodeId, bool)> + '_ {
        (self.flows.iter())
            .filter(|f| f.spec.transport.is_some())
            .map(|f| (f.spec.src, f.spec.dst, f.qp.is_some()))
    }

    /// The ports whose congestion notification (ECN markers, QCN congestion points) this
    /// simulator holds (a partition: only its own switches', see `build::build_ports`).
    pub fn port_cn_held(&self) -> impl Iterator<Item = PortId> + '_ {
        (0..self.ports.len() as PortId).filter(|&p| self.ports[p as usize].cn.is_some())
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
        // (and what was lost on it after a link went down: counted as the frames arrived)
        let mut wire: Vec<Option<Wire>> = vec![None; nports];
        for (p, slot) in wire.iter_mut().enumerate() {
            let peer = parts[0].ports[p].peer as usize;
            let rx = owner_of_port(&parts[0], peer);
            if rx != owner_of_port(&parts[0], p) {
                let copy = &mut parts[rx].ports[p];
                *slot = Some(Wire {
                    frames: std::mem::take(&mut copy.inflight),
                    lldp: std::mem::take(&mut copy.lldp_wire),
                    lost: copy.wire_lost,
                    lost_counts: std::array::from_fn(|q| {
                        let st = &copy.counts().prio[q];
                        (st.wire_lost_frames, st.wire_lost_bytes)
                    }),
                });
            }
        }
        // victims: blocked time whose cause another partition recorded, settled below
        let deferred: Vec<_> = parts
            .iter_mut()
            .filter_map(|s| {
                let v = s.patho.victims.as_deref_mut()?;
                Some((std::mem::take(&mut v.deferred), std::mem::take(&mut v.history)))
            })
            .collect();
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
            merged.merge_features(&mut other, i as u16, &of_node);
        }
        if let Some(v) = merged.patho.victims.as_deref_mut() {
            v.settle(&deferred);
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
                let port = &mut merged.ports[p];
                port.inflight = w.frames;
                port.lldp_wire = w.lldp;
                port.wire_lost = w.lost;
                if w.lost_counts.iter().any(|&c| c != (0, 0)) {
                    for (st, (frames, bytes)) in port.counts_mut().prio.iter_mut().zip(w.lost_counts) {
                        st.wire_lost_frames += frames;
                        st.wire_lost_bytes += bytes;
                    }
                }
            }
        }
        merged.events = events;
        merged.part = None;
        merged
    }
}

/// What is on a cut link at the end, from its receiver's copy of the sender.
#[derive(Clone)]
struct Wire {
    frames: crate::sim::fabric::ring::Ring<WireFrame>,
    /// The bytes of the LLDPDUs among them.
    lldp: std::collections::VecDeque<Vec<u8>>,
    /// Frames still to arrive lost (the link went down under them).
    lost: u32,
    /// Frames and bytes lost per priority as they arrived.
    lost_counts: [(u64, u64); 8],
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Takes the feature state partition `i` (`other`) owns: its switches' pfcwd, the
    /// detector's per-port state, victims' slots and causes at its ports, its receiving
    /// ports' FCS checks. (The detector's findings, the topology log and the routes are the
    /// same in every partition.)
    fn merge_features(&mut self, other: &mut Self, i: u16, of_node: &[u16]) {
        for (wd, theirs) in self.patho.pfcwd.iter_mut().zip(&mut other.patho.pfcwd) {
            if of_node[wd.node as usize] == i {
                std::mem::swap(wd, theirs);
            }
        }
        self.patho.faults |= other.patho.faults;
        let owned: Vec<bool> = self.ports.iter().map(|p| of_node[p.node as usize] == i).collect();
        self.link_errors.take_ports(&mut other.link_errors, |p| owned[p]);
        let ports: Vec<usize> = (0..self.ports.len()).filter(|&p| owned[p]).collect();
        if let (Some(d), Some(o)) = (
            self.patho.detector.as_deref_mut(),
            other.patho.detector.as_deref(),
        ) {
            d.take_ports(o, ports.iter().copied());
        }
        if let (Some(v), Some(o)) = (self.patho.victims.as_deref_mut(), other.patho.victims.as_deref()) {
            for (slot, theirs) in v.slots.iter_mut().zip(&o.slots) {
                if of_node[self.ports[slot.port as usize].node as usize] == i {
                    *slot = *theirs;
                }
            }
            for &p in &ports {
                v.cause[p] = o.cause[p];
            }
        }
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
