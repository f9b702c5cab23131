//! The event queue: events ordered by (time, tie, sequence number), behind a small trait so
//! that other priority-queue structures (a radix heap for large pending sets) can replace the
//! binary heap without touching the simulator.
//!
//! The tie is the caller's: a number below 2^54 that orders events due at the same instant
//! (smaller first); events with equal time and tie fire in insertion order. The simulator
//! derives it from where and when an event was scheduled (`sim/order.rs`), so that the order
//! of simultaneous events does not depend on which other events share the queue.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use lossless_proto::units::Instant;

pub(crate) mod hint;

/// A scheduled item: the time it fires, the caller's tie and the payload. Items with equal
/// time and tie come out in the order they were pushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled<E> {
    /// When the event fires.
    pub at: Instant,
    /// The caller's order among events at the same instant (smaller first).
    pub tie: u64,
    /// Its push's number in this queue (0 for the first) where the queue keeps it
    /// ([`EventQueue::numbers`]; a plain [`CalendarQueue`] says 0): equal (time, tie) pop in
    /// push order, and a split run's trace records are merged by it (`trace::split`).
    pub seq: u64,
    /// What happens.
    pub event: E,
}

/// A priority queue of events ordered by (time, tie, sequence).
pub trait EventQueue<E> {
    /// Adds `event` to fire at `at`, after the events due then with a smaller `tie` (below
    /// 2^54; larger values are cut to their low 54 bits) and after those with the same tie
    /// that were pushed before it.
    fn push_tied(&mut self, at: Instant, tie: u64, event: E);
    /// Adds `event` to fire at `at` with tie 0: events at equal times fire in insertion order.
    #[inline]
    fn push(&mut self, at: Instant, event: E) {
        self.push_tied(at, 0, event);
    }
    /// Removes and returns the earliest event.
    fn pop(&mut self) -> Option<Scheduled<E>>;
    /// The time of the earliest event, if any.
    fn peek_time(&self) -> Option<Instant>;
    /// Removes and returns the earliest event if it fires before `until`.
    #[inline]
    fn pop_before(&mut self, until: Instant) -> Option<Scheduled<E>> {
        if self.peek_time()? < until {
            self.pop()
        } else {
            None
        }
    }
    /// Number of pending events.
    fn len(&self) -> usize;
    /// Events pushed so far: the sequence number the next push gets, where the queue numbers
    /// its pushes ([`EventQueue::numbers`]; a plain [`CalendarQueue`] says 0).
    fn pushed(&self) -> u64;
    /// Whether [`Scheduled::seq`] is the push's number and [`EventQueue::pushed`] counts
    /// (a plain [`CalendarQueue`] says 0 for both).
    fn numbers(&self) -> bool {
        true
    }
    /// Whether no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The event likely to pop `ahead` pops from now (0: the next), as a hint for fetching
    /// its state early: `None` where the queue cannot tell at no cost. Only a hint: a push
    /// may still come before it.
    #[inline(always)]
    fn upcoming(&self, ahead: usize) -> Option<&E> {
        let _ = ahead;
        None
    }
}

/// Bits of a key that hold the tie; the time takes the 74 bits above (2^74 ps ≈ 600 years).
pub const TIE_BITS: u32 = 54;
const TIE_MASK: u64 = (1 << TIE_BITS) - 1;

/// A heap entry: a `u128` key, `(time << 54) | tie`, and the sequence number, so that
/// ordering is an integer comparison (time first, then the tie) and, on equal keys, insertion
/// order. The entry is as large as one with the key alone (the `u128`'s alignment pads it).
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    key: u128,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn scheduled(self) -> Scheduled<E> {
        Scheduled {
            at: Instant::from_ps(self.key >> TIE_BITS),
            tie: (self.key as u64) & TIE_MASK,
            seq: self.seq,
            event: self.event,
        }
    }
}

/// The heap key of an event at `t` ps (saturated at [`MAX_KEY_TIME`]) with `tie`.
#[inline(always)]
fn heap_key(t: u128, tie: u64) -> u128 {
    (t.min(MAX_KEY_TIME) << TIE_BITS) | u128::from(tie & TIE_MASK)
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.key, self.seq) == (other.key, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.key, other.seq).cmp(&(self.key, self.seq))
    }
}

/// An [`EventQueue`] on `std`'s binary heap; allocation only when the pending set grows past
/// its largest size so far.
#[derive(Debug)]
pub struct HeapQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> HeapQueue<E> {
    /// An empty queue with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        HeapQueue {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
        }
    }
}

impl<E> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E> EventQueue<E> for HeapQueue<E> {
    #[inline]
    fn push_tied(&mut self, at: Instant, tie: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        // times beyond 2^74 ps saturate (they are "never" for any simulation)
        let key = heap_key(at.as_ps(), tie);
        self.heap.push(Entry { key, seq, event });
    }
    #[inline]
    fn pop(&mut self) -> Option<Scheduled<E>> {
        self.heap.pop().map(Entry::scheduled)
    }
    #[inline]
    fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| Instant::from_ps(e.key >> TIE_BITS))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
    fn pushed(&self) -> u64 {
        self.next_seq
    }
}

/// A radix heap: an [`EventQueue`] for monotone use (no event earlier than the last one
/// popped — always true in a discrete-event simulation), with amortised O(log T) operations
/// on times and no comparisons between unrelated events. Bucket `i > 0` holds events whose
/// time differs from the last popped time first in bit `i − 1`; bucket 0 holds events at the
/// last popped time, in insertion order. Buckets keep their capacity: no allocation in
/// steady state.
#[derive(Debug)]
pub struct RadixQueue<E> {
    last: u128,
    now_bucket: VecDeque<(u64, u64, E)>,
    buckets: Vec<Vec<(u128, u64, u64, E)>>,
    len: usize,
    next_seq: u64,
}

impl<E> Default for RadixQueue<E> {
    fn default() -> Self {
        RadixQueue {
            last: 0,
            now_bucket: VecDeque::with_capacity(64),
            buckets: (0..=128).map(|_| Vec::new()).collect(),
            len: 0,
            next_seq: 0,
        }
    }
}

impl<E> RadixQueue<E> {
    fn bucket(&self, t: u128) -> usize {
        128 - (t ^ self.last).leading_zeros() as usize
    }
}

