//! The scenario file as serde reads it: every key, unresolved, with spans for errors.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use toml::Spanned;

use super::fabric::RawFabric;
use super::qp::{RawEcn, RawQcn, RawQp};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub(super) name: Spanned<String>,
    #[serde(default = "no_description")]
    pub(super) description: Spanned<String>,
    #[serde(default)]
    pub(super) seed: u64,
    pub(super) duration: Spanned<String>,
    #[serde(default)]
    pub(super) params: HashMap<String, i64>,
    #[serde(default)]
    pub(super) defaults: RawLinkParams,
    #[serde(default)]
    pub(super) host: Vec<RawHost>,
    #[serde(default)]
    pub(super) switch: Vec<RawSwitch>,
    #[serde(default)]
    pub(super) link: Vec<RawLink>,
    #[serde(default)]
    pub(super) flow: Vec<RawFlow>,
    #[serde(default)]
    pub(super) workload: Vec<RawWorkload>,
    #[serde(default)]
    pub(super) signal: Vec<RawSignal>,
    /// Switches a frame may enter before it is dropped (a routing loop's frames die).
    pub(super) hop_limit: Option<Spanned<i64>>,
    /// SONiC pfcwd settings of every switch (a switch's `pfcwd` overrides them).
    pub(super) pfcwd: Option<Spanned<RawPfcwd>>,
    #[serde(default)]
    pub(super) route: Vec<RawRoute>,
    #[serde(default)]
    pub(super) event: Vec<RawEvent>,
    pub(super) deadlock: Option<Spanned<RawDeadlock>>,
    pub(super) victims: Option<Spanned<RawVictims>>,
    /// Modelling choices: `preset` ("exact", "hpcc-ns3") and per-choice overrides.
    #[serde(default)]
    pub(super) model: RawModel,
    /// Defaults of every QP (a flow or workload with `transport = "rocev2"`).
    #[serde(default)]
    pub(super) qp: RawQp,
    /// Default ECN marking of every switch (a switch's `ecn` overrides it key by key).
    pub(super) ecn: Option<RawEcn>,
    /// Default QCN congestion points of every switch.
    pub(super) qcn: Option<RawQcn>,
    /// A generated topology (fat tree, leaf-spine) added to the hosts, switches and links.
    pub(super) fabric: Option<RawFabric>,
}

/// `[pfcwd]` or a switch's `pfcwd = { ... }`.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPfcwd {
    pub(super) detection: Option<Spanned<String>>,
    pub(super) restoration: Option<Spanned<String>>,
    pub(super) poll: Option<Spanned<String>>,
    pub(super) action: Option<Spanned<String>>,
    pub(super) rule: Option<Spanned<String>>,
    /// `[pfcwd]` only: the big red switch on from the start.
    pub(super) big_red_switch: Option<bool>,
}

/// `[[route]]`: at `switch`, frames to `dst` leave towards `via`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRoute {
    pub(super) switch: Spanned<String>,
    pub(super) dst: Spanned<String>,
    pub(super) via: Spanned<Vec<Spanned<String>>>,
    pub(super) at: Option<Spanned<String>>,
}

/// `[[event]]`: one of `link_down`, `link_up`, `big_red_switch` at `at`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvent {
    pub(super) at: Spanned<String>,
    pub(super) link_down: Option<Spanned<Vec<Spanned<String>>>>,
    pub(super) link_up: Option<Spanned<Vec<Spanned<String>>>>,
    pub(super) reroute: Option<bool>,
    pub(super) big_red_switch: Option<Spanned<String>>,
}

/// `[deadlock]`: the wait-for-graph detector.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDeadlock {
    pub(super) interval: Option<Spanned<String>>,
    pub(super) threshold: Option<Spanned<String>>,
    /// "stop" (the default) or "continue".
    pub(super) on_deadlock: Option<Spanned<String>>,
}

/// `[victims]`: per-flow blocking accounting.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVictims {
    pub(super) min_blocked_ratio: Option<Spanned<f64>>,
}

