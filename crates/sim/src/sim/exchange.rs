//! What crosses between processes when one run is split over MPI ranks (issue 22): the
//! frames sent on cut links ([`Message`], encoded by [`encode_message`] and decoded by
//! [`decode_message`], the one place a message becomes bytes) and, at the end, each
//! partition's [`Digest`]: what the report reads of the state it owns, which the first rank
//! absorbs into its own copies of those ports, nodes and flows ([`Simulator::absorb`]) so
//! that the report collected there is the one-thread run's.
//!
//! The digest holds, of its partition's own ports: counters, egress queues (frames, bytes,
//! peak), the flow-control engine's paused and requested time per priority at the end, the
//! ECN markers' counters, and the wire towards the peer when the peer is its own too; of the
//! cut links towards its ports: the receiver's copy of the wire (the frames not yet arrived);
//! of its nodes: a switch's buffer peaks, a host's receive queue and peak backlog; of flows:
//! this partition's share of each flow's counters (summed, as [`Simulator::merge`] sums
//! them), whether it owns the flow's sender or receiver end and, for a QP, the figures its
//! report reads of the end it owns ([`QpSender`], [`QpReceiver`]); the totals, the events it
//! handled for itself, its engine fault; and the feature part ([`Features`]): what the report
//! reads of the pathology parts, QCN and link bit errors it owns (`exchange_features.rs`).
//! A deadlock scan's part crosses between ranks as [`encode_scan_part`] writes it. Features
//! the partitioned engine refuses (`partition::unsupported`: DCBX) have no part in it.
//! Observers follow their partition's digest ([`Shipped`]).

use lossless_proto::ecn::EcnCounters;
use lossless_proto::flow_control::{ControlFrame, Mode};
use lossless_proto::units::Instant;
use lossless_wire::int::{IntHeader, IntHop};

use crate::event::EventQueue;
use crate::frame::{Frame, FrameKind, PortId};
use crate::observer::{NoObserver, Observer, WireFrame};
use crate::series::SeriesReport;
use crate::sim::exchange_features::HostFigures;
pub use crate::sim::exchange_features::{FEATURES_TAG, FEATURES_VERSION, Features};
use crate::sim::partition::{Carried, Extra, Mail, Message, ScanPart};
use crate::sim::qp_report::QpReport;
use crate::sim::{Event, Node, Qp, Simulator};
use crate::stats::{FlowStats, PortStats, PrioStats, Totals};

/// Bytes that do not decode: cut short, or a value out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("exchange between ranks: {what} at byte {at} of {len}")]
pub struct DecodeError {
    /// What was wrong.
    pub what: &'static str,
    /// Where, in bytes from the start of the buffer.
    pub at: usize,
    /// The buffer's length.
    pub len: usize,
}

/// Little-endian writer (its counterpart is [`Dec`]).
pub(crate) struct Enc<'a>(pub(crate) &'a mut Vec<u8>);

impl Enc<'_> {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    pub(crate) fn opt_instant(&mut self, v: Option<Instant>) {
        match v {
            Some(t) => {
                self.u8(1);
                self.u128(t.as_ps());
            }
            None => self.u8(0),
        }
    }
}

/// Little-endian reader over a whole buffer (positions in errors count from its start).
pub struct Dec<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Dec<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Dec { buf, at: 0 }
    }
    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.at == self.buf.len()
    }
    /// An error at the current position.
    pub fn err(&self, what: &'static str) -> DecodeError {
        DecodeError {
            what,
            at: self.at,
            len: self.buf.len(),
        }
    }
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let b = self
            .buf
            .get(self.at..self.at + N)
            .ok_or_else(|| self.err("cut short"))?;
        self.at += N;
        Ok(b.try_into().unwrap_or([0; N]))
    }
    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }
    /// The next little-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    /// The next little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    /// The next little-endian `u128`.
    pub fn u128(&mut self) -> Result<u128, DecodeError> {
        Ok(u128::from_le_bytes(self.take()?))
    }
    /// The next byte as a flag (0 or 1).
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.err("a flag that is neither 0 nor 1")),
        }
    }
    /// A count (a little-endian `u64`) of items of at least `min_bytes` each: never more than
    /// the bytes left allow (no allocation sized by a corrupt count).
    pub fn len(&mut self, min_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.u64()?;
        let left = (self.buf.len() - self.at) as u64;
        if n.saturating_mul(min_bytes.max(1) as u64) > left {
            return Err(self.err("a count larger than the bytes that follow"));
        }
        Ok(n as usize)
    }
    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.buf.len() - self.at < n {
            return Err(self.err("bytes cut short"));
        }
        let b = &self.buf[self.at..self.at + n];
        self.at += n;
        Ok(b)
    }
    pub(crate) fn opt_instant(&mut self) -> Result<Option<Instant>, DecodeError> {
        Ok(if self.bool()? {
            Some(Instant::from_ps(self.u128()?))
        } else {
            None
        })
    }
}

