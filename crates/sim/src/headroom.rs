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

use lossless_proto::flow_control::Mode;
use lossless_proto::headroom::{AnnexNInput, InterfaceDelay, PeerDelay, frame_bytes};
use lossless_proto::units::{Duration, Rate};

use crate::config::{LinkConfig, SimConfig, SwitchConfig};
use crate::frame::NodeId;

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

/// The headroom one switch port reserves in its switch's buffer: per lossless priority, or
/// (a port running link-level PAUSE) once for the whole port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortReserve {
    /// Bytes reserved for each priority.
    pub per_priority: [u64; 8],
    /// Bytes reserved for the port as a whole (link PAUSE).
    pub port: u64,
}

impl PortReserve {
    /// All of it, bytes (without overflow: the sum of nine `u64`s fits a `u128`).
    pub fn total(&self) -> u128 {
        self.per_priority.iter().map(|&b| u128::from(b)).sum::<u128>() + u128::from(self.port)
    }
}

/// The headroom of the port at end `a` (or `b`) of `link` on a switch configured with `sw`:
/// `sw.headroom_bytes` or the default for the link, for every priority the port may have to
/// keep lossless: its PFC priorities; with DCBX, those it enables, or all eight when it is
/// willing to adopt the peer's; with link PAUSE one reserve for the port.
pub fn port_reserve(link: &LinkConfig, at_a: bool, sw: &SwitchConfig) -> PortReserve {
    let (fc, dcbx) = if at_a {
        (&link.fc_a, &link.dcbx_a)
    } else {
        (&link.fc_b, &link.dcbx_b)
    };
    let h = sw
        .headroom_bytes
        .unwrap_or_else(|| headroom_bytes_for_delay(link.rate, link.propagation(), sw.mtu));
    let mask = match dcbx {
        Some(d) if d.pfc.willing => 0xFF,
        Some(d) => d.pfc.params().enable,
        None => match fc.mode {
            Mode::Off => 0,
            Mode::Pause => {
                return PortReserve {
                    per_priority: [0; 8],
                    port: h,
                };
            }
            Mode::Pfc => fc.active_mask(),
        },
    };
    PortReserve {
        per_priority: std::array::from_fn(|q| if mask & (1 << q) != 0 { h } else { 0 }),
        port: 0,
    }
}

/// The headroom reserves of every port of switch `node` of `config`, in port order (the
/// order of the links that touch it, `a` before `b`), and their total.
pub fn switch_reserves(config: &SimConfig, node: NodeId, sw: &SwitchConfig) -> (Vec<PortReserve>, u128) {
    let mut ports = Vec::new();
    for l in &config.links {
        for (end, at_a) in [(l.a, true), (l.b, false)] {
            if end == node {
                ports.push(port_reserve(l, at_a, sw));
            }
        }
    }
    let total = ports.iter().map(PortReserve::total).sum();
    (ports, total)
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
