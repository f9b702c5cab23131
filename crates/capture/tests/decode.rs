//! Decoding frames into records: link types, FCS detection, truncated frames, partial LLDP,
//! filters, and random input through the whole pipeline (reader → decoder → text and JSON).

use lossless_capture::model::Protocol;
use lossless_capture::{CaptureReader, Filter, Frame, FrameKind, decode_frame, text};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{self, MacControlRepr};
use proptest::prelude::*;

fn frame(data: Vec<u8>, link_type: u32) -> Frame {
    Frame {
        number: 1,
        timestamp: None,
        link_type,
        interface: 0,
        orig_len: data.len() as u32,
        data,
        offset: 24,
        block: None,
        notes: vec![],
    }
}

fn pfc_bytes(fcs: FcsMode) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let control = MacControlRepr::Pfc {
        priority_enable_vector: 0x81,
        time: [7, 0, 0, 0, 0, 0, 0, 9],
    };
    let src = EthernetAddress([2, 0, 0, 0, 0, 1]);
    let n = mac_control::emit_frame(src, EthernetAddress::MAC_CONTROL, &control, fcs, &mut buf).unwrap();
    buf[..n].to_vec()
}

#[test]
fn a_pfc_frame_decodes_to_its_vector_and_times_with_or_without_fcs() {
    for fcs in [FcsMode::Absent, FcsMode::Present] {
        let rec = decode_frame(&frame(pfc_bytes(fcs), 1));
        assert_eq!(rec.protocol, Protocol::Pfc);
        let m = rec.mac_control.as_ref().unwrap();
        let p = m.pfc.as_ref().unwrap();
        assert_eq!(p.priority_enable_vector, 0x81);
        assert_eq!(p.enabled, [true, false, false, false, false, false, false, true]);
        assert_eq!(p.time, [7, 0, 0, 0, 0, 0, 0, 9]);
        assert!(
            !m.length_invalid && !m.dst_address_invalid && !m.enbv_not_zero,
            "{m:?}"
        );
        assert_eq!(rec.eth.as_ref().unwrap().fcs.is_some(), fcs == FcsMode::Present);
        assert!(rec.warnings.is_empty() && rec.errors.is_empty(), "{rec:?}");
    }
}

#[test]
fn a_frame_cut_by_the_snapshot_length_is_not_blamed_for_its_size() {
    let mut f = frame(pfc_bytes(FcsMode::Absent)[..40].to_vec(), 1);
    f.orig_len = 60;
    let rec = decode_frame(&f);
    assert_eq!(rec.protocol, Protocol::Pfc);
    assert!(!rec.mac_control.unwrap().length_invalid);
    assert!(
        rec.warnings.iter().any(|w| w.contains("40 of 60 bytes captured")),
        "{:?}",
        rec.warnings
    );
}

#[test]
fn a_mac_control_frame_too_short_for_its_fields_is_an_error_with_its_offset() {
    let rec = decode_frame(&frame(pfc_bytes(FcsMode::Absent)[..20].to_vec(), 1));
    assert_eq!(rec.protocol, Protocol::MacControl);
    assert_eq!(rec.errors.len(), 1);
    assert!(rec.errors[0].contains("at byte"), "{}", rec.errors[0]);
}

#[test]
fn frames_of_other_link_types_are_skipped_and_say_so() {
    let rec = decode_frame(&frame(vec![0x45; 40], 101));
    assert_eq!(rec.protocol, Protocol::Skipped);
    assert!(
        rec.warnings[0].contains("LINKTYPE_RAW (101)"),
        "{:?}",
        rec.warnings
    );
    assert!(
        rec.warnings[0].contains("only LINKTYPE_ETHERNET"),
        "{:?}",
        rec.warnings
    );
}

#[test]
fn a_frame_shorter_than_an_ethernet_header_is_malformed() {
    let rec = decode_frame(&frame(vec![1, 2, 3], 1));
    assert_eq!(rec.protocol, Protocol::Malformed);
    assert_eq!(rec.errors.len(), 1);
    assert!(text::render(&rec).contains("error: frame 1 (record at file byte 24):"));
}

