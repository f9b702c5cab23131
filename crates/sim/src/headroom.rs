//! PFC headroom: the bytes a lossless priority must still absorb after it decides XOFF
//! (IEEE 802.1Qbb Annex N; the per-delay breakdown is in standards.md).
//!
//! Sum of, in bit times at the link rate:
//! - the largest frame the receiver may be receiving when it decides (with preamble and IFG);
//! - the PAUSE/PFC frame itself, 672 bit times;
//! - the round trip on the cable, 2 × length × 5 ns/m;
//! - both interface delays (PHY/PCS, 802.3 upper bounds);
//! - the peer's reaction delay (802.3 31B.3.7 table, in pause quanta);
//! - the largest frame the peer may have just started (with preamble and IFG).

use lossless_proto::flow_control::reaction_delay_quanta;
use lossless_proto::units::{BITS_PER_QUANTUM, Duration, IFG_BYTES, PREAMBLE_SFD_BYTES, Rate};

/// Propagation delay per metre of cable, picoseconds (≈ 5 ns/m).
pub const PROPAGATION_PS_PER_M: u128 = 5_000;

/// Bytes of Ethernet header, 802.1Q tag and FCS around a payload.
pub const FRAME_OVERHEAD_BYTES: u64 = 14 + 4 + 4;

/// Bit times of a PAUSE/PFC frame on the wire (64 bytes + preamble/SFD + IFG).
pub const PAUSE_FRAME_BIT_TIMES: u64 = 672;

/// Propagation delay of `length_m` metres of cable.
pub const fn propagation(length_m: u64) -> Duration {
    Duration::from_ps(length_m as u128 * PROPAGATION_PS_PER_M)
}

/// 802.3 upper bound of one interface's (PHY/PCS) delay in bit times at `rate`.
pub const fn interface_delay_bit_times(rate: Rate) -> u64 {
    let bps = rate.bps();
    if bps <= 10_000_000_000 {
        8_192
    } else if bps <= 25_000_000_000 {
        6_144
    } else if bps <= 50_000_000_000 {
        24_576
    } else {
        122_880
    }
}

/// Headroom in bytes for one lossless priority of a port at `rate` on `cable_m` metres of
/// cable carrying payloads of up to `mtu` bytes (Annex N sum, rounded up to whole bytes).
pub fn headroom_bytes(rate: Rate, cable_m: u64, mtu: u64) -> u64 {
    headroom_bytes_for_delay(rate, propagation(cable_m), mtu)
}

/// [`headroom_bytes`] for a link whose one-way propagation delay is `delay` (a link given
/// by its delay rather than its length).
pub fn headroom_bytes_for_delay(rate: Rate, delay: Duration, mtu: u64) -> u64 {
    let max_frame_bits = (mtu + FRAME_OVERHEAD_BYTES + PREAMBLE_SFD_BYTES + IFG_BYTES) * 8;
    let cable_ps = 2 * delay.as_ps();
    let cable_bits = (cable_ps * rate.bps() as u128).div_ceil(1_000_000_000_000) as u64;
    let bits = max_frame_bits
        + PAUSE_FRAME_BIT_TIMES
        + cable_bits
        + 2 * interface_delay_bit_times(rate)
        + reaction_delay_quanta(rate) * BITS_PER_QUANTUM
        + max_frame_bits;
    bits.div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_at_100g_matches_the_annex_n_sum() {
        // 2 × (1522 + 20) × 8 = 24_672; 672; 2 × 100 m × 5 ns × 100 Gb/s = 100_000;
        // 2 × 122_880 = 245_760; 394 × 512 = 201_728 → 572_832 bit times = 71_604 bytes.
        assert_eq!(headroom_bytes(Rate::from_gbps(100), 100, 1500), 71_604);
    }

    #[test]
    fn headroom_grows_with_cable_length_by_the_round_trip() {
        let r = Rate::from_gbps(10);
        let extra = headroom_bytes(r, 1_000, 1500) - headroom_bytes(r, 0, 1500);
        // 2 × 1000 m × 5 ns/m = 10 µs at 10 Gb/s = 12_500 bytes
        assert_eq!(extra, 12_500);
    }

    #[test]
    fn propagation_is_five_ns_per_metre() {
        assert_eq!(propagation(3), Duration::from_ns(15));
    }
}
