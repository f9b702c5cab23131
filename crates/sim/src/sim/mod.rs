//! The simulator: ports, hosts and switches wired by links, driven by a time-ordered event
//! queue. One event handler per event kind; nothing allocates per event in steady state
//! (queues keep their capacity, frames are `Copy` handles, events are 8 bytes).

use std::collections::VecDeque;

use lossless_proto::flow_control::{FlowControl, Mode, ReceivedControl, TxSlot};
use lossless_proto::units::{Duration, Instant, Rate};
use rand_pcg::Pcg64;

mod build;
mod cn;
mod dcbx;
mod deadlock;
mod host;
mod ideal;
pub(crate) use ideal::IdealCache;
mod patho_report;
mod pathology;
mod pfcwd;
mod qp;
mod routes;
mod storm;
#[cfg(test)]
mod tests;
mod topo;
mod victims;

pub(crate) use cn::PortCn;
pub(crate) use dcbx::PortDcbx;
pub(crate) use qp::Qp;

use crate::buffer::{Admission, SwitchBuffer};
use crate::config::SimConfig;
use crate::event::{CalendarQueue, EventQueue};
use crate::frame::{DropReason, Ecn, FlowId, Frame, FrameKind, NO_PORT, NodeId, PortId};
use crate::model::{Ecmp, Hop, ns3_ecmp_hash};
use crate::observer::{NoObserver, Observer, WireFrame};
use crate::selection::{PortSelection, TransmissionSelection};
use crate::stats::{FlowStats, PortStats, Totals};
use crate::traffic::FlowSpec;

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port's transmitter finished a frame (IFG included) and may start the next.
    TxEnd(PortId),
    /// The last bit of the oldest frame on the wire towards this port arrived.
    Arrive(PortId),
    /// A flow may emit its next frame.
    Emit(FlowId),
    /// A port's flow-control engine has a deadline.
    MacTimer(PortId),
    /// A host's receiver finished processing its oldest frame.
    RxDone(NodeId),
    /// The next Poisson arrival of a workload.
    NewFlow(u32),
    /// A scripted request change (index into the scenario's signals).
    Signal(u32),
    /// A shaper of the port's transmission selection lets a held frame go.
    Eligible(PortId),
    /// A port's DCBX agent has a deadline.
    DcbxTimer(PortId),
    /// A timer of the pathology parts (stalls, storm prevention, pfcwd polls, the deadlock
    /// detector, topology events): kind and index, see `sim/pathology.rs`.
    Pathology(u32),
    /// A QP's engines have a deadline (the earliest of its reaction point's, its
    /// retransmission timer's and its notification point's).
    QpTimer(FlowId),
}

/// One egress queue of a port: its frames, their bytes and the most bytes it held, in one
/// cache line (an enqueue and a dequeue touch nothing else of the queue).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct EgressQueue {
    /// The frames, oldest first.
    pub(crate) frames: VecDeque<Frame>,
    /// Their bytes.
    pub(crate) bytes: u64,
    /// The most bytes it held.
    pub(crate) peak: u64,
}

/// One port: egress queues, transmitter, flow-control engine, the wire towards its peer.
///
/// Laid out by hand (`repr(C)`, hot fields first): what every event on the port reads (ids,
/// flags, masks, fault state, selection, propagation delay) fills the first cache line, the
/// frame on the wire and the wire's queue the second; each egress queue (frames, bytes, peak)
/// is a line of its own; the engine, counters and DCBX state follow. Each port starts a cache
/// line.
#[repr(C, align(64))]
pub(crate) struct Port {
    pub(crate) node: NodeId,
    pub(crate) local: u32,
    pub(crate) peer: PortId,
    busy: bool,
    /// Set whenever the engine's transmit side may have a control frame due (a request
    /// changed, a deadline fired, a control frame went out or came in); cleared once the
    /// engine says none is due. While clear, `try_transmit` skips the control-frame poll and
    /// its repeated checks (a performance shortcut; the engine stays the authority through
    /// `on_tx_start`).
    ctl_check: bool,
    /// Set whenever the engine changed (any `&mut` call), so that its next deadline may
    /// have moved; `arm_timer` asks `poll_timeout` only then (its answer depends on the
    /// engine's state alone).
    timer_stale: bool,
    /// Bit q set while queue q holds a frame.
    nonempty: u8,
    /// Priorities that are lossless here (flow control answers their congestion).
    pub(crate) lossless: u8,
    /// Host ports: bit q set while the host has QPs of priority q ready to send (their next
    /// packet is pulled into queue q when that queue holds none of theirs).
    pull: u8,
    /// Host ports: the NIC's reply queue ([`crate::model::ReplyQueue::First`]) holds frames.
    reply_first: bool,
    /// Host ports: bit q set while queue q holds a frame pulled from a QP.
    staged: u8,
    /// Switch ports: bit q set when queue q's frames meet an ECN marker deciding at enqueue or
    /// q is a QCN congestion point (the port's `cn` says which): enqueueing takes the
    /// congestion-notification path.
    cn_enq: u8,
    /// Switch ports: bit q set when queue q's frames meet an ECN marker deciding at dequeue.
    cn_deq: u8,
    /// `lldp_tx` holds an LLDPDU (tested per transmission instead of the queue's header).
    lldp_queued: bool,
    /// Whose port it is (tested per arrival and departure instead of the node).
    kind: PortKind,
    /// Link down, pfcwd drops (`sim/topo.rs`, `sim/pfcwd.rs`).
    pub(crate) fault: topo::PortFault,
    sel: PortSelection,
    /// Switch ports: the ECN markers and QCN congestion points.
    pub(crate) cn: Option<Box<PortCn>>,
    pub(crate) prop: Duration,
    current: Option<Frame>,
    /// Frames on the wire towards `peer`, oldest first (constant delay keeps FIFO order).
    inflight: VecDeque<WireFrame>,
    /// LLDPDUs waiting for the transmitter.
    lldp_tx: VecDeque<Vec<u8>>,
    timer_at: Instant,
    pub(crate) rate: Rate,
    /// The DCBX agent of a DCBX-managed port.
    pub(crate) dcbx: Option<Box<PortDcbx>>,
    /// Per priority: the frames, their bytes and the most it held, a cache line each.
    pub(crate) queues: [EgressQueue; 8],
    pub(crate) mac: FlowControl,
    pub(crate) stats: PortStats,
    /// LLDPDUs on the wire towards `peer`, in the order of their `WireFrame::Lldp` entries.
    lldp_wire: VecDeque<Vec<u8>>,
    /// Last paused mask reported to the observer (only with `Observer::PAUSE_STATE`).
    paused_seen: u8,
    /// Pairs (this ingress port, priority) currently in XOFF.
    xoff_pairs: u8,
}

