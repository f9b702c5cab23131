//! DCBX on simulated ports: one `lossless_proto::dcbx::Agent` per DCBX-managed port, its
//! LLDPDUs carried as real frames on the link, its timers as events, and its Operational PFC
//! and ETS applied to the port's flow-control engine and ETS scheduler when they change.
//!
//! Choices (see also `examples/scenarios/README.md`):
//! - LLDPDUs (EtherType 0x88CC, untagged, to 01-80-C2-00-00-0E) take wire time like any
//!   frame (their length + 4 bytes of FCS, preamble, SFD and IFG). They are sent after a due
//!   PAUSE/PFC frame and before data, from a queue PFC never pauses (NICs and switch CPUs send
//!   LLDP outside the data priorities), and only at frame boundaries.
//! - Document 003: PFC only in a DCBX-managed domain. A DCBX-managed port has PFC off until
//!   its agent has a DCBX peer and PFC is operational; then the port runs PFC with the
//!   operational enable bitmap and the link's flow-control registers (`pause_quanta`, ...).
//!   Losing the peer (TTL expiry, shutdown) or a disagreement turns PFC off again.
//! - ETS: the port's scheduler always follows the operational ETS tables (the local ones until
//!   a peer's recommendation is adopted); the queued frames carry over to the new scheduler.
//! - A change of the operational PFC enable vector reconfigures the port's flow-control engine
//!   in place (`FlowControl::reconfigure`), as a NIC applies a dcbnl change: its counters (the
//!   JSON `paused_ps`, `xoff_requested_ps`) and the frame on the wire are kept; on priorities
//!   that stay lossless, pauses being obeyed run to their end and raised requests stay raised
//!   (refreshed on their schedule); priorities leaving the vector end their pauses at the
//!   change and drop their requests without an XON (the peer leaves them too under the same
//!   DCBX agreement). Buffer requests still raised on priorities that become lossless (PFC
//!   turning on, or a priority joining the vector) are raised in the engine at once.
//! - `Simulator::set_dcbx_config` changes a port's local DCBX configuration at run time (as
//!   `lldptool -T ... -V PFC enabled=...` does): the agent sends at once and the ports
//!   renegotiate.

use lossless_proto::dcbx::{Agent, DcbxConfig, EtsParams, Event as DcbxEvent, OperPfc, Source};
use lossless_proto::ets::{EtsConfig, PortParams, Scheduler};
use lossless_proto::flow_control::{FlowControlConfig, Mode};
use lossless_proto::units::{Instant, Rate};

use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::{Observer, WireFrame};
use crate::selection::{Ets, PortSelection};
use crate::sim::order::schedule;
use crate::sim::{Event, Simulator};

/// The DCBX state of one port.
pub(crate) struct PortDcbx {
    pub(crate) agent: Agent,
    timer_at: Instant,
    /// The link's flow-control registers; mode and enabled priorities come from DCBX.
    fc_template: FlowControlConfig,
    /// Scheduler parameters (rate, largest frame, CBS idle slopes).
    ets_params: PortParams,
    /// PFC enable bitmap in force (0: PFC off).
    pub(crate) applied_pfc: u8,
    /// ETS tables in force.
    pub(crate) applied_ets: Option<EtsParams>,
    /// When PFC first became operational with a DCBX peer.
    pub(crate) operational_at: Option<Instant>,
    /// When the port's engines were last reconfigured by DCBX.
    pub(crate) last_change_at: Option<Instant>,
    /// Reconfigurations applied.
    pub(crate) reconfigurations: u32,
    /// Operational ETS tables the scheduler could not run (e.g. a vendor TSA), last one.
    pub(crate) ets_error: Option<String>,
    /// LLDPDUs put on the wire.
    pub(crate) lldp_tx_frames: u64,
}

impl PortDcbx {
    /// A port's DCBX state before time 0: PFC off, ETS not yet applied.
    pub(crate) fn new(agent: Agent, fc_template: FlowControlConfig, ets_params: PortParams) -> Self {
        PortDcbx {
            agent,
            timer_at: Instant::MAX,
            fc_template,
            ets_params,
            applied_pfc: 0,
            applied_ets: None,
            operational_at: None,
            last_change_at: None,
            reconfigurations: 0,
            ets_error: None,
            lldp_tx_frames: 0,
        }
    }
}

