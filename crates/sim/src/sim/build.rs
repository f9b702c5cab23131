//! Building a simulator from a configuration: ports and their engines, switch buffers with
//! headroom, shortest-path routes with ECMP candidates (`routes.rs`), flows and the first
//! events.

use std::collections::{HashMap, VecDeque};

use lossless_proto::dcbx::{Agent, DcbxConfig};
use lossless_proto::ecn::{EcnMarker, MarkPoint};
use lossless_proto::ets::{PortParams, Scheduler};
use lossless_proto::flow_control::{FlowControl, FlowControlConfig, Mode, Signalling};
use lossless_proto::hpcc_pint::{PintCodec, PintPort};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::qcn::Cp;
use lossless_proto::units::{Duration, Instant, Rate};
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::buffer::{NS3_RESUME_OFFSET_BYTES, Ns3Mmu, Ns3Port, SharedBuffer, SwitchBuffer};
use crate::config::headroom;
use crate::config::model::{BufferModel, Ecmp};
use crate::config::traffic::{FlowSpec, MIN_FRAME, frame_len};
use crate::config::transport::{CcSpec, ROCE_UDP_PORT};
use crate::config::{HostConfig, LinkConfig, NodeKind, Signal, SimConfig, SwitchConfig};
use crate::event::EventQueue;
use crate::frame::{FlowId, NodeId, PortId};
use crate::observer::Observer;
use crate::selection::{Ets, PortSelection, StrictPriority};
use crate::sim::features::qp::QpError;
use crate::sim::order;
use crate::sim::{
    BuildError, EgressQueue, Event, FlowState, Host, Nic, Node, Port, PortCn, PortDcbx, PortKind, Qp,
    Simulator, Switch, station_address,
};
use crate::stats::{FlowStats, Totals};

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Builds a simulator with a given event queue.
    pub fn build(config: SimConfig, observer: O, queue: Q) -> Result<Self, BuildError> {
        Self::build_part(std::sync::Arc::new(config), observer, queue, None)
    }

    /// Builds a simulator with a given event queue; as partition `part` of a split fabric, a
    /// flow's QP only where [`holds_qp`] says (the partition sets `part` itself afterwards).
    pub(in crate::sim) fn build_part(
        config: std::sync::Arc<SimConfig>,
        observer: O,
        mut queue: Q,
        part: Option<&crate::sim::partition::PartState>,
    ) -> Result<Self, BuildError> {
        if config.nodes.len() > order::MAX_NODES {
            return Err(BuildError::TooManyNodes {
                nodes: config.nodes.len(),
            });
        }
        let max_frame_bytes = max_frame_bytes(&config)?;
        let (ports, node_ports) = build_ports(&config, max_frame_bytes, part)?;
        let is_host: Vec<bool> = config
            .nodes
            .iter()
            .map(|nd| matches!(nd.kind, NodeKind::Host(_)))
            .collect();
        let has_qps = config.flows.iter().any(|f| f.transport.is_some())
            || config.workloads.iter().any(|w| w.transport.is_some());
        let nodes = build_nodes(&config, &ports, &node_ports, &is_host, has_qps, part)?;
        let mut flows = Vec::with_capacity(config.flows.len());
        let mut pair_flows = HashMap::new();
        for f in &config.flows {
            check_flow(f, &is_host)?;
            let line = ports[node_ports[f.src as usize][0] as usize].rate;
            let with_qp = holds_qp(part, f);
            let fs =
                FlowState::new(f.clone(), &mut pair_flows, line, config.seed, with_qp).map_err(|source| {
                    BuildError::Qp {
                        flow: f.name.clone(),
                        source,
                    }
                })?;
            flows.push(fs);
        }
        for w in &config.workloads {
            let f = w.src.iter().chain(&w.dst).find(|&&x| !is_host[x as usize]);
            if let Some(&x) = f {
                return Err(BuildError::Flow {
                    flow: w.name.clone(),
                    problem: format!("node {} is not a host", config.nodes[x as usize].name),
                });
            }
        }
        // what the build schedules comes first among equal delays (`order.rs`)
        let mut at_build =
            |at: Instant, ev: Event| queue.push_tied(at, order::tie(Instant::ZERO, at, order::BUILD), ev);
        for (i, f) in flows.iter().enumerate() {
            at_build(f.spec.next_on(f.spec.start), Event::Emit(i as FlowId));
        }
        for (i, s) in config.signals.iter().enumerate() {
            check_signal(s, &config, &nodes, &ports)?;
            at_build(s.at, Event::Signal(i as u32));
        }
        let mut rngs: Vec<Pcg64> = (0..config.workloads.len())
            .map(|i| Pcg64::seed_from_u64(workload_seed(config.seed, i)))
            .collect();
        for (i, w) in config.workloads.iter().enumerate() {
            let t = w.start + w.draw_gap(&mut rngs[i]);
            at_build(t, Event::NewFlow(i as u32));
        }
        let end = Instant::ZERO + config.duration;
        let hop_limit = config.pathology.hop_limit;
        // a link's two ports are 2·i (its `a` end) and 2·i + 1
        let link_errors = crate::sim::features::link_errors::LinkErrors::new(
            config.seed,
            ports.len(),
            (config.links.iter().enumerate()).map(|(i, l)| (l.ber, 2 * i as PortId, 2 * i as PortId + 1)),
        );
        let mut sim = Simulator {
            config,
            now: Instant::ZERO,
            end,
            queue,
            ports,
            nodes,
            flows,
            pair_flows,
            rngs,
            scheduler: order::BUILD,
            tie: 0,
            totals: Totals::default(),
            events: 0,
            observer,
            fault: None,
            patho: crate::sim::features::pathology::PathoState::new(hop_limit),
            link_errors,
            part: None,
            absorbed: None,
        };
        for p in 0..sim.ports.len() {
            sim.arm_timer(p as PortId);
        }
        for f in &mut sim.flows {
            f.scheduled = true;
        }
        sim.start_dcbx();
        sim.build_pathology()?;
        sim.start_pathology();
        Ok(sim)
    }

    /// The state of a flow a workload creates now (`spec`, its source's line rate `line`): its
    /// QP only where [`holds_qp`] says.
    pub(in crate::sim) fn new_flow_state(
        &mut self,
        spec: FlowSpec,
        line: Rate,
    ) -> Result<FlowState, QpError> {
        let with_qp = holds_qp(self.part.as_deref(), &spec);
        FlowState::new(spec, &mut self.pair_flows, line, self.config.seed, with_qp)
    }

    /// Gives every other partition's switch (a partition built its shared buffer without
    /// ports, `build_nodes`) its shared buffer as built: what such a partition's untouched
    /// copy was before (the peaks are then taken from their owners: the digests over MPI
    /// ranks, [`Simulator::absorb`]).
    pub(in crate::sim) fn restore_switch_buffers(&mut self) {
        let Some(ps) = self.part.as_deref() else {
            return;
        };
        for (i, node) in self.nodes.iter_mut().enumerate() {
            let (Node::Switch(sw), NodeKind::Switch(s)) = (node, &self.config.nodes[i].kind) else {
                continue;
            };
            if ps.of_node[i] != ps.me
                && matches!(sw.buffer, SwitchBuffer::Shared(_))
                // (built once with the same arguments, by the partition of the switch)
                && let Ok(b) = shared_buffer(s, &sw.ports, &self.config)
            {
                sw.buffer = SwitchBuffer::Shared(b);
            }
        }
    }

    /// Gives every switch port whose congestion notification (ECN markers, QCN congestion
    /// points) a partition did not build (another partition's, `build_ports`) that state as
    /// built: what such a partition's untouched copy was before partitions built only their
    /// own (the counters are then taken from their owners: the digests over MPI ranks,
    /// [`Simulator::absorb`]).
    pub(in crate::sim) fn restore_port_cn(&mut self) {
        let seed = self.config.seed;
        for (p, port) in self.ports.iter_mut().enumerate() {
            let nd = &self.config.nodes[port.node as usize];
            if port.cn.is_some() {
                continue;
            }
            if let NodeKind::Switch(sw) = &nd.kind
                // (built once with the same arguments, by the partition of its switch)
                && let Ok(Some((cn, _, _))) = port_cn(sw, p as PortId, port.local, port.rate, seed, &nd.name)
            {
                port.cn = Some(Box::new(cn));
            }
        }
    }
}

