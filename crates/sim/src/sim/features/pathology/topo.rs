//! Static routes, link failures and repairs, the hop limit, and the per-port fault flags the
//! hot path tests.
//!
//! - A link that goes down loses the frames on its wire (each is dropped, `link_down`, when
//!   it would have arrived) and the frames queued at its two ports (dropped at once, their
//!   buffer charges released); frames routed to a down port are dropped. Its ports send
//!   nothing until it comes back up; their flow-control engines keep their state. With
//!   `reroute`, every switch recomputes its shortest paths over the links still up.
//! - Static routes replace the computed candidates of (switch, destination host), from the
//!   start or from their `at`; after a reroute, a static route keeps its next hops that are
//!   still up (and falls back to the computed ones when none is).
//! - The hop limit: a frame entering more switches than `hop_limit` is dropped
//!   (`hop_limit`), so that frames caught in a routing loop die (an Ethernet frame has no
//!   TTL; the IP TTL of a routed fabric plays this part).

use crate::config::pathology::TopologyAction;
use crate::event::EventQueue;
use crate::frame::{DropReason, Frame, NO_PORT, NodeId, PortId};
use crate::observer::{Observer, WireFrame};
use crate::selection::TransmissionSelection;
use crate::sim::fabric::routes;
use crate::sim::features::pathology::EventRecord;
use crate::sim::{Event, Node, Simulator};

