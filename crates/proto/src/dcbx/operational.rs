//! How the agent computes Operational from Local and the peer's (last valid) Remote, per
//! DCBX version.

use super::negotiate::{self, PeerValue};
use super::{Agent, DcbxConfig, Mode, OperEts, OperPfc, Operational, PeerTlv, Remote, Source, cee};

impl Agent {
    pub(super) fn compute_operational(&self) -> Operational {
        let mac = self.lldp.config().mac;
        let local_pfc = self.cfg.pfc.params();
        let r = self.effective.as_ref();
        let peer_mac = r.map_or([0; 6], |r| r.src_mac);
        match self.mode {
            Mode::Ieee => {
                let pfc_peer = r.and_then(|r| r.pfc.as_ref()).map(|p| PeerValue {
                    value: p.value,
                    willing: p.willing,
                });
                let rec = r.and_then(|r| r.ets_recommendation);
                let has_peer = r.is_some_and(Remote::has_ieee);
                Operational {
                    mode: Mode::Ieee,
                    ets: negotiate::ets_ieee(self.cfg.ets.params, self.cfg.ets.willing, rec, has_peer),
                    pfc: negotiate::pfc(local_pfc, self.cfg.pfc.willing, mac, pfc_peer, peer_mac),
                    app: negotiate::app_merge(&self.cfg.app, r.and_then(|r| r.app.as_deref()).unwrap_or(&[])),
                    cee_synced: false,
                }
            }
            Mode::Cee => {
                let c = r.and_then(|r| r.cee.as_ref());
                if c.is_some() && !self.hs.synced() {
                    // The peer has not yet seen our current features: keep what CEE had
                    // negotiated, never what IEEE had (a version change starts afresh).
                    let mut o = if self.oper.mode == Mode::Cee {
                        self.oper.clone()
                    } else {
                        initial_operational(&self.cfg, Mode::Cee)
                    };
                    o.cee_synced = false;
                    return o;
                }
                let pg_peer = c
                    .and_then(|c| c.pg.as_ref())
                    .filter(|f| f.enabled)
                    .map(|f| PeerValue {
                        value: f.value,
                        willing: f.willing,
                    });
                let pfc_peer = c
                    .and_then(|c| c.pfc.as_ref())
                    .filter(|f| f.enabled)
                    .map(|f| PeerValue {
                        value: f.value,
                        willing: f.willing,
                    });
                let local_ets = self.cfg.ets.params;
                let ets = match negotiate::symmetric(
                    local_ets,
                    self.cfg.ets.willing,
                    mac,
                    pg_peer,
                    peer_mac,
                    |a, b| cee::ets_to_pg(a) == cee::ets_to_pg(b),
                ) {
                    negotiate::Resolution::NoPeer => negotiate::ets_ieee(local_ets, false, None, false),
                    negotiate::Resolution::Local => OperEts {
                        params: local_ets,
                        source: Source::Local,
                        error: false,
                    },
                    negotiate::Resolution::Adopt(p) => OperEts {
                        params: p,
                        source: Source::Peer,
                        error: false,
                    },
                    negotiate::Resolution::Disagree(_) => OperEts {
                        params: local_ets,
                        source: Source::Local,
                        error: true,
                    },
                };
                let peer_app = c
                    .and_then(|c| c.app.as_ref())
                    .filter(|f| f.enabled)
                    .map(|f| f.value.as_slice())
                    .unwrap_or(&[]);
                Operational {
                    mode: Mode::Cee,
                    ets,
                    pfc: negotiate::pfc(local_pfc, self.cfg.pfc.willing, mac, pfc_peer, peer_mac),
                    app: negotiate::app_merge(&self.cfg.app, peer_app),
                    cee_synced: c.is_some() && self.hs.synced(),
                }
            }
        }
    }
}

/// The operational configuration before any peer: the local one.
pub(super) fn initial_operational(cfg: &DcbxConfig, mode: Mode) -> Operational {
    Operational {
        mode,
        ets: negotiate::ets_ieee(cfg.ets.params, cfg.ets.willing, None, false),
        pfc: OperPfc::Operational {
            params: cfg.pfc.params(),
            source: Source::NoPeer,
        },
        app: cfg.app.clone(),
        cee_synced: false,
    }
}

/// `now` with every refused TLV replaced by its value in `last` (the previous effective
/// Remote of the same peer), or left out when `last` has none.
pub(super) fn keep_last_valid(now: &Remote, last: Option<&Remote>) -> Remote {
    let mut e = now.clone();
    for x in &now.rejected {
        let cee_last = last.and_then(|l| l.cee.as_ref());
        match x.tlv {
            PeerTlv::EtsConfiguration => e.ets = last.and_then(|l| l.ets),
            PeerTlv::EtsRecommendation => e.ets_recommendation = last.and_then(|l| l.ets_recommendation),
            PeerTlv::PfcConfiguration => e.pfc = last.and_then(|l| l.pfc.clone()),
            PeerTlv::ApplicationPriority => e.app = last.and_then(|l| l.app.clone()),
            PeerTlv::CeePriorityGroups => {
                if let Some(c) = &mut e.cee {
                    c.pg = cee_last.and_then(|l| l.pg.clone());
                }
            }
            PeerTlv::CeePfc => {
                if let Some(c) = &mut e.cee {
                    c.pfc = cee_last.and_then(|l| l.pfc.clone());
                }
            }
            PeerTlv::CeeApplication => {
                if let Some(c) = &mut e.cee {
                    c.app = cee_last.and_then(|l| l.app.clone());
                }
            }
        }
    }
    e
}