/// An observer of one partition of a run over ranks whose records go to rank 0 at the end,
/// beside the partition's [`Digest`] (`experiments::ranks`).
pub trait Shipped {
    /// Appends what rank 0 needs of this observer's records.
    fn ship(&self, out: &mut Vec<u8>);
    /// Takes in what [`Shipped::ship`] wrote, into an observer made for the same partition.
    fn unship(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError>;
}

/// Observes nothing: ships nothing.
impl Shipped for NoObserver {
    fn ship(&self, _out: &mut Vec<u8>) {}
    fn unship(&mut self, _d: &mut Dec<'_>) -> Result<(), DecodeError> {
        Ok(())
    }
}

/// Appends `m` with its `extra` (what it carries beside the frame) to `out`: the one encoding
/// of a message between ranks (its counterpart is [`decode_message`]; a field added to
/// [`Message`] or [`Extra`] is added to both).
pub fn encode_message(m: &Message, extra: Option<&Extra>, out: &mut Vec<u8>) {
    let mut e = Enc(out);
    e.u32(m.to);
    e.u128(m.at.as_ps());
    e.u64(m.tie);
    e.u64(extra.map_or(0, |x| x.origin));
    wire_frame(&mut e, &m.frame);
    carried(&mut e, extra.map_or(&Carried::None, |x| &x.carried));
}

/// Appends the next message of `d`, as [`encode_message`] wrote it, to `into`.
pub fn decode_message(d: &mut Dec<'_>, into: &mut Mail) -> Result<(), DecodeError> {
    let to = d.u32()?;
    let at = Instant::from_ps(d.u128()?);
    let tie = d.u64()?;
    let origin = d.u64()?;
    let frame = read_wire_frame(d)?;
    let carried = read_carried(d)?;
    into.push(to, at, tie, frame, carried, origin);
    Ok(())
}

/// What a frame carries beside it: a tag (0 nothing, 1 HPCC's INT field, 2 TIMELY's
/// timestamp, 3 HPCC-PINT's code, 4 an LLDPDU), then the field — the INT field as its five
/// 64-bit records and its 16-bit hop count, the timestamp as 64-bit nanoseconds, PINT's code
/// as 16 bits — and the 32-bit size of the sender's rings; or the LLDPDU's 64-bit length
/// and bytes.
fn carried(e: &mut Enc<'_>, c: &Carried) {
    match c {
        Carried::None => e.u8(0),
        Carried::Int { header, slots } => {
            e.u8(1);
            for h in &header.hops {
                e.u64(h.0);
            }
            e.u16(header.nhop);
            e.u32(*slots);
        }
        Carried::Stamp { ns, slots } => {
            e.u8(2);
            e.u64(*ns);
            e.u32(*slots);
        }
        Carried::Pint { field, slots } => {
            e.u8(3);
            e.u16(field.0);
            e.u32(*slots);
        }
        Carried::Lldp(bytes) => {
            e.u8(4);
            e.len(bytes.len());
            e.0.extend_from_slice(bytes);
        }
    }
}

fn read_carried(d: &mut Dec<'_>) -> Result<Carried, DecodeError> {
    Ok(match d.u8()? {
        0 => Carried::None,
        1 => {
            let mut header = IntHeader::default();
            for h in &mut header.hops {
                *h = IntHop(d.u64()?);
            }
            header.nhop = d.u16()?;
            Carried::Int {
                header,
                slots: d.u32()?,
            }
        }
        2 => Carried::Stamp {
            ns: d.u64()?,
            slots: d.u32()?,
        },
        3 => Carried::Pint {
            field: lossless_wire::pint::PintField(d.u16()?),
            slots: d.u32()?,
        },
        4 => {
            let n = d.len(1)?;
            Carried::Lldp(d.bytes(n)?.into())
        }
        _ => return Err(d.err("an unknown kind of field carried beside a frame")),
    })
}

/// Appends the header of `count` messages that partition `from` sent to partition `to` (the
/// messages follow, each by [`encode_message`]); its counterpart is [`decode_group`].
pub fn encode_group(from: u16, to: u16, count: usize, out: &mut Vec<u8>) {
    let mut e = Enc(out);
    e.u16(from);
    e.u16(to);
    e.len(count);
}

/// The next group header of `d`: (from, to, count), as [`encode_group`] wrote it.
pub fn decode_group(d: &mut Dec<'_>) -> Result<(u16, u16, usize), DecodeError> {
    Ok((d.u16()?, d.u16()?, d.len(MESSAGE_BYTES)?))
}

/// The byte that opens a partition's part of a deadlock scan ([`encode_scan_part`]).
pub const SCAN_TAG: u8 = 0x5C;

/// Appends partition `part`'s part of a deadlock scan: [`SCAN_TAG`], the partition, the
/// blocked queues (port, priority, ends of their ranges), the ingress ports, the flows (its
/// counterpart is [`decode_scan_part`]).
pub fn encode_scan_part(part: u16, s: &ScanPart, out: &mut Vec<u8>) {
    let mut e = Enc(out);
    e.u8(SCAN_TAG);
    e.u16(part);
    e.len(s.queues.len());
    for &(p, q, i, f) in &s.queues {
        e.u32(p);
        e.u8(q);
        e.u32(i);
        e.u32(f);
    }
    e.len(s.ingress.len());
    for &p in &s.ingress {
        e.u32(p);
    }
    e.len(s.flows.len());
    for &f in &s.flows {
        e.u32(f);
    }
}

/// The next part of a deadlock scan of `d` and its partition, as [`encode_scan_part`] wrote
/// it; ranges that do not fit its ingress ports and flows are refused.
pub fn decode_scan_part(d: &mut Dec<'_>) -> Result<(u16, ScanPart), DecodeError> {
    if d.u8()? != SCAN_TAG {
        return Err(d.err("a deadlock scan's part without its tag"));
    }
    let part = d.u16()?;
    let n = d.len(13)?;
    let queues = (0..n)
        .map(|_| Ok((d.u32()?, d.u8()?, d.u32()?, d.u32()?)))
        .collect::<Result<Vec<_>, DecodeError>>()?;
    let n = d.len(4)?;
    let ingress = (0..n).map(|_| d.u32()).collect::<Result<Vec<_>, _>>()?;
    let n = d.len(4)?;
    let flows = (0..n).map(|_| d.u32()).collect::<Result<Vec<_>, _>>()?;
    let (mut i0, mut f0) = (0u32, 0u32);
    for &(_, q, i, f) in &queues {
        if q > 7 || i < i0 || f < f0 || i as usize > ingress.len() || f as usize > flows.len() {
            return Err(d.err("a deadlock scan's queue whose ranges do not fit its part"));
        }
        (i0, f0) = (i, f);
    }
    Ok((
        part,
        ScanPart {
            queues,
            ingress,
            flows,
        },
    ))
}

/// Bytes of the shortest encoded message (a PAUSE frame, carrying nothing beside it).
const MESSAGE_BYTES: usize = 4 + 16 + 8 + 8 + 3 + 1;

fn frame(e: &mut Enc<'_>, f: &Frame) {
    e.u64(f.id);
    e.u32(f.flow);
    e.u32(f.len);
    e.u32(f.ingress);
    e.u32(f.src);
    e.u32(f.dst);
    e.u8(f.priority);
    e.u8(f.kind as u8);
    e.u8(f.flags);
    e.u8(f.hops);
}

/// Bytes of an encoded [`Frame`].
const FRAME_BYTES: usize = 8 + 5 * 4 + 4;

fn read_frame(d: &mut Dec<'_>) -> Result<Frame, DecodeError> {
    Ok(Frame {
        id: d.u64()?,
        flow: d.u32()?,
        len: d.u32()?,
        ingress: d.u32()?,
        src: d.u32()?,
        dst: d.u32()?,
        priority: d.u8()?,
        kind: *FrameKind::ALL
            .get(usize::from(d.u8()?))
            .ok_or_else(|| d.err("an unknown frame kind"))?,
        flags: d.u8()?,
        hops: d.u8()?,
    })
}

fn wire_frame(e: &mut Enc<'_>, w: &WireFrame) {
    match w {
        WireFrame::Data(f) => {
            e.u8(0);
            frame(e, f);
        }
        WireFrame::Control(ControlFrame::Pause { quanta }) => {
            e.u8(1);
            e.u16(*quanta);
        }
        WireFrame::Control(ControlFrame::Pfc { enable_vector, time }) => {
            e.u8(2);
            e.u8(*enable_vector);
            for t in time {
                e.u16(*t);
            }
        }
        WireFrame::Lldp { len } => {
            e.u8(3);
            e.u32(*len);
        }
    }
}

fn read_wire_frame(d: &mut Dec<'_>) -> Result<WireFrame, DecodeError> {
    Ok(match d.u8()? {
        0 => WireFrame::Data(read_frame(d)?),
        1 => WireFrame::Control(ControlFrame::Pause { quanta: d.u16()? }),
        2 => {
            let enable_vector = d.u8()?;
            let mut time = [0u16; 8];
            for t in &mut time {
                *t = d.u16()?;
            }
            WireFrame::Control(ControlFrame::Pfc { enable_vector, time })
        }
        3 => WireFrame::Lldp { len: d.u32()? },
        _ => return Err(d.err("an unknown wire frame kind")),
    })
}

fn frames<'f>(e: &mut Enc<'_>, v: impl ExactSizeIterator<Item = &'f Frame>) {
    e.len(v.len());
    for f in v {
        frame(e, f);
    }
}

