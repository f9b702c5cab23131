//! Modelling choices that differ between an 802.3-exact simulation (the default) and the HPCC
//! ns-3 reference simulator (`[model] preset = "hpcc-ns3"`), each a named option: how frames
//! occupy the wire and how big RoCEv2 packets are, the ideal flow completion time that
//! slowdowns divide by, how a host NIC queues the replies it generates, and how switches hash
//! flows over equal-cost paths. `/work/shared/corpus/hpcc-ns3/MODEL.md` (sections 0, 1, 2
//! and 6) describes the reference's choices; `examples/scenarios/README.md` documents the
//! keys.

pub use lossless_proto::flow_control::{Framing, Signalling};
use lossless_proto::units::{Duration, Rate};

/// Nanoseconds per second.
const NS_PER_SEC: u128 = 1_000_000_000;

use crate::frame::NodeId;

/// Every modelling choice of a simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelConfig {
    /// How frames occupy the wire and how many header bytes RoCEv2 packets carry.
    pub framing: Framing,
    /// The ideal completion time slowdowns are computed against.
    pub ideal_fct: IdealFct,
    /// Where a host NIC puts the ACK/NAK/CNP packets it generates.
    pub replies: ReplyQueue,
    /// How a switch picks one of several equal-cost next hops.
    pub ecmp: Ecmp,
    /// When a QP's new rate takes effect on its pacing.
    pub pacing: Pacing,
    /// How a switch accounts its buffer and decides PAUSE and RESUME.
    pub buffer: BufferModel,
    /// How flow-control requests become frames and how a received frame pauses.
    pub pfc: Signalling,
}

impl ModelConfig {
    /// The HPCC ns-3 simulator's choices (MODEL.md): its framing, its "standalone" FCT,
    /// replies ahead of data at hosts and never paused there, its ECMP hash, its switch MMU
    /// and its PFC (a pause lasts until its resume).
    pub const HPCC_NS3: ModelConfig = ModelConfig {
        framing: Framing::Ns3,
        ideal_fct: IdealFct::Ns3,
        replies: ReplyQueue::First,
        ecmp: Ecmp::Ns3,
        pacing: Pacing::NextPacket,
        buffer: BufferModel::Ns3,
        pfc: Signalling::Ns3,
    };

    /// A preset by name: `"exact"` (the default) or `"hpcc-ns3"`.
    pub fn preset(name: &str) -> Option<ModelConfig> {
        match name {
            "exact" => Some(ModelConfig::default()),
            "hpcc-ns3" => Some(ModelConfig::HPCC_NS3),
            _ => None,
        }
    }

    /// How long the wire is taken by a frame of `len` bytes (FCS included) at `rate`: 802.3
    /// adds preamble, SFD and gap; the ns-3 framing takes the frame alone, one nanosecond
    /// less than its exact time rounded up. This is also the pacing gap of a sender at `rate`.
    #[inline(always)]
    pub fn wire_time(&self, rate: Rate, len: u64) -> Duration {
        match self.framing {
            Framing::Ieee8023 => rate.wire_time(len),
            Framing::Ns3 => {
                // ceil(len × 8 / rate) − 1 to the nanosecond (MODEL.md §9.4), exactly at any
                // rate (a reaction point's rate is rarely byte-exact)
                let ns = (u128::from(len) * 8 * NS_PER_SEC).div_ceil(u128::from(rate.bps()));
                Duration::from_ps(ns.saturating_sub(1) * 1_000)
            }
        }
    }

    /// Bytes of a RoCEv2 data packet carrying `payload` bytes (at least the 64-byte minimum
    /// under 802.3 framing; `cn_tag` adds an 802.1Qau CN-TAG).
    pub fn roce_data_len(&self, payload: u64, cn_tag: bool) -> u64 {
        match self.framing {
            Framing::Ieee8023 => {
                let l = payload + ROCE_DATA_OVERHEAD_BYTES + if cn_tag { CN_TAG_BYTES } else { 0 };
                l.max(64)
            }
            Framing::Ns3 => payload + NS3_DATA_OVERHEAD_BYTES,
        }
    }

    /// Bytes of a RoCEv2 ACK or NAK (AETH) or IRN SACK.
    pub fn reply_len(&self) -> u64 {
        match self.framing {
            Framing::Ieee8023 => ROCE_ACK_BYTES,
            Framing::Ns3 => NS3_ACK_BYTES,
        }
    }

