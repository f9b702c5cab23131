//! The HTML report is self-contained (inline SVG, no scripts, no network) and shows the
//! four-bridge story: the topology with the order PFC spread in, pauses on every client
//! uplink, buffers filling, throughput per priority, its victim; with finite flows it adds
//! their completion-time CDF and the slowdown by flow size; with the pathology parts, a
//! timeline of stalls, storms, deadlocks and pfcwd, and each deadlock's cycle; hostile names
//! are escaped. (The 320-host fabric in a headless browser: tests/html_browser.rs.)

mod common;

use lossless_proto::units::{Duration, Instant};
use lossless_sim::config::SimConfig;
use lossless_sim::trace::html::HtmlReport;
use lossless_sim::{Report, Simulator};

/// Runs `c` with the HTML sink; the page and the report.
fn page(c: SimConfig) -> (String, Report) {
    let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c)).unwrap();
    sim.run();
    let report = Report::collect(&sim);
    let end = sim.now();
    let html = sim.observer_mut().render(end, &report);
    (html, report)
}

/// The `id`s of the page's sections, in order.
fn sections(html: &str) -> Vec<&str> {
    html.split("<section id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect()
}

/// No script and no address but the SVG namespace: the page opens with no network.
fn self_contained(html: &str) -> bool {
    !html.contains("<script")
        && html.matches("http://").count() == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        && !html.contains("https://")
        && !html.contains("<link")
        && !html.contains("@import")
        && !html.contains("url(")
}

#[test]
fn the_report_has_seven_plots_a_spread_order_a_pause_row_for_every_client_uplink_and_the_victim() {
    let c = common::load("four-bridge", &[], Some(Duration::from_us(300)));
    let (html, report) = page(c);
    assert_eq!(html.matches("<svg").count(), 7);
    assert_eq!(
        sections(&html),
        [
            "topology",
            "throughput",
            "flow-throughput",
            "buffer",
            "egress",
            "pause",
            "victims"
        ]
    );
    assert!(!html.contains("No transmitter was paused by its peer."));
    // the spreading list: bridge4 (the congested switch) pauses first, then hop by hop back
    let list = html
        .split("<section id=\"topology\">")
        .nth(1)
        .unwrap()
        .split("</ol>")
        .next()
        .unwrap();
    let first = list.split("<li>").nth(1).expect("a spread list");
    assert!(first.starts_with("bridge4 paused bridge"), "{first}");
    for i in 1..=3 {
        assert!(
            list.contains(&format!("bridge{i} paused client{i}")),
            "client{i}: {list}"
        );
    }
    assert!(self_contained(&html));
    for i in 1..=3 {
        assert!(
            html.contains(&format!("client{i}.0 → bridge{i}")),
            "no pause row for client{i}"
        );
    }
    assert!(html.contains("priority 3") && html.contains("bridge4 in"));
    assert!(html.contains("lossless frames dropped: 0"));
    // endless flows: no FCT plot
    assert!(report.fct.all.is_none() && !html.contains("Flow completion time"));
    // the victims plot: one bar per blocked flow, the victim marked, the lossy flows absent
    let victims = section(&html, "Victims:");
    assert!(victims.contains(&text("victim (victim)")), "{victims}");
    for i in 1..=3 {
        assert!(victims.contains(&text(&format!("lossless:client{i}"))));
        assert!(!victims.contains(&format!("lossy:client{i}")));
    }
    // four-bridge has no stall, detector, pfcwd or event: no timeline, no verdict
    assert!(!html.contains("Storms and deadlocks") && !html.contains("Verdict"));
}

/// A text element of plotters' SVG as it writes it (the text on a line of its own).
fn text(s: &str) -> String {
    format!("\n{s}\n")
}

/// The section of the page under the heading that starts with `heading`.
fn section<'a>(html: &'a str, heading: &str) -> &'a str {
    let from = html
        .find(&format!("<h2>{heading}"))
        .unwrap_or_else(|| panic!("no section {heading}"));
    let rest = &html[from + 4..];
    &rest[..rest.find("<h2>").unwrap_or(rest.len())]
}

