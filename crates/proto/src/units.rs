//! Time, duration and rate in exact integers: picoseconds and bits per second.
//!
//! At every IEEE 802.3 rate from 10 Mb/s to 1.6 Tb/s one byte lasts a whole number of
//! picoseconds, so byte-granular times are exact. Time is kept in `u128` picoseconds, which
//! does not overflow for about 10^19 years: a daemon's clock is safe for any uptime.

use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};

use serde::{Deserialize, Serialize};

/// Picoseconds in one second.
pub const PS_PER_SEC: u128 = 1_000_000_000_000;

/// Bytes of preamble and start-of-frame delimiter sent before every frame.
pub const PREAMBLE_SFD_BYTES: u64 = 8;
/// Bytes of minimum inter-frame gap after every frame.
pub const IFG_BYTES: u64 = 12;
/// Smallest Ethernet frame, FCS included (the size of every PAUSE and PFC frame).
pub const MIN_FRAME_BYTES: u64 = 64;
/// Bit times in one pause quantum (802.3 31B).
pub const BITS_PER_QUANTUM: u64 = 512;
/// Shortest period an engine's timer may have (a DCQCN or QCN reaction point's timers, a
/// RoCEv2 retransmission timeout; the simulator's deadlock scan): 1 µs, the unit NVIDIA's
/// firmware counts these timers in. A shorter one would make the events of a run grow
/// without bound as the period shrinks (1 ps turns a 1 ms run into half an hour).
pub const MIN_TIMER_PERIOD: Duration = Duration::from_us(1);

/// A span of time in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Duration(u128);

/// A point in time: picoseconds since an epoch chosen by the driver (simulation start, daemon start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Instant(u128);

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Rate(u64);

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span.
    pub const MAX: Duration = Duration(u128::MAX);

    /// A duration of `ps` picoseconds.
    pub const fn from_ps(ps: u128) -> Self {
        Duration(ps)
    }
    /// A duration of `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        Duration(ns as u128 * 1_000)
    }
    /// A duration of `us` microseconds.
    pub const fn from_us(us: u64) -> Self {
        Duration(us as u128 * 1_000_000)
    }
    /// A duration of `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Self {
        Duration(ms as u128 * 1_000_000_000)
    }
    /// A duration of `s` seconds.
    pub const fn from_secs(s: u64) -> Self {
        Duration(s as u128 * PS_PER_SEC)
    }
    /// This duration in picoseconds.
    pub const fn as_ps(self) -> u128 {
        self.0
    }
    /// This duration in whole nanoseconds, rounded down.
    pub const fn as_ns(self) -> u128 {
        self.0 / 1_000
    }
    /// This duration in seconds as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    /// Sum, or `None` on overflow.
    pub const fn checked_add(self, rhs: Duration) -> Option<Duration> {
        match self.0.checked_add(rhs.0) {
            Some(v) => Some(Duration(v)),
            None => None,
        }
    }
    /// Difference, clamped at zero.
    pub const fn saturating_sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
    /// This duration multiplied by `n`, saturating at [`Duration::MAX`].
    pub const fn saturating_mul(self, n: u64) -> Duration {
        if self.0 <= u64::MAX as u128 {
            // 64 × 64 bits always fit 128 bits: one multiply, no overflow test (a byte time
            // times a frame length on every frame)
            Duration((self.0 as u64 as u128) * (n as u128))
        } else {
            Duration(self.0.saturating_mul(n as u128))
        }
    }
    /// The converting `std::time::Duration`, saturating at its maximum.
    pub fn to_std(self) -> std::time::Duration {
        let secs = self.0 / PS_PER_SEC;
        let nanos = (self.0 % PS_PER_SEC) / 1_000;
        match u64::try_from(secs) {
            Ok(s) => std::time::Duration::new(s, nanos as u32),
            Err(_) => std::time::Duration::MAX,
        }
    }
    /// A duration from a `std::time::Duration`, exact to the nanosecond.
    pub fn from_std(d: std::time::Duration) -> Self {
        Duration(d.as_nanos() * 1_000)
    }
}

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// The farthest representable instant; used as "never".
    pub const MAX: Instant = Instant(u128::MAX);

    /// The instant `ps` picoseconds after the epoch.
    pub const fn from_ps(ps: u128) -> Self {
        Instant(ps)
    }
    /// Picoseconds since the epoch.
    pub const fn as_ps(self) -> u128 {
        self.0
    }
    /// Time since the epoch.
    pub const fn since_epoch(self) -> Duration {
        Duration(self.0)
    }
    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub const fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, or `None` on overflow.
    pub const fn checked_add(self, d: Duration) -> Option<Instant> {
        match self.0.checked_add(d.0) {
            Some(v) => Some(Instant(v)),
            None => None,
        }
    }
    /// `self + d`, saturating at [`Instant::MAX`].
    pub const fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl Add<Duration> for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0 + rhs.0)
    }
}
impl AddAssign<Duration> for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        self.0 += rhs.0;
    }
}
impl Sub<Duration> for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration(self.0 - rhs.0)
    }
}
impl SubAssign<Duration> for Duration {
    fn sub_assign(&mut self, rhs: Duration) {
        self.0 -= rhs.0;
    }
}
impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0 + rhs.0)
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        self.0 += rhs.0;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0 - rhs.0)
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, rhs: Instant) -> Duration {
        Duration(self.0 - rhs.0)
    }
}

