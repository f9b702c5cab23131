//! The order of simultaneous events, and why it does not depend on how the fabric is split.
//!
//! Events due at the same instant fire in the order of a tie the engine computes when it
//! schedules them ([`EventQueue::push_tied`]), then in the order they were scheduled. The tie
//! is (scheduled earlier first, then the scheduling node), so two events due at one instant
//! fire
//! - in the order they were scheduled in time: an event scheduled a frame time ago before one
//!   scheduled just now (a zero-delay consequence runs after what was already due);
//! - if scheduled at the same instant by the same node, in the order that node scheduled them
//!   (program order within a handler, handler order within the node);
//! - if scheduled at the same instant by different nodes, by node index.
//!
//! Every part of that key is a property of the event's origin — a node's own events are
//! handled in this order whatever else shares its queue — so a partition that owns a set of
//! nodes handles their events in the same order as one queue for the whole fabric
//! (issue 22). A single global sequence number, the order before this key, made two
//! simultaneous events fire in the order their schedulers happened to run, which a
//! partitioned run cannot know.
//!
//! One event is scheduled late on purpose: a transmitter's end (`TxEnd`) that found nothing
//! else to send when its frame started is *owed* rather than scheduled (`fabric/port.rs`,
//! `Port::tx_end_owed`): three in four ends found nothing (a third of all events in a fat
//! tree). It is scheduled, with the tie it had when its frame started, only when something for
//! the transmitter comes before it; if nothing does, it never happens (the transmitter is
//! simply idle from then on). Its place among events of the same time and the same tie — due
//! at one instant, scheduled at one instant by the same node — is therefore behind those its
//! node scheduled before it was needed (the place of a push at that moment), and an event of
//! exactly its time and tie that needs it finds it still to come. That is a property of the
//! node's own events, so it too is the same however the fabric is split.
//!
//! The tie is `(2^32 − 1 − min(delay, 2^32 − 1)) << 22 | scheduler`: delays are exact up to
//! 2^32 ps (4.29 ms); events scheduled further ahead count as scheduled 4.29 ms ahead and
//! follow the scheduler rule among themselves. Schedulers are 0 for the build (first at any
//! instant among equal delays), node `n` as `n + 1`, then the workloads' arrival processes and
//! the fabric-wide timers (the deadlock detector, scripted topology events).

use lossless_proto::units::Instant;