impl<E: Copy> EventQueue<E> for RadixQueue<E> {
    /// Adds an event; an event earlier than the last one popped is treated as due at that
    /// time (a simulator never schedules into the past).
    fn push_tied(&mut self, at: Instant, tie: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let tie = tie & TIE_MASK;
        let t = at.as_ps().max(self.last);
        self.len += 1;
        if t == self.last {
            // in (tie, seq) order: after the last element not greater than it
            let mut i = self.now_bucket.len();
            while i > 0 && self.now_bucket[i - 1].0 > tie {
                i -= 1;
            }
            self.now_bucket.insert(i, (tie, seq, event));
        } else {
            let b = self.bucket(t);
            self.buckets[b].push((t, tie, seq, event));
        }
    }
    fn pop(&mut self) -> Option<Scheduled<E>> {
        if self.now_bucket.is_empty() {
            let i = self.buckets.iter().position(|b| !b.is_empty())?;
            let min = self.buckets[i].iter().map(|e| e.0).min()?;
            self.last = min;
            let mut moved = std::mem::take(&mut self.buckets[i]);
            for (t, tie, seq, ev) in moved.drain(..) {
                if t == min {
                    self.now_bucket.push_back((tie, seq, ev));
                } else {
                    let b = self.bucket(t);
                    self.buckets[b].push((t, tie, seq, ev));
                }
            }
            self.buckets[i] = moved; // keep the capacity
            self.now_bucket
                .make_contiguous()
                .sort_unstable_by_key(|e| (e.0, e.1));
        }
        let (tie, seq, event) = self.now_bucket.pop_front()?;
        self.len -= 1;
        Some(Scheduled {
            at: Instant::from_ps(self.last),
            tie,
            seq,
            event,
        })
    }
    fn peek_time(&self) -> Option<Instant> {
        if !self.now_bucket.is_empty() {
            return Some(Instant::from_ps(self.last));
        }
        let b = self.buckets.iter().find(|b| !b.is_empty())?;
        b.iter().map(|e| e.0).min().map(Instant::from_ps)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn pushed(&self) -> u64 {
        self.next_seq
    }
}

/// log2 of a calendar bucket's width in picoseconds: 1.024 ns. A bucket holds any number of
/// events, unsorted until the cursor reaches it, so a busy fabric (a 320-host fat tree
/// schedules 6.6–13.5 events per ns) costs one small sort per bucket instead of a heap
/// operation per event (docs/benchmarks.md, "Fabric scale").
const CAL_SHIFT: u32 = 10;
/// The most events in a bucket that std's stable sort sorts in place (an insertion sort up
/// to 20 elements); larger buckets go through `sort_large_bucket`.
const SMALL_BUCKET: usize = 20;
/// Number of calendar buckets (a power of two): the near window spans
/// `CAL_BUCKETS << CAL_SHIFT` ps ≈ 4.2 µs, longer than a 1500-byte frame at 10 Gb/s.
const CAL_BUCKETS: usize = 4096;
const CAL_WORDS: usize = CAL_BUCKETS / 64;
/// Largest time a key can hold (2^74 ps ≈ 600 years); later times saturate.
const MAX_KEY_TIME: u128 = (1u128 << (128 - TIE_BITS)) - 1;
/// Bits of a full key below the slot: the offset within the slot and the tie.
const SLOT_LOW: u32 = TIE_BITS + CAL_SHIFT;
// a ring entry's key (offset and tie) is the full key's low 64 bits, and a slot (the full
// key's high bits, the cursor) fits 64 bits, which `push_tied`'s window test relies on:
// another bucket width needs another key layout (with CAL_SHIFT 11 the 200 µs fat tree
// stopped after 31,220 of its 1,356,130 events)
const _: () = assert!(SLOT_LOW == 64);
/// The capacity every array of the ring takes at the ring's first event (they double
/// together from there, `Ring::grow_all`): most buckets of a busy fabric hold a few events
/// to a few tens.
const BUCKET_MIN_CAPACITY: usize = 16;
/// "No bucket" for the current one.
const NIL: u32 = u32::MAX;

/// What a ring entry carries of its push's number: nothing (`()`, a plain calendar) or the
/// number (`u64`, a numbered one, for [`Scheduled::seq`]).
trait Seq: Copy + std::fmt::Debug {
    /// Whether the record is the number.
    const NUMBERED: bool;
    /// The entry's record of push number `n`.
    fn of(n: u64) -> Self;
    /// The push number recorded (0 where none is).
    fn get(self) -> u64;
}

impl Seq for () {
    const NUMBERED: bool = false;
    #[inline(always)]
    fn of(_: u64) {}
    #[inline(always)]
    fn get(self) -> u64 {
        0
    }
}

impl Seq for u64 {
    const NUMBERED: bool = true;
    #[inline(always)]
    fn of(n: u64) -> u64 {
        n
    }
    #[inline(always)]
    fn get(self) -> u64 {
        self
    }
}

/// A ring entry: its time within the bucket's slot and its tie in one `u64`
/// (`offset << 54 | tie`, the low 64 bits of the full key), and in a numbered calendar its
/// push's number; the slot itself is the bucket's position. A bucket keeps its entries in
/// insertion order among equal keys (its array and the current one oldest first, a push
/// into the current array going after its equals), so the key alone orders them; the
/// sequence number is carried only for [`Scheduled::seq`] (a split run's trace merge), never
/// compared, and a plain calendar's entries (16 bytes for an 8-byte event) leave it out.
#[derive(Clone, Copy, Debug)]
struct NearEntry<E, S> {
    key: u64,
    seq: S,
    event: E,
}

/// A calendar queue: an [`EventQueue`] for monotone use (nothing is scheduled before the last
/// event popped, as in any discrete-event simulation) with O(1) push and a small sort per
/// bucket for the events a network simulation mostly schedules — a frame time or a
/// propagation delay ahead.
///
/// Made with `default()`, it does not number its pushes ([`Scheduled::seq`] and
/// [`EventQueue::pushed`] are 0, [`EventQueue::numbers`] false): a number per entry costs the simulator ≈ 3 % more
/// instructions (docs/benchmarks.md, "The queue's numbers for traced split runs only"), and
/// only a split run's trace merge reads it. [`CalendarQueue::numbered`] keeps it.
#[derive(Debug)]
pub struct CalendarQueue<E>(Ring<E, ()>);

impl<E> Default for CalendarQueue<E> {
    fn default() -> Self {
        CalendarQueue(Ring::default())
    }
}

impl<E> CalendarQueue<E> {
    /// A calendar queue whose pops say their push's number ([`Scheduled::seq`]), for an
    /// observer that asks for it (`Observer::PUSH_NUMBERS`, a split run's trace records).
    pub fn numbered() -> Self {
        CalendarQueue(Ring {
            numbered: Some(Box::default()),
            // no time below 2^64 ps lies in this window: every push takes the rare path
            cursor: u128::from(u64::MAX),
            ..Ring::default()
        })
    }