#[test]
fn an_lldpdu_broken_midway_keeps_the_tlvs_before_the_break() {
    let mut data = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1, 0x88, 0xcc];
    data.extend_from_slice(&[0x02, 0x07, 0x04, 2, 0, 0, 0, 0, 1]); // Chassis ID, MAC
    data.extend_from_slice(&[0x04, 0x03, 0x05, b'p', b'1']); // Port ID, ifName
    data.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]); // TTL 120
    data.extend_from_slice(&[0xfe, 0x09, 0x00, 0x80, 0xc2, 0x0b, 0x08]); // PFC TLV cut short
    let rec = decode_frame(&frame(data, 1));
    let lldp = rec.lldp.as_ref().unwrap();
    assert_eq!(lldp.tlvs.len(), 3);
    assert_eq!(
        lldp.tlvs.iter().map(|t| t.offset).collect::<Vec<_>>(),
        [14, 23, 28]
    );
    assert_eq!(rec.errors.len(), 1, "{:?}", rec.errors);
    assert!(
        rec.errors[0].contains("decoded 3 TLVs before it"),
        "{}",
        rec.errors[0]
    );
}

#[test]
fn an_lldpdu_without_its_mandatory_tlvs_first_is_an_error_a_receiver_would_discard() {
    let mut data = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1, 0x88, 0xcc];
    data.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]); // TTL 120 first
    data.extend_from_slice(&[0x00, 0x00]); // End
    let rec = decode_frame(&frame(data, 1));
    assert_eq!(
        rec.lldp.as_ref().unwrap().tlvs.len(),
        2,
        "the TLVs are still shown"
    );
    assert_eq!(rec.errors.len(), 1, "{:?}", rec.errors);
    assert!(
        rec.errors[0].contains("a receiver discards it"),
        "{}",
        rec.errors[0]
    );
    assert!(rec.errors[0].contains("[3, 0]"), "{}", rec.errors[0]);
}

#[test]
fn utc_times_are_civil_dates() {
    use lossless_capture::model::format_utc;
    use lossless_proto::units::Instant;
    let at = |secs: u128, ns: u128| format_utc(Instant::from_ps(secs * 1_000_000_000_000 + ns * 1_000));
    assert_eq!(at(0, 0), "1970-01-01 00:00:00.000000000");
    assert_eq!(at(951_782_400, 1), "2000-02-29 00:00:00.000000001");
    assert_eq!(at(1_709_251_199, 999_999_999), "2024-02-29 23:59:59.999999999");
    assert_eq!(at(1_767_225_600, 250_000), "2026-01-01 00:00:00.000250000");
    assert_eq!(at(4_294_967_295, 0), "2106-02-07 06:28:15.000000000");
}

#[test]
fn filters_parse_comma_lists_and_refuse_unknown_kinds() {
    let f = Filter::parse_lists(["pfc,dcbx", "pause"]).unwrap();
    let pfc = decode_frame(&frame(pfc_bytes(FcsMode::Absent), 1));
    assert!(f.accepts(&pfc));
    assert!(!Filter::new([FrameKind::Lldp]).accepts(&pfc));
    assert!(Filter::default().accepts(&pfc));
    assert!(Filter::parse_lists(["pfc,arp"]).unwrap_err().contains("\"arp\""));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_frame_bytes_decode_and_render_without_panic(
        ethertype in prop_oneof![Just(0x8808u16), Just(0x88cc), Just(0x8100), any::<u16>()],
        body in proptest::collection::vec(any::<u8>(), 0..600),
        cut in 0usize..16,
    ) {
        let mut data = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1];
        data.extend_from_slice(&ethertype.to_be_bytes());
        data.extend_from_slice(&body);
        data.truncate(data.len().saturating_sub(cut));
        let rec = decode_frame(&frame(data, 1));
        let _ = text::render(&rec);
        prop_assert!(serde_json::to_string(&rec).is_ok());
    }

    #[test]
    fn random_bytes_as_a_pcap_file_decode_without_panic(
        records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..6),
        junk in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0];
        for r in &records {
            file.extend_from_slice(&[0; 8]);
            file.extend_from_slice(&(r.len() as u32).to_le_bytes());
            file.extend_from_slice(&(r.len() as u32).to_le_bytes());
            file.extend_from_slice(r);
        }
        file.extend_from_slice(&junk);
        let mut n = 0;
        // Errors end the iteration or are skipped; only frames go on to the decoder.
        for f in CaptureReader::new(&file[..]).flatten() {
            let rec = decode_frame(&f);
            let _ = text::render(&rec);
            n += 1;
        }
        prop_assert!(n >= records.len());
    }
}

