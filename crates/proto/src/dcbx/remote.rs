//! The peer's DCBX information, read from its LLDP TLVs (IEEE 802.1Qaz and CEE). Every TLV is
//! checked as strictly as our own configuration ([`super::peer`]): one that fails is left out
//! and listed in [`Remote::rejected`] with the reason.

use lossless_wire::lldp::{CeeControl, CeeSubTlv, CeeTlv, Ieee8021Tlv, OrgTlv, Tlv};
use serde::Serialize;

use super::config::{AppPriority, EtsParams, PfcParams, ValueError};
use super::peer::{self, PeerTlv, Rejected};

/// The peer's IEEE ETS Configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RemoteEts {
    /// Willing bit.
    pub willing: bool,
    /// CBS bit.
    pub cbs: bool,
    /// MaxTCs (1..=8; 0 on the wire means 8).
    pub max_tcs: u8,
    /// Tables.
    pub params: EtsParams,
}

/// A peer's feature with its Willing bit (IEEE PFC, or a CEE feature).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemoteFeature<T> {
    /// CEE Enable flag (always true for IEEE).
    pub enabled: bool,
    /// Willing flag.
    pub willing: bool,
    /// CEE Error flag (always false for IEEE).
    pub error: bool,
    /// The configuration.
    pub value: T,
}

/// The peer's CEE DCBX TLV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemoteCee {
    /// Control sub-TLV: sequence and acknowledgement numbers.
    #[serde(serialize_with = "ser_control")]
    pub control: CeeControl,
    /// Priority Groups, as ETS tables.
    pub pg: Option<RemoteFeature<EtsParams>>,
    /// PFC.
    pub pfc: Option<RemoteFeature<PfcParams>>,
    /// Application.
    pub app: Option<RemoteFeature<Vec<AppPriority>>>,
}

fn ser_control<S: serde::Serializer>(c: &CeeControl, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("CeeControl", 4)?;
    st.serialize_field("oper_version", &c.oper_version)?;
    st.serialize_field("max_version", &c.max_version)?;
    st.serialize_field("seq", &c.seq)?;
    st.serialize_field("ack", &c.ack)?;
    st.end()
}

/// Everything DCBX-related the peer sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Remote {
    /// The peer's source MAC (the tie-break of symmetric features).
    #[serde(serialize_with = "ser_mac")]
    pub src_mac: [u8; 6],
    /// IEEE ETS Configuration.
    pub ets: Option<RemoteEts>,
    /// IEEE ETS Recommendation.
    pub ets_recommendation: Option<EtsParams>,
    /// IEEE PFC Configuration.
    pub pfc: Option<RemoteFeature<PfcParams>>,
    /// IEEE Application Priority table.
    pub app: Option<Vec<AppPriority>>,
    /// CEE DCBX TLV.
    pub cee: Option<RemoteCee>,
    /// The DCBX TLVs the peer sent that were refused (their fields above are `None`), in the
    /// order sent.
    pub rejected: Vec<Rejected>,
}

fn ser_mac<S: serde::Serializer>(m: &[u8; 6], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::lldp_agent::mac_text(m))
}

