//! LLDPDU-level behaviour: order warnings, End and padding, partial decodes, frame helper.

use lossless_wire::ErrorKind;
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::lldp::*;

fn tlv(ty: u8, value: &[u8]) -> Vec<u8> {
    let word = (u16::from(ty) << 9) | value.len() as u16;
    let mut v = word.to_be_bytes().to_vec();
    v.extend_from_slice(value);
    v
}

fn mandatory() -> Vec<u8> {
    let mut b = tlv(1, &[4, 8, 0, 0x27, 0x0d, 0xf1, 0x3c]);
    b.extend(tlv(2, &[3, 8, 0, 0x27, 0x0d, 0xf1, 0x3c]));
    b.extend(tlv(3, &[0, 120]));
    b
}

#[test]
fn well_formed_pdu_decodes_without_warnings_and_re_emits() {
    let mut b = mandatory();
    b.extend(tlv(5, b"sw1"));
    b.extend(tlv(0, &[]));
    let d = LldpduRepr::parse(&b);
    assert_eq!((d.error, d.warnings.len(), d.len), (None, 0, b.len()));
    assert_eq!(d.tlvs[2], Tlv::Ttl(120));
    assert_eq!(d.tlvs.last(), Some(&Tlv::End));
    let (repr, _) = d.into_result().unwrap();
    assert_eq!(repr.to_vec(), Ok(b.clone()));
    assert_eq!(repr.buffer_len(), b.len());
}

#[test]
fn padding_after_end_is_not_part_of_the_pdu() {
    let mut b = mandatory();
    b.extend(tlv(0, &[]));
    let len = b.len();
    b.extend([0u8; 20]);
    let d = LldpduRepr::parse(&b);
    assert_eq!((d.len, d.tlvs.len(), d.error), (len, 4, None));
}

#[test]
fn mandatory_order_violations_are_warnings() {
    // tcpdump's lldp_8021_linkagg.pcap: only an 802.1 Link Aggregation TLV and End.
    let mut b = tlv(127, &[0, 0x80, 0xc2, 7, 3, 0, 0, 0, 100]);
    b.extend(tlv(0, &[]));
    let d = LldpduRepr::parse(&b);
    assert!(d.error.is_none());
    assert_eq!(d.tlvs.len(), 2);
    let w: Vec<_> = d.warnings.iter().map(|w| (w.offset, w.kind)).collect();
    assert_eq!(
        w[0],
        (
            0,
            ErrorKind::Order {
                expected: "Chassis ID TLV first"
            }
        )
    );
    assert_eq!(
        w[1],
        (
            // End where the Port ID should be: the Port ID is missing
            11,
            ErrorKind::Missing {
                expected: "Port ID TLV second"
            }
        )
    );
    assert_eq!(
        d.warnings[0].to_string(),
        "LLDPDU: Organizationally Specific TLV at byte 0: out of order, expected Chassis ID TLV first"
    );
}

#[test]
fn repeated_mandatory_tlv_and_missing_end_are_warnings() {
    let mut b = mandatory();
    b.extend(tlv(3, &[0, 1]));
    let d = LldpduRepr::parse(&b);
    assert!(d.error.is_none());
    let expected: Vec<_> = d.warnings.iter().map(|w| (w.offset, w.field)).collect();
    assert_eq!(expected, [(22, "Time To Live TLV"), (26, "End Of LLDPDU TLV")]);
    assert_eq!(LldpduRepr { tlvs: d.tlvs }.to_vec(), Ok(b.clone()));
}

#[test]
fn truncated_tlv_keeps_everything_decoded_before_it() {
    let mut b = mandatory();
    b.extend([0x0a, 0x10, b'x']);
    let d = LldpduRepr::parse(&b);
    let e = d.error.unwrap();
    assert_eq!((e.offset, e.context, e.field), (24, "System Name TLV", "value"));
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 16,
            available: 1
        }
    );
    assert_eq!(d.tlvs.len(), 3);
    assert!(LldpduRepr::parse(&b).into_result().is_err());
}

