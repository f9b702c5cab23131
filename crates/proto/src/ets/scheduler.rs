//! The transmission selection engine: strict priority and credit-based shaper classes in
//! rank order, then the ETS (or CEE priority-group) classes sharing what is left by weight,
//! then, inside the chosen class, its priorities sharing by weight — each priority with its
//! own sub-queue so that a PFC-paused priority never blocks an unpaused sibling in its class.

use super::cbs::Shaper;
use super::cee::{CeeConfig, PGID_STRICT};
use super::config::{Algorithm, EtsConfig};
use super::group::{WeightedGroup, bits};
use crate::units::{IFG_BYTES, Instant, PREAMBLE_SFD_BYTES, Rate};

/// Largest frame (FCS included) the bounds are stated for: a 9216-byte jumbo frame.
pub const MAX_FRAME_BYTES: u32 = 9216;

/// Port parameters the scheduler needs beyond the DCBX configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortParams {
    /// Port transmit rate.
    pub rate: Rate,
    /// Bytes charged per frame on top of its length: 20 (preamble, SFD and inter-frame gap)
    /// shares link time; 0 shares frame bytes.
    pub overhead_bytes: u32,
    /// Largest frame accepted, FCS included.
    pub max_frame_bytes: u32,
    /// idleSlope of each credit-based-shaper traffic class (index = TC).
    pub idle_slope: [Option<Rate>; 8],
}

impl PortParams {
    /// Parameters for a port at `rate`: link-time accounting (20 bytes per frame), frames up
    /// to 9216 bytes, no shaper slopes.
    pub const fn new(rate: Rate) -> Self {
        PortParams {
            rate,
            overhead_bytes: (PREAMBLE_SFD_BYTES + IFG_BYTES) as u32,
            max_frame_bytes: MAX_FRAME_BYTES,
            idle_slope: [None; 8],
        }
    }
    /// The same parameters with `idle_slope` for credit-based-shaper TC `tc` (0..=7).
    pub const fn with_idle_slope(mut self, tc: u8, idle_slope: Rate) -> Self {
        self.idle_slope[(tc & 7) as usize] = Some(idle_slope);
        self
    }
}

/// Why the scheduler refused a configuration or a driver call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchedulerError {
    /// A credit-based-shaper TC without an idleSlope.
    #[error("idle_slope: TC {tc} uses the credit-based shaper but has no idleSlope")]
    MissingIdleSlope {
        /// The traffic class.
        tc: u8,
    },
    /// An idleSlope above the port rate.
    #[error("idle_slope: TC {tc} has {idle_slope_bps} b/s, allowed up to the port rate {rate_bps} b/s")]
    IdleSlopeAboveRate {
        /// The traffic class.
        tc: u8,
        /// The idleSlope given.
        idle_slope_bps: u64,
        /// The port rate.
        rate_bps: u64,
    },
    /// A maximum frame size of 0.
    #[error("max_frame_bytes: found 0, allowed 1..=65535")]
    MaxFrame,
    /// A priority above 7.
    #[error("priority: found {found}, allowed 0..=7")]
    Priority {
        /// The priority given.
        found: u8,
    },
    /// A frame size of 0 or beyond the maximum.
    #[error("priority {priority}: frame of {found} bytes, allowed 1..={max}")]
    FrameSize {
        /// The priority.
        priority: u8,
        /// The size given.
        found: u32,
        /// The maximum frame size.
        max: u32,
    },
    /// More frames queued than the counter holds.
    #[error("priority {priority}: more than 4294967295 frames queued")]
    QueueFull {
        /// The priority.
        priority: u8,
    },
    /// A transmission reported for a priority with no such frame queued.
    #[error(
        "priority {priority}: {bytes} bytes reported sent but {queued} bytes in {frames} frames are queued"
    )]
    NotQueued {
        /// The priority.
        priority: u8,
        /// The size reported.
        bytes: u32,
        /// Bytes queued.
        queued: u64,
        /// Frames queued.
        frames: u32,
    },
}

/// What to send next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Selection {
    /// The priority whose oldest frame goes next.
    pub priority: u8,
    /// Its class: the traffic class (IEEE) or the PGID (CEE, 15 for strict).
    pub class: u8,
}