use crate::event::{EventQueue, TIE_BITS};
use crate::frame::{FlowId, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::{Event, Simulator};

/// Bits of the tie that hold the scheduling delay (inverted).
const DELAY_BITS: u32 = 32;
/// Bits of the tie that hold the scheduler (the observer's reading of a tie,
/// [`scheduler_of`], is defined beside the hook that hands it out).
const SCHEDULER_BITS: u32 = crate::observer::TIE_SCHEDULER_BITS;
const _: () = assert!(SCHEDULER_BITS == TIE_BITS - DELAY_BITS);
/// The largest delay the tie tells apart, in picoseconds (4.29 ms).
const MAX_DELAY: u64 = (1 << DELAY_BITS) - 1;
/// The scheduler of the events the build schedules.
pub const BUILD: u32 = 0;
/// The scheduler of the workloads' arrival processes.
pub const WORKLOADS: u32 = (1 << SCHEDULER_BITS) - 2;
/// The scheduler of fabric-wide timers (the deadlock detector, scripted topology events).
pub const FABRIC: u32 = (1 << SCHEDULER_BITS) - 1;
/// The most nodes a fabric may have: each needs its own scheduler number below the others.
pub const MAX_NODES: usize = WORKLOADS as usize - 1;

/// The scheduler number of node `n`.
#[inline(always)]
pub(crate) fn node_scheduler(n: NodeId) -> u32 {
    n + 1
}

/// The node whose scheduler number is `s`, if it is a node's.
pub fn scheduler_node(s: u32) -> Option<NodeId> {
    (s != BUILD && (s as usize) <= MAX_NODES).then(|| s - 1)
}

pub use crate::observer::scheduler_of;

/// The tie of an event due at `at`, scheduled at `now` by `scheduler`.
#[inline(always)]
pub(crate) fn tie(now: Instant, at: Instant, scheduler: u32) -> u64 {
    // (an event in the past — never scheduled — wraps to a huge delay: "long ago")
    let delay = at.as_ps().wrapping_sub(now.as_ps());
    let inverted = if delay <= u128::from(MAX_DELAY) {
        MAX_DELAY - delay as u64
    } else {
        0
    };
    (inverted << SCHEDULER_BITS) | u64::from(scheduler)
}

/// `schedule!(self, at, event)`: schedules `event` at `at` on behalf of the node whose event
/// is being handled (a macro, so that it borrows only the queue while a handler holds a port
/// or a flow).
macro_rules! schedule {
    ($sim:ident, $at:expr, $ev:expr) => {{
        let at: lossless_proto::units::Instant = $at;
        $sim.queue
            .push_tied(at, $crate::sim::order::tie($sim.now, at, $sim.scheduler), $ev)
    }};
}
pub(crate) use schedule;

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The scheduler of what the handler of an event at port `p` schedules: `p`'s node.
    #[inline(always)]
    pub(in crate::sim) fn port_scheduler(&self, p: PortId) -> u32 {
        node_scheduler(self.ports[p as usize].node)
    }

    /// The scheduler of what the handler of flow `f`'s event schedules: its source host.
    #[inline(always)]
    pub(in crate::sim) fn flow_scheduler(&self, f: FlowId) -> u32 {
        node_scheduler(self.flows[f as usize].spec.src)
    }

    /// The scheduler of what the handler of flow `f`'s receiver's event schedules: its
    /// destination host.
    #[inline(always)]
    pub(in crate::sim) fn flow_receiver_scheduler(&self, f: FlowId) -> u32 {
        node_scheduler(self.flows[f as usize].spec.dst)
    }

    /// The scheduler of what a scripted request change schedules: its host.
    pub(in crate::sim) fn signal_scheduler(&self, i: u32) -> u32 {
        node_scheduler(self.config.signals[i as usize].node)
    }

    /// The scheduler of what pathology timer `x` schedules: its node, or the fabric's.
    pub(in crate::sim) fn pathology_scheduler(&self, x: u32) -> u32 {
        self.pathology_node(x).map_or(FABRIC, node_scheduler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ps: u128) -> Instant {
        Instant::from_ps(ps)
    }

    #[test]
    fn scheduled_earlier_comes_first_whatever_the_scheduler() {
        // due at 10 µs: scheduled at 9 µs by node 7, at 9.5 µs by node 1
        assert!(tie(at(9_000_000), at(10_000_000), 8) < tie(at(9_500_000), at(10_000_000), 2));
    }

    #[test]
    fn at_one_scheduling_instant_the_lower_node_comes_first_and_the_build_before_all() {
        let t = at(5_000);
        assert!(tie(at(1_000), t, node_scheduler(3)) < tie(at(1_000), t, node_scheduler(4)));
        assert!(tie(Instant::ZERO, t, BUILD) < tie(Instant::ZERO, t, node_scheduler(0)));
        assert!(tie(at(1_000), t, node_scheduler(MAX_NODES as u32 - 1)) < tie(at(1_000), t, WORKLOADS));
        assert!(tie(at(1_000), t, WORKLOADS) < tie(at(1_000), t, FABRIC));
    }

    #[test]
    fn delays_beyond_four_milliseconds_count_as_four_milliseconds() {
        let t = at(1_000_000_000_000);
        assert_eq!(tie(at(0), t, 5), tie(at(900_000_000_000), t, 5));
        assert_eq!(tie(at(0), t, 5) >> SCHEDULER_BITS, 0);
        // and the tie fits the queue's
        assert!(tie(t, t, FABRIC) < 1 << TIE_BITS);
    }
}
