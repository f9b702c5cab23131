//! A port: its eight egress queues, the transmitter that picks the next frame (a control
//! frame first, then what transmission selection chooses among the classes flow control lets
//! go), and the end of each transmission. The first step of a frame's way out of a node;
//! `link.rs` carries it to the peer.

use std::collections::VecDeque;

use lossless_proto::flow_control::{FlowControl, TxSlot};
use lossless_proto::units::{Duration, Instant, Rate};

use crate::config::qos::DscpMap;
use crate::event::EventQueue;
use crate::frame::{DropReason, Frame, FrameKind, NodeId, PortId};
use crate::observer::{Observer, WireFrame};
use crate::selection::{PortSelection, TransmissionSelection};
use crate::sim::fabric::ring::Ring;
use crate::sim::features::hooks;
use crate::sim::features::pathology::topo;
use crate::sim::order::schedule;
use crate::sim::{Event, PortCn, PortDcbx, Simulator};
use crate::stats::{PortStats, PrioStats};

#[cfg(test)]
thread_local! {
    /// Tests only: schedule every transmitter's end, as before ends were owed (the reports
    /// must not change but for the event count, `sim/tests.rs`).
    pub(crate) static EVERY_TX_END_SCHEDULED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a transmitter's end that finds nothing else to send is owed (always, but in a
/// test that asks otherwise).
#[inline(always)]
fn owes_tx_ends() -> bool {
    #[cfg(test)]
    return !EVERY_TX_END_SCHEDULED.with(|c| c.get());
    #[cfg(not(test))]
    true
}

/// One egress queue of a port: its frames, their bytes, the most bytes it held and the data
/// frames and bytes of its priority the port sent, in one cache line (an enqueue, a dequeue
/// and the frame's start touch nothing else of the queue, and no counter line).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct EgressQueue {
    /// The frames, oldest first.
    pub(crate) frames: Ring<Frame>,
    /// Their bytes.
    pub(crate) bytes: u64,
    /// The most bytes it held.
    pub(crate) peak: u64,
    /// Data frames of this priority sent (`PrioStats::tx_frames`, kept here).
    pub(crate) sent_frames: u64,
    /// Their bytes (`PrioStats::tx_bytes`).
    pub(crate) sent_bytes: u64,
}

