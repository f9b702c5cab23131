//! Wireshark (tshark) as an independent decoder of the PAUSE and PFC frames we emit: every
//! field, the two expert warnings it raises, and its FCS check must agree with ours, frame by
//! frame. Skips loudly (fails with LOSSLESS_REQUIRE_PEERS=1) when tshark is missing.

use lossless_testkit::{require, temp_dir, tshark_fields, write_pcap};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, UnknownParams, Warnings, decode_frame, emit_frame};

const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]);
const STATION: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0x11, 0x22, 0x33]);

/// The frames sent to tshark: PAUSE and PFC across the value ranges, a non-zero high byte of
/// the enable vector, wrong destinations and an opcode tshark does not know either.
fn cases() -> Vec<(EthernetAddress, MacControlRepr)> {
    let mc = EthernetAddress::MAC_CONTROL;
    let pfc = |v: u16, time: [u16; 8]| MacControlRepr::Pfc {
        priority_enable_vector: v,
        time,
    };
    vec![
        (mc, MacControlRepr::Pause { pause_time: 0 }),
        (mc, MacControlRepr::Pause { pause_time: 0xFFFF }),
        (mc, MacControlRepr::Pause { pause_time: 0x1234 }),
        (mc, pfc(0x00FF, [0, 1, 2, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF, 512])),
        (mc, pfc(0x0000, [0; 8])),
        (mc, pfc(0x0000, [0xFFFF; 8])),
        (mc, pfc(0x0081, [0xFFFF, 0, 0, 0, 0, 0, 0, 0xFFFF])),
        (mc, pfc(0x0008, [0, 0, 0, 0, 0, 0, 0, 0])),
        (mc, pfc(0x8001, [3, 0, 0, 0, 0, 0, 0, 0])),
        (mc, pfc(0xFF00, [0; 8])),
        (mc, pfc(0xFFFF, [0xFFFF; 8])),
        (STATION, MacControlRepr::Pause { pause_time: 100 }),
        (EthernetAddress::BROADCAST, pfc(0x0010, [0, 0, 0, 0, 9, 0, 0, 0])),
        (STATION, pfc(0x0110, [0, 0, 0, 0, 9, 0, 0, 0])),
        (
            mc,
            MacControlRepr::Unknown {
                opcode: 0x0abc,
                params: UnknownParams::new(&[1, 2, 3]).unwrap(),
            },
        ),
    ]
}

const PRIORITY_FIELDS: [&str; 16] = [
    "macc.cbfc.enbv.c0",
    "macc.cbfc.enbv.c1",
    "macc.cbfc.enbv.c2",
    "macc.cbfc.enbv.c3",
    "macc.cbfc.enbv.c4",
    "macc.cbfc.enbv.c5",
    "macc.cbfc.enbv.c6",
    "macc.cbfc.enbv.c7",
    "macc.cbfc.pause_time.c0",
    "macc.cbfc.pause_time.c1",
    "macc.cbfc.pause_time.c2",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.cbfc.pause_time.c5",
    "macc.cbfc.pause_time.c6",
    "macc.cbfc.pause_time.c7",
];

fn fields() -> Vec<&'static str> {
    let mut f = vec!["macc.opcode", "macc.pause_time", "macc.cbfc.enbv"];
    f.extend_from_slice(&PRIORITY_FIELDS);
    f.extend_from_slice(&[
        "macc.cbfc.enbv.not_zero",
        "macc.dst_address_invalid",
        "macc.opcode.unknown",
    ]);
    f
}

/// What tshark should print for a frame, computed from our own decoding of its bytes.
fn expected_row(frame: &[u8], mode: FcsMode) -> Vec<String> {
    let d = decode_frame(frame, mode, None).expect("our decoder accepts our frame");
    let flag = |w: Warnings| {
        if d.warnings.contains(w) {
            "1".to_string()
        } else {
            String::new()
        }
    };
    let mut row = vec![format!("0x{:04x}", d.control.opcode())];
    match d.control {
        MacControlRepr::Pause { pause_time } => {
            row.push(pause_time.to_string());
            row.extend(std::iter::repeat_n(String::new(), 17));
        }
        MacControlRepr::Pfc {
            priority_enable_vector,
            time,
        } => {
            row.push(String::new());
            row.push(format!("0x{priority_enable_vector:04x}"));
            row.extend((0..8).map(|p| ((priority_enable_vector >> p) & 1).to_string()));
            row.extend(time.iter().map(u16::to_string));
        }
        MacControlRepr::Unknown { .. } => row.extend(std::iter::repeat_n(String::new(), 18)),
    }
    row.push(flag(Warnings::ENABLE_VECTOR_HIGH_BYTE));
    // Wireshark checks the destination for PAUSE and PFC only, against 01-80-C2-00-00-01 alone.
    let checks_dst = !matches!(d.control, MacControlRepr::Unknown { .. });
    row.push(if checks_dst {
        flag(Warnings::DESTINATION)
    } else {
        String::new()
    });
    row.push(flag(Warnings::UNKNOWN_OPCODE));
    row
}

