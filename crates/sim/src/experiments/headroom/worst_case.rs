//! The worst case `lossless headroom --verify` runs: the simulation, one run of it, and the
//! frame phases.
//!
//! # The worst case
//!
//! Senders `s0`…`s{N−1}` each send one lossless priority at line rate, in frames of the
//! lossless MTU, through one switch to a receiver. The headroom one (ingress port, priority)
//! pair needs is what arrives on that port after the switch decides XOFF, less what leaves
//! meanwhile. Each choice below makes that as large as the model allows, and deterministic:
//!
//! - **Nothing drains.** The receiver holds its PFC request from t = 0, so the switch's port
//!   towards it is paused before the first data frame arrives and no stored byte leaves: every
//!   byte that arrives after the decision stays in headroom. (An incast of N senders drains each
//!   pair at 1/N of the rate; a paused egress is that limit, exactly.)
//! - **The decision costs a whole frame.** A static threshold of two frames: each sender's
//!   third frame does not fit, goes wholly into headroom and raises XOFF at its last bit (the
//!   simulator admits a frame when it has arrived). Annex N's first term (the largest frame
//!   being received when the receiver decides) is that frame. With reverse traffic of larger
//!   frames than the lossless ones, the threshold holds as many lossless frames as it takes to
//!   hold two reverse frames ([`Setup::trigger`]): every pair shares it, and a reverse frame
//!   that did not fit would be dropped.
//! - **The PFC frame leaves at once — or after a whole frame.** By default the switch's
//!   transmitter towards the sender is idle (an incast has no reverse traffic), so the PFC frame
//!   starts at the decision. With [`Setup::reverse_traffic`] a source behind the switch sends
//!   each sender maximum frames of a lossy priority, timed so that one starts one byte time
//!   before the decision: the PFC frame waits for it. That wait is the other reading of Annex
//!   N's first term; the simulator then needs both frames, one more than Annex N counts
//!   (`docs/headroom.md`).
//! - **The peer has just started a maximum frame.** The sender may start a frame until its
//!   reaction delay after the PFC frame's last bit has arrived, never at or after that instant.
//!   A probe run measures that instant for each sender; one or two *filler* frames right after
//!   the trigger then shift the sender's frame grid so that a lossless frame of the full MTU
//!   starts less than one byte time before it (sender `s0`; byte-exact at IEEE rates, within one
//!   84-byte minimum frame when the window is shorter than two frames). The other senders sample
//!   other phases, evenly spread over one frame time, so the run also shows how much the phase
//!   matters.
//! - **Refreshes do not reopen the window.** Pause time 0xFFFF quanta, refresh every 0x7FFF:
//!   each refresh reaches the sender while it is still paused and only extends the pause. The
//!   run lasts past two refreshes, so a refresh that let frames through would show as drops.
//!
//! Each run is fully determined by the setup (no random choice), so the bisection's answer is
//! exact: zero drops at the answer, lossless drops one byte below ([`super::verify`]).

use lossless_proto::flow_control::{ControlFrame, FlowControlConfig};
use lossless_proto::headroom::{AnnexNInput, InterfaceDelay, PeerDelay, frame_bytes};
use lossless_proto::units::{Duration, IFG_BYTES, Instant, PREAMBLE_SFD_BYTES, Rate};
use serde::Serialize;

use crate::buffer::Threshold;
use crate::config::traffic::{FlowSpec, MIN_FRAME, Pattern};
use crate::config::{HostConfig, LinkConfig, NodeConfig, NodeKind, Signal, SimConfig, SwitchConfig};
use crate::frame::{NodeId, PortId};
use crate::observer::{Observer, WireFrame};
use crate::{Report, Simulator};

/// Most senders (phases) a setup may have.
pub const MAX_SENDERS: u32 = 64;
/// Largest headroom the bisection tries before it gives up, bytes (4 GiB).
pub const MAX_HEADROOM_BYTES: u64 = 1 << 32;
/// Longest cable a setup may have, metres.
pub const MAX_CABLE_M: u64 = 100_000;
/// Longest interface or peer delay a setup may have.
pub const MAX_DELAY: Duration = Duration::from_ms(1);

