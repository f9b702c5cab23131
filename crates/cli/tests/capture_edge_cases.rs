//! The capture edge cases of issue 12 through the real binary: `decode` adds a negative
//! pcapng `if_tsoffset` and reads interfaces whose options lack `opt_endofopt` (as tshark
//! does); `analyze` counts VLAN-tagged, priority-tagged and QinQ PFC frames as `decode` and
//! tshark see them, and reads past an unreadable pcapng block as `decode` does.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

#[path = "../../capture/tests/support/pcapng.rs"]
mod pcapng;

/// An untagged PFC frame (no FCS) from 02:00:00:00:00:01 pausing priorities `vector`.
fn pfc(vector: u8) -> Vec<u8> {
    let mut f = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0x08, 0x01, 0x01, 0, vector,
    ];
    for _ in 0..8 {
        f.extend_from_slice(&100u16.to_be_bytes());
    }
    f.resize(60, 0);
    f
}

fn lossless(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .arg(file)
        .output()
        .expect("run lossless")
}

/// `frame` with an 802.1Q tag (`tpid`, `tci`) inserted after the addresses.
fn tag(frame: &[u8], tpid: u16, tci: u16) -> Vec<u8> {
    [
        &frame[..12],
        &tpid.to_be_bytes(),
        &tci.to_be_bytes(),
        &frame[12..],
    ]
    .concat()
}

#[test]
fn decode_adds_a_negative_if_tsoffset_and_reads_an_interface_without_opt_endofopt() {
    let mut ng = pcapng::Ng::new(false);
    ng.shb(false, &[]);
    let o = [ng.opt(14, &(-1000i64).to_le_bytes()), pcapng::END.to_vec()].concat();
    ng.idb(1, 0, &o);
    let o = ng.opt(9, &[9]);
    ng.idb(1, 0, &o);
    ng.epb(0, 5_000_000_000, &pfc(1), 60, &[]);
    ng.epb(1, 6_000_000_000_000, &pfc(2), 60, &[]);
    let dir = lossless_testkit::temp_dir("decode-tsoffset");
    let path = dir.join("tsoffset.pcapng");
    std::fs::write(&path, &ng.bytes).unwrap();
    let out = lossless(&["decode", "--json"], &path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let times: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["time"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(times, ["4000.000000000", "6000.000000000"]);
    if let Some(tshark) = lossless_testkit::require(
        "tshark",
        "decode_adds_a_negative_if_tsoffset_and_reads_an_interface_without_opt_endofopt",
    ) {
        let rows = lossless_testkit::tshark_fields(&tshark, &path, &["frame.time_epoch"], &[]);
        assert_eq!(rows, [["4000.000000000"], ["6000.000000000"]]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn analyze_counts_tagged_priority_tagged_and_qinq_pfc_frames_as_decode_does() {
    let frames = vec![
        pfc(1 << 1),
        tag(&pfc(1 << 2), 0x8100, 5),
        tag(&pfc(1 << 3), 0x8100, 3 << 13),
        tag(&tag(&pfc(1 << 4), 0x8100, 20), 0x88a8, 10),
    ];
    let dir = lossless_testkit::temp_dir("analyze-tagged-cli");
    let path = dir.join("tagged.pcap");
    lossless_testkit::write_pcap(&path, &frames);
    let out = lossless(&["analyze", "--speed", "1G", "--json"], &path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["mac_control_frames"], 4);
    let per_slot: Vec<u64> = json["totals"]["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["frames"].as_u64().unwrap())
        .collect();
    assert_eq!(per_slot, [0, 1, 1, 1, 1, 0, 0, 0, 0]);
    let out = lossless(&["decode", "--json", "--filter", "pfc"], &path);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn analyze_skips_a_bad_pcapng_block_names_it_and_counts_the_frames_after_it() {
    let mut ng = pcapng::Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, 1_000_000, &pfc(1 << 1), 60, &[]);
    let bad = ng.epb(9, 2_000_000, &pfc(1 << 2), 60, &[]);
    ng.epb(0, 3_000_000, &pfc(1 << 3), 60, &[]);
    let dir = lossless_testkit::temp_dir("analyze-skipped-block");
    let path = dir.join("bad-block.pcapng");
    std::fs::write(&path, &ng.bytes).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["analyze", "--speed", "1G", "--json"])
        .arg(&path)
        .output()
        .expect("run lossless analyze");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("block skipped: at byte {bad} (pcapng block 3)")),
        "{stderr}"
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["frames"], 2);
    assert_eq!(json["read_errors_total"], 1);
    assert_eq!(json["read_error"], Value::Null);
    let frames: Vec<u64> = json["totals"]["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["frames"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, [0, 1, 0, 1, 0, 0, 0, 0, 0]);
    std::fs::remove_dir_all(&dir).unwrap();
}
