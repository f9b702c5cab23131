//! NIC-side PFC storm prevention as mlx5 does it (`ethtool --set-tunable DEV
//! pfc-prevention-tout N|auto|off`), sans-IO: the NIC tells it when its pause request rises
//! and falls; a request held longer than the minor watermark counts a warning, one held to
//! the critical timeout counts an error and the NIC stops sending pause although its buffer
//! is still full, until the request would fall by itself.
//!
//! Constants from `drivers/net/ethernet/mellanox/mlx5/core/en_ethtool.c` (pathologies.md
//! §1.2): `auto` is 100 ms, the range 80–8000 ms, the minor watermark max(80 ms, 85 % of the
//! critical timeout); counters `tx_pause_storm_warning_events`
//! (`device_stall_minor_watermark_cnt`) and `tx_pause_storm_error_events`
//! (`device_stall_critical_watermark_cnt`). The firmware measures how long the device has
//! been stalled, i.e. kept requesting pause because its receive buffer stays full; here that
//! is how long the request has been raised without a break.

use serde::Serialize;

use crate::units::{Duration, Instant};

/// `MLX5E_PFC_PREVEN_AUTO_TOUT_MSEC`: the timeout `auto` sets.
pub const AUTO_TIMEOUT_MS: u64 = 100;
/// `MLX5E_PFC_PREVEN_TOUT_MIN_MSEC`.
pub const MIN_TIMEOUT_MS: u64 = 80;
/// `MLX5E_PFC_PREVEN_TOUT_MAX_MSEC` (also the firmware default, 8 s).
pub const MAX_TIMEOUT_MS: u64 = 8000;
/// `MLX5E_PFC_PREVEN_MINOR_PRECENT`: the warning watermark, in percent of the timeout.
pub const MINOR_PERCENT: u64 = 85;

/// The critical timeout out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "pfc_prevention_tout {found}: allowed {MIN_TIMEOUT_MS} ms ..= {MAX_TIMEOUT_MS} ms, \"auto\" ({AUTO_TIMEOUT_MS} ms) or \"off\""
)]
pub struct TimeoutError {
    /// The value given.
    pub found: Duration,
}

/// The counters mlx5 exposes (`ethtool -S`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StallCounters {
    /// `tx_pause_storm_warning_events`: the request stayed raised past the minor watermark.
    pub tx_pause_storm_warning_events: u64,
    /// `tx_pause_storm_error_events`: it reached the critical timeout and pause stopped.
    pub tx_pause_storm_error_events: u64,
}

/// What a watermark timeout did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Watermark {
    /// The minor watermark passed: a warning was counted.
    Minor,
    /// The critical timeout passed: an error was counted; the NIC must release its request
    /// and not raise it again until [`StallPrevention::on_request`] says it fell.
    Critical,
}

/// The storm prevention of one NIC port.
#[derive(Debug, Clone)]
pub struct StallPrevention {
    critical: Duration,
    minor: Duration,
    since: Option<Instant>,
    minor_done: bool,
    tripped: bool,
    counters: StallCounters,
}

impl StallPrevention {
    /// Prevention with critical timeout `timeout` (80–8000 ms).
    pub fn new(timeout: Duration) -> Result<Self, TimeoutError> {
        if timeout < Duration::from_ms(MIN_TIMEOUT_MS) || timeout > Duration::from_ms(MAX_TIMEOUT_MS) {
            return Err(TimeoutError { found: timeout });
        }
        let percent = Duration::from_ps(timeout.as_ps() * u128::from(MINOR_PERCENT) / 100);
        Ok(StallPrevention {
            critical: timeout,
            minor: percent.max(Duration::from_ms(MIN_TIMEOUT_MS)),
            since: None,
            minor_done: false,
            tripped: false,
            counters: StallCounters::default(),
        })
    }

    /// `auto`: 100 ms.
    pub fn auto() -> Self {
        match Self::new(Duration::from_ms(AUTO_TIMEOUT_MS)) {
            Ok(s) => s,
            Err(_) => unreachable!("100 ms is in range"),
        }
    }

    /// The critical timeout.
    pub fn critical(&self) -> Duration {
        self.critical
    }
    /// The minor (warning) watermark: max(80 ms, 85 % of the critical timeout).
    pub fn minor(&self) -> Duration {
        self.minor
    }
    /// The counters.
    pub fn counters(&self) -> StallCounters {
        self.counters
    }
    /// Whether the critical timeout stopped pause and the request has not fallen since.
    pub fn tripped(&self) -> bool {
        self.tripped
    }
    /// Whether the NIC may raise (or keep) its pause request now.
    pub fn may_pause(&self) -> bool {
        !self.tripped
    }

