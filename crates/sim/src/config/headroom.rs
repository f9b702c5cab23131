//! PFC headroom of the simulated switches: the bytes a lossless priority must still absorb
//! after it decides XOFF, from IEEE 802.1Qbb Annex N ([`lossless_proto::headroom::annex_n`],
//! the one implementation of the formula; this module only picks the simulator's defaults).
//!
//! A switch port's default headroom ([`default_headroom_bytes`]) is the worst case
//! `lossless headroom --verify --reverse-traffic` measures, in closed form: Annex N — at the
//! link rate, the largest frame the switch may be receiving when it decides, the PFC frame
//! (672 bit times), the cable's round trip at 5 ns/m, both directions' interface delays, the
//! peer's reaction delay and the largest frame the peer may have just started — plus the
//! largest frame the switch's own transmitter may have just started towards the peer, which
//! the PFC frame waits for (docs/headroom.md: a busy transmitter costs one more frame, which
//! Annex N does not count). Every frame carries the switch's `mtu` (no larger one crosses it:
//! the scenario refuses them); the delays are 802.3's bounds, or the link's own when larger.

use lossless_proto::flow_control::Mode;
use lossless_proto::headroom::{AnnexNInput, InterfaceDelay, PeerDelay, frame_bytes};
use lossless_proto::units::{Duration, IFG_BYTES, PREAMBLE_SFD_BYTES, Rate};

use crate::buffer::NS3_RESERVE_BYTES;
use crate::config::model::BufferModel;
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
    headroom_bytes(rate, cable_m_for(delay), mtu)
}

/// The cable whose one-way delay is `delay` at 5 ns/m, rounded up to a whole metre.
fn cable_m_for(delay: Duration) -> u64 {
    u64::try_from(delay.as_ps().div_ceil(PROPAGATION_PS_PER_M)).unwrap_or(u64::MAX)
}

/// The default headroom of the switch port at end `a` (or `b`) of `link`, whose frames carry
/// at most `mtu` payload bytes: Annex N with the 802.3 interface and reaction delays (the
/// link's `interface_delay` and the peer's reaction delay instead when they are longer), plus
/// the wire bytes of one more largest frame: the one the switch's own transmitter may have just
/// started towards the peer when it decides, which its PFC frame must wait for. That is the
/// worst case `lossless headroom --verify --reverse-traffic` measures, with Annex N's margin
/// (preamble and IFG of the frames in headroom, which no buffer stores) to spare.
pub fn default_headroom_bytes(link: &LinkConfig, at_a: bool, mtu: u64) -> u64 {
    let rate = link.rate;
    let peer = if at_a { &link.fc_b } else { &link.fc_a };
    let interface_delay = if link.interface_delay > InterfaceDelay::Ieee8023.duration(rate) {
        InterfaceDelay::Given(link.interface_delay)
    } else {
        InterfaceDelay::Ieee8023
    };
    let peer_delay = if peer.reaction_delay > PeerDelay::Ieee8023.duration(rate) {
        PeerDelay::Given(peer.reaction_delay)
    } else {
        PeerDelay::Ieee8023
    };
    let frame = frame_bytes(mtu);
    let annex_n = AnnexNInput {
        rate,
        cable_m: cable_m_for(link.propagation()),
        max_frame_bytes: frame,
        lossless_frame_bytes: frame,
        interface_delay,
        peer_delay,
    }
    .compute()
    .headroom_bytes;
    annex_n.saturating_add(frame + PREAMBLE_SFD_BYTES + IFG_BYTES)
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
        .unwrap_or_else(|| default_headroom_bytes(link, at_a, sw.mtu));
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

/// The HPCC ns-3 switch's headroom for a port at `rate` on a link of one-way `delay`:
/// 3 × rate × delay / 8 bytes, with the delay in whole nanoseconds and the fork's integer
/// steps (`third.cc`: `rate * delay / 8 / 1000000000 * 3`).
pub fn ns3_headroom_bytes(rate: Rate, delay: Duration) -> u64 {
    let delay_ns = delay.as_ps() / 1_000;
    let h = u128::from(rate.bps()) * delay_ns / 8 / 1_000_000_000 * 3;
    u64::try_from(h).unwrap_or(u64::MAX)
}

/// What the port at end `a` (or `b`) of `link` takes out of its switch's buffer under
/// `model`: [`port_reserve`] for the shared buffer; for the HPCC ns-3 MMU, one headroom per
/// port (`headroom_bytes` or [`ns3_headroom_bytes`]) and its 4096-byte reserve, whatever its
/// priorities (the fork's `ConfigNPort`).
pub fn port_reserve_in(model: BufferModel, link: &LinkConfig, at_a: bool, sw: &SwitchConfig) -> PortReserve {
    match model {
        BufferModel::Shared => port_reserve(link, at_a, sw),
        BufferModel::Ns3 => PortReserve {
            per_priority: [0; 8],
            port: sw
                .headroom_bytes
                .unwrap_or_else(|| ns3_headroom_bytes(link.rate, link.propagation()))
                .saturating_add(NS3_RESERVE_BYTES),
        },
    }
}

/// The reserves of every port of switch `node` of `config` under its buffer model, in port
/// order (the order of the links that touch it, `a` before `b`), and their total.
pub fn switch_reserves(config: &SimConfig, node: NodeId, sw: &SwitchConfig) -> (Vec<PortReserve>, u128) {
    let mut ports = Vec::new();
    for l in &config.links {
        for (end, at_a) in [(l.a, true), (l.b, false)] {
            if end == node {
                ports.push(port_reserve_in(config.model.buffer, l, at_a, sw));
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
    fn the_default_adds_one_largest_frame_to_annex_n_and_takes_the_links_longer_delays() {
        use lossless_proto::flow_control::FlowControlConfig;
        let rate = Rate::from_gbps(100);
        let fc = FlowControlConfig::pfc(rate, [0; 6], 1 << 3);
        let mut link = LinkConfig {
            length_m: 100,
            ..LinkConfig::new(0, 1, rate, fc)
        };
        // Annex N (71,604) and the 1522-byte frame the switch may be sending, with its 20 bytes
        let d = default_headroom_bytes(&link, false, 1500);
        assert_eq!(d, 71_604 + 1542);
        // an interface delay or a peer reaction beyond 802.3's bounds counts as given
        link.interface_delay = Duration::from_us(2);
        let phy = 2 * (2_000_000 / 80 - 122_880 / 8);
        assert_eq!(default_headroom_bytes(&link, false, 1500), d + phy);
        link.interface_delay = Duration::ZERO;
        link.fc_a.reaction_delay = rate.quanta_time(1000);
        assert_eq!(default_headroom_bytes(&link, false, 1500), d + (1000 - 394) * 64);
        // the other end's peer is b, whose reaction is the 802.3 one
        assert_eq!(default_headroom_bytes(&link, true, 1500), d);
    }

    #[test]
    fn propagation_is_five_ns_per_metre() {
        assert_eq!(propagation(3), Duration::from_ns(15));
    }
}