/// Number of internal classes: IEEE TCs 0..=7, or CEE PGs 0..=7 plus one strict class per
/// priority (8 + priority).
const CLASSES: usize = 16;

/// ETS / priority-group transmission selection for one port (sans-IO, fixed size, O(1)).
#[derive(Clone, Debug)]
pub struct Scheduler {
    rate: Rate,
    overhead: u64,
    max_frame: u32,
    prio_class: [u8; 8],
    class_label: [u8; CLASSES],
    class_prios: [u8; CLASSES],
    /// Strict and shaped classes, highest rank first.
    strict_order: [u8; 8],
    n_strict: u8,
    /// Classes 0..=7 in the bandwidth-sharing group.
    shared: u8,
    shared_group: WeightedGroup,
    prio_groups: [WeightedGroup; CLASSES],
    shaper: [Option<Shaper>; 8],
    queued_frames: [u32; 8],
    queued_bytes: [u64; 8],
    sent_frames: [u64; 8],
    sent_bytes: [u64; 8],
    backlogged: u8,
    paused: u8,
    ready: u8,
}

impl Scheduler {
    fn empty(p: &PortParams) -> Result<Self, SchedulerError> {
        if p.max_frame_bytes == 0 {
            return Err(SchedulerError::MaxFrame);
        }
        Ok(Scheduler {
            rate: p.rate,
            overhead: u64::from(p.overhead_bytes),
            max_frame: p.max_frame_bytes,
            prio_class: [0; 8],
            class_label: [0; CLASSES],
            class_prios: [0; CLASSES],
            strict_order: [0; 8],
            n_strict: 0,
            shared: 0,
            shared_group: WeightedGroup::new(0, [0; 8]),
            prio_groups: core::array::from_fn(|_| WeightedGroup::new(0, [0; 8])),
            shaper: core::array::from_fn(|_| None),
            queued_frames: [0; 8],
            queued_bytes: [0; 8],
            sent_frames: [0; 8],
            sent_bytes: [0; 8],
            backlogged: 0,
            paused: 0,
            ready: 0,
        })
    }

    /// A scheduler for an 802.1Qaz configuration: strict and CBS TCs by TC number, highest
    /// first (802.1Q 8.6.8); then the ETS TCs sharing the rest by bandwidth percentage (ETS
    /// TCs at 0 % only get what the others leave); priorities of one TC share it equally.
    pub fn ieee(cfg: &EtsConfig, p: &PortParams) -> Result<Self, SchedulerError> {
        let mut s = Scheduler::empty(p)?;
        let alg = cfg.algorithm();
        let mut weight = [0u32; 8];
        let max_tx = p
            .rate
            .time_for_bytes(u64::from(p.max_frame_bytes) + u64::from(p.overhead_bytes));
        for tc in 0..cfg.max_tcs() {
            let t = usize::from(tc);
            let prios = cfg.priorities_of(tc);
            s.class_label[t] = tc;
            s.class_prios[t] = prios;
            s.prio_groups[t] = WeightedGroup::new(prios, [1; 8]);
            match alg[t] {
                Algorithm::Ets => {
                    s.shared |= 1 << tc;
                    weight[t] = u32::from(cfg.bandwidth()[t]);
                }
                Algorithm::CreditBasedShaper => {
                    let slope = p.idle_slope[t].ok_or(SchedulerError::MissingIdleSlope { tc })?;
                    if slope > p.rate {
                        return Err(SchedulerError::IdleSlopeAboveRate {
                            tc,
                            idle_slope_bps: slope.bps(),
                            rate_bps: p.rate.bps(),
                        });
                    }
                    s.shaper[t] = Some(Shaper::new(slope, max_tx));
                }
                Algorithm::Strict => {}
            }
        }
        for (p, &tc) in cfg.prio_tc().iter().enumerate() {
            s.prio_class[p] = tc;
        }
        for tc in (0..cfg.max_tcs()).rev() {
            let t = usize::from(tc);
            if alg[t] != Algorithm::Ets && s.class_prios[t] != 0 {
                s.strict_order[usize::from(s.n_strict)] = tc;
                s.n_strict += 1;
            }
        }
        s.shared_group = WeightedGroup::new(s.shared, weight);
        Ok(s)
    }

