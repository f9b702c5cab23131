//! TIMELY as the HPCC ns-3 fork runs it on an RDMA NIC (`CC_MODE 7`, `RdmaHw::HandleAckTimely`,
//! `UpdateRateTimely`): a rate driven by the round-trip time that each ACK measures from the
//! send timestamp its data packet carried, updated once per round trip. There is no timer.
//!
//! Sans-IO: [`Timely::handle_ack`] is the only input (the acknowledged byte, the sender's next
//! byte, the RTT sample in ns); it returns the new rate when it set one. No call allocates.
//!
//! # Per ACK, step by step (`/work/shared/corpus/hpcc-ns3/MODEL.md` §9.7)
//!
//! State: Rc (the line rate at first), lastRtt, rttDiff = 0, lastUpdateSeq = 0, incStage = 0.
//! Only an ACK of byte `a` > lastUpdateSeq counts (the fork's fast reaction is empty):
//! 1. The first one sets lastUpdateSeq = snd_nxt and lastRtt = rtt; nothing else.
//! 2. Later: d = rtt − lastRtt; rttDiff' = (1 − α)·rttDiff + α·d; g = rttDiff'/minRtt.
//!    rtt < T_low → increase; rtt > T_high → decrease with c = 1 − β·(1 − T_high/rtt);
//!    otherwise g ≤ 0 → increase, else decrease with c = max(0, 1 − β·g).
//! 3. Increase: R = Rc + `rate_ai` for the first 5 in a row, then Rc + `rate_hai`, capped at
//!    the line rate; incStage + 1. Decrease: R = max(floor, ⌊Rc·c⌋); incStage = 0.
//! 4. Rc = the rate = R, rttDiff = rttDiff', lastUpdateSeq = snd_nxt, lastRtt = rtt.
//!
//! The arithmetic is the fork's doubles, the product truncated to whole b/s as ns-3's
//! `DataRate * double` does.

use serde::{Deserialize, Serialize};

use crate::dcqcn::ParamError;
use crate::units::Rate;

/// Parameters of a TIMELY sender.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyParams {
    /// EWMA weight of the newest RTT difference (`TimelyAlpha`).
    pub alpha: f64,
    /// Multiplicative decrease factor (`TimelyBeta`).
    pub beta: f64,
    /// Below this RTT, always increase (ns, `TimelyTLow`).
    pub t_low_ns: u64,
    /// Above this RTT, always decrease (ns, `TimelyTHigh`).
    pub t_high_ns: u64,
    /// The RTT the gradient is normalised by (ns, `TimelyMinRtt`).
    pub min_rtt_ns: u64,
    /// Additive step of the first increases in a row (`RATE_AI`).
    pub rate_ai: Rate,
    /// Additive step from the 6th increase in a row on (`RATE_HAI`).
    pub rate_hai: Rate,
    /// Rate floor (`MIN_RATE`).
    pub min_rate: Rate,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams::hpcc_ns3()
    }
}

impl TimelyParams {
    /// run.py's `timely` profile at `--bw 100` with the fork's constants (MODEL.md §9.2):
    /// α 0.875, β 0.8, T_low 50 µs, T_high 500 µs, minRtt 20 µs, AI 100 Mb/s, HAI 500 Mb/s,
    /// floor 1000 Mb/s.
    pub fn hpcc_ns3() -> Self {
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            t_low_ns: 50_000,
            t_high_ns: 500_000,
            min_rtt_ns: 20_000,
            rate_ai: Rate::from_mbps(100),
            rate_hai: Rate::from_mbps(500),
            min_rate: Rate::from_mbps(1000),
        }
    }

    /// The TIMELY paper's values (Mittal et al., SIGCOMM 2015, §4–5, at 10 Gb/s): additive
    /// step δ 10 Mb/s, HAI N·δ with N = 5 (50 Mb/s), β 0.8, EWMA α 0.875, T_low 50 µs,
    /// T_high 500 µs, minRTT 20 µs. The paper names no rate floor: the fork's 1000 Mb/s.
    pub fn paper() -> Self {
        TimelyParams {
            rate_ai: Rate::from_mbps(10),
            rate_hai: Rate::from_mbps(50),
            ..TimelyParams::hpcc_ns3()
        }
    }

    /// The preset called `name` (`hpcc-ns3`, `paper`; `_` may stand for `-`).
    pub fn preset(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "hpcc-ns3" => Some(TimelyParams::hpcc_ns3()),
            "paper" => Some(TimelyParams::paper()),
            _ => None,
        }
    }

    /// Checks the values against a sender of line rate `line`.
    pub fn validate(&self, line: Rate) -> Result<(), ParamError> {
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(ParamError::new("alpha", self.alpha, "0..=1"));
        }
        if !(0.0..=1.0).contains(&self.beta) {
            return Err(ParamError::new("beta", self.beta, "0..=1"));
        }
        if self.min_rtt_ns == 0 {
            return Err(ParamError::new("min_rtt_ns", self.min_rtt_ns, "1 ns or more"));
        }
        if self.t_high_ns == 0 || self.t_low_ns > self.t_high_ns {
            return Err(ParamError::new(
                "t_high_ns",
                self.t_high_ns,
                format!("1 ns or more, at least t_low_ns ({})", self.t_low_ns),
            ));
        }
        if self.min_rate > line {
            return Err(ParamError::new(
                "min_rate",
                self.min_rate,
                format!("1 b/s..={line} (the line rate)"),
            ));
        }
        Ok(())
    }
}

