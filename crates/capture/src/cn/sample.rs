//! A sample of congestion-notification frames built by the wire emitters: RoCEv2 data, ACK,
//! NAK, RNR NAK and CNP over IPv4 and IPv6, tagged and untagged, ECN-capable and CE-marked,
//! RDMA WRITE (RETH), UD (DETH, immediate), an RDMA READ response, 802.1Qau CNMs and a
//! CN-tagged data frame. Tests, fuzz seeds and `examples/captures/roce-cn.pcap` use it.

use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTag};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
use lossless_wire::qcn::{CnTag, CnTaggedFrameRepr, CnmFrameRepr, CnmRepr, EncapsulatedMsdu};
use lossless_wire::roce::{
    AethRepr, BthRepr, Envelope, NakCode, Opcode, RoceFrameRepr, Syndrome, UdpChecksum,
};

const A: EthernetAddress = EthernetAddress([0x02, 0x01, 0, 0, 0, 1]);
const B: EthernetAddress = EthernetAddress([0x02, 0x01, 0, 0, 0, 2]);
const SWITCH: EthernetAddress = EthernetAddress([0x02, 0x00, 0, 0, 0, 9]);

fn v4(src: u8, dst: u8, dscp: u8, ecn: Ecn) -> IpRepr {
    let mut ip = Ipv4Repr::udp([10, 0, 0, src], [10, 0, 0, dst]);
    ip.dscp = dscp;
    ip.ecn = ecn;
    IpRepr::V4(ip)
}

fn v6(src: u8, dst: u8, dscp: u8, ecn: Ecn, flow_label: u32) -> IpRepr {
    let addr = |n: u8| {
        let mut a = [0u8; 16];
        a[..2].copy_from_slice(&[0xfd, 0x00]);
        a[15] = n;
        a
    };
    let mut ip = Ipv6Repr::udp(addr(src), addr(dst));
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.flow_label = flow_label;
    IpRepr::V6(ip)
}

fn prio(pcp: u8) -> Option<VlanTag> {
    Some(VlanTag::from_tci(
        EtherType::VLAN_C_TAG,
        u16::from(pcp) << 13 | 100,
    ))
}

fn roce(repr: &RoceFrameRepr, payload: &[u8], fcs: FcsMode) -> Vec<u8> {
    let mut buf = vec![0u8; repr.buffer_len(fcs)];
    let n = repr
        .emit_with_payload(&payload[..payload.len().min(repr.payload_len)], fcs, &mut buf)
        .expect("sample frames are valid");
    buf.truncate(n);
    buf
}

