//! A trace sink that writes an HTML report with inline SVG plots (no network, no scripts):
//! the topology with links coloured by time paused, numbered arrows in the order PFC
//! spread and the bottleneck link directions in blue (`html/topology.rs`), delivered
//! throughput per priority over time and of chosen flows (`html/flows.rs`, `--plot-flows`) (each frame's bytes
//! counted while its bits arrived on the receiver's link, so no point exceeds the line rate,
//! drawn as a grey line), buffer occupancy per (switch, ingress port, priority) and per host
//! receive backlog (with static PFC XOFF/XON thresholds), egress queue depth per port and
//! priority (with the ECN Kmin/Kmax thresholds), when each port was paused, and (when finite
//! flows completed) the CDF of flow completion times per priority and of the slowdown per
//! flow-size bucket (`html/fct_size.rs`). Every time axis ends at the run's end at the latest
//! and the page uses one time unit (ns, µs, ms or s, by the span). More than 8 buffers, queues
//! or paused ports are drawn as a heat map (port × time) rather than one line each, so the page
//! reads at hundreds of hosts and no legend grows with the fabric. Plots are drawn by
//! plotters' SVG backend (text sized by its built-in metrics: no font files, no network); the
//! page is the askama template `templates/sim-report.html`, which escapes every name it shows.

mod fct_size;

/// The label of a chart whose rows are `labels` from the top, one per unit of y: a row's label
/// at its centre (y = row + 0.5, counted from the bottom), nothing at the other ticks.
fn row_label(labels: &[String], y: f64) -> String {
    let n = labels.len();
    let k = (y - 0.5).round();
    if (y - 0.5 - k).abs() < 1e-6 && k >= 0.0 {
        n.checked_sub(1 + k as usize)
            .and_then(|i| labels.get(i))
            .cloned()
            .unwrap_or_default()
    } else {
        String::new()
    }
}
mod heatmap;
mod topology;

use std::path::Path;

use askama::Template;

use lossless_proto::units::{Duration, Instant, Rate};

use crate::buffer::Threshold;
use crate::config::model::BufferModel;
use crate::config::model::IdealFct;
use crate::config::{NodeKind, SimConfig};
use crate::frame::{Frame, NodeId, PortId};
use crate::observer::Observer;
use crate::report::pathology::PathologyReport;
use crate::report::summary::SummaryOptions;
use crate::report::{FctReport, Report};
use heatmap::HeatRow;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod cc_compare;
mod flows;
mod pathology;
mod sweep;
mod victims;

pub use cc_compare::CcCompareReport;
pub use flows::{FlowPick, FlowPicks, FlowPicksError, MAX_FLOW_SERIES, name_matches, parse_flow_picks};
pub use sweep::{MAX_SWEEP_REPORT_POINTS, SweepPoint, SweepReport};

/// Time bins across the run's activity (even: bins merge in pairs).
pub const BINS: usize = 200;

/// Doublings of the first bin width after which [`BINS`] bins cover the whole run.
const COARSENINGS: u32 = 10;

/// The first instant anything the report draws can happen: the first flow start, workload
/// arrival window or scripted signal; zero when the run has pathology parts (stalls, link
/// events), or nothing scheduled.
fn first_activity(config: &SimConfig) -> Instant {
    if !config.pathology.is_off() {
        return Instant::ZERO;
    }
    config
        .flows
        .iter()
        .map(|f| f.start)
        .chain(config.workloads.iter().map(|w| w.start))
        .chain(config.signals.iter().map(|s| s.at))
        .min()
        .unwrap_or(Instant::ZERO)
}

/// A page's time axis: where it starts and ends (never past the run's end) and its one unit,
/// chosen so that the axis reads in at most a few thousand of them (ns, µs, ms or s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TimeAxis {
    /// Start, ps since the run's start.
    origin_ps: u128,
    /// End, ps since the run's start.
    end_ps: u128,
    /// Picoseconds per unit.
    unit_ps: u128,
    /// The unit's name.
    unit: &'static str,
}

impl TimeAxis {
    /// The axis from `origin_ps` to `end_ps` in the unit that suits a span of `unit_span_ps`.
    pub(crate) fn new(origin_ps: u128, end_ps: u128, unit_span_ps: u128) -> TimeAxis {
        let (unit_ps, unit) = match unit_span_ps {
            s if s >= 1_000_000_000_000 => (1_000_000_000_000, "s"),
            s if s >= 1_000_000_000 => (1_000_000_000, "ms"),
            s if s >= 1_000_000 => (1_000_000, "µs"),
            _ => (1_000, "ns"),
        };
        TimeAxis {
            origin_ps,
            end_ps: end_ps.max(origin_ps + 1),
            unit_ps,
            unit,
        }
    }

    /// The same unit over another span.
    pub(crate) fn over(self, origin_ps: u128, end_ps: u128) -> TimeAxis {
        TimeAxis {
            origin_ps,
            end_ps: end_ps.max(origin_ps + 1),
            ..self
        }
    }

    /// Where the absolute instant `t_ps` is on the axis (clamped to it), in the axis's unit.
    pub(crate) fn x(&self, t_ps: u128) -> f64 {
        let t = t_ps.clamp(self.origin_ps, self.end_ps) - self.origin_ps;
        t as f64 / self.unit_ps as f64
    }

    /// The axis's length in its unit.
    pub(crate) fn len(&self) -> f64 {
        self.x(self.end_ps)
    }

    /// The axis's description: its unit, and where it starts when that is not the run's start.
    pub(crate) fn desc(&self) -> String {
        if self.origin_ps == 0 {
            format!("time ({})", self.unit)
        } else {
            format!("time ({}) since {}", self.unit, Duration::from_ps(self.origin_ps))
        }
    }
}

/// Bins of `bin_ps` from `axis`'s start that reach its end (the last may be partial):
/// (index, start ps, end ps), absolute.
fn axis_bins(axis: &TimeAxis, bin_ps: u128) -> impl Iterator<Item = (usize, u128, u128)> + '_ {
    (0..BINS)
        .map(move |k| {
            let a = axis.origin_ps + k as u128 * bin_ps;
            (k, a, (a + bin_ps).min(axis.end_ps))
        })
        .take_while(move |&(_, a, _)| a < axis.end_ps)
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// Peak per bin, last bin touched, last value.
type Series = (Vec<u64>, usize, u64);

/// A named, coloured line through (x, y) points.
type XySeries = (String, RGBColor, Vec<(f64, f64)>);

/// Per port: the intervals its transmitter was paused (from, to, priorities).
type Pauses = Vec<Vec<(Instant, Instant, u8)>>;