#[test]
fn zero_copy_decode_matches_owned_decode() {
    let mut b = mandatory();
    b.extend(tlv(127, &[0, 0x80, 0xc2, 11, 0x88, 0x18]));
    b.extend(tlv(0, &[]));
    let borrowed: Vec<_> = Lldpdu::new(&b).tlvs().map(|t| t.unwrap().to_owned()).collect();
    assert_eq!(borrowed, LldpduRepr::parse(&b).tlvs);
    let Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::PfcConfiguration(p))) = &borrowed[3] else {
        panic!()
    };
    assert!(p.willing && p.is_enabled(3) && p.is_enabled(4));
}

#[test]
fn empty_buffer_decodes_to_nothing_with_a_missing_end_warning() {
    let d = LldpduRepr::parse(&[]);
    assert_eq!((d.tlvs.len(), d.error, d.len), (0, None, 0));
    assert_eq!(d.warnings.len(), 1);
}

#[test]
fn lldp_frame_prefixes_the_nearest_bridge_header() {
    let f = lldp_frame(EthernetAddress([2, 0, 0, 0, 0, 1]), &[0, 0]);
    assert_eq!(f, [1, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1, 0x88, 0xcc, 0, 0]);
}

#[test]
fn visit_sees_every_tlv_by_reference_and_stops_at_the_first_error() {
    let mut b = mandatory();
    b.extend(tlv(127, &[0, 0x80, 0xc2, 11, 0x88, 0x18]));
    b.extend(tlv(0, &[]));
    let mut seen = vec![];
    let len = Lldpdu::new(&b).visit(|view, t| seen.push((view.offset, t.to_owned())));
    assert_eq!(len, Ok(b.len()));
    let offsets: Vec<usize> = seen.iter().map(|(o, _)| *o).collect();
    assert_eq!(offsets, [0, 9, 18, 22, 30]);
    let tlvs: Vec<Tlv> = seen.into_iter().map(|(_, t)| t).collect();
    assert_eq!(tlvs, LldpduRepr::parse(&b).tlvs);

    let mut bad = mandatory();
    bad.extend(tlv(127, &[0, 0x80, 0xc2, 11, 0x88]));
    let mut count = 0;
    let e = Lldpdu::new(&bad).visit(|_, _| count += 1).unwrap_err();
    assert_eq!((count, e.offset, e.context), (3, 22, "PFC Configuration TLV"));
}

#[test]
fn a_missing_end_of_lldpdu_tlv_reads_as_missing_not_out_of_order() {
    let mut b = mandatory();
    b.extend(tlv(5, b"sw1"));
    let d = LldpduRepr::parse(&b);
    assert!(d.error.is_none());
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    let w = d.warnings[0];
    assert!(matches!(w.kind, ErrorKind::Missing { .. }), "{w:?}");
    assert_eq!(w.offset, b.len());
    let text = w.to_string();
    assert!(
        text.contains("missing") && text.contains("End Of LLDPDU TLV") && !text.contains("order"),
        "{text}"
    );
}

#[test]
fn an_lldpdu_that_ends_before_its_mandatory_tlvs_lacks_them() {
    // Chassis ID, then End: the Port ID is missing, not out of order
    let mut b = tlv(1, &[4, 8, 0, 0x27, 0x0d, 0xf1, 0x3c]);
    b.extend(tlv(0, &[]));
    let d = LldpduRepr::parse(&b);
    assert_eq!(
        d.warnings[0].kind,
        ErrorKind::Missing {
            expected: "Port ID TLV second"
        }
    );
    assert!(d.warnings[0].to_string().contains("missing: Port ID TLV second"));
}

#[test]
fn bytes_after_end_name_the_first_one_and_what_is_allowed() {
    let mut b = mandatory();
    b.extend(tlv(0, &[]));
    let end = b.len();
    b.extend([0, 0, 0x5a, 0]);
    let d = LldpduRepr::parse(&b);
    let w = d.warnings[0];
    assert_eq!(w.offset, end + 2);
    assert_eq!(
        w.kind,
        ErrorKind::BadValue {
            found: 0x5a,
            allowed: "only zero padding after End Of LLDPDU TLV"
        }
    );
}
