//! The headroom the pauses seen in a capture needed: per priority, the bytes of that priority
//! that kept arriving after each XOFF was sent, until the pause took effect.
//!
//! # What a capture can see
//!
//! An *episode* opens with an XOFF for a priority (a PFC frame with the priority's enable bit
//! and a non-zero time; PAUSE for the whole link) and lasts until an XON for it, or until the
//! pause time runs out at the given link speed (a refresh XOFF extends it). Frames of the
//! priority travelling the *other way* with timestamps from the XOFF's on, within the episode,
//! are the bytes the XOFF's sender had to absorb: the figure per episode is their length with
//! FCS (4 bytes added when the capture dropped it). A peer that obeys the pause sends nothing
//! once its reaction delay has passed, so the figure is exactly the post-XOFF part of the
//! headroom; a peer that ignores it shows as the whole episode's bytes.
//!
//! - **Direction.** In a capture with more than one interface (pcapng; e.g. `mergecap` of two
//!   one-way captures, or a tap's two ports) a frame on another interface than the XOFF's is
//!   going the other way. With one interface (a pcap file, a SPAN port) the directions cannot
//!   be told apart: frames of the priority in both directions are counted, an over-estimate,
//!   and the analysis says so.
//! - **Where the capture was taken.** At the XOFF's sender, the figure is what arrived there
//!   after the XOFF left: Annex N's PFC frame, cable round trip, both PHY paths, peer reaction
//!   and last frame. Anywhere else it misses the round trip between the capture point and the
//!   XOFF's sender (a capture at the peer sees only its reaction and last frame). In every case
//!   it misses what Annex N counts *before* the XOFF left: the frame being received when the
//!   receiver decided, and any frame its transmitter had to finish first — add one or two
//!   largest frames to compare it with a headroom setting.
//! - **Timestamps.** Frames count by their timestamps against the XOFF's, whatever instant the
//!   capture stamps (the simulator's pcapng: the first preamble bit at the transmitter; most
//!   NICs: the end of reception). Untagged frames count as priority 0 (a priority taken from
//!   DSCP is not seen here).

use std::collections::{BTreeMap, BTreeSet};

use hdrhistogram::Histogram;
use lossless_proto::monitor::slot_name;
use lossless_proto::units::{Instant, Rate};
use lossless_wire::mac_control::MacControlRepr;
use serde::Serialize;

/// Slots: priorities 0..=7 and link-level PAUSE (8).
pub const SLOTS: usize = 9;

/// One open episode of one direction and slot.
#[derive(Clone, Copy, Debug)]
struct Episode {
    xoff_at: Instant,
    until: Instant,
    /// Bytes on other interfaces than the XOFF's.
    opposite: u64,
    /// Bytes on any interface.
    any: u64,
}

#[derive(Clone, Debug)]
struct Needs {
    hist: Histogram<u64>,
    max: u64,
    max_at: Option<Instant>,
}

impl Needs {
    fn new() -> Self {
        Needs {
            hist: Histogram::new(3).expect("3 significant figures are in range"),
            max: 0,
            max_at: None,
        }
    }
    fn record(&mut self, bytes: u64, at: Instant) {
        // an auto-resizing histogram takes any u64
        let _ = self.hist.record(bytes);
        if bytes > self.max || self.max_at.is_none() {
            self.max = bytes;
            self.max_at = Some(at);
        }
    }
}

/// Follows XOFF episodes and the bytes that arrive in them (module doc).
#[derive(Clone, Debug)]
pub struct Tracker {
    speed: Rate,
    open: BTreeMap<(u32, usize), Episode>,
    opposite: Vec<Needs>,
    any: Vec<Needs>,
    interfaces: BTreeSet<u32>,
    open_at_end: [u64; SLOTS],
}

/// The headroom one slot's pauses needed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlotNeed {
    /// `p0`..`p7` or `pause`.
    pub slot: String,
    /// XOFF episodes seen (refreshes within one count once).
    pub episodes_total: u64,
    /// Episodes still open when the capture ended (counted with what they had).
    pub open_at_end_total: u64,
    /// The most bytes any episode needed.
    pub max_bytes: u64,
    /// When that episode's XOFF was sent, seconds from the first frame.
    pub max_at_s: f64,
    /// Median over episodes (percentiles to 3 significant figures, never above the max).
    pub p50_bytes: u64,
    /// 90th percentile.
    pub p90_bytes: u64,
    /// 99th percentile.
    pub p99_bytes: u64,
    /// Mean.
    pub mean_bytes: f64,
}

