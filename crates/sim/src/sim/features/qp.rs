//! RoCEv2 queue pairs: a flow with a transport is a QP whose engines live in its state — the
//! requester and the DCQCN/QCN reaction point at the sender, the responder and the DCQCN
//! notification point at the receiver (one simulator sees both ends).
//!
//! - Sending: the NIC pulls. A QP that may send (its pacing instant reached) waits in its
//!   host's ready list of its priority; when the host port's transmitter is idle and the
//!   priority is not paused, the first ready QP is asked for a packet (`poll_transmit`), which
//!   takes the NIC queue slot of that priority and goes out as soon as transmission selection
//!   picks it. Ready QPs are served round robin in the order they were created. After a
//!   packet, the QP may send again `wire_time(packet)` later at its reaction point's rate
//!   (and no sooner than its pattern allows): `Event::Emit` puts it back in the list.
//! - Receiving: the responder answers (ACK/NAK/SACK); a CE mark goes to the notification
//!   point, which asks for a CNP packet (on its priority) or a CNP flag on the reply. Replies
//!   and CNPs are frames of their own through the fabric, from the receiver's host.
//! - Timers: one per end, so that each end's events are its own host's (the partitioned
//!   engine runs the two ends in different partitions): `Event::QpTimer` at the sender, at
//!   the earliest deadline of its reaction point and its retransmission timer, and
//!   `Event::NpTimer` at the receiver, at its notification point's late CNP. Each is
//!   re-armed only when it moves earlier, like the flow-control engines' `MacTimer`; a stale
//!   one does nothing.
//! - Each end reads and writes only its own side of the QP (the requester, reaction point,
//!   pacing and window at the sender; the responder, notification point and the replies'
//!   counters at the receiver): `Qp::take_receiver`/`put_receiver` move the receiver's side
//!   when the parts of a split run merge.

use lossless_proto::dcqcn::{CnpMode, Np, ParamError, Rp};
use lossless_proto::dctcp::Dctcp;
use lossless_proto::hpcc::Hpcc;
use lossless_proto::hpcc_pint::HpccPint;
use lossless_proto::qcn::QcnRp;
use lossless_proto::rocev2::{DataPacket, RcConfigError, Reply, Requester, Responder};
use lossless_proto::timely::Timely;
use lossless_proto::units::{Duration, Instant, Rate};

use crate::config::model::{ModelConfig, Pacing, ReplyQueue};
use crate::config::traffic::FlowSpec;
use crate::config::transport::{CcSpec, QpSpec, QpWindow};
use crate::event::EventQueue;
use crate::frame::{Ecn, FlowId, Frame, FrameKind, NodeId, PortId, flags};
use crate::observer::Observer;
use crate::series::{RateSeries, SERIES_CAP};
use crate::sim::fabric::switch::EcmpMemo;
use crate::sim::features::hpcc::{PsnRings, Telemetry};
use crate::sim::order::schedule;
use crate::sim::{Event, Node, Simulator};

/// When a QP that started a packet of `len` bytes at `at` may start the next one, at `rate`
/// and no sooner than its pattern allows. `memo` keeps the last wire time computed: a QP's
/// packets mostly repeat both the rate and the length, and the wire time is a 128-bit
/// division.
#[inline(always)]
fn pacing(
    model: &ModelConfig,
    spec: &FlowSpec,
    memo: &mut GapMemo,
    rate: Rate,
    at: Instant,
    len: u64,
) -> Instant {
    let gap = memo.wire_time(model, rate, len);
    let gap = spec.gap(len).map_or(gap, |g| g.max(gap));
    spec.next_on(at + gap)
}

/// The last wire time a QP's pacing computed, and the rate and length it is for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GapMemo {
    rate: Rate,
    len: u64,
    gap: Duration,
}

impl GapMemo {
    /// A memo that matches no packet yet (no packet is `u64::MAX` bytes long).
    fn new(line: Rate) -> GapMemo {
        GapMemo {
            rate: line,
            len: u64::MAX,
            gap: Duration::ZERO,
        }
    }

    /// `model.wire_time(rate, len)`, computed again only when the rate or the length changed.
    #[inline(always)]
    fn wire_time(&mut self, model: &ModelConfig, rate: Rate, len: u64) -> Duration {
        if rate != self.rate || len != self.len {
            *self = GapMemo {
                rate,
                len,
                gap: model.wire_time(rate, len),
            };
        }
        self.gap
    }
}

/// The reaction point of a QP, if it has congestion control.
#[derive(Clone, Debug)]
pub(crate) enum RpState {
    None,
    Dcqcn(Rp),
    Qcn(QcnRp),
    Dctcp(Dctcp),
    Hpcc(Hpcc),
    HpccPint(HpccPint),
    Timely(Timely),
}

