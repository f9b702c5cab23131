//! The congestion-notification figures of a report: per QP (transport, congestion control,
//! its rate over time), per switch port (ECN marks, CNMs), totals, and the comparison with a
//! twin run of the same scenario with congestion notification off
//! ([`crate::experiments::cn_twin`]), which says how much less PFC fired.

use std::fmt::Write as _;

use lossless_proto::units::Duration;

use crate::report::Report;
use crate::report::summary::SummaryOptions;

pub use crate::report::qp::QpReport;
pub use crate::report::{CnEffect, CnTotals, PortCnReport, PrioCnReport};

fn ratio(with: f64, without: f64) -> f64 {
    if without > 0.0 { 1.0 - with / without } else { 0.0 }
}

impl Report {
    fn pfc_xoff_sent(&self) -> u64 {
        self.ports
            .iter()
            .map(|p| {
                p.pause_xoff_sent_frames + p.priorities.iter().map(|q| q.pfc_xoff_sent_frames).sum::<u64>()
            })
            .sum()
    }
    fn paused_total(&self) -> u128 {
        self.ports
            .iter()
            .flat_map(|p| &p.priorities)
            .map(|q| q.paused_ps)
            .sum()
    }

    /// Adds the comparison with `without`, the twin run of [`crate::experiments::cn_twin::cn_off`]: how much less PFC
    /// fired, and each flow's throughput without CN.
    pub fn compare_with_cn_off(&mut self, without: &Report) {
        let (x, y) = (self.pfc_xoff_sent(), without.pfc_xoff_sent());
        let (p, q) = (self.paused_total(), without.paused_total());
        self.cn_effect = Some(CnEffect {
            pfc_xoff_sent_frames: x,
            pfc_xoff_sent_without_cn_frames: y,
            pfc_xoff_reduction_ratio: ratio(x as f64, y as f64),
            paused_ps: p,
            paused_without_cn_ps: q,
            paused_reduction_ratio: ratio(p as f64, q as f64),
            lossless_dropped_frames: self.lossless_drops(),
            lossless_dropped_without_cn_frames: without.lossless_drops(),
        });
        for f in &mut self.flows {
            f.throughput_without_cn_bps = without.flow(&f.name).map(|g| g.throughput_bps);
        }
    }

    /// The congestion-notification section of the summary (empty without QPs or markers):
    /// every QP and marking port when they fit `opts`, else the top QPs by rate cuts and the
    /// top ports by frames marked.
    pub(crate) fn cn_summary(&self, opts: &SummaryOptions) -> String {
        let mut s = String::new();
        let mut qps: Vec<_> = self
            .flows
            .iter()
            .filter_map(|f| f.qp.as_ref().map(|q| (f, q)))
            .collect();
        if !qps.is_empty() {
            let _ = writeln!(s);
            if !opts.whole(qps.len()) {
                // the QPs congestion control worked on most: rate cuts, then CNPs, then the
                // lowest rate reached (a stable sort keeps flow order among equals)
                qps.sort_by_key(|(_, q)| {
                    (
                        std::cmp::Reverse(q.rate_decreases_total),
                        std::cmp::Reverse(q.cnps_received_total + q.cnms_received_total),
                        q.min_rate_bps,
                    )
                });
                let _ = writeln!(
                    s,
                    "top {} of {} QPs by rate cuts (then CNPs and CNMs received, then lowest rate; --full lists all)",
                    opts.top,
                    qps.len()
                );
                qps.truncate(opts.top);
            }
            let _ = writeln!(
                s,
                "{:<20} {:<6} {:>9} {:>9} {:>6} {:>7} {:>7} {:>6} {:>6} {:>5} {:>12}",
                "QP",
                "cc",
                "rate Gb/s",
                "min Gb/s",
                "cuts",
                "CE rx",
                "CNP rx",
                "CNM rx",
                "retx",
                "RTO",
                "completion"
            );
            for (f, q) in &qps {
                let c = f
                    .completion_ps
                    .map(|c| Duration::from_ps(c).to_string())
                    .unwrap_or_else(|| "-".into());
                let _ = writeln!(
                    s,
                    "{:<20} {:<6} {:>9.3} {:>9.3} {:>6} {:>7} {:>7} {:>6} {:>6} {:>5} {:>12}",
                    f.name,
                    q.cc,
                    q.rate_bps as f64 / 1e9,
                    q.min_rate_bps as f64 / 1e9,
                    q.rate_decreases_total,
                    q.ecn_marked_received_frames,
                    q.cnps_received_total,
                    q.cnms_received_total,
                    q.retransmitted_frames,
                    q.timeouts_total,
                    c
                );
            }
        }
        let mut marked: Vec<_> = self
            .ports
            .iter()
            .filter_map(|p| p.cn.as_ref().map(|c| (p, c)))
            .flat_map(|(p, c)| c.priorities.iter().map(move |q| (p, q)))
            .filter(|(_, q)| q.ecn_marked_frames + q.cnms_sent_total > 0)
            .collect();
        if !marked.is_empty() {
            if !opts.whole(marked.len()) {
                marked.sort_by_key(|(_, q)| std::cmp::Reverse(q.ecn_marked_frames + q.cnms_sent_total));
                let _ = writeln!(
                    s,
                    "top {} of {} marking port priorities by frames CE-marked and CNMs sent (--full lists all)",
                    opts.top,
                    marked.len()
                );
                marked.truncate(opts.top);
            }
            let _ = writeln!(
                s,
                "{:<22} {:>3} {:>12} {:>12} {:>10} {:>8}",
                "ECN/QCN port → peer", "pri", "CE marked", "not marked", "CP samples", "CNMs"
            );
            for (p, q) in &marked {
                let _ = writeln!(
                    s,
                    "{:<22} {:>3} {:>12} {:>12} {:>10} {:>8}",
                    format!("{}.{} → {}", p.node, p.port, p.peer),
                    q.priority,
                    q.ecn_marked_frames,
                    q.ecn_not_marked_frames,
                    q.cp_sampled_frames,
                    q.cnms_sent_total
                );
            }
        }
        if let Some(t) = &self.cn {
            let _ = writeln!(
                s,
                "CN: {} QPs, {} frames ECN-marked, {} CNPs, {} CNMs, {} rate cuts, {} retransmitted, {} timeouts; every byte delivered once: {}",
                t.qps_total,
                t.ecn_marked_frames,
                t.cnps_sent_total,
                t.cnms_sent_total,
                t.rate_decreases_total,
                t.retransmitted_frames,
                t.timeouts_total,
                if t.every_byte_once { "yes" } else { "NO" }
            );
        }
        if let Some(e) = &self.cn_effect {
            let _ = writeln!(
                s,
                "PFC with CN vs the same run without CN: {} vs {} XOFF frames ({:+.1} %), paused (summed over every port priority) {} vs {} ({:+.1} %), lossless drops {} vs {}",
                e.pfc_xoff_sent_frames,
                e.pfc_xoff_sent_without_cn_frames,
                -100.0 * e.pfc_xoff_reduction_ratio,
                Duration::from_ps(e.paused_ps),
                Duration::from_ps(e.paused_without_cn_ps),
                -100.0 * e.paused_reduction_ratio,
                e.lossless_dropped_frames,
                e.lossless_dropped_without_cn_frames
            );
        }
        s
    }
}