#[test]
fn a_deadlock_adds_its_timeline_and_its_cycle_drawn_queue_by_queue() {
    let c = common::load("deadlock-ring", &[], None);
    let (html, report) = page(c);
    assert!(self_contained(&html));
    let found = &report.pathology.as_ref().unwrap().detector.as_ref().unwrap()[0];
    assert_eq!(found.kind, "deadlock");
    // the detector's verdict under the title
    assert!(html.contains("</h1>\n<p><b>Verdict:</b> DEADLOCK: 1 cycle found; the first, cycle "));
    // 5 usual plots (no victims in the ring), the timeline, the cycle
    assert_eq!(html.matches("<svg").count(), 7);
    assert_eq!(
        sections(&html),
        [
            "topology",
            "throughput",
            "buffer",
            "egress",
            "pause",
            "pathology",
            "deadlock-1"
        ]
    );
    let timeline = section(&html, "Storms and deadlocks");
    assert!(timeline.contains(&text("deadlock of 3 queues")), "{timeline}");
    assert!(timeline.contains(&text("deadlock: formed → gone")));
    // the run ended at the finding: the timeline's axis is in µs, not the 100 ms configured
    assert!(timeline.contains("time (µs)"));
    let cycle = section(&html, "Deadlock cycle of 3 queues (found at 600 µs)");
    for q in ["swA.1:3", "swB.2:3", "swC.2:3"] {
        assert_eq!(cycle.matches(&text(q)).count(), 1, "{q} in {cycle}");
    }
    // one arrow head per queue, one circle per queue
    assert_eq!(cycle.matches("<polygon").count(), 3);
    assert_eq!(cycle.matches("<circle").count(), 3);
    assert!(cycle.contains("formed 400 µs, found 600 µs, still there at the end; 3 flows stuck: a, b, c"));
}

#[test]
fn a_storm_under_pfcwd_shows_the_stall_the_storm_and_each_stormed_queue() {
    let c = common::load("storm-pfcwd", &[], Some(Duration::from_ms(450)));
    let (html, report) = page(c);
    assert!(self_contained(&html));
    let p = report.pathology.as_ref().unwrap();
    let timeline = section(&html, "Storms and deadlocks");
    assert!(timeline.contains(&text("stalled rx stalled")), "{timeline}");
    assert!(timeline.contains(&text("storm from stalled")));
    // one row per queue pfcwd declared stormed, and no other
    let stormed: Vec<String> = p
        .pfcwd
        .iter()
        .filter(|q| !q.storms.is_empty())
        .map(|q| {
            text(&format!(
                "pfcwd {}.{}:{} → {}",
                q.switch, q.port, q.priority, q.peer
            ))
        })
        .collect();
    assert!(stormed.len() >= 6, "{stormed:?}");
    assert!(stormed.contains(&text("pfcwd leaf1.0:3 → stalled")));
    for s in &stormed {
        assert!(timeline.contains(s.as_str()), "{s}");
    }
    assert_eq!(timeline.matches("\npfcwd ").count(), stormed.len());
    assert!(timeline.contains(&text("pfcwd: stormed → restored")) && timeline.contains("time (ms)"));
    // a storm is no cycle: no cycle diagram
    assert!(!html.contains("Deadlock cycle"));
}

#[test]
fn completed_flows_add_an_fct_cdf_plot_a_slowdown_by_size_plot_and_their_fct_table() {
    let c = common::load("incast", &["senders=4"], None);
    let (html, report) = page(c);
    assert_eq!(report.fct.all.as_ref().unwrap().flows_completed_total, 4);
    assert_eq!(html.matches("<svg").count(), 8);
    assert_eq!(
        sections(&html),
        [
            "topology",
            "throughput",
            "flow-throughput",
            "buffer",
            "egress",
            "pause",
            "fct",
            "fct-size"
        ]
    );
    // the incast's flows are all of one size bucket: one row of percentiles under the plot
    let size = report.flows[0].size_bytes.unwrap();
    assert!(report.flows.iter().all(|f| f.size_bytes == Some(size)));
    assert_eq!(html.matches("<tr><th>").count(), 2, "header and one bucket");
    assert!(html.contains("FCT slowdown CDF by flow size"));
    assert!(self_contained(&html));
    assert!(html.contains("Flow completion time (FCT) CDF per priority"));
    assert!(html.contains("fraction of flows"));
    assert!(html.contains("FCT pri"), "the summary's FCT table");
}

