//! Properties: every representable TLV and LLDPDU survives emit→parse unchanged, every
//! well-formed decode re-emits the input bytes, and arbitrary bytes never panic.

use lossless_wire::lldp::*;
use proptest::collection::vec;
use proptest::prelude::*;

fn bytes(r: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), r)
}

fn ets_tables() -> impl Strategy<Value = EtsTables> {
    (prop::array::uniform8(0u8..16), any::<[u8; 8]>(), any::<[u8; 8]>()).prop_map(|(p, bw, tsa)| EtsTables {
        priority_tc: p,
        tc_bandwidth: bw,
        tsa: tsa.map(Tsa::from),
    })
}

fn app_entry() -> impl Strategy<Value = AppEntry> {
    (0u8..8, 0u8..4, 0u8..8, any::<u16>()).prop_map(|(priority, reserved, selector, protocol)| AppEntry {
        priority,
        reserved,
        selector,
        protocol,
    })
}

fn ieee8021() -> impl Strategy<Value = Ieee8021Tlv> {
    prop_oneof![
        any::<u16>().prop_map(Ieee8021Tlv::PortVlanId),
        (any::<u8>(), any::<u16>())
            .prop_map(|(flags, ppvid)| Ieee8021Tlv::PortProtocolVlanId(PortProtocolVlanId { flags, ppvid })),
        (any::<u16>(), bytes(0..=32)).prop_map(|(vid, name)| Ieee8021Tlv::VlanName(VlanName { vid, name })),
        bytes(0..=255).prop_map(Ieee8021Tlv::ProtocolIdentity),
        (any::<u8>(), any::<u32>())
            .prop_map(|(status, port_id)| Ieee8021Tlv::LinkAggregation(LinkAggregation { status, port_id })),
        (any::<u8>(), any::<u8>()).prop_map(|(cnpv, ready)| Ieee8021Tlv::CongestionNotification(
            CongestionNotification { cnpv, ready }
        )),
        (any::<bool>(), any::<bool>(), 0u8..8, 0u8..8, ets_tables()).prop_map(
            |(willing, cbs, reserved, max_tcs, tables)| Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
                willing,
                cbs,
                reserved,
                max_tcs,
                tables
            })
        ),
        (any::<u8>(), ets_tables()).prop_map(|(reserved, tables)| Ieee8021Tlv::EtsRecommendation(
            EtsRecommendation { reserved, tables }
        )),
        (any::<bool>(), any::<bool>(), 0u8..4, 0u8..16, any::<u8>()).prop_map(
            |(willing, mbc, reserved, pfc_cap, enabled)| Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
                willing,
                mbc,
                reserved,
                pfc_cap,
                enabled
            })
        ),
        (any::<u8>(), vec(app_entry(), 0..=168))
            .prop_map(|(r, e)| Ieee8021Tlv::ApplicationPriority(ApplicationPriority::new(r, &e))),
        (
            any::<u8>().prop_filter("unknown", |s| ![1, 2, 3, 4, 7, 8, 9, 10, 11, 12].contains(s)),
            bytes(0..=507)
        )
            .prop_map(|(subtype, info)| Ieee8021Tlv::Unknown { subtype, info }),
    ]
}

fn ieee8023() -> impl Strategy<Value = Ieee8023Tlv> {
    prop_oneof![
        (any::<u8>(), any::<u16>(), any::<u16>()).prop_map(|(autoneg, advertised, mau_type)| {
            Ieee8023Tlv::MacPhyConfigStatus(MacPhyConfigStatus {
                autoneg,
                advertised,
                mau_type,
            })
        }),
        bytes(0..=507).prop_map(Ieee8023Tlv::PowerViaMdi),
        (any::<u8>(), any::<u32>())
            .prop_map(|(status, port_id)| Ieee8023Tlv::LinkAggregation(LinkAggregation { status, port_id })),
        any::<u16>().prop_map(Ieee8023Tlv::MaximumFrameSize),
        (5u8.., bytes(0..=507)).prop_map(|(subtype, info)| Ieee8023Tlv::Unknown { subtype, info }),
    ]
}

fn cee_header() -> impl Strategy<Value = CeeFeatureHeader> {
    (any::<u8>(), any::<u8>(), any::<[bool; 3]>(), 0u8..32, any::<u8>()).prop_map(
        |(o, m, f, reserved, subtype)| CeeFeatureHeader {
            oper_version: o,
            max_version: m,
            enabled: f[0],
            willing: f[1],
            error: f[2],
            reserved,
            subtype,
        },
    )
}

fn cee_sub() -> impl Strategy<Value = CeeSubTlv> {
    prop_oneof![
        (any::<u8>(), any::<u8>(), any::<u32>(), any::<u32>()).prop_map(|(o, m, seq, ack)| {
            CeeSubTlv::Control(CeeControl {
                oper_version: o,
                max_version: m,
                seq,
                ack,
            })
        }),
        (
            cee_header(),
            prop::array::uniform8(0u8..16),
            any::<[u8; 8]>(),
            any::<u8>()
        )
            .prop_map(|(header, pgid, bw, n)| {
                CeeSubTlv::PriorityGroups(CeePriorityGroups {
                    header,
                    pgid,
                    pg_bandwidth: bw,
                    num_tcs: n,
                })
            }),
        (cee_header(), any::<u8>(), any::<u8>()).prop_map(|(header, admin_map, num_tcs)| CeeSubTlv::Pfc(
            CeePfc {
                header,
                admin_map,
                num_tcs
            }
        )),
        (
            cee_header(),
            vec(
                (any::<u16>(), 0u8..4, any::<u32>(), any::<u8>()).prop_map(
                    |(protocol, selector, oui, priority_map)| {
                        CeeAppEntry {
                            protocol,
                            selector,
                            oui: oui & 0x00fc_ffff,
                            priority_map,
                        }
                    }
                ),
                0..10
            )
        )
            .prop_map(|(h, e)| CeeSubTlv::Application(CeeApplication::new(h, &e))),
        (
            (0u8..128).prop_filter("unknown", |t| !(1..=4).contains(t)),
            bytes(0..=60)
        )
            .prop_map(|(ty, value)| CeeSubTlv::Unknown { ty, value }),
    ]
}

