//! The DCQCN reaction point: one per sending QP.

use serde::{Deserialize, Serialize};

use super::increase::{Counter, Increase, IncreaseConfig, Step};
use super::params::{ParamError, RpMode, RpParams};
use crate::units::{Duration, Instant, Rate};

/// Alpha is kept in units of 2⁻³² (so 1.0 = 2³²).
const ALPHA_SHIFT: u32 = 32;
const ALPHA_ONE: u64 = 1 << ALPHA_SHIFT;

/// What a reaction point did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpCounters {
    /// mlx5 `rp_cnp_handled`: CNPs given to the reaction point.
    pub rp_cnp_handled: u64,
    /// CNPs that started the rate limiter (the flow's first, or the first after a release).
    pub first_cnps: u64,
    /// `Periodic`: CNPs that found a cut already pending (merged into it).
    pub cnps_coalesced: u64,
    /// Rate cuts applied.
    pub rate_decreases: u64,
    /// Fast-recovery steps.
    pub fast_recovery: u64,
    /// Additive-increase steps.
    pub additive_increase: u64,
    /// Hyper-increase steps.
    pub hyper_increase: u64,
    /// Increase steps triggered by the timer.
    pub timer_increases: u64,
    /// Increase steps triggered by the byte counter.
    pub byte_counter_increases: u64,
    /// Times the rate limiter was released back at the maximum rate.
    pub releases: u64,
}

/// The reaction point of one sending QP: its rate, alpha and timers.
///
/// Sans-IO: [`handle_cnp`](Self::handle_cnp) and [`on_sent`](Self::on_sent) are the inputs,
/// [`rate`](Self::rate) the output, [`poll_timeout`](Self::poll_timeout) /
/// [`handle_timeout`](Self::handle_timeout) the clock. Timer instants at or before the `now`
/// of any call are applied before that call's input. No call allocates.
#[derive(Clone, Debug)]
pub struct Rp {
    p: RpParams,
    min: Rate,
    inc_cfg: IncreaseConfig,
    inc: Increase,
    active: bool,
    alpha: u64,
    alpha_next: Instant,
    alpha_flag: bool,
    anchor: Instant,
    check_next: Instant,
    pending: bool,
    now: Instant,
    counters: RpCounters,
}

/// The smallest `base + k·period` (k ≥ 1) after `t`.
fn grid_after(base: Instant, period: Duration, t: Instant) -> Instant {
    if t < base {
        return base.saturating_add(period);
    }
    let k = (t - base).as_ps() / period.as_ps() + 1;
    base.saturating_add(Duration::from_ps(period.as_ps().saturating_mul(k)))
}

impl Rp {
    /// A reaction point for a QP on a link of rate `line`, at its maximum rate, idle.
    pub fn new(p: RpParams, line: Rate) -> Result<Self, ParamError> {
        p.validate(line)?;
        let max = p.max_rate(line).bps();
        let inc_cfg = IncreaseConfig {
            time_reset: p.rpg_time_reset,
            byte_reset: p.rpg_byte_reset,
            threshold: p.rpg_threshold,
            ai_bps: p.rpg_ai_rate.bps(),
            hai_bps: p.rpg_hai_rate.bps(),
            max_bps: max,
            hyper_multiplier: p.mode == RpMode::PerCnp,
            halve_after_threshold: false,
            target_guard: false,
        };
        Ok(Rp {
            min: p.rpg_min_rate,
            inc_cfg,
            inc: Increase::new(max),
            active: false,
            alpha: 0,
            alpha_next: Instant::ZERO,
            alpha_flag: false,
            anchor: Instant::ZERO,
            check_next: Instant::ZERO,
            pending: false,
            now: Instant::ZERO,
            counters: RpCounters::default(),
            p,
        })
    }

    /// The parameters in use.
    pub fn params(&self) -> &RpParams {
        &self.p
    }

    /// Current rate Rc: `rpg_min_rate ≤ Rc ≤ rpg_max_rate` (or the line rate).
    pub fn rate(&self) -> Rate {
        Rate::from_bps(self.inc.rate).unwrap_or(self.min)
    }

    /// Target rate Rt (`rate() ≤ target_rate() ≤` the maximum).
    pub fn target_rate(&self) -> Rate {
        Rate::from_bps(self.inc.target).unwrap_or(self.min)
    }

    /// Alpha as of the latest call's `now`, for reports.
    pub fn alpha(&self) -> f64 {
        self.alpha_after(self.now).0 as f64 / ALPHA_ONE as f64
    }

