//! The terminal summary of a [`Report`]: totals first, then the ports, flows and switches. A
//! scenario whose tables fit in [`SummaryOptions::top`] rows reads in full; a larger one (a
//! fabric of hundreds of hosts) shows the top rows by pause time, by peak buffer and by FCT
//! slowdown, and [`SummaryOptions::full`] lists everything. The JSON report is always complete.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use lossless_proto::units::Duration;

use crate::config::model::IdealFct;
use crate::report::{FlowReport, PortReport, PrioReport, Report};
use crate::stats::FctSummary;

/// How much of a large run the summary lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryOptions {
    /// Rows per table cut to its top (port priorities by pause time and by peak buffer, flows
    /// by slowdown, QPs by rate cuts, ECN/QCN ports by marks, switches by peak buffer, DCBX
    /// ports); a table of at most
    /// [`WHOLE_ROWS`] rows (or `top`, if more) is shown whole.
    pub top: usize,
    /// Every row of every table, as a small scenario shows them.
    pub full: bool,
}

/// Rows per table when nothing says otherwise.
pub const DEFAULT_TOP: usize = 10;

/// A table of at most this many rows (one screen) is shown whole, as small scenarios always
/// were.
pub const WHOLE_ROWS: usize = 40;

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            top: DEFAULT_TOP,
            full: false,
        }
    }
}

impl SummaryOptions {
    /// Whether a table of `rows` rows is shown whole.
    pub(crate) fn whole(&self, rows: usize) -> bool {
        self.full || rows <= self.top.max(WHOLE_ROWS)
    }
}

