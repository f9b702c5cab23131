//! Read-only views of a simulator's state for reports and checks: frames queued, received
//! and on the wire, the flows, a host's port, the pathology parts' state.

use lossless_proto::units::Instant;

use crate::config::traffic::FlowSpec;
use crate::event::EventQueue;
use crate::frame::{NodeId, PortId};
use crate::observer::{Observer, WireFrame};
use crate::sim::features::pathology::EventRecord;
use crate::sim::features::pathology::deadlock::Detector;
use crate::sim::features::pathology::pfcwd::SwitchWd;
use crate::sim::features::pathology::victims::Victims;
use crate::sim::{Event, Node, Qp, Simulator};
use crate::stats::FlowStats;

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Frames queued anywhere (egress queues and receive backlogs).
    pub fn queued_frames(&self) -> u64 {
        let q: usize = self
            .ports
            .iter()
            .flat_map(|p| p.queues.iter())
            .map(|q| q.frames.len())
            .sum();
        let r: usize = self
            .nodes
            .iter()
            .map(|n| {
                if let Node::Host(h) = n {
                    h.rx_queue.len() + h.nic.as_ref().map_or(0, |n| n.replies.len())
                } else {
                    0
                }
            })
            .sum();
        (q + r) as u64
    }
    /// Data frames and bytes of priority `q` port `p` received: what its peer sent, less what
    /// is still on the wire and what was lost on it.
    pub fn received(&self, p: PortId, q: u8) -> (u64, u64) {
        let peer = &self.ports[self.ports[p as usize].peer as usize];
        let (s, sent) = (&peer.counts().prio[q as usize & 7], &peer.queues[q as usize & 7]);
        let (mut frames, mut bytes) = (
            sent.sent_frames - s.wire_lost_frames,
            sent.sent_bytes - s.wire_lost_bytes,
        );
        for o in &peer.inflight {
            if let WireFrame::Data(f) = o
                && f.priority == q
            {
                frames -= 1;
                bytes -= u64::from(f.len);
            }
        }
        (frames, bytes)
    }

    /// Data frames on the wire.
    pub fn in_flight_frames(&self) -> u64 {
        self.ports
            .iter()
            .flat_map(|p| p.inflight.iter())
            .filter(|w| matches!(w, WireFrame::Data(_)))
            .count() as u64
    }
    pub(crate) fn flow_views(&self) -> impl Iterator<Item = (&FlowSpec, &FlowStats, Option<&Qp>)> {
        self.flows.iter().map(|f| (&f.spec, &f.stats, f.qp.as_deref()))
    }

    /// The NIC port of host `node`.
    pub(crate) fn host_port(&self, node: NodeId) -> PortId {
        match &self.nodes[node as usize] {
            Node::Host(h) => h.port,
            Node::Switch(sw) => sw.ports.first().copied().unwrap_or(0),
        }
    }

    /// The switches running pfcwd, with their watched queues.
    pub(crate) fn pfcwd_switches(&self) -> &[SwitchWd] {
        &self.patho.pfcwd
    }

    /// What the scripted topology events did, in order.
    pub(crate) fn topology_log(&self) -> &[EventRecord] {
        &self.patho.log
    }

    /// The deadlock and storm detector, when one runs.
    pub(crate) fn deadlock_detector(&self) -> Option<&Detector> {
        self.patho.detector.as_deref()
    }

    /// Victim accounting, when on.
    pub(crate) fn victims(&self) -> Option<&Victims> {
        self.patho.victims.as_deref()
    }

    /// When the detector ended the run on a deadlock, if it did.
    pub(crate) fn stopped_by_deadlock(&self) -> Option<Instant> {
        self.patho.stopped_by_deadlock
    }
}