/// Collects time series during a run and renders them.
///
/// The time axis covers the run's activity: from the first thing that can happen (the first
/// flow, workload arrival or scripted signal; zero with pathology parts) to the last change
/// observed (a frame delivered, a buffer level, a pause), or to the end when a pause or a
/// buffer level is still held or nothing changed. Bins start at 1/1024 of what the whole run
/// needs and double in width as later changes arrive, so an HPCC ns-3 experiment (flows from
/// 2 s, stopped at 4 s, busy for a few ms) is drawn over its few busy ms.
pub struct HtmlReport {
    title: String,
    /// Start of the time axis, ps.
    origin_ps: u128,
    /// Width of a bin, ps: [`BINS`] bins from `origin_ps` cover every change so far.
    bin_ps: u128,
    /// Whether any change was observed (a run without any is drawn over its whole length).
    observed: bool,
    /// The bin the last change fell in and the span it covers, [lo, hi) ps from the origin
    /// (empty until the first change and after the bins widen): most changes fall in the
    /// same bin as the one before and need no division.
    recent_bin: (usize, u128, u128),
    node_names: Vec<String>,
    is_switch: Vec<bool>,
    port_names: Vec<String>,
    /// Per priority, the data bytes on the receivers' links in each bin: a frame's bytes are
    /// spread over the time its bits arrived, so no bin holds more than the links carried.
    delivered: [Vec<f64>; 8],
    /// Per node: the line rate of a host's link (`None` for a switch).
    rx_rate: Vec<Option<Rate>>,
    /// Per node: whether a data frame was delivered to it.
    received: Vec<bool>,
    /// The run's end, once rendered: the axis ends there.
    end_ps: Option<u128>,
    /// How much of the terminal summary the page repeats.
    summary: SummaryOptions,
    /// Per (node, local port, priority), in that order, from `occupancy_at`: peak per bin,
    /// last bin touched, last value (`None` until the buffer first changes).
    occupancy: Vec<Option<Series>>,
    /// Per node: where its ports' entries start in `occupancy` (8 per port, a host has 1).
    occupancy_at: Vec<usize>,
    /// Per (port, priority), port by port: the egress queue's bytes, as `occupancy`.
    egress: Vec<Option<Series>>,
    /// Per egress queue: the largest level it rose to from empty (one frame): a queue whose
    /// peak is no more held no frame waiting behind another.
    egress_frame: Vec<u64>,
    /// Per port: the ECN marking thresholds of its egress queues (priorities that mark,
    /// Kmin, Kmax bytes), when its switch marks.
    ecn: Vec<Option<(u8, u64, u64)>>,
    /// The PFC thresholds of the ingress buffers, when every switch has the same static ones
    /// (XOFF, XON bytes); else why they are not drawn.
    pfc_marks: Result<Option<(u64, u64)>, &'static str>,
    pauses: Pauses,
    open: Vec<Option<(Instant, u8)>>,
    topology: topology::Topology,
    /// Receiver stalls of the scenario's hosts, for the pathology timeline.
    stalls: pathology::Stalls,
    /// When each scenario flow stops offering frames, by name (a QP that has not finished
    /// leaves the rate percentiles then).
    stops: std::collections::HashMap<String, Instant>,
    /// The flows whose throughput over time the page draws (`--plot-flows`); `None`: the
    /// victims and the flows with the largest slowdown.
    flow_picks: Option<Vec<FlowPick>>,
    /// Per flow id: its delivered bytes per bin, when kept.
    flow_bins: Vec<flows::FlowSlot>,
    /// Flows kept in `flow_bins` (at most [`MAX_FLOW_SERIES`]).
    flows_kept: usize,
    /// The scenario's flow names, by flow id (name patterns pick flows to keep by them).
    flow_names: Vec<String>,
}

impl HtmlReport {
    /// A collector for `config`.
    pub fn new(config: &SimConfig) -> Self {
        let mut port_names = Vec::new();
        let mut ecn = Vec::new();
        let mut local = vec![0u32; config.nodes.len()];
        for link in &config.links {
            for (me, peer) in [(link.a, link.b), (link.b, link.a)] {
                ecn.push(match &config.nodes[me as usize].kind {
                    NodeKind::Switch(sw) => sw.ecn.as_ref().and_then(|e| {
                        let c = e.for_rate(link.rate)?;
                        Some((e.priorities, c.kmin_bytes, c.kmax_bytes))
                    }),
                    NodeKind::Host(_) => None,
                });
                port_names.push(format!(
                    "{}.{} → {}",
                    config.nodes[me as usize].name, local[me as usize], config.nodes[peer as usize].name
                ));
                local[me as usize] += 1;
            }
        }
        let n = port_names.len();
        let mut occupancy_at = Vec::with_capacity(local.len());
        let mut slots = 0;
        for ports in &local {
            occupancy_at.push(slots);
            slots += 8 * (*ports).max(1) as usize;
        }
        let mut rx_rate: Vec<Option<Rate>> = vec![None; config.nodes.len()];
        for link in &config.links {
            for n in [link.a, link.b] {
                if !matches!(config.nodes[n as usize].kind, NodeKind::Switch(_)) {
                    let r = &mut rx_rate[n as usize];
                    *r = Some(r.map_or(link.rate, |r| r.max(link.rate)));
                }
            }
        }
        let origin = first_activity(config);
        let run_ps = config.duration.as_ps().saturating_sub(origin.as_ps());
        HtmlReport {
            title: config.name.clone(),
            origin_ps: origin.as_ps(),
            observed: false,
            recent_bin: (0, 0, 0),
            // up to ten doublings reach the bins of the whole run
            bin_ps: run_ps.div_ceil((BINS as u128) << COARSENINGS).max(1),
            node_names: config.nodes.iter().map(|n| n.name.clone()).collect(),
            is_switch: config
                .nodes
                .iter()
                .map(|n| matches!(n.kind, NodeKind::Switch(_)))
                .collect(),
            port_names,
            delivered: std::array::from_fn(|_| vec![0.0; BINS]),
            received: vec![false; config.nodes.len()],
            rx_rate,
            end_ps: None,
            summary: SummaryOptions::default(),
            occupancy: std::iter::repeat_with(|| None).take(slots).collect(),
            occupancy_at,
            egress: std::iter::repeat_with(|| None).take(8 * n).collect(),
            egress_frame: vec![0; 8 * n],
            ecn,
            pfc_marks: pfc_marks(config),
            pauses: vec![Vec::new(); n],
            open: vec![None; n],
            topology: topology::Topology::new(config),
            stops: config.flows.iter().map(|f| (f.name.clone(), f.stop)).collect(),
            flow_picks: None,
            flow_bins: vec![flows::FlowSlot::Unseen; config.flows.len()],
            flows_kept: 0,
            flow_names: config.flows.iter().map(|f| f.name.clone()).collect(),
            stalls: config
                .pathology
                .hosts
                .iter()
                .filter(|h| !h.rx_stall.is_empty())
                .map(|h| (config.nodes[h.node as usize].name.clone(), h.rx_stall.clone()))
                .collect(),
        }
    }

    /// The page repeats the terminal summary as `opts` cuts it (`--top`, `--full`).
    pub fn with_summary(mut self, opts: SummaryOptions) -> Self {
        self.summary = opts;
        self
    }

    /// The page draws the throughput over time of the flows `picks` choose (`--plot-flows`)
    /// instead of the victims and the flows with the largest slowdown.
    pub fn with_flow_picks(mut self, picks: Vec<FlowPick>) -> Self {
        self.flow_picks = Some(picks);
        self
    }

    /// Whether flow `f`'s deliveries are kept (decided at its first delivery: a flow a name
    /// pattern picks, or any while fewer than [`MAX_FLOW_SERIES`] are kept).
    fn keep_flow(&mut self, f: usize) -> bool {
        if f >= self.flow_bins.len() {
            // a flow a workload started
            self.flow_bins.resize(f + 1, flows::FlowSlot::Unseen);
        }
        match self.flow_bins[f] {
            flows::FlowSlot::Kept(_) => true,
            flows::FlowSlot::Skipped => false,
            flows::FlowSlot::Unseen => {
                let named = self.flow_names.get(f).is_some_and(|n| {
                    self.flow_picks.iter().flatten().any(|p| match p {
                        FlowPick::Name(pattern) => name_matches(pattern, n),
                        _ => false,
                    })
                });
                let keep = named || self.flows_kept < MAX_FLOW_SERIES;
                self.flow_bins[f] = if keep {
                    self.flows_kept += 1;
                    flows::FlowSlot::Kept(vec![0.0; BINS])
                } else {
                    flows::FlowSlot::Skipped
                };
                keep
            }
        }
    }

    /// The bin of `at` (an instant before the axis starts goes into the first), the bins
    /// widened until they reach it.
    fn bin(&mut self, at: Instant) -> usize {
        self.observed = true;
        let t = at.as_ps().saturating_sub(self.origin_ps);
        let (b, lo, hi) = self.recent_bin;
        if lo <= t && t < hi {
            return b;
        }
        while t >= self.bin_ps * BINS as u128 {
            self.coarsen();
        }
        let b = (t / self.bin_ps) as usize;
        self.recent_bin = (b, b as u128 * self.bin_ps, (b as u128 + 1) * self.bin_ps);
        b
    }

    /// Each buffer that changed, by (node, local port, priority) in that order, with its series.
    fn buffers(&self) -> impl Iterator<Item = ((NodeId, u32, u8), &Series)> {
        let starts = &self.occupancy_at;
        self.occupancy.iter().enumerate().filter_map(move |(i, o)| {
            let o = o.as_ref()?;
            let node = starts.partition_point(|&s| s <= i) - 1;
            let k = i - starts[node];
            Some(((node as NodeId, (k / 8) as u32, (k % 8) as u8), o))
        })
    }

    /// The entry of a buffer in `occupancy`, `None` for a port the configuration does not
    /// have (the simulator reports none).
    fn buffer_slot(&self, node: NodeId, local_port: u32, prio: u8) -> Option<usize> {
        let start = *self.occupancy_at.get(node as usize)?;
        let end = self
            .occupancy_at
            .get(node as usize + 1)
            .copied()
            .unwrap_or(self.occupancy.len());
        let i = start + local_port as usize * 8 + (prio as usize & 7);
        (i < end).then_some(i)
    }

