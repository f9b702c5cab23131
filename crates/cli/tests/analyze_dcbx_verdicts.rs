//! `lossless analyze`'s DCBX verdict on every capture of the shared corpus (tcpdump's LLDP and
//! DCB captures) and on the sample capture, pinned line for line: IEEE TLVs are compared with
//! IEEE and CEE with CEE, a feature neither end sent is "not sent", a refused TLV says why, and
//! an IEEE-only end beside a CEE-only one is not compared. Skipped loudly without the corpus.

#[path = "cli_support/mod.rs"]
mod support;

use lossless_testkit::{corpus_dir, skip_missing_corpus};
use support::*;

/// The `dcbx` lines of `lossless analyze` on `path`.
fn verdicts(path: &std::path::Path) -> Vec<String> {
    let out = run(&["analyze", "--speed", "10G", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}: {}", path.display(), stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("dcbx "))
        .map(str::to_string)
        .collect()
}

const CORPUS: [(&str, &[&str]); 12] = [
    ("LLDP_and_CDP.pcap", &[]),
    (
        "dcb_ets.pcap",
        &[
            "dcbx 08:00:27:0d:f1:3c <-> 08:00:27:42:ba:59 (ieee): PFC not sent by either end; ETS not compared: both ends sent an ETS Configuration TLV that was refused: up2tc[0] = 15 is not a traffic class 0..=7",
        ],
    ),
    (
        "dcb_pfc.pcap",
        &[
            "dcbx 08:00:27:0d:f1:3c <-> 08:00:27:42:ba:59 (ieee): PFC agrees (0x34 / 0x34); ETS not sent by either end",
        ],
    ),
    (
        "dcb_qcn.pcap",
        &[
            "dcbx 08:00:27:0d:f1:3c <-> 08:00:27:42:ba:59 (ieee): PFC not sent by either end; ETS not sent by either end",
        ],
    ),
    ("lldp-app-priority.pcap", &[]),
    ("lldp-infinite-loop-1.pcap", &[]),
    ("lldp-infinite-loop-2.pcap", &[]),
    ("lldp_8021_linkagg.pcap", &[]),
    ("lldp_8023_mtu-oobr.pcap", &[]),
    ("lldp_asan.pcap", &[]),
    ("lldp_mgmt_addr_tlv_asan.pcap", &[]),
    ("lldp_mudurl.pcap", &[]),
];

#[test]
fn every_corpus_captures_dcbx_verdict_is_pinned() {
    const TEST: &str = "every_corpus_captures_dcbx_verdict_is_pinned";
    let dir = corpus_dir().join("tcpdump");
    if !dir.is_dir() {
        skip_missing_corpus(TEST, &dir);
        return;
    }
    // every capture of the corpus is in the table
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng"))
        .collect();
    found.sort();
    let mut listed: Vec<&str> = CORPUS.iter().map(|c| c.0).collect();
    listed.sort();
    assert_eq!(found, listed, "the corpus's captures");
    for (name, want) in CORPUS {
        assert_eq!(verdicts(&dir.join(name)), want, "{name}");
    }
}

#[test]
fn an_ieee_only_end_and_a_cee_only_end_are_not_compared_as_cee() {
    // the sample: 02:00:5e:00:00:01 sends IEEE DCBX (PFC enable 0x08), ...:02 CEE (PFC 0x08)
    assert_eq!(
        verdicts(&sample_capture()),
        [
            "dcbx 02:00:5e:00:00:01 <-> 02:00:5e:00:00:02 (ieee/cee): PFC not compared (0x08 / 0x08): 02:00:5e:00:00:01 sent only IEEE DCBX and 02:00:5e:00:00:02 only CEE, which do not read each other's TLVs; ETS not compared: 02:00:5e:00:00:01 sent only IEEE DCBX and 02:00:5e:00:00:02 only CEE, which do not read each other's TLVs"
        ]
    );
}
