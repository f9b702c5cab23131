//! What HPCC, HPCC-PINT and TIMELY carry in their packets beside the RoCEv2 headers (MODEL.md
//! §9.4): HPCC's INT field, which every switch port stamps into each data packet of an HPCC QP
//! as it dequeues it (§9.5), PINT's code, which every switch port raises to its own
//! utilisation estimate's (§9.6; the estimate, one per switch port, sees every frame the port
//! sends), and TIMELY's send timestamp (§9.7); the receiver copies the packet's field onto its
//! reply, and the sender's engine reads it (`qp.rs`).
//!
//! Frames stay 32-byte handles: the fields live beside the QP, in two rings indexed by PSN —
//! one for data packets (written at the sender, stamped at each switch, read at the
//! receiver), one for replies (written at the receiver, read at the sender). Live PSNs lie
//! between the oldest unacknowledged packet and the next one to send, so rings of at least
//! twice that many slots never reuse a slot still in use: they are allocated at the QP's first
//! packet for its window (HPCC always has one; 49 kB for the k = 4 fat tree's 156 kB window),
//! doubled, live entries moved over, when the packets outstanding outgrow them (TIMELY without
//! a window: while the QP warms up, then never), and freed when the QP completes, so only
//! QPs under way hold them. (A
//! go-back-N retransmission restarts the slot of its PSN while an older copy may still be in
//! flight; the fork's runs of these modes drop nothing, so none happens there.)

use lossless_proto::flow_control::{Framing, NS3_PFC_FRAME_BYTES};
use lossless_wire::int::{IntHeader, IntHop};
use lossless_wire::pint::{PintField, PintWidth};

use crate::event::EventQueue;
use crate::frame::{Frame, FrameKind, PSN_MASK, PortId};
use crate::observer::{CcField, Observer};
use crate::sim::{Event, Simulator};

/// A per-PSN field of one QP's data packets and replies. Empty until the QP sends its first
/// packet and again once it completed, so that only QPs under way hold memory.
pub(crate) struct PsnRings<T: Copy + Default> {
    data: Vec<T>,
    replies: Vec<T>,
    mask: u32,
    /// Packets outstanding expected at most (the window's), the first allocation's size.
    expected: u64,
    /// The newest PSN written: the rings hold the PSNs up to their size before it.
    newest: u32,
}

