//! Issue 14, storms: a stalled NIC's endless XOFF spreads to every tier of a Clos with no
//! watchdog (`storm`), and is contained by mlx5 NIC storm prevention (`storm-nic`) or by
//! SONiC's pfcwd in the switches (`storm-pfcwd`). Everything is read from the JSON report.

mod common;

use common::{load, run};
use lossless_proto::units::Duration;
use serde_json::Value;

const MS: u128 = 1_000_000_000;

fn json(name: &str, duration_ms: Option<u64>) -> Value {
    let r = run(load(name, &[], duration_ms.map(Duration::from_ms)));
    serde_json::to_value(&r).expect("serializes")
}

fn flow<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("flow {name}"))
}

fn delivered(r: &Value, name: &str) -> u64 {
    flow(r, name)["delivered_frames"].as_u64().unwrap()
}

const UNRELATED: [&str; 5] = [
    "unrelated-a",
    "unrelated-b",
    "unrelated-c",
    "unrelated-d",
    "unrelated-e",
];

fn lossless_drops(r: &Value, reason: &str) -> u64 {
    r["conservation"]["dropped_frames"][reason].as_u64().unwrap_or(0)
}

/// The detector's one finding, which must be a storm from `stalled`.
fn the_storm(r: &Value) -> &Value {
    let found = r["pathology"]["detector"].as_array().expect("the detector ran");
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(
        f["kind"], "storm",
        "a stalled receiver is a storm, not a deadlock"
    );
    assert_eq!(f["sink"], "stalled");
    assert_eq!(
        f["cycle"],
        serde_json::json!(["leaf1.0:3"]),
        "the queue facing the sink"
    );
    f
}

#[test]
fn without_a_watchdog_the_storm_reaches_every_tier_and_stops_the_unrelated_flows() {
    let early = json("storm", Some(40));
    let r = json("storm", None);
    let storm = the_storm(&r);
    // formed right after the stall (10 ms, one 1 ms scan) and never went away
    assert_eq!(storm["formed_at_ps"], 11 * MS as u64);
    assert!(storm["resolved_at_ps"].is_null());
    // every tier: the ToR's queue to the NIC, both spines' queues to that ToR, the other
    // leaves' uplinks, and every server's NIC
    let members: Vec<&str> = storm["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for m in [
        "leaf1.0:3",
        "spine1.0:3",
        "spine2.0:3",
        "leaf2.2:3",
        "leaf3.2:3",
        "leaf4.3:3",
    ] {
        assert!(members.contains(&m), "{m} not blocked: {members:?}");
    }
    for i in 1..=7 {
        let nic = format!("server{i}.0:3");
        assert!(members.contains(&nic.as_str()), "{nic} not paused: {members:?}");
        // and paused for nearly all of the 490 ms since the stall
        let port = r["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["node"] == format!("server{i}"))
            .unwrap();
        let paused = port["priorities"][0]["paused_ps"].as_u64().unwrap() as u128;
        assert!(paused > 480 * MS, "server{i} paused only {paused} ps");
    }
    // the unrelated flows, none to or from the stalled host, deliver nothing after 40 ms
    for f in UNRELATED {
        assert!(delivered(&early, f) > 300, "{f} ran before the stall");
        assert_eq!(
            delivered(&r, f),
            delivered(&early, f),
            "{f} delivered during the storm"
        );
    }
    // all of it lossless: nothing dropped, frames just stuck
    assert!(
        r["conservation"]["dropped_frames"]
            .as_object()
            .unwrap()
            .is_empty()
    );
    assert!(r["conservation"]["queued_frames"].as_u64().unwrap() > 0);
    let host = &r["pathology"]["hosts"][0];
    assert_eq!(host["host"], "stalled");
    assert_eq!(host["rx_stalled_ps"], 490 * MS as u64);
    // every host but the stalled one is paused by it: all seven NICs are in the storm
    let servers: Vec<String> = (1..=7).map(|i| format!("server{i}")).collect();
    assert_eq!(storm["hosts_blocked"], serde_json::json!(servers));
    assert!(storm["resolved_by"].is_null());
    let v = &r["pathology"]["verdict"];
    assert_eq!(
        (
            v["kind"].as_str(),
            v["storms_total"].as_u64(),
            v["deadlocks_total"].as_u64()
        ),
        (Some("storm"), Some(1), Some(0))
    );
    assert_eq!(v["unresolved_total"], 1);
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .starts_with("STORM from stalled: formed at 11 ms, 15 queues blocked (the NICs of 7 hosts among them), still there"),
        "{v}"
    );
}

