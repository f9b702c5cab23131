//! Malformed RoCEv2, IP and 802.1Qau input gets the exact typed error (offset, structure,
//! field, found, allowed): frames truncated at every length, bad versions, reserved opcodes,
//! opcode/length combinations that cannot be, lengths that disagree; and emit refuses reprs
//! that would not parse back.

use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTag};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{IpRepr, Ipv4Repr, Ipv6Repr};
use lossless_wire::qcn::{self, CnEthernetRepr, CnTag, CnmFrameRepr, CnmRepr, EncapsulatedMsdu};
use lossless_wire::roce::{self, AethRepr, Envelope, Opcode, RoceFrameRepr, Syndrome, UdpChecksum};
use lossless_wire::{Error, ErrorKind};

const A: EthernetAddress = EthernetAddress([2, 1, 0, 0, 0, 1]);
const B: EthernetAddress = EthernetAddress([2, 1, 0, 0, 0, 2]);

fn v4() -> IpRepr {
    IpRepr::V4(Ipv4Repr::udp([10, 0, 0, 1], [10, 0, 0, 2]))
}

fn v6() -> IpRepr {
    IpRepr::V6(Ipv6Repr::udp([0xfd; 16], [0xfe; 16]))
}

fn emit(f: &RoceFrameRepr) -> Vec<u8> {
    let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
    let n = f.emit(FcsMode::Absent, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

fn bad_value(
    offset: usize,
    context: &'static str,
    field: &'static str,
    found: u64,
    allowed: &'static str,
) -> Error {
    Error::new(offset, context, field, ErrorKind::BadValue { found, allowed })
}

#[test]
fn a_roce_frame_truncated_at_every_length_names_the_header_and_what_was_missing() {
    for ip in [v4(), v6()] {
        let f = RoceFrameRepr::rc_send(Envelope::new(A, B, None, ip, 1), 1, 2, true, true, false, 100);
        let frame = emit(&f);
        let ip_len = ip.buffer_len();
        let ip_end = 14 + ip_len + 8 + 12 + 100 + 4;
        assert_eq!(frame.len(), ip_end);
        let ctx = if ip_len == 20 {
            "IPv4 header"
        } else {
            "IPv6 header"
        };
        for len in 0..frame.len() {
            let got = roce::parse(&frame[..len], FcsMode::Absent).unwrap_err();
            let want = if len < 14 {
                Error::truncated(0, "Ethernet II header", "header", 14, len)
            } else if len < 14 + ip_len {
                Error::truncated(14, ctx, "header", ip_len, len - 14)
            } else {
                Error::truncated(
                    14 + ip_len,
                    "IP header",
                    "payload",
                    ip_end - 14 - ip_len,
                    len - 14 - ip_len,
                )
            };
            assert_eq!(got, want, "{ctx}, {len} of {} bytes", frame.len());
        }
    }
}

#[test]
fn a_cnm_frame_truncated_at_every_length_names_the_header_and_what_was_missing() {
    let cnm = CnmRepr {
        reserved_v: 0,
        qntz_fb: 9,
        cpid: [1; 8],
        q_offset: -1,
        q_delta: 1,
        encapsulated_priority: 3,
        encapsulated_priority_reserved: 0,
        encapsulated_dst: B,
        encapsulated: EncapsulatedMsdu::new(&[7; 40]).unwrap(),
    };
    let f = CnmFrameRepr::new(A, B, None, None, cnm);
    let mut frame = vec![0u8; f.buffer_len(FcsMode::Absent)];
    f.emit(FcsMode::Absent, &mut frame).unwrap();
    assert_eq!(frame.len(), 14 + 24 + 40);
    for len in 0..frame.len() {
        let got = qcn::parse_cnm_frame(&frame[..len], FcsMode::Absent).unwrap_err();
        let want = if len < 14 {
            Error::truncated(0, "Ethernet II header", "header", 14, len)
        } else if len < 38 {
            Error::truncated(14, "CNM PDU", "header", 24, len - 14)
        } else {
            Error::truncated(38, "CNM PDU", "Encapsulated MSDU", 40, len - 38)
        };
        assert_eq!(got, want, "{len} bytes");
    }
}

#[test]
fn a_cnm_of_any_version_but_0_is_refused() {
    let f = CnmFrameRepr::new(
        A,
        B,
        None,
        Some(CnTag { flow_id: 1 }),
        CnmRepr {
            reserved_v: 0,
            qntz_fb: 1,
            cpid: [0; 8],
            q_offset: 0,
            q_delta: 0,
            encapsulated_priority: 0,
            encapsulated_priority_reserved: 0,
            encapsulated_dst: B,
            encapsulated: EncapsulatedMsdu::default(),
        },
    );
    let mut frame = vec![0u8; f.buffer_len(FcsMode::Absent)];
    f.emit(FcsMode::Absent, &mut frame).unwrap();
    let pdu = 14 + 4;
    for v in 1..16u8 {
        frame[pdu] = v << 4;
        let got = qcn::parse_cnm_frame(&frame, FcsMode::Absent).unwrap_err();
        assert_eq!(got, bad_value(pdu, "CNM PDU", "Version", v.into(), "0"));
    }
    frame[pdu] = 0;
    frame[pdu + 22..pdu + 24].copy_from_slice(&65u16.to_be_bytes());
    let got = qcn::parse_cnm_frame(&frame, FcsMode::Absent).unwrap_err();
    assert_eq!(
        got,
        bad_value(pdu + 22, "CNM PDU", "Encapsulated MSDU length", 65, "0..=64")
    );
}

#[test]
fn an_ip_header_of_the_wrong_version_is_refused() {
    let frame = emit(&RoceFrameRepr::cnp(Envelope::new(A, B, None, v4(), 1), 5));
    for v in (0..16u8).filter(|v| *v != 4) {
        let mut f = frame.clone();
        f[14] = v << 4 | 5;
        let got = roce::parse(&f, FcsMode::Absent).unwrap_err();
        assert_eq!(got, bad_value(14, "IPv4 header", "version", v.into(), "4"));
    }
    let frame = emit(&RoceFrameRepr::cnp(Envelope::new(A, B, None, v6(), 1), 5));
    let mut f = frame.clone();
    f[14] = 0x40;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        bad_value(14, "IPv6 header", "version", 4, "6")
    );
    let mut f = emit(&RoceFrameRepr::cnp(Envelope::new(A, B, None, v4(), 1), 5));
    f[14] = 0x44;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        bad_value(14, "IPv4 header", "IHL", 4, "5..=15 (32-bit words)")
    );
}

