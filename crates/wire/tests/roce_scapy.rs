//! scapy as an independent peer for RoCEv2 and 802.1Qau: `scapy.contrib.roce` builds RoCEv2
//! frames (BTH, AETH, CNP padding, its own ICRC) that we decode field by field, ICRC included,
//! and it decodes the frames we emit and recomputes the same ICRC. tshark has no CN-TAG/CNM
//! dissector: the CNM and CN-TAG are declared in scapy from the byte-layout table of
//! `docs/congestion-notification.md` §1.5 and checked both ways. Skips loudly (fails with
//! LOSSLESS_REQUIRE_PEERS=1) when python3 or scapy is missing.

use lossless_testkit::{python, require, require_python_module};
use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTag, VlanTags};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
use lossless_wire::qcn::{self, CnTag, CnTaggedFrameRepr, CnmFrameRepr, CnmRepr, EncapsulatedMsdu};
use lossless_wire::roce::{self, AethRepr, Envelope, NakCode, RoceFrameRepr, Syndrome, UdpChecksum};
use serde_json::Value;

fn have_scapy(test: &str) -> bool {
    require("python3", test).is_some() && require_python_module("scapy.contrib.roce", test)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// scapy builds RoCEv2 frames (ICRC computed by scapy) and prints `hex json-of-fields`.
const BUILD_ROCE: &str = r#"
import json
from scapy.layers.l2 import Ether, Dot1Q
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Raw
from scapy.contrib.roce import BTH, AETH, CNPPadding, cnp
A, B = "02:01:00:00:00:01", "02:01:00:00:00:02"
frames = [
    Ether(dst=B, src=A)/IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6a, ttl=64, id=7, flags="DF")/UDP(sport=49152, dport=4791, chksum=0)
        /BTH(opcode=0x04, solicited=1, padcount=2, pkey=0xffff, dqpn=0x12, ackreq=1, psn=100)/Raw(b"0123456789ab"),
    Ether(dst=B, src=A)/Dot1Q(prio=3, vlan=100)/IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6b, ttl=5)/UDP(sport=1, dport=4791)
        /BTH(opcode=0x00, migreq=1, pkey=0x8001, fecn=1, dqpn=0xabcdef, psn=0xffffff)/Raw(b"x" * 256),
    Ether(dst=A, src=B)/IP(src="10.0.0.2", dst="10.0.0.1", tos=0x6a)/UDP(sport=2, dport=4791, chksum=0)
        /BTH(opcode=0x11, dqpn=0x34, psn=100)/AETH(syndrome=0x1f, msn=5),
    Ether(dst=A, src=B)/Dot1Q(prio=3, vlan=100)/IP(src="10.0.0.2", dst="10.0.0.1")/UDP(sport=2, dport=4791, chksum=0)
        /BTH(opcode=0x11, dqpn=0x34, psn=101)/AETH(syndrome=0x60, msn=0xabcdef),
    Ether(dst=A, src=B)/IPv6(src="fd00::2", dst="fd00::1", tc=0x6a, fl=0xabcde, hlim=7)/UDP(sport=3, dport=4791, chksum=0)
        /BTH(opcode=0x11, dqpn=0x34, psn=102)/AETH(syndrome=0x2e, msn=6),
    Ether(dst=A, src=B)/Dot1Q(prio=6, vlan=0)/IP(src="10.0.0.2", dst="10.0.0.1", tos=0xc2, ttl=255, id=0x98c6, flags="DF")/UDP(sport=0xf000, dport=4791, chksum=0)
        /cnp(dqpn=0xd2),
    Ether(dst=A, src=B)/IPv6(src="fd00::2", dst="fd00::1", tc=0xc0)/UDP(sport=4, dport=4791, chksum=0)/cnp(dqpn=0x1),
    Ether(dst=B, src=A)/IPv6(src="fd00::1", dst="fd00::2", tc=0x6b, fl=1)/UDP(sport=5, dport=4791)
        /BTH(opcode=0x64, dqpn=0x99, psn=3)/Raw(b"\x11\x11\x22\x22\x00\x00\x00\x55" + b"d" * 40),
]
for f in frames:
    b = bytes(f)
    p = Ether(b)
    t = p[BTH]
    out = dict(opcode=t.opcode, se=t.solicited, m=t.migreq, padcnt=t.padcount, tver=t.version, pkey=t.pkey,
               fecn=t.fecn, becn=t.becn, resv6=t.resv6, dqpn=t.dqpn, ackreq=t.ackreq, resv7=t.resv7, psn=t.psn,
               icrc=t.icrc, udp_chksum=p[UDP].chksum)
    if AETH in p:
        out.update(syndrome=p[AETH].syndrome, msn=p[AETH].msn)
    if IP in p:
        out.update(tos=p[IP].tos, ttl=p[IP].ttl)
    else:
        out.update(tos=p[IPv6].tc, ttl=p[IPv6].hlim, fl=p[IPv6].fl)
    print(b.hex(), json.dumps(out))
