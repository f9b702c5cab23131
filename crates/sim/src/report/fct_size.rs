//! Flows by size, as the congestion-control papers bucket them: the completed finite flows in
//! four size buckets (< 10 KB, 10–100 KB, 100 KB–1 MB, ≥ 1 MB of payload) and the slowdown
//! distribution of each (the HTML report's plot and `lossless sim cc-compare`'s table).

use lossless_proto::units::Duration;

use crate::report::FlowReport;
use crate::stats::FctHistogram;

/// The bucket bounds: payload bytes below each, and the last unbounded.
pub const BUCKETS: [(&str, u64); 4] = [
    ("< 10 KB", 10_000),
    ("10 KB – 100 KB", 100_000),
    ("100 KB – 1 MB", 1_000_000),
    ("≥ 1 MB", u64::MAX),
];

/// The slowdown distribution of the completed finite flows in each size bucket of [`BUCKETS`].
pub fn by_size(flows: &[FlowReport]) -> [FctHistogram; 4] {
    let mut h: [FctHistogram; 4] = std::array::from_fn(|_| FctHistogram::new());
    for f in flows {
        if let (Some(size), Some(c), Some(i)) = (f.size_bytes, f.completion_ps, f.fct_ideal_ps) {
            let b = BUCKETS.iter().position(|&(_, below)| size < below).unwrap_or(3);
            h[b].record(Duration::from_ps(c), Duration::from_ps(i));
        }
    }
    h
}