#[test]
fn a_reserved_opcode_is_refused_at_the_bth() {
    let reserved: Vec<u8> = (0..=255u8).filter(|o| Opcode(*o).layout().is_none()).collect();
    assert!(
        reserved.contains(&0x15)
            && reserved.contains(&0x2C)
            && reserved.contains(&0x80)
            && reserved.contains(&0xFF)
    );
    assert_eq!(
        reserved.len(),
        256 - 23 - 12 - 22 - 2 - 1,
        "defined: RC 23, UC 12, RD 22, UD 2, CNP 1"
    );
    let frame = emit(&RoceFrameRepr::cnp(Envelope::new(A, B, None, v4(), 1), 5));
    let bth = 14 + 20 + 8;
    for op in reserved {
        let mut f = frame.clone();
        f[bth] = op;
        assert_eq!(
            roce::parse(&f, FcsMode::Absent).unwrap_err(),
            bad_value(
                bth,
                "BTH",
                "opcode",
                op.into(),
                "a defined RC, UC, RD, UD or CNP opcode"
            ),
            "opcode {op:#04x}"
        );
    }
}

#[test]
fn opcode_and_length_combinations_that_cannot_be_are_refused() {
    let bth = 14 + 20 + 8;
    let udp_len_at = 14 + 20 + 4;
    // An ACK whose UDP payload has room for data: the opcode carries none.
    let ack = RoceFrameRepr::rc_ack(
        Envelope::new(A, B, None, v4(), 1),
        1,
        2,
        AethRepr {
            syndrome: Syndrome::ack(31),
            msn: 0,
        },
    );
    // the bytes of a SEND Only with 8 bytes of payload, called an ACK
    let data = RoceFrameRepr::rc_send(Envelope::new(A, B, None, v4(), 1), 1, 2, true, true, false, 8);
    let mut f = emit(&data);
    f[bth] = Opcode::RC_ACKNOWLEDGE.0;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        Error::new(
            bth + 16,
            "RoCEv2 packet",
            "payload",
            ErrorKind::BadLength {
                found: 4,
                allowed: "0: this opcode carries no payload"
            }
        )
    );
    // A CNP whose UDP payload is too short for its 16 reserved bytes and the ICRC.
    let mut f = emit(&ack);
    f[bth] = Opcode::CNP.0;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        Error::new(
            udp_len_at,
            "UDP header",
            "length",
            ErrorKind::BadLength {
                found: 28,
                allowed: "room for the BTH, the opcode's extension headers and the ICRC"
            }
        )
    );
    // An RDMA WRITE First whose payload is shorter than its RETH.
    let mut f = emit(&ack);
    f[bth] = Opcode::RC_RDMA_WRITE_FIRST.0;
    assert!(matches!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        Error { offset, field: "length", kind: ErrorKind::BadLength { found: 28, .. }, .. } if offset == udp_len_at
    ));
    // More pad bytes than payload.
    let two = RoceFrameRepr::rc_send(Envelope::new(A, B, None, v4(), 1), 1, 2, true, true, false, 2);
    let mut f = emit(&two);
    f[bth + 1] = 0x30;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        bad_value(bth + 1, "BTH", "PadCnt", 3, "at most the payload length")
    );
    // UDP length that disagrees with the IP payload, a port other than 4791, a fragment.
    let mut f = emit(&ack);
    f[udp_len_at + 1] -= 4;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        Error::new(
            udp_len_at,
            "UDP header",
            "length",
            ErrorKind::BadLength {
                found: 24,
                allowed: "the IP payload length"
            }
        )
    );
    let mut f = emit(&ack);
    f[14 + 20 + 3] = 0xB8;
    assert_eq!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        bad_value(
            14 + 20 + 2,
            "UDP header",
            "destination port",
            4792,
            "4791 (RoCEv2)"
        )
    );
    let mut f = emit(&ack);
    f[14 + 6] |= 0x20; // MF
    assert!(matches!(
        roce::parse(&f, FcsMode::Absent).unwrap_err(),
        Error {
            offset: 20,
            context: "IPv4 header",
            field: "fragment offset",
            ..
        }
    ));
}

