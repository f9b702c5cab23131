//! The rate-increase half that DCQCN inherited from QCN: current and target rate, the timer
//! and byte-counter stages, fast recovery, additive and hyper increase. Shared by
//! [`super::Rp`] and [`crate::qcn::QcnRp`].
//!
//! Stage counts are the increase events of each kind since the last cut, counted *before* the
//! event being applied (HPCC ns-3 `m_rpTimeStage`, Google isekai's `increase_stage_by_*`).
//! With `T`, `B` those counts (a counter that is off does not take part) and `F` the
//! threshold: fast recovery while `max(T, B) < F`, hyper increase once `min(T, B) > F`,
//! additive increase in between. The new rate is `⌈(rate + target)/2⌉`; rounding up (the
//! references round down) lets the rate reach its target exactly, so "back at line rate" is
//! an exact state. The invariant `min ≤ rate ≤ target ≤ max` holds throughout.

use crate::units::{Duration, Instant};

/// Fixed parameters of the increase machinery, in engine units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IncreaseConfig {
    /// Timer period; zero = no timer.
    pub time_reset: Duration,
    /// Byte-counter limit; 0 = no byte counter.
    pub byte_reset: u64,
    /// Fast-recovery events (F).
    pub threshold: u32,
    /// Additive step of the target, b/s.
    pub ai_bps: u64,
    /// Hyper step of the target, b/s.
    pub hai_bps: u64,
    /// Highest rate, b/s.
    pub max_bps: u64,
    /// Hyper step multiplied by `min(T, B) − F` (QCN, the paper's simulator) instead of 1.
    pub hyper_multiplier: bool,
    /// QCN: a counter whose stage reached F runs at half its period / limit.
    pub halve_after_threshold: bool,
    /// QCN: on the first event of a counter after a cut, a target above 10× the rate is
    /// divided by 8 instead of increased.
    pub target_guard: bool,
}

/// What one increase event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// `rate ← ⌈(rate + target)/2⌉`, target unchanged.
    FastRecovery,
    /// Target raised by the additive step first.
    Additive,
    /// Target raised by the hyper step first.
    Hyper,
    /// QCN guard: target divided by 8 first.
    TargetGuard,
}

/// Which counter expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    Timer,
    Bytes,
}

/// Rate state and increase counters of one reaction point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Increase {
    pub rate: u64,
    pub target: u64,
    pub time_stage: u32,
    pub byte_stage: u32,
    /// Next timer expiry; `None` while no cut has armed it (or the timer is off).
    pub timer_next: Option<Instant>,
    /// Bytes until the byte counter expires; `None` while unarmed (or the counter is off).
    pub bytes_left: Option<u64>,
}

impl Increase {
    /// At the maximum rate, counters unarmed.
    pub fn new(max_bps: u64) -> Self {
        Increase {
            rate: max_bps,
            target: max_bps,
            time_stage: 0,
            byte_stage: 0,
            timer_next: None,
            bytes_left: None,
        }
    }

    /// Rate and target both at the maximum: no increase event changes anything any more.
    pub fn at_fixed_point(&self, c: &IncreaseConfig) -> bool {
        self.rate == c.max_bps && self.target == c.max_bps
    }

    fn period(c: &IncreaseConfig, stage: u32) -> Duration {
        if c.halve_after_threshold && stage >= c.threshold {
            Duration::from_ps((c.time_reset.as_ps() / 2).max(1))
        } else {
            c.time_reset
        }
    }

    fn limit(c: &IncreaseConfig, stage: u32) -> u64 {
        if c.halve_after_threshold && stage >= c.threshold {
            (c.byte_reset / 2).max(1)
        } else {
            c.byte_reset
        }
    }

    /// After a cut at `at`: stages to 0, timer and byte counter restarted.
    pub fn restart(&mut self, c: &IncreaseConfig, at: Instant) {
        self.time_stage = 0;
        self.byte_stage = 0;
        self.timer_next = (c.time_reset != Duration::ZERO).then(|| at.saturating_add(c.time_reset));
        self.bytes_left = (c.byte_reset != 0).then_some(c.byte_reset);
    }

    /// Counters unarmed (rate limiter released).
    pub fn disarm(&mut self) {
        self.timer_next = None;
        self.bytes_left = None;
        self.time_stage = 0;
        self.byte_stage = 0;
    }

