//! How a port decides a received frame's priority: by its 802.1Q PCP (the default) or by the
//! DSCP of its IP header through a DSCP → priority map (SONiC's `DSCP_TO_TC_MAP` bound in
//! `PORT_QOS_MAP`, `mlnx_qos --trust dscp --dscp2prio`).

/// DSCP of RoCEv2 data packets and their ACK/NAK replies unless a QP says otherwise (NVIDIA's
/// usual RoCE DSCP, priority 3 under the ConnectX default map).
pub const ROCE_DSCP: u8 = 26;

/// DSCP of CNPs unless a QP's `dcqcn.cnp_dscp` says otherwise (ConnectX `np_cnp_dscp`).
pub const CNP_DSCP: u8 = 48;

/// A DSCP → 802.1p priority map: entry `d` is the priority of DSCP `d`.
pub type DscpMap = [u8; 64];

/// The ConnectX default map: DSCP `d` → priority `d / 8` (so 26 → 3 and 48 → 6).
pub const DEFAULT_DSCP_MAP: DscpMap = {
    let mut m = [0u8; 64];
    let mut d = 0;
    while d < 64 {
        m[d] = (d / 8) as u8;
        d += 1;
    }
    m
};

/// What a port trusts to classify the frames it receives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Trust {
    /// The 802.1Q priority code point (every frame keeps the priority it was sent with).
    #[default]
    Pcp,
    /// The IP DSCP of RoCEv2 packets, mapped to a priority; frames without an IP header
    /// (plain frames, 802.1Qau CNMs) keep their PCP.
    Dscp(Box<DscpMap>),
}

impl Trust {
    /// The map when the port trusts DSCP.
    pub fn dscp_map(&self) -> Option<&DscpMap> {
        match self {
            Trust::Pcp => None,
            Trust::Dscp(m) => Some(m),
        }
    }
    /// The priority a received frame of priority code point `pcp` and DSCP `dscp` (`None`:
    /// no IP header) is given.
    pub fn classify(&self, pcp: u8, dscp: Option<u8>) -> u8 {
        match (self, dscp) {
            (Trust::Dscp(m), Some(d)) => m[usize::from(d & 63)],
            _ => pcp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_map_puts_roce_on_3_and_cnps_on_6() {
        assert_eq!(DEFAULT_DSCP_MAP[usize::from(ROCE_DSCP)], 3);
        assert_eq!(DEFAULT_DSCP_MAP[usize::from(CNP_DSCP)], 6);
        assert_eq!(DEFAULT_DSCP_MAP[0], 0);
        assert_eq!(DEFAULT_DSCP_MAP[63], 7);
    }

    #[test]
    fn trust_pcp_keeps_the_pcp_and_trust_dscp_maps_only_ip_frames() {
        let mut m = DEFAULT_DSCP_MAP;
        m[26] = 5;
        let t = Trust::Dscp(Box::new(m));
        assert_eq!(Trust::Pcp.classify(2, Some(26)), 2);
        assert_eq!(t.classify(2, Some(26)), 5);
        assert_eq!(t.classify(2, Some(48)), 6);
        assert_eq!(t.classify(2, None), 2);
    }
}
