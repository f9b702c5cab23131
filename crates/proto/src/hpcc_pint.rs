//! HPCC-PINT as the HPCC ns-3 fork runs it (`CC_MODE 10`): each switch port keeps one
//! utilisation estimate, computed in log space at every packet it dequeues, and writes it as
//! a randomised logarithmic code into the data packets it sends if larger than the code they
//! carry (`SwitchNode::SwitchNotifyDequeue`, `Pint::encode_u`); the sender sets its rate
//! from the code its ACK echoes (`RdmaHw::HandleAckHpPint`, `UpdateRateHpPint`). No timer.
//!
//! Sans-IO: [`PintPort::on_dequeue`] is the switch side (time, queue bytes, frame size; it
//! returns the code to raise the packet's field to), [`HpccPint::handle_ack`] the sender's
//! (acknowledged byte, next byte, echoed code; it returns the new rate when the fork would
//! call `ChangeRate`). Neither allocates.
//!
//! # Switch port (`/work/shared/corpus/hpcc-ns3/MODEL.md` §9.6)
//!
//! State: U′ = 0, S = the size of the previous frame the port sent (any kind), t′ = its start.
//! At a data packet's dequeue at t (ns), with T = maxRtt (ns), B = the port's rate in bytes/s
//! and q its egress bytes after the dequeue: dt = min(t − t′, T); in log space with F = 2^15
//! and L(x) = ⌊F·log2 x̃⌋ (x̃: x cut to its top 16 significant bits, rounded up one unit at
//! random in proportion to the bits dropped):
//! - qterm = 256·2^((L(dt) + L(q >> 8) + F·log2 1e9 − F·log2 B − 2F·log2 T)/F) if q ≥ 256;
//! - byteTerm = 2^((L(S) + F·log2 1e9 − F·log2 B − F·log2 T)/F) if S > 0;
//! - uTerm = 2^((L(T − dt) + L(round(8192·U′)) − F·log2 T)/F)/8192 if T > dt and U′ > 0;
//! - U = the sum (the EWMA, weight dt/T, of (q/T + S/dt)/B), U′ = U, and the code is
//!   encode(U). After every frame (data or not): S = its size, t′ = now.
//!
//! encode(U): n = max(1, ⌈512·U⌉), p = ln n / ln b; the code is ⌈p⌉ with probability
//! (n − b^⌊p⌋)/(b^⌈p⌉ − b^⌊p⌋) (a 16-bit draw; when p is whole the upper bound is b^(p+1)),
//! else ⌊p⌋. decode(c) = b^c/512.
//!
//! # Sender
//!
//! An ACK takes part with probability `prob` (a 16-bit draw against ⌊65536·prob⌋). The first
//! one sets lastUpdateSeq = snd_nxt. Each later one: U = decode(code), max_c = U/η; if
//! max_c ≥ 1 or incStage ≥ MI_THRESH, R = ⌊Rc/max_c⌋ + R_AI and stage 0, else R = Rc + R_AI
//! and stage + 1; R clamped to [floor, line] becomes the rate. An ACK past lastUpdateSeq also
//! sets Rc = R, incStage and lastUpdateSeq = snd_nxt: the reference rate moves once per round
//! trip.
//!
//! # Randomness
//!
//! The fork draws all of this from C's one shared `rand()` stream, in event order across every
//! switch and sender. Each [`PintPort`] and each [`HpccPint`] here owns a seeded PCG-32 stream
//! instead (the project keeps randomness per component): same distributions, other draws.

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

use lossless_wire::pint::{PintField, PintWidth};

use crate::dcqcn::ParamError;
use crate::units::Rate;

/// Flows the code's range is sized for (the fork's `Pint::max_concurrent`): U = 1 is 512.
pub const MAX_CONCURRENT: u32 = 512;

