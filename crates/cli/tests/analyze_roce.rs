//! `lossless analyze` on RoCEv2 captures: per queue pair, the data frames with their ECN CE
//! marks and the CNPs with their rate — checked against what the simulator counted itself
//! (two independent paths: the QPs' engine counters, and the bytes on the wire decoded back).

#[path = "cli_support/mod.rs"]
mod support;

use lossless_testkit::temp_dir;
use support::*;

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn analyze_counts_the_ce_marks_and_cnps_the_simulated_qps_counted() {
    let dir = temp_dir("analyze_roce");
    let (pcap, report) = (dir.join("pcap"), dir.join("sim.json"));
    let o = run(&[
        "sim",
        "incast-dcqcn",
        "--duration",
        "2ms",
        "--pcap",
        pcap.to_str().unwrap(),
        "--json",
        report.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sim = json(&report);
    let qps: Vec<&serde_json::Value> = sim["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.get("qp"))
        .collect();
    let sum = |k: &str| qps.iter().map(|q| q[k].as_u64().unwrap()).sum::<u64>();
    let (ce, cnps) = (sum("ecn_marked_received_frames"), sum("cnps_sent_total"));
    assert!(ce > 0 && cnps > 0, "DCQCN acted: {ce} CE marks, {cnps} CNPs");

    // the switch's port towards the receiver carries the marked data; the receiver's the CNPs
    let analyze = |file: &str| {
        let o = run(&[
            "analyze",
            "--speed",
            "100G",
            "--json",
            pcap.join(file).to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["roce"].clone()
    };
    let towards = analyze("tor.8-to-receiver.pcapng");
    let back = analyze("receiver.0-to-tor.pcapng");
    assert_eq!(
        towards["ce_marked_frames"].as_u64(),
        Some(ce),
        "CE marks on the wire vs the QPs' count"
    );
    assert_eq!(
        back["cnps_total"].as_u64(),
        Some(cnps),
        "CNPs on the wire vs the QPs' count"
    );
    assert_eq!(towards["cnps_total"].as_u64(), Some(0));
    assert_eq!(back["ce_marked_frames"].as_u64(), Some(0));
    // one row per sender's QP, each with its own marks; the CNPs' rows name the senders
    let rows = towards["qps"].as_array().unwrap();
    assert_eq!(rows.len(), qps.len(), "{rows:?}");
    assert_eq!(
        rows.iter()
            .map(|q| q["ce_marked_frames"].as_u64().unwrap())
            .sum::<u64>(),
        ce
    );
    let back_rows = back["qps"].as_array().unwrap();
    assert!(
        back_rows.iter().all(|q| q["src"] == back_rows[0]["src"]),
        "CNPs all from the receiver"
    );
    assert!(
        back_rows
            .windows(2)
            .all(|w| w[0]["cnps_total"].as_u64() >= w[1]["cnps_total"].as_u64())
    );
    let span = back_rows
        .iter()
        .map(|q| q["cnps_total"].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(span, cnps);

    // and the text says it
    let o = run(&[
        "analyze",
        "--speed",
        "100G",
        pcap.join("receiver.0-to-tor.pcapng").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("{cnps} CNPs")), "{text}");
}

#[test]
fn the_sample_captures_one_rocev2_frame_is_one_queue_pair_and_a_capture_without_any_has_no_section() {
    let o = run(&[
        "analyze",
        "--speed",
        "10G",
        "--json",
        sample_capture().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["roce"]["qps_total"].as_u64(), Some(1), "{}", v["roce"]);
    assert_eq!(v["roce"]["data_frames"].as_u64(), Some(1));
    // a capture of PFC frames alone
    let dir = temp_dir("analyze_roce_none");
    let pfc = dir.join("pfc.pcap");
    lossless_testkit::write_pcap(&pfc, &[lossless_wire_pfc_frame()]);
    let o = run(&["analyze", "--speed", "10G", pfc.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("RoCEv2:"), "{text}");
}

/// A PFC frame (priority 3, 65535 quanta) as a 60-byte untagged frame.
fn lossless_wire_pfc_frame() -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
    f[6..12].copy_from_slice(&[0x02, 0x00, 0x00, 0x00, 0x00, 0x01]);
    f[12..14].copy_from_slice(&[0x88, 0x08]);
    f[14..16].copy_from_slice(&[0x01, 0x01]);
    f[16..18].copy_from_slice(&[0x00, 0x08]);
    f[18 + 6..18 + 8].copy_from_slice(&[0xff, 0xff]);
    f
}