"#;

#[test]
fn we_decode_roce_frames_scapy_builds_field_by_field_with_their_icrc() {
    if !have_scapy("we_decode_roce_frames_scapy_builds_field_by_field_with_their_icrc") {
        return;
    }
    let out = python(BUILD_ROCE);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "scapy built eight frames:\n{out}");
    for (i, line) in lines.iter().enumerate() {
        let (h, json) = line.split_once(' ').unwrap();
        let frame = unhex(h);
        let want: Value = serde_json::from_str(json).unwrap();
        let f = roce::parse(&frame, FcsMode::Absent).unwrap_or_else(|e| panic!("frame {i}: {e}"));
        let b = f.repr.bth;
        let got = [
            u64::from(b.opcode.0),
            b.solicited.into(),
            b.migreq.into(),
            b.pad_count.into(),
            b.tver.into(),
            b.p_key.into(),
            b.fecn.into(),
            b.becn.into(),
            b.resv6.into(),
            b.dest_qp.into(),
            b.ack_req.into(),
            b.resv7.into(),
            b.psn.into(),
        ];
        let keys = [
            "opcode", "se", "m", "padcnt", "tver", "pkey", "fecn", "becn", "resv6", "dqpn", "ackreq",
            "resv7", "psn",
        ];
        for (k, g) in keys.iter().zip(got) {
            assert_eq!(g, u(&want[k]), "frame {i}: {k}");
        }
        // scapy's icrc field reads the four wire bytes big-endian; the CRC value is little-endian.
        assert_eq!(
            f.icrc.swap_bytes(),
            u(&want["icrc"]) as u32,
            "frame {i}: ICRC as found"
        );
        assert!(f.icrc_ok(), "frame {i}: scapy's ICRC is the one we compute");
        let tos = (f.repr.ip.dscp() << 2 | f.repr.ip.ecn().bits()) as u64;
        assert_eq!(tos, u(&want["tos"]), "frame {i}: DSCP/ECN");
        match f.repr.ip {
            IpRepr::V4(ip) => assert_eq!(u64::from(ip.ttl), u(&want["ttl"])),
            IpRepr::V6(ip) => {
                assert_eq!(u64::from(ip.hop_limit), u(&want["ttl"]));
                assert_eq!(u64::from(ip.flow_label), u(&want["fl"]));
            }
        }
        let udp = u(&want["udp_chksum"]);
        let expect_udp = if udp == 0 {
            UdpChecksum::Zero
        } else {
            UdpChecksum::Valid
        };
        assert_eq!(
            f.repr.udp_checksum, expect_udp,
            "frame {i}: scapy's UDP checksum verifies"
        );
        if let Some(s) = want.get("syndrome") {
            let a = f.repr.ext.aeth.expect("AETH");
            assert_eq!(
                (u64::from(a.syndrome.0), u64::from(a.msn)),
                (u(s), u(&want["msn"])),
                "frame {i}"
            );
        }
        // Re-emitted from the repr: scapy's bytes, then the zero padding it leaves to the NIC.
        let mut again = vec![0u8; f.repr.buffer_len(FcsMode::Absent)];
        let n = f
            .repr
            .emit_with_payload(f.payload, FcsMode::Absent, &mut again)
            .unwrap();
        assert_eq!(
            &again[..frame.len()],
            &frame[..],
            "frame {i}: emit(parse(scapy bytes))"
        );
        assert!(again[frame.len()..n].iter().all(|&b| b == 0));
    }
    let nak_bytes = unhex(lines[3].split_once(' ').unwrap().0);
    let nak = roce::parse(&nak_bytes, FcsMode::Absent).unwrap();
    assert_eq!(
        nak.repr.ext.aeth.unwrap().syndrome,
        Syndrome::nak(NakCode::PsnSequenceError)
    );
    let ud_bytes = unhex(lines[7].split_once(' ').unwrap().0);
    let ud = roce::parse(&ud_bytes, FcsMode::Absent).unwrap();
    let deth = ud.repr.ext.deth.expect("UD SEND Only carries a DETH");
    assert_eq!(
        (deth.q_key, deth.src_qp, ud.payload.len()),
        (0x1111_2222, 0x55, 40)
    );
}

