//! DCBX in the simulator, asserted from the JSON metrics: willing hosts adopt a non-willing
//! switch's PFC before lossless traffic starts (`dcbx-adopt`), and two unwilling ends that
//! disagree leave PFC not operational and lose frames (`dcbx-disagree`).

mod common;

use common::{drops_of_priority, load, run};
use lossless_sim::Report;
use serde_json::Value;

fn json(r: &Report) -> Value {
    serde_json::to_value(r).expect("serializes")
}

/// The JSON object of port `node` → `peer`.
fn port<'a>(j: &'a Value, node: &str, peer: &str) -> &'a Value {
    j["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["node"] == node && p["peer"] == peer)
        .unwrap_or_else(|| panic!("port {node} → {peer}"))
}

#[test]
fn willing_hosts_adopt_the_switch_pfc_priority_before_lossless_traffic_starts() {
    let r = run(load("dcbx-adopt", &[], None));
    let j = json(&r);
    let start_ps = 20_000_000u64; // the lossless flow starts at 20 us
    for (host, _) in [("sender1", 0), ("sender2", 1), ("receiver", 2)] {
        let d = &port(&j, host, "tor")["dcbx"];
        assert_eq!(
            d["operational_pfc_priorities"],
            serde_json::json!([3]),
            "{host}: {d}"
        );
        assert_eq!(d["pfc_source"], "peer", "{host} adopted: {d}");
        assert_eq!(d["peer"], true);
        let at = d["operational_at_ps"].as_u64().expect("became operational");
        assert!(at < start_ps, "{host} adopted at {at} ps, after traffic started");
        // one LLDPDU each way on a 5 m, 100 Gb/s link: well under a microsecond
        assert!(at < 1_000_000, "{host}: {at} ps");
        assert_eq!(d["ets_source"], "peer");
        assert_eq!(
            d["operational_ets_up2tc"],
            serde_json::json!([0, 0, 0, 1, 0, 0, 0, 0])
        );
        assert!(d["lldp"]["frames_in_total"].as_u64().unwrap() >= 1);
        assert_eq!(d["lldp"]["frames_discarded_total"], 0);
        let sw = &port(&j, "tor", host)["dcbx"];
        assert_eq!(
            sw["operational_pfc_priorities"],
            serde_json::json!([3]),
            "tor → {host}: {sw}"
        );
        assert_eq!(sw["pfc_source"], "local");
    }
    // PFC is really running: the switch paused the senders, and nothing lossless was lost
    let paused: u64 = ["sender1", "sender2"]
        .iter()
        .map(|h| {
            port(&j, h, "tor")["priorities"][0]["pfc_xoff_received_frames"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert!(paused > 0, "the switch never paused a sender");
    assert_eq!(r.lossless_drops(), 0);
    assert_eq!(drops_of_priority(&r, 3), 0);
}

#[test]
fn unwilling_ends_that_disagree_leave_pfc_not_operational_and_lose_frames() {
    let r = run(load("dcbx-disagree", &[], None));
    let j = json(&r);
    for (node, peer) in [("stubborn", "tor"), ("tor", "stubborn")] {
        let d = &port(&j, node, peer)["dcbx"];
        assert_eq!(d["pfc_operational"], false, "{node} → {peer}: {d}");
        assert_eq!(d["operational_pfc_priorities"], serde_json::json!([]));
        assert_eq!(d["operational_at_ps"], Value::Null);
        let reason = d["pfc_not_operational_reason"].as_str().unwrap();
        assert!(
            reason.contains('3') && reason.contains('4'),
            "names both vectors: {reason}"
        );
        assert_eq!(port(&j, node, peer)["flow_control"], "off");
    }
    // the agreeing link runs PFC and loses nothing; the disagreeing one drops priority 3
    assert_eq!(
        port(&j, "willing", "tor")["dcbx"]["operational_pfc_priorities"],
        serde_json::json!([3])
    );
    assert_eq!(r.flow("from-willing").unwrap().dropped_frames, 0);
    let lost = r.flow("from-stubborn").unwrap().dropped_frames;
    assert!(lost > 0, "no frames lost without PFC");
    let at_tor = &port(&j, "tor", "stubborn")["dcbx"];
    assert_eq!(
        at_tor["local_pfc_not_operational_drops_frames"].as_u64(),
        Some(lost)
    );
    assert_eq!(drops_of_priority(&r, 3), lost);
}

#[test]
fn without_dcbx_the_same_ports_run_no_agent_and_send_no_lldp() {
    let r = run(load("dcbx-adopt", &["defaults.dcbx=false"], None));
    let j = json(&r);
    for p in j["ports"].as_array().unwrap() {
        assert_eq!(p["dcbx"], Value::Null);
        assert_eq!(p["lldp_ignored_frames"], 0);
    }
}

#[test]
fn dcbx_runs_are_deterministic() {
    let a = json(&run(load("dcbx-disagree", &[], None)));
    let b = json(&run(load("dcbx-disagree", &[], None)));
    assert_eq!(a, b);
}

#[test]
fn a_dcbx_port_whose_peer_runs_no_dcbx_keeps_pfc_off_and_the_peer_ignores_its_lldpdus() {
    // sender1's end runs no agent: the switch port facing it never sees a DCBX peer
    let text = lossless_sim::scenario::builtin("dcbx-adopt")
        .unwrap()
        .text
        .replace(
            "a = \"sender*\"\nb = \"tor\"",
            "a = \"sender*\"\nb = \"tor\"\na_end = { dcbx = false }",
        );
    let c = lossless_sim::scenario::load_str(&text, "x.toml", None, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let r = run(c);
    let j = json(&r);
    let sw = &port(&j, "tor", "sender1")["dcbx"];
    assert_eq!(sw["peer"], false, "{sw}");
    assert_eq!(sw["operational_pfc_priorities"], serde_json::json!([]));
    assert_eq!(sw["operational_at_ps"], Value::Null);
    assert!(sw["lldp_sent_frames"].as_u64().unwrap() >= 1);
    let host = port(&j, "sender1", "tor");
    assert_eq!(host["dcbx"], Value::Null);
    assert_eq!(host["lldp_ignored_frames"], sw["lldp_sent_frames"]);
    assert_eq!(port(&j, "tor", "sender1")["flow_control"], "off");
}

/// Runs `dcbx-adopt` to `change_at`, gives the switch's ports PFC `enable` (as `lldptool -T`
/// would), runs to the end; returns the reports before and after, and the run's fault if any.
/// dcbx-adopt's switch DCBX configuration with PFC on `enable`.
fn tor_dcbx(config: &lossless_sim::config::SimConfig, enable: Vec<u8>) -> lossless_proto::dcbx::DcbxConfig {
    let mut cfg = config
        .nodes
        .iter()
        .find(|n| n.name == "tor")
        .and_then(|n| n.dcbx.clone())
        .expect("the switch has a DCBX table");
    cfg.pfc.enable = enable;
    cfg
}

fn adopt_then_change(change_at_us: u64, enable: Vec<u8>) -> (Report, Report, Option<String>) {
    use lossless_proto::units::{Duration, Instant};
    let config = load("dcbx-adopt", &[], None);
    let tor_cfg = tor_dcbx(&config, enable);
    let mut sim = lossless_sim::Simulator::new(config).expect("builds");
    sim.run_until(Instant::ZERO + Duration::from_us(change_at_us));
    let before = Report::collect(&sim);
    for (i, p) in before.ports.iter().enumerate() {
        if p.node == "tor" {
            sim.set_dcbx_config(i as u32, tor_cfg.clone())
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    sim.run();
    let fault = sim.fault().map(str::to_string);
    (before, Report::collect(&sim), fault)
}

fn prio3(j: &Value, node: &str, peer: &str, key: &str) -> u64 {
    port(j, node, peer)["priorities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["priority"] == 3)
        .unwrap_or_else(|| panic!("{node} → {peer}: no priority 3"))[key]
        .as_u64()
        .unwrap()
}

#[test]
fn pause_counters_recorded_before_a_dcbx_change_survive_it() {
    // 280 us into the run the switch adds priority 4 to its PFC vector; the hosts adopt it.
    // Pause time accumulated over 20..280 us must still be in the final report (20 us more
    // of traffic cannot make up for a reset).
    let (before, after, fault) = adopt_then_change(280, vec![3, 4]);
    assert_eq!(fault, None);
    after.check().expect("every frame accounted for");
    let (b, a) = (json(&before), json(&after));
    for host in ["sender1", "sender2"] {
        let d = &port(&a, host, "tor")["dcbx"];
        assert_eq!(d["operational_pfc_priorities"], serde_json::json!([3, 4]), "{d}");
        assert!(
            d["reconfigurations"].as_u64() > port(&b, host, "tor")["dcbx"]["reconfigurations"].as_u64(),
            "{host} reconfigured again"
        );
        let paused = prio3(&b, host, "tor", "paused_ps");
        assert!(
            paused > 50_000_000,
            "{host} was paused before the change: {paused} ps"
        );
        assert!(
            prio3(&a, host, "tor", "paused_ps") >= paused,
            "{host}: paused time before the change lost ({} < {paused})",
            prio3(&a, host, "tor", "paused_ps")
        );
        let requested = prio3(&b, "tor", host, "xoff_requested_ps");
        assert!(requested > 50_000_000, "tor → {host}: {requested} ps");
        assert!(prio3(&a, "tor", host, "xoff_requested_ps") >= requested);
    }
    assert_eq!(
        after.lossless_drops(),
        0,
        "priority 3 stayed lossless across the change"
    );
}

#[test]
fn removing_a_congested_priority_from_the_pfc_vector_neither_stops_the_run_nor_loses_frames_silently() {
    // at 150 us the switch moves PFC from priority 3 (congested, in XOFF) to 4; the hosts
    // adopt it. Buffer pairs still in XOFF on priority 3 must not make the engine refuse a
    // request (that stopped the run as an engine fault), and every frame stays accounted for.
    let (_, after, fault) = adopt_then_change(150, vec![4]);
    assert_eq!(fault, None, "the run went to its end");
    after.check().expect("every frame accounted for");
    let j = json(&after);
    for host in ["sender1", "sender2"] {
        let d = &port(&j, host, "tor")["dcbx"];
        assert_eq!(d["operational_pfc_priorities"], serde_json::json!([4]), "{d}");
    }
}

#[test]
fn pause_time_before_dcbx_turns_pfc_off_is_still_reported() {
    // at 280 us the switch's PFC vector becomes empty: the hosts adopt it and their flow
    // control is off from then on, but what they were paused before stays in the report
    let (before, after, fault) = adopt_then_change(280, vec![]);
    assert_eq!(fault, None);
    after.check().expect("every frame accounted for");
    let (b, a) = (json(&before), json(&after));
    for host in ["sender1", "sender2"] {
        assert_eq!(
            port(&a, host, "tor")["flow_control"],
            "off",
            "{host} adopted PFC off"
        );
        let paused = prio3(&b, host, "tor", "paused_ps");
        assert!(
            paused > 50_000_000,
            "{host} was paused before the change: {paused} ps"
        );
        // kept, plus at most the pause that ran until the host applied the new vector (one
        // LLDPDU exchange, well under a microsecond), nothing after
        let kept = prio3(&a, host, "tor", "paused_ps");
        assert!(
            kept >= paused && kept - paused < 1_000_000,
            "{host}: {kept} ps paused after PFC went off, {paused} ps before"
        );
    }
}

#[test]
fn observers_see_the_requests_a_dcbx_change_drops_end() {
    // the VCD's fc_rdy trace and the HTML pause timeline follow request_changed: a request
    // the reconfiguration drops must end there too, not stay raised forever
    use lossless_proto::units::{Duration, Instant};
    use lossless_sim::frame::PortId;
    use lossless_sim::observer::Observer;
    use std::collections::BTreeMap;
    #[derive(Default)]
    struct Requests(BTreeMap<(PortId, u8), Vec<bool>>);
    impl Observer for Requests {
        fn request_changed(&mut self, port: PortId, prio: u8, on: bool, _at: Instant) {
            self.0.entry((port, prio)).or_default().push(on);
        }
    }
    let config = load("dcbx-adopt", &[], None);
    let tor_cfg = tor_dcbx(&config, vec![4]);
    let mut sim = lossless_sim::Simulator::with_observer(config, Requests::default()).expect("builds");
    sim.run_until(Instant::ZERO + Duration::from_us(150));
    let raised_at_change: Vec<(PortId, u8)> = sim
        .observer()
        .0
        .iter()
        .filter(|(_, v)| v.last() == Some(&true))
        .map(|(k, _)| *k)
        .collect();
    assert!(
        raised_at_change.iter().any(|&(_, q)| q == 3),
        "priority 3 was in XOFF somewhere when the vector changed"
    );
    let ports: Vec<PortId> = Report::collect(&sim)
        .ports
        .iter()
        .enumerate()
        .filter(|(_, p)| p.node == "tor")
        .map(|(i, _)| i as PortId)
        .collect();
    for p in ports {
        sim.set_dcbx_config(p, tor_cfg.clone())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    sim.run();
    assert_eq!(sim.fault(), None);
    for ((port, q), v) in &sim.observer().0 {
        if *q == 3 {
            assert_eq!(
                v.last(),
                Some(&false),
                "port {port}: priority 3's request never ended: {v:?}"
            );
        }
    }
}

#[test]
fn a_dcbx_change_on_a_missing_port_or_one_without_an_agent_says_which() {
    use lossless_sim::DcbxChangeError;
    let config = load("dcbx-adopt", &[], None);
    let tor_cfg = tor_dcbx(&config, vec![3]);
    let four_bridge = load("four-bridge", &[], None);
    let mut sim = lossless_sim::Simulator::new(config).expect("builds");
    let ports = Report::collect(&sim).ports.len();
    assert_eq!(
        sim.set_dcbx_config(ports as u32, tor_cfg.clone()),
        Err(DcbxChangeError::NoSuchPort {
            port: ports as u32,
            ports
        })
    );
    // four-bridge runs no DCBX at all
    let mut plain = lossless_sim::Simulator::new(four_bridge).expect("builds");
    assert_eq!(
        plain.set_dcbx_config(0, tor_cfg),
        Err(DcbxChangeError::NoAgent { port: 0 })
    );
}