impl RpState {
    fn rate(&self, line: Rate) -> Rate {
        match self {
            RpState::None => line,
            RpState::Dcqcn(rp) => rp.rate(),
            RpState::Qcn(rp) => rp.rate(),
            RpState::Dctcp(d) => d.rate(),
            RpState::Hpcc(h) => h.rate(),
            RpState::HpccPint(h) => h.rate(),
            RpState::Timely(t) => t.rate(),
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            RpState::None
            | RpState::Dctcp(_)
            | RpState::Hpcc(_)
            | RpState::HpccPint(_)
            | RpState::Timely(_) => None,
            RpState::Dcqcn(rp) => rp.poll_timeout(),
            RpState::Qcn(rp) => rp.poll_timeout(),
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        match self {
            RpState::None
            | RpState::Dctcp(_)
            | RpState::Hpcc(_)
            | RpState::HpccPint(_)
            | RpState::Timely(_) => {}
            RpState::Dcqcn(rp) => rp.handle_timeout(now),
            RpState::Qcn(rp) => rp.handle_timeout(now),
        }
    }
    /// Counts `bytes` sent at `now`; false when that cannot have changed the rate (no byte
    /// counter, or a DCQCN reaction point not yet active, whose rate stays the line rate).
    fn on_sent(&mut self, now: Instant, bytes: u64) -> bool {
        match self {
            RpState::None
            | RpState::Dctcp(_)
            | RpState::Hpcc(_)
            | RpState::HpccPint(_)
            | RpState::Timely(_) => false,
            RpState::Dcqcn(rp) => {
                let active = rp.is_active();
                rp.on_sent(now, bytes);
                active
            }
            RpState::Qcn(rp) => {
                rp.on_sent(now, bytes);
                true
            }
        }
    }
}

/// What a QP's simulator side counted (the engines keep their own counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpCounters {
    /// CNP packets its receiver sent.
    pub cnp_packets_sent: u64,
    /// Replies its receiver flagged with a CNP (ns-3 style).
    pub cnp_flags_sent: u64,
    /// CNPs (packets or flags) that reached the sender.
    pub cnps_received: u64,
    /// CNMs that reached the sender.
    pub cnms_received: u64,
    /// CE-marked data packets that reached the receiver.
    pub ce_received: u64,
    /// Replies (ACK/NAK/SACK) its receiver sent.
    pub replies_sent: u64,
    /// Replies that reached the sender.
    pub replies_received: u64,
    /// Data packets its requester sent again.
    pub retransmitted_frames: u64,
}

/// One QP: its engines and the simulator's bookkeeping.
pub(crate) struct Qp {
    pub(crate) req: Requester,
    pub(crate) resp: Responder,
    pub(crate) rp: RpState,
    pub(crate) np: Option<Np>,
    pub(crate) ack_priority: u8,
    pub(crate) cnp_priority: u8,
    pub(crate) cnp_mode: Option<CnpMode>,
    pub(crate) cn_tag: bool,
    /// The receiver flags the reply of every CE-marked packet (DCTCP's ECN echo).
    pub(crate) echo_ce: bool,
    /// The limit on bytes in flight.
    pub(crate) window: QpWindow,
    /// HPCC's INT fields or TIMELY's timestamps of its packets and replies.
    pub(crate) telemetry: Option<Box<Telemetry>>,
    /// Bytes its data packets and replies carry for them.
    pub(crate) int_bytes: u64,
    pub(crate) mtu: u64,
    pub(crate) line: Rate,
    /// Earliest start of the next packet (pacing).
    pub(crate) next_tx: Instant,
    /// When an `Emit` is pending for this QP (`Instant::MAX`: none).
    pub(crate) emit_at: Instant,
    /// When a `QpTimer` is pending (`Instant::MAX`: none).
    pub(crate) timer_at: Instant,
    /// When an `NpTimer` is pending (`Instant::MAX`: none).
    pub(crate) np_timer_at: Instant,
    /// In its host's ready list.
    pub(crate) ready: bool,
    /// Completed, failed or stopped: sends nothing more.
    pub(crate) done: bool,
    pub(crate) counters: QpCounters,
    /// The reaction point's rate over time.
    pub(crate) series: RateSeries,
    /// The rate last recorded.
    last_rate: Rate,
    /// Start and length of the last packet sent (pacing is counted from it).
    last_tx: Option<(Instant, u64)>,
    /// The pacing gap last computed.
    gap_memo: GapMemo,
    /// The ns-3 ECMP hashes its frames got at switches.
    pub(crate) ecmp: EcmpMemo,
}

/// Whether the packets of a QP under `cc` carry a field that the switches on their path write
/// (HPCC's INT records, PINT's code, TIMELY's timestamps: the QP has `telemetry`).
pub(crate) fn stamped(cc: &CcSpec) -> bool {
    matches!(
        cc,
        CcSpec::Hpcc { .. } | CcSpec::HpccPint { .. } | CcSpec::Timely { .. }
    )
}

/// The state a QP's receiver owns (its host's partition in a split run).
pub(crate) struct ReceiverSide {
    resp: Responder,
    np: Option<Np>,
    np_timer_at: Instant,
    cnp_packets_sent: u64,
    cnp_flags_sent: u64,
    ce_received: u64,
    replies_sent: u64,
}

/// Why a QP could not be created: the engine that refused its configuration, and why.
#[derive(Debug, thiserror::Error)]
pub enum QpError {
    /// The RoCEv2 requester or responder.
    #[error("rocev2: {0}")]
    Transport(RcConfigError),
    /// DCQCN's reaction or notification point.
    #[error("dcqcn: {0}")]
    Dcqcn(ParamError),
    /// QCN's reaction point.
    #[error("qcn: {0}")]
    Qcn(ParamError),
    /// DCTCP's sender.
    #[error("dctcp: {0}")]
    Dctcp(ParamError),
    /// HPCC's sender.
    #[error("hpcc: {0}")]
    Hpcc(ParamError),
    /// HPCC-PINT's sender.
    #[error("hpcc-pint: {0}")]
    HpccPint(ParamError),
    /// TIMELY's sender.
    #[error("timely: {0}")]
    Timely(ParamError),
}

