//! A reference run's inputs as a simulation: node ids kept (host `h<id>`, switch `s<id>`),
//! links with their delays, switches with the reference's buffer, MMU (headroom 3 × rate ×
//! delay per port, 4096 bytes reserved per ingress class, the dynamic threshold with its
//! per-rate shift, resume 3072 bytes below it) and ECN maps, the reference's PFC (one frame
//! per pause or resume, a pause lasting until its resume), and every flow a RoCEv2 QP with the
//! reference's transport and DCQCN.

use lossless_proto::dcqcn::{NpParams, RpParams};
use lossless_proto::dctcp::DctcpParams;
use lossless_proto::ecn::{EcnConfig, MarkPoint};
use lossless_proto::flow_control::FlowControlConfig;
use lossless_proto::hpcc::HpccParams;
use lossless_proto::hpcc_pint::PintParams;
use lossless_proto::rocev2::RcConfig;
use lossless_proto::timely::TimelyParams;
use lossless_proto::units::{Duration, Instant, Rate};

use super::{Link, Ns3Error, Run, Topology};
use crate::buffer::{NS3_RESUME_OFFSET_BYTES, Threshold};
use crate::config::model::{ModelConfig, ReplyQueue};
use crate::config::traffic::{FlowSpec, Pattern, SizeCdf, Workload};
use crate::config::transport::{CcSpec, EcnSpec, QpSpec, QpWindow};
use crate::config::{HostConfig, LinkConfig, NodeConfig, NodeKind, SimConfig, SwitchConfig};
use crate::frame::NodeId;

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

    /// DCTCP's parameters from the config (MODEL.md §9.8): `EWMA_GAIN`, `DCTCP_RATE_AI`,
    /// `MIN_RATE`, batches counted in `PACKET_PAYLOAD_SIZE`.
    pub fn dctcp_params(&self) -> DctcpParams {
        let c = &self.config;
        DctcpParams {
            g: c.ewma_gain,
            rate_ai: c.dctcp_rate_ai,
            min_rate: c.min_rate,
            mtu: c.packet_payload_size,
        }
    }

    /// HPCC's parameters from the config (MODEL.md §9.5): `U_TARGET`, `RATE_AI`, `MIN_RATE`,
    /// `MI_THRESH`, `FAST_REACT`, `SAMPLE_FEEDBACK`, `INT_MULTI`.
    pub fn hpcc_params(&self) -> HpccParams {
        let c = &self.config;
        HpccParams {
            eta: c.u_target,
            rate_ai: c.rate_ai,
            min_rate: c.min_rate,
            max_stage: c.mi_thresh,
            fast_react: c.fast_react,
            sample_feedback: c.sample_feedback,
            int_multi: c.int_multi,
        }
    }

    /// HPCC-PINT's parameters from the config (MODEL.md §9.6): `U_TARGET`, `RATE_AI`,
    /// `MIN_RATE`, `MI_THRESH`, `PINT_LOG_BASE`, `PINT_PROB`.
    pub fn pint_params(&self) -> PintParams {
        let c = &self.config;
        PintParams {
            eta: c.u_target,
            rate_ai: c.rate_ai,
            min_rate: c.min_rate,
            max_stage: c.mi_thresh,
            log_base: c.pint_log_base,
            prob: c.pint_prob,
        }
    }

    /// TIMELY's parameters from the config (MODEL.md §9.7): `RATE_AI`, `RATE_HAI`, `MIN_RATE`
    /// and the fork's constants (α, β, T_low, T_high, minRtt have no key).
    pub fn timely_params(&self) -> TimelyParams {
        let c = &self.config;
        TimelyParams {
            rate_ai: c.rate_ai,
            rate_hai: c.rate_hai,
            min_rate: c.min_rate,
            ..TimelyParams::hpcc_ns3()
        }
    }

    /// The window of a flow from `src` to `dst` (MODEL.md §9.3, `ScheduleFlowInputs`): none
    /// without `HAS_WIN`, else the largest BDP over all host pairs (`GLOBAL_T 1`) or the
    /// pair's own, scaled by the rate with `VAR_WIN`.
    fn window(&self, bdps: &PairBdps, src: u32, dst: u32) -> QpWindow {
        let c = &self.config;
        if !c.has_win {
            return QpWindow::NONE;
        }
        QpWindow {
            bytes: if c.global_t { bdps.max } else { bdps.of(src, dst) },
            variable: c.var_win,
        }
    }

    /// The run as a simulation with the reference's modelling choices.
    pub fn to_sim_config(&self, name: &str) -> Result<SimConfig, Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        let mut lossless = 0u8;
        for f in &self.flows {
            lossless |= 1 << f.pg;
        }
        let mut sim = t.sim_config(
            name,
            c.buffer_mib * 1024 * 1024,
            lossless,
            u64::from(c.packet_payload_size),
            |ports| self.ecn_spec(name, ports),
        )?;
        sim.duration = c.stop_time;
        sim.model.replies = if c.ack_high_prio {
            ReplyQueue::First
        } else {
            ReplyQueue::FirstPaused
        };
        sim.description = format!(
            "HPCC ns-3 run: {} nodes, {} links, {} flows (CC_MODE {}, ECN {})",
            t.nodes,
            t.links.len(),
            self.flows.len(),
            c.cc_mode,
            if c.enable_qcn { "on" } else { "off" }
        );
        sim.flows = self.flow_specs();
        Ok(sim)
    }

    /// The ECN marking of a switch whose ports are `ports`: each port rate's thresholds from
    /// the config's maps (KB of 1000 bytes); none with `ENABLE_QCN` 0. Errors name `name`.
    fn ecn_spec(&self, name: &str, ports: &[&Link]) -> Result<Option<EcnSpec>, Ns3Error> {
        let c = &self.config;
        let err = |what: &str, message: String| Ns3Error {
            file: name.to_string(),
            line: 0,
            what: what.to_string(),
            message,
        };
        if !c.enable_qcn {
            return Ok(None);
        }
        let mut by_rate = Vec::new();
        for l in ports {
            if by_rate.iter().any(|(r, _)| *r == l.rate) {
                continue;
            }
            let find = |m: &[(Rate, u64)], key: &str| {
                m.iter().find(|(r, _)| *r == l.rate).map(|(_, v)| *v).ok_or_else(|| {
                    err(
                        key,
                        format!(
                            "no entry for the {} link of line {}: the reference asserts one per link rate",
                            l.rate, l.line
                        ),
                    )
                })
            };
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
        // class 0 (PFC and CNPs in the reference) is never marked
        Ok(Some(EcnSpec {
            config: None,
            by_rate,
            hpcc_ns3_by_rate: false,
            priorities: 0xFE,
        }))
    }

    /// The flows as RoCEv2 QPs `flow<i>` with the reference's transport, window and, with
    /// `CC_MODE` 1, DCQCN, with 3 HPCC, 7 TIMELY, 8 DCTCP, 10 HPCC-PINT.
    fn flow_specs(&self) -> Vec<FlowSpec> {
        let c = &self.config;
        let rc = RcConfig {
            mtu: c.packet_payload_size,
            ..RcConfig::hpcc_ns3()
        };
        let cc = match c.cc_mode {
            1 => CcSpec::Dcqcn {
                rp: self.rp_params(),
                np: NpParams::hpcc_ns3(),
            },
            8 => CcSpec::Dctcp {
                params: self.dctcp_params(),
            },
            7 => CcSpec::Timely {
                params: self.timely_params(),
            },
            3 => CcSpec::Hpcc {
                params: self.hpcc_params(),
                base_rtt_ns: 0, // per flow below
            },
            10 => CcSpec::HpccPint {
                params: self.pint_params(),
                max_rtt_ns: 0, // below
            },
            _ => CcSpec::None,
        };
        // HPCC's T: the largest base RTT (`GLOBAL_T 1`) or the pair's own
        let cc_of = |bdps: &PairBdps, src: u32, dst: u32| match &cc {
            CcSpec::Hpcc { params, .. } => CcSpec::Hpcc {
                params: *params,
                base_rtt_ns: if c.global_t {
                    bdps.max_rtt_ns
                } else {
                    bdps.rtt_of(src, dst)
                },
            },
            // the switches' T is the network's maxRtt whatever GLOBAL_T says (`MaxRtt`)
            CcSpec::HpccPint { params, .. } => CcSpec::HpccPint {
                params: *params,
                max_rtt_ns: bdps.max_rtt_ns,
            },
            other => other.clone(),
        };
        let bdps = if c.has_win || c.cc_mode == 10 {
            let pairs: Vec<(u32, u32)> = if c.global_t || !c.has_win {
                Vec::new()
            } else {
                self.flows.iter().map(|f| (f.src, f.dst)).collect()
            };
            self.topology.pair_bdps(u64::from(c.packet_payload_size), &pairs)
        } else {
            PairBdps::default()
        };
        self.flows
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
                    cc: cc_of(&bdps, f.src, f.dst),
                    ack_priority: f.pg,
                    udp_dport: f.dport,
                    window: self.window(&bdps, f.src, f.dst),
                    dscp: crate::config::qos::ROCE_DSCP,
                })),
            })
            .collect()
    }
}