    /// Doubles the bins' width: each pair of bins becomes one (bytes delivered add up, buffer
    /// peaks take the larger).
    fn coarsen(&mut self) {
        const HALF: usize = BINS / 2;
        let kept = self.flow_bins.iter_mut().filter_map(|s| match s {
            flows::FlowSlot::Kept(v) => Some(v),
            _ => None,
        });
        for v in self.delivered.iter_mut().chain(kept) {
            for k in 0..HALF {
                v[k] = v[2 * k] + v[2 * k + 1];
            }
            v[HALF..].fill(0.0);
        }
        for (v, last_bin, _) in self.occupancy.iter_mut().chain(self.egress.iter_mut()).flatten() {
            for k in 0..HALF {
                v[k] = v[2 * k].max(v[2 * k + 1]);
            }
            v[HALF..].fill(0);
            *last_bin /= 2;
        }
        self.bin_ps *= 2;
        self.recent_bin = (0, 0, 0);
    }

    /// The span the time axis covers: from its start, [`BINS`] bins, and once rendered never
    /// past the run's end.
    pub fn window(&self) -> (Instant, Instant) {
        let bins_end = self.origin_ps + self.bin_ps * BINS as u128;
        (
            Instant::from_ps(self.origin_ps),
            Instant::from_ps(self.end_ps.map_or(bins_end, |e| bins_end.min(e))),
        )
    }

    /// The width of a time bin.
    pub fn bin_width(&self) -> Duration {
        Duration::from_ps(self.bin_ps)
    }

    /// Renders the page (closing pauses still running at `end`) with `report`'s terminal
    /// summary as text and its completed flows' FCT distribution: its plots in page order.
    pub fn render(&mut self, end: Instant, report: &Report) -> String {
        self.close(end);
        // the axis ends at the last change or the run's end, never past it; its unit suits the
        // longest span the page draws (a pathology timeline runs from zero to the end)
        let end_ps = end.as_ps().max(self.origin_ps + 1);
        self.end_ps = Some(end_ps);
        let axis_end = (self.origin_ps + self.bin_ps * BINS as u128).min(end_ps);
        let unit_span = if report.pathology.is_some() {
            end_ps
        } else {
            axis_end - self.origin_ps
        };
        let axis = TimeAxis::new(self.origin_ps, axis_end, unit_span);
        let span = Duration::from_ps(axis_end - self.origin_ps);
        let mut plots = vec![self.topology_plot(report, span), self.throughput_plot(&axis)];
        // 2b. throughput over time of chosen flows
        if let Some(p) = self.flow_plot(report, &axis) {
            plots.push(p);
        }
        plots.push(self.buffer_plot(&axis));
        // 3b. egress queue depth, the cause in view: a line per queue, or a heat map of them,
        // with the ECN marking thresholds
        plots.push(self.egress_plot(&axis));
        plots.push(self.pause_plot(&axis));
        // 5. the QPs' rates, when the run has QPs
        if report.flows.iter().any(|f| f.qp.is_some()) {
            plots.push(
                Plot::new("qp-rate", qp_rate_chart(report, &axis, &self.stops))
                    .heading("Rate of each QP over time (its reaction point's rate, Gb/s)"),
            );
        }
        plots.extend(fct_plots(report));
        if let Some(p) = &report.pathology {
            plots.extend(self.pathology_plots(p, axis.over(0, end_ps)));
        }
        let page = SimPage {
            title: &self.title,
            plots: &plots,
            verdict: report
                .pathology
                .as_ref()
                .and_then(|p| p.verdict.as_ref())
                .map(|v| v.text.as_str()),
            finding: lossless_finding(report, self.summary.top),
            summary: &report.summary_with(&self.summary),
        };
        page.html()
    }

    /// Closes what is still held at `end`: a pause or a buffer level reaches the end of the
    /// axis, and so does every level of a run in which nothing changed.
    fn close(&mut self, end: Instant) {
        let held = self.open.iter().any(Option::is_some)
            || self
                .occupancy
                .iter()
                .chain(&self.egress)
                .flatten()
                .any(|o| o.2 > 0);
        if held || !self.observed {
            // the run's last instant (its end is exclusive: nothing happens at it)
            let end_bin = self.bin(Instant::from_ps(end.as_ps().saturating_sub(1)));
            for (v, last_bin, last) in self.occupancy.iter_mut().chain(self.egress.iter_mut()).flatten() {
                for x in &mut v[(*last_bin + 1).min(end_bin + 1)..=end_bin] {
                    *x = *last;
                }
            }
        }
        for (p, o) in self.open.iter_mut().enumerate() {
            if let Some((from, mask)) = o.take() {
                self.pauses[p].push((from, end, mask));
            }
        }
    }

    /// The topology and the order PFC spread in, the bottlenecks in blue.
    fn topology_plot(&self, report: &Report, span: Duration) -> Plot {
        let spread = self.topology.spread_list(&self.pauses);
        let paused_dirs = self.topology.spread(&self.pauses).len();
        let bottlenecks = self.bottlenecks(report);
        let named: Vec<String> = bottlenecks
            .iter()
            .take(topology::NUMBERED)
            .map(|b| {
                format!(
                    "{} ({:.0} % busy over the flows' active span, its queue up to {} B)",
                    self.port_names[b.port],
                    b.busy * 100.0,
                    b.peak_queue_bytes
                )
            })
            .collect();
        let bottleneck_note = match bottlenecks.len() {
            0 => "No switch port was a bottleneck (busy at least 90 % of the flows' active span with frames waiting in its queue). ".to_string(),
            n if n > named.len() => format!(
                "{n} bottleneck link directions (blue: a switch port busy at least 90 % of the flows' active span with frames waiting in its queue), the {} with the largest queues: {}. ",
                named.len(),
                named.join("; ")
            ),
            _ => format!(
                "Bottleneck (blue: a switch port busy at least 90 % of the flows' active span with frames waiting in its queue): {}. ",
                named.join("; ")
            ),
        };
        let ports: Vec<usize> = bottlenecks.iter().map(|b| b.port).collect();
        Plot {
            id: "topology",
            heading: "Topology (hosts at the bottom, switches above by hops from the hosts): links coloured by the time they were paused, arrows the way PFC spread, bottlenecks in blue".into(),
            caption: bottleneck_note
                + &match paused_dirs {
                    0 => "No link was paused.".to_string(),
                    n if n > spread.len() => format!(
                        "{n} link directions paused; the first {} in the order they first paused (the numbers on the arrows):",
                        spread.len()
                    ),
                    n => format!("{n} link directions paused, in the order they first paused (the numbers on the arrows):"),
                },
            list: spread
                .iter()
                .map(|s| {
                    format!(
                        "{} paused {} at {} ({} in all)",
                        s.from,
                        s.to,
                        s.first.since_epoch(),
                        s.paused
                    )
                })
                .collect(),
            ..Plot::new("", self.topology.draw(&self.pauses, span, &ports))
        }
    }

    /// Delivered throughput per priority: bytes by when they were on the receivers'
    /// links, over each bin's width (the last bin's part before the end).
    fn throughput_plot(&self, axis: &TimeAxis) -> Plot {
        let bin = Duration::from_ps(self.bin_ps);
        let series: Vec<(String, RGBColor, Vec<f64>)> = (0..8)
            .filter(|&p| self.delivered[p].iter().any(|&b| b > 0.0))
            .map(|p| {
                let v = axis_bins(axis, self.bin_ps)
                    .map(|(k, a, b)| self.delivered[p][k] * 8.0 / (b - a) as f64 * 1e3)
                    .collect();
                (format!("priority {p}"), parse_color(COLORS[p]), v)
            })
            .collect();
        let receivers: Vec<Rate> = self
            .received
            .iter()
            .zip(&self.rx_rate)
            .filter(|(r, _)| **r)
            .filter_map(|(_, rate)| *rate)
            .collect();
        let capacity = receivers.iter().map(|r| r.bps() as f64 / 1e9).sum::<f64>();
        let limit = (!receivers.is_empty()).then(|| {
            (
                format!(
                    "line rate of the {} receiving host link(s): {}",
                    receivers.len(),
                    fmt_gbps(capacity)
                ),
                capacity,
            )
        });
        Plot {
            caption: format!(
                "Each frame's bytes count in the bins during which its bits arrived on the receiver's link; each point is the mean over a {bin} bin, summed over the receiving hosts."
            ),
            ..Plot::new(
                "throughput",
                line_chart(
                    &series,
                    axis,
                    self.bin_ps,
                    &format!("Gb/s (mean per {bin} bin)"),
                    &limit.into_iter().collect::<Vec<_>>(),
                ),
            )
            .heading(&format!(
                "Delivered throughput per priority (Gb/s, mean over each {bin} bin)"
            ))
        }
    }