#[test]
fn hostile_names_are_escaped_in_the_text_and_in_the_plots() {
    let mut c = common::load("four-bridge", &[], Some(Duration::from_us(100)));
    let evil = "<script>alert(\"x\")</script>&";
    c.name = evil.into();
    for n in &mut c.nodes {
        n.name = format!("{evil}{}", n.name);
    }
    for f in &mut c.flows {
        f.name = format!("{evil}{}", f.name);
    }
    let (html, _) = page(c);
    assert!(self_contained(&html), "a name got through unescaped");
    assert!(!html.contains("alert(\"x\")"));
    // the title and the summary (askama) and the plot labels (plotters) show the names escaped
    assert!(html.contains("<title>lossless sim: &#60;script&#62;alert("));
    assert!(html.contains("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;&#38;client1"));
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;bridge4 in 0 prio 3"));
}

#[test]
fn qps_add_a_rate_plot_with_a_line_per_qp() {
    let (html, report) = page(common::load(
        "incast-dcqcn",
        &["senders=4"],
        Some(Duration::from_ms(2)),
    ));
    assert_eq!(report.flows.iter().filter(|f| f.qp.is_some()).count(), 4);
    assert!(html.contains("Rate of each QP over time"));
    assert_eq!(html.matches("<svg").count(), 6);
    assert_eq!(
        sections(&html),
        ["topology", "throughput", "buffer", "egress", "pause", "qp-rate"]
    );
    assert!(self_contained(&html));
    for k in 1..=4 {
        assert!(html.contains(&format!("qp:sender{k}")), "a legend entry per QP");
    }
    assert!(
        html.contains("QP ") && html.contains("CNP rx"),
        "the summary's QP table"
    );
}

#[test]
fn many_qps_are_drawn_as_percentiles_of_their_rates() {
    let (html, _) = page(common::load(
        "incast-dcqcn",
        &["senders=16"],
        Some(Duration::from_ms(1)),
    ));
    assert!(
        html.contains("median of the active QPs (16 in all)")
            && html.contains("90th percentile of the active QPs (16 in all)")
    );
    assert!(!html.contains(">qp:sender16<"), "no line per QP");
    assert!(self_contained(&html));
    // the legend sits under the 300-pixel plot, where it covers none of the lines
    for name in ["min", "median", "max"] {
        let label = format!("\n{name} of the active QPs (16 in all)");
        let at = html
            .find(&label)
            .unwrap_or_else(|| panic!("{name} in the legend"));
        let tag = &html[html[..at].rfind("<text").expect("a text element")..at];
        let y: u32 = tag
            .split(" y=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no y in {tag}"));
        assert!(y > 300, "{name}'s legend entry at y = {y}, inside the plot");
    }
}

#[test]
fn the_time_axis_covers_the_busy_span_of_a_run_that_starts_late_and_goes_quiet() {
    // as an HPCC ns-3 experiment runs: flows from 2 ms, done well before the run's end (20 ms)
    let mut c = common::load("incast", &["senders=4"], Some(Duration::from_ms(20)));
    for f in &mut c.flows {
        f.start += Duration::from_ms(2);
    }
    let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c)).unwrap();
    sim.run();
    let report = Report::collect(&sim);
    let last_done = report.flows.iter().filter_map(|f| f.completion_ps).max().unwrap();
    let first = c.flows.iter().map(|f| f.start).min().unwrap();
    let end = sim.now();
    let html = sim.observer_mut().render(end, &report);
    let (from, to) = sim.observer().window();
    assert_eq!(from, first, "the axis starts with the first flow");
    let busy = Instant::from_ps(first.as_ps() + last_done);
    assert!(to >= busy, "the axis reaches the last completion: {to} < {busy}");
    // bins double: the axis is at most twice the busy span, far short of the 18 ms left
    let span = to - from;
    assert!(
        span <= (busy - from) + (busy - from),
        "{span} for {}",
        busy - from
    );
    assert!(span < Duration::from_ms(1), "{span}");
    assert!(
        html.contains("time (µs) since 2 ms"),
        "the axis says where it starts"
    );
    // a run in which nothing happens is drawn over its whole length, and no further: also
    // when it is exactly the 200 bins of 1/1024 of it that the axis starts from (409.6 µs:
    // 2 ns bins, 204,800 of them in the run)
    for run in [Duration::from_us(100), Duration::from_ps(409_600_000)] {
        let mut c = common::load("four-bridge", &[], Some(run));
        c.flows.clear();
        let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c)).unwrap();
        sim.run();
        let (report, end) = (Report::collect(&sim), sim.now());
        sim.observer_mut().render(end, &report);
        let (from, to) = sim.observer().window();
        assert_eq!(from, Instant::ZERO);
        assert!(
            to >= end && to - end < Duration::from_us(1),
            "{to} for a run to {end}"
        );
    }
    // a run whose flows start at zero keeps the plain axis over the whole run
    let c = common::load("incast", &["senders=4"], None);
    let (html, _) = page(c.clone());
    assert!(html.contains("time (µs)\n"), "plain axis");
    assert!(!html.contains("time (µs) since"), "no offset");
}