/// Whether partition `part` (`None`: a whole fabric) holds the QP of flow `spec`: the
/// partitions of its source and destination hosts do (their events are the QP's), and, for a
/// congestion control whose packets carry a field that switches stamp (HPCC's INT, PINT,
/// TIMELY's timestamp), every partition, whose switches write their part of it into their copy
/// of the QP's rings (`features/hpcc.rs`). Elsewhere nothing reads a QP: its frames' hops only
/// read the flow's specification and ports (ECMP), and the report takes each end from its
/// owner (`partition::merge`, or the digests over MPI ranks, with a fresh QP where partition 0
/// holds neither end: [`Simulator::restore_qps`]).
pub(in crate::sim) fn holds_qp(part: Option<&crate::sim::partition::PartState>, spec: &FlowSpec) -> bool {
    let Some(ps) = part else {
        return true;
    };
    let Some(t) = spec.transport.as_deref() else {
        return false;
    };
    crate::sim::features::qp::stamped(&t.cc)
        || ps.of_node[spec.src as usize] == ps.me
        || ps.of_node[spec.dst as usize] == ps.me
}

/// The largest frame any port of the simulation is asked to carry: every source's and
/// workload's MTU with header, tag and FCS; the schedulers are built to accept it.
fn max_frame_bytes(config: &SimConfig) -> Result<u32, BuildError> {
    let frame_of = |mtu: u64, t: &Option<Box<crate::config::transport::QpSpec>>| match t {
        None => frame_len(mtu),
        Some(q) => config.model.roce_data_len(u64::from(q.rc.mtu), q.cc.cn_tag()) + q.cc.int_bytes(),
    };
    let largest_frame = config
        .flows
        .iter()
        .map(|f| frame_of(f.mtu, &f.transport))
        .chain(config.workloads.iter().map(|w| frame_of(w.mtu, &w.transport)))
        .max()
        .unwrap_or(MIN_FRAME)
        .max(MIN_FRAME);
    u32::try_from(largest_frame).map_err(|_| BuildError::FrameTooLarge { bytes: largest_frame })
}

