//! 802.1Qav credit-based shaper state of one traffic class, in exact integers.
//!
//! Credit is kept in units of 10^-12 bit, so that `idleSlope` (bits per second) times a time
//! in picoseconds is an exact credit change. A frame of wire time `tx` at port rate `R` costs
//! `R × tx` units when it starts (the `portTransmitRate` part of sendSlope) and the class
//! accrues `idleSlope × tx` during it (the idleSlope part), which is the standard's
//! `sendSlope = idleSlope − portTransmitRate` applied over the frame. Outside its own
//! transmissions the credit grows at idleSlope while the class has a frame that may be sent
//! (it is waiting), up to hiCredit; when it has none, positive credit is dropped to zero and
//! negative credit recovers towards zero (802.1Q 8.6.8.2). A class whose priorities are all
//! paused by PFC counts as having no frame: it cannot save credit while paused.

use crate::units::{Duration, Instant, Rate};

/// Credit-based shaper of one traffic class.
#[derive(Clone, Debug)]
pub(crate) struct Shaper {
    idle_slope: u128,
    /// Credit in 10^-12 bit; never below −(R − idleSlope) × longest frame.
    credit: i128,
    /// Upper limit of the credit: what idleSlope earns during one maximum frame of another
    /// class (802.1Q hiCredit for the highest shaped class).
    hi_credit: i128,
    /// Time up to which `credit` is computed.
    last: Instant,
    /// End of this class's frame on the wire.
    tx_end: Instant,
    /// The class has a frame it may send (backlogged and not paused).
    waiting: bool,
}

impl Shaper {
    /// A shaper with `idle_slope` bits per second whose hiCredit is idleSlope over `max_tx`.
    pub(crate) fn new(idle_slope: Rate, max_tx: Duration) -> Self {
        let s = u128::from(idle_slope.bps());
        Shaper {
            idle_slope: s,
            credit: 0,
            hi_credit: (s * max_tx.as_ps()) as i128,
            last: Instant::ZERO,
            tx_end: Instant::ZERO,
            waiting: false,
        }
    }

    /// Brings the credit up to `now`.
    pub(crate) fn advance(&mut self, now: Instant) {
        if now <= self.last {
            return;
        }
        let s = self.idle_slope as i128;
        // idleSlope × elapsed, saturating (only an absurd gap of centuries could reach it)
        let gain =
            |d: crate::units::Duration| s.saturating_mul(i128::try_from(d.as_ps()).unwrap_or(i128::MAX));
        let mut t = self.last;
        if t < self.tx_end {
            let t1 = now.min(self.tx_end);
            self.credit = self.credit.saturating_add(gain(t1 - t));
            t = t1;
            if t == self.tx_end && !self.waiting && self.credit > 0 {
                self.credit = 0;
            }
        }
        if t < now {
            let g = gain(now - t);
            if self.waiting {
                self.credit = self.credit.saturating_add(g).min(self.credit.max(self.hi_credit));
            } else if self.credit < 0 {
                self.credit = self.credit.saturating_add(g).min(0);
            }
        }
        self.last = now;
    }

    /// Records at `now` whether the class has a frame it may send.
    pub(crate) fn set_waiting(&mut self, now: Instant, waiting: bool) {
        self.advance(now);
        if !waiting && now >= self.tx_end && self.credit > 0 {
            self.credit = 0;
        }
        self.waiting = waiting;
    }

    /// Whether the shaper lets a frame start at the time of the last `advance`.
    #[inline]
    pub(crate) fn eligible(&self) -> bool {
        self.credit >= 0
    }

    /// Charges a frame of wire time `tx` at port rate `rate` starting at `now`.
    pub(crate) fn on_transmit(&mut self, now: Instant, rate: Rate, tx: Duration) {
        self.advance(now);
        self.credit -= (u128::from(rate.bps()) * tx.as_ps()) as i128;
        self.tx_end = self.tx_end.max(now.saturating_add(tx));
    }

    /// When the credit reaches zero if the class keeps waiting (`None` when it already has
    /// credit or has nothing to send).
    pub(crate) fn eligible_at(&self) -> Option<Instant> {
        if self.credit >= 0 || !self.waiting {
            return None;
        }
        let need = (-self.credit) as u128;
        Some(
            self.last
                .saturating_add(Duration::from_ps(need.div_ceil(self.idle_slope))),
        )
    }

    /// Credit in 10^-12 bit (tests and diagnostics).
    pub(crate) fn credit(&self) -> i128 {
        self.credit
    }
}
