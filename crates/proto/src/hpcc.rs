//! HPCC as the HPCC ns-3 fork runs it on an RDMA NIC (`CC_MODE 3`, `RdmaHw::HandleAckHp`,
//! `UpdateRateHp`, `FastReactHp`): a rate set from the utilisation that switches report in
//! the INT field of every data packet, echoed on its ACK. There is no timer.
//!
//! Sans-IO: [`Hpcc::handle_ack`] is the only input (the acknowledged byte, the sender's next
//! byte, the echoed [`IntHeader`]); it returns the new rate when the fork would call
//! `ChangeRate` (the driver then moves its pacing, MODEL.md §9.3). No call allocates.
//!
//! # Per ACK, step by step (`/work/shared/corpus/hpcc-ns3/MODEL.md` §9.5)
//!
//! State: the reference rate Rc (the line rate at first), û = 1, the last record seen per hop,
//! lastUpdateSeq = 0, incStage = 0. Constants: T (the base RTT, ns), W₀ (the window at line
//! rate, bytes), η, R_AI, the floor, MI_THRESH. On an ACK of byte `a`, `snd_nxt` the sender's
//! next byte:
//! 1. a > lastUpdateSeq: a full update; otherwise a fast reaction, only with `fast_react`.
//! 2. The first full update (lastUpdateSeq = 0) stores the records and sets lastUpdateSeq =
//!    snd_nxt; nothing else.
//! 3. Otherwise, if nhop ≤ 5: for each hop i, τ = Δtime (ns), txRate = Δbytes·8/(τ·1e-9),
//!    uᵢ = txRate/Cᵢ + min(qlen, stored qlen)·R_line/(Cᵢ·W₀); the stored record becomes the
//!    new one (`sample_feedback` skips hops with qlen 0 on a fast reaction). U = max uᵢ and
//!    dt = the τ of the first hop reaching it, capped at T; û ← (û·(T − dt) + U·dt)/T.
//! 4. max_c = û/η. If max_c ≥ 1 or incStage ≥ MI_THRESH: R = ⌊Rc/max_c⌋ + R_AI, stage 0;
//!    else R = Rc + R_AI, stage + 1. R is clamped to [floor, line] and becomes the rate.
//! 5. On a full update only: Rc = R, incStage = the new stage, lastUpdateSeq = snd_nxt if
//!    larger. So Rc moves once per round trip and every ACK in between uses the newest û.
//!
//! The arithmetic is the fork's: doubles evaluated in its order, rates truncated to whole b/s
//! as ns-3's `DataRate / double` does. The fork's `MULTI_RATE 1` (per-hop rates) is not
//! modelled.

use lossless_wire::int::IntHeader;
use serde::{Deserialize, Serialize};

use crate::dcqcn::ParamError;
use crate::units::Rate;

/// Parameters of an HPCC sender.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccParams {
    /// Target utilisation η (the fork's `U_TARGET`).
    pub eta: f64,
    /// Additive increase per update (`RATE_AI`).
    pub rate_ai: Rate,
    /// Rate floor (`MIN_RATE`).
    pub min_rate: Rate,
    /// Updates with additive increase only before a multiplicative one (`MI_THRESH`).
    pub max_stage: u32,
    /// React on every ACK between two full updates (`FAST_REACT`).
    pub fast_react: bool,
    /// On a fast reaction, skip hops that report an empty queue (`SAMPLE_FEEDBACK`).
    pub sample_feedback: bool,
    /// The INT fields' unit multiplier (`INT_MULTI`): bytes in 128·m, queues in 80·m.
    pub int_multi: u32,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams::hpcc_ns3()
    }
}

impl HpccParams {
    /// run.py's `hp` profile at `--bw 100` (MODEL.md §9.2): η 0.95, AI 40 Mb/s, floor
    /// 1000 Mb/s, MI_THRESH 0, fast reaction on, no sampled feedback, INT_MULTI 4.
    pub fn hpcc_ns3() -> Self {
        HpccParams {
            eta: 0.95,
            rate_ai: Rate::from_mbps(40),
            min_rate: Rate::from_mbps(1000),
            max_stage: 0,
            fast_react: true,
            sample_feedback: false,
            int_multi: 4,
        }
    }

