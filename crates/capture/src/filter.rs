//! `--filter pause|pfc|lldp|dcbx|roce|cnp|cnm|ecn`: which decoded frames to show.

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
        }
    }
}

impl FromStr for FrameKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        FrameKind::ALL
            .iter()
            .find(|(n, _)| *n == t)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                format!("unknown frame kind {s:?}; allowed: pause, pfc, lldp, dcbx, roce, cnp, cnm, ecn")
            })
    }
}

/// A set of frame kinds; empty means every frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    kinds: Vec<FrameKind>,
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
        Filter { kinds: v }
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
        self.kinds.is_empty() || self.kinds.iter().any(|k| k.matches(rec))
    }
}
