//! The simulator's hot path allocates nothing per event: once queues and the event calendar
//! have grown to their working size, running on allocates nothing — with PFC only
//! (`four-bridge`, `incast`) and with RoCEv2 QPs, ACKs, CNPs, ECN marking and DCQCN
//! (`incast-dcqcn`, `four-bridge-cn`), with QCN congestion points and CNMs, and with a lossy
//! class whose drops go-back-N resends.

mod common;

use lossless_proto::units::{Duration, Instant};
use lossless_sim::config::SimConfig;
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Events handled and allocations made between `warm` and `end` of built-in `name`.
fn steady(name: &str, set: &[&str], warm: Duration, end: Duration) -> (u64, usize) {
    let (events, allocs, _, _) = steady_config(common::load(name, set, Some(end)), warm);
    (events, allocs)
}

/// Events handled and allocations made between `warm` and the end of `c`, and the reports
/// at `warm` and at the end (collected outside the counted span).
fn steady_config(c: SimConfig, warm: Duration) -> (u64, usize, Report, Report) {
    let mut sim = Simulator::new(c).unwrap();
    sim.run_until(Instant::ZERO + warm);
    let at_warm = Report::collect(&sim);
    let (e0, a0) = (sim.events(), thread_allocations());
    sim.run();
    let (e1, a1) = (sim.events(), thread_allocations());
    assert!(sim.fault().is_none());
    let at_end = Report::collect(&sim);
    at_end.check().expect("conserved, every byte once");
    (e1 - e0, a1 - a0, at_warm, at_end)
}

#[test]
fn pfc_runs_allocate_nothing_once_warm() {
    for (name, set, warm, end) in [
        (
            "four-bridge",
            &[][..],
            Duration::from_us(300),
            Duration::from_ms(1),
        ),
        (
            "incast",
            &["senders=16"][..],
            Duration::from_us(300),
            Duration::from_ms(2),
        ),
    ] {
        let (events, allocs) = steady(name, set, warm, end);
        assert!(events > 10_000, "{name}: {events} events");
        assert_eq!(allocs, 0, "{name}: {allocs} allocations in {events} events");
    }
}

#[test]
fn dcqcn_runs_allocate_nothing_once_warm() {
    for (name, warm, end) in [
        ("incast-dcqcn", Duration::from_ms(2), Duration::from_ms(6)),
        ("four-bridge-cn", Duration::from_ms(2), Duration::from_ms(5)),
    ] {
        let (events, allocs) = steady(name, &[], warm, end);
        assert!(events > 100_000, "{name}: {events} events");
        assert_eq!(allocs, 0, "{name}: {allocs} allocations in {events} events");
    }
}

/// Four QPs at 10 Gb/s into one port: `CC` and `FC` replaced by the test.
const INCAST_QP: &str = r#"
name = "incast-qp"
duration = "5ms"
seed = 1
[defaults]
rate = "10G"
length_m = 5
FC
[qp]
CC
[[host]]
name = "s"
count = 4
[[host]]
name = "r"
[[switch]]
name = "tor"
buffer_bytes = 300_000
threshold = "static"
static_threshold_bytes = 60_000
[[link]]
a = "s*"
b = "tor"
[[link]]
a = "tor"
b = "r"
[[flow]]
name = "f"
src = "s*"
dst = "r"
priority = 3
transport = "rocev2"
"#;

#[test]
fn qcn_dctcp_hpcc_pint_timely_and_lossy_go_back_n_runs_allocate_nothing_once_warm() {
    for (name, fc, cc) in [
        (
            "qcn",
            "flow_control = \"pfc\"\npfc_priorities = [3]",
            "cc = \"qcn\"\n[qcn]\npriorities = [3]",
        ),
        (
            "lossy go-back-N",
            "flow_control = \"off\"",
            "cc = \"none\"\nrocev2 = { rto = \"100us\" }",
        ),
        (
            "dctcp",
            "flow_control = \"pfc\"\npfc_priorities = [3]",
            "cc = \"dctcp\"\ndctcp = { rate_ai = \"20M\", min_rate = \"100M\" }\n[ecn]\nkmin_bytes = 20_000\nkmax_bytes = 20_000\npmax = 1.0",
        ),
        (
            // INT stamping at the switch, echo and the per-QP PSN rings (ports at 25 G: a
            // rate the INT record can name)
            "hpcc",
            "flow_control = \"pfc\"\npfc_priorities = [3]",
            "cc = \"hpcc\"\nhpcc = { base_rtt = \"2us\", bdp = 6250, rate_ai = \"500M\", min_rate = \"100M\" }",
        ),
        (
            // PINT's per-port estimate at the switch, its code in the per-QP rings
            "hpcc-pint",
            "flow_control = \"pfc\"\npfc_priorities = [3]",
            "cc = \"hpcc-pint\"\nhpcc_pint = { base_rtt = \"2us\", bdp = 6250, rate_ai = \"500M\", min_rate = \"100M\" }",
        ),
        (
            // TIMELY: the send timestamp in the per-QP rings, its echo, the RTT gradient
            "timely",
            "flow_control = \"pfc\"\npfc_priorities = [3]",
            "cc = \"timely\"\ntimely = { t_low_ns = 5000, t_high_ns = 50000, min_rtt_ns = 2000, rate_ai = \"100M\", min_rate = \"100M\" }",
        ),
    ] {
        let mut text = INCAST_QP.replace("FC", fc).replace("CC", cc);
        if name.starts_with("hpcc") {
            text = text.replace("rate = \"10G\"", "rate = \"25G\"");
        }
        let c = load_str(&text, "inline.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
        let (events, allocs, warm, end) = steady_config(c, Duration::from_ms(2));
        // the counted span exercises what the run is named for
        let (before, after) = if name == "qcn" {
            let cnms = |r: &Report| r.cn.as_ref().unwrap().cnms_sent_total;
            (cnms(&warm), cnms(&end))
        } else if name.starts_with("hpcc") || name == "timely" {
            let cuts = |r: &Report| -> u64 {
                r.flows
                    .iter()
                    .map(|f| f.qp.as_ref().unwrap().rate_decreases_total)
                    .sum()
            };
            (cuts(&warm), cuts(&end))
        } else if name == "dctcp" {
            let echoes = |r: &Report| -> u64 {
                r.flows
                    .iter()
                    .map(|f| f.qp.as_ref().unwrap().cnps_received_total)
                    .sum()
            };
            (echoes(&warm), echoes(&end))
        } else {
            let retx = |r: &Report| -> u64 {
                r.flows
                    .iter()
                    .map(|f| f.qp.as_ref().unwrap().retransmitted_frames)
                    .sum()
            };
            (retx(&warm), retx(&end))
        };
        assert!(
            after >= before + 10,
            "{name}: {before} at 2 ms, {after} at the end"
        );
        assert!(events > 10_000, "{name}: {events} events");
        assert_eq!(allocs, 0, "{name}: {allocs} allocations in {events} events");
    }
}
