//! dcbnl requests byte for byte as iproute2's `dcb` sends them, the kernel's replies decoded
//! by `include/uapi/linux/dcbnl.h`'s layouts, and a veth's real EOPNOTSUPP said plainly (root
//! only; skipped loudly otherwise).
//!
//! The expected bytes of `dcb ets show`, `dcb app add` and `dcb app del` were captured from
//! iproute2 6.1's `dcb` on a veth with `strace -X raw -e trace=sendto -xx` (its requests are
//! answered EOPNOTSUPP there, but they are sent whole); `dcb ets set` / `dcb pfc set` first
//! read the current state (which a veth refuses), so their SET bytes follow iproute2's
//! `dcb/dcb.c` `dcb_set_attribute` (`mnl_attr_nest_start(nlh, DCB_ATTR_IEEE)`,
//! `mnl_attr_put(nlh, DCB_ATTR_IEEE_ETS, sizeof(struct ieee_ets), &ets)`).
//!
//! `dcb apptrust` (iproute2 6.2+) is not in this machine's `dcb` 6.1, so its bytes follow
//! iproute2's `dcb/dcb_apptrust.c` (commit 21f88a07 of github.com/iproute2/iproute2):
//! `show` is `dcb_get_attribute_va`, the same DCB_CMD_IEEE_GET as `dcb ets show`; `set` is
//! `dcb_set_attribute_va(DCB_CMD_IEEE_SET)` with `dcb_apptrust_set_cb`:
//! `mnl_attr_nest_start(nlh, DCB_ATTR_DCB_APP_TRUST_TABLE)` inside DCB_ATTR_IEEE, then
//! `mnl_attr_put_u8(nlh, dcb_app_attr_type_get(sel), sel)` per selector in order.

use std::process::Command;

use lossless_live::netlink::dcbnl::{
    self, DCB_APP_SEL_PCP, DcbApp, DcbError, DcbSet, IEEE_ETS_LEN, IEEE_PFC_LEN, IeeeEts, IeeePfc,
};
use lossless_live::netlink::{MessageBuilder, NetlinkError};

const SEQ: u32 = 1_796_439_452;

fn hdr(len: u32, kind: u16, cmd: u8) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(&kind.to_le_bytes());
    v.extend_from_slice(&5u16.to_le_bytes()); // NLM_F_REQUEST | NLM_F_ACK
    v.extend_from_slice(&SEQ.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&[0, cmd, 0, 0]); // struct dcbmsg
    // DCB_ATTR_IFNAME "vcap0\0", nla_len 10, padded to 12
    v.extend_from_slice(&[10, 0, 1, 0, b'v', b'c', b'a', b'p', b'0', 0, 0, 0]);
    v
}

#[test]
fn the_get_request_is_what_dcb_ets_show_sends() {
    // strace: {nlmsg_len=32, nlmsg_type=0x4e, nlmsg_flags=0x5, ...}, {dcb_family=0, cmd=0x15},
    // [{nla_len=10, nla_type=0x1}, "vcap0\0"]
    let want = hdr(32, 78, 0x15);
    assert_eq!(dcbnl::get_request("vcap0", SEQ).unwrap(), want);
}

#[test]
fn an_app_add_is_what_dcb_app_add_ethtype_prio_sends() {
    // dcb app add dev vcap0 ethtype-prio 0x8906:3 →
    // [{nla_len=16, nla_type=0x8000|0xd}, "\x0c\x00\x03\x80\x08\x00\x01\x00\x01\x03\x06\x89"]
    let mut want = hdr(48, 79, 0x14);
    want.extend_from_slice(&[16, 0, 0x0d, 0x80]);
    want.extend_from_slice(&[
        0x0c, 0x00, 0x03, 0x80, 0x08, 0x00, 0x01, 0x00, 0x01, 0x03, 0x06, 0x89,
    ]);
    let set = DcbSet {
        apps: vec![DcbApp {
            selector: 1,
            priority: 3,
            protocol: 0x8906,
        }],
        ..Default::default()
    };
    assert_eq!(dcbnl::set_request("vcap0", SEQ, &set).unwrap(), want);
}

