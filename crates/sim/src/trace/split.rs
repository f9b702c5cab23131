//! The trace outputs of a split run (`--threads N`, issue 22): each partition records what its
//! observer hooks are told, keyed by the event they came from, and after each window the
//! records of all partitions are merged into one simulator's order and replayed into the real
//! sinks (pcapng, VCD, the HTML report, the CSV series), which then write what a one-thread
//! run writes, byte for byte.
//!
//! The key of an event is (instant, tie, origin) (`sim/order.rs`): one simulator handles the
//! events of one instant and tie in the order they were pushed, and all of them were scheduled
//! by one node (the tie names the scheduler), whose partition pushed them in that order. So
//! the origin of an event a partition pushed itself is `2 × its sequence number + 1` (a
//! [`Recorder`]'s partition numbers its pushes, [`Observer::PUSH_NUMBERS`]), and a
//! frame that crossed a cut link carries `2 × the pushes its sender's queue had made` when it
//! left ([`crate::sim::partition::Extra::origin`]): it sorts after the events its sender
//! pushed before it and before those pushed after. Events the build scheduled are pushed in the
//! same order in every partition (each builds the whole fabric), so theirs agree too. What is
//! left: events of one instant and tie scheduled by the workloads' arrival processes or the
//! fabric-wide timers in different partitions, and the callbacks of a fabric-wide timer
//! (handled by every partition for its own ports) are ordered partition by partition.
//!
//! Memory stays bounded: a [`Recorder`] holds one window's records, which the driver takes
//! after every window ([`Recorder::take`]) and a [`Collector`] merges as soon as every
//! partition's records of that window are in.
//!
//! Over MPI ranks (`--mpi`, `experiments::ranks::run_rank_traced`) each partition's records
//! are encoded after every window ([`Recorder::take_encoded`], [`Batch::encode`]), gathered
//! on rank 0 and decoded there ([`decode_window`]) before they are merged ([`merge_into`]).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;

use lossless_wire::int::{IntHeader, IntHop};
use lossless_wire::pint::{PintField, PintWidth};

use crate::frame::{Frame, FrameKind, NodeId, PortId};
use crate::observer::scheduler_of;
use crate::observer::{CcField, Observer, WireFrame};

/// Where an event falls in one simulator's order: (instant in ps, tie, origin).
type Key = (u128, u64, u64);

/// One observer call.
#[derive(Clone, Debug)]
enum Rec {
    Pause(PortId, u8, Instant),
    Tx(PortId, WireFrame, Instant, Instant),
    Cc(PortId, Box<CcField>),
    Control(PortId, ControlFrame, Instant),
    Request(PortId, u8, bool, Instant),
    Buffer(NodeId, u32, u8, u64, Instant),
    Queue(PortId, u8, u64, Instant),
    Delivered(NodeId, Frame, Instant),
    /// The frame's bytes are `lldp[from..to]` of the batch.
    Lldp(PortId, u32, u32, Instant),
}

/// One partition's records of one window: the events that made calls, each with its key and
/// where its calls start in `recs`, in the order the partition handled them.
#[derive(Debug, Default)]
pub struct Batch {
    events: Vec<(Key, u32)>,
    recs: Vec<Rec>,
    lldp: Vec<u8>,
}

impl Batch {
    /// Observer calls recorded.
    pub fn len(&self) -> usize {
        self.recs.len()
    }
    /// Whether no call was recorded.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }
    /// The calls of event `i`.
    fn calls(&self, i: usize) -> &[Rec] {
        let from = self.events[i].1 as usize;
        let to = self.events.get(i + 1).map_or(self.recs.len(), |e| e.1 as usize);
        &self.recs[from..to]
    }
}

/// The observer of one partition of a split run whose outputs are `O`'s: it asks the simulator
/// for what `O` asks (its `CC_FIELDS`, `PAUSE_STATE` and `BUFFER_STATE`) and records each call
/// with the key of the event it came from.
#[derive(Debug)]
pub struct Recorder<O> {
    /// The event being handled.
    key: Key,
    /// Whether `batch.events` ends with that event.
    open: bool,
    batch: Batch,
    /// The origin of each frame taken in from another partition, by its push here.
    taken: HashMap<u64, u64, BuildHasherDefault<SeqHasher>>,
    /// The schedulers (`sim/order.rs`) of those frames: nodes of other partitions, all of
    /// whose events here are such frames (the others need no look-up).
    foreign: Vec<bool>,
    sink: PhantomData<fn() -> O>,
}

