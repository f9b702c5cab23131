//! RoCEv2 reliable-connection transport (InfiniBand RC over UDP), one sans-IO engine per end:
//! a [`Requester`] (the sending QP) and a [`Responder`] (the receiving QP) carrying one
//! message. Recovery is go-back-N as RoCE NICs ship it, or IRN selective repeat.
//!
//! Neither end reads a clock or allocates after `new`: every call takes `now`
//! ([`Instant`](crate::units::Instant), picoseconds), which should not go backwards (an earlier
//! one is taken as the latest seen). Pacing is the driver's: the rate limiter (DCQCN's reaction
//! point, a link) decides *when* a packet may go, the requester decides *which*.
//!
//! # How a driver uses it
//! 1. `Requester::new(cfg, bytes)?` at the sender, `Responder::new(cfg, bytes)?` at the
//!    receiver, with the same [`RcConfig`] (presets: [`RcConfig::hpcc_ns3`],
//!    [`RcConfig::irn_tlt`], [`RcConfig::perftest`]).
//! 2. Whenever the sender may put a packet on the wire: `requester.poll_transmit(now)`;
//!    `Some(p)` goes out now (`p.payload` bytes of data plus headers), `None` means nothing
//!    may go until a reply or a timeout.
//! 3. When a data packet arrives: `let r = responder.handle_data(now, &p)`; send `r.reply`
//!    back if there is one; `r.delivered_bytes` became available in order.
//! 4. When a reply arrives: `requester.handle_reply(now, reply)`, then poll again (2).
//! 5. Timer: after each call ask `requester.poll_timeout()`; at that instant call
//!    `handle_timeout(now)` and poll again (2). The responder has no timer.
//! 6. Done when `requester.is_complete()` (every byte acknowledged; for the HPCC ns-3 FCT,
//!    the instant the last ACK arrives) and `responder.is_complete()`; failed when
//!    `requester.is_failed()` (retry limit).
//!
//! # Wire semantics (as InfiniBand)
//! - PSNs are 24 bits from `psn_start` and wrap ([`Psn`]); a requester never has 2^23 or
//!   more PSNs outstanding, so comparisons are exact.
//! - `Reply::Ack { psn }` acknowledges every packet up to and including `psn` (AETH ACK).
//!   `Reply::Nak { psn }` is a NAK-sequence-error carrying the *expected* PSN; it implicitly
//!   acknowledges every packet before it (Linux rxe: "a nak implicitly acks all packets with
//!   psns before"). `Reply::Sack { cum_psn, sack_psn }` (IRN) says every packet before
//!   `cum_psn` arrived and that `sack_psn` arrived out of order. `msn` counts messages the
//!   responder completed (0, then 1 once the whole message is in).
//! - AckReq: set on the last packet of the message (rxe sets it on a message's last packet)
//!   and on any packet after which the requester may send nothing more before a reply comes
//!   (IRN's BDP cap reached, or go-back-N's 2^23-PSN window full), so that coalesced ACKs
//!   never stall a requester that waits for them.
//!
//! # Responder
//! - In order: delivered; ACKed once `ack_every` in-order packets are unacknowledged, and at
//!   once for AckReq, the last packet, or (IRN) a packet that fills a hole.
//! - Duplicate (PSN before the expected one): counted (`duplicate_request`) and ACKed again
//!   with the newest in-order PSN (IB C9-105).
//! - Go-back-N, PSN beyond the expected one: dropped (`out_of_sequence`); a NAK is sent
//!   unless one was already sent for the same expected PSN less than `nak_min_interval` ago
//!   (the HPCC ns-3 rule; `Duration::MAX` gives rxe's one NAK per expected PSN).
//! - IRN, PSN beyond the expected one: held (a bit per packet over the window the requester
//!   can reach, `bdp_cap_bytes / mtu + 1` packets) and SACKed; delivered when the hole
//!   before it fills. Each byte is delivered exactly once.
//!
//! # Requester
//! - Segmentation at `mtu` payload bytes: packet i carries bytes `i·mtu ..` of the message;
//!   an empty message is one empty packet.
//! - Go-back-N: a NAK rewinds the next packet to the NAK's PSN (as HPCC ns-3 `RecoverQueue`),
//!   the timeout to the oldest unacknowledged packet. The timer (IB o9-85) starts with a
//!   transmission when none is running and restarts on every ACK or NAK that is not stale,
//!   while anything is outstanding.
//! - IRN: packets known lost are resent first (lowest PSN first), new packets only while the
//!   bytes from the oldest unacknowledged byte to the end of the new packet stay within
//!   `bdp_cap_bytes`. A packet is known lost when a transmission sent after it was
//!   acknowledged or SACKed and it was not: exact on a channel that keeps order, so with no
//!   reply lost and `ack_every = 1` IRN resends exactly the lost transmissions. (With
//!   `ack_every > 1`, a timeout may resend in-order packets whose ACK was being coalesced.)
//!   The timer restarts on every transmission and on every ACK/SACK with news, with
//!   `rto_low` when at most 3 packets are outstanding, else `rto_high`; when it fires, every
//!   outstanding packet not SACKed is resent.
//! - Retries (IB `retry_cnt`, as rxe counts them): each timeout and each NAK uses one; an
//!   ACK or SACK that acknowledges something new gives them all back. Running out puts the
//!   requester in the failed state (`req_transport_retries_exceeded`).
//! - Stale replies (acknowledging nothing new) and impossible ones (a PSN never sent, a SACK
//!   to go-back-N, a NAK to IRN) are counted and ignored.
//!
//! # Mapping the HPCC ns-3 reference (MODEL.md §2) — [`RcConfig::hpcc_ns3`]
//! | reference | here |
//! | --- | --- |
//! | `PACKET_PAYLOAD_SIZE 1000` | `mtu: 1000` (the reference counts sequence numbers in bytes; PSN = byte / mtu) |
//! | `L2_ACK_INTERVAL` | `ack_every: 1` whatever the value: the receiver resets its milestone on every packet, so a larger value only thins the ACKs of a flow's first `L2_ACK_INTERVAL` bytes (High-Precision-Congestion-Control#65) |
//! | `L2_CHUNK_SIZE` | no key: it adds an ACK at each chunk boundary, which changes nothing when every packet is ACKed |
//! | `L2_BACK_TO_ZERO 0` | `recovery: GoBackN` (go back to the NACK's sequence) |
//! | `L2_BACK_TO_ZERO 1` | not offered: its receiver rounds its expected sequence down to a chunk and accepts bytes it already has again, which breaks exactly-once delivery; the reference runs use 0 |
//! | NACK interval 500 µs (`NACKGenerationInterval`) | `nak_min_interval: 500 µs` |
//! | no retransmission timeout | `rto: Duration::ZERO` |
//! | ACK carries the next expected byte | `Ack { psn }` carries the last PSN received in order (IB) |
//! | duplicate: dropped, no reply | duplicate: dropped, ACKed again (IB); only stale NAKs cause duplicates there, and the extra ACK is stale at the sender |
//!
//! Without a timeout a transfer can stall for ever: when the last packet (or all packets
//! after a loss) is lost, no later packet arrives to provoke a NAK; when a NAK is lost and no
//! packet follows; when the final ACK is lost (the responder has everything, the requester
//! never completes). The reference stalls in the same cases (MODEL.md §2: "if the tail of a
//! flow is lost, the flow never finishes").

