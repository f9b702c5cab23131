//! Counters the simulator keeps: plain integers, updated on the hot path; and the flow
//! completion-time distribution, built from finished flows when a report is collected.

use hdrhistogram::Histogram;
use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::{Duration, IFG_BYTES, Instant, PREAMBLE_SFD_BYTES, Rate};
use serde::Serialize;

use crate::config::traffic::frame_len;
use crate::frame::DropReason;

/// Counters of one (port, priority).
///
/// The simulator keeps the two it updates per frame (data frames and bytes sent) in the
/// egress queue's cache line (`EgressQueue`) and the rest apart, built at a port's first
/// count of them. What a port received is what its peer sent less what is still on the wire
/// or was lost on it ([`Simulator::received`]), and the queue's peak is kept with the queue:
/// an arrival, an enqueue and a frame's start touch no counter line.
///
/// [`Simulator::received`]: crate::Simulator::received
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrioStats {
    /// Data frames transmitted.
    pub tx_frames: u64,
    /// Data bytes transmitted (frame bytes, FCS included).
    pub tx_bytes: u64,
    /// Frames received on this port and dropped, by [`DropReason::index`].
    pub drops: [u64; DropReason::ALL.len()],
    /// PFC frames sent with this priority's enable bit set and a non-zero time (XOFF).
    pub pfc_xoff_tx: u64,
    /// PFC frames sent with this priority's enable bit set and time 0 (XON).
    pub pfc_xon_tx: u64,
    /// PFC frames received with this priority's enable bit set and a non-zero time.
    pub pfc_xoff_rx: u64,
    /// PFC frames received with this priority's enable bit set and time 0.
    pub pfc_xon_rx: u64,
    /// Data frames sent and lost on the wire (its link went down under them).
    pub wire_lost_frames: u64,
    /// Their bytes.
    pub wire_lost_bytes: u64,
}

/// Counters of one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Per priority.
    pub prio: [PrioStats; 8],
    /// PAUSE frames sent with a non-zero time.
    pub pause_xoff_tx: u64,
    /// PAUSE frames sent with time 0.
    pub pause_xon_tx: u64,
    /// PAUSE frames received with a non-zero time.
    pub pause_xoff_rx: u64,
    /// PAUSE frames received with time 0.
    pub pause_xon_rx: u64,
    /// LLDP frames received and dropped: no DCBX agent on the port, or not one it accepts.
    pub lldp_rx_ignored: u64,
    /// Per priority: when a frame that arrived on this port was first dropped.
    pub first_drop: [Option<Instant>; 8],
}

impl PortStats {
    /// Counts a control frame this port sent.
    pub fn count_control_tx(&mut self, f: &ControlFrame) {
        match *f {
            ControlFrame::Pause { quanta } => {
                if quanta == 0 {
                    self.pause_xon_tx += 1
                } else {
                    self.pause_xoff_tx += 1
                }
            }
            ControlFrame::Pfc { enable_vector, time } => {
                for (p, &t) in time.iter().enumerate() {
                    if enable_vector & (1 << p) != 0 {
                        if t == 0 {
                            self.prio[p].pfc_xon_tx += 1
                        } else {
                            self.prio[p].pfc_xoff_tx += 1
                        }
                    }
                }
            }
        }
    }
    /// Counts a control frame this port received.
    pub fn count_control_rx(&mut self, f: &ControlFrame) {
        match *f {
            ControlFrame::Pause { quanta } => {
                if quanta == 0 {
                    self.pause_xon_rx += 1
                } else {
                    self.pause_xoff_rx += 1
                }
            }
            ControlFrame::Pfc { enable_vector, time } => {
                for (p, &t) in time.iter().enumerate() {
                    if enable_vector & (1 << p) != 0 {
                        if t == 0 {
                            self.prio[p].pfc_xon_rx += 1
                        } else {
                            self.prio[p].pfc_xoff_rx += 1
                        }
                    }
                }
            }
        }
    }
}