fn read_frames(d: &mut Dec<'_>) -> Result<Vec<Frame>, DecodeError> {
    let n = d.len(FRAME_BYTES)?;
    (0..n).map(|_| read_frame(d)).collect()
}

fn wire_frames<'f>(e: &mut Enc<'_>, v: impl ExactSizeIterator<Item = &'f WireFrame>) {
    e.len(v.len());
    for w in v {
        wire_frame(e, w);
    }
}

fn read_wire_frames(d: &mut Dec<'_>) -> Result<Vec<WireFrame>, DecodeError> {
    let n = d.len(3)?;
    (0..n).map(|_| read_wire_frame(d)).collect()
}

fn port_stats(e: &mut Enc<'_>, s: &PortStats) {
    for p in &s.prio {
        e.u64(p.tx_frames);
        e.u64(p.tx_bytes);
        e.len(p.drops.len());
        for d in &p.drops {
            e.u64(*d);
        }
        e.u64(p.pfc_xoff_tx);
        e.u64(p.pfc_xon_tx);
        e.u64(p.pfc_xoff_rx);
        e.u64(p.pfc_xon_rx);
        e.u64(p.wire_lost_frames);
        e.u64(p.wire_lost_bytes);
    }
    e.u64(s.pause_xoff_tx);
    e.u64(s.pause_xon_tx);
    e.u64(s.pause_xoff_rx);
    e.u64(s.pause_xon_rx);
    e.u64(s.lldp_rx_ignored);
    for t in s.first_drop {
        e.opt_instant(t);
    }
}

fn read_drops(d: &mut Dec<'_>, into: &mut [u64]) -> Result<(), DecodeError> {
    if d.len(8)? != into.len() {
        return Err(d.err("a drop-reason count other than this build's"));
    }
    for x in into {
        *x = d.u64()?;
    }
    Ok(())
}

fn read_port_stats(d: &mut Dec<'_>) -> Result<PortStats, DecodeError> {
    let mut s = PortStats::default();
    for p in &mut s.prio {
        let mut q = PrioStats {
            tx_frames: d.u64()?,
            tx_bytes: d.u64()?,
            ..PrioStats::default()
        };
        read_drops(d, &mut q.drops)?;
        q.pfc_xoff_tx = d.u64()?;
        q.pfc_xon_tx = d.u64()?;
        q.pfc_xoff_rx = d.u64()?;
        q.pfc_xon_rx = d.u64()?;
        q.wire_lost_frames = d.u64()?;
        q.wire_lost_bytes = d.u64()?;
        *p = q;
    }
    s.pause_xoff_tx = d.u64()?;
    s.pause_xon_tx = d.u64()?;
    s.pause_xoff_rx = d.u64()?;
    s.pause_xon_rx = d.u64()?;
    s.lldp_rx_ignored = d.u64()?;
    for t in &mut s.first_drop {
        *t = d.opt_instant()?;
    }
    Ok(s)
}

