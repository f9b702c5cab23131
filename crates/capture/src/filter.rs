//! `--filter pause|pfc|lldp|dcbx|roce|cnp|cnm|ecn|dscp=D|prio=P`: which decoded frames to
//! show. `prio=P` selects by the priority a switch would give the frame: its outer 802.1Q
//! PCP (untagged: 0), or, under `--trust dscp` ([`Filter::trust_dscp`]), its IP DSCP's
//! priority by a DSCP → priority map.

use std::str::FromStr;

use crate::model::{FrameRecord, Protocol};

/// One kind of frame that a filter selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// 802.3 PAUSE frames (MAC Control opcode 0x0001).
    Pause,
    /// 802.1Qbb PFC frames (MAC Control opcode 0x0101).
    Pfc,
    /// Every LLDP frame.
    Lldp,
    /// LLDP frames that carry a DCBX TLV (IEEE 802.1Qaz/Qau or CEE).
    Dcbx,
    /// Every RoCEv2 frame (UDP port 4791), CNPs included.
    Roce,
    /// RoCEv2 Congestion Notification Packets (BTH opcode 0x81).
    Cnp,
    /// 802.1Qau Congestion Notification Messages (EtherType 0x22E7).
    Cnm,
    /// IPv4/IPv6 frames a switch marked Congestion Experienced (ECN = CE).
    Ecn,
    /// IPv4/IPv6 frames with this DSCP (`dscp=26`).
    Dscp(u8),
    /// Frames of this priority (`prio=3`): the outer PCP, or the DSCP's under DSCP trust.
    Priority(u8),
}

/// The ConnectX default DSCP → priority map (DSCP d → priority d / 8), what `--trust dscp`
/// uses unless a map is given.
pub const DEFAULT_DSCP_MAP: [u8; 64] = {
    let mut m = [0u8; 64];
    let mut d = 0;
    while d < 64 {
        m[d] = (d / 8) as u8;
        d += 1;
    }
    m
};

/// `--dscp2prio D=P,...` entries over [`DEFAULT_DSCP_MAP`] (as `mlnx_qos --dscp2prio set,D,P`
/// sets them one by one).
pub fn parse_dscp2prio<'a>(lists: impl IntoIterator<Item = &'a str>) -> Result<[u8; 64], String> {
    let mut m = DEFAULT_DSCP_MAP;
    for list in lists {
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((d, p)) = item.split_once('=') else {
                return Err(format!("found {item:?}; expected DSCP=PRIORITY such as 26=3"));
            };
            let d = match d.trim().parse::<u8>() {
                Ok(d) if d <= 63 => d,
                _ => return Err(format!("DSCP {:?} in {item:?}; allowed 0..=63", d.trim())),
            };
            let p = match p.trim().parse::<u8>() {
                Ok(p) if p <= 7 => p,
                _ => return Err(format!("priority {:?} in {item:?}; allowed 0..=7", p.trim())),
            };
            m[usize::from(d)] = p;
        }
    }
    Ok(m)
}

/// The priority of `rec`: under DSCP trust (`map`) an IP frame's DSCP's, else its outer
/// tag's PCP (untagged: 0).
pub fn priority_of(rec: &FrameRecord, map: Option<&[u8; 64]>) -> u8 {
    if let (Some(m), Some(ip)) = (map, rec.ip.as_ref()) {
        return m[usize::from(ip.dscp & 63)];
    }
    rec.eth.as_ref().and_then(|e| e.vlan.first()).map_or(0, |t| t.pcp)
}

impl FrameKind {
    /// Every kind, with the name `--filter` takes.
    pub const ALL: [(&'static str, FrameKind); 8] = [
        ("pause", FrameKind::Pause),
        ("pfc", FrameKind::Pfc),
        ("lldp", FrameKind::Lldp),
        ("dcbx", FrameKind::Dcbx),
        ("roce", FrameKind::Roce),
        ("cnp", FrameKind::Cnp),
        ("cnm", FrameKind::Cnm),
        ("ecn", FrameKind::Ecn),
    ];

    /// Whether `rec` is of this kind.
    pub fn matches(self, rec: &FrameRecord) -> bool {
        match self {
            FrameKind::Pause => rec.protocol == Protocol::Pause,
            FrameKind::Pfc => rec.protocol == Protocol::Pfc,
            FrameKind::Lldp => rec.protocol == Protocol::Lldp,
            FrameKind::Dcbx => rec.lldp.as_ref().is_some_and(|l| l.has_dcbx()),
            FrameKind::Roce => matches!(rec.protocol, Protocol::Roce | Protocol::Cnp),
            FrameKind::Cnp => rec.protocol == Protocol::Cnp,
            FrameKind::Cnm => rec.protocol == Protocol::Cnm,
            FrameKind::Ecn => rec.ip.as_ref().is_some_and(|ip| ip.ecn == 3),
            FrameKind::Dscp(d) => rec.ip.as_ref().is_some_and(|ip| ip.dscp == d),
            FrameKind::Priority(p) => priority_of(rec, None) == p,
        }
    }
}

impl FromStr for FrameKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        let number = |v: &str, max: u8, what: &str| match v.trim().parse::<u8>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!("{what} {v:?} in {s:?}; allowed 0..={max}")),
        };
        if let Some(v) = t.strip_prefix("dscp=") {
            return number(v, 63, "DSCP").map(FrameKind::Dscp);
        }
        if let Some(v) = t.strip_prefix("prio=") {
            return number(v, 7, "priority").map(FrameKind::Priority);
        }
        FrameKind::ALL
            .iter()
            .find(|(n, _)| *n == t)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                format!("unknown frame kind {s:?}; allowed: pause, pfc, lldp, dcbx, roce, cnp, cnm, ecn, dscp=0..63, prio=0..7")
            })
    }
}

/// A set of frame kinds; empty means every frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    kinds: Vec<FrameKind>,
    /// Under DSCP trust, the DSCP → priority map `prio=P` selects by.
    dscp_map: Option<[u8; 64]>,
}

impl Filter {
    /// A filter selecting frames of any of `kinds` (every frame when `kinds` is empty).
    pub fn new(kinds: impl IntoIterator<Item = FrameKind>) -> Self {
        let mut v: Vec<FrameKind> = Vec::new();
        for k in kinds {
            if !v.contains(&k) {
                v.push(k);
            }
        }
        Filter {
            kinds: v,
            dscp_map: None,
        }
    }

    /// The same filter with `prio=P` selecting IP frames by their DSCP's priority under `map`
    /// (`--trust dscp`); frames without an IP header keep their PCP.
    pub fn trust_dscp(mut self, map: [u8; 64]) -> Self {
        self.dscp_map = Some(map);
        self
    }

    /// Parses comma-separated lists such as `pfc,dcbx`, as `--filter` takes them.
    pub fn parse_lists<'a>(lists: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut kinds = Vec::new();
        for list in lists {
            for item in list.split(',').filter(|i| !i.trim().is_empty()) {
                kinds.push(item.parse()?);
            }
        }
        Ok(Filter::new(kinds))
    }

    /// Whether `rec` is shown.
    pub fn accepts(&self, rec: &FrameRecord) -> bool {
        self.kinds.is_empty()
            || self.kinds.iter().any(|k| match k {
                FrameKind::Priority(p) => priority_of(rec, self.dscp_map.as_ref()) == *p,
                k => k.matches(rec),
            })
    }
}