    /// Buffer occupancy: a line per queue, or a heat map of them.
    fn buffer_plot(&self, axis: &TimeAxis) -> Plot {
        let mut occ: Vec<(String, RGBColor, Vec<f64>)> = Vec::new();
        let buffers = self.occupancy.iter().flatten().count();
        for (i, ((node, port, prio), (v, _, _))) in self.buffers().enumerate() {
            if v.iter().all(|&b| b == 0) {
                continue;
            }
            let name = if self.is_switch[node as usize] {
                format!("{} in {} prio {}", self.node_names[node as usize], port, prio)
            } else {
                format!("{} rx backlog", self.node_names[node as usize])
            };
            occ.push((name, distinct(i, buffers), v.iter().map(|&b| b as f64).collect()));
        }
        let any_switch = self.buffers().any(|((n, _, _), _)| self.is_switch[n as usize]);
        let (pfc_limits, pfc_note) = match self.pfc_marks {
            Ok(Some((xoff, xon))) if any_switch => (
                vec![
                    (
                        format!("PFC XOFF: the ingress shared-pool limit, {xoff} B"),
                        xoff as f64,
                    ),
                    (format!("PFC XON: {xon} B"), xon as f64),
                ],
                String::new(),
            ),
            Err(why) if any_switch => (Vec::new(), format!("PFC thresholds not drawn: {why}.")),
            _ => (Vec::new(), String::new()),
        };
        if occ.len() <= heatmap::LINES_MAX {
            Plot {
                caption: pfc_note,
                ..Plot::new(
                    "buffer",
                    line_chart(&occ, axis, self.bin_ps, "bytes", &pfc_limits),
                )
                .heading("Buffer occupancy per ingress port and priority (bytes, peak per bin)")
            }
        } else {
            let total = occ.len();
            let mut rows: Vec<HeatRow> = occ
                .into_iter()
                .map(|(name, _, values)| HeatRow { name, values })
                .collect();
            let dropped = heatmap::cap_rows(&mut rows);
            let max = rows
                .iter()
                .flat_map(|r| r.values.iter().copied())
                .fold(0.0, f64::max);
            let marks: Vec<String> = pfc_limits.iter().map(|l| l.0.clone()).collect();
            Plot {
                caption: format!(
                    "{} {}{}",
                    heat_caption(total, dropped, "buffer that held bytes"),
                    marks.join("; "),
                    pfc_note
                )
                .trim_end()
                .to_string(),
                ..Plot::new(
                    "buffer",
                    heatmap::heat_map(&rows, axis, self.bin_ps, max, "bytes", heatmap::blues),
                )
                .heading("Buffer occupancy heat map: ingress port and priority × time (bytes, peak per bin)")
            }
        }
    }

    /// When ports were paused: a timeline row per port, or a heat map of them.
    fn pause_plot(&self, axis: &TimeAxis) -> Plot {
        let paused_ports = self.pauses.iter().filter(|p| !p.is_empty()).count();
        if paused_ports <= heatmap::LINES_MAX {
            Plot {
                caption: if paused_ports == 0 {
                    "No transmitter was paused by its peer.".into()
                } else {
                    String::new()
                },
                ..Plot::new("pause", self.timeline(axis))
                    .heading("Pause timeline: when each port's transmitter was paused by its peer")
            }
        } else {
            let mut rows = self.pause_rows(axis);
            let dropped = heatmap::cap_rows(&mut rows);
            Plot {
                caption: heat_caption(paused_ports, dropped, "port paused"),
                ..Plot::new(
                    "pause",
                    heatmap::heat_map(&rows, axis, self.bin_ps, 1.0, "paused", topology::heat),
                )
                .heading("Pause heat map: port × time (fraction of each time bin the port's transmitter was paused by its peer)")
            }
        }
    }

    /// Storms and deadlocks over `axis` (from the run's start), the first deadlock cycles,
    /// the victims.
    fn pathology_plots(&self, p: &PathologyReport, axis: TimeAxis) -> Vec<Plot> {
        let mut plots = Vec::new();
        if let Some(drawing) = pathology::timeline(p, &self.stalls, axis) {
            plots.push(Plot::new("pathology", drawing).heading(
                "Storms and deadlocks: receiver stalls, the detector's findings, pfcwd's stormed queues",
            ));
        }
        const CYCLE_IDS: [&str; 4] = ["deadlock-1", "deadlock-2", "deadlock-3", "deadlock-4"];
        let deadlocks = p.detector.iter().flatten().filter(|f| f.kind == "deadlock");
        for (id, f) in CYCLE_IDS.into_iter().zip(deadlocks) {
            plots.push(Plot::new(id, pathology::cycle_diagram(f)).heading(&format!(
                "Deadlock cycle of {} queues (found at {})",
                f.cycle.len(),
                Duration::from_ps(f.detected_at_ps)
            )));
        }
        if let Some(v) = &p.victims {
            plots.push(
                Plot::new("victims", victims::victims_chart(v))
                    .heading("Victims: time each flow was held by PFC, on its own path and off it"),
            );
        }
        plots
    }

    /// The bottleneck link directions, largest queue first: switch ports that sent at least
    /// [`BOTTLENECK_BUSY`] of their line rate over the flows' active span (frames with their
    /// preamble and gap) while a frame waited in their egress queue behind another.
    fn bottlenecks(&self, report: &Report) -> Vec<Bottleneck> {
        let Some(span) = report.active_span.as_ref().filter(|s| s.to_ps > s.from_ps) else {
            return Vec::new();
        };
        let span_s = (span.to_ps - span.from_ps) as f64 / 1e12;
        let mut out: Vec<Bottleneck> = Vec::new();
        // the report's ports come in the simulator's port order (2i at link i's a, 2i + 1 at b)
        for (p, port) in report.ports.iter().enumerate().take(self.port_names.len()) {
            let (me, _) = self.topology_ends(p);
            if !self.is_switch[me as usize] || port.rate_bps == 0 {
                continue;
            }
            let waited = (0..8).any(|q| {
                let i = p * 8 + q;
                self.egress[i]
                    .as_ref()
                    .is_some_and(|s| s.0.iter().any(|&b| b > self.egress_frame[i]))
            });
            if !waited {
                continue;
            }
            // preamble, start delimiter and inter-frame gap: 20 bytes a frame on the wire
            let wire_bits: f64 = port
                .priorities
                .iter()
                .map(|q| (q.tx_bytes + 20 * q.tx_frames) as f64 * 8.0)
                .sum();
            let busy = wire_bits / span_s / port.rate_bps as f64;
            if busy >= BOTTLENECK_BUSY {
                out.push(Bottleneck {
                    port: p,
                    busy: busy.min(1.0),
                    peak_queue_bytes: port
                        .priorities
                        .iter()
                        .map(|q| q.peak_queue_bytes)
                        .max()
                        .unwrap_or(0),
                });
            }
        }
        out.sort_by(|a, b| {
            b.peak_queue_bytes
                .cmp(&a.peak_queue_bytes)
                .then(a.port.cmp(&b.port))
        });
        out
    }

    /// The node of port `p` and its peer.
    fn topology_ends(&self, p: usize) -> (NodeId, NodeId) {
        self.topology.ends(p)
    }