impl<T: Copy + Default> PsnRings<T> {
    /// Rings for a QP expected to have at most `packets` packets outstanding (allocated at
    /// its first packet).
    pub(crate) fn new(packets: u64) -> Self {
        PsnRings {
            data: Vec::new(),
            replies: Vec::new(),
            mask: 0,
            expected: packets,
            newest: 0,
        }
    }
    /// Frees the rings (the QP completed; late copies of its packets find nothing).
    pub(crate) fn release(&mut self) {
        self.data = Vec::new();
        self.replies = Vec::new();
        self.mask = 0;
    }
    fn slots_for(packets: u64) -> usize {
        (packets.saturating_add(2).saturating_mul(2))
            .clamp(8, 1 << 24)
            .next_power_of_two() as usize
    }
    /// A packet of `psn` leaves the sender with `v`, `outstanding` packets (itself included)
    /// not yet acknowledged.
    pub(crate) fn sent(&mut self, psn: u32, v: T, outstanding: u64) {
        if self.data.is_empty() {
            let n = Self::slots_for(self.expected.max(outstanding));
            self.data = vec![T::default(); n];
            self.replies = vec![T::default(); n];
            self.mask = (n - 1) as u32;
            self.newest = psn;
        } else if Self::slots_for(outstanding) > self.data.len() {
            self.grow(psn, outstanding);
        }
        self.data[(psn & self.mask) as usize] = v;
        self.note_newest(psn);
    }
    /// `psn` was written: the newest, if newer in serial order (less than half the PSN space
    /// ahead; a retransmission is older).
    fn note_newest(&mut self, psn: u32) {
        if psn.wrapping_sub(self.newest) & PSN_MASK < PSN_MASK / 2 {
            self.newest = psn;
        }
    }
    /// Doubles the rings until they hold `outstanding` packets, moving the live PSNs (those up
    /// to `outstanding` before `psn`).
    fn grow(&mut self, psn: u32, outstanding: u64) {
        let live = outstanding.min(u64::from(self.mask) + 1) as u32;
        self.grow_to_moving(psn, Self::slots_for(outstanding), live);
    }
    /// Grows the rings to `n` slots, moving the `live + 1` PSNs up to `psn`.
    fn grow_to_moving(&mut self, psn: u32, n: usize, live: u32) {
        let mask = (n - 1) as u32;
        let mut data = vec![T::default(); n];
        let mut replies = vec![T::default(); n];
        for k in 0..=live {
            let q = psn.wrapping_sub(k) & PSN_MASK;
            data[(q & mask) as usize] = self.data[(q & self.mask) as usize];
            replies[(q & mask) as usize] = self.replies[(q & self.mask) as usize];
        }
        self.data = data;
        self.replies = replies;
        self.mask = mask;
    }
    /// The field of the data packet (`reply`: the reply) of `psn` and the rings' size, if
    /// they are allocated.
    fn carried(&self, psn: u32, reply: bool) -> Option<(T, u32)> {
        let ring = if reply { &self.replies } else { &self.data };
        ring.get((psn & self.mask) as usize)
            .map(|&v| (v, ring.len() as u32))
    }
    /// Writes `v`, which a frame brought across a cut link, as the field of the data packet
    /// (`reply`: the reply) of `psn`, the rings allocated or grown to `slots` first (the
    /// size its sender's rings had).
    ///
    /// Growing keeps every PSN the rings hold — those up to their size before the newest
    /// written, not before `psn`: a reply that grows them is older than the data packets
    /// already in.
    fn carry_in(&mut self, psn: u32, reply: bool, v: T, slots: u32) {
        let slots = (slots as usize).clamp(8, 1 << 24).next_power_of_two();
        if self.data.is_empty() {
            self.data = vec![T::default(); slots];
            self.replies = vec![T::default(); slots];
            self.mask = (slots - 1) as u32;
            self.newest = psn;
        } else if slots > self.data.len() {
            self.grow_to_moving(self.newest, slots, self.mask);
        }
        self.note_newest(psn);
        let ring = if reply { &mut self.replies } else { &mut self.data };
        ring[(psn & self.mask) as usize] = v;
    }
    /// The data packet of `psn`'s field (the default once released).
    fn data(&self, psn: u32) -> T {
        self.data
            .get((psn & self.mask) as usize)
            .copied()
            .unwrap_or_default()
    }
    /// The data packet of `psn`'s field (`None` once released).
    fn data_mut(&mut self, psn: u32) -> Option<&mut T> {
        self.data.get_mut((psn & self.mask) as usize)
    }
    /// The receiver answers the packet of `data_psn` with a reply of `reply_psn`: the reply
    /// carries a copy of the packet's field.
    pub(crate) fn echo(&mut self, data_psn: u32, reply_psn: u32) {
        if let Some(&v) = self.data.get((data_psn & self.mask) as usize)
            && let Some(r) = self.replies.get_mut((reply_psn & self.mask) as usize)
        {
            *r = v;
        }
    }
    /// The field the reply of `psn` carries (the default once released).
    pub(crate) fn reply(&self, psn: u32) -> T {
        self.replies
            .get((psn & self.mask) as usize)
            .copied()
            .unwrap_or_default()
    }
}

/// The fields a QP's packets carry: HPCC's INT (with the unit multiplier its switches stamp
/// with), PINT's code or TIMELY's send timestamp (ns).
pub(crate) enum Telemetry {
    /// HPCC.
    Int {
        /// The rings.
        rings: PsnRings<IntHeader>,
        /// `INT_MULTI`.
        multi: u32,
    },
    /// HPCC-PINT.
    Pint(PsnRings<PintField>),
    /// TIMELY.
    Timestamp(PsnRings<u64>),
}

impl Telemetry {
    /// A packet of `psn` leaves the sender at `now_ns` with `outstanding` packets unacknowledged.
    pub(crate) fn sent(&mut self, psn: u32, now_ns: u64, outstanding: u64) {
        match self {
            Telemetry::Int { rings, .. } => rings.sent(psn, IntHeader::default(), outstanding),
            Telemetry::Pint(rings) => rings.sent(psn, PintField::default(), outstanding),
            Telemetry::Timestamp(rings) => rings.sent(psn, now_ns, outstanding),
        }
    }
    /// The receiver answers the packet of `data_psn` with a reply of `reply_psn`.
    pub(crate) fn echo(&mut self, data_psn: u32, reply_psn: u32) {
        match self {
            Telemetry::Int { rings, .. } => rings.echo(data_psn, reply_psn),
            Telemetry::Pint(rings) => rings.echo(data_psn, reply_psn),
            Telemetry::Timestamp(rings) => rings.echo(data_psn, reply_psn),
        }
    }
    /// The QP completed: its rings are freed.
    pub(crate) fn release(&mut self) {
        match self {
            Telemetry::Int { rings, .. } => rings.release(),
            Telemetry::Pint(rings) => rings.release(),
            Telemetry::Timestamp(rings) => rings.release(),
        }
    }
}