impl<O> Default for Recorder<O> {
    fn default() -> Self {
        Recorder {
            key: (0, 0, 0),
            open: false,
            batch: Batch::default(),
            taken: HashMap::default(),
            foreign: Vec::new(),
            sink: PhantomData,
        }
    }
}

impl<O> Recorder<O> {
    /// A recorder with nothing recorded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The calls recorded since the last take (the window's), leaving none.
    pub fn take(&mut self) -> Batch {
        self.open = false;
        std::mem::take(&mut self.batch)
    }

    /// Appends the calls recorded since the last take (the window's) to `out`, as
    /// [`Batch::encode`] writes them, leaving none (and the room they took, for the next).
    pub fn take_encoded(&mut self, out: &mut Vec<u8>) {
        self.open = false;
        self.batch.encode(out);
        self.batch.events.clear();
        self.batch.recs.clear();
        self.batch.lldp.clear();
    }

    #[inline]
    fn rec(&mut self, r: Rec) {
        if !self.open {
            self.open = true;
            self.batch.events.push((self.key, self.batch.recs.len() as u32));
        }
        self.batch.recs.push(r);
    }
}

impl<O: Observer> Observer for Recorder<O> {
    const CC_FIELDS: bool = O::CC_FIELDS;
    const PAUSE_STATE: bool = O::PAUSE_STATE;
    const BUFFER_STATE: bool = O::BUFFER_STATE;
    // (its records' origins are the pushes' numbers)
    const PUSH_NUMBERS: bool = true;

    fn event_start(&mut self, at: Instant, tie: u64, seq: u64) {
        let from_away = self
            .foreign
            .get(scheduler_of(tie) as usize)
            .copied()
            .unwrap_or(false);
        let origin = match from_away.then(|| self.taken.remove(&seq)).flatten() {
            Some(o) => o,
            None => 2 * seq + 1,
        };
        self.key = (at.as_ps(), tie, origin);
        self.open = false;
    }
    fn taken_in(&mut self, seq: u64, tie: u64, origin: u64) {
        let s = scheduler_of(tie) as usize;
        if s >= self.foreign.len() {
            self.foreign.resize(s + 1, false);
        }
        self.foreign[s] = true;
        self.taken.insert(seq, origin);
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        self.rec(Rec::Pause(port, mask, at));
    }
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, last_bit: Instant) {
        self.rec(Rec::Tx(port, *frame, start, last_bit));
    }
    fn cc_field(&mut self, port: PortId, field: &CcField) {
        self.rec(Rec::Cc(port, Box::new(*field)));
    }
    fn control_received(&mut self, port: PortId, frame: &ControlFrame, at: Instant) {
        self.rec(Rec::Control(port, *frame, at));
    }
    fn request_changed(&mut self, port: PortId, prio: u8, on: bool, at: Instant) {
        self.rec(Rec::Request(port, prio, on, at));
    }
    fn buffer_changed(&mut self, node: NodeId, local_port: u32, prio: u8, bytes: u64, at: Instant) {
        self.rec(Rec::Buffer(node, local_port, prio, bytes, at));
    }
    fn queue_changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        self.rec(Rec::Queue(port, prio, bytes, at));
    }
    fn delivered(&mut self, node: NodeId, frame: &Frame, at: Instant) {
        self.rec(Rec::Delivered(node, *frame, at));
    }
    fn lldp_tx(&mut self, port: PortId, frame: &[u8], start: Instant) {
        let from = self.batch.lldp.len() as u32;
        self.batch.lldp.extend_from_slice(frame);
        let to = self.batch.lldp.len() as u32;
        self.rec(Rec::Lldp(port, from, to, start));
    }
}

/// Hashes a push's sequence number (unique, so one multiplication spreads it enough).
#[derive(Debug, Default)]
struct SeqHasher(u64);

