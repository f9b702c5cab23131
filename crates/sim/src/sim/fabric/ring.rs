//! A first-in first-out queue of `Copy` items on a power-of-two ring: the egress queues' frames
//! and the frames on a wire.
//!
//! `VecDeque` in their place cost a call per `push_back` (not inlined: its growth path comes
//! with it) and a compare and conditional move per index wrap; here the push is inlined with
//! its growth out of line, and an index wraps by a mask.

use std::fmt;

/// A FIFO of `Copy` items: `push_back`, `pop_front`, `front`, iteration oldest first.
///
/// The slots are a boxed slice whose length, the capacity, is zero or a power of two; the
/// slots outside the queue hold stale copies (no `unsafe`, no `Default` needed). 32 bytes (a
/// `Vec`'s spare length would make it 40), so that a port's wire and what a frame's start
/// and arrival read beside it share one cache line (`port.rs`).
#[derive(Clone)]
pub(crate) struct Ring<T> {
    /// The slots; `len() - 1` masks an index.
    buf: Box<[T]>,
    /// The oldest item's slot.
    head: usize,
    /// Items held.
    len: usize,
}

impl<T> Ring<T> {
    /// An empty queue (allocates nothing).
    pub(crate) fn new() -> Self {
        Ring {
            buf: Box::default(),
            head: 0,
            len: 0,
        }
    }

    /// Items held.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items, oldest first.
    pub(crate) fn iter(&self) -> std::iter::Chain<std::slice::Iter<'_, T>, std::slice::Iter<'_, T>> {
        let cap = self.buf.len();
        let first = (cap - self.head).min(self.len);
        let (a, b) = (
            &self.buf[self.head..self.head + first],
            &self.buf[..self.len - first],
        );
        a.iter().chain(b.iter())
    }
}

impl<T: Copy> Ring<T> {
    /// Appends `v` as the newest item.
    #[inline(always)]
    pub(crate) fn push_back(&mut self, v: T) {
        if self.len == self.buf.len() {
            self.grow(v);
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = v;
        self.len += 1;
    }

    /// Removes and returns the oldest item.
    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        self.pop_front_slot().copied()
    }

    /// Removes the oldest item and returns its slot, which keeps it until a later push.
    ///
    /// What `pop_front` does, for a caller that copies the item whole out of the slot: the
    /// `Option<T>` that `pop_front` returns keeps its tag in the item's spare values (a
    /// frame's kind), and the compiler moved such a frame in pieces that overlap (bytes
    /// 0..16, 15..31, then 31), which a later read across them had to wait for.
    #[inline(always)]
    pub(crate) fn pop_front_slot(&mut self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        let i = self.head;
        self.len -= 1;
        // an emptied ring starts again at its first slot: a queue that drains often (most)
        // keeps reusing the same few cache lines instead of sweeping its whole buffer
        self.head = if self.len == 0 {
            0
        } else {
            (self.head + 1) & (self.buf.len() - 1)
        };
        Some(&self.buf[i])
    }

    /// Where the oldest item's slot is, for a prefetch: computed, never read through (any
    /// address when the ring is empty).
    #[inline(always)]
    pub(crate) fn front_addr(&self) -> *const T {
        self.buf.as_ptr().wrapping_add(self.head)
    }

    /// The oldest item.
    #[inline(always)]
    pub(crate) fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(&self.buf[self.head])
    }

    /// Doubles the slots (four at first), the items moved to the start in order; the new
    /// slots are filled with `fill` (stale until used).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter().copied());
        buf.resize(cap, fill);
        self.buf = buf.into_boxed_slice();
        self.head = 0;
    }
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for Ring<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy> FromIterator<T> for Ring<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut r = Ring::new();
        for v in iter {
            r.push_back(v);
        }
        r
    }
}

impl<'a, T> IntoIterator for &'a Ring<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::collections::VecDeque;

    /// Against `VecDeque` over a pseudo-random mix of pushes and pops that wraps and grows.
    #[test]
    fn matches_vecdeque() {
        let mut r: Ring<u32> = Ring::new();
        let mut d: VecDeque<u32> = VecDeque::new();
        let mut x = 12345u32;
        for i in 0..20_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // more pushes than pops early on, the reverse later: the ring grows, then drains
            let push = if i < 10_000 { x % 5 < 3 } else { x % 5 < 2 };
            if push {
                r.push_back(i);
                d.push_back(i);
            } else if x.is_multiple_of(2) {
                assert_eq!(r.pop_front(), d.pop_front());
            } else {
                assert_eq!(r.pop_front_slot(), d.pop_front().as_ref());
            }
            assert_eq!(r.len(), d.len());
            assert_eq!(r.is_empty(), d.is_empty());
            assert_eq!(r.front(), d.front());
            if i % 97 == 0 {
                assert!(r.iter().eq(d.iter()));
            }
        }
        let c: Ring<u32> = d.iter().copied().collect();
        assert!(c.iter().eq(d.iter()));
        assert!((&r).into_iter().eq(d.iter()));
        assert_eq!(format!("{r:?}"), format!("{:?}", d.iter().collect::<Vec<_>>()));
    }

    /// A queue that drains to empty between frames reuses its first slots (the cache lines
    /// it already holds) rather than sweeping its whole buffer.
    #[test]
    fn an_emptied_ring_starts_again_at_its_first_slot() {
        let mut r: Ring<u32> = Ring::new();
        for i in 0..64 {
            r.push_back(i);
        }
        for i in 0..64 {
            assert_eq!(r.pop_front(), Some(i));
        }
        for round in 0..1_000 {
            r.push_back(round);
            r.push_back(round + 1);
            assert_eq!(r.head, 0, "round {round}");
            assert_eq!(r.pop_front(), Some(round));
            assert_eq!(r.pop_front(), Some(round + 1));
            assert_eq!((r.head, r.len()), (0, 0));
        }
    }
}
