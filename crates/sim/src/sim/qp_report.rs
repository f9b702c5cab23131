//! The QP figures of a flow with a RoCEv2 transport: its engines' counters, the simulator's
//! own and its reaction point's rate over time, read from the QP when a report is collected.
//!
//! They live beside the engine, not in `report`, because a partition's end-of-run digest
//! (`exchange`) carries them too and the engine uses no report module; `report::qp`
//! re-exports them.

use serde::Serialize;

use crate::series::SeriesReport;
use crate::sim::Qp;

/// What a QP did (a flow with `transport = "rocev2"`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QpReport {
    /// Congestion control: `none`, `dcqcn`, `qcn`.
    pub cc: &'static str,
    /// Payload bytes the responder delivered in order, each once (a finished QP: its size).
    pub transport_delivered_bytes: u64,
    /// Data packets sent, retransmissions included.
    pub data_sent_frames: u64,
    /// Of them, retransmissions.
    pub retransmitted_frames: u64,
    /// Retransmission timeouts that fired (mlx5 `local_ack_timeout_err`).
    pub timeouts_total: u64,
    /// NAK-sequence-errors the requester acted on (mlx5 `packet_seq_err`).
    pub naks_received_total: u64,
    /// Data packets the responder dropped as out of sequence (mlx5 `out_of_sequence`).
    pub out_of_sequence_frames: u64,
    /// Duplicate data packets at the responder.
    pub duplicate_frames: u64,
    /// Replies (ACK/NAK/SACK) the receiver sent.
    pub replies_sent_frames: u64,
    /// Replies that reached the sender.
    pub replies_received_frames: u64,
    /// CE-marked data packets that reached the receiver (mlx5 `np_ecn_marked_roce_packets`).
    pub ecn_marked_received_frames: u64,
    /// CNPs the receiver sent: packets, or CNP flags on replies (mlx5 `np_cnp_sent`).
    pub cnps_sent_total: u64,
    /// CNPs that reached the sender (mlx5 `rp_cnp_handled`).
    pub cnps_received_total: u64,
    /// CNMs that reached the sender.
    pub cnms_received_total: u64,
    /// Rate cuts of the reaction point.
    pub rate_decreases_total: u64,
    /// Replies, CNPs and CNMs about this QP dropped on the way.
    pub control_dropped_frames: u64,
    /// The reaction point's rate at the end of the run (the line rate without one).
    pub rate_bps: u64,
    /// The lowest rate it had.
    pub min_rate_bps: u64,
    /// Its rate over time (steps; at most [`crate::series::SERIES_CAP`]).
    pub rate_series: SeriesReport,
}

impl QpReport {
    /// The figures of `qp`, whose congestion control is named `cc` and of whose replies, CNPs
    /// and CNMs `control_dropped` were dropped on the way.
    pub(crate) fn of(qp: &Qp, cc: &'static str, control_dropped: u64) -> QpReport {
        let rq = qp.requester().counters();
        let rs = qp.responder().counters();
        let c = qp.sim_counters();
        let min_rate = qp
            .rate_series()
            .steps()
            .map(|(_, r)| r.bps())
            .min()
            .unwrap_or(qp.line().bps());
        QpReport {
            cc,
            transport_delivered_bytes: rs.delivered_bytes,
            data_sent_frames: rq.tx_packets,
            retransmitted_frames: rq.retransmitted_packets,
            timeouts_total: rq.local_ack_timeout_err,
            naks_received_total: rq.packet_seq_err,
            out_of_sequence_frames: rs.out_of_sequence,
            duplicate_frames: rs.duplicate_request,
            replies_sent_frames: c.replies_sent,
            replies_received_frames: c.replies_received,
            ecn_marked_received_frames: c.ce_received,
            cnps_sent_total: qp.np_cnps_sent().unwrap_or(0),
            cnps_received_total: c.cnps_received,
            cnms_received_total: c.cnms_received,
            rate_decreases_total: qp.rate_decreases(),
            control_dropped_frames: control_dropped,
            rate_bps: qp.rate().bps(),
            min_rate_bps: min_rate.min(qp.rate().bps()),
            rate_series: qp.rate_series().to_report(),
        }
    }
}
