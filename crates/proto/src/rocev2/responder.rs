//! The receiving end of a reliable connection: in-order delivery, ACK coalescing, NAK on a
//! gap (go-back-N) or out-of-order buffering with SACKs (IRN), duplicates acknowledged again.

use super::config::{RcConfig, RcConfigError, Recovery};
use super::counters::ResponderCounters;
use super::psn::{Msn, PSN_MASK, Psn};
use super::window::SlotBits;
use super::{DataPacket, Received, Reply, Segmentation};
use crate::units::Instant;

/// IRN: packets held out of order, over the window a correct requester can reach.
#[derive(Clone, Debug)]
struct OutOfOrder {
    held: SlotBits,
    count: u64,
    window: u64,
}

/// The receiving end of one reliable connection carrying one message of `message_bytes`.
///
/// Sans-IO: the driver hands every data packet that arrives to
/// [`handle_data`](Responder::handle_data) and sends the reply it returns, if any. The
/// responder has no timer. No call allocates.
#[derive(Clone, Debug)]
pub struct Responder {
    cfg: RcConfig,
    seg: Segmentation,
    psn0: Psn,
    /// Next packet to deliver.
    expected: u64,
    /// In-order packets delivered since the last acknowledgement.
    unacked: u32,
    /// The expected packet a NAK was last sent for, and when.
    nak: Option<(u64, Instant)>,
    msn: Msn,
    now: Instant,
    ooo: Option<OutOfOrder>,
    counters: ResponderCounters,
}

