//! Sans-IO monitor of MAC Control frames seen on a link: per priority frame counts, XOFF/XON
//! transitions, requested quanta, estimated paused time at the link speed, top sources, and
//! the [`Watchdog`]'s storms. `lossless watch` feeds it live frames, `lossless analyze` frames
//! from a capture; both give it the frame's time.

use std::collections::BTreeMap;

use crate::units::{Duration, Instant, Rate};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, PauseRequest, decode_frame};
use serde::Serialize;

use crate::watchdog::{PauseState, SLOTS, StormEvent, Watchdog};

/// Slot index of 802.3 link PAUSE (PFC priorities are 0..=7).
pub const PAUSE_SLOT: usize = 8;
/// Distinct source addresses counted individually; more are counted together.
pub const MAX_SOURCES: usize = 4096;

/// Counters of one slot (a PFC priority, or link PAUSE).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SlotCounters {
    /// Frames addressing this slot (PFC: enable bit set).
    pub frames: u64,
    /// Of those, XOFF requests (non-zero time).
    pub xoff_frames: u64,
    /// Of those, XON requests (time zero).
    pub xon_frames: u64,
    /// Changes from running to paused.
    pub xoff_transitions: u64,
    /// Changes from paused to running (by XON or by the pause time running out).
    pub xon_transitions: u64,
    /// Sum of the requested pause times, in quanta.
    pub quanta: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    c: SlotCounters,
    since: Option<Instant>,
    until: Instant,
    paused: Duration,
    last: Option<(Instant, Instant)>,
}

impl Slot {
    /// Ends a pause whose time ran out by `t`.
    fn settle(&mut self, t: Instant) {
        if let Some(s) = self.since
            && self.until <= t
        {
            self.end(s, self.until);
        }
    }
    fn end(&mut self, s: Instant, e: Instant) {
        self.paused += e.saturating_duration_since(s);
        self.last = Some((s, e));
        self.since = None;
        self.c.xon_transitions += 1;
    }
    fn apply(&mut self, t: Instant, req: PauseRequest, speed: Rate) {
        self.settle(t);
        self.c.frames += 1;
        match req {
            PauseRequest::Xoff(q) => {
                self.c.xoff_frames += 1;
                self.c.quanta += u64::from(q);
                if self.since.is_none() {
                    self.since = Some(t);
                    self.c.xoff_transitions += 1;
                }
                self.until = t + speed.quanta_time(q.into());
            }
            PauseRequest::Xon => {
                self.c.xon_frames += 1;
                if let Some(s) = self.since {
                    self.end(s, t);
                }
            }
        }
    }
    fn state(&self) -> PauseState {
        match self.since {
            Some(since) => PauseState::Paused { since },
            None => PauseState::Free { last: self.last },
        }
    }
    fn paused_at(&self, now: Instant) -> Duration {
        match self.since {
            Some(s) => self.paused + now.min(self.until).saturating_duration_since(s),
            None => self.paused,
        }
    }
}

/// The monitor: feed it frames with [`Monitor::on_frame`] and the passing of time with
/// [`Monitor::tick`]; read [`Monitor::snapshot`] and drain [`Monitor::take_events`].
#[derive(Debug, Clone)]
pub struct Monitor {
    speed: Rate,
    slots: [Slot; SLOTS],
    watchdog: Watchdog,
    events: Vec<StormEvent>,
    history: Vec<StormEvent>,
    frames: u64,
    malformed: u64,
    with_warnings: u64,
    unknown_opcode: u64,
    sources: BTreeMap<[u8; 6], u64>,
    other_sources: u64,
    last_time: Instant,
}

/// Per-slot view in a [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotSnapshot {
    /// `p0`..`p7` or `pause`.
    pub slot: String,
    /// The counters.
    #[serde(flatten)]
    pub counters: SlotCounters,
    /// Estimated time paused so far, in seconds, at the link speed.
    pub paused_s: f64,
    /// Whether the slot is paused now.
    pub paused_now: bool,
    /// Whether the slot is in a storm now.
    pub stormed: bool,
    /// Storms detected so far.
    pub storms_detected: u64,
    /// Storms restored so far.
    pub storms_restored: u64,
}

/// One source address and how many MAC Control frames it sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Talker {
    /// The source MAC, `aa:bb:cc:dd:ee:ff`.
    pub source: String,
    /// Frames from it.
    pub frames: u64,
}

/// Everything the monitor knows at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    /// Seconds since the monitor's epoch.
    pub time_s: f64,
    /// Link speed used for the paused-time estimate, bits/s.
    pub speed_bps: u64,
    /// MAC Control frames seen (decodable or not).
    pub frames: u64,
    /// Frames too short or otherwise undecodable.
    pub malformed: u64,
    /// Decoded frames a strict receiver would object to (wrong destination, length, ...).
    pub with_warnings: u64,
    /// Frames with an opcode other than PAUSE and PFC.
    pub unknown_opcode: u64,
    /// Per slot: p0..p7, pause.
    pub slots: Vec<SlotSnapshot>,
    /// Sources by frames sent, most first (at most ten).
    pub top_talkers: Vec<Talker>,
}

/// Name of slot `i`: `p0`..`p7`, or `pause`.
pub fn slot_name(i: usize) -> String {
    if i == PAUSE_SLOT {
        "pause".into()
    } else {
        format!("p{i}")
    }
}

