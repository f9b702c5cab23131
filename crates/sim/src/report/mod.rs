//! Metrics at the end of a run: a serializable report whose every figure names its unit in
//! its key, a terminal summary, and the frame conservation check.

pub mod cc_compare;
pub mod cn;
pub mod dcbx;
pub mod fct_size;
pub mod link_errors;
pub mod pathology;
pub mod qp;
pub mod summary;
pub mod verdict;

use std::collections::{BTreeMap, HashMap};

use lossless_proto::flow_control::Mode;
use lossless_proto::units::{Duration, PS_PER_SEC};
use serde::Serialize;

use crate::config::model::{Hop, IdealFct, ns3_standalone_fct};
use crate::event::EventQueue;
use crate::frame::DropReason;
use crate::observer::Observer;
pub use crate::report::dcbx::DcbxReport;
use crate::report::qp::QpReport;
use crate::sim::{Event, Node, Simulator};
use crate::stats::{FctHistogram, FctSummary, ideal_fct};

/// Counters of one (port, priority) with activity.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PrioReport {
    /// The priority.
    pub priority: u8,
    /// Whether the priority is lossless (flow control enabled) on this port.
    pub lossless: bool,
    /// Data frames sent.
    pub tx_frames: u64,
    /// Data bytes sent.
    pub tx_bytes: u64,
    /// Send throughput over the run.
    pub tx_throughput_bps: u64,
    /// Data frames received.
    pub rx_frames: u64,
    /// Data bytes received.
    pub rx_bytes: u64,
    /// Receive throughput over the run.
    pub rx_throughput_bps: u64,
    /// PFC frames sent pausing this priority (time ≠ 0).
    pub pfc_xoff_sent_frames: u64,
    /// PFC frames sent releasing it (time 0).
    pub pfc_xon_sent_frames: u64,
    /// PFC frames received pausing it.
    pub pfc_xoff_received_frames: u64,
    /// PFC frames received releasing it.
    pub pfc_xon_received_frames: u64,
    /// Time this port's transmitter was paused for the priority (PAUSE: the link).
    pub paused_ps: u128,
    /// Time this port's request (XOFF) for the priority was raised.
    pub xoff_requested_ps: u128,
    /// Largest egress queue.
    pub peak_queue_bytes: u64,
    /// Largest ingress charge in the switch buffer (switch ports only).
    pub peak_ingress_buffer_bytes: u64,
    /// Frames received here and dropped, by reason.
    pub drops_frames: BTreeMap<&'static str, u64>,
}

/// One port.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PortReport {
    /// Owning node.
    pub node: String,
    /// Port index within the node.
    pub port: u32,
    /// Node at the other end of the link.
    pub peer: String,
    /// Line rate.
    pub rate_bps: u64,
    /// Flow control mode: off, pause, pfc.
    pub flow_control: &'static str,
    /// PAUSE frames sent with time ≠ 0.
    pub pause_xoff_sent_frames: u64,
    /// PAUSE frames sent with time 0.
    pub pause_xon_sent_frames: u64,
    /// PAUSE frames received with time ≠ 0.
    pub pause_xoff_received_frames: u64,
    /// PAUSE frames received with time 0.
    pub pause_xon_received_frames: u64,
    /// Priorities with any activity.
    pub priorities: Vec<PrioReport>,
    /// DCBX state (DCBX-managed ports only).
    pub dcbx: Option<DcbxReport>,
    /// LLDP frames received and dropped: no DCBX agent on this port, or not one it accepts.
    pub lldp_ignored_frames: u64,
    /// ECN marking and QCN congestion points (switch ports that run them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cn: Option<PortCnReport>,
}

