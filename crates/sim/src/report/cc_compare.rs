//! What `lossless sim cc-compare` keeps of each run (one fabric under one congestion
//! control): the slowdown of its completed flows, overall and per size bucket, how much PFC
//! fired, what was dropped, what the congestion control did, and the run's cost; and the
//! table that lists them side by side.

use lossless_proto::units::Duration;
use serde::Serialize;

use super::Report;
use super::fct_size::{BUCKETS, by_size};
use crate::stats::FctHistogram;

/// The slowdown (FCT / ideal FCT) quantiles of a set of completed flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slowdown {
    /// Flows counted.
    pub flows: u64,
    /// Median slowdown.
    pub p50_ratio: f64,
    /// 95th percentile.
    pub p95_ratio: f64,
    /// 99th percentile.
    pub p99_ratio: f64,
    /// Largest.
    pub max_ratio: f64,
}

impl Slowdown {
    /// The quantiles of `h`, `None` when it holds no flow.
    fn of(h: &FctHistogram) -> Option<Slowdown> {
        (!h.is_empty()).then(|| Slowdown {
            flows: h.len(),
            p50_ratio: h.slowdown_quantile(0.5),
            p95_ratio: h.slowdown_quantile(0.95),
            p99_ratio: h.slowdown_quantile(0.99),
            max_ratio: h.slowdown_quantile(1.0),
        })
    }
}

/// The slowdown of the completed flows of one size bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketSlowdown {
    /// The bucket, e.g. "10 KB – 100 KB" (payload bytes).
    pub size: &'static str,
    /// Its index in [`BUCKETS`] (0: the smallest).
    pub bucket: usize,
    /// Its quantiles.
    #[serde(flatten)]
    pub slowdown: Slowdown,
}

/// One run of `cc-compare`: a fabric under a congestion control.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CcRun {
    /// The fabric (a built-in scenario's name).
    pub fabric: String,
    /// The congestion control (`qp.cc`).
    pub cc: String,
    /// Finite flows.
    pub flows: u64,
    /// Of them, completed.
    pub flows_completed: u64,
    /// The slowdown of every completed flow; `None` when none completed.
    pub slowdown: Option<Slowdown>,
    /// The slowdown per size bucket, the buckets with completed flows only, smallest first.
    pub by_size: Vec<BucketSlowdown>,
    /// PFC XOFF (and PAUSE) frames sent, summed over ports and priorities.
    pub pfc_xoff_sent_frames: u64,
    /// Time paused, summed over port priorities.
    pub paused_ps: u128,
    /// The longest time one port priority was paused.
    pub max_paused_ps: u128,
    /// Frames of lossless priorities dropped (a finding: PFC did not hold).
    pub lossless_dropped_frames: u64,
    /// Frames dropped, all priorities.
    pub dropped_frames: u64,
    /// CE-marked data packets that reached their receivers, summed over the QPs.
    pub ecn_marked_received_frames: u64,
    /// Rate cuts of the QPs' reaction points, summed.
    pub rate_decreases_total: u64,
    /// The lowest rate any QP had (`None` without QPs).
    pub min_qp_rate_bps: Option<u64>,
    /// Events the engine handled.
    pub events: u64,
    /// Wall-clock seconds of the run (not deterministic: left out of comparisons).
    pub wall_s: f64,
    /// Events per wall-clock second.
    pub events_per_s: f64,
    /// Every frame accounted for, and no engine fault.
    pub sound: bool,
}