    /// A scheduler for a CEE priority-group configuration: PGID-15 priorities strictly, higher
    /// priority first; then the groups sharing the rest by PG percentage; inside a group its
    /// priorities share by their own percentage.
    pub fn cee(cfg: &CeeConfig, p: &PortParams) -> Result<Self, SchedulerError> {
        let mut s = Scheduler::empty(p)?;
        let pgid = cfg.pgid();
        let mut weight = [0u32; 8];
        for g in 0..8u8 {
            let gi = usize::from(g);
            let mut prios = 0u8;
            for (p, &x) in pgid.iter().enumerate() {
                if x == g {
                    prios |= 1 << p;
                }
            }
            s.class_label[gi] = g;
            s.class_prios[gi] = prios;
            s.prio_groups[gi] = WeightedGroup::new(prios, cfg.prio_bandwidth().map(u32::from));
            s.shared |= 1 << g;
            weight[gi] = u32::from(cfg.pg_bandwidth()[gi]);
        }
        for pr in (0..8u8).rev() {
            let c = 8 + usize::from(pr);
            if pgid[usize::from(pr)] == PGID_STRICT {
                s.class_label[c] = PGID_STRICT;
                s.class_prios[c] = 1 << pr;
                s.prio_groups[c] = WeightedGroup::new(1 << pr, [1; 8]);
                s.prio_class[usize::from(pr)] = c as u8;
                s.strict_order[usize::from(s.n_strict)] = c as u8;
                s.n_strict += 1;
            } else {
                s.prio_class[usize::from(pr)] = pgid[usize::from(pr)];
            }
        }
        s.shared_group = WeightedGroup::new(s.shared, weight);
        Ok(s)
    }

    /// Carries the queue state (frames and bytes queued per priority, pause mask, counters) of
    /// `old` into this scheduler, e.g. when DCBX changes the configuration of a running port.
    /// Shares start afresh (no class is owed anything) and shaper credits start at zero.
    pub fn with_queues_of(mut self, now: Instant, old: &Scheduler) -> Self {
        self.queued_frames = old.queued_frames;
        self.queued_bytes = old.queued_bytes;
        self.sent_frames = old.sent_frames;
        self.sent_bytes = old.sent_bytes;
        self.backlogged = old.backlogged;
        self.paused = old.paused;
        for sh in self.shaper.iter_mut().flatten() {
            sh.set_waiting(now, false);
        }
        self.refresh(now);
        self
    }

    /// Recomputes the active sets of the classes whose priorities changed readiness after
    /// the backlog or the pause state changed.
    fn refresh(&mut self, now: Instant) {
        let ready = self.backlogged & !self.paused;
        let changed = ready ^ self.ready;
        if changed == 0 {
            return;
        }
        self.ready = ready;
        let mut classes = 0u16;
        for p in bits(changed) {
            classes |= 1 << self.prio_class[p];
        }
        let mut shared_active = self.shared_group.active();
        while classes != 0 {
            let c = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            let r = self.class_prios[c] & ready;
            self.prio_groups[c].set_active(r);
            if c < 8 {
                if self.shared & (1 << c) != 0 {
                    if r != 0 {
                        shared_active |= 1 << c;
                    } else {
                        shared_active &= !(1 << c);
                    }
                }
                if let Some(sh) = &mut self.shaper[c] {
                    sh.set_waiting(now, r != 0);
                }
            }
        }
        self.shared_group.set_active(shared_active);
    }

    fn check_priority(priority: u8) -> Result<usize, SchedulerError> {
        if priority > 7 {
            Err(SchedulerError::Priority { found: priority })
        } else {
            Ok(usize::from(priority))
        }
    }

    /// Tells the scheduler that a frame of `bytes` (FCS included) joined priority
    /// `priority`'s queue at `now`.
    pub fn enqueue(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        let p = Self::check_priority(priority)?;
        if bytes == 0 || bytes > self.max_frame {
            return Err(SchedulerError::FrameSize {
                priority,
                found: bytes,
                max: self.max_frame,
            });
        }
        self.queued_frames[p] = self.queued_frames[p]
            .checked_add(1)
            .ok_or(SchedulerError::QueueFull { priority })?;
        self.queued_bytes[p] += u64::from(bytes);
        self.backlogged |= 1 << p;
        self.refresh(now);
        Ok(())
    }

