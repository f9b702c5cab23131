//! Emitting refuses a TLV whose value does not fit the 9-bit length field (511 bytes) with a
//! typed error instead of wrapping the length and writing a corrupt LLDPDU.

use lossless_wire::lldp::tlv::{self, MAX_VALUE_LEN};
use lossless_wire::lldp::{LldpduRepr, OrgTlv, Tlv};
use lossless_wire::{Error, ErrorKind};

fn too_long(offset: usize, context: &'static str, found: usize) -> Error {
    Error::new(
        offset,
        context,
        "length",
        ErrorKind::BadLength {
            found,
            allowed: "0..=511",
        },
    )
}

fn org(info_len: usize) -> Tlv {
    Tlv::Org(OrgTlv::Other {
        oui: [0x00, 0x00, 0x5e],
        subtype: 1,
        info: vec![0xa5; info_len],
    })
}

#[test]
fn text_tlv_of_511_bytes_emits_and_round_trips() {
    let t = Tlv::SystemName(vec![b'x'; 511]);
    let mut buf = vec![0; t.buffer_len()];
    assert_eq!(t.emit(&mut buf), Ok(513));
    assert_eq!(&buf[..2], &[(5 << 1) | 1, 0xff]);
    let view = tlv::TlvView::parse(&buf, 0).unwrap();
    assert_eq!(Tlv::parse(&view).unwrap().to_owned(), t);
}

#[test]
fn text_tlv_of_512_bytes_is_refused_and_nothing_is_written() {
    let t = Tlv::SystemDescription(vec![b'x'; 512]);
    let mut buf = vec![0xee; t.buffer_len()];
    assert_eq!(t.check_len(), Err(too_long(0, "System Description TLV", 512)));
    assert_eq!(t.emit(&mut buf), Err(too_long(0, "System Description TLV", 512)));
    assert!(buf.iter().all(|&b| b == 0xee), "a refused emit wrote bytes");
}

#[test]
fn org_tlv_of_511_bytes_emits_and_512_is_refused() {
    let ok = org(MAX_VALUE_LEN - 4);
    assert_eq!(ok.value_len(), 511);
    let mut buf = vec![0; ok.buffer_len()];
    assert_eq!(ok.emit(&mut buf), Ok(513));
    let view = tlv::TlvView::parse(&buf, 0).unwrap();
    assert_eq!(view.value.len(), 511);

    let bad = org(MAX_VALUE_LEN - 3);
    let mut buf = vec![0; bad.buffer_len()];
    assert_eq!(
        bad.emit(&mut buf),
        Err(too_long(0, "Organizationally Specific TLV", 512))
    );
}

#[test]
fn pdu_with_a_511_byte_tlv_emits_and_a_512_byte_tlv_is_refused_at_its_offset() {
    let pdu = |last: Tlv| LldpduRepr {
        tlvs: vec![
            Tlv::Ttl(120),
            Tlv::PortDescription(b"eth0".to_vec()),
            last,
            Tlv::End,
        ],
    };
    let ok = pdu(org(507));
    let bytes = ok.to_vec().unwrap();
    assert_eq!(bytes.len(), 4 + 6 + 513 + 2);
    let d = LldpduRepr::parse(&bytes);
    assert_eq!(d.error, None);
    assert_eq!(d.tlvs, ok.tlvs);

    let bad = pdu(org(508));
    assert_eq!(
        bad.check_len(),
        Err(too_long(10, "Organizationally Specific TLV", 512))
    );
    assert_eq!(
        bad.to_vec(),
        Err(too_long(10, "Organizationally Specific TLV", 512))
    );
    let mut buf = vec![0; bad.buffer_len()];
    assert_eq!(
        bad.emit(&mut buf),
        Err(too_long(10, "Organizationally Specific TLV", 512))
    );
}

#[test]
fn emit_into_a_short_buffer_is_a_truncation_error_not_a_panic() {
    let t = Tlv::SystemName(b"sw1".to_vec());
    let mut buf = [0; 4];
    let e = t.emit(&mut buf).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            needed: 5,
            available: 4
        }
    );
    let pdu = LldpduRepr {
        tlvs: vec![t, Tlv::End],
    };
    let mut buf = [0; 6];
    assert_eq!(
        pdu.emit(&mut buf).unwrap_err().kind,
        ErrorKind::Truncated {
            needed: 7,
            available: 6
        }
    );
}

#[test]
fn emit_header_refuses_a_length_over_511() {
    let mut buf = [0; 2];
    assert_eq!(tlv::emit_header(&mut buf, tlv::TYPE_SYSTEM_NAME, 511), Ok(()));
    assert_eq!(buf, [(5 << 1) | 1, 0xff]);
    assert_eq!(
        tlv::emit_header(&mut buf, tlv::TYPE_SYSTEM_NAME, 512),
        Err(too_long(0, "System Name TLV", 512))
    );
    assert_eq!(
        tlv::emit_header(&mut [0; 1], tlv::TYPE_SYSTEM_NAME, 3)
            .unwrap_err()
            .kind,
        ErrorKind::Truncated {
            needed: 2,
            available: 1
        }
    );
}
