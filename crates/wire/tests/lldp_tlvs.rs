//! Table tests: every LLDP TLV decodes to the fields the standard gives its bytes, re-emits
//! the same bytes, and reports malformed lengths/values with offset, structure and field.

use lossless_wire::lldp::tlv::{TlvIter, TlvView};
use lossless_wire::lldp::*;
use lossless_wire::{Error, ErrorKind};

/// A TLV with header for type `ty` and `value`.
fn tlv(ty: u8, value: &[u8]) -> Vec<u8> {
    let word = (u16::from(ty) << 9) | value.len() as u16;
    let mut v = word.to_be_bytes().to_vec();
    v.extend_from_slice(value);
    v
}

/// An organizationally specific TLV.
fn org(oui: [u8; 3], subtype: u8, info: &[u8]) -> Vec<u8> {
    let mut v = oui.to_vec();
    v.push(subtype);
    v.extend_from_slice(info);
    tlv(127, &v)
}

/// Decodes one TLV (owned) and checks that it re-emits the same bytes.
fn one(bytes: &[u8]) -> Tlv {
    let view = TlvView::parse(bytes, 0).expect("header");
    let t = Tlv::parse(&view).expect("decode").to_owned();
    assert_eq!(t.buffer_len(), bytes.len());
    let mut out = vec![0; t.buffer_len()];
    assert_eq!(t.emit(&mut out), Ok(bytes.len()));
    assert_eq!(out, bytes, "re-emit of {t:?}");
    t
}

/// Decodes one TLV and returns its error.
fn one_err(bytes: &[u8]) -> Error {
    let view = TlvView::parse(bytes, 0).expect("header");
    Tlv::parse(&view).expect_err("must fail")
}

fn ieee(t: Tlv) -> Ieee8021Tlv {
    match t {
        Tlv::Org(OrgTlv::Ieee8021(x)) => x,
        other => panic!("not an 802.1 TLV: {other:?}"),
    }
}

#[test]
fn header_is_seven_bit_type_and_nine_bit_length() {
    let mut b = vec![0xff, 0xff];
    b.extend(std::iter::repeat_n(0xaa, 511));
    let v = TlvView::parse(&b, 0).unwrap();
    assert_eq!((v.ty, v.value.len(), v.total_len()), (127, 511, 513));
    let v = TlvView::parse(&[0x02, 0x00], 0).unwrap();
    assert_eq!((v.ty, v.value.len()), (1, 0));
    let mut b = vec![0x01, 0x00];
    b.extend([0; 256]);
    let v = TlvView::parse(&b, 0).unwrap();
    assert_eq!((v.ty, v.value.len()), (0, 256));
}

#[test]
fn truncated_header_and_value_name_offset_and_sizes() {
    let e = TlvView::parse(&[0x02], 0).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 2,
            available: 1
        }
    );
    let e = TlvView::parse(&[0, 0, 0x02, 0x07, 4, 1, 2], 2).unwrap_err();
    assert_eq!((e.offset, e.context, e.field), (4, "Chassis ID TLV", "value"));
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 7,
            available: 3
        }
    );
}