/// One flow.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowReport {
    /// Name.
    pub name: String,
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// Priority.
    pub priority: u8,
    /// Load the flow offered while active (wire bits).
    pub offered_bps: u64,
    /// Payload bytes of a finite flow (`None`: endless).
    pub size_bytes: Option<u64>,
    /// Frames injected.
    pub sent_frames: u64,
    /// Bytes injected.
    pub sent_bytes: u64,
    /// Frames delivered.
    pub delivered_frames: u64,
    /// Bytes delivered.
    pub delivered_bytes: u64,
    /// Frames dropped.
    pub dropped_frames: u64,
    /// Delivered frame bytes per second over the flow's active span.
    pub throughput_bps: u64,
    /// Time from the flow's start to its last frame's delivery, for finished finite flows:
    /// the flow completion time (FCT).
    pub completion_ps: Option<u128>,
    /// The ideal completion time at the sender's line rate (see [`ideal_fct`]), for finite
    /// flows.
    pub fct_ideal_ps: Option<u128>,
    /// FCT divided by the ideal completion time, for finished finite flows.
    pub fct_slowdown_ratio: Option<f64>,
    /// The QP's transport and congestion control (flows with `transport = "rocev2"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qp: Option<QpReport>,
    /// Throughput of the same flow in the twin run without congestion notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_without_cn_bps: Option<u64>,
}

/// Flow completion times of one priority.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PrioFct {
    /// The priority.
    pub priority: u8,
    /// Its completed flows' figures.
    #[serde(flatten)]
    pub fct: FctSummary,
}

/// Flow completion times (FCT) of the finite flows that finished, overall and per priority.
/// FCT is the time from a flow's start to its last frame's delivery; the slowdown is FCT
/// divided by [`ideal_fct`] (the flow's frames back to back at the sender's line rate).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FctReport {
    /// What the slowdowns divide by: "alone" (the flow's own FCT alone in the idle fabric,
    /// the default), "wire" or "ns3" (see [`crate::config::model::IdealFct`]).
    pub ideal_fct: &'static str,
    /// Finite flows not finished when the run ended (in no figure below).
    pub flows_unfinished_total: u64,
    /// All completed flows; `None` when none completed.
    pub all: Option<FctSummary>,
    /// Per priority with completed flows, in priority order.
    pub priorities: Vec<PrioFct>,
}

impl FctReport {
    /// The distributions of `flows`' completion times: overall and per priority (index).
    pub fn histograms(flows: &[FlowReport]) -> (FctHistogram, [FctHistogram; 8]) {
        let mut all = FctHistogram::new();
        let mut prio: [FctHistogram; 8] = std::array::from_fn(|_| FctHistogram::new());
        for f in flows {
            if let (Some(c), Some(i)) = (f.completion_ps, f.fct_ideal_ps) {
                let (c, i) = (Duration::from_ps(c), Duration::from_ps(i));
                all.record(c, i);
                prio[f.priority as usize & 7].record(c, i);
            }
        }
        (all, prio)
    }

    /// The figures of `flows`.
    pub fn of(flows: &[FlowReport], ideal: IdealFct) -> FctReport {
        let (all, prio) = Self::histograms(flows);
        FctReport {
            ideal_fct: ideal.name(),
            flows_unfinished_total: flows
                .iter()
                .filter(|f| f.fct_ideal_ps.is_some() && f.completion_ps.is_none())
                .count() as u64,
            all: all.summary(),
            priorities: (0..8u8)
                .filter_map(|p| prio[p as usize].summary().map(|fct| PrioFct { priority: p, fct }))
                .collect(),
        }
    }
}

/// One switch's buffer.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SwitchReport {
    /// Name.
    pub name: String,
    /// Buffer size.
    pub buffer_bytes: u64,
    /// Largest occupancy.
    pub peak_buffer_bytes: u64,
}

/// One host's receiver.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostReport {
    /// Name.
    pub name: String,
    /// Largest receive backlog.
    pub peak_rx_backlog_bytes: u64,
}

/// Frame accounting at the end of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Conservation {
    /// Frames sources injected.
    pub injected_frames: u64,
    /// Frames delivered.
    pub delivered_frames: u64,
    /// Frames in queues and receive backlogs.
    pub queued_frames: u64,
    /// Data frames on the wire.
    pub in_flight_frames: u64,
    /// Frames dropped, by reason.
    pub dropped_frames: BTreeMap<&'static str, u64>,
    /// Of the delivered frames, those that reached a host other than their destination (only
    /// written when there are some: a valid run has none).
    #[serde(skip_serializing_if = "is_zero")]
    pub misdelivered_frames: u64,
    /// injected = delivered + queued + in flight + dropped, and every frame delivered reached
    /// its own destination.
    pub balanced: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A span of simulated time, from the run's start.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct ActiveSpan {
    /// Its start.
    pub from_ps: u128,
    /// Its end.
    pub to_ps: u128,
}