fn cee() -> impl Strategy<Value = CeeTlv> {
    prop_oneof![
        vec(cee_sub(), 0..5).prop_map(|sub_tlvs| CeeTlv::Dcbx(CeeDcbx { sub_tlvs })),
        bytes(0..=507).prop_map(CeeTlv::Cin),
        (
            any::<u8>().prop_filter("unknown", |s| *s != 1 && *s != 2),
            bytes(0..=507)
        )
            .prop_map(|(subtype, info)| CeeTlv::Unknown { subtype, info }),
    ]
}

fn org() -> impl Strategy<Value = OrgTlv> {
    let known = [[0x00, 0x80, 0xc2], [0x00, 0x12, 0x0f], [0x00, 0x1b, 0x21]];
    prop_oneof![
        ieee8021().prop_map(OrgTlv::Ieee8021),
        ieee8023().prop_map(OrgTlv::Ieee8023),
        cee().prop_map(OrgTlv::Cee),
        (
            any::<[u8; 3]>().prop_filter("other OUI", move |o| !known.contains(o)),
            any::<u8>(),
            bytes(0..=507)
        )
            .prop_map(|(oui, subtype, info)| OrgTlv::Other { oui, subtype, info }),
    ]
}

/// Any TLV except End.
fn tlv() -> impl Strategy<Value = Tlv> {
    prop_oneof![
        (any::<u8>(), bytes(1..=255)).prop_map(|(s, id)| Tlv::ChassisId(ChassisId {
            subtype: s.into(),
            id
        })),
        (any::<u8>(), bytes(1..=255)).prop_map(|(s, id)| Tlv::PortId(PortId {
            subtype: s.into(),
            id
        })),
        any::<u16>().prop_map(Tlv::Ttl),
        bytes(0..=511).prop_map(Tlv::PortDescription),
        bytes(0..=511).prop_map(Tlv::SystemName),
        bytes(0..=511).prop_map(Tlv::SystemDescription),
        (any::<u16>(), any::<u16>()).prop_map(|(capabilities, enabled)| Tlv::SystemCapabilities(
            SystemCapabilities {
                capabilities,
                enabled
            }
        )),
        (
            any::<u8>(),
            bytes(1..=31),
            any::<u8>(),
            any::<u32>(),
            bytes(0..=128)
        )
            .prop_map(|(a, address, i, n, oid)| {
                Tlv::ManagementAddress(ManagementAddress {
                    address_subtype: a,
                    address,
                    interface_subtype: i,
                    interface_number: n,
                    oid,
                })
            }),
        org().prop_map(Tlv::Org),
        (9u8..127, bytes(0..=511)).prop_map(|(ty, value)| Tlv::Unknown { ty, value }),
    ]
}

fn pdu() -> impl Strategy<Value = LldpduRepr> {
    (vec(tlv(), 0..12), any::<bool>()).prop_map(|(mut tlvs, end)| {
        if end {
            tlvs.push(Tlv::End);
        }
        LldpduRepr { tlvs }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_tlv_survives_emit_then_parse(t in tlv()) {
        let mut buf = vec![0; t.buffer_len()];
        prop_assert_eq!(t.emit(&mut buf), Ok(buf.len()));
        let d = LldpduRepr::parse(&buf);
        prop_assert_eq!(d.error, None);
        prop_assert_eq!(d.tlvs, vec![t]);
    }

    #[test]
    fn every_pdu_survives_emit_then_parse(p in pdu()) {
        let bytes = p.to_vec().expect("generated TLVs fit 511 bytes");
        let d = LldpduRepr::parse(&bytes);
        prop_assert_eq!(d.error, None);
        prop_assert_eq!(d.len, bytes.len());
        prop_assert_eq!(&d.tlvs, &p.tlvs);
        let zero_copy: Vec<Tlv> = Lldpdu::new(&bytes).tlvs().map(|t| t.unwrap().to_owned()).collect();
        prop_assert_eq!(zero_copy, p.tlvs);
    }

    #[test]
    fn random_bytes_never_panic_and_sound_decodes_re_emit(b in bytes(0..=1600)) {
        let d = LldpduRepr::parse(&b);
        prop_assert!(d.len <= b.len());
        if d.error.is_none() {
            let emitted = LldpduRepr { tlvs: d.tlvs }.to_vec();
            prop_assert_eq!(emitted.as_deref(), Ok(&b[..d.len]));
        }
    }

    #[test]
    fn mutated_pdus_never_panic_and_sound_decodes_re_emit(p in pdu(), at in any::<usize>(), x in any::<u8>(), cut in any::<usize>()) {
        let mut b = p.to_vec().expect("generated TLVs fit 511 bytes");
        if !b.is_empty() {
            let i = at % b.len();
            b[i] ^= x;
            b.truncate(cut % (b.len() + 1));
        }
        let d = LldpduRepr::parse(&b);
        if d.error.is_none() {
            let emitted = LldpduRepr { tlvs: d.tlvs }.to_vec();
            prop_assert_eq!(emitted.as_deref(), Ok(&b[..d.len]));
        }
    }
}