/// The sample frames, in order (see the module doc); FCS on the last RoCEv2 frame only.
pub fn cn_sample_frames() -> Vec<Vec<u8>> {
    let data: Vec<u8> = (0..=255u8).cycle().take(1024).collect();
    let mut out = Vec::new();
    let ab = |ip, vlan| Envelope::new(A, B, vlan, ip, 0xC001);
    let ba = |ip, vlan| Envelope::new(B, A, vlan, ip, 0xC002);
    // RC SEND Only, ECT(0), AckReq; then SEND First CE-marked on priority 3.
    let f = RoceFrameRepr::rc_send(
        ab(v4(1, 2, 26, Ecn::Ect0), None),
        0x12,
        100,
        true,
        true,
        true,
        1024,
    );
    out.push(roce(&f, &data, FcsMode::Absent));
    let f = RoceFrameRepr::rc_send(
        ab(v4(1, 2, 26, Ecn::Ce), prio(3)),
        0x12,
        101,
        true,
        false,
        false,
        1024,
    );
    out.push(roce(&f, &data, FcsMode::Absent));
    // ACK, NAK (PSN sequence error), RNR NAK.
    let ack = AethRepr {
        syndrome: Syndrome::ack(31),
        msn: 5,
    };
    out.push(roce(
        &RoceFrameRepr::rc_ack(ba(v4(2, 1, 26, Ecn::Ect0), None), 0x34, 100, ack),
        &[],
        FcsMode::Absent,
    ));
    let nak = AethRepr {
        syndrome: Syndrome::nak(NakCode::PsnSequenceError),
        msn: 5,
    };
    out.push(roce(
        &RoceFrameRepr::rc_ack(ba(v4(2, 1, 26, Ecn::Ect0), prio(3)), 0x34, 101, nak),
        &[],
        FcsMode::Absent,
    ));
    let rnr = AethRepr {
        syndrome: Syndrome::rnr_nak(14),
        msn: 6,
    };
    out.push(roce(
        &RoceFrameRepr::rc_ack(ba(v6(2, 1, 26, Ecn::Ect0, 7), None), 0x34, 102, rnr),
        &[],
        FcsMode::Absent,
    ));
    // CNPs: IPv4 on priority 6 with DSCP 48, IPv6 untagged.
    out.push(roce(
        &RoceFrameRepr::cnp(ba(v4(2, 1, 48, Ecn::Ect0), prio(6)), 0x12),
        &[],
        FcsMode::Absent,
    ));
    out.push(roce(
        &RoceFrameRepr::cnp(ba(v6(2, 1, 48, Ecn::NotEct, 0), None), 0x12),
        &[],
        FcsMode::Absent,
    ));
    // RC SEND Middle over IPv6, CE-marked, with a flow label.
    let f = RoceFrameRepr::rc_send(
        ab(v6(1, 2, 26, Ecn::Ce, 0xABCDE), None),
        0x12,
        0xFFFFFF,
        false,
        false,
        false,
        512,
    );
    out.push(roce(&f, &data, FcsMode::Absent));
    // RDMA WRITE First with its RETH, tagged IPv6.
    let mut f = RoceFrameRepr::new(
        ab(v6(1, 2, 10, Ecn::Ect1, 1), prio(2)),
        BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 0x77, 9),
        256,
    )
    .expect("defined opcode");
    f.ext.reth = Some(lossless_wire::roce::ext::RethRepr {
        va: 0x7f00_1234_5678,
        r_key: 0xabcd,
        dma_len: 4096,
    });
    out.push(roce(&f, &data, FcsMode::Absent));
    // UD SEND Only with Immediate: DETH and immediate data.
    let mut f = RoceFrameRepr::new(
        ab(v4(1, 2, 0, Ecn::NotEct), None),
        BthRepr::new(Opcode::UD_SEND_ONLY_WITH_IMMEDIATE, 0x99, 3),
        64,
    )
    .expect("defined opcode");
    f.ext.deth = Some(lossless_wire::roce::ext::DethRepr {
        q_key: 0x1111_2222,
        reserved: 0,
        src_qp: 0x55,
    });
    f.ext.immdt = Some(0xdead_beef);
    out.push(roce(&f, &data, FcsMode::Absent));
    // RDMA READ response Only (AETH and data).
    let mut f = RoceFrameRepr::new(
        ba(v4(2, 1, 26, Ecn::Ect0), None),
        BthRepr::new(Opcode::RC_RDMA_READ_RESPONSE_ONLY, 0x34, 50),
        128,
    )
    .expect("defined opcode");
    f.ext.aeth = Some(AethRepr {
        syndrome: Syndrome::ack(31),
        msn: 8,
    });
    out.push(roce(&f, &data, FcsMode::Absent));
    // RC SEND Last with 2 pad bytes and a computed UDP checksum, FCS kept.
    let mut f = RoceFrameRepr::rc_send(
        ab(v4(1, 2, 26, Ecn::Ect0), prio(3)),
        0x12,
        102,
        false,
        true,
        true,
        100,
    );
    f.bth.pad_count = 2;
    f.udp_checksum = UdpChecksum::Valid;
    out.push(roce(&f, &data[..98], FcsMode::Present));
    out.extend(qau_frames(&out[1]));
    out
}

/// 802.1Qau: a CNM with the sampled frame's VLAN tag and CN-TAG and 64 bytes of `sampled`, a
/// CNM without either (padded to 60 bytes), and a CN-tagged data frame.
fn qau_frames(sampled: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let cnm = CnmRepr {
        reserved_v: 0,
        qntz_fb: 42,
        cpid: [0x02, 0x00, 0, 0, 0, 9, 0, 3],
        q_offset: -1200,
        q_delta: 300,
        encapsulated_priority: 3,
        encapsulated_priority_reserved: 0,
        encapsulated_dst: B,
        encapsulated: EncapsulatedMsdu::truncating(&sampled[18..]),
    };
    let f = CnmFrameRepr::new(SWITCH, A, prio(3), Some(CnTag { flow_id: 7 }), cnm);
    let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
    let n = f.emit(FcsMode::Absent, &mut buf).expect("valid CNM");
    out.push(buf[..n].to_vec());
    let cnm = CnmRepr {
        qntz_fb: 1,
        q_offset: 10,
        q_delta: -5,
        encapsulated_priority: 0,
        encapsulated: EncapsulatedMsdu::default(),
        ..cnm
    };
    let f = CnmFrameRepr::new(SWITCH, A, None, None, cnm);
    let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
    let n = f.emit(FcsMode::Absent, &mut buf).expect("valid CNM");
    out.push(buf[..n].to_vec());
    let f = CnTaggedFrameRepr::new(A, B, prio(3), 7, EtherType(0x88B5), 46);
    let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
    let n = f.emit(b"flow 7", FcsMode::Absent, &mut buf).expect("valid frame");
    out.push(buf[..n].to_vec());
    out
}
