//! The QCN reaction point: one rate limiter per flow of a source end station.

use serde::{Deserialize, Serialize};

use crate::dcqcn::ParamError;
use crate::dcqcn::increase::{Counter, Increase, IncreaseConfig, Step};
use crate::units::{Duration, Instant, MIN_TIMER_PERIOD, Rate};

/// Parameters of a reaction point, named after the IEEE8021-CN-MIB `ieee8021CnRpg*` objects
/// (snake_case, as Linux `struct ieee_qcn` names them).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QcnRpParams {
    /// Timer period (MIB `ieee8021CnRpgTimeReset`, 15 ms; the MIB counts milliseconds, Linux
    /// microseconds: here a duration).
    pub rpg_time_reset: Duration,
    /// Octets per byte-counter cycle (BC_LIMIT).
    pub rpg_byte_reset: u64,
    /// Cycles of fast recovery (F).
    pub rpg_threshold: u32,
    /// Highest rate; `None` = the line rate.
    pub rpg_max_rate: Option<Rate>,
    /// Active-increase step of the target rate (R_AI).
    pub rpg_ai_rate: Rate,
    /// Hyper-active-increase step of the target rate (R_HAI).
    pub rpg_hai_rate: Rate,
    /// log2 of 1/Gd: a CNM cuts the rate by `QntzFb·2^-rpg_gd` (7: Gd = 1/128).
    pub rpg_gd: u32,
    /// A CNM keeps at least this percentage of the rate.
    pub rpg_min_dec_fac: u32,
    /// Lowest rate.
    pub rpg_min_rate: Rate,
    /// Release the rate limiter once back at the maximum rate (the next CNM starts a fresh
    /// one). Not a MIB object.
    pub release_at_line_rate: bool,
}

impl Default for QcnRpParams {
    /// The IEEE8021-CN-MIB defaults (facts §1.3).
    fn default() -> Self {
        QcnRpParams {
            rpg_time_reset: Duration::from_ms(15),
            rpg_byte_reset: 150_000,
            rpg_threshold: 5,
            rpg_max_rate: None,
            rpg_ai_rate: Rate::from_mbps(5),
            rpg_hai_rate: Rate::from_mbps(50),
            rpg_gd: 7,
            rpg_min_dec_fac: 50,
            rpg_min_rate: Rate::from_mbps(5),
            release_at_line_rate: true,
        }
    }
}

impl QcnRpParams {
    /// Checks every field against the others and against the line rate.
    pub fn validate(&self, line: Rate) -> Result<(), ParamError> {
        let max = self.rpg_max_rate.unwrap_or(line);
        if max > line {
            return Err(ParamError::new(
                "rpg_max_rate",
                max,
                format!("1 b/s..={line} (the line rate)"),
            ));
        }
        if self.rpg_min_rate > max {
            return Err(ParamError::new(
                "rpg_min_rate",
                self.rpg_min_rate,
                format!("1 b/s..={max} (the maximum rate)"),
            ));
        }
        if self.rpg_time_reset == Duration::ZERO && self.rpg_byte_reset == 0 {
            return Err(ParamError::new(
                "rpg_time_reset",
                "0 with rpg_byte_reset 0",
                "a non-zero period, or a non-zero rpg_byte_reset (else the rate never rises)",
            ));
        }
        if self.rpg_time_reset != Duration::ZERO && self.rpg_time_reset < MIN_TIMER_PERIOD {
            return Err(ParamError::new(
                "rpg_time_reset",
                self.rpg_time_reset,
                format!("0 (no timer) or a period of at least {MIN_TIMER_PERIOD}"),
            ));
        }
        if self.rpg_gd > 31 {
            return Err(ParamError::new("rpg_gd", self.rpg_gd, "0..=31 (Gd = 2^-value)"));
        }
        if self.rpg_min_dec_fac > 100 {
            return Err(ParamError::new(
                "rpg_min_dec_fac",
                self.rpg_min_dec_fac,
                "0..=100 (percent)",
            ));
        }
        Ok(())
    }
}

/// What a reaction point did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QcnRpCounters {
    /// CNMs given to the reaction point.
    pub cnms_handled: u64,
    /// MLNX `ignored_cnm`: CNMs with QntzFb 0 (they ask for no decrease).
    pub ignored_cnm: u64,
    /// Linux `rppp_created_rps`: rate limiters started (first CNM, or first after a release).
    pub created_rps: u64,
    /// Rate cuts applied.
    pub rate_decreases: u64,
    /// Fast-recovery steps.
    pub fast_recovery: u64,
    /// Active-increase steps.
    pub additive_increase: u64,
    /// Hyper-active-increase steps.
    pub hyper_increase: u64,
    /// Steps where the target above 10× the rate was divided by 8.
    pub target_guards: u64,
    /// Increase steps triggered by the timer.
    pub timer_increases: u64,
    /// Increase steps triggered by the byte counter.
    pub byte_counter_increases: u64,
    /// Rate limiters released back at the maximum rate.
    pub releases: u64,
}