impl ActiveSpan {
    /// Its length, ps.
    pub fn len_ps(&self) -> u128 {
        self.to_ps.saturating_sub(self.from_ps)
    }
}

/// Everything a run measured.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Simulated time.
    pub duration_ps: u128,
    /// When the flows were active: from the first flow's start to the last one's completion
    /// (or its stop, or the run's end, when it did not complete); `None` without flows. The
    /// summary's active-span rates are over it, beside the ports' whole-run means.
    pub active_span: Option<ActiveSpan>,
    /// Events handled (a transmitter's end that finds nothing to send is none: `order.rs`).
    pub events: u64,
    /// Whether every lossless priority stayed lossless, and where it did not.
    pub lossless: crate::report::verdict::LosslessVerdict,
    /// Per port, with per-priority detail.
    pub ports: Vec<PortReport>,
    /// Per flow.
    pub flows: Vec<FlowReport>,
    /// Flow completion times of the finished finite flows.
    pub fct: FctReport,
    /// Per switch.
    pub switches: Vec<SwitchReport>,
    /// Per host.
    pub hosts: Vec<HostReport>,
    /// Frame conservation.
    pub conservation: Conservation,
    /// The first error an engine returned during the run (which stopped it there), if any.
    pub engine_fault: Option<String>,
    /// Stalls, watchdogs, topology events, deadlocks, storms and victims (only when the
    /// scenario uses them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pathology: Option<crate::report::pathology::PathologyReport>,
    /// Frames the links' bit errors corrupted, per receiving port; absent when no link has a
    /// bit error rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_errors: Option<Vec<crate::report::link_errors::LinkErrorReport>>,
    /// Congestion notification totals (runs with QPs or ECN/QCN at switches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cn: Option<CnTotals>,
    /// How much less PFC fired than in the twin run without congestion notification
    /// ([`Report::compare_with_cn_off`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cn_effect: Option<CnEffect>,
}

/// A run that must not be trusted: an engine fault or frames unaccounted for.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// An engine refused what the simulator asked; the run stopped.
    #[error("engine fault {0}")]
    EngineFault(String),
    /// Frames were created or lost without a reason.
    #[error(transparent)]
    Conservation(#[from] ConservationError),
    /// A finished QP's responder did not deliver exactly the message, each byte once.
    #[error("transport: a finished QP's responder did not deliver its message exactly once ({0})")]
    Transport(String),
}

/// The conservation check failed: frames were created or lost without a reason, or
/// delivered to a host that is not their destination.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "conservation violated: injected {injected} {} delivered {delivered} + queued {queued} + in flight {in_flight} + dropped {dropped}{}",
    if injected == &(delivered + queued + in_flight + dropped) { "=" } else { "≠" },
    if *misdelivered > 0 {
        format!("; {misdelivered} of the delivered frames reached a host other than their destination")
    } else {
        String::new()
    }
)]
pub struct ConservationError {
    /// Injected frames.
    pub injected: u64,
    /// Delivered frames.
    pub delivered: u64,
    /// Queued frames.
    pub queued: u64,
    /// In-flight frames.
    pub in_flight: u64,
    /// Dropped frames.
    pub dropped: u64,
    /// Delivered frames that reached a host other than their destination.
    pub misdelivered: u64,
}

/// A switch port's ECN and QCN counters, per priority with activity.
fn port_cn_report<O: Observer, Q: EventQueue<Event>>(
    sim: &Simulator<O, Q>,
    pi: crate::frame::PortId,
    cn: &crate::sim::PortCn,
) -> PortCnReport {
    let priorities = (0..8u8)
        .filter_map(|q| {
            let i = q as usize;
            let e = sim.ecn_counters(pi, q);
            let c = sim.cp_sampled(pi, q);
            if e.is_none() && c.is_none() {
                return None;
            }
            let r = PrioCnReport {
                priority: q,
                ecn_marked_frames: e.map_or(0, |e| e.marked),
                ecn_not_marked_frames: e.map_or(0, |e| e.not_marked),
                cp_sampled_frames: c.unwrap_or(0),
                cnms_sent_total: cn.cnms_sent[i],
            };
            (r.ecn_marked_frames + r.ecn_not_marked_frames + r.cp_sampled_frames > 0).then_some(r)
        })
        .collect();
    PortCnReport { priorities }
}