fn flow_stats(e: &mut Enc<'_>, s: &FlowStats) {
    e.u64(s.sent_frames);
    e.u64(s.sent_bytes);
    e.u64(s.delivered_frames);
    e.u64(s.delivered_bytes);
    e.u64(s.dropped_frames);
    e.opt_instant(s.first_sent);
    e.opt_instant(s.last_delivery);
    e.opt_instant(s.completed);
    e.u64(s.transport_delivered_bytes);
    e.u64(s.dropped_control_frames);
    e.u64(s.cnms_unanswered);
}

fn read_flow_stats(d: &mut Dec<'_>) -> Result<FlowStats, DecodeError> {
    Ok(FlowStats {
        sent_frames: d.u64()?,
        sent_bytes: d.u64()?,
        delivered_frames: d.u64()?,
        delivered_bytes: d.u64()?,
        dropped_frames: d.u64()?,
        first_sent: d.opt_instant()?,
        last_delivery: d.opt_instant()?,
        completed: d.opt_instant()?,
        transport_delivered_bytes: d.u64()?,
        dropped_control_frames: d.u64()?,
        cnms_unanswered: d.u64()?,
    })
}

/// One of a partition's own ports, as the report reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct PortPart {
    /// The port.
    pub port: PortId,
    /// Its counters.
    pub stats: PortStats,
    /// Per priority: the frames queued, their bytes, the most the queue held.
    pub queues: [(Vec<Frame>, u64, u64); 8],
    /// Per priority: time paused and time its request was raised, ps, at the end.
    pub pause_ps: [(u128, u128); 8],
    /// Per priority: the ECN marker's counters, where one runs.
    pub ecn: [Option<EcnCounters>; 8],
    /// The wire towards the peer, when the peer is this partition's too.
    pub wire: Option<Vec<WireFrame>>,
}

/// One of a partition's own nodes, as the report reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum NodePart {
    /// A switch: its buffer's peaks (port by port, 8 priorities each) and whole peak.
    Switch {
        /// The node.
        node: u32,
        /// Per (local port, priority).
        peaks: Vec<u64>,
        /// The whole buffer's.
        peak_used: u64,
    },
    /// A host: its receive pipeline.
    Host {
        /// The node.
        node: u32,
        /// Frames received and not yet handed to their flow.
        rx_queue: Vec<Frame>,
        /// Their bytes.
        rx_backlog: u64,
        /// The most it held.
        rx_peak: u64,
    },
}

/// A partition's share of one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowPart {
    /// The flow.
    pub flow: u32,
    /// The counters this partition moved (its source counts what is sent, its destination
    /// what is delivered, a switch between what it drops): summed over partitions.
    pub stats: FlowStats,
    /// This partition owns the flow's source (the sender end: a QP's requester).
    pub sender: bool,
    /// This partition owns the flow's destination (the receiver end: a QP's responder).
    pub receiver: bool,
    /// Its QP's figures of the sender end, when it has a QP whose sender this partition owns.
    pub qp_sender: Option<QpSender>,
    /// Its QP's figures of the receiver end, when it has a QP whose receiver this partition
    /// owns.
    pub qp_receiver: Option<QpReceiver>,
}

/// The figures of a QP's report that its sender end holds (the requester, the reaction point
/// and pacing: `Qp`'s sender side), as [`QpReport`] names them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QpSender {
    /// Data packets sent, retransmissions included.
    pub data_sent_frames: u64,
    /// Of them, retransmissions.
    pub retransmitted_frames: u64,
    /// Retransmission timeouts that fired.
    pub timeouts_total: u64,
    /// NAK-sequence-errors the requester acted on.
    pub naks_received_total: u64,
    /// Replies that reached the sender.
    pub replies_received_frames: u64,
    /// CNPs that reached the sender.
    pub cnps_received_total: u64,
    /// CNMs that reached the sender.
    pub cnms_received_total: u64,
    /// Rate cuts of the reaction point.
    pub rate_decreases_total: u64,
    /// The rate at the end.
    pub rate_bps: u64,
    /// The lowest rate.
    pub min_rate_bps: u64,
    /// The rate over time.
    pub rate_series: SeriesReport,
}

