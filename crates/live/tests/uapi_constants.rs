//! Our dcbnl and ethtool-netlink constants against the kernel's own UAPI headers
//! (`include/uapi/linux/dcbnl.h`, `ethtool_netlink.h`, `rtnetlink.h`, installed by
//! linux-libc-dev as /usr/include/linux/…): every enum value we use is found at the same
//! position in the header's enum, and `struct ieee_ets`'s fields are in our order. Skipped
//! loudly when the headers are not installed.

use lossless_live::netlink::dcbnl::*;
use lossless_live::netlink::ethtool::*;

/// The value of `name` in the header's enums: counts entries from the start of the enum
/// (or from an explicit `= N`), skipping comments and `#define`s.
fn enum_value(header: &str, name: &str) -> Option<u32> {
    let mut in_enum = false;
    let mut next = 0u32;
    let mut in_comment = false;
    for raw in header.lines() {
        let mut line = raw.trim().to_owned();
        if in_comment {
            match line.find("*/") {
                Some(i) => {
                    in_comment = false;
                    line = line[i + 2..].trim().to_owned();
                }
                None => continue,
            }
        }
        if let Some(i) = line.find("/*") {
            if !line[i..].contains("*/") {
                in_comment = true;
            }
            line = line[..i].trim().to_owned();
        }
        if line.starts_with("enum") && line.ends_with('{') {
            in_enum = true;
            next = 0;
            continue;
        }
        if !in_enum || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('}') {
            in_enum = false;
            continue;
        }
        let entry = line.trim_end_matches(',');
        let (n, v) = match entry.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim().parse::<u32>().ok()),
            None => (entry.trim(), None),
        };
        let value = v.unwrap_or(next);
        if n == name {
            return Some(value);
        }
        next = value + 1;
    }
    None
}

fn header(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/usr/include/linux/{name}")).ok()
}

#[test]
fn dcbnl_constants_match_the_kernels_dcbnl_h() {
    let (Some(h), Some(rt)) = (header("dcbnl.h"), header("rtnetlink.h")) else {
        eprintln!(
            "SKIPPED dcbnl_constants_match_the_kernels_dcbnl_h: /usr/include/linux/dcbnl.h or rtnetlink.h missing (install linux-libc-dev)"
        );
        return;
    };
    for (name, ours) in [
        ("DCB_CMD_IEEE_SET", u32::from(DCB_CMD_IEEE_SET)),
        ("DCB_CMD_IEEE_GET", u32::from(DCB_CMD_IEEE_GET)),
        ("DCB_CMD_IEEE_DEL", u32::from(DCB_CMD_IEEE_DEL)),
        ("DCB_ATTR_IFNAME", u32::from(DCB_ATTR_IFNAME)),
        ("DCB_ATTR_IEEE", u32::from(DCB_ATTR_IEEE)),
        ("DCB_ATTR_DCBX", u32::from(DCB_ATTR_DCBX)),
        ("DCB_ATTR_IEEE_ETS", u32::from(DCB_ATTR_IEEE_ETS)),
        ("DCB_ATTR_IEEE_PFC", u32::from(DCB_ATTR_IEEE_PFC)),
        ("DCB_ATTR_IEEE_APP_TABLE", u32::from(DCB_ATTR_IEEE_APP_TABLE)),
        ("DCB_ATTR_IEEE_PEER_ETS", u32::from(DCB_ATTR_IEEE_PEER_ETS)),
        ("DCB_ATTR_IEEE_PEER_PFC", u32::from(DCB_ATTR_IEEE_PEER_PFC)),
        ("DCB_ATTR_IEEE_PEER_APP", u32::from(DCB_ATTR_IEEE_PEER_APP)),
        ("DCB_ATTR_IEEE_APP", u32::from(DCB_ATTR_IEEE_APP)),
    ] {
        assert_eq!(enum_value(&h, name), Some(ours), "{name}");
    }
    assert_eq!(enum_value(&rt, "RTM_GETDCB"), Some(u32::from(RTM_GETDCB)));
    assert_eq!(enum_value(&rt, "RTM_SETDCB"), Some(u32::from(RTM_SETDCB)));
    // struct ieee_ets: three u8 then seven u8[8], in this order (59 bytes)
    let body = h
        .split("struct ieee_ets {")
        .nth(1)
        .unwrap()
        .split("};")
        .next()
        .unwrap();
    let fields: Vec<&str> = body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("__u8"))
        .map(|f| f.trim().trim_end_matches(';').split('[').next().unwrap().trim())
        .collect();
    assert_eq!(
        fields,
        [
            "willing",
            "ets_cap",
            "cbs",
            "tc_tx_bw",
            "tc_rx_bw",
            "tc_tsa",
            "prio_tc",
            "tc_reco_bw",
            "tc_reco_tsa",
            "reco_prio_tc"
        ]
    );
    assert_eq!(IEEE_ETS_LEN, 3 + 7 * 8);
}