fn bps(bytes: u64, span_ps: u128) -> u64 {
    if span_ps == 0 {
        return 0;
    }
    (bytes as u128 * 8 * PS_PER_SEC / span_ps) as u64
}

fn drops_map(d: &[u64]) -> BTreeMap<&'static str, u64> {
    DropReason::ALL
        .iter()
        .filter(|r| d[r.index()] > 0)
        .map(|r| (r.name(), d[r.index()]))
        .collect()
}

/// Every port, in port order, with its priorities that saw activity.
fn collect_ports<O: Observer, Q: EventQueue<Event>>(sim: &Simulator<O, Q>) -> Vec<PortReport> {
    let names: Vec<&str> = sim.config.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut ports = Vec::new();
    for (pi, port) in sim.ports.iter().enumerate() {
        let mode = sim.flow_control_mode(pi as crate::frame::PortId);
        let st = &port.stats();
        ports.push(PortReport {
            node: names[port.node as usize].to_string(),
            port: port.local,
            peer: names[sim.ports[port.peer as usize].node as usize].to_string(),
            rate_bps: port.rate.bps(),
            flow_control: match mode {
                Mode::Off => "off",
                Mode::Pause => "pause",
                Mode::Pfc => "pfc",
            },
            pause_xoff_sent_frames: st.pause_xoff_tx,
            pause_xon_sent_frames: st.pause_xon_tx,
            pause_xoff_received_frames: st.pause_xoff_rx,
            pause_xon_received_frames: st.pause_xon_rx,
            priorities: (0..8u8)
                .filter_map(|q| collect_prio(sim, pi as crate::frame::PortId, q))
                .collect(),
            dcbx: sim.dcbx_report(pi as crate::frame::PortId),
            lldp_ignored_frames: st.lldp_rx_ignored,
            cn: port
                .cn
                .as_deref()
                .map(|cn| port_cn_report(sim, pi as crate::frame::PortId, cn)),
        });
    }
    ports
}

/// Priority `q` of port `pi`, or `None` when it saw no activity.
fn collect_prio<O: Observer, Q: EventQueue<Event>>(
    sim: &Simulator<O, Q>,
    pi: crate::frame::PortId,
    q: u8,
) -> Option<PrioReport> {
    let span = sim.now.as_ps();
    let port = &sim.ports[pi as usize];
    let s = &port.stats().prio[q as usize];
    let (paused, requested) = sim.pause_times(pi, q);
    let (rx_frames, rx_bytes) = sim.received(pi, q);
    let active =
        s.tx_frames + rx_frames + s.pfc_xoff_rx + s.pfc_xoff_tx > 0 || s.drops.iter().any(|&d| d > 0);
    if !active {
        return None;
    }
    let peak_in = match &sim.nodes[port.node as usize] {
        Node::Switch(sw) => sw.buffer.peak(port.local as usize, q),
        Node::Host(_) => 0,
    };
    Some(PrioReport {
        priority: q,
        lossless: port.lossless & (1 << q) != 0,
        tx_frames: s.tx_frames,
        tx_bytes: s.tx_bytes,
        tx_throughput_bps: bps(s.tx_bytes, span),
        rx_frames,
        rx_bytes,
        rx_throughput_bps: bps(rx_bytes, span),
        pfc_xoff_sent_frames: s.pfc_xoff_tx,
        pfc_xon_sent_frames: s.pfc_xon_tx,
        pfc_xoff_received_frames: s.pfc_xoff_rx,
        pfc_xon_received_frames: s.pfc_xon_rx,
        paused_ps: paused,
        xoff_requested_ps: requested,
        peak_queue_bytes: port.queues[q as usize].peak,
        peak_ingress_buffer_bytes: peak_in,
        drops_frames: drops_map(&s.drops),
    })
}

/// The flows' section and what it adds to the CN totals.
struct CollectedFlows {
    /// Per flow, in flow order.
    flows: Vec<FlowReport>,
    /// From the first flow's start to the last one's end.
    active_span: Option<ActiveSpan>,
    /// The QPs' totals (the switch ports' are added by [`Report::collect`]).
    totals: CnTotals,
    /// Whether the run has QPs or ECN/QCN at a switch.
    any_cn: bool,
}