impl fmt::Display for Duration {
    /// Shows the duration in the largest unit that keeps it readable, exact when possible.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        let (div, unit) = if ps >= PS_PER_SEC {
            (PS_PER_SEC, "s")
        } else if ps >= 1_000_000_000 {
            (1_000_000_000, "ms")
        } else if ps >= 1_000_000 {
            (1_000_000, "µs")
        } else if ps >= 1_000 {
            (1_000, "ns")
        } else {
            return write!(f, "{ps} ps");
        };
        let whole = ps / div;
        let frac = ps % div;
        if frac == 0 {
            write!(f, "{whole} {unit}")
        } else {
            // three decimals, rounded down: reports only
            write!(f, "{whole}.{:03} {unit}", frac * 1000 / div)
        }
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", Duration(self.0))
    }
}

/// The IEEE 802.3 rates at which byte times are whole picoseconds.
pub const IEEE_RATES: [Rate; 14] = [
    Rate::from_mbps(10),
    Rate::from_mbps(100),
    Rate::from_gbps(1),
    Rate::from_mbps(2_500),
    Rate::from_gbps(5),
    Rate::from_gbps(10),
    Rate::from_gbps(25),
    Rate::from_gbps(40),
    Rate::from_gbps(50),
    Rate::from_gbps(100),
    Rate::from_gbps(200),
    Rate::from_gbps(400),
    Rate::from_gbps(800),
    Rate::from_gbps(1_600),
];

