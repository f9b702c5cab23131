//! CEE DCBX (version 1.01, OUI 00-1B-21 subtype 2): building our TLV from the 802.1Qaz
//! configuration, reading the peer's, and the Control sub-TLV sequence/ack handshake.
//!
//! Priority groups map to ETS tables one to one (PGID n = traffic class n, PG bandwidth = TC
//! bandwidth); PGID 15 (strict, no bandwidth limit) maps to traffic class 7 with TSA strict,
//! and a priority whose TC uses TSA strict is sent in PGID 15.

use lossless_wire::lldp::{
    CeeAppEntry, CeeApplication, CeeControl, CeeDcbx, CeeFeatureHeader, CeePfc, CeePriorityGroups, CeeSubTlv,
};

use super::config::{AppPriority, DcbxConfig, EtsParams, TsaName};

/// The CEE version both max and oper (DCBX 1.01 sends 0).
pub const VERSION: u8 = 0;
/// PGID of the strict-priority group.
pub const PGID_STRICT: u8 = 15;
/// The OUI CEE application entries carry (lldpad uses the CEE OUI 00-1B-21).
pub const APP_OUI: u32 = 0x001b21;
/// CEE feature subtype of PG/PFC/App when no sub-feature is meant.
const FEATURE_SUBTYPE: u8 = 0;

/// The handshake state: our sequence number and the peer's we acknowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Handshake {
    /// Our SeqNo; incremented whenever our feature sub-TLVs change.
    pub seq: u32,
    /// Our AckNo: the last SeqNo received from the peer.
    pub ack: u32,
    /// The peer's AckNo: the last of our SeqNos the peer has seen.
    pub peer_ack: u32,
}

impl Handshake {
    /// A fresh handshake (SeqNo 1, nothing acknowledged).
    pub fn new() -> Self {
        Handshake {
            seq: 1,
            ack: 0,
            peer_ack: 0,
        }
    }
    /// Takes the peer's Control sub-TLV; returns whether our AckNo changed.
    pub fn receive(&mut self, c: &CeeControl) -> bool {
        self.peer_ack = c.ack;
        let changed = self.ack != c.seq;
        self.ack = c.seq;
        changed
    }
    /// Whether the peer has acknowledged our current SeqNo.
    pub fn synced(&self) -> bool {
        self.peer_ack == self.seq
    }
    /// Our features changed: a new SeqNo (never 0, which means "none").
    pub fn bump(&mut self) {
        self.seq = self.seq.wrapping_add(1).max(1);
    }
}

/// The feature flags we send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags {
    /// Priority Groups Error flag.
    pub pg_error: bool,
    /// PFC Error flag.
    pub pfc_error: bool,
    /// Application Error flag.
    pub app_error: bool,
}

fn header(enabled: bool, willing: bool, error: bool) -> CeeFeatureHeader {
    CeeFeatureHeader {
        oper_version: VERSION,
        max_version: VERSION,
        enabled,
        willing,
        error,
        reserved: 0,
        subtype: FEATURE_SUBTYPE,
    }
}

/// ETS tables as CEE priority groups.
pub fn ets_to_pg(e: &EtsParams) -> ([u8; 8], [u8; 8]) {
    let mut pgid = [0; 8];
    for (p, id) in pgid.iter_mut().enumerate() {
        let tc = e.up2tc[p] & 7;
        *id = if e.tsa[usize::from(tc)] == TsaName::Strict {
            PGID_STRICT
        } else {
            tc
        };
    }
    let mut bw = [0; 8];
    for ((b, &t), &w) in bw.iter_mut().zip(&e.tsa).zip(&e.tcbw) {
        if t != TsaName::Strict {
            *b = w;
        }
    }
    (pgid, bw)
}

/// CEE priority groups as ETS tables (see the module docs for PGID 15).
pub fn pg_to_ets(pg: &CeePriorityGroups) -> EtsParams {
    let mut e = EtsParams {
        up2tc: [0; 8],
        tcbw: pg.pg_bandwidth,
        tsa: [TsaName::Ets; 8],
    };
    for p in 0..8 {
        let id = pg.pgid[p];
        e.up2tc[p] = if id == PGID_STRICT { 7 } else { id & 7 };
        if id == PGID_STRICT {
            e.tsa[7] = TsaName::Strict;
        }
    }
    e
}

/// An 802.1Qaz app entry as a CEE one; DSCP (selector 5) has no CEE form.
pub fn app_to_cee(a: &AppPriority) -> Option<CeeAppEntry> {
    let selector = match a.selector {
        1 => 0,
        2..=4 => 1,
        _ => return None,
    };
    Some(CeeAppEntry {
        protocol: a.protocol,
        selector,
        oui: APP_OUI,
        priority_map: 1 << (a.priority & 7),
    })
}

/// A CEE app entry as an 802.1Qaz one (EtherType → 1, TCP/UDP port → 4), its lowest
/// priority; `None` for an empty priority map or a reserved selector.
pub fn app_from_cee(e: &CeeAppEntry) -> Option<AppPriority> {
    let selector = match e.selector {
        0 => 1,
        1 => 4,
        _ => return None,
    };
    Some(AppPriority {
        selector,
        protocol: e.protocol,
        priority: e.lowest_priority()?,
    })
}

/// Our feature sub-TLVs (everything after Control) for `cfg` with `flags`.
pub fn features(cfg: &DcbxConfig, flags: Flags) -> Vec<CeeSubTlv> {
    let (pgid, pg_bandwidth) = ets_to_pg(&cfg.ets.params);
    let pg = CeePriorityGroups {
        header: header(true, cfg.ets.willing, flags.pg_error),
        pgid,
        pg_bandwidth,
        num_tcs: cfg.ets.max_tcs,
    };
    let pfc = CeePfc {
        header: header(true, cfg.pfc.willing, flags.pfc_error),
        admin_map: cfg.pfc.params().enable,
        num_tcs: cfg.pfc.cap,
    };
    let entries: Vec<CeeAppEntry> = cfg.app.iter().filter_map(app_to_cee).collect();
    let app = CeeApplication::new(header(!entries.is_empty(), false, flags.app_error), &entries);
    vec![
        CeeSubTlv::PriorityGroups(pg),
        CeeSubTlv::Pfc(pfc),
        CeeSubTlv::Application(app),
    ]
}

/// The whole CEE DCBX TLV: Control, then `features`.
pub fn tlv(hs: &Handshake, features: &[CeeSubTlv]) -> CeeDcbx {
    let mut sub_tlvs = Vec::with_capacity(features.len() + 1);
    sub_tlvs.push(CeeSubTlv::Control(CeeControl {
        oper_version: VERSION,
        max_version: VERSION,
        seq: hs.seq,
        ack: hs.ack,
    }));
    sub_tlvs.extend(features.iter().cloned());
    CeeDcbx { sub_tlvs }
}