#[test]
fn a_run_without_pauses_says_so_under_its_empty_pause_timeline() {
    // one sender into an idle receiver: nothing congests
    let (html, _) = page(common::load(
        "incast",
        &["senders=1"],
        Some(Duration::from_us(200)),
    ));
    let pause = html
        .split("<section id=\"pause\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("a pause section");
    assert!(
        pause.contains("No transmitter was paused by its peer."),
        "{pause}"
    );
    assert!(html.contains("No link was paused."));
}

/// The grey line that marks the receivers' line rate.
const LIMIT_GREY: &str = "#888888";

#[test]
fn throughput_never_rises_above_the_receivers_line_rate_and_names_its_bin_width() {
    // two-chip: one 10 Gb/s receiver (16 Gb/s was drawn, frames counted whole in short bins);
    // four-bridge: priority 3 spiked to 36-41 Gb/s
    for (name, duration) in [("two-chip", None), ("four-bridge", Some(Duration::from_us(300)))] {
        let c = common::load(name, &[], duration);
        let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c)).unwrap();
        sim.run();
        let report = Report::collect(&sim);
        let end = sim.now();
        let html = sim.observer_mut().render(end, &report);
        let bin = sim.observer().bin_width();
        let sec = section(&html, "Delivered throughput per priority");
        assert!(
            sec.contains(&format!("mean over each {bin} bin")),
            "{name}: the bin width is said: {sec}"
        );
        let lines = common::polylines(sec);
        let limit = lines
            .iter()
            .find(|(c, _)| c == LIMIT_GREY)
            .unwrap_or_else(|| panic!("{name}: no line-rate line in {sec}"));
        let limit_y = limit.1[0].1;
        assert!(sec.contains("receiving host link(s): "), "{sec}");
        // the priorities' lines, in the page's eight priority colours
        const PRIORITY: [&str; 8] = [
            "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        ];
        let data: Vec<_> = lines
            .iter()
            .filter(|(c, p)| PRIORITY.contains(&c.as_str()) && p.len() > 2)
            .collect();
        assert!(!data.is_empty(), "{name}: some throughput drawn");
        for (color, pts) in data {
            for &(x, y) in pts {
                assert!(
                    y >= limit_y,
                    "{name}: a point of {color} at ({x}, {y}) above the line rate at y = {limit_y}"
                );
            }
        }
    }
}

