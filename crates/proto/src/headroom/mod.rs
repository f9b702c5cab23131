//! PFC headroom calculators: how many bytes a lossless priority must still absorb after its
//! receiver decides XOFF, computed three ways, each exactly as its source computes it.
//!
//! - [`annex_n`]: IEEE 802.1Qbb Annex N, term by term in bit times (the worst-case delay
//!   model; 802.3 interface delays and reaction delays by default).
//! - [`mlx5`]: NVIDIA's mlx5 NIC driver, the upstream Linux `calculate_xoff` and the newer
//!   `mlx5e_calculate_buf_sz_and_thresholds` of Mellanox's nic-kernel tree, in the driver's
//!   own `u32` integer arithmetic (wrapping included).
//! - [`sonic`]: SONiC's Mellanox buffer model (`buffer_headroom_mellanox.lua` as of
//!   sonic-swss#3235), with the ASIC presets of `asic_table.j2`, in exact rational arithmetic.
//!
//! Every function is pure: no clock, no I/O. Byte and bit counts are integers; the SONiC model's
//! fractional intermediates are exact fractions ([`sonic::Ratio`]).

pub mod annex_n;
pub mod mlx5;
pub mod sonic;

pub use annex_n::{AnnexN, AnnexNInput, InterfaceDelay, PeerDelay, Term, TermKind};

use crate::units::{Duration, Rate};

/// Bytes of Ethernet header (14), 802.1Q tag (4) and FCS (4) around a payload.
pub const FRAME_OVERHEAD_BYTES: u64 = 14 + 4 + 4;

/// Smallest Ethernet frame in bytes, FCS included.
pub const MIN_FRAME_BYTES: u64 = 64;

/// Propagation delay per metre of cable, picoseconds (≈ 5 ns/m, the figure Annex N uses).
pub const PROPAGATION_PS_PER_M: u128 = 5_000;

/// Bit times of a PAUSE/PFC frame on the wire (64 bytes + preamble/SFD + IFG).
pub const PAUSE_FRAME_BIT_TIMES: u64 = 672;

/// The frame (FCS included) that carries a payload of `mtu` bytes with an 802.1Q tag.
pub const fn frame_bytes(mtu: u64) -> u64 {
    let l = mtu + FRAME_OVERHEAD_BYTES;
    if l < MIN_FRAME_BYTES { MIN_FRAME_BYTES } else { l }
}

/// Propagation delay of `length_m` metres of cable.
pub const fn propagation(length_m: u64) -> Duration {
    Duration::from_ps(length_m as u128 * PROPAGATION_PS_PER_M)
}

/// The 802.3 upper bound of one interface's (PHY/PCS) delay per direction, in bit times.
///
/// The figures Annex N worked examples quote: 8,192 (10G), 6,144 (25G), 24,576 (40G) and
/// 122,880 (100G) bit times. Rates between rows take the next higher row (≤ 10G: 8,192;
/// 50G: 24,576); rates above 100G take the 100G figure, the highest tabulated.
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

/// Bit times `d` lasts at `rate`, rounded up.
pub fn bit_times_in(rate: Rate, d: Duration) -> u64 {
    let bits = d
        .as_ps()
        .saturating_mul(u128::from(rate.bps()))
        .div_ceil(crate::units::PS_PER_SEC);
    u64::try_from(bits).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_bytes_adds_header_tag_and_fcs_and_never_goes_below_64() {
        assert_eq!(frame_bytes(1500), 1522);
        assert_eq!(frame_bytes(9216), 9238);
        assert_eq!(frame_bytes(10), 64);
    }

    #[test]
    fn propagation_is_five_ns_per_metre() {
        assert_eq!(propagation(3), Duration::from_ns(15));
    }

    #[test]
    fn bit_times_round_up_to_whole_bits() {
        let r = Rate::from_gbps(10);
        assert_eq!(bit_times_in(r, Duration::from_ns(1)), 10);
        assert_eq!(bit_times_in(r, Duration::from_ps(1)), 1);
        assert_eq!(bit_times_in(r, Duration::ZERO), 0);
    }
}