fn lldp_with(tlv: lossless_wire::lldp::Tlv) -> Vec<u8> {
    use lossless_wire::lldp::{
        ChassisId, ChassisIdSubtype, LldpduRepr, PortId, PortIdSubtype, Tlv, lldp_frame,
    };
    let src = EthernetAddress([2, 0, 0, 0, 0, 9]);
    let tlvs = vec![
        Tlv::ChassisId(ChassisId {
            subtype: ChassisIdSubtype::MacAddress,
            id: src.as_bytes().to_vec(),
        }),
        Tlv::PortId(PortId {
            subtype: PortIdSubtype::InterfaceName,
            id: b"p1".to_vec(),
        }),
        Tlv::Ttl(120),
        tlv,
        Tlv::End,
    ];
    lldp_frame(src, &LldpduRepr { tlvs }.to_vec().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn any_emitted_pfc_or_pause_frame_decodes_to_its_fields(
        pfc: bool, vector: u16, time: [u16; 8], pause_time: u16, with_fcs: bool,
    ) {
        let control = if pfc {
            MacControlRepr::Pfc { priority_enable_vector: vector, time }
        } else {
            MacControlRepr::Pause { pause_time }
        };
        let fcs = if with_fcs { FcsMode::Present } else { FcsMode::Absent };
        let mut buf = [0u8; 64];
        let n = mac_control::emit_frame(EthernetAddress([2, 0, 0, 0, 0, 1]), EthernetAddress::MAC_CONTROL, &control, fcs, &mut buf).unwrap();
        let rec = decode_frame(&frame(buf[..n].to_vec(), 1));
        prop_assert!(rec.errors.is_empty());
        let m = rec.mac_control.unwrap();
        if pfc {
            prop_assert_eq!(rec.protocol, Protocol::Pfc);
            let p = m.pfc.unwrap();
            prop_assert_eq!(p.priority_enable_vector, vector);
            prop_assert_eq!(p.time, time);
            prop_assert_eq!(p.enabled, std::array::from_fn(|i| vector & (1 << i) != 0));
            prop_assert_eq!(m.enbv_not_zero, vector >> 8 != 0);
        } else {
            prop_assert_eq!(rec.protocol, Protocol::Pause);
            prop_assert_eq!(m.pause_time, Some(pause_time));
        }
        prop_assert!(!m.length_invalid && !m.dst_address_invalid);
    }

    #[test]
    fn any_emitted_ets_and_pfc_configuration_decodes_to_its_tables(
        willing: bool, cbs: bool, max_tcs in 0u8..8, priority_tc in proptest::array::uniform8(0u8..8),
        tc_bandwidth: [u8; 8], tsa: [u8; 8], mbc: bool, pfc_cap in 0u8..16, pfc_enable: u8,
    ) {
        use lossless_capture::lldp::model::TlvBody;
        use lossless_wire::lldp::{EtsConfiguration, EtsTables, Ieee8021Tlv, OrgTlv, PfcConfiguration, Tlv, Tsa};
        let ets = EtsConfiguration {
            willing, cbs, reserved: 0, max_tcs,
            tables: EtsTables { priority_tc, tc_bandwidth, tsa: tsa.map(Tsa::from) },
        };
        let rec = decode_frame(&frame(lldp_with(Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::EtsConfiguration(ets)))), 1));
        prop_assert!(rec.errors.is_empty(), "{:?}", rec.errors);
        let TlvBody::EtsConfiguration(e) = &rec.lldp.as_ref().unwrap().tlvs[3].body else { panic!("not ETS") };
        prop_assert_eq!((e.willing, e.cbs, e.max_tcs), (Some(willing), Some(cbs), Some(max_tcs)));
        prop_assert_eq!((e.priority_tc, e.tc_bandwidth, e.tsa), (priority_tc, tc_bandwidth, tsa));

        let pfc = PfcConfiguration { willing, mbc, reserved: 0, pfc_cap, enabled: pfc_enable };
        let rec = decode_frame(&frame(lldp_with(Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::PfcConfiguration(pfc)))), 1));
        let TlvBody::PfcConfiguration(p) = &rec.lldp.as_ref().unwrap().tlvs[3].body else { panic!("not PFC") };
        prop_assert_eq!((p.willing, p.mbc, p.pfc_cap, p.pfc_enable), (willing, mbc, pfc_cap, pfc_enable));
        prop_assert!(FrameKind::Dcbx.matches(&rec));
    }
}

