//! ethtool's netlink interface, sans-IO: the generic-netlink family lookup and
//! ETHTOOL_MSG_PAUSE_GET with ETHTOOL_FLAG_STATS (what `ethtool -I -a IF` asks), whose reply
//! carries the standard 802.3 PAUSE counters (IEEE 802.3 30.3.4.2 aPAUSEMACCtrlFramesTransmitted,
//! 30.3.4.3 aPAUSEMACCtrlFramesReceived) when the driver implements `get_pause_stats`.
//!
//! Constants from the kernel's `include/uapi/linux/ethtool_netlink.h` (ETHTOOL_GENL_NAME
//! "ethtool", ETHTOOL_GENL_VERSION 1, ETHTOOL_MSG_PAUSE_GET = 21, ETHTOOL_MSG_PAUSE_GET_REPLY =
//! 22, ETHTOOL_A_HEADER_DEV_NAME = 2, ETHTOOL_A_HEADER_FLAGS = 3, ETHTOOL_FLAG_STATS = 1 << 2,
//! ETHTOOL_A_PAUSE_HEADER = 1, _AUTONEG = 2, _RX = 3, _TX = 4, _STATS = 5,
//! ETHTOOL_A_PAUSE_STAT_TX_FRAMES = 2, _RX_FRAMES = 3) and `include/uapi/linux/genetlink.h`.

use serde::Serialize;

use super::socket::{NETLINK_GENERIC, NetlinkSocket, SocketError};
use super::{MessageBuilder, NLM_F_ACK, NLM_F_REQUEST, NetlinkError, attributes};

/// `GENL_ID_CTRL`: the controller family.
pub const GENL_ID_CTRL: u16 = 16;
/// `CTRL_CMD_GETFAMILY`.
pub const CTRL_CMD_GETFAMILY: u8 = 3;
/// `CTRL_ATTR_FAMILY_ID`.
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
/// `CTRL_ATTR_FAMILY_NAME`.
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// `ETHTOOL_GENL_NAME`.
pub const ETHTOOL_GENL_NAME: &str = "ethtool";
/// `ETHTOOL_GENL_VERSION`.
pub const ETHTOOL_GENL_VERSION: u8 = 1;
/// `ETHTOOL_MSG_PAUSE_GET`.
pub const ETHTOOL_MSG_PAUSE_GET: u8 = 21;
/// `ETHTOOL_MSG_PAUSE_GET_REPLY`.
pub const ETHTOOL_MSG_PAUSE_GET_REPLY: u8 = 22;
/// `ETHTOOL_A_HEADER_DEV_NAME`.
pub const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;
/// `ETHTOOL_A_HEADER_FLAGS`.
pub const ETHTOOL_A_HEADER_FLAGS: u16 = 3;
/// `ETHTOOL_FLAG_STATS`.
pub const ETHTOOL_FLAG_STATS: u32 = 1 << 2;
/// `ETHTOOL_A_PAUSE_HEADER`.
pub const ETHTOOL_A_PAUSE_HEADER: u16 = 1;
/// `ETHTOOL_A_PAUSE_AUTONEG`.
pub const ETHTOOL_A_PAUSE_AUTONEG: u16 = 2;
/// `ETHTOOL_A_PAUSE_RX`.
pub const ETHTOOL_A_PAUSE_RX: u16 = 3;
/// `ETHTOOL_A_PAUSE_TX`.
pub const ETHTOOL_A_PAUSE_TX: u16 = 4;
/// `ETHTOOL_A_PAUSE_STATS`.
pub const ETHTOOL_A_PAUSE_STATS: u16 = 5;
/// `ETHTOOL_A_PAUSE_STAT_TX_FRAMES`.
pub const ETHTOOL_A_PAUSE_STAT_TX_FRAMES: u16 = 2;
/// `ETHTOOL_A_PAUSE_STAT_RX_FRAMES`.
pub const ETHTOOL_A_PAUSE_STAT_RX_FRAMES: u16 = 3;

