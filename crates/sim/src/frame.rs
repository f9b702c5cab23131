//! Frames as the simulator carries them: small `Copy` handles, never bytes. Bytes are built
//! only by sinks that need them (a pcap writer).
//!
//! A frame is a plain data frame of a flow without a transport (as every frame was before
//! congestion notification), or one of the RoCEv2 packets of a QP (data, ACK, NAK, selective
//! ACK, CNP) or an 802.1Qau CNM. The handle stays 32 bytes: the 64-bit `id` of a plain frame
//! (which only feeds the pcap payload) holds, for the other kinds, their sequence numbers and
//! feedback (see the accessors).

/// Index of a port in the simulation (all ports of all nodes, numbered from 0).
pub type PortId = u32;
/// Index of a node (host or switch).
pub type NodeId = u32;
/// Index of a flow.
pub type FlowId = u32;

/// "No port": the frame was generated on this node.
pub const NO_PORT: PortId = u32::MAX;

/// What a frame is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum FrameKind {
    /// A data frame of a flow without a transport (an Ethernet frame with the experimental
    /// EtherType; the flow's sender is its source).
    #[default]
    Plain,
    /// A RoCEv2 data packet of a QP (requester → responder).
    RoceData,
    /// A RoCEv2 ACK (AETH syndrome ACK), responder → requester.
    Ack,
    /// A RoCEv2 NAK (PSN sequence error), responder → requester.
    Nak,
    /// A selective ACK of IRN (cumulative and selectively acknowledged PSN), responder →
    /// requester.
    Sack,
    /// A RoCEv2 congestion notification packet (BTH opcode 0x81), notification point →
    /// reaction point (responder host → requester host).
    Cnp,
    /// An 802.1Qau congestion notification message, congestion point (a switch) → the source
    /// of the sampled frame.
    Cnm,
}

impl FrameKind {
    /// All kinds, in reporting order.
    pub const ALL: [FrameKind; 7] = [
        FrameKind::Plain,
        FrameKind::RoceData,
        FrameKind::Ack,
        FrameKind::Nak,
        FrameKind::Sack,
        FrameKind::Cnp,
        FrameKind::Cnm,
    ];
    /// The name used in reports and JSON keys.
    pub const fn name(self) -> &'static str {
        match self {
            FrameKind::Plain => "plain",
            FrameKind::RoceData => "roce_data",
            FrameKind::Ack => "ack",
            FrameKind::Nak => "nak",
            FrameKind::Sack => "sack",
            FrameKind::Cnp => "cnp",
            FrameKind::Cnm => "cnm",
        }
    }
    /// Whether the frame carries a flow's payload (plain data or RoCEv2 data).
    pub const fn is_data(self) -> bool {
        matches!(self, FrameKind::Plain | FrameKind::RoceData)
    }
    /// Whether the frame goes from a flow's receiver back towards its sender (replies,
    /// CNPs) rather than along the flow.
    pub const fn is_reverse(self) -> bool {
        matches!(
            self,
            FrameKind::Ack | FrameKind::Nak | FrameKind::Sack | FrameKind::Cnp
        )
    }
}

/// The two ECN bits of the IP header (RFC 3168 code points).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// 00: not ECN-capable (never marked).
    #[default]
    NotEct = 0,
    /// 01: ECN-capable transport (1).
    Ect1 = 1,
    /// 10: ECN-capable transport (0), what RoCEv2 NICs send.
    Ect0 = 2,
    /// 11: congestion experienced (marked by a switch).
    Ce = 3,
}