/// Parameters of an HPCC-PINT sender (and the code its switches write).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PintParams {
    /// Target utilisation η (`U_TARGET`).
    pub eta: f64,
    /// Additive increase per update (`RATE_AI`).
    pub rate_ai: Rate,
    /// Rate floor (`MIN_RATE`).
    pub min_rate: Rate,
    /// Updates with additive increase only before a multiplicative one (`MI_THRESH`).
    pub max_stage: u32,
    /// Base b of the logarithmic code (`PINT_LOG_BASE`): U = b^code / 512.
    pub log_base: f64,
    /// Fraction of ACKs the sender reacts to (`PINT_PROB`).
    pub prob: f64,
}

impl Default for PintParams {
    fn default() -> Self {
        PintParams::hpcc_ns3()
    }
}

impl PintParams {
    /// run.py's `hpccPint` profile at `--bw 100` (MODEL.md §9.2): η 0.95, AI 40 Mb/s, floor
    /// 1000 Mb/s, MI_THRESH 0, log base 1.01 (11-bit codes, 2 bytes), every ACK sampled.
    pub fn hpcc_ns3() -> Self {
        PintParams {
            eta: 0.95,
            rate_ai: Rate::from_mbps(40),
            min_rate: Rate::from_mbps(1000),
            max_stage: 0,
            log_base: 1.01,
            prob: 1.0,
        }
    }

    /// The preset called `name` (`hpcc-ns3`; `_` may stand for `-`).
    pub fn preset(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "hpcc-ns3" => Some(PintParams::hpcc_ns3()),
            _ => None,
        }
    }

    /// Checks the values against a sender of line rate `line`.
    pub fn validate(&self, line: Rate) -> Result<(), ParamError> {
        crate::hpcc::validate_rate_rule(self.eta, self.min_rate, self.rate_ai, line)?;
        if !(0.0..=1.0).contains(&self.prob) {
            return Err(ParamError::new("prob", self.prob, "0..=1"));
        }
        PintCodec::new(self.log_base).map(|_| ())
    }
}

/// The code's base and width (the fork's `Pint` statics).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PintCodec {
    base: f64,
    factor: f64,
    bits: u32,
}

/// Smallest and largest log base: codes of 16 bits at most, and of 1 bit at least.
const LOG_BASE_RANGE: &str = "1.0002..=262000 (codes of 1 to 16 bits: ⌈log2(ln(512²)/ln b)⌉)";

impl PintCodec {
    /// The code of base `log_base`; refused where its codes would need more than 16 bits
    /// (the fork's field holds 2 bytes) or none.
    pub fn new(log_base: f64) -> Result<Self, ParamError> {
        if !(log_base.is_finite() && log_base > 1.0) {
            return Err(ParamError::new("log_base", log_base, LOG_BASE_RANGE));
        }
        let factor = 1.0 / log_base.ln();
        let max_value = f64::from(MAX_CONCURRENT * MAX_CONCURRENT).ln() * factor;
        let bits = max_value.log2().ceil();
        if !(1.0..=16.0).contains(&bits) {
            return Err(ParamError::new("log_base", log_base, LOG_BASE_RANGE));
        }
        Ok(PintCodec {
            base: log_base,
            factor,
            bits: bits as u32,
        })
    }

    /// Bits of a code (`Pint::get_n_bits`): 11 at base 1.01, 8 at 1.05.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The field's width on the wire (`Pint::get_n_bytes`).
    pub fn width(&self) -> PintWidth {
        PintWidth::for_bits(self.bits).unwrap_or(PintWidth::Two)
    }

    /// The utilisation code `c` stands for: b^c / 512.
    pub fn decode_u(&self, code: u16) -> f64 {
        self.base.powf(f64::from(code)) / f64::from(MAX_CONCURRENT)
    }

