//! Receive side (the document's MAC1 RX): per-priority pause timers that decide `fc`.
//!
//! Each register set p holds one pause *span* `[block_from, until)`: from `block_from` on, no
//! data frame of p may start; at `until` the timer has run out and p may send again.
//!
//! For an XOFF of q quanta whose reception ends at `r`:
//! - the timer starts at `s = max(r, last bit of the frame this port is transmitting at r)`
//!   (a pause never cuts a frame; the timer runs from that frame's last bit) and expires at
//!   `until = s + q × 512 bit times`;
//! - if p's previous span is still running at `r` (`r < until`), only its expiry is replaced
//!   (newest value wins, the pause continues without a gap);
//! - otherwise a new span starts taking effect at `block_from = r + reaction_delay`: a frame of
//!   p may still start before that instant, never at or after it. With a reaction delay of
//!   zero the pause takes effect at `r` itself. A pause shorter than the reaction delay may
//!   thus never take effect, which the standard allows.
//!
//! An XON (q = 0) ends the span at `r` at once.
//!
//! Without a timer (the HPCC ns-3 simulator's signalling), a pause of any q > 0 runs until an
//! XON ends it: its expiry is `Instant::MAX`, which is never reported as a change.

use super::config::PRIORITIES;
use super::counters::LazyCounters;
use crate::units::{Duration, Instant};

/// When a control frame was received and when its pause timer starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    /// End of reception (last bit).
    pub(crate) received: Instant,
    /// Timer start: `received`, or the last bit of the frame being transmitted then.
    pub(crate) timer_start: Instant,
}

/// Pause span of one register set.
#[derive(Clone, Copy, Debug, Default)]
struct RxPrio {
    block_from: Instant,
    until: Instant,
    /// Whether the span has been accounted for (or is empty).
    closed: bool,
}

impl RxPrio {
    fn running_at(&self, t: Instant) -> bool {
        !self.closed && t < self.until
    }
    fn close(&mut self, end: Instant, p: usize, counters: &mut LazyCounters) {
        if self.closed {
            return;
        }
        self.closed = true;
        let end = end.min(self.until);
        if self.block_from < end {
            counters.get_mut().rx_prio_pause_duration[p] += end - self.block_from;
            counters.get_mut().rx_prio_pause_transition[p] += 1;
        }
    }
}

/// The receive side of one port.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct RxSide {
    prio: [RxPrio; PRIORITIES],
    /// Bit p set while `prio[p]` is not closed: a cache so that settling and the next-change
    /// search visit only open spans. Last (`repr(C)`), so that it shares a cache line with
    /// what follows the side in the engine.
    open: u8,
}

impl Default for RxSide {
    fn default() -> Self {
        RxSide {
            prio: [RxPrio {
                closed: true,
                ..RxPrio::default()
            }; PRIORITIES],
            open: 0,
        }
    }
}

impl RxSide {
    /// Accounts every span that has run out by `now`.
    pub(crate) fn settle(&mut self, now: Instant, counters: &mut LazyCounters) {
        let mut open = self.open;
        while open != 0 {
            let p = open.trailing_zeros() as usize;
            open &= open - 1;
            let st = &mut self.prio[p];
            if st.until <= now {
                st.close(st.until, p, counters);
                self.open &= !(1 << p);
            }
        }
    }

    /// Applies pause time `quanta` for register set p, arrived as `at`; with `timer` false
    /// a pause lasts until an XON.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply(
        &mut self,
        p: usize,
        quanta: u16,
        at: Arrival,
        quantum: Duration,
        reaction_delay: Duration,
        timer: bool,
        counters: &mut LazyCounters,
    ) {
        let (r, s) = (at.received, at.timer_start);
        let st = &mut self.prio[p];
        if quanta == 0 {
            counters.get_mut().rx_prio_xon[p] += 1;
            if st.running_at(r) {
                st.close(r, p, counters);
                st.until = st.until.min(r);
            }
            if st.closed {
                self.open &= !(1 << p);
            }
            return;
        }
        counters.get_mut().rx_prio_pause[p] += 1;
        let until = if timer {
            s.saturating_add(quantum.saturating_mul(u64::from(quanta)))
        } else {
            Instant::MAX
        };
        if st.running_at(r) {
            st.until = until;
        } else {
            *st = RxPrio {
                block_from: r.saturating_add(reaction_delay),
                until,
                closed: false,
            };
        }
        self.open |= 1 << p;
    }

    /// Ends register set p's span at `now`, as if its timer had run out then (paused time is
    /// accounted up to `now`; a span not yet in effect accounts nothing).
    pub(crate) fn end_at(&mut self, now: Instant, p: usize, counters: &mut LazyCounters) {
        let st = &mut self.prio[p];
        st.close(now, p, counters);
        st.until = st.until.min(now);
        self.open &= !(1 << p);
    }

    /// Whether p may start a data frame at `now`.
    pub(crate) fn may_transmit(&self, now: Instant, p: usize) -> bool {
        // a closed set (its bit clear) is not read: only the mask's cache line is
        if self.open & (1 << p) == 0 {
            return true;
        }
        let st = &self.prio[p];
        st.closed || now < st.block_from || now >= st.until
    }

    /// The next instant after `now` at which some `may_transmit` answer changes.
    pub(crate) fn next_change(&self, now: Instant) -> Option<Instant> {
        if self.open == 0 {
            return None;
        }
        self.prio
            .iter()
            .filter(|st| !st.closed && st.block_from < st.until)
            .filter_map(|st| {
                if st.block_from > now {
                    Some(st.block_from)
                } else if st.until > now && st.until != Instant::MAX {
                    Some(st.until)
                } else {
                    None
                }
            })
            .min()
    }

    /// When p's running pause expires, if one is running at `now`.
    pub(crate) fn pause_until(&self, now: Instant, p: usize) -> Option<Instant> {
        let st = &self.prio[p];
        st.running_at(now).then_some(st.until)
    }

    /// Paused time of p's span still open at `now` (not yet in the counters).
    pub(crate) fn running_pause(&self, now: Instant, p: usize) -> Duration {
        let st = &self.prio[p];
        if st.closed {
            return Duration::ZERO;
        }
        now.min(st.until).saturating_duration_since(st.block_from)
    }
}
