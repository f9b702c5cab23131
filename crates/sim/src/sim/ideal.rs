//! The ideal completion time of a finite flow as the field defines it: the flow's own
//! completion time alone in the idle fabric ([`crate::config::model::IdealFct::Alone`]), computed
//! exactly to the bit time along the path the flow really takes.
//!
//! Alone, nothing queues but the flow's own frames, so each frame goes through a
//! store-and-forward pipeline: frame i starts on hop h when it has fully arrived from hop
//! h − 1 (its last bit plus that hop's propagation and interface delays) and the hop's
//! transmitter is free of frame i − 1 (its last bit plus, under 802.3 framing, the 12-byte
//! inter-frame gap); the first hop starts a frame when the source emits it (at the flow's
//! start, then one pacing gap after the previous one, skipping off periods) and its NIC is
//! free. A receiver with a processing rate delivers each frame after processing it, in order.
//! A plain flow completes when its last frame is delivered; a RoCEv2 QP when the ACK of its
//! last packet (sent at once: the responder acknowledges a message's last packet
//! immediately) has come back to the requester over the reverse path. This is exactly what
//! the simulator's own sources, ports and hosts do with nothing else in the fabric, so a lone
//! flow's slowdown is 1 and no flow's is below it (`tests/ideal_fct.rs`).

use lossless_proto::flow_control::{Framing, ns3_tx_time};
use lossless_proto::units::{Duration, IFG_BYTES, Instant, PREAMBLE_SFD_BYTES, Rate};

