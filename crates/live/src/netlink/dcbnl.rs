//! dcbnl, sans-IO: the RTM_GETDCB / RTM_SETDCB requests iproute2's `dcb` sends for IEEE
//! 802.1Qaz state (DCB_CMD_IEEE_GET, DCB_CMD_IEEE_SET, DCB_CMD_IEEE_DEL) and the parsing of
//! the kernel's replies, plus [`get`]/[`set`]/[`del_apps`] that do one exchange each.
//!
//! Constants and layouts from the kernel's `include/uapi/linux/dcbnl.h`: `struct dcbmsg`
//! {dcb_family, cmd, dcb_pad}; `enum dcbnl_commands` (DCB_CMD_IEEE_SET = 20, DCB_CMD_IEEE_GET
//! = 21, DCB_CMD_IEEE_DEL = 27); `enum dcbnl_attrs` (DCB_ATTR_IFNAME = 1, DCB_ATTR_IEEE = 13,
//! DCB_ATTR_DCBX = 14); `enum ieee_attrs` (DCB_ATTR_IEEE_ETS = 1, _PFC = 2, _APP_TABLE = 3,
//! _PEER_ETS = 4, _PEER_PFC = 5, _PEER_APP = 6, _MAXRATE = 7); `enum ieee_attrs_app`
//! (DCB_ATTR_IEEE_APP = 1); `struct ieee_ets` (59 bytes), `struct ieee_pfc` (136 bytes: three
//! u8, a u16 at 4, then two `u64[8]` at 8 and 72), `struct dcb_app` {u8 selector, u8 priority,
//! u16 protocol}; IEEE_8021QAZ_TSA_* and IEEE_8021QAZ_APP_SEL_*. RTM_GETDCB = 78 and
//! RTM_SETDCB = 79 from `include/uapi/linux/rtnetlink.h`. The request shapes are those of
//! iproute2's `dcb/dcb.c` (`dcb_get_attribute`, `dcb_set_attribute`, `dcb_set_attribute_va`
//! with libmnl nests), checked byte for byte in the tests against what `dcb` 6.1 sent.
//!
//! The APP selector trust order (iproute2 `dcb apptrust`, Linux 6.2 and later) from the same
//! header as of 6.2: `enum ieee_attrs` DCB_ATTR_DCB_BUFFER = 10, DCB_ATTR_DCB_APP_TRUST_TABLE
//! = 11 (a nest inside DCB_ATTR_IEEE, read by DCB_CMD_IEEE_GET and written by
//! DCB_CMD_IEEE_SET); `enum ieee_attrs_app` DCB_ATTR_DCB_APP = 2; `DCB_APP_SEL_PCP` = 255.
//! Each trusted selector is a u8 attribute, DCB_ATTR_IEEE_APP for the IEEE selectors 1..=5 and
//! DCB_ATTR_DCB_APP for the others (`dcbnl_app_attr_type_get` in `net/dcb/dcbnl.c`), in order
//! of trust, as iproute2's `dcb/dcb_apptrust.c` (`dcb_apptrust_set_cb`) writes them.

use serde::Serialize;

use super::socket::{NETLINK_ROUTE, NetlinkSocket, SocketError};
use super::{Attribute, MessageBuilder, NLM_F_ACK, NLM_F_REQUEST, NetlinkError, attributes};

