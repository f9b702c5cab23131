//! What one interface can tell about PFC storms and deadlocks, sans-IO: the PAUSE/PFC frames
//! it receives (the peer pauses this interface) and those it sends (this interface pauses the
//! peer), each direction counted by its own [`Monitor`]; per slot and direction SONiC's pfcwd
//! ([`QueueWatch`], the same engine the simulator's switches run) judged at its poll instants
//! from what a listener sees; and a deadlock suspicion when both directions of a slot have
//! been paused at once for longer than a threshold.
//!
//! A listener is not the switch: it has no queue occupancy (assumed non-zero, the case in
//! which pfcwd acts: [`ASSUMED_OCCUPANCY_BYTES`]), the pause status and duration are
//! estimated from the quanta at the link speed, and "packets the paused queue sent" are the
//! tagged data frames of that priority seen going the other way when the driver counts them
//! ([`LinkWatch::on_data`]), none otherwise.

use serde::Serialize;

use lossless_proto::monitor::{Monitor, Snapshot, slot_name};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_proto::watchdog::pfcwd::{self, QueueSample, QueueWatch, Status, Verdict};
use lossless_proto::watchdog::{SLOTS, StormKind, Watchdog};
use lossless_wire::fcs::FcsMode;

/// Which way frames went on the watched interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Received: the peer pauses this interface (its queues toward the peer).
    Rx,
    /// Sent: this interface pauses the peer (the peer's queues toward us).
    Tx,
}

impl Direction {
    /// The other direction.
    pub fn opposite(self) -> Direction {
        match self {
            Direction::Rx => Direction::Tx,
            Direction::Tx => Direction::Rx,
        }
    }
    fn index(self) -> usize {
        match self {
            Direction::Rx => 0,
            Direction::Tx => 1,
        }
    }
    /// `rx` or `tx`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Rx => "rx",
            Direction::Tx => "tx",
        }
    }
}

/// The queue occupancy pfcwd is given: a listener cannot see it, so the paused queue is taken
/// to hold traffic (the only case in which a storm harms anyone and pfcwd acts).
pub const ASSUMED_OCCUPANCY_BYTES: u64 = 1;

/// The settings of a [`LinkWatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkConfig {
    /// SONiC's pfcwd settings (detection, restoration, poll, action, rule).
    pub pfcwd: pfcwd::Config,
    /// How long both directions of a slot must be paused at once for a deadlock suspicion.
    pub deadlock_time: Duration,
    /// Link speed: pause quanta to time.
    pub speed: Rate,
}

/// What happened, on which slot, in which direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkEventKind {
    /// pfcwd published "storm" at this poll.
    Storm,
    /// pfcwd published "restore" at this poll.
    Restore,
    /// The pause has been continuous for the detection time (exact instant; as `analyze`).
    StormDetected,
    /// The pause ended a restoration time ago (exact instant; as `analyze`).
    StormRestored,
    /// Both directions paused at once for the deadlock time.
    DeadlockSuspected,
    /// One of the two directions is no longer paused.
    DeadlockCleared,
}

impl LinkEventKind {
    /// The name in JSON lines and the table.
    pub fn name(self) -> &'static str {
        match self {
            LinkEventKind::Storm => "storm",
            LinkEventKind::Restore => "restore",
            LinkEventKind::StormDetected => "storm_detected",
            LinkEventKind::StormRestored => "storm_restored",
            LinkEventKind::DeadlockSuspected => "deadlock_suspected",
            LinkEventKind::DeadlockCleared => "deadlock_cleared",
        }
    }
}

/// One event of a [`LinkWatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkEvent {
    /// What happened.
    pub kind: LinkEventKind,
    /// Slot 0..=7 (PFC priority) or 8 (link PAUSE).
    pub slot: usize,
    /// The direction judged (`None` for deadlock events, which concern both).
    pub direction: Option<Direction>,
    /// The instant: the poll that published it (storm, restore), or the exact instant the
    /// condition was met (the others).
    pub at: Instant,
    /// Since when the direction judged (deadlock: both) had been paused without a break, for
    /// `storm`, `storm_detected` and `deadlock_suspected`.
    pub paused_since: Option<Instant>,
    /// The last PAUSE/PFC frame of the slot and direction before the event, for `restore`.
    pub last_frame: Option<Instant>,
    /// For `storm`: whether a deadlock was suspected on the slot at that poll (SONiC cannot
    /// tell and reports a storm either way).
    pub deadlock_suspected: bool,
}