/// The port at the other end of `p`'s link: a link's `a` end is port 2·i, its `b` end
/// 2·i + 1 ([`build_ports`]), so it is found without reading `p`'s port (whose line may be cold).
#[inline(always)]
pub(in crate::sim) const fn peer_of(p: PortId) -> PortId {
    p ^ 1
}

/// Every link's two ports (a link's `a` end is port 2·i, its `b` end 2·i + 1), and each node's
/// ports in link order.
/// A partition (`part`) builds the congestion notification of its own switches' ports only
/// (see [`Simulator::restore_port_cn`]).
fn build_ports(
    config: &SimConfig,
    max_frame_bytes: u32,
    part: Option<&crate::sim::partition::PartState>,
) -> Result<(Vec<Port>, Vec<Vec<PortId>>), BuildError> {
    let n = config.nodes.len();
    let mut node_ports: Vec<Vec<PortId>> = vec![Vec::new(); n];
    let mut ports: Vec<Port> = Vec::with_capacity(config.links.len() * 2);
    for (li, link) in config.links.iter().enumerate() {
        let pa = ports.len() as PortId;
        let pb = pa + 1;
        let ends = [
            (link.a, pb, link.fc_a, pa, &link.dcbx_a, &link.trust_a),
            (link.b, pa, link.fc_b, pb, &link.dcbx_b, &link.trust_b),
        ];
        for (node, peer, fc, me, dcbx_cfg, trust) in ends {
            debug_assert_eq!(peer, peer_of(me));
            let local = node_ports[node as usize].len() as u32;
            node_ports[node as usize].push(me);
            let end = PortEnd {
                node,
                peer,
                fc,
                me,
                local,
                dcbx: dcbx_cfg.as_ref(),
                with_cn: part.is_none_or(|ps| ps.of_node[node as usize] == ps.me),
            };
            let mut port = build_port(config, li, link, end, max_frame_bytes)?;
            port.dscp_map = trust.dscp_map().map(|m| Box::new(*m));
            // the sender's side of the wire says whether the receiver classifies by DSCP
            port.peer_trusts_dscp = if me == pa {
                link.trust_b.dscp_map().is_some()
            } else {
                link.trust_a.dscp_map().is_some()
            };
            ports.push(port);
        }
    }
    // HPCC's INT record names a port's rate by an index into 25..400 Gb/s (the fork prints
    // "unknown rate" and reads any other as 25 G): refused rather than misread
    let hpcc = config
        .flows
        .iter()
        .filter_map(|f| f.transport.as_deref())
        .chain(config.workloads.iter().filter_map(|w| w.transport.as_deref()))
        .any(|t| t.cc.stamps_int());
    if let Some(p) = ports
        .iter()
        .find(|p| hpcc && p.int_stamp && !lossless_wire::int::LINE_RATES[..5].contains(&p.rate.bps()))
    {
        let flow = config
            .flows
            .iter()
            .find(|f| f.transport.as_deref().is_some_and(|t| t.cc.stamps_int()))
            .map_or_else(|| "of a workload".to_string(), |f| f.name.clone());
        return Err(BuildError::Flow {
            flow,
            problem: format!(
                "HPCC's INT records know switch ports of 25, 50, 100, 200 or 400 Gb/s only; a port of switch {} runs at {}",
                config.nodes[p.node as usize].name, p.rate
            ),
        });
    }
    Ok((ports, node_ports))
}

