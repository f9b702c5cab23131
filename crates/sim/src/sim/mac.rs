//! The port's MAC flow-control engine driven by the simulator: its deadlines, and the
//! (ingress port, priority) pairs whose XOFF/XON state raises and releases the engine's
//! PAUSE/PFC request.

use lossless_proto::flow_control::Mode;
use lossless_proto::units::Instant;

use super::{Event, Simulator};
use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::Observer;

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Tells the observer of a changed pause state and schedules the engine's next deadline
    /// when it may have moved.
    pub(super) fn arm_timer(&mut self, p: PortId) {
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
                self.queue.push(d, Event::MacTimer(p));
            }
        }
    }

    /// The engine's deadline fired: let it act, then transmit what became due.
    pub(super) fn on_mac_timer(&mut self, p: PortId) {
        let now = self.now;
        {
            let port = &mut self.ports[p as usize];
            if port.timer_at != now {
                return; // superseded by an earlier deadline that already fired
            }
            port.timer_at = Instant::MAX;
            port.mac.handle_timeout(now);
            port.ctl_check = true;
            port.timer_stale = true;
        }
        self.try_transmit(p);
        self.arm_timer(p);
    }

    /// Records a (ingress port, priority) pair entering or leaving XOFF and drives the
    /// port's flow-control request: per priority for PFC, the whole link for PAUSE.
    pub(super) fn set_pair_xoff(&mut self, p: PortId, prio: u8, on: bool) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let before = port.xoff_pairs;
        if on {
            port.xoff_pairs |= 1 << prio;
        } else {
            port.xoff_pairs &= !(1 << prio);
        }
        let (set, level, changed) = match port.mac.config().mode {
            Mode::Off => return,
            Mode::Pause => (0u8, port.xoff_pairs != 0, (before != 0) != (port.xoff_pairs != 0)),
            // a priority outside the PFC vector (DCBX may have just removed it) has no request
            // to change: the pair stays recorded and goes out if the priority is enabled again
            Mode::Pfc if port.mac.config().active_mask() & (1 << prio) == 0 => return,
            Mode::Pfc => (prio, on, before != port.xoff_pairs),
        };
        if changed {
            port.ctl_check = true;
            port.timer_stale = true;
            if let Err(e) = port.mac.set_request(now, set, level) {
                self.engine_fault(p, "flow-control request refused", &e);
                return;
            }
            self.observer.request_changed(p, set, level, now);
            self.try_transmit(p);
            self.arm_timer(p);
        }
    }
}