fn our_roce_frames() -> Vec<Vec<u8>> {
    let a = EthernetAddress([2, 1, 0, 0, 0, 1]);
    let b = EthernetAddress([2, 1, 0, 0, 0, 2]);
    let tag = |pcp: u8| Some(VlanTag::from_tci(EtherType::VLAN_C_TAG, u16::from(pcp) << 13 | 7));
    let v4 = |dscp, ecn| {
        let mut ip = Ipv4Repr::udp([10, 0, 0, 1], [10, 0, 0, 2]);
        (ip.dscp, ip.ecn, ip.ttl, ip.identification) = (dscp, ecn, 33, 0x4242);
        IpRepr::V4(ip)
    };
    let v6 = |dscp, ecn| {
        let mut ip = Ipv6Repr::udp([0xfd; 16], [0xfe; 16]);
        (ip.dscp, ip.ecn, ip.flow_label, ip.hop_limit) = (dscp, ecn, 0x12345, 9);
        IpRepr::V6(ip)
    };
    let mut reprs = [
        RoceFrameRepr::rc_send(
            Envelope::new(a, b, None, v4(26, Ecn::Ce), 100),
            0x12,
            7,
            true,
            true,
            true,
            64,
        ),
        RoceFrameRepr::rc_send(
            Envelope::new(a, b, tag(3), v6(26, Ecn::Ect0), 101),
            0xffffff,
            0,
            false,
            true,
            false,
            1000,
        ),
        RoceFrameRepr::rc_ack(
            Envelope::new(b, a, None, v4(26, Ecn::Ect0), 102),
            0x34,
            99,
            AethRepr {
                syndrome: Syndrome::ack(31),
                msn: 1,
            },
        ),
        RoceFrameRepr::rc_ack(
            Envelope::new(b, a, tag(3), v6(26, Ecn::NotEct), 103),
            0x34,
            98,
            AethRepr {
                syndrome: Syndrome::nak(NakCode::PsnSequenceError),
                msn: 0xfffffe,
            },
        ),
        RoceFrameRepr::cnp(Envelope::new(b, a, tag(6), v4(48, Ecn::Ect0), 104), 0xd2),
        RoceFrameRepr::cnp(Envelope::new(b, a, None, v6(48, Ecn::NotEct), 105), 0x1),
    ];
    reprs[1].bth.pad_count = 3;
    reprs[1].bth.fecn = true;
    reprs[0].udp_checksum = UdpChecksum::Valid;
    reprs
        .iter()
        .map(|r| {
            let mut buf = vec![0u8; r.buffer_len(FcsMode::Absent)];
            let payload: Vec<u8> = (0..r.payload_len).map(|i| i as u8).collect();
            let n = r.emit_with_payload(&payload, FcsMode::Absent, &mut buf).unwrap();
            buf.truncate(n);
            buf
        })
        .collect()
}

/// scapy dissects our frames, prints the BTH/AETH fields, the ICRC found and the ICRC it
/// computes itself.
const DECODE_ROCE: &str = r#"
import json
from scapy.layers.l2 import Ether
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.contrib.roce import BTH, AETH
for h in FRAMES:
    p = Ether(bytes.fromhex(h))
    t = p[BTH]
    out = dict(opcode=t.opcode, se=t.solicited, m=t.migreq, padcnt=t.padcount, pkey=t.pkey, fecn=t.fecn, becn=t.becn,
               dqpn=t.dqpn, ackreq=t.ackreq, psn=t.psn, icrc=t.icrc, dport=p[UDP].dport)
    if AETH in p:
        out.update(syndrome=p[AETH].syndrome, msn=p[AETH].msn)
    t.icrc = None
    out["icrc_scapy"] = Ether(bytes(p))[BTH].icrc
    print(json.dumps(out))
