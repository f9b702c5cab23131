//! The DCQCN fluid model of Zhu et al. (SIGCOMM 2015, §5; restated in "ECN or Delay",
//! CoNEXT 2016): per flow the current rate R_C, target rate R_T and alpha, one bottleneck
//! queue q, feedback delayed by τ*. Rates in b/s here; the model's per-packet quantities
//! (marking probability p, byte counter B, packets per CNP window τ·R_C) use packets of
//! `packet_bits`.
//!
//! ```text
//! p(q)   = 0 (q ≤ Kmin), Pmax·(q − Kmin)/(Kmax − Kmin) (Kmin < q ≤ Kmax), 1 (q > Kmax)
//! dq/dt  = Σ R_C − C
//! dα/dt  = g/τ' · ((1 − (1−p')^{τ' r'}) − α)
//! dR_T/dt = −(R_T − R_C)/τ · (1 − (1−p')^{τ r'})
//!           + R_AI · r'p'(1−p')^{F·B} / ((1−p')^{−B} − 1)
//!           + R_AI · r'p'(1−p')^{F·T·r'} / ((1−p')^{−T·r'} − 1)
//! dR_C/dt = −R_C·α/(2τ) · (1 − (1−p')^{τ r'})
//!           + (R_T − R_C)/2 · r'p' / ((1−p')^{−B} − 1)
//!           + (R_T − R_C)/2 · r'p' / ((1−p')^{−T·r'} − 1)
//! ```
//! with `p' = p(q(t − τ*))`, `r' = R_C(t − τ*)` in packets/s, τ the CNP interval, τ' the alpha
//! period, T the timer, B the byte counter in packets, F the fast-recovery count. (At p' = 0
//! the byte and timer event rates are their limits r'/B and 1/T.) Integrated with explicit
//! Euler steps and a history ring for the delay; floats are fine here: this is the model, not
//! the engine.

/// Model parameters (SI units: seconds, b/s, bits).
#[derive(Clone, Copy, Debug)]
pub struct FluidParams {
    pub capacity_bps: f64,
    pub line_bps: f64,
    pub packet_bits: f64,
    pub kmin_bits: f64,
    pub kmax_bits: f64,
    pub pmax: f64,
    pub g: f64,
    /// CNP interval τ.
    pub tau: f64,
    /// Alpha period τ'.
    pub tau_alpha: f64,
    /// Timer T.
    pub timer: f64,
    /// Byte counter B, packets.
    pub byte_counter_pkts: f64,
    pub f: f64,
    pub r_ai_bps: f64,
    /// Feedback delay τ*.
    pub delay: f64,
}

impl FluidParams {
    pub fn p(&self, q_bits: f64) -> f64 {
        if q_bits <= self.kmin_bits {
            0.0
        } else if q_bits <= self.kmax_bits {
            self.pmax * (q_bits - self.kmin_bits) / (self.kmax_bits - self.kmin_bits)
        } else {
            1.0
        }
    }

    /// `(1 − p)^x`.
    fn pow(p: f64, x: f64) -> f64 {
        if p >= 1.0 { 0.0 } else { (x * (-p).ln_1p()).exp() }
    }

    /// Events per second of a counter that expires every `n` packets without a mark, at
    /// `r` packets/s: `r·p/((1−p)^{−n} − 1)`.
    fn event_rate(p: f64, r: f64, n: f64) -> f64 {
        if p <= 0.0 {
            return r / n;
        }
        let inv = Self::pow(p, -n);
        if !inv.is_finite() {
            0.0
        } else {
            r * p / (inv - 1.0)
        }
    }

    /// The right-hand side for one flow: (dR_C, dR_T, dα).
    pub fn flow_rhs(&self, rc: f64, rt: f64, alpha: f64, p_del: f64, rc_del: f64) -> (f64, f64, f64) {
        let r = rc_del / self.packet_bits;
        let cut = 1.0 - Self::pow(p_del, self.tau * r);
        let alpha_hit = 1.0 - Self::pow(p_del, self.tau_alpha * r);
        let bytes = Self::event_rate(p_del, r, self.byte_counter_pkts);
        let timer = if r > 0.0 {
            Self::event_rate(p_del, r, self.timer * r)
        } else {
            1.0 / self.timer
        };
        let ai = self.r_ai_bps
            * (bytes * Self::pow(p_del, self.f * self.byte_counter_pkts)
                + timer * Self::pow(p_del, self.f * self.timer * r));
        let d_alpha = self.g / self.tau_alpha * (alpha_hit - alpha);
        let d_rt = -(rt - rc) / self.tau * cut + ai;
        let d_rc = -rc * alpha / (2.0 * self.tau) * cut + (rt - rc) / 2.0 * (bytes + timer);
        (d_rc, d_rt, d_alpha)
    }
}

