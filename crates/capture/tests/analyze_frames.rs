//! `analyze` sees the frames `decode` sees: VLAN-tagged, priority-tagged (VID 0) and QinQ PFC
//! frames and tagged LLDP are counted like untagged ones, as tshark dissects them; and a bad
//! pcapng block stops neither of them.

use std::path::Path;

use lossless_capture::analyze::{Analysis, Options, analyze};
use lossless_capture::model::Protocol;
use lossless_capture::{CaptureReader, decode_frame};
use lossless_proto::dcbx::{Agent, DcbxConfig, ModeSetting, PfcConfig};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};

#[path = "support/pcapng.rs"]
mod pcapng;
use pcapng::Ng;

fn opts() -> Options {
    Options {
        speed: Rate::from_gbps(1),
        detection: Duration::from_ms(200),
        restoration: Duration::from_ms(200),
        bucket: Duration::from_ms(100),
        dscp_map: None,
    }
}

fn pfc(src: u8, priorities: u8) -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = emit_frame(
        EthernetAddress([2, 0, 0, 0, 0, src]),
        EthernetAddress::MAC_CONTROL,
        &MacControlRepr::pfc_xoff(priorities, 100),
        FcsMode::Absent,
        &mut b,
    )
    .unwrap();
    b[..n].to_vec()
}

/// `frame` with the 4-byte tags `(tpid, tci)` inserted after the addresses, outermost first.
fn tagged(frame: &[u8], tags: &[(u16, u16)]) -> Vec<u8> {
    let mut out = frame[..12].to_vec();
    for (tpid, tci) in tags {
        out.extend_from_slice(&tpid.to_be_bytes());
        out.extend_from_slice(&tci.to_be_bytes());
    }
    out.extend_from_slice(&frame[12..]);
    out
}

fn lldp(mac: u8, willing: bool, enable: &[u8]) -> Vec<u8> {
    let cfg = DcbxConfig {
        mode: ModeSetting::Ieee,
        pfc: PfcConfig {
            willing,
            enable: enable.to_vec(),
            ..PfcConfig::default()
        },
        ..DcbxConfig::default()
    };
    let mut agent = Agent::new(AgentConfig::new([2, 0, 0, 0, 0, mac]), cfg).unwrap();
    agent.poll_transmit(Instant::ZERO).expect("an LLDPDU at start")
}

fn analyze_file(path: &Path) -> Analysis {
    analyze(CaptureReader::new(std::fs::File::open(path).unwrap()), opts())
}

#[test]
fn tagged_priority_tagged_and_qinq_pfc_and_tagged_lldp_are_analyzed_like_decode_and_tshark_see_them() {
    // p1 untagged, p2 in VLAN 5 (PCP 7), p3 priority-tagged (VID 0), p4 QinQ (S-tag 0x88a8 VID
    // 10 over C-tag VID 20), p5 in a 0x9100 outer tag; LLDP from two DCBX ends, one priority-
    // tagged and one in VLAN 5.
    let frames = vec![
        pfc(1, 1 << 1),
        tagged(&pfc(1, 1 << 2), &[(0x8100, 7 << 13 | 5)]),
        tagged(&pfc(1, 1 << 3), &[(0x8100, 3 << 13)]),
        tagged(&pfc(2, 1 << 4), &[(0x88a8, 10), (0x8100, 20)]),
        tagged(&pfc(2, 1 << 5), &[(0x9100, 30), (0x8100, 40)]),
        tagged(&lldp(1, false, &[3]), &[(0x8100, 0)]),
        tagged(&lldp(2, true, &[4]), &[(0x8100, 5)]),
    ];
    let dir = lossless_testkit::temp_dir("analyze-tagged");
    let path = dir.join("tagged.pcap");
    lossless_testkit::write_pcap(&path, &frames);

    let a = analyze_file(&path);
    let per_slot: Vec<u64> = a.totals.slots.iter().map(|s| s.counters.frames).collect();
    assert_eq!(per_slot, [0, 1, 1, 1, 1, 1, 0, 0, 0], "{a:?}");
    assert_eq!(a.mac_control_frames, 5);
    assert_eq!(a.totals.frames, 5);
    assert_eq!(a.lldp_frames, 2);
    assert_eq!(a.lldp_agreement.len(), 1, "both tagged LLDP ends are compared");
    let g = &a.lldp_agreement[0];
    assert_eq!(
        (g.pfc_a, g.pfc_b, g.pfc_agree),
        (1 << 3, 1 << 3, Some(true)),
        "{g:?}"
    );

    // decode sees the same frames.
    let records: Vec<Protocol> = CaptureReader::new(std::fs::File::open(&path).unwrap())
        .map(|f| decode_frame(&f.unwrap()).protocol)
        .collect();
    assert_eq!(records.iter().filter(|p| **p == Protocol::Pfc).count(), 5);
    assert_eq!(records.iter().filter(|p| **p == Protocol::Lldp).count(), 2);

    // And so does tshark: per priority, the frames whose enable bit is set.
    if let Some(tshark) = lossless_testkit::require(
        "tshark",
        "tagged_priority_tagged_and_qinq_pfc_and_tagged_lldp_are_analyzed_like_decode_and_tshark_see_them",
    ) {
        let mut fields: Vec<String> = (0..8).map(|i| format!("macc.cbfc.enbv.c{i}")).collect();
        fields.push("lldp.chassis.id.mac".into());
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        let rows = lossless_testkit::tshark_fields(&tshark, &path, &refs, &[]);
        assert_eq!(rows.len(), frames.len());
        let mut theirs = [0u64; 9];
        for row in &rows {
            for (p, v) in row[..8].iter().enumerate() {
                theirs[p] += u64::from(v == "1" || v == "True");
            }
        }
        assert_eq!(per_slot[..8], theirs[..8], "tshark rows {rows:?}");
        let lldp_rows = rows.iter().filter(|r| !r[8].is_empty()).count() as u64;
        assert_eq!(a.lldp_frames, lldp_rows, "tshark rows {rows:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_pcapng_block_is_skipped_and_analysis_goes_on_as_decode_does() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, 1_000_000, &pfc(1, 1 << 1), 60, &[]);
    // A packet of an interface the section never described: this block is refused.
    let bad = ng.epb(7, 2_000_000, &pfc(1, 1 << 2), 60, &[]);
    ng.epb(0, 3_000_000, &pfc(1, 1 << 3), 60, &[]);
    let bytes = ng.bytes;

    let a = analyze(CaptureReader::new(&bytes[..]), opts());
    let per_slot: Vec<u64> = a.totals.slots.iter().map(|s| s.counters.frames).collect();
    assert_eq!(
        per_slot,
        [0, 1, 0, 1, 0, 0, 0, 0, 0],
        "the frame after the bad block is counted"
    );
    assert_eq!(a.frames, 2);
    assert_eq!(a.read_error, None, "reading did not stop");
    assert_eq!(a.read_errors_total, 1);
    assert!(
        a.read_errors[0].contains(&format!("at byte {bad} (pcapng block 3)")),
        "{:?}",
        a.read_errors
    );

    // decode reads the same frames and the same error.
    let (mut frames, mut errors) = (0, Vec::new());
    for item in CaptureReader::new(&bytes[..]) {
        match item {
            Ok(f) => frames += u64::from(decode_frame(&f).protocol == Protocol::Pfc),
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert_eq!((frames, errors), (a.frames, a.read_errors));
}
