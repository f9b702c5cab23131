//! What the kernel counts of an interface's pauses, read live for `lossless watch`: the
//! driver's `ethtool -S` pause counters ([`crate::ethtool_stats`], mapped by
//! [`crate::counters`]) and ethtool's standard PAUSE statistics (netlink
//! ETHTOOL_MSG_PAUSE_GET, [`crate::netlink::ethtool`]), with SONiC's pfcwd run on them at
//! every poll ([`CounterWatch`]). Opening never fails: a source the interface lacks is
//! recorded with the reason and reported (on a veth neither exists: only frames are seen).

use serde::Serialize;

use lossless_proto::monitor::slot_name;
use lossless_proto::units::Duration;
use lossless_proto::watchdog::pfcwd::{self, Status};

use crate::counters::{CounterSample, CounterVerdict, CounterWatch, LINK_SLOT, classify};
use crate::ethtool_stats::{EthtoolStats, StatsError};
use crate::link::Direction;
use crate::netlink::ethtool::{EthtoolNetlink, PauseInfo};

/// The live counter reader of one interface.
#[derive(Debug)]
pub struct KernelCounters {
    iface: String,
    driver: Option<String>,
    stats: Option<EthtoolStats>,
    stats_note: String,
    nl: Option<EthtoolNetlink>,
    pause_note: String,
    pfcwd_cfg: pfcwd::Config,
    pfcwd_gap: Option<String>,
    watch: CounterWatch,
    first: Option<(CounterSample, PauseInfo)>,
    last: Option<(CounterSample, PauseInfo)>,
}

/// One (direction, slot)'s counts since watch started, and the names they came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotReport {
    /// `p0`..`p7` or `pause`.
    pub slot: String,
    /// `rx` or `tx`.
    pub direction: Direction,
    /// PAUSE/PFC frames since start.
    pub frames: Option<u64>,
    /// XOFF frames since start (drivers counting them apart).
    pub xoff: Option<u64>,
    /// Paused time since start, seconds (drivers counting it).
    pub paused_s: Option<f64>,
    /// Running → paused transitions since start.
    pub transitions: Option<u64>,
    /// The counters these figures came from (`ethtool -S` names, or
    /// `ETHTOOL_A_PAUSE_STAT_RX_FRAMES`/`_TX_FRAMES`).
    pub from: Vec<String>,
    /// pfcwd on counters: `operational` or `stormed`.
    pub pfc_wd_status: Status,
    /// pfcwd on counters: storms detected.
    pub pfc_wd_queue_stats_deadlock_detected: u64,
    /// pfcwd on counters: storms restored.
    pub pfc_wd_queue_stats_deadlock_restored: u64,
}

/// What the kernel's counters said, for the table, JSON and totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountersReport {
    /// The interface's driver (ETHTOOL_GDRVINFO), when known.
    pub driver: Option<String>,
    /// `ethtool -S`: what was found, or why nothing was.
    pub ethtool_stats: String,
    /// ETHTOOL_MSG_PAUSE_GET statistics: what was found, or why nothing was.
    pub pause_stats: String,
    /// Whether pfcwd runs on the counters, and if not why.
    pub pfcwd: String,
    /// mlx5 `tx_pause_storm_warning_events` since start.
    pub storm_warning_events: Option<u64>,
    /// mlx5 `tx_pause_storm_error_events` since start.
    pub storm_error_events: Option<u64>,
    /// Per direction and slot with any counter.
    pub slots: Vec<SlotReport>,
    /// No counter at all was found (veth, most virtual interfaces): only frames are seen.
    pub only_frames_seen: bool,
}

impl CountersReport {}

fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.wrapping_sub(a?))
}

impl KernelCounters {
    /// Opens what `iface` offers; `pfcwd_cfg` is pfcwd's settings (its rule decides whether the
    /// counters suffice).
    pub fn open(iface: &str, pfcwd_cfg: pfcwd::Config) -> Self {
        let (stats, stats_note, driver) = match EthtoolStats::open(iface) {
            Ok(s) => {
                let driver = s.driver();
                let known = s.names().iter().filter(|n| classify(n).is_some()).count();
                let note = if known == 0 {
                    format!(
                        "{} statistics, none a pause counter of a known driver (mlx5_core, bnxt_en, ice, i40e)",
                        s.names().len()
                    )
                } else {
                    format!("{known} pause counters")
                };
                (Some(s), note, driver)
            }
            Err(e) => (None, e.to_string(), None),
        };
        let (nl, pause_note) = match EthtoolNetlink::open() {
            Ok(mut nl) => match nl.pause(iface) {
                Ok(p) if p.rx_pause_frames.is_some() || p.tx_pause_frames.is_some() => {
                    (Some(nl), "tx_pause_frames, rx_pause_frames".to_owned())
                }
                Ok(_) => (
                    None,
                    "the driver reports pause settings but no pause statistics (no get_pause_stats)"
                        .to_owned(),
                ),
                Err(e) => (None, format!("ETHTOOL_MSG_PAUSE_GET: {e}")),
            },
            Err(e) => (None, format!("ethtool netlink family: {e}")),
        };
        let mut k = KernelCounters {
            iface: iface.to_owned(),
            driver,
            stats,
            stats_note,
            nl,
            pause_note,
            pfcwd_cfg,
            pfcwd_gap: None,
            watch: CounterWatch::new(pfcwd_cfg),
            first: None,
            last: None,
        };
        if let Ok(s) = k.read() {
            k.pfcwd_gap = s.0.pfcwd_gap(pfcwd_cfg.rule);
            k.first = Some(s.clone());
            k.last = Some(s);
        }
        k
    }