"#;

#[test]
fn scapy_decodes_our_roce_frames_and_computes_the_same_icrc() {
    if !have_scapy("scapy_decodes_our_roce_frames_and_computes_the_same_icrc") {
        return;
    }
    let frames = our_roce_frames();
    let list: Vec<String> = frames.iter().map(|f| format!("\"{}\"", hex(f))).collect();
    let out = python(&format!("FRAMES = [{}]\n{DECODE_ROCE}", list.join(", ")));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), frames.len(), "{out}");
    for (i, (frame, line)) in frames.iter().zip(&lines).enumerate() {
        let theirs: Value = serde_json::from_str(line).unwrap();
        let f = roce::parse(frame, FcsMode::Absent).unwrap();
        let b = f.repr.bth;
        let ours = [
            ("opcode", u64::from(b.opcode.0)),
            ("se", b.solicited.into()),
            ("m", b.migreq.into()),
            ("padcnt", b.pad_count.into()),
            ("pkey", b.p_key.into()),
            ("fecn", b.fecn.into()),
            ("becn", b.becn.into()),
            ("dqpn", b.dest_qp.into()),
            ("ackreq", b.ack_req.into()),
            ("psn", b.psn.into()),
            ("dport", 4791),
        ];
        for (k, v) in ours {
            assert_eq!(u(&theirs[k]), v, "frame {i}: {k}");
        }
        if let Some(a) = f.repr.ext.aeth {
            assert_eq!(u(&theirs["syndrome"]), u64::from(a.syndrome.0), "frame {i}");
            assert_eq!(u(&theirs["msn"]), u64::from(a.msn), "frame {i}");
        }
        assert_eq!(
            u(&theirs["icrc"]) as u32,
            f.icrc.swap_bytes(),
            "frame {i}: ICRC found"
        );
        assert_eq!(
            u(&theirs["icrc_scapy"]) as u32,
            f.icrc.swap_bytes(),
            "frame {i}: scapy computes the ICRC we wrote"
        );
    }
}

/// The CN-TAG and CNM declared in scapy from the byte-layout table, bound to their EtherTypes.
const QCN_LAYERS: &str = r#"
import json
from scapy.packet import Packet, bind_layers
from scapy.fields import BitField, ShortField, XShortField, XLongField, SignedShortField, MACField, FieldLenField, StrLenField
from scapy.layers.l2 import Ether, Dot1Q
class CNTag(Packet):
    name = "CN-TAG"
    fields_desc = [ShortField("flow_id", 0), XShortField("type", 0)]
class CNM(Packet):
    name = "CNM"
    fields_desc = [BitField("version", 0, 4), BitField("reserved_v", 0, 6), BitField("qntz_fb", 0, 6),
                   XLongField("cpid", 0), SignedShortField("q_offset", 0), SignedShortField("q_delta", 0),
                   BitField("encap_priority", 0, 3), BitField("encap_reserved", 0, 13), MACField("encap_dst", "00:00:00:00:00:00"),
                   FieldLenField("encap_len", None, length_of="encap_msdu"),
                   StrLenField("encap_msdu", b"", length_from=lambda p: p.encap_len)]
for lower in (Ether, Dot1Q, CNTag):
    bind_layers(lower, CNTag, type=0x22E9)
    bind_layers(lower, CNM, type=0x22E7)
"#;