/// Counters of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Frames injected into the source NIC.
    pub sent_frames: u64,
    /// Bytes injected (frame bytes).
    pub sent_bytes: u64,
    /// Frames delivered to the destination's application.
    pub delivered_frames: u64,
    /// Bytes delivered (frame bytes).
    pub delivered_bytes: u64,
    /// Frames dropped on the way.
    pub dropped_frames: u64,
    /// When the first frame was injected.
    pub first_sent: Option<Instant>,
    /// When the last frame so far was delivered.
    pub last_delivery: Option<Instant>,
    /// When a finite flow's last frame was delivered (all frames delivered); for a QP, when
    /// its requester had every byte acknowledged.
    pub completed: Option<Instant>,
    /// QPs: bytes the responder delivered in order, each once.
    pub transport_delivered_bytes: u64,
    /// Replies, CNPs and CNMs about this flow dropped on the way.
    pub dropped_control_frames: u64,
    /// CNMs about this flow that reached a host without a QCN reaction point for it.
    pub cnms_unanswered: u64,
}

/// Whole-run frame accounting for the conservation check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Frames injected by sources.
    pub injected: u64,
    /// Frames delivered to destinations.
    pub delivered: u64,
    /// Of [`Self::delivered`], frames that reached a host other than their destination (a
    /// route through a host); the conservation check fails on any.
    pub misdelivered: u64,
    /// Frames dropped, by [`DropReason::index`].
    pub dropped: [u64; DropReason::ALL.len()],
}

/// Records `v` (at least 1), growing the histogram; a value beyond the largest it can grow to
/// (`i64::MAX / 2`, 53 days in picoseconds) saturates at its top.
fn record(h: &mut Histogram<u64>, v: u64) {
    let v = v.max(1);
    if h.record(v).is_err() {
        h.saturating_record(v);
    }
}

/// Significant decimal digits the flow-completion histograms keep: a quantile read from them
/// is at most 0.1 % above the true value (and never above the exact maximum).
pub const FCT_SIGNIFICANT_DIGITS: u8 = 3;

/// The ideal completion time of a finite flow of `size` payload bytes cut into frames of at
/// most `mtu` payload bytes (as the simulator's sources cut them; an empty flow is one
/// minimum-size frame), sent from a sender whose line rate is `line`: the time from the first
/// frame's first preamble bit to the last frame's last bit when the sender puts all the
/// flow's frames on its wire back to back at `line`, i.e. Σ over the frames of (frame + 8
/// bytes preamble/SFD + 12 bytes inter-frame gap) at `line`, minus the last frame's
/// inter-frame gap. It counts no propagation, no store-and-forward at switches and no
/// queueing: it is what the flow would take if the sender's wire were the whole path.
pub fn ideal_fct(size: u64, mtu: u64, line: Rate) -> Duration {
    let mtu = mtu.max(1);
    let wire = |payload: u64| frame_len(payload) + PREAMBLE_SFD_BYTES + IFG_BYTES;
    let (full, rest) = (size / mtu, size % mtu);
    let mut bytes = u128::from(full) * u128::from(wire(mtu));
    if rest > 0 || size == 0 {
        bytes += u128::from(wire(rest));
    }
    // the byte time times the bytes, as the MAC engines time a frame on the wire
    let bytes = u64::try_from(bytes - u128::from(IFG_BYTES)).unwrap_or(u64::MAX);
    line.time_for_bytes(1).saturating_mul(bytes)
}

/// The completion-time distribution of a set of completed flows: hdrhistograms of the flow
/// completion time (FCT, picoseconds) and of its slowdown (FCT divided by [`ideal_fct`],
/// recorded in thousandths), plus the exact maxima. Filled once per completed flow when a
/// report is collected, never on the simulator's hot path.
#[derive(Clone, Debug)]
pub struct FctHistogram {
    fct_ps: Histogram<u64>,
    slowdown_milli: Histogram<u64>,
    max_fct_ps: u64,
    max_slowdown: f64,
}

