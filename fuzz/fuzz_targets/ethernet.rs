//! Ethernet II + VLAN tags: the zero-copy view and the owned header agree, the header
//! re-emits byte for byte, parse(emit(x)) == x, and FCS helpers never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::ethernet::{EthernetAddress, EthernetRepr, Frame};
use lossless_wire::fcs;

fuzz_target!(|data: &[u8]| {
    let parsed = EthernetRepr::parse_bytes(data);
    let view = Frame::new_checked(data);
    assert_eq!(
        parsed.is_ok(),
        view.is_ok(),
        "view and repr disagree on {data:02x?}"
    );
    if let (Ok((repr, at)), Ok(view)) = (parsed, view) {
        assert_eq!(view.header_len(), at);
        assert_eq!(view.dst_addr(), repr.dst);
        assert_eq!(view.src_addr(), repr.src);
        assert_eq!(view.ethertype(), repr.ethertype);
        assert_eq!(view.tag_count(), repr.tags.count());
        for i in 0..3 {
            assert_eq!(view.tag(i).as_ref(), repr.tags.get(i));
        }
        assert_eq!(view.payload(), &data[at..]);
        assert_eq!(EthernetRepr::parse(&view), Ok(repr));
        assert_eq!(repr.buffer_len(), at);
        // emit(parse(b)) == b for the header
        let mut buf = [0u8; 22];
        let n = repr.emit(&mut buf).expect("a parsed header re-emits");
        assert_eq!(&buf[..n], &data[..at]);
        // parse(emit(x)) == x
        assert_eq!(EthernetRepr::parse_bytes(&buf[..n]), Ok((repr, n)));
        // addresses print and parse back
        let text = repr.src.to_string();
        assert_eq!(text.parse::<EthernetAddress>(), Ok(repr.src));
    }
    if let Ok(text) = core::str::from_utf8(data) {
        if let Ok(addr) = text.parse::<EthernetAddress>() {
            assert_eq!(addr.to_string().parse::<EthernetAddress>(), Ok(addr));
        }
    }
    match (fcs::split(data), fcs::verify(data)) {
        (Ok((body, value)), Ok(good)) => assert_eq!(good, fcs::compute(body) == value),
        (Err(_), Err(_)) => assert!(data.len() < fcs::FCS_LEN),
        other => panic!("split and verify disagree: {other:?}"),
    }
});