    /// The per-flow throughput section: the flows `--plot-flows` chose (by default the
    /// victims and the flows with the largest slowdown), each a line of its delivered rate per
    /// bin; `None` when no flow was chosen.
    fn flow_plot(&self, report: &Report, axis: &TimeAxis) -> Option<Plot> {
        let slowest = self.summary.top.clamp(1, RATE_LINES_MAX);
        let (picks, what) = match &self.flow_picks {
            Some(p) => (p.clone(), "the flows --plot-flows chose".to_string()),
            None => (
                vec![FlowPick::Victims, FlowPick::Slowest],
                format!(
                    "the victims and the {slowest} flows with the largest FCT slowdown (--plot-flows chooses others)"
                ),
            ),
        };
        let chosen = flows::chosen(report, &picks, slowest);
        if chosen.is_empty() {
            return self.flow_picks.as_ref().map(|_| Plot {
                caption: "--plot-flows chose no flow of this run.".into(),
                ..Plot::new("flow-throughput", Drawing::Svg(String::new()))
                    .heading("Throughput of chosen flows over time")
            });
        }
        let bin = Duration::from_ps(self.bin_ps);
        let mut series = Vec::new();
        let mut not_kept = 0;
        for &i in chosen.iter().take(RATE_LINES_MAX) {
            match self.flow_bins.get(i) {
                Some(flows::FlowSlot::Kept(v)) => {
                    let gbps = axis_bins(axis, self.bin_ps)
                        .map(|(k, a, b)| v[k] * 8.0 / (b - a) as f64 * 1e3)
                        .collect();
                    series.push((
                        report.flows[i].name.clone(),
                        distinct(series.len(), chosen.len().min(RATE_LINES_MAX)),
                        gbps,
                    ));
                }
                Some(flows::FlowSlot::Unseen) | None => {
                    // nothing delivered: a flat line at zero says so
                    let zeros = axis_bins(axis, self.bin_ps).map(|_| 0.0).collect();
                    series.push((
                        report.flows[i].name.clone(),
                        distinct(series.len(), chosen.len().min(RATE_LINES_MAX)),
                        zeros,
                    ));
                }
                Some(flows::FlowSlot::Skipped) => not_kept += 1,
            }
        }
        let mut caption = format!(
            "{} of {what}: each flow's data bytes count in the bins during which their bits arrived at its destination; each point is the mean over a {bin} bin.",
            chosen.len()
        );
        if chosen.len() > RATE_LINES_MAX {
            caption.push_str(&format!(
                " The first {RATE_LINES_MAX} are drawn; {} more not.",
                chosen.len() - RATE_LINES_MAX
            ));
        }
        if not_kept > 0 {
            caption.push_str(&format!(
                " {not_kept} chosen flow(s) not drawn: the report keeps the rates of {MAX_FLOW_SERIES} flows (name them with --plot-flows to keep theirs first)."
            ));
        }
        Some(Plot {
            caption,
            ..Plot::new(
                "flow-throughput",
                line_chart(
                    &series,
                    axis,
                    self.bin_ps,
                    &format!("Gb/s (mean per {bin} bin)"),
                    &[],
                ),
            )
            .heading(&format!(
                "Throughput of chosen flows over time (Gb/s, mean over each {bin} bin)"
            ))
        })
    }

    /// The egress queue depth section: a line per queue that held bytes (a heat map of them
    /// past [`heatmap::LINES_MAX`]), with the ECN marking thresholds (Kmin, Kmax) of the queues
    /// drawn when they share them, else listed.
    fn egress_plot(&self, axis: &TimeAxis) -> Plot {
        let queues: Vec<(usize, &Series)> = self
            .egress
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                s.as_ref()
                    .filter(|s| s.0.iter().any(|&b| b > self.egress_frame[i]))
                    .map(|s| (i, s))
            })
            .collect();
        let used = self.egress.iter().flatten().count();
        let others = match used - queues.len() {
            0 => String::new(),
            n => format!(" {n} other queues that carried frames never held more than the one being sent."),
        };
        let name = |i: usize| format!("{} prio {}", self.port_names[i / 8], i % 8);
        // the marking thresholds of the queues drawn, each distinct pair once
        let mut marks: Vec<(u64, u64)> = queues
            .iter()
            .filter_map(|&(i, _)| {
                let (prios, kmin, kmax) = self.ecn[i / 8]?;
                (prios & (1 << (i % 8)) != 0).then_some((kmin, kmax))
            })
            .collect();
        marks.sort_unstable();
        marks.dedup();
        let listed = |m: &[(u64, u64)]| {
            m.iter()
                .map(|(a, b)| format!("Kmin {a} B, Kmax {b} B"))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let heading = "Egress queue depth per port and priority (bytes, peak per bin): where frames wait, the congestion's cause";
        if queues.is_empty() {
            return Plot {
                caption: format!("No egress queue held a frame waiting behind another.{others}")
                    .trim()
                    .to_string(),
                ..Plot::new("egress", line_chart(&[], axis, self.bin_ps, "bytes", &[])).heading(heading)
            };
        }
        if queues.len() <= heatmap::LINES_MAX {
            let lines: Vec<(String, RGBColor, Vec<f64>)> = queues
                .iter()
                .enumerate()
                .map(|(k, &(i, s))| {
                    (
                        name(i),
                        distinct(k, queues.len()),
                        s.0.iter().map(|&b| b as f64).collect(),
                    )
                })
                .collect();
            let (limits, mut caption) = match marks.as_slice() {
                [] => (Vec::new(), String::new()),
                [(kmin, kmax)] => (
                    vec![
                        (format!("ECN Kmin {kmin} B (marking starts)"), *kmin as f64),
                        (format!("ECN Kmax {kmax} B (every frame marked)"), *kmax as f64),
                    ],
                    String::new(),
                ),
                m => (
                    Vec::new(),
                    format!("ECN thresholds of these queues: {}.", listed(m)),
                ),
            };
            caption = format!("{caption}{others}").trim().to_string();
            return Plot {
                caption,
                ..Plot::new("egress", line_chart(&lines, axis, self.bin_ps, "bytes", &limits))
                    .heading(heading)
            };
        }
        let total = queues.len();
        let mut rows: Vec<HeatRow> = queues
            .iter()
            .map(|&(i, s)| HeatRow {
                name: name(i),
                values: s.0.iter().map(|&b| b as f64).collect(),
            })
            .collect();
        let dropped = heatmap::cap_rows(&mut rows);
        let max = rows
            .iter()
            .flat_map(|r| r.values.iter().copied())
            .fold(0.0, f64::max);
        let mut caption = format!(
            "{}{others}",
            heat_caption(
                total,
                dropped,
                "egress queue that held a frame waiting behind another"
            )
        );
        if !marks.is_empty() {
            caption = format!("{caption} ECN thresholds: {}.", listed(&marks));
        }
        Plot {
            caption,
            ..Plot::new(
                "egress",
                heatmap::heat_map(&rows, axis, self.bin_ps, max, "bytes", heatmap::blues),
            )
            .heading("Egress queue depth heat map: port and priority × time (bytes, peak per bin)")
        }
    }

    /// Per paused port: the fraction of each time bin (of its part before the axis's end) its
    /// transmitter was paused.
    fn pause_rows(&self, axis: &TimeAxis) -> Vec<HeatRow> {
        let bins: Vec<(usize, u128, u128)> = axis_bins(axis, self.bin_ps).collect();
        self.pauses
            .iter()
            .enumerate()
            .filter(|(_, iv)| !iv.is_empty())
            .map(|(p, iv)| {
                let mut v = vec![0.0f64; bins.len()];
                for &(a, b, _) in iv {
                    let (a, b) = (a.as_ps(), b.as_ps());
                    for &(k, lo, hi) in &bins {
                        let (from, to) = (a.max(lo), b.min(hi));
                        if from < to {
                            v[k] += (to - from) as f64 / (hi - lo) as f64;
                        }
                    }
                }
                HeatRow {
                    name: self.port_names[p].clone(),
                    values: v.into_iter().map(|x| x.min(1.0)).collect(),
                }
            })
            .collect()
    }

    fn timeline(&self, axis: &TimeAxis) -> Drawing {
        let rows: Vec<usize> = (0..self.pauses.len())
            .filter(|&p| !self.pauses[p].is_empty())
            .collect();
        let mut svg = String::new();
        let span_x = axis.len();
        let desc = axis.desc();
        let n = rows.len().max(1);
        {
            let height = 60 + 18 * n as u32;
            let root = SVGBackend::with_string(&mut svg, (980, height)).into_drawing_area();
            let names: Vec<String> = rows.iter().map(|&p| self.port_names[p].clone()).collect();
            let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
                root.fill(&WHITE)?;
                let mut chart = ChartBuilder::on(&root)
                    .margin(10)
                    .x_label_area_size(30)
                    .y_label_area_size(170)
                    .build_cartesian_2d(0.0..span_x, 0.0..n as f64)?;
                chart
                    .configure_mesh()
                    .disable_y_mesh()
                    .y_labels(n * 2 + 1)
                    .y_label_formatter(&|y| row_label(&names, *y))
                    .x_desc(&desc)
                    .draw()?;
                let us = |t: Instant| axis.x(t.as_ps());
                for (r, &p) in rows.iter().enumerate() {
                    let y = (n - 1 - r) as f64;
                    chart.draw_series(self.pauses[p].iter().map(|&(a, b, mask)| {
                        let c = parse_color(COLORS[(7 - mask.leading_zeros()) as usize % 8]);
                        let x0 = us(a);
                        let x1 = us(b).max(x0 + span_x / 2000.0);
                        Rectangle::new([(x0, y + 0.15), (x1, y + 0.85)], c.filled())
                    }))?;
                }
                root.present()?;
                Ok(())
            })();
            if let Err(e) = drawn {
                return Drawing::Failed(e.to_string());
            }
        }
        Drawing::Svg(svg)
    }

    /// Writes `DIR/index.html` of [`HtmlReport::render`], creating `DIR` if it is missing
    /// (not its parents); the page is renamed into place only when complete.
    pub fn write(
        &mut self,
        dir: &Path,
        end: Instant,
        report: &Report,
    ) -> Result<std::path::PathBuf, lossless_files::OutputError> {
        let mut all = lossless_files::Commit::new();
        let path = self.stage(dir, end, report, &mut all)?;
        all.commit()?;
        Ok(path)
    }

    /// Writes `DIR/index.html` beside its final name and adds it to `all`, to be put in place
    /// with the run's other outputs; creates `DIR` if it is missing (not its parents).
    pub fn stage(
        &mut self,
        dir: &Path,
        end: Instant,
        report: &Report,
        all: &mut lossless_files::Commit,
    ) -> Result<std::path::PathBuf, lossless_files::OutputError> {
        stage_index(dir, &self.render(end, report), all)
    }

    /// The one file [`HtmlReport::write`] writes in its directory (the plots are inline).
    pub const FILE: &'static str = "index.html";
}

