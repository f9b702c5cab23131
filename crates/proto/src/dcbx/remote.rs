//! The peer's DCBX information, read from its LLDP TLVs (IEEE 802.1Qaz and CEE).

use lossless_wire::lldp::{CeeControl, CeeSubTlv, CeeTlv, Ieee8021Tlv, OrgTlv, Tlv};
use serde::Serialize;

use super::cee;
use super::config::{AppPriority, EtsParams, PfcParams};

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
}

fn ser_mac<S: serde::Serializer>(m: &[u8; 6], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::lldp_agent::mac_text(m))
}

impl Remote {
    /// Reads the DCBX TLVs among a neighbour's TLVs; the first of each kind counts.
    pub fn from_tlvs(src_mac: [u8; 6], tlvs: &[Tlv]) -> Self {
        let mut r = Remote {
            src_mac,
            ..Remote::default()
        };
        for t in tlvs {
            let Tlv::Org(org) = t else { continue };
            match org {
                OrgTlv::Ieee8021(Ieee8021Tlv::EtsConfiguration(e)) if r.ets.is_none() => {
                    r.ets = Some(RemoteEts {
                        willing: e.willing,
                        cbs: e.cbs,
                        max_tcs: e.max_tcs_count(),
                        params: EtsParams::from_tables(&e.tables),
                    });
                }
                OrgTlv::Ieee8021(Ieee8021Tlv::EtsRecommendation(e)) if r.ets_recommendation.is_none() => {
                    r.ets_recommendation = Some(EtsParams::from_tables(&e.tables));
                }
                OrgTlv::Ieee8021(Ieee8021Tlv::PfcConfiguration(p)) if r.pfc.is_none() => {
                    r.pfc = Some(RemoteFeature {
                        enabled: true,
                        willing: p.willing,
                        error: false,
                        value: PfcParams::from_wire(p),
                    });
                }
                OrgTlv::Ieee8021(Ieee8021Tlv::ApplicationPriority(a)) if r.app.is_none() => {
                    r.app = Some(a.entries().map(|e| AppPriority::from_wire(&e)).collect());
                }
                OrgTlv::Cee(CeeTlv::Dcbx(d)) if r.cee.is_none() => {
                    r.cee = read_cee(&d.sub_tlvs);
                }
                _ => {}
            }
        }
        r
    }

    /// Whether the peer sent any IEEE DCBX TLV.
    pub fn has_ieee(&self) -> bool {
        self.ets.is_some() || self.ets_recommendation.is_some() || self.pfc.is_some() || self.app.is_some()
    }
}

/// Reads a CEE DCBX TLV; `None` without a Control sub-TLV (the CEE spec requires it first).
fn read_cee(subs: &[CeeSubTlv]) -> Option<RemoteCee> {
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
    for s in &subs[1..] {
        match s {
            CeeSubTlv::PriorityGroups(pg) if r.pg.is_none() => {
                r.pg = Some(RemoteFeature {
                    enabled: pg.header.enabled,
                    willing: pg.header.willing,
                    error: pg.header.error,
                    value: cee::pg_to_ets(pg),
                });
            }
            CeeSubTlv::Pfc(p) if r.pfc.is_none() => {
                r.pfc = Some(RemoteFeature {
                    enabled: p.header.enabled,
                    willing: p.header.willing,
                    error: p.header.error,
                    value: PfcParams {
                        enable: p.admin_map,
                        mbc: false,
                        cap: p.num_tcs,
                    },
                });
            }
            CeeSubTlv::Application(a) if r.app.is_none() => {
                r.app = Some(RemoteFeature {
                    enabled: a.header.enabled,
                    willing: a.header.willing,
                    error: a.header.error,
                    value: a.entries().filter_map(|e| cee::app_from_cee(&e)).collect(),
                });
            }
            _ => {}
        }
    }
    Some(r)
}
