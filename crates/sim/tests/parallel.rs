//! A fabric split over threads gives the one-thread run's report byte for byte (issue 22).

use lossless_sim::experiments::parallel;
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};

fn json_of(sim: &Simulator) -> String {
    serde_json::to_string_pretty(&Report::collect(sim)).expect("serialises")
}

fn sequential(cfg: &lossless_sim::config::SimConfig) -> String {
    let mut sim = Simulator::new(cfg.clone()).expect("builds");
    sim.run();
    json_of(&sim)
}

fn first_difference(a: &str, b: &str) -> String {
    let at = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
    format!(
        "line {}: {:?} vs {:?}",
        at + 1,
        a.lines().nth(at),
        b.lines().nth(at)
    )
}

fn check(name: &str, set: &[&str], threads: &[u16]) {
    let ov = Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let cfg = scenario::load(name, &ov).expect("loads");
    let seq = sequential(&cfg);
    if name == "incast" {
        // the comparison is where PFC fires: the switch pauses the senders
        assert!(seq.contains("\"pfc_xoff_sent_frames\": 2"), "PFC fired in {name}");
    }
    for &t in threads {
        let (sim, stats) = parallel::run(&cfg, t).expect("splits");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "{name} {set:?} at {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn a_pfc_firing_incast_at_1_2_3_and_8_threads_reports_what_one_simulator_does() {
    check("incast", &["senders=16"], &[1, 2, 3, 8]);
}

#[test]
fn two_chip_and_ets_at_2_and_3_threads_report_what_one_simulator_does() {
    check("two-chip", &[], &[2, 3]);
    check("ets-7-13-80", &[], &[2, 3]);
}

#[test]
fn features_the_partitioned_engine_lacks_are_refused_by_name() {
    let cfg = scenario::load("incast-dcqcn", &Overrides::default()).expect("loads");
    let err = parallel::run(&cfg, 2).err().expect("refused");
    assert!(err.to_string().contains("RoCEv2 QPs"), "{err}");
}
