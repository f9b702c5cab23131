//! Transmission selection: which priority a port sends next. Strict priority, or 802.1Qaz
//! ETS through the `lossless_proto::ets` engine, behind one small trait.

use lossless_proto::ets::{Scheduler, SchedulerError};
use lossless_proto::units::Instant;

/// Chooses the priority whose oldest frame a port transmits next.
pub trait TransmissionSelection {
    /// A frame of `bytes` joined priority `priority`'s queue; an error means the selection
    /// cannot account for the frame (the simulator stops the run with an engine fault).
    fn enqueued(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError>;
    /// Picks one priority among `ready` (bit p: p has a frame and may start now); `blocked`
    /// has bit p set for priorities that may not start now (paused, held). `None` when nothing
    /// may go (or a shaper holds the ready ones until [`Self::next_eligible`]).
    fn select(&mut self, now: Instant, ready: u8, blocked: u8) -> Option<u8>;
    /// The oldest frame of `priority` (`bytes` long) started transmission; an error means the
    /// selection's queue state disagrees with the port's.
    fn transmitted(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError>;
    /// When a frame held by a shaper becomes eligible, if any is held.
    fn next_eligible(&self, _now: Instant) -> Option<Instant> {
        None
    }
    /// The oldest frame of `priority` (`bytes` long) left the queue without being sent (a
    /// flushed queue, a watchdog's drop).
    fn discarded(&mut self, _now: Instant, _priority: u8, _bytes: u32) -> Result<(), SchedulerError> {
        Ok(())
    }
}

/// 802.1Q strict priority: the highest ready priority always goes first.
#[derive(Clone, Copy, Debug, Default)]
pub struct StrictPriority;

impl TransmissionSelection for StrictPriority {
    #[inline]
    fn enqueued(&mut self, _now: Instant, _priority: u8, _bytes: u32) -> Result<(), SchedulerError> {
        Ok(())
    }
    #[inline]
    fn select(&mut self, _now: Instant, ready: u8, _blocked: u8) -> Option<u8> {
        if ready == 0 {
            None
        } else {
            Some(7 - ready.leading_zeros() as u8)
        }
    }
    #[inline]
    fn transmitted(&mut self, _now: Instant, _priority: u8, _bytes: u32) -> Result<(), SchedulerError> {
        Ok(())
    }
}

/// 802.1Qaz ETS (and strict / CBS classes) by the proto crate's scheduler, which keeps its
/// own per-priority frame counts in step with the port's queues.
#[derive(Clone, Debug)]
pub struct Ets(pub Scheduler);

impl TransmissionSelection for Ets {
    #[inline]
    fn enqueued(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        self.0.enqueue(now, priority, bytes)
    }
    #[inline]
    fn select(&mut self, now: Instant, ready: u8, blocked: u8) -> Option<u8> {
        let s = self.0.select(now, blocked)?;
        (ready & (1 << s.priority) != 0).then_some(s.priority)
    }
    #[inline]
    fn transmitted(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        self.0.on_transmitted(now, priority, bytes)
    }
    fn next_eligible(&self, now: Instant) -> Option<Instant> {
        self.0.next_eligible(now)
    }
    fn discarded(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        self.0.discard(now, priority, bytes)
    }
}

/// The transmission selection of one simulated port: a closed set, dispatched by `match` so
/// that the per-frame calls inline (the simulator calls it three times per frame).
#[derive(Clone, Debug)]
pub enum PortSelection {
    /// Strict priority.
    Strict(StrictPriority),
    /// 802.1Qaz ETS (boxed: the scheduler is large and only touched on its own port).
    Ets(Box<Ets>),
}

impl TransmissionSelection for PortSelection {
    #[inline]
    fn enqueued(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        match self {
            PortSelection::Strict(s) => s.enqueued(now, priority, bytes),
            PortSelection::Ets(e) => e.enqueued(now, priority, bytes),
        }
    }
    #[inline]
    fn select(&mut self, now: Instant, ready: u8, blocked: u8) -> Option<u8> {
        match self {
            PortSelection::Strict(s) => s.select(now, ready, blocked),
            PortSelection::Ets(e) => e.select(now, ready, blocked),
        }
    }
    #[inline]
    fn transmitted(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        match self {
            PortSelection::Strict(s) => s.transmitted(now, priority, bytes),
            PortSelection::Ets(e) => e.transmitted(now, priority, bytes),
        }
    }
    #[inline]
    fn next_eligible(&self, now: Instant) -> Option<Instant> {
        match self {
            PortSelection::Strict(s) => s.next_eligible(now),
            PortSelection::Ets(e) => e.next_eligible(now),
        }
    }
    fn discarded(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        match self {
            PortSelection::Strict(s) => s.discarded(now, priority, bytes),
            PortSelection::Ets(e) => e.discarded(now, priority, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_picks_the_highest_ready_priority() {
        let mut s = StrictPriority;
        let t = Instant::ZERO;
        assert_eq!(s.select(t, 0, 0), None);
        assert_eq!(s.select(t, 0b0000_0001, 0), Some(0));
        assert_eq!(s.select(t, 0b0000_1001, 0), Some(3));
        assert_eq!(s.select(t, 0b1000_1001, 0), Some(7));
    }
}
