//! RoCEv2 frames captured on real NICs, decoded field by field, ICRC included.

use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr};
use lossless_wire::roce::{self, Opcode, UdpChecksum};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A CNP captured on a ConnectX-4 Lx (the hexdump in scapy's `test/contrib/roce.uts`, "RoCE
/// CNP captured on ConnectX-4 Lx"): 74 bytes without FCS, ICRC bytes `82 fd 00 2a`.
const CX4_CNP: &str = "e41d2dab2bc2 7cfe90643b32 0800
    45c2 003c 718c 4000 4011 9161 0a001101 0a001201
    0000 12b7 0028 0000
    81 00 ffff 40 000118 00 000000
    00000000000000000000000000000000
    82fd002a";

#[test]
fn connectx4_cnp_decodes_with_its_icrc_verified() {
    let frame = unhex(CX4_CNP);
    assert_eq!(frame.len(), 74);
    let f = roce::parse(&frame, FcsMode::Absent).unwrap();
    assert_eq!(f.icrc, 0x2a00fd82, "the CRC value of the wire bytes 82 fd 00 2a");
    assert_eq!(f.icrc_computed, f.icrc, "our ICRC masking reproduces the NIC's");
    assert!(f.is_canonical());
    let r = f.repr;
    let IpRepr::V4(ip) = r.ip else { panic!("IPv4") };
    assert_eq!(
        (ip.dscp, ip.ecn),
        (48, Ecn::Ect0),
        "ToS 0xc2: DSCP 48 (cnp_dscp), ECT(0)"
    );
    assert_eq!((ip.ttl, ip.identification, ip.dont_fragment), (64, 0x718c, true));
    assert_eq!((ip.src, ip.dst), ([10, 0, 17, 1], [10, 0, 18, 1]));
    assert_eq!((r.udp.src_port, r.udp.dst_port), (0, 4791));
    assert_eq!(r.udp_checksum, UdpChecksum::Zero);
    assert_eq!(r.bth.opcode, Opcode::CNP);
    assert!(r.bth.becn && !r.bth.fecn);
    assert_eq!(
        (r.bth.p_key, r.bth.dest_qp, r.bth.psn, r.bth.ack_req),
        (0xffff, 0x118, 0, false)
    );
    assert_eq!(r.ext.cnp, Some([0; 16]));
    assert_eq!(r.payload_len, 0);
    // and it re-emits to the same bytes
    let mut buf = [0u8; 128];
    let n = r.emit(FcsMode::Absent, &mut buf).unwrap();
    assert_eq!(&buf[..n], &frame[..]);
}