/// One port: egress queues, transmitter, flow-control engine, the wire towards its peer.
///
/// Laid out by hand (`repr(C)`, hot fields first): what every event on the port reads (ids,
/// flags, masks, fault state, selection, propagation delay) fills the first cache line; what
/// a frame's start and arrival read beside it (the wire's queue and its lost entries, the
/// owed end's flag, tie and time, the INT and DSCP flags) the second; the frame being sent
/// the third; each egress queue (frames, bytes, peak, frames and bytes sent) is a line of
/// its own; the engine (its counters, like the port's, boxed and built at the first count),
/// the port's counters and DCBX state follow.
/// Each port starts a cache line and is an odd number of lines long.
#[repr(C, align(64))]
pub(crate) struct Port {
    pub(crate) node: NodeId,
    pub(crate) local: u32,
    pub(crate) peer: PortId,
    pub(in crate::sim) busy: bool,
    /// Set whenever the engine's transmit side may have a control frame due (a request
    /// changed, a deadline fired, a control frame went out or came in); cleared once the
    /// engine says none is due. While clear, `try_transmit` skips the control-frame poll and
    /// its repeated checks (a performance shortcut; the engine stays the authority through
    /// `on_tx_start`).
    pub(in crate::sim) ctl_check: bool,
    /// Set whenever the engine changed (any `&mut` call), so that its next deadline may
    /// have moved; `arm_timer` asks `poll_timeout` only then (its answer depends on the
    /// engine's state alone).
    pub(in crate::sim) timer_stale: bool,
    /// Bit q set while queue q holds a frame.
    pub(in crate::sim) nonempty: u8,
    /// Priorities that are lossless here (flow control answers their congestion).
    pub(crate) lossless: u8,
    /// Host ports: bit q set while the host has QPs of priority q ready to send (their next
    /// packet is pulled into queue q when that queue holds none of theirs).
    pub(in crate::sim) pull: u8,
    /// Host ports: the NIC's reply queue ([`crate::config::model::ReplyQueue::First`]) holds frames.
    pub(in crate::sim) reply_first: bool,
    /// Host ports: bit q set while queue q holds a frame pulled from a QP.
    pub(in crate::sim) staged: u8,
    /// Switch ports: bit q set when queue q's frames meet an ECN marker deciding at enqueue or
    /// q is a QCN congestion point (the port's `cn` says which): enqueueing takes the
    /// congestion-notification path.
    pub(in crate::sim) cn_enq: u8,
    /// Switch ports: bit q set when queue q's frames meet an ECN marker deciding at dequeue.
    pub(in crate::sim) cn_deq: u8,
    /// `lldp_tx` holds an LLDPDU (tested per transmission instead of the queue's header).
    pub(in crate::sim) lldp_queued: bool,
    /// Whose port it is (tested per arrival and departure instead of the node).
    pub(in crate::sim) kind: PortKind,
    /// Link down, pfcwd drops (`sim/features/pathology/topo.rs`, `sim/features/pathology/pfcwd.rs`).
    pub(crate) fault: topo::PortFault,
    pub(in crate::sim) sel: PortSelection,
    /// Switch ports: the ECN markers and QCN congestion points.
    pub(crate) cn: Option<Box<PortCn>>,
    pub(crate) prop: Duration,
    /// Frames on the wire towards `peer`, oldest first (constant delay keeps FIFO order).
    pub(in crate::sim) inflight: Ring<WireFrame>,
    /// The tie of the owed `TxEnd` (as scheduled when its frame started, `order.rs`).
    pub(in crate::sim) tx_end_tie: u64,
    /// Entries at the head of `inflight` that were on the wire when its link went down
    /// (`sim/features/pathology/topo.rs`): read per arrival, beside the wire.
    pub(crate) wire_lost: u32,
    /// The port at the other end of the wire classifies the RoCEv2 packets it receives by
    /// their DSCP (its `dscp_map`): read per arrival beside `inflight`, which the arrival pops,
    /// so the receiving port's first cache line keeps its layout.
    pub(in crate::sim) peer_trusts_dscp: bool,
    /// Set while the frame being sent owes a `TxEnd` that is not in the event queue: it
    /// found nothing else to send when it started, so its end is scheduled only once the
    /// port has something for the transmitter ([`Simulator::try_transmit`]).
    pub(in crate::sim) tx_end_owed: bool,
    /// Switch ports: data packets of HPCC QPs get an INT record here at dequeue, or (with
    /// `pint`) every frame goes through the PINT estimate.
    pub(in crate::sim) int_stamp: bool,
    /// When the frame being sent frees the transmitter (the owed `TxEnd`'s time): read with
    /// the tie when an owed end is settled, in the same line.
    pub(in crate::sim) tx_end_at: Instant,
    pub(in crate::sim) current: Option<Frame>,
    /// LLDPDUs waiting for the transmitter.
    pub(in crate::sim) lldp_tx: VecDeque<Vec<u8>>,
    pub(in crate::sim) timer_at: Instant,
    pub(crate) rate: Rate,
    /// Switch ports under HPCC-PINT: the port's utilisation estimate and its random stream.
    pub(in crate::sim) pint: Option<Box<lossless_proto::hpcc_pint::PintPort>>,
    /// The DCBX agent of a DCBX-managed port.
    pub(crate) dcbx: Option<Box<PortDcbx>>,
    /// The DSCP → priority map of a port that trusts DSCP.
    pub(in crate::sim) dscp_map: Option<Box<DscpMap>>,
    /// Per priority: the frames, their bytes and the most it held, a cache line each.
    pub(crate) queues: [EgressQueue; 8],
    pub(crate) mac: FlowControl,
    /// The port's counters but the data frames and bytes sent, which the queues keep beside
    /// their frames (`EgressQueue::sent_frames`): built at the port's first count (a control
    /// frame, a drop, a frame lost on the wire), as most ports of a large fabric and every
    /// port a partition does not own never count one ([`Port::counts`], [`Port::counts_mut`];
    /// all of them: [`Port::stats`]).
    pub(in crate::sim) counts: Option<Box<PortStats>>,
    /// LLDPDUs on the wire towards `peer`, in the order of their `WireFrame::Lldp` entries.
    pub(in crate::sim) lldp_wire: VecDeque<Vec<u8>>,
    /// Last paused mask reported to the observer (only with `Observer::PAUSE_STATE`).
    pub(in crate::sim) paused_seen: u8,
    /// Pairs (this ingress port, priority) currently in XOFF.
    pub(in crate::sim) xoff_pairs: u8,
    /// Unused: makes the port an odd number of cache lines (33 since the engine's counters
    /// are built at its first count; 45 before), so that the ports' first lines, read by
    /// nearly every event, spread over all of a cache's sets; at 44 they shared a quarter of
    /// them (L2 misses +6.6 % on the 320-host run, docs/benchmarks.md); without it a port
    /// would be 32, a power of two.
    pub(in crate::sim) spread: [u8; 64],
}