/// The SONiC counters of one queue (`COUNTERS_DB`, lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PfcwdStats {
    /// `PFC_WD_STATUS`: `operational` or `stormed`.
    pub pfc_wd_status: Status,
    /// `PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED`: storms detected (SONiC's "deadlock").
    pub pfc_wd_queue_stats_deadlock_detected: u64,
    /// `PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED`: storms restored.
    pub pfc_wd_queue_stats_deadlock_restored: u64,
}

/// A slot's verdict, most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotVerdict {
    /// Both directions paused at once for the deadlock time: a cycle through this link.
    DeadlockSuspected,
    /// pfcwd holds one direction (or both) stormed.
    Storm,
    /// Paused now in some direction, no storm.
    Paused,
    /// Neither.
    Ok,
}

/// One slot's judgement in a [`LinkSnapshot`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotJudgement {
    /// `p0`..`p7` or `pause`.
    pub slot: String,
    /// The verdict now.
    pub verdict: SlotVerdict,
    /// pfcwd on the frames received (the peer pausing this interface).
    pub rx: PfcwdStats,
    /// pfcwd on the frames sent (this interface pausing the peer).
    pub tx: PfcwdStats,
    /// Deadlock suspicions so far.
    pub deadlock_suspected_total: u64,
    /// Tagged data frames of the priority received (slot `pause`: of every priority).
    pub data_frames_rx_total: u64,
    /// Tagged data frames of the priority sent (slot `pause`: of every priority).
    pub data_frames_tx_total: u64,
}

/// Everything a [`LinkWatch`] knows at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkSnapshot {
    /// Frames received, per slot.
    pub rx: Snapshot,
    /// Frames sent, per slot.
    pub tx: Snapshot,
    /// Per slot: verdict and SONiC counters.
    pub verdicts: Vec<SlotJudgement>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Suspicion {
    /// Start of the overlap currently suspected.
    open: Option<Instant>,
    /// Start of the last overlap already reported.
    judged: Option<Instant>,
    total: u64,
}

/// The watch of one interface: feed it frames with [`LinkWatch::on_control`] (and data
/// frames with [`LinkWatch::on_data`]) and time with [`LinkWatch::tick`]; drain
/// [`LinkWatch::take_events`].
#[derive(Debug, Clone)]
pub struct LinkWatch {
    cfg: LinkConfig,
    mon: [Monitor; 2],
    queues: [[QueueWatch; SLOTS]; 2],
    data: [[u64; SLOTS]; 2],
    last_frame: [[Option<Instant>; SLOTS]; 2],
    suspicion: [Suspicion; SLOTS],
    next_poll: Instant,
    /// The latest instant seen: time never goes back.
    latest: Instant,
    events: Vec<LinkEvent>,
}

