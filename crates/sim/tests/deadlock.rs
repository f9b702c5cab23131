//! Issue 14, deadlock: the wait-for-graph detector finds the cycle of `deadlock-ring` (static
//! routes that close a loop) and of `deadlock-bounce` (one failed link, bounced traffic), ends
//! the run with the deadlock in the report, and sees pfcwd's drop action break it.

mod common;

use common::{load, run};
use lossless_proto::units::Duration;
use lossless_proto::watchdog::pfcwd;
use lossless_sim::config::SimConfig;
use lossless_sim::config::pathology::TopologyAction;
use serde_json::{Value, json};

const US: u64 = 1_000_000;
const MS: u64 = 1_000_000_000;

fn report(c: SimConfig) -> Value {
    serde_json::to_value(run(c)).expect("serializes")
}

fn findings(r: &Value) -> &Vec<Value> {
    r["pathology"]["detector"].as_array().expect("the detector ran")
}

/// `cycle` is `want` rotated (a cycle has no first member).
fn same_cycle(cycle: &Value, want: &[&str]) -> bool {
    let c: Vec<&str> = cycle
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    c.len() == want.len() && (0..c.len()).any(|k| (0..c.len()).all(|i| c[(i + k) % c.len()] == want[i]))
}

#[test]
fn the_ring_deadlocks_and_the_run_ends_with_its_cycle_members_and_stuck_flows() {
    let r = report(load("deadlock-ring", &[], None));
    let f = findings(&r);
    assert_eq!(f.len(), 1, "{f:?}");
    let d = &f[0];
    assert_eq!(d["kind"], "deadlock");
    assert!(d["sink"].is_null());
    // swA → swB (port 1) waits for swB → swC (port 2), which waits for swC → swA (port 2)
    assert!(
        same_cycle(&d["cycle"], &["swA.1:3", "swB.2:3", "swC.2:3"]),
        "{}",
        d["cycle"]
    );
    assert_eq!(d["members_total"], 3);
    assert_eq!(d["stuck_flows"], json!(["a", "b", "c"]));
    // reported once it held for the 200 µs threshold (scans every 10 µs), then the run ends
    let (formed, found) = (
        d["formed_at_ps"].as_u64().unwrap(),
        d["detected_at_ps"].as_u64().unwrap(),
    );
    assert!(formed > 0 && formed < MS, "formed at {formed}");
    assert_eq!(found - formed, 200 * US);
    assert_eq!(r["pathology"]["ended_by_deadlock_at_ps"], found);
    assert_eq!(
        r["duration_ps"], found,
        "the run stops at the finding, not at 100 ms"
    );
    assert!(d["resolved_at_ps"].is_null());
    // deadlocks are not storms: no host's NIC is in the cycle
    assert_eq!(d["hosts_blocked"], json!([]));
    let v = &r["pathology"]["verdict"];
    assert_eq!(
        (
            v["kind"].as_str(),
            v["deadlocks_total"].as_u64(),
            v["storms_total"].as_u64()
        ),
        (Some("deadlock"), Some(1), Some(0))
    );
    assert_eq!(v["unresolved_total"], 1);
    assert!(
        v["text"].as_str().unwrap().starts_with("DEADLOCK: 1 cycle found"),
        "{v}"
    );
    // nothing is lost: the frames are stuck in the cycle
    assert_eq!(r["conservation"]["balanced"], true);
    assert!(
        r["conservation"]["dropped_frames"]
            .as_object()
            .unwrap()
            .is_empty()
    );
    assert!(r["conservation"]["queued_frames"].as_u64().unwrap() > 100);
}

#[test]
fn the_ring_without_its_static_routes_does_not_deadlock() {
    // shortest paths: every flow takes the direct link, no cycle of dependencies
    let mut c = load("deadlock-ring", &[], Some(Duration::from_ms(5)));
    c.pathology.routes.clear();
    let r = report(c);
    assert!(findings(&r).is_empty(), "{:?}", findings(&r));
    assert_eq!(r["pathology"]["verdict"]["kind"], "none");
    assert_eq!(r["duration_ps"], 5 * MS);
    for f in r["flows"].as_array().unwrap() {
        // each flow has its own link at line rate: 9.87 Gb/s of frame bits
        assert!(f["throughput_bps"].as_u64().unwrap() > 9_800_000_000, "{f}");
    }
}

