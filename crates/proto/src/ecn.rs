//! RED-style ECN marking at a switch egress queue (the DCQCN congestion point).
//!
//! One [`EcnMarker`] per (egress port, priority) queue. For every ECN-capable packet the
//! driver passes the queue length the marking point reads and the marker answers "set CE?":
//!
//! - `q ≤ Kmin`: never;
//! - `Kmin < q ≤ Kmax`: with probability `Pmax·(q − Kmin)/(Kmax − Kmin)`;
//! - `q > Kmax`: always.
//!
//! This is the rule of the HPCC ns-3 reference (`SwitchMmu::ShouldSendCN`, MODEL.md §5) and of
//! NVIDIA's description of the DCQCN congestion point. `Kmin = Kmax` gives DCTCP's single
//! threshold (mark iff `q > K`).
//!
//! **Which queue length.** [`MarkPoint::Dequeue`] is what the reference does: the packet is
//! marked when it starts to leave, against the bytes of its class left behind it (the
//! departing packet already taken out). [`MarkPoint::Enqueue`] reads the bytes ahead of an
//! arriving packet, as switch ASICs that mark on admission do. The marker does not measure the
//! queue itself; [`EcnMarker::point`] tells the driver which length to pass.
//!
//! **Randomness.** Each marker owns a PCG-32 generator seeded at creation, so runs repeat
//! exactly. A draw is taken only between the thresholds (as in the reference), and the
//! decision is `r·(Kmax − Kmin) < P·(q − Kmin)` with `r` a uniform 32-bit integer and `P` =
//! `Pmax` in units of 2⁻³², all in integers: for one draw, marking is monotone in `q`, and the
//! probability is exact to 2⁻³².

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

use crate::units::Rate;

/// Where in the queue the marking decision is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    /// When a packet is admitted, against the bytes queued ahead of it.
    Enqueue,
    /// When a packet starts to leave, against the bytes left behind it (HPCC ns-3).
    Dequeue,
}

/// RED thresholds of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    /// Queue length (bytes) at or below which nothing is marked.
    pub kmin_bytes: u64,
    /// Queue length (bytes) above which everything is marked.
    pub kmax_bytes: u64,
    /// Marking probability just at `kmax_bytes` (0..=1).
    pub pmax: f64,
    /// Which queue length the decision reads.
    pub point: MarkPoint,
}

/// Why an [`EcnConfig`] was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EcnConfigError {
    /// `kmin_bytes` is above `kmax_bytes`.
    #[error("kmin_bytes: found {kmin}, allowed 0..=kmax_bytes ({kmax})")]
    KminAboveKmax {
        /// The `kmin_bytes` given.
        kmin: u64,
        /// The `kmax_bytes` given.
        kmax: u64,
    },
    /// `pmax` is not a probability.
    #[error("pmax: found {found}, allowed a number in 0..=1")]
    Pmax {
        /// The `pmax` given.
        found: f64,
    },
}

/// Fixed-point one for probabilities: 2³².
const P_ONE: u64 = 1 << 32;

impl EcnConfig {
    /// The HPCC ns-3 reference's thresholds for a port of `rate` (run.py: Kmin = 100 KB and
    /// Kmax = 400 KB per 25 Gb/s, KB of 1000 bytes, Pmax 0.2), marking at dequeue.
    pub fn hpcc_ns3(rate: Rate) -> Self {
        let per_25g = |kb: u64| (u128::from(kb) * 1000 * u128::from(rate.bps()) / 25_000_000_000) as u64;
        EcnConfig {
            kmin_bytes: per_25g(100),
            kmax_bytes: per_25g(400),
            pmax: 0.2,
            point: MarkPoint::Dequeue,
        }
    }

    /// The values usually cited for the DCQCN paper's 40 Gb/s testbed: Kmin 5 KB, Kmax 200 KB,
    /// Pmax 1 %, marking at enqueue. **Unverified**: the paper was not reachable; the
    /// reproductions in the facts file disagree (congestion-notification.md §2.1).
    pub fn dcqcn_paper() -> Self {
        EcnConfig {
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            pmax: 0.01,
            point: MarkPoint::Enqueue,
        }
    }

    /// Checks the thresholds and the probability.
    pub fn validate(&self) -> Result<(), EcnConfigError> {
        if self.kmin_bytes > self.kmax_bytes {
            return Err(EcnConfigError::KminAboveKmax {
                kmin: self.kmin_bytes,
                kmax: self.kmax_bytes,
            });
        }
        if !(self.pmax.is_finite() && (0.0..=1.0).contains(&self.pmax)) {
            return Err(EcnConfigError::Pmax { found: self.pmax });
        }
        Ok(())
    }
}

