//! The link: a frame's last bit reaches the far port a propagation delay after it left;
//! control frames go to that port's flow-control engine, LLDPDUs to its DCBX agent, data
//! frames to the switch (`switch.rs`) or host (`host.rs`) that owns the port.

use lossless_proto::flow_control::ReceivedControl;

use crate::event::EventQueue;
use crate::frame::{Frame, FrameKind, PortId};
use crate::observer::{Observer, WireFrame};
use crate::sim::{Event, Simulator};

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The priority port `p`, which trusts DSCP, gives a received data frame: its RoCEv2
    /// packets (data and replies with their QP's `dscp`, CNPs with its `cnp_dscp`) by the
    /// port's map; frames without an IP header (plain frames, CNMs) keep their PCP.
    #[cold]
    fn classify_dscp(&self, p: PortId, frame: &Frame) -> u8 {
        let Some(map) = self.ports[p as usize].dscp_map.as_deref() else {
            return frame.priority;
        };
        let qp = self.flows[frame.flow as usize].spec.transport.as_deref();
        let dscp = match frame.kind {
            FrameKind::Plain | FrameKind::Cnm => None,
            FrameKind::RoceData | FrameKind::Ack | FrameKind::Nak | FrameKind::Sack => qp.map(|q| q.dscp),
            FrameKind::Cnp => qp.and_then(|q| q.cc.cnp_dscp()),
        };
        dscp.map_or(frame.priority, |d| map[usize::from(d & 63)])
    }

    /// The oldest frame on the wire towards `p` arrived whole: hand it to what consumes it.
    pub(in crate::sim) fn on_arrive(&mut self, p: PortId) {
        let now = self.now;
        let peer = self.ports[p as usize].peer;
        let wire = &mut self.ports[peer as usize];
        // the hook asked only when the wire lost frames or links corrupt them: otherwise the
        // sending port at hand is kept (no second index of it)
        let wire = if wire.wire_lost > 0 || self.link_errors.on {
            if self.hook_lost_on_wire(p, peer) {
                return;
            }
            &mut self.ports[peer as usize]
        } else {
            wire
        };
        let classify = wire.peer_trusts_dscp;
        let Some(w) = wire.inflight.pop_front_slot() else {
            return;
        };
        // matched in its slot, each kind copied out whole: a `WireFrame` copied first keeps
        // its tag in the frame's kind, and was moved in overlapping pieces that the next
        // read across them had to wait for (docs/benchmarks.md, "Frames and entries moved
        // whole")
        match w {
            &WireFrame::Control(cf) => {
                let port = &mut self.ports[p as usize];
                port.counts_mut().count_control_rx(&cf);
                port.mac
                    .handle_control_frame(now, &ReceivedControl::multicast(cf));
                port.engine_changed();
                self.observer.control_received(p, &cf, now);
                self.try_transmit(p);
                self.arm_timer(p);
            }
            WireFrame::Lldp { .. } => self.hook_lldp_arrived(p, peer),
            WireFrame::Data(frame) => {
                let mut frame = *frame;
                // (counted received as sent by the peer, see `received`)
                if classify {
                    frame.priority = self.classify_dscp(p, &frame);
                }
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
