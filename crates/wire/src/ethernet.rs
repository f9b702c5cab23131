//! Ethernet II frames with 802.1Q / QinQ tags, FCS and minimum-frame padding.
