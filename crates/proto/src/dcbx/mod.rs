//! A sans-IO DCBX agent (IEEE 802.1Qaz clause 38 and pre-standard CEE 1.01) on top of the
//! LLDP agent: Local, Remote and Operational configuration of ETS, PFC and App.
//!
//! Drive it like the LLDP agent ([`Agent::handle_frame`], [`Agent::poll_transmit`],
//! [`Agent::poll_timeout`], [`Agent::handle_timeout`]) and read [`Agent::operational`]: that
//! is what the MAC flow-control and ETS engines use. [`Agent::poll_event`] reports changes.
//!
//! Mode selection follows lldpad (`dcbx_rchange` in openlldp's lldp_dcbx.c): IEEE by default;
//! at the end of an LLDPDU that carried a CEE DCBX TLV and no IEEE DCBX TLV, CEE goes active.
//! An LLDPDU with IEEE DCBX TLVs makes IEEE active again.
//!
//! # Driving it from a simulator
//!
//! One agent per port: `Agent::new(AgentConfig::new(port_mac), dcbx_config)`. At link-up (or
//! time 0) call [`Agent::handle_timeout`]`(now)`, then drain [`Agent::poll_transmit`]`(now)`:
//! each item is a whole Ethernet frame without FCS (DA 01-80-C2-00-00-0E, EtherType 0x88CC,
//! padded to 60 bytes) to put on the port's link like any other frame. When a frame with
//! EtherType 0x88CC arrives at the port, pass it (without FCS) to
//! [`Agent::handle_ethernet`]`(now, frame)` and drain `poll_transmit` again. Keep one timer
//! per agent at [`Agent::poll_timeout`] (re-read it after every call); when it fires, call
//! `handle_timeout(now)` and drain `poll_transmit`. [`Agent::link_down`]/[`Agent::link_up`]
//! model cable events. After every call, drain [`Agent::poll_event`]: on
//! [`Event::OperationalChanged`] reconfigure the port's engines from [`Agent::operational`]:
//! `operational().pfc.enable()` is the PFC enable bitmap for the MAC flow-control engine
//! (0 when PFC is not operational), `operational().ets.params` the up2tc/tcbw/tsa tables for
//! the ETS scheduler. With the default timers the first LLDPDUs go out at time 0, so
//! negotiation completes within one round trip.
//!
//! # The peer
//!
//! DCBX runs point to point. The peer is the neighbour that was alone on the port when the
//! agent chose it; it stays the peer for as long as the neighbour table holds it (it keeps
//! refreshing its TTL and sends no shutdown), whatever other neighbours appear meanwhile: they
//! are reported ([`Event::MultiplePeers`]) but neither replace it nor switch DCBX off, and the
//! LLDP table never evicts it to make room for them. A flood of LLDPDUs with ever new chassis
//! IDs (a faulty or hostile station) therefore cannot lock the real peer out. Without an
//! established peer, several neighbours mean no peer (the DCBX MIB's multiple-peers rule:
//! behave as if no DCBX TLV had been received) until one is left.
//!
//! # What is adopted from the peer
//!
//! Each of the peer's DCBX TLVs is checked as strictly as our own configuration
//! ([`peer`]). A refused TLV is listed in [`Remote::rejected`] with the reason, counted in
//! [`Statistics::dcbx_tlvs_rejected_total`] for every LLDPDU that carries it, and reported once
//! as [`Event::PeerTlvRejected`]; negotiation then uses the last valid value of that feature
//! from the same peer, so Operational keeps its last valid state (from a clean state, as if
//! the TLV had not been sent). In CEE mode the feature's Error flag is set in our TLV.
//!
//! A change of DCBX version (IEEE to CEE or back) starts that version's negotiation afresh:
//! while the CEE handshake waits for the peer's acknowledgement, Operational is the local
//! configuration (`no_peer`), whatever IEEE had negotiated before.

pub mod cee;
pub mod config;
pub mod negotiate;
mod operational;
pub mod peer;
pub mod remote;

use std::collections::VecDeque;

