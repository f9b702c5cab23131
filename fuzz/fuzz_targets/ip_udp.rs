//! IPv4, IPv6 and UDP headers through etherparse: parsing never panics; a parsed header
//! re-emits for the payload length it announced and parses back to the same repr (an IPv4
//! header with a right checksum re-emits byte for byte, the reserved flag bit aside).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::ip::{Ipv4Repr, Ipv6Repr};
use lossless_wire::udp::UdpRepr;

fuzz_target!(|data: &[u8]| {
    if let Ok((ip, info)) = Ipv4Repr::parse(data) {
        assert_eq!(ip.buffer_len(), info.header_len);
        let mut out = vec![0u8; info.header_len];
        assert_eq!(ip.emit(info.payload_len, &mut out), Ok(info.header_len));
        let (again, info2) = Ipv4Repr::parse(&out).expect("re-emitted header parses");
        assert_eq!(again, ip);
        assert_eq!(info2.payload_len, info.payload_len);
        assert!(info2.checksum_ok);
        if info.checksum_ok && data[6] & 0x80 == 0 {
            assert_eq!(&out[..], &data[..info.header_len]);
        }
    }
    if let Ok((ip, info)) = Ipv6Repr::parse(data) {
        let mut out = [0u8; 40];
        assert_eq!(ip.emit(info.payload_len, &mut out), Ok(40));
        assert_eq!(&out[..], &data[..40]);
    }
    if let Ok((u, info)) = UdpRepr::parse(data) {
        let mut out = [0u8; 8];
        assert_eq!(u.emit(info.length - 8, info.checksum, &mut out), Ok(8));
        assert_eq!(&out[..], &data[..8]);
    }
});
