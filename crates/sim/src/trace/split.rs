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
//! left ([`crate::sim::partition::Message::origin`]): it sorts after the events its sender
//! pushed before it and before those pushed after. Events the build scheduled are pushed in the
//! same order in every partition (each builds the whole fabric), so theirs agree too. What is
//! left: events of one instant and tie scheduled by the workloads' arrival processes or the
//! fabric-wide timers in different partitions, and the callbacks of a fabric-wide timer
//! (handled by every partition for its own ports) are ordered partition by partition.
//!
//! Memory stays bounded: a [`Recorder`] holds one window's records, which the driver takes
//! after every window ([`Recorder::take`]) and a [`Collector`] merges as soon as every
//! partition's records of that window are in.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;

use crate::frame::{Frame, NodeId, PortId};
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
}
