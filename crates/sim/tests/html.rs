//! The HTML report is self-contained (inline SVG, no scripts, no network) and shows the
//! four-bridge story: pauses on every client uplink, buffers filling, throughput per priority.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::html::HtmlReport;
use lossless_sim::{Report, Simulator};

#[test]
fn the_report_has_three_plots_and_a_pause_row_for_every_client_uplink() {
    let c = common::load("four-bridge", &[], Some(Duration::from_us(300)));
    let mut sim = Simulator::with_observer(c.clone(), HtmlReport::new(&c)).unwrap();
    sim.run();
    let summary = Report::collect(&sim).summary();
    let end = sim.now();
    let html = sim.observer_mut().render(end, &summary);
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(
        !html.contains("<script") && !html.contains("http://")
            || html.matches("http://").count()
                == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    for i in 1..=3 {
        assert!(
            html.contains(&format!("client{i}.0 → bridge{i}")),
            "no pause row for client{i}"
        );
    }
    assert!(html.contains("priority 3") && html.contains("bridge4 in"));
    assert!(html.contains("lossless frames dropped: 0"));
}