impl Qp {
    /// A QP carrying `size` bytes (`None`: an endless message) from a host whose line rate is
    /// `line`, or what its configuration gets wrong.
    pub(crate) fn new(spec: &QpSpec, size: Option<u64>, line: Rate, start: Instant) -> Result<Qp, QpError> {
        let bytes = size.unwrap_or(u64::MAX);
        let req = Requester::new(spec.rc, bytes).map_err(QpError::Transport)?;
        let resp = Responder::new(spec.rc, bytes).map_err(QpError::Transport)?;
        let (rp, np) = match &spec.cc {
            CcSpec::None => (RpState::None, None),
            CcSpec::Dcqcn { rp, np } => {
                np.validate().map_err(QpError::Dcqcn)?;
                (
                    RpState::Dcqcn(Rp::new(*rp, line).map_err(QpError::Dcqcn)?),
                    Some(Np::new(*np)),
                )
            }
            CcSpec::Qcn { rp } => (RpState::Qcn(QcnRp::new(*rp, line).map_err(QpError::Qcn)?), None),
            CcSpec::Dctcp { params } => (
                RpState::Dctcp(Dctcp::new(*params, line).map_err(QpError::Dctcp)?),
                None,
            ),
            CcSpec::Hpcc { params, base_rtt_ns } => (
                RpState::Hpcc(
                    Hpcc::new(*params, line, *base_rtt_ns, spec.window.bytes).map_err(QpError::Hpcc)?,
                ),
                None,
            ),
            CcSpec::HpccPint { params, .. } => (
                // reseeded per flow by `seed_sampling`
                RpState::HpccPint(HpccPint::new(*params, line, 0).map_err(QpError::HpccPint)?),
                None,
            ),
            CcSpec::Timely { params } => (
                RpState::Timely(Timely::new(*params, line).map_err(QpError::Timely)?),
                None,
            ),
        };
        let packets = spec.window.bytes / u64::from(spec.rc.mtu.max(1)) + 1;
        let telemetry = match &spec.cc {
            CcSpec::Hpcc { params, .. } => Some(Box::new(Telemetry::Int {
                rings: PsnRings::new(packets),
                multi: params.int_multi,
            })),
            CcSpec::HpccPint { .. } => Some(Box::new(Telemetry::Pint(PsnRings::new(packets)))),
            CcSpec::Timely { .. } => Some(Box::new(Telemetry::Timestamp(PsnRings::new(packets)))),
            _ => None,
        };
        debug_assert_eq!(telemetry.is_some(), stamped(&spec.cc));
        let mut series = RateSeries::with_capacity(SERIES_CAP);
        let first = rp.rate(line);
        series.record(start, first);
        Ok(Qp {
            req,
            resp,
            ack_priority: spec.ack_priority,
            cnp_priority: np.as_ref().map_or(0, |n| n.params().cnp_802p_prio),
            cnp_mode: np.as_ref().map(|n| n.params().mode),
            np,
            rp,
            cn_tag: spec.cc.cn_tag(),
            echo_ce: matches!(spec.cc, CcSpec::Dctcp { .. }),
            window: spec.window,
            telemetry,
            int_bytes: spec.cc.int_bytes(),
            mtu: u64::from(spec.rc.mtu),
            line,
            next_tx: start,
            emit_at: Instant::MAX,
            timer_at: Instant::MAX,
            np_timer_at: Instant::MAX,
            ready: false,
            done: false,
            counters: QpCounters::default(),
            series,
            last_rate: first,
            last_tx: None,
            gap_memo: GapMemo::new(line),
            ecmp: EcmpMemo::new(),
        })
    }

    /// Its receiver's side (responder, notification point, the receiver's counters), to
    /// carry into the sender's copy when a split run's parts merge.
    pub(crate) fn receiver_side(&self) -> ReceiverSide {
        ReceiverSide {
            resp: self.resp.clone(),
            np: self.np.clone(),
            np_timer_at: self.np_timer_at,
            cnp_packets_sent: self.counters.cnp_packets_sent,
            cnp_flags_sent: self.counters.cnp_flags_sent,
            ce_received: self.counters.ce_received,
            replies_sent: self.counters.replies_sent,
        }
    }

    /// Replaces its receiver's side with `r` (from the receiver's partition).
    pub(crate) fn set_receiver_side(&mut self, r: ReceiverSide) {
        self.resp = r.resp;
        self.np = r.np;
        self.np_timer_at = r.np_timer_at;
        self.counters.cnp_packets_sent = r.cnp_packets_sent;
        self.counters.cnp_flags_sent = r.cnp_flags_sent;
        self.counters.ce_received = r.ce_received;
        self.counters.replies_sent = r.replies_sent;
    }

    /// Seeds the random stream of its sender's engine, where it has one (HPCC-PINT's ACK
    /// sampling).
    pub(crate) fn seed_sampling(&mut self, seed: u64) {
        if let RpState::HpccPint(h) = &mut self.rp {
            h.reseed(seed);
        }
    }

    /// Its requester (the sending side's transport engine), read-only.
    pub(crate) fn requester(&self) -> &Requester {
        &self.req
    }

