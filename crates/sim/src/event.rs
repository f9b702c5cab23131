//! The event queue: events ordered by (time, sequence number), behind a small trait so that
//! other priority-queue structures (a radix heap for large pending sets) can replace the
//! binary heap without touching the simulator.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use lossless_proto::units::Instant;

/// A scheduled item: the time it fires, a sequence number that breaks ties in insertion
/// order, and the payload.
#[derive(Clone, Copy, Debug)]
pub struct Scheduled<E> {
    /// When the event fires.
    pub at: Instant,
    /// Insertion order; events at the same instant fire in this order. The binary heap keeps
    /// it modulo 2^40 (see its key), the radix queue in full.
    pub seq: u64,
    /// What happens.
    pub event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Scheduled<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// A priority queue of events ordered by (time, sequence).
pub trait EventQueue<E> {
    /// Adds `event` to fire at `at`; events at equal times fire in insertion order.
    fn push(&mut self, at: Instant, event: E);
    /// Removes and returns the earliest event.
    fn pop(&mut self) -> Option<Scheduled<E>>;
    /// The time of the earliest event, if any.
    fn peek_time(&self) -> Option<Instant>;
    /// Number of pending events.
    fn len(&self) -> usize;
    /// Whether no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bits of the heap key that hold the sequence number; the time takes the 88 bits above
/// (2^88 ps ≈ 9.8 million years).
const SEQ_BITS: u32 = 40;

/// A heap entry: one `u128` key, `(time << 40) | (seq mod 2^40)`, so that ordering is a single
/// integer comparison (time first, then insertion order). Only after 2^40 (10^12) events could
/// two events at one instant straddle the wrap of the sequence and swap order — still the same
/// order in every run, so determinism holds. The sequence is not stored again: a smaller entry
/// makes every level of a sift cheaper.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
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
        other.key.cmp(&self.key)
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
    fn push(&mut self, at: Instant, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        // times beyond 2^88 ps saturate (they are "never" for any simulation)
        let t = at.as_ps().min((1u128 << (128 - SEQ_BITS)) - 1);
        let key = (t << SEQ_BITS) | u128::from(seq & ((1 << SEQ_BITS) - 1));
        self.heap.push(Entry { key, event });
    }
    #[inline]
    fn pop(&mut self) -> Option<Scheduled<E>> {
        self.heap.pop().map(|e| Scheduled {
            at: Instant::from_ps(e.key >> SEQ_BITS),
            seq: (e.key & ((1 << SEQ_BITS) - 1)) as u64,
            event: e.event,
        })
    }
    #[inline]
    fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| Instant::from_ps(e.key >> SEQ_BITS))
    }
    fn len(&self) -> usize {
        self.heap.len()
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
    now_bucket: VecDeque<(u64, E)>,
    buckets: Vec<Vec<(u128, u64, E)>>,
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
    fn push(&mut self, at: Instant, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let t = at.as_ps().max(self.last);
        self.len += 1;
        if t == self.last {
            self.now_bucket.push_back((seq, event));
        } else {
            let b = self.bucket(t);
            self.buckets[b].push((t, seq, event));
        }
    }
    fn pop(&mut self) -> Option<Scheduled<E>> {
        if self.now_bucket.is_empty() {
            let i = self.buckets.iter().position(|b| !b.is_empty())?;
            let min = self.buckets[i].iter().map(|e| e.0).min()?;
            self.last = min;
            let mut moved = std::mem::take(&mut self.buckets[i]);
            for (t, seq, ev) in moved.drain(..) {
                if t == min {
                    self.now_bucket.push_back((seq, ev));
                } else {
                    let b = self.bucket(t);
                    self.buckets[b].push((t, seq, ev));
                }
            }
            self.buckets[i] = moved; // keep the capacity
            self.now_bucket.make_contiguous().sort_unstable_by_key(|e| e.0);
        }
        let (seq, event) = self.now_bucket.pop_front()?;
        self.len -= 1;
        Some(Scheduled {
            at: Instant::from_ps(self.last),
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
                h.push(Instant::from_ps(now + dt), step);
                r.push(Instant::from_ps(now + dt), step);
            } else {
                assert_eq!(h.peek_time(), r.peek_time());
                let (a, b) = (h.pop().unwrap(), r.pop().unwrap());
                assert_eq!((a.at, a.event), (b.at, b.event));
                now = a.at.as_ps();
            }
            assert_eq!(h.len(), r.len());
        }
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