/// Every flow, in flow order: its counters, completion and ideal FCT, its QP's figures.
fn collect_flows<O: Observer, Q: EventQueue<Event>>(sim: &Simulator<O, Q>) -> CollectedFlows {
    let now = sim.now;
    let names: Vec<&str> = sim.config.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut flows = Vec::new();
    let mut paths: HashMap<(u32, u32), Vec<Hop>> = HashMap::new();
    // built at the first flow that asks (ns-3 ideal FCTs only)
    let mut ns3_paths = None;
    let mut ideal_cache = crate::sim::IdealCache::default();
    let mut totals = CnTotals {
        every_byte_once: true,
        ..CnTotals::default()
    };
    let mut any_cn = sim.ports.iter().any(|p| p.cn.is_some());
    let mut active_span: Option<ActiveSpan> = None;
    for (fi, (spec, s, qp)) in sim.flow_views().enumerate() {
        let line = sim.ports[sim.host_port(spec.src) as usize].rate;
        let start = spec.start;
        let until = match (spec.size, s.completed) {
            (Some(_), Some(c)) => c,
            _ => spec.stop.min(now),
        };
        let active_ps = until.saturating_duration_since(start).as_ps();
        let (from_ps, to_ps) = (start.as_ps(), until.as_ps().max(start.as_ps()));
        active_span = Some(active_span.map_or(ActiveSpan { from_ps, to_ps }, |a| ActiveSpan {
            from_ps: a.from_ps.min(from_ps),
            to_ps: a.to_ps.max(to_ps),
        }));
        let completion = s.completed.map(|c| c.saturating_duration_since(start));
        let ideal = spec.size.and_then(|size| match sim.config.model.ideal_fct {
            IdealFct::Alone => sim.ideal_alone(fi as crate::frame::FlowId, &mut ideal_cache),
            IdealFct::Wire => Some(ideal_fct(size, spec.mtu, line)),
            IdealFct::Ns3 => {
                let hops = paths.entry((spec.src, spec.dst)).or_insert_with(|| {
                    ns3_paths
                        .get_or_insert_with(|| sim.ns3_paths())
                        .path(spec.src, spec.dst)
                });
                Some(ns3_standalone_fct(size, spec.mtu, hops))
            }
        });
        flows.push(FlowReport {
            name: spec.name.clone(),
            src: names[spec.src as usize].to_string(),
            dst: names[spec.dst as usize].to_string(),
            priority: spec.priority,
            offered_bps: spec.offered_bps(line) as u64,
            size_bytes: spec.size,
            sent_frames: s.sent_frames,
            sent_bytes: s.sent_bytes,
            delivered_frames: s.delivered_frames,
            delivered_bytes: s.delivered_bytes,
            dropped_frames: s.dropped_frames,
            throughput_bps: bps(s.delivered_bytes, active_ps),
            completion_ps: completion.map(Duration::as_ps),
            fct_ideal_ps: ideal.map(Duration::as_ps),
            fct_slowdown_ratio: completion
                .zip(ideal)
                .map(|(c, i)| c.as_ps() as f64 / i.as_ps().max(1) as f64),
            qp: qp.map(|q| {
                let cc = spec.transport.as_ref().map_or("none", |t| t.cc.name());
                let (r, exactly) = sim.qp_report(fi, q, cc, s.dropped_control_frames);
                any_cn = true;
                totals.qps_total += 1;
                totals.retransmitted_frames += r.retransmitted_frames;
                totals.timeouts_total += r.timeouts_total;
                totals.rate_decreases_total += r.rate_decreases_total;
                totals.cnps_sent_total += r.cnps_sent_total;
                if s.completed.is_some() && !exactly {
                    totals.every_byte_once = false;
                }
                r
            }),
            throughput_without_cn_bps: None,
        });
    }
    CollectedFlows {
        flows,
        active_span,
        totals,
        any_cn,
    }
}