    /// Its responder (the receiving side's transport engine), read-only.
    pub(crate) fn responder(&self) -> &Responder {
        &self.resp
    }

    /// What the simulator counted for it.
    pub(crate) fn sim_counters(&self) -> &QpCounters {
        &self.counters
    }

    /// Rate cuts of its reaction point (0 without congestion control).
    pub(crate) fn rate_decreases(&self) -> u64 {
        match &self.rp {
            RpState::Dcqcn(rp) => rp.counters().rate_decreases,
            RpState::Qcn(rp) => rp.counters().rate_decreases,
            RpState::Dctcp(d) => d.counters().rate_decreases,
            RpState::Hpcc(h) => h.counters().rate_decreases,
            RpState::HpccPint(h) => h.counters().rate_decreases,
            RpState::Timely(t) => t.counters().rate_decreases,
            RpState::None => 0,
        }
    }

    /// CNPs its DCQCN notification point sent (`None` without one).
    pub(crate) fn np_cnps_sent(&self) -> Option<u64> {
        self.np.as_ref().map(|n| n.counters().np_cnp_sent)
    }

    /// Its reaction point's rate over time.
    pub(crate) fn rate_series(&self) -> &RateSeries {
        &self.series
    }

    /// The line rate of its sender.
    pub(crate) fn line(&self) -> Rate {
        self.line
    }

    /// Whether the responder has the whole message, each byte once.
    pub(crate) fn delivered_exactly(&self) -> bool {
        self.resp.is_complete() && self.resp.delivered_bytes() == self.req.message_bytes()
    }

    /// The rate the QP is paced at now.
    pub(crate) fn rate(&self) -> Rate {
        self.rp.rate(self.line)
    }

    /// Whether its bytes in flight have reached its window (the reference's `IsWinBound`).
    #[inline(always)]
    fn window_bound(&self) -> bool {
        // no window (`QpWindow::at` is `None`): nothing to ask the reaction point
        self.window.bytes != 0 && self.window_bound_at_rate()
    }

    /// [`Self::window_bound`] of a QP with a window (scaled by its rate with `VAR_WIN`).
    #[inline(never)]
    fn window_bound_at_rate(&self) -> bool {
        self.window
            .at(self.rate().bps(), self.line.bps())
            .is_some_and(|w| self.req.next_byte().saturating_sub(self.req.acked_bytes()) >= w)
    }

    /// Records the reaction point's rate if it changed; true when it did.
    fn note_rate(&mut self, now: Instant) -> bool {
        let r = self.rate();
        if r != self.last_rate {
            self.last_rate = r;
            self.series.record(now, r);
            return true;
        }
        false
    }

    /// The instant of a `QpTimer` to schedule (recorded as pending) when its engines' earliest
    /// deadline is earlier than the timer pending, or none is; `None` when none is needed.
    #[inline(always)]
    fn timer_due(&mut self, now: Instant) -> Option<Instant> {
        if self.done {
            return None;
        }
        let d = self.deadline()?.max(now);
        if d < self.timer_at || self.timer_at < now {
            self.timer_at = d;
            return Some(d);
        }
        None
    }

