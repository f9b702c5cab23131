//! The negotiation rules, as pure functions of Local and Remote (lldpad's state machines):
//! ETS is asymmetric (a willing side adopts the peer's recommendation), PFC is symmetric (a
//! willing side adopts; when both are willing the lower MAC adopts), App merges.

use serde::Serialize;

use super::config::{AppPriority, EtsParams, PfcParams};

/// Where an operational value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// No DCBX peer: the local configuration.
    NoPeer,
    /// The local configuration, which the peer agrees with or will adopt.
    Local,
    /// Adopted from the peer.
    Peer,
}

/// Operational ETS: the tables the scheduler uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OperEts {
    /// The tables.
    pub params: EtsParams,
    /// Where they came from.
    pub source: Source,
    /// CEE only: the peer's priority groups disagree and neither side adopts (Error flag).
    pub error: bool,
}

/// Operational PFC: either agreed, or not operational with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum OperPfc {
    /// Both ends agree on these parameters.
    Operational {
        /// The agreed parameters.
        params: PfcParams,
        /// Where they came from.
        source: Source,
    },
    /// The ends disagree and neither will adopt: no priority is PFC-enabled.
    NotOperational {
        /// Why, naming both enable vectors.
        reason: String,
    },
}

impl OperPfc {
    /// The enable bitmap the MAC must use: 0 when not operational (never half-applied).
    pub fn enable(&self) -> u8 {
        match self {
            OperPfc::Operational { params, .. } => params.enable,
            OperPfc::NotOperational { .. } => 0,
        }
    }
    /// Whether PFC is operational.
    pub fn is_operational(&self) -> bool {
        matches!(self, OperPfc::Operational { .. })
    }
}

/// What a symmetric negotiation decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution<T> {
    /// No peer information: use local.
    NoPeer,
    /// Use local (equal, or the peer adopts ours).
    Local,
    /// Adopt the peer's value.
    Adopt(T),
    /// Neither side adopts and the values differ.
    Disagree(T),
}

/// A peer's value for a feature and its Willing bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerValue<T> {
    /// The peer's configuration.
    pub value: T,
    /// The peer's Willing bit.
    pub willing: bool,
}

/// Symmetric negotiation (802.1Qaz PFC, lldpad `pfc_sm`): the local side adopts when it is
/// willing and the peer is not, or both are willing and the local MAC is numerically lower.
pub fn symmetric<T: Copy>(
    local: T,
    local_willing: bool,
    local_mac: [u8; 6],
    peer: Option<PeerValue<T>>,
    peer_mac: [u8; 6],
    same: impl Fn(&T, &T) -> bool,
) -> Resolution<T> {
    let Some(p) = peer else {
        return Resolution::NoPeer;
    };
    let local_adopts = local_willing && (!p.willing || local_mac < peer_mac);
    let peer_adopts = p.willing && (!local_willing || peer_mac < local_mac);
    if local_adopts {
        Resolution::Adopt(p.value)
    } else if same(&local, &p.value) || peer_adopts {
        Resolution::Local
    } else {
        Resolution::Disagree(p.value)
    }
}

/// IEEE PFC: the operational PFC from local and peer.
pub fn pfc(
    local: PfcParams,
    local_willing: bool,
    local_mac: [u8; 6],
    peer: Option<PeerValue<PfcParams>>,
    peer_mac: [u8; 6],
) -> OperPfc {
    match symmetric(local, local_willing, local_mac, peer, peer_mac, |a, b| {
        a.enable == b.enable
    }) {
        Resolution::NoPeer => OperPfc::Operational {
            params: local,
            source: Source::NoPeer,
        },
        Resolution::Local => OperPfc::Operational {
            params: local,
            source: Source::Local,
        },
        Resolution::Adopt(p) => OperPfc::Operational {
            params: p,
            source: Source::Peer,
        },
        Resolution::Disagree(p) => OperPfc::NotOperational {
            reason: format!(
                "neither side willing to adopt: local enables priorities {:?}, peer enables {:?}",
                local.priorities(),
                p.priorities()
            ),
        },
    }
}

/// IEEE ETS (asymmetric, lldpad `ets_sm`): a willing side uses the peer's ETS
/// Recommendation when it has one, else its own configuration.
pub fn ets_ieee(
    local: EtsParams,
    local_willing: bool,
    peer_recommendation: Option<EtsParams>,
    peer: bool,
) -> OperEts {
    match peer_recommendation {
        Some(rec) if local_willing => OperEts {
            params: rec,
            source: Source::Peer,
            error: false,
        },
        _ => OperEts {
            params: local,
            source: if peer { Source::Local } else { Source::NoPeer },
            error: false,
        },
    }
}

/// App: local entries, plus the peer's entries whose selector and protocol no local entry has.
pub fn app_merge(local: &[AppPriority], peer: &[AppPriority]) -> Vec<AppPriority> {
    let mut out: Vec<AppPriority> = local.to_vec();
    for p in peer {
        let taken = out
            .iter()
            .any(|l| l.selector == p.selector && l.protocol == p.protocol);
        if !taken {
            out.push(*p);
        }
    }
    out
}