/// `RTM_GETDCB`.
pub const RTM_GETDCB: u16 = 78;
/// `RTM_SETDCB`.
pub const RTM_SETDCB: u16 = 79;
/// `DCB_CMD_IEEE_SET`.
pub const DCB_CMD_IEEE_SET: u8 = 20;
/// `DCB_CMD_IEEE_GET`.
pub const DCB_CMD_IEEE_GET: u8 = 21;
/// `DCB_CMD_IEEE_DEL`.
pub const DCB_CMD_IEEE_DEL: u8 = 27;
/// `DCB_ATTR_IFNAME`.
pub const DCB_ATTR_IFNAME: u16 = 1;
/// `DCB_ATTR_IEEE`.
pub const DCB_ATTR_IEEE: u16 = 13;
/// `DCB_ATTR_DCBX`.
pub const DCB_ATTR_DCBX: u16 = 14;
/// `DCB_ATTR_IEEE_ETS`.
pub const DCB_ATTR_IEEE_ETS: u16 = 1;
/// `DCB_ATTR_IEEE_PFC`.
pub const DCB_ATTR_IEEE_PFC: u16 = 2;
/// `DCB_ATTR_IEEE_APP_TABLE`.
pub const DCB_ATTR_IEEE_APP_TABLE: u16 = 3;
/// `DCB_ATTR_IEEE_PEER_ETS`.
pub const DCB_ATTR_IEEE_PEER_ETS: u16 = 4;
/// `DCB_ATTR_IEEE_PEER_PFC`.
pub const DCB_ATTR_IEEE_PEER_PFC: u16 = 5;
/// `DCB_ATTR_IEEE_PEER_APP`.
pub const DCB_ATTR_IEEE_PEER_APP: u16 = 6;
/// `DCB_ATTR_IEEE_APP`.
pub const DCB_ATTR_IEEE_APP: u16 = 1;
/// `DCB_ATTR_DCB_APP_TRUST_TABLE` (Linux 6.2): the APP selector trust order.
pub const DCB_ATTR_DCB_APP_TRUST_TABLE: u16 = 11;
/// `DCB_ATTR_DCB_APP` (Linux 6.2): an entry whose selector is not one of IEEE 802.1Q's.
pub const DCB_ATTR_DCB_APP: u16 = 2;
/// `DCB_APP_SEL_PCP`: the non-standard selector of PCP (and DEI) prioritization.
pub const DCB_APP_SEL_PCP: u8 = 255;
/// Most selectors a trust order can hold (`IEEE_8021QAZ_APP_SEL_MAX` + 1).
pub const MAX_TRUST: usize = 256;
/// Bytes of `struct ieee_ets`.
pub const IEEE_ETS_LEN: usize = 59;
/// Bytes of `struct ieee_pfc`.
pub const IEEE_PFC_LEN: usize = 136;
/// Bytes of `struct dcb_app`.
pub const DCB_APP_LEN: usize = 4;
/// Longest interface name (`IFNAMSIZ` - 1).
pub const IFNAME_MAX: usize = 15;
/// Most application entries read from one reply (the kernel's table is a list; this bounds
/// what a malformed or hostile reply can make us keep).
pub const MAX_APPS: usize = 1024;

/// `struct ieee_ets`, field for field (iproute2 `dcb ets` names in the docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IeeeEts {
    /// `willing`.
    pub willing: u8,
    /// `ets_cap`: traffic classes the device supports.
    pub ets_cap: u8,
    /// `cbs`: credit-based shaper supported.
    pub cbs: u8,
    /// `tc_tx_bw` (`tc-bw`): percent per TC.
    pub tc_tx_bw: [u8; 8],
    /// `tc_rx_bw`.
    pub tc_rx_bw: [u8; 8],
    /// `tc_tsa` (`tc-tsa`): IEEE_8021QAZ_TSA_* per TC.
    pub tc_tsa: [u8; 8],
    /// `prio_tc` (`prio-tc`): TC of each priority.
    pub prio_tc: [u8; 8],
    /// `tc_reco_bw` (`reco-tc-bw`).
    pub tc_reco_bw: [u8; 8],
    /// `tc_reco_tsa` (`reco-tc-tsa`).
    pub tc_reco_tsa: [u8; 8],
    /// `reco_prio_tc` (`reco-prio-tc`).
    pub reco_prio_tc: [u8; 8],
}

impl IeeeEts {
    /// The 59 bytes of `struct ieee_ets`.
    pub fn to_bytes(&self) -> [u8; IEEE_ETS_LEN] {
        let mut b = [0u8; IEEE_ETS_LEN];
        b[0] = self.willing;
        b[1] = self.ets_cap;
        b[2] = self.cbs;
        for (i, a) in [
            &self.tc_tx_bw,
            &self.tc_rx_bw,
            &self.tc_tsa,
            &self.prio_tc,
            &self.tc_reco_bw,
            &self.tc_reco_tsa,
            &self.reco_prio_tc,
        ]
        .into_iter()
        .enumerate()
        {
            b[3 + 8 * i..11 + 8 * i].copy_from_slice(a);
        }
        b
    }
    /// Reads `struct ieee_ets` (at least 59 bytes).
    pub fn parse(b: &[u8]) -> Result<Self, NetlinkError> {
        if b.len() < IEEE_ETS_LEN {
            return Err(NetlinkError::Short {
                what: "struct ieee_ets",
                found: b.len(),
                needed: IEEE_ETS_LEN,
            });
        }
        let arr = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[3 + 8 * i..11 + 8 * i]);
            a
        };
        Ok(IeeeEts {
            willing: b[0],
            ets_cap: b[1],
            cbs: b[2],
            tc_tx_bw: arr(0),
            tc_rx_bw: arr(1),
            tc_tsa: arr(2),
            prio_tc: arr(3),
            tc_reco_bw: arr(4),
            tc_reco_tsa: arr(5),
            reco_prio_tc: arr(6),
        })
    }
}