impl Topology {
    /// The topology as a simulation without traffic (add flows or workloads): hosts `h<id>`
    /// and switches `s<id>` keeping the file's node ids, links with their delays and PFC on the
    /// priorities of `lossless`, switches with `buffer_bytes` of buffer run by the reference's
    /// MMU and the ECN marking `ecn` gives for their ports; the HPCC ns-3 modelling choices;
    /// 1 s long.
    pub fn sim_config<E>(
        &self,
        name: &str,
        buffer_bytes: u64,
        lossless: u8,
        mtu: u64,
        ecn: impl Fn(&[&Link]) -> Result<Option<EcnSpec>, E>,
    ) -> Result<SimConfig, E> {
        let t = self;
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
            let ports: Vec<&Link> = t.links.iter().filter(|l| l.a == id || l.b == id).collect();
            nodes.push(NodeConfig {
                name: format!("s{id}"),
                kind: NodeKind::Switch(SwitchConfig {
                    buffer_bytes,
                    // the MMU of the preset (`BufferModel::Ns3`) sizes each port's headroom
                    // from its rate and delay, and takes its threshold and resume offset from
                    // the fork; these two apply to the shared-buffer model only
                    threshold: Threshold::Dynamic { alpha_1024: 128 },
                    xon_offset_bytes: NS3_RESUME_OFFSET_BYTES,
                    headroom_bytes: None,
                    mtu,
                    ecn: ecn(&ports)?,
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
                    length_m: 0,
                    delay: Some(l.delay),
                    ..LinkConfig::new(l.a, l.b, l.rate, fc)
                }
            })
            .collect();
        Ok(SimConfig {
            name: name.to_string(),
            description: format!("{} nodes, {} links", t.nodes, t.links.len()),
            seed: 1,
            duration: Duration::from_secs(1),
            nodes,
            links,
            flows: Vec::new(),
            workloads: Vec::new(),
            signals: Vec::new(),
            model: ModelConfig::HPCC_NS3,
            pathology: Default::default(),
        })
    }
}

impl Topology {
    /// The topology with Poisson flow arrivals between all its hosts (as the reference's
    /// `traffic_gen.py` draws them: each host a source at `load` of its link, uniformly random
    /// other destinations, sizes from `cdf`), every flow a RoCEv2 QP with the reference's
    /// transport and DCQCN (its `hpcc_ns3` presets, CNPs as ACK flags) on priority 3, and ECN
    /// marking at every switch with the reference's thresholds for each port's rate (Kmin
    /// 100 KB and Kmax 400 KB per 25 Gb/s, Pmax 0.2, at dequeue), for `duration`.
    pub fn websearch_dcqcn(&self, cdf: SizeCdf, load: f64, duration: Duration) -> SimConfig {
        let ecn = |_: &[&Link]| -> Result<Option<EcnSpec>, std::convert::Infallible> {
            Ok(Some(EcnSpec {
                config: None,
                by_rate: Vec::new(),
                hpcc_ns3_by_rate: true,
                priorities: 0xFE,
            }))
        };
        let Ok(mut sim) = self.sim_config("websearch-dcqcn", 32 << 20, 1 << 3, 1000, ecn);
        let hosts: Vec<NodeId> = (0..self.nodes).filter(|&n| !self.is_switch[n as usize]).collect();
        let total_bps: u128 = self
            .links
            .iter()
            .filter(|l| !self.is_switch[l.a as usize] || !self.is_switch[l.b as usize])
            .map(|l| u128::from(l.rate.bps()))
            .sum();
        sim.name = "websearch-dcqcn".into();
        sim.description = format!(
            "{} hosts, Poisson flows at {:.0} % load, sizes from the CDF, DCQCN (HPCC ns-3 presets)",
            hosts.len(),
            load * 100.0
        );
        sim.duration = duration;
        sim.workloads.push(Workload {
            name: "websearch".into(),
            mean_interarrival: Workload::interarrival_for_bps(&cdf, load, total_bps),
            src: hosts.clone(),
            dst: hosts,
            priority: 3,
            mtu: 1000,
            cdf,
            start: Instant::ZERO,
            stop: Instant::MAX,
            transport: Some(Box::new(QpSpec {
                rc: RcConfig::hpcc_ns3(),
                cc: CcSpec::Dcqcn {
                    rp: RpParams::hpcc_ns3(),
                    np: NpParams::hpcc_ns3(),
                },
                ack_priority: 3,
                udp_dport: 100,
                window: QpWindow::NONE,
                dscp: crate::config::qos::ROCE_DSCP,
            })),
        });
        sim
    }
}

/// The reference's bandwidth-delay products of host pairs (`third.cc` main, "get BDP and
/// delay"): base RTT × the path's slowest rate / 8, in bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairBdps {
    /// The BDPs of the pairs asked for, by (src, dst).
    bdp: std::collections::HashMap<(u32, u32), u64>,
    /// The largest over all pairs (`maxBdp`).
    pub max: u64,
    /// The largest base RTT over all pairs (`maxRtt`), ns.
    pub max_rtt_ns: u64,
    /// The base RTTs of the pairs asked for, ns.
    rtt: std::collections::HashMap<(u32, u32), u64>,
}