/// The switches' buffers and the hosts' receivers, in node order.
fn collect_nodes<O: Observer, Q: EventQueue<Event>>(
    sim: &Simulator<O, Q>,
) -> (Vec<SwitchReport>, Vec<HostReport>) {
    let mut switches = Vec::new();
    let mut hosts = Vec::new();
    for (n, c) in sim.nodes.iter().zip(&sim.config.nodes) {
        match n {
            Node::Switch(sw) => switches.push(SwitchReport {
                name: c.name.clone(),
                buffer_bytes: sw.buffer.size(),
                peak_buffer_bytes: sw.buffer.peak_used(),
            }),
            Node::Host(h) => hosts.push(HostReport {
                name: c.name.clone(),
                peak_rx_backlog_bytes: h.rx_peak,
            }),
        }
    }
    (switches, hosts)
}

impl Conservation {
    /// The frame accounting of `sim` at its current time.
    fn collect<O: Observer, Q: EventQueue<Event>>(sim: &Simulator<O, Q>) -> Conservation {
        let t = &sim.totals;
        let queued = sim.queued_frames();
        let in_flight = sim.in_flight_frames();
        let dropped: u64 = t.dropped.iter().sum();
        Conservation {
            injected_frames: t.injected,
            delivered_frames: t.delivered,
            queued_frames: queued,
            in_flight_frames: in_flight,
            dropped_frames: drops_map(&t.dropped),
            misdelivered_frames: t.misdelivered,
            balanced: t.injected == t.delivered + queued + in_flight + dropped && t.misdelivered == 0,
        }
    }
}

impl Report {
    /// Collects the report of a simulator at its current time: one collector per section.
    pub fn collect<O: Observer, Q: EventQueue<Event>>(sim: &Simulator<O, Q>) -> Report {
        let ports = collect_ports(sim);
        let mut flows = collect_flows(sim);
        let (switches, hosts) = collect_nodes(sim);
        for p in &ports {
            for q in p.cn.iter().flat_map(|c| &c.priorities) {
                flows.totals.ecn_marked_frames += q.ecn_marked_frames;
                flows.totals.cnms_sent_total += q.cnms_sent_total;
            }
        }
        let throughput: Vec<u64> = flows.flows.iter().map(|f| f.throughput_bps).collect();
        let pathology = crate::report::pathology::PathologyReport::collect(sim, &throughput);
        Report {
            scenario: sim.config.name.clone(),
            seed: sim.config.seed,
            duration_ps: sim.now.as_ps(),
            active_span: flows.active_span,
            events: sim.events,
            lossless: crate::report::verdict::LosslessVerdict::collect(sim),
            ports,
            fct: FctReport::of(&flows.flows, sim.config.model.ideal_fct),
            flows: flows.flows,
            switches,
            hosts,
            conservation: Conservation::collect(sim),
            engine_fault: sim.fault.clone(),
            pathology,
            link_errors: crate::report::link_errors::collect(sim),
            cn: flows.any_cn.then_some(flows.totals),
            cn_effect: None,
        }
    }

    /// `Ok` when no engine fault stopped the run and every injected frame is accounted for.
    pub fn check(&self) -> Result<(), CheckError> {
        if let Some(f) = &self.engine_fault {
            return Err(CheckError::EngineFault(f.clone()));
        }
        self.check_conservation()?;
        if self.cn.as_ref().is_some_and(|c| !c.every_byte_once) {
            return Err(CheckError::Transport(
                "compare each QP's qp.transport_delivered_bytes with its size".into(),
            ));
        }
        Ok(())
    }

    /// `Ok` when every injected frame is accounted for.
    pub fn check_conservation(&self) -> Result<(), ConservationError> {
        let c = &self.conservation;
        if c.balanced {
            Ok(())
        } else {
            Err(ConservationError {
                injected: c.injected_frames,
                delivered: c.delivered_frames,
                queued: c.queued_frames,
                in_flight: c.in_flight_frames,
                dropped: c.dropped_frames.values().sum(),
                misdelivered: c.misdelivered_frames,
            })
        }
    }

    /// Frames of lossless priorities dropped anywhere (see [`crate::report::verdict`]; zero with
    /// correct headroom and agreed PFC).
    pub fn lossless_drops(&self) -> u64 {
        self.lossless.dropped_frames
    }

    /// The port of `node` whose peer is `peer`.
    pub fn port(&self, node: &str, peer: &str) -> Option<&PortReport> {
        self.ports.iter().find(|p| p.node == node && p.peer == peer)
    }