impl Rate {
    /// A rate of `bps` bits per second; `None` for zero.
    pub const fn from_bps(bps: u64) -> Option<Self> {
        if bps == 0 { None } else { Some(Rate(bps)) }
    }
    /// A rate of `mbps` megabits per second (must be non-zero).
    pub const fn from_mbps(mbps: u64) -> Self {
        assert!(mbps > 0, "rate must be non-zero");
        Rate(mbps * 1_000_000)
    }
    /// A rate of `gbps` gigabits per second (must be non-zero).
    pub const fn from_gbps(gbps: u64) -> Self {
        assert!(gbps > 0, "rate must be non-zero");
        Rate(gbps * 1_000_000_000)
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Whether one byte lasts a whole number of picoseconds at this rate.
    pub const fn is_byte_exact(self) -> bool {
        (8 * PS_PER_SEC).is_multiple_of(self.0 as u128)
    }
    /// Time to send `bits` bits, rounded up to the next picosecond.
    pub const fn time_for_bits(self, bits: u64) -> Duration {
        self.time_for_wide_bits(bits as u128)
    }
    /// Time to send `bits` bits given as `u128`, rounded up; saturates at [`Duration::MAX`].
    const fn time_for_wide_bits(self, bits: u128) -> Duration {
        // bits < 2^67 for any byte count that fits u64, times 10^12 < 2^40: no overflow there;
        // saturate anyway so that no input can panic.
        let num = bits.saturating_mul(PS_PER_SEC);
        // every frame's and pause's time fits 64 bits (bits < 1.8e7): one machine division
        // instead of a 128-bit one, the same quotient
        if num <= u64::MAX as u128 {
            return Duration((num as u64).div_ceil(self.0) as u128);
        }
        Duration(num.div_ceil(self.0 as u128))
    }
    /// Time to send `bits` bits if it is a whole number of picoseconds.
    pub const fn exact_time_for_bits(self, bits: u64) -> Option<Duration> {
        let num = bits as u128 * PS_PER_SEC;
        if num.is_multiple_of(self.0 as u128) {
            Some(Duration(num / self.0 as u128))
        } else {
            None
        }
    }
    /// Time to send `bytes` bytes, rounded up to the next picosecond (exact at IEEE rates).
    pub const fn time_for_bytes(self, bytes: u64) -> Duration {
        self.time_for_wide_bits(bytes as u128 * 8)
    }
    /// Time the wire is busy with a frame of `frame_bytes` (FCS included): the frame plus
    /// preamble, SFD and inter-frame gap.
    pub const fn wire_time(self, frame_bytes: u64) -> Duration {
        self.time_for_wide_bits((frame_bytes as u128 + (PREAMBLE_SFD_BYTES + IFG_BYTES) as u128) * 8)
    }
    /// Length of `quanta` pause quanta (512 bit times each) at this rate.
    pub const fn quanta_time(self, quanta: u64) -> Duration {
        self.time_for_wide_bits(quanta as u128 * BITS_PER_QUANTUM as u128)
    }
    /// Whole bytes that can be sent in `d` at this rate.
    pub const fn bytes_in(self, d: Duration) -> u128 {
        // d * rate overflows u128 only for spans beyond 10^19 years at 1.6 Tb/s; saturate.
        d.0.saturating_mul(self.0 as u128) / (8 * PS_PER_SEC)
    }
    /// Pause quanta in `d` at this rate, rounded up.
    pub const fn quanta_in(self, d: Duration) -> u128 {
        d.0.saturating_mul(self.0 as u128)
            .div_ceil(BITS_PER_QUANTUM as u128 * PS_PER_SEC)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b.is_multiple_of(1_000_000_000_000) {
            write!(f, "{}T", b / 1_000_000_000_000)
        } else if b.is_multiple_of(1_000_000_000) {
            write!(f, "{}G", b / 1_000_000_000)
        } else if b.is_multiple_of(100_000_000) && b >= 1_000_000_000 {
            write!(f, "{}.{}G", b / 1_000_000_000, (b % 1_000_000_000) / 100_000_000)
        } else if b.is_multiple_of(1_000_000) {
            write!(f, "{}M", b / 1_000_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

/// Error from parsing a rate written as `100G`, `2.5G`, `10M`, `1.6T` or plain bits per second.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid rate {found:?}: expected a positive number of bits per second, optionally with a suffix K, M, G or T (e.g. 100G, 2.5G, 10M)"
)]
pub struct ParseRateError {
    /// The text that was not a rate.
    pub found: String,
}

impl core::str::FromStr for Rate {
    type Err = ParseRateError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseRateError { found: s.to_string() };
        let t = s.trim();
        let t = t
            .strip_suffix("bps")
            .or_else(|| t.strip_suffix("b/s"))
            .unwrap_or(t);
        let (num, mult): (&str, u64) = match t.chars().last() {
            Some('K' | 'k') => (&t[..t.len() - 1], 1_000),
            Some('M' | 'm') => (&t[..t.len() - 1], 1_000_000),
            Some('G' | 'g') => (&t[..t.len() - 1], 1_000_000_000),
            Some('T' | 't') => (&t[..t.len() - 1], 1_000_000_000_000),
            _ => (t, 1),
        };
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if int.is_empty() && frac.is_empty() {
            return Err(err());
        }
        let int: u64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| err())?
        };
        let mut value = int.checked_mul(mult).ok_or_else(err)?;
        let mut scale = mult;
        for c in frac.chars() {
            let d = c.to_digit(10).ok_or_else(err)? as u64;
            if scale % 10 != 0 {
                return Err(err());
            }
            scale /= 10;
            value = value.checked_add(d * scale).ok_or_else(err)?;
        }
        Rate::from_bps(value).ok_or_else(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ieee_rate_has_whole_picosecond_bytes() {
        let expected_byte_ps = [
            800_000, 80_000, 8_000, 3_200, 1_600, 800, 320, 200, 160, 80, 40, 20, 10, 5,
        ];
        for (rate, ps) in IEEE_RATES.iter().zip(expected_byte_ps) {
            assert!(rate.is_byte_exact(), "{rate}");
            assert_eq!(rate.exact_time_for_bits(8), Some(Duration::from_ps(ps)), "{rate}");
        }
    }

    #[test]
    fn max_pause_is_33_553_920_bit_times() {
        assert_eq!(
            Rate::from_gbps(100).quanta_time(0xFFFF),
            Duration::from_ps(335_539_200)
        );
        assert_eq!(
            Rate::from_gbps(10).quanta_time(0xFFFF),
            Duration::from_ps(3_355_392_000)
        );
        assert_eq!(
            Rate::from_gbps(800).quanta_time(0xFFFF),
            Duration::from_ps(41_942_400)
        );
    }

    #[test]
    fn minimum_frame_occupies_672_bit_times() {
        let r = Rate::from_gbps(100);
        assert_eq!(r.wire_time(MIN_FRAME_BYTES), r.time_for_bits(672));
        assert_eq!(r.wire_time(64), Duration::from_ps(6_720));
    }

    #[test]
    fn rates_parse_in_user_notation() {
        assert_eq!("100G".parse::<Rate>().unwrap(), Rate::from_gbps(100));
        assert_eq!("2.5G".parse::<Rate>().unwrap(), Rate::from_mbps(2_500));
        assert_eq!("1.6T".parse::<Rate>().unwrap(), Rate::from_gbps(1_600));
        assert_eq!("10M".parse::<Rate>().unwrap(), Rate::from_mbps(10));
        assert_eq!("25000000000".parse::<Rate>().unwrap(), Rate::from_gbps(25));
        for bad in ["", "G", "0", "-1G", "1.5.5G", "abc", "1.0000000001G"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad:?} must not parse");
        }
    }

    #[test]
    fn rate_display_round_trips() {
        for r in IEEE_RATES {
            assert_eq!(r.to_string().parse::<Rate>().unwrap(), r);
        }
    }

    #[test]
    fn clock_survives_a_century_of_uptime() {
        let century = Duration::from_secs(100 * 366 * 24 * 3600);
        let t = Instant::ZERO + century;
        assert!(t.checked_add(century).is_some());
        assert_eq!(t - Instant::ZERO, century);
    }

    #[test]
    fn the_64_bit_division_gives_the_128_bit_quotient_on_both_sides_of_its_edge() {
        let edge = u64::MAX as u128 / PS_PER_SEC;
        let rates = [
            1,
            3,
            7,
            9_999_999,
            25_781_250_000,
            100_000_000_000,
            u64::MAX - 1,
            u64::MAX,
        ];
        let bits = [0, 1, 511, 12_336, edge - 1, edge, edge + 1, edge + 2, 1 << 70];
        for &r in &rates {
            for &b in &bits {
                let wide = Duration(b.saturating_mul(PS_PER_SEC).div_ceil(r as u128));
                assert_eq!(Rate(r).time_for_wide_bits(b), wide, "{b} bits at {r} b/s");
            }
        }
    }

    #[test]
    fn extreme_sizes_do_not_overflow() {
        let r = Rate::from_mbps(10);
        assert_eq!(
            r.time_for_bytes(u64::MAX),
            Duration::from_ps(u64::MAX as u128 * 800_000)
        );
        assert_eq!(
            r.wire_time(u64::MAX),
            Duration::from_ps((u64::MAX as u128 + 20) * 800_000)
        );
        assert_eq!(
            r.quanta_time(u64::MAX),
            r.time_for_wide_bits(u64::MAX as u128 * 512)
        );
        assert_eq!(
            Rate::from_gbps(1_600).bytes_in(Duration::MAX),
            u128::MAX / (8 * PS_PER_SEC)
        );
    }

    #[test]
    fn bytes_and_quanta_in_a_duration() {
        let r = Rate::from_gbps(100);
        assert_eq!(r.bytes_in(Duration::from_us(1)), 12_500);
        assert_eq!(r.quanta_in(r.quanta_time(394)), 394);
        assert_eq!(r.quanta_in(Duration::from_ps(1)), 1);
    }
}