/// The counters of a port that has counted nothing.
static NO_COUNTS: PortStats = PortStats {
    prio: [PrioStats {
        tx_frames: 0,
        tx_bytes: 0,
        drops: [0; DropReason::ALL.len()],
        pfc_xoff_tx: 0,
        pfc_xon_tx: 0,
        pfc_xoff_rx: 0,
        pfc_xon_rx: 0,
        wire_lost_frames: 0,
        wire_lost_bytes: 0,
    }; 8],
    pause_xoff_tx: 0,
    pause_xon_tx: 0,
    pause_xoff_rx: 0,
    pause_xon_rx: 0,
    lldp_rx_ignored: 0,
    first_drop: [None; 8],
};

/// Whose a port is, and when its node's buffer lets a frame go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum PortKind {
    /// A host's NIC port.
    Host,
    /// A switch port whose buffer releases a frame when its last bit has been sent.
    Switch,
    /// A switch port whose buffer releases a frame at its dequeue (the HPCC ns-3 MMU).
    SwitchReleasingAtDequeue,
}

impl Port {
    /// The port's counters but the data frames and bytes sent (zero before its first count).
    pub(crate) fn counts(&self) -> &PortStats {
        self.counts.as_deref().unwrap_or(&NO_COUNTS)
    }
    /// The same, to count into: built at the first count, once in the port's life.
    pub(crate) fn counts_mut(&mut self) -> &mut PortStats {
        self.counts.get_or_insert_with(Box::default)
    }
    /// The port's counters, the data frames and bytes each priority sent included.
    pub(crate) fn stats(&self) -> PortStats {
        let mut s = *self.counts();
        for (st, q) in s.prio.iter_mut().zip(&self.queues) {
            (st.tx_frames, st.tx_bytes) = (q.sent_frames, q.sent_bytes);
        }
        s
    }
    /// Replaces the port's counters with `s` (a merge of a split run's parts).
    pub(crate) fn set_stats(&mut self, mut s: PortStats) {
        for (st, q) in s.prio.iter_mut().zip(&mut self.queues) {
            (q.sent_frames, q.sent_bytes) = (st.tx_frames, st.tx_bytes);
            (st.tx_frames, st.tx_bytes) = (0, 0);
        }
        self.counts = (s != NO_COUNTS).then(|| Box::new(s));
    }
    /// Whether the transmitter may have something to do: a frame queued, a control frame
    /// possibly due, an LLDPDU, or something for the NIC to pull.
    #[inline(always)]
    pub(in crate::sim) fn has_work(&self) -> bool {
        self.ctl_check || self.nonempty != 0 || self.lldp_queued || self.pull | self.reply_first as u8 != 0
    }
    /// Whether the port belongs to a switch.
    #[inline(always)]
    pub(in crate::sim) fn at_switch(&self) -> bool {
        self.kind != PortKind::Host
    }
    /// The flow-control engine changed (a request, a deadline, a frame in or out): a control
    /// frame may be due and its next deadline may have moved.
    #[inline(always)]
    pub(in crate::sim) fn engine_changed(&mut self) {
        self.ctl_check = true;
        self.timer_stale = true;
    }
    /// The engine was given a new configuration: as [`Port::engine_changed`], and a deadline
    /// already scheduled no longer stands.
    pub(in crate::sim) fn engine_reconfigured(&mut self) {
        self.engine_changed();
        self.timer_at = Instant::MAX;
    }
}