impl Hasher for SeqHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Replays the calls of `batch`'s event `i` into `sink`.
fn replay<S: Observer>(batch: &Batch, i: usize, sink: &mut S) {
    for r in batch.calls(i) {
        match r {
            Rec::Pause(p, m, at) => sink.pause_changed(*p, *m, *at),
            Rec::Tx(p, f, s, l) => sink.tx_start(*p, f, *s, *l),
            Rec::Cc(p, f) => sink.cc_field(*p, f),
            Rec::Control(p, f, at) => sink.control_received(*p, f, *at),
            Rec::Request(p, q, on, at) => sink.request_changed(*p, *q, *on, *at),
            Rec::Buffer(n, lp, q, b, at) => sink.buffer_changed(*n, *lp, *q, *b, *at),
            Rec::Queue(p, q, b, at) => sink.queue_changed(*p, *q, *b, *at),
            Rec::Delivered(n, f, at) => sink.delivered(*n, f, *at),
            Rec::Lldp(p, from, to, s) => sink.lldp_tx(*p, &batch.lldp[*from as usize..*to as usize], *s),
        }
    }
}

/// Replays the batches of one window, one per partition (in partition order), into `sink` in
/// one simulator's order: event by event, the smallest key first (equal keys: the lower
/// partition first), each event's calls in the order they were made.
pub fn merge_into<S: Observer>(batches: &[Batch], sink: &mut S) {
    let mut next = vec![0usize; batches.len()];
    loop {
        let mut best: Option<(usize, Key)> = None;
        for (b, batch) in batches.iter().enumerate() {
            if let Some(&(k, _)) = batch.events.get(next[b])
                && best.is_none_or(|(_, bk)| k < bk)
            {
                best = Some((b, k));
            }
        }
        let Some((b, _)) = best else {
            return;
        };
        replay(&batches[b], next[b], sink);
        next[b] += 1;
    }
}

/// Gathers the partitions' batches, window by window, and replays each window into the sinks
/// once every partition's batch of it is in.
#[derive(Debug)]
pub struct Collector<S> {
    queued: Vec<VecDeque<Batch>>,
    sink: S,
}

impl<S: Observer> Collector<S> {
    /// A collector of `parts` partitions' batches, replaying into `sink`.
    pub fn new(parts: usize, sink: S) -> Self {
        Collector {
            queued: (0..parts).map(|_| VecDeque::new()).collect(),
            sink,
        }
    }

    /// Partition `part`'s next batch (its calls in the window after the last it gave).
    pub fn add(&mut self, part: usize, batch: Batch) {
        let Some(q) = self.queued.get_mut(part) else {
            return;
        };
        q.push_back(batch);
        while self.queued.iter().all(|q| !q.is_empty()) {
            let window: Vec<Batch> = self.queued.iter_mut().filter_map(VecDeque::pop_front).collect();
            merge_into(&window, &mut self.sink);
        }
    }

    /// The sinks, once every batch is in (a window some partition never finished is dropped:
    /// the run failed).
    pub fn into_sink(self) -> S {
        self.sink
    }
}

/// Bytes of a window's records that do not decode (a run over MPI ranks: what another rank
/// sent rank 0).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trace records from another rank: {what} at byte {at} of {len}")]
pub struct DecodeError {
    /// What was wrong.
    pub what: &'static str,
    /// Where, in bytes from the start of the buffer.
    pub at: usize,
    /// The buffer's length.
    pub len: usize,
}

/// Writes integers as LEB128 (7 bits a byte, low first): ports, priorities and lengths take a
/// byte or two, instants in picoseconds five to eight.
fn put(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads what [`put`] and the fixed-width writers of [`Batch::encode`] wrote.
struct Rd<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Rd<'a> {
    fn err(&self, what: &'static str) -> DecodeError {
        DecodeError {
            what,
            at: self.at,
            len: self.buf.len(),
        }
    }
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.buf.get(self.at).ok_or_else(|| self.err("cut short"))?;
        self.at += 1;
        Ok(b)
    }
    fn big(&mut self) -> Result<u128, DecodeError> {
        let mut v = 0u128;
        for shift in (0..128).step_by(7) {
            let b = self.byte()?;
            let bits = u128::from(b & 0x7F);
            if shift == 126 && bits > 0b11 {
                return Err(self.err("an integer of more than 128 bits"));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("an integer of more than 128 bits"))
    }
    fn int<T: TryFrom<u128>>(&mut self) -> Result<T, DecodeError> {
        let v = self.big()?;
        T::try_from(v).map_err(|_| self.err("an integer out of range"))
    }
    fn instant(&mut self) -> Result<Instant, DecodeError> {
        Ok(Instant::from_ps(self.big()?))
    }
    fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.err("a flag that is neither 0 nor 1")),
        }
    }
    /// A count of items of at least one byte each, no more than the bytes left.
    fn count(&mut self) -> Result<usize, DecodeError> {
        let n: usize = self.int()?;
        if n > self.buf.len() - self.at {
            return Err(self.err("a count larger than the bytes that follow"));
        }
        Ok(n)
    }
}

