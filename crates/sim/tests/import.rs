//! `lossless import`: the SONiC config_db.json and mlnx_qos examples (examples/import/, with
//! their sources in its README) become scenarios that carry their PFC, DSCP map, buffer,
//! ECN and watchdog settings and run; bad input is refused with its file, line and path.

use std::path::PathBuf;

use lossless_proto::units::Duration;
use lossless_sim::config::qos::Trust;
use lossless_sim::config::{NodeKind, SimConfig};
use lossless_sim::scenario::import::{mlnx_qos, sonic};
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/import")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn load(toml: &str) -> SimConfig {
    load_str(toml, "imported.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

fn run(c: SimConfig) -> Report {
    let mut sim = Simulator::new(c).expect("builds");
    sim.run();
    let r = Report::collect(&sim);
    r.check().expect("conserved");
    r
}

fn dscp_map(t: &Trust) -> [u8; 64] {
    *t.dscp_map().expect("the switch port trusts DSCP")
}

#[test]
fn the_sonic_example_keeps_its_ports_pfc_dscp_map_buffers_ecn_and_watchdog_and_runs() {
    let imported = sonic::import(&example("sonic-config_db.json"), "sonic-config_db.json", &[]).unwrap();
    let c = load(&imported.toml);
    // the three ports with pfc_enable, each facing a host, in their natural order
    let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["h-Ethernet16", "h-Ethernet20", "h-Ethernet112", "sonic"]);
    for l in &c.links {
        assert_eq!(l.fc_b.active_mask(), 0b1_1000, "pfc_enable 3,4");
        assert_eq!(l.rate.bps(), 100_000_000_000);
        let m = dscp_map(&l.trust_b);
        // Azure's DSCP_TO_TC_MAP: 3 → 3, 4 → 4, 26 → 1, 48 → 6, 8 → 0
        assert_eq!((m[3], m[4], m[26], m[48], m[8], m[46]), (3, 4, 1, 6, 0, 5));
        assert_eq!(l.trust_a, Trust::Pcp, "the host's NIC trusts PCP");
    }
    // CABLE_LENGTH: 5 m, 5 m, 40 m
    let lengths: Vec<u64> = c.links.iter().map(|l| l.length_m).collect();
    assert_eq!(lengths, [5, 5, 40]);
    let NodeKind::Switch(sw) = &c.nodes[3].kind else {
        panic!("a switch")
    };
    // the 40 m profile's xoff, and the lossless pool plus it for 3 ports × 2 priorities
    assert_eq!(sw.headroom_bytes, Some(35_840));
    assert_eq!(sw.buffer_bytes, 4_194_304 + 6 * 35_840);
    assert_eq!(sw.mtu, 9100);
    let ecn = sw.ecn.as_ref().expect("WRED_PROFILE AZURE_LOSSLESS marks");
    let e = ecn.config.as_ref().unwrap();
    assert_eq!(
        (e.kmin_bytes, e.kmax_bytes, e.pmax),
        (2_000_000, 10_000_000, 0.05)
    );
    assert_eq!(ecn.priorities, 0b1_1000);
    let (_, wd) = &c.pathology.pfcwd[0];
    assert_eq!(
        (wd.detection, wd.restoration, wd.poll),
        (
            Duration::from_ms(300),
            Duration::from_ms(200),
            Duration::from_ms(100)
        )
    );
    // DSCP 26 is lossy under Azure's map: the traffic takes DSCP 3 → TC 3
    assert!(imported.toml.contains("dscp = 3"), "{}", imported.toml);
    assert!(
        c.flows
            .iter()
            .all(|f| f.priority == 3 && f.transport.as_ref().unwrap().dscp == 3)
    );
    // what SONiC has and the simulator does not is said, in the header too
    assert!(
        imported
            .unmapped
            .iter()
            .any(|u| u.contains("xon (an absolute XON threshold)"))
    );
    assert!(
        imported
            .unmapped
            .iter()
            .any(|u| u.contains("the largest, 35840 bytes"))
    );
    assert!(imported.toml.contains("#   - SCHEDULER: not read"));
    let r = run(c);
    assert_eq!(r.conservation.dropped_frames.values().sum::<u64>(), 0);
    let fct = &r.fct;
    assert_eq!(
        fct.all.as_ref().unwrap().flows_completed_total,
        2,
        "both QPs deliver their 1 MB"
    );
}

#[test]
fn only_the_ports_named_are_imported() {
    let ports = ["Ethernet112".to_string(), "Ethernet16".to_string()];
    let imported = sonic::import(&example("sonic-config_db.json"), "x.json", &ports).unwrap();
    let c = load(&imported.toml);
    let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["h-Ethernet112", "h-Ethernet16", "sonic"]);
    let NodeKind::Switch(sw) = &c.nodes[2].kind else {
        panic!()
    };
    assert_eq!(sw.buffer_bytes, 4_194_304 + 4 * 35_840);
}