/// The headroom the capture's pauses needed, per slot that saw an XOFF.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeadroomNeeds {
    /// `interfaces` (frames on another interface than the XOFF's are the other direction) or
    /// `unknown` (one interface: both directions counted, an over-estimate).
    pub directions: &'static str,
    /// Slots with at least one XOFF episode.
    pub slots: Vec<SlotNeed>,
}

impl Tracker {
    /// A tracker for a link at `speed` (to know when a pause runs out).
    pub fn new(speed: Rate) -> Self {
        Tracker {
            speed,
            open: BTreeMap::new(),
            opposite: (0..SLOTS).map(|_| Needs::new()).collect(),
            any: (0..SLOTS).map(|_| Needs::new()).collect(),
            interfaces: BTreeSet::new(),
            open_at_end: [0; SLOTS],
        }
    }

    fn close(&mut self, key: (u32, usize)) {
        if let Some(e) = self.open.remove(&key) {
            self.opposite[key.1].record(e.opposite, e.xoff_at);
            self.any[key.1].record(e.any, e.xoff_at);
        }
    }

    /// Closes every episode whose pause ran out by `t`.
    fn expire(&mut self, t: Instant) {
        let done: Vec<(u32, usize)> = self
            .open
            .iter()
            .filter(|(_, e)| e.until <= t)
            .map(|(k, _)| *k)
            .collect();
        for k in done {
            self.close(k);
        }
    }

    fn pause(&mut self, t: Instant, interface: u32, slot: usize, quanta: u16) {
        let key = (interface, slot);
        if quanta == 0 {
            self.close(key);
            return;
        }
        let until = t.saturating_add(self.speed.quanta_time(u64::from(quanta)));
        match self.open.get_mut(&key) {
            // a refresh: the newest time wins, the episode goes on
            Some(e) => e.until = until,
            None => {
                self.open.insert(
                    key,
                    Episode {
                        xoff_at: t,
                        until,
                        opposite: 0,
                        any: 0,
                    },
                );
            }
        }
    }

    /// A MAC Control frame's payload (opcode first) seen at `t` on `interface`.
    pub fn on_control(&mut self, t: Instant, interface: u32, payload: &[u8]) {
        self.interfaces.insert(interface);
        self.expire(t);
        match MacControlRepr::parse_bytes(payload) {
            Ok(MacControlRepr::Pause { pause_time }) => self.pause(t, interface, SLOTS - 1, pause_time),
            Ok(MacControlRepr::Pfc {
                priority_enable_vector,
                time,
            }) => {
                for (p, &q) in time.iter().enumerate() {
                    if priority_enable_vector & (1 << p) != 0 {
                        self.pause(t, interface, p, q);
                    }
                }
            }
            _ => {}
        }
    }

    /// A data frame of `priority` and `bytes` (FCS included) seen at `t` on `interface`.
    pub fn on_data(&mut self, t: Instant, interface: u32, priority: u8, bytes: u64) {
        self.interfaces.insert(interface);
        self.expire(t);
        for (&(itf, slot), e) in self.open.iter_mut() {
            if (slot == SLOTS - 1 || slot == usize::from(priority)) && t >= e.xoff_at {
                e.any += bytes;
                if itf != interface {
                    e.opposite += bytes;
                }
            }
        }
    }

