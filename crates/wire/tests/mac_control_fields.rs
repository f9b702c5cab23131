//! Field-by-field tests of the MAC Control codec (PAUSE, PFC, unknown opcodes) and of every
//! validation warning.

use lossless_wire::ErrorKind;
use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTags};
use lossless_wire::fcs::{self, FcsMode};
use lossless_wire::mac_control::{
    MacControlRepr, Packet, PauseRequest, UnknownParams, Warnings, decode_frame, emit_frame,
};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]);
const STATION: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0x11, 0x22, 0x33]);

/// A 60-byte frame: `header_and_payload` then zero padding.
fn padded(header_and_payload: &str) -> Vec<u8> {
    let mut b = hex(header_and_payload);
    b.resize(60, 0);
    b
}

fn with_fcs(mut b: Vec<u8>) -> Vec<u8> {
    let f = fcs::compute_bytes(&b);
    b.extend_from_slice(&f);
    b
}

#[test]
fn pause_fields_decode_from_a_minimum_frame() {
    let b = padded("0180c2000001 001b21aabbcc 8808 0001 1234");
    let f = decode_frame(&b, FcsMode::Absent, None).unwrap();
    assert_eq!(f.control, MacControlRepr::Pause { pause_time: 0x1234 });
    assert_eq!(
        (f.ethernet.dst, f.ethernet.src),
        (EthernetAddress::MAC_CONTROL, SRC)
    );
    assert_eq!(f.ethernet.ethertype, EtherType::MAC_CONTROL);
    assert_eq!(f.warnings, Warnings::NONE);
    assert_eq!(f.control.pause_request(), Some(PauseRequest::Xoff(0x1234)));
    assert_eq!(f.control.priority_request(0), None);
}

#[test]
fn pause_time_zero_is_xon() {
    let b = padded("0180c2000001 001b21aabbcc 8808 0001 0000");
    let f = decode_frame(&b, FcsMode::Absent, None).unwrap();
    assert_eq!(f.control.pause_request(), Some(PauseRequest::Xon));
}

#[test]
fn pfc_fields_decode_each_priority_time() {
    let b = padded("0180c2000001 001b21aabbcc 8808 0101 00a5 0001 0002 0003 0004 0005 0006 0007 ffff");
    let f = decode_frame(&b, FcsMode::Absent, None).unwrap();
    let time = [1, 2, 3, 4, 5, 6, 7, 0xFFFF];
    assert_eq!(
        f.control,
        MacControlRepr::Pfc {
            priority_enable_vector: 0x00A5,
            time
        }
    );
    assert_eq!(
        f.control.enabled_priorities().collect::<Vec<_>>(),
        vec![0, 2, 5, 7]
    );
    assert_eq!(f.control.enabled_priorities().len(), 4);
    assert_eq!(f.control.priority_request(0), Some(PauseRequest::Xoff(1)));
    assert_eq!(f.control.priority_request(1), None, "bit 1 is clear");
    assert_eq!(f.control.priority_request(7), Some(PauseRequest::Xoff(0xFFFF)));
    assert_eq!(f.control.priority_request(8), None);
    assert_eq!(f.control.pause_request(), None);
    assert!(f.warnings.is_empty());
}

#[test]
fn pfc_enabled_priority_with_zero_time_is_xon() {
    let f = decode_frame(
        &padded("0180c2000001 001b21aabbcc 8808 0101 0008"),
        FcsMode::Absent,
        None,
    )
    .unwrap();
    assert_eq!(f.control.priority_request(3), Some(PauseRequest::Xon));
}

#[test]
fn pfc_high_byte_is_kept_and_warned_about() {
    let b = padded("0180c2000001 001b21aabbcc 8808 0101 8001 0010");
    let f = decode_frame(&b, FcsMode::Absent, None).unwrap();
    assert!(matches!(
        f.control,
        MacControlRepr::Pfc {
            priority_enable_vector: 0x8001,
            ..
        }
    ));
    assert_eq!(f.warnings, Warnings::ENABLE_VECTOR_HIGH_BYTE);
    assert_eq!(f.control.enabled_priorities().collect::<Vec<_>>(), vec![0]);
}

