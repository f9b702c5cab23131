//! Workloads of tiny flows cost events in proportion to their flows: a host whose NIC queue
//! is full wakes one blocked flow per frame sent, not all of them.

use lossless_proto::units::Duration;
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};
use lossless_testkit::temp_dir;

/// Runs two hosts sending 1-byte flows at `load` to each other for `us` µs; (events, flows).
fn tiny(us: u64) -> (u64, usize) {
    let dir = temp_dir("tiny-flows");
    std::fs::write(dir.join("one-byte.cdf"), "1 100\n").unwrap();
    let text = r#"
name = "tiny"
duration = "1us"
[defaults]
rate = "100G"
[[host]]
name = "h"
count = 2
[[switch]]
name = "s"
buffer_bytes = 1_000_000
[[link]]
a = "h*"
b = "s"
[[workload]]
name = "w"
src = ["h*"]
dst = ["h*"]
priority = 0
cdf_file = "one-byte.cdf"
load = 0.05
"#;
    let ov = Overrides {
        duration: Some(Duration::from_us(us)),
        ..Default::default()
    };
    let config = load_str(text, "tiny.toml", Some(&dir), &ov).unwrap();
    let mut sim = Simulator::new(config).unwrap();
    sim.run();
    let r = Report::collect(&sim);
    r.check().unwrap();
    (r.events, r.flows.len())
}

#[test]
fn events_of_a_workload_of_tiny_flows_grow_linearly_with_its_flows() {
    // 1-byte flows at 5 % of 100 Gb/s arrive every 1.6 ns per source, 4.2 times faster than
    // the NIC sends their 64-byte frames: blocked flows pile up by thousands
    let (e1, f1) = tiny(4);
    let (e2, f2) = tiny(8);
    let (per1, per2) = (e1 as f64 / f1 as f64, e2 as f64 / f2 as f64);
    assert!(
        f2 > f1 * 19 / 10,
        "twice the time, about twice the flows: {f1} then {f2}"
    );
    // each flow: its arrival, one emission that blocks, one wake-up and emission, and its
    // frame's transmissions and arrivals at the switch and the destination
    assert!(
        per1 < 6.0 && per2 < 6.0,
        "events per flow {per1:.1} ({e1}/{f1}), then {per2:.1} ({e2}/{f2})"
    );
    assert!(
        per2 < per1 * 1.15,
        "events per flow grow: {per1:.1} then {per2:.1}"
    );
}