#[test]
fn a_dscp_app_add_and_an_app_del_are_what_dcb_sends() {
    // dcb app add dev vcap0 dscp-prio 26:3 → selector 5, protocol 26
    let mut want = hdr(48, 79, 0x14);
    want.extend_from_slice(&[16, 0, 0x0d, 0x80]);
    want.extend_from_slice(&[
        0x0c, 0x00, 0x03, 0x80, 0x08, 0x00, 0x01, 0x00, 0x05, 0x03, 0x1a, 0x00,
    ]);
    let dscp = DcbApp {
        selector: 5,
        priority: 3,
        protocol: 26,
    };
    let set = DcbSet {
        apps: vec![dscp],
        ..Default::default()
    };
    assert_eq!(dcbnl::set_request("vcap0", SEQ, &set).unwrap(), want);
    // dcb app del dev vcap0 ethtype-prio 0x8906:3 → cmd DCB_CMD_IEEE_DEL (27)
    let mut want = hdr(48, 79, 27);
    want.extend_from_slice(&[16, 0, 0x0d, 0x80]);
    want.extend_from_slice(&[
        0x0c, 0x00, 0x03, 0x80, 0x08, 0x00, 0x01, 0x00, 0x01, 0x03, 0x06, 0x89,
    ]);
    let fcoe = DcbApp {
        selector: 1,
        priority: 3,
        protocol: 0x8906,
    };
    assert_eq!(dcbnl::del_apps_request("vcap0", SEQ, &[fcoe]).unwrap(), want);
}

#[test]
fn an_ets_set_nests_the_whole_struct_ieee_ets_as_dcb_set_attribute_does() {
    let ets = IeeeEts {
        willing: 0,
        ets_cap: 8,
        tc_tx_bw: [60, 40, 0, 0, 0, 0, 0, 0],
        tc_tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        ..Default::default()
    };
    let got = dcbnl::set_request(
        "vcap0",
        SEQ,
        &DcbSet {
            ets: Some(ets),
            ..Default::default()
        },
    )
    .unwrap();
    // 32 (header, dcbmsg, ifname) + 4 (DCB_ATTR_IEEE) + 4 + 59 + 1 pad
    let mut want = hdr(100, 79, 0x14);
    want.extend_from_slice(&[68, 0, 0x0d, 0x80, 63, 0, 1, 0]);
    let mut body = vec![0u8, 8, 0];
    body.extend_from_slice(&[60, 40, 0, 0, 0, 0, 0, 0]); // tc_tx_bw
    body.extend_from_slice(&[0; 8]); // tc_rx_bw
    body.extend_from_slice(&[2, 2, 0, 0, 0, 0, 0, 0]); // tc_tsa
    body.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0]); // prio_tc
    body.extend_from_slice(&[0; 24]); // reco
    assert_eq!(body.len(), IEEE_ETS_LEN);
    want.extend_from_slice(&body);
    want.push(0);
    assert_eq!(got, want);
}