#[test]
fn unknown_opcode_decodes_with_its_parameters() {
    let b = padded("0180c2000001 001b21aabbcc 8808 0002 deadbeef");
    let f = decode_frame(&b, FcsMode::Absent, None).unwrap();
    let MacControlRepr::Unknown { opcode, params } = f.control else {
        panic!("{:?}", f.control)
    };
    assert_eq!(opcode, 2);
    assert_eq!(params.as_slice().len(), 44);
    assert_eq!(&params.as_slice()[..4], &[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(
        f.warnings,
        Warnings::UNKNOWN_OPCODE,
        "parameters of an unknown opcode are not padding"
    );
}

#[test]
fn destination_other_than_mac_control_or_station_is_warned_about() {
    let b = padded("001b21112233 001b21aabbcc 8808 0001 0010");
    assert_eq!(
        decode_frame(&b, FcsMode::Absent, None).unwrap().warnings,
        Warnings::DESTINATION
    );
    assert_eq!(
        decode_frame(&b, FcsMode::Absent, Some(STATION)).unwrap().warnings,
        Warnings::NONE
    );
    assert_eq!(
        decode_frame(&b, FcsMode::Absent, Some(SRC)).unwrap().warnings,
        Warnings::DESTINATION
    );
    let mc = padded("0180c2000001 001b21aabbcc 8808 0001 0010");
    assert_eq!(
        decode_frame(&mc, FcsMode::Absent, Some(STATION))
            .unwrap()
            .warnings,
        Warnings::NONE
    );
}

#[test]
fn length_other_than_sixty_without_fcs_is_warned_about() {
    let short = hex("0180c2000001 001b21aabbcc 8808 0101 0001 0010 0000 0000 0000 0000 0000 0000 0000");
    assert_eq!(short.len(), 34);
    let f = decode_frame(&short, FcsMode::Absent, None).unwrap();
    assert_eq!(f.warnings, Warnings::LENGTH);
    let mut long = padded("0180c2000001 001b21aabbcc 8808 0001 0010");
    long.push(0);
    assert_eq!(
        decode_frame(&long, FcsMode::Absent, None).unwrap().warnings,
        Warnings::LENGTH
    );
}

#[test]
fn length_is_judged_as_sixty_four_with_fcs() {
    let good = with_fcs(padded("0180c2000001 001b21aabbcc 8808 0001 0010"));
    assert_eq!(
        decode_frame(&good, FcsMode::Present, None).unwrap().warnings,
        Warnings::NONE
    );
    // The same 64 bytes read as if they had no FCS are 4 bytes too long and the FCS is "padding".
    let as_absent = decode_frame(&good, FcsMode::Absent, None).unwrap().warnings;
    assert_eq!(as_absent, Warnings::LENGTH | Warnings::NONZERO_PADDING);
}

#[test]
fn bad_fcs_is_warned_about_but_still_decoded() {
    let mut b = with_fcs(padded("0180c2000001 001b21aabbcc 8808 0001 0010"));
    b[63] ^= 0x80;
    let f = decode_frame(&b, FcsMode::Present, None).unwrap();
    assert_eq!(f.warnings, Warnings::BAD_FCS);
    assert_eq!(f.control, MacControlRepr::Pause { pause_time: 0x10 });
}

#[test]
fn nonzero_padding_is_warned_about() {
    let mut b = padded("0180c2000001 001b21aabbcc 8808 0101 0001 0010");
    b[59] = 1;
    assert_eq!(
        decode_frame(&b, FcsMode::Absent, None).unwrap().warnings,
        Warnings::NONZERO_PADDING
    );
    let mut b = padded("0180c2000001 001b21aabbcc 8808 0001 0010");
    b[18] = 0x40;
    assert_eq!(
        decode_frame(&b, FcsMode::Absent, None).unwrap().warnings,
        Warnings::NONZERO_PADDING
    );
}

#[test]
fn vlan_tagged_control_frame_is_decoded_and_warned_about() {
    let b =
        padded("0180c2000001 001b21aabbcc 8100 e000 8808 0101 0080 0000 0000 0000 0000 0000 0000 0000 0100");
    let f = decode_frame(&b, FcsMode::Absent, None).unwrap();
    assert!(matches!(f.ethernet.tags, VlanTags::Single(t) if t.pcp == 7));
    assert_eq!(f.control.priority_request(7), Some(PauseRequest::Xoff(0x100)));
    assert_eq!(f.warnings, Warnings::VLAN_TAGGED);
}

#[test]
fn every_warning_at_once_is_reported() {
    let mut b = padded("001b21112233 001b21aabbcc 8808 0101 ff00");
    b.push(7);
    let mut b = with_fcs(b);
    let last = b.len() - 1;
    b[last] ^= 1;
    let w = decode_frame(&b, FcsMode::Present, None).unwrap().warnings;
    let all = Warnings::DESTINATION
        | Warnings::ENABLE_VECTOR_HIGH_BYTE
        | Warnings::LENGTH
        | Warnings::BAD_FCS
        | Warnings::NONZERO_PADDING;
    assert_eq!(w, all);
    assert_eq!(
        w.names().collect::<Vec<_>>(),
        [
            "DESTINATION",
            "ENABLE_VECTOR_HIGH_BYTE",
            "LENGTH",
            "BAD_FCS",
            "NONZERO_PADDING"
        ]
    );
    assert_eq!(
        format!("{w:?}"),
        "Warnings(DESTINATION | ENABLE_VECTOR_HIGH_BYTE | LENGTH | BAD_FCS | NONZERO_PADDING)"
    );
}

#[test]
fn not_mac_control_ethertype_is_an_error_at_its_offset() {
    let e = decode_frame(
        &padded("0180c2000001 001b21aabbcc 88cc 0001"),
        FcsMode::Absent,
        None,
    )
    .unwrap_err();
    assert_eq!((e.offset, e.field), (12, "EtherType"));
    assert!(matches!(e.kind, ErrorKind::BadValue { found: 0x88CC, .. }));
    let e = decode_frame(
        &padded("0180c2000001 001b21aabbcc 8100 0000 0800"),
        FcsMode::Absent,
        None,
    )
    .unwrap_err();
    assert_eq!(e.offset, 16);
}

#[test]
fn truncated_fields_are_errors_with_offsets() {
    let e = decode_frame(&hex("0180c2000001 001b21aabbcc 8808 01"), FcsMode::Absent, None).unwrap_err();
    assert_eq!((e.offset, e.field), (14, "opcode"));
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 2,
            available: 1
        }
    );
    let e = decode_frame(
        &hex("0180c2000001 001b21aabbcc 8808 0001 00"),
        FcsMode::Absent,
        None,
    )
    .unwrap_err();
    assert_eq!((e.offset, e.field), (16, "pause_time"));
    let e = decode_frame(
        &hex("0180c2000001 001b21aabbcc 8808 0101 0001 0002"),
        FcsMode::Absent,
        None,
    )
    .unwrap_err();
    assert_eq!((e.offset, e.field), (16, "time"));
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 18,
            available: 4
        }
    );
    let e = decode_frame(&hex("0180c2"), FcsMode::Present, None).unwrap_err();
    assert_eq!(e.field, "FCS");
}