/// `struct ieee_pfc`, field for field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IeeePfc {
    /// `pfc_cap` (`pfc-cap`): priorities that can be PFC-enabled at once.
    pub pfc_cap: u8,
    /// `pfc_en` (`prio-pfc`): bit p set when priority p is PFC-enabled.
    pub pfc_en: u8,
    /// `mbc` (`macsec-bypass`).
    pub mbc: u8,
    /// `delay` (`delay`): allowance for the link's delay, bit times.
    pub delay: u16,
    /// `requests`: PFC frames sent per priority (the driver's counters).
    pub requests: [u64; 8],
    /// `indications`: PFC frames received per priority.
    pub indications: [u64; 8],
}

impl IeeePfc {
    /// The 136 bytes of `struct ieee_pfc` (host byte order, C layout).
    pub fn to_bytes(&self) -> [u8; IEEE_PFC_LEN] {
        let mut b = [0u8; IEEE_PFC_LEN];
        b[0] = self.pfc_cap;
        b[1] = self.pfc_en;
        b[2] = self.mbc;
        b[4..6].copy_from_slice(&self.delay.to_ne_bytes());
        for i in 0..8 {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&self.requests[i].to_ne_bytes());
            b[72 + 8 * i..80 + 8 * i].copy_from_slice(&self.indications[i].to_ne_bytes());
        }
        b
    }
    /// Reads `struct ieee_pfc` (at least 136 bytes).
    pub fn parse(b: &[u8]) -> Result<Self, NetlinkError> {
        if b.len() < IEEE_PFC_LEN {
            return Err(NetlinkError::Short {
                what: "struct ieee_pfc",
                found: b.len(),
                needed: IEEE_PFC_LEN,
            });
        }
        let u64_at = |at: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[at..at + 8]);
            u64::from_ne_bytes(a)
        };
        let mut p = IeeePfc {
            pfc_cap: b[0],
            pfc_en: b[1],
            mbc: b[2],
            delay: u16::from_ne_bytes([b[4], b[5]]),
            ..Default::default()
        };
        for i in 0..8 {
            p.requests[i] = u64_at(8 + 8 * i);
            p.indications[i] = u64_at(72 + 8 * i);
        }
        Ok(p)
    }
}

/// `struct dcb_app`: one Application Priority entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DcbApp {
    /// `selector`: IEEE_8021QAZ_APP_SEL_* (1 EtherType, 2 TCP, 3 UDP, 4 TCP or UDP, 5 DSCP).
    pub selector: u8,
    /// `priority`.
    pub priority: u8,
    /// `protocol`: the EtherType, port or DSCP.
    pub protocol: u16,
}

impl DcbApp {
    /// The 4 bytes of `struct dcb_app`.
    pub fn to_bytes(&self) -> [u8; DCB_APP_LEN] {
        let p = self.protocol.to_ne_bytes();
        [self.selector, self.priority, p[0], p[1]]
    }
}

/// An interface's IEEE DCB state as DCB_CMD_IEEE_GET reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DcbState {
    /// The interface.
    pub ifname: String,
    /// Local (operational) ETS, if the driver reports it.
    pub ets: Option<IeeeEts>,
    /// Local PFC, if the driver reports it.
    pub pfc: Option<IeeePfc>,
    /// The Application Priority table.
    pub apps: Vec<DcbApp>,
    /// The peer's ETS, if the driver's own DCBX agent learned one.
    pub peer_ets: Option<IeeeEts>,
    /// The peer's PFC, likewise.
    pub peer_pfc: Option<IeeePfc>,
    /// The APP selector trust order, most trusted first (`None`: the reply had no
    /// DCB_ATTR_DCB_APP_TRUST_TABLE — a kernel before 6.2 or a driver without
    /// `dcbnl_getapptrust`).
    pub apptrust: Option<Vec<u8>>,
    /// The DCBX mode bits (`DCB_ATTR_DCBX`: DCB_CAP_DCBX_HOST 0x1, LLD_MANAGED 0x2,
    /// VER_CEE 0x4, VER_IEEE 0x8, STATIC 0x10).
    pub dcbx: Option<u8>,
}