/// The flow-control configuration of a DCBX port with PFC enable bitmap `enable`.
fn pfc_config(template: &FlowControlConfig, enable: u8) -> FlowControlConfig {
    let mut c = *template;
    if enable == 0 {
        c.mode = Mode::Off;
        return c;
    }
    c.mode = Mode::Pfc;
    for (q, pc) in c.priorities.iter_mut().enumerate() {
        pc.enabled = enable & (1 << q) != 0;
    }
    c
}

/// Line time of an LLDP frame of `len` bytes (FCS included): (last bit, wire free).
fn lldp_times(rate: Rate, now: Instant, len: u64) -> (Instant, Instant) {
    (now + rate.time_for_bytes(len + 8), now + rate.wire_time(len))
}

/// Why [`Simulator::set_dcbx_config`] could not change a port's DCBX configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DcbxChangeError {
    /// The port does not exist.
    #[error("port {port} does not exist ({ports} ports)")]
    NoSuchPort {
        /// The port asked for.
        port: PortId,
        /// How many ports the simulation has.
        ports: usize,
    },
    /// The port runs no DCBX agent.
    #[error("port {port} runs no DCBX agent")]
    NoAgent {
        /// The port.
        port: PortId,
    },
    /// The agent refused the configuration.
    #[error("port {port}: DCBX configuration refused: {reason}")]
    Refused {
        /// The port.
        port: PortId,
        /// The agent's reason.
        reason: lossless_proto::dcbx::DcbxConfigError,
    },
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Starts every DCBX agent at time 0 (link up).
    pub(in crate::sim) fn start_dcbx(&mut self) {
        for p in 0..self.ports.len() {
            if let Some(d) = &mut self.ports[p].dcbx {
                d.timer_at = Instant::ZERO;
                schedule!(self, Instant::ZERO, Event::DcbxTimer(p as PortId));
            }
        }
    }

    /// The agent's timer fired.
    pub(in crate::sim::features) fn on_dcbx_timer(&mut self, p: PortId) {
        let now = self.now;
        let Some(d) = self.ports[p as usize].dcbx.as_deref_mut() else {
            return;
        };
        if d.timer_at != now {
            return; // superseded
        }
        d.timer_at = Instant::MAX;
        d.agent.handle_timeout(now);
        self.after_dcbx(p);
    }

    /// An LLDP frame (without FCS) arrived at `p`.
    pub(in crate::sim::features) fn lldp_received(&mut self, p: PortId, frame: &[u8]) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        match port.dcbx.as_deref_mut() {
            Some(d) => {
                if !d.agent.handle_ethernet(now, frame) {
                    // not an LLDP frame the agent accepts (e.g. a wrong destination address)
                    port.counts_mut().lldp_rx_ignored += 1;
                }
                self.after_dcbx(p);
            }
            None => port.counts_mut().lldp_rx_ignored += 1,
        }
    }

    /// After any agent call: queue its LLDPDUs, apply Operational changes, re-arm its timer.
    fn after_dcbx(&mut self, p: PortId) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let Some(d) = port.dcbx.as_deref_mut() else {
            return;
        };
        while let Some(f) = d.agent.poll_transmit(now) {
            port.lldp_tx.push_back(f);
            port.lldp_queued = true;
        }
        let mut changed = false;
        while let Some(e) = d.agent.poll_event() {
            changed |= matches!(
                e,
                DcbxEvent::OperationalChanged(_) | DcbxEvent::RemoteChanged(_) | DcbxEvent::ModeChanged(_)
            );
        }
        if let Some(t) = d.agent.poll_timeout() {
            let t = t.max(now);
            if t < d.timer_at {
                d.timer_at = t;
                schedule!(self, t, Event::DcbxTimer(p));
            }
        }
        if changed || d.applied_ets.is_none() {
            self.apply_dcbx(p);
        }
        self.try_transmit(p);
    }

    /// Configures `p`'s flow-control engine and scheduler from its agent's Operational.
    fn apply_dcbx(&mut self, p: PortId) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let Some(d) = port.dcbx.as_deref_mut() else {
            return;
        };
        let oper = d.agent.operational();
        let peer = matches!(
            oper.pfc,
            OperPfc::Operational {
                source: Source::Local | Source::Peer,
                ..
            }
        ) && d.agent.remote().is_some();
        let enable = if peer { oper.pfc.enable() } else { 0 };
        let ets = oper.ets.params;
        let mut reconfigured = false;
        if peer && d.operational_at.is_none() {
            d.operational_at = Some(now);
        }
        if d.applied_ets != Some(ets) {
            let built = EtsConfig::from_tables(8, &ets.to_tables())
                .map_err(|e| e.to_string())
                .and_then(|c| Scheduler::ieee(&c, &d.ets_params).map_err(|e| e.to_string()));
            match built {
                Ok(mut s) => {
                    d.applied_ets = Some(ets);
                    d.ets_error = None;
                    reconfigured = true;
                    // the frames already queued carry over, oldest first per priority
                    let mut err = None;
                    for (q, queue) in port.queues.iter().enumerate() {
                        for f in &queue.frames {
                            if let Err(e) = s.enqueue(now, q as u8, f.len) {
                                err = Some(e);
                            }
                        }
                    }
                    if let Some(e) = err {
                        self.engine_fault(p, "DCBX ETS scheduler refused a queued frame", &e);
                        return;
                    }
                    port.sel = PortSelection::Ets(Box::new(Ets(s)));
                }
                Err(e) => d.ets_error = Some(e),
            }
        }
        if enable != d.applied_pfc {
            let cfg = pfc_config(&d.fc_template, enable);
            if !self.reconfigure_flow_control(p, cfg, "DCBX PFC") {
                return;
            }
            let port = &mut self.ports[p as usize];
            let Some(d) = port.dcbx.as_deref_mut() else {
                return;
            };
            port.lossless = enable;
            d.applied_pfc = enable;
            reconfigured = true;
            self.arm_timer(p);
        }
        if reconfigured && let Some(d) = self.ports[p as usize].dcbx.as_deref_mut() {
            d.reconfigurations += 1;
            d.last_change_at = Some(now);
        }
    }

    /// Replaces the local DCBX configuration of port `port` (its index in `Report::ports`)
    /// at the current time, as `lldptool -T` does on a running port: the agent sends an
    /// LLDPDU at once and both ends renegotiate; the port's engines follow the new
    /// Operational. Fails for a port without a DCBX agent or an invalid configuration.
    pub fn set_dcbx_config(&mut self, port: PortId, cfg: DcbxConfig) -> Result<(), DcbxChangeError> {
        let (now, ports) = (self.now, self.ports.len());
        let d = self
            .ports
            .get_mut(port as usize)
            .ok_or(DcbxChangeError::NoSuchPort { port, ports })?
            .dcbx
            .as_deref_mut()
            .ok_or(DcbxChangeError::NoAgent { port })?;
        d.agent
            .set_config(now, cfg)
            .map_err(|reason| DcbxChangeError::Refused { port, reason })?;
        self.after_dcbx(port);
        Ok(())
    }

    /// Starts the oldest queued LLDPDU on `p` (its transmitter is idle). Returns false when
    /// none is queued.
    pub(in crate::sim::features) fn start_lldp(&mut self, p: PortId) -> bool {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let Some(frame) = port.lldp_tx.pop_front() else {
            port.lldp_queued = false;
            return false;
        };
        port.lldp_queued = !port.lldp_tx.is_empty();
        let len = frame.len() as u64 + 4;
        let (last_bit, free_at) = lldp_times(port.rate, now, len);
        let w = WireFrame::Lldp { len: len as u32 };
        port.busy = true;
        if let Some(d) = port.dcbx.as_deref_mut() {
            d.lldp_tx_frames += 1;
        }
        let arrive = last_bit + port.prop;
        self.observer.tx_start(p, &w, now, last_bit);
        self.observer.lldp_tx(p, &frame, now);
        schedule!(self, free_at, Event::TxEnd(p));
        // (on the local wire, or across a cut link with its bytes: `partition.rs`)
        self.put_lldp_on_wire(p, w, frame, arrive);
        true
    }
}
