//! Whole RoCEv2 frames (Ethernet + IPv4/IPv6 + UDP 4791 + BTH + extension headers + payload +
//! ICRC, with or without FCS): parsing never panics; a parsed frame re-emits (when its ICRC
//! was wrong, perhaps with its UDP checksum made right), and what it emits parses back to the
//! same repr with a good ICRC; a canonical frame (checks pass,
//! padding as emit writes it) re-emits byte for byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::fcs::FcsMode;
use lossless_wire::roce::{self, Bth, BthRepr, IcrcEngine, UdpChecksum};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, frame)) = data.split_first() else {
        return;
    };
    let fcs = FcsMode::from_present(ctl & 1 == 1);
    let _ = IcrcEngine::new().compute(frame);
    if let Ok(b) = Bth::new_checked(frame) {
        assert_eq!(BthRepr::parse(&b), BthRepr::parse_bytes(frame).unwrap());
    }
    let Ok(f) = roce::parse(frame, fcs) else {
        return;
    };
    assert!(f.payload.len() == f.repr.payload_len);
    let mut repr = f.repr;
    let mut buf = vec![0u8; repr.buffer_len(fcs)];
    if let Err(e) = repr.emit_with_payload(f.payload, fcs, &mut buf) {
        // emit writes the right ICRC; when the frame's was wrong, a UDP checksum that was wrong
        // for the frame can be right for the re-emitted one, and emit refuses to call it wrong.
        assert!(!f.icrc_ok() && matches!(repr.udp_checksum, UdpChecksum::Invalid(_)), "{e}");
        assert_eq!(e.field, "checksum");
        repr.udp_checksum = UdpChecksum::Valid;
    }
    let n = repr
        .emit_with_payload(f.payload, fcs, &mut buf)
        .expect("a parsed frame re-emits");
    assert_eq!(n, buf.len());
    let again = roce::parse(&buf, fcs).expect("an emitted frame parses");
    assert_eq!(again.repr, repr);
    assert_eq!(again.payload, f.payload);
    assert!(again.icrc_ok() && again.is_canonical());
    if f.is_canonical() {
        assert_eq!(&buf[..], frame, "emit(parse(b)) != b for a canonical frame");
    }
});
