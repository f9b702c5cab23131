//! The DCQCN notification point: one per receiving QP.

use serde::{Deserialize, Serialize};

use super::params::{CnpMode, NpParams};
use crate::units::Instant;

/// What a notification point did, as counts (mlx5 names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpCounters {
    /// mlx5 `np_ecn_marked_roce_packets`: CE-marked packets received.
    pub np_ecn_marked_roce_packets: u64,
    /// mlx5 `np_cnp_sent`: CNPs sent (`AckFlag`: ACKs flagged).
    pub np_cnp_sent: u64,
    /// CE-marked packets that got no CNP of their own (rate limit; a late CNP may cover them).
    pub cnps_suppressed: u64,
}

/// The notification point of one receiving QP: decides when a CE-marked packet gets a CNP.
#[derive(Clone, Debug)]
pub struct Np {
    p: NpParams,
    last_cnp: Option<Instant>,
    late_at: Option<Instant>,
    counters: NpCounters,
}

impl Np {
    /// A notification point with no CNP sent yet.
    pub fn new(p: NpParams) -> Self {
        Np {
            p,
            last_cnp: None,
            late_at: None,
            counters: NpCounters::default(),
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &NpParams {
        &self.p
    }

    /// A CE-marked packet of this QP arrived at `now`: `true` = send a CNP now (`AckFlag`: set
    /// the CNP flag on this packet's ACK).
    pub fn on_ce(&mut self, now: Instant) -> bool {
        self.counters.np_ecn_marked_roce_packets += 1;
        if self.p.mode == CnpMode::AckFlag {
            self.counters.np_cnp_sent += 1;
            return true;
        }
        if let Some(at) = self.late_at
            && at <= now
        {
            // The late CNP was due and the driver did not ask: it goes now and covers this CE.
            self.late_at = None;
            self.last_cnp = Some(now);
            self.counters.np_cnp_sent += 1;
            return true;
        }
        match self.last_cnp {
            Some(last) if now < last.saturating_add(self.p.min_time_between_cnps) => {
                self.counters.cnps_suppressed += 1;
                if self.p.late_cnp && self.late_at.is_none() {
                    self.late_at = Some(last.saturating_add(self.p.min_time_between_cnps));
                }
                false
            }
            _ => {
                self.last_cnp = Some(now);
                self.counters.np_cnp_sent += 1;
                true
            }
        }
    }

    /// When a late CNP is due (`late_cnp`), else `None`.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.late_at
    }

    /// At `now`: `true` = send the late CNP now.
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        match self.late_at {
            Some(at) if at <= now => {
                self.late_at = None;
                self.last_cnp = Some(at);
                self.counters.np_cnp_sent += 1;
                true
            }
            _ => false,
        }
    }

    /// Counts so far.
    pub fn counters(&self) -> NpCounters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    #[test]
    fn connectx_sends_at_most_one_cnp_per_interval_and_drops_the_rest() {
        let mut np = Np::new(NpParams::connectx());
        assert!(np.on_ce(us(10)));
        assert!(!np.on_ce(us(11)));
        assert!(!np.on_ce(us(13)));
        assert_eq!(np.poll_timeout(), None);
        assert!(np.on_ce(us(14)));
        assert_eq!(
            np.counters(),
            NpCounters {
                np_ecn_marked_roce_packets: 4,
                np_cnp_sent: 2,
                cnps_suppressed: 2
            }
        );
    }

    #[test]
    fn paper_sends_one_late_cnp_at_the_end_of_the_interval() {
        let mut np = Np::new(NpParams::paper());
        assert!(np.on_ce(us(0)));
        assert!(!np.on_ce(us(10)));
        assert!(!np.on_ce(us(20)));
        assert_eq!(np.poll_timeout(), Some(us(50)));
        assert!(!np.handle_timeout(us(49)));
        assert!(np.handle_timeout(us(50)));
        assert_eq!(np.poll_timeout(), None);
        // the next window counts from the late CNP
        assert!(!np.on_ce(us(99)));
        assert_eq!(np.poll_timeout(), Some(us(100)));
        assert_eq!(np.counters().np_cnp_sent, 2);
    }

    #[test]
    fn hpcc_flags_every_marked_packet() {
        let mut np = Np::new(NpParams::hpcc_ns3());
        assert!((0..5).all(|i| np.on_ce(us(0) + Duration::from_ns(i))));
        assert_eq!(np.counters().np_cnp_sent, 5);
    }
}