    /// A calendar queue that numbers its pushes when `numbers` is true ([`Self::numbered`]),
    /// a plain one otherwise: a partition's queue for an observer of `Observer::PUSH_NUMBERS`.
    pub fn numbered_if(numbers: bool) -> Self {
        if numbers {
            Self::numbered()
        } else {
            Self(Ring::default())
        }
    }
}

impl<E: Copy> EventQueue<E> for CalendarQueue<E> {
    #[inline(always)]
    fn push_tied(&mut self, at: Instant, tie: u64, event: E) {
        self.0.push_tied(at, tie, event);
    }
    #[inline]
    fn pop(&mut self) -> Option<Scheduled<E>> {
        self.0.pop_before(Instant::MAX)
    }
    #[inline(always)]
    fn pop_before(&mut self, until: Instant) -> Option<Scheduled<E>> {
        self.0.pop_before(until)
    }
    fn peek_time(&self) -> Option<Instant> {
        match &self.0.numbered {
            Some(n) => n.peek_time(),
            None => self.0.peek_time(),
        }
    }
    fn len(&self) -> usize {
        self.0.numbered.as_ref().map_or_else(|| self.0.len(), |n| n.len())
    }
    fn pushed(&self) -> u64 {
        // (a plain ring counts only what goes into its heaps)
        self.0.numbered.as_ref().map_or(0, |n| n.next_seq)
    }
    fn numbers(&self) -> bool {
        self.0.numbered.is_some()
    }
    #[inline(always)]
    fn upcoming(&self, ahead: usize) -> Option<&E> {
        self.0.upcoming(ahead)
    }
}

/// The calendar of a [`CalendarQueue`], its entries carrying `S` of their push's number.
///
/// Events less than one window (≈ 4.2 µs) ahead of the cursor go into a ring of 1.024 ns
/// buckets, each an unsorted array in push order; a bitmap finds the next non-empty bucket.
/// When the cursor reaches a bucket, its array and the (empty) current one swap places, and
/// the new current array is sorted stably into ascending (time, tie) order — the older first
/// among equal keys, see `NearEntry` — from whose front they pop in order (later pushes into
/// that bucket are inserted in order); a bucket of one event pops straight from its array.
/// Later events (pause timers, idle flows) wait in a binary heap and move into the ring when
/// the window reaches them; an event scheduled before the cursor's bucket (a simulator never
/// does) waits in a spill heap that every pop compares against. Order is exactly (time, tie,
/// sequence), as in [`HeapQueue`]. The arrays change places by swaps and share one capacity:
/// all of them grow together, only when a bucket holds more events than any before
/// (`grow_all`), so nothing allocates per event once warm (its memory: 4,097 arrays of that
/// capacity, at least 16 entries each).
#[derive(Debug)]
struct Ring<E, S> {
    /// Slot number (time >> CAL_SHIFT) of the cursor: no ring event is earlier.
    cursor: u128,
    /// Each bucket's events in push order (empty while the bucket is current: its events are
    /// in `cur`).
    buckets: Box<[Vec<NearEntry<E, S>>; CAL_BUCKETS]>,
    /// The current bucket's events by ascending key (the older first among equal keys):
    /// they pop from `cur[head]` on (empty, `head` 0, while no bucket is current).
    cur: Vec<NearEntry<E, S>>,
    /// Index in `cur` of the next event to pop.
    head: usize,
    /// Which bucket `cur` holds (`NIL` for none).
    cur_b: u32,
    /// `cur_b` while the spill heap is empty, else `NIL`: a pop whose cursor's bucket this is
    /// takes the current array's head at once (most pops).
    fast_b: u32,
    /// Scratch of a large bucket's sort: its keys with their positions, and the entries.
    sort_keys: Vec<u128>,
    sort_tmp: Vec<NearEntry<E, S>>,
    /// The capacity every array of the ring has (the buckets', the current one's, the
    /// sort's scratch): they trade places by swaps, so all grow together, once a bucket
    /// holds more than any before (0 until the first push into the ring).
    cap: usize,
    /// Bit b set while bucket b holds an event.
    occupied: [u64; CAL_WORDS],
    /// Events in the ring.
    near: usize,
    /// Events before the cursor's slot (defensive: a simulator never schedules them).
    spill: BinaryHeap<Entry<E>>,
    /// Events at or beyond the end of the window.
    far: BinaryHeap<Entry<E>>,
    /// Slot of the earliest far event (`u128::MAX` when there is none).
    far_slot: u128,
    /// Pushes so far; a plain ring counts only those into its heaps, which order their
    /// entries by it (the ring needs no number: `NearEntry`).
    next_seq: u64,
    /// A numbered calendar that takes every event instead (a plain one's, for
    /// [`CalendarQueue::numbered`]): this one's ring stays empty (its window lies past any
    /// time below 2^64 ps), so its pushes and pops take the rare paths, which hand them on.
    numbered: Option<Box<Ring<E, u64>>>,
}

impl<E, S> Default for Ring<E, S> {
    fn default() -> Self {
        Ring {
            cursor: 0,
            // a fixed-size array: a bucket index (masked to the ring) needs no bounds check
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            cur: Vec::new(),
            head: 0,
            cur_b: NIL,
            fast_b: NIL,
            sort_keys: Vec::new(),
            sort_tmp: Vec::new(),
            cap: 0,
            occupied: [0; CAL_WORDS],
            near: 0,
            spill: BinaryHeap::new(),
            far: BinaryHeap::with_capacity(256),
            far_slot: u128::MAX,
            next_seq: 0,
            numbered: None,
        }
    }
}

impl<E: Copy, S: Seq> Ring<E, S> {
    /// First slot past the window.
    #[inline]
    fn window_end(&self) -> u128 {
        self.cursor + CAL_BUCKETS as u128
    }

    /// Puts an entry (full key) whose slot lies in the window into its bucket: at the end of
    /// its array, or in order into the current array if it is the current bucket.
    #[inline(always)]
    fn insert_near(&mut self, slot: u128, key: u128, seq: u64, event: E) {
        let b = (slot as usize) & (CAL_BUCKETS - 1);
        let entry = NearEntry {
            key: key as u64,
            seq: S::of(seq),
            event,
        };
        self.insert_bucket(b, entry);
    }

    /// Puts `entry` (its key within its slot) into bucket `b`, which lies in the window.
    #[inline(always)]
    fn insert_bucket(&mut self, b: usize, entry: NearEntry<E, S>) {
        if b as u32 == self.cur_b {
            // a new event has the largest sequence number: it pops after its equals and the
            // smaller keys, before the larger ones (and before any popped entry's, as a
            // smaller tie at the last popped time pops next)
            if self.cur.len() == self.cap {
                self.grow_all(self.cur.len() + 1);
            }
            // shifted by hand rather than by `Vec::insert`, whose call takes the entry by
            // reference: the entry was then written to the stack in pieces and read back
            // whole for every push, a read that waits for the pieces (docs/benchmarks.md,
            // "Frames and entries moved whole")
            let mut i = self.cur.len();
            self.cur.push(entry);
            while i > self.head && self.cur[i - 1].key > entry.key {
                self.cur[i] = self.cur[i - 1];
                i -= 1;
            }
            self.cur[i] = entry;
        } else {
            if self.buckets[b].len() == self.cap {
                self.grow_all(self.cap + 1);
            }
            self.buckets[b].push(entry);
        }
        self.occupied[b / 64] |= 1 << (b % 64);
        self.near += 1;
    }