/// Bytes with a binary-free SI unit, for totals ("1.23 MB").
fn bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000 => format!("{:.2} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

/// Largest buffer a port priority held: its egress queue or its ingress charge.
fn peak_buffer(q: &PrioReport) -> u64 {
    q.peak_queue_bytes.max(q.peak_ingress_buffer_bytes)
}

fn port_name(p: &PortReport) -> String {
    format!("{}.{} → {}", p.node, p.port, p.peer)
}

impl Report {
    /// The terminal summary with the default [`SummaryOptions`].
    pub fn summary(&self) -> String {
        self.summary_with(&SummaryOptions::default())
    }

    /// The terminal summary: totals, then ports, flows, FCT, switches, DCBX and the
    /// conservation check, large tables cut to their top rows as `opts` says.
    pub fn summary_with(&self, opts: &SummaryOptions) -> String {
        let mut s = String::new();
        let dur = Duration::from_ps(self.duration_ps);
        let _ = writeln!(
            s,
            "scenario {}  seed {}  simulated {}  events {}",
            self.scenario, self.seed, dur, self.events
        );
        s.push_str(&self.lossless.text(opts.top.max(3)));
        s.push_str(&self.totals_text());
        let _ = writeln!(s);
        s.push_str(&self.ports_text(opts));
        let _ = writeln!(s);
        s.push_str(&self.flows_text(opts));
        s.push_str(&self.cn_summary(opts));
        if let Some(all) = &self.fct.all {
            let _ = writeln!(s);
            s.push_str(&self.fct_table(all));
        }
        let _ = writeln!(s);
        s.push_str(&self.switches_text(opts));
        if self.ports.iter().any(|p| p.dcbx.is_some()) {
            let dcbx: Vec<&PortReport> = self.ports.iter().filter(|p| p.dcbx.is_some()).collect();
            let _ = writeln!(
                s,
                "DCBX (port → peer: mode, peer seen, willing, operational PFC and since when, ETS, LLDP statistics)"
            );
            let shown = if opts.whole(dcbx.len()) {
                dcbx.len()
            } else {
                opts.top
            };
            for p in &dcbx[..shown] {
                if let Some(d) = &p.dcbx {
                    let _ = writeln!(s, "{}", d.line(&port_name(p)));
                }
            }
            if shown < dcbx.len() {
                let _ = writeln!(s, "… {} more DCBX ports (--full lists them)", dcbx.len() - shown);
            }
            let _ = writeln!(s);
        }
        let c = &self.conservation;
        let drops: Vec<String> = c.dropped_frames.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            s,
            "frames: injected {} = delivered {} + queued {} + in flight {} + dropped {} [{}]  {}",
            c.injected_frames,
            c.delivered_frames,
            c.queued_frames,
            c.in_flight_frames,
            c.dropped_frames.values().sum::<u64>(),
            drops.join(" "),
            if c.balanced {
                "✓ conserved"
            } else {
                "✗ NOT CONSERVED"
            }
        );
        if c.misdelivered_frames > 0 {
            let _ = writeln!(
                s,
                "✗ {} delivered frames reached a host other than their destination",
                c.misdelivered_frames
            );
        }
        let _ = writeln!(s, "lossless frames dropped: {}", self.lossless_drops());
        let dcbx_lost: u64 = self
            .ports
            .iter()
            .filter_map(|p| p.dcbx.as_ref())
            .map(|d| d.local_pfc_not_operational_drops_frames)
            .sum();
        if dcbx_lost > 0 {
            let _ = writeln!(
                s,
                "frames of locally PFC-enabled priorities dropped where DCBX left PFC not operational: {dcbx_lost}"
            );
        }
        if let Some(f) = &self.engine_fault {
            let _ = writeln!(s, "ENGINE FAULT (run stopped): {f}");
        }
        if let Some(p) = &self.pathology {
            s.push_str(&p.summary());
        }
        if let Some(e) = &self.link_errors {
            s.push_str(&crate::report::link_errors::summary(e));
        }
        s
    }

    /// The totals block: the fabric, the flows, how much pausing there was and where the
    /// buffer peaked.
    fn totals_text(&self) -> String {
        let mut s = String::new();
        let rows = || {
            self.ports
                .iter()
                .flat_map(|p| p.priorities.iter().map(move |q| (p, q)))
        };
        let paused = rows().filter(|(_, q)| q.paused_ps > 0).count();
        let longest = rows()
            .filter(|(_, q)| q.paused_ps > 0)
            .max_by_key(|(_, q)| q.paused_ps)
            .map(|(p, q)| {
                format!(
                    ", longest {} at {} pri {}",
                    Duration::from_ps(q.paused_ps),
                    port_name(p),
                    q.priority
                )
            })
            .unwrap_or_default();
        let xoff: u64 = rows().map(|(_, q)| q.pfc_xoff_sent_frames).sum();
        let pause_xoff: u64 = self.ports.iter().map(|p| p.pause_xoff_sent_frames).sum();
        let finite = self.flows.iter().filter(|f| f.fct_ideal_ps.is_some()).count();
        let done = self.flows.iter().filter(|f| f.completion_ps.is_some()).count();
        let _ = writeln!(
            s,
            "totals: {} hosts, {} switch(es), {} ports; {} flows ({} finite, {} completed)",
            self.hosts.len(),
            self.switches.len(),
            self.ports.len(),
            self.flows.len(),
            finite,
            done
        );
        let _ = writeln!(
            s,
            "        {paused} of {} active port priorities paused{longest}; XOFF sent: PFC {xoff}, PAUSE {pause_xoff}; lossless frames dropped {}",
            rows().count(),
            self.lossless_drops()
        );
        if let Some(sw) = self.switches.iter().max_by_key(|s| s.peak_buffer_bytes) {
            let _ = writeln!(
                s,
                "        switch buffer peak {} of {} at {}",
                bytes(sw.peak_buffer_bytes),
                bytes(sw.buffer_bytes),
                sw.name
            );
        }
        s
    }

    /// The port × priority table: whole when it fits, else the top rows by pause time and by
    /// peak buffer.
    fn ports_text(&self, opts: &SummaryOptions) -> String {
        let mut s = String::new();
        let all: Vec<(&PortReport, &PrioReport)> = self
            .ports
            .iter()
            .flat_map(|p| p.priorities.iter().map(move |q| (p, q)))
            .collect();
        let link_pause_rows = self.ports.iter().filter(|p| link_pause_frames(p) > 0).count();
        let active = self.active_span.map(|a| a.len_ps()).filter(|&a| a > 0);
        if opts.whole(all.len() + link_pause_rows) {
            s.push_str(&port_header());
            for p in &self.ports {
                if link_pause_frames(p) > 0 {
                    s.push_str(&link_pause_row(p));
                }
                for q in &p.priorities {
                    s.push_str(&prio_row(p, q, active));
                }
            }
        } else {
            let mut by_pause: Vec<&(&PortReport, &PrioReport)> =
                all.iter().filter(|(_, q)| q.paused_ps > 0).collect();
            by_pause.sort_by_key(|b| std::cmp::Reverse(b.1.paused_ps));
            if by_pause.is_empty() {
                let _ = writeln!(s, "no port priority was paused ({} active)", all.len());
            } else {
                let _ = writeln!(
                    s,
                    "top {} port priorities by time paused (of {} paused, {} active; --full lists all)",
                    by_pause.len().min(opts.top),
                    by_pause.len(),
                    all.len()
                );
                s.push_str(&ranked_rows(&by_pause[..by_pause.len().min(opts.top)], active));
            }
            let mut by_buffer: Vec<&(&PortReport, &PrioReport)> =
                all.iter().filter(|(_, q)| peak_buffer(q) > 0).collect();
            by_buffer.sort_by_key(|b| std::cmp::Reverse(peak_buffer(b.1)));
            let _ = writeln!(
                s,
                "top {} port priorities by peak buffer (egress queue or ingress charge; of {} that held any)",
                by_buffer.len().min(opts.top),
                by_buffer.len()
            );
            s.push_str(&ranked_rows(&by_buffer[..by_buffer.len().min(opts.top)], active));
        }
        let _ = writeln!(
            s,
            "(* = lossless priority; tx/rx Gb/s = mean over the whole run, {}; tx active = mean over the flows' active span, {}; paused = time this port's transmitter was paused in the run)",
            Duration::from_ps(self.duration_ps),
            self.active_span.map_or("none (no flows)".into(), |a| format!(
                "{} to {}, {} (first flow start to last completion or the end)",
                Duration::from_ps(a.from_ps),
                Duration::from_ps(a.to_ps),
                Duration::from_ps(a.len_ps())
            ))
        );
        s
    }

    /// The flow table: whole when it fits, else the top flows by FCT slowdown.
    fn flows_text(&self, opts: &SummaryOptions) -> String {
        let mut s = String::new();
        // a twin run without congestion notification adds each flow's throughput there
        let twin = self.flows.iter().any(|f| f.throughput_without_cn_bps.is_some());
        let header = format!(
            "{:<20} {:<10} {:<10} {:>3} {:>10} {:>10} {:>9} {:>12} {:>9}{}\n",
            "flow",
            "src",
            "dst",
            "pri",
            "offer Gb/s",
            "got Gb/s",
            "dropped",
            "completion",
            "slowdown",
            if twin { "  w/o CN Gb/s" } else { "" }
        );
        if opts.whole(self.flows.len()) {
            s.push_str(&header);
            for f in &self.flows {
                s.push_str(&flow_row(f));
            }
            s.push_str(FLOW_NOTE);
            return s;
        }
        let mut slowest: Vec<&FlowReport> = self
            .flows
            .iter()
            .filter(|f| f.fct_slowdown_ratio.is_some())
            .collect();
        // largest slowdown first; equal ones in the report's order (the sort is stable)
        slowest.sort_by(|a, b| {
            b.fct_slowdown_ratio
                .partial_cmp(&a.fct_slowdown_ratio)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let unfinished = self
            .flows
            .iter()
            .filter(|f| f.fct_ideal_ps.is_some() && f.completion_ps.is_none())
            .count();
        if slowest.is_empty() {
            let _ = writeln!(
                s,
                "first {} of {} flows (none completed; --full lists all)",
                opts.top,
                self.flows.len()
            );
            s.push_str(&header);
            for f in self.flows.iter().take(opts.top) {
                s.push_str(&flow_row(f));
            }
            s.push_str(FLOW_NOTE);
            return s;
        }
        let _ = writeln!(
            s,
            "top {} flows by FCT slowdown (of {} flows: {} completed, {unfinished} finite ones unfinished; --full lists all)",
            slowest.len().min(opts.top),
            self.flows.len(),
            slowest.len()
        );
        s.push_str(&header);
        for f in slowest.iter().take(opts.top) {
            s.push_str(&flow_row(f));
        }
        s.push_str(FLOW_NOTE);
        s
    }

    /// One line per switch: whole when they fit, else the top by peak buffer.
    fn switches_text(&self, opts: &SummaryOptions) -> String {
        let mut s = String::new();
        let mut rows: Vec<_> = self.switches.iter().collect();
        if !opts.whole(rows.len()) {
            rows.sort_by_key(|sw| std::cmp::Reverse(sw.peak_buffer_bytes));
            let _ = writeln!(
                s,
                "top {} of {} switches by peak buffer (--full lists all)",
                opts.top,
                rows.len()
            );
            rows.truncate(opts.top);
        }
        for sw in rows {
            let _ = writeln!(
                s,
                "switch {:<12} buffer {} B, peak {} B",
                sw.name, sw.buffer_bytes, sw.peak_buffer_bytes
            );
        }
        s
    }

    /// The FCT table of the terminal summary: one row overall, one per priority.
    fn fct_table(&self, all: &FctSummary) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<8} {:>7} {:>11} {:>11} {:>11} {:>11}  {:>8} {:>8} {:>8} {:>8}",
            "FCT pri", "flows", "p50", "p99", "p99.9", "max", "slow p50", "p99", "p99.9", "max"
        );
        let rows = std::iter::once(("all".to_string(), all)).chain(
            self.fct
                .priorities
                .iter()
                .map(|p| (p.priority.to_string(), &p.fct)),
        );
        for (name, f) in rows {
            let d = |ps: u64| Duration::from_ps(u128::from(ps)).to_string();
            let _ = writeln!(
                s,
                "{:<8} {:>7} {:>11} {:>11} {:>11} {:>11}  {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
                name,
                f.flows_completed_total,
                d(f.fct_p50_ps),
                d(f.fct_p99_ps),
                d(f.fct_p999_ps),
                d(f.fct_max_ps),
                f.fct_slowdown_p50_ratio,
                f.fct_slowdown_p99_ratio,
                f.fct_slowdown_p999_ratio,
                f.fct_slowdown_max_ratio
            );
        }
        let _ = writeln!(
            s,
            "(FCT = flow start to last delivery, or a QP's last ACK back; slowdown = FCT / {}{})",
            ideal_definition(self.fct.ideal_fct),
            match self.fct.flows_unfinished_total {
                0 => String::new(),
                n => format!("; {n} finite flows unfinished, not counted"),
            }
        );
        s
    }
}