fn frames(mode: FcsMode) -> Vec<Vec<u8>> {
    cases()
        .iter()
        .map(|(dst, repr)| {
            let mut buf = [0u8; 64];
            let n = emit_frame(SRC, *dst, repr, mode, &mut buf).unwrap();
            buf[..n].to_vec()
        })
        .collect()
}

fn assert_rows_agree(rows: &[Vec<String>], frames: &[Vec<u8>], mode: FcsMode, names: &[&str]) {
    assert_eq!(rows.len(), frames.len(), "tshark printed one row per frame");
    for (i, (row, frame)) in rows.iter().zip(frames).enumerate() {
        let want = expected_row(frame, mode);
        for (j, name) in names.iter().enumerate() {
            assert_eq!(row[j], want[j], "frame {i} ({:?}): field {name}", cases()[i]);
        }
    }
}

#[test]
fn tshark_decodes_our_pause_and_pfc_frames_without_fcs_to_the_same_fields() {
    let Some(tshark) = require("tshark", "tshark_decodes_our_pause_and_pfc_frames_without_fcs") else {
        return;
    };
    let dir = temp_dir("macc-tshark-nofcs");
    let pcap = dir.join("macc.pcap");
    let frames = frames(FcsMode::Absent);
    write_pcap(&pcap, &frames);
    let names = fields();
    let rows = tshark_fields(&tshark, &pcap, &names, &["-o", "eth.fcs:Never"]);
    assert_rows_agree(&rows, &frames, FcsMode::Absent, &names);
    // The cases do exercise both warnings, so agreement above is not agreement on "absent".
    assert!(rows.iter().any(|r| r[19] == "1") && rows.iter().any(|r| r[20] == "1"));
}

#[test]
fn tshark_decodes_our_frames_with_fcs_and_agrees_on_fcs_validity() {
    let Some(tshark) = require("tshark", "tshark_decodes_our_frames_with_fcs") else {
        return;
    };
    let dir = temp_dir("macc-tshark-fcs");
    let pcap = dir.join("macc-fcs.pcap");
    let mut frames = frames(FcsMode::Present);
    // Corrupt the FCS of one frame and a data bit of another: both must be bad for both of us.
    frames[1][63] ^= 0x01;
    frames[3][20] ^= 0x10;
    write_pcap(&pcap, &frames);
    let mut names = fields();
    names.extend_from_slice(&["eth.fcs", "eth.fcs.status"]);
    let rows = tshark_fields(
        &tshark,
        &pcap,
        &names,
        &["-o", "eth.fcs:Always", "-o", "eth.check_fcs:TRUE"],
    );
    let n = names.len();
    assert_rows_agree(&rows, &frames, FcsMode::Present, &names[..n - 2]);
    for (i, (row, frame)) in rows.iter().zip(&frames).enumerate() {
        let ours = decode_frame(frame, FcsMode::Present, None).unwrap();
        // Wireshark shows the FCS bytes in transmission order read as one big-endian number.
        let fcs_bytes = u32::from_be_bytes(frame[60..64].try_into().unwrap());
        assert_eq!(row[n - 2], format!("0x{fcs_bytes:08x}"), "frame {i}: eth.fcs");
        let good = !ours.warnings.contains(Warnings::BAD_FCS);
        assert_eq!(
            row[n - 1],
            if good { "1" } else { "0" },
            "frame {i}: eth.fcs.status"
        );
        assert_eq!(
            good,
            i != 1 && i != 3,
            "frame {i}: only the corrupted frames are bad"
        );
    }
}