/// What a TIMELY sender did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelyCounters {
    /// ACKs given to it.
    pub acks: u64,
    /// Updates (once per round trip), the first one included.
    pub updates: u64,
    /// Updates that lowered the rate.
    pub rate_decreases: u64,
    /// Updates that raised it (including those capped at the line rate).
    pub rate_increases: u64,
}

/// The TIMELY state of one sending QP.
#[derive(Clone, Debug)]
pub struct Timely {
    p: TimelyParams,
    line: u64,
    rate: u64,
    last_rtt: u64,
    rtt_diff: f64,
    last_update_seq: u64,
    inc_stage: u32,
    counters: TimelyCounters,
}

impl Timely {
    /// A sender on a link of rate `line`, at that rate.
    pub fn new(p: TimelyParams, line: Rate) -> Result<Self, ParamError> {
        p.validate(line)?;
        Ok(Timely {
            p,
            line: line.bps(),
            rate: line.bps(),
            last_rtt: 0,
            rtt_diff: 0.0,
            last_update_seq: 0,
            inc_stage: 0,
            counters: TimelyCounters::default(),
        })
    }

    /// Its parameters.
    pub fn params(&self) -> &TimelyParams {
        &self.p
    }

    /// The rate to pace at now.
    pub fn rate(&self) -> Rate {
        Rate::from_bps(self.rate).unwrap_or(self.p.min_rate)
    }

    /// The smoothed RTT difference, ns.
    pub fn rtt_diff(&self) -> f64 {
        self.rtt_diff
    }

    /// What it did, as counts.
    pub fn counters(&self) -> TimelyCounters {
        self.counters
    }