impl LinkWatch {
    /// A watch with `cfg`; the exact watchdog of each [`Monitor`] uses the same detection and
    /// restoration times as pfcwd. Polls fall at multiples of the poll interval after the
    /// epoch ([`Instant::ZERO`]).
    pub fn new(cfg: LinkConfig) -> Self {
        let monitor = || {
            Monitor::new(
                cfg.speed,
                Watchdog::new(cfg.pfcwd.detection, cfg.pfcwd.restoration),
            )
        };
        LinkWatch {
            cfg,
            mon: [monitor(), monitor()],
            queues: Default::default(),
            data: [[0; SLOTS]; 2],
            last_frame: [[None; SLOTS]; 2],
            suspicion: [Suspicion::default(); SLOTS],
            next_poll: Instant::ZERO + cfg.pfcwd.poll,
            latest: Instant::ZERO,
            events: Vec::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// The monitor of one direction.
    pub fn monitor(&self, d: Direction) -> &Monitor {
        &self.mon[d.index()]
    }

    /// One MAC Control frame (EtherType 0x8808, no FCS) seen at `t` going direction `d`; a
    /// frame stamped before the latest instant seen (stamps of the two directions taken on
    /// different CPUs) counts at that instant.
    pub fn on_control(&mut self, t: Instant, d: Direction, frame: &[u8]) {
        let t = self.advance(t);
        let m = &mut self.mon[d.index()];
        let before: [u64; SLOTS] = std::array::from_fn(|s| m.counters(s).frames);
        m.on_frame(t, frame, FcsMode::Absent);
        for (s, b) in before.iter().enumerate() {
            if m.counters(s).frames != *b {
                self.last_frame[d.index()][s] = Some(t);
            }
        }
        self.collect_exact();
        self.judge_deadlocks(t);
    }

    /// One 802.1Q-tagged data frame of priority `priority` (0..=7) seen at `t` going
    /// direction `d` (counted for its priority and for link PAUSE).
    pub fn on_data(&mut self, t: Instant, d: Direction, priority: u8) {
        self.advance(t);
        let i = d.index();
        self.data[i][SLOTS - 1] += 1;
        if let Some(c) = self.data[i]
            .get_mut(usize::from(priority))
            .filter(|_| priority < 8)
        {
            *c += 1;
        }
    }

    /// Lets time pass to `now`: pfcwd polls due by then, pauses that ran out, deadlocks.
    pub fn tick(&mut self, now: Instant) {
        let now = self.advance(now);
        for m in &mut self.mon {
            m.tick(now);
        }
        self.collect_exact();
    }

    /// Events since the last call, in the order they were found.
    pub fn take_events(&mut self) -> Vec<LinkEvent> {
        std::mem::take(&mut self.events)
    }

    /// pfcwd's state of `slot` in direction `d`.
    pub fn pfcwd(&self, d: Direction, slot: usize) -> Option<&QueueWatch> {
        self.queues[d.index()].get(slot)
    }

    /// Whether a deadlock is suspected on `slot` now.
    pub fn deadlock_suspected(&self, slot: usize) -> bool {
        self.suspicion.get(slot).is_some_and(|s| s.open.is_some())
    }

    /// Everything at `now` (call [`LinkWatch::tick`] first).
    pub fn snapshot(&self, now: Instant) -> LinkSnapshot {
        let stats = |q: &QueueWatch| PfcwdStats {
            pfc_wd_status: q.status(),
            pfc_wd_queue_stats_deadlock_detected: q.detected(),
            pfc_wd_queue_stats_deadlock_restored: q.restored(),
        };
        let verdicts = (0..SLOTS)
            .map(|s| SlotJudgement {
                slot: slot_name(s),
                verdict: self.verdict(s, now),
                rx: stats(&self.queues[0][s]),
                tx: stats(&self.queues[1][s]),
                deadlock_suspected_total: self.suspicion[s].total,
                data_frames_rx_total: self.data[0][s],
                data_frames_tx_total: self.data[1][s],
            })
            .collect();
        LinkSnapshot {
            rx: self.mon[0].snapshot(now),
            tx: self.mon[1].snapshot(now),
            verdicts,
        }
    }

    /// The verdict of `slot` at `now`.
    pub fn verdict(&self, slot: usize, now: Instant) -> SlotVerdict {
        if self.deadlock_suspected(slot) {
            SlotVerdict::DeadlockSuspected
        } else if self.queues.iter().any(|q| q[slot].status() == Status::Stormed) {
            SlotVerdict::Storm
        } else if self
            .mon
            .iter()
            .any(|m| m.current_pause(slot).is_some_and(|(_, until)| until > now))
        {
            SlotVerdict::Paused
        } else {
            SlotVerdict::Ok
        }
    }

    /// Runs the polls due by `t` (or by the latest instant seen, if later), then judges
    /// deadlocks then; returns that instant.
    fn advance(&mut self, t: Instant) -> Instant {
        let t = t.max(self.latest);
        self.latest = t;
        while self.next_poll <= t {
            let p = self.next_poll;
            self.judge_deadlocks(p);
            for m in &mut self.mon {
                m.tick(p);
            }
            self.collect_exact();
            self.poll(p);
            self.next_poll = p + self.cfg.pfcwd.poll;
        }
        self.judge_deadlocks(t);
        t
    }

    /// One pfcwd poll at `p` of every slot in both directions.
    fn poll(&mut self, p: Instant) {
        let cfg = self.cfg.pfcwd;
        for d in [Direction::Rx, Direction::Tx] {
            let i = d.index();
            let m = &self.mon[i];
            for s in 0..SLOTS {
                let c = m.counters(s);
                let pause = m.current_pause(s).filter(|(_, until)| *until > p);
                let sample = QueueSample {
                    occupancy_bytes: ASSUMED_OCCUPANCY_BYTES,
                    // the paused queue sends the other way
                    tx_packets: self.data[d.opposite().index()][s],
                    pfc_rx_packets: c.frames,
                    pfc_on2off: c.xoff_transitions,
                    pause_duration: m.paused_time(s, p),
                    paused: pause.is_some(),
                };
                let Some(v) = self.queues[i][s].poll(&cfg, cfg.poll, sample) else {
                    continue;
                };
                let (kind, paused_since, last_frame) = match v {
                    Verdict::Storm => (LinkEventKind::Storm, pause.map(|(since, _)| since), None),
                    Verdict::Restore => (LinkEventKind::Restore, None, self.last_frame[i][s]),
                };
                self.events.push(LinkEvent {
                    kind,
                    slot: s,
                    direction: Some(d),
                    at: p,
                    paused_since,
                    last_frame,
                    deadlock_suspected: kind == LinkEventKind::Storm && self.suspicion[s].open.is_some(),
                });
            }
        }
    }

    /// The monitors' exact storm instants as events.
    fn collect_exact(&mut self) {
        for d in [Direction::Rx, Direction::Tx] {
            let i = d.index();
            for e in self.mon[i].take_events() {
                let (kind, paused_since) = match e.kind {
                    StormKind::Detected => (
                        LinkEventKind::StormDetected,
                        Some(Instant::from_ps(
                            e.at.as_ps().saturating_sub(self.cfg.pfcwd.detection.as_ps()),
                        )),
                    ),
                    StormKind::Restored => (LinkEventKind::StormRestored, None),
                };
                self.events.push(LinkEvent {
                    kind,
                    slot: e.slot,
                    direction: Some(d),
                    at: e.at,
                    paused_since,
                    last_frame: None,
                    deadlock_suspected: false,
                });
            }
        }
    }

    /// Judges every slot's overlap of the two directions' pauses as known at `t` (before the
    /// monitors settle pauses that ran out, so their exact ends are still known).
    fn judge_deadlocks(&mut self, t: Instant) {
        let threshold = self.cfg.deadlock_time;
        for s in 0..SLOTS {
            let overlap = match (self.mon[0].current_pause(s), self.mon[1].current_pause(s)) {
                (Some((a, ua)), Some((b, ub))) => {
                    let (o, e) = (a.max(b), ua.min(ub));
                    (o < e).then_some((o, e))
                }
                _ => None,
            };
            let ev = |kind, at, paused_since| LinkEvent {
                kind,
                slot: s,
                direction: None,
                at,
                paused_since,
                last_frame: None,
                deadlock_suspected: kind == LinkEventKind::DeadlockSuspected,
            };
            let susp = &mut self.suspicion[s];
            match overlap {
                Some((o, e)) => {
                    if let Some(open) = susp.open
                        && open != o
                    {
                        // a new overlap without a frame between: the old one ended by now
                        self.events.push(ev(LinkEventKind::DeadlockCleared, t, None));
                        susp.open = None;
                    }
                    if susp.open.is_none() && susp.judged != Some(o) && o + threshold <= e.min(t) {
                        susp.judged = Some(o);
                        susp.total += 1;
                        self.events
                            .push(ev(LinkEventKind::DeadlockSuspected, o + threshold, Some(o)));
                        susp.open = Some(o);
                    }
                    if susp.open == Some(o) && e <= t {
                        self.events.push(ev(LinkEventKind::DeadlockCleared, e, None));
                        susp.open = None;
                    }
                }
                None => {
                    if susp.open.take().is_some() {
                        // ended by an XON at `t` (a pause that ran out is seen above first)
                        self.events.push(ev(LinkEventKind::DeadlockCleared, t, None));
                    }
                }
            }
        }
    }
}