#[test]
fn every_time_axis_ends_at_the_runs_end_and_a_deadlocked_buffer_stays_full_to_it() {
    // the ring deadlocks and the detector halts the run at 610 µs of the 100 ms configured
    let c = common::load("deadlock-ring", &[], None);
    let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c)).unwrap();
    sim.run();
    let report = Report::collect(&sim);
    let end = sim.now();
    assert!(end < Instant::ZERO + Duration::from_ms(1), "halted at {end}");
    let html = sim.observer_mut().render(end, &report);
    let (_, to) = sim.observer().window();
    assert_eq!(to, end, "the axis ends where the run did");
    // the deadlocked buffers hold their bytes to the axis's end: their lines end where they
    // were, above the zero line (the lowest point drawn), at the right edge of the plot
    let buffers = section(&html, "Buffer occupancy");
    let lines: Vec<_> = common::polylines(buffers)
        .into_iter()
        .filter(|(_, p)| p.len() > 2)
        .collect();
    let zero = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.1))
        .fold(f64::MIN, f64::max);
    let right = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.0))
        .fold(f64::MIN, f64::max);
    let held: Vec<_> = lines
        .iter()
        .filter(|(_, p)| p.last().is_some_and(|&(x, y)| y < zero && x == right))
        .collect();
    assert!(
        held.len() >= 3,
        "the three queues of the cycle stay full to the end: {lines:?}"
    );
}

#[test]
fn a_page_uses_one_time_unit_that_suits_its_span() {
    // storm: a stall held to the end of 500 ms: every axis in ms, none in µs up to 500000
    let c = common::load("storm", &[], None);
    let (html, _) = page(c);
    assert!(html.contains("time (ms)"), "ms");
    assert!(!html.contains("time (µs)"), "one unit per page");
    assert!(!html.contains("500000"), "no axis label in the hundred thousands");
    // a 300 µs run reads in µs
    let (html, _) = page(common::load("four-bridge", &[], Some(Duration::from_us(300))));
    assert!(html.contains("time (µs)") && !html.contains("time (ms)"));
}

#[test]
fn the_egress_queue_section_draws_the_queues_frames_wait_in_with_the_ecn_thresholds() {
    // four-bridge: the oversubscribed port to the sink and the queues PFC backed up behind it
    let (html, _) = page(common::load("four-bridge", &[], Some(Duration::from_us(300))));
    let egress = section(&html, "Egress queue depth per port and priority");
    for q in [
        "bridge4.3 → sink prio 3",
        "bridge1.1 → bridge4 prio 3",
        "client1.0 → bridge1 prio 3",
    ] {
        assert!(egress.contains(&text(q)), "{q} in {egress}");
    }
    // the server's port only ever held the frame being sent: not drawn, but counted
    assert!(!egress.contains("bridge4.4 → server"), "{egress}");
    assert!(
        egress.contains("never held more than the one being sent"),
        "{egress}"
    );
    // incast-dcqcn marks ECN at the switch: Kmin and Kmax drawn as two grey levels
    let (html, _) = page(common::load(
        "incast-dcqcn",
        &["senders=4"],
        Some(Duration::from_ms(2)),
    ));
    let egress = section(&html, "Egress queue depth per port and priority");
    assert!(egress.contains("ECN Kmin 400000 B (marking starts)"), "{egress}");
    assert!(
        egress.contains("ECN Kmax 1600000 B (every frame marked)"),
        "{egress}"
    );
    let greys: Vec<f64> = common::polylines(egress)
        .into_iter()
        .filter(|(c, p)| (c == LIMIT_GREY || c == "#444444") && p.len() == 2 && p[0].1 == p[1].1)
        .map(|(_, p)| p[0].1)
        .collect();
    assert!(greys.len() >= 2, "two threshold lines: {greys:?}");
}

#[test]
fn static_pfc_thresholds_are_drawn_on_the_ingress_buffer_plot() {
    // a static shared-pool limit: XOFF at the limit, XON the offset below it
    let mut c = common::load("incast", &["senders=2"], Some(Duration::from_us(300)));
    for n in &mut c.nodes {
        if let lossless_sim::config::NodeKind::Switch(sw) = &mut n.kind {
            sw.threshold = lossless_sim::buffer::Threshold::Static { bytes: 200_000 };
            sw.xon_offset_bytes = 50_000;
        }
    }
    let (html, _) = page(c);
    let buffer = section(&html, "Buffer occupancy");
    assert!(
        buffer.contains("PFC XOFF: the ingress shared-pool limit, 200000 B"),
        "{buffer}"
    );
    assert!(buffer.contains("PFC XON: 150000 B"), "{buffer}");
    // the default dynamic threshold moves with the pool: said, not drawn
    let (html, _) = page(common::load(
        "incast",
        &["senders=2"],
        Some(Duration::from_us(300)),
    ));
    assert!(
        section(&html, "Buffer occupancy").contains("PFC thresholds not drawn: the threshold is dynamic"),
        "{html}"
    );
}

