//! Emitting and parsing RoCEv2, CNM and CN-tagged frames never touches the heap (the
//! simulator's pcap writer emits one per captured frame).

use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};
use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTag};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
use lossless_wire::qcn::{self, CnTag, CnTaggedFrameRepr, CnmFrameRepr, CnmRepr, EncapsulatedMsdu};
use lossless_wire::roce::{self, AethRepr, Envelope, IcrcEngine, NakCode, RoceFrameRepr, Syndrome};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn emitting_and_parsing_roce_and_qcn_frames_allocate_nothing() {
    let a = EthernetAddress([2, 1, 0, 0, 0, 1]);
    let b = EthernetAddress([2, 1, 0, 0, 0, 2]);
    let tag = Some(VlanTag::from_tci(EtherType::VLAN_C_TAG, 3 << 13));
    let mut v4 = Ipv4Repr::udp([10, 0, 0, 1], [10, 0, 0, 2]);
    v4.ecn = Ecn::Ce;
    let v6 = Ipv6Repr::udp([0xfd; 16], [0xfe; 16]);
    let nak = AethRepr {
        syndrome: Syndrome::nak(NakCode::PsnSequenceError),
        msn: 3,
    };
    let roce_frames = [
        RoceFrameRepr::rc_send(
            Envelope::new(a, b, tag, IpRepr::V4(v4), 1),
            7,
            9,
            true,
            false,
            true,
            1024,
        ),
        RoceFrameRepr::rc_ack(Envelope::new(b, a, None, IpRepr::V6(v6), 2), 7, 9, nak),
        RoceFrameRepr::cnp(Envelope::new(b, a, tag, IpRepr::V4(v4), 3), 7),
    ];
    let cnm = CnmRepr {
        reserved_v: 0,
        qntz_fb: 5,
        cpid: [1; 8],
        q_offset: -3,
        q_delta: 4,
        encapsulated_priority: 3,
        encapsulated_priority_reserved: 0,
        encapsulated_dst: b,
        encapsulated: EncapsulatedMsdu::truncating(&[9; 100]),
    };
    let cnm_frame = CnmFrameRepr::new(b, a, tag, Some(CnTag { flow_id: 1 }), cnm);
    let tagged = CnTaggedFrameRepr::new(a, b, tag, 1, EtherType::IPV4, 200);
    let engine = IcrcEngine::new();
    let mut buf = [0u8; 2048];
    let before = thread_allocations();
    let mut good = 0;
    for fcs in [FcsMode::Absent, FcsMode::Present] {
        for f in &roce_frames {
            let n = f
                .emit_with_payload(&[1, 2, 3][..f.payload_len.min(3)], fcs, &mut buf)
                .unwrap();
            let p = roce::parse_with(&buf[..n], fcs, &engine).unwrap();
            good += usize::from(p.icrc_ok() && p.repr == *f);
        }
        let n = cnm_frame.emit(fcs, &mut buf).unwrap();
        good += usize::from(qcn::parse_cnm_frame(&buf[..n], fcs).unwrap().repr == cnm_frame);
        let n = tagged.emit(b"x", fcs, &mut buf).unwrap();
        good += usize::from(qcn::CnEthernetRepr::parse_bytes(&buf[..n]).unwrap().0 == tagged.header);
    }
    assert_eq!(thread_allocations(), before, "the heap was used");
    assert_eq!(good, 10, "every frame parsed back to its repr");
}
