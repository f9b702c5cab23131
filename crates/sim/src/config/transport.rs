//! What makes a flow a RoCEv2 queue pair (QP): its reliable-connection transport
//! (`lossless_proto::rocev2`), its congestion control (DCQCN or QCN reaction point, DCQCN
//! notification point) and the priorities of the packets its receiver sends back; and the
//! congestion notification a switch runs at its egress queues (ECN marking, QCN congestion
//! points). The simulator drives the engines; these are their resolved configurations.

use lossless_proto::dcqcn::{CnpMode, NpParams, RpParams};
use lossless_proto::dctcp::DctcpParams;
use lossless_proto::ecn::EcnConfig;
use lossless_proto::hpcc::HpccParams;
use lossless_proto::hpcc_pint::{PintCodec, PintParams};
use lossless_proto::qcn::{CpParams, QcnRpParams};
use lossless_proto::rocev2::RcConfig;
use lossless_proto::timely::TimelyParams;
use lossless_proto::units::Rate;

/// UDP destination port of RoCEv2.
pub const ROCE_UDP_PORT: u16 = 4791;

/// The transport and congestion control of a flow that is a RoCEv2 QP.
#[derive(Clone, Debug, PartialEq)]
pub struct QpSpec {
    /// The reliable connection (MTU, ACK coalescing, recovery, timeout, NAK interval).
    pub rc: RcConfig,
    /// The congestion control.
    pub cc: CcSpec,
    /// 802.1Q priority of the ACK/NAK packets the receiver sends (RC: the data priority).
    pub ack_priority: u8,
    /// UDP destination port of the data packets (4791 for RoCEv2; the ns-3 reference's flow
    /// files give their own, which its ECMP hashes).
    pub udp_dport: u16,
    /// The limit on bytes in flight, whatever the congestion control.
    pub window: QpWindow,
    /// IP DSCP of its data packets and ACK/NAK replies (0..=63; a port that trusts DSCP
    /// classifies them by it).
    pub dscp: u8,
}

/// A QP's limit on payload bytes in flight (sent and not acknowledged), as the HPCC ns-3
/// reference's `RdmaQueuePair::GetWin`/`IsWinBound` (MODEL.md §9.3): the QP sends nothing
/// while its bytes in flight are at or above the window, so they can exceed it by up to one
/// packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpWindow {
    /// The window at line rate, bytes; 0: no limit.
    pub bytes: u64,
    /// Scale the window by the QP's rate over its line rate (`VAR_WIN`): ⌊bytes·rate/line⌋,
    /// at least 1 byte.
    pub variable: bool,
}

impl QpWindow {
    /// No limit.
    pub const NONE: QpWindow = QpWindow {
        bytes: 0,
        variable: false,
    };

    /// The window in bytes of a QP sending at `rate_bps` on a line of `line_bps` (`None`: no
    /// limit).
    pub fn at(&self, rate_bps: u64, line_bps: u64) -> Option<u64> {
        if self.bytes == 0 {
            return None;
        }
        if !self.variable {
            return Some(self.bytes);
        }
        let w = u128::from(self.bytes) * u128::from(rate_bps) / u128::from(line_bps.max(1));
        Some((w.min(u128::from(u64::MAX)) as u64).max(1))
    }
}

/// The congestion control of a QP.
#[derive(Clone, Debug, PartialEq)]
pub enum CcSpec {
    /// None: the QP sends at its line rate (the transport still recovers losses).
    None,
    /// DCQCN: a reaction point at the sender, a notification point at the receiver that
    /// answers CE-marked packets with CNPs (on `np.cnp_802p_prio`) or ACK flags.
    Dcqcn {
        /// Reaction point.
        rp: RpParams,
        /// Notification point.
        np: NpParams,
    },
    /// QCN (802.1Qau): a reaction point at the sender, driven by the CNMs of congestion
    /// points; its data frames carry a CN-TAG.
    Qcn {
        /// Reaction point.
        rp: QcnRpParams,
    },
    /// DCTCP as the HPCC ns-3 fork runs it on the NIC (`CC_MODE 8`): a rate cut on the ECN
    /// echoes that its receiver sets on the ACKs of CE-marked packets, raised once per batch.
    Dctcp {
        /// The sender's parameters.
        params: DctcpParams,
    },
    /// HPCC as the HPCC ns-3 fork runs it on the NIC (`CC_MODE 3`): switches stamp INT
    /// records into data packets at dequeue, the receiver echoes them on the ACK, and the
    /// sender sets its rate from the most loaded hop. Needs a window (W₀ = the window's bytes).
    Hpcc {
        /// The sender's parameters.
        params: HpccParams,
        /// T, the base round-trip time of the utilisation EWMA, ns (the fork's maxRtt).
        base_rtt_ns: u64,
    },
    /// HPCC-PINT as the HPCC ns-3 fork runs it (`CC_MODE 10`): every switch port keeps a
    /// utilisation estimate and raises the 1- or 2-byte code of the data packets it sends to
    /// it, the receiver echoes the code on the ACK, and the sender sets its rate from it.
    HpccPint {
        /// The sender's parameters (the log base is also the switches' code).
        params: PintParams,
        /// T of the switch ports' estimate, ns (the fork's `MaxRtt`: the largest base RTT of
        /// the network).
        max_rtt_ns: u64,
    },
    /// TIMELY as the HPCC ns-3 fork runs it on the NIC (`CC_MODE 7`): data packets carry
    /// their send time (8 bytes), the receiver echoes it on the ACK, and the sender sets its
    /// rate from the RTT and its gradient once per round trip.
    Timely {
        /// The sender's parameters.
        params: TimelyParams,
    },
}

