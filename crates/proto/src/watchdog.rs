//! A PFC storm watchdog with SONiC pfcwd semantics, sans-IO: a priority paused continuously for
//! longer than the detection time is in a storm; the storm is restored once the priority has
//! been free of pause for the restoration time. Defaults 200 ms each, as SONiC's.

use crate::units::{Duration, Instant};
use serde::Serialize;

pub mod nic;
pub mod pfcwd;

/// SONiC's default detection and restoration time.
pub const DEFAULT_TIME: Duration = Duration::from_ms(200);

/// What the watchdog needs to know about one priority at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseState {
    /// Paused continuously since the instant given.
    Paused {
        /// When the current pause began.
        since: Instant,
    },
    /// Not paused; the last pause, if any, ran from `start` to `end`.
    Free {
        /// The last pause interval, `(start, end)`.
        last: Option<(Instant, Instant)>,
    },
}

/// Whether a storm began or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StormKind {
    /// Paused longer than the detection time.
    Detected,
    /// Free of pause for the restoration time.
    Restored,
}

/// A storm event on one slot (priority 0..=7, or 8 for 802.3 PAUSE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StormEvent {
    /// Detected or restored.
    pub kind: StormKind,
    /// The slot: PFC priority 0..=7, or 8 for link PAUSE.
    pub slot: usize,
    /// The exact instant the condition was met (pause start + detection, or pause end +
    /// restoration), which the watchdog observes at its next poll.
    pub at: Instant,
}

/// The storm watchdog over [`SLOTS`] slots.
#[derive(Debug, Clone)]
pub struct Watchdog {
    detection: Duration,
    restoration: Duration,
    stormed: [bool; SLOTS],
    detected: [u64; SLOTS],
    restored: [u64; SLOTS],
    judged_end: [Option<Instant>; SLOTS],
}

/// Slots watched: PFC priorities 0..=7 and link PAUSE as 8.
pub const SLOTS: usize = 9;

impl Watchdog {
    /// A watchdog with the given detection and restoration times.
    pub fn new(detection: Duration, restoration: Duration) -> Self {
        Watchdog {
            detection,
            restoration,
            stormed: [false; SLOTS],
            detected: [0; SLOTS],
            restored: [0; SLOTS],
            judged_end: [None; SLOTS],
        }
    }
    /// The detection time.
    pub fn detection(&self) -> Duration {
        self.detection
    }
    /// The restoration time.
    pub fn restoration(&self) -> Duration {
        self.restoration
    }
    /// Whether slot `slot` is in a storm.
    pub fn is_stormed(&self, slot: usize) -> bool {
        self.stormed.get(slot).copied().unwrap_or(false)
    }
    /// Storms detected on `slot` so far.
    pub fn detected(&self, slot: usize) -> u64 {
        self.detected.get(slot).copied().unwrap_or(0)
    }
    /// Storms restored on `slot` so far.
    pub fn restored(&self, slot: usize) -> u64 {
        self.restored.get(slot).copied().unwrap_or(0)
    }

    /// Looks at `slot`'s pause state at `now` and pushes the storm events it implies to `out`
    /// (at most two: a pause that began and ended between polls can be detected and restored
    /// in one call).
    pub fn poll(&mut self, slot: usize, now: Instant, state: PauseState, out: &mut Vec<StormEvent>) {
        if slot >= SLOTS {
            return;
        }
        let ev = |kind, at| StormEvent { kind, slot, at };
        if !self.stormed[slot] {
            let start = match state {
                PauseState::Paused { since } if now.saturating_duration_since(since) >= self.detection => {
                    Some(since)
                }
                // A long pause that began and ended between two polls.
                PauseState::Free { last: Some((s, e)) }
                    if e.saturating_duration_since(s) >= self.detection
                        && self.judged_end[slot] != Some(e) =>
                {
                    Some(s)
                }
                _ => None,
            };
            if let Some(start) = start {
                self.stormed[slot] = true;
                self.detected[slot] += 1;
                out.push(ev(StormKind::Detected, start + self.detection));
            }
        }
        if self.stormed[slot]
            && let PauseState::Free { last: Some((_, end)) } = state
            && now.saturating_duration_since(end) >= self.restoration
        {
            self.stormed[slot] = false;
            self.restored[slot] += 1;
            self.judged_end[slot] = Some(end);
            out.push(ev(StormKind::Restored, end + self.restoration));
        }
    }
}