impl Remote {
    /// Reads the DCBX TLVs among a neighbour's TLVs; the first of each kind counts. A TLV
    /// whose values our own configuration could not have is refused: its field stays `None`
    /// and [`Remote::rejected`] says why.
    pub fn from_tlvs(src_mac: [u8; 6], tlvs: &[Tlv]) -> Self {
        let mut r = Remote {
            src_mac,
            ..Remote::default()
        };
        let mut seen = Vec::new();
        let mut first = |kind: PeerTlv| {
            let new = !seen.contains(&kind);
            seen.push(kind);
            new
        };
        // The peer's priority table, for its PFC capability: read before the PFC TLV wherever
        // it is in the LLDPDU.
        let up2tc = tlvs.iter().find_map(|t| match t {
            Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::EtsConfiguration(e))) => Some(e.tables),
            _ => None,
        });
        let up2tc = up2tc.and_then(|t| peer::ets_tables(&t).ok()).map(|p| p.up2tc);
        for t in tlvs {
            let Tlv::Org(org) = t else { continue };
            match org {
                OrgTlv::Ieee8021(Ieee8021Tlv::EtsConfiguration(e)) if first(PeerTlv::EtsConfiguration) => {
                    match peer::ets_tables(&e.tables) {
                        Ok(params) => {
                            r.ets = Some(RemoteEts {
                                willing: e.willing,
                                cbs: e.cbs,
                                max_tcs: e.max_tcs_count(),
                                params,
                            })
                        }
                        Err(reason) => r.reject(PeerTlv::EtsConfiguration, reason),
                    }
                }
                OrgTlv::Ieee8021(Ieee8021Tlv::EtsRecommendation(e)) if first(PeerTlv::EtsRecommendation) => {
                    match peer::ets_tables(&e.tables) {
                        Ok(params) => r.ets_recommendation = Some(params),
                        Err(reason) => r.reject(PeerTlv::EtsRecommendation, reason),
                    }
                }
                OrgTlv::Ieee8021(Ieee8021Tlv::PfcConfiguration(p)) if first(PeerTlv::PfcConfiguration) => {
                    match peer::pfc(PfcParams::from_wire(p), up2tc.as_ref()) {
                        Ok(value) => {
                            r.pfc = Some(RemoteFeature {
                                enabled: true,
                                willing: p.willing,
                                error: false,
                                value,
                            })
                        }
                        Err(reason) => r.reject(PeerTlv::PfcConfiguration, reason),
                    }
                }
                OrgTlv::Ieee8021(Ieee8021Tlv::ApplicationPriority(a))
                    if first(PeerTlv::ApplicationPriority) =>
                {
                    match peer::ieee_app(a.entries()) {
                        Ok(v) => r.app = Some(v),
                        Err(reason) => r.reject(PeerTlv::ApplicationPriority, reason),
                    }
                }
                OrgTlv::Cee(CeeTlv::Dcbx(d)) if r.cee.is_none() => {
                    r.cee = read_cee(&d.sub_tlvs, &mut r.rejected);
                }
                _ => {}
            }
        }
        r
    }

    fn reject(&mut self, tlv: PeerTlv, reason: ValueError) {
        self.rejected.push(Rejected { tlv, reason });
    }

    /// Whether the peer sent any IEEE DCBX TLV (refused ones included).
    pub fn has_ieee(&self) -> bool {
        self.ets.is_some()
            || self.ets_recommendation.is_some()
            || self.pfc.is_some()
            || self.app.is_some()
            || self.rejected.iter().any(|x| x.tlv.is_ieee())
    }

    /// Whether the peer's `tlv` was refused.
    pub fn is_rejected(&self, tlv: PeerTlv) -> bool {
        self.rejected.iter().any(|x| x.tlv == tlv)
    }
}

/// Reads a CEE DCBX TLV; `None` without a Control sub-TLV (the CEE spec requires it first).
/// Refused feature sub-TLVs go to `rejected`.
fn read_cee(subs: &[CeeSubTlv], rejected: &mut Vec<Rejected>) -> Option<RemoteCee> {
    let control = match subs.first() {
        Some(CeeSubTlv::Control(c)) => *c,
        _ => return None,
    };
    let mut r = RemoteCee {
        control,
        pg: None,
        pfc: None,
        app: None,
    };
    let (mut pg_seen, mut pfc_seen, mut app_seen) = (false, false, false);
    let mut reject = |tlv, reason| rejected.push(Rejected { tlv, reason });
    let up2tc = subs[1..].iter().find_map(|s| match s {
        CeeSubTlv::PriorityGroups(pg) => peer::cee_pg(pg).ok().map(|e| e.up2tc),
        _ => None,
    });
    for s in &subs[1..] {
        match s {
            CeeSubTlv::PriorityGroups(pg) if !pg_seen => {
                pg_seen = true;
                match peer::cee_pg(pg) {
                    Ok(value) => {
                        r.pg = Some(RemoteFeature {
                            enabled: pg.header.enabled,
                            willing: pg.header.willing,
                            error: pg.header.error,
                            value,
                        })
                    }
                    Err(reason) => reject(PeerTlv::CeePriorityGroups, reason),
                }
            }
            CeeSubTlv::Pfc(p) if !pfc_seen => {
                pfc_seen = true;
                match peer::cee_pfc(p, up2tc.as_ref()) {
                    Ok(value) => {
                        r.pfc = Some(RemoteFeature {
                            enabled: p.header.enabled,
                            willing: p.header.willing,
                            error: p.header.error,
                            value,
                        })
                    }
                    Err(reason) => reject(PeerTlv::CeePfc, reason),
                }
            }
            CeeSubTlv::Application(a) if !app_seen => {
                app_seen = true;
                match peer::cee_app(a.entries()) {
                    Ok(value) => {
                        r.app = Some(RemoteFeature {
                            enabled: a.header.enabled,
                            willing: a.header.willing,
                            error: a.header.error,
                            value,
                        })
                    }
                    Err(reason) => reject(PeerTlv::CeeApplication, reason),
                }
            }
            _ => {}
        }
    }
    Some(r)
}