/// What to verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Setup {
    /// Link rate (an IEEE rate).
    pub rate: Rate,
    /// Cable length between each sender and the switch, metres.
    pub cable_m: u64,
    /// Payload of the largest frame of any priority, bytes: Annex N's frame being received,
    /// and the reverse traffic's frames.
    pub mtu: u64,
    /// Payload of the lossless frames, bytes (the frame adds 22: header, tag, FCS).
    pub lossless_mtu: u64,
    /// PHY delay per direction on each sender's link.
    pub interface_delay: Duration,
    /// The senders' reaction delay after a PFC frame.
    pub peer_delay: Duration,
    /// The lossless priority, 0..=7.
    pub priority: u8,
    /// Senders, each at another frame phase, 1..=[`MAX_SENDERS`].
    pub senders: u32,
    /// Whether the switch is sending each sender a maximum frame of another (lossy) priority
    /// when it decides XOFF, so that the PFC frame must wait for it.
    pub reverse_traffic: bool,
}

/// Index of the trigger among a sender's frames when only lossless frames cross the switch:
/// the threshold holds two frames, the third does not fit, goes wholly into headroom and raises
/// XOFF ([`Setup::trigger`]).
pub const TRIGGER: usize = 2;

/// How each sender's run is laid out (see [`plan`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Filler frames (bytes each, FCS included) sent right after each sender's trigger.
    pub fillers: Vec<Vec<u64>>,
    /// When each sender's reverse-traffic source starts (reverse traffic only).
    pub reverse_start_ps: Vec<u128>,
}

/// Why a verification could not run.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A setup value is out of range.
    #[error("{field}: found {found}, allowed {allowed}")]
    Setup {
        /// Which value.
        field: &'static str,
        /// What was given.
        found: String,
        /// What is allowed.
        allowed: String,
    },
    /// The simulator refused the configuration.
    #[error("building the simulation: {0}")]
    Build(#[from] crate::BuildError),
    /// A run broke one of the worst case's own premises (a bug, never a result).
    #[error("the worst case did not hold: {0}")]
    Premise(String),
    /// Even [`MAX_HEADROOM_BYTES`] of headroom dropped lossless frames.
    #[error("lossless frames are dropped even with {MAX_HEADROOM_BYTES} bytes of headroom")]
    NoHeadroomHolds,
}

/// Lossless drops of one run, per sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Lossless frames dropped on each sender's switch port.
    pub drops: Vec<u64>,
    /// Peak bytes charged to each sender's (port, priority) pair.
    pub peak_bytes: Vec<u64>,
}

impl Outcome {
    /// All lossless drops of the run.
    pub fn drops_total(&self) -> u64 {
        self.drops.iter().sum()
    }
}

impl Setup {
    /// Checks every value's range.
    pub fn check(&self) -> Result<(), VerifyError> {
        let bad = |field, found: String, allowed: &str| {
            Err(VerifyError::Setup {
                field,
                found,
                allowed: allowed.into(),
            })
        };
        if !self.rate.is_byte_exact() {
            return bad("rate", self.rate.to_string(), "an IEEE 802.3 rate, 10M to 1.6T");
        }
        if self.cable_m > MAX_CABLE_M {
            return bad("cable", format!("{} m", self.cable_m), "0..=100000 m");
        }
        if !(42..=65_535).contains(&self.mtu) {
            return bad("mtu", self.mtu.to_string(), "42..=65535 bytes");
        }
        if !(42..=65_535).contains(&self.lossless_mtu) {
            return bad("lossless mtu", self.lossless_mtu.to_string(), "42..=65535 bytes");
        }
        if self.interface_delay > MAX_DELAY {
            return bad("interface delay", self.interface_delay.to_string(), "0..=1 ms");
        }
        if self.peer_delay > MAX_DELAY {
            return bad("peer delay", self.peer_delay.to_string(), "0..=1 ms");
        }
        if self.priority > 7 {
            return bad("priority", self.priority.to_string(), "0..=7");
        }
        if !(1..=MAX_SENDERS).contains(&self.senders) {
            return bad("senders", self.senders.to_string(), "1..=64");
        }
        Ok(())
    }

    /// The lossless frame, bytes.
    pub fn frame_bytes(&self) -> u64 {
        frame_bytes(self.lossless_mtu)
    }

    /// Index of the trigger among a sender's lossless frames: the static threshold holds this
    /// many of them, the next goes wholly into headroom and raises XOFF. [`TRIGGER`] (two),
    /// or with reverse traffic of larger frames (`mtu` above `lossless_mtu`) as many as hold
    /// two of those: the threshold is every pair's, and a reverse frame (of a lossy priority,
    /// which has no headroom) that did not fit would be dropped, and no frame would make the
    /// PFC frame wait.
    pub fn trigger(&self) -> usize {
        let l = self.frame_bytes();
        if !self.reverse_traffic {
            return TRIGGER;
        }
        let reverse = frame_bytes(self.mtu);
        TRIGGER.max((2 * reverse).div_ceil(l) as usize)
    }