/// Every node: a host with its one port, a switch with its ports, its buffer and its routes
/// (computed in one pass once every host has its port).
fn build_nodes(
    config: &SimConfig,
    ports: &[Port],
    node_ports: &[Vec<PortId>],
    is_host: &[bool],
    has_qps: bool,
    part: Option<&crate::sim::partition::PartState>,
) -> Result<Vec<Node>, BuildError> {
    let n = config.nodes.len();
    // the rate of the first host's NIC: the HPCC ns-3 MMU's reference rate (`get_nic_rate`)
    let nic_rate = (0..n)
        .find(|&i| is_host[i] && !node_ports[i].is_empty())
        .map(|i| ports[node_ports[i][0] as usize].rate);
    let mut nodes = Vec::with_capacity(n);
    for (i, nd) in config.nodes.iter().enumerate() {
        match &nd.kind {
            NodeKind::Host(h) => {
                if node_ports[i].len() != 1 {
                    return Err(BuildError::HostLinks {
                        host: nd.name.clone(),
                        links: node_ports[i].len(),
                    });
                }
                nodes.push(Node::Host(build_host(config, i, h, node_ports[i][0], has_qps)));
            }
            NodeKind::Switch(s) => {
                let buffer = match config.model.buffer {
                    BufferModel::Shared => shared_buffer(s, &node_ports[i], config).map(SwitchBuffer::Shared),
                    BufferModel::Ns3 => {
                        ns3_mmu(s, &node_ports[i], ports, config, nic_rate).map(SwitchBuffer::Ns3)
                    }
                }
                .map_err(|source| BuildError::Buffer {
                    switch: nd.name.clone(),
                    source,
                })?;
                // another partition's switch: its shared buffer checked (every partition
                // refuses what one simulator refuses), then kept without ports (its per port
                // and priority state is read only by its own events and the report,
                // [`Simulator::restore_switch_buffers`])
                let buffer = match buffer {
                    SwitchBuffer::Shared(_) if part.is_some_and(|ps| ps.of_node[i] != ps.me) => {
                        SharedBuffer::new(
                            s.buffer_bytes,
                            s.threshold,
                            s.xon_offset_bytes,
                            Vec::new(),
                            Vec::new(),
                        )
                        .map(SwitchBuffer::Shared)
                        .map_err(|source| BuildError::Buffer {
                            switch: nd.name.clone(),
                            source,
                        })?
                    }
                    b => b,
                };
                nodes.push(Node::Switch(Switch {
                    ports: node_ports[i].clone(),
                    buffer,
                    routes: Default::default(),
                }));
            }
        }
    }
    // every host has its one port now: every switch's routes in one pass
    for (node, r) in nodes.iter_mut().zip(crate::sim::fabric::routes::compute(
        node_ports,
        ports,
        is_host,
        config.model.ecmp == Ecmp::Ns3,
    )) {
        if let (Node::Switch(sw), Some(r)) = (node, r) {
            sw.routes = r;
        }
    }
    Ok(nodes)
}

/// A scripted request must name a host, and on a PFC port a PFC-enabled priority.
fn check_signal(s: &Signal, config: &SimConfig, nodes: &[Node], ports: &[Port]) -> Result<(), BuildError> {
    let name = || config.nodes[s.node as usize].name.clone();
    let Some(Node::Host(h)) = nodes.get(s.node as usize) else {
        return Err(BuildError::Signal {
            host: config
                .nodes
                .get(s.node as usize)
                .map_or_else(|| s.node.to_string(), |n| n.name.clone()),
            problem: "not a host".into(),
        });
    };
    let fc = ports[h.port as usize].mac.config();
    if fc.mode == Mode::Pfc && fc.active_mask() & (1 << (s.prio & 7)) == 0 || s.prio > 7 {
        return Err(BuildError::Signal {
            host: name(),
            problem: format!(
                "priority {} is not PFC-enabled on its port (enabled mask {:#010b})",
                s.prio,
                fc.active_mask()
            ),
        });
    }
    Ok(())
}