    /// The NIC's own condition for pausing (its buffer above XOFF, the request it would
    /// make without prevention) rose or fell at `now`. A fall ends the stall and re-arms
    /// prevention after a trip.
    pub fn on_request(&mut self, now: Instant, raised: bool) {
        if raised {
            if self.since.is_none() && !self.tripped {
                self.since = Some(now);
                self.minor_done = false;
            }
        } else {
            self.since = None;
            self.minor_done = false;
            self.tripped = false;
        }
    }

    /// The next watermark instant, if a stall is running.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let s = self.since?;
        Some(if self.minor_done || self.minor >= self.critical {
            s + self.critical
        } else {
            s + self.minor
        })
    }

    /// Counts the watermarks passed by `now`; [`Watermark::Critical`] when pause must stop.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Watermark> {
        let s = self.since?;
        let held = now.saturating_duration_since(s);
        let mut out = None;
        if !self.minor_done && held >= self.minor {
            self.minor_done = true;
            self.counters.tx_pause_storm_warning_events += 1;
            out = Some(Watermark::Minor);
        }
        if held >= self.critical {
            self.counters.tx_pause_storm_error_events += 1;
            self.since = None;
            self.tripped = true;
            out = Some(Watermark::Critical);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_ms(ms)
    }

    #[test]
    fn watermarks_are_mlx5s() {
        let a = StallPrevention::auto();
        assert_eq!(
            (a.critical(), a.minor()),
            (Duration::from_ms(100), Duration::from_ms(85))
        );
        let s = StallPrevention::new(Duration::from_ms(80)).unwrap();
        assert_eq!(s.minor(), Duration::from_ms(80)); // max(80, 68)
        let s = StallPrevention::new(Duration::from_ms(8000)).unwrap();
        assert_eq!(s.minor(), Duration::from_ms(6800));
        for bad in [79, 8001] {
            let e = StallPrevention::new(Duration::from_ms(bad))
                .unwrap_err()
                .to_string();
            assert!(e.contains("80 ms ..= 8000 ms") && e.contains("auto"), "{e}");
        }
    }

    #[test]
    fn a_held_request_warns_then_stops_pause_until_it_falls() {
        let mut s = StallPrevention::auto();
        assert_eq!(s.poll_timeout(), None);
        s.on_request(at(10), true);
        s.on_request(at(50), true); // still the same stall
        assert_eq!(s.poll_timeout(), Some(at(95)));
        assert_eq!(s.handle_timeout(at(95)), Some(Watermark::Minor));
        assert_eq!(s.poll_timeout(), Some(at(110)));
        assert_eq!(s.handle_timeout(at(110)), Some(Watermark::Critical));
        assert!(!s.may_pause() && s.tripped());
        assert_eq!(s.poll_timeout(), None);
        // raising again while tripped changes nothing
        s.on_request(at(200), true);
        assert_eq!(s.poll_timeout(), None);
        assert!(!s.may_pause());
        s.on_request(at(300), false);
        assert!(s.may_pause());
        assert_eq!(
            s.counters(),
            StallCounters {
                tx_pause_storm_warning_events: 1,
                tx_pause_storm_error_events: 1
            }
        );
    }

    #[test]
    fn a_request_that_falls_in_time_counts_nothing() {
        let mut s = StallPrevention::auto();
        s.on_request(at(0), true);
        s.on_request(at(84), false);
        assert_eq!(s.handle_timeout(at(200)), None);
        s.on_request(at(300), true);
        assert_eq!(s.handle_timeout(at(390)), Some(Watermark::Minor));
        s.on_request(at(395), false);
        assert_eq!(s.counters().tx_pause_storm_error_events, 0);
        assert_eq!(s.counters().tx_pause_storm_warning_events, 1);
    }

    #[test]
    fn a_late_timeout_counts_both_watermarks_once() {
        let mut s = StallPrevention::auto();
        s.on_request(at(0), true);
        assert_eq!(s.handle_timeout(at(500)), Some(Watermark::Critical));
        assert_eq!(s.counters().tx_pause_storm_warning_events, 1);
        assert_eq!(s.counters().tx_pause_storm_error_events, 1);
    }
}