/// What a DCB_CMD_IEEE_SET carries (each part optional, as `dcb` sets one at a time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DcbSet {
    /// ETS to program.
    pub ets: Option<IeeeEts>,
    /// PFC to program.
    pub pfc: Option<IeeePfc>,
    /// Application entries to add.
    pub apps: Vec<DcbApp>,
    /// The APP selector trust order to program, most trusted first (`Some(vec![])`: trust
    /// none).
    pub apptrust: Option<Vec<u8>>,
}

/// The attribute type a selector is carried in, in an application or trust table: the IEEE
/// selectors 1..=5 in DCB_ATTR_IEEE_APP, the others (PCP) in DCB_ATTR_DCB_APP
/// (`dcbnl_app_attr_type_get`).
pub fn app_attr_type(selector: u8) -> u16 {
    if (1..=5).contains(&selector) {
        DCB_ATTR_IEEE_APP
    } else {
        DCB_ATTR_DCB_APP
    }
}

/// Why an interface name cannot be put in a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("interface name {0:?} is not a Linux interface name (1 to 15 bytes, no NUL, '/' or whitespace)")]
pub struct BadIfname(pub String);

fn check_ifname(ifname: &str) -> Result<(), BadIfname> {
    if ifname.is_empty()
        || ifname.len() > IFNAME_MAX
        || ifname
            .bytes()
            .any(|b| b == 0 || b == b'/' || b.is_ascii_whitespace())
    {
        return Err(BadIfname(ifname.to_owned()));
    }
    Ok(())
}

fn header(kind: u16, cmd: u8, seq: u32, ifname: &str) -> Result<MessageBuilder, BadIfname> {
    check_ifname(ifname)?;
    let mut b = MessageBuilder::new(kind, NLM_F_REQUEST | NLM_F_ACK, seq);
    // struct dcbmsg { __u8 dcb_family (AF_UNSPEC); __u8 cmd; __u16 dcb_pad; }
    b.raw(&[libc::AF_UNSPEC as u8, cmd, 0, 0]);
    b.attr_str(DCB_ATTR_IFNAME, ifname);
    Ok(b)
}

/// The DCB_CMD_IEEE_GET request for `ifname` (what `dcb ets show dev IF` sends).
pub fn get_request(ifname: &str, seq: u32) -> Result<Vec<u8>, BadIfname> {
    Ok(header(RTM_GETDCB, DCB_CMD_IEEE_GET, seq, ifname)?.finish())
}

fn put_apps(b: &mut MessageBuilder, apps: &[DcbApp]) {
    b.nest(DCB_ATTR_IEEE_APP_TABLE);
    for a in apps {
        b.attr(DCB_ATTR_IEEE_APP, &a.to_bytes());
    }
    b.end_nest();
}

/// The DCB_CMD_IEEE_SET request: DCB_ATTR_IEEE nesting ETS, PFC and the application table
/// (whichever `set` carries), as `dcb ets set` / `dcb pfc set` / `dcb app add` send them.
pub fn set_request(ifname: &str, seq: u32, set: &DcbSet) -> Result<Vec<u8>, BadIfname> {
    let mut b = header(RTM_SETDCB, DCB_CMD_IEEE_SET, seq, ifname)?;
    b.nest(DCB_ATTR_IEEE);
    if let Some(e) = &set.ets {
        b.attr(DCB_ATTR_IEEE_ETS, &e.to_bytes());
    }
    if let Some(p) = &set.pfc {
        b.attr(DCB_ATTR_IEEE_PFC, &p.to_bytes());
    }
    if !set.apps.is_empty() {
        put_apps(&mut b, &set.apps);
    }
    if let Some(order) = &set.apptrust {
        b.nest(DCB_ATTR_DCB_APP_TRUST_TABLE);
        for &sel in order {
            b.attr(app_attr_type(sel), &[sel]);
        }
        b.end_nest();
    }
    b.end_nest();
    Ok(b.finish())
}

/// The DCB_CMD_IEEE_DEL request removing `apps` (what `dcb app del` sends).
pub fn del_apps_request(ifname: &str, seq: u32, apps: &[DcbApp]) -> Result<Vec<u8>, BadIfname> {
    let mut b = header(RTM_SETDCB, DCB_CMD_IEEE_DEL, seq, ifname)?;
    b.nest(DCB_ATTR_IEEE);
    put_apps(&mut b, apps);
    b.end_nest();
    Ok(b.finish())
}

