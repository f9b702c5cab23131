//! 24-bit sequence numbers (BTH PSN, AETH MSN) with wrap-safe comparison.
//!
//! InfiniBand compares PSNs modulo 2^24: `a` is after `b` when `(a - b) mod 2^24` lies in the
//! first half of the space (IBA 9.7.1; Linux rxe `psn_compare` shifts the difference left by 8
//! and reads it as a signed 32-bit number). A requester may therefore have fewer than 2^23
//! PSNs outstanding; this module's [`Psn::distance_from`] is exact within that range.

use core::cmp::Ordering;
use core::fmt;

use serde::{Deserialize, Serialize};

/// Mask of the 24 bits a PSN or MSN occupies.
pub const PSN_MASK: u32 = 0x00FF_FFFF;
/// Number of distinct PSNs (2^24).
pub const PSN_SPACE: u32 = 1 << 24;
/// Half the PSN space (2^23): the most PSNs a requester may have outstanding.
pub const PSN_HALF: u32 = 1 << 23;

/// A 24-bit packet sequence number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct Psn(u32);

/// Why a number is not a 24-bit sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("sequence number {found:#x} does not fit 24 bits (allowed 0..=0xffffff)")]
pub struct PsnRangeError {
    /// The number given.
    pub found: u32,
}

impl Psn {
    /// PSN 0.
    pub const ZERO: Psn = Psn(0);
    /// The largest PSN, 0xFFFFFF.
    pub const MAX: Psn = Psn(PSN_MASK);

    /// The PSN `v`, or an error when `v` needs more than 24 bits.
    pub const fn new(v: u32) -> Result<Psn, PsnRangeError> {
        if v > PSN_MASK {
            Err(PsnRangeError { found: v })
        } else {
            Ok(Psn(v))
        }
    }

    /// The PSN made of the low 24 bits of `v` (what a 24-bit header field carries).
    pub const fn from_low_bits(v: u32) -> Psn {
        Psn(v & PSN_MASK)
    }

    /// The PSN as a number in 0..=0xFFFFFF.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The PSN `n` packets later, wrapping at 2^24.
    pub const fn wrapping_add(self, n: u64) -> Psn {
        Psn(((self.0 as u64 + (n & PSN_MASK as u64)) & PSN_MASK as u64) as u32)
    }

    /// The PSN `n` packets earlier, wrapping at 2^24.
    pub const fn wrapping_sub(self, n: u64) -> Psn {
        Psn(((self.0 as u64 + PSN_SPACE as u64 - (n & PSN_MASK as u64)) & PSN_MASK as u64) as u32)
    }

    /// Signed distance `self - earlier` in packets, in -2^23..2^23 (exact when the true
    /// distance lies in that range).
    pub const fn distance_from(self, earlier: Psn) -> i32 {
        let d = self.0.wrapping_sub(earlier.0) & PSN_MASK;
        if d >= PSN_HALF {
            d as i32 - PSN_SPACE as i32
        } else {
            d as i32
        }
    }

    /// Order in the wrapped space: `Greater` when `self` is after `other`.
    pub fn cmp_wrapped(self, other: Psn) -> Ordering {
        self.distance_from(other).cmp(&0)
    }

    /// Whether `self` comes after `other` in the wrapped space.
    pub fn is_after(self, other: Psn) -> bool {
        self.distance_from(other) > 0
    }
}

impl TryFrom<u32> for Psn {
    type Error = PsnRangeError;
    fn try_from(v: u32) -> Result<Self, Self::Error> {
        Psn::new(v)
    }
}

impl From<Psn> for u32 {
    fn from(p: Psn) -> u32 {
        p.0
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#08x}", self.0)
    }
}

/// A 24-bit message sequence number (AETH MSN): messages the responder has completed, mod 2^24.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct Msn(u32);

impl Msn {
    /// MSN 0: no message completed yet.
    pub const ZERO: Msn = Msn(0);

    /// The MSN `v`, or an error when `v` needs more than 24 bits.
    pub const fn new(v: u32) -> Result<Msn, PsnRangeError> {
        if v > PSN_MASK {
            Err(PsnRangeError { found: v })
        } else {
            Ok(Msn(v))
        }
    }

    /// The MSN made of the low 24 bits of `v`.
    pub const fn from_low_bits(v: u32) -> Msn {
        Msn(v & PSN_MASK)
    }

    /// The MSN as a number in 0..=0xFFFFFF.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The MSN after one more completed message, wrapping at 2^24.
    pub const fn next(self) -> Msn {
        Msn((self.0 + 1) & PSN_MASK)
    }