    /// Bytes of a reply carrying an INT field of `int` bytes (HPCC's 42; 0: [`Self::reply_len`]):
    /// under the ns-3 framing 14 + 20 + 12 + INT, padded to 60 (88 with HPCC, MODEL.md §9.4).
    pub fn reply_len_with_int(&self, int: u64) -> u64 {
        match self.framing {
            Framing::Ieee8023 => ROCE_ACK_BYTES + int,
            Framing::Ns3 => (14 + 20 + 12 + int).max(NS3_ACK_BYTES),
        }
    }

    /// Bytes of a RoCEv2 CNP.
    pub fn cnp_len(&self) -> u64 {
        match self.framing {
            Framing::Ieee8023 => ROCE_CNP_BYTES,
            Framing::Ns3 => NS3_ACK_BYTES,
        }
    }

    /// Bytes of an 802.1Qau CNM carrying `encapsulated` bytes of the sampled frame.
    pub fn cnm_len(&self, encapsulated: u64) -> u64 {
        match self.framing {
            Framing::Ieee8023 => (CNM_BASE_BYTES + encapsulated).max(64),
            Framing::Ns3 => (14 + 24 + encapsulated).max(NS3_ACK_BYTES),
        }
    }
}

/// Ethernet (14) + 802.1Q (4) + IPv4 (20) + UDP (8) + BTH (12) + ICRC (4) + FCS (4): what a
/// RoCEv2 data packet adds to its payload.
pub const ROCE_DATA_OVERHEAD_BYTES: u64 = 14 + 4 + 20 + 8 + 12 + 4 + 4;
/// A RoCEv2 ACK/NAK: the data overhead plus the 4-byte AETH, no payload.
pub const ROCE_ACK_BYTES: u64 = ROCE_DATA_OVERHEAD_BYTES + 4;
/// A RoCEv2 CNP: the data overhead plus 16 reserved bytes.
pub const ROCE_CNP_BYTES: u64 = ROCE_DATA_OVERHEAD_BYTES + 16;
/// The 802.1Qau CN-TAG a QCN reaction point's data frames carry.
pub const CN_TAG_BYTES: u64 = 4;
/// A CNM without encapsulated bytes: Ethernet (14) + 802.1Q (4) + CNM PDU (24) + FCS (4).
pub const CNM_BASE_BYTES: u64 = 14 + 4 + 24 + 4;
/// HPCC ns-3: what a data packet adds to its payload (PPP-sized L2 14 + IPv4 20 + UDP 8 +
/// SeqTs 6; no INT for DCQCN).
pub const NS3_DATA_OVERHEAD_BYTES: u64 = 48;
/// HPCC ns-3: an ACK or NACK, padded to 60 bytes.
pub const NS3_ACK_BYTES: u64 = 60;

/// The ideal completion time of a finite flow, which slowdowns divide by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdealFct {
    /// The flow's own completion time alone in the idle fabric, exact to the bit time: its
    /// frames through the store-and-forward pipeline of the path it takes (propagation and
    /// interface delays on every hop, the first frame stored and forwarded at each switch,
    /// the rest behind it at the bottleneck), its receiver's processing, and for a RoCEv2 QP
    /// the last ACK's way back; slowdown is 1 for a flow alone and never below it.
    #[default]
    Alone,
    /// The flow's frames back to back at the sender's line rate, first preamble bit to last
    /// frame bit ([`crate::stats::ideal_fct`]): no propagation, no switch (the ideal before
    /// `Alone`; a short flow's slowdown reads its path's latency).
    Wire,
    /// The HPCC ns-3 "standalone FCT" (MODEL.md §6): base RTT (twice the path's delays plus
    /// one MTU of payload per hop at that hop's rate) + the flow's bytes with 48 bytes per
    /// packet at the path's slowest rate, in whole nanoseconds ([`ns3_standalone_fct`]).
    Ns3,
}

impl IdealFct {
    /// The key's value in scenario files and in the JSON (`fct.ideal_fct`).
    pub const fn name(self) -> &'static str {
        match self {
            IdealFct::Alone => "alone",
            IdealFct::Wire => "wire",
            IdealFct::Ns3 => "ns3",
        }
    }
    /// The choice of that name.
    pub fn from_name(name: &str) -> Option<IdealFct> {
        [IdealFct::Alone, IdealFct::Wire, IdealFct::Ns3]
            .into_iter()
            .find(|i| i.name() == name)
    }
    /// What a slowdown divides by, in words (the summary's and the report's footnote).
    pub const fn definition(self) -> &'static str {
        match self {
            IdealFct::Alone => {
                "the flow's own FCT alone in the idle fabric (its path's hops, delays and store-and-forward, exact)"
            }
            IdealFct::Wire => {
                "the flow's frames back to back at the sender's line rate (no propagation, no switch)"
            }
            IdealFct::Ns3 => "the HPCC ns-3 standalone FCT (base RTT + bytes at the path's slowest rate)",
        }
    }
}