#[test]
fn a_pfc_set_carries_struct_ieee_pfc_with_its_c_layout() {
    let pfc = IeeePfc {
        pfc_cap: 8,
        pfc_en: 1 << 3,
        delay: 0x1234,
        ..Default::default()
    };
    let b = pfc.to_bytes();
    assert_eq!(b.len(), IEEE_PFC_LEN);
    assert_eq!(&b[..6], &[8, 0x08, 0, 0, 0x34, 0x12]);
    let got = dcbnl::set_request(
        "vcap0",
        SEQ,
        &DcbSet {
            pfc: Some(pfc),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(got.len(), 32 + 4 + 4 + IEEE_PFC_LEN);
    assert_eq!(&got[32..40], &[(4 + 4 + 136) as u8, 0, 0x0d, 0x80, 140, 0, 2, 0]);
    assert_eq!(&got[40..], &b[..]);
}

/// A reply as `dcbnl_ieee_fill` builds it: dcbmsg, IFNAME, IEEE{ETS, PFC, APP_TABLE{APP…}},
/// DCBX.
fn ieee_reply(ets: &IeeeEts, pfc: &IeeePfc, apps: &[DcbApp]) -> Vec<u8> {
    let mut b = MessageBuilder::new(78, 0, 1);
    b.raw(&[0, 21, 0, 0]);
    b.attr_str(1, "eth0");
    b.nest(13);
    b.attr(1, &ets.to_bytes());
    b.attr(2, &pfc.to_bytes());
    b.nest(3);
    for a in apps {
        b.attr(1, &a.to_bytes());
    }
    b.end_nest();
    b.end_nest();
    b.attr(14, &[0x8 | 0x1]);
    b.finish()
}

#[test]
fn an_ieee_get_reply_is_decoded_field_for_field() {
    let ets = IeeeEts {
        willing: 1,
        ets_cap: 8,
        tc_tx_bw: [13, 7, 80, 0, 0, 0, 0, 0],
        tc_tsa: [2, 2, 2, 0, 0, 0, 0, 0],
        prio_tc: [0, 1, 2, 2, 0, 0, 0, 0],
        reco_prio_tc: [7, 6, 5, 4, 3, 2, 1, 0],
        ..Default::default()
    };
    let pfc = IeeePfc {
        pfc_cap: 8,
        pfc_en: 0b1000,
        mbc: 0,
        delay: 32,
        requests: [0, 0, 0, 99, 0, 0, 0, 0],
        indications: [0, 0, 0, 7, 0, 0, 0, 1 << 40],
    };
    let apps = [
        DcbApp {
            selector: 1,
            priority: 3,
            protocol: 0x8906,
        },
        DcbApp {
            selector: 5,
            priority: 3,
            protocol: 26,
        },
    ];
    let m = ieee_reply(&ets, &pfc, &apps);
    let st = dcbnl::parse_get_reply(&m[16..]).unwrap();
    assert_eq!(st.ifname, "eth0");
    assert_eq!(st.ets, Some(ets));
    assert_eq!(st.pfc, Some(pfc));
    assert_eq!(st.apps, apps);
    assert_eq!(st.dcbx, Some(0x9));
}

#[test]
fn an_apptrust_set_is_what_dcb_apptrust_set_order_dscp_pcp_sends() {
    // dcb apptrust set dev vcap0 order dscp pcp:
    // IEEE nest {nla_len=24, 0x8000|13}, TRUST_TABLE nest {nla_len=20, 0x8000|11},
    // u8 DCB_ATTR_IEEE_APP (1) = 5 (dscp), u8 DCB_ATTR_DCB_APP (2) = 255 (pcp), each padded to 8
    let mut want = hdr(56, 79, 0x14);
    want.extend_from_slice(&[24, 0, 0x0d, 0x80, 20, 0, 0x0b, 0x80]);
    want.extend_from_slice(&[5, 0, 1, 0, 5, 0, 0, 0]);
    want.extend_from_slice(&[5, 0, 2, 0, 0xff, 0, 0, 0]);
    let set = DcbSet {
        apptrust: Some(vec![5, DCB_APP_SEL_PCP]),
        ..Default::default()
    };
    assert_eq!(dcbnl::set_request("vcap0", SEQ, &set).unwrap(), want);
    // `order` with nothing after it: an empty table, trust nothing
    let mut want = hdr(40, 79, 0x14);
    want.extend_from_slice(&[8, 0, 0x0d, 0x80, 4, 0, 0x0b, 0x80]);
    let set = DcbSet {
        apptrust: Some(vec![]),
        ..Default::default()
    };
    assert_eq!(dcbnl::set_request("vcap0", SEQ, &set).unwrap(), want);
}

#[test]
fn a_set_without_apptrust_sends_no_trust_table() {
    let set = DcbSet {
        apps: vec![DcbApp {
            selector: 5,
            priority: 3,
            protocol: 26,
        }],
        ..Default::default()
    };
    let m = dcbnl::set_request("vcap0", SEQ, &set).unwrap();
    assert!(!m.windows(2).any(|w| w == [0x0b, 0x80]), "{m:02x?}");
}

/// A reply whose DCB_ATTR_IEEE holds a trust table as `dcbnl_ieee_fill` (6.2) builds it.
fn trust_reply(entries: &[(u16, &[u8])]) -> Vec<u8> {
    let mut b = MessageBuilder::new(78, 0, 1);
    b.raw(&[0, 21, 0, 0]);
    b.attr_str(1, "eth0");
    b.nest(13);
    b.nest(11);
    for (kind, payload) in entries {
        b.attr(*kind, payload);
    }
    b.end_nest();
    b.end_nest();
    b.finish()
}

#[test]
fn an_ieee_get_reply_with_a_trust_table_gives_the_order_most_trusted_first() {
    let m = trust_reply(&[(2, &[255]), (1, &[5]), (1, &[1])]);
    let st = dcbnl::parse_get_reply(&m[16..]).unwrap();
    assert_eq!(st.apptrust, Some(vec![255, 5, 1]));
    // an empty table (the driver trusts nothing) is not "no table"
    let st = dcbnl::parse_get_reply(&trust_reply(&[])[16..]).unwrap();
    assert_eq!(st.apptrust, Some(vec![]));
    // a reply without the table (kernel before 6.2, driver without getapptrust)
    let m = ieee_reply(&IeeeEts::default(), &IeeePfc::default(), &[]);
    assert_eq!(dcbnl::parse_get_reply(&m[16..]).unwrap().apptrust, None);
}

#[test]
fn a_trusted_selector_in_the_wrong_attribute_type_or_empty_is_an_error() {
    // pcp (255) must come as DCB_ATTR_DCB_APP, dscp (5) as DCB_ATTR_IEEE_APP
    let e = dcbnl::parse_get_reply(&trust_reply(&[(1, &[255])])[16..]).unwrap_err();
    assert!(e.to_string().contains("selector 255"), "{e}");
    let e = dcbnl::parse_get_reply(&trust_reply(&[(2, &[5])])[16..]).unwrap_err();
    assert!(e.to_string().contains("selector 5"), "{e}");
    let e = dcbnl::parse_get_reply(&trust_reply(&[(1, &[])])[16..]).unwrap_err();
    assert!(matches!(e, NetlinkError::Short { found: 0, .. }), "{e}");
}

#[test]
fn a_truncated_ets_in_a_reply_is_an_error_that_says_so() {
    let mut b = MessageBuilder::new(78, 0, 1);
    b.raw(&[0, 21, 0, 0]);
    b.nest(13).attr(1, &[0; 20]).end_nest();
    let m = b.finish();
    let e = dcbnl::parse_get_reply(&m[16..]).unwrap_err();
    assert_eq!(
        e,
        NetlinkError::Short {
            what: "struct ieee_ets",
            found: 20,
            needed: 59
        }
    );
    assert!(e.to_string().contains("ieee_ets"), "{e}");
}

#[test]
fn every_truncation_of_a_reply_is_an_error_or_a_value_never_a_panic() {
    let m = ieee_reply(
        &IeeeEts::default(),
        &IeeePfc::default(),
        &[DcbApp {
            selector: 1,
            priority: 1,
            protocol: 1,
        }],
    );
    for n in 0..m.len() - 16 {
        let _ = dcbnl::parse_get_reply(&m[16..16 + n]);
    }
}

#[test]
fn a_set_reply_with_the_drivers_refusal_gives_its_errno() {
    // dcbnl_ieee_set puts the driver's err as a u8 in DCB_ATTR_IEEE and acknowledges
    let mut b = MessageBuilder::new(79, 0, 1);
    b.raw(&[0, 20, 0, 0]);
    b.attr(13, &[(-libc::EOPNOTSUPP) as u8]);
    let m = b.finish();
    assert_eq!(
        dcbnl::parse_set_reply(&m[16..]),
        Err(NetlinkError::Kernel {
            errno: libc::EOPNOTSUPP
        })
    );
    let mut ok = MessageBuilder::new(79, 0, 1);
    ok.raw(&[0, 20, 0, 0]).attr(13, &[0]);
    assert_eq!(dcbnl::parse_set_reply(&ok.finish()[16..]), Ok(()));
}

#[test]
fn an_interface_name_that_linux_would_refuse_is_refused_before_sending() {
    for n in ["", "a-name-longer-than-15", "a/b", "a b"] {
        assert!(dcbnl::get_request(n, 1).is_err(), "{n:?}");
    }
}

struct Veth(String);
impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).status();
    }
}