impl Ecn {
    /// Whether a switch may mark the frame (ECT(0) or ECT(1); CE is already marked).
    pub const fn is_capable(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// Flag bits of [`Frame::flags`].
pub mod flags {
    /// RoCEv2 data: first packet of the message.
    pub const FIRST: u8 = 1 << 0;
    /// RoCEv2 data: last packet of the message.
    pub const LAST: u8 = 1 << 1;
    /// RoCEv2 data: the BTH AckReq bit.
    pub const ACK_REQ: u8 = 1 << 2;
    /// RoCEv2 data: a retransmission.
    pub const RETRANSMISSION: u8 = 1 << 3;
    /// ACK/NAK/SACK: carries the CNP flag of the reply (the HPCC ns-3 notification point's
    /// way of echoing a CE mark).
    pub const CNP: u8 = 1 << 4;
    /// Where the IP ECN field sits: the top two bits, free in every kind (a CNM's feedback
    /// takes bits 0..=5).
    pub const ECN_SHIFT: u32 = 6;
    /// The IP ECN field's bits.
    pub const ECN_MASK: u8 = 0b11 << ECN_SHIFT;
}

/// Largest 24-bit packet sequence number.
pub const PSN_MASK: u32 = 0x00FF_FFFF;

/// A frame in flight or queued: a handle with everything the model needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Plain frames: unique, increasing with injection order (it only feeds the pcap
    /// payload). Other kinds: their fields, read through the accessors ([`Frame::psn`],
    /// [`Frame::packet_index`], [`Frame::msn`], [`Frame::sack_psn`], [`Frame::cnm_feedback`]).
    pub id: u64,
    /// The flow this frame belongs to (replies, CNPs and CNMs: the flow they are about).
    pub flow: FlowId,
    /// Ethernet frame length in bytes, header and FCS included (no preamble or IFG).
    pub len: u32,
    /// Port the frame entered the current node by, [`NO_PORT`] at the node that made it.
    pub ingress: PortId,
    /// Node that made the frame (a host; a switch for a CNM).
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// 802.1Q priority code point (0..=7).
    pub priority: u8,
    /// What the frame is.
    pub kind: FrameKind,
    /// Kind-specific bits, see [`flags`] (a CNM's 6-bit quantised feedback), and in the top
    /// two bits the IP ECN field (read with [`Frame::ecn`]).
    pub flags: u8,
    /// Switches the frame has entered so far (its hop limit counter; the index of its hop
    /// on its flow's path: 0 in the source NIC, 1 at the first switch).
    pub hops: u8,
}

impl Frame {
    /// A RoCEv2 data packet: `psn` (24 bits), the `index`-th packet of its message (40 bits;
    /// its byte offset is `index` × the QP's MTU).
    #[allow(clippy::too_many_arguments)]
    pub fn roce_data(
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        len: u32,
        priority: u8,
        psn: u32,
        index: u64,
        flags: u8,
        ecn: Ecn,
    ) -> Frame {
        Frame {
            id: u64::from(psn & PSN_MASK) | (index & ((1 << 40) - 1)) << 24,
            flow,
            len,
            ingress: NO_PORT,
            src,
            dst,
            priority,
            kind: FrameKind::RoceData,
            flags: (flags & !flags::ECN_MASK) | (ecn as u8) << flags::ECN_SHIFT,
            hops: 0,
        }
    }

    /// A reply (ACK, NAK or SACK) or CNP from `src` to `dst` about `flow`: `psn` (ACK/NAK: the
    /// acknowledged or expected PSN; SACK: the cumulative PSN), `sack_psn` (SACK only), `msn`
    /// (16 bits are kept: one message per QP).
    #[allow(clippy::too_many_arguments)]
    pub fn reply(
        kind: FrameKind,
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        len: u32,
        priority: u8,
        psn: u32,
        sack_psn: u32,
        msn: u32,
        flags: u8,
    ) -> Frame {
        Frame {
            id: u64::from(psn & PSN_MASK)
                | u64::from(sack_psn & PSN_MASK) << 24
                | u64::from(msn & 0xFFFF) << 48,
            flow,
            len,
            ingress: NO_PORT,
            src,
            dst,
            priority,
            kind,
            flags: flags & !flags::ECN_MASK,
            hops: 0,
        }
    }