    /// Grows every array of the ring to hold `need` entries (at least
    /// [`BUCKET_MIN_CAPACITY`], else double): the arrays trade places by swaps, so one that
    /// stayed small would grow (allocate) later, when a bucket no larger than before lands
    /// in it; growing them all at once allocates only while buckets grow beyond the largest
    /// so far, as the old node pool did.
    #[cold]
    #[inline(never)]
    fn grow_all(&mut self, need: usize) {
        let cap = need.max(2 * self.cap).max(BUCKET_MIN_CAPACITY);
        for v in self.buckets.iter_mut().chain([&mut self.cur, &mut self.sort_tmp]) {
            v.reserve_exact(cap - v.len());
        }
        self.cap = cap;
    }

    /// Moves the far events that the window now covers into the ring.
    #[inline(always)]
    fn pull_far(&mut self) {
        // (most cursor moves: the far heap's earliest is still beyond the window)
        if self.far_slot >= self.window_end() {
            return;
        }
        self.pull_far_events();
    }

    /// `pull_far` once the window covers the far heap's earliest event.
    #[inline(never)]
    fn pull_far_events(&mut self) {
        let end = self.window_end();
        while let Some(top) = self.far.peek() {
            let slot = top.key >> SLOT_LOW;
            if slot >= end {
                self.far_slot = slot;
                return;
            }
            let Some(e) = self.far.pop() else { break };
            self.insert_near(slot, e.key, e.seq, e.event);
        }
        self.far_slot = u128::MAX;
    }

    /// Marks bucket `b` empty.
    #[inline(always)]
    fn vacate(&mut self, b: usize) {
        self.occupied[b / 64] &= !(1 << (b % 64));
    }

    /// Index of the first occupied bucket at or after the cursor, going round the ring once.
    #[inline]
    fn next_occupied(&self) -> Option<usize> {
        let start = (self.cursor as usize) & (CAL_BUCKETS - 1);
        let (w0, bit0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << bit0);
        if first != 0 {
            return Some(w0 * 64 + first.trailing_zeros() as usize);
        }
        for i in 1..=CAL_WORDS {
            let w = (w0 + i) % CAL_WORDS;
            let word = if w == w0 {
                self.occupied[w] & !(!0u64 << bit0)
            } else {
                self.occupied[w]
            };
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
        }
        None
    }

    /// The slot that bucket `b` stands for in the current window.
    #[inline]
    fn slot_of(&self, b: usize) -> u128 {
        let start = (self.cursor as usize) & (CAL_BUCKETS - 1);
        self.cursor + ((b + CAL_BUCKETS - start) & (CAL_BUCKETS - 1)) as u128
    }

    /// Makes bucket `b` the current one: the events left in the current array go back to
    /// their bucket (only when an earlier bucket filled after a bounded pop stopped short of
    /// them), `b`'s array becomes the current one, sorted.
    #[inline]
    fn make_current(&mut self, b: usize) {
        if self.cur_b != NIL {
            // ascending, the older first among equal keys: a bucket's order; its own array
            // is empty (and kept its capacity) while it was current
            self.cur.drain(..self.head);
            std::mem::swap(&mut self.cur, &mut self.buckets[self.cur_b as usize]);
        }
        // (`cur` is empty here: it takes `b`'s place, with its capacity)
        std::mem::swap(&mut self.cur, &mut self.buckets[b]);
        self.head = 0;
        if self.cur.len() > 1 {
            // push order: a stable sort into ascending key order keeps the older first among
            // equal keys, so that they pop from the front oldest first
            if self.cur.len() <= SMALL_BUCKET {
                // std's stable sort: an insertion sort at this size, nothing allocated
                self.cur.sort_by_key(|e| e.key);
            } else {
                self.sort_large_bucket();
            }
        }
        self.cur_b = b as u32;
        self.fast_b = if self.spill.is_empty() { self.cur_b } else { NIL };
        self.prefetch_next_bucket(b);
    }

    /// Starts loading the entries of the next occupied bucket after `b` in `b`'s word of the
    /// bitmap (its array's header lies beside `b`'s, just read): they were written a link's
    /// delay ago and have left the caches, and the sort reads them all when that bucket
    /// becomes current (docs/benchmarks.md, "The next bucket fetched early").
    #[inline(always)]
    fn prefetch_next_bucket(&self, b: usize) {
        let later = self.occupied[b / 64] & (!1u64 << (b % 64));
        if later != 0 {
            let next = &self.buckets[(b & !63) + later.trailing_zeros() as usize];
            let at: *const u8 = next.as_ptr().cast();
            hint::prefetch(at);
            if next.len() * std::mem::size_of::<NearEntry<E, S>>() > 64 {
                hint::prefetch(at.wrapping_add(64));
            }
        }
    }

    /// Sorts a large current array into ascending order without allocating beyond the
    /// largest bucket so far (std's stable sort allocates its scratch for large slices): the
    /// keys with their positions (push order) are sorted as unique `u128`s, then the entries
    /// gathered in that order.
    #[cold]
    #[inline(never)]
    fn sort_large_bucket(&mut self) {
        self.sort_keys.clear();
        self.sort_keys.extend(
            self.cur
                .iter()
                .enumerate()
                .map(|(i, e)| (u128::from(e.key) << 64) | i as u128),
        );
        self.sort_keys.sort_unstable();
        self.sort_tmp.clear();
        self.sort_tmp
            .extend(self.sort_keys.iter().map(|&k| self.cur[k as u64 as usize]));
        std::mem::swap(&mut self.cur, &mut self.sort_tmp);
    }

    /// Pops the current array's next entry, vacating bucket `b` (the current one) when it
    /// was the last.
    #[inline(always)]
    fn pop_current(&mut self, b: usize) -> Option<NearEntry<E, S>> {
        let e = *self.cur.get(self.head)?;
        self.advance_current(b);
        Some(e)
    }

    /// Moves past the current array's next entry, vacating bucket `b` (the current one) when
    /// it was the last.
    #[inline(always)]
    fn advance_current(&mut self, b: usize) {
        self.head += 1;
        if self.head == self.cur.len() {
            self.cur.clear();
            self.head = 0;
            self.cur_b = NIL;
            self.fast_b = NIL;
            self.vacate(b);
        }
    }

