//! The port's MAC flow-control engine driven by the simulator: its deadlines, and the
//! (ingress port, priority) pairs whose XOFF/XON state raises and releases the engine's
//! PAUSE/PFC request.

use lossless_proto::flow_control::{FlowControl, FlowControlConfig, Mode};
use lossless_proto::units::Instant;

use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::Observer;
use crate::sim::order::schedule;
use crate::sim::{Event, Simulator};

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Tells the observer of a changed pause state and schedules the engine's next deadline
    /// when it may have moved.
    pub(in crate::sim) fn arm_timer(&mut self, p: PortId) {
        if O::PAUSE_STATE {
            let port = &mut self.ports[p as usize];
            let mask = port.mac.paused_mask(self.now);
            if mask != port.paused_seen {
                port.paused_seen = mask;
                self.observer.pause_changed(p, mask, self.now);
            }
        }
        let port = &mut self.ports[p as usize];
        if !port.timer_stale {
            return;
        }
        port.timer_stale = false;
        if let Some(d) = port.mac.poll_timeout() {
            let d = d.max(self.now);
            if d < port.timer_at {
                port.timer_at = d;
                schedule!(self, d, Event::MacTimer(p));
            }
        }
    }

    /// The engine's deadline fired: let it act, then transmit what became due.
    pub(in crate::sim) fn on_mac_timer(&mut self, p: PortId) {
        let now = self.now;
        {
            let port = &mut self.ports[p as usize];
            if port.timer_at != now {
                return; // superseded by an earlier deadline that already fired
            }
            port.timer_at = Instant::MAX;
            port.mac.handle_timeout(now);
            port.engine_changed();
        }
        self.try_transmit(p);
        self.arm_timer(p);
    }

    /// Records a (ingress port, priority) pair entering or leaving XOFF and drives the
    /// port's flow-control request: per priority for PFC, the whole link for PAUSE.
    pub(in crate::sim) fn set_pair_xoff(&mut self, p: PortId, prio: u8, on: bool) {
        let port = &mut self.ports[p as usize];
        let before = port.xoff_pairs;
        if on {
            port.xoff_pairs |= 1 << prio;
        } else {
            port.xoff_pairs &= !(1 << prio);
        }
        // a priority outside the PFC vector (DCBX may have just removed it) has no request
        // to change: the pair stays recorded and goes out if the priority is enabled again
        let Some(set) = request_target(&port.mac, prio) else {
            return;
        };
        let (level, changed) = match port.mac.config().mode {
            Mode::Pause => (port.xoff_pairs != 0, (before != 0) != (port.xoff_pairs != 0)),
            _ => (on, before != port.xoff_pairs),
        };
        if changed {
            self.drive_request(p, set, level, "flow-control request refused");
        }
    }

    /// Raises (`level`) or releases port `p`'s flow-control request `set` (a priority for
    /// PFC, 0 for PAUSE), tells the observer and transmits what became due; an engine that
    /// refuses is a fault (`what`).
    pub(in crate::sim) fn drive_request(&mut self, p: PortId, set: u8, level: bool, what: &str) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        port.engine_changed();
        if let Err(e) = port.mac.set_request(now, set, level) {
            self.engine_fault(p, what, &e);
            return;
        }
        self.observer.request_changed(p, set, level, now);
        self.try_transmit(p);
        self.arm_timer(p);
    }

    /// Gives port `p`'s flow-control engine the configuration `cfg` (DCBX's negotiated PFC
    /// vector, pfcwd taking a priority out or putting it back): requests the new
    /// configuration ended are released for the observer, and the requests of (ingress
    /// port, priority) pairs still in XOFF whose priority is enabled again go out now.
    /// False after an engine fault (`what` says whose change it was).
    pub(in crate::sim) fn reconfigure_flow_control(
        &mut self,
        p: PortId,
        cfg: FlowControlConfig,
        what: &str,
    ) -> bool {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let requested_before = port.mac.requested_mask();
        if let Err(e) = port.mac.reconfigure(now, cfg) {
            self.engine_fault(p, &format!("{what}: configuration refused"), &e);
            return false;
        }
        let mut dropped = requested_before & !port.mac.requested_mask();
        while dropped != 0 {
            let q = dropped.trailing_zeros() as u8;
            dropped &= dropped - 1;
            self.observer.request_changed(p, q, false, now);
        }
        let port = &mut self.ports[p as usize];
        port.engine_reconfigured();
        let mut raised = port.xoff_pairs & port.mac.config().active_mask() & !port.mac.requested_mask();
        while raised != 0 {
            let q = raised.trailing_zeros() as u8;
            raised &= raised - 1;
            if let Err(e) = self.ports[p as usize].mac.set_request(now, q, true) {
                self.engine_fault(
                    p,
                    &format!("{what}: a flow-control request could not be restored"),
                    &e,
                );
                return false;
            }
            self.observer.request_changed(p, q, true, now);
        }
        true
    }
}

/// The request of `mac` that priority `prio`'s congestion raises: `prio` itself for PFC
/// when the priority is in the vector, 0 (the link) for PAUSE; none without flow control
/// or for a priority outside the vector.
pub(in crate::sim) fn request_target(mac: &FlowControl, prio: u8) -> Option<u8> {
    let cfg = mac.config();
    match cfg.mode {
        Mode::Off => None,
        Mode::Pause => Some(0),
        Mode::Pfc if cfg.active_mask() & (1 << prio) == 0 => None,
        Mode::Pfc => Some(prio),
    }
}