    /// The flow named `name`.
    pub fn flow(&self, name: &str) -> Option<&FlowReport> {
        self.flows.iter().find(|f| f.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Overrides, load_str};

    /// Runs a scenario text to its end; the report, conservation checked.
    fn run(text: &str) -> Report {
        let c = load_str(text, "test.toml", None, &Overrides::default()).expect("scenario");
        let mut sim = Simulator::new(c).expect("builds");
        sim.run();
        let r = Report::collect(&sim);
        r.check().expect("no fault, conserved");
        r
    }

    /// 100 Gb/s (80 ps a byte), 10 m cables (50 ns), one flow of 14,100 payload bytes with
    /// a 1500-byte MTU from `1us`: nine 1522-byte frames and one of 600 + 22 = 622 bytes.
    const ONE_FLOW: &str = r#"
name = "one-flow"
duration = "100us"
[defaults]
rate = "100G"
length_m = 10
[[host]]
name = "a"
[[host]]
name = "b"
[[flow]]
name = "f"
src = "a"
dst = "b"
priority = 5
start = "1us"
size_bytes = 14100
mtu = 1500
"#;
    const BYTE_PS: u128 = 80;
    const PROP_PS: u128 = 50_000;
    /// First preamble bit to last frame bit, back to back: 9 × (1522 + 20) + 622 + 8 bytes.
    const IDEAL_PS: u128 = (9 * 1542 + 630) * BYTE_PS;

    #[test]
    fn a_lone_flow_on_an_idle_link_completes_in_the_wire_time_plus_propagation_its_ideal() {
        let r = run(&format!("{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\n"));
        let f = r.flow("f").unwrap();
        let fct = IDEAL_PS + PROP_PS;
        assert_eq!(f.completion_ps, Some(fct));
        // the default ideal is the flow alone in the idle fabric: this very run
        assert_eq!(f.fct_ideal_ps, Some(fct));
        let slowdown = 1.0;
        assert_eq!(f.fct_slowdown_ratio, Some(slowdown));
        assert_eq!(r.fct.ideal_fct, "alone");
        // the old definition, on request: the frames back to back on the sender's wire
        let wire = run(&format!(
            "{ONE_FLOW}[model]\nideal_fct = \"wire\"\n[[link]]\na = \"a\"\nb = \"b\"\n"
        ));
        let w = wire.flow("f").unwrap();
        assert_eq!(w.fct_ideal_ps, Some(IDEAL_PS));
        assert_eq!(w.fct_slowdown_ratio, Some(fct as f64 / IDEAL_PS as f64)); // 1.0431
        assert_eq!(r.fct.flows_unfinished_total, 0);
        let one = |s: &FctSummary| {
            // one flow: every quantile is that flow (the histogram's bucket clamped to it)
            assert_eq!(s.flows_completed_total, 1);
            for v in [s.fct_p50_ps, s.fct_p99_ps, s.fct_p999_ps, s.fct_max_ps] {
                assert_eq!(u128::from(v), fct);
            }
            assert_eq!(s.fct_slowdown_max_ratio, slowdown);
            for v in [
                s.fct_slowdown_p50_ratio,
                s.fct_slowdown_p99_ratio,
                s.fct_slowdown_p999_ratio,
            ] {
                assert!((v - slowdown).abs() <= 0.0005, "{v} vs {slowdown}");
            }
        };
        one(r.fct.all.as_ref().unwrap());
        assert_eq!(r.fct.priorities.len(), 1);
        assert_eq!(r.fct.priorities[0].priority, 5);
        one(&r.fct.priorities[0].fct);
        let text = r.summary();
        assert!(text.contains("FCT pri"), "{text}");
        assert!(text.contains(&Duration::from_ps(fct).to_string()), "{text}");
    }

    #[test]
    fn an_interface_delay_adds_to_the_cable_exactly_once_per_direction() {
        // a duration, and the 802.3 upper bound Annex N counts: 122,880 bit times at 100G
        for (value, extra_ps) in [("\"100ns\"", 100_000u128), ("\"802.3\"", 122_880 * 10)] {
            let r = run(&format!(
                "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ninterface_delay = {value}\n"
            ));
            let f = r.flow("f").unwrap();
            assert_eq!(f.completion_ps, Some(IDEAL_PS + PROP_PS + extra_ps), "{value}");
        }
        let none = run(&format!(
            "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ninterface_delay = \"none\"\n"
        ));
        assert_eq!(none.flow("f").unwrap().completion_ps, Some(IDEAL_PS + PROP_PS));
    }

    #[test]
    fn a_bad_interface_delay_names_the_key_and_what_is_allowed() {
        let text = format!("{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ninterface_delay = \"fast\"\n");
        let e = load_str(&text, "test.toml", None, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("interface_delay") && e.contains("802.3") && e.contains("fast"),
            "{e}"
        );
    }

    #[test]
    fn a_switch_adds_one_store_and_forward_of_the_largest_frame_and_a_second_cable() {
        // the 622-byte last frame reaches the switch while it still sends the ninth 1522-byte
        // frame (stored whole, then sent taking 1542 byte times): the path adds 1530 byte
        // times over the sender's own wire, plus two cables
        let r = run(&format!(
            "{ONE_FLOW}[[switch]]\nname = \"s\"\nbuffer_bytes = 1_000_000\n[[link]]\na = \"a\"\nb = \"s\"\n[[link]]\na = \"s\"\nb = \"b\"\n"
        ));
        let f = r.flow("f").unwrap();
        assert_eq!(f.completion_ps, Some(IDEAL_PS + 1530 * BYTE_PS + 2 * PROP_PS));
        // alone in the fabric, that is its ideal
        assert_eq!(f.fct_ideal_ps, f.completion_ps);
    }

    #[test]
    fn endless_flows_give_no_fct_and_no_fct_table() {
        let text =
            ONE_FLOW.replace("size_bytes = 14100\n", "") + "stop = \"5us\"\n[[link]]\na = \"a\"\nb = \"b\"\n";
        let r = run(&text);
        assert_eq!(r.flow("f").unwrap().fct_ideal_ps, None);
        assert_eq!(r.fct.all, None);
        assert!(r.fct.priorities.is_empty());
        assert!(!r.summary().contains("FCT pri"));
    }
}

/// Congestion notification at one switch port, per priority with activity.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PortCnReport {
    /// Per priority.
    pub priorities: Vec<PrioCnReport>,
}