    /// The earliest ring entry: (bucket, its slot, full key, whether it is the lone entry
    /// of its bucket's array rather than the head of the current array). A bucket of more
    /// than one event is made current.
    #[inline]
    fn ring_min(&mut self) -> Option<(usize, u128, u128, bool)> {
        if self.near == 0 {
            return None;
        }
        let b = self.next_occupied()?;
        let slot = self.slot_of(b);
        if b as u32 != self.cur_b {
            if let [e] = self.buckets[b][..] {
                // a bucket of one event (most of them in a small scenario): no sorting
                let key = (slot << SLOT_LOW) | u128::from(e.key);
                return Some((b, slot, key, true));
            }
            self.make_current(b);
        }
        let key = self.cur.get(self.head)?.key;
        Some((b, slot, (slot << SLOT_LOW) | u128::from(key), false))
    }

    /// `push` for an empty ring (the first push, or the window moving to this event), an
    /// event beyond the window, or (defensively) one before the cursor.
    #[cold]
    #[inline(never)]
    fn push_rare(&mut self, t: u128, tie: u64, event: E) {
        if let Some(n) = self.numbered.as_deref_mut() {
            n.push_tied(Instant::from_ps(t), tie, event);
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = heap_key(t, tie);
        let slot = key >> SLOT_LOW;
        if self.near == 0 && self.spill.is_empty() && self.far_slot == u128::MAX {
            self.cursor = slot;
        }
        if slot < self.cursor {
            self.spill.push(Entry { key, seq, event });
            self.fast_b = NIL;
        } else if slot < self.window_end() {
            self.insert_near(slot, key, seq, event);
        } else {
            self.far_slot = self.far_slot.min(slot);
            self.far.push(Entry { key, seq, event });
        }
    }

    /// `pop_before` when the ring is empty or the spill heap holds an event: the ring's and
    /// the spill heap's earliest compared, the window jumped to the far heap if need be.
    ///
    /// Its removal of a ring entry repeats `pop_before`'s on purpose: one helper shared by
    /// both cost the hot path 1.0–1.3 % more instructions (callgrind, fat tree, four-bridge,
    /// incast-64), whatever its inlining hint.
    #[cold]
    #[inline(never)]
    fn pop_general(&mut self, until: u128) -> Option<Scheduled<E>> {
        if let Some(n) = self.numbered.as_deref_mut() {
            return n.pop_before(Instant::from_ps(until));
        }
        if self.near == 0 && self.spill.is_empty() {
            // the window is empty: jump it to the earliest far event
            if self.far_slot == u128::MAX || self.far.peek()?.key >> TIE_BITS >= until {
                return None;
            }
            self.cursor = self.far_slot;
            self.pull_far();
        }
        let ring = self.ring_min();
        // (a ring event and a spill event never share a key: the spill's slots are all
        // before the cursor's, the ring's at or after it)
        let spill_key = self.spill.peek().map(|e| e.key);
        let key = match (ring, spill_key) {
            (Some((b, slot, key, lone)), s) if s.is_none_or(|s| key < s) => {
                if key >> TIE_BITS >= until {
                    return None;
                }
                if slot != self.cursor {
                    // (the far events this pulls in land in other buckets than b)
                    self.cursor = slot;
                    self.pull_far();
                }
                let e = if lone {
                    let e = self.buckets[b].pop()?;
                    self.vacate(b);
                    e
                } else {
                    self.pop_current(b)?
                };
                self.near -= 1;
                return Some(Scheduled {
                    at: Instant::from_ps(key >> TIE_BITS),
                    tie: (key as u64) & TIE_MASK,
                    seq: e.seq.get(),
                    event: e.event,
                });
            }
            (_, Some(s)) => s,
            (_, None) => return None,
        };
        if key >> TIE_BITS >= until {
            return None;
        }
        let slot = key >> SLOT_LOW;
        if slot > self.cursor {
            self.cursor = slot;
            self.pull_far();
        }
        let e = self.spill.pop()?;
        if self.spill.is_empty() {
            self.fast_b = self.cur_b;
        }
        // (a plain ring's heap numbers are its own order, not the pushes')
        let seq = S::of(e.seq).get();
        Some(Scheduled { seq, ..e.scheduled() })
    }

    /// The earliest ring entry's full key, without moving anything.
    fn ring_min_key(&self) -> Option<u128> {
        if self.near == 0 {
            return None;
        }
        let b = self.next_occupied()?;
        let min = if b as u32 == self.cur_b {
            self.cur.get(self.head)?.key
        } else {
            self.buckets[b].iter().map(|e| e.key).min()?
        };
        Some((self.slot_of(b) << SLOT_LOW) | u128::from(min))
    }
}

impl<E: Copy, S: Seq> EventQueue<E> for Ring<E, S> {
    /// Adds an event; an event before the cursor's slot (a simulator never schedules into
    /// the past) still pops in (time, tie, sequence) order.
    // inlined at every call site: the common case (a non-empty queue, an event inside the
    // window) is a few instructions; everything else is in `push_rare`
    #[inline(always)]
    fn push_tied(&mut self, at: Instant, tie: u64, event: E) {
        let t = at.as_ps();
        // inside the window: cursor <= slot < cursor + CAL_BUCKETS, in 64 bits (a time below
        // 2^64 ps, 213 days, is below MAX_KEY_TIME; the cursor, a key's slot, fits 64 bits)
        // (an empty ring takes it too, into the window of its last cursor: the window moves to
        // a far event by a rare push, or a pop's jump)
        if let Ok(t) = u64::try_from(t)
            && let Some(ahead) = (t >> CAL_SHIFT).checked_sub(self.cursor as u64)
            && ahead < CAL_BUCKETS as u64
        {
            let b = ((t >> CAL_SHIFT) as usize) & (CAL_BUCKETS - 1);
            let key = (t & ((1 << CAL_SHIFT) - 1)) << TIE_BITS | (tie & TIE_MASK);
            // (a plain ring counts only the pushes its heaps order: `pushed`)
            let seq = S::of(self.next_seq);
            if S::NUMBERED {
                self.next_seq += 1;
            }
            self.insert_bucket(b, NearEntry { key, seq, event });
        } else {
            self.push_rare(t, tie, event);
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Scheduled<E>> {
        self.pop_before(Instant::MAX)
    }

    // one call site in the run loop: always inline it there (the CLI binary's size otherwise
    // tips LTO's heuristics against it, costing a quarter of the event rate)
    #[inline(always)]
    fn pop_before(&mut self, until: Instant) -> Option<Scheduled<E>> {
        let at_cursor = (self.cursor as usize) & (CAL_BUCKETS - 1);
        if at_cursor as u32 == self.fast_b {
            // the cursor's own bucket is current (and so not empty) and the spill heap empty:
            // nothing is earlier than its head (most pops: every one after a bucket's first)
            let e = *self.cur.get(self.head)?;
            let at = (self.cursor << CAL_SHIFT) | u128::from(e.key >> TIE_BITS);
            if at >= until.as_ps() {
                return None;
            }
            self.advance_current(at_cursor);
            self.near -= 1;
            return Some(Scheduled {
                at: Instant::from_ps(at),
                tie: e.key & TIE_MASK,
                seq: e.seq.get(),
                event: e.event,
            });
        }
        if self.near == 0 || !self.spill.is_empty() {
            return self.pop_general(until.as_ps());
        }
        // the first event of a bucket: the next occupied one from the cursor's
        let b = self.next_occupied()?;
        // buckets from the cursor's to b (0: the cursor's own)
        let ahead = (b.wrapping_sub(self.cursor as usize)) & (CAL_BUCKETS - 1);
        let slot = self.cursor + ahead as u128;
        let lone = b as u32 != self.cur_b && {
            if self.buckets[b].len() == 1 {
                true
            } else {
                self.make_current(b);
                false
            }
        };
        let near_key = if lone {
            self.buckets[b].first()?.key
        } else {
            self.cur.get(self.head)?.key
        };
        let at = (slot << CAL_SHIFT) | u128::from(near_key >> TIE_BITS);
        if at >= until.as_ps() {
            return None;
        }
        if ahead != 0 {
            // (the far events this pulls in land in other buckets than b)
            self.cursor = slot;
            self.pull_far();
        }
        let e = if lone {
            let e = self.buckets[b].pop()?;
            self.vacate(b);
            e
        } else {
            self.pop_current(b)?
        };
        self.near -= 1;
        Some(Scheduled {
            at: Instant::from_ps(at),
            tie: near_key & TIE_MASK,
            seq: e.seq.get(),
            event: e.event,
        })
    }

    fn peek_time(&self) -> Option<Instant> {
        let ring = self.ring_min_key();
        let spill = self.spill.peek().map(|e| e.key);
        let key = match (ring, spill) {
            (Some(r), Some(s)) => r.min(s),
            (Some(k), None) | (None, Some(k)) => k,
            (None, None) => self.far.peek()?.key,
        };
        Some(Instant::from_ps(key >> TIE_BITS))
    }

    fn len(&self) -> usize {
        self.near + self.spill.len() + self.far.len()
    }
    fn pushed(&self) -> u64 {
        self.next_seq
    }
    fn numbers(&self) -> bool {
        S::NUMBERED
    }
    /// The current bucket's entries from its next on (none beyond the bucket).
    #[inline(always)]
    fn upcoming(&self, ahead: usize) -> Option<&E> {
        self.cur.get(self.head + ahead).map(|e| &e.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calendar's hint of what pops next (the run loop's prefetch) names the events that
    /// do pop next when nothing is pushed in between, and nothing beyond the current bucket.
    #[test]
    fn upcoming_names_the_next_pops_of_the_current_bucket() {
        let mut c = CalendarQueue::default();
        assert_eq!(c.upcoming(0), None);
        // three events in one 1.024 ns bucket, one in a later bucket
        for (t, e) in [(300, 'c'), (100, 'a'), (200, 'b'), (5_000, 'd')] {
            c.push(Instant::from_ps(t), e);
        }
        assert_eq!(c.pop().map(|s| s.event), Some('a'));
        assert_eq!(
            (c.upcoming(0), c.upcoming(1), c.upcoming(2)),
            (Some(&'b'), Some(&'c'), None)
        );
        assert_eq!(c.pop().map(|s| s.event), Some('b'));
        assert_eq!((c.upcoming(0), c.upcoming(1)), (Some(&'c'), None));
        assert_eq!(c.pop().map(|s| s.event), Some('c'));
        assert_eq!(c.upcoming(0), None);
        assert_eq!(c.pop().map(|s| s.event), Some('d'));
        // the heap queue gives no hint
        let mut h = HeapQueue::with_capacity(2);
        h.push(Instant::from_ps(1), 'x');
        h.push(Instant::from_ps(2), 'y');
        assert_eq!(h.upcoming(0), None);
    }

    #[test]
    fn events_pop_in_time_then_insertion_order() {
        let mut q = HeapQueue::with_capacity(4);
        q.push(Instant::from_ps(20), 'c');
        q.push(Instant::from_ps(10), 'a');
        q.push(Instant::from_ps(20), 'd');
        q.push(Instant::from_ps(10), 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|s| s.event)).collect();
        assert_eq!(order, ['a', 'b', 'c', 'd']);
        assert!(q.is_empty());
    }

    #[test]
    fn the_radix_queue_pops_in_the_same_order_as_the_binary_heap() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut h = HeapQueue::with_capacity(16);
        let mut r = RadixQueue::default();
        let mut now = 0u128;
        for step in 0..20_000u32 {
            if rng.gen_bool(0.55) || h.is_empty() {
                // schedule at now, soon, or far; many ties
                let dt: u128 = match rng.gen_range(0..4) {
                    0 => 0,
                    1 => rng.gen_range(0..8),
                    2 => rng.gen_range(0..10_000),
                    _ => rng.gen_range(0..1u128 << 70),
                };
                let tie = rng.gen_range(0..4u64) << 40;
                h.push_tied(Instant::from_ps(now + dt), tie, step);
                r.push_tied(Instant::from_ps(now + dt), tie, step);
            } else {
                assert_eq!(h.peek_time(), r.peek_time());
                let (a, b) = (h.pop().unwrap(), r.pop().unwrap());
                assert_eq!((a.at, a.tie, a.event), (b.at, b.tie, b.event));
                now = a.at.as_ps();
            }
            assert_eq!(h.len(), r.len());
        }
    }

    #[test]
    fn the_calendar_queue_pops_in_the_same_order_as_the_binary_heap() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut h = HeapQueue::with_capacity(16);
        let mut c = CalendarQueue::default();
        let mut now = 0u128;
        let window = (CAL_BUCKETS as u128) << CAL_SHIFT;
        for step in 0..200_000u32 {
            if rng.gen_bool(0.52) || h.is_empty() {
                // ties, same bucket, next buckets, the window's edge, far beyond, wrap-around
                let dt: u128 = match rng.gen_range(0..7) {
                    0 => 0,
                    1 => rng.gen_range(0..1 << CAL_SHIFT),
                    2 => rng.gen_range(0..20_000),
                    3 => window - 2 + rng.gen_range(0..4),
                    4 => rng.gen_range(window..4 * window),
                    5 => rng.gen_range(0..1u128 << 70),
                    _ => rng.gen_range(0..window),
                };
                let tie = rng.gen_range(0..4u64) << 40;
                h.push_tied(Instant::from_ps(now + dt), tie, step);
                c.push_tied(Instant::from_ps(now + dt), tie, step);
            } else if rng.gen_bool(0.5) {
                assert_eq!(h.peek_time(), c.peek_time(), "step {step}");
                let (a, b) = (h.pop().unwrap(), c.pop().unwrap());
                assert_eq!((a.at, a.tie, a.event), (b.at, b.tie, b.event), "step {step}");
                now = a.at.as_ps();
            } else {
                // a bounded pop, as the simulator's run loop does
                let until = Instant::from_ps(now + rng.gen_range(0..3 * window));
                let (a, b) = (h.pop_before(until), c.pop_before(until));
                assert_eq!(
                    a.map(|a| (a.at, a.tie, a.event)),
                    b.map(|b| (b.at, b.tie, b.event)),
                    "step {step}"
                );
                if let Some(a) = a {
                    now = a.at.as_ps();
                }
            }
            assert_eq!(h.len(), c.len());
        }
        while let Some(a) = h.pop() {
            let b = c.pop().expect("the calendar holds as many events as the heap");
            assert_eq!((a.at, a.event), (b.at, b.event));
        }
        assert!(c.pop().is_none() && c.peek_time().is_none());
    }