#[test]
fn pfcwd_drop_on_the_cycles_queues_breaks_the_ring_deadlock() {
    let mut c = load("deadlock-ring", &[], Some(Duration::from_ms(700)));
    let Some(d) = c.pathology.deadlock.as_mut() else {
        panic!("the ring runs the detector")
    };
    d.stop = false;
    let switches: Vec<u32> = c
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.name.starts_with("sw"))
        .map(|(i, _)| i as u32)
        .collect();
    c.pathology.pfcwd = switches.iter().map(|&s| (s, pfcwd::Config::default())).collect();
    let r = report(c);
    let f = findings(&r);
    let first = &f[0];
    assert_eq!(first["kind"], "deadlock");
    assert!(same_cycle(&first["cycle"], &["swA.1:3", "swB.2:3", "swC.2:3"]));
    // pfcwd (200 ms, polls every 200 ms) declares the cycle's queues stormed and drops their
    // frames: the deadlock is gone at that poll
    let wd = r["pathology"]["pfcwd"].as_array().unwrap();
    let stormed: Vec<&Value> = wd
        .iter()
        .filter(|q| q["storms_detected_total"].as_u64().unwrap() > 0)
        .collect();
    let first_storm = stormed
        .iter()
        .map(|q| q["storms"][0]["detected_at_ps"].as_u64().unwrap())
        .min()
        .expect("pfcwd saw the deadlock as a storm");
    assert_eq!(first_storm, 400 * MS);
    assert_eq!(
        first["resolved_at_ps"], first_storm,
        "pfcwd's drop broke the cycle"
    );
    let by = first["resolved_by"].as_str().unwrap();
    assert!(by.starts_with("pfcwd drop on "), "{by}");
    assert!(
        first["cycle"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| by.contains(q.as_str().unwrap())),
        "{by} names the cycle's queues"
    );
    for name in ["swA", "swB", "swC"] {
        assert!(
            stormed
                .iter()
                .any(|q| q["switch"] == name && q["tx_dropped_frames"].as_u64().unwrap() > 0),
            "{name}'s cycle queue was not dropped"
        );
    }
    assert!(r["conservation"]["dropped_frames"]["pfcwd"].as_u64().unwrap() > 0);
    // the run went on to its end
    assert_eq!(r["duration_ps"], 700 * MS);
    assert!(r["pathology"]["ended_by_deadlock_at_ps"].is_null());
}

#[test]
fn the_bounce_after_a_link_failure_deadlocks_two_queues_of_one_spine_leaf_link() {
    let r = report(load("deadlock-bounce", &[], None));
    let ev = r["pathology"]["events"].as_array().unwrap();
    assert_eq!(ev[0]["what"], "link spine1 – leaf1 down");
    assert_eq!(ev[0]["at_ps"], 100 * US);
    assert_eq!(ev[1]["what"], "2 static routes installed");
    let f = findings(&r);
    assert_eq!(f.len(), 1, "{f:?}");
    let d = &f[0];
    assert_eq!(d["kind"], "deadlock");
    // spine1 → leaf2 (spine1's port 1) and leaf2 → spine1 (leaf2's port 2) wait for each other
    assert!(
        same_cycle(&d["cycle"], &["spine1.1:3", "leaf2.2:3"]),
        "{}",
        d["cycle"]
    );
    assert!(
        d["formed_at_ps"].as_u64().unwrap() > 100 * US,
        "after the failure"
    );
    assert_eq!(r["pathology"]["ended_by_deadlock_at_ps"], d["detected_at_ps"]);
    let stuck: Vec<&str> = d["stuck_flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        !stuck.is_empty()
            && stuck
                .iter()
                .all(|s| s.starts_with("b-to-a") || s.starts_with("c-to-a"))
    );
    // the failure cost the frames on and queued at the dead link
    assert!(r["conservation"]["dropped_frames"]["link_down"].as_u64().unwrap() > 0);
}

#[test]
fn rerouting_after_the_failure_removes_the_bounce_loop_and_the_deadlock() {
    let mut c = load("deadlock-bounce", &[], Some(Duration::from_ms(5)));
    for e in &mut c.pathology.events {
        if let TopologyAction::LinkDown { reroute, .. } = &mut e.action {
            *reroute = true;
        }
    }
    let r = report(c);
    assert!(findings(&r).is_empty(), "{:?}", findings(&r));
    assert_eq!(
        r["pathology"]["events"][0]["what"],
        "link spine1 – leaf1 down, rerouted"
    );
    // nothing dies of the hop limit and every flow keeps delivering after the failure
    // (24 Gb/s offered towards leaf1 over its one link left, spine2's 10 Gb/s: PFC shares
    // it; before 100 µs a flow delivers at most 33 frames)
    assert!(r["conservation"]["dropped_frames"].get("hop_limit").is_none());
    let total: u64 = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["delivered_frames"].as_u64().unwrap())
        .sum();
    for f in r["flows"].as_array().unwrap() {
        assert!(f["delivered_frames"].as_u64().unwrap() > 300, "{f}");
    }
    // and spine2 → leaf1 runs full: 10 Gb/s for 4.9 ms is 3,970 frames of 1522 bytes
    assert!(total > 3_900, "{total}");
}

#[test]
fn a_routing_loop_dies_of_the_hop_limit_without_a_deadlock_when_it_is_light() {
    // deadlock-bounce at 100 Mb/s per flow: the loop's frames circulate until their 64th
    // switch and are dropped, far too few to fill a buffer
    let mut c = load("deadlock-bounce", &[], Some(Duration::from_ms(5)));
    for f in &mut c.flows {
        f.pattern = lossless_sim::config::traffic::Pattern::Cbr {
            rate: lossless_proto::units::Rate::from_mbps(100),
        };
    }
    let r = report(c);
    assert!(findings(&r).is_empty());
    let hop = r["conservation"]["dropped_frames"]["hop_limit"]
        .as_u64()
        .expect("frames died in the loop");
    assert!(hop > 10, "{hop}");
    assert_eq!(r["pathology"]["ended_by_deadlock_at_ps"], Value::Null);
}