fn check_flow(f: &FlowSpec, is_host: &[bool]) -> Result<(), BuildError> {
    let err = |problem: String| BuildError::Flow {
        flow: f.name.clone(),
        problem,
    };
    if !is_host[f.src as usize] {
        return Err(err("source is not a host".into()));
    }
    if !is_host[f.dst as usize] {
        return Err(err("destination is not a host".into()));
    }
    if f.src == f.dst {
        return Err(err("source and destination are the same host".into()));
    }
    if f.priority > 7 {
        return Err(err(format!("priority {} is not 0..=7", f.priority)));
    }
    Ok(())
}

/// Host `i` (configured `h`) with its one port `port`: the receive pipeline, its stall if the
/// scenario has one, and the NIC's QP state when the scenario has QPs.
fn build_host(config: &SimConfig, i: usize, h: &HostConfig, port: PortId, has_qps: bool) -> Host {
    Host {
        port,
        nic_cap: h.nic_queue_frames.max(1),
        waiting: std::array::from_fn(|_| VecDeque::new()),
        rx_rate: h.rx_rate,
        rx_buffer: h.rx_buffer_bytes,
        rx_xoff: h.rx_xoff_bytes,
        rx_xon: h.rx_xon_bytes,
        rx_queue: VecDeque::new(),
        rx_backlog: 0,
        rx_peak: 0,
        rx_busy: false,
        rx_xoff_on: false,
        stall: config
            .pathology
            .hosts
            .iter()
            .find(|hp| hp.node as usize == i)
            .map(|hp| Box::new(crate::sim::features::pathology::storm::HostStall::new(hp))),
        nic: has_qps.then(|| {
            Box::new(Nic {
                qp_ready: std::array::from_fn(|_| Vec::with_capacity(16)),
                last_served: [FlowId::MAX; 8],
                replies: VecDeque::new(),
            })
        }),
    }
}

/// One end of a link: its node, the port at the other end, its flow control as configured,
/// its own port id, its index among its node's ports, its DCBX configuration, and whether its
/// congestion notification is built (a partition's own switches' ports).
struct PortEnd<'a> {
    node: NodeId,
    peer: PortId,
    fc: FlowControlConfig,
    me: PortId,
    local: u32,
    dcbx: Option<&'a DcbxConfig>,
    with_cn: bool,
}

