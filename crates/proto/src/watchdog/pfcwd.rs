//! SONiC's PFC watchdog (pfcwd) as it runs on a switch, sans-IO: one [`QueueWatch`] per
//! lossless egress queue, handed the queue's counters at every poll, says when the queue
//! enters a storm and when it is restored.
//!
//! Exactly what sonic-swss does (pathologies.md §1.3): every `poll` interval syncd samples the
//! counters and runs a detection plugin per queue; a poll whose samples meet the plugin's
//! condition charges the queue's countdown (`PFC_WD_DETECTION_TIME_LEFT`, starting at the
//! detection time) with the interval, any other poll reloads it; the poll at which the
//! countdown would reach zero publishes "storm" (so a storm is seen at most T_detect + T_poll
//! after it starts, for a condition that holds from its first full interval on). While a
//! queue is stormed (actions `drop` and `forward`), `pfc_restore.lua` charges a second
//! countdown with every poll in which the port received no PFC frame for the priority, and
//! restores the queue when it runs out; with action `alert` the detection plugin keeps
//! running and a poll without the condition restores at once. The big red switch puts every
//! queue in the drop state and stops both plugins.
//!
//! The three detection plugins ([`Rule`]), from sonic-swss `orchagent/pfc_detect_*.lua`:
//! - [`Rule::MellanoxLegacy`] (commit 9040c8e): bytes queued, no packet sent and PFC frames
//!   received; or nothing queued, no packet sent and the pause duration grew by more than
//!   80 % of the interval.
//! - [`Rule::Mellanox`] (sonic-swss#3036): bytes queued, no packet sent, PFC frames received
//!   and the pause duration grew by more than 99 % of the interval.
//! - [`Rule::Broadcom`] (commit 0cb8610): PFC frames received, no new pause began (the
//!   ON2OFF counter did not move) and the queue's pause status read true at the previous
//!   sample and at this one; one poll charges at most the detection time less 1 µs, so two
//!   agreeing samples are always needed (it may detect one poll later than the others).

use serde::Serialize;

use crate::units::Duration;

/// What pfcwd does to a stormed queue (`PFC_WD` `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Discard the queue's packets and the later ones for it, and the ingress packets of the
    /// port's priority group (pauses included): the default.
    Drop,
    /// Ignore received PFC for the priority (the queue becomes lossy).
    Forward,
    /// Count only.
    Alert,
}

/// Which vendor's detection plugin decides that a poll is storming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// `pfc_detect_mellanox.lua` before sonic-swss#3036 (two conditions, 80 %).
    MellanoxLegacy,
    /// `pfc_detect_mellanox.lua` since sonic-swss#3036 (one condition, 99 %).
    Mellanox,
    /// `pfc_detect_broadcom.lua` (pause status at two samples, no ON2OFF, at least two polls).
    Broadcom,
}

/// Smallest and largest detection time (`pfcwdorch.cpp`).
pub const DETECTION_RANGE_MS: (u64, u64) = (100, 5000);
/// Smallest and largest restoration time (`pfcwdorch.cpp`).
pub const RESTORATION_RANGE_MS: (u64, u64) = (100, 60_000);
/// Largest poll interval (`sonic-utilities` `pfcwd/main.py`, `MAX_POLL_INTERVAL_TIME`).
pub const MAX_POLL_MS: u64 = 1000;
/// The times `pfcwd start_default` writes: detection = restoration = poll = 200 ms.
pub const DEFAULT_MS: u64 = 200;

/// The watchdog's settings on one switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Config {
    /// How long a queue must storm before it is declared stormed.
    pub detection: Duration,
    /// How long a stormed queue must receive no PFC before it is restored.
    pub restoration: Duration,
    /// The poll interval (`PFC_WD|GLOBAL POLL_INTERVAL`).
    pub poll: Duration,
    /// What a storm triggers.
    pub action: Action,
    /// The detection plugin.
    pub rule: Rule,
}

impl Default for Config {
    /// `pfcwd start_default`: 200 ms each, action drop; the current Mellanox plugin.
    fn default() -> Self {
        Config {
            detection: Duration::from_ms(DEFAULT_MS),
            restoration: Duration::from_ms(DEFAULT_MS),
            poll: Duration::from_ms(DEFAULT_MS),
            action: Action::Drop,
            rule: Rule::Mellanox,
        }
    }
}

