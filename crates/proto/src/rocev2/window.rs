//! Fixed-size structures over a sliding window of packet indices, allocated once at creation.

/// One bit per packet index over a window of at most `capacity` consecutive indices; index
/// `i` lives at bit `i mod (64 · words)`.
#[derive(Clone, Debug)]
pub(crate) struct SlotBits {
    words: Vec<u64>,
}

impl SlotBits {
    /// Room for any `capacity` consecutive indices.
    pub(crate) fn new(capacity: u64) -> SlotBits {
        let words = capacity.div_ceil(64).max(1);
        SlotBits {
            words: vec![0; words as usize],
        }
    }

    fn bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    fn at(&self, i: u64) -> (usize, u64) {
        let b = i % self.bits();
        ((b / 64) as usize, 1 << (b % 64))
    }

    pub(crate) fn get(&self, i: u64) -> bool {
        let (w, m) = self.at(i);
        self.words[w] & m != 0
    }

    /// Sets bit `i`; whether it was clear.
    pub(crate) fn set(&mut self, i: u64) -> bool {
        let (w, m) = self.at(i);
        let was_clear = self.words[w] & m == 0;
        self.words[w] |= m;
        was_clear
    }

    /// Clears bit `i`; whether it was set.
    pub(crate) fn clear(&mut self, i: u64) -> bool {
        let (w, m) = self.at(i);
        let was_set = self.words[w] & m != 0;
        self.words[w] &= !m;
        was_set
    }

    /// The lowest index in `from..to` whose bit is set (`to - from` at most the capacity).
    pub(crate) fn first_set(&self, from: u64, to: u64) -> Option<u64> {
        let mut i = from;
        while i < to {
            let (w, _) = self.at(i);
            let shift = i % 64;
            let word = self.words[w] >> shift;
            if word != 0 {
                let found = i + u64::from(word.trailing_zeros());
                return (found < to).then_some(found);
            }
            i += 64 - shift;
        }
        None
    }
}

/// A first-in first-out queue of `(packet index, transmission number)` pairs of fixed capacity.
#[derive(Clone, Debug)]
pub(crate) struct TxRing {
    slots: Vec<(u64, u64)>,
    capacity: usize,
    head: usize,
    len: usize,
}

impl TxRing {
    pub(crate) fn new(capacity: u64) -> TxRing {
        let capacity = capacity.max(1) as usize;
        // storage rounded up to a power of two: positions wrap with a mask
        TxRing {
            slots: vec![(0, 0); capacity.next_power_of_two()],
            capacity,
            head: 0,
            len: 0,
        }
    }

    fn wrap(&self, i: usize) -> usize {
        i & (self.slots.len() - 1)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends; `false` (and nothing stored) when full.
    pub(crate) fn push(&mut self, entry: (u64, u64)) -> bool {
        if self.len == self.capacity {
            return false;
        }
        let tail = self.wrap(self.head + self.len);
        self.slots[tail] = entry;
        self.len += 1;
        true
    }

    pub(crate) fn front(&self) -> Option<(u64, u64)> {
        (self.len > 0).then(|| self.slots[self.head])
    }

    pub(crate) fn pop(&mut self) -> Option<(u64, u64)> {
        let e = self.front()?;
        self.head = self.wrap(self.head + 1);
        self.len -= 1;
        Some(e)
    }

    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_track_a_sliding_window_across_the_wrap() {
        let mut b = SlotBits::new(100); // 128 bits
        assert!(b.set(5));
        assert!(!b.set(5));
        assert!(b.set(90));
        assert_eq!(b.first_set(0, 100), Some(5));
        assert_eq!(b.first_set(6, 100), Some(90));
        assert_eq!(b.first_set(6, 90), None);
        assert!(b.clear(5));
        assert!(!b.clear(5));
        // the window slides: 90 stays, 150 lands on bit 22
        assert!(b.set(150));
        assert_eq!(b.first_set(60, 160), Some(90));
        b.clear(90);
        assert_eq!(b.first_set(60, 160), Some(150));
        // a window that straddles the end of the words (1_000_000 is bit 64 of 128)
        let mut b = SlotBits::new(100);
        assert!(b.set(1_000_000 + 127));
        assert!(b.set(1_000_000 + 128 + 3));
        assert_eq!(b.first_set(1_000_000 + 60, 1_000_000 + 160), Some(1_000_127));
        b.clear(1_000_127);
        assert_eq!(b.first_set(1_000_000 + 60, 1_000_000 + 160), Some(1_000_131));
        assert!(b.get(1_000_131));
    }

    #[test]
    fn ring_is_fifo_and_refuses_beyond_capacity() {
        let mut r = TxRing::new(3);
        assert!(r.is_empty());
        for i in 0..3 {
            assert!(r.push((i, i * 10)));
        }
        assert!(!r.push((9, 9)));
        assert_eq!(r.pop(), Some((0, 0)));
        assert!(r.push((3, 30)));
        assert_eq!(r.front(), Some((1, 10)));
        assert_eq!(
            [r.pop(), r.pop(), r.pop(), r.pop()],
            [Some((1, 10)), Some((2, 20)), Some((3, 30)), None]
        );
        r.push((4, 4));
        r.clear();
        assert!(r.is_empty());
    }
}