    /// One ACK or NACK: `ack_seq` the byte it acknowledges up to, `snd_nxt` the sender's next
    /// byte, `rtt_ns` its arrival minus the echoed send timestamp. Returns the new rate when
    /// it updated, else `None`.
    pub fn handle_ack(&mut self, ack_seq: u64, snd_nxt: u64, rtt_ns: u64) -> Option<Rate> {
        self.counters.acks += 1;
        if ack_seq <= self.last_update_seq {
            return None; // the fork's fast reaction does nothing
        }
        self.counters.updates += 1;
        let mut changed = None;
        if self.last_update_seq != 0 {
            let d = rtt_ns as i64 - self.last_rtt as i64;
            let diff = (1.0 - self.p.alpha) * self.rtt_diff + self.p.alpha * d as f64;
            let gradient = diff / self.p.min_rtt_ns as f64;
            let (inc, c) = if rtt_ns < self.p.t_low_ns {
                (true, 0.0)
            } else if rtt_ns > self.p.t_high_ns {
                (
                    false,
                    1.0 - self.p.beta * (1.0 - self.p.t_high_ns as f64 / rtt_ns as f64),
                )
            } else if gradient <= 0.0 {
                (true, 0.0)
            } else {
                (false, (1.0 - self.p.beta * gradient).max(0.0))
            };
            if inc {
                let step = if self.inc_stage < 5 {
                    self.p.rate_ai
                } else {
                    self.p.rate_hai
                };
                self.rate = self.rate.saturating_add(step.bps()).min(self.line);
                self.inc_stage += 1;
                self.counters.rate_increases += 1;
            } else {
                // ns-3's DataRate * double: the product in double, truncated
                let r = ((self.rate as f64 * c) as u64).max(self.p.min_rate.bps());
                if r < self.rate {
                    self.counters.rate_decreases += 1;
                }
                self.rate = r;
                self.inc_stage = 0;
            }
            self.rtt_diff = diff;
            changed = Some(self.rate());
        }
        if snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
            self.last_rtt = rtt_ns;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::from_gbps(100);

    fn sender() -> Timely {
        Timely::new(TimelyParams::hpcc_ns3(), LINE).unwrap()
    }

    #[test]
    fn the_papers_preset_is_its_additive_steps_over_the_forks_constants() {
        let p = TimelyParams::preset("paper").expect("known");
        assert_eq!(
            (p.rate_ai, p.rate_hai),
            (Rate::from_mbps(10), Rate::from_mbps(50))
        );
        let f = TimelyParams::hpcc_ns3();
        assert_eq!(
            (p.alpha, p.beta, p.t_low_ns, p.t_high_ns, p.min_rtt_ns),
            (f.alpha, f.beta, f.t_low_ns, f.t_high_ns, f.min_rtt_ns)
        );
        assert!(p.validate(Rate::from_gbps(10)).is_ok());
    }

    #[test]
    fn the_first_update_only_records_the_rtt() {
        let mut t = sender();
        assert_eq!(t.handle_ack(1000, 10_000, 8000), None);
        assert_eq!(t.rate(), LINE);
        // the same round trip: ignored
        assert_eq!(t.handle_ack(5000, 12_000, 900_000), None);
        assert_eq!(t.counters().updates, 1);
    }

    #[test]
    fn a_low_rtt_increases_by_ai_five_times_then_by_hai() {
        let mut t = sender();
        t.handle_ack(1000, 2000, 600_000); // record
        t.handle_ack(3000, 4000, 600_000); // above T_high: c = 1 − 0.8·(1 − 5/6)
        let cut = (100e9 * (1.0 - 0.8 * (1.0 - 500_000.0 / 600_000.0))) as u64;
        assert_eq!(t.rate().bps(), cut);
        let mut seq = 4000;
        let mut want = cut;
        for k in 0..7 {
            seq += 2000;
            t.handle_ack(seq, seq + 1000, 10_000);
            want += if k < 5 { 100_000_000 } else { 500_000_000 };
            assert_eq!(t.rate().bps(), want, "increase {k}");
        }
    }

    #[test]
    fn a_rising_rtt_between_the_thresholds_decreases_by_the_gradient() {
        let mut t = sender();
        t.handle_ack(1000, 2000, 100_000);
        t.handle_ack(3000, 4000, 110_000);
        // rttDiff = 0.875 · 10 000; g = 8750 / 20 000; c = 1 − 0.8 g = 0.65
        let want = (100e9 * (1.0 - 0.8 * (8750.0 / 20_000.0))) as u64;
        assert_eq!(t.rate().bps(), want);
        assert_eq!(t.rtt_diff(), 8750.0);
        // a falling RTT: g < 0, an increase
        t.handle_ack(5000, 6000, 100_000);
        assert_eq!(t.rate().bps(), want + 100_000_000);
    }

    #[test]
    fn the_rate_stays_between_the_floor_and_the_line_rate() {
        let mut t = sender();
        let mut x = 0x2545_f491_u64;
        let mut seq = 0u64;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            seq += 1000;
            t.handle_ack(seq, seq + 1, (x >> 20) % 2_000_000);
            let r = t.rate().bps();
            assert!((1_000_000_000..=100_000_000_000).contains(&r), "rate {r}");
        }
        assert!(t.counters().rate_decreases > 10 && t.counters().rate_increases > 10);
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let p = TimelyParams {
            beta: 1.5,
            ..TimelyParams::hpcc_ns3()
        };
        assert_eq!(Timely::new(p, LINE).unwrap_err().field, "beta");
        let p = TimelyParams {
            min_rate: Rate::from_gbps(200),
            ..TimelyParams::hpcc_ns3()
        };
        assert_eq!(Timely::new(p, LINE).unwrap_err().field, "min_rate");
        assert_eq!(TimelyParams::preset("hpcc_ns3"), Some(TimelyParams::hpcc_ns3()));
    }
}