mod config;
mod counters;
mod irn;
mod psn;
mod requester;
mod responder;
mod window;

pub use config::{
    IRN_RTO_LOW_MAX_PACKETS, MAX_IRN_WINDOW_PACKETS, MAX_MTU, MIN_MTU, RcConfig, RcConfigError, Recovery,
    ib_local_ack_timeout,
};
pub use counters::{RequesterCounters, ResponderCounters};
pub use psn::{Msn, PSN_HALF, PSN_MASK, PSN_SPACE, Psn, PsnRangeError};
pub use requester::{Requester, RequesterState};
pub use responder::Responder;

/// One data packet of the message, as the requester hands it to the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataPacket {
    /// BTH PSN (24 bits).
    pub psn: u32,
    /// Offset of the payload in the message, bytes.
    pub offset: u64,
    /// Payload bytes (`mtu`, or less for the last packet).
    pub payload: u32,
    /// First packet of the message (opcode *_FIRST or *_ONLY).
    pub first: bool,
    /// Last packet of the message (opcode *_LAST or *_ONLY).
    pub last: bool,
    /// BTH AckReq bit: the responder acknowledges this packet at once.
    pub ack_req: bool,
    /// Sent before (go-back-N rewind, IRN resend or timeout); for counters and traces only.
    pub retransmission: bool,
}

/// A reply from the responder (an ACKNOWLEDGE packet with its AETH, or IRN's SACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    /// Every packet up to and including `psn` arrived.
    Ack {
        /// The newest PSN received in order.
        psn: u32,
        /// Messages completed (AETH MSN).
        msn: u32,
    },
    /// NAK-sequence-error (AETH syndrome 0x60): a packet arrived beyond `psn`, the PSN
    /// expected; every packet before `psn` arrived.
    Nak {
        /// The expected PSN.
        psn: u32,
        /// Messages completed (AETH MSN).
        msn: u32,
    },
    /// IRN: every packet before `cum_psn` arrived, and `sack_psn` arrived out of order.
    Sack {
        /// The expected PSN (first missing).
        cum_psn: u32,
        /// The PSN received out of order.
        sack_psn: u32,
        /// Messages completed (AETH MSN).
        msn: u32,
    },
}

/// What one data packet did at the responder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Bytes that became available in order with this packet (IRN: it and the held packets
    /// it made contiguous).
    pub delivered_bytes: u64,
    /// The reply to send back now, if any.
    pub reply: Option<Reply>,
    /// The packet had been received before.
    pub duplicate: bool,
}

/// How a message of `bytes` is cut into packets of `mtu` payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segmentation {
    pub(crate) mtu: u64,
    pub(crate) bytes: u64,
    /// At least 1: an empty message is one empty packet.
    pub(crate) packets: u64,
}

impl Segmentation {
    pub(crate) fn new(mtu: u32, bytes: u64) -> Segmentation {
        let mtu = u64::from(mtu);
        Segmentation {
            mtu,
            bytes,
            packets: bytes.div_ceil(mtu).max(1),
        }
    }

    /// Offset of packet `i` (`i ≤ packets`; `packets` gives the message length).
    #[inline]
    pub(crate) fn start(&self, i: u64) -> u64 {
        // `i.saturating_mul(mtu).min(bytes)` without the overflow check: a packet before the
        // last ends before the last byte (`i · mtu < bytes`, no overflow), and from the
        // packet count on the product is at least `bytes`
        if i < self.packets {
            i * self.mtu
        } else {
            self.bytes
        }
    }

    /// End offset (exclusive) of packet `i`.
    pub(crate) fn end(&self, i: u64) -> u64 {
        self.start(i.saturating_add(1))
    }

    /// Payload bytes of packet `i`.
    pub(crate) fn payload(&self, i: u64) -> u32 {
        (self.end(i) - self.start(i)) as u32
    }
}
