//! The sending end of a reliable connection: segmentation, ACK/NAK/SACK processing,
//! go-back-N or IRN retransmission, the retransmission timer and the retry limit.

use super::config::{RcConfig, RcConfigError, Recovery};
use super::counters::RequesterCounters;
use super::irn::Scoreboard;
use super::psn::{Msn, PSN_HALF, PSN_MASK, Psn};
use super::{DataPacket, Reply, Segmentation};
use crate::units::{Duration, Instant};

/// Where a requester is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequesterState {
    /// Sending or waiting for replies.
    Active,
    /// Every byte acknowledged.
    Complete,
    /// The retry limit ran out (IB: the QP went to the error state); nothing more is sent.
    Failed,
}

/// The sending end of one reliable connection carrying one message of `message_bytes`.
///
/// Sans-IO: the driver calls [`poll_transmit`](Requester::poll_transmit) whenever its pacing
/// (the rate limiter) allows a packet, hands every ACK/NAK/SACK to
/// [`handle_reply`](Requester::handle_reply), and calls
/// [`handle_timeout`](Requester::handle_timeout) at [`poll_timeout`](Requester::poll_timeout).
/// No call allocates.
#[derive(Clone, Debug)]
pub struct Requester {
    cfg: RcConfig,
    seg: Segmentation,
    psn0: Psn,
    /// Oldest packet not cumulatively acknowledged.
    una: u64,
    /// Next packet to send (go-back-N rewinds it; IRN keeps it at `max`).
    nxt: u64,
    /// One past the highest packet ever sent.
    max: u64,
    state: RequesterState,
    retries_used: u32,
    deadline: Option<Instant>,
    now: Instant,
    msn: Msn,
    counters: RequesterCounters,
    irn: Option<Scoreboard>,
}

