//! The LLDP TLV iterator and the typed TLV decoder: the iterator ends, never overlaps or skips
//! bytes and never reads out of bounds; every TLV that decodes re-emits to exactly its bytes
//! (borrowed and owned), and every error points inside the TLV it is about.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::lldp::Tlv;
use lossless_wire::lldp::tlv::{self, TlvIter};

fuzz_target!(|data: &[u8]| {
    let mut pos = 0;
    let mut count = 0;
    let mut iter = TlvIter::new(data);
    while let Some(item) = iter.next() {
        count += 1;
        assert!(
            count <= data.len() / tlv::HEADER_LEN + 1,
            "TLV iterator does not end"
        );
        let view = match item {
            Ok(v) => v,
            Err(e) => {
                assert!(
                    e.offset >= pos && e.offset <= data.len(),
                    "error {e} outside the TLV at {pos}"
                );
                assert!(iter.next().is_none(), "iterator goes on after an error");
                break;
            }
        };
        assert_eq!(view.offset, pos);
        let end = pos + view.total_len();
        assert_eq!(&data[view.value_offset()..end], view.value);
        pos = end;
        assert_eq!(iter.position(), pos);
        match Tlv::parse(&view) {
            Ok(t) => {
                assert_eq!(t.ty(), view.ty);
                assert_eq!(t.buffer_len(), view.total_len());
                let mut buf = vec![0u8; t.buffer_len()];
                assert_eq!(t.emit(&mut buf), Ok(buf.len()));
                assert_eq!(
                    &buf[..],
                    &data[view.offset..end],
                    "emit(parse(tlv)) != tlv: {t:?}"
                );
                let owned = t.to_owned();
                let mut buf2 = vec![0u8; owned.buffer_len()];
                assert_eq!(owned.emit(&mut buf2), Ok(buf2.len()));
                assert_eq!(buf2, buf);
            }
            Err(e) => {
                assert!(
                    e.offset >= view.offset && e.offset <= end,
                    "error {e} outside the TLV at {}..{end}",
                    view.offset
                );
            }
        }
        if view.ty == tlv::TYPE_END {
            assert!(iter.next().is_none(), "iterator goes on after End");
            break;
        }
    }
});
