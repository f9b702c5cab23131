//! Checks of a peer's DCBX TLVs against the rules our own configuration must meet
//! ([`super::DcbxConfig::validate`]): a TLV that breaks one is refused, never adopted, and
//! the refusal says which TLV and why (found and allowed).
//!
//! lldpad reports such a case as a feature error (`dcbtool go`: "Errors: 0x02 - local
//! configuration error", Oper Mode false) and keeps what it had programmed; the agent here
//! does the same per feature: see [`super::Agent`] for what Operational keeps.

use lossless_wire::lldp::{AppEntry, CeeAppEntry, CeePfc, CeePriorityGroups, EtsTables};
use serde::Serialize;

use super::cee::{self, PGID_STRICT};
use super::config::{AppPriority, EtsParams, PfcParams, ValueError};

/// One of the peer's DCBX TLVs (IEEE) or CEE feature sub-TLVs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerTlv {
    /// IEEE ETS Configuration TLV.
    EtsConfiguration,
    /// IEEE ETS Recommendation TLV.
    EtsRecommendation,
    /// IEEE PFC Configuration TLV.
    PfcConfiguration,
    /// IEEE Application Priority TLV.
    ApplicationPriority,
    /// CEE Priority Groups sub-TLV.
    CeePriorityGroups,
    /// CEE PFC sub-TLV.
    CeePfc,
    /// CEE Application sub-TLV.
    CeeApplication,
}

impl PeerTlv {
    /// The TLV's name as people read it.
    pub fn name(self) -> &'static str {
        match self {
            PeerTlv::EtsConfiguration => "ETS Configuration TLV",
            PeerTlv::EtsRecommendation => "ETS Recommendation TLV",
            PeerTlv::PfcConfiguration => "PFC Configuration TLV",
            PeerTlv::ApplicationPriority => "Application Priority TLV",
            PeerTlv::CeePriorityGroups => "CEE Priority Groups sub-TLV",
            PeerTlv::CeePfc => "CEE PFC sub-TLV",
            PeerTlv::CeeApplication => "CEE Application sub-TLV",
        }
    }

    /// Whether it is one of the IEEE 802.1Qaz TLVs (else a CEE sub-TLV).
    pub fn is_ieee(self) -> bool {
        matches!(
            self,
            PeerTlv::EtsConfiguration
                | PeerTlv::EtsRecommendation
                | PeerTlv::PfcConfiguration
                | PeerTlv::ApplicationPriority
        )
    }
}

/// A peer TLV that was refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Rejected {
    /// Which TLV.
    pub tlv: PeerTlv,
    /// What is wrong: the value found and what is allowed.
    pub reason: ValueError,
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "peer's {}: {}", self.tlv.name(), self.reason)
    }
}

/// ETS tables as sent (ETS Configuration or Recommendation): every TSA one 802.1Q defines
/// (reserved values are not read as "vendor"), then [`EtsParams::check`].
pub fn ets_tables(t: &EtsTables) -> Result<EtsParams, ValueError> {
    if let Some(tc) = t.tsa.iter().position(|a| a.name().is_none()) {
        return Err(ValueError::ReservedTsa {
            tc,
            value: t.tsa[tc].0,
        });
    }
    let p = EtsParams::from_tables(t);
    p.check()?;
    Ok(p)
}

/// A PFC Configuration TLV's parameters against the sender's priority table (its ETS
/// Configuration's, when it sent a valid one): [`PfcParams::check`].
pub fn pfc(p: PfcParams, up2tc: Option<&[u8; 8]>) -> Result<PfcParams, ValueError> {
    p.check(up2tc)?;
    Ok(p)
}

/// An Application Priority TLV's entries: selectors 1..=5 as in our configuration.
pub fn ieee_app(entries: impl Iterator<Item = AppEntry>) -> Result<Vec<AppPriority>, ValueError> {
    let mut out = Vec::new();
    for (i, e) in entries.enumerate() {
        if !(1..=5).contains(&e.selector) {
            return Err(ValueError::AppSelector {
                entry: i,
                selector: e.selector,
            });
        }
        out.push(AppPriority::from_wire(&e));
    }
    Ok(out)
}

/// A CEE Priority Groups sub-TLV: PGIDs 0..=7 or 15, and PG bandwidths summing to 100 when
/// any priority is in a bandwidth-limited group (0..=7).
pub fn cee_pg(pg: &CeePriorityGroups) -> Result<EtsParams, ValueError> {
    if let Some(p) = pg.pgid.iter().position(|&id| id > 7 && id != PGID_STRICT) {
        return Err(ValueError::PriorityGroup {
            priority: p,
            pgid: pg.pgid[p],
        });
    }
    let sum: u32 = pg.pg_bandwidth.iter().map(|&b| u32::from(b)).sum();
    if pg.pgid.iter().any(|&id| id != PGID_STRICT) && sum != 100 {
        return Err(ValueError::GroupBandwidthSum { sum });
    }
    Ok(cee::pg_to_ets(pg))
}

/// A CEE PFC sub-TLV against the sender's priority groups (when it sent valid ones).
pub fn cee_pfc(p: &CeePfc, up2tc: Option<&[u8; 8]>) -> Result<PfcParams, ValueError> {
    pfc(
        PfcParams {
            enable: p.admin_map,
            mbc: false,
            cap: p.num_tcs,
        },
        up2tc,
    )
}

/// A CEE Application sub-TLV's entries: selectors 0 (EtherType) or 1 (port); an entry with
/// an empty priority map names no priority and is skipped.
pub fn cee_app(entries: impl Iterator<Item = CeeAppEntry>) -> Result<Vec<AppPriority>, ValueError> {
    let mut out = Vec::new();
    for (i, e) in entries.enumerate() {
        if e.selector > 1 {
            return Err(ValueError::CeeAppSelector {
                entry: i,
                selector: e.selector,
            });
        }
        out.extend(cee::app_from_cee(&e));
    }
    Ok(out)
}