impl Requester {
    /// A requester for one message of `message_bytes` (0 is one empty packet), or why `cfg`
    /// is unusable.
    pub fn new(cfg: RcConfig, message_bytes: u64) -> Result<Self, RcConfigError> {
        cfg.validate()?;
        let irn = match cfg.recovery {
            Recovery::GoBackN => None,
            Recovery::Irn {
                bdp_cap_bytes,
                rto_low,
                rto_high,
            } => Some(Scoreboard::new(bdp_cap_bytes, cfg.mtu, rto_low, rto_high)),
        };
        Ok(Requester {
            seg: Segmentation::new(cfg.mtu, message_bytes),
            psn0: Psn::from_low_bits(cfg.psn_start),
            cfg,
            una: 0,
            nxt: 0,
            max: 0,
            state: RequesterState::Active,
            retries_used: 0,
            deadline: None,
            now: Instant::ZERO,
            msn: Msn::ZERO,
            counters: RequesterCounters::default(),
            irn,
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &RcConfig {
        &self.cfg
    }

    /// Bytes of the message.
    pub fn message_bytes(&self) -> u64 {
        self.seg.bytes
    }

    /// Packets the message is cut into.
    pub fn message_packets(&self) -> u64 {
        self.seg.packets
    }

    /// Counters so far.
    pub fn counters(&self) -> RequesterCounters {
        self.counters
    }

    /// Active, complete or failed.
    pub fn state(&self) -> RequesterState {
        self.state
    }

    /// Whether every byte has been acknowledged.
    pub fn is_complete(&self) -> bool {
        self.state == RequesterState::Complete
    }

    /// Whether the retry limit ran out (nothing more will be sent).
    pub fn is_failed(&self) -> bool {
        self.state == RequesterState::Failed
    }

    /// Bytes from the oldest unacknowledged byte to the end of the newest packet sent
    /// (what IRN's BDP cap bounds).
    pub fn outstanding_bytes(&self) -> u64 {
        self.seg.start(self.max) - self.seg.start(self.una)
    }

    /// Bytes cumulatively acknowledged: the offset of the oldest unacknowledged byte (the
    /// HPCC ns-3 reference's `snd_una`).
    pub fn acked_bytes(&self) -> u64 {
        self.seg.start(self.una)
    }

    /// Offset of the next byte to send, which go-back-N rewinds (the reference's `snd_nxt`).
    pub fn next_byte(&self) -> u64 {
        self.seg.start(self.nxt.max(self.una))
    }

    /// PSN of the oldest packet not yet acknowledged (one past the last when complete).
    pub fn oldest_unacked_psn(&self) -> u32 {
        self.psn(self.una).value()
    }

    /// The newest MSN the responder reported.
    pub fn msn(&self) -> Msn {
        self.msn
    }

    /// The latest time the engine has been given.
    pub fn now(&self) -> Instant {
        self.now
    }

    fn psn(&self, i: u64) -> Psn {
        self.psn0.wrapping_add(i)
    }

    fn advance(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
    }

    /// The packet index of `psn` (24 bits), read within half the PSN space around the oldest
    /// unacknowledged packet; `None` when that lies before the first packet.
    fn index_of(&self, psn: u32) -> Option<u64> {
        let d = i64::from(Psn::from_low_bits(psn).distance_from(self.psn(self.una)));
        self.una.checked_add_signed(d)
    }

    /// Whether [`poll_transmit`](Requester::poll_transmit) would hand out a packet now (a
    /// driver uses it to decide whether to ask its rate limiter for a slot at all).
    pub fn can_transmit(&self) -> bool {
        if self.state != RequesterState::Active {
            return false;
        }
        match &self.irn {
            None => self.nxt < self.seg.packets && self.nxt - self.una < u64::from(PSN_HALF),
            Some(irn) => irn.has_lost() || irn.may_send_new(&self.seg, self.una, self.max),
        }
    }

    /// The next packet to put on the wire now (a retransmission first, else new data), or
    /// `None` when nothing may go: everything sent and waiting for replies, IRN's BDP cap
    /// reached, go-back-N's 2^23-PSN window full, or the requester complete or failed.
    #[inline]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<DataPacket> {
        self.poll_transmit_indexed(now).map(|(_, p)| p)
    }

    /// [`poll_transmit`](Requester::poll_transmit), with the packet's index in the message
    /// (0 for the first; its `offset` is the index times the MTU), which a driver that carries
    /// the index in its frames then need not divide out of the offset.
    #[inline]
    pub fn poll_transmit_indexed(&mut self, now: Instant) -> Option<(u64, DataPacket)> {
        self.advance(now);
        if self.state != RequesterState::Active {
            return None;
        }
        let (idx, retransmission, blocked) = if self.irn.is_some() {
            self.irn_next()?
        } else {
            if self.nxt >= self.seg.packets || self.nxt - self.una >= u64::from(PSN_HALF) {
                return None;
            }
            let idx = self.nxt;
            let retransmission = idx < self.max;
            self.nxt += 1;
            self.max = self.max.max(self.nxt);
            if self.deadline.is_none() && self.cfg.rto != Duration::ZERO {
                self.deadline = Some(self.now.saturating_add(self.cfg.rto));
            }
            (idx, retransmission, self.nxt - self.una >= u64::from(PSN_HALF))
        };
        let payload = self.seg.payload(idx);
        let last = idx + 1 == self.seg.packets;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += u64::from(payload);
        if retransmission {
            self.counters.retransmitted_packets += 1;
            self.counters.retransmitted_bytes += u64::from(payload);
        }
        Some((
            idx,
            DataPacket {
                psn: self.psn(idx).value(),
                offset: self.seg.start(idx),
                payload,
                first: idx == 0,
                last,
                // AckReq on the last packet (as rxe sets it on a message's last packet) and when
                // nothing more may go out before a reply comes back.
                ack_req: last || blocked,
                retransmission,
            },
        ))
    }

    /// IRN: the packet to send (the lowest one known lost, else a new one if the BDP cap
    /// allows), whether it is a retransmission, and whether nothing may follow it.
    fn irn_next(&mut self) -> Option<(u64, bool, bool)> {
        let irn = self.irn.as_mut()?;
        let resend = irn.take_lost(self.una, self.max);
        let idx = match resend {
            Some(i) => i,
            None if irn.may_send_new(&self.seg, self.una, self.max) => {
                self.max += 1;
                self.nxt = self.max;
                self.max - 1
            }
            None => return None,
        };
        irn.sent(idx);
        self.deadline = Some(self.now.saturating_add(irn.rto(self.max - self.una)));
        let blocked = !irn.has_lost() && !irn.may_send_new(&self.seg, self.una, self.max);
        Some((idx, resend.is_some(), blocked))
    }

    /// Takes in one reply from the responder. Stale replies (acknowledging nothing new) and
    /// impossible ones (a PSN never sent, a kind the recovery mode does not use) are counted
    /// and otherwise ignored.
    #[inline]
    pub fn handle_reply(&mut self, now: Instant, r: Reply) {
        self.advance(now);
        if self.state != RequesterState::Active {
            self.counters.stale_replies += 1;
            return;
        }
        let psns = match r {
            Reply::Ack { psn, msn } | Reply::Nak { psn, msn } => [psn, psn, msn],
            Reply::Sack {
                cum_psn,
                sack_psn,
                msn,
            } => [cum_psn, sack_psn, msn],
        };
        // any of them above 24 bits
        if (psns[0] | psns[1] | psns[2]) > PSN_MASK {
            self.counters.invalid_replies += 1;
            return;
        }
        match (r, self.irn.is_some()) {
            (Reply::Ack { psn, msn }, _) => self.on_ack(psn, msn),
            (Reply::Nak { psn, msn }, false) => self.on_nak(psn, msn),
            (
                Reply::Sack {
                    cum_psn,
                    sack_psn,
                    msn,
                },
                true,
            ) => self.on_sack(cum_psn, sack_psn, msn),
            (Reply::Nak { .. }, true) | (Reply::Sack { .. }, false) => self.counters.invalid_replies += 1,
        }
    }

    fn note_msn(&mut self, msn: u32) {
        let m = Msn::from_low_bits(msn);
        if m.distance_from(self.msn) > 0 {
            self.msn = m;
        }
    }

    #[inline]
    fn on_ack(&mut self, psn: u32, msn: u32) {
        let Some(through) = self.index_of(psn) else {
            self.counters.stale_replies += 1;
            return;
        };
        if through < self.una {
            self.counters.stale_replies += 1;
            return;
        }
        if through >= self.max {
            self.counters.invalid_replies += 1;
            return;
        }
        self.counters.acks_received += 1;
        self.note_msn(msn);
        let proven = self.acknowledge_to(through + 1);
        self.retries_used = 0;
        self.after_progress(proven);
    }

    fn on_nak(&mut self, psn: u32, msn: u32) {
        let Some(expected) = self.index_of(psn) else {
            self.counters.stale_replies += 1;
            return;
        };
        if expected < self.una {
            self.counters.stale_replies += 1;
            return;
        }
        if expected > self.max {
            self.counters.invalid_replies += 1;
            return;
        }
        self.counters.packet_seq_err += 1;
        self.note_msn(msn);
        // A NAK implicitly acknowledges every packet before the PSN it carries.
        if expected > self.una {
            self.acknowledge_to(expected);
            if self.state != RequesterState::Active {
                return;
            }
        }
        if !self.consume_retry() {
            return;
        }
        self.nxt = expected;
        self.deadline = (self.una < self.max && self.cfg.rto != Duration::ZERO)
            .then(|| self.now.saturating_add(self.cfg.rto));
    }

    fn on_sack(&mut self, cum_psn: u32, sack_psn: u32, msn: u32) {
        let (Some(cum), Some(sacked)) = (self.index_of(cum_psn), self.index_of(sack_psn)) else {
            self.counters.stale_replies += 1;
            return;
        };
        if cum > self.max || sacked >= self.max || sacked < cum {
            self.counters.invalid_replies += 1;
            return;
        }
        self.counters.sacks_received += 1;
        self.note_msn(msn);
        let mut progress = false;
        let mut proven = 0;
        if cum > self.una {
            proven = self.acknowledge_to(cum);
            progress = true;
            if self.state != RequesterState::Active {
                return;
            }
        }
        if sacked >= self.una
            && let Some(seq) = self.irn.as_mut().and_then(|irn| irn.sacked(sacked))
        {
            proven = proven.max(seq);
            progress = true;
        }
        if !progress {
            self.counters.stale_replies += 1;
            return;
        }
        self.retries_used = 0;
        self.after_progress(proven);
    }

    /// Moves the cumulative acknowledgement to `new_una` (> `una`); returns the newest
    /// transmission number among the newly acknowledged packets (IRN; 0 otherwise).
    #[inline(always)]
    fn acknowledge_to(&mut self, new_una: u64) -> u64 {
        let mut proven = 0;
        if let Some(irn) = &mut self.irn {
            for i in self.una..new_una {
                proven = proven.max(irn.acknowledged(i));
            }
        }
        self.counters.acked_bytes += self.seg.start(new_una) - self.seg.start(self.una);
        self.una = new_una;
        self.nxt = self.nxt.max(new_una);
        if self.una == self.seg.packets {
            self.state = RequesterState::Complete;
            self.deadline = None;
        }
        proven
    }

    /// After an ACK or SACK that acknowledged something new: IRN infers losses, then the
    /// timer restarts if a response is still expected (IB: restarted on every acknowledgement).
    #[inline(always)]
    fn after_progress(&mut self, proven: u64) {
        if self.state != RequesterState::Active {
            return;
        }
        match &mut self.irn {
            None => {
                self.deadline = (self.una < self.max && self.cfg.rto != Duration::ZERO)
                    .then(|| self.now.saturating_add(self.cfg.rto));
            }
            Some(irn) => {
                irn.infer_losses(self.una, proven);
                let rto = irn.rto(self.max - self.una);
                self.deadline = irn.awaits_reply().then(|| self.now.saturating_add(rto));
            }
        }
    }

    /// Counts one retry; on running out, fails the requester and returns `false`.
    fn consume_retry(&mut self) -> bool {
        if let Some(limit) = self.cfg.max_retries
            && self.retries_used >= limit
        {
            self.state = RequesterState::Failed;
            self.deadline = None;
            self.counters.req_transport_retries_exceeded += 1;
            return false;
        }
        self.retries_used = self.retries_used.saturating_add(1);
        true
    }

    /// When the retransmission timer runs out, if it is running.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline.filter(|_| self.state == RequesterState::Active)
    }

    /// Fires the retransmission timer if `now` has reached it: go-back-N rewinds to the
    /// oldest unacknowledged packet, IRN marks every outstanding packet not SACKed as lost;
    /// both count a retry (and fail when the limit is reached).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
        let Some(deadline) = self.poll_timeout() else {
            return;
        };
        if self.now < deadline {
            return;
        }
        self.deadline = None;
        self.counters.local_ack_timeout_err += 1;
        if !self.consume_retry() {
            return;
        }
        match &mut self.irn {
            None => self.nxt = self.una,
            Some(irn) => irn.all_lost(self.una, self.max),
        }
    }
}