/// A setting SONiC would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A time outside its allowed range.
    #[error("{what} {found}: allowed {min} ms ..= {max} ms")]
    OutOfRange {
        /// `detection`, `restoration` or `poll`.
        what: &'static str,
        /// The value given.
        found: Duration,
        /// Smallest allowed, in ms.
        min: u64,
        /// Largest allowed, in ms.
        max: u64,
    },
    /// A poll interval longer than the detection or restoration time (the CLI refuses it).
    #[error(
        "poll {poll} is longer than the {what} time {limit}: allowed a poll interval up to the shorter of the two"
    )]
    PollTooLong {
        /// The poll interval.
        poll: Duration,
        /// `detection` or `restoration`.
        what: &'static str,
        /// That time.
        limit: Duration,
    },
}

impl Config {
    /// Checks the ranges SONiC enforces: detection 100–5000 ms, restoration 100–60000 ms,
    /// poll 1–1000 ms and no longer than either time.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let ms = |m: u64| Duration::from_ms(m);
        let check = |what, v: Duration, (min, max): (u64, u64)| {
            if v < ms(min) || v > ms(max) {
                Err(ConfigError::OutOfRange {
                    what,
                    found: v,
                    min,
                    max,
                })
            } else {
                Ok(())
            }
        };
        check("detection", self.detection, DETECTION_RANGE_MS)?;
        check("restoration", self.restoration, RESTORATION_RANGE_MS)?;
        check("poll", self.poll, (1, MAX_POLL_MS))?;
        for (what, limit) in [("detection", self.detection), ("restoration", self.restoration)] {
            if self.poll > limit {
                return Err(ConfigError::PollTooLong {
                    poll: self.poll,
                    what,
                    limit,
                });
            }
        }
        Ok(())
    }
}

/// One queue's counters as syncd samples them (cumulative counters, as SAI gives them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueSample {
    /// `SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES`: bytes queued now.
    pub occupancy_bytes: u64,
    /// `SAI_QUEUE_STAT_PACKETS`: packets the queue has sent.
    pub tx_packets: u64,
    /// `SAI_PORT_STAT_PFC_n_RX_PKTS`: PFC frames received for the priority (XOFF and XON).
    pub pfc_rx_packets: u64,
    /// `SAI_PORT_STAT_PFC_n_ON2OFF_RX_PKTS`: times the priority went from running to paused.
    pub pfc_on2off: u64,
    /// `SAI_PORT_STAT_PFC_n_RX_PAUSE_DURATION`: total time paused.
    pub pause_duration: Duration,
    /// `SAI_QUEUE_ATTR_PAUSE_STATUS`: paused now.
    pub paused: bool,
}

/// A change of a queue's state that a poll decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The queue entered a storm (`PUBLISH "storm"`): install the action.
    Storm,
    /// The queue left it (`PUBLISH "restore"`): remove the action.
    Restore,
}

/// The `PFC_WD_STATUS` of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No storm.
    #[default]
    Operational,
    /// In a storm (or forced by the big red switch).
    Stormed,
}

/// The watchdog of one queue: countdowns, the previous sample and its counters.
#[derive(Debug, Clone, Default)]
pub struct QueueWatch {
    last: Option<QueueSample>,
    /// Whether the Mellanox plugin's `pause_duration_last` is missing (deleted at a storm).
    no_duration_last: bool,
    detect_left: Option<Duration>,
    restore_left: Option<Duration>,
    status: Status,
    big_red_switch: bool,
    detected: u64,
    restored: u64,
}

impl QueueWatch {
    /// A queue in the operational state with no sample yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The queue's `PFC_WD_STATUS`.
    pub fn status(&self) -> Status {
        self.status
    }
    /// `PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED`: storms detected (SONiC calls them deadlocks).
    pub fn detected(&self) -> u64 {
        self.detected
    }
    /// `PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED`: storms restored.
    pub fn restored(&self) -> u64 {
        self.restored
    }
    /// Whether the big red switch holds the queue.
    pub fn big_red_switch(&self) -> bool {
        self.big_red_switch
    }