#[test]
fn by_default_the_flow_throughput_section_draws_the_victims_and_the_slowest_flows() {
    // four-bridge's flows never finish: its one victim, "victim"
    let c = common::load("four-bridge", &[], Some(Duration::from_us(300)));
    let (html, report) = page(c);
    let victims: Vec<&str> = report
        .pathology
        .as_ref()
        .and_then(|p| p.victims.as_ref())
        .unwrap()
        .flows
        .iter()
        .filter(|f| f.victim)
        .map(|f| f.flow.as_str())
        .collect();
    assert_eq!(victims, ["victim"]);
    let s = section(&html, "Throughput of chosen flows");
    assert!(
        s.contains("<p>1 of the victims and the 10 flows with the largest FCT slowdown"),
        "{s}"
    );
    assert!(s.contains(&text("victim")), "{s}");
    assert!(
        !s.contains(&text("lossless:client1")),
        "no victim, no slowdown: not drawn"
    );
    // incast's 4 finite flows, each a line in the legend
    let c = common::load("incast", &["senders=4"], None);
    let (html, report) = page(c);
    let s = section(&html, "Throughput of chosen flows");
    assert!(s.contains("<p>4 of the victims and the 10 flows"), "{s}");
    for f in &report.flows {
        assert!(f.fct_slowdown_ratio.is_some());
        assert!(s.contains(&text(&f.name)), "{} in the legend", f.name);
    }
}

#[test]
fn plot_flows_draws_only_the_flows_it_names_each_a_line_of_its_own() {
    use lossless_sim::trace::html::parse_flow_picks;
    let c = common::load("four-bridge", &[], Some(Duration::from_us(300)));
    let picks = parse_flow_picks("victim,lossless:*").unwrap().0;
    let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c).with_flow_picks(picks)).unwrap();
    sim.run();
    let report = Report::collect(&sim);
    let end = sim.now();
    let html = sim.observer_mut().render(end, &report);
    let s = section(&html, "Throughput of chosen flows");
    assert!(s.contains("<p>4 of the flows --plot-flows chose"), "{s}");
    for name in [
        "victim",
        "lossless:client1",
        "lossless:client2",
        "lossless:client3",
    ] {
        assert!(s.contains(&text(name)), "{name} in the legend");
    }
    assert!(!s.contains("lossy:"), "the lossy flows were not chosen");
    // four lines of data (and their legend swatches), each in its own colour
    let lines: Vec<_> = common::polylines(s)
        .into_iter()
        .filter(|(_, pts)| pts.len() > 4)
        .collect();
    assert_eq!(lines.len(), 4);
    let colours: std::collections::BTreeSet<&str> = lines.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(colours.len(), 4);
}

#[test]
fn the_bottleneck_link_is_drawn_blue_in_the_topology_and_named_under_it() {
    // four-bridge: the cause is bridge4's port to the sink (busy, a standing queue, never
    // paused), which the picture drew grey as "never paused"
    let c = common::load("four-bridge", &[], Some(Duration::from_us(300)));
    let (html, _) = page(c);
    let topo = section(&html, "Topology");
    assert!(
        topo.contains("<p>Bottleneck (blue: a switch port busy at least 90 % of the flows&#39; active span with frames waiting in its queue): bridge4.3 → sink ("),
        "{topo}"
    );
    let blue: Vec<_> = common::polylines(topo)
        .into_iter()
        .filter(|(c, _)| c == "#1e5ac8")
        .collect();
    // the legend's swatch, the link and its arrowhead
    assert_eq!(blue.len(), 3, "{blue:?}");
    // a fabric with no congestion has none
    let c = common::load("incast", &["senders=1"], None);
    let (html, _) = page(c);
    let topo = section(&html, "Topology");
    assert!(topo.contains("<p>No switch port was a bottleneck"), "{topo}");
    assert_eq!(
        common::polylines(topo)
            .iter()
            .filter(|(c, _)| c == "#1e5ac8")
            .count(),
        1,
        "only the legend's swatch"
    );
}
