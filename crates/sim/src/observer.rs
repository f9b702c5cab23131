//! The trace hook: a trait the simulator calls on frame transmission, flow-control request
//! changes, received control frames and buffer changes. Sinks (pcap, VCD, reports) implement
//! it; [`NoObserver`] implements every method as nothing, so with it the hooks compile away.

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;

use crate::frame::{Frame, NodeId, PortId};

/// What a port put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireFrame {
    /// A data frame.
    Data(Frame),
    /// A PAUSE or PFC frame.
    Control(ControlFrame),
    /// An LLDPDU of the port's DCBX agent, `len` bytes with FCS (its bytes go to
    /// [`Observer::lldp_tx`]).
    Lldp {
        /// Frame length, FCS included.
        len: u32,
    },
}

impl WireFrame {
    /// Length in bytes, FCS included, without preamble or IFG.
    pub fn len(&self) -> u64 {
        match self {
            WireFrame::Data(f) => f.len as u64,
            WireFrame::Control(_) => 64,
            WireFrame::Lldp { len } => u64::from(*len),
        }
    }
    /// Never true: frames have at least 64 bytes.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A congestion-control field a RoCEv2 data packet carries after its BTH (MODEL.md §9.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcField {
    /// HPCC's INT field (42 bytes).
    Int(lossless_wire::int::IntHeader),
    /// HPCC-PINT's code, 1 or 2 bytes.
    Pint(lossless_wire::pint::PintField, lossless_wire::pint::PintWidth),
    /// TIMELY's send timestamp, ns (8 bytes, little-endian as ns-3 writes it).
    Timestamp(u64),
}

/// Bits of a tie (`Observer::event_start`) that hold its scheduler, the lowest.
pub const TIE_SCHEDULER_BITS: u32 = 22;

/// The scheduler a tie names (the build, node `n` as `n + 1`, the workloads, the fabric:
/// `sim/order.rs`).
pub fn scheduler_of(tie: u64) -> u32 {
    (tie & ((1 << TIE_SCHEDULER_BITS) - 1)) as u32
}