/// The least fraction of its line rate a switch port sent over the flows' active span to be a
/// bottleneck (with frames waiting in its queue).
pub const BOTTLENECK_BUSY: f64 = 0.9;

/// A bottleneck link direction.
struct Bottleneck {
    /// The switch port that sends on it.
    port: usize,
    /// The fraction of its line rate it sent over the flows' active span.
    busy: f64,
    /// Its largest egress queue, bytes.
    peak_queue_bytes: u64,
}

/// The page: `templates/sim-report.html`, HTML-escaped except the plotters SVG.
#[derive(Template)]
#[template(path = "sim-report.html")]
struct SimPage<'a> {
    title: &'a str,
    plots: &'a [Plot],
    /// The detector's verdict, when it ran.
    verdict: Option<&'a str>,
    /// The lossless verdict's headline and its places, when a lossless priority dropped.
    finding: Option<(String, Vec<String>)>,
    summary: &'a str,
}

impl SimPage<'_> {
    /// The page, or a page that says why the template failed.
    fn html(&self) -> String {
        self.render().unwrap_or_else(|e| {
            format!(
                "<!doctype html><html><body><p>template failed: {}</p></body></html>",
                esc(&e.to_string())
            )
        })
    }
}

/// Writes `html` as `DIR/index.html` beside its final name and adds it to `all`, to be put in
/// place with the other outputs; creates `DIR` if it is missing (not its parents).
fn stage_index(
    dir: &Path,
    html: &str,
    all: &mut lossless_files::Commit,
) -> Result<std::path::PathBuf, lossless_files::OutputError> {
    lossless_files::create_output_dir(dir)?;
    let path = dir.join(HtmlReport::FILE);
    let mut f = lossless_files::AtomicFile::create(&path)?;
    f.write_all_named(html.as_bytes())?;
    all.add_file(f)?;
    Ok(path)
}

/// One section of the page.
struct Plot {
    /// The section's `id` (for links and for tests of the page's structure).
    id: &'static str,
    heading: String,
    drawing: Drawing,
    /// Text under the plot (escaped).
    caption: String,
    /// An ordered list under the caption (escaped).
    list: Vec<String>,
    /// A table under the plot, its first row the header (escaped).
    table: Vec<Vec<String>>,
}

impl Plot {
    fn new(id: &'static str, drawing: Drawing) -> Plot {
        Plot {
            id,
            heading: String::new(),
            drawing,
            caption: String::new(),
            list: Vec::new(),
            table: Vec::new(),
        }
    }

    fn heading(mut self, h: &str) -> Plot {
        self.heading = h.to_string();
        self
    }
}

/// What a heat map of `total` rows shows when `dropped` of them did not fit.
fn heat_caption(total: usize, dropped: usize, what: &str) -> String {
    match dropped {
        0 => format!("{total} rows, one per {what}; a heat map rather than {total} lines."),
        d => format!(
            "The {} rows with the highest peaks of {total} (one per {what}; {d} quieter ones not drawn).",
            total - d
        ),
    }
}

/// A plot, or why plotters could not draw it.
enum Drawing {
    /// SVG markup from plotters' SVG backend (which escapes its texts).
    Svg(String),
    /// The drawing error.
    Failed(String),
}

/// The lossless verdict for the top of the page: a headline and at most `top` places.
fn lossless_finding(report: &Report, top: usize) -> Option<(String, Vec<String>)> {
    let v = &report.lossless;
    if !v.dropped() {
        return None;
    }
    let head = format!(
        "{} frame(s) of lossless priorities were dropped at {} place(s).",
        v.dropped_frames,
        v.drops.len()
    );
    let mut list: Vec<String> = v
        .drops
        .iter()
        .take(top)
        .map(|d| {
            let first = d
                .first_ps
                .map(|t| format!(", first at {}", Duration::from_ps(t)))
                .unwrap_or_default();
            format!(
                "{} at {}.{} (from {}) priority {}{first}: {}",
                d.frames, d.node, d.port, d.peer, d.priority, d.why
            )
        })
        .collect();
    if v.drops.len() > top {
        list.push(format!(
            "… {} more places (the JSON lists them all)",
            v.drops.len() - top
        ));
    }
    Some((head, list))
}

/// Escapes text for the last-resort page shown if the template itself fails.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Empirical CDFs of the FCT per priority (log time axis), from the histograms of
/// Flow completion times, when finite flows completed: the CDF per priority and by size.
fn fct_plots(report: &Report) -> Vec<Plot> {
    if report.fct.all.is_none() {
        return Vec::new();
    }
    let cdf = Plot::new("fct", fct_cdf_chart(report))
        .heading("Flow completion time (FCT) CDF per priority (completed finite flows)");
    let by_size = fct_size::by_size(&report.flows);
    let mut by_size_plot = Plot {
        table: fct_size::table(&by_size),
        ..Plot::new("fct-size", fct_size::chart(&by_size))
            .heading("FCT slowdown CDF by flow size (completed finite flows; slowdown = FCT / ideal)")
    };
    by_size_plot.caption = format!(
        "The ideal FCT (\"{}\"): {}.",
        report.fct.ideal_fct,
        IdealFct::from_name(report.fct.ideal_fct)
            .map_or("see the JSON's fct.ideal_fct", IdealFct::definition)
    );
    vec![cdf, by_size_plot]
}

/// [`FctReport::histograms`]: one step per histogram bucket holding flows.
fn fct_cdf_chart(report: &Report) -> Drawing {
    let (_, prio) = FctReport::histograms(&report.flows);
    let us = |ps: u64| ps as f64 / 1e6;
    let series: Vec<(u8, Vec<(f64, f64)>)> = (0..8u8)
        .filter(|&p| !prio[p as usize].is_empty())
        .map(|p| {
            let mut pts = Vec::new();
            let mut below = 0.0;
            for (v, f) in prio[p as usize].fct_cdf() {
                pts.push((us(v), below));
                pts.push((us(v), f));
                below = f;
            }
            (p, pts)
        })
        .collect();
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (lo, hi) = ((lo / 1.5).max(1e-6), (hi * 1.5).max(lo * 2.0).max(2e-6));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (980, 340)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)?;
            chart
                .configure_mesh()
                .x_desc("flow completion time (µs, log scale)")
                .y_desc("fraction of flows")
                .x_label_formatter(&|v| fmt_num(*v))
                .draw()?;
            for (p, pts) in &series {
                let c = parse_color(COLORS[*p as usize]);
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                    .label(format!("priority {p}"))
                    .legend(legend_swatch(c));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}

/// A line chart's legend mark: a short stroke of the series' colour.
fn legend_swatch(c: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
}