/// The `[model]` table.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawModel {
    pub(super) preset: Option<Spanned<String>>,
    pub(super) framing: Option<Spanned<String>>,
    pub(super) ideal_fct: Option<Spanned<String>>,
    pub(super) replies: Option<Spanned<String>>,
    pub(super) ecmp: Option<Spanned<String>>,
    pub(super) pacing: Option<Spanned<String>>,
    pub(super) buffer: Option<Spanned<String>>,
    pub(super) pfc: Option<Spanned<String>>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLinkParams {
    pub(super) rate: Option<Spanned<String>>,
    pub(super) length_m: Option<Spanned<u64>>,
    /// One-way propagation delay as a time (instead of `length_m`).
    pub(super) delay: Option<Spanned<String>>,
    /// One-way PHY delay of each direction: "none", "802.3" or a duration.
    pub(super) interface_delay: Option<Spanned<String>>,
    /// Bit error rate of each direction.
    pub(super) ber: Option<Spanned<f64>>,
    pub(super) mtu: Option<Spanned<u64>>,
    pub(super) flow_control: Option<Spanned<String>>,
    pub(super) pfc_priorities: Option<Spanned<Vec<u8>>>,
    pub(super) pause_quanta: Option<Spanned<u16>>,
    pub(super) refresh_quanta: Option<Spanned<u32>>,
    pub(super) xon_on_release: Option<Spanned<bool>>,
    pub(super) hold_own_data: Option<Spanned<bool>>,
    pub(super) reaction_delay_quanta: Option<Spanned<u64>>,
    pub(super) ets_tc_bandwidth: Option<Spanned<Vec<u8>>>,
    pub(super) ets_prio_tc: Option<Spanned<Vec<u8>>>,
    pub(super) ets_tsa: Option<Spanned<Vec<String>>>,
    /// idleSlope of credit-based-shaper TCs: TC number → rate (e.g. `{ 4 = "10G" }`).
    pub(super) ets_idle_slope: Option<BTreeMap<String, Spanned<String>>>,
    /// Run a DCBX agent on both ports: their PFC and ETS come from negotiation.
    pub(super) dcbx: Option<bool>,
    /// What the port classifies received frames by: "pcp" (default) or "dscp".
    pub(super) trust: Option<Spanned<String>>,
    /// DSCP → priority entries over the default map (DSCP / 8), `{ 26 = 3, 48 = 6 }`.
    pub(super) dscp2prio: Option<Spanned<BTreeMap<String, Spanned<i64>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHost {
    pub(super) name: Spanned<String>,
    pub(super) count: Option<Spanned<toml::Value>>,
    pub(super) rx_rate: Option<Spanned<String>>,
    pub(super) rx_buffer_bytes: Option<u64>,
    pub(super) rx_xoff_bytes: Option<u64>,
    pub(super) rx_xon_bytes: Option<u64>,
    pub(super) nic_queue_frames: Option<usize>,
    /// Local DCBX configuration of the host's port (802.1Qaz vocabulary).
    pub(super) dcbx: Option<toml::Value>,
    /// Spans during which the receiver processes nothing: `[["1ms", "forever"], ...]`.
    pub(super) rx_stall: Option<Vec<(Spanned<String>, Spanned<String>)>>,
    /// mlx5 NIC storm prevention: "off", "auto" or 80..8000 ms.
    pub(super) pfc_prevention_tout: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSwitch {
    pub(super) name: Spanned<String>,
    pub(super) buffer_bytes: Spanned<u64>,
    #[serde(default = "default_threshold")]
    pub(super) threshold: Spanned<String>,
    pub(super) alpha: Option<f64>,
    pub(super) static_threshold_bytes: Option<u64>,
    pub(super) xon_offset_bytes: Option<u64>,
    pub(super) headroom_bytes: Option<u64>,
    pub(super) mtu: Option<Spanned<u64>>,
    /// Local DCBX configuration of every port of the switch.
    pub(super) dcbx: Option<toml::Value>,
    /// pfcwd: true/false, or a table over `[pfcwd]`.
    pub(super) pfcwd: Option<Spanned<toml::Value>>,
    /// ECN marking at its egress queues: a table, or true/false for the `[ecn]` default.
    pub(super) ecn: Option<toml::Value>,
    /// QCN congestion points at its egress queues: a table, or true/false.
    pub(super) qcn: Option<toml::Value>,
}

fn default_threshold() -> Spanned<String> {
    Spanned::new(0..0, "dynamic".to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub(super) a: Spanned<String>,
    pub(super) b: Spanned<String>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) length_m: Option<Spanned<u64>>,
    pub(super) delay: Option<Spanned<String>>,
    pub(super) interface_delay: Option<Spanned<String>>,
    pub(super) ber: Option<Spanned<f64>>,
    pub(super) mtu: Option<Spanned<u64>>,
    pub(super) flow_control: Option<Spanned<String>>,
    pub(super) pfc_priorities: Option<Spanned<Vec<u8>>>,
    pub(super) pause_quanta: Option<Spanned<u16>>,
    pub(super) refresh_quanta: Option<Spanned<u32>>,
    pub(super) xon_on_release: Option<Spanned<bool>>,
    pub(super) hold_own_data: Option<Spanned<bool>>,
    pub(super) reaction_delay_quanta: Option<Spanned<u64>>,
    pub(super) ets_tc_bandwidth: Option<Spanned<Vec<u8>>>,
    pub(super) ets_prio_tc: Option<Spanned<Vec<u8>>>,
    pub(super) ets_tsa: Option<Spanned<Vec<String>>>,
    pub(super) ets_idle_slope: Option<BTreeMap<String, Spanned<String>>>,
    pub(super) dcbx: Option<bool>,
    pub(super) trust: Option<Spanned<String>>,
    pub(super) dscp2prio: Option<Spanned<BTreeMap<String, Spanned<i64>>>>,
    /// Flow-control keys for the port at `a` only (e.g. a NIC that ignores PFC).
    pub(super) a_end: Option<RawEnd>,
    /// Flow-control keys for the port at `b` only.
    pub(super) b_end: Option<RawEnd>,
}

/// Flow-control keys that may differ between a link's two ports.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEnd {
    pub(super) flow_control: Option<Spanned<String>>,
    pub(super) pfc_priorities: Option<Spanned<Vec<u8>>>,
    pub(super) pause_quanta: Option<Spanned<u16>>,
    pub(super) refresh_quanta: Option<Spanned<u32>>,
    pub(super) xon_on_release: Option<Spanned<bool>>,
    pub(super) hold_own_data: Option<Spanned<bool>>,
    pub(super) reaction_delay_quanta: Option<Spanned<u64>>,
    /// This port's local DCBX configuration (over its node's `dcbx`).
    pub(super) dcbx: Option<toml::Value>,
    /// What this port classifies received frames by.
    pub(super) trust: Option<Spanned<String>>,
    /// This port's DSCP → priority entries.
    pub(super) dscp2prio: Option<Spanned<BTreeMap<String, Spanned<i64>>>>,
}

impl RawEnd {
    /// `base` with this end's keys put over it.
    pub(super) fn over(&self, base: &RawLinkParams) -> RawLinkParams {
        RawLinkParams {
            flow_control: self.flow_control.clone().or_else(|| base.flow_control.clone()),
            pfc_priorities: self
                .pfc_priorities
                .clone()
                .or_else(|| base.pfc_priorities.clone()),
            pause_quanta: self.pause_quanta.clone().or_else(|| base.pause_quanta.clone()),
            refresh_quanta: self
                .refresh_quanta
                .clone()
                .or_else(|| base.refresh_quanta.clone()),
            xon_on_release: self
                .xon_on_release
                .clone()
                .or_else(|| base.xon_on_release.clone()),
            hold_own_data: self.hold_own_data.clone().or_else(|| base.hold_own_data.clone()),
            reaction_delay_quanta: self
                .reaction_delay_quanta
                .clone()
                .or_else(|| base.reaction_delay_quanta.clone()),
            trust: self.trust.clone().or_else(|| base.trust.clone()),
            dscp2prio: self.dscp2prio.clone().or_else(|| base.dscp2prio.clone()),
            ..base.clone()
        }
    }
}

impl RawLink {
    pub(super) fn params(&self) -> RawLinkParams {
        RawLinkParams {
            rate: self.rate.clone(),
            length_m: self.length_m.clone(),
            delay: self.delay.clone(),
            interface_delay: self.interface_delay.clone(),
            ber: self.ber.clone(),
            mtu: self.mtu.clone(),
            flow_control: self.flow_control.clone(),
            pfc_priorities: self.pfc_priorities.clone(),
            pause_quanta: self.pause_quanta.clone(),
            refresh_quanta: self.refresh_quanta.clone(),
            xon_on_release: self.xon_on_release.clone(),
            hold_own_data: self.hold_own_data.clone(),
            reaction_delay_quanta: self.reaction_delay_quanta.clone(),
            ets_tc_bandwidth: self.ets_tc_bandwidth.clone(),
            ets_prio_tc: self.ets_prio_tc.clone(),
            ets_tsa: self.ets_tsa.clone(),
            ets_idle_slope: self.ets_idle_slope.clone(),
            dcbx: self.dcbx,
            trust: self.trust.clone(),
            dscp2prio: self.dscp2prio.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFlow {
    pub(super) name: Spanned<String>,
    pub(super) src: Spanned<String>,
    pub(super) dst: Spanned<String>,
    pub(super) priority: Spanned<u8>,
    #[serde(default = "default_pattern")]
    pub(super) pattern: Spanned<String>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) on: Option<Spanned<String>>,
    pub(super) off: Option<Spanned<String>>,
    pub(super) start: Option<Spanned<String>>,
    pub(super) stop: Option<Spanned<String>>,
    pub(super) size_bytes: Option<Spanned<u64>>,
    pub(super) mtu: Option<Spanned<u64>>,
    /// "rocev2": the flow is a RoCEv2 QP (keys below, defaults in `[qp]`).
    pub(super) transport: Option<Spanned<String>>,
    pub(super) cc: Option<Spanned<String>>,
    pub(super) preset: Option<Spanned<String>>,
    pub(super) ack_priority: Option<u8>,
    pub(super) cnp_priority: Option<u8>,
    pub(super) udp_dport: Option<u16>,
    pub(super) dscp: Option<u8>,
    pub(super) dcqcn: Option<toml::Table>,
    pub(super) qcn: Option<toml::Table>,
    pub(super) dctcp: Option<toml::Table>,
    pub(super) hpcc: Option<toml::Table>,
    pub(super) hpcc_pint: Option<toml::Table>,
    pub(super) timely: Option<toml::Table>,
    pub(super) rocev2: Option<toml::Table>,
}

fn no_description() -> Spanned<String> {
    Spanned::new(0..0, String::new())
}

fn default_pattern() -> Spanned<String> {
    Spanned::new(0..0, "line".to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    pub(super) name: Spanned<String>,
    pub(super) src: Vec<Spanned<String>>,
    pub(super) dst: Vec<Spanned<String>>,
    pub(super) priority: Spanned<u8>,
    /// A `size cdf` file, relative to the scenario's directory (or `cdf`).
    pub(super) cdf_file: Option<Spanned<String>>,
    /// The `size cdf` lines themselves, as a string (or `cdf_file`).
    pub(super) cdf: Option<Spanned<String>>,
    pub(super) load: Spanned<f64>,
    pub(super) start: Option<Spanned<String>>,
    pub(super) stop: Option<Spanned<String>>,
    pub(super) mtu: Option<Spanned<u64>>,
    /// "rocev2": the flow is a RoCEv2 QP (keys below, defaults in `[qp]`).
    pub(super) transport: Option<Spanned<String>>,
    pub(super) cc: Option<Spanned<String>>,
    pub(super) preset: Option<Spanned<String>>,
    pub(super) ack_priority: Option<u8>,
    pub(super) cnp_priority: Option<u8>,
    pub(super) udp_dport: Option<u16>,
    pub(super) dscp: Option<u8>,
    pub(super) dcqcn: Option<toml::Table>,
    pub(super) qcn: Option<toml::Table>,
    pub(super) dctcp: Option<toml::Table>,
    pub(super) hpcc: Option<toml::Table>,
    pub(super) hpcc_pint: Option<toml::Table>,
    pub(super) timely: Option<toml::Table>,
    pub(super) rocev2: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSignal {
    pub(super) host: Spanned<String>,
    #[serde(default)]
    pub(super) priority: u8,
    pub(super) fc_rdy: Vec<(Spanned<String>, Spanned<String>)>,
}

/// The QP keys of a flow or workload.
macro_rules! qp_keys {
    ($t:ty) => {
        impl $t {
            pub(super) fn qp_keys(&self) -> RawQp {
                RawQp {
                    cc: self.cc.clone(),
                    preset: self.preset.clone(),
                    ack_priority: self.ack_priority,
                    cnp_priority: self.cnp_priority,
                    udp_dport: self.udp_dport,
                    dscp: self.dscp,
                    dcqcn: self.dcqcn.clone(),
                    qcn: self.qcn.clone(),
                    dctcp: self.dctcp.clone(),
                    hpcc: self.hpcc.clone(),
                    hpcc_pint: self.hpcc_pint.clone(),
                    timely: self.timely.clone(),
                    rocev2: self.rocev2.clone(),
                }
            }
            /// Whether any QP key is set without `transport`.
            pub(super) fn stray_qp_key(&self) -> Option<&'static str> {
                [
                    ("cc", self.cc.is_some()),
                    ("preset", self.preset.is_some()),
                    ("ack_priority", self.ack_priority.is_some()),
                    ("cnp_priority", self.cnp_priority.is_some()),
                    ("udp_dport", self.udp_dport.is_some()),
                    ("dscp", self.dscp.is_some()),
                    ("dcqcn", self.dcqcn.is_some()),
                    ("qcn", self.qcn.is_some()),
                    ("dctcp", self.dctcp.is_some()),
                    ("hpcc", self.hpcc.is_some()),
                    ("hpcc_pint", self.hpcc_pint.is_some()),
                    ("timely", self.timely.is_some()),
                    ("rocev2", self.rocev2.is_some()),
                ]
                .into_iter()
                .find(|(_, set)| *set)
                .map(|(k, _)| k)
            }
        }
    };
}
qp_keys!(RawFlow);
qp_keys!(RawWorkload);