    #[test]
    fn the_calendar_queue_keeps_order_when_it_empties_and_jumps_far_ahead() {
        let mut c = CalendarQueue::default();
        c.push(Instant::from_ps(5), 'a');
        assert_eq!(c.pop().map(|s| s.event), Some('a'));
        // empty: the next push moves the window to it; an earlier-than-window event cannot come
        c.push(Instant::from_ps(1 << 60), 'c');
        c.push(Instant::from_ps(1 << 50), 'b');
        c.push(Instant::from_ps(1 << 60), 'd');
        let order: Vec<char> = std::iter::from_fn(|| c.pop().map(|s| s.event)).collect();
        assert_eq!(order, ['b', 'c', 'd']);
    }

    #[test]
    fn a_burst_of_a_hundred_events_in_one_bucket_pops_in_order() {
        let mut c = CalendarQueue::default();
        let mut h = HeapQueue::with_capacity(256);
        for i in 0..100u32 {
            // 100 events in one bucket's slot, half at one instant, in scrambled time order
            let t = Instant::from_ps(1_024_000 + u128::from((i * 37) % 50) * (i % 2) as u128);
            c.push(t, i);
            h.push(t, i);
        }
        while let Some(a) = h.pop() {
            assert_eq!(c.peek_time(), Some(a.at));
            let b = c.pop().expect("as many events as the heap");
            assert_eq!((a.at, a.event), (b.at, b.event));
            // and a follow-up at the same instant goes after its elders
            if a.event < 1000 && a.event % 10 == 0 {
                c.push(a.at, 1000 + a.event);
                h.push(a.at, 1000 + a.event);
            }
        }
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_bucket_reached_by_a_bounded_pop_gives_way_to_an_earlier_one() {
        let mut c = CalendarQueue::default();
        let slot = 1u128 << CAL_SHIFT;
        c.push(Instant::from_ps(0), 'a');
        c.push(Instant::from_ps(10 * slot + 1), 'y');
        c.push(Instant::from_ps(10 * slot), 'x');
        c.push(Instant::from_ps(10 * slot + 1), 'z');
        assert_eq!(c.pop().map(|s| s.event), Some('a'));
        // stops short of bucket 10, which it has looked at (and sorted)
        assert!(c.pop_before(Instant::from_ps(10 * slot)).is_none());
        // an earlier bucket fills, and the looked-at one receives more
        c.push(Instant::from_ps(3 * slot), 'b');
        c.push(Instant::from_ps(10 * slot), 'w');
        assert_eq!(c.peek_time(), Some(Instant::from_ps(3 * slot)));
        assert_eq!(c.pop().map(|s| s.event), Some('b'));
        assert_eq!(c.peek_time(), Some(Instant::from_ps(10 * slot)));
        let order: Vec<char> = std::iter::from_fn(|| c.pop().map(|s| s.event)).collect();
        assert_eq!(order, ['x', 'w', 'y', 'z']);
    }

    #[test]
    fn crowded_buckets_pop_in_the_heaps_order_whatever_their_push_order() {
        // buckets of up to ~60 events with few distinct keys, pushed in key order, in
        // reverse, or scrambled; bounded pops that stop inside the current bucket, then
        // pushes into it (before, among and after its keys) and into an earlier bucket
        use rand::{Rng, SeedableRng};
        let slot = 1u128 << CAL_SHIFT;
        for order in 0..3 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(17 + order);
            let mut h = HeapQueue::with_capacity(16);
            let mut c = CalendarQueue::default();
            let mut now = 0u128;
            let mut step = 0u32;
            for round in 0..300u128 {
                let base = (now >> CAL_SHIFT) * slot + slot * rng.gen_range(1..4);
                let n = rng.gen_range(1..60);
                let mut keys: Vec<(u128, u64)> = (0..n)
                    .map(|_| (base + 8 * rng.gen_range(0..4u128), rng.gen_range(0..3u64)))
                    .collect();
                match order {
                    0 => keys.sort(),
                    1 => keys.sort_by(|a, b| b.cmp(a)),
                    _ => {}
                }
                for (t, tie) in keys {
                    h.push_tied(Instant::from_ps(t), tie, step);
                    c.push_tied(Instant::from_ps(t), tie, step);
                    step += 1;
                }
                while !h.is_empty() {
                    let until = Instant::from_ps(now + rng.gen_range(0..3 * slot));
                    let (a, b) = (h.pop_before(until), c.pop_before(until));
                    assert_eq!(
                        a.map(|a| (a.at, a.tie, a.event)),
                        b.map(|b| (b.at, b.tie, b.event)),
                        "order {order} round {round}"
                    );
                    match a {
                        Some(a) => now = a.at.as_ps(),
                        None if rng.gen_bool(0.3) => {
                            // stopped short: more events now, in the looked-at bucket or earlier
                            for _ in 0..rng.gen_range(1..4) {
                                let t = now + 8 * rng.gen_range(0..4u128) + slot * rng.gen_range(0..2);
                                let tie = rng.gen_range(0..3u64);
                                h.push_tied(Instant::from_ps(t), tie, step);
                                c.push_tied(Instant::from_ps(t), tie, step);
                                step += 1;
                            }
                        }
                        None => {}
                    }
                    assert_eq!(h.len(), c.len());
                }
                assert!(c.is_empty());
            }
        }
    }