pub(in crate::sim) fn station_address(port: PortId) -> [u8; 6] {
    let p = port.to_be_bytes();
    [0x02, 0x00, p[0], p[1], p[2], p[3]]
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Queues `frame` at egress port `p` (transmission selection told first); false (and an
    /// engine fault) when the selection refuses it.
    // inlined: a call cost more than its body (the frame passed through the stack, the
    // registers saved; fat tree −20 M instructions)
    #[inline(always)]
    pub(crate) fn enqueue(&mut self, p: PortId, frame: Frame) -> bool {
        if self.ports[p as usize].cn_enq != 0 {
            return self.hook_enqueue_cn(p, frame);
        }
        self.enqueue_plain(p, frame)
    }

    #[inline(always)]
    pub(in crate::sim) fn enqueue_plain(&mut self, p: PortId, frame: Frame) -> bool {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let q = frame.priority as usize;
        if let Err(e) = port.sel.enqueued(now, frame.priority, frame.len) {
            self.engine_fault(p, "transmission selection refused a frame", &e);
            return false;
        }
        let eq = &mut port.queues[q];
        eq.frames.push_back(frame);
        eq.bytes += frame.len as u64;
        eq.peak = eq.peak.max(eq.bytes);
        self.observer.queue_changed(p, frame.priority, eq.bytes, now);
        port.nonempty |= 1 << q;
        self.hook_enqueued(p, &frame);
        true
    }

    /// Starts the next frame on `p` if its transmitter is idle: a pending control frame
    /// first, then the data frame transmission selection picks among unpaused classes.
    ///
    /// Re-arms the engine's timer after a control frame (its refresh deadline moved) and when
    /// nothing could start; starting a data frame moves no deadline, so that path skips it.
    /// Callers that changed the engine (request, received frame, timeout) arm it themselves.
    // the test of a busy or down transmitter (most calls end there: an arrival queued behind
    // a frame being sent) inlined at each call site, the rest out of line
    #[inline(always)]
    pub(in crate::sim) fn try_transmit(&mut self, p: PortId) {
        let (now, tie) = (self.now, self.tie);
        let port = &mut self.ports[p as usize];
        if port.busy {
            if !port.tx_end_owed {
                return;
            }
            // the owed end (`Port::tx_end_owed`) now that the port may have something to send:
            // due before the event being handled, it would have found nothing to send, so the
            // transmitter is simply idle (most of them); else it goes into the event queue
            port.tx_end_owed = false;
            if (port.tx_end_at, port.tx_end_tie) >= (now, tie) {
                self.queue_owed_tx_end(p);
                return;
            }
            port.busy = false;
        }
        if port.fault.down {
            return;
        }
        // nothing queued, no control frame due, no LLDPDU and nothing for the NIC to pull:
        // `try_transmit_idle` would return at once (no deadline moved since the last arm)
        if !port.has_work() {
            return;
        }
        self.try_transmit_idle(p);
    }

    /// Schedules the `TxEnd` that busy port `p` owed (`Port::tx_end_owed`), with the tie it had
    /// when its frame started: something for the transmitter came before it.
    ///
    /// Owed ends exist because three in four `TxEnd`s found nothing to send (a third of all
    /// events in a fat tree); keeping the tie keeps their order among simultaneous events.
    #[inline(never)]
    fn queue_owed_tx_end(&mut self, p: PortId) {
        let port = &self.ports[p as usize];
        self.queue
            .push_tied(port.tx_end_at, port.tx_end_tie, Event::TxEnd(p));
    }

    /// [`Self::try_transmit`] on a transmitter that is idle and up.
    #[inline(never)]
    fn try_transmit_idle(&mut self, p: PortId) {
        let now = self.now;
        let pi = p as usize;
        let port = &mut self.ports[pi];
        if port.ctl_check && !port.mac.has_control_due(now) {
            port.ctl_check = false;
        }
        if port.ctl_check
            && let Some(tx) = port.mac.poll_transmit(now)
        {
            let w = WireFrame::Control(tx.frame);
            port.timer_stale = true;
            port.busy = true;
            port.counts_mut().count_control_tx(&tx.frame);
            let pint_len = port.pint.is_some().then(|| port.mac.config().framing);
            let (arrive, peer) = (tx.last_bit + port.prop, port.peer);
            schedule!(self, tx.free_at, Event::TxEnd(p));
            self.put_on_wire(p, peer, w, arrive);
            self.observer.tx_start(p, &w, tx.start, tx.last_bit);
            if let Some(framing) = pint_len {
                // the PINT estimate's previous frame (the fork's PFC frames go through the
                // switch's dequeue too)
                let len = match framing {
                    lossless_proto::flow_control::Framing::Ns3 => {
                        lossless_proto::flow_control::NS3_PFC_FRAME_BYTES
                    }
                    lossless_proto::flow_control::Framing::Ieee8023 => {
                        lossless_proto::flow_control::CONTROL_FRAME_BYTES
                    }
                };
                self.pint_other_frame(p, len);
            }
            self.arm_timer(p);
            return;
        }
        // the hook's flags read here, on the port at hand
        let (lldp, nic) = (port.lldp_queued, port.pull | port.reply_first as u8 != 0);
        // without an LLDPDU or a NIC to serve (switch ports) the port at hand is kept: no
        // second index of it
        let port = if lldp || nic {
            if self.hook_before_data(p, lldp, nic) {
                return;
            }
            &mut self.ports[pi]
        } else {
            port
        };
        let mut ready = 0u8;
        let mut pending = port.nonempty;
        if port.ctl_check {
            // a control frame is due but could not start: the engine decides per priority
            while pending != 0 {
                let q = pending.trailing_zeros() as u8;
                pending &= pending - 1;
                if port.mac.may_start_data(now, q) {
                    ready |= 1 << q;
                }
            }
        } else if pending != 0 && now >= port.mac.wire_free_at() && !port.mac.hold_data(now) {
            // no control frame due (checked above): `may_start_data` reduces to the pauses
            while pending != 0 {
                let q = pending.trailing_zeros() as u8;
                pending &= pending - 1;
                if port.mac.may_transmit(now, q) {
                    ready |= 1 << q;
                }
            }
        } else if pending == 0 {
            // nothing queued and no control frame due: no deadline moved since the last arm
            return;
        }
        let Some(q) = port.sel.select(now, ready, port.nonempty & !ready) else {
            if ready != 0
                && let Some(t) = port.sel.next_eligible(now)
            {
                // a shaper holds the ready frames until `t`
                schedule!(self, t.max(now), Event::Eligible(p));
            }
            self.arm_timer(p);
            return;
        };
        let Some(&(mut frame)) = port.queues[q as usize].frames.pop_front_slot() else {
            port.nonempty &= !(1 << q);
            self.arm_timer(p);
            return;
        };
        port.queues[q as usize].bytes -= frame.len as u64;
        self.observer
            .queue_changed(p, q, port.queues[q as usize].bytes, now);
        if port.queues[q as usize].frames.is_empty() {
            port.nonempty &= !(1 << q);
        }
        hooks::dequeued(port, q, &mut frame);
        // the checks above are `may_start_data`'s at this `now`, and nothing has reached the
        // engine since: it need not ask them again
        let slot = port.mac.on_tx_start_allowed(now, frame.len as u64, q);
        if let Err(e) = port.sel.transmitted(now, q, frame.len) {
            self.engine_fault(p, "transmission selection lost track of a queue", &e);
            return;
        }
        let (kind, node, int_stamp) = (port.kind, port.node, port.int_stamp);
        self.hook_transmitting(p, int_stamp, &frame);
        self.start_frame(p, frame, slot);
        match kind {
            // the HPCC ns-3 switch frees the ingress charge as the packet is dequeued (and
            // checks its resume there), before the packet's transmission starts
            PortKind::SwitchReleasingAtDequeue => self.release_ingress(node, frame),
            // the freed queue slot goes to the host's longest-blocked flow of this class (one
            // wake-up per frame sent: waking them all costs events quadratic in blocked
            // flows); a switch has none
            PortKind::Host => self.wake_blocked(node, q),
            PortKind::Switch => {}
        }
    }

    /// Puts `frame` on the wire of `p` in the engine's `slot`: the transmitter is busy until
    /// the slot's end, the frame arrives at the peer a propagation delay after its last bit.
    #[inline(always)]
    pub(crate) fn start_frame(&mut self, p: PortId, frame: Frame, slot: TxSlot) {
        let port = &mut self.ports[p as usize];
        port.timer_stale = true;
        port.busy = true;
        if port.kind == PortKind::Switch {
            // only this kind releases the frame's buffer charge at its end (`on_tx_end`): a
            // host's frames carry no charge, the ns-3 MMU released it at the dequeue
            port.current = Some(frame);
        }
        let w = WireFrame::Data(frame);
        let sent = &mut port.queues[frame.priority as usize & 7];
        sent.sent_frames += 1;
        sent.sent_bytes += frame.len as u64;
        let (arrive, peer) = (slot.last_bit + port.prop, port.peer);
        if port.kind != PortKind::Switch && !port.has_work() && owes_tx_ends() {
            // nothing else to send and no buffer charge to release at the end: the end is
            // owed, scheduled only if something for the transmitter comes before it
            port.tx_end_owed = true;
            port.tx_end_at = slot.free_at;
            port.tx_end_tie = crate::sim::order::tie(self.now, slot.free_at, self.scheduler);
        } else {
            schedule!(self, slot.free_at, Event::TxEnd(p));
        }
        if self.part.is_none() {
            // `put_on_wire` without a partition, on the port already at hand (the event
            // queue is another field: no second index of the port)
            port.inflight.push_back(w);
            schedule!(self, arrive, Event::Arrive(peer));
        } else {
            self.put_on_wire(p, peer, w, arrive);
        }
        if O::CC_FIELDS && frame.kind == FrameKind::RoceData {
            self.observe_cc_field(p, &frame);
        }
        self.observer.tx_start(p, &w, slot.start, slot.last_bit);
    }

    /// The transmitter of `p` is free again: release the sent frame's buffer charge and start
    /// the next.
    pub(in crate::sim) fn on_tx_end(&mut self, p: PortId) {
        let port = &mut self.ports[p as usize];
        port.busy = false;
        // kept only where the frame's end releases its charge (`start_frame`); tested before
        // it is taken, so that a port without one (most) writes nothing back
        if port.current.is_some()
            && let Some(frame) = port.current.take()
        {
            // the frame has left the buffer: release its ingress charge
            let node = port.node;
            self.release_ingress(node, frame);
        }
        self.try_transmit(p);
    }

    /// Counts `frame` dropped at port `p` for `reason`, on the port, its flow and the totals.
    pub(crate) fn drop_frame(&mut self, p: PortId, frame: Frame, reason: DropReason) {
        let st = self.ports[p as usize].counts_mut();
        st.prio[frame.priority as usize].drops[reason.index()] += 1;
        st.first_drop[frame.priority as usize].get_or_insert(self.now);
        let st = &mut self.flows[frame.flow as usize].stats;
        if frame.kind.is_data() {
            st.dropped_frames += 1;
        } else {
            st.dropped_control_frames += 1;
        }
        self.totals.dropped[reason.index()] += 1;
    }
}