const BUILD_QCN: &str = r#"
from scapy.packet import Raw
A, CP = "02:01:00:00:00:01", "02:00:00:00:00:09"
frames = [
    Ether(dst=A, src=CP, type=0x22E7)/CNM(qntz_fb=63, cpid=0x0200000000090003, q_offset=-32768, q_delta=32767,
        encap_priority=7, encap_dst="02:01:00:00:00:02", encap_msdu=bytes(range(64))),
    Ether(dst=A, src=CP)/Dot1Q(prio=3, vlan=100, type=0x22E9)/CNTag(flow_id=0xbeef, type=0x22E7)/CNM(qntz_fb=1, cpid=1,
        q_offset=5, q_delta=-5, encap_priority=3, encap_dst="02:01:00:00:00:02", encap_msdu=b""),
    Ether(dst=A, src=CP, type=0x22E9)/CNTag(flow_id=7, type=0x0800)/Raw(b"payload bytes"),
]
for f in frames:
    print(bytes(f).hex())
"#;

#[test]
fn we_decode_cnm_and_cn_tagged_frames_scapy_builds_from_the_byte_layout() {
    if !have_scapy("we_decode_cnm_and_cn_tagged_frames_scapy_builds_from_the_byte_layout") {
        return;
    }
    let out = python(&format!("{QCN_LAYERS}{BUILD_QCN}"));
    let frames: Vec<Vec<u8>> = out.lines().map(unhex).collect();
    assert_eq!(frames.len(), 3, "{out}");
    let f = qcn::parse_cnm_frame(&frames[0], FcsMode::Absent).unwrap();
    let c = f.repr.cnm;
    assert_eq!(f.repr.header.cn_tag, None);
    assert_eq!(
        (c.qntz_fb, c.cpid, c.q_offset, c.q_delta, c.encapsulated_priority),
        (63, [2, 0, 0, 0, 0, 9, 0, 3], -32768, 32767, 7)
    );
    assert_eq!(c.encapsulated_dst, EthernetAddress([2, 1, 0, 0, 0, 2]));
    assert_eq!(c.encapsulated.as_slice(), &(0..64).collect::<Vec<u8>>()[..]);
    let f = qcn::parse_cnm_frame(&frames[1], FcsMode::Absent).unwrap();
    assert_eq!(f.repr.header.cn_tag, Some(CnTag { flow_id: 0xbeef }));
    let VlanTags::Single(t) = f.repr.header.ethernet.tags else {
        panic!("one VLAN tag")
    };
    assert_eq!((t.pcp, t.vid), (3, 100));
    let c = f.repr.cnm;
    assert_eq!(
        (c.qntz_fb, c.cpid, c.q_offset, c.q_delta, c.encapsulated_priority),
        (1, [0, 0, 0, 0, 0, 0, 0, 1], 5, -5, 3)
    );
    assert!(c.encapsulated.as_slice().is_empty());
    // scapy leaves short frames unpadded: our re-emit is its bytes and zero padding.
    for frame in &frames[..2] {
        let f = qcn::parse_cnm_frame(frame, FcsMode::Absent).unwrap();
        let mut again = vec![0u8; f.repr.buffer_len(FcsMode::Absent)];
        f.repr.emit(FcsMode::Absent, &mut again).unwrap();
        assert_eq!(&again[..frame.len()], &frame[..]);
        assert!(again[frame.len()..].iter().all(|&b| b == 0));
    }
    let (h, at) = qcn::CnEthernetRepr::parse_bytes(&frames[2]).unwrap();
    assert_eq!(
        (h.cn_tag, h.ethernet.ethertype, &frames[2][at..]),
        (Some(CnTag { flow_id: 7 }), EtherType::IPV4, &b"payload bytes"[..])
    );
}

const DECODE_QCN: &str = r#"
for h in FRAMES:
    p = Ether(bytes.fromhex(h))
    out = dict(type=p.type)
    if Dot1Q in p:
        out.update(prio=p[Dot1Q].prio, vlan=p[Dot1Q].vlan)
    if CNTag in p:
        out.update(flow_id=p[CNTag].flow_id, inner=p[CNTag].type)
    if CNM in p:
        c = p[CNM]
        out.update(version=c.version, reserved_v=c.reserved_v, qntz_fb=c.qntz_fb, cpid=c.cpid, q_offset=c.q_offset,
                   q_delta=c.q_delta, encap_priority=c.encap_priority, encap_reserved=c.encap_reserved,
                   encap_dst=c.encap_dst, encap_len=c.encap_len, encap_msdu=c.encap_msdu.hex())
    print(json.dumps(out))
"#;

