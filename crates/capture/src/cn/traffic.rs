//! RoCEv2 traffic of a capture, per queue pair, for `lossless analyze`: the data frames and
//! how many arrived ECN-marked (CE), and the CNPs (BTH opcode 0x81) the notification points
//! sent, with their rate — what congestion control saw, next to the pauses.
//!
//! A queue pair is keyed as its frames name it: (IP source, IP destination, BTH destination
//! QP). A data QP and the CNPs that throttle it travel in opposite directions under different
//! QP numbers (a CNP names the requester's QP), so they are two rows, one with data and one
//! with CNPs; the sender's address of one is the receiver's of the other.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_proto::units::Instant;
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr};
use lossless_wire::roce;
use serde::Serialize;

/// Queue pairs kept with their own row; frames of later ones count in the totals only.
pub const MAX_QPS: usize = 4096;

/// One queue pair's frames in the capture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QpTraffic {
    /// IP source of its frames.
    pub src: String,
    /// IP destination of its frames.
    pub dst: String,
    /// BTH destination QP of its frames.
    pub dest_qp: u32,
    /// RoCEv2 frames other than CNPs (data, ACK/NAK, ...).
    pub data_frames: u64,
    /// Their bytes on the wire (FCS included).
    pub data_bytes: u64,
    /// Of those, how many arrived with ECN CE (marked by a switch on the way).
    pub ce_marked_frames: u64,
    /// `ce_marked_frames / data_frames` (0 without data).
    pub ce_marked_ratio: f64,
    /// CNPs.
    pub cnps_total: u64,
    /// CNPs per second over the capture's span (0 when it spans no time).
    pub cnps_per_s: f64,
    /// Time of its first frame, seconds from the capture's first frame.
    pub first_s: f64,
    /// Time of its last frame, seconds from the capture's first frame.
    pub last_s: f64,
}

/// The RoCEv2 traffic of a whole capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoceTraffic {
    /// Queue pairs, most CNPs first, then most CE marks, then by key (the first [`MAX_QPS`]
    /// seen).
    pub qps: Vec<QpTraffic>,
    /// Queue pairs seen, kept or not (counted up to 5 × [`MAX_QPS`]).
    pub qps_total: u64,
    /// RoCEv2 frames other than CNPs.
    pub data_frames: u64,
    /// Of those, ECN CE-marked.
    pub ce_marked_frames: u64,
    /// CNPs.
    pub cnps_total: u64,
    /// UDP 4791 frames that do not decode as RoCEv2 (cut short, bad header).
    pub undecoded_frames: u64,
}

/// A queue pair's key: source, destination (16 bytes, IPv4 mapped), destination QP.
type Key = ([u8; 16], [u8; 16], u32);

#[derive(Default)]
struct Counts {
    data: u64,
    bytes: u64,
    ce: u64,
    cnps: u64,
    first: Option<Instant>,
    last: Instant,
}

/// Counts a capture's RoCEv2 frames, one call per data frame.
#[derive(Default)]
pub struct Tracker {
    qps: BTreeMap<Key, Counts>,
    /// Queue pairs beyond [`MAX_QPS`], for counting them (at most 4 × [`MAX_QPS`]).
    others: std::collections::BTreeSet<Key>,
    out: RoceTraffic,
}

fn addr(ip: &IpRepr) -> ([u8; 16], [u8; 16]) {
    match ip {
        IpRepr::V4(v) => (
            Ipv4Addr::from(v.src).to_ipv6_mapped().octets(),
            Ipv4Addr::from(v.dst).to_ipv6_mapped().octets(),
        ),
        IpRepr::V6(v) => (v.src, v.dst),
    }
}

fn text(a: [u8; 16]) -> String {
    let v6 = Ipv6Addr::from(a);
    v6.to_ipv4_mapped()
        .map_or_else(|| v6.to_string(), |v4| v4.to_string())
}

fn ecn(ip: &IpRepr) -> Ecn {
    match ip {
        IpRepr::V4(v) => v.ecn,
        IpRepr::V6(v) => v.ecn,
    }
}

impl Tracker {
    /// A frame at `t` of `wire_bytes` on the wire (FCS included): counted when it is RoCEv2.
    pub fn on_frame(&mut self, t: Instant, frame: &[u8], fcs: FcsMode, wire_bytes: u64) {
        if !is_rocev2_udp(frame) {
            return;
        }
        let Ok(f) = roce::parse(frame, fcs) else {
            self.out.undecoded_frames += 1;
            return;
        };
        let ip = &f.repr.ip;
        let (src, dst) = addr(ip);
        let key = (src, dst, f.repr.bth.dest_qp);
        let cnp = f.repr.bth.opcode.is_cnp();
        let ce = ecn(ip) == Ecn::Ce;
        if cnp {
            self.out.cnps_total += 1;
        } else {
            self.out.data_frames += 1;
            self.out.ce_marked_frames += u64::from(ce);
        }
        if !self.qps.contains_key(&key) {
            if self.qps.len() >= MAX_QPS {
                // counted once each, as far as the bounded set of the others reaches
                if self.others.len() < 4 * MAX_QPS && self.others.insert(key) {
                    self.out.qps_total += 1;
                }
                return;
            }
            self.out.qps_total += 1;
        }
        let c = self.qps.entry(key).or_default();
        if cnp {
            c.cnps += 1;
        } else {
            c.data += 1;
            c.bytes += wire_bytes;
            c.ce += u64::from(ce);
        }
        c.first.get_or_insert(t);
        c.last = t;
    }

    /// The figures, times counted from `origin` over a capture ending at `end`.
    pub fn finish(mut self, origin: Instant, end: Instant) -> RoceTraffic {
        let secs = |t: Instant| t.saturating_duration_since(origin).as_secs_f64();
        let span = secs(end);
        let mut qps: Vec<QpTraffic> = self
            .qps
            .into_iter()
            .map(|((src, dst, dest_qp), c)| QpTraffic {
                src: text(src),
                dst: text(dst),
                dest_qp,
                data_frames: c.data,
                data_bytes: c.bytes,
                ce_marked_frames: c.ce,
                ce_marked_ratio: if c.data > 0 {
                    c.ce as f64 / c.data as f64
                } else {
                    0.0
                },
                cnps_total: c.cnps,
                cnps_per_s: if span > 0.0 { c.cnps as f64 / span } else { 0.0 },
                first_s: c.first.map_or(0.0, secs),
                last_s: secs(c.last),
            })
            .collect();
        // a stable sort keeps the key order among equals
        qps.sort_by_key(|q| {
            (
                std::cmp::Reverse(q.cnps_total),
                std::cmp::Reverse(q.ce_marked_frames),
            )
        });
        self.out.qps = qps;
        self.out
    }
}

/// Whether `frame` is IPv4 or IPv6 (after any 802.1Q tags) carrying UDP to port 4791.
fn is_rocev2_udp(frame: &[u8]) -> bool {
    let mut at = 12;
    let ethertype = |at: usize| frame.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    while matches!(ethertype(at), Some(0x8100 | 0x88a8)) {
        at += 4;
    }
    let ip = at + 2;
    let (proto, udp) = match ethertype(at) {
        Some(0x0800) => {
            let Some(&vihl) = frame.get(ip) else { return false };
            (frame.get(ip + 9).copied(), ip + usize::from(vihl & 0x0f) * 4)
        }
        Some(0x86dd) => (frame.get(ip + 6).copied(), ip + 40),
        _ => return false,
    };
    proto == Some(17) && frame.get(udp + 2..udp + 4) == Some(&[0x12, 0xb7])
}