impl CcRun {
    /// The figures of `report`, the run of `fabric` under `cc` that took `wall_s` seconds.
    pub fn of(fabric: &str, cc: &str, report: &Report, wall_s: f64) -> CcRun {
        let buckets = by_size(&report.flows);
        let mut all = FctHistogram::new();
        for f in &report.flows {
            if let (Some(_), Some(c), Some(i)) = (f.size_bytes, f.completion_ps, f.fct_ideal_ps) {
                all.record(Duration::from_ps(c), Duration::from_ps(i));
            }
        }
        let (mut xoff, mut paused, mut max_paused, mut dropped) = (0u64, 0u128, 0u128, 0u64);
        for p in &report.ports {
            xoff += p.pause_xoff_sent_frames;
            for q in &p.priorities {
                xoff += q.pfc_xoff_sent_frames;
                paused += q.paused_ps;
                max_paused = max_paused.max(q.paused_ps);
                dropped += q.drops_frames.values().sum::<u64>();
            }
        }
        let qps = || report.flows.iter().filter_map(|f| f.qp.as_ref());
        CcRun {
            fabric: fabric.to_string(),
            cc: cc.to_string(),
            flows: report.flows.iter().filter(|f| f.size_bytes.is_some()).count() as u64,
            flows_completed: report
                .flows
                .iter()
                .filter(|f| f.size_bytes.is_some() && f.completion_ps.is_some())
                .count() as u64,
            slowdown: Slowdown::of(&all),
            by_size: buckets
                .iter()
                .enumerate()
                .filter_map(|(k, h)| {
                    Slowdown::of(h).map(|slowdown| BucketSlowdown {
                        size: BUCKETS[k].0,
                        bucket: k,
                        slowdown,
                    })
                })
                .collect(),
            pfc_xoff_sent_frames: xoff,
            paused_ps: paused,
            max_paused_ps: max_paused,
            lossless_dropped_frames: report.lossless.dropped_frames,
            dropped_frames: dropped,
            ecn_marked_received_frames: qps().map(|q| q.ecn_marked_received_frames).sum(),
            rate_decreases_total: qps().map(|q| q.rate_decreases_total).sum(),
            min_qp_rate_bps: qps().map(|q| q.min_rate_bps).min(),
            events: report.events,
            wall_s,
            events_per_s: report.events as f64 / wall_s.max(1e-9),
            sound: report.check().is_ok(),
        }
    }
}

/// The table of runs, one row per run and size bucket: the run's overall line first (size
/// "all"), then a line per bucket with completed flows; the run's other figures on its first
/// line only. Columns are aligned; `-` where a run has no completed flow.
pub fn table(runs: &[CcRun]) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        [
            "fabric",
            "cc",
            "flow size",
            "done",
            "slowdown p50",
            "p95",
            "p99",
            "PFC XOFF",
            "paused µs",
            "drops (lossless)",
            "ECN marks",
            "rate cuts",
            "min rate Gb/s",
            "M events/s",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let q = |s: &Option<&Slowdown>| -> [String; 3] {
        match s {
            Some(s) => [s.p50_ratio, s.p95_ratio, s.p99_ratio].map(|v| format!("{v:.2}")),
            None => std::array::from_fn(|_| "-".to_string()),
        }
    };
    for r in runs {
        let [p50, p95, p99] = q(&r.slowdown.as_ref());
        rows.push(vec![
            r.fabric.clone(),
            r.cc.clone(),
            "all".into(),
            format!("{}/{}", r.flows_completed, r.flows),
            p50,
            p95,
            p99,
            r.pfc_xoff_sent_frames.to_string(),
            format!("{:.1}", r.paused_ps as f64 / 1e6),
            format!("{} ({})", r.dropped_frames, r.lossless_dropped_frames),
            r.ecn_marked_received_frames.to_string(),
            r.rate_decreases_total.to_string(),
            r.min_qp_rate_bps
                .map_or_else(|| "-".into(), |b| format!("{:.1}", b as f64 / 1e9)),
            format!("{:.2}", r.events_per_s / 1e6),
        ]);
        for b in &r.by_size {
            let [p50, p95, p99] = q(&Some(&b.slowdown));
            let mut row = vec![
                String::new(),
                String::new(),
                b.size.to_string(),
                b.slowdown.flows.to_string(),
                p50,
                p95,
                p99,
            ];
            row.resize(rows[0].len(), String::new());
            rows.push(row);
        }
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            // names left, figures right
            if c < 3 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
