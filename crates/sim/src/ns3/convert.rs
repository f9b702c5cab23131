//! A reference run's inputs as a simulation: node ids kept (host `h<id>`, switch `s<id>`),
//! links with their delays, switches with the reference's buffer, headroom and ECN maps, and
//! every flow a RoCEv2 QP with the reference's transport and DCQCN.
//!
//! Approximations (none of them moves the reference runs, which send no PFC frame): the
//! reference's MMU (4 KB reserved per ingress queue, a per-port headroom of 3 × rate × delay,
//! PFC threshold `free >> shift` with a smaller shift for ports faster than the NICs, pauses
//! that last until a resume) becomes this simulator's shared buffer with dynamic threshold
//! alpha 1/8, the same headroom per (port, lossless priority), XON 3072 bytes below the
//! threshold, and 802.1Qbb PFC frames with pause times.

use lossless_proto::dcqcn::{NpParams, RpParams};
use lossless_proto::ecn::{EcnConfig, MarkPoint};
use lossless_proto::flow_control::FlowControlConfig;
use lossless_proto::rocev2::RcConfig;
use lossless_proto::units::{Duration, Instant};

use super::{Ns3Error, Run};
use crate::buffer::Threshold;
use crate::config::{HostConfig, LinkConfig, NodeConfig, NodeKind, SimConfig, SwitchConfig};
use crate::model::ModelConfig;
use crate::traffic::{FlowSpec, Pattern};
use crate::transport::{CcSpec, EcnSpec, QpSpec};

impl Run {
    /// The reaction point the config describes: the `hpcc_ns3` preset with the config's
    /// values (MODEL.md §3).
    pub fn rp_params(&self) -> RpParams {
        let c = &self.config;
        RpParams {
            clamp_tgt_rate: c.clamp_target_rate,
            rpg_time_reset: c.rp_timer,
            rpg_threshold: c.fast_recovery_times,
            rpg_ai_rate: c.rate_ai,
            rpg_hai_rate: c.rate_hai,
            rpg_min_rate: c.min_rate,
            dce_tcp_g: 1024 - c.ewma_gain_1024,
            dce_tcp_rtt: c.alpha_resume_interval,
            rate_reduce_monitor_period: c.rate_decrease_interval,
            ..RpParams::hpcc_ns3()
        }
    }

    /// The run as a simulation with the reference's modelling choices.
    pub fn to_sim_config(&self, name: &str) -> Result<SimConfig, Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        let err = |what: &str, message: String| Ns3Error {
            file: name.to_string(),
            line: 0,
            what: what.to_string(),
            message,
        };
        let mut lossless = 0u8;
        for f in &self.flows {
            lossless |= 1 << f.pg;
        }
        let mut nodes = Vec::with_capacity(t.nodes as usize);
        for id in 0..t.nodes {
            if !t.is_switch[id as usize] {
                nodes.push(NodeConfig {
                    name: format!("h{id}"),
                    kind: NodeKind::Host(HostConfig::default()),
                    dcbx: None,
                });
                continue;
            }
            let ports: Vec<_> = t.links.iter().filter(|l| l.a == id || l.b == id).collect();
            // the reference's headroom per port: 3 × rate × delay / 8 (third.cc)
            let headroom = ports
                .iter()
                .map(|l| (u128::from(l.rate.bps()) * l.delay.as_ps() / 8 / 1_000_000_000_000 * 3) as u64)
                .max()
                .unwrap_or(0);
            let mut by_rate = Vec::new();
            for l in &ports {
                if by_rate.iter().any(|(r, _)| *r == l.rate) {
                    continue;
                }
                let find = |m: &[(lossless_proto::units::Rate, u64)], key: &str| {
                    m.iter().find(|(r, _)| *r == l.rate).map(|(_, v)| *v).ok_or_else(|| {
                        err(key, format!("no entry for the {} link of line {}: the reference asserts one per link rate", l.rate, l.line))
                    })
                };
                if !c.enable_qcn {
                    break;
                }
                let kmin = find(&c.kmin_kb, "KMIN_MAP")?;
                let kmax = find(&c.kmax_kb, "KMAX_MAP")?;
                let pmax = c
                    .pmax
                    .iter()
                    .find(|(r, _)| *r == l.rate)
                    .map(|(_, p)| *p)
                    .ok_or_else(|| {
                        err(
                            "PMAX_MAP",
                            format!("no entry for the {} link of line {}", l.rate, l.line),
                        )
                    })?;
                let cfg = EcnConfig {
                    kmin_bytes: kmin * 1000,
                    kmax_bytes: kmax * 1000,
                    pmax,
                    point: MarkPoint::Dequeue,
                };
                cfg.validate().map_err(|e| err("KMIN_MAP", e.to_string()))?;
                by_rate.push((l.rate, cfg));
            }
            nodes.push(NodeConfig {
                name: format!("s{id}"),
                kind: NodeKind::Switch(SwitchConfig {
                    buffer_bytes: c.buffer_mib * 1024 * 1024,
                    threshold: Threshold::Dynamic { alpha_1024: 128 },
                    xon_offset_bytes: 3072,
                    headroom_bytes: Some(headroom),
                    mtu: u64::from(c.packet_payload_size),
                    // class 0 (PFC and CNPs in the reference) is never marked
                    ecn: c.enable_qcn.then_some(EcnSpec {
                        config: None,
                        by_rate,
                        hpcc_ns3_by_rate: false,
                        priorities: 0xFE,
                    }),
                    qcn: None,
                }),
                dcbx: None,
            });
        }
        let links = t
            .links
            .iter()
            .map(|l| {
                let fc = FlowControlConfig::pfc(l.rate, [0; 6], lossless);
                LinkConfig {
                    a: l.a,
                    b: l.b,
                    rate: l.rate,
                    length_m: 0,
                    delay: Some(l.delay),
                    interface_delay: Duration::ZERO,
                    fc_a: fc,
                    fc_b: fc,
                    ets: None,
                    ets_idle_slope: [None; 8],
                    dcbx_a: None,
                    dcbx_b: None,
                }
            })
            .collect();
        let rc = RcConfig {
            mtu: c.packet_payload_size,
            ..RcConfig::hpcc_ns3()
        };
        let cc = if c.cc_mode == 1 {
            CcSpec::Dcqcn {
                rp: self.rp_params(),
                np: NpParams::hpcc_ns3(),
            }
        } else {
            CcSpec::None
        };
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowSpec {
                name: format!("flow{i}"),
                src: f.src,
                dst: f.dst,
                priority: f.pg,
                mtu: u64::from(c.packet_payload_size),
                pattern: Pattern::Line,
                start: f.start,
                stop: Instant::MAX,
                size: Some(f.size),
                transport: Some(Box::new(QpSpec {
                    rc,
                    cc: cc.clone(),
                    ack_priority: f.pg,
                    udp_dport: f.dport,
                })),
            })
            .collect();
        Ok(SimConfig {
            name: name.to_string(),
            description: format!(
                "HPCC ns-3 run: {} nodes, {} links, {} flows (CC_MODE {}, ECN {})",
                t.nodes,
                t.links.len(),
                self.flows.len(),
                c.cc_mode,
                if c.enable_qcn { "on" } else { "off" }
            ),
            seed: 1,
            duration: c.stop_time,
            nodes,
            links,
            flows,
            workloads: Vec::new(),
            signals: Vec::new(),
            model: ModelConfig::HPCC_NS3,
        })
    }
}
