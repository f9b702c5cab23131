//! PFC headroom of the simulated switches: the bytes a lossless priority must still absorb
//! after it decides XOFF, by IEEE 802.1Qbb Annex N ([`lossless_proto::headroom::annex_n`],
//! the one implementation of the formula; this module only picks the simulator's defaults).
//!
//! A switch port's default headroom counts, at the link rate: the largest frame the switch may
//! be receiving when it decides, the PFC frame (672 bit times), the cable's round trip at
//! 5 ns/m, both directions' 802.3 interface delays, the peer's 802.3 reaction delay and the
//! largest frame the peer may have just started — every frame carrying the switch's `mtu`.

pub mod verify;
pub mod worst_case;

use lossless_proto::headroom::{AnnexNInput, InterfaceDelay, PeerDelay, frame_bytes};
use lossless_proto::units::{Duration, Rate};

pub use lossless_proto::headroom::{
    FRAME_OVERHEAD_BYTES, PAUSE_FRAME_BIT_TIMES, PROPAGATION_PS_PER_M, interface_delay_bit_times, propagation,
};

/// Headroom in bytes for one lossless priority of a port at `rate` on `cable_m` metres of
/// cable carrying payloads of up to `mtu` bytes (Annex N with 802.3 delays, rounded up).
pub fn headroom_bytes(rate: Rate, cable_m: u64, mtu: u64) -> u64 {
    AnnexNInput {
        rate,
        cable_m,
        max_frame_bytes: frame_bytes(mtu),
        lossless_frame_bytes: frame_bytes(mtu),
        interface_delay: InterfaceDelay::Ieee8023,
        peer_delay: PeerDelay::Ieee8023,
    }
    .compute()
    .headroom_bytes
}

/// [`headroom_bytes`] for a link given by its one-way delay rather than its length: the
/// cable that long at 5 ns/m, rounded up to a whole metre.
pub fn headroom_bytes_for_delay(rate: Rate, delay: Duration, mtu: u64) -> u64 {
    let m = delay.as_ps().div_ceil(PROPAGATION_PS_PER_M);
    headroom_bytes(rate, u64::try_from(m).unwrap_or(u64::MAX), mtu)
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