/// Marking decisions of one marker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcnCounters {
    /// ECN-capable packets marked CE.
    pub marked: u64,
    /// ECN-capable packets left unmarked.
    pub not_marked: u64,
}

/// The RED marker of one egress queue, with its own seeded generator.
#[derive(Clone, Debug)]
pub struct EcnMarker {
    kmin: u64,
    kmax: u64,
    /// `Pmax` in units of 2⁻³² (0..=2³²).
    pmax: u64,
    point: MarkPoint,
    rng: Pcg32,
    counters: EcnCounters,
}

impl EcnMarker {
    /// A marker for one queue, or why the thresholds are unusable.
    pub fn new(cfg: EcnConfig, seed: u64) -> Result<Self, EcnConfigError> {
        cfg.validate()?;
        // Rounded to the nearest 2^-32; 1.0 maps to exactly 2^32.
        let pmax = (cfg.pmax * P_ONE as f64).round() as u64;
        Ok(EcnMarker {
            kmin: cfg.kmin_bytes,
            kmax: cfg.kmax_bytes,
            pmax: pmax.min(P_ONE),
            point: cfg.point,
            rng: Pcg32::seed_from_u64(seed),
            counters: EcnCounters::default(),
        })
    }

    /// Which queue length [`decide`](Self::decide) expects.
    pub fn point(&self) -> MarkPoint {
        self.point
    }

    /// The RED decision for one ECN-capable packet, given the queue length in bytes that the
    /// marking point reads (at dequeue the bytes left behind the departing packet, at enqueue
    /// the bytes ahead of the arriving one): `true` = set CE.
    pub fn decide(&mut self, queue_bytes: u64) -> bool {
        let mark = if queue_bytes <= self.kmin {
            false
        } else if queue_bytes > self.kmax {
            true
        } else {
            // Kmin < q <= Kmax, so Kmax > Kmin here.
            let r = u128::from(self.rng.next_u32());
            let span = u128::from(self.kmax - self.kmin);
            r * span < u128::from(self.pmax) * u128::from(queue_bytes - self.kmin)
        };
        if mark {
            self.counters.marked += 1;
        } else {
            self.counters.not_marked += 1;
        }
        mark
    }

    /// Marked and unmarked packets so far.
    pub fn counters(&self) -> EcnCounters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hpcc_thresholds_scale_with_the_port_rate() {
        let c = EcnConfig::hpcc_ns3(Rate::from_gbps(100));
        assert_eq!((c.kmin_bytes, c.kmax_bytes), (400_000, 1_600_000));
        let c = EcnConfig::hpcc_ns3(Rate::from_gbps(400));
        assert_eq!((c.kmin_bytes, c.kmax_bytes), (1_600_000, 6_400_000));
    }

    #[test]
    fn bad_configs_name_the_field() {
        let mut c = EcnConfig::dcqcn_paper();
        c.kmin_bytes = 300_000;
        let e = EcnMarker::new(c, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kmin_bytes: found 300000, allowed 0..=kmax_bytes (200000)"
        );
        let mut c = EcnConfig::dcqcn_paper();
        c.pmax = f64::NAN;
        assert!(
            EcnMarker::new(c, 1)
                .unwrap_err()
                .to_string()
                .starts_with("pmax: found NaN")
        );
        c.pmax = 1.5;
        assert!(EcnMarker::new(c, 1).is_err());
    }

    #[test]
    fn equal_thresholds_are_a_step_at_k() {
        let cfg = EcnConfig {
            kmin_bytes: 1000,
            kmax_bytes: 1000,
            pmax: 1.0,
            point: MarkPoint::Enqueue,
        };
        let mut m = EcnMarker::new(cfg, 3).unwrap();
        assert!(!m.decide(1000));
        assert!(m.decide(1001));
        assert_eq!(
            m.counters(),
            EcnCounters {
                marked: 1,
                not_marked: 1
            }
        );
    }

    #[test]
    fn pmax_one_marks_everything_just_below_kmax() {
        let cfg = EcnConfig {
            kmin_bytes: 0,
            kmax_bytes: 1000,
            pmax: 1.0,
            point: MarkPoint::Dequeue,
        };
        let mut m = EcnMarker::new(cfg, 9).unwrap();
        assert!((0..1000).all(|_| m.decide(1000)));
    }
}
