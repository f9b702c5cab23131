//! The pcap/pcapng reader and the frame decoder behind `lossless decode`, on whole files: the
//! reader ends (at most one item per 12 bytes of input, nothing after a fatal error), frames
//! are numbered in order and bounded in size, and every frame decodes, renders as text and
//! serializes to JSON without panicking.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use lossless_capture::reader::MAX_SNAPLEN;
use lossless_capture::{CaptureReader, Filter, FrameKind, decode_frame, text};

fuzz_target!(|data: &[u8]| {
    let mut reader = CaptureReader::new(Cursor::new(data));
    let filter = Filter::new(FrameKind::ALL.iter().map(|(_, k)| *k));
    let limit = data.len() / 12 + 2;
    let mut items = 0;
    let mut last_number = 0;
    while let Some(item) = reader.next() {
        items += 1;
        assert!(items <= limit, "reader yields more items than the input can hold");
        match item {
            Ok(frame) => {
                assert!(frame.number > last_number, "frame numbers go backwards");
                last_number = frame.number;
                assert!(frame.data.len() <= MAX_SNAPLEN as usize);
                let rec = decode_frame(&frame);
                assert_eq!(rec.caplen, frame.data.len());
                let _ = filter.accepts(&rec);
                let _ = text::render(&rec);
                serde_json::to_string(&rec).expect("a record serializes");
            }
            Err(e) => {
                assert!(
                    e.offset <= data.len() as u64,
                    "error offset {} past the end",
                    e.offset
                );
                let _ = e.to_string();
                if e.fatal {
                    assert!(reader.next().is_none(), "reader goes on after a fatal error");
                    break;
                }
            }
        }
    }
    assert!(reader.offset() <= data.len() as u64);
});
