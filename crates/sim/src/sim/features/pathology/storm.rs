//! Hosts whose receive pipeline stalls (`rx_stall`) and mlx5 NIC storm prevention
//! (`pfc_prevention_tout`).
//!
//! A stalled receiver processes nothing: arriving frames wait in its receive buffer, which
//! raises the NIC's pause request at `rx_xoff_bytes` as any backlog does, and a frame that
//! finds the buffer full is dropped (`receiver_overflow`). When the stall ends, processing
//! resumes: at `rx_rate`, or at once for a host that keeps up. A frame in processing when the
//! stall begins is processed again from the start afterwards.
//!
//! Storm prevention ([`lossless_proto::watchdog::nic::StallPrevention`]) watches the NIC's
//! own condition for pausing (backlog at or above XOFF until it falls to XON): past the
//! minor watermark it counts a warning; at the critical timeout it counts an error and
//! releases the pause request although the buffer is still full (the peer resumes at once
//! with an XON when `xon_on_release`, otherwise when the last pause runs out), and it raises
//! none again until the backlog falls to XON.

use lossless_proto::units::Instant;
use lossless_proto::watchdog::nic::{StallPrevention, Watermark};

use crate::config::pathology::HostPathology;
use crate::event::EventQueue;
use crate::frame::{NodeId, PortId};
use crate::observer::Observer;
use crate::sim::features::pathology::Timer;
use crate::sim::order::schedule;
use crate::sim::{Event, Node, Simulator};

/// A host's stall schedule and storm prevention.
pub(crate) struct HostStall {
    /// Stall spans, in order.
    pub(crate) spans: Vec<(Instant, Option<Instant>)>,
    /// The next edge: 2k is span k's start, 2k + 1 its end.
    next_edge: usize,
    /// Whether the receiver is stalled now.
    pub(crate) stalled: bool,
    /// Total time stalled so far (spans that ended).
    pub(crate) stalled_for: lossless_proto::units::Duration,
    /// When the current stall began.
    stalled_since: Option<Instant>,
    /// mlx5 storm prevention, if on.
    pub(crate) prevention: Option<StallPrevention>,
    /// The watermark instant an event is pending for.
    timer_at: Option<Instant>,
    /// When prevention stopped pause (critical watermark), each time.
    pub(crate) pause_stopped_at: Vec<Instant>,
}

impl HostStall {
    pub(crate) fn new(p: &HostPathology) -> Self {
        HostStall {
            spans: p.rx_stall.clone(),
            next_edge: 0,
            stalled: false,
            stalled_for: Default::default(),
            stalled_since: None,
            prevention: p.pfc_prevention.map(|t| {
                // checked when the scenario was read (80–8000 ms)
                StallPrevention::new(t).unwrap_or_else(|_| StallPrevention::auto())
            }),
            timer_at: None,
            pause_stopped_at: Vec::new(),
        }
    }

    fn edge_time(&self, e: usize) -> Option<Instant> {
        let (start, end) = *self.spans.get(e / 2)?;
        if e.is_multiple_of(2) { Some(start) } else { end }
    }

    /// Time stalled up to `now`, the running stall included.
    pub(crate) fn stalled_until(&self, now: Instant) -> lossless_proto::units::Duration {
        self.stalled_for
            + self
                .stalled_since
                .map_or(Default::default(), |s| now.saturating_duration_since(s))
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Schedules every host's first stall edge.
    pub(in crate::sim) fn start_stalls(&mut self) {
        for (n, node) in self.nodes.iter().enumerate() {
            if let Node::Host(h) = node
                && let Some(s) = &h.stall
                && let Some(t) = s.edge_time(0)
            {
                schedule!(self, t, Timer::Stall.event(n as u32));
            }
        }
    }

    /// A stall starts or ends on host `node`.
    pub(in crate::sim) fn on_stall_edge(&mut self, node: u32) {
        let now = self.now;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        let Some(s) = h.stall.as_deref_mut() else {
            return;
        };
        let starting = s.next_edge.is_multiple_of(2);
        s.next_edge += 1;
        if let Some(t) = s.edge_time(s.next_edge) {
            schedule!(self, t, Timer::Stall.event(node));
        }
        if starting {
            s.stalled = true;
            s.stalled_since = Some(now);
        } else {
            s.stalled = false;
            if let Some(since) = s.stalled_since.take() {
                s.stalled_for += now.saturating_duration_since(since);
            }
            self.resume_rx(node);
        }
    }

    /// Restarts a receiver after its stall: at its rate, or everything at once.
    fn resume_rx(&mut self, node: NodeId) {
        let now = self.now;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        if let Some(rate) = h.rx_rate {
            if !h.rx_busy
                && let Some(f) = h.rx_queue.front()
            {
                h.rx_busy = true;
                schedule!(self, now + rate.time_for_bytes(f.len as u64), Event::RxDone(node));
            }
            return;
        }
        // a receiver that keeps up delivers its whole backlog now
        while let Node::Host(h) = &mut self.nodes[node as usize]
            && let Some(f) = h.rx_queue.pop_front()
        {
            h.rx_backlog -= f.len as u64;
            self.deliver(node, f);
        }
        if let Node::Host(h) = &mut self.nodes[node as usize] {
            self.observer.buffer_changed(node, 0, 0, 0, now);
            if h.rx_xoff_on {
                h.rx_xoff_on = false;
                let p = h.port;
                self.host_request(p, false);
            }
        }
    }

    /// Storm prevention's view of a host request change on NIC port `p`: true when the
    /// request must not go out (prevention stopped pause and the condition has not fallen).
    pub(in crate::sim::features) fn prevention_gate(&mut self, p: PortId, on: bool) -> bool {
        let now = self.now;
        let node = self.ports[p as usize].node;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return false;
        };
        let Some(s) = h.stall.as_deref_mut() else {
            return false;
        };
        let Some(prev) = s.prevention.as_mut() else {
            return false;
        };
        prev.on_request(now, on);
        let blocked = on && !prev.may_pause();
        let next = prev.poll_timeout();
        if next.is_some() && next != s.timer_at {
            s.timer_at = next;
            if let Some(t) = next {
                schedule!(self, t, Timer::Prevention.event(node));
            }
        }
        blocked
    }

    /// A storm-prevention watermark of host `node` may have passed.
    pub(in crate::sim) fn on_prevention_timer(&mut self, node: u32) {
        let now = self.now;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        let p = h.port;
        let Some(s) = h.stall.as_deref_mut() else {
            return;
        };
        if s.timer_at != Some(now) {
            return; // superseded
        }
        s.timer_at = None;
        let Some(prev) = s.prevention.as_mut() else {
            return;
        };
        let w = prev.handle_timeout(now);
        let next = prev.poll_timeout();
        if let Some(t) = next {
            s.timer_at = Some(t);
            schedule!(self, t, Timer::Prevention.event(node));
        }
        if w == Some(Watermark::Critical) {
            s.pause_stopped_at.push(now);
            // stop pausing although the buffer is still full
            for q in 0..8u8 {
                self.set_pair_xoff(p, q, false);
            }
        }
    }
}