/// Most QPs drawn one line each; with more, the chart shows their distribution.
pub const RATE_LINES_MAX: usize = 12;

/// The rate of a step series at `t` (picoseconds): the last step at or before it, while the
/// QP is active (from its first step until `done`, when its flow completed or stopped).
fn rate_at(at: &[u64], bps: &[u64], done: Option<u64>, t: u64) -> Option<u64> {
    if done.is_some_and(|d| t >= d) {
        return None;
    }
    let i = at.partition_point(|&x| x <= t);
    (i > 0).then(|| bps[i - 1])
}

/// The QPs' rates over time: one step line per QP when there are at most
/// [`RATE_LINES_MAX`], else the minimum, 10th percentile, median, 90th percentile and maximum
/// over the QPs active (from their first step until their flow completed or stopped) in
/// each of [`BINS`] time bins of the window `(from, to)`, up to the run's `end`; the
/// percentile lines break where no QP is active.
fn qp_rate_chart(
    report: &Report,
    axis: &TimeAxis,
    stops: &std::collections::HashMap<String, Instant>,
) -> Drawing {
    let ps = |t: Instant| u64::try_from(t.as_ps()).unwrap_or(u64::MAX);
    let from_ps = u64::try_from(axis.origin_ps).unwrap_or(u64::MAX);
    // nothing is drawn past the axis's end (the run's end at the latest)
    let end_ps = u64::try_from(axis.end_ps).unwrap_or(u64::MAX).max(from_ps + 1);
    let span_end = end_ps;
    let us = |t: u64| axis.x(u128::from(t));
    // per QP: its name, rate steps, and when it stopped being active: its flow's completion
    // (its first step is its start), else the flow's stop
    let qps: Vec<(&str, &crate::series::SeriesReport, Option<u64>)> = report
        .flows
        .iter()
        .filter_map(|f| {
            let q = f.qp.as_ref()?;
            let s = &q.rate_series;
            let done = match f.completion_ps {
                Some(c) => s
                    .at_ps
                    .first()
                    .map(|&t0| t0.saturating_add(u64::try_from(c).unwrap_or(u64::MAX))),
                None => stops.get(&f.name).map(|&t| ps(t)),
            };
            Some((f.name.as_str(), s, done))
        })
        .collect();
    let mut series: Vec<XySeries> = Vec::new();
    if qps.len() <= RATE_LINES_MAX {
        for (i, (name, s, done)) in qps.iter().enumerate() {
            let mut pts = Vec::with_capacity(2 * s.at_ps.len() + 1);
            // a line ends where its flow completed
            let last = done.map_or(end_ps, |d| d.min(end_ps));
            for (k, (&t, &r)) in s.at_ps.iter().zip(&s.rate_bps).enumerate() {
                if t > last {
                    break;
                }
                let next = s.at_ps.get(k + 1).copied().unwrap_or(last).clamp(t, last);
                pts.push((us(t), r as f64 / 1e9));
                pts.push((us(next), r as f64 / 1e9));
            }
            series.push((name.to_string(), distinct(i, qps.len()), pts));
        }
    } else {
        let names = ["min", "10th percentile", "median", "90th percentile", "max"];
        let qs = [0.0, 0.1, 0.5, 0.9, 1.0];
        // per percentile, its line's segments (a bin without an active QP breaks them)
        let mut cols: Vec<Vec<Vec<(f64, f64)>>> = (0..5).map(|_| vec![Vec::new()]).collect();
        let mut now: Vec<u64> = Vec::with_capacity(qps.len());
        for b in 0..BINS {
            let t =
                from_ps + ((span_end - from_ps) as u128 * (2 * b as u128 + 1) / (2 * BINS as u128)) as u64;
            if t >= end_ps {
                break;
            }
            now.clear();
            now.extend(
                qps.iter()
                    .filter_map(|(_, s, done)| rate_at(&s.at_ps, &s.rate_bps, *done, t)),
            );
            if now.is_empty() {
                for c in &mut cols {
                    if c.last().is_some_and(|seg| !seg.is_empty()) {
                        c.push(Vec::new());
                    }
                }
                continue;
            }
            now.sort_unstable();
            for (c, q) in cols.iter_mut().zip(qs) {
                let i = ((q * (now.len() - 1) as f64).round() as usize).min(now.len() - 1);
                if let Some(seg) = c.last_mut() {
                    seg.push((us(t), now[i] as f64 / 1e9));
                }
            }
        }
        for (i, (segments, n)) in cols.into_iter().zip(names).enumerate() {
            // the legend names each percentile once, at its first segment
            let mut name = format!("{n} of the active QPs ({} in all)", qps.len());
            for seg in segments.into_iter().filter(|s| !s.is_empty()) {
                series.push((std::mem::take(&mut name), distinct(i, 5), seg));
            }
        }
    }
    xy_chart(&series, axis.len(), &axis.desc(), "Gb/s")
}

/// Lines through (x µs, y) points, drawn by plotters' SVG backend; a series without a name
/// continues the legend entry of the one before it. The legend goes under the plot, where it
/// covers no line (QP rates fill the whole plot, up to its top).
fn xy_chart(series: &[XySeries], span_us: f64, axis: &str, unit: &str) -> Drawing {
    const PLOT_HEIGHT: u32 = 300;
    let mut svg = String::new();
    let max = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.05;
    let named: Vec<(&str, RGBColor)> = series
        .iter()
        .filter(|s| !s.0.is_empty())
        .map(|s| (s.0.as_str(), s.1))
        .collect();
    let legend_height = if named.is_empty() {
        0
    } else {
        LEGEND_LINE * named.len() as u32 + 8
    };
    {
        let root = SVGBackend::with_string(&mut svg, (980, PLOT_HEIGHT + legend_height)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let (plot, legend) = root.split_vertically(PLOT_HEIGHT);
            let mut chart = ChartBuilder::on(&plot)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..span_us.max(1e-6), 0.0..max)?;
            chart
                .configure_mesh()
                .x_desc(axis)
                .y_desc(unit)
                .y_label_formatter(&|v| fmt_num(*v))
                .draw()?;
            for (_, color, pts) in series {
                chart.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?;
            }
            draw_legend(&legend, &named)?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}

/// Height of one line of a chart's legend, pixels.
pub(crate) const LEGEND_LINE: u32 = 16;

/// The legend under a chart: one line per named series, a short stroke of its colour and its
/// name, aligned with the plot's left edge ([`LEGEND_LINE`] high each).
pub(crate) fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, plotters::coord::Shift>,
    named: &[(&str, RGBColor)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let text = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, (name, color)) in named.iter().enumerate() {
        let mid = 4 + (LEGEND_LINE * k as u32) as i32 + LEGEND_LINE as i32 / 2;
        legend.draw(&PathElement::new(
            vec![(80, mid), (96, mid)],
            color.stroke_width(2),
        ))?;
        legend.draw(&Text::new(*name, (102, mid), text.clone()))?;
    }
    Ok(())
}

