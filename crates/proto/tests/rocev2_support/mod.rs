//! A lossy, reordering-free channel between a requester and a responder (tests only):
//! integer-picosecond time, one link each way with a rate and a delay, and a loss pattern
//! (the k-th data transmission / the k-th reply is lost when `pattern[k]` is true; beyond
//! the pattern nothing is lost). While it runs, an oracle that knows only what crossed the
//! wire records every rule broken.

#![allow(dead_code)]

use std::collections::VecDeque;

use lossless_proto::rocev2::{DataPacket, PSN_MASK, RcConfig, Recovery, Reply, Requester, Responder};
use lossless_proto::units::{Duration, Instant, Rate};

/// Bytes around a data payload on the wire: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4.
pub const DATA_OVERHEAD_BYTES: u64 = 62;
/// An ACK/NAK frame: the data headers plus a 4-byte AETH.
pub const REPLY_FRAME_BYTES: u64 = 66;

/// One direction of the channel.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub rate: Rate,
    pub delay: Duration,
}

/// Which transmissions are lost.
#[derive(Clone, Debug, Default)]
pub struct Loss {
    pub data: Vec<bool>,
    pub replies: Vec<bool>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Every byte acknowledged and nothing left in flight.
    Complete,
    /// Nothing left to happen (no packet in flight, no timer) and not complete.
    Stalled,
    /// The requester's retry limit ran out.
    Failed,
    /// Still going after the step limit (a livelock).
    StepLimit,
}

/// One data transmission.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub at: Instant,
    pub packet: DataPacket,
    /// Packet index in the message.
    pub index: u64,
    pub lost: bool,
}

pub struct Outcome {
    pub end: End,
    pub requester: Requester,
    pub responder: Responder,
    pub sent: Vec<Sent>,
    pub replies_sent: usize,
    pub replies_lost: usize,
    /// Rules the oracle saw broken, in order.
    pub violations: Vec<String>,
    /// Bytes delivered in order, as the oracle counted them.
    pub delivered: u64,
    /// Largest bytes outstanding the oracle saw at a transmission (from the newest packet
    /// end down to the oldest byte the replies delivered so far had not acknowledged).
    pub max_outstanding: u64,
    pub packets: u64,
}

impl Outcome {
    /// Transmissions of each packet index.
    pub fn transmissions(&self) -> Vec<u64> {
        let mut n = vec![0; self.packets as usize];
        for s in &self.sent {
            n[s.index as usize] += 1;
        }
        n
    }

    /// Lost transmissions of each packet index.
    pub fn losses(&self) -> Vec<u64> {
        let mut n = vec![0; self.packets as usize];
        for s in self.sent.iter().filter(|s| s.lost) {
            n[s.index as usize] += 1;
        }
        n
    }
}

fn index_of(cfg: &RcConfig, psn: u32) -> u64 {
    u64::from(psn.wrapping_sub(cfg.psn_start) & PSN_MASK)
}

