//! Fetching the next event's state while the current one is handled.
//!
//! On the 320-host fat tree most of an event's cache misses are the first touch of its port,
//! left cold since the frame before it (a link's delay, thousands of events, earlier): the
//! run loop asks the queue for the two events likely to pop after the current one and starts
//! loading their ports before handling it.

use crate::event::EventQueue;
use crate::hint::prefetch;
use crate::observer::Observer;
use crate::sim::{Event, Simulator};

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Starts loading what the next two events' handlers read first: for the one after next,
    /// its port's first three lines (ids, flags, the wire, the owed end, the frame being sent:
    /// `Port`'s layout); for the next, whose port's first line was asked for one event ago,
    /// the sending port's wire if it is an arrival. The addresses are computed, never read
    /// through (no bounds check), and an arrival's sending port is its port's pair
    /// (`build::peer_of`): no load waits on a line still on its way.
    #[inline(always)]
    pub(in crate::sim) fn prefetch_ahead(&self) {
        let ports: *const crate::sim::Port = self.ports.as_ptr();
        if let Some(&(Event::TxEnd(p) | Event::Arrive(p) | Event::MacTimer(p) | Event::Eligible(p))) =
            self.queue.upcoming(1)
        {
            let at: *const u8 = ports.wrapping_add(p as usize).cast();
            prefetch(at);
            prefetch(at.wrapping_add(64));
            prefetch(at.wrapping_add(128));
        }
        if let Some(&Event::Arrive(p)) = self.queue.upcoming(0) {
            let wire: *const u8 = ports.wrapping_add(crate::sim::build::peer_of(p) as usize).cast();
            prefetch(wire.wrapping_add(64));
        }
    }
}