/// A line chart of per-bin values drawn by plotters' SVG backend (its built-in text metrics,
/// no font files): each value holds over its bin (steps), the bins of `bin_ps` from the axis's
/// start up to its end; `limits` are named levels (a rate no value can exceed, a threshold)
/// drawn as grey lines across the plot.
fn line_chart(
    series: &[(String, RGBColor, Vec<f64>)],
    axis: &TimeAxis,
    bin_ps: u128,
    unit: &str,
    limits: &[(String, f64)],
) -> Drawing {
    let mut svg = String::new();
    let max = series
        .iter()
        .flat_map(|s| s.2.iter().copied())
        .chain(limits.iter().map(|l| l.1))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.05;
    let bins: Vec<(usize, u128, u128)> = axis_bins(axis, bin_ps).collect();
    let span_x = axis.len();
    let desc = axis.desc();
    let height = 300 + 16 * (series.len() + limits.len()) as u32;
    {
        let root = SVGBackend::with_string(&mut svg, (980, height)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..span_x, 0.0..max)?;
            chart
                .configure_mesh()
                .x_desc(&desc)
                .y_desc(unit)
                .y_label_formatter(&|v| fmt_num(*v))
                .draw()?;
            for (k, (name, level)) in limits.iter().enumerate() {
                let grey = LIMIT_GREYS[k % LIMIT_GREYS.len()];
                chart
                    .draw_series(LineSeries::new(
                        [(0.0, *level), (span_x, *level)],
                        grey.stroke_width(2),
                    ))?
                    .label(name.as_str())
                    .legend(legend_swatch(grey));
            }
            for (name, color, v) in series {
                let c = *color;
                chart
                    .draw_series(LineSeries::new(
                        bins.iter()
                            .zip(v)
                            .flat_map(|(&(_, a, b), &y)| [(axis.x(a), y), (axis.x(b), y)]),
                        c.stroke_width(2),
                    ))?
                    .label(name.as_str())
                    .legend(legend_swatch(c));
            }
            if !series.is_empty() || !limits.is_empty() {
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .draw()?;
            }
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}

/// The greys of the levels a line chart marks (the first: a line rate, a lower threshold).
const LIMIT_GREYS: [RGBColor; 3] = [
    RGBColor(136, 136, 136),
    RGBColor(68, 68, 68),
    RGBColor(187, 187, 187),
];

/// The PFC thresholds of the switches' ingress buffers: (XOFF, XON) bytes when every switch
/// has the same static threshold (`None` without switches); else why they cannot be drawn as
/// lines.
fn pfc_marks(config: &SimConfig) -> Result<Option<(u64, u64)>, &'static str> {
    if config.model.buffer != BufferModel::Shared {
        return Err("the buffer model's thresholds are not the shared pool's");
    }
    let mut marks = None;
    for n in &config.nodes {
        let NodeKind::Switch(sw) = &n.kind else {
            continue;
        };
        let Threshold::Static { bytes } = sw.threshold else {
            return Err("the threshold is dynamic (alpha × the free shared pool), so it moves");
        };
        let m = (bytes, bytes.saturating_sub(sw.xon_offset_bytes));
        if marks.is_some_and(|x| x != m) {
            return Err("the switches' thresholds differ");
        }
        marks = Some(m);
    }
    Ok(marks)
}

/// The `i`-th of `n` evenly spaced hues.
fn distinct(i: usize, n: usize) -> RGBColor {
    let (r, g, b) = HSLColor(i as f64 / n.max(1) as f64, 0.75, 0.42).rgb();
    RGBColor(r, g, b)
}

fn parse_color(hex: &str) -> RGBColor {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

/// A rate in Gb/s as people read it ("10 Gb/s", "2.5 Gb/s").
fn fmt_gbps(g: f64) -> String {
    let t = format!("{g:.3}");
    format!("{} Gb/s", t.trim_end_matches('0').trim_end_matches('.'))
}

fn fmt_num(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

/// A level's series after it became `bytes` in bin `b`: the level held since the last change
/// fills the bins in between, and the bin keeps its peak.
fn level_changed((v, last_bin, last): &mut Series, b: usize, bytes: u64) {
    for x in &mut v[(*last_bin + 1).min(b)..b] {
        *x = *last;
    }
    // the level held until now was this bin's too, before it changed
    let held = if *last_bin < b { *last } else { 0 };
    v[b] = v[b].max(bytes).max(held);
    *last_bin = b;
    *last = bytes;
}

impl Observer for HtmlReport {
    const PAUSE_STATE: bool = true;

    fn delivered(&mut self, node: NodeId, frame: &Frame, at: Instant) {
        if !frame.kind.is_data() {
            return; // ACKs, CNPs and CNMs are not throughput
        }
        let last = self.bin(at);
        let bytes = f64::from(frame.len);
        let f = frame.flow as usize;
        let keep = self.keep_flow(f);
        let v = &mut self.delivered[frame.priority as usize & 7];
        // the flow's own bins get the same shares, when they are kept
        let mut fv = match (keep, self.flow_bins.get_mut(f)) {
            (true, Some(flows::FlowSlot::Kept(fv))) => Some(fv),
            _ => None,
        };
        let Some(rate) = self.rx_rate.get(node as usize).copied().flatten() else {
            v[last] += bytes;
            if let Some(fv) = fv {
                fv[last] += bytes;
            }
            return;
        };
        self.received[node as usize] = true;
        // the frame's bits arrived over the time its bytes take at the link's rate, up to `at`
        let t1 = at.as_ps().saturating_sub(self.origin_ps);
        let t0 = t1.saturating_sub(rate.time_for_bytes(u64::from(frame.len)).as_ps());
        if t0 >= last as u128 * self.bin_ps || t0 == t1 {
            v[last] += bytes;
            if let Some(fv) = fv {
                fv[last] += bytes;
            }
            return;
        }
        let whole = (t1 - t0) as f64;
        let mut t = t0;
        while t < t1 {
            let k = (t / self.bin_ps) as usize;
            let edge = ((k as u128 + 1) * self.bin_ps).min(t1);
            let share = bytes * (edge - t) as f64 / whole;
            v[k] += share;
            if let Some(fv) = fv.as_deref_mut() {
                fv[k] += share;
            }
            t = edge;
        }
    }
    fn buffer_changed(&mut self, node: NodeId, local_port: u32, prio: u8, bytes: u64, at: Instant) {
        let Some(i) = self.buffer_slot(node, local_port, prio) else {
            debug_assert!(
                false,
                "a buffer of node {node} port {local_port} not in the configuration"
            );
            return;
        };
        let b = self.bin(at);
        level_changed(
            self.occupancy[i].get_or_insert_with(|| (vec![0; BINS], 0, 0)),
            b,
            bytes,
        );
    }
    fn queue_changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        let i = port as usize * 8 + (prio as usize & 7);
        if i >= self.egress.len() {
            return;
        }
        let b = self.bin(at);
        let s = self.egress[i].get_or_insert_with(|| (vec![0; BINS], 0, 0));
        if s.2 == 0 {
            self.egress_frame[i] = self.egress_frame[i].max(bytes);
        }
        level_changed(s, b, bytes);
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        let p = port as usize;
        if p >= self.open.len() {
            return;
        }
        self.bin(at); // the axis reaches every pause change
        if let Some((from, m)) = self.open[p].take() {
            self.pauses[p].push((from, at, m));
        }
        if mask != 0 {
            self.open[p] = Some((at, mask));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rate_at;
    use super::{BINS, HtmlReport};
    use crate::observer::Observer;
    use lossless_proto::units::Instant;

    #[test]
    fn buffers_are_listed_by_node_port_and_priority_whatever_order_they_change_in() {
        let config = crate::scenario::load("four-bridge", &Default::default()).expect("built-in");
        let ports = |n: u32| config.links.iter().filter(|l| l.a == n || l.b == n).count() as u32;
        let nodes = config.nodes.len() as u32;
        let sw = (0..nodes).find(|&n| ports(n) >= 2).expect("a switch");
        let mut r = HtmlReport::new(&config);
        // every node's last port and priority exist; one past them does not
        let last = (nodes - 1, ports(nodes - 1) - 1, 7u8);
        let changes = [(sw, 1, 3u8), last, (0, 0, 0), (sw, 0, 7), (sw, 1, 0)];
        for (k, &(n, p, q)) in changes.iter().enumerate() {
            r.buffer_changed(n, p, q, 100 + k as u64, Instant::from_ps(1_000));
        }
        let keys: Vec<_> = r.buffers().map(|(k, _)| k).collect();
        let mut want = vec![(0, 0, 0), (sw, 0, 7), (sw, 1, 0), (sw, 1, 3), last];
        want.sort();
        want.dedup();
        assert_eq!(keys, want);
        let (v, _, held) = r.buffers().find(|(k, _)| *k == (sw, 1, 3)).expect("listed").1;
        assert_eq!((v.len(), *held), (BINS, 100));
        assert_eq!(r.buffer_slot(nodes, 0, 0), None, "no such node");
        let ports_of_0 = ports(0);
        assert_eq!(r.buffer_slot(0, ports_of_0, 0), None, "one port past node 0's");
    }

    #[test]
    fn a_qp_counts_in_the_rate_percentiles_from_its_first_step_until_its_flow_completed() {
        let (at, bps) = ([100u64, 200], [50u64, 25]);
        assert_eq!(rate_at(&at, &bps, Some(300), 99), None, "not started");
        assert_eq!(rate_at(&at, &bps, Some(300), 100), Some(50));
        assert_eq!(rate_at(&at, &bps, Some(300), 250), Some(25));
        assert_eq!(
            rate_at(&at, &bps, Some(300), 300),
            None,
            "completed: its last rate is no rate"
        );
        assert_eq!(
            rate_at(&at, &bps, None, 10_000),
            Some(25),
            "an unfinished QP holds its rate"
        );
    }
}