    /// The HPCC paper's values (Li et al., SIGCOMM 2019): η 95 % and maxStage 0 in its
    /// simulations, which ran this fork (the "maxStage = 5" of its text is a typo, its authors
    /// say on hpcc-group.github.io/results.md); the additive step and floor are the fork's
    /// at 100 Gb/s (the paper sets W_AI from the expected number of flows).
    pub fn paper() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 0,
            ..HpccParams::hpcc_ns3()
        }
    }

    /// The authors' later setting (hpcc-group.github.io/results.md): η 99 %, maxStage 0,
    /// which keeps links busier at no cost in queueing.
    pub fn eta99() -> Self {
        HpccParams {
            eta: 0.99,
            ..HpccParams::paper()
        }
    }

    /// The preset called `name` (`hpcc-ns3`, `paper`, `eta99`; `_` may stand for `-`).
    pub fn preset(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "hpcc-ns3" => Some(HpccParams::hpcc_ns3()),
            "paper" => Some(HpccParams::paper()),
            "eta99" => Some(HpccParams::eta99()),
            _ => None,
        }
    }

    /// Checks the values against a sender of line rate `line`.
    pub fn validate(&self, line: Rate) -> Result<(), ParamError> {
        validate_rate_rule(self.eta, self.min_rate, self.rate_ai, line)?;
        if !(1..=400).contains(&self.int_multi) {
            return Err(ParamError::new("int_multi", self.int_multi, "1..=400"));
        }
        Ok(())
    }
}

/// What an HPCC sender did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HpccCounters {
    /// ACKs given to it.
    pub acks: u64,
    /// Full updates (the reference rate moved), the first one included.
    pub full_updates: u64,
    /// Fast reactions (rate set from the reference rate and the newest utilisation).
    pub fast_reactions: u64,
    /// Updates that lowered the rate.
    pub rate_decreases: u64,
    /// ACKs whose INT field had more than 5 records (ignored).
    pub too_many_hops: u64,
}

/// The HPCC state of one sending QP.
#[derive(Clone, Debug)]
pub struct Hpcc {
    p: HpccParams,
    line: u64,
    base_rtt: u64,
    win: u64,
    rate: u64,
    cur_rate: u64,
    u: f64,
    hops: IntHeader,
    last_update_seq: u64,
    inc_stage: u32,
    counters: HpccCounters,
}

impl Hpcc {
    /// A sender on a link of rate `line`, with T = `base_rtt_ns` and W₀ = `win_bytes` (the
    /// fork's network-wide maxRtt and maxBdp), at line rate with û = 1.
    pub fn new(p: HpccParams, line: Rate, base_rtt_ns: u64, win_bytes: u64) -> Result<Self, ParamError> {
        p.validate(line)?;
        if base_rtt_ns == 0 {
            return Err(ParamError::new("base_rtt", base_rtt_ns, "1 ns or more"));
        }
        if win_bytes == 0 {
            return Err(ParamError::new(
                "window",
                win_bytes,
                "1 byte or more (HPCC divides by the window; the fork needs HAS_WIN 1)",
            ));
        }
        Ok(Hpcc {
            p,
            line: line.bps(),
            base_rtt: base_rtt_ns,
            win: win_bytes,
            rate: line.bps(),
            cur_rate: line.bps(),
            u: 1.0,
            hops: IntHeader::default(),
            last_update_seq: 0,
            inc_stage: 0,
            counters: HpccCounters::default(),
        })
    }

    /// Its parameters.
    pub fn params(&self) -> &HpccParams {
        &self.p
    }

    /// The rate to pace at now.
    pub fn rate(&self) -> Rate {
        // never below min_rate ≥ 1 b/s, so never 0
        Rate::from_bps(self.rate).unwrap_or(self.p.min_rate)
    }

    /// The reference rate Rc, which moves once per round trip.
    pub fn reference_rate(&self) -> Rate {
        Rate::from_bps(self.cur_rate).unwrap_or(self.p.min_rate)
    }

    /// û, the smoothed utilisation of the most loaded hop.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// What it did, as counts.
    pub fn counters(&self) -> HpccCounters {
        self.counters
    }