#[test]
fn iterator_stops_after_end_and_after_first_error() {
    let mut b = tlv(3, &[0, 120]);
    b.extend(tlv(0, &[]));
    b.extend(tlv(3, &[0, 1]));
    let all: Vec<_> = TlvIter::new(&b).collect();
    assert_eq!(all.len(), 2);
    let mut it = TlvIter::new(&[0x06, 0x05, 1]);
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

#[test]
fn chassis_id_all_seven_subtypes_and_reserved() {
    let cases: [(u8, ChassisIdSubtype); 8] = [
        (1, ChassisIdSubtype::ChassisComponent),
        (2, ChassisIdSubtype::InterfaceAlias),
        (3, ChassisIdSubtype::PortComponent),
        (4, ChassisIdSubtype::MacAddress),
        (5, ChassisIdSubtype::NetworkAddress),
        (6, ChassisIdSubtype::InterfaceName),
        (7, ChassisIdSubtype::LocallyAssigned),
        (0, ChassisIdSubtype::Reserved(0)),
    ];
    for (byte, subtype) in cases {
        let t = one(&tlv(1, &[byte, 1, 2, 3, 4, 5, 6]));
        assert_eq!(
            t,
            Tlv::ChassisId(ChassisId {
                subtype,
                id: vec![1, 2, 3, 4, 5, 6]
            })
        );
    }
    let Tlv::ChassisId(c) = one(&tlv(1, &[4, 8, 0, 0x27, 0x0d, 0xf1, 0x3c])) else {
        panic!()
    };
    assert_eq!(c.mac(), Some([8, 0, 0x27, 0x0d, 0xf1, 0x3c]));
    let Tlv::ChassisId(c) = one(&tlv(1, &[5, 1, 10, 0, 0, 1])) else {
        panic!()
    };
    assert_eq!(c.network_address(), Some((1, &[10, 0, 0, 1][..])));
    assert_eq!(c.mac(), None);
}

#[test]
fn chassis_id_needs_one_to_255_id_bytes() {
    let e = one_err(&tlv(1, &[4]));
    assert_eq!(
        e.to_string(),
        "Chassis ID TLV: length at byte 0: length 1, allowed 2..=256"
    );
    assert_eq!(
        one_err(&tlv(1, &[7; 257])).kind,
        ErrorKind::BadLength {
            found: 257,
            allowed: "2..=256"
        }
    );
}

#[test]
fn port_id_all_seven_subtypes() {
    let names = [
        PortIdSubtype::InterfaceAlias,
        PortIdSubtype::PortComponent,
        PortIdSubtype::MacAddress,
        PortIdSubtype::NetworkAddress,
        PortIdSubtype::InterfaceName,
        PortIdSubtype::AgentCircuitId,
        PortIdSubtype::LocallyAssigned,
    ];
    for (i, subtype) in names.into_iter().enumerate() {
        let t = one(&tlv(2, &[i as u8 + 1, b'e', b't', b'h', b'0', 0, 0]));
        assert_eq!(
            t,
            Tlv::PortId(PortId {
                subtype,
                id: b"eth0\0\0".to_vec()
            })
        );
    }
    let Tlv::PortId(p) = one(&tlv(2, &[3, 8, 0, 0x27, 0x42, 0xba, 0x59])) else {
        panic!()
    };
    assert_eq!(p.mac(), Some([8, 0, 0x27, 0x42, 0xba, 0x59]));
    assert_eq!(one_err(&tlv(2, &[])).context, "Port ID TLV");
}

#[test]
fn ttl_is_two_bytes_and_zero_means_shutdown() {
    assert_eq!(one(&tlv(3, &[0, 120])), Tlv::Ttl(120));
    assert_eq!(one(&tlv(3, &[0, 0])), Tlv::Ttl(0));
    assert_eq!(one(&tlv(3, &[0xff, 0xff])), Tlv::Ttl(65535));
    assert_eq!(
        one_err(&tlv(3, &[0, 1, 2])).to_string(),
        "Time To Live TLV: length at byte 0: length 3, allowed 2"
    );
}

#[test]
fn text_tlvs_keep_their_bytes() {
    assert_eq!(
        one(&tlv(4, b"Big Cloud Fabric Switch Port leaf0b-eth10")),
        Tlv::PortDescription(b"Big Cloud Fabric Switch Port leaf0b-eth10".to_vec())
    );
    assert_eq!(one(&tlv(5, b"leaf0b")), Tlv::SystemName(b"leaf0b".to_vec()));
    assert_eq!(
        one(&tlv(6, &[0xff, 0xfe, 0])),
        Tlv::SystemDescription(vec![0xff, 0xfe, 0])
    );
    assert_eq!(one(&tlv(5, b"")), Tlv::SystemName(vec![]));
}

#[test]
fn system_capabilities_two_bitmaps_with_named_bits() {
    let Tlv::SystemCapabilities(c) = one(&tlv(7, &[0x00, 0x14, 0x00, 0x04])) else {
        panic!()
    };
    assert_eq!(
        c,
        SystemCapabilities {
            capabilities: 0x14,
            enabled: 0x04
        }
    );
    assert!(c.has(basic::capability::MAC_BRIDGE) && c.has(basic::capability::ROUTER));
    assert!(c.is_enabled(basic::capability::MAC_BRIDGE) && !c.is_enabled(basic::capability::ROUTER));
    assert_eq!(basic::capability::TWO_PORT_MAC_RELAY, 0x0400);
    assert_eq!(basic::capability::NAMES[7], (0x80, "Station Only"));
    assert_eq!(
        one_err(&tlv(7, &[0, 4, 0])).kind,
        ErrorKind::BadLength {
            found: 3,
            allowed: "4"
        }
    );
}

#[test]
fn management_address_ipv4_with_ifindex_and_oid() {
    let v = [5, 1, 192, 0, 2, 1, 2, 0, 0, 0, 7, 3, 0x2b, 6, 1];
    let Tlv::ManagementAddress(m) = one(&tlv(8, &v)) else {
        panic!()
    };
    assert_eq!(
        m,
        ManagementAddress {
            address_subtype: 1,
            address: vec![192, 0, 2, 1],
            interface_subtype: basic::IF_NUMBERING_IFINDEX,
            interface_number: 7,
            oid: vec![0x2b, 6, 1],
        }
    );
}

#[test]
fn management_address_string_lengths_are_checked() {
    // Address string length 0 (below the 2 that subtype + 1 address byte need).
    let e = one_err(&tlv(8, &[0, 1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(
        e.to_string(),
        "Management Address TLV: management address string length at byte 2: value 0x0, allowed 2..=32"
    );
    // OID length 129.
    let mut v = vec![2, 1, 9, 1, 0, 0, 0, 1, 129];
    v.extend([0; 129]);
    v.truncate(167);
    let e = one_err(&tlv(8, &v));
    assert_eq!((e.offset, e.field), (10, "object identifier string length"));
    // The OID length says 2, but 3 bytes follow.
    let e = one_err(&tlv(8, &[2, 1, 9, 1, 0, 0, 0, 1, 2, 0, 0, 0]));
    assert_eq!(
        e.kind,
        ErrorKind::BadLength {
            found: 12,
            allowed: "the sum of its string lengths + 7"
        }
    );
    // Too short for its address string (tcpdump's lldp_mgmt_addr_tlv_asan shape).
    let e = one_err(&tlv(8, &[6, 0, 1, 2, 3, 4, 5, 10, 0]));
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 12,
            available: 8
        }
    );
}

#[test]
fn unknown_tlv_types_are_kept_raw() {
    assert_eq!(
        one(&tlv(9, &[1, 2, 3])),
        Tlv::Unknown {
            ty: 9,
            value: vec![1, 2, 3]
        }
    );
    assert_eq!(
        one(&tlv(126, &[])),
        Tlv::Unknown {
            ty: 126,
            value: vec![]
        }
    );
}

#[test]
fn end_tlv_has_length_zero() {
    assert_eq!(one(&tlv(0, &[])), Tlv::End);
    assert_eq!(
        one_err(&tlv(0, &[0])).kind,
        ErrorKind::BadLength {
            found: 1,
            allowed: "0"
        }
    );
}

#[test]
fn organizationally_specific_needs_oui_and_subtype() {
    let e = one_err(&tlv(127, &[0, 0x80, 0xc2]));
    assert_eq!(
        e.to_string(),
        "Organizationally Specific TLV: length at byte 0: length 3, allowed 4..=511"
    );
    let t = one(&org([0x00, 0x26, 0xe1], 4, &[0, 0, 0x5c]));
    assert_eq!(
        t,
        Tlv::Org(OrgTlv::Other {
            oui: [0x00, 0x26, 0xe1],
            subtype: 4,
            info: vec![0, 0, 0x5c]
        })
    );
}

const O1: [u8; 3] = [0x00, 0x80, 0xc2];
const O3: [u8; 3] = [0x00, 0x12, 0x0f];

#[test]
fn ieee8021_vlan_tlvs() {
    assert_eq!(ieee(one(&org(O1, 1, &[0, 1]))), Ieee8021Tlv::PortVlanId(1));
    assert_eq!(
        ieee(one(&org(O1, 2, &[2, 0, 0]))),
        Ieee8021Tlv::PortProtocolVlanId(PortProtocolVlanId {
            flags: PortProtocolVlanId::SUPPORTED,
            ppvid: 0
        })
    );
    assert_eq!(
        ieee(one(&org(
            O1,
            3,
            &[0, 1, 7, b'd', b'e', b'f', b'a', b'u', b'l', b't']
        ))),
        Ieee8021Tlv::VlanName(VlanName {
            vid: 1,
            name: b"default".to_vec()
        })
    );
    let e = one_err(&org(O1, 3, &[0, 1, 8, b'd']));
    assert_eq!(
        e.to_string(),
        "VLAN Name TLV: length at byte 0: length 8, allowed 7 + VLAN name length"
    );
    let e = one_err(&org(O1, 3, &[0, 1, 33]));
    assert_eq!((e.offset, e.field), (8, "VLAN name length"));
    assert_eq!(
        one_err(&org(O1, 1, &[0])).to_string(),
        "Port VLAN ID TLV: length at byte 0: length 5, allowed 6"
    );
}

#[test]
fn ieee8021_protocol_identity_and_link_aggregation() {
    let t = ieee(one(&org(O1, 4, &[8, 0, 0, 0x42, 0x42, 3, 0, 0, 0])));
    assert_eq!(
        t,
        Ieee8021Tlv::ProtocolIdentity(vec![0, 0, 0x42, 0x42, 3, 0, 0, 0])
    );
    assert_eq!(one_err(&org(O1, 4, &[8, 0])).context, "Protocol Identity TLV");
    let t = ieee(one(&org(O1, 7, &[3, 0, 0, 0, 100])));
    assert_eq!(
        t,
        Ieee8021Tlv::LinkAggregation(LinkAggregation {
            status: 3,
            port_id: 100
        })
    );
    assert_eq!(
        one_err(&org(O1, 7, &[3, 0, 0, 0])).kind,
        ErrorKind::BadLength {
            found: 8,
            allowed: "9"
        }
    );
    assert_eq!(
        ieee(one(&org(O1, 13, &[2, 0, 0xf5, 0x5e, 0x0f]))),
        Ieee8021Tlv::Unknown {
            subtype: 13,
            info: vec![2, 0, 0xf5, 0x5e, 0x0f]
        }
    );
}

#[test]
fn ieee8023_tlvs() {
    let ieee3 = |t: Tlv| match t {
        Tlv::Org(OrgTlv::Ieee8023(x)) => x,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        ieee3(one(&org(O3, 1, &[3, 0x6c, 0x01, 0x00, 0x10]))),
        Ieee8023Tlv::MacPhyConfigStatus(MacPhyConfigStatus {
            autoneg: 3,
            advertised: 0x6c01,
            mau_type: 0x10
        })
    );
    assert_eq!(
        ieee3(one(&org(O3, 2, &[7, 1, 3]))),
        Ieee8023Tlv::PowerViaMdi(vec![7, 1, 3])
    );
    assert_eq!(
        ieee3(one(&org(O3, 3, &[1, 0, 0, 0, 0]))),
        Ieee8023Tlv::LinkAggregation(LinkAggregation {
            status: 1,
            port_id: 0
        })
    );
    assert_eq!(
        ieee3(one(&org(O3, 4, &[0x05, 0xee]))),
        Ieee8023Tlv::MaximumFrameSize(1518)
    );
    // tcpdump's lldp_8023_mtu-oobr: a Maximum Frame Size TLV with no size.
    assert_eq!(
        one_err(&org(O3, 4, &[])).to_string(),
        "Maximum Frame Size TLV: length at byte 0: length 4, allowed 6"
    );
    assert_eq!(
        one_err(&org(O3, 1, &[0; 4])).context,
        "MAC/PHY Configuration/Status TLV"
    );
}

/// ETS Configuration from tcpdump's dcb_ets.pcap.
const ETS_CFG: [u8; 21] = [
    0x00, 0xf4, 0x11, 0xf4, 0x14, 0, 0x32, 0, 0, 0x32, 0, 0, 0, 0, 2, 0, 0, 2, 0, 0, 0,
];

#[test]
fn ets_configuration_high_nibble_is_priority_zero() {
    let Ieee8021Tlv::EtsConfiguration(e) = ieee(one(&org(O1, 9, &ETS_CFG))) else {
        panic!()
    };
    assert!(!e.willing && !e.cbs);
    assert_eq!((e.max_tcs, e.max_tcs_count()), (0, 8));
    assert_eq!(e.tables.priority_tc, [15, 4, 1, 1, 15, 4, 1, 4]);
    assert_eq!(e.tables.tc_bandwidth, [0, 50, 0, 0, 50, 0, 0, 0]);
    assert_eq!(e.tables.bandwidth_sum(), 100);
    let (s, ets) = (Tsa::STRICT, Tsa::ETS);
    assert_eq!(e.tables.tsa, [s, ets, s, s, ets, s, s, s]);
}

#[test]
fn ets_configuration_flags_and_tsa_values_are_kept() {
    let mut info = ETS_CFG;
    info[0] = 0x80 | 0x40 | 0x28 | 3;
    info[13..21].copy_from_slice(&[0, 1, 2, 255, 3, 7, 254, 2]);
    let Ieee8021Tlv::EtsConfiguration(e) = ieee(one(&org(O1, 9, &info))) else {
        panic!()
    };
    assert!(e.willing && e.cbs);
    assert_eq!((e.reserved, e.max_tcs, e.max_tcs_count()), (5, 3, 3));
    assert_eq!(
        e.tables.tsa[..4],
        [Tsa::STRICT, Tsa::CREDIT_BASED_SHAPER, Tsa::ETS, Tsa::VENDOR]
    );
    assert_eq!(e.tables.tsa[4..], [Tsa(3), Tsa(7), Tsa(254), Tsa::ETS]);
    assert_eq!((Tsa::VENDOR.name(), Tsa(3).name()), (Some("vendor"), None));
    assert_eq!(
        one_err(&org(O1, 9, &info[..20])).to_string(),
        "ETS Configuration TLV: length at byte 0: length 24, allowed 25"
    );
}

#[test]
fn ets_recommendation_keeps_its_reserved_byte() {
    let mut info = ETS_CFG;
    info[0] = 0x5a;
    let Ieee8021Tlv::EtsRecommendation(r) = ieee(one(&org(O1, 10, &info))) else {
        panic!()
    };
    assert_eq!(r.reserved, 0x5a);
    assert_eq!(r.tables.priority_tc, [15, 4, 1, 1, 15, 4, 1, 4]);
    assert_eq!(one_err(&org(O1, 10, &[0; 22])).context, "ETS Recommendation TLV");
}

#[test]
fn pfc_configuration_flags_cap_and_enable_bitmap() {
    // dcb_pfc.pcap: PFC cap 4, priorities 2, 4 and 5 enabled.
    let Ieee8021Tlv::PfcConfiguration(p) = ieee(one(&org(O1, 11, &[0x04, 0x34]))) else {
        panic!()
    };
    assert_eq!(
        p,
        PfcConfiguration {
            willing: false,
            mbc: false,
            reserved: 0,
            pfc_cap: 4,
            enabled: 0x34
        }
    );
    assert_eq!((0..8).filter(|&i| p.is_enabled(i)).collect::<Vec<_>>(), [2, 4, 5]);
    let Ieee8021Tlv::PfcConfiguration(p) = ieee(one(&org(O1, 11, &[0xf8, 0x08]))) else {
        panic!()
    };
    assert_eq!(
        p,
        PfcConfiguration {
            willing: true,
            mbc: true,
            reserved: 3,
            pfc_cap: 8,
            enabled: 8
        }
    );
}

#[test]
fn pfc_configuration_wrong_length_names_place_and_allowed_length() {
    // A PFC TLV with one byte missing, its header at byte 40 of the LLDPDU.
    let mut pdu = tlv(1, &[4, 8, 0, 0x27, 0x42, 0xba, 0x59]);
    pdu.extend(tlv(2, &[3, 8, 0, 0x27, 0x42, 0xba, 0x59]));
    pdu.extend(tlv(3, &[0, 120]));
    pdu.extend(tlv(5, b"switch-a-rack-07"));
    assert_eq!(pdu.len(), 40);
    pdu.extend(org(O1, 11, &[0x04]));
    pdu.extend(tlv(0, &[]));
    let d = LldpduRepr::parse(&pdu);
    assert_eq!(
        d.error.unwrap().to_string(),
        "PFC Configuration TLV: length at byte 40: length 5, allowed 6"
    );
    assert_eq!(d.tlvs.len(), 4, "the TLVs before the error are kept");
}

#[test]
fn application_priority_entries_with_dscp_and_zero_entries() {
    // lldp-app-priority.pcap: priority 4, selector 4, port 3260 (iSCSI).
    let Ieee8021Tlv::ApplicationPriority(a) = ieee(one(&org(O1, 12, &[0, 0x84, 0x0c, 0xbc]))) else {
        panic!()
    };
    assert_eq!(
        a.entries().collect::<Vec<_>>(),
        [AppEntry {
            priority: 4,
            reserved: 0,
            selector: 4,
            protocol: 3260
        }]
    );
    let Ieee8021Tlv::ApplicationPriority(a) = ieee(one(&org(O1, 12, &[0]))) else {
        panic!()
    };
    assert!(a.is_empty());
    let Ieee8021Tlv::ApplicationPriority(a) = ieee(one(&org(
        O1,
        12,
        &[0, 0x65, 0, 46, 0x19, 0x89, 0x06, 0xe0 | 0x18 | 1, 0x89, 0x14],
    ))) else {
        panic!()
    };
    let e: Vec<_> = a.entries().collect();
    assert_eq!(
        e[0],
        AppEntry {
            priority: 3,
            reserved: 0,
            selector: dcbx_ieee::selector::DSCP,
            protocol: 46
        }
    );
    assert_eq!(
        e[1],
        AppEntry {
            priority: 0,
            reserved: 3,
            selector: 1,
            protocol: 0x8906
        }
    );
    assert_eq!(
        e[2],
        AppEntry {
            priority: 7,
            reserved: 3,
            selector: 1,
            protocol: 0x8914
        }
    );
    assert_eq!(ApplicationPriority::new(0, &e), a);
    assert_eq!(
        one_err(&org(O1, 12, &[0, 1])).to_string(),
        "Application Priority TLV: length at byte 0: length 6, allowed 5 + 3n"
    );
    assert_eq!(
        one_err(&org(O1, 12, &[])).kind,
        ErrorKind::BadLength {
            found: 4,
            allowed: "5 + 3n"
        }
    );
}

#[test]
fn congestion_notification_cnpv_and_ready_bitmaps() {
    let t = ieee(one(&org(O1, 8, &[0x08, 0x00])));
    assert_eq!(
        t,
        Ieee8021Tlv::CongestionNotification(CongestionNotification { cnpv: 8, ready: 0 })
    );
    assert_eq!(one_err(&org(O1, 8, &[0])).context, "Congestion Notification TLV");
}

const OC: [u8; 3] = [0x00, 0x1b, 0x21];

/// A CEE DCBX TLV as lldpad builds it: Control, Priority Groups, PFC, Application (FCoE).
fn cee_info() -> Vec<u8> {
    let mut v = tlv(1, &[0, 0, 0, 0, 0, 1, 0, 0, 0, 2]);
    v.extend(tlv(
        2,
        &[
            0, 0, 0xc0, 0, 0x01, 0x23, 0x45, 0x6f, 12, 13, 12, 13, 12, 13, 12, 13, 8,
        ],
    ));
    v.extend(tlv(3, &[0, 0, 0x80, 0, 0x08, 8]));
    v.extend(tlv(4, &[0, 0, 0xa0, 0, 0x89, 0x06, 0x00, 0x1b, 0x21, 0x08]));
    v
}

#[test]
fn cee_dcbx_sub_tlvs_follow_lldpad_layout() {
    let Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(d))) = one(&org(OC, 2, &cee_info())) else {
        panic!()
    };
    assert_eq!(
        d.control(),
        Some(&CeeControl {
            oper_version: 0,
            max_version: 0,
            seq: 1,
            ack: 2
        })
    );
    let CeeSubTlv::PriorityGroups(pg) = d.sub_tlvs[1] else {
        panic!()
    };
    assert!(pg.header.enabled && pg.header.willing && !pg.header.error);
    assert_eq!(pg.pgid, [0, 1, 2, 3, 4, 5, 6, 15]);
    assert_eq!(pg.pg_bandwidth, [12, 13, 12, 13, 12, 13, 12, 13]);
    assert_eq!(pg.num_tcs, 8);
    let CeeSubTlv::Pfc(pfc) = d.sub_tlvs[2] else {
        panic!()
    };
    assert_eq!((pfc.header.enabled, pfc.admin_map, pfc.num_tcs), (true, 0x08, 8));
    let CeeSubTlv::Application(app) = &d.sub_tlvs[3] else {
        panic!()
    };
    assert!(app.header.enabled && app.header.error);
    let e: Vec<_> = app.entries().collect();
    assert_eq!(
        e,
        [CeeAppEntry {
            protocol: 0x8906,
            selector: 0,
            oui: 0x001b21,
            priority_map: 0x08
        }]
    );
    assert_eq!(CeeApplication::new(app.header, &e), *app);
}