    /// Annex N for this setup (its frames, its delays).
    pub fn annex_n(&self) -> lossless_proto::headroom::AnnexN {
        AnnexNInput {
            rate: self.rate,
            cable_m: self.cable_m,
            max_frame_bytes: frame_bytes(self.mtu.max(self.lossless_mtu)),
            lossless_frame_bytes: self.frame_bytes(),
            interface_delay: InterfaceDelay::Given(self.interface_delay),
            peer_delay: PeerDelay::Given(self.peer_delay),
        }
        .compute()
    }

    pub(super) fn wire(&self) -> Duration {
        self.rate.wire_time(self.frame_bytes())
    }
    fn byte_time(&self) -> Duration {
        self.rate.time_for_bytes(1)
    }
    pub(super) fn one_way(&self) -> Duration {
        lossless_proto::headroom::propagation(self.cable_m) + self.interface_delay
    }
    /// When the senders start: after the receiver's pause has stopped the switch's port
    /// towards it (a whole number of byte times, so that every frame edge is one too).
    fn start(&self) -> Instant {
        let receiver_pause = self.rate.time_for_bits(672)
            + lossless_proto::headroom::propagation(1)
            + lossless_proto::flow_control::default_reaction_delay(self.rate)
            + Duration::from_us(1);
        let bt = self.byte_time().as_ps();
        Instant::from_ps(receiver_pause.as_ps().div_ceil(bt) * bt)
    }
    /// How long each run lasts: past two XOFF refreshes after the senders' pauses.
    pub(super) fn end(&self) -> Instant {
        let refresh = self.rate.quanta_time(0x7FFF);
        self.start()
            + self.wire().saturating_mul(self.trigger() as u64 + 3)
            + self.rate.wire_time(frame_bytes(self.mtu))
            + self.one_way().saturating_mul(2)
            + self.peer_delay
            + refresh.saturating_mul(2)
            + Duration::from_us(10)
    }
}

/// The simulation of `setup` laid out by `plan`, with `headroom` bytes per (port, lossless
/// priority). Nodes: senders `s0`…, `receiver`, `switch`, then (reverse traffic) `r0`…; links:
/// sender i's is link i, then the receiver's, then `r0`….
pub fn config(setup: &Setup, plan: &Plan, headroom: u64) -> SimConfig {
    let n = setup.senders as usize;
    let receiver = n as NodeId;
    SimConfig {
        model: Default::default(),
        name: "headroom-verify".into(),
        description: format!(
            "{} senders at {} on {} m of cable, frames of {} bytes, receiver paused: the \
             headroom a lossless pair needs in the worst case",
            n,
            setup.rate,
            setup.cable_m,
            setup.frame_bytes()
        ),
        seed: 1,
        duration: setup.end().since_epoch(),
        nodes: nodes(setup, headroom),
        links: links(setup),
        flows: flows(setup, plan),
        workloads: Vec::new(),
        signals: vec![Signal {
            node: receiver,
            prio: setup.priority,
            at: Instant::ZERO,
            on: true,
        }],
        pathology: Default::default(),
    }
}

/// The reverse-traffic sources of `setup`: one per sender, or none.
fn reverse_sources(setup: &Setup) -> usize {
    if setup.reverse_traffic {
        setup.senders as usize
    } else {
        0
    }
}

/// The nodes: the senders, the receiver, the switch (a static threshold of
/// [`Setup::trigger`] frames and `headroom` bytes per pair), the reverse-traffic sources.
fn nodes(setup: &Setup, headroom: u64) -> Vec<NodeConfig> {
    let n = setup.senders as usize;
    let l = setup.frame_bytes();
    let host = |name: String| NodeConfig {
        name,
        kind: NodeKind::Host(HostConfig::default()),
        dcbx: None,
    };
    let mut nodes: Vec<NodeConfig> = (0..n).map(|i| host(format!("s{i}"))).collect();
    nodes.push(host("receiver".into()));
    let reverse = reverse_sources(setup);
    let shared = (2 * n as u64 + 1)
        .saturating_mul(l.max(frame_bytes(setup.mtu)))
        .saturating_mul(4);
    nodes.push(NodeConfig {
        name: "switch".into(),
        kind: NodeKind::Switch(SwitchConfig {
            buffer_bytes: ((n + 1 + reverse) as u64)
                .saturating_mul(headroom)
                .saturating_add(shared)
                .saturating_add(1 << 20),
            threshold: Threshold::Static {
                bytes: setup.trigger() as u64 * l,
            },
            xon_offset_bytes: l,
            headroom_bytes: Some(headroom),
            mtu: setup.lossless_mtu,
            ecn: None,
            qcn: None,
        }),
        dcbx: None,
    });
    nodes.extend((0..reverse).map(|i| host(format!("r{i}"))));
    nodes
}