    /// One ACK or NACK: `ack_seq` the byte it acknowledges up to, `snd_nxt` the sender's next
    /// byte to send (after any go-back-N the reply caused), `int` the echoed INT field.
    /// Returns the new rate when it set one (the fork's `ChangeRate`), else `None`.
    pub fn handle_ack(&mut self, ack_seq: u64, snd_nxt: u64, int: &IntHeader) -> Option<Rate> {
        self.counters.acks += 1;
        let full = ack_seq > self.last_update_seq;
        if !full && !self.p.fast_react {
            return None;
        }
        if self.last_update_seq == 0 {
            // first round trip: store the records only (the fork copies nhop of them)
            self.last_update_seq = snd_nxt;
            let n = usize::from(int.nhop).min(self.hops.hops.len());
            self.hops.hops[..n].copy_from_slice(&int.hops[..n]);
            self.counters.full_updates += u64::from(full);
            self.counters.fast_reactions += u64::from(!full);
            return None;
        }
        let mut changed = None;
        if let Some(records) = int.records() {
            let multi = self.p.int_multi;
            let mut big_u = 0.0f64;
            let mut dt = 0u64;
            let mut updated_any = false;
            for (i, hop) in records.iter().enumerate() {
                let old = self.hops.hops[i];
                if self.p.sample_feedback && !full && hop.qlen_units() == 0 {
                    continue;
                }
                updated_any = true;
                let tau = hop.time_delta(old);
                let duration = tau as f64 * 1e-9;
                let tx_rate = (hop.bytes_delta(old, multi) * 8) as f64 / duration;
                let c = hop.line_rate() as f64;
                let q = hop.qlen(multi).min(old.qlen(multi));
                let u = tx_rate / c + q as f64 * self.line as f64 / c / self.win as f64;
                if u > big_u {
                    big_u = u;
                    dt = tau;
                }
                self.hops.hops[i] = *hop;
            }
            if updated_any {
                let t = self.base_rtt;
                let dt = dt.min(t);
                self.u = (self.u * (t - dt) as f64 + big_u * dt as f64) / t as f64;
                let max_c = self.u / self.p.eta;
                let (mut new_rate, new_stage) = if max_c >= 1.0 || self.inc_stage >= self.p.max_stage {
                    // ns-3's DataRate / double: the quotient in double, truncated
                    let r = (self.cur_rate as f64 / max_c) as u64;
                    (r.saturating_add(self.p.rate_ai.bps()), 0)
                } else {
                    (
                        self.cur_rate.saturating_add(self.p.rate_ai.bps()),
                        self.inc_stage.saturating_add(1),
                    )
                };
                new_rate = new_rate.clamp(self.p.min_rate.bps(), self.line);
                if new_rate < self.rate {
                    self.counters.rate_decreases += 1;
                }
                self.rate = new_rate;
                changed = Some(self.rate());
                if full {
                    self.cur_rate = new_rate;
                    self.inc_stage = new_stage;
                }
            }
        } else {
            self.counters.too_many_hops += 1;
        }
        if full {
            self.counters.full_updates += 1;
            self.last_update_seq = self.last_update_seq.max(snd_nxt);
        } else {
            self.counters.fast_reactions += 1;
        }
        changed
    }
}