#[test]
fn scapy_reads_our_cnm_and_cn_tagged_frames_by_the_byte_layout() {
    if !have_scapy("scapy_reads_our_cnm_and_cn_tagged_frames_by_the_byte_layout") {
        return;
    }
    let a = EthernetAddress([2, 1, 0, 0, 0, 1]);
    let cp = EthernetAddress([2, 0, 0, 0, 0, 9]);
    let cnm = CnmRepr {
        reserved_v: 0,
        qntz_fb: 42,
        cpid: [0x02, 0, 0, 0, 0, 9, 0x80, 3],
        q_offset: -1200,
        q_delta: 300,
        encapsulated_priority: 5,
        encapsulated_priority_reserved: 0,
        encapsulated_dst: EthernetAddress([2, 1, 0, 0, 0, 2]),
        encapsulated: EncapsulatedMsdu::new(&[0xAB; 37]).unwrap(),
    };
    let tag = Some(VlanTag::from_tci(EtherType::VLAN_C_TAG, 5 << 13 | 42));
    let reprs = [
        CnmFrameRepr::new(cp, a, tag, Some(CnTag { flow_id: 0x1234 }), cnm),
        CnmFrameRepr::new(
            cp,
            a,
            None,
            None,
            CnmRepr {
                encapsulated: EncapsulatedMsdu::default(),
                ..cnm
            },
        ),
    ];
    let mut frames: Vec<Vec<u8>> = reprs
        .iter()
        .map(|r| {
            let mut buf = vec![0u8; r.buffer_len(FcsMode::Present)];
            let n = r.emit(FcsMode::Present, &mut buf).unwrap();
            buf[..n - 4].to_vec()
        })
        .collect();
    let data = CnTaggedFrameRepr::new(a, cp, tag, 0x0102, EtherType(0x88B5), 100);
    let mut buf = vec![0u8; data.buffer_len(FcsMode::Absent)];
    data.emit(b"hello", FcsMode::Absent, &mut buf).unwrap();
    frames.push(buf);
    let list: Vec<String> = frames.iter().map(|f| format!("\"{}\"", hex(f))).collect();
    let out = python(&format!(
        "{QCN_LAYERS}FRAMES = [{}]\n{DECODE_QCN}",
        list.join(", ")
    ));
    let got: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got.len(), 3, "{out}");
    for (i, g) in got[..2].iter().enumerate() {
        let c = reprs[i].cnm;
        assert_eq!(u(&g["version"]), 0);
        assert_eq!(u(&g["reserved_v"]), 0);
        assert_eq!(u(&g["qntz_fb"]), 42);
        assert_eq!(u(&g["cpid"]), u64::from_be_bytes(c.cpid));
        assert_eq!(g["q_offset"].as_i64(), Some(-1200));
        assert_eq!(g["q_delta"].as_i64(), Some(300));
        assert_eq!(u(&g["encap_priority"]), 5);
        assert_eq!(u(&g["encap_reserved"]), 0);
        assert_eq!(g["encap_dst"], "02:01:00:00:00:02");
        assert_eq!(u(&g["encap_len"]), c.encapsulated.as_slice().len() as u64);
        assert_eq!(g["encap_msdu"], hex(c.encapsulated.as_slice()));
    }
    assert_eq!(
        (
            u(&got[0]["prio"]),
            u(&got[0]["vlan"]),
            u(&got[0]["flow_id"]),
            u(&got[0]["inner"])
        ),
        (5, 42, 0x1234, 0x22E7)
    );
    assert_eq!(u(&got[1]["type"]), 0x22E7);
    assert_eq!((u(&got[2]["flow_id"]), u(&got[2]["inner"])), (0x0102, 0x88B5));
    // The CNM's cnmQOffset, QntzFb … sit where the table puts them (offsets from the PDU).
    let pdu = &frames[1][14..];
    assert_eq!(pdu[0] >> 4, 0);
    assert_eq!(pdu[1] & 0x3F, 42);
    assert_eq!(i16::from_be_bytes([pdu[10], pdu[11]]), -1200);
    assert_eq!(&pdu[16..22], &[2, 1, 0, 0, 0, 2]);
    assert_eq!(u16::from_be_bytes([pdu[22], pdu[23]]), 0);
}