impl PairBdps {
    /// The BDP of the path from `src` to `dst` (0: none).
    pub fn of(&self, src: u32, dst: u32) -> u64 {
        self.bdp.get(&(src, dst)).copied().unwrap_or(0)
    }
    /// The base RTT of the path from `src` to `dst`, ns (0: none).
    pub fn rtt_of(&self, src: u32, dst: u32) -> u64 {
        self.rtt.get(&(src, dst)).copied().unwrap_or(0)
    }
}

impl Topology {
    /// The BDP of every host pair as the reference computes it (`CalculateRoute`): a BFS from
    /// each host through switches, each node taking the delay, the tx time of a
    /// `payload`-byte packet (no headers, whole ns) and the slowest rate of the path it was
    /// first reached by; rtt = 2 × delay + tx time, bdp = rtt × rate / 10⁹ / 8. The largest
    /// over all pairs, and the BDP of each (src, dst) of `pairs`. The search is the one the
    /// engine makes for the standalone FCT (`Simulator::ns3_paths`), here on the topology
    /// file, before any simulator exists.
    pub fn pair_bdps(&self, payload: u64, pairs: &[(u32, u32)]) -> PairBdps {
        let n = self.nodes as usize;
        let wanted: std::collections::HashSet<(u32, u32)> = pairs.iter().copied().collect();
        // neighbours in ascending node id (the fork's `nbr2if` is a map)
        let mut nbr: Vec<Vec<(u32, &Link)>> = vec![Vec::new(); n];
        for l in &self.links {
            nbr[l.a as usize].push((l.b, l));
            nbr[l.b as usize].push((l.a, l));
        }
        for v in &mut nbr {
            v.sort_by_key(|(x, _)| *x);
        }
        let mut out = PairBdps {
            bdp: std::collections::HashMap::new(),
            max: 0,
            max_rtt_ns: 0,
            rtt: std::collections::HashMap::new(),
        };
        // per node: (delay ns, tx ns, slowest rate b/s), None: not reached
        let mut seen: Vec<Option<(u128, u128, u128)>> = vec![None; n];
        let mut queue: Vec<u32> = Vec::with_capacity(n);
        for host in (0..self.nodes).filter(|&h| !self.is_switch[h as usize]) {
            seen.iter_mut().for_each(|s| *s = None);
            queue.clear();
            seen[host as usize] = Some((0, 0, u128::from(u64::MAX)));
            queue.push(host);
            let mut i = 0;
            while i < queue.len() {
                let now = queue[i];
                i += 1;
                let Some((d, tx, bw)) = seen[now as usize] else {
                    continue;
                };
                for &(next, l) in &nbr[now as usize] {
                    if seen[next as usize].is_some() {
                        continue;
                    }
                    let rate = u128::from(l.rate.bps());
                    seen[next as usize] = Some((
                        d + l.delay.as_ns(),
                        tx + crate::config::model::ns3_hop_tx_ns(payload, l.rate),
                        bw.min(rate),
                    ));
                    if self.is_switch[next as usize] {
                        queue.push(next);
                    }
                }
            }
            for other in (0..self.nodes).filter(|&h| !self.is_switch[h as usize]) {
                let Some((d, tx, bw)) = seen[other as usize] else {
                    continue;
                };
                let rtt = 2 * d + tx;
                let bdp = (rtt * bw / 1_000_000_000 / 8).min(u128::from(u64::MAX)) as u64;
                if wanted.contains(&(other, host)) {
                    out.bdp.insert((other, host), bdp);
                    out.rtt
                        .insert((other, host), rtt.min(u128::from(u64::MAX)) as u64);
                }
                out.max = out.max.max(bdp);
                out.max_rtt_ns = out.max_rtt_ns.max(rtt.min(u128::from(u64::MAX)) as u64);
            }
        }
        out
    }
}