    /// A CNM from congestion point `cp_node` (a switch, egress port index `cp_port`) to host
    /// `dst` about `flow`, sent on `priority`, with what the CNM PDU carries: the 6-bit
    /// quantised feedback, the CP's queue offset and delta, and the sampled frame's priority.
    #[allow(clippy::too_many_arguments)]
    pub fn cnm(
        flow: FlowId,
        cp_node: NodeId,
        cp_port: u32,
        dst: NodeId,
        len: u32,
        priority: u8,
        qntz_fb: u8,
        q_offset: i16,
        q_delta: i16,
        sampled_priority: u8,
    ) -> Frame {
        Frame {
            id: u64::from(q_offset as u16)
                | u64::from(q_delta as u16) << 16
                | u64::from(cp_port & 0xFFFF) << 32
                | u64::from(sampled_priority & 7) << 48,
            flow,
            len,
            ingress: NO_PORT,
            src: cp_node,
            dst,
            priority,
            kind: FrameKind::Cnm,
            flags: qntz_fb & 0x3F,
            hops: 0,
        }
    }

    /// The 24-bit PSN (RoCEv2 data, ACK, NAK; a SACK's cumulative PSN).
    pub const fn psn(&self) -> u32 {
        (self.id & PSN_MASK as u64) as u32
    }
    /// The index of a RoCEv2 data packet in its message (0 for the first).
    pub const fn packet_index(&self) -> u64 {
        self.id >> 24
    }
    /// The selectively acknowledged PSN of a SACK.
    pub const fn sack_psn(&self) -> u32 {
        ((self.id >> 24) & PSN_MASK as u64) as u32
    }
    /// The MSN of a reply.
    pub const fn msn(&self) -> u32 {
        (self.id >> 48) as u32
    }
    /// What a CNM carries.
    pub const fn cnm_feedback(&self) -> CnmFields {
        CnmFields {
            qntz_fb: self.flags & 0x3F,
            q_offset: self.id as u16 as i16,
            q_delta: (self.id >> 16) as u16 as i16,
            cp_port: ((self.id >> 32) & 0xFFFF) as u32,
            sampled_priority: ((self.id >> 48) & 7) as u8,
        }
    }
    /// The IP ECN field (RoCEv2 kinds; plain frames and CNMs are not IP: `NotEct`).
    pub const fn ecn(&self) -> Ecn {
        match (self.flags & flags::ECN_MASK) >> flags::ECN_SHIFT {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// Sets the IP ECN field (a switch marking CE).
    pub const fn set_ecn(&mut self, ecn: Ecn) {
        self.flags = (self.flags & !flags::ECN_MASK) | (ecn as u8) << flags::ECN_SHIFT;
    }
    /// Whether flag bit(s) `f` (see [`flags`]) are set.
    pub const fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// The fields of a CNM frame ([`Frame::cnm_feedback`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CnmFields {
    /// Quantised feedback, 0..=63.
    pub qntz_fb: u8,
    /// The CP's queue offset (its engine's units).
    pub q_offset: i16,
    /// The CP's queue change since its last sample.
    pub q_delta: i16,
    /// Local index of the CP's port at its switch.
    pub cp_port: u32,
    /// Priority of the sampled frame.
    pub sampled_priority: u8,
}

/// Why a frame was dropped. Every drop has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// A lossy priority found its ingress threshold or the shared buffer full (tail drop).
    TailDrop,
    /// A lossless priority overflowed its headroom reserve: the configuration is wrong.
    HeadroomOverflow,
    /// A lossless priority arrived with flow control off and no shared buffer left.
    BufferFull,
    /// A receiving host's input buffer was full.
    ReceiverOverflow,
    /// A switch had no route to the destination.
    NoRoute,
    /// The frame entered more switches than the hop limit allows (a routing loop).
    HopLimit,
    /// The frame was on a link that went down, queued at one of its ports, or routed to it.
    LinkDown,
    /// A PFC watchdog's drop action discarded it (its queue or ingress priority group was
    /// in a storm).
    Pfcwd,
    /// The link corrupted it (its bit error rate) and the receiving MAC's FCS check
    /// discarded it.
    FcsError,
}

impl DropReason {
    /// All reasons, in reporting order.
    pub const ALL: [DropReason; 9] = [
        DropReason::TailDrop,
        DropReason::HeadroomOverflow,
        DropReason::BufferFull,
        DropReason::ReceiverOverflow,
        DropReason::NoRoute,
        DropReason::HopLimit,
        DropReason::LinkDown,
        DropReason::Pfcwd,
        DropReason::FcsError,
    ];
    /// The name used in reports and JSON keys.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::TailDrop => "tail_drop",
            DropReason::HeadroomOverflow => "headroom_overflow",
            DropReason::BufferFull => "buffer_full",
            DropReason::ReceiverOverflow => "receiver_overflow",
            DropReason::NoRoute => "no_route",
            DropReason::HopLimit => "hop_limit",
            DropReason::LinkDown => "link_down",
            DropReason::Pfcwd => "pfcwd",
            DropReason::FcsError => "fcs_error",
        }
    }
    /// What the reason means, for the lossless verdict (a headroom overflow is explained there
    /// with the port's own figures).
    pub const fn explanation(self) -> &'static str {
        match self {
            DropReason::HeadroomOverflow => {
                "headroom overflow: the frame arrived after XOFF and found the priority's headroom full"
            }
            DropReason::BufferFull => {
                "buffer full: the priority arrived with flow control off on this port and no shared buffer was left"
            }
            DropReason::TailDrop => {
                "tail drop: the frame was admitted as lossy (no headroom for this priority here)"
            }
            DropReason::ReceiverOverflow => {
                "receiver overflow: the host's receive buffer was full (its PAUSE/PFC came too late, or it stopped sending them)"
            }
            DropReason::NoRoute => "no route: the switch had no route to the destination",
            DropReason::HopLimit => {
                "hop limit: the frame looped through more switches than the hop limit (a routing loop)"
            }
            DropReason::LinkDown => {
                "link down: the frame was on, queued for or routed to a link that went down"
            }
            DropReason::FcsError => {
                "FCS error: the link corrupted the frame (its bit error rate) and the receiving MAC discarded it; PFC cannot prevent this, a RoCEv2 QP retransmits"
            }
            DropReason::Pfcwd => {
                "PFC watchdog: its drop action discarded the frame of a stormed queue (by design, to break the storm)"
            }
        }
    }
    /// Index into per-reason counter arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_fields_round_trip_through_the_packed_id() {
        let d = Frame::roce_data(
            7,
            1,
            2,
            1066,
            3,
            0xABCDEF,
            123_456_789_012,
            flags::LAST,
            Ecn::Ect0,
        );
        assert_eq!(
            (d.psn(), d.packet_index(), d.kind),
            (0xABCDEF, 123_456_789_012, FrameKind::RoceData)
        );
        assert!(d.has(flags::LAST) && !d.has(flags::FIRST));
        let a = Frame::reply(FrameKind::Sack, 7, 2, 1, 70, 3, 0x123456, 0xFEDCBA, 1, flags::CNP);
        assert_eq!((a.psn(), a.sack_psn(), a.msn()), (0x123456, 0xFEDCBA, 1));
        let c = Frame::cnm(7, 9, 3, 1, 64, 6, 0x2A, -1234, 567, 3);
        assert_eq!(
            c.cnm_feedback(),
            CnmFields {
                qntz_fb: 0x2A,
                q_offset: -1234,
                q_delta: 567,
                cp_port: 3,
                sampled_priority: 3
            }
        );
        // PSNs are 24-bit: higher bits are not kept
        assert_eq!(
            Frame::roce_data(0, 0, 1, 64, 0, 0x1FF_FFFF, 0, 0, Ecn::NotEct).psn(),
            PSN_MASK
        );
    }
}