/// Receives the simulator's trace events. Every method has an empty default.
pub trait Observer {
    /// Whether [`Observer::cc_field`] is wanted (the simulator then looks up the field of
    /// every RoCEv2 data packet of a QP that has one as it starts; off by default, so it
    /// costs nothing).
    const CC_FIELDS: bool = false;
    /// Whether [`Observer::pause_changed`] is wanted (the simulator then polls each engine's
    /// paused mask after it changes state; off by default, so it costs nothing).
    const PAUSE_STATE: bool = false;
    /// Whether [`Observer::buffer_changed`] is wanted for switch buffers (on by default; an
    /// observer that ignores them turns it off so that the simulator does not read the
    /// occupancy per frame for nothing).
    const BUFFER_STATE: bool = true;
    /// Whether [`Observer::event_start`]'s `seq` and [`Observer::taken_in`]'s must be the
    /// pushes' numbers (a split run's trace records, `trace::split`): the simulator's queue
    /// must then keep them ([`crate::event::EventQueue::numbers`]; a split run gives such an
    /// observer's parts [`crate::event::CalendarQueue::numbered`]). Off by default: the
    /// plain calendar queue leaves the number out of its entries.
    const PUSH_NUMBERS: bool = false;
    /// The priorities `port` may not start data frames for (its peer's pauses; PAUSE: bit 0)
    /// became `mask` at `at`.
    #[inline(always)]
    fn pause_changed(&mut self, _port: PortId, _mask: u8, _at: Instant) {}
    /// `port` started sending `frame` at `start`; its last bit leaves at `last_bit`.
    #[inline(always)]
    fn tx_start(&mut self, _port: PortId, _frame: &WireFrame, _start: Instant, _last_bit: Instant) {}
    /// The data packet `port` starts next (reported by the [`Observer::tx_start`] that follows
    /// at once) carries `field` as it leaves `port` (a switch's INT record or PINT code
    /// included); only with [`Observer::CC_FIELDS`].
    #[inline(always)]
    fn cc_field(&mut self, _port: PortId, _field: &CcField) {}
    /// `port` received the control frame `frame` (its last bit arrived at `at`).
    #[inline(always)]
    fn control_received(&mut self, _port: PortId, _frame: &ControlFrame, _at: Instant) {}
    /// The flow-control request (`fc_rdy`/XOFF request) of `port` for register set `prio`
    /// became `on` at `at`.
    #[inline(always)]
    fn request_changed(&mut self, _port: PortId, _prio: u8, _on: bool, _at: Instant) {}
    /// Bytes charged to (node, local port, prio) in a switch buffer, or in a host's receive
    /// backlog (local port 0), became `bytes` at `at`.
    #[inline(always)]
    fn buffer_changed(&mut self, _node: NodeId, _local_port: u32, _prio: u8, _bytes: u64, _at: Instant) {}
    /// The bytes queued in `port`'s egress queue `prio` became `bytes` at `at` (a frame
    /// enqueued, dequeued for transmission or discarded).
    #[inline(always)]
    fn queue_changed(&mut self, _port: PortId, _prio: u8, _bytes: u64, _at: Instant) {}
    /// A data frame of `port`'s egress queue `prio` was delivered to its destination at `at`.
    #[inline(always)]
    fn delivered(&mut self, _node: NodeId, _frame: &Frame, _at: Instant) {}
    /// `port` started sending the LLDP frame `frame` (whole Ethernet frame, no FCS) at `start`
    /// (after [`Observer::tx_start`] with [`WireFrame::Lldp`]).
    #[inline(always)]
    fn lldp_tx(&mut self, _port: PortId, _frame: &[u8], _start: Instant) {}
    /// An event due at `at` was handled; what it scheduled was scheduled by `scheduler`
    /// (`sim/order.rs`: 0 the build, node `n` as `n + 1`, then the workloads and the fabric).
    #[inline(always)]
    fn event_handled(&mut self, _at: Instant, _scheduler: u32) {}
    /// An event due at `at` with the tie `tie` (`sim/order.rs`), queued as the `seq`-th push
    /// of this simulator's event queue, is about to be handled: with the instant, the tie
    /// orders the events of the parts of a split run as one simulator orders them (and
    /// `seq`, with [`Observer::taken_in`], those of one instant and tie).
    #[inline(always)]
    fn event_start(&mut self, _at: Instant, _tie: u64, _seq: u64) {}
    /// In a part of a split run, a frame another part sent on a cut link was queued with the
    /// tie `tie` as the `seq`-th push of this part's event queue; `origin` is its place among
    /// the events its sender scheduled (twice the sender's pushes before it: see
    /// `trace::split`), which orders it among the events of its instant and tie.
    #[inline(always)]
    fn taken_in(&mut self, _seq: u64, _tie: u64, _origin: u64) {}
}

/// The observer that observes nothing (zero cost).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    const BUFFER_STATE: bool = false;
}