/// Runs one message of `bytes` from a requester to a responder over `link` (both ways).
/// Messages must be shorter than 2^24 packets (the oracle reads indices from PSNs).
pub fn run(cfg: &RcConfig, bytes: u64, link: Link, loss: &Loss, step_limit: u64) -> Outcome {
    let mut req = Requester::new(*cfg, bytes).expect("valid config");
    let mut resp = Responder::new(*cfg, bytes).expect("valid config");
    let mtu = u64::from(cfg.mtu);
    let packets = req.message_packets();
    let gbn = cfg.recovery == Recovery::GoBackN;
    let cap = match cfg.recovery {
        Recovery::Irn { bdp_cap_bytes, .. } => Some(bdp_cap_bytes),
        Recovery::GoBackN => None,
    };
    let mut data_q: VecDeque<(Instant, DataPacket)> = VecDeque::new();
    let mut reply_q: VecDeque<(Instant, Reply)> = VecDeque::new();
    let mut out = Outcome {
        end: End::StepLimit,
        requester: req.clone(),
        responder: resp.clone(),
        sent: Vec::new(),
        replies_sent: 0,
        replies_lost: 0,
        violations: Vec::new(),
        delivered: 0,
        max_outstanding: 0,
        packets,
    };
    let mut arrived = vec![false; packets as usize];
    let mut acked_below = 0u64; // oracle's cumulative ACK point (packet index)
    let mut now = Instant::ZERO;
    let mut wire_free = Instant::ZERO;
    let mut reply_wire_free = Instant::ZERO;
    let mut blocked = false;
    let mut steps = 0;
    while steps < step_limit {
        steps += 1;
        if !blocked && now >= wire_free {
            let announced = req.can_transmit();
            let polled = req.poll_transmit(now);
            if announced != polled.is_some() {
                out.violations.push(format!(
                    "can_transmit said {announced}, poll_transmit gave {polled:?}"
                ));
            }
            if let Some(p) = polled {
                let index = index_of(cfg, p.psn);
                if index >= packets || p.offset != index * mtu {
                    out.violations.push(format!(
                        "sent PSN {:#x} at offset {} outside the message",
                        p.psn, p.offset
                    ));
                }
                if let Some(cap) = cap {
                    let outstanding = (p.offset + u64::from(p.payload)).saturating_sub(acked_below * mtu);
                    out.max_outstanding = out.max_outstanding.max(outstanding);
                    if outstanding > cap {
                        out.violations
                            .push(format!("{outstanding} bytes outstanding over the cap of {cap}"));
                    }
                }
                let k = out.sent.len();
                let lost = loss.data.get(k).copied().unwrap_or(false);
                wire_free = now + link.rate.wire_time(u64::from(p.payload) + DATA_OVERHEAD_BYTES);
                if !lost {
                    data_q.push_back((wire_free + link.delay, p));
                }
                out.sent.push(Sent {
                    at: now,
                    packet: p,
                    index,
                    lost,
                });
                continue;
            }
            blocked = true;
        }
        let next = [
            data_q.front().map(|e| e.0),
            reply_q.front().map(|e| e.0),
            req.poll_timeout(),
            (!blocked).then_some(wire_free),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else {
            out.end = if req.is_complete() {
                End::Complete
            } else if req.is_failed() {
                End::Failed
            } else {
                End::Stalled
            };
            break;
        };
        now = now.max(next);
        while data_q.front().is_some_and(|e| e.0 <= now) {
            let (at, p) = data_q.pop_front().unwrap();
            let index = index_of(cfg, p.psn);
            arrived[index as usize] = true;
            let r = resp.handle_data(at, &p);
            if r.delivered_bytes > 0 {
                if p.offset != out.delivered {
                    out.violations.push(format!(
                        "delivered {} bytes on the packet at offset {} while {} were in order",
                        r.delivered_bytes, p.offset, out.delivered
                    ));
                }
                if gbn && r.delivered_bytes != u64::from(p.payload) {
                    out.violations.push(format!(
                        "go-back-N delivered {} bytes on one packet",
                        r.delivered_bytes
                    ));
                }
                let end = out.delivered + r.delivered_bytes;
                if end > bytes {
                    out.violations
                        .push(format!("delivered {end} bytes of a {bytes}-byte message"));
                }
                let (first, last) = (out.delivered / mtu, end.div_ceil(mtu).min(packets));
                if let Some(i) = (first..last).find(|&i| !arrived[i as usize]) {
                    out.violations
                        .push(format!("delivered packet {i}, which never arrived"));
                }
                out.delivered = end;
            }
            if let Some(reply) = r.reply {
                let k = out.replies_sent;
                out.replies_sent += 1;
                if loss.replies.get(k).copied().unwrap_or(false) {
                    out.replies_lost += 1;
                } else {
                    reply_wire_free = reply_wire_free.max(at) + link.rate.wire_time(REPLY_FRAME_BYTES);
                    reply_q.push_back((reply_wire_free + link.delay, reply));
                }
            }
        }
        while reply_q.front().is_some_and(|e| e.0 <= now) {
            let (at, reply) = reply_q.pop_front().unwrap();
            let below = match reply {
                Reply::Ack { psn, .. } => index_of(cfg, psn) + 1,
                Reply::Nak { psn, .. } | Reply::Sack { cum_psn: psn, .. } => index_of(cfg, psn),
            };
            acked_below = acked_below.max(below);
            req.handle_reply(at, reply);
            blocked = false;
        }
        if req.poll_timeout().is_some_and(|d| d <= now) {
            req.handle_timeout(now);
            blocked = false;
        }
    }
    if out.end == End::Complete && (out.delivered != bytes || !resp.is_complete()) {
        out.violations.push(format!(
            "complete with {} of {bytes} bytes delivered",
            out.delivered
        ));
    }
    out.requester = req;
    out.responder = resp;
    out
}
