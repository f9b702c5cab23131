//! IEEE 802.1Qbb Annex N: the bytes that keep arriving after a receiver decides XOFF, as the
//! sum of six delays in bit times at the link rate:
//!
//! 1. the largest frame the receiver may be receiving when it decides (preamble and IFG
//!    included): its bytes are on their way whatever the decision;
//! 2. the PFC frame itself, 672 bit times;
//! 3. the cable's round trip, 2 × length × 5 ns/m;
//! 4. both interface (PHY/PCS) delays, one per direction: the PFC frame crosses the
//!    receiver's transmit and the peer's receive path, the data the peer's transmit and the
//!    receiver's receive path ([`InterfaceDelay`]);
//! 5. the peer's reaction delay: from the end of the PFC frame's reception until no new frame
//!    may start (802.3 31B.3.7, in pause quanta of 512 bit times; [`PeerDelay`]);
//! 6. the largest lossless frame the peer may have just started before that instant.
//!
//! The headroom in bytes is the sum rounded up to whole bytes. The figure is in wire bytes:
//! the preamble and IFG of the frames that arrive are counted although a buffer stores none of
//! them, so the sum is a slight over-estimate of stored bytes (20 bytes per frame).

use serde::Serialize;

use super::{PAUSE_FRAME_BIT_TIMES, bit_times_in, interface_delay_bit_times, propagation};
use crate::flow_control::reaction_delay_quanta;
use crate::units::{BITS_PER_QUANTUM, Duration, IFG_BYTES, PREAMBLE_SFD_BYTES, Rate};

/// One interface's (PHY/PCS) delay per direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InterfaceDelay {
    /// The 802.3 upper bound at the rate ([`interface_delay_bit_times`]).
    Ieee8023,
    /// No PHY delay (the cable only).
    None,
    /// A given one-way delay.
    Given(Duration),
}

/// The peer's reaction delay after it has received a PFC frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerDelay {
    /// The 802.3 31B.3.7 maximum at the rate ([`reaction_delay_quanta`]).
    Ieee8023,
    /// A given number of pause quanta (512 bit times each).
    Quanta(u64),
    /// A given time.
    Given(Duration),
}

impl InterfaceDelay {
    /// Bit times of one direction's delay at `rate`.
    pub fn bit_times(self, rate: Rate) -> u64 {
        match self {
            InterfaceDelay::Ieee8023 => interface_delay_bit_times(rate),
            InterfaceDelay::None => 0,
            InterfaceDelay::Given(d) => bit_times_in(rate, d),
        }
    }
    /// One direction's delay at `rate` as a time (what a simulated link adds per direction).
    pub fn duration(self, rate: Rate) -> Duration {
        match self {
            InterfaceDelay::Given(d) => d,
            other => rate.time_for_bits(other.bit_times(rate)),
        }
    }
}

impl PeerDelay {
    /// Bit times of the delay at `rate`.
    pub fn bit_times(self, rate: Rate) -> u64 {
        match self {
            PeerDelay::Ieee8023 => reaction_delay_quanta(rate) * BITS_PER_QUANTUM,
            PeerDelay::Quanta(q) => q.saturating_mul(BITS_PER_QUANTUM),
            PeerDelay::Given(d) => bit_times_in(rate, d),
        }
    }
    /// The delay at `rate` as a time (what a simulated peer's engine is configured with).
    pub fn duration(self, rate: Rate) -> Duration {
        match self {
            PeerDelay::Given(d) => d,
            other => rate.time_for_bits(other.bit_times(rate)),
        }
    }
}

/// What Annex N is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AnnexNInput {
    /// Link rate.
    pub rate: Rate,
    /// Cable length, metres.
    pub cable_m: u64,
    /// Largest frame (FCS included) the receiver may be receiving when it decides.
    pub max_frame_bytes: u64,
    /// Largest frame of the lossless priority (FCS included) the peer may have just started.
    pub lossless_frame_bytes: u64,
    /// Each direction's interface delay.
    pub interface_delay: InterfaceDelay,
    /// The peer's reaction delay.
    pub peer_delay: PeerDelay,
}

/// Which of the six delays a [`Term`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKind {
    /// The largest frame being received when the receiver decides.
    MaxFrameReceived,
    /// The PFC frame itself.
    PfcFrame,
    /// The cable's round trip.
    CableRoundTrip,
    /// Both directions' interface delays.
    InterfaceDelays,
    /// The peer's reaction delay.
    PeerReaction,
    /// The largest lossless frame the peer may have just started.
    PeerMaxFrame,
}

impl TermKind {
    /// The name used in JSON and tables.
    pub fn name(self) -> &'static str {
        match self {
            TermKind::MaxFrameReceived => "max_frame_received",
            TermKind::PfcFrame => "pfc_frame",
            TermKind::CableRoundTrip => "cable_round_trip",
            TermKind::InterfaceDelays => "interface_delays",
            TermKind::PeerReaction => "peer_reaction",
            TermKind::PeerMaxFrame => "peer_max_frame",
        }
    }
}

/// One delay of the sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Term {
    /// Which delay.
    pub kind: TermKind,
    /// Its length in bit times at the link rate.
    pub bit_times: u64,
}

/// The Annex N sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AnnexN {
    /// The six delays, in the order of [`TermKind`].
    pub terms: [Term; 6],
    /// Their sum in bit times.
    pub total_bit_times: u64,
    /// The headroom: the sum in bytes, rounded up.
    pub headroom_bytes: u64,
}

/// Bit times a frame of `frame_bytes` occupies on the wire with preamble, SFD and IFG.
const fn wire_bits(frame_bytes: u64) -> u64 {
    (frame_bytes + PREAMBLE_SFD_BYTES + IFG_BYTES) * 8
}

