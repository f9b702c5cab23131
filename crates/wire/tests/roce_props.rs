//! Round trips of the RoCEv2, IP, UDP and 802.1Qau codecs: repr → bytes → repr for any valid
//! repr, bytes → repr → bytes for any valid bytes, the zero-copy views agree with the reprs,
//! and no input makes a parser panic.

use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTag};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Options, Ipv4Repr, Ipv6Repr};
use lossless_wire::qcn::{
    self, CnEthernetRepr, CnTag, CnTaggedFrameRepr, Cnm, CnmFrameRepr, CnmRepr, EncapsulatedMsdu,
};
use lossless_wire::roce::ext::{AtomicEthRepr, DethRepr, RethRepr};
use lossless_wire::roce::{
    self, Bth, BthRepr, Envelope, ExtHeaders, Opcode, RoceFrameRepr, Syndrome, UdpChecksum,
};
use proptest::prelude::*;

fn mac() -> impl Strategy<Value = EthernetAddress> {
    any::<[u8; 6]>().prop_map(EthernetAddress)
}

fn vlan() -> impl Strategy<Value = Option<VlanTag>> {
    proptest::option::of(
        (0u8..8, any::<bool>(), 0u16..4096).prop_map(|(pcp, dei, vid)| VlanTag {
            tpid: EtherType::VLAN_C_TAG,
            pcp,
            dei,
            vid,
        }),
    )
}

fn ecn() -> impl Strategy<Value = Ecn> {
    (0u8..4).prop_map(Ecn::from_bits)
}

fn ip() -> impl Strategy<Value = IpRepr> {
    let v4 = (
        0u8..64,
        ecn(),
        any::<u16>(),
        any::<bool>(),
        any::<u8>(),
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        0usize..=10,
    )
        .prop_map(|(dscp, ecn, id, df, ttl, src, dst, words)| {
            let mut ip = Ipv4Repr::udp(src, dst);
            (ip.dscp, ip.ecn, ip.identification, ip.dont_fragment, ip.ttl) = (dscp, ecn, id, df, ttl);
            ip.options = Ipv4Options::new(&vec![1u8; 4 * words]).unwrap(); // NOP options
            IpRepr::V4(ip)
        });
    let v6 = (
        0u8..64,
        ecn(),
        0u32..1 << 20,
        any::<u8>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
    )
        .prop_map(|(dscp, ecn, flow_label, hop_limit, src, dst)| {
            let mut ip = Ipv6Repr::udp(src, dst);
            (ip.dscp, ip.ecn, ip.flow_label, ip.hop_limit) = (dscp, ecn, flow_label, hop_limit);
            IpRepr::V6(ip)
        });
    prop_oneof![v4, v6]
}

fn defined_opcodes() -> Vec<Opcode> {
    (0..=255u8).map(Opcode).filter(|o| o.layout().is_some()).collect()
}

/// Random values for every header the opcode defines.
fn ext(layout: roce::Layout) -> impl Strategy<Value = ExtHeaders> {
    (
        any::<[u64; 4]>(),
        any::<[u32; 6]>(),
        any::<u8>(),
        any::<[u8; 16]>(),
    )
        .prop_map(move |(q, d, r, cnp)| {
            let mut e = ExtHeaders::zeroed(layout);
            if e.rdeth.is_some() {
                e.rdeth = Some((r, d[0] & 0xFF_FFFF));
            }
            if e.deth.is_some() {
                e.deth = Some(DethRepr {
                    q_key: d[1],
                    reserved: r,
                    src_qp: d[2] & 0xFF_FFFF,
                });
            }
            if e.reth.is_some() {
                e.reth = Some(RethRepr {
                    va: q[0],
                    r_key: d[3],
                    dma_len: d[4],
                });
            }
            if e.atomic_eth.is_some() {
                e.atomic_eth = Some(AtomicEthRepr {
                    va: q[0],
                    r_key: d[3],
                    swap: q[1],
                    compare: q[2],
                });
            }
            if let Some(a) = e.aeth.as_mut() {
                a.syndrome = Syndrome(r);
                a.msn = d[5] & 0xFF_FFFF;
            }
            if e.atomic_ack_eth.is_some() {
                e.atomic_ack_eth = Some(q[3]);
            }
            if e.immdt.is_some() {
                e.immdt = Some(d[4]);
            }
            if e.ieth.is_some() {
                e.ieth = Some(d[5]);
            }
            if e.cnp.is_some() {
                e.cnp = Some(cnp);
            }
            e
        })
}

prop_compose! {
    fn bth(opcode: Opcode, payload_len: usize)(
        se in any::<bool>(), m in any::<bool>(), pad in 0u8..4, tver in 0u8..16, p_key in any::<u16>(),
        fecn in any::<bool>(), becn in any::<bool>(), resv6 in 0u8..64, dest_qp in 0u32..1 << 24,
        ack_req in any::<bool>(), resv7 in 0u8..128, psn in 0u32..1 << 24,
    ) -> BthRepr {
        BthRepr {
            opcode,
            solicited: se,
            migreq: m,
            pad_count: pad.min(payload_len.min(3) as u8),
            tver,
            p_key,
            fecn,
            becn,
            resv6,
            dest_qp,
            ack_req,
            resv7,
            psn,
        }
    }
}