/// The port at `end` of link `li`: its transmission selection, flow-control engine (with the
/// model's framing and signalling), DCBX agent, congestion notification and kind.
fn build_port(
    config: &SimConfig,
    li: usize,
    link: &LinkConfig,
    end: PortEnd<'_>,
    max_frame_bytes: u32,
) -> Result<Port, BuildError> {
    let PortEnd {
        node,
        peer,
        fc,
        me,
        local,
        dcbx: dcbx_cfg,
        with_cn,
    } = end;
    let mut params = PortParams {
        max_frame_bytes,
        ..PortParams::new(link.rate)
    };
    for (tc, slope) in link.ets_idle_slope.iter().enumerate() {
        if let Some(r) = slope {
            params = params.with_idle_slope(tc as u8, *r);
        }
    }
    let sel: PortSelection = match &link.ets {
        // a DCBX port gets its operational ETS scheduler when its agent starts
        _ if dcbx_cfg.is_some() => PortSelection::Strict(StrictPriority),
        None => PortSelection::Strict(StrictPriority),
        Some(ets) => PortSelection::Ets(Box::new(Ets(
            Scheduler::ieee(ets, &params).map_err(|source| BuildError::Ets { link: li, source })?
        ))),
    };
    let mut fc = fc;
    fc.rate = link.rate;
    fc.framing = config.model.framing;
    fc.signalling = config.model.pfc;
    if fc.signalling == Signalling::Ns3 {
        // the fork's device obeys a PFC frame the instant it is received
        fc.reaction_delay = Duration::ZERO;
    }
    fc.station_address = station_address(me);
    let template = fc;
    let dcbx = match dcbx_cfg {
        None => None,
        Some(d) => {
            // PFC off until negotiation makes it operational (document 003)
            fc.mode = Mode::Off;
            let mut ac = AgentConfig::new(station_address(me));
            ac.port_name = Some(format!("{}.{local}", config.nodes[node as usize].name));
            ac.system_name = Some(config.nodes[node as usize].name.clone());
            let agent = Agent::new(ac, d.clone()).map_err(|source| BuildError::Dcbx { link: li, source })?;
            Some(Box::new(PortDcbx::new(agent, template, params)))
        }
    };
    let mac = FlowControl::new(fc).map_err(|source| BuildError::FlowControl { link: li, source })?;
    let lossless = match fc.mode {
        Mode::Off => 0,
        Mode::Pause => 0xFF,
        Mode::Pfc => fc.active_mask(),
    };
    let (cn, (enq_mask, deq_mask), cp_mask) = match &config.nodes[node as usize].kind {
        NodeKind::Switch(sw) => port_cn(
            sw,
            me,
            local,
            link.rate,
            config.seed,
            &config.nodes[node as usize].name,
        )?
        // (checked all the same: every partition refuses what one simulator refuses)
        .map_or((None, (0, 0), 0), |(c, e, q)| {
            (with_cn.then(|| Box::new(c)), e, q)
        }),
        NodeKind::Host(_) => (None, (0, 0), 0),
    };
    Ok(Port {
        peer_trusts_dscp: false,
        tx_end_owed: false,
        tx_end_tie: 0,
        wire_lost: 0,
        tx_end_at: Instant::ZERO,
        dscp_map: None,
        node,
        local,
        peer,
        rate: link.rate,
        prop: Duration::from_ps(
            link.propagation()
                .as_ps()
                .saturating_add(link.interface_delay.as_ps()),
        ),
        // grown on demand (a few doublings while the run warms up, none in steady state):
        // preallocating 64 frames per queue cost 37 kB per link whatever its traffic
        queues: std::array::from_fn(|_| EgressQueue::default()),
        nonempty: 0,
        busy: false,
        current: None,
        inflight: Default::default(),
        mac,
        ctl_check: true,
        timer_stale: true,
        timer_at: Instant::MAX,
        sel,
        lossless,
        xoff_pairs: 0,
        spread: [0; 64],
        paused_seen: 0,
        counts: None,
        fault: Default::default(),
        dcbx,
        lldp_tx: VecDeque::new(),
        lldp_wire: VecDeque::new(),
        pull: 0,
        reply_first: false,
        staged: 0,
        cn_enq: enq_mask | cp_mask,
        cn_deq: deq_mask,
        lldp_queued: false,
        // switches stamp INT when some QP runs HPCC (its data packets only), PINT codes when
        // some QP runs HPCC-PINT (the estimate sees every frame)
        int_stamp: matches!(config.nodes[node as usize].kind, NodeKind::Switch(_))
            && config
                .flows
                .iter()
                .filter_map(|f| f.transport.as_deref())
                .chain(config.workloads.iter().filter_map(|w| w.transport.as_deref()))
                .any(|t| t.cc.stamps_int() || t.cc.stamps_pint()),
        pint: match &config.nodes[node as usize].kind {
            NodeKind::Switch(_) => pint_port(config, me, link.rate)?,
            NodeKind::Host(_) => None,
        },
        kind: match (&config.nodes[node as usize].kind, config.model.buffer) {
            (NodeKind::Host(_), _) => PortKind::Host,
            (NodeKind::Switch(_), BufferModel::Shared) => PortKind::Switch,
            (NodeKind::Switch(_), BufferModel::Ns3) => PortKind::SwitchReleasingAtDequeue,
        },
        cn,
    })
}

impl FlowState {
    /// A flow's state; `pair_flows` counts the flows of each (source, destination) pair so
    /// far (the flow's UDP source port is 10000 + that count, as the ns-3 reference does);
    /// `seed` is the scenario's (a QP's engine that draws gets a stream of its own from it);
    /// its QP, if it has a transport, only `with_qp` (see [`holds_qp`]).
    pub(super) fn new(
        spec: FlowSpec,
        pair_flows: &mut HashMap<(NodeId, NodeId), u16>,
        line: Rate,
        seed: u64,
        with_qp: bool,
    ) -> Result<Self, QpError> {
        let (sport, dport) = udp_ports(pair_flows, spec.src, spec.dst, spec.transport.as_deref());
        let qp = match &spec.transport {
            Some(t) if with_qp => Some(new_qp(&spec, t, sport, line, seed)?),
            _ => None,
        };
        Ok(FlowState {
            qp,
            sport,
            dport,
            remaining: spec.size.unwrap_or(u64::MAX),
            frames: spec.size.map_or(u64::MAX, |b| b.div_ceil(spec.mtu.max(1))),
            next_at: spec.start,
            scheduled: false,
            done_emitting: false,
            stats: FlowStats::default(),
            spec,
        })
    }
}

/// The UDP source and destination ports of the next flow from `src` to `dst` (with
/// `transport`): the source port counts the flows between them before it (from 10,000, as
/// the reference), in `pair_flows`.
pub(crate) fn udp_ports(
    pair_flows: &mut HashMap<(NodeId, NodeId), u16>,
    src: NodeId,
    dst: NodeId,
    transport: Option<&crate::config::transport::QpSpec>,
) -> (u16, u16) {
    let n = pair_flows.entry((src, dst)).or_insert(0);
    let sport = 10_000u16.wrapping_add(*n);
    *n = n.wrapping_add(1);
    (sport, transport.map_or(ROCE_UDP_PORT, |t| t.udp_dport))
}