/// Where a host NIC queues the ACK/NAK/CNP packets it generates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplyQueue {
    /// In the egress queue of their priority, behind data of that priority and subject to its
    /// PFC pauses (what a NIC does with RC ACKs on the QP's priority).
    #[default]
    Queued,
    /// In a NIC queue served before any data frame, obeying only pauses of priority 0 (the
    /// HPCC ns-3 NIC with `ACK_HIGH_PRIO 1`); switches still queue them by their priority.
    First,
    /// In a NIC queue served before any data frame that stops while the replies' own priority
    /// is paused (the HPCC ns-3 NIC with `ACK_HIGH_PRIO 0`, whose ACK queue obeys class 3, the
    /// class its replies carry); switches queue them by their priority.
    FirstPaused,
}

/// How a switch accounts its buffer and decides when to pause and resume its upstream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferModel {
    /// A shared pool with a static or dynamic (alpha) threshold per (ingress port, priority)
    /// and a headroom reserve per lossless (port, priority); XOFF past the threshold, XON
    /// `xon_offset_bytes` below it; a frame leaves the buffer when its last bit has been
    /// sent ([`crate::buffer::SharedBuffer`]).
    #[default]
    Shared,
    /// The HPCC ns-3 switch's MMU (`SwitchMmu`, MODEL.md §5): 4096 bytes reserved per
    /// (ingress port, class), then the shared pool up to the dynamic threshold
    /// `(buffer − Σ headroom − ports × 4096 − shared used) >> shift` or that port's headroom
    /// (3 × rate × delay); PAUSE while headroom is used or the shared bytes reach the
    /// threshold, RESUME once no headroom is used and the shared bytes are 0 or 3072 below it;
    /// a packet leaves the buffer when it is dequeued ([`crate::buffer::Ns3Mmu`]).
    Ns3,
}

/// How a switch chooses among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecmp {
    /// A hash of the flow, the switch and the seed (replies of a flow take their own).
    #[default]
    FlowHash,
    /// The HPCC ns-3 switch's: MurmurHash3 (x86, 32-bit) of the source and destination IPv4
    /// addresses and the UDP ports, seeded with the switch's node id, over the next hops in
    /// the order its routing BFS found them ([`ns3_ecmp_hash`]).
    Ns3,
}

/// When a QP's rate change takes effect on its pacing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// At once: the wait after the last packet is recomputed at the new rate (a rate limiter
    /// whose rate is raised lets the next packet go sooner; the HPCC ns-3 `ChangeRate`).
    #[default]
    Reschedule,
    /// From the next packet on: the packet already scheduled keeps its time (the HPCC ns-3
    /// DCQCN, which sets the rate without `ChangeRate`, MODEL.md §3.6). A QP cut to a very
    /// low rate then waits one long gap even if its rate recovers meanwhile.
    NextPacket,
}

/// The IPv4 address the HPCC ns-3 simulator gives node `n` (`node_id_to_ip`).
pub const fn ns3_ip(n: NodeId) -> u32 {
    0x0b00_0001 + (n / 256) * 0x0001_0000 + (n % 256) * 0x0000_0100
}