    /// Tells the scheduler which priorities are paused from `now` on (bit n = priority n), e.g.
    /// by received PFC; may be called at any time and as often as the state changes.
    pub fn set_paused(&mut self, now: Instant, paused: u8) {
        self.paused = paused;
        self.refresh(now);
    }

    /// What to send at `now` given the priorities paused (bit n = priority n): the priority
    /// whose oldest frame goes next, or `None` when every queue is empty, paused or held by
    /// its shaper (see [`Scheduler::next_eligible`]). Calling it again without a transmission
    /// in between gives the same answer.
    pub fn select(&mut self, now: Instant, paused: u8) -> Option<Selection> {
        if paused != self.paused {
            self.set_paused(now, paused);
        }
        let ready = self.ready;
        if ready == 0 {
            return None;
        }
        for i in 0..usize::from(self.n_strict) {
            let c = usize::from(self.strict_order[i]);
            if self.class_prios[c] & ready == 0 {
                continue;
            }
            if c < 8
                && let Some(sh) = &mut self.shaper[c]
            {
                sh.advance(now);
                if !sh.eligible() {
                    continue;
                }
            }
            return self.pick_in(c);
        }
        let c = self.shared_group.pick()?;
        self.pick_in(usize::from(c))
    }

    fn pick_in(&self, c: usize) -> Option<Selection> {
        let p = self.prio_groups[c].pick()?;
        Some(Selection {
            priority: p,
            class: self.class_label[c],
        })
    }

    /// Tells the scheduler that the oldest frame of `priority`, `bytes` long, started
    /// transmission at `now`; charges its class and removes it from the queue.
    pub fn on_transmitted(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        let p = Self::check_priority(priority)?;
        if self.queued_frames[p] == 0 || u64::from(bytes) > self.queued_bytes[p] || bytes == 0 {
            return Err(SchedulerError::NotQueued {
                priority,
                bytes,
                queued: self.queued_bytes[p],
                frames: self.queued_frames[p],
            });
        }
        let c = usize::from(self.prio_class[p]);
        let wire = u64::from(bytes) + self.overhead;
        if c < 8 && self.shared & (1 << c) != 0 {
            self.shared_group.charge(c as u8, wire);
        }
        self.prio_groups[c].charge(priority, wire);
        if c < 8
            && let Some(sh) = &mut self.shaper[c]
        {
            sh.on_transmit(now, self.rate, self.rate.time_for_bytes(wire));
        }
        self.queued_frames[p] -= 1;
        self.queued_bytes[p] -= u64::from(bytes);
        if self.queued_frames[p] == 0 {
            // frames are at least one byte: no frames means no bytes
            self.queued_bytes[p] = 0;
            self.backlogged &= !(1 << p);
        }
        self.sent_frames[p] = self.sent_frames[p].wrapping_add(1);
        self.sent_bytes[p] = self.sent_bytes[p].wrapping_add(u64::from(bytes));
        self.refresh(now);
        Ok(())
    }

    /// Tells the scheduler that a queued frame of `priority`, `bytes` long, left the queue at
    /// `now` without being transmitted (a flushed queue, a watchdog's drop): removed from the
    /// queue like [`Scheduler::on_transmitted`] but charged to no class or shaper and not
    /// counted as sent.
    pub fn discard(&mut self, now: Instant, priority: u8, bytes: u32) -> Result<(), SchedulerError> {
        let p = Self::check_priority(priority)?;
        if self.queued_frames[p] == 0 || u64::from(bytes) > self.queued_bytes[p] || bytes == 0 {
            return Err(SchedulerError::NotQueued {
                priority,
                bytes,
                queued: self.queued_bytes[p],
                frames: self.queued_frames[p],
            });
        }
        self.queued_frames[p] -= 1;
        self.queued_bytes[p] -= u64::from(bytes);
        if self.queued_frames[p] == 0 {
            self.queued_bytes[p] = 0;
            self.backlogged &= !(1 << p);
        }
        self.refresh(now);
        Ok(())
    }