fn roce_frame() -> impl Strategy<Value = (RoceFrameRepr, Vec<u8>, FcsMode)> {
    let opcodes = defined_opcodes();
    (proptest::sample::select(opcodes), 0usize..400).prop_flat_map(|(opcode, len)| {
        let layout = opcode.layout().unwrap();
        let payload_len = if layout.payload { len } else { 0 };
        (
            mac(),
            mac(),
            vlan(),
            ip(),
            any::<u16>(),
            bth(opcode, payload_len),
            ext(layout),
            proptest::collection::vec(any::<u8>(), payload_len),
            prop_oneof![Just(UdpChecksum::Zero), Just(UdpChecksum::Valid)],
            any::<bool>(),
        )
            .prop_map(
                move |(src, dst, vlan, ip, port, bth, ext, payload, udp_checksum, fcs)| {
                    let mut f =
                        RoceFrameRepr::new(Envelope::new(src, dst, vlan, ip, port), bth, payload.len())
                            .unwrap();
                    f.ext = ext;
                    f.udp_checksum = udp_checksum;
                    (f, payload, FcsMode::from_present(fcs))
                },
            )
    })
}

fn cnm() -> impl Strategy<Value = CnmRepr> {
    (
        0u8..64,
        0u8..64,
        any::<[u8; 8]>(),
        any::<i16>(),
        any::<i16>(),
        0u8..8,
        0u16..0x2000,
        mac(),
        proptest::collection::vec(any::<u8>(), 0..=64),
    )
        .prop_map(
            |(reserved_v, qntz_fb, cpid, q_offset, q_delta, prio, res, dst, msdu)| CnmRepr {
                reserved_v,
                qntz_fb,
                cpid,
                q_offset,
                q_delta,
                encapsulated_priority: prio,
                encapsulated_priority_reserved: res,
                encapsulated_dst: dst,
                encapsulated: EncapsulatedMsdu::new(&msdu).unwrap(),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_roce_frame_parses_back_to_itself_with_a_good_icrc((f, payload, fcs) in roce_frame()) {
        let mut buf = vec![0u8; f.buffer_len(fcs)];
        let n = f.emit_with_payload(&payload, fcs, &mut buf).unwrap();
        prop_assert_eq!(n, buf.len());
        let back = roce::parse(&buf, fcs).unwrap();
        prop_assert_eq!(back.repr, f);
        prop_assert_eq!(back.payload, &payload[..]);
        prop_assert!(back.icrc_ok());
        prop_assert!(back.is_canonical());
        prop_assert!(n >= fcs.min_frame_len());
        // The ICRC does not cover the variant fields: a switch marking CE or re-marking the
        // DSCP, a router decrementing the TTL / hop limit, a new flow label, FECN/BECN set on
        // the way, a UDP checksum added, all leave it valid.
        let mut marked = back.repr;
        marked.ip.set_ecn(Ecn::Ce);
        marked.ip.set_dscp(marked.ip.dscp() ^ 1);
        match &mut marked.ip {
            IpRepr::V4(v) => v.ttl = v.ttl.wrapping_sub(1),
            IpRepr::V6(v) => {
                v.hop_limit = v.hop_limit.wrapping_sub(1);
                v.flow_label ^= 1;
            }
        }
        marked.bth.fecn = !marked.bth.fecn;
        marked.bth.becn = !marked.bth.becn;
        marked.bth.resv6 ^= 1;
        marked.udp_checksum = match marked.udp_checksum {
            UdpChecksum::Zero => UdpChecksum::Valid,
            _ => UdpChecksum::Zero,
        };
        let mut again = vec![0u8; marked.buffer_len(fcs)];
        marked.emit_with_payload(&payload, fcs, &mut again).unwrap();
        let icrc_at = marked.packet_end() - 4;
        prop_assert_eq!(&again[icrc_at..icrc_at + 4], &buf[icrc_at..icrc_at + 4]);
    }

    #[test]
    fn any_cnm_frame_parses_back_to_itself(
        src in mac(), dst in mac(), vlan in vlan(), tag in proptest::option::of(any::<u16>()), c in cnm(), fcs in any::<bool>(),
    ) {
        let fcs = FcsMode::from_present(fcs);
        let f = CnmFrameRepr::new(src, dst, vlan, tag.map(|flow_id| CnTag { flow_id }), c);
        let mut buf = vec![0u8; f.buffer_len(fcs)];
        let n = f.emit(fcs, &mut buf).unwrap();
        prop_assert_eq!(n, buf.len());
        let back = qcn::parse_cnm_frame(&buf, fcs).unwrap();
        prop_assert_eq!(back.repr, f);
        prop_assert!(back.is_canonical());
    }

    #[test]
    fn any_cn_tagged_frame_parses_back_to_its_header_and_payload(
        src in mac(), dst in mac(), vlan in vlan(), flow_id in any::<u16>(), ty in 0x0600u16..,
        payload in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        prop_assume!(!EtherType(ty).is_vlan_tpid() && EtherType(ty) != qcn::ETHERTYPE_CN_TAG);
        let f = CnTaggedFrameRepr::new(src, dst, vlan, flow_id, EtherType(ty), payload.len());
        let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
        f.emit(&payload, FcsMode::Absent, &mut buf).unwrap();
        let (h, at) = CnEthernetRepr::parse_bytes(&buf).unwrap();
        prop_assert_eq!(h, f.header);
        prop_assert_eq!(&buf[at..at + payload.len()], &payload[..]);
    }

    #[test]
    fn any_bth_bytes_parse_and_re_emit_unchanged_and_the_view_agrees(b in any::<[u8; 12]>()) {
        let repr = BthRepr::parse_bytes(&b).unwrap();
        let v = Bth::new_checked(&b[..]).unwrap();
        prop_assert_eq!((v.opcode(), v.dest_qp(), v.psn(), v.fecn(), v.becn()), (repr.opcode, repr.dest_qp, repr.psn, repr.fecn, repr.becn));
        let mut out = [0u8; 12];
        repr.emit(&mut out).unwrap();
        prop_assert_eq!(out, b);
    }

    #[test]
    fn any_extension_header_bytes_re_emit_unchanged(op in proptest::sample::select(defined_opcodes()), b in proptest::collection::vec(any::<u8>(), 64)) {
        let layout = op.layout().unwrap();
        let e = ExtHeaders::parse(layout, &b).unwrap();
        let mut out = vec![0u8; e.buffer_len()];
        prop_assert_eq!(e.emit(&mut out).unwrap(), layout.ext_len());
        prop_assert_eq!(&out[..], &b[..layout.ext_len()]);
    }

    #[test]
    fn any_cnm_pdu_bytes_re_emit_unchanged_and_the_view_agrees(mut b in proptest::collection::vec(any::<u8>(), 24..100), n in 0u16..=64) {
        b[0] &= 0x0F; // version 0
        let n = n.min(b.len() as u16 - 24);
        b[22..24].copy_from_slice(&n.to_be_bytes());
        let (c, len) = CnmRepr::parse(&b).unwrap();
        prop_assert_eq!(len, 24 + usize::from(n));
        let v = Cnm::new_checked(&b[..]).unwrap();
        prop_assert_eq!((v.qntz_fb(), v.q_offset(), v.q_delta(), v.encapsulated()), (c.qntz_fb, c.q_offset, c.q_delta, c.encapsulated.as_slice()));
        let mut out = vec![0u8; c.buffer_len()];
        c.emit(&mut out).unwrap();
        prop_assert_eq!(&out[..], &b[..len]);
    }

    #[test]
    fn any_ipv6_header_bytes_re_emit_unchanged(mut b in any::<[u8; 40]>()) {
        b[0] = 0x60 | (b[0] & 0x0F);
        let (ip, info) = Ipv6Repr::parse(&b).unwrap();
        let mut out = [0u8; 40];
        ip.emit(info.payload_len, &mut out).unwrap();
        prop_assert_eq!(out, b);
    }

    #[test]
    fn any_ipv4_header_with_a_right_checksum_re_emits_unchanged(
        words in 5u8..16, body in proptest::collection::vec(any::<u8>(), 60), total in 60u16..,
    ) {
        let len = usize::from(words) * 4;
        let mut b = body[..len].to_vec();
        b[0] = 0x40 | words;
        b[2..4].copy_from_slice(&total.to_be_bytes());
        b[6] &= 0x7F; // the reserved flag bit is not kept
        b[10..12].copy_from_slice(&[0, 0]);
        let sum: u32 = b.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
        let sum = (sum & 0xFFFF) + (sum >> 16);
        let sum = !((sum & 0xFFFF) + (sum >> 16)) as u16;
        b[10..12].copy_from_slice(&sum.to_be_bytes());
        let (ip, info) = Ipv4Repr::parse(&b).unwrap();
        prop_assert!(info.checksum_ok);
        let mut out = vec![0u8; len];
        ip.emit(info.payload_len, &mut out).unwrap();
        prop_assert_eq!(out, b);
    }

    #[test]
    fn no_input_makes_a_parser_panic(b in proptest::collection::vec(any::<u8>(), 0..200), fcs in any::<bool>()) {
        let fcs = FcsMode::from_present(fcs);
        let _ = roce::parse(&b, fcs);
        let _ = qcn::parse_cnm_frame(&b, fcs);
        let _ = CnEthernetRepr::parse_bytes(&b);
        let _ = CnmRepr::parse(&b);
        let _ = Ipv4Repr::parse(&b);
        let _ = Ipv6Repr::parse(&b);
        let _ = roce::icrc::compute(&b);
    }
}