/// The links: each sender's (its cable, interface delay and reaction delay), the
/// receiver's, the reverse-traffic sources'; PFC on the lossless priority everywhere.
fn links(setup: &Setup) -> Vec<LinkConfig> {
    let n = setup.senders as usize;
    let rate = setup.rate;
    let prio = setup.priority;
    let receiver = n as NodeId;
    let switch = receiver + 1;
    let pfc = |reaction: Duration| {
        let mut c = FlowControlConfig::pfc(rate, [0; 6], 1 << prio);
        c.reaction_delay = reaction;
        c
    };
    let switch_pfc = FlowControlConfig::pfc(rate, [0; 6], 1 << prio);
    let link = |a, b, length_m, interface_delay, fc_a| LinkConfig {
        length_m,
        interface_delay,
        fc_b: switch_pfc,
        ..LinkConfig::new(a, b, rate, fc_a)
    };
    let mut links: Vec<LinkConfig> = (0..n)
        .map(|i| {
            link(
                i as NodeId,
                switch,
                setup.cable_m,
                setup.interface_delay,
                pfc(setup.peer_delay),
            )
        })
        .collect();
    links.push(link(receiver, switch, 1, Duration::ZERO, switch_pfc));
    for i in 0..reverse_sources(setup) {
        links.push(link(
            switch + 1 + i as NodeId,
            switch,
            1,
            Duration::ZERO,
            switch_pfc,
        ));
    }
    links
}

/// The flows: per sender, the frames that fill the threshold and the trigger, `plan`'s
/// fillers, then line rate; the reverse traffic at `plan`'s starts.
fn flows(setup: &Setup, plan: &Plan) -> Vec<FlowSpec> {
    let n = setup.senders as usize;
    let prio = setup.priority;
    let mtu = setup.lossless_mtu;
    let receiver = n as NodeId;
    let switch = receiver + 1;
    let s0 = setup.start();
    let trigger = s0 + setup.wire().saturating_mul(setup.trigger() as u64);
    let flow = |name: String, src: usize, mtu: u64, start: Instant, size: Option<u64>| FlowSpec {
        name,
        src: src as NodeId,
        dst: receiver,
        priority: prio,
        mtu,
        pattern: Pattern::Line,
        start,
        stop: Instant::MAX,
        size,
        transport: None,
    };
    let mut flows = Vec::new();
    for i in 0..n {
        // the frames that fill the threshold, then the trigger
        flows.push(flow(
            format!("s{i}.first"),
            i,
            mtu,
            s0,
            Some((setup.trigger() as u64 + 1) * mtu),
        ));
        let fill = plan.fillers.get(i).map(Vec::as_slice).unwrap_or(&[]);
        // queued behind the trigger, in order: one picosecond apart, during its transmission
        let mut at = trigger;
        for (k, &bytes) in fill.iter().enumerate() {
            at += Duration::from_ps(1);
            let payload = bytes - lossless_proto::headroom::FRAME_OVERHEAD_BYTES;
            flows.push(flow(format!("s{i}.fill{k}"), i, payload, at, Some(payload)));
        }
        flows.push(flow(
            format!("s{i}.line"),
            i,
            mtu,
            at + Duration::from_ps(1),
            None,
        ));
    }
    for i in 0..reverse_sources(setup) {
        let start = plan.reverse_start_ps.get(i).copied().unwrap_or(0);
        flows.push(FlowSpec {
            name: format!("r{i}.reverse"),
            src: switch + 1 + i as NodeId,
            dst: i as NodeId,
            priority: (prio + 1) % 8,
            mtu: setup.mtu,
            pattern: Pattern::Line,
            start: Instant::from_ps(start),
            stop: Instant::MAX,
            size: None,
            transport: None,
        });
    }
    flows
}