impl Responder {
    /// A responder for one message of `message_bytes`, or why `cfg` is unusable.
    pub fn new(cfg: RcConfig, message_bytes: u64) -> Result<Self, RcConfigError> {
        cfg.validate()?;
        let ooo = match cfg.recovery {
            Recovery::GoBackN => None,
            Recovery::Irn { bdp_cap_bytes, .. } => {
                // The requester never has more than this many packets outstanding, and the
                // responder's expected packet is never behind the requester's oldest unacked.
                let window = bdp_cap_bytes / u64::from(cfg.mtu) + 1;
                Some(OutOfOrder {
                    held: SlotBits::new(window),
                    count: 0,
                    window,
                })
            }
        };
        Ok(Responder {
            seg: Segmentation::new(cfg.mtu, message_bytes),
            psn0: Psn::from_low_bits(cfg.psn_start),
            cfg,
            expected: 0,
            unacked: 0,
            nak: None,
            msn: Msn::ZERO,
            now: Instant::ZERO,
            ooo,
            counters: ResponderCounters::default(),
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &RcConfig {
        &self.cfg
    }

    /// Counters so far.
    pub fn counters(&self) -> ResponderCounters {
        self.counters
    }

    /// Whether every byte has been delivered (in order, once).
    pub fn is_complete(&self) -> bool {
        self.expected == self.seg.packets
    }

    /// Bytes delivered in order so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.seg.start(self.expected)
    }

    /// The PSN the responder expects next.
    pub fn expected_psn(&self) -> u32 {
        self.psn(self.expected).value()
    }

    /// Messages completed (0 or 1 here), mod 2^24.
    pub fn msn(&self) -> Msn {
        self.msn
    }

    /// IRN: packets held out of order now (0 for go-back-N).
    pub fn held_out_of_order(&self) -> u64 {
        self.ooo.as_ref().map_or(0, |o| o.count)
    }

    fn psn(&self, i: u64) -> Psn {
        self.psn0.wrapping_add(i)
    }

    fn ack(&mut self) -> Option<Reply> {
        self.unacked = 0;
        self.counters.acks_sent += 1;
        // Nothing delivered yet cannot happen here: an ACK follows a delivery or a duplicate.
        Some(Reply::Ack {
            psn: self.psn(self.expected.saturating_sub(1)).value(),
            msn: self.msn.value(),
        })
    }

    /// Takes in one data packet that arrived at `now` and says what it delivered and what to
    /// send back. Packets that do not fit the message (PSN outside it, or offset, length or
    /// first/last flags not those of their PSN) are counted as malformed and dropped unanswered.
    #[inline]
    pub fn handle_data(&mut self, now: Instant, p: &DataPacket) -> Received {
        if now > self.now {
            self.now = now;
        }
        self.counters.rx_packets += 1;
        self.counters.rx_bytes += u64::from(p.payload);
        let dropped = Received {
            delivered_bytes: 0,
            reply: None,
            duplicate: false,
        };
        // the packet expected next (the common case) needs no PSN arithmetic: its distance is 0
        let idx = if p.psn == self.psn(self.expected).value() && self.expected < self.seg.packets {
            Some(self.expected)
        } else {
            (p.psn <= PSN_MASK)
                .then(|| {
                    let d = Psn::from_low_bits(p.psn).distance_from(self.psn(self.expected));
                    self.expected.checked_add_signed(i64::from(d))
                })
                .flatten()
                .filter(|&i| i < self.seg.packets)
        };
        let Some(idx) = idx.filter(|&i| {
            p.offset == self.seg.start(i)
                && p.payload == self.seg.payload(i)
                && p.first == (i == 0)
                && p.last == (i + 1 == self.seg.packets)
        }) else {
            self.counters.malformed += 1;
            return dropped;
        };
        if idx < self.expected {
            // IB C9-105: a duplicate SEND/WRITE is acknowledged again.
            self.counters.duplicate_request += 1;
            return Received {
                delivered_bytes: 0,
                reply: self.ack(),
                duplicate: true,
            };
        }
        if idx == self.expected {
            return self.deliver(p);
        }
        self.counters.out_of_sequence += 1;
        match &mut self.ooo {
            None => {
                // Go-back-N: drop; one NAK per gap, again only after `nak_min_interval`
                // (or when the expected PSN has changed since the last NAK).
                let may_nak = match self.nak {
                    Some((e, at)) if e == self.expected => {
                        self.now >= at.saturating_add(self.cfg.nak_min_interval)
                    }
                    _ => true,
                };
                if !may_nak {
                    self.counters.naks_suppressed += 1;
                    return dropped;
                }
                self.nak = Some((self.expected, self.now));
                self.unacked = 0;
                self.counters.naks_sent += 1;
                let reply = Reply::Nak {
                    psn: self.psn(self.expected).value(),
                    msn: self.msn.value(),
                };
                Received {
                    reply: Some(reply),
                    ..dropped
                }
            }
            Some(ooo) => {
                if idx - self.expected >= ooo.window {
                    self.counters.out_of_window += 1;
                    return dropped;
                }
                let duplicate = !ooo.held.set(idx);
                if duplicate {
                    self.counters.duplicate_request += 1;
                } else {
                    ooo.count += 1;
                }
                self.unacked = 0;
                self.counters.sacks_sent += 1;
                let reply = Reply::Sack {
                    cum_psn: self.psn(self.expected).value(),
                    sack_psn: p.psn,
                    msn: self.msn.value(),
                };
                Received {
                    delivered_bytes: 0,
                    reply: Some(reply),
                    duplicate,
                }
            }
        }
    }

    /// Delivers the expected packet and (IRN) the held ones it makes contiguous.
    #[inline(always)]
    fn deliver(&mut self, p: &DataPacket) -> Received {
        let from = self.expected;
        self.expected += 1;
        let mut filled_hole = false;
        if let Some(ooo) = &mut self.ooo {
            filled_hole = ooo.count > 0;
            while self.expected < self.seg.packets && ooo.held.clear(self.expected) {
                ooo.count -= 1;
                self.expected += 1;
            }
        }
        let packets = self.expected - from;
        let bytes = self.seg.start(self.expected) - self.seg.start(from);
        self.counters.delivered_packets += packets;
        self.counters.delivered_bytes += bytes;
        self.unacked = self
            .unacked
            .saturating_add(packets.min(u64::from(u32::MAX)) as u32);
        let complete = self.expected == self.seg.packets;
        if complete {
            self.msn = self.msn.next();
        }
        let reply = if p.ack_req || complete || filled_hole || self.unacked >= self.cfg.ack_every {
            self.ack()
        } else {
            None
        };
        Received {
            delivered_bytes: bytes,
            reply,
            duplicate: false,
        }
    }
}