impl AnnexNInput {
    /// The sum, term by term.
    pub fn compute(&self) -> AnnexN {
        let rate = self.rate;
        let cable = bit_times_in(rate, propagation(self.cable_m).saturating_mul(2));
        let t = |kind, bit_times| Term { kind, bit_times };
        let terms = [
            t(TermKind::MaxFrameReceived, wire_bits(self.max_frame_bytes)),
            t(TermKind::PfcFrame, PAUSE_FRAME_BIT_TIMES),
            t(TermKind::CableRoundTrip, cable),
            t(
                TermKind::InterfaceDelays,
                self.interface_delay.bit_times(rate).saturating_mul(2),
            ),
            t(TermKind::PeerReaction, self.peer_delay.bit_times(rate)),
            t(TermKind::PeerMaxFrame, wire_bits(self.lossless_frame_bytes)),
        ];
        let total = terms.iter().fold(0u64, |s, t| s.saturating_add(t.bit_times));
        AnnexN {
            terms,
            total_bit_times: total,
            headroom_bytes: total.div_ceil(8),
        }
    }
}

impl AnnexN {
    /// The term of one kind.
    pub fn term(&self, kind: TermKind) -> Term {
        self.terms[kind as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headroom::frame_bytes;

    fn input(gbps: u64, cable_m: u64, mtu: u64) -> AnnexNInput {
        AnnexNInput {
            rate: Rate::from_gbps(gbps),
            cable_m,
            max_frame_bytes: frame_bytes(mtu),
            lossless_frame_bytes: frame_bytes(mtu),
            interface_delay: InterfaceDelay::Ieee8023,
            peer_delay: PeerDelay::Ieee8023,
        }
    }

    #[test]
    fn annex_n_at_100g_100m_sums_the_six_terms_as_tabulated() {
        // 2 × (1522 + 20) × 8 = 24_672; 672; 2 × 100 m × 5 ns × 100 Gb/s = 100_000;
        // 2 × 122_880 = 245_760; 394 × 512 = 201_728 → 572_832 bit times = 71_604 bytes.
        let a = input(100, 100, 1500).compute();
        let bits: Vec<u64> = a.terms.iter().map(|t| t.bit_times).collect();
        assert_eq!(bits, [12_336, 672, 100_000, 245_760, 201_728, 12_336]);
        assert_eq!(a.total_bit_times, 572_832);
        assert_eq!(a.headroom_bytes, 71_604);
    }

    #[test]
    fn the_cisco_press_max_frame_term_is_73_888_bit_times_for_a_9216_byte_frame() {
        // the worked example counts a 9216-byte frame with 96 bit times of IFG and 64 of
        // preamble: that frame is a 9194-byte payload with header, tag and FCS
        let a = input(100, 0, 9216 - 22).compute();
        assert_eq!(a.term(TermKind::MaxFrameReceived).bit_times, 73_888);
        assert_eq!(a.term(TermKind::PfcFrame).bit_times, 672);
    }

    #[test]
    fn peer_reaction_follows_the_8023_table_at_each_rate() {
        // 30_720 = 60 quanta (10G), 40_960 = 80 (25G), 60_416 = 118 (40G), 201_728 = 394
        // (100G), 463_360 = 905 (400G): the D-Resp row of the Annex N worked example
        for (gbps, bits) in [
            (10, 30_720),
            (25, 40_960),
            (40, 60_416),
            (100, 201_728),
            (400, 463_360),
        ] {
            let a = input(gbps, 3, 1500).compute();
            assert_eq!(a.term(TermKind::PeerReaction).bit_times, bits, "{gbps}G");
        }
    }

    #[test]
    fn given_delays_replace_the_8023_bounds() {
        let mut i = input(100, 3, 1500);
        i.interface_delay = InterfaceDelay::Given(Duration::from_ns(100));
        i.peer_delay = PeerDelay::Quanta(10);
        let a = i.compute();
        assert_eq!(a.term(TermKind::InterfaceDelays).bit_times, 2 * 10_000);
        assert_eq!(a.term(TermKind::PeerReaction).bit_times, 5_120);
        i.interface_delay = InterfaceDelay::None;
        i.peer_delay = PeerDelay::Given(Duration::from_ns(1));
        let a = i.compute();
        assert_eq!(a.term(TermKind::InterfaceDelays).bit_times, 0);
        assert_eq!(a.term(TermKind::PeerReaction).bit_times, 100);
    }

    #[test]
    fn headroom_grows_by_the_cable_round_trip_and_rounds_up_to_bytes() {
        let r = |m| input(10, m, 1500).compute().headroom_bytes;
        // 2 × 1000 m × 5 ns/m = 10 µs at 10 Gb/s = 12_500 bytes
        assert_eq!(r(1_000) - r(0), 12_500);
        // 1 m: 100 bit times = 12.5 bytes, rounded up with the rest
        let a = input(10, 1, 1500).compute();
        assert_eq!(a.headroom_bytes, a.total_bit_times.div_ceil(8));
        assert_eq!(a.total_bit_times % 8, 4);
    }

    #[test]
    fn delays_as_durations_are_the_bit_times_at_the_rate() {
        let r = Rate::from_gbps(100);
        assert_eq!(InterfaceDelay::Ieee8023.duration(r), Duration::from_ps(1_228_800));
        assert_eq!(PeerDelay::Quanta(394).duration(r), r.quanta_time(394));
        assert_eq!(PeerDelay::Ieee8023.duration(r), r.quanta_time(394));
        assert_eq!(InterfaceDelay::None.duration(r), Duration::ZERO);
    }
}
