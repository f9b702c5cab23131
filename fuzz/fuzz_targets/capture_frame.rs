//! The frame decoder behind `lossless decode` on one captured frame: any bytes, any original
//! length, Ethernet or another link type. Decoding never panics; the record renders as text,
//! serializes to JSON and passes through every filter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_capture::reader::{Frame, LINKTYPE_ETHERNET};
use lossless_capture::{Filter, FrameKind, decode_frame, text};
use lossless_proto::units::Instant;

fuzz_target!(|data: &[u8]| {
    // First byte: bit 0 = another link type, bits 1-2 = how orig_len relates to the bytes.
    let Some((&ctl, bytes)) = data.split_first() else {
        return;
    };
    let link_type = if ctl & 1 == 0 { LINKTYPE_ETHERNET } else { 105 };
    let n = bytes.len() as u32;
    let orig_len = match (ctl >> 1) & 3 {
        0 => n,
        1 => n.saturating_add(u32::from(ctl)),
        2 => n.saturating_sub(u32::from(ctl >> 3)),
        _ => u32::MAX,
    };
    let frame = Frame {
        number: 1,
        timestamp: Some(Instant::from_ps(u128::from(ctl) * 1_000_000_007)),
        link_type,
        interface: 0,
        data: bytes.to_vec(),
        orig_len,
        offset: 24,
        block: None,
        notes: Vec::new(),
    };
    let rec = decode_frame(&frame);
    assert_eq!(rec.caplen, bytes.len());
    for (_, kind) in FrameKind::ALL {
        let _ = Filter::new([kind]).accepts(&rec);
    }
    let _ = text::render(&rec);
    serde_json::to_string(&rec).expect("a record serializes");
});