    /// The code of utilisation `u`, rounded up or down at random by `draw` (uniform in
    /// 0..65536) so that its expected value is exact (`Pint::encode_u`).
    pub fn encode_u(&self, u: f64, draw: u16) -> u16 {
        let n = (u * f64::from(MAX_CONCURRENT)).ceil();
        let n = if n.is_nan() || n < 1.0 {
            1.0
        } else {
            n.min(f64::from(u32::MAX))
        };
        let n = f64::from(n as u32);
        let power = n.ln() * self.factor;
        let (hi, lo) = (power.ceil() as u16, power.floor() as u16);
        let mut upper = self.base.powf(f64::from(hi));
        let lower = self.base.powf(f64::from(lo));
        if hi == lo {
            upper *= self.base;
        }
        if f64::from(draw) < (n - lower) / (upper - lower) * 65536.0 {
            hi
        } else {
            lo
        }
    }
}

/// What an HPCC-PINT switch port did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PintPortCounters {
    /// Data packets it computed a code for.
    pub stamped: u64,
    /// Codes it wrote (larger than the packet's).
    pub raised: u64,
}

/// F = 2^15 (`logres_shift(20, 20)` = 15): the log-space fixed-point factor.
const LOG_SHIFT: u32 = 15;
/// Significant bits `log2apprx` keeps (its `m`).
const LOG_KEEP_BITS: u32 = 16;

/// The utilisation estimate of one switch egress port.
#[derive(Clone, Debug)]
pub struct PintPort {
    codec: PintCodec,
    max_rtt: u64,
    log_t: f64,
    log_b: f64,
    log_1e9: f64,
    u: f64,
    last_size: u64,
    last_start: u64,
    rng: Pcg32,
    counters: PintPortCounters,
}

impl PintPort {
    /// A port of rate `rate` with T = `max_rtt_ns` (the fork's `MaxRtt`, the network's
    /// largest base RTT), writing codes of `codec`, drawing from a stream seeded with `seed`.
    pub fn new(codec: PintCodec, rate: Rate, max_rtt_ns: u64, seed: u64) -> Result<Self, ParamError> {
        if max_rtt_ns == 0 || max_rtt_ns > i32::MAX as u64 {
            return Err(ParamError::new("max_rtt", max_rtt_ns, "1..=2147483647 ns"));
        }
        let f = f64::from(1u32 << LOG_SHIFT);
        let bytes_per_s = rate.bps() / 8;
        Ok(PintPort {
            codec,
            max_rtt: max_rtt_ns,
            log_t: (max_rtt_ns as f64).log2() * f,
            log_b: (bytes_per_s as f64).log2() * f,
            log_1e9: 1e9f64.log2() * f,
            u: 0.0,
            last_size: 0,
            last_start: 0,
            rng: Pcg32::seed_from_u64(seed),
            counters: PintPortCounters::default(),
        })
    }

    /// U′, the port's utilisation estimate.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// What it did, as counts.
    pub fn counters(&self) -> PintPortCounters {
        self.counters
    }

    /// The code's width on the wire.
    pub fn width(&self) -> PintWidth {
        self.codec.width()
    }

    /// The port starts to send a frame of `len` bytes at `now_ns`, its egress queues holding
    /// `qlen` bytes after it left. For a data packet (`data`) it updates U′ and returns the
    /// code to raise the packet's field with ([`PintField::raise`]); any frame then becomes
    /// the previous one.
    pub fn on_dequeue(&mut self, now_ns: u64, qlen: u64, len: u64, data: bool) -> Option<u16> {
        let code = data.then(|| self.update(now_ns, qlen));
        self.last_size = len;
        self.last_start = now_ns;
        code
    }

    /// Raises `field` with the code of a data packet dequeued as [`Self::on_dequeue`] says.
    pub fn stamp(&mut self, field: &mut PintField, now_ns: u64, qlen: u64, len: u64) {
        if let Some(code) = self.on_dequeue(now_ns, qlen, len, true) {
            let before = *field;
            field.raise(code, self.codec.width());
            self.counters.raised += u64::from(*field != before);
        }
    }

