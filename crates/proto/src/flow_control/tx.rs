//! Transmit side (the document's MAC0 TX): turns request signals into XOFF, refresh and XON
//! frames.
//!
//! Per register set p the side keeps: whether the request is raised; whether the rising edge
//! still waits for its XOFF; whether an XOFF is *outstanding* (went out, no XON and not given
//! up since); the end of the current refresh interval (`refresh_at` = start of the last XOFF
//! carrying p + refresh interval); and whether an XON is due.
//!
//! Release rule (document 002 step 9): if the request falls while an XOFF is outstanding and
//! `now < refresh_at` (case 1), an XON is due when `xon_on_release` is set. If it falls at or
//! after `refresh_at` (case 2: the interval has ended; a refresh that could not go out yet is
//! dropped), nothing is sent and the peer resumes when the last pause runs out. If no XOFF went
//! out for the request, nothing is sent (as verilog-ethernet `mac_pause_ctrl_tx` does: XON only
//! after an XOFF).

use super::config::{FlowControlConfig, Mode, PRIORITIES, Signalling};
use super::counters::LazyCounters;
use super::frame::ControlFrame;
use crate::units::{Duration, Instant};

/// State of one register set on the transmit side.
#[derive(Clone, Copy, Debug, Default)]
struct TxPrio {
    requested: bool,
    requested_since: Instant,
    xoff_pending: bool,
    outstanding: bool,
    refresh_at: Instant,
    xon_pending: bool,
}

/// Most request edges waiting for the wire under [`Signalling::Ns3`]. A port's wire is busy
/// for one frame while edges queue, and an edge needs a frame arrival or departure, so a
/// handful at most wait in practice; see [`Ns3Edges::push`] for what a full ring does.
const NS3_EDGES: usize = 16;

/// Request edges waiting to go out as HPCC ns-3 PFC frames, oldest first (a ring).
#[derive(Clone, Copy, Debug, Default)]
struct Ns3Edges {
    /// Entry: priority in bits 0..3, bit 3 set for a rise (PAUSE), clear for a fall (RESUME).
    ring: [u8; NS3_EDGES],
    head: u8,
    len: u8,
}

impl Ns3Edges {
    /// Queues an edge. A full ring keeps the state the peer ends in: a priority's edges
    /// alternate, so its newest waiting edge is the opposite of this one and the two cancel
    /// (both are taken out; the peer never sees either).
    fn push(&mut self, p: usize, rise: bool) {
        let entry = p as u8 | (u8::from(rise) << 3);
        if usize::from(self.len) == NS3_EDGES {
            let newest = (0..NS3_EDGES)
                .rev()
                .map(|i| (usize::from(self.head) + i) % NS3_EDGES)
                .find(|&at| self.ring[at] & 7 == p as u8);
            if let Some(at) = newest {
                // close the gap: later entries move one slot towards the head
                let mut i = at;
                let last = (usize::from(self.head) + NS3_EDGES - 1) % NS3_EDGES;
                while i != last {
                    let next = (i + 1) % NS3_EDGES;
                    self.ring[i] = self.ring[next];
                    i = next;
                }
                self.len -= 1;
                return;
            }
        }
        let at = (usize::from(self.head) + usize::from(self.len)) % NS3_EDGES;
        self.ring[at] = entry;
        self.len += 1;
    }

    /// The oldest waiting edge, taken out: (priority, rise).
    fn pop(&mut self) -> Option<(usize, bool)> {
        if self.len == 0 {
            return None;
        }
        let e = self.ring[usize::from(self.head)];
        self.head = ((usize::from(self.head) + 1) % NS3_EDGES) as u8;
        self.len -= 1;
        Some((usize::from(e & 7), e & 8 != 0))
    }

    /// Forgets every waiting edge of priority p.
    fn forget(&mut self, p: usize) {
        let mut kept = Ns3Edges::default();
        while let Some((q, rise)) = self.pop() {
            if q != p {
                kept.push(q, rise);
            }
        }
        *self = kept;
    }
}

/// The transmit side of one port.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub(crate) struct TxSide {
    /// Bit p set while `prio[p].requested` or `prio[p].xon_pending`: a cache that lets the
    /// per-frame checks (`due`, `holds_data`) answer "nothing" without visiting eight sets.
    /// First, so that it shares a cache line with what precedes the side in the engine.
    busy: u8,
    /// Edges waiting for the wire ([`Signalling::Ns3`] only); beside `busy`, in the line the
    /// per-frame checks read.
    edges: Ns3Edges,
    prio: [TxPrio; PRIORITIES],
}

