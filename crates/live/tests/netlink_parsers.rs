//! The netlink parsers (messages, attributes, dcbnl and ethtool replies, `ethtool -S` buffers)
//! on arbitrary bytes: an error or a value, never a panic, and nothing kept beyond the input.

use lossless_live::ethtool_stats::{parse_driver, parse_stats, parse_strings};
use lossless_live::netlink::dcbnl::{parse_get_reply, parse_set_reply};
use lossless_live::netlink::ethtool::{parse_family_reply, parse_pause_reply};
use lossless_live::netlink::{attributes, parse_messages};
use proptest::prelude::*;

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_any_parser(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(ms) = parse_messages(&bytes) {
            let total: usize = ms.iter().map(|m| m.payload.len()).sum();
            prop_assert!(total <= bytes.len());
        }
        if let Ok(a) = attributes(&bytes) {
            prop_assert!(a.len() <= bytes.len() / 4);
        }
        if let Ok(st) = parse_get_reply(&bytes) {
            prop_assert!(st.apps.len() <= bytes.len() / 8);
        }
        let _ = parse_set_reply(&bytes);
        let _ = parse_pause_reply(&bytes);
        let _ = parse_family_reply(&bytes);
        let _ = parse_driver(&bytes);
        prop_assert!(parse_strings(&bytes, usize::MAX).len() <= bytes.len() / 32);
        prop_assert!(parse_stats(&bytes, usize::MAX).len() <= bytes.len() / 8);
    }

    #[test]
    fn nested_garbage_behind_a_valid_dcb_header_never_panics(
        body in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut p = vec![0u8, 21, 0, 0];
        // DCB_ATTR_IEEE nest holding the garbage
        let len = (4 + body.len()).min(u16::MAX as usize) as u16;
        p.extend_from_slice(&len.to_ne_bytes());
        p.extend_from_slice(&(13u16 | 0x8000).to_ne_bytes());
        p.extend_from_slice(&body);
        let _ = parse_get_reply(&p);
    }
}
