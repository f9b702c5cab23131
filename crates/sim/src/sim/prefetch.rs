//! Fetching the next event's state while the current one is handled.
//!
//! On the 320-host fat tree most of an event's cache misses are the first touch of its port,
//! left cold since the frame before it (a link's delay, thousands of events, earlier): the
//! run loop asks the queue for the two events likely to pop after the current one and starts
//! loading their ports (and an arrival's frame on its wire) before handling it; a switch's
//! egress port is asked for as soon as its route is known.

use crate::event::EventQueue;
use crate::event::hint::prefetch;
use crate::frame::PortId;
use crate::observer::Observer;
use crate::sim::fabric::port::EgressQueue;
use crate::sim::{Event, Port, Simulator};

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Starts loading what the next two events' handlers read first: for the one after next,
    /// its port's first three lines (ids, flags, the wire, the owed end, the frame being sent:
    /// `Port`'s layout) and, for an arrival, the sending port's wire line; for the next, an
    /// arrival's frame in that wire's ring, whose head is read from the line asked for one
    /// event ago (docs/benchmarks.md, "The arriving frame fetched early, again"). The ports'
    /// addresses are computed, never read through (no bounds check), and an arrival's sending
    /// port is its port's pair (`build::peer_of`).
    #[inline(always)]
    pub(in crate::sim) fn prefetch_ahead(&self) {
        let ports: *const Port = self.ports.as_ptr();
        let after_next = self.queue.upcoming(1).copied();
        if let Some(Event::TxEnd(p) | Event::Arrive(p) | Event::MacTimer(p) | Event::Eligible(p)) = after_next
        {
            let at: *const u8 = ports.wrapping_add(p as usize).cast();
            prefetch(at);
            prefetch(at.wrapping_add(64));
            prefetch(at.wrapping_add(128));
        }
        if let Some(Event::Arrive(p)) = after_next {
            let wire: *const u8 = ports.wrapping_add(crate::sim::build::peer_of(p) as usize).cast();
            prefetch(wire.wrapping_add(64));
        }
        if let Some(&Event::Arrive(p)) = self.queue.upcoming(0)
            && let Some(wire) = self.ports.get(crate::sim::build::peer_of(p) as usize)
        {
            prefetch(wire.inflight.front_addr().cast());
        }
    }
}

/// Starts loading the first line of egress port `out` and its queue of `priority`, which a
/// switch's enqueue reads once the frame is admitted: asked for as soon as the route is known,
/// so that the two misses overlap the admission's (docs/benchmarks.md, "The egress port
/// asked for once routed").
#[inline(always)]
pub(in crate::sim) fn prefetch_egress(ports: &[Port], out: PortId, priority: u8) {
    if let Some(port) = ports.get(out as usize) {
        prefetch((port as *const Port).cast());
        prefetch((&port.queues[priority as usize & 7] as *const EgressQueue).cast());
    }
}
