//! DSCP end to end: a simulated QP marking DSCP 34 through a switch that trusts DSCP is
//! captured (`sim --pcap`) with that DSCP and its CNPs with 48; `decode --filter dscp=D` and
//! `--trust dscp --filter prio=P` select them, and `analyze --trust dscp` counts them on the
//! priority the map gives.

use std::process::Command;

use lossless_testkit::temp_dir;
use serde_json::Value;

const SCENARIO: &str = r#"
name = "dscp-34"
duration = "200us"
[defaults]
rate = "100G"
length_m = 5
flow_control = "pfc"
pfc_priorities = [3]
[qp]
cc = "dcqcn"
preset = "hpcc-ns3"
dcqcn = { cnp_mode = "packet" }
dscp = 34
[ecn]
preset = "hpcc-ns3"
priorities = [3]
[[host]]
name = "s"
count = 2
[[host]]
name = "r"
[[switch]]
name = "tor"
buffer_bytes = 12_000_000
[[link]]
a = "s*"
b = "tor"
b_end = { trust = "dscp", dscp2prio = { 34 = 3 } }
[[link]]
a = "tor"
b = "r"
a_end = { trust = "dscp", dscp2prio = { 34 = 3 } }
[[flow]]
name = "qp"
src = "s*"
dst = "r"
priority = 3
transport = "rocev2"
"#;

fn lossless(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("run lossless")
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn captured_roce_carries_its_qps_dscp_and_the_capture_tools_classify_it_by_the_same_map() {
    let dir = temp_dir("dscp-cli");
    let toml = dir.join("s.toml");
    std::fs::write(&toml, SCENARIO).unwrap();
    let pcaps = dir.join("pcap");
    let run = lossless(&[
        "sim",
        toml.to_str().unwrap(),
        "--no-twin",
        "--pcap",
        pcaps.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let sender = pcaps.join("s1.0-to-tor.pcapng");
    let receiver = pcaps.join("r.0-to-tor.pcapng");
    let (sender, receiver) = (sender.to_str().unwrap(), receiver.to_str().unwrap());
    // the QP's data packets carry DSCP 34, none 26
    let data = json_lines(&lossless(&["decode", "--json", "--filter", "dscp=34", sender]));
    assert!(data.len() > 100, "{} frames with DSCP 34", data.len());
    assert!(data.iter().all(|f| f["protocol"] == "roce"));
    assert!(json_lines(&lossless(&["decode", "--json", "--filter", "dscp=26", sender])).is_empty());
    // the receiver's CNPs carry 48 and its ACKs 34
    let cnps = json_lines(&lossless(&["decode", "--json", "--filter", "cnp", receiver]));
    assert!(!cnps.is_empty(), "the incast sends CNPs");
    assert!(cnps.iter().all(|f| f["ip"]["dscp"] == 48));
    // under DSCP trust with the same map, priority 3 is exactly the DSCP 34 frames
    let by_prio = json_lines(&lossless(&[
        "decode",
        "--json",
        "--trust",
        "dscp",
        "--dscp2prio",
        "34=3",
        "--filter",
        "prio=3",
        sender,
    ]));
    assert_eq!(by_prio.len(), data.len());
    // analyze counts them on priority 3 (the capture tags them 3 too: no disagreement)
    let out = lossless(&[
        "analyze",
        "--speed",
        "100G",
        "--json",
        "--trust",
        "dscp",
        "--dscp2prio",
        "34=3",
        sender,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a["trust"]["data_frames_by_priority"][3], data.len() as u64);
    assert_eq!(a["trust"]["pcp_disagrees_frames"], 0);
    // --dscp2prio without --trust dscp is refused
    let bad = lossless(&["analyze", "--speed", "100G", "--dscp2prio", "34=3", sender]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--dscp2prio given without --trust dscp"));
}