/// The reaction point of one flow: same surface as [`crate::dcqcn::Rp`], fed by CNMs.
#[derive(Clone, Debug)]
pub struct QcnRp {
    p: QcnRpParams,
    min: Rate,
    inc_cfg: IncreaseConfig,
    inc: Increase,
    active: bool,
    now: Instant,
    counters: QcnRpCounters,
}

impl QcnRp {
    /// A reaction point for a flow on a link of rate `line`, at its maximum rate, idle.
    pub fn new(p: QcnRpParams, line: Rate) -> Result<Self, ParamError> {
        p.validate(line)?;
        let max = p.rpg_max_rate.unwrap_or(line).bps();
        Ok(QcnRp {
            min: p.rpg_min_rate,
            inc_cfg: IncreaseConfig {
                time_reset: p.rpg_time_reset,
                byte_reset: p.rpg_byte_reset,
                threshold: p.rpg_threshold,
                ai_bps: p.rpg_ai_rate.bps(),
                hai_bps: p.rpg_hai_rate.bps(),
                max_bps: max,
                hyper_multiplier: true,
                halve_after_threshold: true,
                target_guard: true,
            },
            inc: Increase::new(max),
            active: false,
            now: Instant::ZERO,
            counters: QcnRpCounters::default(),
            p,
        })
    }

    /// The parameters in use.
    pub fn params(&self) -> &QcnRpParams {
        &self.p
    }

    /// Current rate CR.
    pub fn rate(&self) -> Rate {
        Rate::from_bps(self.inc.rate).unwrap_or(self.min)
    }

    /// Target rate TR.
    pub fn target_rate(&self) -> Rate {
        Rate::from_bps(self.inc.target).unwrap_or(self.min)
    }

    /// Whether the rate limiter is in use.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Counts so far.
    pub fn counters(&self) -> QcnRpCounters {
        self.counters
    }

    /// A CNM for this flow arrived at `now` carrying `qntz_fb` (the low 6 bits are used).
    pub fn handle_cnm(&mut self, now: Instant, qntz_fb: u8) {
        self.advance(now);
        let now = self.now;
        self.counters.cnms_handled += 1;
        let fb = u64::from(qntz_fb & 0x3F);
        if fb == 0 {
            self.counters.ignored_cnm += 1;
            return;
        }
        if !self.active {
            self.active = true;
            self.counters.created_rps += 1;
        }
        // TR ← CR only after a byte-counter cycle since the last cut (so repeated CNMs in the
        // first cycle keep the target; the TR > 10·CR guard then bounds it);
        // CR ← CR·(1 − Gd·|Fb|), bounded by rpg_min_dec_fac and rpg_min_rate.
        let rate = self.inc.rate;
        if self.inc.byte_stage != 0 {
            self.inc.target = rate;
        }
        let one = 1u128 << self.p.rpg_gd;
        let by_fb = (u128::from(rate) * one.saturating_sub(u128::from(fb)) / one) as u64;
        let kept = (u128::from(rate) * u128::from(self.p.rpg_min_dec_fac) / 100) as u64;
        self.inc.rate = by_fb.max(kept).max(self.min.bps());
        self.inc.restart(&self.inc_cfg, now);
        self.counters.rate_decreases += 1;
    }

