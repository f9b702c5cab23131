//! Field-by-field tests of the Ethernet II codec, VLAN tags, FCS and padding.

use lossless_wire::ErrorKind;
use lossless_wire::ethernet::{EtherType, EthernetAddress, EthernetRepr, Frame, VlanTag, VlanTags};
use lossless_wire::fcs::{self, FcsMode};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const DST: EthernetAddress = EthernetAddress([0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]);

#[test]
fn address_displays_lowercase_colon_separated() {
    assert_eq!(EthernetAddress::MAC_CONTROL.to_string(), "01:80:c2:00:00:01");
    assert_eq!(
        EthernetAddress::LLDP_NEAREST_BRIDGE.to_string(),
        "01:80:c2:00:00:0e"
    );
}

#[test]
fn address_parses_colon_and_dash_forms_in_any_case() {
    let a: EthernetAddress = "01-80-C2-00-00-0E".parse().unwrap();
    assert_eq!(a, EthernetAddress::LLDP_NEAREST_BRIDGE);
    let b: EthernetAddress = "00:1B:21:aa:bb:CC".parse().unwrap();
    assert_eq!(b, SRC);
}

#[test]
fn address_parse_errors_name_the_offset() {
    let e = "01:80:c2:00:00".parse::<EthernetAddress>().unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BadLength { found: 14, .. }));
    let e = "01:80:c2:0g:00:01".parse::<EthernetAddress>().unwrap_err();
    assert_eq!((e.offset, e.field), (10, "octet"));
    assert!(matches!(e.kind, ErrorKind::BadValue { found: 0x67, .. }));
    let e = "01:80-c2:00:00:01".parse::<EthernetAddress>().unwrap_err();
    assert_eq!((e.offset, e.field), (5, "separator"));
    let e = "01.80.c2.00.00.01".parse::<EthernetAddress>().unwrap_err();
    assert_eq!((e.offset, e.field), (2, "separator"));
}

#[test]
fn address_classification_follows_the_group_bit() {
    assert!(EthernetAddress::MAC_CONTROL.is_multicast());
    assert!(EthernetAddress::BROADCAST.is_multicast() && EthernetAddress::BROADCAST.is_broadcast());
    assert!(SRC.is_unicast() && !SRC.is_multicast());
    assert!(EthernetAddress([0x02, 0, 0, 0, 0, 1]).is_local());
    assert_eq!(
        EthernetAddress::from_bytes(&[1, 2, 3, 4, 5, 6, 7]),
        Some(EthernetAddress([1, 2, 3, 4, 5, 6]))
    );
    assert_eq!(EthernetAddress::from_bytes(&[1, 2, 3, 4, 5]), None);
}

#[test]
fn ethertype_constants_match_the_registry() {
    assert_eq!(EtherType::MAC_CONTROL.0, 0x8808);
    assert_eq!(EtherType::LLDP.0, 0x88CC);
    assert_eq!(EtherType::VLAN_C_TAG.0, 0x8100);
    assert_eq!(EtherType::VLAN_S_TAG.0, 0x88A8);
    assert_eq!(EtherType::VLAN_9100.0, 0x9100);
    for t in [EtherType::VLAN_C_TAG, EtherType::VLAN_S_TAG, EtherType::VLAN_9100] {
        assert!(t.is_vlan_tpid());
    }
    assert!(!EtherType::MAC_CONTROL.is_vlan_tpid());
    assert!(EtherType(0x05DC).is_length() && !EtherType(0x0600).is_length());
}

#[test]
fn untagged_header_fields_and_payload_offset() {
    let b = hex("0180c2000001 001b21aabbcc 8808 0001ffff");
    let f = Frame::new_checked(&b[..]).unwrap();
    assert_eq!((f.dst_addr(), f.src_addr()), (DST, SRC));
    assert_eq!(
        (f.tag_count(), f.ethertype(), f.header_len()),
        (0, EtherType::MAC_CONTROL, 14)
    );
    assert_eq!(f.payload(), &hex("0001ffff")[..]);
    let (repr, at) = EthernetRepr::parse_bytes(&b).unwrap();
    assert_eq!(at, 14);
    assert_eq!(
        repr,
        EthernetRepr {
            dst: DST,
            src: SRC,
            tags: VlanTags::Untagged,
            ethertype: EtherType::MAC_CONTROL
        }
    );
}

