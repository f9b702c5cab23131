//! Transmission selection: which traffic class a port sends next. Strict priority now;
//! 802.1Qaz ETS plugs in behind the same trait.

/// Chooses the traffic class to transmit next among those that are ready.
pub trait TransmissionSelection {
    /// Picks one class from `ready` (bit n set: class n has a frame and may transmit).
    /// Returns `None` only when `ready` is zero.
    fn select(&mut self, ready: u8) -> Option<u8>;
    /// Tells the selector that `bytes` of class `tc` started transmission.
    fn transmitted(&mut self, tc: u8, bytes: u32);
}

/// 802.1Q strict priority: the highest-numbered ready class always goes first.
#[derive(Clone, Copy, Debug, Default)]
pub struct StrictPriority;

impl TransmissionSelection for StrictPriority {
    #[inline]
    fn select(&mut self, ready: u8) -> Option<u8> {
        if ready == 0 {
            None
        } else {
            Some(7 - ready.leading_zeros() as u8)
        }
    }
    #[inline]
    fn transmitted(&mut self, _tc: u8, _bytes: u32) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_picks_the_highest_ready_class() {
        let mut s = StrictPriority;
        assert_eq!(s.select(0), None);
        assert_eq!(s.select(0b0000_0001), Some(0));
        assert_eq!(s.select(0b0000_1001), Some(3));
        assert_eq!(s.select(0b1000_1001), Some(7));
    }
}
