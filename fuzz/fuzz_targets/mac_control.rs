//! MAC Control (PAUSE, PFC, unknown opcodes): payload parse/emit round trips both ways, the
//! checked view agrees with the parser, and whole-frame decoding with validation never panics,
//! reports exactly the warnings the frame deserves, and re-emits a well-formed frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::ethernet::{EthernetAddress, VlanTags};
use lossless_wire::fcs::{self, FcsMode};
use lossless_wire::mac_control::{self, MacControlRepr, Packet, Warnings};

fn check_payload(payload: &[u8]) {
    let parsed = MacControlRepr::parse_bytes(payload);
    assert_eq!(parsed.is_ok(), Packet::new_checked(payload).is_ok());
    let Ok(repr) = parsed else { return };
    if let Ok(p) = Packet::new_checked(payload) {
        assert_eq!(MacControlRepr::parse(&p), Ok(repr));
    }
    let mut buf = [0u8; 64];
    let n = repr.emit(&mut buf).expect("a parsed payload re-emits");
    assert_eq!(n, repr.buffer_len());
    assert_eq!(&buf[..n], &payload[..n], "emit(parse(b)) is not a prefix of b");
    assert_eq!(MacControlRepr::parse_bytes(&buf[..n]), Ok(repr));
}

fn check_frame(frame: &[u8], mode: FcsMode, station: Option<EthernetAddress>) {
    let Ok(d) = mac_control::decode_frame(frame, mode, station) else {
        return;
    };
    let w = d.warnings;
    let body = match mode {
        FcsMode::Present => &frame[..frame.len() - fcs::FCS_LEN],
        FcsMode::Absent => frame,
    };
    let at = d.ethernet.buffer_len();
    assert_eq!(MacControlRepr::parse_bytes(&body[at..]), Ok(d.control));
    assert_eq!(w.contains(Warnings::LENGTH), frame.len() != mode.min_frame_len());
    assert_eq!(
        w.contains(Warnings::VLAN_TAGGED),
        d.ethernet.tags != VlanTags::Untagged
    );
    assert_eq!(
        w.contains(Warnings::UNKNOWN_OPCODE),
        matches!(d.control, MacControlRepr::Unknown { .. })
    );
    assert_eq!(
        w.contains(Warnings::BAD_FCS),
        mode == FcsMode::Present && !fcs::verify(frame).unwrap()
    );
    let dst_ok = d.ethernet.dst == EthernetAddress::MAC_CONTROL || station == Some(d.ethernet.dst);
    assert_eq!(w.contains(Warnings::DESTINATION), !dst_ok);
    // A frame with nothing to object to is exactly what emit_frame builds from its fields.
    let clean = w.is_empty() || w == Warnings::DESTINATION;
    if clean {
        let mut buf = [0u8; 64];
        let n = mac_control::emit_frame(d.ethernet.src, d.ethernet.dst, &d.control, mode, &mut buf)
            .expect("a clean frame re-emits");
        assert_eq!(&buf[..n], frame, "emit_frame(decode_frame(b)) != b");
    }
}

fuzz_target!(|data: &[u8]| {
    check_payload(data);
    if data.len() > 14 {
        check_payload(&data[14..]);
    }
    let station = EthernetAddress::from_bytes(data);
    for mode in [FcsMode::Present, FcsMode::Absent] {
        check_frame(data, mode, None);
        check_frame(data, mode, station);
    }
});