    #[test]
    fn times_past_the_keys_range_pop_last_in_insertion_order_as_in_the_heap() {
        let mut h = HeapQueue::with_capacity(8);
        let mut c = CalendarQueue::default();
        let times = [
            5u128,
            u128::MAX,
            MAX_KEY_TIME,
            MAX_KEY_TIME + 1,
            7,
            MAX_KEY_TIME - (1 << CAL_SHIFT),
        ];
        for (i, &t) in times.iter().enumerate() {
            h.push(Instant::from_ps(t), i);
            c.push(Instant::from_ps(t), i);
        }
        // pop up to the event 1024 ps below the top: the window now reaches the top of the
        // range, and pushes go into it (the last two saturate on the slow path)
        for _ in 0..3 {
            let (a, b) = (h.pop().unwrap(), c.pop().unwrap());
            assert_eq!((a.at, a.tie, a.event), (b.at, b.tie, b.event));
        }
        let late = [MAX_KEY_TIME - 3, MAX_KEY_TIME, MAX_KEY_TIME + 1, u128::MAX];
        for (i, &t) in late.iter().enumerate() {
            h.push(Instant::from_ps(t), 10 + i);
            c.push(Instant::from_ps(t), 10 + i);
        }
        let mut order = Vec::new();
        while let Some(a) = h.pop() {
            let b = c.pop().expect("as many events as the heap");
            assert_eq!((a.at, a.tie, a.event), (b.at, b.tie, b.event));
            order.push(b.event);
        }
        assert!(c.pop().is_none());
        // everything at or past the largest key time pops at it, in insertion order
        assert_eq!(order, [10, 1, 2, 3, 11, 12, 13]);
    }