    fn update(&mut self, now_ns: u64, qlen: u64) -> u16 {
        self.counters.stamped += 1;
        let f = f64::from(1u32 << LOG_SHIFT);
        let t = self.max_rtt;
        let dt = now_ns.saturating_sub(self.last_start).min(t);
        let mut qterm = 0.0;
        if qlen >> 8 > 0
            && let (Some(l_dt), Some(l_q)) = (self.log2apprx(dt), self.log2apprx(qlen >> 8))
        {
            let e = (l_dt + l_q) as f64 + self.log_1e9 - self.log_b - 2.0 * self.log_t;
            qterm = 2f64.powf(e / f) * 256.0;
        }
        let mut byte_term = 0.0;
        if self.last_size > 0
            && let Some(l_s) = self.log2apprx(self.last_size)
        {
            byte_term = 2f64.powf((l_s as f64 + self.log_1e9 - self.log_b - self.log_t) / f);
        }
        let mut u_term = 0.0;
        if t > dt && self.u > 0.0 {
            let scaled = (self.u * 8192.0).round().min(f64::from(i32::MAX)) as u64;
            if let (Some(l_tdt), Some(l_u)) = (self.log2apprx(t - dt), self.log2apprx(scaled)) {
                u_term = 2f64.powf(((l_tdt + l_u) as f64 - self.log_t) / f) / 8192.0;
            }
        }
        self.u = qterm + byte_term + u_term;
        let draw = (self.rng.next_u32() & 0xFFFF) as u16;
        self.codec.encode_u(self.u, draw)
    }

    /// ⌊F·log2 x̃⌋ (the fork's `log2apprx(x, 20, 16, 20)`); `None` for 0, whose logarithm
    /// makes the term it enters 0.
    fn log2apprx(&mut self, x: u64) -> Option<i64> {
        let x0 = x.min(i32::MAX as u64);
        if x0 == 0 {
            return None;
        }
        let msb = 64 - x0.leading_zeros();
        let mut x = x0;
        if msb > LOG_KEEP_BITS {
            let drop = msb - LOG_KEEP_BITS;
            x = x0 >> drop << drop;
            let mask = (1u64 << drop) - 1;
            if x0 & mask > u64::from(self.rng.next_u32()) & mask {
                x += 1 << drop;
            }
        }
        Some(((x as f64).log2() * f64::from(1u32 << LOG_SHIFT)) as i64)
    }
}

/// What an HPCC-PINT sender did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HpccPintCounters {
    /// ACKs given to it.
    pub acks: u64,
    /// ACKs left out by the sampling (`prob`).
    pub unsampled: u64,
    /// Full updates (the reference rate moved), the first one included.
    pub full_updates: u64,
    /// Updates between two full ones.
    pub fast_reactions: u64,
    /// Updates that lowered the rate.
    pub rate_decreases: u64,
}

/// The HPCC-PINT state of one sending QP.
#[derive(Clone, Debug)]
pub struct HpccPint {
    p: PintParams,
    codec: PintCodec,
    sample_below: u32,
    line: u64,
    rate: u64,
    cur_rate: u64,
    last_update_seq: u64,
    inc_stage: u32,
    rng: Pcg32,
    counters: HpccPintCounters,
}

impl HpccPint {
    /// A sender on a link of rate `line`, at line rate, sampling ACKs from a stream seeded
    /// with `seed`.
    pub fn new(p: PintParams, line: Rate, seed: u64) -> Result<Self, ParamError> {
        p.validate(line)?;
        let codec = PintCodec::new(p.log_base)?;
        Ok(HpccPint {
            p,
            codec,
            sample_below: (65536.0 * p.prob) as u32,
            line: line.bps(),
            rate: line.bps(),
            cur_rate: line.bps(),
            last_update_seq: 0,
            inc_stage: 0,
            rng: Pcg32::seed_from_u64(seed),
            counters: HpccPintCounters::default(),
        })
    }