/// One flow of the model.
#[derive(Clone, Copy, Debug)]
pub struct FluidFlow {
    pub start: f64,
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
}

/// Integrates from 0 to `until` with step `h`; calls `sample(t, q_bits, flows)` every
/// `every` seconds.
pub fn integrate(
    m: &FluidParams,
    starts: &[f64],
    until: f64,
    h: f64,
    every: f64,
    mut sample: impl FnMut(f64, f64, &[FluidFlow]),
) {
    let mut flows: Vec<FluidFlow> = starts
        .iter()
        .map(|&s| FluidFlow {
            start: s,
            rc: 0.0,
            rt: 0.0,
            alpha: 1.0,
        })
        .collect();
    let lag = ((m.delay / h).round() as usize).max(1);
    // history of (q, rc per flow), oldest first
    let mut hist: std::collections::VecDeque<(f64, Vec<f64>)> = std::collections::VecDeque::new();
    let mut q = 0.0f64;
    let mut t = 0.0f64;
    let mut next_sample = every;
    while t < until {
        for f in flows.iter_mut() {
            if f.rc == 0.0 && t >= f.start && f.rt == 0.0 {
                f.rc = m.line_bps;
                f.rt = m.line_bps;
            }
        }
        hist.push_back((q, flows.iter().map(|f| f.rc).collect()));
        if hist.len() > lag + 1 {
            hist.pop_front();
        }
        let (q_del, rc_del) = hist.front().unwrap().clone();
        let p_del = m.p(q_del);
        let mut sum = 0.0;
        for (i, f) in flows.iter_mut().enumerate() {
            if f.rc == 0.0 {
                continue;
            }
            let (drc, drt, da) = m.flow_rhs(f.rc, f.rt, f.alpha, p_del, rc_del[i]);
            f.rc = (f.rc + h * drc).clamp(1.0, m.line_bps);
            f.rt = (f.rt + h * drt).clamp(f.rc, m.line_bps);
            f.alpha = (f.alpha + h * da).clamp(0.0, 1.0);
            sum += f.rc;
        }
        q = (q + h * (sum - m.capacity_bps)).max(0.0);
        t += h;
        if t >= next_sample {
            sample(t, q, &flows);
            next_sample += every;
        }
    }
}

/// The fixed point of N identical flows sharing the bottleneck: R_C* = C/N, and p*, R_T*, α*
/// from dR_T/dt = dR_C/dt = dα/dt = 0 (solved for p by bisection). Returns (p*, α*, R_T*).
pub fn fixed_point(m: &FluidParams, n: usize) -> (f64, f64, f64) {
    let rc = m.capacity_bps / n as f64;
    let r = rc / m.packet_bits;
    // For a given p: α(p) from dα = 0; R_T − R_C from dR_T = 0; the residual of dR_C.
    let parts = |p: f64| {
        let cut = 1.0 - FluidParams::pow(p, m.tau * r);
        let alpha = 1.0 - FluidParams::pow(p, m.tau_alpha * r);
        let bytes = FluidParams::event_rate(p, r, m.byte_counter_pkts);
        let timer = FluidParams::event_rate(p, r, m.timer * r);
        let ai = m.r_ai_bps
            * (bytes * FluidParams::pow(p, m.f * m.byte_counter_pkts)
                + timer * FluidParams::pow(p, m.f * m.timer * r));
        let gap = ai * m.tau / cut;
        let residual = -rc * alpha / (2.0 * m.tau) * cut + gap / 2.0 * (bytes + timer);
        (alpha, gap, residual)
    };
    // residual > 0 at tiny p (increase wins), < 0 at large p (cuts win)
    let (mut lo, mut hi) = (1e-12f64, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if parts(mid).2 > 0.0 { lo = mid } else { hi = mid }
    }
    let p = (lo * hi).sqrt();
    let (alpha, gap, _) = parts(p);
    (p, alpha, rc + gap)
}
