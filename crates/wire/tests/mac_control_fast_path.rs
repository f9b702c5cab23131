//! `decode_flow_control` (the copy-free fast path) agrees with `decode_frame` on every frame
//! it accepts, and accepts every untagged PAUSE/PFC frame long enough for a PFC payload.

use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::{self, FcsMode};
use lossless_wire::mac_control::{
    MacControlRepr, Warnings, decode_flow_control, decode_flow_control_with, decode_frame, emit_frame,
};
use proptest::prelude::*;

const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0x01, 0x02, 0x03]);
const STATION: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 9]);

fn fcs_mode(present: bool) -> FcsMode {
    FcsMode::from_present(present)
}

/// Checks the contract on one frame; returns whether the fast path accepted it.
fn agree(frame: &[u8], fcs: FcsMode, station: Option<EthernetAddress>) -> bool {
    let slow = decode_frame(frame, fcs, station);
    let Some(fast) = decode_flow_control(frame, fcs, station) else {
        return false;
    };
    let slow = slow.expect("the fast path accepted a frame decode_frame refuses");
    let checker = fcs::FcsChecker::new();
    assert_eq!(
        decode_flow_control_with(frame, fcs, station, &checker),
        Some(fast)
    );
    if fcs == FcsMode::Present {
        assert_eq!(checker.verify(frame), fcs::verify(frame).unwrap());
        assert_eq!(checker.compute(frame), fcs::compute(frame));
    }
    assert_eq!(fast.to_frame(), slow);
    assert_eq!(fast.warnings(), slow.warnings);
    assert_eq!(fast.control(), slow.control);
    assert_eq!((fast.src(), fast.dst()), (slow.ethernet.src, slow.ethernet.dst));
    assert_eq!(fast.opcode(), slow.control.opcode());
    assert_eq!(fast.pause_request(), slow.control.pause_request());
    for p in 0..=8 {
        assert_eq!(fast.priority_request(p), slow.control.priority_request(p));
    }
    true
}

#[test]
fn clean_pfc_and_pause_frames_take_the_fast_path_without_warnings() {
    let reprs = [
        MacControlRepr::pfc_xoff(0x18, 0xFFFF),
        MacControlRepr::Pause { pause_time: 7 },
    ];
    for repr in reprs {
        for present in [false, true] {
            let mut buf = [0u8; 64];
            let n = emit_frame(
                SRC,
                EthernetAddress::MAC_CONTROL,
                &repr,
                fcs_mode(present),
                &mut buf,
            )
            .unwrap();
            assert!(agree(&buf[..n], fcs_mode(present), None));
            let v = decode_flow_control(&buf[..n], fcs_mode(present), None).unwrap();
            assert_eq!(v.warnings(), Warnings::NONE);
            assert_eq!(v.control(), repr);
        }
    }
}

#[test]
fn tagged_short_unknown_and_non_mac_control_frames_are_left_to_decode_frame() {
    let mut buf = [0u8; 64];
    emit_frame(
        SRC,
        EthernetAddress::MAC_CONTROL,
        &MacControlRepr::pfc_xon(1),
        FcsMode::Absent,
        &mut buf,
    )
    .unwrap();
    let mut unknown = buf;
    unknown[15] = 0x02;
    assert!(decode_flow_control(&unknown[..60], FcsMode::Absent, None).is_none());
    let mut ipv4 = buf;
    ipv4[12..14].copy_from_slice(&[0x08, 0x00]);
    assert!(decode_flow_control(&ipv4[..60], FcsMode::Absent, None).is_none());
    assert!(decode_flow_control(&buf[..33], FcsMode::Absent, None).is_none());
    assert!(decode_flow_control(&buf[..37], FcsMode::Present, None).is_none());
    assert!(decode_flow_control(&buf[..3], FcsMode::Present, None).is_none());
    let mut tagged = [0u8; 64];
    tagged[..12].copy_from_slice(&buf[..12]);
    tagged[12..16].copy_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged[16..60].copy_from_slice(&buf[12..56]);
    assert!(decode_flow_control(&tagged[..60], FcsMode::Absent, None).is_none());
    assert!(
        decode_frame(&tagged[..60], FcsMode::Absent, None)
            .unwrap()
            .warnings
            .contains(Warnings::VLAN_TAGGED)
    );
}

#[test]
fn every_fast_path_warning_matches_decode_frame() {
    let mut buf = [0u8; 80];
    emit_frame(
        SRC,
        STATION,
        &MacControlRepr::pfc_xoff(0xFF, 3),
        FcsMode::Absent,
        &mut buf,
    )
    .unwrap();
    buf[16] = 0x01; // enable vector high byte
    buf[59] = 0x7f; // padding
    let n = fcs::finish(&mut buf, 70, FcsMode::Present).unwrap();
    buf[n - 1] ^= 1; // bad FCS
    assert!(agree(&buf[..n], FcsMode::Present, None));
    let w = decode_flow_control(&buf[..n], FcsMode::Present, None)
        .unwrap()
        .warnings();
    for want in [
        Warnings::DESTINATION,
        Warnings::ENABLE_VECTOR_HIGH_BYTE,
        Warnings::LENGTH,
        Warnings::BAD_FCS,
        Warnings::NONZERO_PADDING,
    ] {
        assert!(w.contains(want), "{want:?} missing from {w:?}");
    }
    let w = decode_flow_control(&buf[..n], FcsMode::Present, Some(STATION))
        .unwrap()
        .warnings();
    assert!(!w.contains(Warnings::DESTINATION));
}