/// Figures of an [`FctHistogram`] with at least one flow. Quantiles use the nearest rank (the
/// smallest recorded value with at least that fraction of flows at or below it), read from
/// the histogram (see [`FCT_SIGNIFICANT_DIGITS`]).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FctSummary {
    /// Flows that completed.
    pub flows_completed_total: u64,
    /// Median flow completion time.
    pub fct_p50_ps: u64,
    /// 99th percentile of the flow completion time.
    pub fct_p99_ps: u64,
    /// 99.9th percentile of the flow completion time.
    pub fct_p999_ps: u64,
    /// Longest flow completion time (exact).
    pub fct_max_ps: u64,
    /// Median slowdown (FCT / ideal FCT at the sender's line rate, see [`ideal_fct`]).
    pub fct_slowdown_p50_ratio: f64,
    /// 99th percentile of the slowdown.
    pub fct_slowdown_p99_ratio: f64,
    /// 99.9th percentile of the slowdown.
    pub fct_slowdown_p999_ratio: f64,
    /// Largest slowdown (exact).
    pub fct_slowdown_max_ratio: f64,
}

impl Default for FctHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl FctHistogram {
    /// An empty distribution.
    pub fn new() -> Self {
        // auto-resizing histograms with 1 as the lowest value: creation cannot fail for
        // 0..=5 significant digits
        let h = || Histogram::new(FCT_SIGNIFICANT_DIGITS).unwrap_or_else(|e| unreachable!("{e}"));
        FctHistogram {
            fct_ps: h(),
            slowdown_milli: h(),
            max_fct_ps: 0,
            max_slowdown: 0.0,
        }
    }

    /// Records one completed flow whose completion took `fct` and ideally takes `ideal`.
    pub fn record(&mut self, fct: Duration, ideal: Duration) {
        let fct_ps = u64::try_from(fct.as_ps()).unwrap_or(u64::MAX);
        let slowdown = fct.as_ps() as f64 / ideal.as_ps().max(1) as f64;
        record(&mut self.fct_ps, fct_ps);
        record(&mut self.slowdown_milli, (slowdown * 1000.0).round() as u64);
        self.max_fct_ps = self.max_fct_ps.max(fct_ps);
        self.max_slowdown = self.max_slowdown.max(slowdown);
    }

    /// Flows recorded.
    pub fn len(&self) -> u64 {
        self.fct_ps.len()
    }

    /// Whether no flow was recorded.
    pub fn is_empty(&self) -> bool {
        self.fct_ps.is_empty()
    }

    /// The figures, or `None` when no flow was recorded.
    pub fn summary(&self) -> Option<FctSummary> {
        if self.is_empty() {
            return None;
        }
        let fct = |q: f64| self.fct_ps.value_at_quantile(q).min(self.max_fct_ps);
        let slow = |q: f64| (self.slowdown_milli.value_at_quantile(q) as f64 / 1000.0).min(self.max_slowdown);
        Some(FctSummary {
            flows_completed_total: self.len(),
            fct_p50_ps: fct(0.5),
            fct_p99_ps: fct(0.99),
            fct_p999_ps: fct(0.999),
            fct_max_ps: self.max_fct_ps,
            fct_slowdown_p50_ratio: slow(0.5),
            fct_slowdown_p99_ratio: slow(0.99),
            fct_slowdown_p999_ratio: slow(0.999),
            fct_slowdown_max_ratio: self.max_slowdown,
        })
    }

