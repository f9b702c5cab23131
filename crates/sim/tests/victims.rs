//! Issue 14, victims: per-flow PFC blocking per hop, whether the pause came from congestion
//! on the flow's own path, victim classification and the throughput victims lose, on
//! four-bridge (document 003 §3.2), read from the JSON report.

mod common;

use common::{load, run};
use serde_json::Value;

fn four_bridge() -> Value {
    serde_json::to_value(run(load("four-bridge", &[], None))).expect("serializes")
}

fn victim_entry<'a>(r: &'a Value, flow: &str) -> &'a Value {
    r["pathology"]["victims"]["flows"]
        .as_array()
        .expect("four-bridge accounts victims")
        .iter()
        .find(|f| f["flow"] == flow)
        .unwrap_or_else(|| panic!("{flow}"))
}

#[test]
fn the_victim_flow_is_a_victim_paused_by_bridge4_for_the_red_links_congestion() {
    let r = four_bridge();
    let v = victim_entry(&r, "victim");
    assert_eq!(v["victim"], true);
    assert_eq!(v["paused_by"], serde_json::json!(["bridge4.0"]));
    let hops = v["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 3);
    assert_eq!(hops[0]["egress"], "client1.0 → bridge1");
    assert_eq!(hops[1]["egress"], "bridge1.1 → bridge4");
    assert_eq!(hops[2]["egress"], "bridge4.4 → server");
    // at bridge1 → bridge4 every paused moment was caused off its path: by bridge4's red
    // link, which the victim never crosses
    assert_eq!(hops[1]["paused_by"], "bridge4.0");
    assert_eq!(hops[1]["off_path_cause"], "bridge4.3 → sink");
    assert_eq!(hops[1]["off_path_blocked_ps"], hops[1]["blocked_ps"]);
    assert!(
        hops[1]["blocked_ps"].as_u64().unwrap() > 500_000_000,
        "{}",
        hops[1]
    );
    // its own last hop is never paused
    assert_eq!(hops[2]["blocked_ps"], 0);
    assert!(v["off_path_blocked_ratio"].as_f64().unwrap() > 0.5);
    // its fair share is what it offers (20 Gb/s of wire, 19.74 of frame bits): it loses most
    let share = v["fair_share_bps"].as_u64().unwrap();
    assert!((19_700_000_000..19_800_000_000).contains(&share), "{share}");
    let flow = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "victim")
        .unwrap();
    let lost = v["throughput_lost_bps"].as_u64().unwrap();
    assert_eq!(lost, share - flow["throughput_bps"].as_u64().unwrap());
    assert!(lost > 10_000_000_000, "{lost}");
}

#[test]
fn the_lossless_client_flows_are_blocked_by_their_own_bottleneck_only() {
    let r = four_bridge();
    for i in 1..=3 {
        let f = victim_entry(&r, &format!("lossless:client{i}"));
        assert_eq!(f["victim"], false, "{f}");
        // paused at both upstream hops, always for congestion on their own path
        assert!(f["blocked_ps"].as_u64().unwrap() > 1_000_000_000, "{f}");
        assert_eq!(f["off_path_blocked_ps"], 0, "{f}");
        assert_eq!(f["throughput_lost_bps"], 0);
        // max-min: six flows share the 40 Gb/s red link
        let share = f["fair_share_bps"].as_u64().unwrap();
        assert!((6_500_000_000..6_700_000_000).contains(&share), "{share}");
    }
    // the lossy flows are never paused
    for i in 1..=3 {
        let f = victim_entry(&r, &format!("lossy:client{i}"));
        assert_eq!(
            (f["victim"].as_bool(), f["blocked_ps"].as_u64()),
            (Some(false), Some(0))
        );
    }
    let prios = r["pathology"]["victims"]["priorities"].as_array().unwrap();
    let p3 = prios.iter().find(|p| p["priority"] == 3).unwrap();
    assert_eq!(
        (p3["flows_total"].as_u64(), p3["victims_total"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(
        p3["throughput_lost_bps"],
        victim_entry(&r, "victim")["throughput_lost_bps"]
    );
    let p0 = prios.iter().find(|p| p["priority"] == 0).unwrap();
    assert_eq!(p0["victims_total"], 0);
}

#[test]
fn the_summary_names_the_victim_and_who_paused_it() {
    let r = run(load("four-bridge", &[], None));
    let text = r.summary();
    // the victims table follows its header; the flow table above has a `victim` row too
    let table = &text[text.find("victims: flow").unwrap_or_else(|| panic!("{text}"))..];
    let line = table
        .lines()
        .find(|l| l.starts_with("victim "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("yes") && line.contains("bridge4.0"), "{line}");
    // and under it the hops that held it: its own uplink for its own congestion, bridge1's
    // uplink for the red link's
    let hops: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("victim "))
        .skip(1)
        .take_while(|l| l.starts_with("    at "))
        .collect();
    assert_eq!(hops.len(), 2, "{text}");
    assert!(
        hops[0].starts_with("    at client1.0 → bridge1: blocked ")
            && hops[0].contains("off path 0 ps, paused by bridge1.0")
    );
    assert!(
        hops[1].starts_with("    at bridge1.1 → bridge4: blocked ")
            && hops[1].ends_with("paused by bridge4.0 for bridge4.3 → sink"),
        "{}",
        hops[1]
    );
    assert!(text.contains("victims of priority 3: 1 of 4 flows"), "{text}");
}

#[test]
fn a_scenario_without_pathology_keys_reports_no_pathology_section() {
    let mut c = load("four-bridge", &[], None);
    c.pathology.victims = None;
    let v = serde_json::to_value(run(c)).unwrap();
    assert!(v.get("pathology").is_none());
}