impl QpSender {
    fn of(r: &QpReport) -> Self {
        QpSender {
            data_sent_frames: r.data_sent_frames,
            retransmitted_frames: r.retransmitted_frames,
            timeouts_total: r.timeouts_total,
            naks_received_total: r.naks_received_total,
            replies_received_frames: r.replies_received_frames,
            cnps_received_total: r.cnps_received_total,
            cnms_received_total: r.cnms_received_total,
            rate_decreases_total: r.rate_decreases_total,
            rate_bps: r.rate_bps,
            min_rate_bps: r.min_rate_bps,
            rate_series: r.rate_series.clone(),
        }
    }
    fn apply(&self, r: &mut QpReport) {
        r.data_sent_frames = self.data_sent_frames;
        r.retransmitted_frames = self.retransmitted_frames;
        r.timeouts_total = self.timeouts_total;
        r.naks_received_total = self.naks_received_total;
        r.replies_received_frames = self.replies_received_frames;
        r.cnps_received_total = self.cnps_received_total;
        r.cnms_received_total = self.cnms_received_total;
        r.rate_decreases_total = self.rate_decreases_total;
        r.rate_bps = self.rate_bps;
        r.min_rate_bps = self.min_rate_bps;
        r.rate_series.clone_from(&self.rate_series);
    }
    fn encode(&self, e: &mut Enc<'_>) {
        for v in [
            self.data_sent_frames,
            self.retransmitted_frames,
            self.timeouts_total,
            self.naks_received_total,
            self.replies_received_frames,
            self.cnps_received_total,
            self.cnms_received_total,
            self.rate_decreases_total,
            self.rate_bps,
            self.min_rate_bps,
        ] {
            e.u64(v);
        }
        e.len(self.rate_series.at_ps.len());
        for (at, rate) in self.rate_series.at_ps.iter().zip(&self.rate_series.rate_bps) {
            e.u64(*at);
            e.u64(*rate);
        }
    }
    fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        let mut s = QpSender {
            data_sent_frames: d.u64()?,
            retransmitted_frames: d.u64()?,
            timeouts_total: d.u64()?,
            naks_received_total: d.u64()?,
            replies_received_frames: d.u64()?,
            cnps_received_total: d.u64()?,
            cnms_received_total: d.u64()?,
            rate_decreases_total: d.u64()?,
            rate_bps: d.u64()?,
            min_rate_bps: d.u64()?,
            rate_series: SeriesReport::default(),
        };
        let n = d.len(16)?;
        for _ in 0..n {
            s.rate_series.at_ps.push(d.u64()?);
            s.rate_series.rate_bps.push(d.u64()?);
        }
        Ok(s)
    }
}

/// The figures of a QP's report that its receiver end holds (the responder, the notification
/// point and the replies' counters: `Qp`'s receiver side), as [`QpReport`] names them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QpReceiver {
    /// Payload bytes the responder delivered in order, each once.
    pub transport_delivered_bytes: u64,
    /// Data packets the responder dropped as out of sequence.
    pub out_of_sequence_frames: u64,
    /// Duplicate data packets at the responder.
    pub duplicate_frames: u64,
    /// Replies the receiver sent.
    pub replies_sent_frames: u64,
    /// CE-marked data packets that reached the receiver.
    pub ecn_marked_received_frames: u64,
    /// CNPs the receiver sent.
    pub cnps_sent_total: u64,
    /// Whether the responder has the whole message, each byte once.
    pub delivered_exactly: bool,
}

impl QpReceiver {
    fn of(r: &QpReport, delivered_exactly: bool) -> Self {
        QpReceiver {
            transport_delivered_bytes: r.transport_delivered_bytes,
            out_of_sequence_frames: r.out_of_sequence_frames,
            duplicate_frames: r.duplicate_frames,
            replies_sent_frames: r.replies_sent_frames,
            ecn_marked_received_frames: r.ecn_marked_received_frames,
            cnps_sent_total: r.cnps_sent_total,
            delivered_exactly,
        }
    }
    fn apply(&self, r: &mut QpReport) {
        r.transport_delivered_bytes = self.transport_delivered_bytes;
        r.out_of_sequence_frames = self.out_of_sequence_frames;
        r.duplicate_frames = self.duplicate_frames;
        r.replies_sent_frames = self.replies_sent_frames;
        r.ecn_marked_received_frames = self.ecn_marked_received_frames;
        r.cnps_sent_total = self.cnps_sent_total;
    }
    fn encode(&self, e: &mut Enc<'_>) {
        for v in [
            self.transport_delivered_bytes,
            self.out_of_sequence_frames,
            self.duplicate_frames,
            self.replies_sent_frames,
            self.ecn_marked_received_frames,
            self.cnps_sent_total,
        ] {
            e.u64(v);
        }
        e.u8(u8::from(self.delivered_exactly));
    }
    fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        Ok(QpReceiver {
            transport_delivered_bytes: d.u64()?,
            out_of_sequence_frames: d.u64()?,
            duplicate_frames: d.u64()?,
            replies_sent_frames: d.u64()?,
            ecn_marked_received_frames: d.u64()?,
            cnps_sent_total: d.u64()?,
            delivered_exactly: d.bool()?,
        })
    }
}

/// What the report reads of one partition's own state at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Digest {
    /// The partition.
    pub part: u16,
    /// Events it handled for its own nodes (those every partition handles counted once, in
    /// partition 0).
    pub events: u64,
    /// Its share of the frame totals.
    pub totals: Totals,
    /// The engine fault that stopped it, if any.
    pub fault: Option<String>,
    /// Its ports.
    pub ports: Vec<PortPart>,
    /// The cut links towards its ports: (the sending port, the frames on that wire).
    pub wires: Vec<(PortId, Vec<WireFrame>)>,
    /// Its nodes.
    pub nodes: Vec<NodePart>,
    /// Flows whose counters it moved or whose ends it owns.
    pub flows: Vec<FlowPart>,
    /// What the report reads of the pathology parts, QCN and link bit errors it owns.
    pub features: Features,
}