fn parse_app_table(a: &Attribute<'_>, into: &mut Vec<DcbApp>) -> Result<(), NetlinkError> {
    for e in a.children()? {
        if e.kind != DCB_ATTR_IEEE_APP {
            continue;
        }
        if e.payload.len() < DCB_APP_LEN {
            return Err(NetlinkError::Short {
                what: "struct dcb_app",
                found: e.payload.len(),
                needed: DCB_APP_LEN,
            });
        }
        if into.len() >= MAX_APPS {
            return Err(NetlinkError::Unexpected(format!(
                "more than {MAX_APPS} application priority entries"
            )));
        }
        into.push(DcbApp {
            selector: e.payload[0],
            priority: e.payload[1],
            protocol: u16::from_ne_bytes([e.payload[2], e.payload[3]]),
        });
    }
    Ok(())
}

fn parse_trust_table(a: &Attribute<'_>) -> Result<Vec<u8>, NetlinkError> {
    let mut order = Vec::new();
    for e in a.children()? {
        if e.kind != DCB_ATTR_IEEE_APP && e.kind != DCB_ATTR_DCB_APP {
            continue;
        }
        let Some(&sel) = e.payload.first() else {
            return Err(NetlinkError::Short {
                what: "trusted selector (u8)",
                found: 0,
                needed: 1,
            });
        };
        if app_attr_type(sel) != e.kind {
            return Err(NetlinkError::Unexpected(format!(
                "trusted selector {sel} in attribute type {}, {} expected",
                e.kind,
                app_attr_type(sel)
            )));
        }
        if order.len() >= MAX_TRUST {
            return Err(NetlinkError::Unexpected(format!(
                "more than {MAX_TRUST} trusted selectors"
            )));
        }
        order.push(sel);
    }
    Ok(order)
}