/// Checks the rate rule's values that HPCC and HPCC-PINT share against a sender of line rate
/// `line`: η in (0, 1], the floor and the additive step at most the line rate.
pub(crate) fn validate_rate_rule(
    eta: f64,
    min_rate: Rate,
    rate_ai: Rate,
    line: Rate,
) -> Result<(), ParamError> {
    if !(eta > 0.0 && eta <= 1.0) {
        return Err(ParamError::new("eta", eta, "above 0, at most 1"));
    }
    if min_rate > line {
        return Err(ParamError::new(
            "min_rate",
            min_rate,
            format!("1 b/s..={line} (the line rate)"),
        ));
    }
    if rate_ai > line {
        return Err(ParamError::new(
            "rate_ai",
            rate_ai,
            format!("0..={line} (the line rate)"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_wire::int::IntHop;

    const LINE: Rate = Rate::from_gbps(100);
    const T: u64 = 4160;
    const W: u64 = 52_000;

    fn sender() -> Hpcc {
        Hpcc::new(HpccParams::hpcc_ns3(), LINE, T, W).unwrap()
    }

    fn int1(time: u64, tx: u64, q: u64) -> IntHeader {
        let mut h = IntHeader::default();
        h.push(IntHop::stamp(time, tx, q, 100_000_000_000, 4));
        h
    }

    #[test]
    fn the_paper_and_eta99_presets_hold_their_published_targets() {
        let p = HpccParams::preset("paper").expect("known");
        assert_eq!((p.eta, p.max_stage), (0.95, 0));
        let q = HpccParams::preset("ETA99").expect("known");
        assert_eq!((q.eta, q.max_stage), (0.99, 0));
        assert_eq!(HpccParams::preset("x"), None);
    }

    #[test]
    fn the_first_ack_only_stores_the_records() {
        let mut h = sender();
        assert_eq!(h.handle_ack(1000, 20_000, &int1(100, 0, 0)), None);
        assert_eq!(h.rate(), LINE);
        assert_eq!(h.utilisation(), 1.0);
        assert_eq!(h.counters().full_updates, 1);
    }

    #[test]
    fn a_link_at_full_rate_with_no_queue_settles_at_eta_of_the_line_plus_the_step() {
        // one flow at the rate it is told, alone on a 100 G link: u = rate/line
        let mut h = sender();
        let mut t = 0u64;
        let mut tx = 0u64;
        let mut seq = 0u64;
        h.handle_ack(1000, 52_000, &int1(t, tx, 0));
        for _ in 0..20_000 {
            let r = h.rate().bps();
            t += 87;
            tx += 1090 * r / LINE.bps(); // the link carries the flow's share of 87 ns
            seq += 1000;
            h.handle_ack(seq, seq + 52_000, &int1(t, tx, 0));
        }
        let r = h.rate().bps() as f64;
        let want = 0.95 * 100e9 + 40e6;
        assert!((r - want).abs() / want < 0.01, "rate {r}");
    }

    #[test]
    fn the_reference_rate_moves_once_per_round_trip_and_fast_reactions_use_it() {
        let mut h = sender();
        h.handle_ack(1000, 10_000, &int1(0, 0, 0));
        // full update: link busy at line rate with a queue of 30 KB
        let r1 = h.handle_ack(11_000, 30_000, &int1(1000, 12_500, 30_000)).unwrap();
        assert!(r1 < LINE);
        assert_eq!(h.reference_rate(), r1);
        // fast reaction (11_000 < 30_000): a new rate, Rc unchanged
        let r2 = h.handle_ack(12_000, 31_000, &int1(2000, 25_000, 30_000)).unwrap();
        assert_ne!(r2, r1);
        assert_eq!(h.reference_rate(), r1);
        assert_eq!(h.counters().fast_reactions, 1);
        // without fast reaction such an ACK changes nothing
        let mut h = Hpcc::new(
            HpccParams {
                fast_react: false,
                ..HpccParams::hpcc_ns3()
            },
            LINE,
            T,
            W,
        )
        .unwrap();
        h.handle_ack(1000, 10_000, &int1(0, 0, 0));
        h.handle_ack(11_000, 30_000, &int1(1000, 12_500, 30_000));
        let u = h.utilisation();
        assert_eq!(h.handle_ack(12_000, 31_000, &int1(2000, 25_000, 30_000)), None);
        assert_eq!(h.utilisation(), u);
    }

    #[test]
    fn the_update_is_the_forks_double_arithmetic() {
        let mut h = sender();
        h.handle_ack(1000, 10_000, &int1(0, 0, 0));
        // 1000 ns, 25 units of 512 B = 12,800 B → 102.4 Gb/s; qlen 10 units of 320 B
        let int = int1(1000, 12_800, 3200);
        h.handle_ack(11_000, 30_000, &int);
        let tx = (12_800u64 * 8) as f64 / (1000f64 * 1e-9);
        let u = tx / 100e9 + 0f64 * 100e9 / 100e9 / 52_000f64; // min(qlen, stored 0) = 0
        let uhat = (1.0 * (T - 1000) as f64 + u * 1000f64) / T as f64;
        let want = (100e9 / (uhat / 0.95)) as u64 + 40_000_000;
        assert_eq!(h.rate().bps(), want);
        assert_eq!(h.utilisation(), uhat);
    }

    #[test]
    fn more_than_five_hops_are_ignored() {
        let mut h = sender();
        h.handle_ack(1000, 10_000, &int1(0, 0, 0));
        let mut int = IntHeader::default();
        for k in 0..6 {
            int.push(IntHop::stamp(1000 + k, 100_000, 50_000, 100_000_000_000, 4));
        }
        assert_eq!(h.handle_ack(20_000, 40_000, &int), None);
        assert_eq!(h.rate(), LINE);
        assert_eq!(h.counters().too_many_hops, 1);
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let p = HpccParams {
            eta: 0.0,
            ..HpccParams::hpcc_ns3()
        };
        assert_eq!(Hpcc::new(p, LINE, T, W).unwrap_err().field, "eta");
        let p = HpccParams {
            min_rate: Rate::from_gbps(200),
            ..HpccParams::hpcc_ns3()
        };
        assert_eq!(Hpcc::new(p, LINE, T, W).unwrap_err().field, "min_rate");
        assert_eq!(
            Hpcc::new(HpccParams::hpcc_ns3(), LINE, T, 0).unwrap_err().field,
            "window"
        );
        assert_eq!(
            Hpcc::new(HpccParams::hpcc_ns3(), LINE, 0, W).unwrap_err().field,
            "base_rtt"
        );
        assert_eq!(HpccParams::preset("hpcc_ns3"), Some(HpccParams::hpcc_ns3()));
        assert_eq!(HpccParams::preset("tcp"), None);
    }
}