#[test]
fn the_apptrust_constants_follow_dcb_buffer_as_in_linux_6_2s_dcbnl_h() {
    let Some(h) = header("dcbnl.h") else {
        eprintln!(
            "SKIPPED the_apptrust_constants_follow_dcb_buffer_as_in_linux_6_2s_dcbnl_h: /usr/include/linux/dcbnl.h missing (install linux-libc-dev)"
        );
        return;
    };
    // every header since 4.17 has DCB_ATTR_DCB_BUFFER; 6.2 put the trust table right after it
    assert_eq!(
        enum_value(&h, "DCB_ATTR_DCB_BUFFER"),
        Some(u32::from(DCB_ATTR_DCB_APP_TRUST_TABLE) - 1)
    );
    if !h.contains("DCB_ATTR_DCB_APP_TRUST_TABLE") {
        eprintln!(
            "SKIPPED (partly) the_apptrust_constants_follow_dcb_buffer_as_in_linux_6_2s_dcbnl_h: this dcbnl.h predates Linux 6.2 (no DCB_ATTR_DCB_APP_TRUST_TABLE); only its position after DCB_ATTR_DCB_BUFFER was checked"
        );
        return;
    }
    assert_eq!(
        enum_value(&h, "DCB_ATTR_DCB_APP_TRUST_TABLE"),
        Some(u32::from(DCB_ATTR_DCB_APP_TRUST_TABLE))
    );
    assert_eq!(
        enum_value(&h, "DCB_ATTR_DCB_APP"),
        Some(u32::from(DCB_ATTR_DCB_APP))
    );
    assert!(h.contains("#define DCB_APP_SEL_PCP 255") || h.contains("DCB_APP_SEL_PCP\t255"));
}

#[test]
fn ethtool_netlink_constants_match_the_kernels_ethtool_netlink_h() {
    let Some(h) = header("ethtool_netlink.h") else {
        eprintln!(
            "SKIPPED ethtool_netlink_constants_match_the_kernels_ethtool_netlink_h: /usr/include/linux/ethtool_netlink.h missing (install linux-libc-dev)"
        );
        return;
    };
    for (name, ours) in [
        ("ETHTOOL_MSG_PAUSE_GET", u32::from(ETHTOOL_MSG_PAUSE_GET)),
        (
            "ETHTOOL_MSG_PAUSE_GET_REPLY",
            u32::from(ETHTOOL_MSG_PAUSE_GET_REPLY),
        ),
        ("ETHTOOL_A_HEADER_DEV_NAME", u32::from(ETHTOOL_A_HEADER_DEV_NAME)),
        ("ETHTOOL_A_HEADER_FLAGS", u32::from(ETHTOOL_A_HEADER_FLAGS)),
        ("ETHTOOL_A_PAUSE_HEADER", u32::from(ETHTOOL_A_PAUSE_HEADER)),
        ("ETHTOOL_A_PAUSE_AUTONEG", u32::from(ETHTOOL_A_PAUSE_AUTONEG)),
        ("ETHTOOL_A_PAUSE_RX", u32::from(ETHTOOL_A_PAUSE_RX)),
        ("ETHTOOL_A_PAUSE_TX", u32::from(ETHTOOL_A_PAUSE_TX)),
        ("ETHTOOL_A_PAUSE_STATS", u32::from(ETHTOOL_A_PAUSE_STATS)),
        (
            "ETHTOOL_A_PAUSE_STAT_TX_FRAMES",
            u32::from(ETHTOOL_A_PAUSE_STAT_TX_FRAMES),
        ),
        (
            "ETHTOOL_A_PAUSE_STAT_RX_FRAMES",
            u32::from(ETHTOOL_A_PAUSE_STAT_RX_FRAMES),
        ),
    ] {
        assert_eq!(enum_value(&h, name), Some(ours), "{name}");
    }
    assert!(h.contains("#define ETHTOOL_FLAG_STATS\t\t(1 << 2)") || h.contains("ETHTOOL_FLAG_STATS = 4"));
    assert!(h.contains("#define ETHTOOL_GENL_NAME \"ethtool\""));
}
