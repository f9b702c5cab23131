//! The one list of hook points: every place the data path (`sim/fabric/`) and the event
//! dispatch reach an optional feature. Each hook tests the flag that says whether the feature
//! is on here, so that a run without it pays that test and nothing more, then calls the
//! feature. The features' entry points are visible only inside `sim/features/`, so the
//! compiler keeps the data path from calling them any other way.
//!
//! To add a feature: its state and code in a folder or file under `sim/features/`, its
//! configuration in `config`/`scenario`, and one call per hook point it needs here (a new
//! hook point is a new method here and one call in `sim/fabric/`).

use crate::event::EventQueue;
use crate::frame::{FlowId, Frame, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::features::cn::dequeued_cn;
use crate::sim::{Event, Port, Simulator};

/// Dequeue: a frame leaves queue `q` of `port` for the transmitter. A QP's packet frees its
/// NIC queue slot (`qp.rs`); an ECN marker deciding at dequeue may mark it (`cn.rs`).
#[inline(always)]
pub(in crate::sim) fn dequeued(port: &mut Port, q: u8, frame: &mut Frame) {
    if port.staged | port.cn_deq != 0 {
        dequeued_cn(port, q, frame);
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Enqueue at a switch port with ECN markers deciding at enqueue or QCN congestion points
    /// (`Port::cn_enq` set): marks, queues and feeds the congestion point (`cn.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_enqueue_cn(&mut self, p: PortId, frame: Frame) -> bool {
        self.enqueue_cn(p, frame)
    }

    /// Enqueue: `frame` joined an egress queue of `p`. Victim accounting (`victims.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_enqueued(&mut self, p: PortId, frame: &Frame) {
        if self.patho.victims.is_some() {
            self.victims_enqueued(p, frame);
        }
    }

    /// Before data: the transmitter of `p` is idle and no control frame is due. An LLDPDU of
    /// DCBX goes first (`dcbx.rs`), then the NIC serves its reply queue and QPs (`qp.rs`).
    /// True when one of them started a frame. The caller passes the port's flags it holds:
    /// `lldp` its `lldp_queued`, `nic` whether its `pull` or `reply_first` is set.
    #[inline(always)]
    pub(in crate::sim) fn hook_before_data(&mut self, p: PortId, lldp: bool, nic: bool) -> bool {
        if lldp && self.start_lldp(p) {
            return true;
        }
        nic && self.nic_service(p)
    }

    /// Transmitting: `frame` was dequeued at `p` and is about to start. A switch stamps the
    /// INT record of an HPCC QP's data packet or PINT's code (`hpcc.rs`); victim accounting.
    /// The caller passes the port's `int_stamp`.
    #[inline(always)]
    pub(in crate::sim) fn hook_transmitting(&mut self, p: PortId, int_stamp: bool, frame: &Frame) {
        if int_stamp {
            self.telemetry_transmitting(p, frame);
        }
        if self.patho.victims.is_some() {
            self.victims_dequeued(p, frame);
        }
    }

    /// Arrival at `p` from `peer`: the frame is lost on a link that went down (`topo.rs`) or
    /// discarded by the FCS check after the link corrupted it (`link_errors.rs`). True when
    /// it was. `on_arrive` asks only while one of the two can be (the wire's `wire_lost` is
    /// above 0 or link errors are on): a new reason to lose a frame here must join that test.
    #[inline(always)]
    pub(in crate::sim) fn hook_lost_on_wire(&mut self, p: PortId, peer: PortId) -> bool {
        if self.ports[peer as usize].wire_lost > 0 {
            self.lost_arrival(p);
            return true;
        }
        self.link_errors.on && self.corrupted_on_arrival(p, peer)
    }

    /// Arrival of an LLDPDU at `p` from `peer`: the DCBX agent takes it (`dcbx.rs`).
    pub(in crate::sim) fn hook_lldp_arrived(&mut self, p: PortId, peer: PortId) {
        if let Some(frame) = self.ports[peer as usize].lldp_wire.pop_front() {
            self.lldp_received(p, &frame);
        }
    }

    /// Switch admission: `frame` came in on `p` and is routed to `out`; a link down or a
    /// pfcwd drop action on either drops it (`topo.rs`, `pfcwd.rs`). True when dropped.
    #[inline(always)]
    pub(in crate::sim) fn hook_switch_fault(&mut self, p: PortId, out: PortId, frame: Frame) -> bool {
        self.patho.faults && self.fault_drop(p, out, frame)
    }

    /// Switch admission raised XOFF for (`p`, `prio`) at `node`: victim attribution.
    #[inline(always)]
    pub(in crate::sim) fn hook_xoff(&mut self, node: NodeId, p: PortId, prio: u8) {
        self.victims_xoff(node, p, prio);
    }

    /// A host's receiver raises (`on`) or releases its flow-control request at `p`: NIC storm
    /// prevention may hold it back (`storm.rs`; true then), victims see a receiver's XOFF.
    #[inline(always)]
    pub(in crate::sim) fn hook_host_request(&mut self, p: PortId, on: bool) -> bool {
        if self.prevention_gate(p, on) {
            return true;
        }
        if on {
            self.victims_receiver_xoff(p);
        }
        false
    }

    /// Deliver: a RoCEv2 frame or CNM reached host `node` (`qp.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_deliver_roce(&mut self, node: NodeId, frame: Frame) {
        self.roce_receive(node, frame);
    }

    /// Emit: flow `f` is a QP, which the NIC pulls (`qp.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_emit_qp(&mut self, f: FlowId) {
        self.qp_on_emit(f);
    }

    /// A flow was created during the run: victim accounting learns it.
    #[inline(always)]
    pub(in crate::sim) fn hook_flow_added(&mut self, f: FlowId) {
        self.victims_add_flow(f);
    }

    /// Timer: port `p`'s DCBX agent has a deadline (`dcbx.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_dcbx_timer(&mut self, p: PortId) {
        self.on_dcbx_timer(p);
    }

    /// Timer: a pathology part's deadline (`pathology/mod.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_pathology_timer(&mut self, x: u32) {
        self.on_pathology(x);
    }

    /// Timer: the sender's engines of QP `f` have a deadline (`qp.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_qp_timer(&mut self, f: FlowId) {
        self.on_qp_timer(f);
    }

    /// Timer: the receiver's notification point of QP `f` has a deadline (`qp.rs`).
    #[inline(always)]
    pub(in crate::sim) fn hook_np_timer(&mut self, f: FlowId) {
        self.on_np_timer(f);
    }
}