/// Whose a port is, and when its node's buffer lets a frame go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum PortKind {
    /// A host's NIC port.
    Host,
    /// A switch port whose buffer releases a frame when its last bit has been sent.
    Switch,
    /// A switch port whose buffer releases a frame at its dequeue (the HPCC ns-3 MMU).
    SwitchReleasingAtDequeue,
}

impl Port {
    /// Whether the port belongs to a switch.
    #[inline(always)]
    fn at_switch(&self) -> bool {
        self.kind != PortKind::Host
    }
    /// Whether its switch's buffer lets a frame go at its dequeue.
    #[inline(always)]
    fn release_at_dequeue(&self) -> bool {
        self.kind == PortKind::SwitchReleasingAtDequeue
    }
}

pub(crate) struct Host {
    pub(crate) port: PortId,
    nic_cap: usize,
    /// Per priority: flows blocked by a full NIC queue, longest blocked first.
    waiting: [VecDeque<FlowId>; 8],
    rx_rate: Option<Rate>,
    rx_buffer: u64,
    rx_xoff: u64,
    rx_xon: u64,
    rx_queue: VecDeque<Frame>,
    pub(crate) rx_backlog: u64,
    pub(crate) rx_peak: u64,
    rx_busy: bool,
    rx_xoff_on: bool,
    /// Receiver stalls and NIC storm prevention (`sim/storm.rs`).
    pub(crate) stall: Option<Box<storm::HostStall>>,
    /// The NIC's QP state (hosts of a scenario with QPs).
    nic: Option<Box<Nic>>,
}

impl Nic {
    /// The ready QP of priority `q` the NIC serves next, taken out of the ready set: round
    /// robin over the QPs in the order they were created (flow ids increase with creation),
    /// continuing after the one served last, as the HPCC ns-3 NIC scans its QP list.
    fn take_next(&mut self, q: usize) -> Option<FlowId> {
        let ready = &mut self.qp_ready[q];
        let last = self.last_served[q];
        let mut best: Option<(usize, FlowId)> = None;
        for (i, &f) in ready.iter().enumerate() {
            // after `last` first (wrapping): compare (f <= last, f)
            let key = (f <= last, f);
            if best.is_none_or(|(_, b)| key < (b <= last, b)) {
                best = Some((i, f));
            }
        }
        let (i, f) = best?;
        ready.swap_remove(i);
        self.last_served[q] = f;
        Some(f)
    }
}

/// What a host NIC keeps for QPs.
pub(crate) struct Nic {
    /// QPs of each priority ready to send now (unordered; see [`Nic::take_next`]).
    qp_ready: [Vec<FlowId>; 8],
    /// The QP of each priority served last (round robin continues after it).
    last_served: [FlowId; 8],
    /// Replies (ACK/NAK/SACK/CNP) waiting in the NIC's reply queue
    /// ([`crate::model::ReplyQueue::First`]).
    replies: VecDeque<Frame>,
}