#[test]
fn single_tag_splits_tci_into_pcp_dei_vid() {
    // TCI 0xB00A: PCP 5, DEI 1, VID 10.
    let b = hex("0180c2000001 001b21aabbcc 8100 b00a 88cc 00");
    let (repr, at) = EthernetRepr::parse_bytes(&b).unwrap();
    assert_eq!(at, 18);
    let tag = VlanTag {
        tpid: EtherType::VLAN_C_TAG,
        pcp: 5,
        dei: true,
        vid: 10,
    };
    assert_eq!(repr.tags, VlanTags::Single(tag));
    assert_eq!(repr.ethertype, EtherType::LLDP);
    assert_eq!(tag.tci(), 0xB00A);
}

#[test]
fn double_tag_keeps_outer_then_inner() {
    let b = hex("0180c2000001 001b21aabbcc 88a8 0fff 8100 e001 0800");
    let (repr, at) = EthernetRepr::parse_bytes(&b).unwrap();
    assert_eq!(at, 22);
    let outer = VlanTag {
        tpid: EtherType::VLAN_S_TAG,
        pcp: 0,
        dei: false,
        vid: 4095,
    };
    let inner = VlanTag {
        tpid: EtherType::VLAN_C_TAG,
        pcp: 7,
        dei: false,
        vid: 1,
    };
    assert_eq!(repr.tags, VlanTags::Double(outer, inner));
    assert_eq!(
        (repr.tags.outer(), repr.tags.inner()),
        (Some(&outer), Some(&inner))
    );
    assert_eq!(repr.ethertype, EtherType::IPV4);
    assert_eq!(repr.buffer_len(), 22);
}

#[test]
fn a_third_tpid_is_reported_as_the_ethertype() {
    let b = hex("0180c2000001 001b21aabbcc 9100 0001 8100 0002 8100 0003 0800");
    let (repr, at) = EthernetRepr::parse_bytes(&b).unwrap();
    assert_eq!(
        (repr.tags.count(), repr.ethertype, at),
        (2, EtherType::VLAN_C_TAG, 22)
    );
}

#[test]
fn truncated_headers_are_errors_with_offsets() {
    let e = EthernetRepr::parse_bytes(&hex("0180c2000001 001b21aabbcc 88")).unwrap_err();
    assert_eq!(e.offset, 0);
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 14,
            available: 13
        }
    );
    let e = EthernetRepr::parse_bytes(&hex("0180c2000001 001b21aabbcc 8100 00")).unwrap_err();
    assert_eq!(e.offset, 14);
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 4,
            available: 1
        }
    );
    let e = EthernetRepr::parse_bytes(&hex("0180c2000001 001b21aabbcc 8100 0001 8100 0002")).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 8,
            available: 6
        }
    );
}

#[test]
fn emit_writes_tags_in_wire_order() {
    let outer = VlanTag {
        tpid: EtherType::VLAN_9100,
        pcp: 3,
        dei: false,
        vid: 100,
    };
    let inner = VlanTag {
        tpid: EtherType::VLAN_C_TAG,
        pcp: 1,
        dei: true,
        vid: 200,
    };
    let repr = EthernetRepr {
        dst: DST,
        src: SRC,
        tags: VlanTags::Double(outer, inner),
        ethertype: EtherType::LLDP,
    };
    let mut buf = [0u8; 22];
    assert_eq!(repr.emit(&mut buf).unwrap(), 22);
    assert_eq!(
        buf.to_vec(),
        hex("0180c2000001 001b21aabbcc 9100 6064 8100 30c8 88cc")
    );
}

#[test]
fn emit_refuses_what_would_not_parse_back() {
    let mut buf = [0u8; 64];
    let tpid_as_type = EthernetRepr {
        dst: DST,
        src: SRC,
        tags: VlanTags::Untagged,
        ethertype: EtherType::VLAN_C_TAG,
    };
    let e = tpid_as_type.emit(&mut buf).unwrap_err();
    assert_eq!((e.offset, e.field), (12, "EtherType"));
    let bad = |tag: VlanTag| EthernetRepr {
        dst: DST,
        src: SRC,
        tags: VlanTags::Single(tag),
        ethertype: EtherType::IPV4,
    };
    let base = VlanTag {
        tpid: EtherType::VLAN_C_TAG,
        pcp: 0,
        dei: false,
        vid: 0,
    };
    assert_eq!(
        bad(VlanTag { pcp: 8, ..base }).emit(&mut buf).unwrap_err().field,
        "PCP"
    );
    assert_eq!(
        bad(VlanTag { vid: 4096, ..base })
            .emit(&mut buf)
            .unwrap_err()
            .field,
        "VID"
    );
    assert_eq!(
        bad(VlanTag {
            tpid: EtherType::IPV4,
            ..base
        })
        .emit(&mut buf)
        .unwrap_err()
        .field,
        "TPID"
    );
    let ok = bad(base);
    let e = ok.emit(&mut buf[..17]).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 18,
            available: 17
        }
    );
}

