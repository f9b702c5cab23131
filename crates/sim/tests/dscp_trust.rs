//! DSCP-based PFC: a port that trusts DSCP classifies the RoCEv2 packets it receives by their
//! DSCP (data and replies: the QP's `dscp`; CNPs: `dcqcn.cnp_dscp`) through its `dscp2prio`
//! map; NVIDIA's defaults (26 → 3, 48 → 6) change nothing for a fabric that already sends on
//! those priorities; a QP whose priority keys disagree with a trusting NIC's map is refused.

use lossless_proto::units::Duration;
use lossless_sim::scenario::{Overrides, load, load_str};
use lossless_sim::{Report, Simulator};

fn run_config(c: lossless_sim::config::SimConfig) -> Report {
    let mut sim = Simulator::new(c).expect("builds");
    sim.run();
    let r = Report::collect(&sim);
    r.check().expect("conserved");
    r
}

fn ov(set: &[&str]) -> Overrides {
    Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        seed: None,
        duration: Some(Duration::from_us(300)),
    }
}

#[test]
fn trusting_dscp_with_the_connectx_default_map_reproduces_pcp_trust_byte_for_byte() {
    let pcp = run_config(load("incast-dcqcn", &ov(&["senders=4"])).unwrap());
    let dscp = run_config(load("incast-dcqcn", &ov(&["senders=4", "defaults.trust=\"dscp\""])).unwrap());
    let a = serde_json::to_string(&pcp).unwrap();
    let b = serde_json::to_string(&dscp).unwrap();
    assert!(
        pcp.cn.as_ref().is_some_and(|c| c.cnps_sent_total > 0),
        "the incast sends CNPs"
    );
    assert_eq!(a, b);
}

/// Senders tag their packets with PCP 0 (they trust PCP); the switch trusts DSCP on every
/// port: data (DSCP 26) goes to priority 5 and CNPs (DSCP 48) to priority 2.
const SWITCH_TRUSTS_DSCP: &str = r#"
name = "switch-trusts-dscp"
duration = "300us"
[defaults]
rate = "100G"
length_m = 5
flow_control = "pfc"
pfc_priorities = [5]
[qp]
cc = "dcqcn"
preset = "hpcc-ns3"
dcqcn = { cnp_mode = "packet", cnp_802p_prio = 0 }
[ecn]
preset = "hpcc-ns3"
priorities = [5]
[[host]]
name = "s"
count = 4
[[host]]
name = "r"
[[switch]]
name = "tor"
buffer_bytes = 12_000_000
[[link]]
a = "s*"
b = "tor"
b_end = { trust = "dscp", dscp2prio = { 26 = 5, 48 = 2 } }
[[link]]
a = "tor"
b = "r"
a_end = { trust = "dscp", dscp2prio = { 26 = 5, 48 = 2 } }
[[flow]]
name = "qp"
src = "s*"
dst = "r"
priority = 0
transport = "rocev2"
"#;

#[test]
fn a_switch_that_trusts_dscp_queues_roce_data_and_cnps_on_their_mapped_priorities() {
    let c = load_str(SWITCH_TRUSTS_DSCP, "inline.toml", None, &Overrides::default()).unwrap();
    let r = run_config(c);
    let tor = |peer: &str| {
        r.ports
            .iter()
            .find(|p| p.node == "tor" && p.peer == peer)
            .unwrap_or_else(|| panic!("tor port to {peer}"))
    };
    let tx = |p: &lossless_sim::report::PortReport, prio: u8| {
        p.priorities
            .iter()
            .find(|q| q.priority == prio)
            .map_or(0, |q| q.tx_frames)
    };
    // the data towards r leaves on priority 5, none on the 0 it was tagged with
    assert!(tx(tor("r"), 5) > 1000);
    assert_eq!(tx(tor("r"), 0), 0);
    // CNPs (DSCP 48) towards the senders on priority 2, ACKs (DSCP 26) on 5
    let s1 = tor("s1");
    assert!(tx(s1, 2) > 0, "CNPs on priority 2");
    assert!(tx(s1, 5) > 0, "ACKs on priority 5");
    assert_eq!(tx(s1, 0), 0);
    // priority 5 is the lossless one: the switch's ECN marked it
    assert!(r.cn.as_ref().is_some_and(|c| c.cnps_sent_total > 0));
}

#[test]
fn a_trusting_nic_whose_map_disagrees_with_the_flows_priority_is_refused_with_line_and_key() {
    let text = SWITCH_TRUSTS_DSCP.replace(
        "a = \"s*\"\nb = \"tor\"\n",
        "a = \"s*\"\nb = \"tor\"\na_end = { trust = \"dscp\" }\n",
    );
    let e = load_str(&text, "t.toml", None, &Overrides::default()).unwrap_err();
    let m = e.to_string();
    assert!(m.starts_with("t.toml:"), "{m}");
    assert!(m.contains("key `priority`"), "{m}");
    assert!(
        m.contains("host \"s1\" trusts DSCP and its map sends the data packets (DSCP 26) on priority 3, found priority 0"),
        "{m}"
    );
}

#[test]
fn a_trusting_receiver_must_send_cnps_on_the_priority_its_map_gives_dscp_48() {
    let text = SWITCH_TRUSTS_DSCP.replace(
        "a = \"tor\"\nb = \"r\"\n",
        "a = \"tor\"\nb = \"r\"\nb_end = { trust = \"dscp\", dscp2prio = { 26 = 0 } }\n",
    );
    let e = load_str(&text, "t.toml", None, &Overrides::default()).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("key `cnp_priority`"), "{m}");
    assert!(
        m.contains("CNPs (DSCP 48) on priority 6, found cnp_priority 0"),
        "{m}"
    );
}

#[test]
fn bad_trust_keys_are_refused_with_what_is_allowed() {
    let cases = [
        ("trust = \"l3\"", "key `trust`: found \"l3\", allowed \"pcp\""),
        (
            "dscp2prio = { 26 = 3 }",
            "key `dscp2prio`: given without `trust = \"dscp\"`",
        ),
        (
            "trust = \"dscp\"\ndscp2prio = { 64 = 3 }",
            "key `dscp2prio`: found DSCP \"64\", allowed 0..=63",
        ),
        (
            "trust = \"dscp\"\ndscp2prio = { 26 = 8 }",
            "key `dscp2prio`: found priority 8 for DSCP 26, allowed 0..=7",
        ),
    ];
    for (keys, want) in cases {
        let text = SWITCH_TRUSTS_DSCP.replace("length_m = 5\n", &format!("length_m = 5\n{keys}\n"));
        let e = load_str(&text, "t.toml", None, &Overrides::default()).unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("t.toml:"), "{keys}: {m}");
        assert!(m.contains(want), "{keys}: {m}");
    }
}

#[test]
fn a_qp_dscp_outside_0_to_63_is_refused() {
    let text = SWITCH_TRUSTS_DSCP.replace("transport = \"rocev2\"", "transport = \"rocev2\"\ndscp = 64");
    let m = load_str(&text, "t.toml", None, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(m.contains("key `dscp`: found 64, allowed 0..=63"), "{m}");
}