/// What the flow table's rates are over.
const FLOW_NOTE: &str = "(offer = the flow's configured load while active; got = delivered over the flow's own span, its start to its completion, stop or the run's end)\n";

/// What slowdowns divide by, from the JSON's `fct.ideal_fct` name.
fn ideal_definition(name: &str) -> &'static str {
    IdealFct::from_name(name).map_or("the ideal FCT", IdealFct::definition)
}

/// PAUSE frames a port sent and received.
fn link_pause_frames(p: &PortReport) -> u64 {
    p.pause_xoff_sent_frames
        + p.pause_xon_sent_frames
        + p.pause_xoff_received_frames
        + p.pause_xon_received_frames
}

fn port_header() -> String {
    format!(
        "{:<22} {:>3} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6} {:>11} {:>10} {:>10}  drops\n",
        "port → peer",
        "pri",
        "tx Gb/s",
        "rx Gb/s",
        "tx active",
        "xoffTx",
        "xonTx",
        "xoffRx",
        "xonRx",
        "paused",
        "peakQ B",
        "peakIn B"
    )
}

/// The header and `rows`, each port's link PAUSE row (if any) before its first row shown;
/// `active` is the flows' active span (ps) the "tx active" column divides by.
fn ranked_rows(rows: &[&(&PortReport, &PrioReport)], active: Option<u128>) -> String {
    let mut s = port_header();
    let mut shown = BTreeSet::new();
    for (p, q) in rows {
        if link_pause_frames(p) > 0 && shown.insert((p.node.as_str(), p.port)) {
            s.push_str(&link_pause_row(p));
        }
        s.push_str(&prio_row(p, q, active));
    }
    s
}