impl TxSide {
    /// Applies a change of request `p` at `now`; returns whether the level changed.
    pub(crate) fn set_request(
        &mut self,
        now: Instant,
        p: usize,
        asserted: bool,
        cfg: &FlowControlConfig,
        counters: &mut LazyCounters,
    ) -> bool {
        let st = &mut self.prio[p];
        if st.requested == asserted {
            return false;
        }
        st.requested = asserted;
        if cfg.signalling == Signalling::Ns3 {
            // one frame per edge, nothing outstanding to refresh or release
            if asserted {
                st.requested_since = now;
            } else {
                counters.get_mut().tx_prio_pause_duration[p] +=
                    now.saturating_duration_since(st.requested_since);
            }
            self.edges.push(p, asserted);
            self.sync(p);
            return true;
        }
        if asserted {
            st.requested_since = now;
            st.xoff_pending = true;
            st.xon_pending = false;
        } else {
            counters.get_mut().tx_prio_pause_duration[p] += now.saturating_duration_since(st.requested_since);
            st.xoff_pending = false;
            if st.outstanding {
                if now < st.refresh_at && cfg.priorities[p].xon_on_release {
                    st.xon_pending = true;
                } else {
                    st.outstanding = false;
                }
            }
        }
        self.sync(p);
        true
    }

    /// Forgets register set p's request, pending XOFF/XON and refresh deadline without sending
    /// anything; a raised request's span is accounted up to `now`.
    pub(crate) fn drop_set(&mut self, now: Instant, p: usize, counters: &mut LazyCounters) {
        let st = &mut self.prio[p];
        if st.requested {
            counters.get_mut().tx_prio_pause_duration[p] += now.saturating_duration_since(st.requested_since);
        }
        *st = TxPrio::default();
        self.edges.forget(p);
        self.sync(p);
    }

    /// Recomputes the cached bit of register set p from its state.
    #[inline]
    fn sync(&mut self, p: usize) {
        let st = &self.prio[p];
        if st.requested || st.xon_pending {
            self.busy |= 1 << p;
        } else {
            self.busy &= !(1 << p);
        }
    }

    /// Register sets needing an XOFF (first or refresh) at `now`, and those needing an XON
    /// (under [`Signalling::Ns3`]: the oldest waiting edge's).
    #[inline]
    pub(crate) fn due(&self, now: Instant, active: u8) -> (u8, u8) {
        if self.edges.len > 0 {
            return self.ns3_due();
        }
        if self.busy & active == 0 {
            return (0, 0);
        }
        let mut xoff = 0u8;
        let mut xon = 0u8;
        for (p, st) in self.prio.iter().enumerate() {
            if active & (1 << p) == 0 {
                continue;
            }
            if st.requested && (st.xoff_pending || (st.outstanding && now >= st.refresh_at)) {
                xoff |= 1 << p;
            }
            if st.xon_pending {
                xon |= 1 << p;
            }
        }
        (xoff, xon)
    }

    /// Builds and commits the control frame due at `now`, if any (the wire is known idle).
    ///
    /// A PFC frame carries every raised priority with its pause time (held ones are refreshed
    /// in the same frame and restart their interval) and every priority due an XON with 0.
    #[inline]
    pub(crate) fn take_frame(
        &mut self,
        now: Instant,
        cfg: &FlowControlConfig,
        active: u8,
        refresh: &[Duration; PRIORITIES],
        counters: &mut LazyCounters,
    ) -> Option<ControlFrame> {
        if cfg.signalling == Signalling::Ns3 {
            return self.take_ns3_frame(cfg, counters);
        }
        let (xoff, xon) = self.due(now, active);
        if xoff | xon == 0 {
            return None;
        }
        let mut vector = 0u8;
        let mut time = [0u16; PRIORITIES];
        for (p, st) in self.prio.iter_mut().enumerate() {
            if active & (1 << p) == 0 || !(st.requested || st.xon_pending) {
                continue;
            }
            vector |= 1 << p;
            let pc = &cfg.priorities[p];
            if st.requested {
                time[p] = pc.pause_quanta;
                st.xoff_pending = false;
                st.outstanding = true;
                st.refresh_at = now.saturating_add(refresh[p]);
                counters.get_mut().tx_prio_pause[p] += 1;
            } else {
                st.xon_pending = false;
                st.outstanding = false;
                counters.get_mut().tx_prio_xon[p] += 1;
            }
        }
        for p in 0..PRIORITIES {
            self.sync(p);
        }
        counters.get_mut().mac_control_frames_transmitted += 1;
        match cfg.mode {
            Mode::Pause => {
                counters.get_mut().pause_mac_ctrl_frames_transmitted += 1;
                Some(ControlFrame::Pause { quanta: time[0] })
            }
            Mode::Pfc => {
                counters.get_mut().pfc_frames_transmitted += 1;
                for (p, r) in counters.get_mut().requests.iter_mut().enumerate() {
                    if vector & (1 << p) != 0 {
                        *r += 1;
                    }
                }
                Some(ControlFrame::Pfc {
                    enable_vector: vector,
                    time,
                })
            }
            // active mask is 0 when off, so this is never reached with a due frame
            Mode::Off => None,
        }
    }