fn put_control(out: &mut Vec<u8>, f: &ControlFrame) {
    match f {
        ControlFrame::Pause { quanta } => {
            out.push(0);
            put(out, u128::from(*quanta));
        }
        ControlFrame::Pfc { enable_vector, time } => {
            out.push(1);
            out.push(*enable_vector);
            for t in time {
                put(out, u128::from(*t));
            }
        }
    }
}

fn read_control(r: &mut Rd<'_>) -> Result<ControlFrame, DecodeError> {
    Ok(match r.byte()? {
        0 => ControlFrame::Pause { quanta: r.int()? },
        1 => {
            let enable_vector = r.byte()?;
            let mut time = [0u16; 8];
            for t in &mut time {
                *t = r.int()?;
            }
            ControlFrame::Pfc { enable_vector, time }
        }
        _ => return Err(r.err("an unknown control frame")),
    })
}

fn put_frame(out: &mut Vec<u8>, f: &Frame) {
    put(out, u128::from(f.id));
    for v in [f.flow, f.len, f.ingress, f.src, f.dst] {
        put(out, u128::from(v));
    }
    out.extend_from_slice(&[f.priority, f.kind as u8, f.flags, f.hops]);
}

fn read_frame(r: &mut Rd<'_>) -> Result<Frame, DecodeError> {
    Ok(Frame {
        id: r.int()?,
        flow: r.int()?,
        len: r.int()?,
        ingress: r.int()?,
        src: r.int()?,
        dst: r.int()?,
        priority: r.byte()?,
        kind: *FrameKind::ALL
            .get(usize::from(r.byte()?))
            .ok_or_else(|| r.err("an unknown frame kind"))?,
        flags: r.byte()?,
        hops: r.byte()?,
    })
}

fn put_wire(out: &mut Vec<u8>, w: &WireFrame) {
    match w {
        WireFrame::Data(f) => {
            out.push(0);
            put_frame(out, f);
        }
        WireFrame::Control(c) => {
            out.push(1);
            put_control(out, c);
        }
        WireFrame::Lldp { len } => {
            out.push(2);
            put(out, u128::from(*len));
        }
    }
}

fn read_wire(r: &mut Rd<'_>) -> Result<WireFrame, DecodeError> {
    Ok(match r.byte()? {
        0 => WireFrame::Data(read_frame(r)?),
        1 => WireFrame::Control(read_control(r)?),
        2 => WireFrame::Lldp { len: r.int()? },
        _ => return Err(r.err("an unknown wire frame kind")),
    })
}

fn put_cc(out: &mut Vec<u8>, f: &CcField) {
    match f {
        CcField::Int(h) => {
            out.push(0);
            for hop in &h.hops {
                put(out, u128::from(hop.0));
            }
            put(out, u128::from(h.nhop));
        }
        CcField::Pint(code, width) => {
            out.push(1);
            put(out, u128::from(code.0));
            out.push(match width {
                PintWidth::One => 1,
                PintWidth::Two => 2,
            });
        }
        CcField::Timestamp(ns) => {
            out.push(2);
            put(out, u128::from(*ns));
        }
    }
}

fn read_cc(r: &mut Rd<'_>) -> Result<CcField, DecodeError> {
    Ok(match r.byte()? {
        0 => {
            let mut h = IntHeader::default();
            for hop in &mut h.hops {
                *hop = IntHop(r.int()?);
            }
            h.nhop = r.int()?;
            CcField::Int(h)
        }
        1 => {
            let code = PintField(r.int()?);
            let width = match r.byte()? {
                1 => PintWidth::One,
                2 => PintWidth::Two,
                _ => return Err(r.err("an unknown PINT width")),
            };
            CcField::Pint(code, width)
        }
        2 => CcField::Timestamp(r.int()?),
        _ => return Err(r.err("an unknown congestion-control field")),
    })
}