/// MurmurHash3 (x86, 32-bit) of the little-endian bytes of `words` with `seed`; what the
/// HPCC ns-3 switch computes (`SwitchNode::EcmpHash`) over 12 bytes: source IP, destination
/// IP, then `sport | dport << 16`.
pub fn murmur3_32(words: &[u32], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    for &w in words {
        let k = w.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h ^= (words.len() as u32).wrapping_mul(4);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The HPCC ns-3 ECMP hash of a packet from node `src` to node `dst` with UDP ports
/// `sport`, `dport` at the switch with node id `switch`.
pub fn ns3_ecmp_hash(src: NodeId, dst: NodeId, sport: u16, dport: u16, switch: NodeId) -> u32 {
    murmur3_32(
        &[
            ns3_ip(src),
            ns3_ip(dst),
            u32::from(sport) | u32::from(dport) << 16,
        ],
        switch,
    )
}

/// One hop of a path, for the ns-3 ideal FCT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The link's rate.
    pub rate: Rate,
    /// Its one-way delay.
    pub delay: Duration,
}

/// The HPCC ns-3 reference's time for `payload` bytes at `rate` in its base RTT and BDP
/// (`third.cc`: `payload × 8e9 / rate`, whole nanoseconds, no headers).
pub fn ns3_hop_tx_ns(payload: u64, rate: Rate) -> u128 {
    u128::from(payload) * 8_000_000_000 / u128::from(rate.bps())
}

/// The HPCC ns-3 "standalone FCT" of `size` bytes sent in packets of at most `mtu` payload
/// bytes over `hops` (MODEL.md §6, `qp_finish` in `third.cc`): `base_rtt + total × 8e9 / bw`
/// nanoseconds with integer division, where `bw` is the slowest hop, `total` = size + 48 per
/// packet, and `base_rtt` = 2 × Σ delay + Σ (mtu × 8e9 / rate) per hop.
pub fn ns3_standalone_fct(size: u64, mtu: u64, hops: &[Hop]) -> Duration {
    let mtu = mtu.max(1);
    let packets = if size == 0 { 1 } else { size.div_ceil(mtu) };
    let total = u128::from(size) + u128::from(packets) * u128::from(NS3_DATA_OVERHEAD_BYTES);
    let delay_ns: u128 = hops.iter().map(|h| h.delay.as_ns()).sum();
    let tx_ns: u128 = hops.iter().map(|h| ns3_hop_tx_ns(mtu, h.rate)).sum();
    let bw = hops.iter().map(|h| h.rate.bps()).min().unwrap_or(1).max(1);
    let ns = 2 * delay_ns + tx_ns + total * 8_000_000_000 / u128::from(bw);
    Duration::from_ps(ns * 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_the_reference_vectors() {
        // reference values from the `mmh3` Python package (MurmurHash3_x86_32)
        let aaaa = u32::from_le_bytes(*b"aaaa");
        assert_eq!(murmur3_32(&[aaaa], 0x9747_b28c), 0x5a97_808a);
        assert_eq!(murmur3_32(&[], 1), 0x514e_28b7);
        for (s, d, sp, dp, sw, want) in [
            (13, 15, 10000, 100, 16, 882_562_436u32),
            (0, 8, 10000, 100, 9, 2_543_080_581),
            (15, 13, 100, 10000, 24, 1_148_068_986),
            (9, 0, 10000, 100, 32, 1_886_957_589),
        ] {
            assert_eq!(ns3_ecmp_hash(s, d, sp, dp, sw), want, "{s}→{d} at {sw}");
        }
    }

    #[test]
    fn ns3_ips_follow_node_id_to_ip() {
        assert_eq!(ns3_ip(8), 0x0b00_0801);
        assert_eq!(ns3_ip(0), 0x0b00_0001);
        assert_eq!(ns3_ip(300), 0x0b01_2c01);
    }

    #[test]
    fn the_standalone_fct_matches_the_reference_examples() {
        // MODEL.md §6: one switch, 100G, 1 µs links: 4160 ns base RTT, 1 MB → 88,000 ns
        let hop = Hop {
            rate: Rate::from_gbps(100),
            delay: Duration::from_us(1),
        };
        assert_eq!(
            ns3_standalone_fct(1_000_000, 1000, &[hop; 2]),
            Duration::from_ns(88_000)
        );
        // k = 4 fat-tree across pods: 6 hops, base RTT 12,480 ns; fct.txt's 99,564-byte flow
        // has a standalone FCT of 20,829 ns and the 21,659-byte one 14,297 ns
        assert_eq!(
            ns3_standalone_fct(99_564, 1000, &[hop; 6]),
            Duration::from_ns(20_829)
        );
        assert_eq!(
            ns3_standalone_fct(21_659, 1000, &[hop; 6]),
            Duration::from_ns(14_297)
        );
    }

    #[test]
    fn framing_sizes_and_times() {
        let exact = ModelConfig::default();
        let ns3 = ModelConfig::HPCC_NS3;
        assert_eq!(exact.roce_data_len(1000, false), 1066);
        assert_eq!(exact.roce_data_len(1000, true), 1070);
        assert_eq!(exact.roce_data_len(1, false), 67);
        assert_eq!(exact.reply_len(), 70);
        assert_eq!(exact.cnp_len(), 82);
        assert_eq!(exact.cnm_len(0), 64);
        assert_eq!(ns3.roce_data_len(1000, false), 1048);
        assert_eq!(ns3.reply_len(), 60);
        let r = Rate::from_gbps(100);
        assert_eq!(exact.wire_time(r, 1066), Duration::from_ps(1086 * 80));
        assert_eq!(ns3.wire_time(r, 1048), Duration::from_ns(83));
        // a pacing rate that is not byte-exact: 1048 B at 37.5 Gb/s take 223.57 ns → 223 ns
        assert_eq!(
            ns3.wire_time(Rate::from_mbps(37_500), 1048),
            Duration::from_ns(223)
        );
    }
}