    /// Whether some source of counters exists.
    pub fn any(&self) -> bool {
        self.first
            .as_ref()
            .is_some_and(|(s, p)| !s.is_empty() || p.rx_pause_frames.is_some())
    }

    fn read(&mut self) -> Result<(CounterSample, PauseInfo), String> {
        let sample = match self.stats.as_mut() {
            Some(s) => {
                let v = match s.read() {
                    Ok(v) => v,
                    // the driver's set changed (mlx5 lists a priority's pause counters only
                    // while PFC is on for it): read the names again
                    Err(StatsError::Inconsistent { .. }) => {
                        *s = EthtoolStats::open(&self.iface).map_err(|e| e.to_string())?;
                        s.read().map_err(|e| e.to_string())?
                    }
                    Err(e) => return Err(e.to_string()),
                };
                CounterSample::from_stats(v.iter().map(|(n, v)| (n.as_str(), *v)))
            }
            None => CounterSample::default(),
        };
        let pause = match &mut self.nl {
            Some(nl) => nl.pause(&self.iface).map_err(|e| e.to_string())?,
            None => PauseInfo::default(),
        };
        Ok((sample, pause))
    }

    /// Reads the counters now and hands them to pfcwd (`elapsed` since the previous poll).
    /// Returns pfcwd's decisions (none when the counters cannot feed its rule).
    pub fn poll(&mut self, elapsed: Duration) -> Result<Vec<CounterVerdict>, String> {
        if !self.any() {
            return Ok(Vec::new());
        }
        let now = self.read()?;
        let v = if self.pfcwd_gap.is_none() {
            self.watch.poll(elapsed, &now.0)
        } else {
            Vec::new()
        };
        if self.first.is_none() {
            self.first = Some(now.clone());
        }
        self.last = Some(now);
        Ok(v)
    }

    /// What the counters say since the watch started.
    pub fn report(&self) -> CountersReport {
        let (first, last) = match (&self.first, &self.last) {
            (Some(f), Some(l)) => (f, l),
            _ => (
                &(CounterSample::default(), PauseInfo::default()),
                &(CounterSample::default(), PauseInfo::default()),
            ),
        };
        let mut slots = Vec::new();
        for d in [Direction::Rx, Direction::Tx] {
            for slot in 0..=LINK_SLOT {
                let a = first.0.slot(d, slot);
                let b = last.0.slot(d, slot);
                let mut from: Vec<String> = last
                    .0
                    .names
                    .iter()
                    .filter(|n| {
                        classify(n).is_some_and(|k| {
                            k.direction == Some(d)
                                && k.slot == Some(slot)
                                && k.kind != crate::counters::Kind::Packets
                        })
                    })
                    .cloned()
                    .collect();
                let mut frames = delta(a.frames, b.frames);
                if slot == LINK_SLOT && frames.is_none() {
                    let (pa, pb, name) = match d {
                        Direction::Rx => (
                            first.1.rx_pause_frames,
                            last.1.rx_pause_frames,
                            "ETHTOOL_A_PAUSE_STAT_RX_FRAMES",
                        ),
                        Direction::Tx => (
                            first.1.tx_pause_frames,
                            last.1.tx_pause_frames,
                            "ETHTOOL_A_PAUSE_STAT_TX_FRAMES",
                        ),
                    };
                    frames = delta(pa, pb);
                    if frames.is_some() {
                        from.push(name.to_owned());
                    }
                }
                if from.is_empty() {
                    continue;
                }
                let q = self.watch.queue(d, slot);
                slots.push(SlotReport {
                    slot: slot_name(slot),
                    direction: d,
                    frames,
                    xoff: delta(a.xoff, b.xoff),
                    paused_s: delta(a.duration_us, b.duration_us).map(|us| us as f64 / 1e6),
                    transitions: delta(a.transitions, b.transitions),
                    from,
                    pfc_wd_status: q.status(),
                    pfc_wd_queue_stats_deadlock_detected: q.detected(),
                    pfc_wd_queue_stats_deadlock_restored: q.restored(),
                });
            }
        }
        let rule = match self.pfcwd_cfg.rule {
            pfcwd::Rule::Mellanox => "mellanox",
            pfcwd::Rule::MellanoxLegacy => "mellanox-legacy",
            pfcwd::Rule::Broadcom => "broadcom",
        };
        CountersReport {
            driver: self.driver.clone(),
            ethtool_stats: self.stats_note.clone(),
            pause_stats: self.pause_note.clone(),
            pfcwd: match &self.pfcwd_gap {
                None => format!("runs ({rule} rule) on the counters every poll"),
                Some(why) => format!("not run on counters: {why}"),
            },
            storm_warning_events: delta(first.0.storm_warning_events, last.0.storm_warning_events),
            storm_error_events: delta(first.0.storm_error_events, last.0.storm_error_events),
            only_frames_seen: slots.is_empty(),
            slots,
        }
    }

    /// One line for an interface without counters: what was tried and that only frames are
    /// seen.
    pub fn frames_only_line(&self) -> String {
        format!(
            "{}{}: the kernel gives no pause counters (ethtool -S: {}; ethtool pause statistics: {}): only frames are seen",
            self.iface,
            self.driver
                .as_deref()
                .map(|d| format!(" (driver {d})"))
                .unwrap_or_default(),
            self.stats_note,
            self.pause_note
        )
    }
}