    /// Signed distance `self - earlier` in messages, in -2^23..2^23.
    pub const fn distance_from(self, earlier: Msn) -> i32 {
        Psn(self.0).distance_from(Psn(earlier.0))
    }
}

impl TryFrom<u32> for Msn {
    type Error = PsnRangeError;
    fn try_from(v: u32) -> Result<Self, Self::Error> {
        Msn::new(v)
    }
}

impl From<Msn> for u32 {
    fn from(m: Msn) -> u32 {
        m.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_beyond_24_bits_are_refused_or_masked() {
        assert_eq!(Psn::new(0x0100_0000), Err(PsnRangeError { found: 0x0100_0000 }));
        assert_eq!(Psn::new(0xFF_FFFF), Ok(Psn::MAX));
        assert_eq!(Psn::from_low_bits(0x0123_4567).value(), 0x23_4567);
        assert_eq!(Msn::from_low_bits(u32::MAX).value(), PSN_MASK);
    }

    #[test]
    fn addition_wraps_at_2_pow_24() {
        assert_eq!(Psn::MAX.wrapping_add(1), Psn::ZERO);
        assert_eq!(Psn::from_low_bits(0xFF_FFF0).wrapping_add(0x20).value(), 0x10);
        assert_eq!(Psn::ZERO.wrapping_sub(1), Psn::MAX);
        assert_eq!(
            Psn::from_low_bits(5)
                .wrapping_add(u64::from(PSN_SPACE) * 3 + 2)
                .value(),
            7
        );
        assert_eq!(
            Psn::from_low_bits(5).wrapping_sub(u64::from(PSN_SPACE) + 6),
            Psn::MAX
        );
        assert_eq!(Msn::from_low_bits(PSN_MASK).next(), Msn::ZERO);
    }

    #[test]
    fn distance_is_signed_within_half_the_space() {
        let a = Psn::from_low_bits(2);
        let b = Psn::MAX; // 3 before a across the wrap
        assert_eq!(a.distance_from(b), 3);
        assert_eq!(b.distance_from(a), -3);
        assert!(a.is_after(b));
        assert!(!b.is_after(a));
        assert_eq!(a.cmp_wrapped(a), Ordering::Equal);
        // the extremes of the half-open range -2^23..2^23
        let z = Psn::ZERO;
        assert_eq!(
            z.wrapping_add(u64::from(PSN_HALF) - 1).distance_from(z),
            PSN_HALF as i32 - 1
        );
        assert_eq!(
            z.wrapping_add(u64::from(PSN_HALF)).distance_from(z),
            -(PSN_HALF as i32)
        );
    }

    #[test]
    fn distance_inverts_addition_for_every_offset_in_range() {
        for start in [0u32, 1, 0x7F_FFFF, 0x80_0000, 0xFF_FFFE, 0xFF_FFFF] {
            let s = Psn::from_low_bits(start);
            for n in [0i64, 1, -1, 1000, -1000, (1 << 23) - 1, -(1 << 23)] {
                let p = if n >= 0 {
                    s.wrapping_add(n as u64)
                } else {
                    s.wrapping_sub(n.unsigned_abs())
                };
                assert_eq!(i64::from(p.distance_from(s)), n, "start {start:#x} n {n}");
            }
        }
    }

    #[test]
    fn order_agrees_with_linux_rxe_psn_compare() {
        // rxe_hdr.h: psn_compare(a, b) = (s32)((a - b) << 8); its sign orders PSNs
        let rxe = |a: u32, b: u32| (a.wrapping_sub(b) << 8) as i32;
        let probes = [
            0u32, 1, 2, 0x7F_FFFE, 0x7F_FFFF, 0x80_0000, 0x80_0001, 0xFF_FFFE, 0xFF_FFFF, 0x12_3456,
        ];
        for &a in &probes {
            for &b in &probes {
                let ours = Psn::from_low_bits(a).cmp_wrapped(Psn::from_low_bits(b));
                assert_eq!(ours, rxe(a, b).cmp(&0), "a {a:#x} b {b:#x}");
                assert_eq!(
                    Psn::from_low_bits(a).distance_from(Psn::from_low_bits(b)),
                    rxe(a, b) >> 8
                );
            }
        }
    }

    #[test]
    fn serde_refuses_out_of_range_numbers() {
        assert_eq!(serde_json::from_str::<Psn>("16777215").unwrap(), Psn::MAX);
        let e = serde_json::from_str::<Psn>("16777216").unwrap_err().to_string();
        assert!(e.contains("0x1000000"), "{e}");
        assert_eq!(serde_json::to_string(&Psn::from_low_bits(7)).unwrap(), "7");
    }
}
