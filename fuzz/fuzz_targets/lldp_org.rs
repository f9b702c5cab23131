//! Organizationally specific LLDP TLVs (802.1 incl. IEEE DCBX, 802.3, CEE DCBX, other OUIs):
//! the input is the TLV value (OUI, subtype, information); whatever decodes re-emits to the
//! same bytes, borrowed and owned, and errors point inside the TLV.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::lldp::Tlv;
use lossless_wire::lldp::tlv::{self, TlvView};

fuzz_target!(|data: &[u8]| {
    let value = &data[..data.len().min(tlv::MAX_VALUE_LEN)];
    let mut buf = vec![0u8; tlv::HEADER_LEN + value.len()];
    tlv::emit_header(&mut buf, tlv::TYPE_ORGANIZATIONALLY_SPECIFIC, value.len())
        .expect("value capped at 511");
    buf[tlv::HEADER_LEN..].copy_from_slice(value);
    let view = TlvView::parse(&buf, 0).expect("a whole TLV");
    match Tlv::parse(&view) {
        Ok(t) => {
            assert_eq!(t.buffer_len(), buf.len());
            let mut out = vec![0u8; t.buffer_len()];
            assert_eq!(t.emit(&mut out), Ok(out.len()));
            assert_eq!(out, buf, "emit(parse(tlv)) != tlv: {t:?}");
            let owned = t.to_owned();
            let mut out2 = vec![0u8; owned.buffer_len()];
            assert_eq!(owned.emit(&mut out2), Ok(out2.len()));
            assert_eq!(out2, buf);
        }
        Err(e) => assert!(e.offset <= buf.len(), "error {e} outside the TLV"),
    }
});