    /// The oldest waiting edge's priority bit, as (XOFF, XON) masks.
    #[cold]
    fn ns3_due(&self) -> (u8, u8) {
        let e = self.edges.ring[usize::from(self.edges.head)];
        let bit = 1u8 << (e & 7);
        if e & 8 != 0 { (bit, 0) } else { (0, bit) }
    }

    /// The oldest waiting edge as a frame of its own ([`Signalling::Ns3`]).
    #[cold]
    fn take_ns3_frame(
        &mut self,
        cfg: &FlowControlConfig,
        counters: &mut LazyCounters,
    ) -> Option<ControlFrame> {
        let (p, rise) = self.edges.pop()?;
        let time = if rise {
            counters.get_mut().tx_prio_pause[p] += 1;
            cfg.priorities[p].pause_quanta
        } else {
            counters.get_mut().tx_prio_xon[p] += 1;
            0
        };
        counters.get_mut().mac_control_frames_transmitted += 1;
        match cfg.mode {
            Mode::Pause => {
                counters.get_mut().pause_mac_ctrl_frames_transmitted += 1;
                Some(ControlFrame::Pause { quanta: time })
            }
            Mode::Pfc => {
                counters.get_mut().pfc_frames_transmitted += 1;
                counters.get_mut().requests[p] += 1;
                let mut t = [0u16; PRIORITIES];
                t[p] = time;
                Some(ControlFrame::Pfc {
                    enable_vector: 1 << p,
                    time: t,
                })
            }
            Mode::Off => None,
        }
    }

    /// The earliest end of a refresh interval of a raised, outstanding request after `now`.
    #[inline]
    pub(crate) fn next_refresh(&self, now: Instant, active: u8) -> Option<Instant> {
        if self.busy & active == 0 {
            return None; // no request raised among the active sets
        }
        self.prio
            .iter()
            .enumerate()
            .filter(|(p, st)| active & (1 << p) != 0 && st.requested && st.outstanding && st.refresh_at > now)
            .map(|(_, st)| st.refresh_at)
            .min()
    }

    /// Bit p set while request p is raised.
    pub(crate) fn requested_mask(&self) -> u8 {
        self.prio
            .iter()
            .enumerate()
            .filter(|(_, st)| st.requested)
            .fold(0, |m, (p, _)| m | (1 << p))
    }

    /// Whether own data must be held: a raised request whose `hold_own_data` register is set.
    #[inline]
    pub(crate) fn holds_data(&self, cfg: &FlowControlConfig, active: u8) -> bool {
        if self.busy & active == 0 {
            return false; // no request raised among the active sets
        }
        self.prio
            .iter()
            .enumerate()
            .any(|(p, st)| active & (1 << p) != 0 && st.requested && cfg.priorities[p].hold_own_data)
    }

    /// Time request p has been raised in its current span (zero if not raised).
    pub(crate) fn running_request(&self, now: Instant, p: usize) -> Duration {
        let st = &self.prio[p];
        if st.requested {
            now.saturating_duration_since(st.requested_since)
        } else {
            Duration::ZERO
        }
    }

    /// End of the current refresh interval of request p, if an XOFF is outstanding.
    pub(crate) fn refresh_at(&self, p: usize) -> Option<Instant> {
        let st = &self.prio[p];
        st.outstanding.then_some(st.refresh_at)
    }
}