impl Digest {
    /// Appends the digest to `out` (its counterpart is [`Digest::decode`]).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        e.u16(self.part);
        e.u64(self.events);
        e.u64(self.totals.injected);
        e.u64(self.totals.delivered);
        e.u64(self.totals.misdelivered);
        e.len(self.totals.dropped.len());
        for d in &self.totals.dropped {
            e.u64(*d);
        }
        match &self.fault {
            Some(f) => {
                e.u8(1);
                e.len(f.len());
                e.0.extend_from_slice(f.as_bytes());
            }
            None => e.u8(0),
        }
        e.len(self.ports.len());
        for p in &self.ports {
            e.u32(p.port);
            port_stats(&mut e, &p.stats);
            for (frames_q, bytes, peak) in &p.queues {
                frames(&mut e, frames_q.iter());
                e.u64(*bytes);
                e.u64(*peak);
            }
            for (paused, requested) in p.pause_ps {
                e.u128(paused);
                e.u128(requested);
            }
            for c in &p.ecn {
                match c {
                    Some(c) => {
                        e.u8(1);
                        e.u64(c.marked);
                        e.u64(c.not_marked);
                    }
                    None => e.u8(0),
                }
            }
            match &p.wire {
                Some(w) => {
                    e.u8(1);
                    wire_frames(&mut e, w.iter());
                }
                None => e.u8(0),
            }
        }
        e.len(self.wires.len());
        for (p, w) in &self.wires {
            e.u32(*p);
            wire_frames(&mut e, w.iter());
        }
        e.len(self.nodes.len());
        for n in &self.nodes {
            match n {
                NodePart::Switch {
                    node,
                    peaks,
                    peak_used,
                } => {
                    e.u8(0);
                    e.u32(*node);
                    e.len(peaks.len());
                    for p in peaks {
                        e.u64(*p);
                    }
                    e.u64(*peak_used);
                }
                NodePart::Host {
                    node,
                    rx_queue,
                    rx_backlog,
                    rx_peak,
                } => {
                    e.u8(1);
                    e.u32(*node);
                    frames(&mut e, rx_queue.iter());
                    e.u64(*rx_backlog);
                    e.u64(*rx_peak);
                }
            }
        }
        e.len(self.flows.len());
        for f in &self.flows {
            e.u32(f.flow);
            flow_stats(&mut e, &f.stats);
            e.u8(u8::from(f.sender)
                | u8::from(f.receiver) << 1
                | u8::from(f.qp_sender.is_some()) << 2
                | u8::from(f.qp_receiver.is_some()) << 3);
            if let Some(q) = &f.qp_sender {
                q.encode(&mut e);
            }
            if let Some(q) = &f.qp_receiver {
                q.encode(&mut e);
            }
        }
        self.features.encode(&mut e);
    }

    /// The digest [`Digest::encode`] wrote at the start of `d`.
    pub fn decode(d: &mut Dec<'_>) -> Result<Digest, DecodeError> {
        let part = d.u16()?;
        let events = d.u64()?;
        let mut totals = Totals {
            injected: d.u64()?,
            delivered: d.u64()?,
            misdelivered: d.u64()?,
            ..Totals::default()
        };
        read_drops(d, &mut totals.dropped)?;
        let fault = if d.bool()? {
            let n = d.len(1)?;
            let b = &d.buf[d.at..d.at + n];
            d.at += n;
            Some(String::from_utf8_lossy(b).into_owned())
        } else {
            None
        };
        let n = d.len(4)?;
        let mut ports = Vec::with_capacity(n);
        for _ in 0..n {
            let port = d.u32()?;
            let stats = read_port_stats(d)?;
            let mut queues: [(Vec<Frame>, u64, u64); 8] = Default::default();
            for q in &mut queues {
                *q = (read_frames(d)?, d.u64()?, d.u64()?);
            }
            let mut pause_ps = [(0, 0); 8];
            for p in &mut pause_ps {
                *p = (d.u128()?, d.u128()?);
            }
            let mut ecn = [None; 8];
            for c in &mut ecn {
                if d.bool()? {
                    *c = Some(EcnCounters {
                        marked: d.u64()?,
                        not_marked: d.u64()?,
                    });
                }
            }
            let wire = if d.bool()? {
                Some(read_wire_frames(d)?)
            } else {
                None
            };
            ports.push(PortPart {
                port,
                stats,
                queues,
                pause_ps,
                ecn,
                wire,
            });
        }
        let n = d.len(4)?;
        let mut wires = Vec::with_capacity(n);
        for _ in 0..n {
            wires.push((d.u32()?, read_wire_frames(d)?));
        }
        let n = d.len(5)?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            nodes.push(match d.u8()? {
                0 => {
                    let node = d.u32()?;
                    let k = d.len(8)?;
                    let peaks = (0..k).map(|_| d.u64()).collect::<Result<_, _>>()?;
                    NodePart::Switch {
                        node,
                        peaks,
                        peak_used: d.u64()?,
                    }
                }
                1 => NodePart::Host {
                    node: d.u32()?,
                    rx_queue: read_frames(d)?,
                    rx_backlog: d.u64()?,
                    rx_peak: d.u64()?,
                },
                _ => return Err(d.err("an unknown node kind")),
            });
        }
        let n = d.len(4)?;
        let mut flows = Vec::with_capacity(n);
        for _ in 0..n {
            let flow = d.u32()?;
            let stats = read_flow_stats(d)?;
            let ends = d.u8()?;
            if ends > 15 {
                return Err(d.err("unknown flags of a flow's ends"));
            }
            let qp_sender = (ends & 4 != 0).then(|| QpSender::decode(d)).transpose()?;
            let qp_receiver = (ends & 8 != 0).then(|| QpReceiver::decode(d)).transpose()?;
            flows.push(FlowPart {
                flow,
                stats,
                sender: ends & 1 != 0,
                receiver: ends & 2 != 0,
                qp_sender,
                qp_receiver,
            });
        }
        let features = Features::decode(d)?;
        Ok(Digest {
            part,
            events,
            totals,
            fault,
            ports,
            wires,
            nodes,
            flows,
            features,
        })
    }
}