fn genl(kind: u16, cmd: u8, version: u8, seq: u32) -> MessageBuilder {
    let mut b = MessageBuilder::new(kind, NLM_F_REQUEST | NLM_F_ACK, seq);
    // struct genlmsghdr { __u8 cmd; __u8 version; __u16 reserved; }
    b.raw(&[cmd, version, 0, 0]);
    b
}

/// The CTRL_CMD_GETFAMILY request for `name`.
pub fn family_request(name: &str, seq: u32) -> Vec<u8> {
    let mut b = genl(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, seq);
    b.attr_str(CTRL_ATTR_FAMILY_NAME, name);
    b.finish()
}

/// The family id in the controller's reply payload (after the netlink header).
pub fn parse_family_reply(payload: &[u8]) -> Result<u16, NetlinkError> {
    let attrs = attributes(payload.get(4..).unwrap_or(&[]))?;
    attrs
        .iter()
        .find(|a| a.kind == CTRL_ATTR_FAMILY_ID)
        .and_then(|a| a.u16())
        .ok_or_else(|| NetlinkError::Unexpected("family reply without CTRL_ATTR_FAMILY_ID".into()))
}

/// The ETHTOOL_MSG_PAUSE_GET request with statistics for `ifname`, to family `family`.
pub fn pause_request(family: u16, ifname: &str, seq: u32) -> Vec<u8> {
    let mut b = genl(family, ETHTOOL_MSG_PAUSE_GET, ETHTOOL_GENL_VERSION, seq);
    b.nest(ETHTOOL_A_PAUSE_HEADER)
        .attr_str(ETHTOOL_A_HEADER_DEV_NAME, ifname)
        .attr(ETHTOOL_A_HEADER_FLAGS, &ETHTOOL_FLAG_STATS.to_ne_bytes())
        .end_nest();
    b.finish()
}

/// What ETHTOOL_MSG_PAUSE_GET reports: the pause settings and the standard counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PauseInfo {
    /// Pause autonegotiation on.
    pub autoneg: Option<bool>,
    /// Honours received PAUSE.
    pub rx: Option<bool>,
    /// Sends PAUSE.
    pub tx: Option<bool>,
    /// `tx_pause_frames` (ETHTOOL_A_PAUSE_STAT_TX_FRAMES), when the driver counts it.
    pub tx_pause_frames: Option<u64>,
    /// `rx_pause_frames` (ETHTOOL_A_PAUSE_STAT_RX_FRAMES), when the driver counts it.
    pub rx_pause_frames: Option<u64>,
}

