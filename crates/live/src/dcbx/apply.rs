//! `dcbx run --apply`: the negotiated (Operational) configuration as the dcbnl
//! DCB_CMD_IEEE_SET that programs it into the NIC, sans-IO ([`operational_set`]).

use lossless_proto::dcbx::Operational;
use lossless_proto::dcbx::negotiate::OperPfc;

use crate::netlink::dcbnl::{DcbApp, DcbSet, IeeeEts, IeeePfc};

/// The DCB_CMD_IEEE_SET carrying `op`: ETS (`prio_tc` = up2tc, `tc_tx_bw` = tcbw, `tc_tsa`),
/// PFC (the agreed enable vector, MBC and capability; none enabled when PFC is not
/// operational) and the application priorities.
pub fn operational_set(op: &Operational) -> DcbSet {
    let p = &op.ets.params;
    let mut tc_tsa = [0u8; 8];
    for (t, n) in tc_tsa.iter_mut().zip(p.tsa) {
        *t = n.to_wire().0;
    }
    let ets = IeeeEts {
        prio_tc: p.up2tc,
        tc_tx_bw: p.tcbw,
        tc_tsa,
        ..Default::default()
    };
    let pfc = match &op.pfc {
        OperPfc::Operational { params, .. } => IeeePfc {
            pfc_cap: params.cap,
            pfc_en: params.enable,
            mbc: u8::from(params.mbc),
            ..Default::default()
        },
        OperPfc::NotOperational { .. } => IeeePfc::default(),
    };
    DcbSet {
        ets: Some(ets),
        pfc: Some(pfc),
        apps: op
            .app
            .iter()
            .map(|a| DcbApp {
                selector: a.selector,
                priority: a.priority,
                protocol: a.protocol,
            })
            .collect(),
        apptrust: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_proto::dcbx::negotiate::{OperEts, Source};
    use lossless_proto::dcbx::{AppPriority, EtsParams, Mode, PfcParams, TsaName};

    fn op(pfc: OperPfc) -> Operational {
        Operational {
            mode: Mode::Ieee,
            ets: OperEts {
                params: EtsParams {
                    up2tc: [0, 0, 0, 1, 0, 0, 0, 0],
                    tcbw: [50, 50, 0, 0, 0, 0, 0, 0],
                    tsa: [
                        TsaName::Ets,
                        TsaName::Ets,
                        TsaName::Strict,
                        TsaName::Strict,
                        TsaName::Strict,
                        TsaName::Strict,
                        TsaName::Strict,
                        TsaName::Vendor,
                    ],
                },
                source: Source::Peer,
                error: false,
            },
            pfc,
            app: vec![AppPriority {
                selector: 5,
                protocol: 26,
                priority: 3,
            }],
            cee_synced: false,
        }
    }

    #[test]
    fn the_adopted_configuration_becomes_ets_pfc_and_app_of_one_ieee_set() {
        let s = operational_set(&op(OperPfc::Operational {
            params: PfcParams {
                enable: 1 << 3,
                mbc: false,
                cap: 8,
            },
            source: Source::Peer,
        }));
        let e = s.ets.unwrap();
        assert_eq!(e.prio_tc, [0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(e.tc_tx_bw, [50, 50, 0, 0, 0, 0, 0, 0]);
        assert_eq!(e.tc_tsa, [2, 2, 0, 0, 0, 0, 0, 255]);
        let p = s.pfc.unwrap();
        assert_eq!((p.pfc_en, p.pfc_cap, p.mbc), (0x08, 8, 0));
        assert_eq!(
            s.apps,
            vec![DcbApp {
                selector: 5,
                priority: 3,
                protocol: 26
            }]
        );
    }

    #[test]
    fn pfc_that_is_not_operational_is_programmed_off() {
        let s = operational_set(&op(OperPfc::NotOperational {
            reason: "disagree".into(),
        }));
        assert_eq!(s.pfc.unwrap().pfc_en, 0);
    }
}