impl Batch {
    /// Appends the batch to `out` (its counterpart is [`Batch::decode`]): the events, each as
    /// its key, its number of calls and the calls (a tag byte, then the call's arguments),
    /// then the LLDPDUs' bytes; integers as LEB128.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put(out, self.events.len() as u128);
        for (i, &((at, tie, origin), _)) in self.events.iter().enumerate() {
            put(out, at);
            put(out, u128::from(tie));
            put(out, u128::from(origin));
            let calls = self.calls(i);
            put(out, calls.len() as u128);
            for r in calls {
                put_rec(out, r);
            }
        }
        put(out, self.lldp.len() as u128);
        out.extend_from_slice(&self.lldp);
    }

    /// The batch [`Batch::encode`] wrote at the start of `buf`, and the bytes it took.
    pub fn decode(buf: &[u8]) -> Result<(Batch, usize), DecodeError> {
        let mut r = Rd { buf, at: 0 };
        let mut b = Batch::default();
        let events = r.count()?;
        b.events.reserve(events);
        for _ in 0..events {
            let key = (r.big()?, r.int()?, r.int()?);
            let start = u32::try_from(b.recs.len()).map_err(|_| r.err("more than 2^32 calls"))?;
            b.events.push((key, start));
            let calls = r.count()?;
            if calls == 0 {
                return Err(r.err("an event without calls"));
            }
            for _ in 0..calls {
                let rec = read_rec(&mut r)?;
                b.recs.push(rec);
            }
        }
        let n = r.count()?;
        b.lldp.extend_from_slice(&buf[r.at..r.at + n]);
        r.at += n;
        let lldp = b.lldp.len() as u32;
        if b.recs
            .iter()
            .any(|rec| matches!(*rec, Rec::Lldp(_, from, to, _) if from > to || to > lldp))
        {
            return Err(r.err("an LLDPDU outside the batch's bytes"));
        }
        Ok((b, r.at))
    }
}

fn put_rec(out: &mut Vec<u8>, r: &Rec) {
    let port = |out: &mut Vec<u8>, tag: u8, p: PortId| {
        out.push(tag);
        put(out, u128::from(p));
    };
    match r {
        Rec::Pause(p, m, at) => {
            port(out, 0, *p);
            out.push(*m);
            put(out, at.as_ps());
        }
        Rec::Tx(p, f, s, l) => {
            port(out, 1, *p);
            put_wire(out, f);
            put(out, s.as_ps());
            put(out, l.as_ps());
        }
        Rec::Cc(p, f) => {
            port(out, 2, *p);
            put_cc(out, f);
        }
        Rec::Control(p, f, at) => {
            port(out, 3, *p);
            put_control(out, f);
            put(out, at.as_ps());
        }
        Rec::Request(p, q, on, at) => {
            port(out, 4, *p);
            out.extend_from_slice(&[*q, u8::from(*on)]);
            put(out, at.as_ps());
        }
        Rec::Buffer(n, lp, q, b, at) => {
            port(out, 5, *n);
            put(out, u128::from(*lp));
            out.push(*q);
            put(out, u128::from(*b));
            put(out, at.as_ps());
        }
        Rec::Queue(p, q, b, at) => {
            port(out, 6, *p);
            out.push(*q);
            put(out, u128::from(*b));
            put(out, at.as_ps());
        }
        Rec::Delivered(n, f, at) => {
            port(out, 7, *n);
            put_frame(out, f);
            put(out, at.as_ps());
        }
        Rec::Lldp(p, from, to, s) => {
            port(out, 8, *p);
            put(out, u128::from(*from));
            put(out, u128::from(*to));
            put(out, s.as_ps());
        }
    }
}