/// What a frame carries beside it across a cut link of a split run (`partition.rs`): the field
/// of an HPCC, HPCC-PINT or TIMELY QP's frame with the size of the rings it came from, or an
/// LLDPDU's bytes (the only variant that owns memory: data frames never allocate here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Carried {
    /// No field (another kind of frame or QP, or rings already released).
    #[default]
    None,
    /// HPCC's INT field.
    Int {
        /// The field.
        header: IntHeader,
        /// Slots of the sender's rings.
        slots: u32,
    },
    /// HPCC-PINT's code.
    Pint {
        /// The field.
        field: PintField,
        /// Slots of the sender's rings.
        slots: u32,
    },
    /// TIMELY's send timestamp (ns).
    Stamp {
        /// The timestamp.
        ns: u64,
        /// Slots of the sender's rings.
        slots: u32,
    },
    /// The bytes of the LLDPDU a [`crate::observer::WireFrame::Lldp`] stands for (DCBX,
    /// without FCS), which one simulator keeps in the sending port's `lldp_wire`.
    Lldp(Box<[u8]>),
}

/// Whether `frame` carries its QP's field: in the data ring (data) or the replies' (`true`).
fn ring_of(frame: &Frame) -> Option<bool> {
    match frame.kind {
        FrameKind::RoceData => Some(false),
        FrameKind::Ack | FrameKind::Nak | FrameKind::Sack => Some(true),
        _ => None,
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Data packet `frame` starts on `p`: the observer gets the field it carries, if its QP
    /// has one (only with `Observer::CC_FIELDS`: a trace that writes the field's bytes).
    pub(in crate::sim) fn observe_cc_field(&mut self, p: PortId, frame: &Frame) {
        let Some(qp) = self.flows[frame.flow as usize].qp.as_deref() else {
            return;
        };
        let field = match qp.telemetry.as_deref() {
            Some(Telemetry::Int { rings, .. }) => CcField::Int(rings.data(frame.psn())),
            Some(Telemetry::Pint(rings)) => CcField::Pint(
                rings.data(frame.psn()),
                if qp.int_bytes == 1 {
                    PintWidth::One
                } else {
                    PintWidth::Two
                },
            ),
            Some(Telemetry::Timestamp(rings)) => CcField::Timestamp(rings.data(frame.psn())),
            None => return,
        };
        self.observer.cc_field(p, &field);
    }

    /// Switch port `p` (one that stamps) starts to send `frame`, just dequeued: HPCC's INT
    /// record or PINT's code for a data packet; PINT's estimate also notes every other frame.
    pub(in crate::sim::features) fn telemetry_transmitting(&mut self, p: PortId, frame: &Frame) {
        // a data packet of a QP that is not PINT's (HPCC's, in a scenario that mixes them)
        // gets its INT record all the same
        let pint_packet = self.ports[p as usize].pint.is_some() && self.pint_stamp(p, frame);
        if !pint_packet && frame.kind == FrameKind::RoceData {
            self.int_stamp(p, frame);
        }
    }

    /// PINT switch port `p` sends a frame of `len` bytes that is not a data packet (a reply,
    /// a PFC frame): it becomes the estimate's previous frame.
    pub(in crate::sim) fn pint_other_frame(&mut self, p: PortId, len: u64) {
        let now_ns = (self.now.as_ps() / 1_000) as u64;
        let port = &mut self.ports[p as usize];
        let qlen = port.queues.iter().map(|q| q.bytes).sum();
        if let Some(pint) = port.pint.as_deref_mut() {
            pint.on_dequeue(now_ns, qlen, len, false);
        }
    }

    /// PINT switch port `p` starts to send `frame`: a data packet (of any QP: the fork's
    /// switches stamp every UDP packet) updates the port's estimate, and a PINT QP's packet
    /// gets its code raised; any frame becomes the estimate's previous one. Whether `frame`
    /// was a PINT QP's data packet.
    fn pint_stamp(&mut self, p: PortId, frame: &Frame) -> bool {
        if frame.kind != FrameKind::RoceData {
            self.pint_other_frame(p, u64::from(frame.len));
            return false;
        }
        let now_ns = (self.now.as_ps() / 1_000) as u64;
        let port = &mut self.ports[p as usize];
        let qlen = port.queues.iter().map(|q| q.bytes).sum();
        let Some(pint) = port.pint.as_deref_mut() else {
            return false;
        };
        let len = u64::from(frame.len);
        let field = self.flows[frame.flow as usize].qp.as_deref_mut().and_then(|qp| {
            match qp.telemetry.as_deref_mut() {
                Some(Telemetry::Pint(rings)) => rings.data_mut(frame.psn()),
                _ => None,
            }
        });
        match field {
            Some(f) => {
                pint.stamp(f, now_ns, qlen, len);
                true
            }
            None => {
                pint.on_dequeue(now_ns, qlen, len, true);
                false
            }
        }
    }

    /// Switch port `p` starts to send `frame`, just dequeued: a data packet of an HPCC QP
    /// gets this port's record (now in ns, the bytes the port sent before it — data, replies
    /// and PFC frames, a PFC frame counted once per priority it names —, its egress queues'
    /// bytes after it left, its rate).
    fn int_stamp(&mut self, p: PortId, frame: &Frame) {
        let now_ns = (self.now.as_ps() / 1_000) as u64;
        let port = &self.ports[p as usize];
        let pfc_len = match port.mac.config().framing {
            Framing::Ns3 => NS3_PFC_FRAME_BYTES,
            Framing::Ieee8023 => lossless_proto::flow_control::CONTROL_FRAME_BYTES,
        };
        let st = port.counts();
        let mut tx = (st.pause_xoff_tx + st.pause_xon_tx) * pfc_len;
        let mut qlen = 0;
        for (s, q) in st.prio.iter().zip(port.queues.iter()) {
            tx += q.sent_bytes + (s.pfc_xoff_tx + s.pfc_xon_tx) * pfc_len;
            qlen += q.bytes;
        }
        let rate = port.rate.bps();
        let Some(qp) = self.flows[frame.flow as usize].qp.as_deref_mut() else {
            return;
        };
        if let Some(Telemetry::Int { rings, multi }) = qp.telemetry.as_deref_mut()
            && let Some(int) = rings.data_mut(frame.psn())
        {
            int.push(IntHop::stamp(now_ns, tx, qlen, rate, *multi));
        }
    }

    /// The field `frame` carries as it leaves on a cut link.
    pub(in crate::sim) fn telemetry_out(&self, frame: &Frame) -> Carried {
        let Some(reply) = ring_of(frame) else {
            return Carried::None;
        };
        let Some(qp) = self.flows[frame.flow as usize].qp.as_deref() else {
            return Carried::None;
        };
        match qp.telemetry.as_deref() {
            Some(Telemetry::Int { rings, .. }) => rings
                .carried(frame.psn(), reply)
                .map_or(Carried::None, |(header, slots)| Carried::Int { header, slots }),
            Some(Telemetry::Pint(rings)) => rings
                .carried(frame.psn(), reply)
                .map_or(Carried::None, |(field, slots)| Carried::Pint { field, slots }),
            Some(Telemetry::Timestamp(rings)) => rings
                .carried(frame.psn(), reply)
                .map_or(Carried::None, |(ns, slots)| Carried::Stamp { ns, slots }),
            None => Carried::None,
        }
    }

    /// `frame` came in across a cut link with `c`: its field goes into this partition's copy
    /// of the QP's rings — unless this partition holds the QP's sender and its rings are
    /// released (the QP completed: as in one simulator, late frames find nothing).
    pub(in crate::sim) fn telemetry_in(&mut self, frame: &Frame, c: &Carried, holds_sender: bool) {
        let Some(reply) = ring_of(frame) else {
            return;
        };
        let Some(qp) = self.flows[frame.flow as usize].qp.as_deref_mut() else {
            return;
        };
        let psn = frame.psn();
        match (qp.telemetry.as_deref_mut(), c) {
            (Some(Telemetry::Int { rings, .. }), Carried::Int { header, slots })
                if !(holds_sender && rings.data.is_empty()) =>
            {
                rings.carry_in(psn, reply, *header, *slots);
            }
            (Some(Telemetry::Pint(rings)), Carried::Pint { field, slots })
                if !(holds_sender && rings.data.is_empty()) =>
            {
                rings.carry_in(psn, reply, *field, *slots);
            }
            (Some(Telemetry::Timestamp(rings)), Carried::Stamp { ns, slots })
                if !(holds_sender && rings.data.is_empty()) =>
            {
                rings.carry_in(psn, reply, *ns, *slots);
            }
            _ => {}
        }
    }
}
