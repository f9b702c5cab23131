//! A DCQCN reaction point written the naive way: every timer fires at every period, forever
//! (as the HPCC reference schedules them), nothing is skipped or computed in closed form.
//! It shares no code with the engine; the property tests hold the engine's lazy evaluation
//! against it.

use lossless_proto::dcqcn::{RpCounters, RpMode, RpParams};
use lossless_proto::units::{Duration, Instant, Rate};

const ONE: u64 = 1 << 32;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Alpha,
    Timer,
    Check,
}

/// The eager reaction point.
#[derive(Clone, Debug)]
pub struct TickedRp {
    p: RpParams,
    max: u64,
    min: u64,
    pub active: bool,
    pub rate: u64,
    pub target: u64,
    /// Alpha in units of 2^-32.
    pub alpha: u64,
    flag: bool,
    pending: bool,
    alpha_at: Option<Instant>,
    check_at: Option<Instant>,
    timer_at: Option<Instant>,
    t_stage: u32,
    b_stage: u32,
    bytes_left: Option<u64>,
    pub counters: RpCounters,
}

impl TickedRp {
    pub fn new(p: RpParams, line: Rate) -> Self {
        let max = p.rpg_max_rate.unwrap_or(line).bps();
        TickedRp {
            max,
            min: p.rpg_min_rate.bps(),
            active: false,
            rate: max,
            target: max,
            alpha: 0,
            flag: false,
            pending: false,
            alpha_at: None,
            check_at: None,
            timer_at: None,
            t_stage: 0,
            b_stage: 0,
            bytes_left: None,
            counters: RpCounters::default(),
            p,
        }
    }

    fn next(&self) -> Option<(Instant, Kind)> {
        [
            self.alpha_at.map(|t| (t, Kind::Alpha)),
            self.timer_at.map(|t| (t, Kind::Timer)),
            self.check_at.map(|t| (t, Kind::Check)),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires every timer at or before `until` (`inclusive`) or strictly before it; returns
    /// the first instant at which the rate changed, if any.
    pub fn advance(&mut self, until: Instant, inclusive: bool) -> Option<Instant> {
        let mut changed = None;
        while let Some((at, kind)) = self.next() {
            if at > until || (!inclusive && at == until) {
                break;
            }
            let before = self.rate;
            match kind {
                Kind::Alpha => {
                    let g = u64::from(self.p.dce_tcp_g);
                    let add = if self.flag { (1024 - g) * ONE } else { 0 };
                    self.alpha = (self.alpha * g + add) / 1024;
                    self.flag = false;
                    self.alpha_at = Some(at + self.p.dce_tcp_rtt);
                }
                Kind::Timer => {
                    self.timer_at = Some(at + self.p.rpg_time_reset);
                    self.increase(true);
                }
                Kind::Check => {
                    self.check_at = Some(at + self.p.rate_reduce_monitor_period);
                    if self.pending {
                        self.pending = false;
                        self.cut(at);
                    }
                }
            }
            if self.rate != before && changed.is_none() {
                changed = Some(at);
            }
        }
        changed
    }

    fn cut(&mut self, at: Instant) {
        if self.p.clamp_tgt_rate || self.b_stage > 0 || (self.p.clamp_tgt_rate_ati && self.t_stage > 0) {
            self.target = self.rate;
        }
        let d = u128::from(ONE) << (self.p.rpg_gd - 10);
        let a = (u128::from(self.rate) * (d - u128::from(self.alpha)) / d) as u64;
        let b = (u128::from(self.rate) * u128::from(self.p.rpg_min_dec_fac) / 100) as u64;
        self.rate = a.max(b).max(self.min);
        self.t_stage = 0;
        self.b_stage = 0;
        self.timer_at = (self.p.rpg_time_reset > Duration::ZERO).then(|| at + self.p.rpg_time_reset);
        self.bytes_left = (self.p.rpg_byte_reset > 0).then_some(self.p.rpg_byte_reset);
        self.counters.rate_decreases += 1;
        self.release_if_at_max();
    }

    fn release_if_at_max(&mut self) {
        if self.p.release_at_line_rate && !self.pending && self.rate == self.max && self.target == self.max {
            self.active = false;
            self.flag = false;
            self.alpha_at = None;
            self.check_at = None;
            self.timer_at = None;
            self.bytes_left = None;
            self.t_stage = 0;
            self.b_stage = 0;
            self.counters.releases += 1;
        }
    }

    fn increase(&mut self, timer: bool) {
        let effective = !(self.rate == self.max && self.target == self.max);
        let f = self.p.rpg_threshold;
        let (t, b) = (self.t_stage, self.b_stage);
        let (lo, hi) = match (self.p.rpg_time_reset > Duration::ZERO, self.p.rpg_byte_reset > 0) {
            (true, true) => (t.min(b), t.max(b)),
            (true, false) => (t, t),
            _ => (b, b),
        };
        if hi < f {
            if effective {
                self.counters.fast_recovery += 1;
            }
        } else if lo > f {
            let i = if self.p.mode == RpMode::PerCnp {
                u64::from(lo - f)
            } else {
                1
            };
            self.target = (self.target + self.p.rpg_hai_rate.bps() * i).min(self.max);
            if effective {
                self.counters.hyper_increase += 1;
            }
        } else {
            self.target = (self.target + self.p.rpg_ai_rate.bps()).min(self.max);
            if effective {
                self.counters.additive_increase += 1;
            }
        }
        self.rate = (self.rate + self.target).div_ceil(2);
        if timer {
            self.t_stage += 1;
            if effective {
                self.counters.timer_increases += 1;
            }
        } else {
            self.b_stage += 1;
            self.bytes_left = Some(self.p.rpg_byte_reset);
            if effective {
                self.counters.byte_counter_increases += 1;
            }
        }
        self.release_if_at_max();
    }

    pub fn cnp(&mut self, now: Instant) {
        self.advance(now, true);
        self.counters.rp_cnp_handled += 1;
        if !self.active {
            self.active = true;
            self.counters.first_cnps += 1;
            self.alpha = u64::from(self.p.initial_alpha_value) << 22;
            if let Some(r) = self.p.rate_to_set_on_first_cnp {
                self.rate = r.bps();
            }
            self.target = self.rate;
            self.alpha_at = Some(now + self.p.dce_tcp_rtt);
            if self.p.mode == RpMode::Periodic {
                self.flag = false;
                self.pending = true;
                self.check_at =
                    Some(now + self.p.rate_reduce_monitor_offset + self.p.rate_reduce_monitor_period);
                return;
            }
        }
        match self.p.mode {
            RpMode::Periodic => {
                self.flag = true;
                if self.pending {
                    self.counters.cnps_coalesced += 1;
                }
                self.pending = true;
            }
            RpMode::PerCnp => {
                self.cut(now);
                let g = u64::from(self.p.dce_tcp_g);
                self.alpha = (self.alpha * g + (1024 - g) * ONE) / 1024;
                // a cut that left the rate at the maximum released the RP: no timer runs
                // until the next first CNP (as `release_if_at_max` stopped them)
                if self.active {
                    self.alpha_at = Some(now + self.p.dce_tcp_rtt);
                }
            }
        }
    }

    pub fn sent(&mut self, now: Instant, mut bytes: u64) {
        self.advance(now, true);
        while self.active {
            let Some(left) = self.bytes_left else { return };
            if bytes < left {
                self.bytes_left = Some(left - bytes);
                return;
            }
            bytes -= left;
            self.increase(false);
        }
    }
}
