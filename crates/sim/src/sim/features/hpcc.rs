//! HPCC's in-band telemetry (MODEL.md §9.5): every switch port stamps an INT record into
//! each data packet of an HPCC QP as it dequeues it, the receiver copies the packet's INT
//! field onto its reply, and the sender's HPCC engine reads it (`qp.rs`).
//!
//! Frames stay 32-byte handles: the INT fields live beside the QP, in two rings indexed by
//! PSN — one for data packets (written at the sender, stamped at each switch, read at the
//! receiver), one for replies (written at the receiver, read at the sender). A QP has at most
//! its window plus one packet of data (and their replies) outstanding, so rings of twice that
//! many slots never reuse a slot still in use; both are allocated with the QP, nothing per
//! event. (A go-back-N retransmission restarts the slot of its PSN while an older copy may
//! still be in flight; the fork's runs of this mode drop nothing, so none happens there.)

use lossless_proto::flow_control::{Framing, NS3_PFC_FRAME_BYTES};
use lossless_wire::int::{IntHeader, IntHop};

use crate::event::EventQueue;
use crate::frame::{Frame, PortId};
use crate::observer::Observer;
use crate::sim::{Event, Simulator};

/// The INT fields of one HPCC QP's packets and replies, by PSN.
pub(crate) struct IntRings {
    data: Box<[IntHeader]>,
    replies: Box<[IntHeader]>,
    mask: u32,
    /// The INT unit multiplier its switches stamp with (`INT_MULTI`).
    pub(crate) multi: u32,
}

impl IntRings {
    /// Rings for a QP with at most `packets` packets outstanding.
    pub(crate) fn new(packets: u64, multi: u32) -> IntRings {
        let n = (packets.saturating_add(2).saturating_mul(2))
            .clamp(8, 1 << 20)
            .next_power_of_two() as usize;
        IntRings {
            data: vec![IntHeader::default(); n].into_boxed_slice(),
            replies: vec![IntHeader::default(); n].into_boxed_slice(),
            mask: (n - 1) as u32,
            multi,
        }
    }
    /// A packet of `psn` leaves the sender: its field starts empty.
    pub(crate) fn sent(&mut self, psn: u32) {
        self.data[(psn & self.mask) as usize] = IntHeader::default();
    }
    /// A switch stamps the packet of `psn`.
    fn stamp(&mut self, psn: u32, hop: IntHop) {
        self.data[(psn & self.mask) as usize].push(hop);
    }
    /// The receiver answers the packet of `data_psn` with a reply of `reply_psn`: the reply
    /// carries a copy of the packet's field.
    pub(crate) fn echo(&mut self, data_psn: u32, reply_psn: u32) {
        self.replies[(reply_psn & self.mask) as usize] = self.data[(data_psn & self.mask) as usize];
    }
    /// The field the reply of `psn` carries.
    pub(crate) fn reply(&self, psn: u32) -> IntHeader {
        self.replies[(psn & self.mask) as usize]
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Switch port `p` starts to send `frame`, just dequeued: a data packet of an HPCC QP
    /// gets this port's record (now in ns, the bytes the port sent before it — data, replies
    /// and PFC frames —, its egress queues' bytes after it left, its rate).
    pub(in crate::sim::features) fn int_stamp(&mut self, p: PortId, frame: &Frame) {
        let now_ns = (self.now.as_ps() / 1_000) as u64;
        let port = &self.ports[p as usize];
        let pfc_len = match port.mac.config().framing {
            Framing::Ns3 => NS3_PFC_FRAME_BYTES,
            Framing::Ieee8023 => lossless_proto::flow_control::CONTROL_FRAME_BYTES,
        };
        let st = &port.stats;
        let mut tx = (st.pause_xoff_tx + st.pause_xon_tx) * pfc_len;
        let mut qlen = 0;
        for (s, q) in st.prio.iter().zip(port.queues.iter()) {
            tx += s.tx_bytes + (s.pfc_xoff_tx + s.pfc_xon_tx) * pfc_len;
            qlen += q.bytes;
        }
        let rate = port.rate.bps();
        let Some(qp) = self.flows[frame.flow as usize].qp.as_deref_mut() else {
            return;
        };
        if let Some(int) = qp.int.as_deref_mut() {
            int.stamp(frame.psn(), IntHop::stamp(now_ns, tx, qlen, rate, int.multi));
        }
    }
}