/// A switch. Laid out by hand (`repr(C)`; a node starts a cache line): the node's tag, the
/// routes and the start of the buffer's totals share the first line, the buffer's other
/// totals the second (a frame's routing, admission and release touch those two).
#[repr(C)]
pub(crate) struct Switch {
    /// Egress candidates per destination node (empty for switches and unreachable hosts);
    /// set once every port exists.
    routes: routes::Routes,
    pub(crate) buffer: SwitchBuffer,
    pub(crate) ports: Vec<PortId>,
}

/// A node; each starts a cache line (see [`Switch`]).
#[repr(align(64))]
pub(crate) enum Node {
    Host(Host),
    Switch(Switch),
}

struct FlowState {
    spec: FlowSpec,
    remaining: u64,
    next_at: Instant,
    scheduled: bool,
    done_emitting: bool,
    stats: FlowStats,
    /// UDP source port: 10000 + the flow's index among the flows of its (source,
    /// destination) pair, as the HPCC ns-3 simulator numbers them (its ECMP hashes it).
    sport: u16,
    /// UDP destination port.
    dport: u16,
    /// The QP's engines and state, for a flow with a transport.
    qp: Option<Box<Qp>>,
}

/// The simulator, generic over its event queue and its observer.
pub struct Simulator<O: Observer = NoObserver, Q: EventQueue<Event> = CalendarQueue<Event>> {
    pub(crate) config: SimConfig,
    pub(crate) now: Instant,
    end: Instant,
    queue: Q,
    pub(crate) ports: Vec<Port>,
    pub(crate) nodes: Vec<Node>,
    flows: Vec<FlowState>,
    /// Flows created so far per (source, destination) pair (UDP source ports).
    pair_flows: std::collections::HashMap<(NodeId, NodeId), u16>,
    rng: Pcg64,
    next_frame_id: u64,
    pub(crate) totals: Totals,
    pub(crate) events: u64,
    observer: O,
    /// The first error an engine returned on the hot path; it stops the run (see
    /// [`Simulator::fault`]).
    pub(crate) fault: Option<String>,
    /// Pathology state: pfcwd, routes and link events, the detector, victims.
    pub(crate) patho: pathology::PathoState,
}

/// Error building a simulator from a configuration. A variant with a `source` names only
/// where the problem is; the source (printed after it in a chain, as `{:#}` of anyhow does)
/// says what it is, so that the reason is not printed twice.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A switch's headroom reserves do not fit its buffer.
    #[error("switch {switch}")]
    Buffer {
        /// The switch's name.
        switch: String,
        /// The problem.
        source: crate::buffer::BufferTooSmall,
    },
    /// A host has other than one link.
    #[error("host {host} has {links} links; a host has exactly one NIC port")]
    HostLinks {
        /// The host's name.
        host: String,
        /// How many links it has.
        links: usize,
    },
    /// A flow's source or destination is not a host, or they are the same.
    #[error("flow {flow}: {problem}")]
    Flow {
        /// The flow's name.
        flow: String,
        /// What is wrong.
        problem: String,
    },
    /// An ETS configuration was refused by the scheduler.
    #[error("link {link}: ETS")]
    Ets {
        /// Index of the link.
        link: usize,
        /// The scheduler's reason.
        source: lossless_proto::ets::SchedulerError,
    },
    /// A DCBX configuration was refused by the agent.
    #[error("link {link}: DCBX")]
    Dcbx {
        /// Index of the link.
        link: usize,
        /// The agent's reason.
        source: lossless_proto::dcbx::AgentError,
    },
    /// A flow's frames are larger than any port can be built for.
    #[error("frames of {bytes} bytes: allowed up to 4294967295")]
    FrameTooLarge {
        /// The largest frame asked for.
        bytes: u64,
    },
    /// A scripted flow-control request cannot be applied.
    #[error("signal on host {host}: {problem}")]
    Signal {
        /// The host's name.
        host: String,
        /// What is wrong.
        problem: String,
    },
    /// A pathology setting (pfcwd, static route, ...) cannot be applied.
    #[error("{what}: {problem}")]
    Pathology {
        /// Where (e.g. `switch s1 pfcwd`).
        what: String,
        /// What is wrong.
        problem: String,
    },
    /// A switch's congestion notification (ECN marking, QCN) cannot be set up.
    #[error("switch {switch}: {problem}")]
    Cn {
        /// The switch's name.
        switch: String,
        /// What is wrong.
        problem: String,
    },
    /// A flow-control configuration was refused by the engine.
    #[error("link {link}: flow control")]
    FlowControl {
        /// Index of the link.
        link: usize,
        /// The engine's reason.
        source: lossless_proto::flow_control::ConfigError,
    },
}

impl Simulator<NoObserver, CalendarQueue<Event>> {
    /// Builds a simulator without an observer.
    pub fn new(config: SimConfig) -> Result<Self, BuildError> {
        Self::with_observer(config, NoObserver)
    }
}

fn station_address(port: PortId) -> [u8; 6] {
    let p = port.to_be_bytes();
    [0x02, 0x00, p[0], p[1], p[2], p[3]]
}