    /// Turns the big red switch on or off for this queue; returns the verdict for the
    /// driver: on puts the queue in the drop state at once (`Storm`, not counted as a
    /// detection), off gives it back (`Restore`, not counted) with fresh countdowns.
    pub fn set_big_red_switch(&mut self, on: bool) -> Option<Verdict> {
        if on == self.big_red_switch {
            return None;
        }
        self.big_red_switch = on;
        self.detect_left = None;
        self.restore_left = None;
        self.last = None;
        let was = self.status;
        self.status = if on { Status::Stormed } else { Status::Operational };
        match (was, on) {
            (Status::Operational, true) => Some(Verdict::Storm),
            (Status::Stormed, false) => Some(Verdict::Restore),
            _ => None,
        }
    }

    /// One poll: `sample` taken now, `elapsed` since the previous poll (the interval the
    /// countdowns are charged). Returns the state change this poll publishes, if any.
    pub fn poll(&mut self, cfg: &Config, elapsed: Duration, sample: QueueSample) -> Option<Verdict> {
        if self.big_red_switch {
            self.last = Some(sample);
            return None;
        }
        let verdict = if self.status == Status::Operational || cfg.action == Action::Alert {
            self.detect(cfg, elapsed, sample)
        } else {
            self.restore(cfg, elapsed, sample)
        };
        self.last = Some(sample);
        match verdict {
            Some(Verdict::Storm) if self.status == Status::Stormed => None, // alert: already
            Some(Verdict::Storm) => {
                self.status = Status::Stormed;
                self.detected += 1;
                self.restore_left = None;
                verdict
            }
            Some(Verdict::Restore) if self.status == Status::Stormed => {
                self.status = Status::Operational;
                self.restored += 1;
                self.detect_left = None;
                verdict
            }
            _ => None,
        }
    }

    /// The detection plugin: charges or reloads the detection countdown.
    fn detect(&mut self, cfg: &Config, elapsed: Duration, s: QueueSample) -> Option<Verdict> {
        let detection = cfg.detection;
        let mut left = self.detect_left.unwrap_or(detection);
        let Some(last) = self.last else {
            self.detect_left = Some(left);
            self.no_duration_last = false;
            return None;
        };
        let tx = s.tx_packets.wrapping_sub(last.tx_packets);
        let pfc = s.pfc_rx_packets.wrapping_sub(last.pfc_rx_packets);
        let paused_for = s.pause_duration.saturating_sub(last.pause_duration);
        // a fraction of the interval, exactly (ps are integers)
        let over = |percent: u128| paused_for.as_ps() * 100 > elapsed.as_ps() * percent;
        let (storming, charge) = match cfg.rule {
            Rule::MellanoxLegacy | Rule::Mellanox if self.no_duration_last => {
                // the storm poll deleted `pause_duration_last`: this poll only records it
                self.no_duration_last = false;
                self.detect_left = Some(left);
                return None;
            }
            Rule::MellanoxLegacy => (
                (s.occupancy_bytes > 0 && tx == 0 && pfc > 0)
                    || (s.occupancy_bytes == 0 && tx == 0 && over(80)),
                elapsed,
            ),
            Rule::Mellanox => (s.occupancy_bytes > 0 && tx == 0 && pfc > 0 && over(99), elapsed),
            Rule::Broadcom => {
                let on2off = s.pfc_on2off.wrapping_sub(last.pfc_on2off);
                let cap = detection.saturating_sub(Duration::from_us(1));
                (
                    pfc > 0 && on2off == 0 && last.paused && s.paused,
                    elapsed.min(cap),
                )
            }
        };
        let mut verdict = None;
        if storming {
            if left <= charge {
                verdict = Some(Verdict::Storm);
                left = detection;
                if matches!(cfg.rule, Rule::MellanoxLegacy | Rule::Mellanox) {
                    self.no_duration_last = true;
                }
            } else {
                left = left.saturating_sub(charge);
            }
        } else {
            if cfg.action == Action::Alert && self.status == Status::Stormed {
                verdict = Some(Verdict::Restore);
            }
            left = detection;
        }
        self.detect_left = Some(left);
        verdict
    }

