//! The switch: a frame arriving on an ingress port is routed (ECMP among equal-cost next
//! hops), admitted by the shared buffer (which may raise PFC on the ingress port), queued at
//! the egress port (`port.rs`); the buffer's charge is released when the frame leaves.

use std::cell::Cell;

use crate::buffer::{Admission, SwitchBuffer};
use crate::config::SimConfig;
use crate::config::model::{Ecmp, ns3_ecmp_hash};
use crate::event::EventQueue;
use crate::frame::{DropReason, FlowId, Frame, FrameKind, NO_PORT, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::fabric::routes;
use crate::sim::prefetch::prefetch_egress;
use crate::sim::{Event, FlowState, Node, Simulator};

/// A switch. Laid out by hand (`repr(C)`; a node starts a cache line): the node's tag, the
/// routes and the start of the buffer's totals share the first line, the buffer's other
/// totals the second (a frame's routing, admission and release touch those two).
#[repr(C)]
pub(crate) struct Switch {
    /// Egress candidates per destination node (empty for switches and unreachable hosts);
    /// set once every port exists.
    pub(in crate::sim) routes: routes::Routes,
    pub(crate) buffer: SwitchBuffer,
    pub(crate) ports: Vec<PortId>,
}

/// The ns-3 ECMP hashes a QP's frames got at the switches they crossed, remembered: the hash
/// of a frame between the QP's hosts depends only on the switch and the direction, so it is
/// computed once per switch and direction. A slot per direction and hop (the frame's hop
/// count, modulo 4) holds the switch it is for; a slot holding another switch (another path
/// after a reroute, or a path of more than 4 hops) is computed again and replaced.
pub(crate) struct EcmpMemo([Cell<u64>; 8]);

/// A slot that holds no hash: switch `NodeId::MAX` (node ids index the nodes, so none is it).
const ECMP_EMPTY: u64 = u64::MAX;

impl EcmpMemo {
    /// A memo holding nothing.
    pub(crate) fn new() -> EcmpMemo {
        EcmpMemo([const { Cell::new(ECMP_EMPTY) }; 8])
    }

    /// The hash at switch `node`, hop `hop` of direction `reverse`: remembered, or
    /// `compute`d and remembered.
    #[inline(always)]
    fn get(&self, node: NodeId, hop: u8, reverse: bool, compute: impl FnOnce() -> u32) -> u32 {
        if let Some(h) = self.peek(node, hop, reverse) {
            return h;
        }
        let h = compute();
        self.0[Self::slot(hop, reverse)].set((u64::from(node) << 32) | u64::from(h));
        h
    }

    /// The hash remembered at switch `node`, hop `hop` of direction `reverse`, if any.
    #[inline(always)]
    fn peek(&self, node: NodeId, hop: u8, reverse: bool) -> Option<u32> {
        let e = self.0[Self::slot(hop, reverse)].get();
        ((e >> 32) as NodeId == node).then_some(e as u32)
    }

    /// The slot of hop `hop` (modulo 4) of direction `reverse`.
    #[inline(always)]
    fn slot(hop: u8, reverse: bool) -> usize {
        (usize::from(reverse) << 2) | usize::from(hop & 3)
    }
}

/// Mixed into the ECMP key of frames that travel from a flow's receiver to its sender.
pub(in crate::sim) const REVERSE_HASH: u64 = 0x5245_5645_5253_4500;

pub(in crate::sim) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// [`Ecmp::FlowHash`]'s pick among `n` next hops at switch `node` for a frame of `flow`.
#[inline(always)]
fn flow_hash_pick(seed: u64, node: NodeId, flow: FlowId, reverse: bool, n: usize) -> usize {
    let dir = if reverse { REVERSE_HASH } else { 0 };
    let h = splitmix64(flow as u64 ^ ((node as u64) << 32) ^ seed ^ dir);
    (h % n as u64) as usize
}

/// [`Ecmp::Ns3`]'s hash at switch `node` of a frame of flow `f` from `src` to `dst` (`reverse`:
/// a reply or CNP, whose UDP ports are the data's swapped).
#[inline(always)]
fn ns3_flow_hash(f: &FlowState, src: NodeId, dst: NodeId, node: NodeId, reverse: bool) -> u32 {
    ns3_ports_hash(f.sport, f.dport, src, dst, node, reverse)
}

/// [`Ecmp::Ns3`]'s hash at switch `node` of a frame from `src` to `dst` of a flow with UDP
/// ports `sport`, `dport` (swapped for `reverse`).
#[inline(always)]
fn ns3_ports_hash(sport: u16, dport: u16, src: NodeId, dst: NodeId, node: NodeId, reverse: bool) -> u32 {
    let (sport, dport) = if reverse { (dport, sport) } else { (sport, dport) };
    ns3_ecmp_hash(src, dst, sport, dport, node)
}

/// The index among `n` (> 1) equal-cost next hops that switch `node` picks for a data frame
/// (`reverse`: a reply) of flow `flow` from `src` to `dst` with UDP ports `ports`, as
/// `Simulator::route` does, for those that replay a run's routing before it runs.
pub(crate) fn flow_pick(
    config: &SimConfig,
    node: NodeId,
    flow: FlowId,
    (src, dst): (NodeId, NodeId),
    ports: (u16, u16),
    reverse: bool,
    n: usize,
) -> usize {
    match config.model.ecmp {
        Ecmp::FlowHash => flow_hash_pick(config.seed, node, flow, reverse, n),
        Ecmp::Ns3 => (ns3_ports_hash(ports.0, ports.1, src, dst, node, reverse) % n as u32) as usize,
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// `frame` has left switch `node`'s buffer (sent, dequeued or discarded): its ingress
    /// (port, priority) is charged that much less, and a pair leaving XOFF releases its
    /// port's flow-control request.
    #[inline(always)]
    pub(crate) fn release_ingress(&mut self, node: NodeId, frame: Frame) {
        if frame.ingress == NO_PORT {
            return;
        }
        let Node::Switch(sw) = &mut self.nodes[node as usize] else {
            return;
        };
        let in_local = self.ports[frame.ingress as usize].local as usize;
        let xon = sw.buffer.release(in_local, frame.priority, frame.len as u64);
        if O::BUFFER_STATE {
            let occ = sw.buffer.occupancy(in_local, frame.priority);
            self.observer
                .buffer_changed(node, in_local as u32, frame.priority, occ, self.now);
        }
        if xon {
            self.set_pair_xoff(frame.ingress, frame.priority, false);
        }
    }

    /// The egress port of switch `node` towards `frame`'s destination (ECMP among equal-cost
    /// next hops), or `None` without a route.
    #[inline(always)]
    pub(crate) fn route(&self, node: NodeId, frame: &Frame) -> Option<PortId> {
        let Node::Switch(sw) = &self.nodes[node as usize] else {
            return None;
        };
        Self::route_at(sw, &self.config, &self.flows, node, frame)
    }

    /// [`Self::route`] at switch `sw` (node `node`), given the fields it reads (so that the
    /// receive path routes and admits with one borrow of the switch).
    #[inline(always)]
    fn route_at(
        sw: &Switch,
        config: &SimConfig,
        flows: &[FlowState],
        node: NodeId,
        frame: &Frame,
    ) -> Option<PortId> {
        let cands = sw.routes.get(frame.dst as usize);
        match cands.len() {
            0 => None,
            1 => Some(cands[0]),
            n => {
                // the ns-3 hash of a QP's frame remembered at this switch: picked here, without
                // the call (most frames that have a choice cross a switch their QP crossed)
                if config.model.ecmp == Ecmp::Ns3
                    && frame.kind != FrameKind::Cnm
                    && let Some(qp) = flows.get(frame.flow as usize).and_then(|f| f.qp.as_deref())
                    && let Some(h) = qp.ecmp.peek(node, frame.hops, frame.kind.is_reverse())
                {
                    return Some(cands[(h % n as u32) as usize]);
                }
                Some(cands[Self::ecmp_pick(config, flows, node, frame, n)])
            }
        }
    }

    /// The index among `n` (> 1) equal-cost next hops that switch `node` picks for `frame`
    /// ([`Self::route_in`]'s choice; the ns-3 hash of a QP's frame from its [`EcmpMemo`]).
    #[inline(never)]
    fn ecmp_pick(config: &SimConfig, flows: &[FlowState], node: NodeId, frame: &Frame, n: usize) -> usize {
        let reverse = frame.kind.is_reverse();
        match config.model.ecmp {
            Ecmp::FlowHash => flow_hash_pick(config.seed, node, frame.flow, reverse, n),
            Ecmp::Ns3 => {
                let f = &flows[frame.flow as usize];
                let hash = || ns3_flow_hash(f, frame.src, frame.dst, node, reverse);
                // a QP's data, replies and CNPs go between its two hosts (they are made in
                // `qp.rs` and nothing changes a frame's ends), so the hash of each direction
                // depends only on the switch; a CNM starts at a switch
                debug_assert!(
                    frame.kind == FrameKind::Cnm
                        || f.qp.is_none()
                        || (frame.src, frame.dst)
                            == if reverse {
                                (f.spec.dst, f.spec.src)
                            } else {
                                (f.spec.src, f.spec.dst)
                            }
                );
                let h = match f.qp.as_deref() {
                    Some(qp) if frame.kind != FrameKind::Cnm => qp.ecmp.get(node, frame.hops, reverse, hash),
                    _ => hash(),
                };
                (h % n as u32) as usize
            }
        }
    }

    /// [`Self::route`] at switch `sw` (node `node`) for a frame of `flow` from `src` to `dst`;
    /// `reverse` for a flow's replies and CNPs, which hash apart from its data.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::sim) fn route_in(
        sw: &Switch,
        config: &SimConfig,
        flows: &[FlowState],
        node: NodeId,
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        reverse: bool,
    ) -> Option<PortId> {
        let cands = sw.routes.get(dst as usize);
        match cands.len() {
            0 => None,
            1 => Some(cands[0]),
            n => Some(match config.model.ecmp {
                Ecmp::FlowHash => cands[flow_hash_pick(config.seed, node, flow, reverse, n)],
                Ecmp::Ns3 => {
                    let h = ns3_flow_hash(&flows[flow as usize], src, dst, node, reverse);
                    cands[(h % n as u32) as usize]
                }
            }),
        }
    }

    /// A data frame arrived on port `p` of switch `node`: route, admit, queue at the egress.
    pub(in crate::sim) fn switch_receive(&mut self, node: NodeId, p: PortId, mut frame: Frame) {
        frame.hops = frame.hops.saturating_add(1);
        if frame.hops > self.patho.hop_limit {
            self.drop_frame(p, frame, DropReason::HopLimit);
            return;
        }
        // one borrow of the switch for the route and the admission (its node indexed and
        // matched once), unless a fault hook runs between them
        let Node::Switch(sw) = &mut self.nodes[node as usize] else {
            return;
        };
        let Some(out) = Self::route_at(sw, &self.config, &self.flows, node, &frame) else {
            self.drop_frame(p, frame, DropReason::NoRoute);
            return;
        };
        prefetch_egress(&self.ports, out, frame.priority);
        let sw = if self.patho.faults {
            if self.hook_switch_fault(p, out, frame) {
                return;
            }
            let Node::Switch(sw) = &mut self.nodes[node as usize] else {
                return;
            };
            sw
        } else {
            sw
        };
        let port = &self.ports[p as usize];
        let local = port.local as usize;
        let lossless = port.lossless & (1 << frame.priority) != 0;
        match sw.buffer.admit(local, frame.priority, frame.len as u64, lossless) {
            Admission::Dropped(reason) => self.drop_frame(p, frame, reason),
            Admission::Admitted { xoff } => {
                if O::BUFFER_STATE {
                    let occ = sw.buffer.occupancy(local, frame.priority);
                    self.observer
                        .buffer_changed(node, local as u32, frame.priority, occ, self.now);
                }
                if !self.enqueue(out, frame) {
                    return;
                }
                if xoff {
                    self.hook_xoff(node, p, frame.priority);
                    self.set_pair_xoff(p, frame.priority, true);
                }
                self.try_transmit(out);
            }
        }
    }
}