    /// The earliest deadline of the sender's engines.
    #[inline(always)]
    fn deadline(&self) -> Option<Instant> {
        match (self.rp.poll_timeout(), self.req.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    fn qp_mut(&mut self, f: FlowId) -> Option<&mut Qp> {
        self.flows[f as usize].qp.as_deref_mut()
    }

    /// Schedules the QP's timer at its engines' earliest deadline when that is earlier than
    /// the one pending.
    pub(in crate::sim) fn qp_arm(&mut self, f: FlowId) {
        let now = self.now;
        let Some(qp) = self.qp_mut(f) else {
            return;
        };
        if let Some(d) = qp.timer_due(now) {
            schedule!(self, d, Event::QpTimer(f));
        }
    }

    pub(in crate::sim::features) fn on_qp_timer(&mut self, f: FlowId) {
        let now = self.now;
        let Some(qp) = self.qp_mut(f) else {
            return;
        };
        if qp.timer_at != now || qp.done {
            return; // superseded, or the QP finished
        }
        qp.timer_at = Instant::MAX;
        let mut repace = false;
        if qp.rp.poll_timeout().is_some_and(|d| d <= now) {
            qp.rp.handle_timeout(now);
            repace = qp.note_rate(now);
        }
        let mut wake = false;
        if qp.req.poll_timeout().is_some_and(|d| d <= now) {
            qp.req.handle_timeout(now);
            wake = true;
        }
        if repace {
            self.qp_repace(f);
        }
        if wake {
            self.qp_check_failed(f);
            self.qp_wake(f);
        }
        self.qp_arm(f);
    }

    /// Schedules the receiver's timer at its notification point's late CNP when that is
    /// earlier than the one pending. (The receiver does not know whether its sender has
    /// finished: a late CNP due after the last reply still goes, as a NIC's would.)
    #[inline(always)]
    fn np_arm(&mut self, f: FlowId) {
        // mostly no late CNP is due: the scheduling stays out of the caller
        if let Some(d) = self.qp_mut(f).and_then(|qp| qp.np.as_ref()?.poll_timeout()) {
            self.np_arm_at(f, d);
        }
    }

    /// [`Self::np_arm`] for a notification point whose late CNP is due at `d`.
    #[inline(never)]
    fn np_arm_at(&mut self, f: FlowId, d: Instant) {
        let now = self.now;
        let Some(qp) = self.qp_mut(f) else {
            return;
        };
        let d = d.max(now);
        if d < qp.np_timer_at || qp.np_timer_at < now {
            qp.np_timer_at = d;
            schedule!(self, d, Event::NpTimer(f));
        }
    }

    pub(in crate::sim::features) fn on_np_timer(&mut self, f: FlowId) {
        let now = self.now;
        let Some(qp) = self.qp_mut(f) else {
            return;
        };
        if qp.np_timer_at != now {
            return; // superseded
        }
        qp.np_timer_at = Instant::MAX;
        let late_cnp = match &mut qp.np {
            Some(np) if np.poll_timeout().is_some_and(|d| d <= now) => np.handle_timeout(now),
            _ => false,
        };
        if late_cnp {
            self.send_cnp(f);
        }
        self.np_arm(f);
    }

    /// The QP's rate changed while it waits for its pacing instant: with
    /// [`Pacing::Reschedule`] the wait after its last packet is recomputed at the new rate.
    fn qp_repace(&mut self, f: FlowId) {
        if self.config.model.pacing != Pacing::Reschedule {
            return;
        }
        let now = self.now;
        let fs = &mut self.flows[f as usize];
        let Some(qp) = fs.qp.as_deref_mut() else {
            return;
        };
        let Some((at, len)) = qp.last_tx else {
            return;
        };
        if qp.done || qp.ready || qp.next_tx <= now {
            return;
        }
        let rate = qp.rate();
        let next = pacing(&self.config.model, &fs.spec, &mut qp.gap_memo, rate, at, len).max(now);
        if next == qp.next_tx {
            return;
        }
        qp.next_tx = next;
        if next <= now {
            qp.emit_at = Instant::MAX;
            self.qp_wake(f);
        } else if qp.emit_at != Instant::MAX {
            // the pending `Emit` becomes stale; one at the new instant replaces it
            qp.emit_at = next;
            schedule!(self, next, Event::Emit(f));
        }
    }

    /// HPCC set a new rate (the fork's `ChangeRate`): the QP's next packet may start the new
    /// rate's gap after its last one, earlier or later than scheduled, even when that instant
    /// had passed and the QP waits in the ready list (`qp_pull` then defers it).
    fn qp_change_rate(&mut self, f: FlowId) {
        let now = self.now;
        let fs = &mut self.flows[f as usize];
        let Some(qp) = fs.qp.as_deref_mut() else {
            return;
        };
        let Some((at, len)) = qp.last_tx else {
            return;
        };
        if qp.done {
            return;
        }
        let rate = qp.rate();
        let next = pacing(&self.config.model, &fs.spec, &mut qp.gap_memo, rate, at, len);
        qp.next_tx = next;
        if qp.ready || qp.emit_at == Instant::MAX {
            return; // `qp_pull` or the caller's `qp_wake` reads the new instant
        }
        // the pending `Emit` becomes stale: the caller's `qp_wake` (next passed) or one at the
        // new instant replaces it
        if next <= now {
            qp.emit_at = Instant::MAX;
        } else if qp.emit_at != next {
            qp.emit_at = next;
            schedule!(self, next, Event::Emit(f));
        }
    }

    /// The pacing instant came: the QP joins its host's ready list.
    pub(in crate::sim::features) fn qp_on_emit(&mut self, f: FlowId) {
        let now = self.now;
        let Some(qp) = self.qp_mut(f) else {
            return;
        };
        if qp.emit_at != now {
            return;
        }
        qp.emit_at = Instant::MAX;
        self.qp_wake(f);
    }

    /// The QP may have something to send: into the ready list now if its pacing allows, else
    /// an `Emit` at its pacing instant.
    pub(in crate::sim) fn qp_wake(&mut self, f: FlowId) {
        let now = self.now;
        let fs = &mut self.flows[f as usize];
        let (src, prio, stop) = (fs.spec.src, fs.spec.priority, fs.spec.stop);
        let Some(qp) = fs.qp.as_deref_mut() else {
            return;
        };
        if qp.done || qp.ready {
            return;
        }
        if now >= stop {
            qp.done = true;
            return;
        }
        if qp.next_tx > now {
            if qp.emit_at != qp.next_tx {
                qp.emit_at = qp.next_tx;
                schedule!(self, qp.next_tx, Event::Emit(f));
            }
            return;
        }
        let Node::Host(h) = &mut self.nodes[src as usize] else {
            return;
        };
        let Some(nic) = h.nic.as_deref_mut() else {
            return;
        };
        qp.ready = true;
        nic.qp_ready[prio as usize].push(f);
        let p = h.port;
        self.ports[p as usize].pull |= 1 << prio;
        self.try_transmit(p);
    }

    /// A failed requester (retry limit) sends nothing more.
    fn qp_check_failed(&mut self, f: FlowId) {
        if let Some(qp) = self.qp_mut(f)
            && qp.req.is_failed()
        {
            qp.done = true;
        }
    }

    /// The next packet of the first ready QP of priority `q` at host `node`, if any QP has
    /// one; QPs with nothing to send leave the list.
    pub(in crate::sim) fn qp_pull(&mut self, node: NodeId, q: u8) -> Option<Frame> {
        let now = self.now;
        loop {
            let Node::Host(h) = &mut self.nodes[node as usize] else {
                return None;
            };
            let f = h.nic.as_deref_mut()?.take_next(q as usize)?;
            let fs = &mut self.flows[f as usize];
            let Some(qp) = fs.qp.as_deref_mut() else {
                continue;
            };
            qp.ready = false;
            if qp.done {
                continue;
            }
            if qp.next_tx > now {
                self.qp_wake(f);
                continue;
            }
            if qp.window_bound() {
                continue; // a reply that opens the window wakes it
            }
            let Some((index, pkt)) = qp.req.poll_transmit_indexed(now) else {
                continue; // waits for a reply or a timeout
            };
            let payload = u64::from(pkt.payload);
            let len = self.config.model.roce_data_len(payload, qp.cn_tag) + qp.int_bytes;
            if let Some(t) = qp.telemetry.as_deref_mut() {
                let outstanding = qp.req.next_byte().saturating_sub(qp.req.acked_bytes()) / qp.mtu.max(1) + 1;
                t.sent(pkt.psn, (now.as_ps() / 1_000) as u64, outstanding);
            }
            // branch-free (a loop over the four pairs cost 19 instructions a packet)
            let fl = (u8::from(pkt.first) * flags::FIRST)
                | (u8::from(pkt.last) * flags::LAST)
                | (u8::from(pkt.ack_req) * flags::ACK_REQ)
                | (u8::from(pkt.retransmission) * flags::RETRANSMISSION);
            let frame = Frame::roce_data(
                f,
                fs.spec.src,
                fs.spec.dst,
                len as u32,
                fs.spec.priority,
                pkt.psn,
                index,
                fl,
                Ecn::Ect0,
            );
            // every other input that moves the rate records it (`note_rate`), so `last_rate`
            // is the rate unless the byte counter moved it
            if qp.rp.on_sent(now, len) {
                qp.note_rate(now);
            }
            if pkt.retransmission {
                qp.counters.retransmitted_frames += 1;
            }
            qp.last_tx = Some((now, len));
            // `note_rate` left the rate it read in `last_rate`
            let rate = qp.last_rate;
            qp.next_tx = pacing(&self.config.model, &fs.spec, &mut qp.gap_memo, rate, now, len);
            fs.stats.sent_frames += 1;
            fs.stats.sent_bytes += len;
            fs.stats.first_sent.get_or_insert(now);
            self.totals.injected += 1;
            // `qp_wake` then `qp_arm`, with the QP at hand: neither ready nor done here, and
            // its next packet is due after this one (an `Emit`) unless the rate's gap is zero
            if now >= fs.spec.stop {
                qp.done = true;
                return Some(frame);
            }
            if qp.next_tx <= now {
                self.qp_wake(f);
                self.qp_arm(f);
                return Some(frame);
            }
            if qp.emit_at != qp.next_tx {
                qp.emit_at = qp.next_tx;
                schedule!(self, qp.next_tx, Event::Emit(f));
            }
            if let Some(d) = qp.timer_due(now) {
                schedule!(self, d, Event::QpTimer(f));
            }
            return Some(frame);
        }
    }

    /// A RoCEv2 frame (data, reply, CNP) or a CNM reached host `node`.
    pub(in crate::sim::features) fn roce_receive(&mut self, node: NodeId, frame: Frame) {
        let f = frame.flow;
        match frame.kind {
            FrameKind::RoceData => self.responder_receive(node, frame),
            FrameKind::Ack | FrameKind::Nak | FrameKind::Sack => {
                let reply = match frame.kind {
                    FrameKind::Ack => Reply::Ack {
                        psn: frame.psn(),
                        msn: frame.msn(),
                    },
                    FrameKind::Nak => Reply::Nak {
                        psn: frame.psn(),
                        msn: frame.msn(),
                    },
                    _ => Reply::Sack {
                        cum_psn: frame.psn(),
                        sack_psn: frame.sack_psn(),
                        msn: frame.msn(),
                    },
                };
                let now = self.now;
                let fs = &mut self.flows[f as usize];
                let Some(qp) = fs.qp.as_deref_mut() else {
                    return;
                };
                qp.counters.replies_received += 1;
                let mut repace = false;
                if frame.has(flags::CNP) {
                    qp.counters.cnps_received += 1;
                    if let RpState::Dcqcn(rp) = &mut qp.rp {
                        rp.handle_cnp(now);
                        repace = qp.note_rate(now);
                    }
                }
                qp.req.handle_reply(now, reply);
                // DCTCP reads every reply after the transport took it in (go-back-N
                // included), the completing one too, as the reference's `ReceiveAck` does
                if let RpState::Dctcp(d) = &mut qp.rp {
                    d.handle_ack(qp.req.acked_bytes(), frame.has(flags::CNP), qp.req.next_byte());
                    repace |= qp.note_rate(now);
                }
                // HPCC likewise, with the INT field the reply echoes; a rate it sets moves
                // the pacing of the packet already scheduled (the fork's `ChangeRate`)
                let mut change_rate = false;
                match (&mut qp.rp, qp.telemetry.as_deref()) {
                    (RpState::Hpcc(h), Some(Telemetry::Int { rings, .. })) => {
                        let echoed = rings.reply(frame.psn());
                        change_rate = h
                            .handle_ack(qp.req.acked_bytes(), qp.req.next_byte(), &echoed)
                            .is_some();
                        qp.note_rate(now);
                    }
                    // HPCC-PINT: the echoed code, a rate set as HPCC sets it
                    (RpState::HpccPint(h), Some(Telemetry::Pint(rings))) => {
                        let echoed = rings.reply(frame.psn());
                        change_rate = h
                            .handle_ack(qp.req.acked_bytes(), qp.req.next_byte(), echoed)
                            .is_some();
                        qp.note_rate(now);
                    }
                    // TIMELY: the RTT from the echoed send time; the rate is assigned, so it
                    // takes effect from the next gap (no `ChangeRate`)
                    (RpState::Timely(t), Some(Telemetry::Timestamp(rings))) => {
                        let rtt = ((now.as_ps() / 1_000) as u64).saturating_sub(rings.reply(frame.psn()));
                        t.handle_ack(qp.req.acked_bytes(), qp.req.next_byte(), rtt);
                        repace |= qp.note_rate(now);
                    }
                    _ => {}
                }
                if qp.req.is_complete() && !qp.done {
                    qp.done = true;
                    if let Some(t) = qp.telemetry.as_deref_mut() {
                        t.release();
                    }
                    fs.stats.completed = Some(now);
                    return;
                }
                // `qp_check_failed`, with the QP at hand
                if qp.req.is_failed() {
                    qp.done = true;
                }
                if repace {
                    self.qp_repace(f);
                } else if !change_rate {
                    // `qp_wake` then `qp_arm` with the QP at hand where the wake does nothing
                    // (mostly: the QP waits for its pacing instant, its `Emit` pending)
                    let waits =
                        qp.ready || (now < fs.spec.stop && qp.next_tx > now && qp.emit_at == qp.next_tx);
                    if qp.done || waits {
                        if let Some(d) = qp.timer_due(now) {
                            schedule!(self, d, Event::QpTimer(f));
                        }
                        return;
                    }
                }
                if change_rate {
                    self.qp_change_rate(f);
                }
                self.qp_wake(f);
                self.qp_arm(f);
            }
            FrameKind::Cnp => {
                let now = self.now;
                let Some(qp) = self.qp_mut(f) else {
                    return;
                };
                qp.counters.cnps_received += 1;
                if let RpState::Dcqcn(rp) = &mut qp.rp {
                    rp.handle_cnp(now);
                    if qp.note_rate(now) {
                        self.qp_repace(f);
                    }
                }
                self.qp_arm(f);
            }
            FrameKind::Cnm => {
                let now = self.now;
                let fs = &mut self.flows[f as usize];
                // a CNM reaches the source of the sampled frame: only the flow's sender has
                // a reaction point
                let at_sender = fs.spec.src == node;
                let Some(qp) = fs.qp.as_deref_mut() else {
                    fs.stats.cnms_unanswered += 1;
                    return;
                };
                let changed = match &mut qp.rp {
                    RpState::Qcn(rp) if at_sender => {
                        qp.counters.cnms_received += 1;
                        rp.handle_cnm(now, frame.cnm_feedback().qntz_fb);
                        qp.note_rate(now)
                    }
                    _ => {
                        fs.stats.cnms_unanswered += 1;
                        return;
                    }
                };
                if changed {
                    self.qp_repace(f);
                }
                self.qp_arm(f);
            }
            FrameKind::Plain => {}
        }
    }

    /// A data packet reached its receiver: the responder takes it; a reply and a CNP may go
    /// back.
    fn responder_receive(&mut self, node: NodeId, frame: Frame) {
        let now = self.now;
        let f = frame.flow;
        let mut overhead = self.config.model.roce_data_len(0, false);
        let fs = &mut self.flows[f as usize];
        let sender = fs.spec.src;
        let Some(qp) = fs.qp.as_deref_mut() else {
            return;
        };
        overhead += qp.int_bytes;
        fs.stats.delivered_frames += 1;
        fs.stats.delivered_bytes += u64::from(frame.len);
        fs.stats.last_delivery = Some(now);
        let tag = if qp.cn_tag {
            crate::config::model::CN_TAG_BYTES
        } else {
            0
        };
        let payload = u64::from(frame.len).saturating_sub(overhead + tag);
        let pkt = DataPacket {
            psn: frame.psn(),
            offset: frame.packet_index().saturating_mul(qp.mtu),
            payload: payload as u32,
            first: frame.has(flags::FIRST),
            last: frame.has(flags::LAST),
            ack_req: frame.has(flags::ACK_REQ),
            retransmission: frame.has(flags::RETRANSMISSION),
        };
        let r = qp.resp.handle_data(now, &pkt);
        fs.stats.transport_delivered_bytes += r.delivered_bytes;
        let mut cnp_flag = false;
        let mut cnp_packet = false;
        if frame.ecn() == Ecn::Ce {
            qp.counters.ce_received += 1;
            if qp.echo_ce {
                cnp_flag = r.reply.is_some();
            } else if let Some(np) = &mut qp.np
                && np.on_ce(now)
            {
                match qp.cnp_mode {
                    Some(CnpMode::AckFlag) => cnp_flag = r.reply.is_some(),
                    _ => cnp_packet = true,
                }
            }
        }
        if let Some(reply) = r.reply {
            let (kind, psn, sack, msn) = match reply {
                Reply::Ack { psn, msn } => (FrameKind::Ack, psn, 0, msn),
                Reply::Nak { psn, msn } => (FrameKind::Nak, psn, 0, msn),
                Reply::Sack {
                    cum_psn,
                    sack_psn,
                    msn,
                } => (FrameKind::Sack, cum_psn, sack_psn, msn),
            };
            qp.counters.replies_sent += 1;
            if cnp_flag {
                qp.counters.cnp_flags_sent += 1;
            }
            let len = self.config.model.reply_len_with_int(qp.int_bytes);
            if let Some(t) = qp.telemetry.as_deref_mut() {
                t.echo(frame.psn(), psn);
            }
            let reply = Frame::reply(
                kind,
                f,
                node,
                sender,
                len as u32,
                qp.ack_priority,
                psn,
                sack,
                msn,
                if cnp_flag { flags::CNP } else { 0 },
            );
            self.nic_send(node, reply);
        }
        if cnp_packet {
            self.send_cnp(f);
        }
        // a late CNP may now be due later
        self.np_arm(f);
    }

    /// The receiver of flow `f` sends a CNP packet to its sender.
    fn send_cnp(&mut self, f: FlowId) {
        let fs = &mut self.flows[f as usize];
        let (src, dst) = (fs.spec.dst, fs.spec.src);
        let Some(qp) = fs.qp.as_deref_mut() else {
            return;
        };
        qp.counters.cnp_packets_sent += 1;
        let len = self.config.model.cnp_len();
        let cnp = Frame::reply(
            FrameKind::Cnp,
            f,
            src,
            dst,
            len as u32,
            qp.cnp_priority,
            0,
            0,
            0,
            0,
        );
        self.nic_send(src, cnp);
    }

    /// Host `node`'s NIC sends a frame it generated (a reply, a CNP): into its reply queue
    /// or the egress queue of the frame's priority, as the model says.
    fn nic_send(&mut self, node: NodeId, frame: Frame) {
        self.totals.injected += 1;
        let Node::Host(h) = &mut self.nodes[node as usize] else {
            return;
        };
        let p = h.port;
        match self.config.model.replies {
            ReplyQueue::First | ReplyQueue::FirstPaused => {
                let Some(nic) = h.nic.as_deref_mut() else {
                    return;
                };
                nic.replies.push_back(frame);
                self.ports[p as usize].reply_first = true;
                self.try_transmit(p);
            }
            ReplyQueue::Queued => {
                if self.enqueue(p, frame) {
                    self.try_transmit(p);
                }
            }
        }
    }

    /// The host NIC's part of starting a frame on its idle port `p`: a frame of the reply
    /// queue first (true: it started), then one packet of a ready QP into each priority's
    /// queue that holds none (not started here: transmission selection picks among queues).
    #[inline(never)]
    pub(in crate::sim::features) fn nic_service(&mut self, p: PortId) -> bool {
        let now = self.now;
        let pi = p as usize;
        let node = self.ports[pi].node;
        if self.ports[pi].reply_first {
            // the reply queue obeys pauses of priority 0 only, or of the replies' own priority
            // (the reference's ack_q_idx with ACK_HIGH_PRIO 1 or 0)
            let Node::Host(h) = &mut self.nodes[node as usize] else {
                return false;
            };
            let Some(nic) = h.nic.as_deref_mut() else {
                return false;
            };
            let obeys = match (self.config.model.replies, nic.replies.front()) {
                (ReplyQueue::FirstPaused, Some(f)) => f.priority,
                _ => 0,
            };
            let port = &self.ports[pi];
            // `try_transmit_idle` asks after its control-frame check: with `ctl_check` clear no
            // control frame is due at this `now`, and `may_start_data` reduces to the wire,
            // the pause and the hold (as it does there)
            let may = if port.ctl_check {
                port.mac.may_start_data(now, obeys)
            } else {
                now >= port.mac.wire_free_at()
                    && port.mac.may_transmit(now, obeys)
                    && !port.mac.hold_data(now)
            };
            if may {
                if let Some(frame) = nic.replies.pop_front() {
                    if nic.replies.is_empty() {
                        self.ports[pi].reply_first = false;
                    }
                    return self.start_reply(p, frame, obeys);
                }
                self.ports[pi].reply_first = false;
            }
        }
        let Node::Host(h) = &self.nodes[node as usize] else {
            return false;
        };
        if h.nic.is_none() {
            return false;
        }
        let mut want = self.ports[pi].pull & !self.ports[pi].staged;
        while want != 0 {
            let q = want.trailing_zeros() as u8;
            want &= want - 1;
            if !self.ports[pi].mac.may_transmit(now, q) {
                continue;
            }
            match self.qp_pull(node, q) {
                Some(frame) => {
                    if !self.enqueue(p, frame) {
                        return true; // engine fault: the run stops
                    }
                    self.ports[pi].staged |= 1 << q;
                }
                None => self.ports[pi].pull &= !(1 << q),
            }
        }
        false
    }

    /// Starts a frame of the NIC's reply queue on idle port `p` (ahead of data, outside
    /// transmission selection).
    fn start_reply(&mut self, p: PortId, frame: Frame, obeys: u8) -> bool {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        // `nic_service` found `may_start_data` true at this `now`, and nothing has reached the
        // engine since
        let slot = port.mac.on_tx_start_allowed(now, u64::from(frame.len), obeys);
        self.start_frame(p, frame, slot);
        true
    }
}
