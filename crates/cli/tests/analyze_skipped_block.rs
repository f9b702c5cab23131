//! `lossless analyze` on a pcapng with an unreadable block: like `lossless decode`, it names the
//! block, goes on reading, counts the frames after it and exits 1.

use std::process::Command;

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