/// A port's fault state, tested on the hot path.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PortFault {
    /// The port's link is down.
    pub(crate) down: bool,
    /// Priorities whose frames routed to this port are dropped (link down: all; pfcwd drop).
    pub(crate) drop_out: u8,
    /// Priorities whose frames arriving on this port are dropped (pfcwd drop).
    pub(crate) drop_in: u8,
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Drops `frame` (arrived on `p`, routed to `out`) when a fault says so; true if dropped.
    #[inline]
    pub(in crate::sim::features) fn fault_drop(&mut self, p: PortId, out: PortId, frame: Frame) -> bool {
        let bit = 1u8 << frame.priority;
        let (drop_in, drop_out, down) = {
            let f_in = &self.ports[p as usize].fault;
            let f_out = &self.ports[out as usize].fault;
            (f_in.drop_in & bit != 0, f_out.drop_out & bit != 0, f_out.down)
        };
        if !(drop_in || drop_out) {
            return false;
        }
        let reason = if drop_out && down {
            DropReason::LinkDown
        } else {
            DropReason::Pfcwd
        };
        if reason == DropReason::Pfcwd {
            if drop_in {
                self.wd_count_drop(p, frame.priority, false);
            } else {
                self.wd_count_drop(out, frame.priority, true);
            }
        }
        self.drop_frame(p, frame, reason);
        true
    }

    /// The oldest entry on the wire towards `p` was lost when its link went down: takes it
    /// off (dropping a data frame) instead of delivering it.
    pub(in crate::sim::features) fn lost_arrival(&mut self, p: PortId) {
        let peer = self.ports[p as usize].peer;
        let port = &mut self.ports[peer as usize];
        port.wire_lost -= 1;
        match port.inflight.pop_front() {
            Some(WireFrame::Data(frame)) => {
                let st = &mut port.counts_mut().prio[frame.priority as usize & 7];
                st.wire_lost_frames += 1;
                st.wire_lost_bytes += u64::from(frame.len);
                self.drop_frame(p, frame, DropReason::LinkDown)
            }
            Some(WireFrame::Lldp { .. }) => {
                port.lldp_wire.pop_front();
            }
            _ => {}
        }
    }

    /// Discards every frame queued at port `p` for priority `q` (a link going down, a pfcwd
    /// drop action): buffer charges released, transmission selection told, each dropped
    /// with `reason` (charged to the port it entered by, or `p` at its source).
    pub(in crate::sim) fn discard_queue(&mut self, p: PortId, q: u8, reason: DropReason) {
        let now = self.now;
        let node = self.ports[p as usize].node;
        while let Some(frame) = self.ports[p as usize].queues[q as usize].frames.pop_front() {
            let port = &mut self.ports[p as usize];
            port.queues[q as usize].bytes -= frame.len as u64;
            self.observer
                .queue_changed(p, q, port.queues[q as usize].bytes, now);
            if port.queues[q as usize].frames.is_empty() {
                port.nonempty &= !(1 << q);
            }
            if let Err(e) = port.sel.discarded(now, q, frame.len) {
                self.engine_fault(p, "transmission selection lost track of a discarded frame", &e);
                return;
            }
            if self.patho.victims.is_some() {
                self.victims_dequeued(p, &frame);
            }
            if reason == DropReason::Pfcwd {
                self.wd_count_drop(p, q, true);
            }
            let charged = if frame.ingress == NO_PORT {
                p
            } else {
                frame.ingress
            };
            self.drop_frame(charged, frame, reason);
            self.release_ingress(node, frame);
        }
        // a host's blocked sources may use the freed NIC queue (nothing leaves while down)
        self.wake_blocked(node, q);
    }

    /// A scripted topology event.
    pub(in crate::sim) fn on_topology_event(&mut self, i: usize) {
        let Some(e) = self.patho.events.get(i).cloned() else {
            return;
        };
        let name = |s: &Self, n: NodeId| s.config.nodes[n as usize].name.clone();
        let what = match e.action {
            TopologyAction::LinkDown { a, b, reroute } => {
                self.set_link(a, b, false, reroute);
                format!(
                    "link {} – {} down{}",
                    name(self, a),
                    name(self, b),
                    if reroute { ", rerouted" } else { "" }
                )
            }
            TopologyAction::LinkUp { a, b, reroute } => {
                self.set_link(a, b, true, reroute);
                format!(
                    "link {} – {} up{}",
                    name(self, a),
                    name(self, b),
                    if reroute { ", rerouted" } else { "" }
                )
            }
            TopologyAction::BigRedSwitch(on) => {
                self.set_big_red_switch(on);
                format!("big red switch {}", if on { "on" } else { "off" })
            }
            TopologyAction::InstallRoutes => {
                let mut n = 0;
                for (r, installed) in &mut self.patho.routes {
                    if r.at == Some(e.at) && !*installed {
                        *installed = true;
                        n += 1;
                    }
                }
                self.apply_static_routes(false);
                format!("{n} static routes installed")
            }
        };
        self.patho.log.push(EventRecord { at: self.now, what });
    }

    /// Every link between `a` and `b` goes up or down.
    fn set_link(&mut self, a: NodeId, b: NodeId, up: bool, reroute: bool) {
        let links: Vec<usize> = (0..self.ports.len() / 2)
            .filter(|&l| {
                let (x, y) = (self.ports[2 * l].node, self.ports[2 * l + 1].node);
                (x, y) == (a, b) || (x, y) == (b, a)
            })
            .collect();
        // (in a split fabric every partition marks both ends, so that all compute the same
        // routes, and acts on the ports it owns: the frames on a cut link are in the
        // receiver's copy of its sender, which counts them lost as they arrive)
        for l in links {
            for p in [2 * l as PortId, 2 * l as PortId + 1] {
                if up {
                    let port = &mut self.ports[p as usize];
                    port.fault.down = false;
                    port.fault.drop_out = 0;
                } else {
                    let port = &mut self.ports[p as usize];
                    if port.fault.down {
                        continue;
                    }
                    port.fault.down = true;
                    port.fault.drop_out = 0xFF;
                    self.patho.faults = true;
                    port.wire_lost = port.inflight.len() as u32;
                    if self.owns_port(p) {
                        for q in 0..8u8 {
                            self.discard_queue(p, q, DropReason::LinkDown);
                        }
                    }
                }
            }
            if up {
                for p in [2 * l as PortId, 2 * l as PortId + 1] {
                    if !self.owns_port(p) {
                        continue;
                    }
                    let port = &mut self.ports[p as usize];
                    port.engine_changed();
                    self.try_transmit(p);
                    self.arm_timer(p);
                }
            }
        }
        if reroute {
            self.reroute();
        }
        self.victims_paths_changed();
    }

    /// Recomputes every switch's shortest paths over the links up, then the static routes.
    fn reroute(&mut self) {
        let node_ports: Vec<Vec<PortId>> = self
            .nodes
            .iter()
            .map(|n| {
                let ports: &[PortId] = match n {
                    Node::Host(h) => std::slice::from_ref(&h.port),
                    Node::Switch(sw) => &sw.ports,
                };
                ports
                    .iter()
                    .copied()
                    .filter(|&p| !self.ports[p as usize].fault.down)
                    .collect()
            })
            .collect();
        let is_host: Vec<bool> = self.nodes.iter().map(|n| matches!(n, Node::Host(_))).collect();
        let ns3_order = self.config.model.ecmp == crate::config::model::Ecmp::Ns3;
        let computed = routes::compute(&node_ports, &self.ports, &is_host, ns3_order);
        for (node, r) in self.nodes.iter_mut().zip(computed) {
            if let (Node::Switch(sw), Some(r)) = (node, r) {
                sw.routes = r;
            }
        }
        self.apply_static_routes(true);
    }

    /// Writes the installed static routes over the switches' routes; with `skip_down`, next
    /// hops whose links are down are left out (and a route with none left is not applied).
    pub(in crate::sim) fn apply_static_routes(&mut self, skip_down: bool) {
        let mut cands: Vec<PortId> = Vec::new();
        for (r, installed) in &self.patho.routes {
            if !*installed {
                continue;
            }
            let Node::Switch(sw) = &self.nodes[r.switch as usize] else {
                continue;
            };
            cands.clear();
            cands.extend(sw.ports.iter().copied().filter(|&p| {
                let port = &self.ports[p as usize];
                let peer_node = self.ports[port.peer as usize].node;
                r.via.contains(&peer_node) && !(skip_down && port.fault.down)
            }));
            if cands.is_empty() {
                continue;
            }
            if let Node::Switch(sw) = &mut self.nodes[r.switch as usize] {
                sw.routes.set(r.dst as usize, &cands);
            }
        }
    }

    /// The egress port of switch `node` for a data frame of `flow` to `dst` (the ECMP choice
    /// the flow's data frames get).
    pub(crate) fn route_of(&self, node: NodeId, flow: u32, dst: NodeId) -> Option<PortId> {
        let Node::Switch(sw) = &self.nodes[node as usize] else {
            return None;
        };
        let src = self.flows[flow as usize].spec.src;
        Self::route_in(sw, &self.config, &self.flows, node, flow, src, dst, false)
    }
}