/// Reads the payload of the kernel's RTM_GETDCB reply to DCB_CMD_IEEE_GET (after the
/// netlink header: `struct dcbmsg` then attributes).
pub fn parse_get_reply(payload: &[u8]) -> Result<DcbState, NetlinkError> {
    if payload.len() < 4 {
        return Err(NetlinkError::Short {
            what: "struct dcbmsg",
            found: payload.len(),
            needed: 4,
        });
    }
    if payload[1] != DCB_CMD_IEEE_GET {
        return Err(NetlinkError::Unexpected(format!(
            "dcbnl reply to command {}, DCB_CMD_IEEE_GET ({DCB_CMD_IEEE_GET}) expected",
            payload[1]
        )));
    }
    let mut st = DcbState::default();
    for a in attributes(&payload[4..])? {
        match a.kind {
            DCB_ATTR_IFNAME => st.ifname = a.string(),
            DCB_ATTR_DCBX => st.dcbx = a.payload.first().copied(),
            DCB_ATTR_IEEE => {
                for i in a.children()? {
                    match i.kind {
                        DCB_ATTR_IEEE_ETS => st.ets = Some(IeeeEts::parse(i.payload)?),
                        DCB_ATTR_IEEE_PFC => st.pfc = Some(IeeePfc::parse(i.payload)?),
                        DCB_ATTR_IEEE_APP_TABLE => parse_app_table(&i, &mut st.apps)?,
                        DCB_ATTR_IEEE_PEER_ETS => st.peer_ets = Some(IeeeEts::parse(i.payload)?),
                        DCB_ATTR_IEEE_PEER_PFC => st.peer_pfc = Some(IeeePfc::parse(i.payload)?),
                        DCB_ATTR_DCB_APP_TRUST_TABLE => st.apptrust = Some(parse_trust_table(&i)?),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(st)
}

/// Reads the status the kernel puts in its RTM_SETDCB reply (`DCB_ATTR_IEEE` as a u8: 0, or
/// the low byte of the driver's negative errno — `dcbnl_ieee_set` acknowledges the request
/// even when the driver refused a part). `Err(Kernel{errno})` for a refusal.
pub fn parse_set_reply(payload: &[u8]) -> Result<(), NetlinkError> {
    if payload.len() < 4 {
        return Err(NetlinkError::Short {
            what: "struct dcbmsg",
            found: payload.len(),
            needed: 4,
        });
    }
    for a in attributes(&payload[4..])? {
        if a.kind == DCB_ATTR_IEEE
            && let Some(&s) = a.payload.first()
            && s != 0
        {
            return Err(NetlinkError::Kernel {
                errno: -i32::from(s as i8),
            });
        }
    }
    Ok(())
}

/// Why a dcbnl request on an interface failed, said so an operator can act.
#[derive(Debug, thiserror::Error)]
pub enum DcbError {
    /// The name cannot be an interface.
    #[error(transparent)]
    Ifname(#[from] BadIfname),
    /// The interface's driver has no dcbnl operations (veth, most virtual devices, NICs
    /// without DCB).
    #[error(
        "{iface} has no DCB support in its driver (dcbnl: Operation not supported); DCB needs a \
         NIC whose driver implements dcbnl (mlx5_core, bnxt_en, ice, i40e, ixgbe, …), and frames \
         alone (lossless gen/watch) work on any interface"
    )]
    NotSupported {
        /// The interface.
        iface: String,
    },
    /// No such interface.
    #[error("no interface named {iface} (dcbnl: No such device)")]
    NoDevice {
        /// The interface.
        iface: String,
    },
    /// Setting needs CAP_NET_ADMIN.
    #[error("changing {iface}'s DCB state needs CAP_NET_ADMIN (dcbnl: Operation not permitted): run as root")]
    NotPermitted {
        /// The interface.
        iface: String,
    },
    /// Any other failure.
    #[error("{iface}: dcbnl {what}: {source}")]
    Other {
        /// The interface.
        iface: String,
        /// The request.
        what: &'static str,
        /// What went wrong.
        source: SocketError,
    },
}

fn classify(iface: &str, what: &'static str, e: SocketError) -> DcbError {
    let iface = iface.to_owned();
    match e.errno() {
        Some(libc::EOPNOTSUPP) => DcbError::NotSupported { iface },
        Some(libc::ENODEV) => DcbError::NoDevice { iface },
        Some(libc::EPERM) => DcbError::NotPermitted { iface },
        _ => DcbError::Other {
            iface,
            what,
            source: e,
        },
    }
}

/// Reads `iface`'s IEEE DCB state from the kernel (DCB_CMD_IEEE_GET).
pub fn get(iface: &str) -> Result<DcbState, DcbError> {
    let fail = |e| classify(iface, "DCB_CMD_IEEE_GET", e);
    let mut s = NetlinkSocket::open(NETLINK_ROUTE).map_err(fail)?;
    let seq = s.next_seq();
    let req = get_request(iface, seq)?;
    let replies = s.request(&req, seq).map_err(fail)?;
    for (kind, payload) in replies {
        if kind == RTM_GETDCB {
            return parse_get_reply(&payload).map_err(|e| fail(e.into()));
        }
    }
    Err(fail(
        NetlinkError::Unexpected("no RTM_GETDCB reply".into()).into(),
    ))
}

fn exchange(
    iface: &str,
    what: &'static str,
    req: &[u8],
    seq: u32,
    s: &NetlinkSocket,
) -> Result<(), DcbError> {
    let fail = |e| classify(iface, what, e);
    for (kind, payload) in s.request(req, seq).map_err(fail)? {
        if kind == RTM_SETDCB {
            parse_set_reply(&payload).map_err(|e| fail(e.into()))?;
        }
    }
    Ok(())
}

/// Programs `set` on `iface` (DCB_CMD_IEEE_SET).
pub fn set(iface: &str, set: &DcbSet) -> Result<(), DcbError> {
    let mut s = NetlinkSocket::open(NETLINK_ROUTE).map_err(|e| classify(iface, "DCB_CMD_IEEE_SET", e))?;
    let seq = s.next_seq();
    let req = set_request(iface, seq, set)?;
    exchange(iface, "DCB_CMD_IEEE_SET", &req, seq, &s)
}

/// Removes `apps` from `iface`'s application table (DCB_CMD_IEEE_DEL).
pub fn del_apps(iface: &str, apps: &[DcbApp]) -> Result<(), DcbError> {
    let mut s = NetlinkSocket::open(NETLINK_ROUTE).map_err(|e| classify(iface, "DCB_CMD_IEEE_DEL", e))?;
    let seq = s.next_seq();
    let req = del_apps_request(iface, seq, apps)?;
    exchange(iface, "DCB_CMD_IEEE_DEL", &req, seq, &s)
}