    /// Whether the rate limiter is in use (a CNP came and the rate was not released since).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Counts so far.
    pub fn counters(&self) -> RpCounters {
        self.counters
    }

    /// A CNP (or an ACK with the CNP flag) for this QP arrived at `now`.
    pub fn handle_cnp(&mut self, now: Instant) {
        self.advance(now);
        let now = self.now;
        self.counters.rp_cnp_handled += 1;
        self.catch_up_alpha(now);
        if !self.active {
            self.activate(now);
            if self.p.mode == RpMode::Periodic {
                return;
            }
        }
        match self.p.mode {
            RpMode::Periodic => {
                if !self.alpha_live() {
                    self.alpha_next = grid_after(self.anchor, self.p.dce_tcp_rtt, now);
                }
                self.alpha_flag = true;
                if self.pending {
                    self.counters.cnps_coalesced += 1;
                } else {
                    self.pending = true;
                    let base = self.anchor.saturating_add(self.p.rate_reduce_monitor_offset);
                    self.check_next = grid_after(base, self.p.rate_reduce_monitor_period, now);
                }
            }
            RpMode::PerCnp => {
                self.cut(now);
                self.update_alpha(true);
                self.alpha_next = now.saturating_add(self.p.dce_tcp_rtt);
            }
        }
    }

    /// `bytes` more bytes of this QP went on the wire at `now` (the byte counter).
    #[inline]
    pub fn on_sent(&mut self, now: Instant, bytes: u64) {
        if !self.active {
            // `advance` of an inactive reaction point only keeps the latest `now` (no timer
            // runs, and its rate is the line rate): most packets of most QPs go here
            if now > self.now {
                self.now = now;
            }
            return;
        }
        self.on_sent_active(now, bytes);
    }

    /// [`Self::on_sent`] of an active reaction point.
    #[inline(never)]
    fn on_sent_active(&mut self, now: Instant, bytes: u64) {
        self.advance(now);
        if !self.active {
            return;
        }
        let now = self.now;
        let mut left = bytes;
        while self.inc.take_bytes(&self.inc_cfg, &mut left) {
            let step = self.inc.event(&self.inc_cfg, Counter::Bytes, now);
            self.count(step);
            self.counters.byte_counter_increases += 1;
            if self.maybe_release(now) {
                break;
            }
        }
    }