/// A RoCEv2 RC SEND Only frame whose payload starts with `field`, `payload` bytes in all.
fn roce_send_with(field: &[u8], payload: usize) -> Vec<u8> {
    use lossless_wire::ip::{IpRepr, Ipv4Repr};
    use lossless_wire::roce::{Envelope, RoceFrameRepr};
    let env = Envelope::new(
        EthernetAddress([2, 0, 0, 0, 0, 1]),
        EthernetAddress([2, 0, 0, 0, 0, 2]),
        None,
        IpRepr::V4(Ipv4Repr::udp([10, 0, 0, 1], [10, 0, 0, 2])),
        10_000,
    );
    let r = RoceFrameRepr::rc_send(env, 7, 3, true, true, false, payload);
    let mut buf = vec![0u8; 2048];
    let n = r.emit_with_payload(field, FcsMode::Absent, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

#[test]
fn cc_fields_open_the_payload_as_the_fork_writes_them() {
    use lossless_capture::cn::decode::{CcFieldKind, decode_cc_field};
    use lossless_capture::cn::model::{CcFieldRecord, IntHopRecord};
    use lossless_wire::int::{INT_LEN, IntHeader, IntHop};
    // HPCC's INT: one hop of a 100 G port
    let mut h = IntHeader::default();
    h.push(IntHop::stamp(5_000, 1_280, 800, 100_000_000_000, 1));
    let mut b = [0u8; INT_LEN];
    h.emit(&mut b).unwrap();
    let data = roce_send_with(&b, 1000);
    let mut rec = decode_frame(&frame(data.clone(), 1));
    decode_cc_field(&data, &mut rec, CcFieldKind::Int);
    let want = CcFieldRecord::Int {
        nhop: 1,
        hops: vec![IntHopRecord {
            line_rate_bps: 100_000_000_000,
            time_ns: 5_000,
            bytes_units: 10,
            qlen_units: 10,
        }],
    };
    assert_eq!(rec.roce.as_ref().unwrap().cc_field, Some(want));
    assert!(text::render(&rec).contains("INT: 1 hops\n        hop 0: rate 100 Gb/s, time 5000 ns"));
    // TIMELY's send time, little-endian
    let data = roce_send_with(&123_456_789u64.to_le_bytes(), 1000);
    let mut rec = decode_frame(&frame(data.clone(), 1));
    decode_cc_field(&data, &mut rec, CcFieldKind::Timestamp);
    assert_eq!(
        rec.roce.as_ref().unwrap().cc_field,
        Some(CcFieldRecord::Timestamp {
            send_time_ns: 123_456_789
        })
    );
    // PINT at base 1.05: one byte
    let codec = lossless_proto::hpcc_pint::PintCodec::new(1.05).unwrap();
    let data = roce_send_with(&[128, 0xEE], 1000);
    let mut rec = decode_frame(&frame(data.clone(), 1));
    decode_cc_field(&data, &mut rec, CcFieldKind::Pint(codec));
    let Some(CcFieldRecord::Pint { code, bytes, .. }) = rec.roce.as_ref().unwrap().cc_field else {
        panic!("{rec:?}");
    };
    assert_eq!((code, bytes), (128, 1));
    // a payload too short for the field: a warning at its byte, no field
    let data = roce_send_with(&[1, 2, 3, 4], 4);
    let mut rec = decode_frame(&frame(data.clone(), 1));
    decode_cc_field(&data, &mut rec, CcFieldKind::Int);
    assert_eq!(rec.roce.as_ref().unwrap().cc_field, None);
    assert!(
        rec.warnings
            .iter()
            .any(|w| w.contains("--cc-field") && w.contains("at byte 54")),
        "{:?}",
        rec.warnings
    );
}