/// The warnings the spec asks for, computed the slow, obvious way, for an untagged PAUSE/PFC
/// frame whose body holds at least 34 bytes.
fn reference_warnings(frame: &[u8], fcs: FcsMode, station: Option<EthernetAddress>) -> Warnings {
    let body = &frame[..frame.len() - fcs.len()];
    let mut w = Warnings::NONE;
    let dst = EthernetAddress::from_bytes(&body[..6]).unwrap();
    if dst != EthernetAddress::MAC_CONTROL && station != Some(dst) {
        w.insert(Warnings::DESTINATION);
    }
    let pfc = body[14] == 0x01;
    if pfc && body[16] != 0 {
        w.insert(Warnings::ENABLE_VECTOR_HIGH_BYTE);
    }
    if frame.len() != fcs.min_frame_len() {
        w.insert(Warnings::LENGTH);
    }
    if fcs == FcsMode::Present && fcs::compute_bytes(body) != frame[body.len()..] {
        w.insert(Warnings::BAD_FCS);
    }
    let fields_end = if pfc { 34 } else { 18 };
    if body[fields_end..].iter().any(|&b| b != 0) {
        w.insert(Warnings::NONZERO_PADDING);
    }
    w
}

#[test]
fn any_single_nonzero_padding_byte_of_a_minimum_frame_is_reported_and_field_bytes_are_not() {
    let reprs = [
        (MacControlRepr::pfc_xon(0), 34),
        (MacControlRepr::Pause { pause_time: 0 }, 18),
    ];
    for (repr, fields_end) in reprs {
        let mut buf = [0u8; 60];
        emit_frame(
            SRC,
            EthernetAddress::MAC_CONTROL,
            &repr,
            FcsMode::Absent,
            &mut buf,
        )
        .unwrap();
        for i in 16..60 {
            let mut f = buf;
            f[i] = 0x80;
            let w = decode_flow_control(&f, FcsMode::Absent, None).unwrap().warnings();
            assert_eq!(
                w.contains(Warnings::NONZERO_PADDING),
                i >= fields_end,
                "byte {i}: {w:?}"
            );
            assert_eq!(w, reference_warnings(&f, FcsMode::Absent, None), "byte {i}");
        }
    }
}

proptest! {
    #[test]
    fn fast_path_agrees_with_decode_frame_on_arbitrary_frames(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..100),
        opcode in prop_oneof![Just(0x0001u16), Just(0x0101u16), any::<u16>()],
        mac_control in any::<bool>(),
        zero_padding in any::<bool>(),
        present in any::<bool>(),
        good_fcs in any::<bool>(),
        station in any::<bool>(),
    ) {
        if bytes.len() >= 16 {
            if mac_control {
                bytes[12..14].copy_from_slice(&[0x88, 0x08]);
            }
            bytes[14..16].copy_from_slice(&opcode.to_be_bytes());
            if zero_padding && bytes.len() > 34 {
                bytes[34..].fill(0);
            }
        }
        let fcs = fcs_mode(present);
        if present && good_fcs && bytes.len() >= 4 {
            let n = bytes.len() - 4;
            let f = fcs::compute_bytes(&bytes[..n]);
            bytes[n..].copy_from_slice(&f);
        }
        let station = station.then(|| bytes.get(..6).and_then(EthernetAddress::from_bytes).unwrap_or(STATION));
        let taken = agree(&bytes, fcs, station);
        let body = bytes.len().saturating_sub(fcs.len());
        let fast_shape = bytes.len() >= fcs.len() && body >= 34 && mac_control
            && matches!(opcode, 0x0001 | 0x0101);
        prop_assert_eq!(taken, fast_shape);
        if taken {
            let w = decode_flow_control(&bytes, fcs, station).unwrap().warnings();
            prop_assert_eq!(w, reference_warnings(&bytes, fcs, station));
        }
    }

    #[test]
    fn minimum_size_frames_get_the_reference_warnings(
        mut bytes in proptest::collection::vec(prop_oneof![Just(0u8), any::<u8>()], 64),
        pfc in any::<bool>(),
        present in any::<bool>(),
    ) {
        bytes[12..16].copy_from_slice(&[0x88, 0x08, if pfc { 0x01 } else { 0x00 }, 0x01]);
        let fcs = fcs_mode(present);
        let frame = &bytes[..fcs.min_frame_len()];
        let w = decode_flow_control(frame, fcs, None).unwrap().warnings();
        prop_assert_eq!(w, reference_warnings(frame, fcs, None));
        prop_assert_eq!(decode_frame(frame, fcs, None).unwrap().warnings, w);
    }
}
