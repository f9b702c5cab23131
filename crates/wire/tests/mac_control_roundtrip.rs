//! Property tests: every representable MAC Control repr survives emit → parse, well-formed
//! frames survive parse → emit, and no byte string makes the decoder panic.

use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::{self, FcsMode};
use lossless_wire::mac_control::{MacControlRepr, Packet, UnknownParams, Warnings, decode_frame, emit_frame};
use proptest::prelude::*;

fn repr() -> impl Strategy<Value = MacControlRepr> {
    prop_oneof![
        any::<u16>().prop_map(|pause_time| MacControlRepr::Pause { pause_time }),
        (any::<u16>(), any::<[u16; 8]>()).prop_map(|(priority_enable_vector, time)| MacControlRepr::Pfc {
            priority_enable_vector,
            time
        }),
        (
            any::<u16>().prop_filter("not PAUSE/PFC", |o| *o != 0x0001 && *o != 0x0101),
            prop::collection::vec(any::<u8>(), 0..=44)
        )
            .prop_map(|(opcode, p)| MacControlRepr::Unknown {
                opcode,
                params: UnknownParams::new(&p).unwrap()
            }),
    ]
}

fn mode() -> impl Strategy<Value = FcsMode> {
    any::<bool>().prop_map(FcsMode::from_present)
}

proptest! {
    #[test]
    fn repr_parse_of_emit_is_identity(r in repr()) {
        let mut buf = [0u8; 64];
        let n = r.emit(&mut buf).unwrap();
        prop_assert_eq!(n, r.buffer_len());
        prop_assert_eq!(MacControlRepr::parse(&Packet::new_checked(&buf[..n]).unwrap()).unwrap(), r);
    }

    #[test]
    fn frame_decode_of_emit_frame_gives_back_the_repr(
        r in repr(), src in any::<[u8; 6]>(), mc_dst in any::<bool>(), dst in any::<[u8; 6]>(), m in mode(),
    ) {
        let dst = if mc_dst { EthernetAddress::MAC_CONTROL } else { EthernetAddress(dst) };
        let mut buf = [0u8; 64];
        let n = emit_frame(EthernetAddress(src), dst, &r, m, &mut buf).unwrap();
        prop_assert_eq!(n, m.min_frame_len());
        let f = decode_frame(&buf[..n], m, None).unwrap();
        prop_assert_eq!((f.ethernet.src, f.ethernet.dst), (EthernetAddress(src), dst));
        let expected = match r {
            // The frame carries all 44 parameter bytes; the short ones come back zero-extended.
            MacControlRepr::Unknown { opcode, params } => {
                let mut p = params.as_slice().to_vec();
                p.resize(44, 0);
                MacControlRepr::Unknown { opcode, params: UnknownParams::new(&p).unwrap() }
            }
            other => other,
        };
        prop_assert_eq!(f.control, expected);
        let mut want = Warnings::NONE;
        if dst != EthernetAddress::MAC_CONTROL { want.insert(Warnings::DESTINATION); }
        match r {
            MacControlRepr::Pfc { priority_enable_vector, .. } if priority_enable_vector > 0xFF =>
                want.insert(Warnings::ENABLE_VECTOR_HIGH_BYTE),
            MacControlRepr::Unknown { .. } => want.insert(Warnings::UNKNOWN_OPCODE),
            _ => {}
        }
        prop_assert_eq!(f.warnings, want);
    }

    #[test]
    fn emit_of_parse_reproduces_well_formed_frames(
        dst in any::<[u8; 6]>(), src in any::<[u8; 6]>(), opcode in prop::sample::select(vec![1u16, 0x0101, 2, 0xFFFF]),
        params in any::<[u8; 44]>(), m in mode(),
    ) {
        // A well-formed frame: header, opcode, the opcode's fields, zero padding to 60, maybe FCS.
        let mut b = Vec::new();
        b.extend_from_slice(&dst);
        b.extend_from_slice(&src);
        b.extend_from_slice(&[0x88, 0x08]);
        b.extend_from_slice(&opcode.to_be_bytes());
        let fields = match opcode { 1 => 2, 0x0101 => 18, _ => 44 };
        b.extend_from_slice(&params[..fields]);
        b.resize(60, 0);
        if m == FcsMode::Present {
            let f = fcs::compute_bytes(&b);
            b.extend_from_slice(&f);
        }
        let f = decode_frame(&b, m, None).unwrap();
        prop_assert!(!f.warnings.contains(Warnings::LENGTH | Warnings::BAD_FCS | Warnings::NONZERO_PADDING));
        let mut out = [0u8; 64];
        let n = emit_frame(f.ethernet.src, f.ethernet.dst, &f.control, m, &mut out).unwrap();
        prop_assert_eq!(&out[..n], &b[..]);
    }

    #[test]
    fn garbage_never_panics(b in prop::collection::vec(any::<u8>(), 0..100), m in mode(), st in any::<[u8; 6]>()) {
        let _ = decode_frame(&b, m, Some(EthernetAddress(st)));
        if let Ok(p) = Packet::new_checked(&b[..]) {
            prop_assert!(MacControlRepr::parse(&p).is_ok());
        }
    }

    #[test]
    fn garbage_after_a_mac_control_header_never_panics(
        tail in prop::collection::vec(any::<u8>(), 0..70), m in mode(),
    ) {
        // Steer random bytes into the MAC Control decoder (random EtherTypes rarely are 0x8808).
        let mut b = vec![0x01, 0x80, 0xC2, 0, 0, 1, 0, 1, 2, 3, 4, 5, 0x88, 0x08];
        b.extend_from_slice(&tail);
        match decode_frame(&b, m, None) {
            Ok(f) => prop_assert!(f.control.buffer_len() <= 46),
            Err(e) => prop_assert!(e.offset <= b.len()),
        }
    }
}

proptest! {
    #[test]
    fn decode_frame_agrees_with_the_generic_parsers(
        dst in any::<[u8; 6]>(), src in any::<[u8; 6]>(), opcode in prop::sample::select(vec![1u16, 0x0101, 3]),
        rest in prop::collection::vec(any::<u8>(), 2..60), m in mode(),
    ) {
        // Untagged frames take a fixed-offset path inside decode_frame; it must agree with the
        // public general-purpose parsers on every field.
        let mut b = Vec::new();
        b.extend_from_slice(&dst);
        b.extend_from_slice(&src);
        b.extend_from_slice(&[0x88, 0x08]);
        b.extend_from_slice(&opcode.to_be_bytes());
        b.extend_from_slice(&rest);
        let body_len = b.len() - m.len();
        let eth = lossless_wire::ethernet::EthernetRepr::parse_bytes(&b[..body_len]);
        let ctl = MacControlRepr::parse_bytes(&b[14..body_len.max(14)]);
        match (decode_frame(&b, m, None), eth, ctl) {
            (Ok(f), Ok((e, 14)), Ok(c)) => {
                prop_assert_eq!(f.ethernet, e);
                prop_assert_eq!(f.control, c);
            }
            (Err(_), _, Err(_)) => {}
            (got, e, c) => prop_assert!(false, "decode_frame {:?} vs {:?} / {:?}", got, e, c),
        }
    }
}
