//! Model features on small scenarios written inline: a slow receiver raising XOFF (document
//! 002's module A), ECMP over parallel paths, Poisson flow arrivals from a size CDF, on/off
//! sources, static thresholds.

use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};

fn run_text(text: &str, dir: Option<&std::path::Path>) -> Report {
    let c = load_str(text, "inline.toml", dir, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(c).unwrap();
    sim.run();
    let r = Report::collect(&sim);
    r.check().unwrap();
    r
}

const SLOW_RECEIVER: &str = r#"
name = "slow-receiver"
duration = "400us"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
[[host]]
name = "a"
[[host]]
name = "b"
rx_rate = "10G"
rx_buffer_bytes = 200_000
rx_xoff_bytes = 60_000
rx_xon_bytes = 30_000
[[switch]]
name = "s"
buffer_bytes = 1_000_000
[[link]]
a = "a"
b = "s"
[[link]]
a = "s"
b = "b"
[[flow]]
name = "f"
src = "a"
dst = "b"
priority = 3
pattern = "cbr"
rate = "40G"
"#;

#[test]
fn a_receiver_that_falls_behind_raises_xoff_and_paces_the_sender_without_loss() {
    let r = run_text(SLOW_RECEIVER, None);
    let b = r
        .port("b", "s")
        .unwrap()
        .priorities
        .iter()
        .find(|q| q.priority == 3)
        .unwrap()
        .clone();
    assert!(b.pfc_xoff_sent_frames > 0, "receiver never raised XOFF");
    assert!(b.pfc_xon_sent_frames > 0, "receiver never released");
    // the switch passes the back-pressure on to the sender
    let a = r
        .port("a", "s")
        .unwrap()
        .priorities
        .iter()
        .find(|q| q.priority == 3)
        .unwrap()
        .clone();
    assert!(a.pfc_xoff_received_frames > 0);
    assert_eq!(r.conservation.dropped_frames.values().sum::<u64>(), 0);
    let f = r.flow("f").unwrap();
    // delivered at the processing rate: 10 Gb/s of frame bytes, within 5 %
    assert!(
        (9_500_000_000..=10_500_000_000).contains(&f.throughput_bps),
        "{}",
        f.throughput_bps
    );
    let host = r.hosts.iter().find(|h| h.name == "b").unwrap();
    assert!(host.peak_rx_backlog_bytes <= 200_000);
}

const ECMP: &str = r#"
name = "ecmp"
duration = "100us"
[defaults]
rate = "100G"
[[host]]
name = "h1"
[[host]]
name = "h2"
[[switch]]
name = "s1"
buffer_bytes = 1_000_000
[[switch]]
name = "up"
buffer_bytes = 1_000_000
[[switch]]
name = "down"
buffer_bytes = 1_000_000
[[switch]]
name = "s2"
buffer_bytes = 1_000_000
[[link]]
a = "h1"
b = "s1"
[[link]]
a = "s1"
b = "up"
[[link]]
a = "s1"
b = "down"
[[link]]
a = "up"
b = "s2"
[[link]]
a = "down"
b = "s2"
[[link]]
a = "s2"
b = "h2"
[[flow]]
name = "f1"
src = "h1"
dst = "h2"
priority = 0
pattern = "cbr"
rate = "5G"
[[flow]]
name = "f2"
src = "h1"
dst = "h2"
priority = 0
pattern = "cbr"
rate = "5G"
[[flow]]
name = "f3"
src = "h1"
dst = "h2"
priority = 0
pattern = "cbr"
rate = "5G"
[[flow]]
name = "f4"
src = "h1"
dst = "h2"
priority = 0
pattern = "cbr"
rate = "5G"
[[flow]]
name = "f5"
src = "h1"
dst = "h2"
priority = 0
pattern = "cbr"
rate = "5G"
[[flow]]
name = "f6"
src = "h1"
dst = "h2"
priority = 0
pattern = "cbr"
rate = "5G"
"#;

#[test]
fn ecmp_spreads_flows_over_both_equal_cost_paths_and_keeps_each_flow_on_one() {
    let r = run_text(ECMP, None);
    let via = |sw: &str| {
        r.port("s1", sw)
            .unwrap()
            .priorities
            .iter()
            .map(|q| q.tx_frames)
            .sum::<u64>()
    };
    let (up, down) = (via("up"), via("down"));
    assert!(up > 0 && down > 0, "up {up}, down {down}");
    // per-flow hashing: each path carries a whole number of 5 Gb/s flows (no reordering)
    let total = up + down;
    let share = (up as f64 / total as f64 * 6.0).round();
    assert!((up as f64 / total as f64 * 6.0 - share).abs() < 0.1);
}

#[test]
fn poisson_arrivals_draw_sizes_from_the_cdf_file_and_complete() {
    let dir = lossless_testkit::temp_dir("sim-cdf");
    std::fs::write(dir.join("sizes.txt"), "0 0\n1000 50\n20000 100\n").unwrap();
    let text = r#"
name = "poisson"
duration = "200us"
seed = 3
[defaults]
rate = "100G"
[[host]]
name = "h"
count = 4
[[switch]]
name = "s"
buffer_bytes = 2_000_000
[[link]]
a = "h*"
b = "s"
[[workload]]
name = "w"
src = ["h*"]
dst = ["h*"]
priority = 0
cdf_file = "sizes.txt"
load = 0.3
stop = "150us"
"#;
    let r = run_text(text, Some(dir.path()));
    // mean size ≈ 5.5 kB; 4 × 30 Gb/s for 150 µs ≈ 2.25 MB ≈ 400 flows
    assert!((250..=600).contains(&r.flows.len()), "{} flows", r.flows.len());
    let done = r.flows.iter().filter(|f| f.completion_ps.is_some()).count();
    assert!(
        done * 10 >= r.flows.len() * 9,
        "{done} of {} completed",
        r.flows.len()
    );
    for f in &r.flows {
        assert_ne!(f.src, f.dst);
        assert!(
            f.sent_bytes <= 20_000 + 22 * 14,
            "{} sent {}",
            f.name,
            f.sent_bytes
        );
    }
}

#[test]
fn an_inline_cdf_draws_the_same_flows_as_its_file_and_one_of_the_two_is_required() {
    let dir = lossless_testkit::temp_dir("sim-cdf-inline");
    let sizes = "0 0\n1000 50\n20000 100\n";
    std::fs::write(dir.join("sizes.txt"), sizes).unwrap();
    let text = |cdf: &str| {
        format!(
            "name = \"poisson\"\nduration = \"100us\"\nseed = 3\n[defaults]\nrate = \"100G\"\n\
             [[host]]\nname = \"h\"\ncount = 4\n[[switch]]\nname = \"s\"\nbuffer_bytes = 2_000_000\n\
             [[link]]\na = \"h*\"\nb = \"s\"\n[[workload]]\nname = \"w\"\nsrc = [\"h*\"]\ndst = [\"h*\"]\n\
             priority = 0\n{cdf}load = 0.3\nstop = \"80us\"\n"
        )
    };
    let from_file = run_text(&text("cdf_file = \"sizes.txt\"\n"), Some(dir.path()));
    let inline = run_text(&text(&format!("cdf = \"\"\"\n{sizes}\"\"\"\n")), None);
    assert!(from_file.flows.len() > 50);
    assert_eq!(
        serde_json::to_string(&from_file.flows).unwrap(),
        serde_json::to_string(&inline.flows).unwrap()
    );
    let load = |t: &str| {
        lossless_sim::scenario::load_str(t, "w.toml", Some(dir.path()), &Default::default()).unwrap_err()
    };
    let e = load(&text(""));
    assert!(e.message.contains("no flow sizes: give cdf_file"), "{e}");
    let e = load(&text(&format!(
        "cdf_file = \"sizes.txt\"\ncdf = \"{}\"\n",
        "0 0\\n10 100"
    )));
    assert!(
        e.key.contains("`cdf`") && e.message.contains("allowed one of them"),
        "{e}"
    );
    let e = load(&text("cdf = \"0 0\\n10 50\\n5 100\"\n"));
    assert!(
        e.key.contains("`cdf`") && e.message.contains("line 3 of the CDF"),
        "{e}"
    );
}

#[test]
fn an_on_off_source_offers_its_duty_cycle() {
    let text = r#"
name = "onoff"
duration = "1ms"
[defaults]
rate = "100G"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
a = "a"
b = "b"
[[flow]]
name = "f"
src = "a"
dst = "b"
priority = 1
pattern = "on_off"
rate = "40G"
on = "10us"
off = "30us"
"#;
    let r = run_text(text, None);
    let f = r.flow("f").unwrap();
    assert_eq!(f.offered_bps, 10_000_000_000);
    assert!(
        (9_500_000_000..=10_500_000_000).contains(&f.throughput_bps),
        "{}",
        f.throughput_bps
    );
}

#[test]
fn a_static_threshold_tail_drops_lossy_frames_beyond_it() {
    let text = r#"
name = "static"
duration = "100us"
[defaults]
rate = "100G"
[[host]]
name = "a"
count = 2
[[host]]
name = "b"
[[switch]]
name = "s"
buffer_bytes = 1_000_000
threshold = "static"
static_threshold_bytes = 20_000
[[link]]
a = "a*"
b = "s"
[[link]]
a = "s"
b = "b"
[[flow]]
name = "f"
src = "a*"
dst = "b"
priority = 0
pattern = "line"
"#;
    let r = run_text(text, None);
    let drops: u64 = r
        .conservation
        .dropped_frames
        .get("tail_drop")
        .copied()
        .unwrap_or(0);
    assert!(drops > 0);
    for p in r.ports.iter().filter(|p| p.node == "s" && p.peer != "b") {
        let peak = p
            .priorities
            .iter()
            .map(|q| q.peak_ingress_buffer_bytes)
            .max()
            .unwrap_or(0);
        assert!(peak <= 20_000, "{} held {peak}", p.peer);
    }
}