    /// The result at the end of a capture that began at `origin` and ended at `end`.
    pub fn finish(mut self, origin: Instant, end: Instant) -> HeadroomNeeds {
        self.expire(end);
        let open: Vec<(u32, usize)> = self.open.keys().copied().collect();
        for k in open {
            self.open_at_end[k.1] += 1;
            self.close(k);
        }
        let known = self.interfaces.len() > 1;
        let needs = if known { &self.opposite } else { &self.any };
        let secs = |t: Instant| t.saturating_duration_since(origin).as_secs_f64();
        let slots = needs
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.hist.is_empty())
            .map(|(i, n)| SlotNeed {
                slot: slot_name(i),
                episodes_total: n.hist.len(),
                open_at_end_total: self.open_at_end[i],
                max_bytes: n.max,
                max_at_s: n.max_at.map_or(0.0, secs),
                p50_bytes: n.hist.value_at_quantile(0.5).min(n.max),
                p90_bytes: n.hist.value_at_quantile(0.9).min(n.max),
                p99_bytes: n.hist.value_at_quantile(0.99).min(n.max),
                mean_bytes: n.hist.mean(),
            })
            .collect();
        HeadroomNeeds {
            directions: if known { "interfaces" } else { "unknown" },
            slots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_proto::units::Duration;

    fn pfc(p: usize, quanta: u16) -> Vec<u8> {
        let mut b = vec![0x01, 0x01, 0x00, 1 << p];
        for i in 0..8 {
            let q = if i == p { quanta } else { 0 };
            b.extend_from_slice(&q.to_be_bytes());
        }
        b
    }

    fn at(ns: u64) -> Instant {
        Instant::ZERO + Duration::from_ns(ns)
    }

    #[test]
    fn bytes_of_the_priority_from_the_other_direction_count_until_the_xon() {
        let mut t = Tracker::new(Rate::from_gbps(100));
        t.on_data(at(0), 1, 3, 1000); // before the XOFF: not counted
        t.on_control(at(10), 0, &pfc(3, 0xFFFF));
        t.on_data(at(20), 1, 3, 1522);
        t.on_data(at(30), 1, 5, 9000); // another priority
        t.on_data(at(40), 0, 3, 700); // the XOFF's own direction
        t.on_control(at(50), 0, &pfc(3, 0xFFFF)); // a refresh: same episode
        t.on_data(at(60), 1, 3, 1522);
        t.on_control(at(70), 0, &pfc(3, 0)); // XON
        t.on_data(at(80), 1, 3, 1522); // after the episode
        let n = t.finish(at(0), at(100));
        assert_eq!(n.directions, "interfaces");
        assert_eq!(n.slots.len(), 1);
        let s = &n.slots[0];
        assert_eq!((s.slot.as_str(), s.episodes_total, s.max_bytes), ("p3", 1, 3044));
        assert_eq!(s.open_at_end_total, 0);
    }

    #[test]
    fn an_episode_ends_when_its_pause_runs_out() {
        // 10 quanta at 100G = 51.2 ns
        let mut t = Tracker::new(Rate::from_gbps(100));
        t.on_control(at(0), 0, &pfc(2, 10));
        t.on_data(at(50), 1, 2, 100);
        t.on_data(at(52), 1, 2, 200); // the pause ran out at 51.2 ns
        t.on_control(at(60), 0, &pfc(2, 10)); // a new episode
        t.on_data(at(61), 1, 2, 300);
        let n = t.finish(at(0), at(200));
        let s = &n.slots[0];
        assert_eq!(s.episodes_total, 2);
        assert_eq!(s.max_bytes, 300);
        assert_eq!(s.p50_bytes, 100);
        assert_eq!(s.p99_bytes, 300);
        assert_eq!(s.max_at_s, 60e-9);
    }

    #[test]
    fn one_interface_counts_both_directions_and_says_so() {
        let mut t = Tracker::new(Rate::from_gbps(10));
        t.on_control(at(0), 0, &pfc(3, 0xFFFF));
        t.on_data(at(1), 0, 3, 1000);
        let n = t.finish(at(0), at(10));
        assert_eq!(n.directions, "unknown");
        assert_eq!(n.slots[0].max_bytes, 1000);
        assert_eq!(n.slots[0].open_at_end_total, 1);
    }

    #[test]
    fn percentiles_never_exceed_the_largest_episode() {
        // 51_889 lies inside a histogram bucket whose top is higher
        let mut t = Tracker::new(Rate::from_gbps(100));
        t.on_control(at(0), 0, &pfc(3, 0xFFFF));
        t.on_data(at(1), 1, 3, 51_889);
        let n = t.finish(at(0), at(10));
        let s = &n.slots[0];
        assert_eq!((s.max_bytes, s.p50_bytes, s.p99_bytes), (51_889, 51_889, 51_889));
    }

    #[test]
    fn link_pause_counts_every_priority() {
        let mut t = Tracker::new(Rate::from_gbps(10));
        t.on_control(at(0), 0, &[0x00, 0x01, 0xFF, 0xFF]);
        t.on_data(at(1), 1, 0, 100);
        t.on_data(at(2), 1, 7, 200);
        t.on_control(at(3), 0, &[0x00, 0x01, 0x00, 0x00]);
        let n = t.finish(at(0), at(10));
        assert_eq!((n.slots[0].slot.as_str(), n.slots[0].max_bytes), ("pause", 300));
    }
}