#[test]
fn emit_frame_builds_a_padded_pfc_frame_byte_for_byte() {
    let repr = MacControlRepr::pfc_xoff(0b1000_0001, 0xFFFF);
    let mut buf = [0xEEu8; 80];
    let n = emit_frame(
        SRC,
        EthernetAddress::MAC_CONTROL,
        &repr,
        FcsMode::Absent,
        &mut buf,
    )
    .unwrap();
    assert_eq!(n, 60);
    let want = padded("0180c2000001 001b21aabbcc 8808 0101 0081 ffff 0000 0000 0000 0000 0000 0000 ffff");
    assert_eq!(&buf[..60], &want[..]);
    assert_eq!(buf[60], 0xEE, "nothing written past the frame");
    let n = emit_frame(
        SRC,
        EthernetAddress::MAC_CONTROL,
        &repr,
        FcsMode::Present,
        &mut buf,
    )
    .unwrap();
    assert_eq!(n, 64);
    assert_eq!(&buf[..64], &with_fcs(want)[..]);
}

#[test]
fn emit_frame_builds_a_pause_frame_and_refuses_a_short_buffer() {
    let mut buf = [0u8; 64];
    let repr = MacControlRepr::Pause { pause_time: 0 };
    let n = emit_frame(
        SRC,
        EthernetAddress::MAC_CONTROL,
        &repr,
        FcsMode::Present,
        &mut buf,
    )
    .unwrap();
    assert_eq!(n, 64);
    assert_eq!(&buf[12..18], &hex("8808 0001 0000")[..]);
    let e = emit_frame(
        SRC,
        EthernetAddress::MAC_CONTROL,
        &repr,
        FcsMode::Present,
        &mut buf[..63],
    )
    .unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 64,
            available: 63
        }
    );
}