    /// Restarts its random stream from `seed` (the driver's per-flow seed).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = Pcg32::seed_from_u64(seed);
    }

    /// Its parameters.
    pub fn params(&self) -> &PintParams {
        &self.p
    }

    /// Its code.
    pub fn codec(&self) -> &PintCodec {
        &self.codec
    }

    /// The rate to pace at now.
    pub fn rate(&self) -> Rate {
        Rate::from_bps(self.rate).unwrap_or(self.p.min_rate)
    }

    /// The reference rate Rc, which moves once per round trip.
    pub fn reference_rate(&self) -> Rate {
        Rate::from_bps(self.cur_rate).unwrap_or(self.p.min_rate)
    }

    /// What it did, as counts.
    pub fn counters(&self) -> HpccPintCounters {
        self.counters
    }

    /// One ACK or NACK: `ack_seq` the byte it acknowledges up to, `snd_nxt` the sender's next
    /// byte to send, `field` the echoed code. Returns the new rate when it set one (the
    /// fork's `ChangeRate`), else `None`.
    pub fn handle_ack(&mut self, ack_seq: u64, snd_nxt: u64, field: PintField) -> Option<Rate> {
        self.counters.acks += 1;
        // a draw only where it can decide (the fork draws on every ACK)
        if self.sample_below < 65536 && self.rng.next_u32() % 65536 >= self.sample_below {
            self.counters.unsampled += 1;
            return None;
        }
        let full = ack_seq > self.last_update_seq;
        self.counters.full_updates += u64::from(full);
        self.counters.fast_reactions += u64::from(!full);
        if self.last_update_seq == 0 {
            self.last_update_seq = snd_nxt;
            return None;
        }
        let u = self.codec.decode_u(field.0);
        let max_c = u / self.p.eta;
        let (new_rate, new_stage) = if max_c >= 1.0 || self.inc_stage >= self.p.max_stage {
            // ns-3's DataRate / double: the quotient in double, truncated
            let r = (self.cur_rate as f64 / max_c) as u64;
            (r.saturating_add(self.p.rate_ai.bps()), 0)
        } else {
            (
                self.cur_rate.saturating_add(self.p.rate_ai.bps()),
                self.inc_stage.saturating_add(1),
            )
        };
        let new_rate = new_rate.clamp(self.p.min_rate.bps(), self.line);
        if new_rate < self.rate {
            self.counters.rate_decreases += 1;
        }
        self.rate = new_rate;
        if full {
            self.cur_rate = new_rate;
            self.inc_stage = new_stage;
            self.last_update_seq = self.last_update_seq.max(snd_nxt);
        }
        Some(self.rate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::from_gbps(100);

    #[test]
    fn codes_are_11_bits_at_base_1_01_and_8_at_1_05() {
        // MODEL.md §9.4: "PINT bits: 11 bytes: 2"; 1.05 gives an 8-bit, 1-byte code
        let c = PintCodec::new(1.01).unwrap();
        assert_eq!((c.bits(), c.width()), (11, PintWidth::Two));
        let c = PintCodec::new(1.05).unwrap();
        assert_eq!((c.bits(), c.width()), (8, PintWidth::One));
        assert_eq!(PintCodec::new(1.0).unwrap_err().field, "log_base");
        assert_eq!(PintCodec::new(1.0001).unwrap_err().field, "log_base");
    }

    #[test]
    fn encoding_rounds_to_a_neighbouring_code_with_the_exact_mean() {
        let c = PintCodec::new(1.01).unwrap();
        // U = 1: n = 512, p = ln 512 / ln 1.01 = 626.98...
        let lo = c.encode_u(1.0, 65535);
        let hi = c.encode_u(1.0, 0);
        assert_eq!((lo, hi), (626, 627));
        let mean: f64 = (0..65536u32)
            .map(|d| c.decode_u(c.encode_u(1.0, d as u16)))
            .sum::<f64>()
            / 65536.0;
        assert!((mean - 1.0).abs() < 1e-4, "mean {mean}");
        // nothing below one flow's worth: n is at least 1, code 0
        assert_eq!(c.encode_u(0.0, 0), 0);
        assert_eq!(c.decode_u(0), 1.0 / 512.0);
    }

    #[test]
    fn a_port_sending_back_to_back_full_packets_estimates_its_own_load() {
        // 1050-B packets every 84 ns on 100 G (1050·8/100 = 84 ns): U → 1 with no queue
        let codec = PintCodec::new(1.01).unwrap();
        let mut port = PintPort::new(codec, LINE, 12_480, 7).unwrap();
        let mut t = 0;
        for _ in 0..2000 {
            t += 84;
            port.on_dequeue(t, 0, 1050, true);
        }
        let u = port.utilisation();
        assert!((u - 1.0).abs() < 0.02, "u {u}");
        // a queue of 156 KB (one maxBdp) adds about 1
        for _ in 0..2000 {
            t += 84;
            port.on_dequeue(t, 156_000, 1050, true);
        }
        let u = port.utilisation();
        assert!((u - 2.0).abs() < 0.05, "u {u}");
        assert_eq!(port.counters().stamped, 4000);
    }

    #[test]
    fn the_first_ack_only_sets_the_update_point_and_a_loaded_path_cuts_the_rate() {
        let mut h = HpccPint::new(PintParams::hpcc_ns3(), LINE, 1).unwrap();
        let c = *h.codec();
        assert_eq!(h.handle_ack(1000, 50_000, PintField(c.encode_u(2.0, 0))), None);
        assert_eq!(h.rate(), LINE);
        // U = 2: R = Rc·η/U + AI, then Rc moves (1000 < 50 000: a fast reaction, Rc stays)
        let code = c.encode_u(2.0, 0);
        let r = h.handle_ack(2000, 51_000, PintField(code)).unwrap();
        let want = (100e9 / (c.decode_u(code) / 0.95)) as u64 + 40_000_000;
        assert_eq!(r.bps(), want);
        assert_eq!(h.reference_rate(), LINE);
        let r2 = h.handle_ack(60_000, 110_000, PintField(code)).unwrap();
        assert_eq!(r2, r);
        assert_eq!(h.reference_rate(), r);
    }

    #[test]
    fn sampling_leaves_out_about_one_minus_prob_of_the_acks() {
        let p = PintParams {
            prob: 0.25,
            ..PintParams::hpcc_ns3()
        };
        let mut h = HpccPint::new(p, LINE, 3).unwrap();
        for k in 1..=40_000u64 {
            h.handle_ack(k * 1000, k * 1000 + 50_000, PintField(600));
        }
        let left = h.counters().unsampled as f64 / 40_000.0;
        assert!((left - 0.75).abs() < 0.01, "{left}");
    }

    #[test]
    fn bad_parameters_name_their_field() {
        for (p, field) in [
            (
                PintParams {
                    eta: 1.5,
                    ..PintParams::hpcc_ns3()
                },
                "eta",
            ),
            (
                PintParams {
                    prob: 1.5,
                    ..PintParams::hpcc_ns3()
                },
                "prob",
            ),
            (
                PintParams {
                    log_base: 0.5,
                    ..PintParams::hpcc_ns3()
                },
                "log_base",
            ),
            (
                PintParams {
                    min_rate: Rate::from_gbps(200),
                    ..PintParams::hpcc_ns3()
                },
                "min_rate",
            ),
        ] {
            assert_eq!(HpccPint::new(p, LINE, 0).unwrap_err().field, field);
        }
        assert_eq!(PintParams::preset("hpcc_ns3"), Some(PintParams::hpcc_ns3()));
        assert_eq!(PintParams::preset("x"), None);
    }
}
