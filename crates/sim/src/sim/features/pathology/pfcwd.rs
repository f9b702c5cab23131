//! SONiC's PFC watchdog inside simulated switches: every lossless (port, priority) queue of a
//! switch with `pfcwd` has a [`QueueWatch`]; every poll interval the switch samples the
//! queue's counters as SAI would give them and applies the verdicts.
//!
//! The actions, as SONiC installs them (pathologies.md §1.3):
//! - `drop`: the queue's frames are discarded (`pfcwd` drops), later frames routed to it and
//!   frames arriving on the port at that priority are discarded, and the priority leaves the
//!   port's PFC mask: the port neither obeys PFC for it nor sends any (so it stops spreading
//!   pause upstream).
//! - `forward`: the priority leaves the port's PFC mask and becomes lossy there (the queue
//!   sends although the peer pauses; frames arriving there are admitted as lossy).
//! - `alert`: counted only.
//!
//! Restoration puts the priority back in the mask (a buffer request still raised goes out
//! again). Counters per queue: storms detected and restored (SONiC's `DEADLOCK_DETECTED` /
//! `_RESTORED`), frames dropped at egress and at ingress while stormed, and each storm's
//! detection and restoration time.

use lossless_proto::flow_control::Mode;
use lossless_proto::units::{Duration, Instant};
use lossless_proto::watchdog::pfcwd::{Action, Config, QueueSample, QueueWatch, Status, Verdict};