    /// The slowdown at quantile `q` (nearest rank, read from the histogram, never above the
    /// exact maximum); 0 when no flow was recorded.
    pub fn slowdown_quantile(&self, q: f64) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        (self.slowdown_milli.value_at_quantile(q) as f64 / 1000.0).min(self.max_slowdown)
    }

    /// The empirical CDF of the slowdown as steps (slowdown, fraction of flows at or below
    /// it), one per histogram bucket holding flows, the last at the exact maximum.
    pub fn slowdown_cdf(&self) -> Vec<(f64, f64)> {
        let n = self.len().max(1) as f64;
        let mut seen = 0u64;
        self.slowdown_milli
            .iter_recorded()
            .map(|v| {
                seen += v.count_since_last_iteration();
                (
                    (v.value_iterated_to() as f64 / 1000.0).min(self.max_slowdown),
                    seen as f64 / n,
                )
            })
            .collect()
    }

    /// The empirical CDF of the FCT as steps (FCT in picoseconds, fraction of flows at or
    /// below it), one per histogram bucket holding flows, the last at the exact maximum.
    pub fn fct_cdf(&self) -> Vec<(u64, f64)> {
        let n = self.len().max(1) as f64;
        let mut seen = 0u64;
        self.fct_ps
            .iter_recorded()
            .map(|v| {
                seen += v.count_since_last_iteration();
                (v.value_iterated_to().min(self.max_fct_ps), seen as f64 / n)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ideal_time_is_the_frames_back_to_back_less_the_last_gap() {
        let r = Rate::from_gbps(100); // 80 ps a byte
        // 3000 bytes, MTU 1500: two 1522-byte frames
        assert_eq!(ideal_fct(3000, 1500, r).as_ps(), (1542 + 1530) * 80);
        // 1 byte: one 64-byte frame; 0 bytes: the same (the source still sends one frame)
        assert_eq!(ideal_fct(1, 1500, r).as_ps(), 72 * 80);
        assert_eq!(ideal_fct(0, 1500, r).as_ps(), 72 * 80);
        // 1501 bytes: 1522 + a 23-byte frame padded to 64
        assert_eq!(ideal_fct(1501, 1500, r).as_ps(), (1542 + 72) * 80);
        // an MTU of 0 is taken as 1 rather than dividing by zero
        assert_eq!(ideal_fct(2, 0, r).as_ps(), (84 + 72) * 80);
    }

    #[test]
    fn quantiles_are_within_a_thousandth_above_the_nearest_rank() {
        let mut h = FctHistogram::new();
        assert!(h.summary().is_none() && h.fct_cdf().is_empty());
        let ideal = Duration::from_us(1);
        // FCTs 1 µs .. 1 ms in 1000 steps; slowdown = FCT / 1 µs
        for k in 1..=1000u64 {
            h.record(Duration::from_ps(u128::from(k * 1_000_000)), ideal);
        }
        let s = h.summary().unwrap();
        assert_eq!(s.flows_completed_total, 1000);
        for (got, rank) in [(s.fct_p50_ps, 500), (s.fct_p99_ps, 990), (s.fct_p999_ps, 999)] {
            let exact = rank * 1_000_000;
            assert!(
                got >= exact && got as f64 <= exact as f64 * 1.001,
                "{got} vs {exact}"
            );
        }
        assert_eq!(s.fct_max_ps, 1_000_000_000);
        assert_eq!(s.fct_slowdown_max_ratio, 1000.0);
        let slow = s.fct_slowdown_p99_ratio;
        assert!((990.0..=990.0 * 1.001).contains(&slow), "{slow}");
        let cdf = h.fct_cdf();
        assert_eq!(cdf.last(), Some(&(1_000_000_000, 1.0)));
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        // the slowdown's: the same shape, ending at the exact largest slowdown
        let slow_cdf = h.slowdown_cdf();
        assert_eq!(slow_cdf.last(), Some(&(1000.0, 1.0)));
        assert!(slow_cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        let p95 = h.slowdown_quantile(0.95);
        assert!((950.0..=950.0 * 1.001).contains(&p95), "{p95}");
        assert_eq!(FctHistogram::new().slowdown_quantile(0.5), 0.0);
    }
}

/// What a receiving port's FCS check discarded after its link corrupted the frames (a link
/// with a bit error rate, `sim/features/link_errors.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FcsErrors {
    /// Data frames (RoCEv2 packets, replies and plain frames).
    pub data_frames: u64,
    /// PAUSE and PFC frames.
    pub control_frames: u64,
    /// LLDPDUs.
    pub lldp_frames: u64,
    /// When the first one arrived.
    pub first: Option<Instant>,
}