fn link_pause_row(p: &PortReport) -> String {
    format!(
        "{:<22} {:>3} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6}   (link PAUSE)\n",
        port_name(p),
        "all",
        "",
        "",
        "",
        p.pause_xoff_sent_frames,
        p.pause_xon_sent_frames,
        p.pause_xoff_received_frames,
        p.pause_xon_received_frames
    )
}

/// The rate of `bytes` over `span_ps`, Gb/s.
fn gbps_over(bytes: u64, span_ps: u128) -> f64 {
    if span_ps == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 / (span_ps as f64 / 1e12) / 1e9
}

fn prio_row(p: &PortReport, q: &PrioReport, active: Option<u128>) -> String {
    let drops: Vec<String> = q.drops_frames.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let tx_active = active.map_or("-".into(), |a| format!("{:.3}", gbps_over(q.tx_bytes, a)));
    format!(
        "{:<22} {:>2}{} {:>9.3} {:>9.3} {:>9} {:>6} {:>6} {:>6} {:>6} {:>11} {:>10} {:>10}  {}\n",
        port_name(p),
        q.priority,
        if q.lossless { "*" } else { " " },
        q.tx_throughput_bps as f64 / 1e9,
        q.rx_throughput_bps as f64 / 1e9,
        tx_active,
        q.pfc_xoff_sent_frames,
        q.pfc_xon_sent_frames,
        q.pfc_xoff_received_frames,
        q.pfc_xon_received_frames,
        Duration::from_ps(q.paused_ps).to_string(),
        q.peak_queue_bytes,
        q.peak_ingress_buffer_bytes,
        drops.join(" ")
    )
}

