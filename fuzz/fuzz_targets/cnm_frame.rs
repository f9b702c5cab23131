//! 802.1Qau frames: the Ethernet header with a CN-TAG and whole CNM frames. Parsing never
//! panics; the view and the repr agree; a parsed CNM frame re-emits and parses back to the
//! same repr; a canonical one re-emits byte for byte; a parsed CN-TAG header re-emits to the
//! bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::fcs::FcsMode;
use lossless_wire::qcn::{self, CnEthernetRepr, Cnm, CnmRepr};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, frame)) = data.split_first() else {
        return;
    };
    let fcs = FcsMode::from_present(ctl & 1 == 1);
    if let Ok((h, at)) = CnEthernetRepr::parse_bytes(frame) {
        assert_eq!(h.buffer_len(), at);
        let mut out = vec![0u8; at];
        assert_eq!(h.emit(&mut out), Ok(at));
        assert_eq!(&out[..], &frame[..at]);
    }
    if let Ok((c, len)) = CnmRepr::parse(frame) {
        let v = Cnm::new_checked(frame).expect("the view accepts what the repr parses");
        assert_eq!(v.encapsulated(), c.encapsulated.as_slice());
        assert_eq!((v.qntz_fb(), v.cpid(), v.q_offset(), v.q_delta()), (c.qntz_fb, c.cpid, c.q_offset, c.q_delta));
        let mut out = vec![0u8; c.buffer_len()];
        assert_eq!(c.emit(&mut out), Ok(len));
        assert_eq!(&out[..], &frame[..len]);
    }
    let Ok(f) = qcn::parse_cnm_frame(frame, fcs) else {
        return;
    };
    let mut buf = vec![0u8; f.repr.buffer_len(fcs)];
    f.repr.emit(fcs, &mut buf).expect("a parsed CNM frame re-emits");
    let again = qcn::parse_cnm_frame(&buf, fcs).expect("an emitted CNM frame parses");
    assert_eq!(again.repr, f.repr);
    assert!(again.is_canonical());
    if f.is_canonical() {
        assert_eq!(&buf[..], frame, "emit(parse(b)) != b for a canonical CNM frame");
    }
});