fn read_rec(r: &mut Rd<'_>) -> Result<Rec, DecodeError> {
    let tag = r.byte()?;
    let p: u32 = r.int()?;
    Ok(match tag {
        0 => Rec::Pause(p, r.byte()?, r.instant()?),
        1 => Rec::Tx(p, read_wire(r)?, r.instant()?, r.instant()?),
        2 => Rec::Cc(p, Box::new(read_cc(r)?)),
        3 => Rec::Control(p, read_control(r)?, r.instant()?),
        4 => Rec::Request(p, r.byte()?, r.bool()?, r.instant()?),
        5 => Rec::Buffer(p, r.int()?, r.byte()?, r.int()?, r.instant()?),
        6 => Rec::Queue(p, r.byte()?, r.int()?, r.instant()?),
        7 => Rec::Delivered(p, read_frame(r)?, r.instant()?),
        8 => Rec::Lldp(p, r.int()?, r.int()?, r.instant()?),
        _ => return Err(r.err("an unknown observer call")),
    })
}

/// The batches of one window of `parts` partitions from the bytes each rank sent (in rank
/// order, each its partitions' batches in partition order, as [`Recorder::take_encoded`]
/// wrote them).
pub fn decode_window(from_ranks: &[Vec<u8>], parts: usize) -> Result<Vec<Batch>, DecodeError> {
    let mut out = Vec::with_capacity(parts);
    for bytes in from_ranks {
        let mut at = 0;
        while at < bytes.len() {
            let (b, used) = Batch::decode(&bytes[at..]).map_err(|e| DecodeError {
                at: e.at + at,
                len: bytes.len(),
                ..e
            })?;
            at += used;
            out.push(b);
        }
    }
    if out.len() != parts {
        return Err(DecodeError {
            what: "a window's batches not one per partition",
            at: 0,
            len: out.len(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that writes down the ports of `queue_changed` in call order.
    #[derive(Default)]
    struct Ports(Vec<PortId>);
    impl Observer for Ports {
        fn queue_changed(&mut self, port: PortId, _: u8, _: u64, _: Instant) {
            self.0.push(port);
        }
    }

    fn call(r: &mut Recorder<Ports>, at: u128, tie: u64, seq: u64, ports: &[PortId]) {
        r.event_start(Instant::from_ps(at), tie, seq);
        for &p in ports {
            r.queue_changed(p, 0, 1, Instant::from_ps(at));
        }
    }

    #[test]
    fn events_merge_by_instant_tie_and_origin_each_events_calls_together() {
        let (mut a, mut b) = (Recorder::<Ports>::new(), Recorder::<Ports>::new());
        // b took in a frame pushed after a's push 3 (origin 8), queued here as push 5
        b.taken_in(5, 1, 8);
        call(&mut a, 10, 1, 0, &[1, 2]);
        call(&mut a, 20, 1, 3, &[3]); // origin 7
        call(&mut a, 20, 1, 4, &[5]); // origin 9
        call(&mut b, 10, 0, 1, &[0]);
        call(&mut b, 20, 1, 5, &[4, 40]); // origin 8: between a's two
        call(&mut b, 30, 0, 6, &[]); // no calls: no event recorded
        call(&mut b, 30, 0, 7, &[6]);
        let mut c = Collector::new(2, Ports::default());
        c.add(1, b.take());
        assert!(c.sink.0.is_empty(), "waits for every partition's window");
        c.add(0, a.take());
        assert_eq!(c.into_sink().0, vec![0, 1, 2, 3, 4, 40, 5, 6]);
        assert!(a.take().is_empty() && b.take().is_empty());
    }

    /// A sink that writes down every call, in call order.
    #[derive(Default)]
    struct Log(Vec<String>);
    impl Observer for Log {
        const CC_FIELDS: bool = true;
        const PAUSE_STATE: bool = true;
        fn pause_changed(&mut self, p: PortId, m: u8, at: Instant) {
            self.0.push(format!("pause {p} {m} {at:?}"));
        }
        fn tx_start(&mut self, p: PortId, f: &WireFrame, s: Instant, l: Instant) {
            self.0.push(format!("tx {p} {f:?} {s:?} {l:?}"));
        }
        fn cc_field(&mut self, p: PortId, f: &CcField) {
            self.0.push(format!("cc {p} {f:?}"));
        }
        fn control_received(&mut self, p: PortId, f: &ControlFrame, at: Instant) {
            self.0.push(format!("control {p} {f:?} {at:?}"));
        }
        fn request_changed(&mut self, p: PortId, q: u8, on: bool, at: Instant) {
            self.0.push(format!("request {p} {q} {on} {at:?}"));
        }
        fn buffer_changed(&mut self, n: NodeId, lp: u32, q: u8, b: u64, at: Instant) {
            self.0.push(format!("buffer {n} {lp} {q} {b} {at:?}"));
        }
        fn queue_changed(&mut self, p: PortId, q: u8, b: u64, at: Instant) {
            self.0.push(format!("queue {p} {q} {b} {at:?}"));
        }
        fn delivered(&mut self, n: NodeId, f: &Frame, at: Instant) {
            self.0.push(format!("delivered {n} {f:?} {at:?}"));
        }
        fn lldp_tx(&mut self, p: PortId, f: &[u8], s: Instant) {
            self.0.push(format!("lldp {p} {f:?} {s:?}"));
        }
    }

    /// Every kind of call, with values that need every byte of their fields.
    fn every_call(o: &mut impl Observer) {
        let at = Instant::from_ps(u128::from(u64::MAX) * 3 + 7);
        let frame = Frame {
            id: u64::MAX,
            flow: u32::MAX,
            len: 1500,
            ingress: 7,
            src: 1 << 20,
            dst: 3,
            priority: 3,
            kind: FrameKind::Cnm,
            flags: 0xC5,
            hops: 255,
        };
        let pfc = ControlFrame::Pfc {
            enable_vector: 0x88,
            time: [0, 1, 127, 128, 255, 256, 0x7FFF, u16::MAX],
        };
        let mut int = IntHeader::default();
        for (i, h) in int.hops.iter_mut().enumerate() {
            *h = IntHop(u64::MAX >> i);
        }
        int.nhop = 9;
        o.event_start(at, 5, 11);
        o.pause_changed(u32::MAX, 0xFF, at);
        o.tx_start(1, &WireFrame::Data(frame), at, Instant::from_ps(u128::MAX));
        o.tx_start(2, &WireFrame::Control(pfc), at, at);
        o.tx_start(
            3,
            &WireFrame::Control(ControlFrame::Pause { quanta: 0xFFFF }),
            at,
            at,
        );
        o.tx_start(4, &WireFrame::Lldp { len: 64 }, at, at);
        o.lldp_tx(4, &[1, 2, 3, 0x80, 0xFF], at);
        o.cc_field(5, &CcField::Int(int));
        o.cc_field(5, &CcField::Pint(PintField(0x1FF), PintWidth::Two));
        o.cc_field(5, &CcField::Pint(PintField(7), PintWidth::One));
        o.cc_field(5, &CcField::Timestamp(u64::MAX - 1));
        o.event_start(Instant::ZERO, 0, 0);
        o.control_received(6, &pfc, Instant::ZERO);
        o.request_changed(7, 7, true, at);
        o.request_changed(7, 0, false, at);
        o.buffer_changed(8, 300, 2, u64::MAX, at);
        o.queue_changed(9, 1, 0, at);
        o.delivered(10, &frame, at);
        o.lldp_tx(11, &[], at);
    }

    #[test]
    fn a_batch_encoded_and_decoded_replays_every_call_as_recorded_and_cut_short_it_is_refused() {
        let mut direct = Log::default();
        every_call(&mut direct);
        let mut r = Recorder::<Log>::new();
        every_call(&mut r);
        let mut bytes = Vec::new();
        r.take_encoded(&mut bytes);
        assert!(r.take().is_empty(), "taking leaves none");
        // one rank's two partitions, the second with nothing recorded
        r.take_encoded(&mut bytes);
        let batches = decode_window(&[bytes.clone()], 2).expect("decodes");
        assert_eq!(batches[0].len(), direct.0.len());
        assert!(batches[1].is_empty());
        let mut replayed = Log::default();
        merge_into(&batches, &mut replayed);
        assert_eq!(replayed.0, direct.0);
        assert!(
            decode_window(&[bytes.clone()], 3).is_err(),
            "a partition's batch missing"
        );
        let whole = bytes.len() - 2;
        for cut in 0..whole {
            assert!(
                decode_window(&[bytes[..cut].to_vec()], 1).is_err(),
                "cut short at {cut} of {whole}"
            );
        }
        // an unknown call
        let mut bad = bytes[..whole].to_vec();
        let tag = bad.iter().position(|&b| b == 0).expect("a pause's tag");
        bad[tag] = 0xEE;
        assert!(Batch::decode(&bad).is_err());
    }
}
