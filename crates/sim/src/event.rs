//! The event queue: events ordered by (time, sequence number), behind a small trait so that
//! other priority-queue structures (a radix heap for large pending sets) can replace the
//! binary heap without touching the simulator.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use lossless_proto::units::Instant;

/// A scheduled item: the time it fires, a sequence number that breaks ties in insertion
/// order, and the payload.
#[derive(Clone, Copy, Debug)]
pub struct Scheduled<E> {
    /// When the event fires.
    pub at: Instant,
    /// Insertion order; events at the same instant fire in this order.
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
/// order in every run, so determinism holds.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    key: u128,
    seq: u64,
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
        self.heap.push(Entry { key, seq, event });
    }
    #[inline]
    fn pop(&mut self) -> Option<Scheduled<E>> {
        self.heap.pop().map(|e| Scheduled {
            at: Instant::from_ps(e.key >> SEQ_BITS),
            seq: e.seq,
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
    fn peek_time_is_the_earliest_pending() {
        let mut q = HeapQueue::with_capacity(2);
        assert_eq!(q.peek_time(), None);
        q.push(Instant::from_ps(7), ());
        q.push(Instant::from_ps(3), ());
        assert_eq!(q.peek_time(), Some(Instant::from_ps(3)));
    }
}