#[test]
fn pfc_constructors_set_only_the_masked_priorities() {
    let x = MacControlRepr::pfc_xoff(0b0010_0100, 300);
    assert_eq!(
        x,
        MacControlRepr::Pfc {
            priority_enable_vector: 0x24,
            time: [0, 0, 300, 0, 0, 300, 0, 0]
        }
    );
    assert_eq!(
        MacControlRepr::pfc_xon(0xFF),
        MacControlRepr::Pfc {
            priority_enable_vector: 0xFF,
            time: [0; 8]
        }
    );
    assert_eq!(x.opcode(), 0x0101);
    assert_eq!(PauseRequest::from_quanta(0), PauseRequest::Xon);
    assert_eq!(PauseRequest::Xoff(9).quanta(), 9);
}

#[test]
fn repr_emit_lengths_and_unknown_opcode_rules() {
    let mut buf = [0u8; 64];
    assert_eq!(MacControlRepr::Pause { pause_time: 1 }.emit(&mut buf).unwrap(), 4);
    assert_eq!(MacControlRepr::pfc_xon(1).emit(&mut buf).unwrap(), 20);
    let params = UnknownParams::new(&[1, 2, 3]).unwrap();
    let unk = MacControlRepr::Unknown {
        opcode: 0x0006,
        params,
    };
    assert_eq!(unk.emit(&mut buf).unwrap(), 5);
    assert_eq!(&buf[..5], &[0, 6, 1, 2, 3]);
    let fake_pause = MacControlRepr::Unknown {
        opcode: 0x0001,
        params,
    };
    assert_eq!(fake_pause.emit(&mut buf).unwrap_err().field, "opcode");
    assert!(UnknownParams::new(&[0; 45]).is_err());
    assert_eq!(UnknownParams::truncating(&[7; 50]).as_slice(), &[7; 44][..]);
    let e = MacControlRepr::pfc_xon(1).emit(&mut buf[..19]).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 20,
            available: 19
        }
    );
}

#[test]
fn packet_view_getters_and_setters_address_the_same_bytes() {
    let mut b = [0u8; 20];
    let mut p = Packet::new_unchecked(&mut b[..]);
    p.set_opcode(0x0101);
    p.set_priority_enable_vector(0x00F0);
    p.set_time(4, 0xABCD);
    assert_eq!(b[..8], hex("0101 00f0 0000 0000")[..]);
    assert_eq!(b[12..14], [0xAB, 0xCD]);
    let p = Packet::new_checked(&b[..]).unwrap();
    assert_eq!(
        (p.opcode(), p.priority_enable_vector(), p.time(4)),
        (0x0101, 0x00F0, 0xABCD)
    );
    assert!(Packet::new_checked(&b[..19]).is_err());
}