#[test]
fn setters_rewrite_fields_in_place() {
    let mut b = hex("0180c2000001 001b21aabbcc 8100 0000 0800");
    let mut f = Frame::new_checked(&mut b[..]).unwrap();
    f.set_dst_addr(SRC);
    f.set_src_addr(DST);
    assert!(f.set_tag_tci(
        0,
        &VlanTag {
            tpid: EtherType::VLAN_C_TAG,
            pcp: 6,
            dei: false,
            vid: 42
        }
    ));
    assert!(!f.set_tag_tci(
        1,
        &VlanTag {
            tpid: EtherType::VLAN_C_TAG,
            pcp: 6,
            dei: false,
            vid: 42
        }
    ));
    f.set_ethertype(EtherType::MAC_CONTROL);
    assert_eq!(b, hex("001b21aabbcc 0180c2000001 8100 c02a 8808"));
}

#[test]
fn fcs_is_the_standard_crc32_check_value() {
    // CRC-32/ISO-HDLC of "123456789" is 0xCBF43926 (the catalogue's check value).
    assert_eq!(fcs::compute(b"123456789"), 0xCBF4_3926);
    assert_eq!(fcs::compute_bytes(b"123456789"), [0x26, 0x39, 0xF4, 0xCB]);
}

#[test]
fn fcs_appended_little_endian_verifies_and_leaves_the_residue() {
    let mut buf = [0u8; 64];
    buf[..14].copy_from_slice(&hex("0180c2000001 001b21aabbcc 8808"));
    assert_eq!(fcs::finish(&mut buf, 14, FcsMode::Present).unwrap(), 64);
    assert!(fcs::verify(&buf).unwrap());
    assert_eq!(fcs::compute(&buf), fcs::RESIDUE);
    let (body, value) = fcs::split(&buf).unwrap();
    assert_eq!((body.len(), value), (60, fcs::compute(&buf[..60])));
    buf[20] ^= 0x01;
    assert!(!fcs::verify(&buf).unwrap());
    assert!(fcs::verify(&buf[..3]).is_err());
    assert!(fcs::split(&buf[..3]).is_err());
}

#[test]
fn padding_fills_zeros_to_sixty_bytes_only_when_short() {
    let mut buf = [0xAAu8; 70];
    assert_eq!(fcs::pad(&mut buf, 20).unwrap(), 60);
    assert!(buf[20..60].iter().all(|&b| b == 0) && buf[60] == 0xAA);
    let mut buf = [0xAAu8; 70];
    assert_eq!(fcs::pad(&mut buf, 61).unwrap(), 61);
    assert!(buf.iter().all(|&b| b == 0xAA));
    assert!(fcs::pad(&mut [0u8; 59], 10).is_err());
    assert_eq!(fcs::finish(&mut [0u8; 60], 14, FcsMode::Absent).unwrap(), 60);
    let e = fcs::finish(&mut [0u8; 63], 14, FcsMode::Present).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 64,
            available: 63
        }
    );
    assert_eq!(
        (FcsMode::Present.min_frame_len(), FcsMode::Absent.min_frame_len()),
        (64, 60)
    );
}

#[test]
fn fcs_of_a_published_frame_matches_its_published_value() {
    // A 60-byte TCP/IPv4 frame from networkengineering.stackexchange.com question 45352, whose
    // correct FCS is given there (from the hpd.gasmi.net decoder) as the bytes 5A 05 DE FA.
    let frame = hex(
        "0800200a7066 0800200aac96 0800 4500 0028 a6f5 0000 1a06 7594 c05d0201 84e33d05
         0015 0f87 9ccb7e01 27e3ea01 5012 1000 df3d 0000 202020202020",
    );
    assert_eq!(frame.len(), 60);
    assert_eq!(fcs::compute_bytes(&frame), [0x5A, 0x05, 0xDE, 0xFA]);
    assert_eq!(fcs::compute(&frame), 0xFADE_055A);
    let mut on_wire = frame.clone();
    on_wire.extend_from_slice(&[0x5A, 0x05, 0xDE, 0xFA]);
    assert!(fcs::verify(&on_wire).unwrap());
    // The capture in that question carried 9B 52 46 43 instead, which must not verify.
    let mut captured = frame;
    captured.extend_from_slice(&[0x9B, 0x52, 0x46, 0x43]);
    assert!(!fcs::verify(&captured).unwrap());
}