/// The QP of flow `spec` (transport `t`, UDP source port `sport`, its source's line rate
/// `line`, the scenario's `seed`) as it starts.
pub(super) fn new_qp(
    spec: &FlowSpec,
    t: &crate::config::transport::QpSpec,
    sport: u16,
    line: Rate,
    seed: u64,
) -> Result<Box<Qp>, QpError> {
    let first = spec.next_on(spec.start);
    let mut qp = Qp::new(t, spec.size, line, first)?;
    // one stream per flow, named by its endpoints and source port
    qp.seed_sampling(super::splitmix64(
        seed ^ (u64::from(spec.src) << 40) ^ (u64::from(spec.dst) << 16) ^ u64::from(sport) ^ 0x5049_4E54,
    ));
    // the first `Emit` (pushed by the caller at `first`) is the QP's
    qp.emit_at = first;
    Ok(Box::new(qp))
}

/// A port's congestion notification: its markers and CPs, the priorities whose ECN markers
/// decide at enqueue and at dequeue, and the priorities of its CPs.
type PortCnBuilt = (PortCn, (u8, u8), u8);

/// The ECN markers and QCN congestion points of port `me` (local index `local`) of a switch
/// configured with `sw`, or `None` when it has neither.
fn port_cn(
    sw: &SwitchConfig,
    me: PortId,
    local: u32,
    rate: Rate,
    seed: u64,
    switch: &str,
) -> Result<Option<PortCnBuilt>, BuildError> {
    if sw.ecn.is_none() && sw.qcn.is_none() {
        return Ok(None);
    }
    let mut cn = PortCn {
        markers: Default::default(),
        cps: Default::default(),
        cnm_priority: 0,
        cnms_sent: [0; 8],
    };
    // ECN markers deciding at enqueue, at dequeue; QCN congestion points
    let (mut enq_mask, mut deq_mask, mut cp_mask) = (0u8, 0u8, 0u8);
    if let Some(e) = &sw.ecn {
        let Some(cfg) = e.for_rate(rate) else {
            return Err(BuildError::Cn {
                switch: switch.to_string(),
                problem: format!(
                    "port {local} runs at {rate}: no ECN thresholds for that rate (give `kmin_bytes`/`kmax_bytes`, or a `by_rate` entry for {rate})"
                ),
            });
        };
        for q in (0..8u8).filter(|q| e.priorities & (1 << q) != 0) {
            let m = EcnMarker::new(cfg, mix(seed, me, q, 0xEC)).map_err(|err| BuildError::Cn {
                switch: switch.to_string(),
                problem: format!("ECN: {err}"),
            })?;
            match m.point() {
                MarkPoint::Enqueue => enq_mask |= 1 << q,
                MarkPoint::Dequeue => deq_mask |= 1 << q,
            }
            cn.markers[q as usize] = Some(m);
        }
    }
    if let Some(qc) = &sw.qcn {
        cn.cnm_priority = qc.cnm_priority;
        for q in (0..8u8).filter(|q| qc.priorities & (1 << q) != 0) {
            let mut p = qc.cp;
            let a = station_address(me);
            // the port's address and the priority (what the pcap sink writes as the CPID)
            p.cpid = [a[0], a[1], a[2], a[3], a[4], a[5], q, 0];
            let cp = if qc.jitter {
                Cp::new(p, mix(seed, me, q, 0xC9))
            } else {
                Cp::without_jitter(p)
            }
            .map_err(|err| BuildError::Cn {
                switch: switch.to_string(),
                problem: format!("QCN: {err}"),
            })?;
            cn.cps[q as usize] = Some(cp);
            cp_mask |= 1 << q;
        }
    }
    Ok(Some((cn, (enq_mask, deq_mask), cp_mask)))
}

