//! The link: a frame's last bit reaches the far port a propagation delay after it left;
//! control frames go to that port's flow-control engine, LLDPDUs to its DCBX agent, data
//! frames to the switch (`switch.rs`) or host (`host.rs`) that owns the port.

use lossless_proto::flow_control::ReceivedControl;

use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::{Observer, WireFrame};
use crate::sim::{Event, Simulator};

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The oldest frame on the wire towards `p` arrived whole: hand it to what consumes it.
    pub(in crate::sim) fn on_arrive(&mut self, p: PortId) {
        let now = self.now;
        let peer = self.ports[p as usize].peer;
        if self.hook_lost_on_wire(p, peer) {
            return;
        }
        let Some(w) = self.ports[peer as usize].inflight.pop_front() else {
            return;
        };
        match w {
            WireFrame::Control(cf) => {
                let port = &mut self.ports[p as usize];
                port.stats.count_control_rx(&cf);
                port.mac
                    .handle_control_frame(now, &ReceivedControl::multicast(cf));
                port.engine_changed();
                self.observer.control_received(p, &cf, now);
                self.try_transmit(p);
                self.arm_timer(p);
            }
            WireFrame::Lldp { .. } => self.hook_lldp_arrived(p, peer),
            WireFrame::Data(mut frame) => {
                // (counted received as sent by the peer, see `received`)
                let port = &self.ports[p as usize];
                let node = port.node;
                frame.ingress = p;
                if port.at_switch() {
                    self.switch_receive(node, p, frame);
                } else {
                    self.host_receive(node, frame);
                }
            }
        }
    }
}
