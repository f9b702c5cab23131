//! Counters of each end, named as Linux mlx5 names its hardware counters where one exists
//! (`/sys/class/infiniband/<dev>/ports/<p>/hw_counters/`: `packet_seq_err`,
//! `local_ack_timeout_err`, `req_transport_retries_exceeded`, `out_of_sequence`,
//! `duplicate_request`). mlx5's `implied_nak_seq_err` counts RDMA READ/atomic responses
//! implied lost by a later ACK; this engine carries SEND/WRITE-like messages only, so it has
//! no counterpart here.

use serde::{Deserialize, Serialize};

/// Counters of a requester (the sending QP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequesterCounters {
    /// Data packets handed out by `poll_transmit` (first transmissions and retransmissions).
    pub tx_packets: u64,
    /// Payload bytes of those packets.
    pub tx_bytes: u64,
    /// Of them, retransmissions.
    pub retransmitted_packets: u64,
    /// Payload bytes of the retransmissions.
    pub retransmitted_bytes: u64,
    /// Payload bytes cumulatively acknowledged (ACK, or the implied ACK of a NAK or SACK).
    pub acked_bytes: u64,
    /// ACKs received that acknowledged something new.
    pub acks_received: u64,
    /// IRN SACKs received (each names one packet received out of order).
    pub sacks_received: u64,
    /// mlx5 `packet_seq_err`: NAK-sequence-errors received and acted on.
    pub packet_seq_err: u64,
    /// mlx5 `local_ack_timeout_err`: retransmission timeouts that fired.
    pub local_ack_timeout_err: u64,
    /// mlx5 `req_transport_retries_exceeded`: the retry limit ran out; the QP is in error.
    pub req_transport_retries_exceeded: u64,
    /// Replies ignored because they acknowledge nothing new (duplicates, late, reordered).
    pub stale_replies: u64,
    /// Replies ignored because they cannot be right: a PSN never sent, or a kind the
    /// configured recovery does not use (a SACK to go-back-N, a NAK to IRN).
    pub invalid_replies: u64,
}

/// Counters of a responder (the receiving QP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponderCounters {
    /// Data packets handed to `handle_data`.
    pub rx_packets: u64,
    /// Payload bytes of those packets.
    pub rx_bytes: u64,
    /// Packets delivered in order (each once).
    pub delivered_packets: u64,
    /// Payload bytes delivered in order (each once).
    pub delivered_bytes: u64,
    /// mlx5 `out_of_sequence`: packets whose PSN is beyond the expected one (go-back-N drops
    /// them; IRN keeps them when new and inside its window).
    pub out_of_sequence: u64,
    /// mlx5 `duplicate_request`: packets received again (PSN before the expected one, or an
    /// out-of-order packet IRN already holds); each is acknowledged again.
    pub duplicate_request: u64,
    /// IRN: out-of-order packets dropped because they lie beyond the window a correct
    /// requester can reach.
    pub out_of_window: u64,
    /// Packets dropped because their offset, length or first/last flags do not match the
    /// message's segmentation at their PSN, or their PSN lies outside the message.
    pub malformed: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// NAK-sequence-errors sent.
    pub naks_sent: u64,
    /// Out-of-order packets dropped without a NAK (one was sent for this gap recently).
    pub naks_suppressed: u64,
    /// IRN SACKs sent.
    pub sacks_sent: u64,
}