    /// The earliest instant at which a shaper now holding back a waiting class lets it send,
    /// or `None` if no class is held; a driver with nothing else to send sleeps until then.
    pub fn next_eligible(&self, now: Instant) -> Option<Instant> {
        let mut best: Option<Instant> = None;
        for sh in self.shaper.iter().flatten() {
            if let Some(t) = sh.eligible_at() {
                let t = t.max(now);
                best = Some(best.map_or(t, |b| b.min(t)));
            }
        }
        best
    }

    /// The class (TC, or PGID with 15 for strict) of `priority` (0..=7).
    pub fn class_of(&self, priority: u8) -> u8 {
        self.class_label[usize::from(self.prio_class[usize::from(priority & 7)])]
    }
    /// Frames queued at `priority`, as told by `enqueue` and `on_transmitted`.
    pub fn queued_frames(&self, priority: u8) -> u32 {
        self.queued_frames[usize::from(priority & 7)]
    }
    /// Bytes queued at `priority`.
    pub fn queued_bytes(&self, priority: u8) -> u64 {
        self.queued_bytes[usize::from(priority & 7)]
    }
    /// Frames of `priority` transmitted so far (wrapping, like a MAC counter).
    pub fn sent_frames(&self, priority: u8) -> u64 {
        self.sent_frames[usize::from(priority & 7)]
    }
    /// Bytes (frame lengths, without overhead) of `priority` transmitted so far (wrapping).
    pub fn sent_bytes(&self, priority: u8) -> u64 {
        self.sent_bytes[usize::from(priority & 7)]
    }
    /// Priorities with at least one frame queued (bit n = priority n).
    pub fn backlogged(&self) -> u8 {
        self.backlogged
    }
    /// Priorities paused as last told.
    pub fn paused(&self) -> u8 {
        self.paused
    }
    /// Credit of credit-based-shaper TC `tc` at `now`, in 10^-12 bit (`None` for other
    /// classes).
    pub fn shaper_credit(&mut self, now: Instant, tc: u8) -> Option<i128> {
        let sh = self.shaper[usize::from(tc & 7)].as_mut()?;
        sh.advance(now);
        Some(sh.credit())
    }
    /// Port rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }
    /// Bytes charged per frame on top of its length.
    pub fn overhead_bytes(&self) -> u32 {
        self.overhead as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_iterates_set_bits() {
        assert_eq!(bits(0b1010_0101).collect::<Vec<_>>(), vec![0, 2, 5, 7]);
    }

    #[test]
    fn a_discarded_frame_leaves_the_queue_unsent() {
        let cfg =
            EtsConfig::from_lldptool_args("tsa=0:ets,1:ets up2tc=0:0,1:0,2:0,3:1,4:0,5:0,6:0,7:0 tcbw=50,50")
                .unwrap();
        let mut s = Scheduler::ieee(&cfg, &PortParams::new(Rate::from_gbps(100))).unwrap();
        let t = Instant::ZERO;
        s.enqueue(t, 3, 1000).unwrap();
        s.enqueue(t, 3, 1000).unwrap();
        s.enqueue(t, 0, 1000).unwrap();
        s.discard(t, 3, 1000).unwrap();
        s.discard(t, 3, 1000).unwrap();
        assert_eq!(
            (s.queued_frames(3), s.queued_bytes(3), s.sent_frames(3)),
            (0, 0, 0)
        );
        assert_eq!(s.backlogged(), 1);
        assert_eq!(s.select(t, 0).map(|x| x.priority), Some(0));
        assert!(matches!(
            s.discard(t, 3, 1000),
            Err(SchedulerError::NotQueued { .. })
        ));
    }

    #[test]
    fn paused_priority_does_not_block_its_sibling() {
        let cfg =
            EtsConfig::from_lldptool_args("tsa=0:ets,1:ets up2tc=0:0,1:0,2:0,3:0,4:0,5:0,6:1,7:1 tcbw=50,50")
                .unwrap();
        let mut s = Scheduler::ieee(&cfg, &PortParams::new(Rate::from_gbps(100))).unwrap();
        let t = Instant::ZERO;
        s.enqueue(t, 6, 1000).unwrap();
        s.enqueue(t, 7, 1000).unwrap();
        assert_eq!(s.select(t, 1 << 6).map(|x| x.priority), Some(7));
        assert_eq!(s.select(t, 1 << 7).map(|x| x.priority), Some(6));
        assert_eq!(s.select(t, 0xc0), None);
    }
}