use crate::event::EventQueue;
use crate::frame::{DropReason, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::features::pathology::Timer;
use crate::sim::order::schedule;
use crate::sim::{Event, Simulator};

/// One watched queue.
pub(crate) struct WdQueue {
    pub(crate) port: PortId,
    pub(crate) prio: u8,
    pub(crate) watch: QueueWatch,
    /// Frames discarded at egress (queued, or routed to the queue) while stormed.
    pub(crate) tx_dropped: u64,
    /// Frames discarded at ingress (arriving on the port at the priority) while stormed.
    pub(crate) rx_dropped: u64,
    /// Each storm: detected at, restored at, and since when the detector (if it runs) saw
    /// the queue blocked when pfcwd declared it.
    pub(crate) storms: Vec<(Instant, Option<Instant>, Option<Instant>)>,
    /// The drop or forward action installed now.
    active: Option<Action>,
    /// Blocked runs (per the detector) that lasted detection + poll without a storm.
    pub(crate) missed: u64,
    /// The blocked run last counted as missed (its start).
    missed_run: Option<Instant>,
    /// Of a queue that ran in another process (a run over ranks): the watch's status
    /// (stormed), storms detected and restored there.
    pub(crate) shown: Option<(bool, u64, u64)>,
}

impl WdQueue {
    /// Whether the queue is declared stormed now.
    pub(crate) fn stormed(&self) -> bool {
        self.shown
            .map_or(self.watch.status() == Status::Stormed, |(s, _, _)| s)
    }

    /// Storms detected.
    pub(crate) fn detected(&self) -> u64 {
        self.shown.map_or_else(|| self.watch.detected(), |(_, d, _)| d)
    }

    /// Storms restored.
    pub(crate) fn restored(&self) -> u64 {
        self.shown.map_or_else(|| self.watch.restored(), |(_, _, r)| r)
    }
}

/// A switch's watchdog.
pub(crate) struct SwitchWd {
    pub(crate) node: NodeId,
    pub(crate) cfg: Config,
    pub(crate) queues: Vec<WdQueue>,
    last_poll: Instant,
    big_red_switch: bool,
}

impl SwitchWd {
    pub(crate) fn new(node: NodeId, cfg: Config, watched: impl Iterator<Item = (PortId, u8)>) -> Self {
        SwitchWd {
            node,
            cfg,
            queues: watched
                .map(|(port, prio)| WdQueue {
                    port,
                    prio,
                    watch: QueueWatch::new(),
                    tx_dropped: 0,
                    rx_dropped: 0,
                    storms: Vec::new(),
                    active: None,
                    missed: 0,
                    missed_run: None,
                    shown: None,
                })
                .collect(),
            last_poll: Instant::ZERO,
            big_red_switch: false,
        }
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Indexes the watched queues by port and schedules every switch's first poll (at time
    /// 0, which takes the first samples).
    pub(in crate::sim) fn start_pfcwd(&mut self) {
        if self.patho.pfcwd.is_empty() {
            return;
        }
        self.patho.wd_queue = vec![[(u32::MAX, u32::MAX); 8]; self.ports.len()];
        for (si, sw) in self.patho.pfcwd.iter().enumerate() {
            for (qi, q) in sw.queues.iter().enumerate() {
                self.patho.wd_queue[q.port as usize][q.prio as usize] = (si as u32, qi as u32);
            }
            schedule!(self, Instant::ZERO, Timer::PfcwdPoll.event(si as u32));
        }
    }

    /// The counters of queue (`p`, `q`) as syncd reads them now.
    fn wd_sample(&self, p: PortId, q: u8) -> QueueSample {
        let now = self.now;
        let port = &self.ports[p as usize];
        let st = &port.counts().prio[q as usize];
        let paused = port.mac.config().mode == Mode::Pfc && !port.mac.may_transmit(now, q);
        let c = port.mac.counters();
        QueueSample {
            occupancy_bytes: port.queues[q as usize].bytes,
            tx_packets: port.queues[q as usize].sent_frames,
            pfc_rx_packets: st.pfc_xoff_rx + st.pfc_xon_rx,
            pfc_on2off: c.rx_prio_pause_transition[q as usize] + u64::from(paused),
            pause_duration: port.mac.rx_pause_duration(now, q),
            paused,
        }
    }

    /// One poll of switch `si`'s watchdog.
    pub(in crate::sim) fn on_pfcwd_poll(&mut self, si: usize) {
        let now = self.now;
        let (elapsed, n, poll) = {
            let sw = &mut self.patho.pfcwd[si];
            let e = now.saturating_duration_since(sw.last_poll);
            sw.last_poll = now;
            (
                if e == Duration::ZERO { sw.cfg.poll } else { e },
                sw.queues.len(),
                sw.cfg.poll,
            )
        };
        for qi in 0..n {
            let (p, q) = {
                let wq = &self.patho.pfcwd[si].queues[qi];
                (wq.port, wq.prio)
            };
            let sample = self.wd_sample(p, q);
            let truth = self.blocked_since(p, q);
            let sw = &mut self.patho.pfcwd[si];
            let cfg = sw.cfg;
            let verdict = sw.queues[qi].watch.poll(&cfg, elapsed, sample);
            match verdict {
                Some(Verdict::Storm) => {
                    sw.queues[qi].storms.push((now, None, truth));
                    self.wd_install(si, qi, true);
                }
                Some(Verdict::Restore) => {
                    if let Some(s) = sw.queues[qi].storms.last_mut() {
                        s.1 = Some(now);
                    }
                    self.wd_install(si, qi, false);
                }
                None => {}
            }
            // the detector's ground truth: blocked for detection + poll, yet not stormed
            let wq = &mut self.patho.pfcwd[si].queues[qi];
            if let Some(since) = truth
                && wq.watch.status() == Status::Operational
                && now.saturating_duration_since(since) >= cfg.detection + poll
                && wq.missed_run != Some(since)
            {
                wq.missed_run = Some(since);
                wq.missed += 1;
            }
        }
        schedule!(self, now + poll, Timer::PfcwdPoll.event(si as u32));
    }

    /// Installs (`on`) or removes switch `si` queue `qi`'s action (drop under the big red
    /// switch, the configured one otherwise).
    fn wd_install(&mut self, si: usize, qi: usize, on: bool) {
        let sw = &self.patho.pfcwd[si];
        let want = match (on, sw.big_red_switch, sw.cfg.action) {
            (false, _, _) | (true, false, Action::Alert) => None,
            (true, true, _) => Some(Action::Drop),
            (true, false, a) => Some(a),
        };
        let have = sw.queues[qi].active;
        if have == want {
            return;
        }
        if let Some(a) = have {
            self.wd_apply(si, qi, a, false);
        }
        if let Some(a) = want {
            self.wd_apply(si, qi, a, true);
        }
    }

    /// Puts action `action` on (or takes it off) switch `si` queue `qi`.
    fn wd_apply(&mut self, si: usize, qi: usize, action: Action, on: bool) {
        let wq = &mut self.patho.pfcwd[si].queues[qi];
        wq.active = on.then_some(action);
        let (p, q) = (wq.port, wq.prio);
        let bit = 1u8 << q;
        let port = &mut self.ports[p as usize];
        if action == Action::Drop {
            self.patho.faults = true;
            if on {
                port.fault.drop_out |= bit;
                port.fault.drop_in |= bit;
            } else {
                port.fault.drop_out &= !bit;
                port.fault.drop_in &= !bit;
            }
        }
        if on {
            port.lossless &= !bit;
        } else {
            port.lossless |= bit;
        }
        // the priority leaves (or rejoins) the port's PFC mask
        let mut cfg = *port.mac.config();
        cfg.priorities[q as usize].enabled = !on;
        if !self.reconfigure_flow_control(p, cfg, "pfcwd") {
            return;
        }
        if on && action == Action::Drop {
            self.discard_queue(p, q, DropReason::Pfcwd);
        }
        self.try_transmit(p);
        self.arm_timer(p);
    }

    /// Counts a frame pfcwd dropped at port `p`, priority `q` (egress when `egress`).
    pub(in crate::sim) fn wd_count_drop(&mut self, p: PortId, q: u8, egress: bool) {
        let Some(&(si, qi)) = self.patho.wd_queue.get(p as usize).map(|a| &a[q as usize & 7]) else {
            return;
        };
        if let Some(wq) = self
            .patho
            .pfcwd
            .get_mut(si as usize)
            .and_then(|s| s.queues.get_mut(qi as usize))
        {
            if egress {
                wq.tx_dropped += 1;
            } else {
                wq.rx_dropped += 1;
            }
        }
    }

    /// Turns the big red switch on or off on every switch running pfcwd.
    pub(in crate::sim) fn set_big_red_switch(&mut self, on: bool) {
        for si in 0..self.patho.pfcwd.len() {
            // (a split fabric: the switch's partition)
            if !self.owns_node(self.patho.pfcwd[si].node) {
                continue;
            }
            let n = self.patho.pfcwd[si].queues.len();
            if on {
                self.patho.pfcwd[si].big_red_switch = true;
            }
            for qi in 0..n {
                match self.patho.pfcwd[si].queues[qi].watch.set_big_red_switch(on) {
                    Some(Verdict::Storm) => self.wd_install(si, qi, true),
                    Some(Verdict::Restore) => self.wd_install(si, qi, false),
                    None => {}
                }
            }
            if !on {
                self.patho.pfcwd[si].big_red_switch = false;
            }
        }
    }
}