impl<A: Observer, B: Observer> Observer for (A, B) {
    const PAUSE_STATE: bool = A::PAUSE_STATE || B::PAUSE_STATE;
    const BUFFER_STATE: bool = A::BUFFER_STATE || B::BUFFER_STATE;
    const CC_FIELDS: bool = A::CC_FIELDS || B::CC_FIELDS;
    const PUSH_NUMBERS: bool = A::PUSH_NUMBERS || B::PUSH_NUMBERS;
    fn cc_field(&mut self, port: PortId, field: &CcField) {
        self.0.cc_field(port, field);
        self.1.cc_field(port, field);
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        self.0.pause_changed(port, mask, at);
        self.1.pause_changed(port, mask, at);
    }
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, last_bit: Instant) {
        self.0.tx_start(port, frame, start, last_bit);
        self.1.tx_start(port, frame, start, last_bit);
    }
    fn control_received(&mut self, port: PortId, frame: &ControlFrame, at: Instant) {
        self.0.control_received(port, frame, at);
        self.1.control_received(port, frame, at);
    }
    fn request_changed(&mut self, port: PortId, prio: u8, on: bool, at: Instant) {
        self.0.request_changed(port, prio, on, at);
        self.1.request_changed(port, prio, on, at);
    }
    fn buffer_changed(&mut self, node: NodeId, local_port: u32, prio: u8, bytes: u64, at: Instant) {
        self.0.buffer_changed(node, local_port, prio, bytes, at);
        self.1.buffer_changed(node, local_port, prio, bytes, at);
    }
    fn queue_changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        self.0.queue_changed(port, prio, bytes, at);
        self.1.queue_changed(port, prio, bytes, at);
    }
    fn delivered(&mut self, node: NodeId, frame: &Frame, at: Instant) {
        self.0.delivered(node, frame, at);
        self.1.delivered(node, frame, at);
    }
    fn lldp_tx(&mut self, port: PortId, frame: &[u8], start: Instant) {
        self.0.lldp_tx(port, frame, start);
        self.1.lldp_tx(port, frame, start);
    }
    fn event_handled(&mut self, at: Instant, scheduler: u32) {
        self.0.event_handled(at, scheduler);
        self.1.event_handled(at, scheduler);
    }
    fn event_start(&mut self, at: Instant, tie: u64, seq: u64) {
        self.0.event_start(at, tie, seq);
        self.1.event_start(at, tie, seq);
    }
    fn taken_in(&mut self, seq: u64, tie: u64, origin: u64) {
        self.0.taken_in(seq, tie, origin);
        self.1.taken_in(seq, tie, origin);
    }
}

impl<T: Observer> Observer for Option<T> {
    const PAUSE_STATE: bool = T::PAUSE_STATE;
    const BUFFER_STATE: bool = T::BUFFER_STATE;
    const CC_FIELDS: bool = T::CC_FIELDS;
    const PUSH_NUMBERS: bool = T::PUSH_NUMBERS;
    fn cc_field(&mut self, port: PortId, field: &CcField) {
        if let Some(o) = self {
            o.cc_field(port, field);
        }
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        if let Some(o) = self {
            o.pause_changed(port, mask, at);
        }
    }
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, last_bit: Instant) {
        if let Some(o) = self {
            o.tx_start(port, frame, start, last_bit);
        }
    }
    fn control_received(&mut self, port: PortId, frame: &ControlFrame, at: Instant) {
        if let Some(o) = self {
            o.control_received(port, frame, at);
        }
    }
    fn request_changed(&mut self, port: PortId, prio: u8, on: bool, at: Instant) {
        if let Some(o) = self {
            o.request_changed(port, prio, on, at);
        }
    }
    fn buffer_changed(&mut self, node: NodeId, local_port: u32, prio: u8, bytes: u64, at: Instant) {
        if let Some(o) = self {
            o.buffer_changed(node, local_port, prio, bytes, at);
        }
    }
    fn queue_changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        if let Some(o) = self {
            o.queue_changed(port, prio, bytes, at);
        }
    }
    fn delivered(&mut self, node: NodeId, frame: &Frame, at: Instant) {
        if let Some(o) = self {
            o.delivered(node, frame, at);
        }
    }
    fn lldp_tx(&mut self, port: PortId, frame: &[u8], start: Instant) {
        if let Some(o) = self {
            o.lldp_tx(port, frame, start);
        }
    }
    fn event_start(&mut self, at: Instant, tie: u64, seq: u64) {
        if let Some(o) = self {
            o.event_start(at, tie, seq);
        }
    }
    fn taken_in(&mut self, seq: u64, tie: u64, origin: u64) {
        if let Some(o) = self {
            o.taken_in(seq, tie, origin);
        }
    }
    fn event_handled(&mut self, at: Instant, scheduler: u32) {
        if let Some(o) = self {
            o.event_handled(at, scheduler);
        }
    }
}