/// What happened on each sender's link: its data frame starts, when the switch decided XOFF
/// for it, when the switch started frames towards it, when its pause arrived.
#[derive(Default)]
pub(super) struct Trace {
    senders: u32,
    prio: u8,
    /// Index of the trigger among a sender's frames ([`Setup::trigger`]).
    trigger: usize,
    pub(super) starts: Vec<Vec<Instant>>,
    pub(super) decided_at: Vec<Option<Instant>>,
    pub(super) reverse_starts: Vec<Vec<Instant>>,
    pub(super) xoff_at: Vec<Option<Instant>>,
}

impl Trace {
    pub(super) fn new(setup: &Setup) -> Self {
        let senders = setup.senders;
        Trace {
            senders,
            prio: setup.priority,
            trigger: setup.trigger(),
            starts: vec![Vec::new(); senders as usize],
            decided_at: vec![None; senders as usize],
            reverse_starts: vec![Vec::new(); senders as usize],
            xoff_at: vec![None; senders as usize],
        }
    }
    /// Sender index of a sender's own port (port 2i is the `a` end of link i).
    fn sender(&self, port: PortId) -> Option<usize> {
        (port.is_multiple_of(2) && port / 2 < self.senders).then_some((port / 2) as usize)
    }
    /// Sender index of the switch's port towards a sender (port 2i + 1).
    fn facing(&self, port: PortId) -> Option<usize> {
        (!port.is_multiple_of(2) && port / 2 < self.senders).then_some((port / 2) as usize)
    }
    /// Sender i's trigger frame start and the arrival of its first XOFF.
    pub(super) fn trigger_and_xoff(&self, i: usize) -> Result<(Instant, Instant), VerifyError> {
        match (self.starts[i].get(self.trigger), self.xoff_at[i]) {
            (Some(&t), Some(x)) => Ok((t, x)),
            _ => Err(VerifyError::Premise(format!("s{i} was never paused"))),
        }
    }
}

impl Observer for Trace {
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, _last_bit: Instant) {
        if let WireFrame::Data(_) = frame {
            if let Some(i) = self.sender(port) {
                self.starts[i].push(start);
            } else if let Some(i) = self.facing(port) {
                self.reverse_starts[i].push(start);
            }
        }
    }
    fn request_changed(&mut self, port: PortId, prio: u8, on: bool, at: Instant) {
        if let Some(i) = self.facing(port)
            && on
            && prio == self.prio
            && self.decided_at[i].is_none()
        {
            self.decided_at[i] = Some(at);
        }
    }
    fn control_received(&mut self, port: PortId, frame: &ControlFrame, at: Instant) {
        let p = self.prio as usize;
        if let (Some(i), ControlFrame::Pfc { enable_vector, time }) = (self.sender(port), frame)
            && enable_vector & (1 << p) != 0
            && time[p] != 0
            && self.xoff_at[i].is_none()
        {
            self.xoff_at[i] = Some(at);
        }
    }
}

pub(super) fn simulate<O: Observer + Default>(
    setup: &Setup,
    plan: &Plan,
    headroom: u64,
    observer: O,
) -> Result<(Outcome, O), VerifyError> {
    let mut sim = Simulator::with_observer(config(setup, plan, headroom), observer)?;
    sim.run();
    let report = Report::collect(&sim);
    if let Some(f) = &report.engine_fault {
        return Err(VerifyError::Premise(format!("engine fault: {f}")));
    }
    let lossless_delivered = report
        .flows
        .iter()
        .filter(|f| f.priority == setup.priority)
        .any(|f| f.delivered_frames > 0);
    if lossless_delivered {
        return Err(VerifyError::Premise(
            "the receiver got data frames: its pause did not stop the switch in time".into(),
        ));
    }
    let mut out = Outcome {
        drops: Vec::new(),
        peak_bytes: Vec::new(),
    };
    for i in 0..setup.senders {
        let port = report
            .port("switch", &format!("s{i}"))
            .ok_or_else(|| VerifyError::Premise(format!("no switch port towards s{i}")))?;
        let q = port.priorities.iter().find(|q| q.priority == setup.priority);
        out.drops
            .push(q.map_or(0, |q| q.drops_frames.values().sum::<u64>()));
        out.peak_bytes.push(q.map_or(0, |q| q.peak_ingress_buffer_bytes));
    }
    Ok((out, std::mem::take(sim.observer_mut())))
}