/// The PINT estimate of switch port `me` of rate `rate`, when some QP runs HPCC-PINT: T is
/// the largest `max_rtt_ns` of those QPs, the code that of their log base (which must be one:
/// a switch writes one code).
fn pint_port(config: &SimConfig, me: PortId, rate: Rate) -> Result<Option<Box<PintPort>>, BuildError> {
    let mut pint: Option<(String, f64, u64)> = None;
    let specs = config
        .flows
        .iter()
        .filter_map(|f| f.transport.as_deref().map(|t| (f.name.as_str(), t)))
        .chain(
            config
                .workloads
                .iter()
                .filter_map(|w| w.transport.as_deref().map(|t| (w.name.as_str(), t))),
        );
    for (name, t) in specs {
        if let CcSpec::HpccPint { params, max_rtt_ns } = &t.cc {
            match &mut pint {
                None => pint = Some((name.to_string(), params.log_base, *max_rtt_ns)),
                Some((first, base, rtt)) => {
                    if *base != params.log_base {
                        return Err(BuildError::Flow {
                            flow: name.to_string(),
                            problem: format!(
                                "HPCC-PINT log base {} differs from {}'s {}: the switches write one code",
                                params.log_base, first, base
                            ),
                        });
                    }
                    *rtt = (*rtt).max(*max_rtt_ns);
                }
            }
        }
    }
    let Some((name, base, rtt)) = pint else {
        return Ok(None);
    };
    let port = PintCodec::new(base)
        .and_then(|codec| PintPort::new(codec, rate, rtt, mix(config.seed, me, 0, 0x9127)))
        .map_err(|e| BuildError::Flow {
            flow: name,
            problem: format!("HPCC-PINT: {e}"),
        })?;
    Ok(Some(Box::new(port)))
}

/// The seed of workload `i`'s arrival stream, from the scenario's seed.
pub(crate) fn workload_seed(seed: u64, i: usize) -> u64 {
    super::splitmix64(seed ^ ((i as u64) << 24) ^ 0x5757_0000_0000_0000)
}

/// A seed for the engine `what` of priority `q` at port `p`, from the scenario's seed.
fn mix(seed: u64, p: PortId, q: u8, what: u64) -> u64 {
    super::splitmix64(seed ^ (u64::from(p) << 16) ^ (u64::from(q) << 8) ^ what)
}

/// The shared buffer of switch `s` whose ports are `mine`: a headroom per lossless (port,
/// priority) — the switch's `headroom_bytes`, or what the port's rate, cable and MTU need —
/// or one per port running link PAUSE.
fn shared_buffer(
    s: &SwitchConfig,
    mine: &[PortId],
    config: &SimConfig,
) -> Result<SharedBuffer, crate::buffer::BufferTooSmall> {
    let mut reserve: Vec<[u64; 8]> = Vec::with_capacity(mine.len());
    let mut port_reserve: Vec<u64> = Vec::with_capacity(mine.len());
    for &p in mine {
        // port 2·l is end a of link l, 2·l + 1 its end b
        let r = headroom::port_reserve(&config.links[(p / 2) as usize], p % 2 == 0, s);
        reserve.push(r.per_priority);
        port_reserve.push(r.port);
    }
    SharedBuffer::new(
        s.buffer_bytes,
        s.threshold,
        s.xon_offset_bytes,
        reserve,
        port_reserve,
    )
}

/// The HPCC ns-3 MMU of switch `s` whose ports are `mine` (`third.cc`, "config switch"): per
/// port the switch's `headroom_bytes` or the fork's 3 × rate × delay / 8 (delay in whole
/// nanoseconds, integer steps as the fork computes them), and a threshold shift of 3 less one
/// per halving it takes to bring the port's rate down to the NICs' (`nic_rate`, the first
/// host's; none: 3 everywhere).
fn ns3_mmu(
    s: &SwitchConfig,
    mine: &[PortId],
    ports: &[Port],
    config: &SimConfig,
    nic_rate: Option<Rate>,
) -> Result<Ns3Mmu, crate::buffer::BufferTooSmall> {
    let settings: Vec<Ns3Port> = mine
        .iter()
        .map(|&p| {
            let port = &ports[p as usize];
            let link = &config.links[(p / 2) as usize];
            let headroom = s
                .headroom_bytes
                .unwrap_or_else(|| headroom::ns3_headroom_bytes(port.rate, link.propagation()));
            Ns3Port {
                headroom,
                shift: ns3_shift(port.rate, nic_rate),
            }
        })
        .collect();
    Ns3Mmu::new(s.buffer_bytes, &settings, NS3_RESUME_OFFSET_BYTES)
}

/// The fork's PFC threshold shift for a port at `rate` with NICs at `nic_rate`: 3, one less
/// per halving while the rate is above the NICs', never below 0.
pub(crate) fn ns3_shift(rate: Rate, nic_rate: Option<Rate>) -> u32 {
    let Some(nic) = nic_rate else {
        return 3;
    };
    let (mut r, mut shift) = (rate.bps(), 3u32);
    while r > nic.bps() && shift > 0 {
        shift -= 1;
        r /= 2;
    }
    shift
}
