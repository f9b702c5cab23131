//! Validated IEEE 802.1Qaz ETS configuration: priority → traffic class map, the transmission
//! selection algorithm of each traffic class and the ETS bandwidth percentages, with MaxTCs.

use lossless_wire::lldp::{EtsConfiguration, EtsRecommendation, EtsTables, Tsa};

/// Transmission selection algorithm of a traffic class that this scheduler can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// Strict priority (802.1Q 8.6.8.1, TSA 0).
    #[default]
    Strict,
    /// Credit-based shaper (802.1Qav, TSA 1); its idleSlope is set on the scheduler.
    CreditBasedShaper,
    /// Enhanced transmission selection with a bandwidth percentage (802.1Qaz, TSA 2).
    Ets,
}

impl Algorithm {
    /// The algorithm's TSA number as sent in the ETS TLVs.
    pub const fn tsa(self) -> Tsa {
        match self {
            Algorithm::Strict => Tsa::STRICT,
            Algorithm::CreditBasedShaper => Tsa::CREDIT_BASED_SHAPER,
            Algorithm::Ets => Tsa::ETS,
        }
    }
    /// The name lldptool and `dcb ets` print (`strict`, `cbs`, `ets`).
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Strict => "strict",
            Algorithm::CreditBasedShaper => "cbs",
            Algorithm::Ets => "ets",
        }
    }
}

/// Why an ETS configuration is not valid; each message names the field and the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EtsConfigError {
    /// MaxTCs outside 1..=8.
    #[error("max_tcs: found {found}, allowed 1..=8")]
    MaxTcs {
        /// The value given.
        found: u8,
    },
    /// A priority has no traffic class.
    #[error(
        "up2tc/prio-tc: priority {priority} is mapped to no traffic class; every priority 0..=7 needs one"
    )]
    PriorityMappedNowhere {
        /// The unmapped priority.
        priority: u8,
    },
    /// A priority is mapped to a traffic class at or beyond MaxTCs.
    #[error("up2tc/prio-tc: priority {priority} is mapped to TC {tc}, allowed 0..={max} (MaxTCs {max_tcs})", max = max_tcs - 1)]
    PriorityTcBeyondMaxTcs {
        /// The priority.
        priority: u8,
        /// Its traffic class.
        tc: u8,
        /// The number of traffic classes supported.
        max_tcs: u8,
    },
    /// A traffic class at or beyond MaxTCs has bandwidth.
    #[error("tcbw/tc-bw: TC {tc} has {bandwidth}% but only TCs 0..={max} exist (MaxTCs {max_tcs})", max = max_tcs - 1)]
    BandwidthBeyondMaxTcs {
        /// The traffic class.
        tc: u8,
        /// Its bandwidth percentage.
        bandwidth: u8,
        /// The number of traffic classes supported.
        max_tcs: u8,
    },
    /// The vendor-specific TSA (255) has no defined behaviour to run.
    #[error(
        "tsa/tc-tsa: TC {tc} uses the vendor-specific algorithm (255), which has no standard behaviour; allowed: strict, cbs, ets"
    )]
    VendorTsa {
        /// The traffic class.
        tc: u8,
    },
    /// A reserved TSA number.
    #[error(
        "tsa/tc-tsa: TC {tc} has reserved algorithm number {value}; allowed 0 (strict), 1 (cbs), 2 (ets)"
    )]
    ReservedTsa {
        /// The traffic class.
        tc: u8,
        /// The number found.
        value: u8,
    },
    /// A single bandwidth above 100 %.
    #[error("tcbw/tc-bw: TC {tc} has {found}%, allowed 0..=100")]
    BandwidthOver100 {
        /// The traffic class.
        tc: u8,
        /// The percentage found.
        found: u8,
    },
    /// Bandwidth given to a strict or CBS traffic class.
    #[error(
        "tcbw/tc-bw: TC {tc} uses {algorithm} and has {bandwidth}%; bandwidth applies to ETS TCs only, allowed 0"
    )]
    BandwidthOnNonEts {
        /// The traffic class.
        tc: u8,
        /// Its algorithm name.
        algorithm: &'static str,
        /// Its bandwidth percentage.
        bandwidth: u8,
    },
    /// ETS bandwidths that do not add up to 100.
    #[error("tcbw/tc-bw: the bandwidths of the ETS TCs sum to {found}%, they must sum to 100%")]
    BandwidthSum {
        /// The sum found.
        found: u32,
    },
}

/// A validated 802.1Qaz ETS configuration (what the ETS Configuration TLV, lldptool's
/// `tsa`/`up2tc`/`tcbw` and `dcb ets` describe).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EtsConfig {
    max_tcs: u8,
    prio_tc: [u8; 8],
    algorithm: [Algorithm; 8],
    bandwidth: [u8; 8],
}

