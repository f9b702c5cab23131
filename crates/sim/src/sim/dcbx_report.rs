//! The DCBX part of a port's report: mode, Local/Operational PFC and ETS, when PFC became
//! operational, and the agent's 802.1AB statistics.
//!
//! It lives beside the engine, not in `report`, because a partition's end-of-run digest
//! (`exchange`) carries it too and the engine uses no report module; `report::dcbx`
//! re-exports it.

use std::fmt::Write as _;

use lossless_proto::dcbx::{OperPfc, Source, TsaName};
use lossless_proto::lldp_agent::Statistics;
use serde::Serialize;

use crate::sim::PortDcbx;
use crate::stats::PortStats;

/// DCBX state of one DCBX-managed port at the end of the run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DcbxReport {
    /// DCBX version in use: "ieee" or "cee".
    pub mode: &'static str,
    /// Whether a DCBX peer is known (exactly one neighbour sending DCBX TLVs).
    pub peer: bool,
    /// Local PFC Willing bit.
    pub pfc_willing: bool,
    /// Local ETS Willing bit.
    pub ets_willing: bool,
    /// Priorities PFC-enabled in the local configuration.
    pub local_pfc_priorities: Vec<u8>,
    /// Whether negotiation left PFC operational (ends agree, or one adopted).
    pub pfc_operational: bool,
    /// Where the operational PFC came from: "no_peer", "local" or "peer".
    pub pfc_source: Option<&'static str>,
    /// Why PFC is not operational (both enable vectors named), if it is not.
    pub pfc_not_operational_reason: Option<String>,
    /// Priorities the port's flow-control engine runs PFC on (empty: PFC off).
    pub operational_pfc_priorities: Vec<u8>,
    /// Operational ETS: traffic class of each priority.
    pub operational_ets_up2tc: [u8; 8],
    /// Operational ETS: bandwidth % of each traffic class.
    pub operational_ets_tcbw_percent: [u8; 8],
    /// Operational ETS: algorithm of each traffic class.
    pub operational_ets_tsa: Vec<&'static str>,
    /// Where the operational ETS came from.
    pub ets_source: &'static str,
    /// Operational ETS tables the scheduler could not run, if any.
    pub ets_error: Option<String>,
    /// When PFC first became operational with a DCBX peer.
    pub operational_at_ps: Option<u128>,
    /// When DCBX last reconfigured the port's engines.
    pub last_reconfigured_at_ps: Option<u128>,
    /// Reconfigurations of the port's engines by DCBX.
    pub reconfigurations: u32,
    /// LLDPDUs this port put on the wire.
    pub lldp_sent_frames: u64,
    /// Frames received here and dropped whose priority is PFC-enabled in the local
    /// configuration but not in the operational one (what a DCBX disagreement costs).
    pub local_pfc_not_operational_drops_frames: u64,
    /// The agent's 802.1AB statistics.
    pub lldp: Statistics,
}

fn source(s: Source) -> &'static str {
    match s {
        Source::NoPeer => "no_peer",
        Source::Local => "local",
        Source::Peer => "peer",
    }
}

fn tsa(t: TsaName) -> &'static str {
    match t {
        TsaName::Strict => "strict",
        TsaName::Cbs => "cbs",
        TsaName::Ets => "ets",
        TsaName::Vendor => "vendor",
    }
}

fn priorities(mask: u8) -> Vec<u8> {
    (0..8).filter(|q| mask & (1 << q) != 0).collect()
}

impl DcbxReport {
    /// The report of a port's DCBX state.
    pub(crate) fn of(d: &PortDcbx, stats: &PortStats) -> Self {
        let a = &d.agent;
        let oper = a.operational();
        let local = a.local();
        let (pfc_source, reason) = match &oper.pfc {
            OperPfc::Operational { source: s, .. } => (Some(source(*s)), None),
            OperPfc::NotOperational { reason } => (None, Some(reason.clone())),
        };
        DcbxReport {
            mode: match a.mode() {
                lossless_proto::dcbx::Mode::Ieee => "ieee",
                lossless_proto::dcbx::Mode::Cee => "cee",
            },
            peer: a.remote().is_some(),
            pfc_willing: local.pfc.willing,
            ets_willing: local.ets.willing,
            local_pfc_priorities: priorities(local.pfc.params().enable),
            pfc_operational: oper.pfc.is_operational(),
            pfc_source,
            pfc_not_operational_reason: reason,
            operational_pfc_priorities: priorities(d.applied_pfc),
            operational_ets_up2tc: oper.ets.params.up2tc,
            operational_ets_tcbw_percent: oper.ets.params.tcbw,
            operational_ets_tsa: oper.ets.params.tsa.iter().map(|&t| tsa(t)).collect(),
            ets_source: source(oper.ets.source),
            ets_error: d.ets_error.clone(),
            operational_at_ps: d.operational_at.map(|t| t.as_ps()),
            last_reconfigured_at_ps: d.last_change_at.map(|t| t.as_ps()),
            reconfigurations: d.reconfigurations,
            lldp_sent_frames: d.lldp_tx_frames,
            local_pfc_not_operational_drops_frames: (0..8)
                .filter(|&q| local.pfc.params().enable & !d.applied_pfc & (1 << q) != 0)
                .map(|q| stats.prio[q].drops.iter().sum::<u64>())
                .sum(),
            lldp: a.statistics(),
        }
    }

    /// One summary line for port `name`.
    pub fn line(&self, name: &str) -> String {
        let mut s = String::new();
        let pfc = if self.operational_pfc_priorities.is_empty() {
            "off".to_string()
        } else {
            format!("{:?}", self.operational_pfc_priorities)
        };
        let when = self
            .operational_at_ps
            .map_or_else(|| "never".to_string(), |t| format!("{} ns", t / 1000));
        let _ = write!(
            s,
            "{name:<22} {:<4} peer {:<3} willing pfc/ets {}/{}  PFC {pfc:<10} since {when:<10} ETS up2tc {:?} tcbw {:?} ({})  LLDP out {} in {} discarded {} ageouts {}",
            self.mode,
            if self.peer { "yes" } else { "no" },
            u8::from(self.pfc_willing),
            u8::from(self.ets_willing),
            self.operational_ets_up2tc,
            self.operational_ets_tcbw_percent,
            self.ets_source,
            self.lldp.frames_out_total,
            self.lldp.frames_in_total,
            self.lldp.frames_discarded_total,
            self.lldp.ageouts_total,
        );
        if let Some(r) = &self.pfc_not_operational_reason {
            let _ = write!(
                s,
                "\n{:<22} PFC not operational: {r}; {} frames of its locally PFC-enabled priorities dropped here",
                "", self.local_pfc_not_operational_drops_frames
            );
        }
        if let Some(e) = &self.ets_error {
            let _ = write!(s, "\n{:<22} ETS not applied: {e}", "");
        }
        s
    }
}