/// The buffer tables of the db_migrator test input (flat `TABLE|key` keys, references in
/// brackets), and the same as nested config_db.json tables.
const FLAT: &str = r#"{
    "BUFFER_PG|Ethernet16|3-4": { "profile": "[BUFFER_PROFILE|pg_lossless_100000_5m_profile]" },
    "BUFFER_PG|Ethernet20|3-4": { "profile": "[BUFFER_PROFILE|pg_lossless_100000_5m_profile]" },
    "BUFFER_POOL|ingress_lossless_pool": { "type": "ingress", "mode": "dynamic", "size": "4194304" },
    "BUFFER_PROFILE|pg_lossless_100000_5m_profile": {
        "xon": "18432", "dynamic_th": "0", "xoff": "18432",
        "pool": "[BUFFER_POOL|ingress_lossless_pool]", "size": "36864"
    },
    "CABLE_LENGTH|AZURE": { "Ethernet16": "5m", "Ethernet20": "5m" },
    "PORT|Ethernet16": { "mtu": "9100", "speed": "100000" },
    "PORT|Ethernet20": { "mtu": "9100", "speed": "25000" },
    "PORT_QOS_MAP|Ethernet16": { "pfc_enable": "3,4" },
    "PORT_QOS_MAP|Ethernet20": { "pfc_enable": "3,4" }
}"#;

const NESTED: &str = r#"{
    "BUFFER_PG": {
        "Ethernet16|3-4": { "profile": "pg_lossless_100000_5m_profile" },
        "Ethernet20|3-4": { "profile": "pg_lossless_100000_5m_profile" }
    },
    "BUFFER_POOL": { "ingress_lossless_pool": { "type": "ingress", "mode": "dynamic", "size": "4194304" } },
    "BUFFER_PROFILE": { "pg_lossless_100000_5m_profile": {
        "xon": "18432", "dynamic_th": "0", "xoff": "18432", "pool": "ingress_lossless_pool", "size": "36864"
    } },
    "CABLE_LENGTH": { "AZURE": { "Ethernet16": "5m", "Ethernet20": "5m" } },
    "PORT": { "Ethernet16": { "mtu": "9100", "speed": "100000" }, "Ethernet20": { "mtu": "9100", "speed": "25000" } },
    "PORT_QOS_MAP": { "Ethernet16,Ethernet20": { "pfc_enable": "3,4" } }
}"#;

#[test]
fn a_flat_config_db_dump_imports_as_its_nested_form_does() {
    let a = sonic::import(FLAT, "same.json", &[]).unwrap();
    let b = sonic::import(NESTED, "same.json", &[]).unwrap();
    assert_eq!(a, b);
    let c = load(&a.toml);
    // 25000 Mb/s is 25G; without a DSCP map the port trusts PCP and the traffic runs on TC 3
    assert_eq!(c.links[1].rate.bps(), 25_000_000_000);
    assert_eq!(c.links[0].trust_b, Trust::Pcp);
    assert!(c.flows.iter().all(|f| f.priority == 3));
    run(c);
}

#[test]
fn bad_sonic_input_names_the_line_and_json_path() {
    let e = sonic::import("{\n  \"PORT\": [1,\n", "bad.json", &[]).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.path.as_str()),
        ("bad.json", 3, "(JSON)")
    );
    let cases = [
        (
            NESTED.replace("\"3,4\"", "\"3,9\""),
            "PORT_QOS_MAP/Ethernet16,Ethernet20/pfc_enable",
            "found \"9\"; expected a whole number 0..=7",
        ),
        (
            NESTED.replace(
                "\"profile\": \"pg_lossless_100000_5m_profile\" },\n        \"Ethernet20",
                "\"profile\": \"pg_nope\" },\n        \"Ethernet20",
            ),
            "BUFFER_PG/Ethernet16|3-4/profile",
            "names BUFFER_PROFILE \"pg_nope\", which the file does not have",
        ),
        (
            NESTED.replace("\"5m\" }", "\"5 metres\" }"),
            "CABLE_LENGTH/AZURE/Ethernet20",
            "expected metres such as \"5m\"",
        ),
        (
            NESTED.replace("\"xoff\": \"18432\"", "\"xoff\": \"lots\""),
            "BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff",
            "found \"lots\"",
        ),
        (
            NESTED.replace("\"speed\": \"25000\"", "\"speed\": [25000]"),
            "PORT/Ethernet20/speed",
            "found [25000]; expected a string",
        ),
    ];
    for (text, path, msg) in cases {
        let e = sonic::import(&text, "c.json", &[]).unwrap_err();
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(msg), "{e}");
        assert!(e.line > 1, "{e}");
        let line = text.lines().nth(e.line - 1).unwrap();
        let last = path.rsplit('/').next().unwrap();
        assert!(
            line.contains(last),
            "line {} is {line:?}, expected it to hold {last:?}",
            e.line
        );
    }
}