#[test]
fn a_stall_that_ends_ends_the_storm_and_the_detector_says_the_receiver_resumed() {
    // the stall of `storm` lasting 50 ms instead of forever
    let mut c = load("storm", &[], Some(Duration::from_ms(200)));
    let stalled = &mut c.pathology.hosts[0];
    let (from, _) = stalled.rx_stall[0];
    stalled.rx_stall = vec![(from, Some(from + Duration::from_ms(50)))];
    let r = serde_json::to_value(run(c)).unwrap();
    let storm = the_storm(&r);
    let gone = storm["resolved_at_ps"].as_u64().expect("the storm ended") as u128;
    // the receiver drains from 60 ms; the ToR's queue moves at the next 1 ms scan
    assert!((60 * MS..=61 * MS).contains(&gone), "{gone}");
    assert_eq!(storm["resolved_by"], "receiver of stalled resumed");
    assert_eq!(r["pathology"]["verdict"]["unresolved_total"], 0);
    // a lossless recovery: nothing dropped, every unrelated flow delivering again
    assert!(
        r["conservation"]["dropped_frames"]
            .as_object()
            .unwrap()
            .is_empty()
    );
    let at_60 = json("storm", Some(60));
    for f in UNRELATED {
        assert!(
            delivered(&r, f) > delivered(&at_60, f) + 2000,
            "{f} did not recover"
        );
    }
}

#[test]
fn nic_storm_prevention_stops_pausing_after_its_timeout_and_the_fabric_recovers() {
    let at_110 = json("storm-nic", Some(110));
    let at_300 = json("storm-nic", Some(300));
    let r = json("storm-nic", None);
    let host = &r["pathology"]["hosts"][0];
    assert_eq!(host["pfc_prevention_tout_ps"], 100 * MS as u64);
    assert_eq!(host["tx_pause_storm_warning_events_total"], 1);
    assert_eq!(host["tx_pause_storm_error_events_total"], 1);
    // the request rose when the stalled buffer reached XOFF (just after 10 ms); pause stopped
    // 100 ms later
    let stopped = host["pause_stopped_at_ps"][0].as_u64().unwrap() as u128;
    assert!((110 * MS..111 * MS).contains(&stopped), "{stopped}");
    assert_eq!(host["pause_requested_ps"], 100 * MS as u64);
    // at 110 ms the storm still held the unrelated flows; from 300 ms to 500 ms each
    // delivers its 2 Gb/s again (9022-byte frames, 20 bytes of wire overhead: 27,716 a second)
    for f in UNRELATED {
        let gained = delivered(&r, f) - delivered(&at_300, f);
        assert!((5400..=5700).contains(&gained), "{f}: {gained} frames in 200 ms");
        assert!(
            delivered(&at_300, f) > delivered(&at_110, f) + 4000,
            "{f} recovered late"
        );
    }
    // the storm the detector saw ended with the prevention
    let storm = the_storm(&r);
    let gone = storm["resolved_at_ps"].as_u64().expect("the storm went away") as u128;
    assert!((110 * MS..=112 * MS).contains(&gone), "{gone}");
    assert_eq!(storm["resolved_by"], "NIC storm prevention of stalled");
    assert_eq!(r["pathology"]["verdict"]["unresolved_total"], 0);
    // the price: the stalled host's frames are dropped at its full buffer, nothing else
    assert!(host["rx_dropped_frames"].as_u64().unwrap() > 30_000);
    assert_eq!(
        lossless_drops(&r, "receiver_overflow"),
        host["rx_dropped_frames"].as_u64().unwrap()
    );
    assert_eq!(r["conservation"]["dropped_frames"].as_object().unwrap().len(), 1);
}

