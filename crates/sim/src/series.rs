//! A rate over time as a step series with bounded memory: what a QP's reaction point did,
//! for the report's plots and JSON. Its capacity is allocated once when the QP is created;
//! recording a step never allocates.

use lossless_proto::units::{Instant, Rate};
use serde::Serialize;

/// Most steps a series keeps.
pub const SERIES_CAP: usize = 128;

/// Steps `(time, rate)`: the rate holds from a step's time to the next one's.
///
/// When full, every other step is dropped (the first and the last are kept) and the least
/// spacing between kept steps doubles; a step closer than that to the last kept one replaces
/// its rate (the last rate in each such interval is kept). So a series spans the whole run at a
/// resolution that halves each time it fills.
#[derive(Clone, Debug)]
pub struct RateSeries {
    /// (picoseconds, bits per second).
    steps: Vec<(u64, u64)>,
    min_gap_ps: u64,
    cap: usize,
}

impl RateSeries {
    /// An empty series that keeps at most `cap` steps (at least 4).
    pub fn with_capacity(cap: usize) -> Self {
        let cap = cap.max(4);
        RateSeries {
            steps: Vec::with_capacity(cap),
            min_gap_ps: 0,
            cap,
        }
    }

    /// Records that the rate became `rate` at `at` (times must not decrease; a repeated rate
    /// is not a step).
    pub fn record(&mut self, at: Instant, rate: Rate) {
        let t = u64::try_from(at.as_ps()).unwrap_or(u64::MAX);
        let r = rate.bps();
        if let Some(last) = self.steps.last_mut() {
            if last.1 == r {
                return;
            }
            if t < last.0.saturating_add(self.min_gap_ps) || t == last.0 {
                last.1 = r;
                // a step that now repeats the one before it is no step
                let n = self.steps.len();
                if n >= 2 && self.steps[n - 2].1 == r {
                    self.steps.pop();
                }
                return;
            }
        }
        if self.steps.len() == self.cap {
            self.halve();
        }
        self.steps.push((t, r));
    }

    fn halve(&mut self) {
        let n = self.steps.len();
        let last = self.steps[n - 1];
        let mut w = 0;
        for i in (0..n).step_by(2) {
            self.steps[w] = self.steps[i];
            w += 1;
        }
        self.steps.truncate(w);
        if self.steps.last() != Some(&last) {
            self.steps.push(last);
        }
        let span = last.0.saturating_sub(self.steps[0].0);
        self.min_gap_ps = (self.min_gap_ps.saturating_mul(2))
            .max(span / self.cap as u64)
            .max(1);
    }

    /// The steps, oldest first.
    pub fn steps(&self) -> impl Iterator<Item = (Instant, Rate)> + '_ {
        self.steps
            .iter()
            .filter_map(|&(t, r)| Rate::from_bps(r).map(|r| (Instant::from_ps(u128::from(t)), r)))
    }

    /// Number of steps kept.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether no step was recorded.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps as two columns for JSON.
    pub fn to_report(&self) -> SeriesReport {
        SeriesReport {
            at_ps: self.steps.iter().map(|s| s.0).collect(),
            rate_bps: self.steps.iter().map(|s| s.1).collect(),
        }
    }
}

/// A rate series in a report: step times and the rate from each.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SeriesReport {
    /// Step times.
    pub at_ps: Vec<u64>,
    /// The rate from each step time on.
    pub rate_bps: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_proto::units::Duration;

    fn at(ns: u64) -> Instant {
        Instant::ZERO + Duration::from_ns(ns)
    }

    #[test]
    fn steps_are_kept_until_the_cap_then_halved_keeping_both_ends() {
        let mut s = RateSeries::with_capacity(8);
        for k in 0..8u64 {
            s.record(at(k * 10), Rate::from_mbps(1000 + k));
        }
        assert_eq!(s.len(), 8);
        s.record(at(80), Rate::from_mbps(2000));
        let steps: Vec<_> = s.steps().collect();
        assert_eq!(steps.first().unwrap(), &(at(0), Rate::from_mbps(1000)));
        assert_eq!(steps.last().unwrap(), &(at(80), Rate::from_mbps(2000)));
        assert!(steps.len() <= 8, "{steps:?}");
        // times still increase
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn memory_stays_bounded_for_any_number_of_steps() {
        let mut s = RateSeries::with_capacity(16);
        let cap = s.steps.capacity();
        for k in 0..100_000u64 {
            s.record(at(k), Rate::from_mbps(1 + k % 7));
        }
        assert!(s.len() <= 16);
        assert_eq!(s.steps.capacity(), cap, "never reallocated");
        let steps: Vec<_> = s.steps().collect();
        assert_eq!(steps[0].0, at(0));
        assert!(
            steps.last().unwrap().0 >= at(99_000),
            "the series reaches the end: {steps:?}"
        );
    }

    #[test]
    fn a_repeated_rate_is_not_a_step() {
        let mut s = RateSeries::with_capacity(8);
        s.record(at(0), Rate::from_gbps(100));
        s.record(at(5), Rate::from_gbps(100));
        assert_eq!(s.len(), 1);
        s.record(at(5), Rate::from_gbps(50));
        s.record(at(5), Rate::from_gbps(100));
        assert_eq!(s.len(), 1, "a change undone at the same instant leaves no step");
    }
}