    /// The step the next event of `counter` takes, from the stage counts before it.
    fn step_for(&self, c: &IncreaseConfig, counter: Counter) -> (Step, u64) {
        let (t, b) = (self.time_stage, self.byte_stage);
        let (lo, hi) = match (c.time_reset != Duration::ZERO, c.byte_reset != 0) {
            (true, true) => (t.min(b), t.max(b)),
            (true, false) => (t, t),
            _ => (b, b),
        };
        let own_after = match counter {
            Counter::Timer => t.saturating_add(1),
            Counter::Bytes => b.saturating_add(1),
        };
        let step = if hi < c.threshold {
            (Step::FastRecovery, 0)
        } else if lo > c.threshold {
            let i = if c.hyper_multiplier {
                u64::from(lo - c.threshold)
            } else {
                1
            };
            (Step::Hyper, c.hai_bps.saturating_mul(i))
        } else {
            (Step::Additive, c.ai_bps)
        };
        if c.target_guard && own_after == 1 && u128::from(self.target) > 10 * u128::from(self.rate) {
            return (Step::TargetGuard, 0);
        }
        step
    }

    /// Applies one expiry of `counter` (at `at` for the timer, which is re-armed from `at`).
    pub fn event(&mut self, c: &IncreaseConfig, counter: Counter, at: Instant) -> Step {
        let (step, add) = self.step_for(c, counter);
        match step {
            Step::TargetGuard => self.target /= 8,
            _ => self.target = self.target.saturating_add(add).min(c.max_bps),
        }
        self.rate = (self.rate + self.target).div_ceil(2);
        match counter {
            Counter::Timer => {
                self.time_stage = self.time_stage.saturating_add(1);
                self.timer_next = Some(at.saturating_add(Self::period(c, self.time_stage)));
            }
            Counter::Bytes => {
                self.byte_stage = self.byte_stage.saturating_add(1);
                self.bytes_left = Some(Self::limit(c, self.byte_stage));
            }
        }
        step
    }

    /// Whether every period (or limit) after the next expiry of a counter now at `stage` is
    /// the same: no halving, or the threshold already reached by then.
    fn constant_after(c: &IncreaseConfig, stage: u32) -> bool {
        !c.halve_after_threshold || stage.saturating_add(1) >= c.threshold
    }

    /// At the fixed point, counts the timer expiries at or before `until` without applying
    /// them one by one (they change nothing but the stage). Exact: the period only depends on
    /// the stage, and is constant once the stage reached F (or without halving).
    pub fn skip_idle_timer(&mut self, c: &IncreaseConfig, until: Instant) {
        while let Some(next) = self.timer_next {
            if next > until {
                return;
            }
            let after = self.time_stage.saturating_add(1);
            let period = Self::period(c, after);
            if !Self::constant_after(c, self.time_stage) {
                // still in the halving transition: one at a time (fewer than F of these)
                self.time_stage = after;
                self.timer_next = Some(next.saturating_add(period));
                continue;
            }
            let n = (until - next).as_ps() / period.as_ps() + 1;
            self.time_stage = self
                .time_stage
                .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
            let span = period.as_ps().saturating_mul(n);
            self.timer_next = Some(next.saturating_add(Duration::from_ps(span)));
            return;
        }
    }

    /// Takes `bytes` (sent bytes not yet counted) up to the next byte-counter expiry that
    /// must be applied with [`event`](Self::event): `true` if one is due, with `bytes` left
    /// holding what follows it. At the fixed point, expiries only count into the stage and
    /// are taken here without stopping.
    pub fn take_bytes(&mut self, c: &IncreaseConfig, bytes: &mut u64) -> bool {
        let Some(left) = self.bytes_left else {
            *bytes = 0;
            return false;
        };
        if *bytes < left {
            self.bytes_left = Some(left - *bytes);
            *bytes = 0;
            return false;
        }
        *bytes -= left;
        if self.at_fixed_point(c) && Self::constant_after(c, self.byte_stage) {
            let limit = Self::limit(c, self.byte_stage.saturating_add(1));
            let more = *bytes / limit;
            self.byte_stage = self
                .byte_stage
                .saturating_add(1)
                .saturating_add(u32::try_from(more).unwrap_or(u32::MAX));
            self.bytes_left = Some(limit - *bytes % limit);
            *bytes = 0;
            return false;
        }
        self.bytes_left = Some(0);
        true
    }
}