    /// `bytes` more bytes of this flow went on the wire at `now` (the byte counter).
    pub fn on_sent(&mut self, now: Instant, bytes: u64) {
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
            if self.maybe_release() {
                break;
            }
        }
    }

    /// The next instant at which the rate changes without an input; `None` if none.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !self.active || self.inc.at_fixed_point(&self.inc_cfg) {
            return None;
        }
        self.inc.timer_next
    }

    /// Applies every timer expiry at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    fn count(&mut self, step: Step) {
        match step {
            Step::FastRecovery => self.counters.fast_recovery += 1,
            Step::Additive => self.counters.additive_increase += 1,
            Step::Hyper => self.counters.hyper_increase += 1,
            Step::TargetGuard => self.counters.target_guards += 1,
        }
    }

    fn maybe_release(&mut self) -> bool {
        if self.p.release_at_line_rate && self.inc.at_fixed_point(&self.inc_cfg) {
            self.active = false;
            self.inc.disarm();
            self.counters.releases += 1;
            return true;
        }
        false
    }

    fn advance(&mut self, now: Instant) {
        let now = now.max(self.now);
        self.now = now;
        while self.active && !self.inc.at_fixed_point(&self.inc_cfg) {
            match self.inc.timer_next {
                Some(t) if t <= now => {
                    let step = self.inc.event(&self.inc_cfg, Counter::Timer, t);
                    self.count(step);
                    self.counters.timer_increases += 1;
                    self.maybe_release();
                }
                _ => break,
            }
        }
        if self.active && self.inc.at_fixed_point(&self.inc_cfg) {
            self.inc.skip_idle_timer(&self.inc_cfg, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G10: u64 = 10_000_000_000;

    fn rp() -> QcnRp {
        QcnRp::new(QcnRpParams::default(), Rate::from_gbps(10)).unwrap()
    }

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_ms(n)
    }

    #[test]
    fn a_cnm_cuts_by_gd_times_feedback_then_fast_recovery_halves_the_gap() {
        let mut rp = rp();
        rp.handle_cnm(ms(0), 32);
        // CR = 10 Gb/s·(1 − 32/128) = 7.5 Gb/s; TR stays 10 Gb/s.
        assert_eq!((rp.rate().bps(), rp.target_rate().bps()), (7_500_000_000, G10));
        // One byte-counter cycle (150 000 octets): fast recovery to ⌈(7.5 + 10)/2⌉ Gb/s.
        rp.on_sent(ms(1), 149_999);
        assert_eq!(rp.rate().bps(), 7_500_000_000);
        rp.on_sent(ms(1), 1);
        assert_eq!(rp.rate().bps(), 8_750_000_000);
        // The timer (15 ms after the cut) is the next instant the rate changes.
        assert_eq!(rp.poll_timeout(), Some(ms(15)));
        rp.handle_timeout(ms(15));
        assert_eq!(rp.rate().bps(), 9_375_000_000);
        assert_eq!(rp.counters().fast_recovery, 2);
    }

    #[test]
    fn repeated_cnms_in_the_first_cycle_keep_the_target_and_the_guard_divides_it_by_8() {
        let mut rp = rp();
        // Four CNMs with QntzFb 63 before any byte-counter cycle: TR stays 10 Gb/s while
        // CR = ⌊CR·65/128⌋: 5 078 125 000, 2 578 735 351, 1 309 514 045, 664 987 600.
        for _ in 0..4 {
            rp.handle_cnm(ms(0), 63);
        }
        assert_eq!((rp.rate().bps(), rp.target_rate().bps()), (664_987_600, G10));
        // First increase event after the cut: TR = 10 Gb/s > 10·CR, so TR ← TR/8 = 1.25 Gb/s
        // and CR ← ⌈(664 987 600 + 1 250 000 000)/2⌉ = 957 493 800.
        rp.on_sent(ms(1), 150_000);
        assert_eq!(
            (rp.rate().bps(), rp.target_rate().bps()),
            (957_493_800, 1_250_000_000)
        );
        assert_eq!(rp.counters().target_guards, 1);
    }

    #[test]
    fn stages_go_fast_recovery_active_then_hyper_with_halved_cycles_and_release_at_line_rate() {
        let mut rp = rp();
        // A CNM, one byte cycle (so TR will be clamped), a second CNM: TR ← CR (7.54 Gb/s).
        rp.handle_cnm(ms(0), 63);
        rp.on_sent(ms(0), 150_000);
        rp.handle_cnm(ms(0), 63);
        let tr = rp.target_rate().bps();
        assert!(tr < G10);
        // 5 byte cycles of 150 000 octets in fast recovery (TR unchanged), then cycles of
        // 75 000 in active increase (TR + 5 Mb/s each).
        for _ in 0..5 {
            rp.on_sent(ms(0), 150_000);
        }
        assert_eq!(rp.counters().fast_recovery, 6);
        assert_eq!(rp.target_rate().bps(), tr);
        rp.on_sent(ms(0), 74_999);
        assert_eq!(rp.counters().additive_increase, 0);
        rp.on_sent(ms(0), 1);
        assert_eq!(rp.counters().additive_increase, 1);
        assert_eq!(rp.target_rate().bps(), tr + 5_000_000);
        // Hyper needs the timer stage past F too: 5 cycles of 15 ms, then 7.5 ms ones.
        assert_eq!(rp.poll_timeout(), Some(ms(15)));
        // Timer expiries at 15, 30, 45, 60, 75 ms (stage 5 = F), then 82.5 ms (stage 6): the
        // byte cycle of 83 ms is the first event with both stages past F.
        for k in 1..=82 {
            rp.on_sent(ms(k), 75_000);
            rp.handle_timeout(ms(k));
        }
        assert_eq!(rp.counters().hyper_increase, 0);
        rp.on_sent(ms(83), 75_000);
        assert_eq!(rp.counters().hyper_increase, 1);
        for k in 84..=2000 {
            rp.on_sent(ms(k), 75_000);
            rp.handle_timeout(ms(k));
        }
        assert!(rp.counters().hyper_increase > 0);
        // Back at 10 Gb/s the limiter is released; nothing is left to time.
        assert!(!rp.is_active());
        assert_eq!(rp.rate().bps(), G10);
        assert_eq!(rp.counters().releases, 1);
        assert_eq!(rp.poll_timeout(), None);
    }

    #[test]
    fn a_zero_feedback_is_ignored() {
        let mut rp = rp();
        rp.handle_cnm(ms(0), 0);
        assert!(!rp.is_active());
        assert_eq!(rp.counters().ignored_cnm, 1);
    }
}