/// Runs the worst case laid out by `plan` once with `headroom` bytes per pair.
pub fn run_once(setup: &Setup, plan: &Plan, headroom: u64) -> Result<Outcome, VerifyError> {
    setup.check()?;
    simulate(setup, plan, headroom, crate::observer::NoObserver).map(|(o, _)| o)
}

/// The filler frames (bytes each) that make a frame start `target` byte times after the end
/// of the trigger's inter-frame gap, with frames of `wire` bytes on the wire (frame + 20).
fn fillers_for(target: u64, wire: u64) -> Vec<u64> {
    let overhead = PREAMBLE_SFD_BYTES + IFG_BYTES;
    let min_wire = MIN_FRAME + overhead;
    let (j, r) = (target / wire, target % wire);
    if r == 0 {
        Vec::new()
    } else if r >= min_wire {
        vec![r - overhead]
    } else if j >= 1 && r + wire >= 2 * min_wire {
        // r is shorter than a minimum frame: a minimum frame and one of r + wire − 84
        vec![MIN_FRAME, r + wire - min_wire - overhead]
    } else {
        Vec::new()
    }
}

/// Lays each sender's run out from probe runs (with ample headroom; they drop nothing):
///
/// - reverse traffic: a first probe finds when the switch decides XOFF for each sender and
///   when its frames towards the sender start; each reverse source is then started so that one
///   of its frames begins one byte time before the decision (the PFC frame waits for almost a
///   whole frame);
/// - a (second) probe finds when each sender's pause takes effect; filler frames after the
///   trigger then make sender 0's last full frame start less than one byte time before that
///   instant, and sender i's a fraction i/N of a frame earlier.
pub fn plan(setup: &Setup) -> Result<Plan, VerifyError> {
    setup.check()?;
    let n = setup.senders as usize;
    let ample = setup.annex_n().headroom_bytes.saturating_mul(2) + 8 * setup.frame_bytes();
    let probe = || Trace::new(setup);
    let bt = setup.byte_time().as_ps();
    let mut plan = Plan::default();
    if setup.reverse_traffic {
        plan.reverse_start_ps = vec![0; n];
        let (_, trace) = simulate(setup, &plan, ample, probe())?;
        let period = setup.rate.wire_time(frame_bytes(setup.mtu)).as_ps();
        for i in 0..n {
            let (Some(decided), Some(&first)) = (trace.decided_at[i], trace.reverse_starts[i].first()) else {
                return Err(VerifyError::Premise(format!(
                    "no decision or reverse frame for s{i}"
                )));
            };
            let target = decided.as_ps().saturating_sub(bt);
            if target < first.as_ps() {
                return Err(VerifyError::Premise(format!(
                    "s{i} was decided before reverse traffic"
                )));
            }
            plan.reverse_start_ps[i] = (target - first.as_ps()) % period;
        }
    }
    let (_, trace) = simulate(setup, &plan, ample, probe())?;
    let wire_bytes = setup.frame_bytes() + PREAMBLE_SFD_BYTES + IFG_BYTES;
    for i in 0..n {
        let (trigger, xoff) = trace.trigger_and_xoff(i)?;
        let pause = xoff + setup.peer_delay;
        let after_trigger = trigger + setup.wire();
        let window = pause.saturating_duration_since(after_trigger).as_ps();
        // the last whole byte time strictly before the pause takes effect
        let last = window.div_ceil(bt).saturating_sub(1) as u64;
        let shift = (i as u64 * wire_bytes) / u64::from(setup.senders);
        plan.fillers
            .push(fillers_for(last.saturating_sub(shift), wire_bytes));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillers_put_a_frame_start_exactly_at_the_target() {
        let wire = 1542; // 1522-byte frames
        assert_eq!(fillers_for(3 * wire, wire), Vec::<u64>::new());
        assert_eq!(fillers_for(wire + 500, wire), vec![480]);
        // 40 bytes past a frame edge: a 64-byte frame and one of 40 + 1542 − 84 − 20
        let f = fillers_for(wire + 40, wire);
        assert_eq!(f, vec![64, 1478]);
        assert_eq!(f.iter().map(|b| b + 20).sum::<u64>(), wire + 40);
        // shorter than a minimum frame and no whole frame to borrow from: nothing to do
        assert_eq!(fillers_for(40, wire), Vec::<u64>::new());
    }
}