/// Reads the payload of an ETHTOOL_MSG_PAUSE_GET_REPLY (after the netlink header).
pub fn parse_pause_reply(payload: &[u8]) -> Result<PauseInfo, NetlinkError> {
    let Some(&cmd) = payload.first() else {
        return Err(NetlinkError::Short {
            what: "struct genlmsghdr",
            found: 0,
            needed: 4,
        });
    };
    if cmd != ETHTOOL_MSG_PAUSE_GET_REPLY {
        return Err(NetlinkError::Unexpected(format!(
            "ethtool reply command {cmd}, ETHTOOL_MSG_PAUSE_GET_REPLY ({ETHTOOL_MSG_PAUSE_GET_REPLY}) expected"
        )));
    }
    let mut p = PauseInfo::default();
    let flag = |a: &super::Attribute<'_>| a.payload.first().map(|&v| v != 0);
    for a in attributes(payload.get(4..).unwrap_or(&[]))? {
        match a.kind {
            ETHTOOL_A_PAUSE_AUTONEG => p.autoneg = flag(&a),
            ETHTOOL_A_PAUSE_RX => p.rx = flag(&a),
            ETHTOOL_A_PAUSE_TX => p.tx = flag(&a),
            ETHTOOL_A_PAUSE_STATS => {
                for s in a.children()? {
                    match s.kind {
                        ETHTOOL_A_PAUSE_STAT_TX_FRAMES => p.tx_pause_frames = s.u64(),
                        ETHTOOL_A_PAUSE_STAT_RX_FRAMES => p.rx_pause_frames = s.u64(),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(p)
}

/// A socket that asks ethtool's netlink family (resolved once).
#[derive(Debug)]
pub struct EthtoolNetlink {
    sock: NetlinkSocket,
    family: u16,
}

impl EthtoolNetlink {
    /// Opens a generic-netlink socket and resolves the "ethtool" family.
    pub fn open() -> Result<Self, SocketError> {
        let mut sock = NetlinkSocket::open(NETLINK_GENERIC)?;
        let seq = sock.next_seq();
        let replies = sock.request(&family_request(ETHTOOL_GENL_NAME, seq), seq)?;
        let payload = replies
            .first()
            .map(|(_, p)| p.as_slice())
            .ok_or_else(|| NetlinkError::Unexpected("no reply to CTRL_CMD_GETFAMILY".into()))?;
        let family = parse_family_reply(payload)?;
        Ok(EthtoolNetlink { sock, family })
    }

    /// ETHTOOL_MSG_PAUSE_GET with statistics for `ifname` (`Err` with EOPNOTSUPP when the
    /// driver has no pause settings, as veth).
    pub fn pause(&mut self, ifname: &str) -> Result<PauseInfo, SocketError> {
        let seq = self.sock.next_seq();
        let replies = self.sock.request(&pause_request(self.family, ifname, seq), seq)?;
        let payload = replies
            .iter()
            .find(|(k, _)| *k == self.family)
            .map(|(_, p)| p.as_slice())
            .ok_or_else(|| NetlinkError::Unexpected("no ETHTOOL_MSG_PAUSE_GET_REPLY".into()))?;
        Ok(parse_pause_reply(payload)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_reply_with_stats_gives_both_counters() {
        // as the kernel builds it (net/ethtool/pause.c pause_fill_reply / pause_put_stats)
        let mut b = MessageBuilder::new(30, 0, 1);
        b.raw(&[ETHTOOL_MSG_PAUSE_GET_REPLY, 1, 0, 0]);
        b.nest(ETHTOOL_A_PAUSE_HEADER)
            .attr(1, &7u32.to_ne_bytes())
            .attr_str(2, "eth0")
            .end_nest();
        b.attr(ETHTOOL_A_PAUSE_AUTONEG, &[1])
            .attr(ETHTOOL_A_PAUSE_RX, &[1])
            .attr(ETHTOOL_A_PAUSE_TX, &[0]);
        b.nest(ETHTOOL_A_PAUSE_STATS)
            .attr(ETHTOOL_A_PAUSE_STAT_TX_FRAMES, &12u64.to_ne_bytes())
            .attr(ETHTOOL_A_PAUSE_STAT_RX_FRAMES, &34u64.to_ne_bytes())
            .end_nest();
        let m = b.finish();
        let p = parse_pause_reply(&m[16..]).unwrap();
        assert_eq!(
            p,
            PauseInfo {
                autoneg: Some(true),
                rx: Some(true),
                tx: Some(false),
                tx_pause_frames: Some(12),
                rx_pause_frames: Some(34)
            }
        );
    }

    #[test]
    fn a_pause_request_asks_for_statistics_by_name() {
        let m = pause_request(30, "eth0", 5);
        let msgs = super::super::parse_messages(&m).unwrap();
        assert_eq!(msgs[0].kind, 30);
        assert_eq!(&msgs[0].payload[..2], &[ETHTOOL_MSG_PAUSE_GET, 1]);
        let a = attributes(&msgs[0].payload[4..]).unwrap();
        let h = a[0].children().unwrap();
        assert_eq!(h[0].string(), "eth0");
        assert_eq!(h[1].u32(), Some(ETHTOOL_FLAG_STATS));
    }
}