#[test]
fn a_sonic_file_without_two_ports_to_import_is_refused_with_what_to_do() {
    let e = sonic::import(
        "{\"PORT\": {\"Ethernet0\": {\"speed\": \"100000\"}}}",
        "one.json",
        &[],
    )
    .unwrap_err();
    assert!(e.message.contains("name them with --port"), "{e}");
    let e = sonic::import(NESTED, "c.json", &["Ethernet16".into(), "Ethernet99".into()]).unwrap_err();
    assert!(
        e.message
            .contains("port \"Ethernet99\" is in neither PORT nor PORT_QOS_MAP"),
        "{e}"
    );
    let e = sonic::import("[1, 2]", "arr.json", &[]).unwrap_err();
    assert!(
        e.message.contains("expected the config_db.json object of tables"),
        "{e}"
    );
}

#[test]
fn the_mlnx_qos_example_keeps_trust_map_pfc_ets_and_cable_and_runs() {
    let imported = mlnx_qos::import(&example("mlnx_qos-eth2.txt"), "mlnx_qos-eth2.txt", "100G").unwrap();
    let c = load(&imported.toml);
    for l in &c.links {
        assert_eq!(l.length_m, 10, "Cable len: 10");
        // PFC enabled 1 0 1 0 0 0 1 1
        assert_eq!(l.fc_a.active_mask(), 0b1100_0101);
        assert_eq!(l.fc_b.active_mask(), 0b1100_0101);
        assert_eq!(dscp_map(&l.trust_a)[26], 3);
        assert_eq!(dscp_map(&l.trust_b)[7], 0);
        let ets = l.ets.as_ref().expect("ETS");
        assert_eq!(ets.prio_tc(), [1, 0, 2, 3, 4, 5, 6, 7]);
        assert_eq!(ets.bandwidth(), [10, 10, 10, 10, 10, 10, 0, 40]);
    }
    // DSCP 26 → priority 3 has PFC off here: the QPs take DSCP 0 → priority 0, which has it
    assert!(
        c.flows
            .iter()
            .all(|f| f.priority == 0 && f.transport.as_ref().unwrap().dscp == 0)
    );
    assert_eq!(
        imported.unmapped,
        ["line 1: \"DCBX mode: OS controlled\" not mapped"]
    );
    let r = run(c);
    assert_eq!(r.fct.all.as_ref().unwrap().flows_completed_total, 4);
}

#[test]
fn mlnx_qos_under_pcp_trust_sends_on_the_first_pfc_priority() {
    let text = "Priority trust state: pcp\nPFC configuration:\n\tpriority 0 1 2 3 4 5 6 7\n\tenabled 0 0 0 1 0 0 0 0\n";
    let imported = mlnx_qos::import(text, "pcp.txt", "25G").unwrap();
    let c = load(&imported.toml);
    assert_eq!(c.links[0].trust_a, Trust::Pcp);
    assert_eq!(c.links[0].rate.bps(), 25_000_000_000);
    assert!(c.flows.iter().all(|f| f.priority == 3));
    assert!(
        imported
            .unmapped
            .iter()
            .any(|u| u.contains("no `Cable len` line"))
    );
}

#[test]
fn bad_mlnx_qos_text_names_its_line_and_section() {
    let cases = [
        (
            "PFC configuration:\n priority 0 1 2 3\n enabled 0 1 2 0\n",
            3,
            "PFC configuration",
            "found \"2\"; expected a number 0..=1",
        ),
        (
            "PFC configuration:\n priority 0 1 2 3\n enabled 0 1\n",
            3,
            "PFC configuration",
            "2 `enabled` values for 4 priorities",
        ),
        (
            "Priority trust state: both\n",
            1,
            "Priority trust state",
            "expected pcp or dscp",
        ),
        (
            "dscp2prio mapping:\n prio:9 dscp:01,\n",
            2,
            "dscp2prio mapping",
            "found priority \"9\"",
        ),
        (
            "dscp2prio mapping:\n prio:1 dscp:64,\n",
            2,
            "dscp2prio mapping",
            "found DSCP \"64\"",
        ),
        (
            "tc: 0 ratelimit: unlimited, tsa: ets, bw: 140%\n",
            1,
            "tc",
            "bw is not 0..=100 %",
        ),
        ("Cable len: far\n", 1, "Cable len", "expected metres"),
    ];
    for (text, line, path, msg) in cases {
        let e = mlnx_qos::import(text, "q.txt", "100G").unwrap_err();
        assert_eq!((e.line, e.path.as_str()), (line, path), "{e}");
        assert!(e.message.contains(msg), "{e}");
        assert!(
            e.to_string().starts_with(&format!("q.txt:{line}: {path}: ")),
            "{e}"
        );
    }
    let e = mlnx_qos::import("Cable len: 3\n", "q.txt", "100G").unwrap_err();
    assert!(e.message.contains("`PFC configuration:` section"), "{e}");
}

#[test]
fn an_import_whose_scenario_would_not_load_says_so() {
    // a speed that is no Ethernet rate reaches the loader, which refuses it
    let e = mlnx_qos::import("PFC configuration:\n priority 3\n enabled 1\n", "q.txt", "3G").unwrap_err();
    assert!(e.message.starts_with("does not load: "), "{e}");
}
