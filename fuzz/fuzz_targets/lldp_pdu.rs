//! Whole LLDPDUs (802.1AB TLVs, 802.1/802.3 org TLVs, IEEE and CEE DCBX): decoding ends, the
//! borrowed and owned decoders and the TLV stream agree, emit(parse(b)) == b for PDUs that
//! decode cleanly, the TLVs decoded before an error re-emit to exactly the bytes they came
//! from, and parse(emit(parse(b))) == parse(b).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::lldp::tlv::TlvIter;
use lossless_wire::lldp::{Lldpdu, LldpduRepr};

fuzz_target!(|data: &[u8]| {
    let d = LldpduRepr::parse(data);
    assert!(d.len <= data.len());
    if let Some(e) = d.error {
        assert!(
            e.offset <= data.len(),
            "error {e} past the end of {} bytes",
            data.len()
        );
    }
    // The zero-copy decoders say the same.
    let borrowed = Lldpdu::new(data).decode();
    assert_eq!(borrowed.to_owned(), d);
    let mut stream = Vec::new();
    let mut stream_error = None;
    for t in Lldpdu::new(data).tlvs() {
        match t {
            Ok(t) => stream.push(t.to_owned()),
            Err(e) => stream_error = Some(e),
        }
    }
    assert_eq!(stream, d.tlvs);
    assert_eq!(stream_error, d.error);
    // The TLVs decoded re-emit to exactly the bytes they were decoded from.
    let consumed: usize = TlvIter::new(data)
        .take(d.tlvs.len())
        .map(|r| r.expect("a decoded TLV has a sound header").total_len())
        .sum();
    let repr = LldpduRepr { tlvs: d.tlvs.clone() };
    let emitted = repr.to_vec().expect("decoded TLVs fit their length fields");
    assert_eq!(emitted.len(), repr.buffer_len());
    assert_eq!(&emitted[..], &data[..consumed], "emit(parse(b)) != b");
    if d.error.is_none() {
        assert_eq!(consumed, d.len);
    }
    // parse(emit(parse(b))) == parse(b)
    let again = LldpduRepr::parse(&emitted);
    assert_eq!(again.error, None, "re-emitted PDU does not decode");
    assert_eq!(again.tlvs, d.tlvs);
    assert_eq!(again.len, emitted.len());
    if d.error.is_none() && consumed == data.len() {
        assert_eq!(again.warnings, d.warnings);
    }
});
