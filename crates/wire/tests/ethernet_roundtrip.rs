//! Property tests: Ethernet headers with 0, 1 or 2 tags survive emit → parse and parse → emit,
//! and no byte string makes the decoders panic.

use lossless_wire::ethernet::{EtherType, EthernetAddress, EthernetRepr, Frame, VlanTag, VlanTags};
use lossless_wire::fcs;
use proptest::prelude::*;

fn address() -> impl Strategy<Value = EthernetAddress> {
    any::<[u8; 6]>().prop_map(EthernetAddress)
}

fn tag() -> impl Strategy<Value = VlanTag> {
    (
        prop::sample::select(vec![0x8100u16, 0x88A8, 0x9100]),
        0u8..8,
        any::<bool>(),
        0u16..4096,
    )
        .prop_map(|(tpid, pcp, dei, vid)| VlanTag {
            tpid: EtherType(tpid),
            pcp,
            dei,
            vid,
        })
}

fn repr() -> impl Strategy<Value = EthernetRepr> {
    let tags = prop_oneof![
        Just(VlanTags::Untagged),
        tag().prop_map(VlanTags::Single),
        (tag(), tag()).prop_map(|(a, b)| VlanTags::Double(a, b)),
    ];
    (address(), address(), tags, any::<u16>())
        .prop_filter(
            "an EtherType that is a TPID needs two tags before it",
            |(_, _, t, ty)| t.count() == 2 || !EtherType(*ty).is_vlan_tpid(),
        )
        .prop_map(|(dst, src, tags, ty)| EthernetRepr {
            dst,
            src,
            tags,
            ethertype: EtherType(ty),
        })
}

proptest! {
    #[test]
    fn parse_of_emit_is_identity(r in repr(), payload in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut buf = vec![0u8; r.buffer_len()];
        prop_assert_eq!(r.emit(&mut buf).unwrap(), r.buffer_len());
        buf.extend_from_slice(&payload);
        let (back, at) = EthernetRepr::parse_bytes(&buf).unwrap();
        prop_assert_eq!(back, r);
        prop_assert_eq!(&buf[at..], &payload[..]);
        let frame = Frame::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(frame.payload(), &payload[..]);
    }

    #[test]
    fn emit_of_parse_reproduces_well_formed_headers(
        dst in any::<[u8; 6]>(), src in any::<[u8; 6]>(), ntags in 0usize..3,
        tcis in any::<[u16; 2]>(), tpids in prop::array::uniform2(prop::sample::select(vec![0x8100u16, 0x88A8, 0x9100])),
        ty in any::<u16>(), payload in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        prop_assume!(ntags == 2 || !EtherType(ty).is_vlan_tpid());
        let mut b = Vec::new();
        b.extend_from_slice(&dst);
        b.extend_from_slice(&src);
        for i in 0..ntags {
            b.extend_from_slice(&tpids[i].to_be_bytes());
            b.extend_from_slice(&tcis[i].to_be_bytes());
        }
        b.extend_from_slice(&ty.to_be_bytes());
        b.extend_from_slice(&payload);
        let (r, at) = EthernetRepr::parse_bytes(&b).unwrap();
        prop_assert_eq!(at, 14 + 4 * ntags);
        let mut out = vec![0u8; at];
        r.emit(&mut out).unwrap();
        prop_assert_eq!(&out[..], &b[..at]);
    }

    #[test]
    fn garbage_never_panics(b in prop::collection::vec(any::<u8>(), 0..80)) {
        if let Ok(f) = Frame::new_checked(&b[..]) {
            let _ = (f.dst_addr(), f.src_addr(), f.ethertype(), f.tag(0), f.tag(1), f.payload().len());
            prop_assert!(EthernetRepr::parse(&f).is_ok());
        }
        let _ = EthernetRepr::parse_bytes(&b);
        let _ = fcs::verify(&b);
        let _ = fcs::split(&b);
        let _ = core::str::from_utf8(&b).map(|s| s.parse::<EthernetAddress>());
    }

    #[test]
    fn address_text_round_trips(a in address()) {
        prop_assert_eq!(a.to_string().parse::<EthernetAddress>().unwrap(), a);
        prop_assert_eq!(a.to_string().replace(':', "-").to_uppercase().parse::<EthernetAddress>().unwrap(), a);
    }

    #[test]
    fn any_frame_with_its_fcs_verifies_and_any_single_bit_flip_does_not(
        b in prop::collection::vec(any::<u8>(), 0..128), bit in any::<prop::sample::Index>(),
    ) {
        let mut f = b.clone();
        f.extend_from_slice(&fcs::compute_bytes(&b));
        prop_assert!(fcs::verify(&f).unwrap());
        let i = bit.index(f.len() * 8);
        f[i / 8] ^= 1 << (i % 8);
        prop_assert!(!fcs::verify(&f).unwrap());
    }
}
