//! The congestion controls' published-value presets (issue 23): TIMELY's paper, HPCC's paper
//! and its authors' η = 99 %, DCTCP's RFC 8257, beside the HPCC ns-3 fork's `hpcc-ns3`, chosen
//! by `[qp] preset` and run on the `incast-cc` built-in.

use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};

fn run(cc: &str, preset: &str) -> Report {
    let mut set = vec![format!("qp.cc=\"{cc}\""), format!("qp.preset=\"{preset}\"")];
    if cc == "hpcc" {
        // the incast's one-switch path: base RTT and its window at line rate
        set.push("qp.hpcc.base_rtt=\"4160ns\"".into());
        set.push("qp.hpcc.bdp=52000".into());
    }
    let ov = Overrides {
        set,
        ..Default::default()
    };
    let cfg = scenario::load("incast-cc", &ov).unwrap_or_else(|e| panic!("{cc} {preset}: {e}"));
    let mut sim = Simulator::new(cfg).expect("builds");
    sim.run();
    Report::collect(&sim)
}

fn json(r: &Report) -> String {
    serde_json::to_string(r).expect("serialises")
}

#[test]
fn each_published_preset_runs_and_acts_differently_from_the_forks_where_its_values_differ() {
    // TIMELY's paper: a 10 Mb/s additive step (the fork's is 100 Mb/s) changes the run
    let fork = run("timely", "hpcc-ns3");
    let paper = run("timely", "paper");
    assert!(fork.lossless.dropped_frames == 0 && paper.lossless.dropped_frames == 0);
    assert_ne!(
        json(&fork),
        json(&paper),
        "TIMELY's paper preset ran as the fork's"
    );
    // HPCC's authors' η = 99 % against the paper's 95 %
    let p95 = run("hpcc", "paper");
    let p99 = run("hpcc", "eta99");
    assert_ne!(json(&p95), json(&p99), "η 0.99 ran as η 0.95");
    // the paper's simulations are the fork's numbers; RFC 8257's gain is the fork's too
    assert_eq!(json(&p95), json(&run("hpcc", "hpcc-ns3")));
    assert_eq!(json(&run("dctcp", "rfc8257")), json(&run("dctcp", "hpcc-ns3")));
}

#[test]
fn an_unknown_preset_is_refused_naming_the_ones_there_are() {
    for (cc, names) in [
        ("timely", "\"hpcc-ns3\" or \"paper\""),
        ("hpcc", "\"hpcc-ns3\", \"paper\" or \"eta99\""),
        ("dctcp", "\"hpcc-ns3\" or \"rfc8257\""),
    ] {
        let ov = Overrides {
            set: vec![format!("qp.cc=\"{cc}\""), "qp.preset=\"nope\"".into()],
            ..Default::default()
        };
        let err = scenario::load("incast-cc", &ov).expect_err("refused").to_string();
        assert!(err.contains(names), "{cc}: {err}");
    }
}