    /// `pfc_restore.lua`: charges the restoration countdown while no PFC frame arrives.
    fn restore(&mut self, cfg: &Config, elapsed: Duration, s: QueueSample) -> Option<Verdict> {
        let restoration = cfg.restoration;
        let mut left = self.restore_left.unwrap_or(restoration);
        let mut verdict = None;
        if let Some(last) = self.last {
            if s.pfc_rx_packets == last.pfc_rx_packets {
                if left <= elapsed {
                    verdict = Some(Verdict::Restore);
                    left = restoration;
                } else {
                    left = left.saturating_sub(elapsed);
                }
            } else {
                left = restoration;
            }
        }
        self.restore_left = Some(left);
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Duration = Duration::from_ms(200);

    /// A queue counter history: each step either storms (paused all along, PFC arriving,
    /// nothing sent, bytes queued) or runs free (packets sent, no PFC).
    struct Queue {
        s: QueueSample,
    }

    impl Queue {
        fn new() -> Self {
            Queue {
                s: QueueSample {
                    occupancy_bytes: 3000,
                    ..Default::default()
                },
            }
        }
        fn storm(&mut self, interval: Duration) -> QueueSample {
            self.s.pfc_rx_packets += 10;
            self.s.pause_duration += interval;
            if !self.s.paused {
                self.s.pfc_on2off += 1;
            }
            self.s.paused = true;
            self.s
        }
        fn free(&mut self) -> QueueSample {
            self.s.tx_packets += 100;
            self.s.paused = false;
            self.s
        }
        fn quiet_stormed(&mut self) -> QueueSample {
            // after a storm: still stuck (drop action empties it) but no PFC any more
            self.s.paused = false;
            self.s
        }
    }

    fn cfg(rule: Rule, action: Action) -> Config {
        Config {
            rule,
            action,
            ..Config::default()
        }
    }

    /// Polls after a storm that starts with the first poll's interval: the poll index
    /// (1-based) that reports it.
    fn polls_to_detect(c: &Config) -> usize {
        let mut w = QueueWatch::new();
        let mut q = Queue::new();
        assert_eq!(w.poll(c, c.poll, q.free()), None); // baseline
        for i in 1..=100 {
            if w.poll(c, c.poll, q.storm(c.poll)) == Some(Verdict::Storm) {
                return i;
            }
        }
        panic!("never detected");
    }

    #[test]
    fn mellanox_plugins_detect_after_the_detection_time_in_whole_polls() {
        for rule in [Rule::Mellanox, Rule::MellanoxLegacy] {
            // detection = poll: the first storming poll
            assert_eq!(polls_to_detect(&cfg(rule, Action::Drop)), 1, "{rule:?}");
            let c = Config {
                detection: Duration::from_ms(1000),
                ..cfg(rule, Action::Drop)
            };
            assert_eq!(polls_to_detect(&c), 5, "{rule:?}");
            // 500 ms with 200 ms polls: the third poll (600 ms), within detection + poll
            let c = Config {
                detection: Duration::from_ms(500),
                ..cfg(rule, Action::Drop)
            };
            assert_eq!(polls_to_detect(&c), 3, "{rule:?}");
        }
    }

    #[test]
    fn broadcom_needs_two_agreeing_samples_even_when_detection_equals_the_poll() {
        // poll 1 only sees the pause start (status false before): no charge; polls 2 and 3
        // agree, each charging at most detection − 1 µs
        assert_eq!(polls_to_detect(&cfg(Rule::Broadcom, Action::Drop)), 3);
        let c = Config {
            detection: Duration::from_ms(1000),
            ..cfg(Rule::Broadcom, Action::Drop)
        };
        assert_eq!(polls_to_detect(&c), 6);
    }

    #[test]
    fn one_clean_poll_reloads_the_countdown() {
        let c = Config {
            detection: Duration::from_ms(600),
            ..cfg(Rule::Mellanox, Action::Drop)
        };
        let mut w = QueueWatch::new();
        let mut q = Queue::new();
        w.poll(&c, P, q.free());
        assert_eq!(w.poll(&c, P, q.storm(P)), None);
        assert_eq!(w.poll(&c, P, q.storm(P)), None);
        assert_eq!(w.poll(&c, P, q.free()), None); // reload
        assert_eq!(w.poll(&c, P, q.storm(P)), None);
        assert_eq!(w.poll(&c, P, q.storm(P)), None);
        assert_eq!(w.poll(&c, P, q.storm(P)), Some(Verdict::Storm));
        assert_eq!(w.detected(), 1);
    }

    #[test]
    fn the_new_mellanox_rule_ignores_a_pause_that_arrived_late_in_the_interval() {
        // sonic-swss#3036: PFC frames received only near the end of the poll: the legacy rule
        // (bytes queued, nothing sent, PFC received) fires, the 99 % rule does not
        for (rule, fires) in [(Rule::MellanoxLegacy, true), (Rule::Mellanox, false)] {
            let c = cfg(rule, Action::Drop);
            let mut w = QueueWatch::new();
            let mut s = QueueSample {
                occupancy_bytes: 1500,
                ..Default::default()
            };
            w.poll(&c, P, s);
            s.pfc_rx_packets += 1;
            s.pause_duration += Duration::from_ms(20);
            assert_eq!(w.poll(&c, P, s) == Some(Verdict::Storm), fires, "{rule:?}");
        }
    }

    #[test]
    fn restoration_waits_for_the_restoration_time_without_pfc() {
        let c = Config {
            restoration: Duration::from_ms(400),
            ..cfg(Rule::Mellanox, Action::Drop)
        };
        let mut w = QueueWatch::new();
        let mut q = Queue::new();
        w.poll(&c, P, q.free());
        assert_eq!(w.poll(&c, P, q.storm(P)), Some(Verdict::Storm));
        assert_eq!(w.status(), Status::Stormed);
        // the storm goes on: no restoration however long
        for _ in 0..10 {
            assert_eq!(w.poll(&c, P, q.storm(P)), None);
        }
        // quiet: 400 ms = two polls
        assert_eq!(w.poll(&c, P, q.quiet_stormed()), None);
        assert_eq!(w.poll(&c, P, q.quiet_stormed()), Some(Verdict::Restore));
        assert_eq!((w.detected(), w.restored()), (1, 1));
        assert_eq!(w.status(), Status::Operational);
    }

    #[test]
    fn alert_restores_at_the_first_poll_without_the_condition_and_counts_once() {
        let c = cfg(Rule::Mellanox, Action::Alert);
        let mut w = QueueWatch::new();
        let mut q = Queue::new();
        w.poll(&c, P, q.free());
        assert_eq!(w.poll(&c, P, q.storm(P)), Some(Verdict::Storm));
        // the Mellanox plugin deleted pause_duration_last: one poll only records it
        assert_eq!(w.poll(&c, P, q.storm(P)), None);
        // a second detection while stormed is not a new storm (and deletes the baseline again)
        assert_eq!(w.poll(&c, P, q.storm(P)), None);
        assert_eq!(w.detected(), 1);
        // so the first clean poll only records, the second restores
        assert_eq!(w.poll(&c, P, q.free()), None);
        assert_eq!(w.poll(&c, P, q.free()), Some(Verdict::Restore));
        assert_eq!(w.restored(), 1);
    }

    #[test]
    fn the_big_red_switch_forces_drop_and_stops_detection() {
        let c = cfg(Rule::Mellanox, Action::Drop);
        let mut w = QueueWatch::new();
        let mut q = Queue::new();
        assert_eq!(w.set_big_red_switch(true), Some(Verdict::Storm));
        assert_eq!(w.set_big_red_switch(true), None);
        for _ in 0..5 {
            assert_eq!(w.poll(&c, P, q.storm(P)), None);
            assert_eq!(w.poll(&c, P, q.quiet_stormed()), None);
        }
        assert_eq!((w.detected(), w.restored()), (0, 0));
        assert_eq!(w.set_big_red_switch(false), Some(Verdict::Restore));
        assert_eq!(w.status(), Status::Operational);
    }

    #[test]
    fn settings_outside_sonic_ranges_are_refused() {
        assert!(Config::default().validate().is_ok());
        let bad = [
            Config {
                detection: Duration::from_ms(99),
                ..Config::default()
            },
            Config {
                restoration: Duration::from_ms(60_001),
                ..Config::default()
            },
            Config {
                poll: Duration::from_ms(1001),
                detection: Duration::from_ms(2000),
                restoration: Duration::from_ms(2000),
                ..Config::default()
            },
            Config {
                poll: Duration::from_ms(300),
                ..Config::default()
            },
        ];
        for c in bad {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("allowed"), "{e}");
        }
    }
}