#[test]
fn pfcwd_detects_within_detection_plus_poll_drops_and_restores_all_but_the_stalled_port() {
    let r = json("storm-pfcwd", None);
    let wd = r["pathology"]["pfcwd"].as_array().unwrap();
    // every lossless queue of every switch is watched: 4 leaves × 4 ports + 2 spines × 4
    assert_eq!(wd.len(), 24);
    let q = |sw: &str, port: u64| {
        wd.iter()
            .find(|q| q["switch"] == sw && q["port"] == port)
            .unwrap_or_else(|| panic!("{sw}.{port}"))
    };
    let edge = q("leaf1", 0);
    assert_eq!(edge["peer"], "stalled");
    assert_eq!(
        (edge["action"].as_str(), edge["rule"].as_str()),
        (Some("drop"), Some("mellanox"))
    );
    let (detect, poll) = (
        edge["detection_time_ps"].as_u64().unwrap(),
        edge["poll_interval_ps"].as_u64().unwrap(),
    );
    assert_eq!((detect, poll), (200 * MS as u64, 200 * MS as u64));
    // detected at a poll, at most detection + poll after the queue stopped (the detector's
    // ground truth: blocked since 11 ms)
    let storm = &edge["storms"][0];
    let (at, since) = (
        storm["detected_at_ps"].as_u64().unwrap(),
        storm["blocked_since_ps"].as_u64().unwrap(),
    );
    assert_eq!(since, 11 * MS as u64);
    assert_eq!(at % poll, 0, "pfcwd acts at its polls");
    assert!(
        at - since >= detect && at - since <= detect + poll,
        "detected {} ms after",
        (at - since) as u128 / MS
    );
    // the stalled NIC never stops pausing: its queue stays in the drop state, dropping
    assert_eq!(edge["status"], "stormed");
    assert!(storm["restored_at_ps"].is_null());
    assert!(edge["tx_dropped_frames"].as_u64().unwrap() > 20_000);
    // the collateral queues the storm had stopped were stormed too, and all restored once
    // their peers stopped pausing them (no PFC for the restoration time)
    let collateral: Vec<&Value> = wd
        .iter()
        .filter(|q| {
            q["storms_detected_total"].as_u64().unwrap() > 0 && !(q["switch"] == "leaf1" && q["port"] == 0)
        })
        .collect();
    assert!(collateral.len() >= 5, "{collateral:?}");
    for c in &collateral {
        assert_eq!(c["status"], "operational", "{c}");
        let s = &c["storms"][0];
        let restored = s["restored_at_ps"].as_u64().unwrap();
        assert!(restored - s["detected_at_ps"].as_u64().unwrap() >= 200 * MS as u64);
    }
    // the detector's storm ended when pfcwd dropped the stalled queue, which it names first
    assert_eq!(the_storm(&r)["resolved_at_ps"], at);
    let by = the_storm(&r)["resolved_by"].as_str().unwrap();
    assert!(by.starts_with("pfcwd drop on leaf1.0:3, "), "{by}");
    // what stays alive: the unrelated flows deliver again once the collateral queues are
    // restored (by 800 ms), at their 2 Gb/s for the last 200 ms
    let at_800 = json("storm-pfcwd", Some(800));
    for f in UNRELATED {
        let gained = delivered(&r, f) - delivered(&at_800, f);
        assert!(
            (5400..=5700).contains(&gained),
            "{f}: {gained} frames in the last 200 ms"
        );
    }
    // pfcwd's drops are its only drops
    assert_eq!(r["conservation"]["dropped_frames"].as_object().unwrap().len(), 1);
    assert!(lossless_drops(&r, "pfcwd") > 0);
}

#[test]
fn storm_nic_without_its_explicit_headroom_drops_no_lossless_frame_into_headroom() {
    // its file sets 40,000 bytes because Annex N (22,133 at 10G, 10 m, MTU 9000) lost frames
    // when the fabric was released at once: a switch transmitting a jumbo frame to the port
    // it pauses costs one more frame. The default now counts it.
    let mut c = common::load("storm-nic", &[], None);
    common::clear_headroom(&mut c);
    let r = common::run(c);
    let overflow: u64 = r
        .ports
        .iter()
        .flat_map(|p| &p.priorities)
        .filter(|q| q.lossless)
        .filter_map(|q| q.drops_frames.get("headroom_overflow"))
        .sum();
    assert_eq!(overflow, 0);
}
