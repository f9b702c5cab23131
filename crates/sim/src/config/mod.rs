//! The resolved description of a simulation: what a scenario file becomes after parsing and
//! checking, and what [`crate::Simulator::new`] builds from.

pub mod headroom;
pub mod model;
pub mod pathology;
pub mod qos;
pub mod traffic;
pub mod transport;

use lossless_proto::dcbx::DcbxConfig;
use lossless_proto::ets::EtsConfig;
use lossless_proto::flow_control::FlowControlConfig;
use lossless_proto::units::{Duration, Instant, Rate};

use crate::buffer::Threshold;
use crate::config::model::ModelConfig;
use crate::config::traffic::{FlowSpec, Workload};
use crate::config::transport::{EcnSpec, QcnSpec};
use crate::frame::NodeId;
use lossless_proto::headroom::propagation;

/// A whole simulation.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Scenario name.
    pub name: String,
    /// One-paragraph description.
    pub description: String,
    /// Seed of every random choice.
    pub seed: u64,
    /// Simulated time to run.
    pub duration: Duration,
    /// Hosts and switches, indexed by [`NodeId`].
    pub nodes: Vec<NodeConfig>,
    /// Full-duplex links.
    pub links: Vec<LinkConfig>,
    /// Fixed flows.
    pub flows: Vec<FlowSpec>,
    /// Poisson flow arrivals.
    pub workloads: Vec<Workload>,
    /// Scripted flow-control request changes (document 002's `fc_rdy` driven by hand).
    pub signals: Vec<Signal>,
    /// Stalls, watchdogs, static routes, link events, the deadlock detector, victims.
    pub pathology: crate::config::pathology::PathologyConfig,
    /// Modelling choices (802.3-exact by default; the HPCC ns-3 reference's on request).
    pub model: ModelConfig,
}

/// A host or a switch.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Unique name.
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// Local DCBX configuration of its ports on DCBX-managed links (`None`: the default
    /// [`DcbxConfig`], unwilling with nothing enabled).
    pub dcbx: Option<DcbxConfig>,
}

/// Host or switch parameters.
#[derive(Clone, Debug)]
pub enum NodeKind {
    /// An end station.
    Host(HostConfig),
    /// A bridge with a shared buffer.
    Switch(SwitchConfig),
}

/// An end station: NIC queues and a receiver.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// Frames each NIC egress queue holds before the sending application is blocked.
    pub nic_queue_frames: usize,
    /// Receive processing rate; `None` = the host consumes frames as fast as they arrive.
    pub rx_rate: Option<Rate>,
    /// Receive backlog capacity in bytes (frames beyond it are dropped).
    pub rx_buffer_bytes: u64,
    /// Backlog at which the host raises its flow-control request (`fc_rdy`).
    pub rx_xoff_bytes: u64,
    /// Backlog at or below which it releases the request.
    pub rx_xon_bytes: u64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            nic_queue_frames: 8,
            rx_rate: None,
            rx_buffer_bytes: 1 << 20,
            rx_xoff_bytes: 1 << 19,
            rx_xon_bytes: 1 << 18,
        }
    }
}

/// A switch: shared buffer and thresholds.
#[derive(Clone, Debug)]
pub struct SwitchConfig {
    /// Total buffer in bytes.
    pub buffer_bytes: u64,
    /// Per (ingress port, priority) shared-pool limit.
    pub threshold: Threshold,
    /// XON when a pair's usage falls to the limit minus this.
    pub xon_offset_bytes: u64,
    /// Headroom per (port, lossless priority); `None` =
    /// [`crate::config::headroom::default_headroom_bytes`] of each port's link.
    pub headroom_bytes: Option<u64>,
    /// Largest payload, for the headroom formula.
    pub mtu: u64,
    /// ECN marking at the egress queues (`None`: no marking).
    pub ecn: Option<EcnSpec>,
    /// QCN congestion points at the egress queues (`None`: none).
    pub qcn: Option<QcnSpec>,
}

/// A full-duplex link between port ends `a` and `b`.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// One end's node.
    pub a: NodeId,
    /// The other end's node.
    pub b: NodeId,
    /// Line rate.
    pub rate: Rate,
    /// Cable length in metres (5 ns/m).
    pub length_m: u64,
    /// One-way propagation delay given as a time; replaces the cable's 5 ns/m when set.
    pub delay: Option<Duration>,
    /// One-way delay of the PHYs in each direction (the sender's transmit and the receiver's
    /// receive path), added to the cable's; zero unless the scenario asks for it.
    pub interface_delay: Duration,
    /// Flow control of the port at `a`.
    pub fc_a: FlowControlConfig,
    /// Flow control of the port at `b`.
    pub fc_b: FlowControlConfig,
    /// 802.1Qaz ETS transmission selection of both ports; `None` = strict priority.
    pub ets: Option<EtsConfig>,
    /// idleSlope of each credit-based-shaper traffic class of `ets` (index = TC).
    pub ets_idle_slope: [Option<Rate>; 8],
    /// DCBX agent of the port at `a` (`Some`: the link is DCBX-managed and this is the
    /// port's local configuration; its PFC and ETS then come from negotiation).
    pub dcbx_a: Option<DcbxConfig>,
    /// DCBX agent of the port at `b`.
    pub dcbx_b: Option<DcbxConfig>,
    /// Bit error rate of the link, each direction (0: none): a frame of `n` bits arrives
    /// corrupted, and is discarded by the receiver's FCS check, with probability
    /// `1 − (1 − ber)^n`.
    pub ber: f64,
    /// What the port at `a` trusts to classify the frames it receives.
    pub trust_a: qos::Trust,
    /// What the port at `b` trusts.
    pub trust_b: qos::Trust,
}

impl LinkConfig {
    /// A 1 m link between `a` and `b` at `rate` with flow control `fc` at both ends and
    /// nothing else (no extra delay, strict priority, no DCBX, no bit errors); set the other
    /// fields with struct update syntax.
    pub fn new(a: NodeId, b: NodeId, rate: Rate, fc: FlowControlConfig) -> LinkConfig {
        LinkConfig {
            a,
            b,
            rate,
            length_m: 1,
            delay: None,
            interface_delay: Duration::ZERO,
            fc_a: fc,
            fc_b: fc,
            ets: None,
            ets_idle_slope: [None; 8],
            dcbx_a: None,
            dcbx_b: None,
            ber: 0.0,
            trust_a: qos::Trust::Pcp,
            trust_b: qos::Trust::Pcp,
        }
    }

    /// The one-way propagation delay: `delay` if given, else the cable's 5 ns per metre.
    pub fn propagation(&self) -> Duration {
        self.delay.unwrap_or_else(|| propagation(self.length_m))
    }
}

/// A scripted change of a host port's flow-control request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    /// The host whose (only) port's request changes.
    pub node: NodeId,
    /// Register set: the priority for PFC, 0 for PAUSE.
    pub prio: u8,
    /// When.
    pub at: Instant,
    /// Raised or released.
    pub on: bool,
}