use lossless_wire::Error;
use lossless_wire::lldp::{
    ApplicationPriority, CeeSubTlv, CeeTlv, EtsConfiguration, EtsRecommendation, Ieee8021Tlv, OrgTlv,
    PfcConfiguration, Tlv,
};
use serde::Serialize;

pub use config::{
    AppPriority, DcbxConfig, DcbxConfigError, EtsConfig, EtsParams, Mode, ModeSetting, PfcConfig, PfcParams,
    TsaName, ValueError,
};
pub use negotiate::{OperEts, OperPfc, Source};
pub use peer::{PeerTlv, Rejected};
pub use remote::{Remote, RemoteCee, RemoteEts, RemoteFeature};

use crate::lldp_agent::{
    AgentConfig, ConfigError, LldpAgent, LldpEvent, Msap, NeighbourTable, RxOutcome, Statistics,
};
use crate::units::Instant;
use operational::{initial_operational, keep_last_valid};

/// The operational configuration: what the MAC and the scheduler use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Operational {
    /// The DCBX version in use.
    pub mode: Mode,
    /// ETS tables.
    pub ets: OperEts,
    /// PFC.
    pub pfc: OperPfc,
    /// Application priorities.
    pub app: Vec<AppPriority>,
    /// CEE: whether the peer acknowledged our current sequence number.
    pub cee_synced: bool,
}

/// Something the driver should know (and the live daemon logs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The peer's DCBX information changed (or disappeared: `None`).
    RemoteChanged(Option<Box<Remote>>),
    /// The operational configuration changed.
    OperationalChanged(Box<Operational>),
    /// The DCBX version in use changed.
    ModeChanged(Mode),
    /// A neighbour's TTL ran out.
    NeighbourAgedOut(Msap),
    /// A neighbour sent a shutdown LLDPDU.
    ShutdownReceived(Msap),
    /// A new neighbour did not fit the table (see [`crate::lldp_agent::TooManyNeighbours`]).
    TooManyNeighbours {
        /// The neighbour evicted, if any.
        evicted: Option<Msap>,
    },
    /// An LLDPDU was malformed: counted and dropped.
    Malformed(Error),
    /// More than one neighbour is on the port (see the module docs, "The peer").
    MultiplePeers {
        /// How many neighbours the table holds.
        neighbours: usize,
        /// The established peer DCBX keeps following; `None`: DCBX runs on the local
        /// configuration until one neighbour is left.
        kept: Option<Msap>,
    },
    /// One of the peer's DCBX TLVs was refused (reported when it first appears or its
    /// reason changes, not for every LLDPDU); Operational keeps that feature's last valid
    /// value.
    PeerTlvRejected(Rejected),
}

