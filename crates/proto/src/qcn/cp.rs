//! The QCN congestion point: one per (egress port, CN priority) queue of a bridge.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

use crate::dcqcn::ParamError;

/// Parameters of a congestion point, named after the IEEE8021-CN-MIB objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpParams {
    /// `ieee8021CnCpQueueSizeSetPoint` (Qeq), octets.
    pub qeq_bytes: u64,
    /// `ieee8021CnCpFeedbackWeight`: w = 2^value.
    pub w_log2: i8,
    /// `ieee8021CnCpMinSampleBase`: octets between samples when there is no congestion.
    pub min_sample_base: u64,
    /// `ieee8021CnCpMinHeaderOctets`: octets of the sampled frame the CNM carries (for the
    /// driver that builds the CNM; the CP itself does not use it).
    pub min_header_octets: u8,
    /// `ieee8021CnCpIdentifier` (CPID), carried in the CNM.
    pub cpid: [u8; 8],
}

impl Default for CpParams {
    /// The MIB defaults: Qeq 26 000 octets, weight 1 (w = 2), sample base 150 000 octets, no
    /// header octets, CPID all zeros.
    fn default() -> Self {
        CpParams {
            qeq_bytes: 26_000,
            w_log2: 1,
            min_sample_base: 150_000,
            min_header_octets: 0,
            cpid: [0; 8],
        }
    }
}

impl CpParams {
    /// Checks every field against the MIB's ranges.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(100..=u64::from(u32::MAX)).contains(&self.qeq_bytes) {
            return Err(ParamError::new(
                "qeq_bytes",
                self.qeq_bytes,
                "100..=4294967295 octets",
            ));
        }
        if !(-10..=10).contains(&self.w_log2) {
            return Err(ParamError::new("w_log2", self.w_log2, "-10..=10 (w = 2^value)"));
        }
        if !(10_000..=u64::from(u32::MAX)).contains(&self.min_sample_base) {
            return Err(ParamError::new(
                "min_sample_base",
                self.min_sample_base,
                "10000..=4294967295 octets",
            ));
        }
        if self.min_header_octets > 64 {
            return Err(ParamError::new(
                "min_header_octets",
                self.min_header_octets,
                "0..=64",
            ));
        }
        Ok(())
    }
}

/// The feedback a CNM carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CnmFeedback {
    /// Quantised |Fb|, 1..=63 (6 bits).
    pub qntz_fb: u8,
    /// Qoff = Q − Qeq in units of 64 octets, saturated to 16 bits (unit unverified).
    pub q_offset: i16,
    /// Qδ = Q − Qold in units of 64 octets, saturated to 16 bits (unit unverified).
    pub q_delta: i16,
}

/// What a congestion point did, as counts (`ieee8021CnCp*` style).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpCounters {
    /// Frames enqueued and seen by the CP.
    pub enqueued_frames: u64,
    /// Frames sampled (feedback computed).
    pub sampled_frames: u64,
    /// `ieee8021CnCpTransmittedCnms`: samples that asked for a CNM.
    pub transmitted_cnms: u64,
}

/// The congestion point of one queue: samples enqueued frames and computes feedback.
#[derive(Clone, Debug)]
pub struct Cp {
    p: CpParams,
    /// `Qeq·(2w + 1)` times 1024 (so every w = 2^-10..2^10 is an integer).
    fb_max_1024: i128,
    qold: u64,
    to_sample: u64,
    rng: Option<Pcg32>,
    counters: CpCounters,
}

fn sat16(bytes: i128) -> i16 {
    (bytes / 64).clamp(i128::from(i16::MIN), i128::from(i16::MAX)) as i16
}

impl Cp {
    /// A congestion point whose sampling interval is drawn uniformly in 85..115 % of its
    /// nominal value (seeded: runs repeat).
    pub fn new(p: CpParams, seed: u64) -> Result<Self, ParamError> {
        Self::build(p, Some(Pcg32::seed_from_u64(seed)))
    }

    /// A congestion point that samples exactly every nominal interval (the Linux prototype's
    /// deterministic sampling); for checking feedback by hand.
    pub fn without_jitter(p: CpParams) -> Result<Self, ParamError> {
        Self::build(p, None)
    }

    fn build(p: CpParams, rng: Option<Pcg32>) -> Result<Self, ParamError> {
        p.validate()?;
        let w_1024 = 1i128 << (i32::from(p.w_log2) + 10);
        let mut cp = Cp {
            fb_max_1024: i128::from(p.qeq_bytes) * (2 * w_1024 + 1024),
            qold: 0,
            to_sample: 0,
            rng,
            counters: CpCounters::default(),
            p,
        };
        cp.to_sample = cp.interval(0);
        Ok(cp)
    }

    /// The parameters in use.
    pub fn params(&self) -> &CpParams {
        &self.p
    }

    /// Octets until the next sample.
    pub fn bytes_to_next_sample(&self) -> u64 {
        self.to_sample
    }

    /// The sampling interval after a sample with quantised feedback `qntz`: the sample base
    /// divided by 1 + ⌊qntz/8⌋ (150 KB, 75 KB, 50 KB … 18.75 KB), jittered if randomised.
    fn interval(&mut self, qntz: u8) -> u64 {
        let nominal = self.p.min_sample_base / (1 + u64::from(qntz / 8));
        match &mut self.rng {
            Some(rng) => rng.gen_range((nominal * 85).div_ceil(100)..=nominal * 115 / 100),
            None => nominal,
        }
    }

    /// A frame of `len` bytes enqueued, queue now `queue_bytes`: `Some` when this frame is
    /// sampled with Fb < 0 (send a CNM to its source), else `None`.
    pub fn on_enqueue(&mut self, len: u64, queue_bytes: u64) -> Option<CnmFeedback> {
        self.counters.enqueued_frames += 1;
        if len < self.to_sample {
            self.to_sample -= len;
            return None;
        }
        self.counters.sampled_frames += 1;
        let q = i128::from(queue_bytes);
        let q_off = q - i128::from(self.p.qeq_bytes);
        let q_delta = q - i128::from(self.qold);
        self.qold = queue_bytes;
        // Fb·1024 = −(Qoff + w·Qδ)·1024
        let fb_1024 = -(q_off * 1024 + q_delta * (1i128 << (i32::from(self.p.w_log2) + 10)));
        let qntz = if fb_1024 < 0 {
            let mag = (-fb_1024).min(self.fb_max_1024);
            // ⌈63·|Fb|/Fbmax⌉: 1..=63 for every Fb < 0
            (63 * mag + self.fb_max_1024 - 1) / self.fb_max_1024
        } else {
            0
        } as u8;
        self.to_sample = self.interval(qntz);
        if qntz == 0 {
            return None;
        }
        self.counters.transmitted_cnms += 1;
        Some(CnmFeedback {
            qntz_fb: qntz,
            q_offset: sat16(q_off),
            q_delta: sat16(q_delta),
        })
    }

    /// Counts so far.
    pub fn counters(&self) -> CpCounters {
        self.counters
    }
}