#[test]
fn cee_sub_tlv_lengths_are_checked_with_their_offsets() {
    let mut info = tlv(1, &[0, 0, 0, 0, 0, 1, 0, 0, 0, 2]);
    info.extend(tlv(3, &[0, 0, 0x80, 0, 0x08]));
    let e = one_err(&org(OC, 2, &info));
    assert_eq!(
        e.to_string(),
        "CEE PFC sub-TLV: length at byte 18: length 5, allowed 6"
    );
    let e = one_err(&org(OC, 2, &[0x02, 0x0a, 0]));
    assert_eq!((e.offset, e.context, e.field), (8, "CEE DCBX sub-TLV", "value"));
    let e = one_err(&org(OC, 2, &tlv(4, &[0, 0, 0, 0, 1])));
    assert_eq!(
        e.kind,
        ErrorKind::BadLength {
            found: 5,
            allowed: "4 + 6n"
        }
    );
}

#[test]
fn cin_baseline_dcbx_and_other_cee_subtypes_are_raw() {
    assert_eq!(
        one(&org(OC, 1, &[1, 2, 3])),
        Tlv::Org(OrgTlv::Cee(CeeTlv::Cin(vec![1, 2, 3])))
    );
    assert_eq!(
        one(&org(OC, 9, &[4])),
        Tlv::Org(OrgTlv::Cee(CeeTlv::Unknown {
            subtype: 9,
            info: vec![4]
        }))
    );
    let t = one(&org(OC, 2, &tlv(6, &[0, 0, 0x80, 0, 0x80])));
    let Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(d))) = t else {
        panic!()
    };
    assert_eq!(
        d.sub_tlvs,
        [CeeSubTlv::Unknown {
            ty: 6,
            value: vec![0, 0, 0x80, 0, 0x80]
        }]
    );
}