#[test]
fn a_wrong_icrc_or_checksum_is_reported_not_refused() {
    let mut f = emit(&RoceFrameRepr::cnp(Envelope::new(A, B, None, v4(), 1), 5));
    let n = f.len();
    f[n - 1] ^= 1;
    let d = roce::parse(&f, FcsMode::Absent).unwrap();
    assert!(!d.icrc_ok() && !d.is_canonical());
    f[n - 1] ^= 1;
    f[14 + 10] ^= 1; // IPv4 header checksum
    let d = roce::parse(&f, FcsMode::Absent).unwrap();
    assert!(d.icrc_ok(), "the ICRC does not cover the IPv4 checksum");
    assert!(!d.ip_checksum_ok && !d.is_canonical());
}

#[test]
fn a_vlan_tag_after_the_cn_tag_is_out_of_order() {
    let mut f = vec![0u8; 30];
    f[12..14].copy_from_slice(&0x22E9u16.to_be_bytes());
    f[14..16].copy_from_slice(&7u16.to_be_bytes());
    f[16..18].copy_from_slice(&0x8100u16.to_be_bytes());
    let e = CnEthernetRepr::parse_bytes(&f).unwrap_err();
    assert_eq!((e.offset, e.context, e.field), (16, "CN-TAG", "EtherType"));
    assert!(matches!(e.kind, ErrorKind::Order { .. }));
    // after a VLAN tag, the CN-TAG is where it belongs
    let mut f = vec![0u8; 30];
    f[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
    f[14..16].copy_from_slice(&(3u16 << 13 | 5).to_be_bytes());
    f[16..18].copy_from_slice(&0x22E9u16.to_be_bytes());
    f[18..20].copy_from_slice(&7u16.to_be_bytes());
    f[20..22].copy_from_slice(&0x0800u16.to_be_bytes());
    let (h, at) = CnEthernetRepr::parse_bytes(&f).unwrap();
    assert_eq!(
        (h.cn_tag, h.ethernet.ethertype, at),
        (Some(CnTag { flow_id: 7 }), EtherType::IPV4, 22)
    );
    assert_eq!(
        CnEthernetRepr::parse_bytes(&f[..20]).unwrap_err(),
        Error::truncated(18, "CN-TAG", "Flow ID and EtherType", 4, 2)
    );
}

#[test]
fn emit_refuses_reprs_that_would_not_parse_back() {
    let env = Envelope::new(A, B, Some(VlanTag::from_tci(EtherType::VLAN_C_TAG, 0)), v4(), 1);
    let ok = RoceFrameRepr::rc_send(env, 1, 2, true, true, false, 4);
    let mut buf = [0u8; 256];
    let bth = 18 + 20 + 8;
    let refuse = |f: &RoceFrameRepr| f.emit(FcsMode::Absent, &mut [0u8; 256]).unwrap_err();
    assert!(ok.emit(FcsMode::Absent, &mut buf).is_ok());
    let mut f = ok;
    f.bth.dest_qp = 1 << 24;
    assert_eq!(
        refuse(&f),
        bad_value(bth + 5, "BTH", "DestQP", 1 << 24, "0..=0xffffff")
    );
    let mut f = ok;
    f.bth.psn = u32::MAX;
    assert_eq!(
        refuse(&f),
        bad_value(bth + 9, "BTH", "PSN", u32::MAX.into(), "0..=0xffffff")
    );
    let mut f = ok;
    f.bth.pad_count = 4;
    assert_eq!(refuse(&f), bad_value(bth + 1, "BTH", "PadCnt", 4, "0..=3"));
    f.payload_len = 3;
    assert_eq!(
        refuse(&f),
        bad_value(bth + 1, "BTH", "PadCnt", 4, "at most the payload length")
    );
    let mut f = ok;
    f.ethernet.ethertype = EtherType::IPV6;
    assert_eq!(
        refuse(&f),
        bad_value(
            16,
            "Ethernet II header",
            "EtherType",
            0x86DD,
            "0x0800 for IPv4, 0x86dd for IPv6"
        )
    );
    let mut f = ok;
    f.bth.opcode = Opcode::RC_ACKNOWLEDGE; // without its AETH
    assert!(matches!(refuse(&f), Error { offset, field: "opcode", .. } if offset == bth));
    let mut f = ok;
    f.bth.opcode = Opcode(0x15);
    assert!(matches!(refuse(&f), Error { offset, field: "opcode", .. } if offset == bth));
    let mut f = ok;
    f.udp_checksum = UdpChecksum::Invalid(0);
    assert!(matches!(
        refuse(&f),
        Error {
            field: "checksum",
            ..
        }
    ));
    let mut f = ok;
    f.ip = IpRepr::V4(Ipv4Repr {
        dscp: 64,
        ..Ipv4Repr::udp([0; 4], [0; 4])
    });
    assert_eq!(refuse(&f), bad_value(19, "IPv4 header", "DSCP", 64, "0..=63"));
    assert!(matches!(
        ok.emit(FcsMode::Present, &mut buf[..60]).unwrap_err(),
        Error {
            kind: ErrorKind::Truncated {
                needed: 70,
                available: 60
            },
            ..
        }
    ));
    let mut c = CnmRepr {
        reserved_v: 0,
        qntz_fb: 64,
        cpid: [0; 8],
        q_offset: 0,
        q_delta: 0,
        encapsulated_priority: 0,
        encapsulated_priority_reserved: 0,
        encapsulated_dst: B,
        encapsulated: EncapsulatedMsdu::default(),
    };
    assert_eq!(
        c.emit(&mut buf).unwrap_err(),
        bad_value(1, "CNM PDU", "QntzFb", 64, "0..=63")
    );
    c.qntz_fb = 0;
    c.encapsulated_priority = 8;
    assert_eq!(
        c.emit(&mut buf).unwrap_err(),
        bad_value(14, "CNM PDU", "Encapsulated priority", 8, "0..=7")
    );
    assert!(EncapsulatedMsdu::new(&[0; 65]).is_err());
}