#[test]
fn a_veth_has_no_dcb_and_the_error_says_so_plainly() {
    if !lossless_testkit::require_root("a_veth_has_no_dcb_and_the_error_says_so_plainly") {
        return;
    }
    let a = format!("ldn{}a", std::process::id());
    let st = Command::new("ip")
        .args([
            "link",
            "add",
            &a,
            "type",
            "veth",
            "peer",
            "name",
            &format!("ldn{}b", std::process::id()),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let v = Veth(a);
    let e = dcbnl::get(&v.0).unwrap_err();
    assert!(matches!(e, DcbError::NotSupported { .. }), "{e:?}");
    assert_eq!(
        e.to_string().split(';').next().unwrap(),
        format!(
            "{} has no DCB support in its driver (dcbnl: Operation not supported)",
            v.0
        )
    );
    let e = dcbnl::set(
        &v.0,
        &DcbSet {
            pfc: Some(IeeePfc {
                pfc_en: 8,
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, DcbError::NotSupported { .. }), "{e:?}");
    // dcb apptrust set dev VETH order dscp pcp: refused by dcbnl before any driver call
    let e = dcbnl::set(
        &v.0,
        &DcbSet {
            apptrust: Some(vec![5, DCB_APP_SEL_PCP]),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, DcbError::NotSupported { .. }), "{e:?}");
    let e = dcbnl::get("nosuchif0").unwrap_err();
    assert!(matches!(e, DcbError::NoDevice { .. }), "{e:?}");
}
