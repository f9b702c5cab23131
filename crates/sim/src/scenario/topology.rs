//! Checks of the whole scenario: its size against [`MAX_SCENARIO_SIZE`], every host with
//! exactly one link, and which hosts can reach which (hosts do not forward).

use std::ops::Range;

use lossless_proto::units::Rate;

use super::ScenarioError;
use super::build::Ctx;
use crate::config::{LinkConfig, NodeConfig, NodeKind};
use crate::frame::NodeId;

/// Most elements a scenario may have, counted together: hosts, switches, links, flows,
/// scripted signals and the workload arrivals expected over the run. The simulator's memory
/// grows linearly with them (measured peak RSS, docs/limits.md: 10.9 kB per host with its
/// link, 1.2 kB per plain flow and 5.7 kB per RoCEv2 QP with their reports; so at most about
/// 2.2 GB); a typo such as `count = 1000000` is refused before anything is allocated.
pub const MAX_SCENARIO_SIZE: u64 = 200_000;

/// Most forwarding entries a scenario's switches may hold together: switches × nodes (a
/// switch keeps 8 bytes per node, so at most 128 MB). A fat tree of k = 32 (1,280 switches,
/// 8,192 hosts) holds 12.1 M.
pub const MAX_FORWARDING_ENTRIES: u64 = 16_000_000;

/// The running count of a scenario's elements.
#[derive(Default)]
pub(super) struct Size {
    total: u64,
    hosts: u64,
    switches: u64,
    links: u64,
    flows: u64,
    signals: u64,
    arrivals: u64,
}

impl Size {
    /// Counts `n` more elements of `kind` (defined at `span`), refusing the scenario once the
    /// total passes [`MAX_SCENARIO_SIZE`].
    pub(super) fn add(
        &mut self,
        ctx: &Ctx<'_>,
        span: Range<usize>,
        kind: &str,
        n: u64,
    ) -> Result<(), ScenarioError> {
        let slot = match kind {
            "hosts" => &mut self.hosts,
            "switches" => &mut self.switches,
            "links" => &mut self.links,
            "flows" => &mut self.flows,
            "signals" => &mut self.signals,
            _ => &mut self.arrivals,
        };
        *slot = slot.saturating_add(n);
        self.total = self.total.saturating_add(n);
        if self.total > MAX_SCENARIO_SIZE {
            let shown = if n == u64::MAX {
                "more than 2^64".to_string()
            } else {
                n.to_string()
            };
            return ctx.err(
                span,
                "",
                format!(
                    "the scenario is too large: this entry adds {shown} {kind}, which brings it to {} \
                     elements (so far {} hosts, {} switches, {} links, {} flows, {} signals, {} expected \
                     workload arrivals); allowed at most {MAX_SCENARIO_SIZE} in all",
                    self.total,
                    self.hosts,
                    self.switches,
                    self.links,
                    self.flows,
                    self.signals,
                    self.arrivals
                ),
            );
        }
        Ok(())
    }
}

impl Size {
    /// Checks the switches' forwarding tables once the nodes are known: `switches` × `nodes`
    /// entries at most [`MAX_FORWARDING_ENTRIES`] (the switch defined at `span` is the last).
    pub(super) fn forwarding(
        &self,
        ctx: &Ctx<'_>,
        span: Range<usize>,
        switches: u64,
        nodes: u64,
    ) -> Result<(), ScenarioError> {
        let entries = switches.saturating_mul(nodes);
        if entries > MAX_FORWARDING_ENTRIES {
            return ctx.err(
                span,
                "",
                format!(
                    "the scenario is too large: {switches} switches × {nodes} nodes = {entries} \
                     forwarding entries; allowed at most {MAX_FORWARDING_ENTRIES} (e.g. a fat tree of k = 32)"
                ),
            );
        }
        Ok(())
    }
}

/// Where each host's one link goes, and the connected groups of switches.
pub(super) struct Topology {
    /// Per node: the node at the other end of its link (hosts only; `None` for a switch).
    peer: Vec<Option<NodeId>>,
    /// Per node: its group of switches joined by switch-to-switch links (switches only).
    component: Vec<u32>,
    /// Per node: the rate of its link (hosts only).
    rate: Vec<Option<Rate>>,
    is_host: Vec<bool>,
}

impl Topology {
    /// Checks that every host has exactly one link, naming the host and the line of its
    /// definition (no link) or of its second link.
    pub(super) fn new(
        ctx: &Ctx<'_>,
        nodes: &[NodeConfig],
        node_spans: &[Range<usize>],
        links: &[LinkConfig],
        link_spans: &[Range<usize>],
    ) -> Result<Self, ScenarioError> {
        let n = nodes.len();
        let is_host: Vec<bool> = nodes
            .iter()
            .map(|nd| matches!(nd.kind, NodeKind::Host(_)))
            .collect();
        let mut first_link: Vec<Option<usize>> = vec![None; n];
        let mut peer = vec![None; n];
        let mut rate = vec![None; n];
        // union-find over switches
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        for (li, l) in links.iter().enumerate() {
            for (me, other) in [(l.a, l.b), (l.b, l.a)] {
                if !is_host[me as usize] {
                    continue;
                }
                if let Some(first) = first_link[me as usize] {
                    return ctx.err(
                        link_spans[li].clone(),
                        "",
                        format!(
                            "host {:?} has a second link (its first is at line {}); a host has exactly \
                             one NIC port: connect it to a switch and the switch to the others",
                            nodes[me as usize].name,
                            ctx.line_of(link_spans[first].start)
                        ),
                    );
                }
                first_link[me as usize] = Some(li);
                peer[me as usize] = Some(other);
                rate[me as usize] = Some(l.rate);
            }
            if !is_host[l.a as usize] && !is_host[l.b as usize] {
                let (ra, rb) = (find(&mut parent, l.a), find(&mut parent, l.b));
                parent[ra as usize] = rb;
            }
        }
        if let Some(h) = (0..n).find(|&i| is_host[i] && first_link[i].is_none()) {
            return ctx.err(
                node_spans[h].clone(),
                "",
                format!(
                    "host {:?} has no link; a host has exactly one NIC port: add a [[link]] from it to a switch or a host",
                    nodes[h].name
                ),
            );
        }
        let component = (0..n as u32).map(|x| find(&mut parent, x)).collect();
        Ok(Topology {
            peer,
            component,
            rate,
            is_host,
        })
    }

    /// Whether `node` is a host.
    pub(super) fn is_host(&self, node: NodeId) -> bool {
        self.is_host[node as usize]
    }

    /// The rate of host `h`'s link.
    pub(super) fn line_rate(&self, h: NodeId) -> Rate {
        self.rate[h as usize].unwrap_or(Rate::from_gbps(100))
    }

    /// Whether frames from host `src` can reach host `dst` (switches forward, hosts do not).
    pub(super) fn reaches(&self, src: NodeId, dst: NodeId) -> bool {
        let (Some(a), Some(b)) = (self.peer[src as usize], self.peer[dst as usize]) else {
            return false;
        };
        if a == dst {
            return true;
        }
        !self.is_host[a as usize]
            && !self.is_host[b as usize]
            && self.component[a as usize] == self.component[b as usize]
    }

    /// A label such that two distinct hosts reach each other exactly when their labels are
    /// equal: their switch group, or the link of two hosts wired to each other.
    pub(super) fn reach_label(&self, host: NodeId) -> u64 {
        match self.peer[host as usize] {
            Some(p) if self.is_host[p as usize] => (1 << 32) | u64::from(host.min(p)),
            Some(p) => u64::from(self.component[p as usize]),
            None => u64::MAX,
        }
    }
}