    /// The next instant at which the rate can change without an input (a pending cut, an
    /// increase that moves the rate); `None` when nothing will change until the next input.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !self.active {
            return None;
        }
        let check = self.pending.then_some(self.check_next);
        let timer = if self.inc.at_fixed_point(&self.inc_cfg) {
            None
        } else {
            self.inc.timer_next
        };
        match (check, timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Applies every timer instant at or before `now` (any `now` is allowed; the state is
    /// brought up to date exactly as if every alpha, decrease and increase timer had fired).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    fn alpha_live(&self) -> bool {
        self.alpha > 0 || self.alpha_flag
    }

    fn update_alpha(&mut self, cnp: bool) {
        self.alpha = self.updated(self.alpha, cnp);
    }

    /// One alpha update: `α·G/1024`, plus `(1024 − G)/1024` with a CNP, rounded down.
    fn updated(&self, alpha: u64, cnp: bool) -> u64 {
        let g = u64::from(self.p.dce_tcp_g);
        let add = if cnp { (1024 - g) * ALPHA_ONE } else { 0 };
        (alpha * g + add) / 1024
    }

    /// Alpha, its next update instant and the CNP flag once every update at or before
    /// `until` is applied. Alpha is needed only by a cut, a CNP and a report, so updates are
    /// not events of their own: they are applied here, in bulk, when needed (a run of updates
    /// without CNP stops as soon as alpha reaches 0, which it then keeps).
    fn alpha_after(&self, until: Instant) -> (u64, Instant, bool) {
        let (mut alpha, next, flag) = (self.alpha, self.alpha_next, self.alpha_flag);
        if !self.active || next > until || (alpha == 0 && !flag) {
            return (alpha, next, flag);
        }
        let period = self.p.dce_tcp_rtt.as_ps();
        let due = (until - next).as_ps() / period + 1;
        let mut done = 0u128;
        if flag {
            alpha = self.updated(alpha, true);
            done = 1;
        }
        // CNP-free updates: α ← ⌊α·G/1024⌋, one multiply and shift each, until α is 0
        let g = u64::from(self.p.dce_tcp_g);
        while done < due && alpha > 0 {
            alpha = (alpha * g) >> 10;
            done += 1;
        }
        let span = Duration::from_ps(period.saturating_mul(due));
        (alpha, next.saturating_add(span), false)
    }

    fn catch_up_alpha(&mut self, until: Instant) {
        (self.alpha, self.alpha_next, self.alpha_flag) = self.alpha_after(until);
    }

    fn activate(&mut self, now: Instant) {
        self.active = true;
        self.counters.first_cnps += 1;
        self.alpha = u64::from(self.p.initial_alpha_value) << (ALPHA_SHIFT - 10);
        if let Some(r) = self.p.rate_to_set_on_first_cnp {
            self.inc.rate = r.bps();
        }
        self.inc.target = self.inc.rate;
        self.anchor = now;
        self.alpha_flag = false;
        self.alpha_next = now.saturating_add(self.p.dce_tcp_rtt);
        if self.p.mode == RpMode::Periodic {
            self.pending = true;
            let base = now.saturating_add(self.p.rate_reduce_monitor_offset);
            self.check_next = base.saturating_add(self.p.rate_reduce_monitor_period);
        }
    }

    /// The rate after one cut: `⌊rate·(1 − α·2¹⁰/2^gd)⌋`, kept at or above `rpg_min_dec_fac`
    /// percent of the rate and at or above `rpg_min_rate`.
    fn cut_rate(&self, rate: u64) -> u64 {
        let d = u128::from(ALPHA_ONE) << (self.p.rpg_gd - 10);
        let by_alpha = (u128::from(rate) * (d - u128::from(self.alpha)) / d) as u64;
        let kept = (u128::from(rate) * u128::from(self.p.rpg_min_dec_fac) / 100) as u64;
        by_alpha.max(kept).max(self.min.bps())
    }

    fn cut(&mut self, at: Instant) {
        // (At the fixed point, idle timer expiries before `at` are not counted into the stage
        // first: target = rate = maximum there, so the clamp cannot depend on them, and the
        // cut resets the stages.)
        let clamp = self.p.clamp_tgt_rate
            || self.inc.byte_stage > 0
            || (self.p.clamp_tgt_rate_ati && self.inc.time_stage > 0);
        if clamp {
            self.inc.target = self.inc.rate;
        }
        self.inc.rate = self.cut_rate(self.inc.rate);
        self.inc.restart(&self.inc_cfg, at);
        self.counters.rate_decreases += 1;
        // a cut by α = 0 leaves the rate at the maximum
        self.maybe_release(at);
    }

    fn count(&mut self, step: Step) {
        match step {
            Step::FastRecovery => self.counters.fast_recovery += 1,
            Step::Additive => self.counters.additive_increase += 1,
            Step::Hyper => self.counters.hyper_increase += 1,
            Step::TargetGuard => {}
        }
    }

    /// Releases the rate limiter if it is back at the maximum with no cut pending.
    fn maybe_release(&mut self, at: Instant) -> bool {
        if self.p.release_at_line_rate && !self.pending && self.inc.at_fixed_point(&self.inc_cfg) {
            // alpha keeps the value it has at the release (reports only)
            self.catch_up_alpha(at);
            self.active = false;
            self.alpha_flag = false;
            self.inc.disarm();
            self.counters.releases += 1;
            return true;
        }
        false
    }

    /// Applies the timer instants at or before `now`, in time order; at one instant the alpha
    /// update first (applied by the check that needs it), then the increase timer, then the
    /// decrease check (the HPCC reference's order: the event scheduled earlier runs first).
    fn advance(&mut self, now: Instant) {
        let now = now.max(self.now);
        self.now = now;
        while self.active {
            let mut best: Option<(Instant, u8)> = None;
            let mut consider = |t: Instant, kind: u8| {
                if best.is_none_or(|(b, k)| (t, kind) < (b, k)) {
                    best = Some((t, kind));
                }
            };
            if !self.inc.at_fixed_point(&self.inc_cfg)
                && let Some(t) = self.inc.timer_next
            {
                consider(t, 1);
            }
            if self.pending {
                consider(self.check_next, 2);
            }
            let Some((t, kind)) = best else { break };
            if t > now {
                break;
            }
            match kind {
                1 => {
                    let step = self.inc.event(&self.inc_cfg, Counter::Timer, t);
                    self.count(step);
                    self.counters.timer_increases += 1;
                    self.maybe_release(t);
                }
                _ => {
                    // the alpha updates up to this instant come first
                    self.catch_up_alpha(t);
                    self.pending = false;
                    self.check_next = t.saturating_add(self.p.rate_reduce_monitor_period);
                    self.cut(t);
                }
            }
        }
        if self.active && self.inc.at_fixed_point(&self.inc_cfg) {
            self.inc.skip_idle_timer(&self.inc_cfg, now);
        }
    }
}