    #[test]
    fn a_queued_event_of_eight_bytes_takes_at_most_32_bytes() {
        assert!(std::mem::size_of::<Entry<u64>>() <= 32);
        // in a plain ring: a 64-bit key and the event
        assert_eq!(std::mem::size_of::<NearEntry<u64, ()>>(), 16);
        // in a numbered one, the push's number too
        assert_eq!(std::mem::size_of::<NearEntry<u64, u64>>(), 24);
    }

    #[test]
    fn an_emptied_ring_takes_pushes_in_its_old_window_and_before_it_in_heap_order() {
        let slot = 1u128 << CAL_SHIFT;
        let window = (CAL_BUCKETS as u128) << CAL_SHIFT;
        let mut h = HeapQueue::with_capacity(8);
        let mut c = CalendarQueue::default();
        let both = |h: &mut HeapQueue<u32>, c: &mut CalendarQueue<u32>, t: u128, e: u32| {
            h.push(Instant::from_ps(t), e);
            c.push(Instant::from_ps(t), e);
        };
        both(&mut h, &mut c, 100 * slot, 0);
        both(&mut h, &mut c, 100 * slot + 3 * window, 1);
        // pop the ring empty while a far event waits: the cursor stays at slot 100
        let (a, b) = (h.pop().unwrap(), c.pop().unwrap());
        assert_eq!((a.at, a.event), (b.at, b.event));
        // into the old window (past its end too), the cursor's own bucket, and (a simulator
        // never does) before the cursor
        let late = [100 * slot + window - 1, 100 * slot + 5, 100 * slot, 7 * slot];
        for (i, t) in late.into_iter().enumerate() {
            both(&mut h, &mut c, t, 10 + i as u32);
        }
        assert_eq!(c.0.spill.len(), 1);
        while let Some(a) = h.pop() {
            let b = c.pop().expect("as many events as the heap");
            assert_eq!((a.at, a.event), (b.at, b.event));
        }
        assert!(c.pop().is_none());
    }

    #[test]
    fn events_before_the_window_pop_first_and_the_current_bucket_after_them() {
        let mut c = CalendarQueue::default();
        let far = 10 * ((CAL_BUCKETS as u128) << CAL_SHIFT);
        let push = |c: &mut CalendarQueue<u32>, t: u128, e: u32| c.push(Instant::from_ps(t), e);
        for (t, e) in [(0, 0), (far, 1), (far, 2), (far + 1, 3)] {
            push(&mut c, t, e);
        }
        // the window jumps to the far events, whose bucket becomes current
        assert_eq!(c.pop().map(|s| s.event), Some(0));
        assert_eq!(c.pop().map(|s| s.event), Some(1));
        // events in the past (a simulator never schedules them) wait in the spill heap
        for (t, e) in [(100, 4), (far, 5), (100, 6), (200, 7)] {
            push(&mut c, t, e);
        }
        assert_eq!(c.0.spill.len(), 3);
        let order: Vec<u32> = std::iter::from_fn(|| c.pop().map(|s| s.event)).collect();
        assert_eq!(order, [4, 6, 7, 2, 5, 3]);
    }

    #[test]
    fn a_numbered_calendar_pops_the_heaps_order_and_push_numbers() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
        let mut h = HeapQueue::with_capacity(16);
        let mut c = CalendarQueue::numbered();
        let mut plain = CalendarQueue::default();
        assert!(c.numbers() && !plain.numbers() && h.numbers());
        let mut now = 0u128;
        let window = (CAL_BUCKETS as u128) << CAL_SHIFT;
        for step in 0..50_000u32 {
            if rng.gen_bool(0.52) || h.is_empty() {
                let dt: u128 = match rng.gen_range(0..4) {
                    0 => 0,
                    1 => rng.gen_range(0..1 << CAL_SHIFT),
                    2 => rng.gen_range(0..window),
                    _ => rng.gen_range(window..4 * window),
                };
                let tie = rng.gen_range(0..4u64) << 40;
                for q in [&mut h as &mut dyn EventQueue<u32>, &mut c, &mut plain] {
                    q.push_tied(Instant::from_ps(now + dt), tie, step);
                }
            } else {
                let until = Instant::from_ps(now + rng.gen_range(0..2 * window));
                let (a, b, p) = (h.pop_before(until), c.pop_before(until), plain.pop_before(until));
                let a = a.map(|a| (a.at, a.tie, a.seq, a.event));
                assert_eq!(a, b.map(|b| (b.at, b.tie, b.seq, b.event)), "step {step}");
                // the plain one pops the same events, without their numbers
                assert_eq!(a.map(|a| (a.0, a.1, a.3)), p.map(|p| (p.at, p.tie, p.event)));
                if let Some(a) = a {
                    now = a.0.as_ps();
                }
            }
            assert_eq!((h.len(), h.pushed()), (c.len(), c.pushed()));
            assert_eq!((h.len(), 0), (plain.len(), plain.pushed()));
            assert_eq!(h.peek_time(), c.peek_time());
        }
    }

    #[test]
    fn at_one_instant_the_smaller_tie_fires_first_then_insertion_order() {
        let mut q = HeapQueue::with_capacity(4);
        q.push_tied(Instant::from_ps(10), 5, 'c');
        q.push_tied(Instant::from_ps(10), 2, 'a');
        q.push_tied(Instant::from_ps(10), 5, 'd');
        q.push_tied(Instant::from_ps(9), 7, 'z');
        q.push_tied(Instant::from_ps(10), 2, 'b');
        let order: Vec<(char, u64)> = std::iter::from_fn(|| q.pop().map(|s| (s.event, s.tie))).collect();
        assert_eq!(order, [('z', 7), ('a', 2), ('b', 2), ('c', 5), ('d', 5)]);
    }

    #[test]
    fn peek_time_is_the_earliest_pending() {
        let mut q = HeapQueue::with_capacity(2);
        assert_eq!(q.peek_time(), None);
        q.push(Instant::from_ps(7), ());
        q.push(Instant::from_ps(3), ());
        assert_eq!(q.peek_time(), Some(Instant::from_ps(3)));
    }
}