use crate::config::model::ModelConfig;
use crate::config::traffic::{Pattern, frame_len};
use crate::event::EventQueue;
use crate::frame::{FlowId, Frame, FrameKind, NO_PORT, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::{Event, Node, Simulator};
use std::collections::HashMap;

/// When a frame started at 0 on a wire at `rate` has its last bit out, and when the wire is
/// free for the next frame, under `model`'s framing (as the MAC engines time it).
fn slot(model: &ModelConfig, rate: Rate, len: u64) -> (Duration, Duration) {
    let byte = rate.time_for_bytes(1);
    match model.framing {
        Framing::Ieee8023 => (
            byte.saturating_mul(len + PREAMBLE_SFD_BYTES),
            byte.saturating_mul(len + PREAMBLE_SFD_BYTES + IFG_BYTES),
        ),
        Framing::Ns3 => {
            let t = ns3_tx_time(byte, len);
            (t, t)
        }
    }
}

/// Sends a frame of `len` bytes emitted at `emit` through the store-and-forward `path`
/// whose transmitters are free at `free` (updated): when its last bit has arrived at the end.
fn pipeline(model: &ModelConfig, path: &[Hop], free: &mut [Instant], emit: Instant, len: u64) -> Instant {
    let mut at = emit;
    for (hop, free) in path.iter().zip(free.iter_mut()) {
        let start = at.max(*free);
        let (last, gap) = slot(model, hop.rate, len);
        *free = start + gap;
        at = start + last + hop.delay;
    }
    at
}

/// One hop of a path: the egress port's rate and its propagation plus interface delay.
#[derive(Clone, Copy)]
struct Hop {
    rate: Rate,
    delay: Duration,
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The egress ports a frame like `probe` crosses from its source host to its destination
    /// host, as the switches route it; `None` when it does not arrive (no route, a loop).
    fn path_of(&self, probe: Frame) -> Option<Vec<Hop>> {
        let mut hops = Vec::new();
        let mut port: PortId = self.host_port(probe.src);
        for _ in 0..=usize::from(self.patho.hop_limit).min(255) {
            let p = &self.ports[port as usize];
            hops.push(Hop {
                rate: p.rate,
                delay: p.prop,
            });
            let next = self.ports[p.peer as usize].node;
            if next == probe.dst {
                return Some(hops);
            }
            if !matches!(self.nodes[next as usize], Node::Switch(_)) {
                return None;
            }
            port = self.route(next, &probe)?;
        }
        None
    }

    /// The host's receive processing rate in b/s (none: it keeps up).
    fn rx_rate(&self, host: NodeId) -> Option<u64> {
        match &self.nodes[host as usize] {
            Node::Host(h) => h.rx_rate.map(|r| r.bps()),
            Node::Switch(_) => None,
        }
    }

    /// The host's receive processing time of a `len`-byte frame (none without a rate).
    fn rx_time(&self, host: NodeId, len: u64) -> Option<Duration> {
        match &self.nodes[host as usize] {
            Node::Host(h) => h.rx_rate.map(|r| r.time_for_bytes(len)),
            Node::Switch(_) => None,
        }
    }

    /// The completion time of finite flow `f` alone in the idle fabric (see the module's
    /// documentation); `None` for a flow without a size or whose frames cannot arrive. Flows
    /// alike in everything the time depends on (their paths' rates and delays, size, frames,
    /// pacing, ACK policy, receivers) share one computation through `cache`.
    pub(crate) fn ideal_alone(&self, f: FlowId, cache: &mut IdealCache) -> Option<Duration> {
        let fs = &self.flows[f as usize];
        let spec = &fs.spec;
        let size = spec.size?;
        let qp = spec.transport.as_deref();
        let kind = if qp.is_some() {
            FrameKind::RoceData
        } else {
            FrameKind::Plain
        };
        let probe = Frame {
            id: 0,
            flow: f,
            len: 0,
            ingress: NO_PORT,
            src: spec.src,
            dst: spec.dst,
            priority: spec.priority,
            kind,
            flags: 0,
            hops: 0,
        };
        let path = self.path_of(probe)?;
        // the replies' own path and the ACK policy: every `ack_every` in-order packets, and
        // the message's last at once
        let (back, acks) = match qp {
            Some(q) => {
                let ack = Frame {
                    kind: FrameKind::Ack,
                    src: spec.dst,
                    dst: spec.src,
                    ..probe
                };
                (
                    self.path_of(ack)?,
                    Some((
                        q.cc.cn_tag(),
                        u64::from(q.rc.ack_every.max(1)),
                        u64::from(q.rc.mtu),
                    )),
                )
            }
            None => (Vec::new(), None),
        };
        let pattern = match spec.pattern {
            Pattern::Line => (0, 0, 0, 0),
            Pattern::Cbr { rate } => (1, rate.bps(), 0, 0),
            Pattern::OnOff { rate, on, off } => (2, rate.bps(), on.as_ps(), off.as_ps()),
        };
        let key = Key {
            path: path.iter().map(|h| (h.rate.bps(), h.delay.as_ps())).collect(),
            back: back.iter().map(|h| (h.rate.bps(), h.delay.as_ps())).collect(),
            size,
            mtu: spec.mtu,
            acks,
            pattern,
            rx: (self.rx_rate(spec.src), self.rx_rate(spec.dst)),
        };
        if let Some(&d) = cache.0.get(&key) {
            return Some(d);
        }
        let d = self.alone(spec, &path, &back, size);
        cache.0.insert(key, d);
        Some(d)
    }

    /// [`Self::ideal_alone`] of flow `spec` of `size` bytes along `path`, its ACKs along
    /// `back`.
    fn alone(
        &self,
        spec: &crate::config::traffic::FlowSpec,
        path: &[Hop],
        back: &[Hop],
        size: u64,
    ) -> Duration {
        let model = &self.config.model;
        let qp = spec.transport.as_deref();
        let (mtu, data_len): (u64, Box<dyn Fn(u64) -> u64>) = match qp {
            Some(q) => {
                let cn_tag = q.cc.cn_tag();
                (
                    u64::from(q.rc.mtu).max(1),
                    Box::new(move |payload| model.roce_data_len(payload, cn_tag)),
                )
            }
            None => (spec.mtu.max(1), Box::new(frame_len)),
        };
        let nic = path[0].rate;
        let (ack_every, ack_len) = match qp {
            Some(q) => (u64::from(q.rc.ack_every.max(1)), model.reply_len()),
            None => (1, 0),
        };
        // per hop: when its transmitter is free of the previous frame (data, then ACKs)
        let mut free = vec![Instant::ZERO; path.len()];
        let mut free_back = vec![Instant::ZERO; back.len()];
        let mut emit = spec.next_on(spec.start);
        let mut delivered = Instant::ZERO;
        let mut acked = Instant::ZERO;
        let (mut remaining, mut packets) = (size, 0u64);
        loop {
            let payload = remaining.min(mtu);
            remaining -= payload;
            packets += 1;
            let len = data_len(payload);
            delivered = match self.rx_time(spec.dst, len) {
                Some(t) => pipeline(model, path, &mut free, emit, len).max(delivered) + t,
                None => pipeline(model, path, &mut free, emit, len),
            };
            if qp.is_some() && (remaining == 0 || packets % ack_every == 0) {
                // an ACK leaves the responder as the packet is delivered, behind the earlier
                // ACKs on the way back
                acked = pipeline(model, back, &mut free_back, delivered, ack_len);
            }
            if remaining == 0 {
                break;
            }
            // the next frame: one pacing gap later (a QP at its starting line rate, a plain
            // source at its NIC's rate; either at its pattern's rate when that is slower),
            // after any off period
            let gap = model.wire_time(nic, len);
            let gap = match qp {
                Some(_) => spec.gap(len).map_or(gap, |p| p.max(gap)),
                None => spec.gap(len).unwrap_or(gap),
            };
            emit = spec.next_on(emit + gap);
        }
        let done = match qp {
            None => delivered,
            Some(_) => match self.rx_time(spec.src, ack_len) {
                Some(t) => acked + t,
                None => acked,
            },
        };
        done.saturating_duration_since(spec.start)
    }
}

/// Ideal FCTs already computed, by everything they depend on.
#[derive(Default)]
pub(crate) struct IdealCache(HashMap<Key, Duration>);

/// What a flow's FCT alone depends on (its start does not: a pattern's phase runs from it).
#[derive(PartialEq, Eq, Hash)]
struct Key {
    /// (b/s, ps of delay) per hop, there and back.
    path: Vec<(u64, u128)>,
    back: Vec<(u64, u128)>,
    size: u64,
    mtu: u64,
    /// A QP's CN-TAG, ACK period and MTU.
    acks: Option<(bool, u64, u64)>,
    /// Kind, rate, on and off of the pattern.
    pattern: (u8, u64, u128, u128),
    /// The source's and the destination's processing rates, b/s.
    rx: (Option<u64>, Option<u64>),
}