/// Why an agent cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The LLDP part.
    #[error(transparent)]
    Lldp(#[from] ConfigError),
    /// The DCBX part.
    #[error(transparent)]
    Dcbx(#[from] DcbxConfigError),
}

/// A DCBX agent on one port. See the module docs.
#[derive(Debug, Clone)]
pub struct Agent {
    lldp: LldpAgent,
    cfg: DcbxConfig,
    mode: Mode,
    hs: cee::Handshake,
    cee_flags: cee::Flags,
    cee_features: Vec<CeeSubTlv>,
    remote: Option<Remote>,
    /// What negotiation uses: `remote` with each refused TLV replaced by its last valid value.
    effective: Option<Remote>,
    /// The established DCBX peer.
    peer: Option<Msap>,
    oper: Operational,
    events: VecDeque<Event>,
    multiple_peers: bool,
    rejected_total: u64,
}

/// Upper bound of queued events.
const MAX_EVENTS: usize = 256;

impl Agent {
    /// An agent for the port `lldp` with the DCBX configuration `dcbx`.
    pub fn new(lldp: AgentConfig, dcbx: DcbxConfig) -> Result<Self, AgentError> {
        dcbx.validate()?;
        let lldp = LldpAgent::new(lldp)?;
        let mode = match dcbx.mode {
            ModeSetting::Cee => Mode::Cee,
            _ => Mode::Ieee,
        };
        let oper = initial_operational(&dcbx, mode);
        let mut a = Agent {
            lldp,
            cee_features: cee::features(&dcbx, cee::Flags::default()),
            cfg: dcbx,
            mode,
            hs: cee::Handshake::new(),
            cee_flags: cee::Flags::default(),
            remote: None,
            effective: None,
            peer: None,
            oper,
            events: VecDeque::new(),
            multiple_peers: false,
            rejected_total: 0,
        };
        a.rebuild_tlvs(Instant::ZERO);
        Ok(a)
    }

    /// Handles a received LLDPDU (the Ethernet payload after EtherType 0x88CC) from `src_mac`.
    pub fn handle_frame(&mut self, now: Instant, src_mac: [u8; 6], lldpdu: &[u8]) {
        let stored = match self.lldp.handle_lldpdu(now, src_mac, lldpdu) {
            RxOutcome::Stored { msap, .. } => Some(msap),
            RxOutcome::Shutdown(..) | RxOutcome::Discarded => None,
        };
        self.after_lldp(now, stored);
    }

    /// Handles a whole received Ethernet frame (no FCS); frames that are not untagged LLDP to
    /// a reserved LLDP address (01-80-C2-00-00-0E/-03/-00) are ignored. Returns whether it was
    /// LLDP.
    pub fn handle_ethernet(&mut self, now: Instant, frame: &[u8]) -> bool {
        let Some((src, lldpdu)) = split_lldp_frame(frame) else {
            return false;
        };
        self.handle_frame(now, src, lldpdu);
        true
    }

    /// The next frame to send (a whole Ethernet frame without FCS), if any is due at `now`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.lldp.poll_transmit(now)
    }

    /// As [`Agent::poll_transmit`], but writes the frame into `buf` (replacing its contents)
    /// and returns whether there was one: a driver that reuses `buf` sends without
    /// allocating.
    pub fn poll_transmit_into(&mut self, now: Instant, buf: &mut Vec<u8>) -> bool {
        self.lldp.poll_transmit_into(now, buf)
    }

    /// When to call [`Agent::handle_timeout`] (and then [`Agent::poll_transmit`]) next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.lldp.poll_timeout()
    }

    /// Advances the timers to `now` (credit refill, neighbour ageing).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.lldp.handle_timeout(now);
        self.after_lldp(now, None);
    }

    /// Stops the agent: the next [`Agent::poll_transmit`] returns the shutdown LLDPDU (TTL 0).
    pub fn shutdown(&mut self, now: Instant) {
        self.lldp.shutdown(now);
        self.after_lldp(now, None);
    }

    /// The port's link went down: nothing is sent and the peer's information is deleted.
    pub fn link_down(&mut self, now: Instant) {
        self.lldp.link_down(now);
        self.after_lldp(now, None);
    }

    /// The port's link came up: LLDPDUs go out at once, then fast (txFastInit at msgFastTx).
    pub fn link_up(&mut self, now: Instant) {
        self.lldp.link_up(now);
        self.after_lldp(now, None);
    }

    /// Replaces the local DCBX configuration (a local change: fast transmission follows).
    pub fn set_config(&mut self, now: Instant, dcbx: DcbxConfig) -> Result<(), DcbxConfigError> {
        dcbx.validate()?;
        self.cfg = dcbx;
        if self.cfg.mode == ModeSetting::Cee {
            self.mode = Mode::Cee;
        } else if self.cfg.mode == ModeSetting::Ieee {
            self.mode = Mode::Ieee;
        }
        self.refresh(now, None);
        Ok(())
    }

    /// The local configuration.
    pub fn local(&self) -> &DcbxConfig {
        &self.cfg
    }

    /// The peer's DCBX information (see the module docs for which neighbour is the peer);
    /// refused TLVs are listed in [`Remote::rejected`].
    pub fn remote(&self) -> Option<&Remote> {
        self.remote.as_ref()
    }

    /// The neighbour DCBX follows, if any.
    pub fn peer(&self) -> Option<&Msap> {
        self.peer.as_ref()
    }

    /// The operational configuration.
    pub fn operational(&self) -> &Operational {
        &self.oper
    }

    /// The DCBX version in use.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The CEE handshake state (meaningful in CEE mode).
    pub fn cee_handshake(&self) -> cee::Handshake {
        self.hs
    }

    /// The 802.1AB statistics, with the count of refused peer DCBX TLVs.
    pub fn statistics(&self) -> Statistics {
        Statistics {
            dcbx_tlvs_rejected_total: self.rejected_total,
            ..self.lldp.statistics()
        }
    }

    /// The neighbour table.
    pub fn neighbours(&self) -> &NeighbourTable {
        self.lldp.neighbours()
    }

    /// The LLDP agent underneath.
    pub fn lldp(&self) -> &LldpAgent {
        &self.lldp
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn push(&mut self, e: Event) {
        if self.events.len() >= MAX_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(e);
    }

    fn after_lldp(&mut self, now: Instant, received: Option<Msap>) {
        while let Some(e) = self.lldp.poll_event() {
            match e {
                LldpEvent::NeighbourAgedOut(m) => self.push(Event::NeighbourAgedOut(m)),
                LldpEvent::ShutdownReceived(m) => self.push(Event::ShutdownReceived(m)),
                LldpEvent::TooManyNeighbours { evicted } => self.push(Event::TooManyNeighbours { evicted }),
                LldpEvent::Malformed(err) => self.push(Event::Malformed(err)),
                LldpEvent::NeighbourAdded(_) | LldpEvent::NeighbourChanged(_) => {}
            }
        }
        self.refresh(now, received);
    }

    /// Recomputes the peer, Remote, the mode, the CEE handshake and Operational, then our
    /// TLVs. `received` is the neighbour whose LLDPDU was just stored, if any.
    fn refresh(&mut self, now: Instant, received: Option<Msap>) {
        let table = self.lldp.neighbours();
        let count = table.len();
        let peer = match &self.peer {
            Some(m) if table.get(m).is_some() => Some(m.clone()),
            _ if count == 1 => table.iter().next().map(|n| n.msap.clone()),
            _ => None,
        };
        if peer != self.peer {
            // Nothing adopted from one peer carries over to another.
            self.effective = None;
            self.peer = peer;
            self.lldp.set_protected(self.peer.clone());
        }
        if (count > 1) != self.multiple_peers {
            self.multiple_peers = count > 1;
            if count > 1 {
                self.push(Event::MultiplePeers {
                    neighbours: count,
                    kept: self.peer.clone(),
                });
            }
        }
        let remote = self
            .peer
            .as_ref()
            .and_then(|m| self.lldp.neighbours().get(m))
            .map(|n| Remote::from_tlvs(n.src_mac, &n.tlvs));
        let from_peer = received.is_some() && received == self.peer;
        if from_peer && let Some(r) = &remote {
            self.rejected_total += r.rejected.len() as u64;
        }
        if from_peer
            && self.cfg.mode == ModeSetting::Auto
            && let Some(r) = &remote
        {
            let mode = if r.has_ieee() {
                Some(Mode::Ieee)
            } else if r.cee.is_some() {
                Some(Mode::Cee)
            } else {
                None
            };
            if let Some(m) = mode
                && m != self.mode
            {
                self.mode = m;
                self.hs = cee::Handshake::new();
                self.push(Event::ModeChanged(m));
            }
        }
        if let Some(c) = remote.as_ref().and_then(|r| r.cee.as_ref()) {
            self.hs.receive(&c.control);
        }
        if remote != self.remote {
            let before = self.remote.as_ref().map_or(&[][..], |r| &r.rejected[..]);
            let new: Vec<Rejected> = remote
                .as_ref()
                .map_or(&[][..], |r| &r.rejected[..])
                .iter()
                .filter(|x| !before.contains(x))
                .cloned()
                .collect();
            self.remote = remote;
            for x in new {
                self.push(Event::PeerTlvRejected(x));
            }
            self.push(Event::RemoteChanged(self.remote.clone().map(Box::new)));
        }
        self.effective = self
            .remote
            .as_ref()
            .map(|r| keep_last_valid(r, self.effective.as_ref()));
        let oper = self.compute_operational();
        if oper != self.oper {
            self.oper = oper;
            self.push(Event::OperationalChanged(Box::new(self.oper.clone())));
        }
        self.rebuild_tlvs(now);
    }

    /// Rebuilds the DCBX TLVs for the current mode and hands them to the LLDP agent.
    fn rebuild_tlvs(&mut self, now: Instant) {
        let tlvs = match self.mode {
            Mode::Ieee => self.ieee_tlvs(),
            Mode::Cee => {
                let refused = |t| self.remote.as_ref().is_some_and(|r| r.is_rejected(t));
                let flags = cee::Flags {
                    pg_error: self.oper.ets.error || refused(PeerTlv::CeePriorityGroups),
                    pfc_error: (self.oper.mode == Mode::Cee && !self.oper.pfc.is_operational())
                        || refused(PeerTlv::CeePfc),
                    app_error: refused(PeerTlv::CeeApplication),
                };
                let features = cee::features(&self.cfg, flags);
                if features != self.cee_features {
                    self.cee_features = features;
                    self.cee_flags = flags;
                    self.hs.bump();
                }
                vec![Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(cee::tlv(
                    &self.hs,
                    &self.cee_features,
                ))))]
            }
        };
        // `DcbxConfig::validate` bounds the application table so that every TLV built here
        // fits its 511-byte length field; the LLDP agent would refuse one that did not.
        let fits = self.lldp.set_local_tlvs(now, tlvs);
        debug_assert_eq!(fits, Ok(()), "DCBX TLVs are bounded by the configuration");
    }

    /// Our IEEE TLVs: ETS Configuration, ETS Recommendation, PFC Configuration, Application
    /// Priority (all from the local configuration).
    fn ieee_tlvs(&self) -> Vec<Tlv> {
        let e = &self.cfg.ets;
        let p = &self.cfg.pfc;
        let rec = e.recommendation.unwrap_or(e.params);
        let org = |t: Ieee8021Tlv| Tlv::Org(OrgTlv::Ieee8021(t));
        let apps: Vec<_> = self.cfg.app.iter().map(|a| a.to_wire()).collect();
        vec![
            org(Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
                willing: e.willing,
                cbs: e.cbs,
                reserved: 0,
                max_tcs: e.max_tcs & 7,
                tables: e.params.to_tables(),
            })),
            org(Ieee8021Tlv::EtsRecommendation(EtsRecommendation {
                reserved: 0,
                tables: rec.to_tables(),
            })),
            org(Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
                willing: p.willing,
                mbc: p.mbc,
                reserved: 0,
                pfc_cap: p.cap & 0x0f,
                enabled: p.params().enable,
            })),
            org(Ieee8021Tlv::ApplicationPriority(ApplicationPriority::new(
                0, &apps,
            ))),
        ]
    }
}

/// The LLDP addresses an agent listens on: nearest bridge, nearest non-TPMR bridge, nearest
/// customer bridge.
const LLDP_DESTINATIONS: [[u8; 6]; 3] = [
    [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e],
    [0x01, 0x80, 0xc2, 0x00, 0x00, 0x03],
    [0x01, 0x80, 0xc2, 0x00, 0x00, 0x00],
];

/// Splits an untagged LLDP Ethernet frame into (source MAC, LLDPDU).
pub fn split_lldp_frame(frame: &[u8]) -> Option<([u8; 6], &[u8])> {
    if frame.len() < 14 || frame[12..14] != [0x88, 0xcc] {
        return None;
    }
    if !LLDP_DESTINATIONS.iter().any(|d| frame[..6] == d[..]) {
        return None;
    }
    let mut src = [0; 6];
    src.copy_from_slice(&frame[6..12]);
    Some((src, &frame[14..]))
}