/// Mixed into the ECMP key of frames that travel from a flow's receiver to its sender.
const REVERSE_HASH: u64 = 0x5245_5645_5253_4500;

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl<O: Observer> Simulator<O, CalendarQueue<Event>> {
    /// Builds a simulator that reports to `observer`.
    pub fn with_observer(config: SimConfig, observer: O) -> Result<Self, BuildError> {
        Self::build(config, observer, CalendarQueue::default())
    }
}

/// What a frame leaving queue `q` of a host port that holds QP packets or of a switch port
/// with congestion notification does there: frees the QP's slot, or meets the ECN marker
/// deciding at dequeue (kept out of the path of other ports).
#[inline(never)]
fn dequeued_cn(port: &mut Port, q: u8, mut frame: Frame) -> Frame {
    // pulled from a QP (host ports): the queue may take the QP's next packet
    if frame.kind == FrameKind::RoceData {
        port.staged &= !(1 << q);
    }
    if port.cn_deq & (1 << q) != 0
        && frame.ecn().is_capable()
        && let Some(cn) = port.cn.as_deref_mut()
        && cn.mark_at_dequeue(q as usize, port.queues[q as usize].bytes)
    {
        frame.set_ecn(Ecn::Ce);
    }
    frame
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }
    /// When the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }
    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// The configuration this simulator was built from.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }
    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }
    /// The observer, mutably (e.g. to finish writing files).
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.observer
    }

    /// The first error an engine (flow control, transmission selection) returned during the
    /// run, with the time and port; the run stops there. `None` for a sound run.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_deref()
    }

    /// Records an engine error at `p` and ends the run now: an engine refusing what the
    /// simulator asks is a bug or a configuration the build did not catch, never ignored.
    pub(crate) fn engine_fault(&mut self, p: PortId, what: &str, err: &dyn std::fmt::Display) {
        if self.fault.is_none() {
            self.fault = Some(format!("at {} port {p}: {what}: {err}", self.now));
        }
        self.end = self.now;
        self.patho.halted = true;
    }

    /// Queues `frame` at egress port `p` (transmission selection told first); false (and an
    /// engine fault) when the selection refuses it.
    #[inline]
    pub(crate) fn enqueue(&mut self, p: PortId, frame: Frame) -> bool {
        if self.ports[p as usize].cn_enq != 0 {
            return self.enqueue_cn(p, frame);
        }
        self.enqueue_plain(p, frame)
    }

    /// [`Self::enqueue`] at a switch port with ECN markers or QCN congestion points (kept out
    /// of the path of ports without).
    #[inline(never)]
    fn enqueue_cn(&mut self, p: PortId, mut frame: Frame) -> bool {
        let port = &mut self.ports[p as usize];
        let q = frame.priority as usize;
        let cn = port.cn_enq & (1 << q) != 0;
        if cn
            && frame.ecn().is_capable()
            && let Some(c) = port.cn.as_deref_mut()
            && c.mark_at_enqueue(q, port.queues[q].bytes)
        {
            frame.set_ecn(Ecn::Ce);
        }
        if !self.enqueue_plain(p, frame) {
            return false;
        }
        if cn {
            // a QCN congestion point sees every enqueued frame
            let node = self.ports[p as usize].node;
            self.cp_enqueued(node, p, frame);
        }
        true
    }

    #[inline(always)]
    fn enqueue_plain(&mut self, p: PortId, frame: Frame) -> bool {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let q = frame.priority as usize;
        if let Err(e) = port.sel.enqueued(now, frame.priority, frame.len) {
            self.engine_fault(p, "transmission selection refused a frame", &e);
            return false;
        }
        let eq = &mut port.queues[q];
        eq.frames.push_back(frame);
        eq.bytes += frame.len as u64;
        eq.peak = eq.peak.max(eq.bytes);
        self.observer.queue_changed(p, frame.priority, eq.bytes, now);
        port.nonempty |= 1 << q;
        if self.patho.victims.is_some() {
            self.victims_enqueued(p, &frame);
        }
        true
    }

    /// Runs until the end of the scenario.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    /// Handles every event before `until` (capped at the end of the scenario) and advances
    /// the clock to it. Returns true when the end has been reached.
    pub fn run_until(&mut self, until: Instant) -> bool {
        let until = until.min(self.end);
        // an engine fault or the deadlock detector halts the run (and moves `end` to now)
        while !self.patho.halted {
            let Some(s) = self.queue.pop_before(until) else {
                break;
            };
            self.now = s.at;
            self.events += 1;
            self.handle(s.event);
        }
        if until > self.now && !self.patho.halted {
            self.now = until;
        }
        self.now >= self.end
    }

    #[inline(always)]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxEnd(p) => self.on_tx_end(p),
            Event::Arrive(p) => self.on_arrive(p),
            Event::Emit(f) => self.on_emit(f),
            Event::MacTimer(p) => self.on_mac_timer(p),
            Event::RxDone(n) => self.on_rx_done(n),
            Event::NewFlow(w) => self.on_new_flow(w),
            Event::Signal(i) => self.on_signal(i),
            Event::Eligible(p) => self.try_transmit(p),
            Event::DcbxTimer(p) => self.on_dcbx_timer(p),
            Event::Pathology(x) => self.on_pathology(x),
            Event::QpTimer(f) => self.on_qp_timer(f),
        }
    }

    fn arm_timer(&mut self, p: PortId) {
        if O::PAUSE_STATE {
            let port = &mut self.ports[p as usize];
            let mask = port.mac.paused_mask(self.now);
            if mask != port.paused_seen {
                port.paused_seen = mask;
                self.observer.pause_changed(p, mask, self.now);
            }
        }
        let port = &mut self.ports[p as usize];
        if !port.timer_stale {
            return;
        }
        port.timer_stale = false;
        if let Some(d) = port.mac.poll_timeout() {
            let d = d.max(self.now);
            if d < port.timer_at {
                port.timer_at = d;
                self.queue.push(d, Event::MacTimer(p));
            }
        }
    }

    fn on_mac_timer(&mut self, p: PortId) {
        let now = self.now;
        {
            let port = &mut self.ports[p as usize];
            if port.timer_at != now {
                return; // superseded by an earlier deadline that already fired
            }
            port.timer_at = Instant::MAX;
            port.mac.handle_timeout(now);
            port.ctl_check = true;
            port.timer_stale = true;
        }
        self.try_transmit(p);
        self.arm_timer(p);
    }

    /// Starts the next frame on `p` if its transmitter is idle: a pending control frame
    /// first, then the data frame transmission selection picks among unpaused classes.
    ///
    /// Re-arms the engine's timer after a control frame (its refresh deadline moved) and when
    /// nothing could start; starting a data frame moves no deadline, so that path skips it.
    /// Callers that changed the engine (request, received frame, timeout) arm it themselves.
    fn try_transmit(&mut self, p: PortId) {
        let now = self.now;
        let pi = p as usize;
        if self.ports[pi].busy || self.ports[pi].fault.down {
            return;
        }
        let port = &mut self.ports[pi];
        if port.ctl_check && !port.mac.has_control_due(now) {
            port.ctl_check = false;
        }
        if port.ctl_check
            && let Some(tx) = port.mac.poll_transmit(now)
        {
            let w = WireFrame::Control(tx.frame);
            port.timer_stale = true;
            port.busy = true;
            port.inflight.push_back(w);
            port.stats.count_control_tx(&tx.frame);
            let arrive = tx.last_bit + port.prop;
            let peer = port.peer;
            self.queue.push(tx.free_at, Event::TxEnd(p));
            self.queue.push(arrive, Event::Arrive(peer));
            self.observer.tx_start(p, &w, tx.start, tx.last_bit);
            self.arm_timer(p);
            return;
        }
        if port.lldp_queued && self.start_lldp(p) {
            return;
        }
        let port = &mut self.ports[pi];
        if port.pull | port.reply_first as u8 != 0 && self.nic_service(p) {
            return;
        }
        let port = &mut self.ports[pi];
        let mut ready = 0u8;
        let mut pending = port.nonempty;
        if port.ctl_check {
            // a control frame is due but could not start: the engine decides per priority
            while pending != 0 {
                let q = pending.trailing_zeros() as u8;
                pending &= pending - 1;
                if port.mac.may_start_data(now, q) {
                    ready |= 1 << q;
                }
            }
        } else if pending != 0 && now >= port.mac.wire_free_at() && !port.mac.hold_data(now) {
            // no control frame due (checked above): `may_start_data` reduces to the pauses
            while pending != 0 {
                let q = pending.trailing_zeros() as u8;
                pending &= pending - 1;
                if port.mac.may_transmit(now, q) {
                    ready |= 1 << q;
                }
            }
        } else if pending == 0 {
            // nothing queued and no control frame due: no deadline moved since the last arm
            return;
        }
        let Some(q) = port.sel.select(now, ready, port.nonempty & !ready) else {
            if ready != 0
                && let Some(t) = port.sel.next_eligible(now)
            {
                // a shaper holds the ready frames until `t`
                self.queue.push(t.max(now), Event::Eligible(p));
            }
            self.arm_timer(p);
            return;
        };
        let Some(mut frame) = port.queues[q as usize].frames.pop_front() else {
            port.nonempty &= !(1 << q);
            self.arm_timer(p);
            return;
        };
        port.queues[q as usize].bytes -= frame.len as u64;
        self.observer
            .queue_changed(p, q, port.queues[q as usize].bytes, now);
        if port.queues[q as usize].frames.is_empty() {
            port.nonempty &= !(1 << q);
        }
        if port.staged | port.cn_deq != 0 {
            frame = dequeued_cn(port, q, frame);
        }
        let slot = match port.mac.on_tx_start(now, frame.len as u64, q) {
            Ok(slot) => slot,
            Err(e) => {
                // the engine refused what its own checks allowed: keep the frame (conservation
                // holds) and stop the run, never carry on as if nothing happened
                port.queues[q as usize].bytes += frame.len as u64;
                port.queues[q as usize].frames.push_front(frame);
                port.nonempty |= 1 << q;
                self.engine_fault(p, "flow-control engine refused a data frame it allowed", &e);
                return;
            }
        };
        if let Err(e) = port.sel.transmitted(now, q, frame.len) {
            self.engine_fault(p, "transmission selection lost track of a queue", &e);
            return;
        }
        if self.patho.victims.is_some() {
            self.victims_dequeued(p, &frame);
        }
        self.start_frame(p, frame, slot);
        let port = &self.ports[pi];
        if port.release_at_dequeue() {
            // the HPCC ns-3 switch frees the ingress charge as the packet is dequeued (and
            // checks its resume there), before the packet's transmission starts
            self.release_ingress(port.node, frame);
        }
        let port = &self.ports[pi];
        // the freed queue slot goes to the host's longest-blocked flow of this class (one
        // wake-up per frame sent: waking them all costs events quadratic in blocked flows);
        // a switch has none
        if !port.at_switch() {
            self.wake_blocked(port.node, q);
        }
    }

    /// Puts `frame` on the wire of `p` in the engine's `slot`: the transmitter is busy until
    /// the slot's end, the frame arrives at the peer a propagation delay after its last bit.
    #[inline(always)]
    pub(crate) fn start_frame(&mut self, p: PortId, frame: Frame, slot: TxSlot) {
        let port = &mut self.ports[p as usize];
        port.timer_stale = true;
        port.busy = true;
        port.current = Some(frame);
        let w = WireFrame::Data(frame);
        port.inflight.push_back(w);
        let st = &mut port.stats.prio[frame.priority as usize];
        st.tx_frames += 1;
        st.tx_bytes += frame.len as u64;
        let arrive = slot.last_bit + port.prop;
        let peer = port.peer;
        self.queue.push(slot.free_at, Event::TxEnd(p));
        self.queue.push(arrive, Event::Arrive(peer));
        self.observer.tx_start(p, &w, slot.start, slot.last_bit);
    }

    fn on_tx_end(&mut self, p: PortId) {
        let pi = p as usize;
        self.ports[pi].busy = false;
        if let Some(frame) = self.ports[pi].current.take()
            && !self.ports[pi].release_at_dequeue()
        {
            // the frame has left the buffer: release its ingress charge
            self.release_ingress(self.ports[pi].node, frame);
        }
        self.try_transmit(p);
    }

    /// `frame` has left switch `node`'s buffer (sent, dequeued or discarded): its ingress
    /// (port, priority) is charged that much less, and a pair leaving XOFF releases its
    /// port's flow-control request.
    #[inline(always)]
    pub(crate) fn release_ingress(&mut self, node: NodeId, frame: Frame) {
        if frame.ingress == NO_PORT {
            return;
        }
        let Node::Switch(sw) = &mut self.nodes[node as usize] else {
            return;
        };
        let in_local = self.ports[frame.ingress as usize].local as usize;
        let xon = sw.buffer.release(in_local, frame.priority, frame.len as u64);
        if O::BUFFER_STATE {
            let occ = sw.buffer.occupancy(in_local, frame.priority);
            self.observer
                .buffer_changed(node, in_local as u32, frame.priority, occ, self.now);
        }
        if xon {
            self.set_pair_xoff(frame.ingress, frame.priority, false);
        }
    }

    /// Records a (ingress port, priority) pair entering or leaving XOFF and drives the
    /// port's flow-control request: per priority for PFC, the whole link for PAUSE.
    fn set_pair_xoff(&mut self, p: PortId, prio: u8, on: bool) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let before = port.xoff_pairs;
        if on {
            port.xoff_pairs |= 1 << prio;
        } else {
            port.xoff_pairs &= !(1 << prio);
        }
        let (set, level, changed) = match port.mac.config().mode {
            Mode::Off => return,
            Mode::Pause => (0u8, port.xoff_pairs != 0, (before != 0) != (port.xoff_pairs != 0)),
            // a priority outside the PFC vector (DCBX may have just removed it) has no request
            // to change: the pair stays recorded and goes out if the priority is enabled again
            Mode::Pfc if port.mac.config().active_mask() & (1 << prio) == 0 => return,
            Mode::Pfc => (prio, on, before != port.xoff_pairs),
        };
        if changed {
            port.ctl_check = true;
            port.timer_stale = true;
            if let Err(e) = port.mac.set_request(now, set, level) {
                self.engine_fault(p, "flow-control request refused", &e);
                return;
            }
            self.observer.request_changed(p, set, level, now);
            self.try_transmit(p);
            self.arm_timer(p);
        }
    }

    fn on_arrive(&mut self, p: PortId) {
        let now = self.now;
        let peer = self.ports[p as usize].peer;
        if self.ports[peer as usize].fault.lost > 0 {
            self.lost_arrival(p);
            return;
        }
        let Some(w) = self.ports[peer as usize].inflight.pop_front() else {
            return;
        };
        match w {
            WireFrame::Control(cf) => {
                let port = &mut self.ports[p as usize];
                port.stats.count_control_rx(&cf);
                port.mac
                    .handle_control_frame(now, &ReceivedControl::multicast(cf));
                port.ctl_check = true;
                port.timer_stale = true;
                self.observer.control_received(p, &cf, now);
                self.try_transmit(p);
                self.arm_timer(p);
            }
            WireFrame::Lldp { .. } => {
                let Some(frame) = self.ports[peer as usize].lldp_wire.pop_front() else {
                    return;
                };
                self.lldp_received(p, &frame);
            }
            WireFrame::Data(mut frame) => {
                // (counted received as sent by the peer, see `received`)
                let port = &self.ports[p as usize];
                let node = port.node;
                frame.ingress = p;
                if port.at_switch() {
                    self.switch_receive(node, p, frame);
                } else {
                    self.host_receive(node, frame);
                }
            }
        }
    }

    pub(crate) fn drop_frame(&mut self, p: PortId, frame: Frame, reason: DropReason) {
        let st = &mut self.ports[p as usize].stats;
        st.prio[frame.priority as usize].drops[reason.index()] += 1;
        st.first_drop[frame.priority as usize].get_or_insert(self.now);
        let st = &mut self.flows[frame.flow as usize].stats;
        if frame.kind.is_data() {
            st.dropped_frames += 1;
        } else {
            st.dropped_control_frames += 1;
        }
        self.totals.dropped[reason.index()] += 1;
    }

    /// The egress port of switch `node` towards `frame`'s destination (ECMP among equal-cost
    /// next hops), or `None` without a route.
    #[inline(always)]
    pub(crate) fn route(&self, node: NodeId, frame: &Frame) -> Option<PortId> {
        let Node::Switch(sw) = &self.nodes[node as usize] else {
            return None;
        };
        Self::route_in(
            sw,
            &self.config,
            &self.flows,
            node,
            frame.flow,
            frame.src,
            frame.dst,
            frame.kind.is_reverse(),
        )
    }

    /// [`Self::route`] at switch `sw` (node `node`) for a frame of `flow` from `src` to `dst`;
    /// `reverse` for a flow's replies and CNPs, which hash apart from its data.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn route_in(
        sw: &Switch,
        config: &SimConfig,
        flows: &[FlowState],
        node: NodeId,
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        reverse: bool,
    ) -> Option<PortId> {
        let cands = sw.routes.get(dst as usize);
        match cands.len() {
            0 => None,
            1 => Some(cands[0]),
            n => Some(match config.model.ecmp {
                Ecmp::FlowHash => {
                    let dir = if reverse { REVERSE_HASH } else { 0 };
                    let h = splitmix64(flow as u64 ^ ((node as u64) << 32) ^ config.seed ^ dir);
                    cands[(h % n as u64) as usize]
                }
                Ecmp::Ns3 => {
                    let f = &flows[flow as usize];
                    let (sport, dport) = if reverse {
                        (f.dport, f.sport)
                    } else {
                        (f.sport, f.dport)
                    };
                    let h = ns3_ecmp_hash(src, dst, sport, dport, node);
                    cands[(h % n as u32) as usize]
                }
            }),
        }
    }

    fn switch_receive(&mut self, node: NodeId, p: PortId, mut frame: Frame) {
        frame.hops = frame.hops.saturating_add(1);
        if frame.hops > self.patho.hop_limit {
            self.drop_frame(p, frame, DropReason::HopLimit);
            return;
        }
        let Some(out) = self.route(node, &frame) else {
            self.drop_frame(p, frame, DropReason::NoRoute);
            return;
        };
        if self.patho.faults && self.fault_drop(p, out, frame) {
            return;
        }
        let local = self.ports[p as usize].local as usize;
        let lossless = self.ports[p as usize].lossless & (1 << frame.priority) != 0;
        let Node::Switch(sw) = &mut self.nodes[node as usize] else {
            return;
        };
        match sw.buffer.admit(local, frame.priority, frame.len as u64, lossless) {
            Admission::Dropped(reason) => self.drop_frame(p, frame, reason),
            Admission::Admitted { xoff } => {
                if O::BUFFER_STATE {
                    let occ = sw.buffer.occupancy(local, frame.priority);
                    self.observer
                        .buffer_changed(node, local as u32, frame.priority, occ, self.now);
                }
                if !self.enqueue(out, frame) {
                    return;
                }
                if xoff {
                    self.victims_xoff(node, p, frame.priority);
                    self.set_pair_xoff(p, frame.priority, true);
                }
                self.try_transmit(out);
            }
        }
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Frames queued anywhere (egress queues and receive backlogs).
    pub fn queued_frames(&self) -> u64 {
        let q: usize = self
            .ports
            .iter()
            .flat_map(|p| p.queues.iter())
            .map(|q| q.frames.len())
            .sum();
        let r: usize = self
            .nodes
            .iter()
            .map(|n| {
                if let Node::Host(h) = n {
                    h.rx_queue.len() + h.nic.as_ref().map_or(0, |n| n.replies.len())
                } else {
                    0
                }
            })
            .sum();
        (q + r) as u64
    }
    /// Data frames and bytes of priority `q` port `p` received: what its peer sent, less what
    /// is still on the wire and what was lost on it.
    pub fn received(&self, p: PortId, q: u8) -> (u64, u64) {
        let peer = &self.ports[self.ports[p as usize].peer as usize];
        let s = &peer.stats.prio[q as usize & 7];
        let (mut frames, mut bytes) = (s.tx_frames - s.wire_lost_frames, s.tx_bytes - s.wire_lost_bytes);
        for o in &peer.inflight {
            if let WireFrame::Data(f) = o
                && f.priority == q
            {
                frames -= 1;
                bytes -= u64::from(f.len);
            }
        }
        (frames, bytes)
    }

    /// Data frames on the wire.
    pub fn in_flight_frames(&self) -> u64 {
        self.ports
            .iter()
            .flat_map(|p| p.inflight.iter())
            .filter(|w| matches!(w, WireFrame::Data(_)))
            .count() as u64
    }
    pub(crate) fn flow_views(&self) -> impl Iterator<Item = (&FlowSpec, &FlowStats, Option<&Qp>)> {
        self.flows.iter().map(|f| (&f.spec, &f.stats, f.qp.as_deref()))
    }
    /// The HPCC ns-3 simulator's routing BFS trees, built lazily one per destination, for
    /// [`Ns3Paths::path`]: the adjacency lists once, then one BFS per destination asked for.
    pub(crate) fn ns3_paths(&self) -> Ns3Paths<'_, O, Q> {
        let n = self.nodes.len();
        // per node: (neighbour, the port leading to it), by ascending neighbour id
        let mut adj: Vec<Vec<(usize, PortId)>> = vec![Vec::new(); n];
        for (i, p) in self.ports.iter().enumerate() {
            adj[p.node as usize].push((self.ports[p.peer as usize].node as usize, i as PortId));
        }
        for a in &mut adj {
            a.sort_by_key(|&(nb, p)| (nb, p));
        }
        Ns3Paths {
            sim: self,
            adj,
            trees: std::collections::HashMap::new(),
        }
    }
    /// The NIC port of host `node`.
    pub(crate) fn host_port(&self, node: NodeId) -> PortId {
        match &self.nodes[node as usize] {
            Node::Host(h) => h.port,
            Node::Switch(sw) => sw.ports.first().copied().unwrap_or(0),
        }
    }
}