/// One priority of a switch port.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PrioCnReport {
    /// The priority.
    pub priority: u8,
    /// ECN-capable frames marked CE here.
    pub ecn_marked_frames: u64,
    /// ECN-capable frames left unmarked.
    pub ecn_not_marked_frames: u64,
    /// Frames the QCN congestion point sampled.
    pub cp_sampled_frames: u64,
    /// CNMs it sent.
    pub cnms_sent_total: u64,
}

/// Totals over the run.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct CnTotals {
    /// QPs.
    pub qps_total: u64,
    /// Frames marked CE at switches.
    pub ecn_marked_frames: u64,
    /// CNPs sent (packets and flags).
    pub cnps_sent_total: u64,
    /// CNMs sent.
    pub cnms_sent_total: u64,
    /// Data packets sent again.
    pub retransmitted_frames: u64,
    /// Retransmission timeouts.
    pub timeouts_total: u64,
    /// Rate cuts.
    pub rate_decreases_total: u64,
    /// Whether every finished QP's responder delivered exactly its size (each byte once).
    pub every_byte_once: bool,
}

/// How much less PFC fired with congestion notification than in the twin run without it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CnEffect {
    /// PFC XOFF frames (and PAUSE XOFF frames) sent, with CN.
    pub pfc_xoff_sent_frames: u64,
    /// The same without CN.
    pub pfc_xoff_sent_without_cn_frames: u64,
    /// 1 − with / without (0 when neither run sent any).
    pub pfc_xoff_reduction_ratio: f64,
    /// Time transmitters spent paused, summed over ports and priorities, with CN.
    pub paused_ps: u128,
    /// The same without CN.
    pub paused_without_cn_ps: u128,
    /// 1 − with / without.
    pub paused_reduction_ratio: f64,
    /// Frames of lossless priorities dropped, with CN.
    pub lossless_dropped_frames: u64,
    /// The same without CN.
    pub lossless_dropped_without_cn_frames: u64,
}