fn flow_row(f: &FlowReport) -> String {
    let c = f
        .completion_ps
        .map(|c| Duration::from_ps(c).to_string())
        .unwrap_or_else(|| "-".into());
    let slow = f
        .fct_slowdown_ratio
        .map(|r| format!("{r:.3}"))
        .unwrap_or_else(|| "-".into());
    let without = f
        .throughput_without_cn_bps
        .map(|b| format!("  {:>11.3}", b as f64 / 1e9))
        .unwrap_or_default();
    format!(
        "{:<20} {:<10} {:<10} {:>3} {:>10.3} {:>10.3} {:>9} {:>12} {:>9}{}\n",
        f.name,
        f.src,
        f.dst,
        f.priority,
        f.offered_bps as f64 / 1e9,
        f.throughput_bps as f64 / 1e9,
        f.dropped_frames,
        c,
        slow,
        without
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulator;
    use crate::scenario::{Overrides, load};

    fn run(name: &str, set: &[&str]) -> Report {
        let ov = Overrides {
            set: set.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let mut sim = Simulator::new(load(name, &ov).expect("loads")).expect("builds");
        sim.run();
        Report::collect(&sim)
    }

    /// Rows of the port table: lines naming a port ("node.N → peer").
    fn port_rows(text: &str) -> Vec<&str> {
        text.lines()
            .filter(|l| {
                l.contains(".") && l.contains(" → ") && !l.starts_with("totals") && !l.starts_with("        ")
            })
            .collect()
    }

    #[test]
    fn a_small_run_lists_every_port_priority_and_flow_as_before() {
        let r = run("four-bridge", &["duration=\"200us\""]);
        let rows: usize = r.ports.iter().map(|p| p.priorities.len()).sum();
        assert!(
            rows > DEFAULT_TOP && rows <= WHOLE_ROWS,
            "four-bridge has {rows} rows"
        );
        let text = r.summary();
        assert!(text.starts_with("scenario four-bridge"));
        assert!(text.contains("totals: "), "{text}");
        assert!(!text.contains("--full"), "nothing cut: {text}");
        for p in &r.ports {
            for q in &p.priorities {
                let row = format!("{:<22} {:>2}", port_name(p), q.priority);
                assert!(text.contains(&row), "missing {row}: {text}");
            }
        }
        for f in &r.flows {
            assert!(text.contains(&f.name), "missing flow {}", f.name);
        }
    }

    #[test]
    fn a_large_run_shows_the_top_rows_by_pause_buffer_and_slowdown_and_full_shows_all() {
        let r = run("incast", &["senders=48"]); // 98 port priorities, 48 flows: more than WHOLE_ROWS
        let opts = SummaryOptions { top: 5, full: false };
        let text = r.summary_with(&opts);
        // totals come first, before any table
        let totals =
            text.find("totals: 49 hosts, 1 switch(es), 98 ports; 48 flows (48 finite, 48 completed)");
        assert!(
            totals.is_some_and(|t| t < text.find("port → peer").unwrap()),
            "{text}"
        );
        // the pause table: the five longest paused, longest first
        let mut paused: Vec<u128> = r
            .ports
            .iter()
            .flat_map(|p| &p.priorities)
            .map(|q| q.paused_ps)
            .filter(|&p| p > 0)
            .collect();
        paused.sort_unstable_by(|a, b| b.cmp(a));
        let section = |head: &str| -> Vec<String> {
            let from = text.find(head).unwrap_or_else(|| panic!("no {head}: {text}"));
            text[from..]
                .lines()
                .skip(2)
                .take_while(|l| !l.is_empty() && !l.starts_with("top ") && !l.starts_with('('))
                .map(str::to_string)
                .collect()
        };
        let pause_rows = section("top 5 port priorities by time paused");
        assert_eq!(pause_rows.len(), 5, "{text}");
        for (row, want) in pause_rows.iter().zip(&paused) {
            assert!(
                row.contains(&Duration::from_ps(*want).to_string()),
                "{row} should show {want} ps"
            );
        }
        // the buffer table starts with the congested egress queue toward the receiver
        let buffer_rows = section("top 5 port priorities by peak buffer");
        assert_eq!(buffer_rows.len(), 5);
        assert!(
            buffer_rows[0].starts_with("tor.48 → receiver"),
            "{}",
            buffer_rows[0]
        );
        // five flows, largest slowdown first
        let mut slow: Vec<f64> = r.flows.iter().filter_map(|f| f.fct_slowdown_ratio).collect();
        slow.sort_by(|a, b| b.total_cmp(a));
        let flows = section("top 5 flows by FCT slowdown");
        assert_eq!(flows.len(), 5, "{text}");
        assert!(flows[0].ends_with(&format!("{:.3}", slow[0])), "{}", flows[0]);
        assert!(flows[4].ends_with(&format!("{:.3}", slow[4])), "{}", flows[4]);
        // --full: every port priority and every flow
        let full = r.summary_with(&SummaryOptions { top: 5, full: true });
        let rows: usize = r.ports.iter().map(|p| p.priorities.len()).sum();
        assert_eq!(port_rows(&full).len(), rows, "{full}");
        assert!(r.flows.iter().all(|f| full.contains(&format!("{:<20} ", f.name))));
        assert_eq!(port_rows(&text).len(), 10, "{text}");
    }

    #[test]
    fn a_run_of_many_qps_shows_the_top_qps_by_rate_cuts_and_the_top_marking_ports() {
        let mut r = run("incast-dcqcn", &["senders=48", "duration=\"300us\""]);
        let qps = r.flows.iter().filter(|f| f.qp.is_some()).count();
        assert!(qps > WHOLE_ROWS, "{qps} QPs");
        // the section's rows: QP rows start with a flow name, port rows with a port
        let rows_after = |text: &str, head: &str| -> Vec<String> {
            let from = text.find(head).unwrap_or_else(|| panic!("no {head}: {text}"));
            text[from..]
                .lines()
                .skip(2)
                .take_while(|l| !l.starts_with("top ") && !l.starts_with("CN:") && !l.starts_with("ECN/QCN"))
                .map(str::to_string)
                .collect()
        };
        let opts = SummaryOptions { top: 5, full: false };
        let text = r.summary_with(&opts);
        let rows = rows_after(&text, &format!("top 5 of {qps} QPs by rate cuts"));
        assert_eq!(rows.len(), 5, "{text}");
        let mut cuts: Vec<u64> = r
            .flows
            .iter()
            .filter_map(|f| f.qp.as_ref())
            .map(|q| q.rate_decreases_total)
            .collect();
        cuts.sort_unstable_by(|a, b| b.cmp(a));
        assert!(cuts[0] > 0, "DCQCN cut some rate: {cuts:?}");
        for (row, want) in rows.iter().zip(&cuts) {
            let shown: u64 = row.split_whitespace().nth(4).unwrap().parse().unwrap();
            assert_eq!(shown, *want, "{row}");
        }
        // --full lists every QP, in flow order
        let full = r.summary_with(&SummaryOptions { top: 5, full: true });
        assert!(!full.contains("QPs by rate cuts"), "{full}");
        for f in r.flows.iter().filter(|f| f.qp.is_some()) {
            assert!(full.contains(&format!("{:<20} dcqcn", f.name)), "{}", f.name);
        }
        // more marking port priorities than a screen: the top ones by marks, with the count
        let (i, marker) = r
            .ports
            .iter()
            .enumerate()
            .find(|(_, p)| {
                p.cn.as_ref()
                    .is_some_and(|c| c.priorities.iter().any(|q| q.ecn_marked_frames > 0))
            })
            .map(|(i, p)| (i, p.clone()))
            .expect("a marking port");
        for k in 0..45u64 {
            let mut p = marker.clone();
            p.port = 1000 + k as u32;
            for q in &mut p.cn.as_mut().unwrap().priorities {
                q.ecn_marked_frames = 1 + k;
            }
            r.ports.insert(i + 1, p);
        }
        let text = r.summary_with(&opts);
        let ports = rows_after(&text, "top 5 of 46 marking port priorities by frames CE-marked");
        assert_eq!(ports.len(), 5, "{text}");
        let marked = |row: &str| -> u64 { row.split_whitespace().nth(4).unwrap().parse().unwrap() };
        let want = marker
            .cn
            .as_ref()
            .unwrap()
            .priorities
            .iter()
            .map(|q| q.ecn_marked_frames)
            .max()
            .unwrap()
            .max(45);
        assert_eq!(marked(&ports[0]), want, "{}", ports[0]);
        assert!(
            ports.windows(2).all(|w| marked(&w[0]) >= marked(&w[1])),
            "{ports:?}"
        );
    }

    #[test]
    fn port_rates_say_they_are_whole_run_means_with_the_active_span_rate_beside_them() {
        // 32 senders saturate the 100 Gb/s link to the receiver for 2.6 ms of a 6 ms run: 43
        // Gb/s over the run, nearly 100 over the time the flows were active
        let r = run("incast", &["senders=32"]);
        let text = r.summary_with(&SummaryOptions { top: 3, full: false });
        let row = text
            .lines()
            .find(|l| l.starts_with("tor.32 → receiver"))
            .unwrap_or_else(|| panic!("{text}"));
        let cols: Vec<f64> = row
            .split_whitespace()
            .skip(4)
            .take(3)
            .map(|c| c.parse().unwrap())
            .collect();
        assert!(cols[0] < 50.0, "whole-run mean: {row}");
        assert!((95.0..=100.0).contains(&cols[2]), "active-span mean: {row}");
        let span = r.active_span.expect("flows");
        assert_eq!(span.from_ps, 0);
        assert!(span.to_ps < r.duration_ps / 2, "{span:?}");
        assert!(text.contains("tx/rx Gb/s = mean over the whole run, 6 ms; tx active = mean over the flows' active span, 0 ps to "), "{text}");
        assert!(
            text.contains("got = delivered over the flow's own span"),
            "{text}"
        );
    }

    #[test]
    fn times_summed_over_hops_or_port_priorities_say_so() {
        // four-bridge's victim is blocked at two hops: the sum is longer than the hops' times
        let r = run("four-bridge", &["duration=\"1ms\""]);
        let text = r.summary();
        assert!(text.contains("Σ blocked"), "{text}");
        assert!(
            text.contains("summed over the hops of its path, so it may exceed the run"),
            "{text}"
        );
        // the comparison with the run without CN sums the pause times of every port priority
        let c = load("incast-dcqcn", &Overrides::default()).expect("loads");
        let off = crate::experiments::cn_twin::cn_off(&c).expect("has CN");
        let mut with = Simulator::new(c).expect("builds");
        with.run();
        let mut without = Simulator::new(off).expect("builds");
        without.run();
        let mut r = Report::collect(&with);
        r.compare_with_cn_off(&Report::collect(&without));
        let text = r.summary();
        let line = text
            .lines()
            .find(|l| l.starts_with("PFC with CN"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            line.contains("paused (summed over every port priority) "),
            "{line}"
        );
    }
}