/// The HPCC ns-3 simulator's routing BFS trees of a simulator (see [`Simulator::ns3_paths`]).
pub(crate) struct Ns3Paths<'a, O: Observer, Q: EventQueue<Event>> {
    sim: &'a Simulator<O, Q>,
    /// Per node: (neighbour, the port leading to it), by ascending neighbour id.
    adj: Vec<Vec<(usize, PortId)>>,
    /// Per destination: each node's port towards it on the BFS tree rooted there.
    trees: std::collections::HashMap<NodeId, Vec<Option<PortId>>>,
}

impl<O: Observer, Q: EventQueue<Event>> Ns3Paths<'_, O, Q> {
    /// The BFS tree rooted at `dst` (neighbours by ascending node id, only switches
    /// expanded): each node's port towards `dst`.
    fn tree(&self, dst: NodeId) -> Vec<Option<PortId>> {
        let sim = self.sim;
        let n = sim.nodes.len();
        let mut parent: Vec<Option<PortId>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[dst as usize] = true;
        let mut q = VecDeque::from([dst as usize]);
        while let Some(x) = q.pop_front() {
            for &(y, p) in &self.adj[x] {
                if !seen[y] {
                    seen[y] = true;
                    // the port at y towards x
                    parent[y] = Some(sim.ports[p as usize].peer);
                    if matches!(sim.nodes[y], Node::Switch(_)) {
                        q.push_back(y);
                    }
                }
            }
        }
        parent
    }

    /// The hops from host `src` to host `dst` along the HPCC ns-3 simulator's routing BFS
    /// tree (rooted at `dst`, neighbours by ascending node id, only switches expanded; the
    /// first path found): what its ideal FCT is computed over. Empty when unreachable.
    pub(crate) fn path(&mut self, src: NodeId, dst: NodeId) -> Vec<Hop> {
        if !self.trees.contains_key(&dst) {
            let t = self.tree(dst);
            self.trees.insert(dst, t);
        }
        let parent = &self.trees[&dst];
        let sim = self.sim;
        let mut hops = Vec::new();
        let mut at = src as usize;
        while at != dst as usize {
            let Some(p) = parent[at] else {
                return Vec::new();
            };
            let port = &sim.ports[p as usize];
            hops.push(Hop {
                rate: port.rate,
                delay: port.prop,
            });
            at = sim.ports[port.peer as usize].node as usize;
        }
        hops
    }
}