impl EtsConfig {
    /// Validates a configuration given as the TLV gives it. TCs at or beyond `max_tcs` may
    /// carry any algorithm (it is ignored) but no bandwidth and no priority. When at least
    /// one usable TC is ETS, the ETS bandwidths sum to 100; non-ETS TCs have 0 %.
    pub fn new(
        max_tcs: u8,
        prio_tc: [Option<u8>; 8],
        tsa: [Tsa; 8],
        bandwidth: [u8; 8],
    ) -> Result<Self, EtsConfigError> {
        if !(1..=8).contains(&max_tcs) {
            return Err(EtsConfigError::MaxTcs { found: max_tcs });
        }
        let mut map = [0u8; 8];
        for (p, tc) in prio_tc.iter().enumerate() {
            let priority = p as u8;
            let tc = tc.ok_or(EtsConfigError::PriorityMappedNowhere { priority })?;
            if tc >= max_tcs {
                return Err(EtsConfigError::PriorityTcBeyondMaxTcs {
                    priority,
                    tc,
                    max_tcs,
                });
            }
            map[p] = tc;
        }
        let mut algorithm = [Algorithm::Strict; 8];
        let mut sum = 0u32;
        let mut any_ets = false;
        for tc in 0..8u8 {
            let i = usize::from(tc);
            let bw = bandwidth[i];
            if bw > 100 {
                return Err(EtsConfigError::BandwidthOver100 { tc, found: bw });
            }
            if tc >= max_tcs {
                if bw != 0 {
                    return Err(EtsConfigError::BandwidthBeyondMaxTcs {
                        tc,
                        bandwidth: bw,
                        max_tcs,
                    });
                }
                continue;
            }
            algorithm[i] = match tsa[i] {
                Tsa::STRICT => Algorithm::Strict,
                Tsa::CREDIT_BASED_SHAPER => Algorithm::CreditBasedShaper,
                Tsa::ETS => Algorithm::Ets,
                Tsa::VENDOR => return Err(EtsConfigError::VendorTsa { tc }),
                Tsa(value) => return Err(EtsConfigError::ReservedTsa { tc, value }),
            };
            if algorithm[i] == Algorithm::Ets {
                any_ets = true;
                sum += u32::from(bw);
            } else if bw != 0 {
                return Err(EtsConfigError::BandwidthOnNonEts {
                    tc,
                    algorithm: algorithm[i].name(),
                    bandwidth: bw,
                });
            }
        }
        if any_ets && sum != 100 {
            return Err(EtsConfigError::BandwidthSum { found: sum });
        }
        let mut bw = [0u8; 8];
        bw[..usize::from(max_tcs)].copy_from_slice(&bandwidth[..usize::from(max_tcs)]);
        Ok(EtsConfig {
            max_tcs,
            prio_tc: map,
            algorithm,
            bandwidth: bw,
        })
    }

    /// Validates the tables of an ETS TLV with the given MaxTCs.
    pub fn from_tables(max_tcs: u8, t: &EtsTables) -> Result<Self, EtsConfigError> {
        EtsConfig::new(max_tcs, t.priority_tc.map(Some), t.tsa, t.tc_bandwidth)
    }

    /// Validates a received ETS Configuration TLV (its Max TCs field, 0 meaning 8).
    pub fn from_configuration_tlv(tlv: &EtsConfiguration) -> Result<Self, EtsConfigError> {
        EtsConfig::from_tables(tlv.max_tcs_count(), &tlv.tables)
    }

    /// Validates a received ETS Recommendation TLV (which carries no MaxTCs: 8 is assumed,
    /// as lldpad does for the recommendation).
    pub fn from_recommendation_tlv(tlv: &EtsRecommendation) -> Result<Self, EtsConfigError> {
        EtsConfig::from_tables(8, &tlv.tables)
    }

    /// The tables to send in an ETS Configuration or Recommendation TLV.
    pub fn to_tables(&self) -> EtsTables {
        EtsTables {
            priority_tc: self.prio_tc,
            tc_bandwidth: self.bandwidth,
            tsa: self.algorithm.map(Algorithm::tsa),
        }
    }

    /// Number of traffic classes supported (1..=8).
    pub const fn max_tcs(&self) -> u8 {
        self.max_tcs
    }
    /// Traffic class of each priority (index = priority).
    pub const fn prio_tc(&self) -> [u8; 8] {
        self.prio_tc
    }
    /// Algorithm of each traffic class (TCs beyond MaxTCs read as strict and are unused).
    pub const fn algorithm(&self) -> [Algorithm; 8] {
        self.algorithm
    }
    /// ETS bandwidth percentage of each traffic class (0 for non-ETS TCs).
    pub const fn bandwidth(&self) -> [u8; 8] {
        self.bandwidth
    }
    /// Priorities mapped to traffic class `tc`, as a bitmap (bit n = priority n).
    pub fn priorities_of(&self, tc: u8) -> u8 {
        let mut m = 0;
        for (p, &t) in self.prio_tc.iter().enumerate() {
            if t == tc {
                m |= 1 << p;
            }
        }
        m
    }
}