impl Monitor {
    /// A monitor estimating paused time at `speed` with the storm `watchdog`.
    pub fn new(speed: Rate, watchdog: Watchdog) -> Self {
        Monitor {
            speed,
            slots: [Slot::default(); SLOTS],
            watchdog,
            events: Vec::new(),
            history: Vec::new(),
            frames: 0,
            malformed: 0,
            with_warnings: 0,
            unknown_opcode: 0,
            sources: BTreeMap::new(),
            other_sources: 0,
            last_time: Instant::default(),
        }
    }

    /// Takes one whole Ethernet frame of EtherType 0x8808 seen at `t` (`fcs` says whether it
    /// ends with its FCS). Malformed frames are counted, never refused. Times before the last
    /// one seen are treated as the last one (captures can step back).
    pub fn on_frame(&mut self, t: Instant, frame: &[u8], fcs: FcsMode) {
        let t = t.max(self.last_time);
        self.last_time = t;
        self.frames += 1;
        let Ok(f) = decode_frame(frame, fcs, None) else {
            self.malformed += 1;
            return;
        };
        if !f.warnings.is_empty() {
            self.with_warnings += 1;
        }
        self.count_source(f.ethernet.src);
        match f.control {
            MacControlRepr::Pause { pause_time } => {
                self.apply(PAUSE_SLOT, t, PauseRequest::from_quanta(pause_time));
            }
            c @ MacControlRepr::Pfc { .. } => {
                for p in c.enabled_priorities() {
                    if let Some(req) = c.priority_request(p) {
                        self.apply(usize::from(p), t, req);
                    }
                }
            }
            MacControlRepr::Unknown { .. } => self.unknown_opcode += 1,
        }
    }

    fn apply(&mut self, slot: usize, t: Instant, req: PauseRequest) {
        let s = &mut self.slots[slot];
        s.settle(t);
        self.watchdog.poll(slot, t, s.state(), &mut self.events);
        s.apply(t, req, self.speed);
        self.watchdog.poll(slot, t, s.state(), &mut self.events);
    }

    fn count_source(&mut self, src: EthernetAddress) {
        let n = self.sources.len();
        match self.sources.get_mut(&src.0) {
            Some(c) => *c += 1,
            None if n < MAX_SOURCES => {
                self.sources.insert(src.0, 1);
            }
            None => self.other_sources += 1,
        }
    }

    /// Lets time pass to `now`: pauses that ran out end, and the watchdog looks at every slot.
    pub fn tick(&mut self, now: Instant) {
        let now = now.max(self.last_time);
        self.last_time = now;
        for (i, s) in self.slots.iter_mut().enumerate() {
            s.settle(now);
            self.watchdog.poll(i, now, s.state(), &mut self.events);
        }
    }

    /// Storm events since the last call, oldest first (also kept for [`Monitor::storms`]).
    pub fn take_events(&mut self) -> Vec<StormEvent> {
        let ev = std::mem::take(&mut self.events);
        self.history.extend_from_slice(&ev);
        ev
    }

    /// Every storm event so far that [`Monitor::take_events`] has returned.
    pub fn storms(&self) -> &[StormEvent] {
        &self.history
    }

    /// The counters of slot `slot` (priority 0..=7 or [`PAUSE_SLOT`]).
    pub fn counters(&self, slot: usize) -> SlotCounters {
        self.slots.get(slot).map(|s| s.c).unwrap_or_default()
    }

    /// Estimated paused time of `slot` up to `now`.
    pub fn paused_time(&self, slot: usize, now: Instant) -> Duration {
        self.slots.get(slot).map(|s| s.paused_at(now)).unwrap_or_default()
    }

    /// The pause of `slot` as last applied, `(start, until)`: `until` is when the last XOFF's
    /// time runs out, which may already be past (the pause then ended at `until` and is
    /// settled at the next frame or [`Monitor::tick`]); `None` when not paused.
    pub fn current_pause(&self, slot: usize) -> Option<(Instant, Instant)> {
        let s = self.slots.get(slot)?;
        s.since.map(|since| (since, s.until))
    }

    /// The watchdog.
    pub fn watchdog(&self) -> &Watchdog {
        &self.watchdog
    }

    /// Sources by frames sent, most first, at most `n`.
    pub fn top_talkers(&self, n: usize) -> Vec<Talker> {
        let mut v: Vec<_> = self.sources.iter().map(|(k, v)| (*v, *k)).collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        v.into_iter()
            .take(n)
            .map(|(frames, m)| Talker {
                source: format!(
                    "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                    m[0], m[1], m[2], m[3], m[4], m[5]
                ),
                frames,
            })
            .collect()
    }

    /// Everything at `now` (call [`Monitor::tick`] first to account for time passing).
    pub fn snapshot(&self, now: Instant) -> Snapshot {
        let slots = (0..SLOTS)
            .map(|i| {
                let s = &self.slots[i];
                SlotSnapshot {
                    slot: slot_name(i),
                    counters: s.c,
                    paused_s: s.paused_at(now).as_secs_f64(),
                    paused_now: s.since.is_some() && s.until > now,
                    stormed: self.watchdog.is_stormed(i),
                    storms_detected: self.watchdog.detected(i),
                    storms_restored: self.watchdog.restored(i),
                }
            })
            .collect();
        Snapshot {
            time_s: now.since_epoch().as_secs_f64(),
            speed_bps: self.speed.bps(),
            frames: self.frames,
            malformed: self.malformed,
            with_warnings: self.with_warnings,
            unknown_opcode: self.unknown_opcode,
            slots,
            top_talkers: self.top_talkers(10),
        }
    }
}
