//! Hosts: traffic sources filling the NIC queues, receivers with a processing rate that raise
//! the flow-control request when they fall behind, Poisson flow arrivals, scripted `fc_rdy`.

use std::collections::VecDeque;

use lossless_proto::units::{Instant, Rate};

use crate::config::traffic::{FlowSpec, Pattern, Workload, frame_len};
use crate::event::EventQueue;
use crate::frame::{DropReason, FlowId, Frame, FrameKind, NO_PORT, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::features::pathology::storm;
use crate::sim::order::schedule;
use crate::sim::{Event, Node, Qp, Simulator};
use crate::stats::FlowStats;

pub(crate) struct Host {
    pub(crate) port: PortId,
    pub(in crate::sim) nic_cap: usize,
    /// Per priority: flows blocked by a full NIC queue, longest blocked first.
    pub(in crate::sim) waiting: [VecDeque<FlowId>; 8],
    pub(in crate::sim) rx_rate: Option<Rate>,
    pub(in crate::sim) rx_buffer: u64,
    pub(in crate::sim) rx_xoff: u64,
    pub(in crate::sim) rx_xon: u64,
    pub(in crate::sim) rx_queue: VecDeque<Frame>,
    pub(crate) rx_backlog: u64,
    pub(crate) rx_peak: u64,
    pub(in crate::sim) rx_busy: bool,
    pub(in crate::sim) rx_xoff_on: bool,
    /// Receiver stalls and NIC storm prevention (`sim/features/pathology/storm.rs`).
    pub(crate) stall: Option<Box<storm::HostStall>>,
    /// The NIC's QP state (hosts of a scenario with QPs).
    pub(in crate::sim) nic: Option<Box<Nic>>,
}

impl Nic {
    /// The ready QP of priority `q` the NIC serves next, taken out of the ready set: round
    /// robin over the QPs in the order they were created (flow ids increase with creation),
    /// continuing after the one served last, as the HPCC ns-3 NIC scans its QP list.
    pub(in crate::sim) fn take_next(&mut self, q: usize) -> Option<FlowId> {
        let ready = &mut self.qp_ready[q];
        let last = self.last_served[q];
        let mut best: Option<(usize, FlowId)> = None;
        for (i, &f) in ready.iter().enumerate() {
            // after `last` first (wrapping): compare (f <= last, f)
            let key = (f <= last, f);
            if best.is_none_or(|(_, b)| key < (b <= last, b)) {
                best = Some((i, f));
            }
        }
        let (i, f) = best?;
        ready.swap_remove(i);
        self.last_served[q] = f;
        Some(f)
    }
}

/// What a host NIC keeps for QPs.
pub(crate) struct Nic {
    /// QPs of each priority ready to send now (unordered; see [`Nic::take_next`]).
    pub(in crate::sim) qp_ready: [Vec<FlowId>; 8],
    /// The QP of each priority served last (round robin continues after it).
    pub(in crate::sim) last_served: [FlowId; 8],
    /// Replies (ACK/NAK/SACK/CNP) waiting in the NIC's reply queue
    /// ([`crate::config::model::ReplyQueue::First`]).
    pub(in crate::sim) replies: VecDeque<Frame>,
}

pub(in crate::sim) struct FlowState {
    pub(in crate::sim) spec: FlowSpec,
    pub(in crate::sim) remaining: u64,
    /// Frames a finite flow sends in all (its size in MTU-sized payloads); `u64::MAX` for an
    /// endless one. The receiver knows the flow complete from its own count against it.
    pub(in crate::sim) frames: u64,
    pub(in crate::sim) next_at: Instant,
    pub(in crate::sim) scheduled: bool,
    pub(in crate::sim) done_emitting: bool,
    pub(in crate::sim) stats: FlowStats,
    /// UDP source port: 10000 + the flow's index among the flows of its (source,
    /// destination) pair, as the HPCC ns-3 simulator numbers them (its ECMP hashes it).
    pub(in crate::sim) sport: u16,
    /// UDP destination port.
    pub(in crate::sim) dport: u16,
    /// The QP's engines and state, for a flow with a transport.
    pub(in crate::sim) qp: Option<Box<Qp>>,
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    pub(in crate::sim) fn host_receive(&mut self, node: NodeId, frame: Frame) {
        let now = self.now;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        let stalled = h.stall.as_ref().is_some_and(|s| s.stalled);
        if h.rx_rate.is_none() && !stalled {
            self.deliver(node, frame);
            return;
        }
        if h.rx_backlog + frame.len as u64 > h.rx_buffer {
            let p = h.port;
            self.drop_frame(p, frame, DropReason::ReceiverOverflow);
            return;
        }
        h.rx_backlog += frame.len as u64;
        h.rx_peak = h.rx_peak.max(h.rx_backlog);
        h.rx_queue.push_back(frame);
        self.observer
            .buffer_changed(node, 0, frame.priority, h.rx_backlog, now);
        if !h.rx_busy
            && !stalled
            && let Some(rate) = h.rx_rate
        {
            h.rx_busy = true;
            schedule!(
                self,
                now + rate.time_for_bytes(frame.len as u64),
                Event::RxDone(node)
            );
        }
        if !h.rx_xoff_on && h.rx_backlog >= h.rx_xoff {
            h.rx_xoff_on = true;
            let p = h.port;
            self.host_request(p, true);
        }
    }

    /// A host's "cannot keep up" signal (`fc_rdy`): raised for every lossless priority.
    /// The receiver's fc_rdy changed: recorded on every priority, so that a request raised
    /// while PFC is off (or a priority not in the vector) goes out when DCBX enables it;
    /// `set_pair_xoff` asks the engine only for what the port's mode obeys.
    pub(in crate::sim) fn host_request(&mut self, p: PortId, on: bool) {
        if self.hook_host_request(p, on) {
            return;
        }
        for q in 0..8u8 {
            self.set_pair_xoff(p, q, on);
        }
    }

    pub(in crate::sim) fn on_rx_done(&mut self, node: NodeId) {
        let now = self.now;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        if h.stall.as_ref().is_some_and(|s| s.stalled) {
            // the pipeline stalled while processing: the frame stays, to be processed again
            h.rx_busy = false;
            return;
        }
        let Some(frame) = h.rx_queue.pop_front() else {
            h.rx_busy = false;
            return;
        };
        h.rx_backlog -= frame.len as u64;
        self.observer
            .buffer_changed(node, 0, frame.priority, h.rx_backlog, now);
        if let (Some(next), Some(rate)) = (h.rx_queue.front(), h.rx_rate) {
            schedule!(
                self,
                now + rate.time_for_bytes(next.len as u64),
                Event::RxDone(node)
            );
        } else {
            h.rx_busy = false;
        }
        let release = h.rx_xoff_on && h.rx_backlog <= h.rx_xon;
        let p = h.port;
        if release {
            h.rx_xoff_on = false;
        }
        self.deliver(node, frame);
        if release {
            self.host_request(p, false);
        }
    }

    #[inline(always)]
    pub(in crate::sim) fn deliver(&mut self, node: NodeId, frame: Frame) {
        let now = self.now;
        self.totals.delivered += 1;
        if frame.dst != node {
            self.misdeliver();
            return;
        }
        if frame.kind != FrameKind::Plain {
            self.deliver_roce(node, frame);
            return;
        }
        let fs = &mut self.flows[frame.flow as usize];
        fs.stats.delivered_frames += 1;
        fs.stats.delivered_bytes += frame.len as u64;
        fs.stats.last_delivery = Some(now);
        // complete when every frame of its size was delivered (the receiver's own count, so
        // that a partition without the sender knows it): a flow cut by its `stop` (and an
        // endless one) stopped emitting but never completes
        if fs.stats.delivered_frames == fs.frames {
            fs.stats.completed = Some(now);
        }
        self.observer.delivered(node, &frame, now);
    }

    /// A frame reached a host that is not its destination: counted (the conservation check
    /// fails on it), and neither its flow nor the wrong host's transport sees it.
    #[cold]
    #[inline(never)]
    fn misdeliver(&mut self) {
        self.totals.misdelivered += 1;
    }

    /// Wakes the longest-blocked flow of `node`'s class `q` when the NIC queue has room.
    /// Blocked flows were due when they blocked, so the woken one emits now. (Inlined where a
    /// host port sends a frame: most hosts have no flow blocked.)
    #[inline(always)]
    pub(in crate::sim) fn wake_blocked(&mut self, node: NodeId, q: u8) {
        if let Node::Host(h) = &self.nodes[node as usize]
            && !h.waiting[q as usize].is_empty()
        {
            self.wake_first_blocked(node, q);
        }
    }

    /// [`Self::wake_blocked`] of a class with a blocked flow.
    #[inline(never)]
    fn wake_first_blocked(&mut self, node: NodeId, q: u8) {
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        if self.ports[h.port as usize].queues[q as usize].frames.len() >= h.nic_cap {
            return;
        }
        while let Some(f) = h.waiting[q as usize].pop_front() {
            let fs = &mut self.flows[f as usize];
            if !fs.scheduled {
                fs.scheduled = true;
                schedule!(self, self.now.max(fs.next_at), Event::Emit(f));
                return;
            }
        }
    }

    /// [`Self::deliver`] of a RoCEv2 frame or CNM (kept out of the plain frames' path).
    #[inline(never)]
    fn deliver_roce(&mut self, node: NodeId, frame: Frame) {
        let now = self.now;
        self.hook_deliver_roce(node, frame);
        self.observer.delivered(node, &frame, now);
    }

    pub(in crate::sim) fn on_emit(&mut self, f: FlowId) {
        let now = self.now;
        let fs = &mut self.flows[f as usize];
        if fs.qp.is_some() {
            self.hook_emit_qp(f);
            return;
        }
        fs.scheduled = false;
        let (src, prio) = (fs.spec.src, fs.spec.priority);
        if fs.done_emitting {
            return;
        }
        if now >= fs.spec.stop {
            fs.done_emitting = true;
            // a flow woken for a queue slot that it will not use passes the slot on
            self.wake_blocked(src, prio);
            return;
        }
        let on = fs.spec.next_on(now);
        if on > now {
            fs.scheduled = true;
            schedule!(self, on, Event::Emit(f));
            self.wake_blocked(src, prio);
            return;
        }
        let Node::Host(h) = &mut self.nodes[src as usize] else {
            return;
        };
        let hp = h.port;
        if self.ports[hp as usize].queues[prio as usize].frames.len() >= h.nic_cap {
            h.waiting[prio as usize].push_back(f);
            return;
        }
        let src = src as usize;
        let payload = fs.remaining.min(fs.spec.mtu);
        let len = frame_len(payload);
        fs.remaining -= payload;
        let frame = Frame {
            // numbered within its flow, so that numbers do not depend on other flows' timing
            id: (u64::from(f) << 32) | (fs.stats.sent_frames & 0xFFFF_FFFF),
            flow: f,
            len: len as u32,
            priority: prio,
            ingress: NO_PORT,
            src: src as NodeId,
            dst: fs.spec.dst,
            kind: FrameKind::Plain,
            flags: 0,
            hops: 0,
        };
        self.totals.injected += 1;
        fs.stats.sent_frames += 1;
        fs.stats.sent_bytes += len;
        fs.stats.first_sent.get_or_insert(now);
        if fs.remaining == 0 {
            fs.done_emitting = true;
        } else {
            // a `match`, not `unwrap_or_else`: the closure was a call with its captures spilled
            let gap = match fs.spec.gap(len) {
                Some(g) => g,
                None => self.config.model.wire_time(self.ports[hp as usize].rate, len),
            };
            fs.next_at = now + gap;
            fs.scheduled = true;
            schedule!(self, fs.next_at, Event::Emit(f));
        }
        if self.enqueue(hp, frame) {
            self.try_transmit(hp);
        }
    }

    pub(in crate::sim) fn on_new_flow(&mut self, wi: u32) {
        let now = self.now;
        let w: &Workload = &self.config.workloads[wi as usize];
        if now >= w.stop {
            return;
        }
        if let Some((src, dst, size)) = w.draw_flow(&mut self.rngs[wi as usize]) {
            let spec = FlowSpec {
                name: format!("{}#{}", w.name, self.flows.len()),
                src,
                dst,
                priority: w.priority,
                mtu: w.mtu,
                pattern: Pattern::Line,
                start: now,
                stop: Instant::MAX,
                size: Some(size),
                transport: w.transport.clone(),
            };
            let id = self.flows.len() as FlowId;
            let line = self.ports[self.host_port(src) as usize].rate;
            let mut fs = match self.new_flow_state(spec, line) {
                Ok(fs) => fs,
                Err(e) => {
                    let p = self.host_port(src);
                    self.engine_fault(p, "a workload's QP could not be created", &e);
                    return;
                }
            };
            fs.scheduled = true;
            self.flows.push(fs);
            self.hook_flow_added(id);
            schedule!(self, now, Event::Emit(id));
        }
        let w: &Workload = &self.config.workloads[wi as usize];
        let gap = w.draw_gap(&mut self.rngs[wi as usize]);
        schedule!(self, now + gap, Event::NewFlow(wi));
    }

    pub(in crate::sim) fn on_signal(&mut self, i: u32) {
        let s = self.config.signals[i as usize];
        if let Node::Host(h) = &self.nodes[s.node as usize] {
            let p = h.port;
            // checked at build; on a DCBX port the priority may not be PFC-enabled (yet):
            // like `fc_rdy` of a priority without PFC, the request then has no effect
            let Some(set) = crate::sim::fabric::mac::request_target(&self.ports[p as usize].mac, s.prio)
            else {
                return;
            };
            self.drive_request(p, set, s.on, "scripted fc_rdy refused");
        }
    }
}
