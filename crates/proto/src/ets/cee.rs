//! Validated CEE (DCBX 1.01) priority-group configuration: priority → PGID (0–7, or 15 for
//! strict priority without bandwidth limit), PG bandwidth %, and each priority's bandwidth %
//! inside its group — two-level scheduling.
//!
//! The CEE Priority Groups TLV carries PGIDs, PG percentages and NumTCs but no per-priority
//! share (lldpad keeps that, `uppct`, as local configuration only); [`CeeConfig::from_tlv`]
//! therefore shares each group equally among its priorities.

use lossless_wire::lldp::CeePriorityGroups;

/// PGID of a strict-priority priority (no bandwidth limit).
pub const PGID_STRICT: u8 = 15;

/// Why a CEE priority-group configuration is not valid; names the field and the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CeeConfigError {
    /// A PGID that is neither 0..=7 nor 15.
    #[error("pgid: priority {priority} has PGID {found}, allowed 0..=7 or 15 (strict)")]
    Pgid {
        /// The priority.
        priority: u8,
        /// The PGID found.
        found: u8,
    },
    /// A single percentage above 100.
    #[error("{field}: entry {index} is {found}%, allowed 0..=100")]
    Over100 {
        /// `pgpct` or `uppct`.
        field: &'static str,
        /// The PG or priority.
        index: u8,
        /// The value found.
        found: u8,
    },
    /// PG percentages that do not add up to 100.
    #[error("pgpct: the PG bandwidths sum to {found}%, they must sum to 100%")]
    PgSum {
        /// The sum found.
        found: u32,
    },
    /// Per-priority percentages of a group that do not add up to 100.
    #[error("uppct: the priorities of PG {pg} have shares summing to {found}%, they must sum to 100%")]
    PrioritySum {
        /// The priority group.
        pg: u8,
        /// The sum found.
        found: u32,
    },
    /// More groups in use than traffic classes to carry them.
    #[error("pgid: {found} priority groups are in use but NumTCs is {num_tcs}; each group needs a TC")]
    TooManyGroups {
        /// Groups in use (PGIDs 0..=7 that have a priority).
        found: u8,
        /// The NumTCs given.
        num_tcs: u8,
    },
}

/// A validated CEE priority-group configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CeeConfig {
    pgid: [u8; 8],
    pg_bandwidth: [u8; 8],
    prio_bandwidth: [u8; 8],
}

impl CeeConfig {
    /// Validates a configuration: PGIDs 0..=7 or 15; PG percentages summing to 100; in each
    /// group that has priorities, their percentages summing to 100 (strict priorities'
    /// percentages are ignored); with `num_tcs` 1..=8, at most that many groups in use
    /// (0 = no limit given).
    pub fn new(
        pgid: [u8; 8],
        pg_bandwidth: [u8; 8],
        prio_bandwidth: [u8; 8],
        num_tcs: u8,
    ) -> Result<Self, CeeConfigError> {
        let mut used = 0u8;
        for (p, &g) in pgid.iter().enumerate() {
            if g > 7 && g != PGID_STRICT {
                return Err(CeeConfigError::Pgid {
                    priority: p as u8,
                    found: g,
                });
            }
            if g <= 7 {
                used |= 1 << g;
            }
        }
        let mut sum = 0u32;
        for (g, &b) in pg_bandwidth.iter().enumerate() {
            if b > 100 {
                return Err(CeeConfigError::Over100 {
                    field: "pgpct",
                    index: g as u8,
                    found: b,
                });
            }
            sum += u32::from(b);
        }
        if sum != 100 {
            return Err(CeeConfigError::PgSum { found: sum });
        }
        let mut group_sum = [0u32; 8];
        for (p, &b) in prio_bandwidth.iter().enumerate() {
            if b > 100 {
                return Err(CeeConfigError::Over100 {
                    field: "uppct",
                    index: p as u8,
                    found: b,
                });
            }
            if pgid[p] <= 7 {
                group_sum[usize::from(pgid[p])] += u32::from(b);
            }
        }
        for g in 0..8u8 {
            if used & (1 << g) != 0 && group_sum[usize::from(g)] != 100 {
                return Err(CeeConfigError::PrioritySum {
                    pg: g,
                    found: group_sum[usize::from(g)],
                });
            }
        }
        let groups = used.count_ones() as u8;
        if (1..=8).contains(&num_tcs) && groups > num_tcs {
            return Err(CeeConfigError::TooManyGroups {
                found: groups,
                num_tcs,
            });
        }
        Ok(CeeConfig {
            pgid,
            pg_bandwidth,
            prio_bandwidth,
        })
    }

    /// Validates a configuration whose priorities share their group equally (the lower
    /// priorities get the remainder, e.g. 34/33/33).
    pub fn with_equal_priority_shares(
        pgid: [u8; 8],
        pg_bandwidth: [u8; 8],
        num_tcs: u8,
    ) -> Result<Self, CeeConfigError> {
        let mut share = [0u8; 8];
        for g in 0..8u8 {
            let n = pgid.iter().filter(|&&x| x == g).count() as u8;
            if n == 0 {
                continue;
            }
            let mut extra = 100 % n;
            for (p, &x) in pgid.iter().enumerate() {
                if x == g {
                    share[p] = 100 / n + u8::from(extra > 0);
                    extra = extra.saturating_sub(1);
                }
            }
        }
        CeeConfig::new(pgid, pg_bandwidth, share, num_tcs)
    }

    /// Validates a received CEE Priority Groups sub-TLV (equal shares inside each group).
    pub fn from_tlv(pg: &CeePriorityGroups) -> Result<Self, CeeConfigError> {
        CeeConfig::with_equal_priority_shares(pg.pgid, pg.pg_bandwidth, pg.num_tcs)
    }

    /// PGID of each priority (15 = strict).
    pub const fn pgid(&self) -> [u8; 8] {
        self.pgid
    }
    /// Bandwidth percentage of each priority group.
    pub const fn pg_bandwidth(&self) -> [u8; 8] {
        self.pg_bandwidth
    }
    /// Bandwidth percentage of each priority inside its group.
    pub const fn prio_bandwidth(&self) -> [u8; 8] {
        self.prio_bandwidth
    }
}