impl CcSpec {
    /// The name used in reports: `none`, `dcqcn`, `qcn`, `dctcp`, `hpcc`, `hpcc-pint`, `timely`.
    pub fn name(&self) -> &'static str {
        match self {
            CcSpec::None => "none",
            CcSpec::Dcqcn { .. } => "dcqcn",
            CcSpec::Qcn { .. } => "qcn",
            CcSpec::Dctcp { .. } => "dctcp",
            CcSpec::Hpcc { .. } => "hpcc",
            CcSpec::HpccPint { .. } => "hpcc-pint",
            CcSpec::Timely { .. } => "timely",
        }
    }
    /// Bytes its data packets and replies carry for the congestion control: HPCC's INT field
    /// (42), PINT's code (2 at log base 1.01, 1 where 8 bits hold it), TIMELY's send
    /// timestamp (8).
    pub fn int_bytes(&self) -> u64 {
        match self {
            CcSpec::Hpcc { .. } => lossless_wire::int::INT_LEN as u64,
            CcSpec::HpccPint { params, .. } => {
                PintCodec::new(params.log_base).map_or(2, |c| c.width().bytes() as u64)
            }
            CcSpec::Timely { .. } => 8,
            _ => 0,
        }
    }
    /// Whether switches stamp INT records into its data packets (HPCC).
    pub fn stamps_int(&self) -> bool {
        matches!(self, CcSpec::Hpcc { .. })
    }
    /// Whether switches raise a PINT code in its data packets (HPCC-PINT).
    pub fn stamps_pint(&self) -> bool {
        matches!(self, CcSpec::HpccPint { .. })
    }
    /// Whether the QP's data frames carry an 802.1Qau CN-TAG.
    pub fn cn_tag(&self) -> bool {
        matches!(self, CcSpec::Qcn { .. })
    }
    /// The IP DSCP of the CNPs its receiver sends (DCQCN with CNP packets: `np_cnp_dscp`).
    pub fn cnp_dscp(&self) -> Option<u8> {
        match self {
            CcSpec::Dcqcn { np, .. } if np.mode == CnpMode::Packet => Some(np.cnp_dscp),
            _ => None,
        }
    }
    /// The priority of the CNPs its receiver sends (DCQCN with CNP packets).
    pub fn cnp_priority(&self) -> Option<u8> {
        match self {
            CcSpec::Dcqcn { np, .. } if np.mode == CnpMode::Packet => Some(np.cnp_802p_prio),
            _ => None,
        }
    }
}

/// ECN marking at a switch's egress queues.
#[derive(Clone, Debug, PartialEq)]
pub struct EcnSpec {
    /// Thresholds when no rate-specific entry applies (`None`: every port's rate must be in
    /// `by_rate`).
    pub config: Option<EcnConfig>,
    /// Thresholds for ports of a given rate (the ns-3 reference's `KMIN_MAP`/`KMAX_MAP`/
    /// `PMAX_MAP`), tried before `config`.
    pub by_rate: Vec<(Rate, EcnConfig)>,
    /// Ports of a rate in neither get the HPCC ns-3 thresholds scaled to their rate
    /// ([`EcnConfig::hpcc_ns3`]), before `config`.
    pub hpcc_ns3_by_rate: bool,
    /// Priorities whose egress queues mark (bit n = priority n).
    pub priorities: u8,
}

impl EcnSpec {
    /// The thresholds of a port of `rate`, if any apply.
    pub fn for_rate(&self, rate: Rate) -> Option<EcnConfig> {
        self.by_rate
            .iter()
            .find(|(r, _)| *r == rate)
            .map(|(_, c)| *c)
            .or_else(|| self.hpcc_ns3_by_rate.then(|| EcnConfig::hpcc_ns3(rate)))
            .or(self.config)
    }
}

/// QCN congestion points at a switch's egress queues.
#[derive(Clone, Debug, PartialEq)]
pub struct QcnSpec {
    /// The congestion point's parameters (the CPID is filled in per port).
    pub cp: CpParams,
    /// Priorities whose egress queues are congestion points (CNPVs; bit n = priority n).
    pub priorities: u8,
    /// 802.1Q priority of the CNMs (`ieee8021CnGlobalCnmTransmitPriority`).
    pub cnm_priority: u8,
    /// Randomise the sampling interval (85..115 %, seeded), as the standard asks; `false`
    /// samples every nominal interval exactly.
    pub jitter: bool,
}
