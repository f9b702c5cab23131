//! Same scenario and seed → identical results, bit for bit; every built-in conserves frames.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::scenario::BUILTINS;

#[test]
fn two_runs_of_each_builtin_give_identical_json() {
    for b in BUILTINS {
        let d = Some(Duration::from_us(300));
        let one = serde_json::to_string(&common::run(common::load(b.name, &[], d))).unwrap();
        let two = serde_json::to_string(&common::run(common::load(b.name, &[], d))).unwrap();
        assert_eq!(one, two, "{}", b.name);
    }
}

#[test]
fn every_builtin_conserves_frames_at_any_stopping_time() {
    for b in BUILTINS {
        for us in [1, 37, 150] {
            let c = common::load(b.name, &[], Some(Duration::from_us(us)));
            // the DCBX scenarios start traffic once negotiation is done (20 µs)
            let first = c.flows.iter().map(|f| f.start).min();
            let r = common::run(c);
            assert!(r.conservation.balanced, "{} at {us} µs", b.name);
            assert!(
                first.is_none_or(|t| t.as_ps() >= Duration::from_us(us).as_ps())
                    || r.conservation.injected_frames > 0,
                "{} at {us} µs injected nothing",
                b.name
            );
        }
    }
}

#[test]
fn a_different_seed_changes_ecmp_and_poisson_choices_but_still_conserves() {
    let mut c = common::load("incast", &[], Some(Duration::from_us(100)));
    c.seed = 99;
    let r = common::run(c);
    assert!(r.conservation.balanced);
}

/// Every number in the JSON names its unit in its key (or is a count/identifier by name).
#[test]
fn every_json_figure_names_its_unit() {
    fn walk(key: &str, v: &serde_json::Value, bad: &mut Vec<String>) {
        // DCBX: 802.1AB counters end in `_total` (frames or TLVs, as lldptool -S names them),
        // tables are priorities, traffic classes and percentages
        const UNITS: [&str; 7] = ["_bps", "_ps", "_bytes", "_frames", "_total", "_percent", "_ratio"];
        const NAMES: [&str; 12] = [
            "local_pfc_priorities",
            "operational_pfc_priorities",
            "operational_ets_up2tc",
            "reconfigurations",
            "seed",
            "events",
            "priority",
            "port",
            "tail_drop",
            "headroom_overflow",
            "buffer_full",
            "receiver_overflow",
        ];
        match v {
            serde_json::Value::Number(_)
                if !UNITS.iter().any(|u| key.ends_with(u)) && !NAMES.contains(&key) && key != "no_route" =>
            {
                bad.push(key.to_string());
            }
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    walk(k, x, bad);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(key, x, bad)),
            _ => {}
        }
    }
    let mut bad = Vec::new();
    for name in ["four-bridge", "dcbx-adopt"] {
        let r = common::run(common::load(name, &[], Some(Duration::from_us(200))));
        let v = serde_json::to_value(&r).unwrap();
        walk("", &v, &mut bad);
    }
    // flows that complete fill the FCT figures (null otherwise)
    let r = common::run(common::load(
        "incast",
        &["senders=2"],
        Some(Duration::from_us(400)),
    ));
    assert!(
        r.flows.iter().all(|f| f.completion_ps.is_some()),
        "both flows complete"
    );
    walk("", &serde_json::to_value(&r).unwrap(), &mut bad);
    // congestion notification: QPs, marks, CNPs, the comparison with the twin without CN
    for name in ["four-bridge-cn", "incast-dcqcn"] {
        let c = common::load(name, &[], Some(Duration::from_us(300)));
        let without = lossless_sim::experiments::cn_twin::run_without_cn(&c).expect("has CN");
        let mut r = common::run(c);
        r.compare_with_cn_off(&without);
        assert!(r.cn.is_some() && r.cn_effect.is_some(), "{name}");
        walk("", &serde_json::to_value(&r).unwrap(), &mut bad);
    }
    bad.sort();
    bad.dedup();
    assert!(bad.is_empty(), "keys without a unit: {bad:?}");
}

#[test]
fn the_radix_queue_and_the_binary_heap_give_the_same_results_as_the_calendar_queue() {
    use lossless_sim::event::{HeapQueue, RadixQueue};
    use lossless_sim::observer::NoObserver;
    use lossless_sim::{Report, Simulator};
    // 2 ms: long enough for pause refreshes and expiries (far events of the calendar queue)
    for b in BUILTINS {
        let c = common::load(b.name, &[], Some(Duration::from_ms(2)));
        let calendar = serde_json::to_string(&common::run(c.clone())).unwrap();
        let mut sim = Simulator::build(c.clone(), NoObserver, RadixQueue::default()).unwrap();
        sim.run();
        let radix = serde_json::to_string(&Report::collect(&sim)).unwrap();
        assert_eq!(calendar, radix, "{}: radix heap", b.name);
        let mut sim = Simulator::build(c, NoObserver, HeapQueue::with_capacity(64)).unwrap();
        sim.run();
        let heap = serde_json::to_string(&Report::collect(&sim)).unwrap();
        assert_eq!(calendar, heap, "{}: binary heap", b.name);
    }
}
