//! The HTML report is self-contained (inline SVG, no scripts, no network) and shows the
//! four-bridge story: pauses on every client uplink, buffers filling, throughput per priority;
//! with finite flows it adds their completion-time CDF; hostile names are escaped.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::config::SimConfig;
use lossless_sim::html::HtmlReport;
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
fn the_report_has_three_plots_and_a_pause_row_for_every_client_uplink() {
    let c = common::load("four-bridge", &[], Some(Duration::from_us(300)));
    let (html, report) = page(c);
    assert_eq!(html.matches("<svg").count(), 3);
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
}

#[test]
fn completed_flows_add_an_fct_cdf_plot_and_their_fct_table() {
    let c = common::load("incast", &["senders=4"], None);
    let (html, report) = page(c);
    assert_eq!(report.fct.all.as_ref().unwrap().flows_completed_total, 4);
    assert_eq!(html.matches("<svg").count(), 4);
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
    assert_eq!(html.matches("<svg").count(), 4);
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
    assert!(html.contains("median of 16 QPs") && html.contains("90th percentile of 16 QPs"));
    assert!(!html.contains(">qp:sender16<"), "no line per QP");
    assert!(self_contained(&html));
}