/// What the report reads of a port whose engines ran in another process: set by
/// [`Simulator::absorb`], read through [`Simulator::pause_times`] and [`Simulator::ecn_counters`].
#[derive(Debug, Default)]
pub(crate) struct Absorbed {
    /// Per port (absorbed ones only): paused and requested time per priority, ps.
    pause_ps: Vec<Option<[(u128, u128); 8]>>,
    /// Per port (absorbed ones only): the ECN markers' counters.
    ecn: Vec<Option<[Option<EcnCounters>; 8]>>,
    /// Per flow: its QP's figures of the ends that ran in other processes.
    qps: Vec<(Option<QpSender>, Option<QpReceiver>)>,
    /// Per node (absorbed hosts with a stall or storm prevention only): their report figures.
    pub(super) hosts: Vec<Option<HostFigures>>,
    /// Per port (absorbed ones with QCN only): the congestion points' sampled frames.
    pub(super) cp_sampled: Vec<Option<[u64; 8]>>,
    /// Per port (absorbed ones, with victim accounting): the receive-pause clocks at the end.
    pub(super) rx_paused: Vec<Option<[lossless_proto::units::Duration; 8]>>,
    /// Per port (absorbed DCBX ports only): the flow-control mode at the end and the DCBX report.
    pub(super) dcbx: Vec<Option<(Mode, crate::sim::dcbx_report::DcbxReport)>>,
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Time port `pi` was paused for priority `q` and time its request for `q` was raised,
    /// ps, now (what its engine says, or what the process that ran it said).
    pub(crate) fn pause_times(&self, pi: PortId, q: u8) -> (u128, u128) {
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some(p)) = a.pause_ps.get(pi as usize)
        {
            return p[q as usize & 7];
        }
        let port = &self.ports[pi as usize];
        let mode = port.mac.config().mode;
        let set = if mode == Mode::Pause { 0 } else { q };
        // a port with flow control off (now) shows what it paused and requested while
        // DCBX had PFC on: the counters, as no pause or request runs any more
        if mode == Mode::Off {
            let c = port.mac.counters();
            (
                c.rx_prio_pause_duration[q as usize].as_ps(),
                c.tx_prio_pause_duration[q as usize].as_ps(),
            )
        } else {
            (
                port.mac.rx_pause_duration(self.now, set).as_ps(),
                port.mac.tx_pause_duration(self.now, set).as_ps(),
            )
        }
    }

    /// The counters of the ECN marker of port `pi`, priority `q`, if one runs there.
    pub(crate) fn ecn_counters(&self, pi: PortId, q: u8) -> Option<EcnCounters> {
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some(e)) = a.ecn.get(pi as usize)
        {
            return e[q as usize & 7];
        }
        self.ports[pi as usize].cn.as_deref()?.markers[q as usize & 7]
            .as_ref()
            .map(|m| m.counters())
    }

    /// The report of flow `f`'s QP `qp` (congestion control `cc`, `dropped` of its replies,
    /// CNPs and CNMs dropped on the way) and whether its responder has the whole message,
    /// each byte once: what the QP here says, or, of an end that ran in another process,
    /// what that process said.
    pub(crate) fn qp_report(&self, f: usize, qp: &Qp, cc: &'static str, dropped: u64) -> (QpReport, bool) {
        let mut r = QpReport::of(qp, cc, dropped);
        let mut exactly = qp.delivered_exactly();
        if let Some(a) = self.absorbed.as_deref()
            && let Some((sender, receiver)) = a.qps.get(f)
        {
            if let Some(s) = sender {
                s.apply(&mut r);
            }
            if let Some(x) = receiver {
                x.apply(&mut r);
                exactly = x.delivered_exactly;
            }
        }
        (r, exactly)
    }

    /// The digest of what this partition owns (see the module's documentation), at the end of
    /// its run.
    pub fn digest(&self) -> Digest {
        let Some(ps) = self.part.as_deref() else {
            // the whole fabric: partition 0 of 1
            return self.digest_of(0, &vec![0; self.nodes.len()], 0);
        };
        self.digest_of(ps.me, &ps.of_node, ps.skipped + ps.replicated)
    }

    fn digest_of(&self, me: u16, of_node: &[u16], not_mine: u64) -> Digest {
        let owner = |p: usize| of_node[self.ports[p].node as usize];
        let mut ports = Vec::new();
        let mut wires = Vec::new();
        for (pi, port) in self.ports.iter().enumerate() {
            let peer_here = owner(port.peer as usize) == me;
            if owner(pi) == me {
                let mut queues: [(Vec<Frame>, u64, u64); 8] = Default::default();
                for (d, q) in queues.iter_mut().zip(&port.queues) {
                    *d = (q.frames.iter().copied().collect(), q.bytes, q.peak);
                }
                ports.push(PortPart {
                    port: pi as PortId,
                    stats: port.stats(),
                    queues,
                    pause_ps: std::array::from_fn(|q| self.pause_times(pi as PortId, q as u8)),
                    ecn: std::array::from_fn(|q| self.ecn_counters(pi as PortId, q as u8)),
                    wire: peer_here.then(|| port.inflight.iter().copied().collect()),
                });
            } else if peer_here {
                wires.push((pi as PortId, port.inflight.iter().copied().collect()));
            }
        }
        let mut nodes = Vec::new();
        for (n, node) in self.nodes.iter().enumerate() {
            if of_node[n] != me {
                continue;
            }
            nodes.push(match node {
                Node::Switch(sw) => NodePart::Switch {
                    node: n as u32,
                    peaks: (0..sw.ports.len())
                        .flat_map(|p| (0..8u8).map(move |q| (p, q)))
                        .map(|(p, q)| sw.buffer.peak(p, q))
                        .collect(),
                    peak_used: sw.buffer.peak_used(),
                },
                Node::Host(h) => NodePart::Host {
                    node: n as u32,
                    rx_queue: h.rx_queue.iter().copied().collect(),
                    rx_backlog: h.rx_backlog,
                    rx_peak: h.rx_peak,
                },
            });
        }
        let flows = self
            .flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let sender = of_node[f.spec.src as usize] == me;
                let receiver = of_node[f.spec.dst as usize] == me;
                if !(sender || receiver || f.stats != FlowStats::default()) {
                    return None;
                }
                let (mut qp_sender, mut qp_receiver) = (None, None);
                if let Some(qp) = f.qp.as_deref() {
                    let (r, exactly) = self.qp_report(i, qp, "", 0);
                    qp_sender = sender.then(|| QpSender::of(&r));
                    qp_receiver = receiver.then(|| QpReceiver::of(&r, exactly));
                }
                Some(FlowPart {
                    flow: i as u32,
                    stats: f.stats,
                    sender,
                    receiver,
                    qp_sender,
                    qp_receiver,
                })
            })
            .collect();
        Digest {
            part: me,
            events: self.events - not_mine,
            totals: self.totals,
            fault: self.fault.clone(),
            ports,
            wires,
            nodes,
            flows,
            features: self.features_of(me, of_node),
        }
    }

    /// Takes the digests of the other partitions of the run (`self` is partition 0, run to
    /// the same end) in place of its own copies of their state, as [`Simulator::merge`] takes
    /// their simulators: afterwards the report collected from `self` is the whole run's.
    pub fn absorb(&mut self, digests: &[Digest]) -> Result<(), String> {
        let own_events = match self.part.as_deref() {
            Some(ps) if ps.me == 0 => self.events - ps.skipped - ps.replicated,
            Some(ps) => return Err(format!("digests are absorbed by partition 0, not {}", ps.me)),
            None => return Err("digests are absorbed by a partition, not a whole run".into()),
        };
        // (the report reads a QP of every flow with a transport, the congestion notification
        // of every switch port that has one and every switch's buffer; their owners' figures
        // come below)
        self.restore_qps();
        self.restore_port_cn();
        self.restore_switch_buffers();
        let nports = self.ports.len();
        let mut a = Absorbed {
            pause_ps: vec![None; nports],
            ecn: vec![None; nports],
            qps: vec![(None, None); self.flows.len()],
            hosts: vec![None; self.nodes.len()],
            cp_sampled: vec![None; nports],
            rx_paused: vec![None; nports],
            dcbx: vec![None; nports],
        };
        let of_node = self
            .part
            .as_deref()
            .map_or_else(Vec::new, |ps| ps.of_node.clone());
        let own_lost = self.own_lost(&of_node);
        let mut events = own_events;
        let mut flows: Vec<FlowStats> = self.flows.iter().map(|f| f.stats).collect();
        let bad = |what: &str, i: usize, d: &Digest| {
            format!(
                "the digest of partition {}: {what} {i} does not exist here",
                d.part
            )
        };
        for d in digests {
            if d.part == 0 {
                return Err("two digests of partition 0".into());
            }
            events += d.events;
            super::partition::add_totals(&mut self.totals, &d.totals);
            for p in &d.ports {
                let i = p.port as usize;
                let port = self.ports.get_mut(i).ok_or_else(|| bad("port", i, d))?;
                port.set_stats(p.stats);
                for (q, (frames, bytes, peak)) in port.queues.iter_mut().zip(&p.queues) {
                    q.frames = frames.iter().copied().collect();
                    q.bytes = *bytes;
                    q.peak = *peak;
                }
                if let Some(w) = &p.wire {
                    port.inflight = w.iter().copied().collect();
                }
                a.pause_ps[i] = Some(p.pause_ps);
                a.ecn[i] = Some(p.ecn);
            }
            for (p, w) in &d.wires {
                let i = *p as usize;
                let port = self.ports.get_mut(i).ok_or_else(|| bad("port", i, d))?;
                port.inflight = w.iter().copied().collect();
            }
            for n in &d.nodes {
                match n {
                    NodePart::Switch {
                        node,
                        peaks,
                        peak_used,
                    } => match self.nodes.get_mut(*node as usize) {
                        Some(Node::Switch(sw)) => sw.buffer.set_peaks(peaks, *peak_used),
                        _ => return Err(bad("switch", *node as usize, d)),
                    },
                    NodePart::Host {
                        node,
                        rx_queue,
                        rx_backlog,
                        rx_peak,
                    } => match self.nodes.get_mut(*node as usize) {
                        Some(Node::Host(h)) => {
                            h.rx_queue = rx_queue.iter().copied().collect();
                            h.rx_backlog = *rx_backlog;
                            h.rx_peak = *rx_peak;
                        }
                        _ => return Err(bad("host", *node as usize, d)),
                    },
                }
            }
            for f in &d.flows {
                let m = flows
                    .get_mut(f.flow as usize)
                    .ok_or_else(|| bad("flow", f.flow as usize, d))?;
                super::partition::add_flow(m, &f.stats);
                // (the sender and receiver ends of a flow without a transport hold nothing
                // else the report reads; a QP's hold what its report reads of that end)
                let (sender, receiver) = &mut a.qps[f.flow as usize];
                if f.qp_sender.is_some() {
                    sender.clone_from(&f.qp_sender);
                }
                if f.qp_receiver.is_some() {
                    receiver.clone_from(&f.qp_receiver);
                }
            }
            if self.fault.is_none() {
                self.fault.clone_from(&d.fault);
            }
        }
        for (f, s) in self.flows.iter_mut().zip(flows) {
            f.stats = s;
        }
        let features: Vec<(u16, &Features)> = digests.iter().map(|d| (d.part, &d.features)).collect();
        self.absorb_features(&features, own_lost, &mut a)?;
        self.events = events;
        self.part = None;
        self.absorbed = Some(Box::new(a));
        Ok(())
    }
}
