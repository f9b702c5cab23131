//! Shortest-path routes of every switch to every host, with their ECMP candidates. Hosts do
//! not forward, so a host is reached through the one switch it is linked to (its target): one
//! search of the switch graph per target gives every switch's candidates towards all its
//! hosts. A switch keeps one entry per target (not per node) and each distinct candidate list
//! once; which target and slot a node has is one table shared by every switch. So the routes
//! of a fat tree with k ports per switch take 8 bytes per (switch, edge switch) and O(k) ports
//! per switch, instead of 8 bytes per (switch, node): 5 MB instead of 97 MB at k = 32.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::config::SimConfig;
use crate::config::model::Hop;
use crate::event::EventQueue;
use crate::frame::{FlowId, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::{Event, Node, Port, Simulator};

/// Where a node is reached from: its target (1 + the index, among the switches with hosts, of
/// the switch it is linked to; 0, [`Dest::NONE`], for switches and hosts linked to no switch)
/// and its slot among that switch's hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dest {
    /// The target's entry, 0 for none.
    target: u32,
    /// The node's position among its target's hosts.
    slot: u32,
}

impl Dest {
    /// No target: a switch, or a host no switch reaches.
    const NONE: Dest = Dest { target: 0, slot: 0 };
}

/// Set in an entry's count when the entry is the switch's own hosts: the candidates then start
/// at the entry's start plus the destination's slot, one port each.
const LOCAL: u32 = 1 << 31;

/// One switch's egress candidates per destination node.
pub(crate) struct Routes {
    /// Two words per target, entry 0 for none: where its candidates start in this table, and
    /// how many (0: no route); the switch's own target has [`LOCAL`] in its count and the port
    /// facing each of its hosts, by slot, from its start. Then the distinct candidate lists
    /// and the own hosts' ports. One allocation, so that `Routes` fits in the switch's first
    /// cache line.
    table: Box<[u32]>,
    /// Every node's target and slot, shared by all the switches of a computation (a switch
    /// given a static route gets its own copy, the route's destination its own entry).
    dests: Arc<[Dest]>,
}

impl Default for Routes {
    fn default() -> Self {
        Routes {
            table: Box::new([0, 0]),
            dests: Arc::from(Vec::new()),
        }
    }
}

impl Routes {
    /// The egress ports towards node `dst` (empty for a switch or an unreachable host).
    #[inline(always)]
    pub(crate) fn get(&self, dst: usize) -> &[PortId] {
        let Dest { target, slot } = self.dests[dst];
        // the second word first: its bounds check covers the first word too
        let t = 2 * target as usize;
        let count = self.table[t + 1];
        let start = self.table[t];
        // branch-free: the own hosts' entry (count LOCAL | 1) is offset by the slot
        let local = count >> 31;
        let start = (start + slot * local) as usize;
        &self.table[start..start + (count & !LOCAL) as usize]
    }

    /// Makes `ports` the candidates towards node `dst` (a static route): an entry of its own
    /// at the table's end, and `dst` pointed at it in this switch's copy of the targets.
    pub(crate) fn set(&mut self, dst: usize, ports: &[PortId]) {
        let mut table = std::mem::take(&mut self.table).into_vec();
        if table.len() % 2 == 1 {
            table.push(0);
        }
        let target = (table.len() / 2) as u32;
        table.extend([table.len() as u32 + 2, ports.len() as u32]);
        table.extend_from_slice(ports);
        self.table = table.into_boxed_slice();
        Arc::make_mut(&mut self.dests)[dst] = Dest { target, slot: 0 };
    }

    /// How many words the switch's table holds: two per target and one per candidate port.
    #[cfg(test)]
    pub(crate) fn words(&self) -> usize {
        self.table.len()
    }
}

/// Where the HPCC ns-3 simulator's maps keyed by node pointer put node `id`: its hosts are
/// small heap objects allocated in id order (ascending addresses), its switches carry 2 MB of
/// counters each and are mapped one by one below the previous one (descending addresses), so
/// hosts come first by ascending id, then switches by descending id.
pub(crate) fn ns3_node_order(id: usize, host: bool) -> (bool, std::cmp::Reverse<usize>, usize) {
    if host {
        (false, std::cmp::Reverse(0), id)
    } else {
        (true, std::cmp::Reverse(id), 0)
    }
}

/// Routes of every switch (`None` for hosts). Every host has exactly one port. Candidates are
/// in port order; with `ns3_order`, in the order the HPCC ns-3 simulator's routing BFS finds
/// the next-hop switches (from the destination, neighbours in [`ns3_node_order`], only
/// switches expanded), which its ECMP hash indexes into.
pub(crate) fn compute(
    node_ports: &[Vec<PortId>],
    ports: &[Port],
    is_host: &[bool],
    ns3_order: bool,
) -> Vec<Option<Routes>> {
    compute_with(
        node_ports,
        |p: PortId| ports[ports[p as usize].peer as usize].node as usize,
        is_host,
        ns3_order,
    )
}

/// A run's routing replayed before it runs, from its configuration alone: every switch's
/// candidates as the build computes them (its static routes aside) and each flow's pick among
/// them (`switch::flow_pick`), flows taken in the order the run creates them (their ids and
/// UDP ports follow from it).
pub(crate) struct RouteReplay<'a> {
    config: &'a SimConfig,
    routes: Vec<Option<Routes>>,
    /// The node at the far end of each port (a link's ports are 2·i and 2·i + 1).
    far: Vec<NodeId>,
    /// Each node's first port.
    first: Vec<Option<PortId>>,
    is_host: Vec<bool>,
    pair_flows: HashMap<(NodeId, NodeId), u16>,
    next_flow: FlowId,
}

impl<'a> RouteReplay<'a> {
    /// The routing of `config`.
    pub(crate) fn new(config: &'a SimConfig) -> RouteReplay<'a> {
        let n = config.nodes.len();
        let mut node_ports: Vec<Vec<PortId>> = vec![Vec::new(); n];
        let mut far = Vec::with_capacity(2 * config.links.len());
        for (i, l) in config.links.iter().enumerate() {
            let pa = 2 * i as PortId;
            for (node, me, other) in [(l.a, pa, l.b), (l.b, pa + 1, l.a)] {
                if let Some(ps) = node_ports.get_mut(node as usize) {
                    ps.push(me);
                }
                far.push(other);
            }
        }
        let is_host: Vec<bool> = config
            .nodes
            .iter()
            .map(|c| matches!(c.kind, crate::config::NodeKind::Host(_)))
            .collect();
        let valid = config
            .links
            .iter()
            .all(|l| (l.a as usize) < n && (l.b as usize) < n);
        let routes = if valid {
            compute_with(
                &node_ports,
                |p| far[p as usize] as usize,
                &is_host,
                config.model.ecmp == crate::config::model::Ecmp::Ns3,
            )
        } else {
            (0..n).map(|_| None).collect()
        };
        RouteReplay {
            config,
            routes,
            first: node_ports.iter().map(|ps| ps.first().copied()).collect(),
            far,
            is_host,
            pair_flows: HashMap::new(),
            next_flow: 0,
        }
    }

    /// Routes the run's next flow, from `src` to `dst` with `transport`: calls `visit(switch)`
    /// for each switch its data crosses and, with a transport, each its replies cross. Stops
    /// where there is no route.
    pub(crate) fn flow(
        &mut self,
        src: NodeId,
        dst: NodeId,
        transport: Option<&crate::config::transport::QpSpec>,
        mut visit: impl FnMut(NodeId),
    ) {
        let id = self.next_flow;
        self.next_flow += 1;
        let ports = crate::sim::build::udp_ports(&mut self.pair_flows, src, dst, transport);
        self.walk(id, (src, dst), ports, false, &mut visit);
        if transport.is_some() {
            self.walk(id, (dst, src), ports, true, &mut visit);
        }
    }

    /// The switches a frame of flow `id` from `ends.0` to `ends.1` crosses.
    fn walk(
        &self,
        id: FlowId,
        (from, to): (NodeId, NodeId),
        ports: (u16, u16),
        reverse: bool,
        visit: &mut impl FnMut(NodeId),
    ) {
        let Some(Some(p)) = self.first.get(from as usize) else {
            return;
        };
        let mut x = self.far[*p as usize];
        // (a path crosses each switch at most once)
        for _ in 0..self.routes.len() {
            if x == to || self.is_host[x as usize] {
                return;
            }
            visit(x);
            let Some(Some(r)) = self.routes.get(x as usize) else {
                return;
            };
            let cands = r.get(to as usize);
            let pick = match cands.len() {
                0 => return,
                1 => 0,
                k => crate::sim::fabric::switch::flow_pick(self.config, x, id, (from, to), ports, reverse, k),
            };
            x = self.far[cands[pick] as usize];
        }
    }
}

/// [`compute`] with the node at the far end of each port given by `neighbour`; with
/// `by_search_order`, each switch's candidates in the reference's search order.
fn compute_with(
    node_ports: &[Vec<PortId>],
    neighbour: impl Fn(PortId) -> usize,
    is_host: &[bool],
    by_search_order: bool,
) -> Vec<Option<Routes>> {
    let sorted: Vec<Vec<PortId>>;
    let node_ports = if by_search_order {
        sorted = node_ports
            .iter()
            .map(|ps| {
                let mut v = ps.clone();
                v.sort_by_key(|&p| ns3_node_order(neighbour(p), is_host[neighbour(p)]));
                v
            })
            .collect();
        &sorted[..]
    } else {
        node_ports
    };
    let n = node_ports.len();
    // the hosts behind each switch (a host linked to a host is reached by no switch), each
    // switch with hosts a target
    let mut hosts_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for d in (0..n).filter(|&d| is_host[d]) {
        if let Some(&p) = node_ports[d].first() {
            let t = neighbour(p);
            if !is_host[t] {
                hosts_at[t].push(d);
            }
        }
    }
    let targets: Vec<usize> = (0..n).filter(|&t| !hosts_at[t].is_empty()).collect();
    let mut dests = vec![Dest::NONE; n];
    for (ti, &t) in targets.iter().enumerate() {
        for (slot, &d) in hosts_at[t].iter().enumerate() {
            dests[d] = Dest {
                target: ti as u32 + 1,
                slot: slot as u32,
            };
        }
    }
    // per switch, while computing: entries, candidate lists, and each list's start
    struct Building {
        entry: Vec<(u32, u32)>,
        ports: Vec<PortId>,
        lists: HashMap<Vec<PortId>, u32>,
    }
    let mut building: Vec<Option<Building>> = (0..n)
        .map(|x| {
            (!is_host[x]).then(|| Building {
                entry: vec![(0, 0); targets.len() + 1],
                ports: Vec::new(),
                lists: HashMap::new(),
            })
        })
        .collect();
    let mut dist = vec![u32::MAX; n];
    // with `by_search_order`: each switch's position in the search from t
    let mut order = vec![u32::MAX; n];
    let mut seen: Vec<usize> = Vec::new();
    let mut bfs = VecDeque::new();
    let mut cands: Vec<PortId> = Vec::new();
    for (ti, &t) in (1..).zip(&targets) {
        // distances from t over switches only
        dist[t] = 0;
        seen.push(t);
        bfs.push_back(t);
        let mut popped = 0;
        while let Some(x) = bfs.pop_front() {
            order[x] = popped;
            popped += 1;
            for &p in &node_ports[x] {
                let y = neighbour(p);
                if !is_host[y] && dist[y] == u32::MAX {
                    dist[y] = dist[x] + 1;
                    seen.push(y);
                    bfs.push_back(y);
                }
            }
        }
        for &x in &seen {
            let Some(r) = building[x].as_mut() else {
                continue;
            };
            cands.clear();
            if x == t {
                // t's own hosts: the port facing each, by slot (a host has one link)
                cands.resize(hosts_at[t].len(), 0);
                for &p in &node_ports[x] {
                    let d = neighbour(p);
                    if is_host[d] && dests[d].target == ti {
                        cands[dests[d].slot as usize] = p;
                    }
                }
                r.entry[ti as usize] = (r.ports.len() as u32, LOCAL | 1);
                r.ports.extend_from_slice(&cands);
                continue;
            }
            // towards t: every neighbour switch one hop closer (in port order, for ECMP)
            cands.extend(node_ports[x].iter().copied().filter(|&p| {
                let y = neighbour(p);
                !is_host[y] && dist[y] != u32::MAX && dist[y] + 1 == dist[x]
            }));
            if by_search_order {
                cands.sort_by_key(|&p| order[neighbour(p)]);
            }
            let start = match r.lists.get(&cands[..]) {
                Some(&start) => start,
                None => {
                    let start = r.ports.len() as u32;
                    r.ports.extend_from_slice(&cands);
                    r.lists.insert(cands.clone(), start);
                    start
                }
            };
            r.entry[ti as usize] = (start, cands.len() as u32);
        }
        for &x in &seen {
            dist[x] = u32::MAX;
        }
        seen.clear();
    }
    let dests: Arc<[Dest]> = dests.into();
    building
        .into_iter()
        .map(|b| {
            b.map(|b| {
                // the lists follow the entries
                let base = 2 * b.entry.len() as u32;
                let mut table = Vec::with_capacity(base as usize + b.ports.len());
                table.extend(b.entry.iter().flat_map(|&(start, count)| [base + start, count]));
                table.extend_from_slice(&b.ports);
                Routes {
                    table: table.into_boxed_slice(),
                    dests: Arc::clone(&dests),
                }
            })
        })
        .collect()
}

/// The HPCC ns-3 simulator's routing BFS trees of a simulator (see [`Simulator::ns3_paths`]).
pub(crate) struct Ns3Paths<'a, O: Observer, Q: EventQueue<Event>> {
    sim: &'a Simulator<O, Q>,
    /// Per node: (neighbour, the port leading to it), by ascending neighbour id.
    adj: Vec<Vec<(usize, PortId)>>,
    /// Per destination: each node's port towards it on the BFS tree rooted there.
    trees: std::collections::HashMap<NodeId, Vec<Option<PortId>>>,
}

impl<O: Observer, Q: EventQueue<Event>> Ns3Paths<'_, O, Q> {
    /// The BFS tree rooted at `dst` (neighbours by ascending node id, only switches
    /// expanded): each node's port towards `dst`.
    fn tree(&self, dst: NodeId) -> Vec<Option<PortId>> {
        let sim = self.sim;
        let n = sim.nodes.len();
        let mut parent: Vec<Option<PortId>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[dst as usize] = true;
        let mut q = VecDeque::from([dst as usize]);
        while let Some(x) = q.pop_front() {
            for &(y, p) in &self.adj[x] {
                if !seen[y] {
                    seen[y] = true;
                    // the port at y towards x
                    parent[y] = Some(sim.ports[p as usize].peer);
                    if matches!(sim.nodes[y], Node::Switch(_)) {
                        q.push_back(y);
                    }
                }
            }
        }
        parent
    }

    /// The hops from host `src` to host `dst` along the HPCC ns-3 simulator's routing BFS
    /// tree (rooted at `dst`, neighbours by ascending node id, only switches expanded; the
    /// first path found): what its ideal FCT is computed over. Empty when unreachable.
    pub(crate) fn path(&mut self, src: NodeId, dst: NodeId) -> Vec<Hop> {
        if !self.trees.contains_key(&dst) {
            let t = self.tree(dst);
            self.trees.insert(dst, t);
        }
        let parent = &self.trees[&dst];
        let sim = self.sim;
        let mut hops = Vec::new();
        let mut at = src as usize;
        while at != dst as usize {
            let Some(p) = parent[at] else {
                return Vec::new();
            };
            let port = &sim.ports[p as usize];
            hops.push(Hop {
                rate: port.rate,
                delay: port.prop,
            });
            at = sim.ports[port.peer as usize].node as usize;
        }
        hops
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The HPCC ns-3 simulator's routing BFS trees, built lazily one per destination, for
    /// [`Ns3Paths::path`]: the adjacency lists once, then one BFS per destination asked for.
    pub(crate) fn ns3_paths(&self) -> Ns3Paths<'_, O, Q> {
        let n = self.nodes.len();
        // per node: (neighbour, the port leading to it), by ascending neighbour id
        let mut adj: Vec<Vec<(usize, PortId)>> = vec![Vec::new(); n];
        for (i, p) in self.ports.iter().enumerate() {
            adj[p.node as usize].push((self.ports[p.peer as usize].node as usize, i as PortId));
        }
        for a in &mut adj {
            a.sort_by_key(|&(nb, p)| (nb, p));
        }
        Ns3Paths {
            sim: self,
            adj,
            trees: std::collections::HashMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The previous computation, one search per (switch, host): the reference.
    fn reference(
        node_ports: &[Vec<PortId>],
        neighbour: &[usize],
        is_host: &[bool],
        me: usize,
    ) -> Vec<Vec<PortId>> {
        let n = node_ports.len();
        let mut routes = vec![Vec::new(); n];
        for d in (0..n).filter(|&d| is_host[d]) {
            let mut dist = vec![usize::MAX; n];
            dist[d] = 0;
            let mut bfs = VecDeque::from([d]);
            while let Some(x) = bfs.pop_front() {
                if x != d && is_host[x] {
                    continue; // hosts do not forward
                }
                for &p in &node_ports[x] {
                    let y = neighbour[p as usize];
                    if dist[y] == usize::MAX {
                        dist[y] = dist[x] + 1;
                        bfs.push_back(y);
                    }
                }
            }
            if dist[me] == usize::MAX {
                continue;
            }
            for &p in &node_ports[me] {
                let nb = neighbour[p as usize];
                if dist[nb] + 1 == dist[me] && (nb == d || !is_host[nb]) {
                    routes[d].push(p);
                }
            }
        }
        routes
    }

    proptest! {
        #[test]
        fn routes_equal_one_search_per_switch_and_host(
            switches in 1usize..6,
            hosts in 1usize..8,
            trunks in proptest::collection::vec((0usize..6, 0usize..6), 0..10),
            attach in proptest::collection::vec(0usize..16, 8),
        ) {
            // nodes: hosts first, then switches; links: each host to a switch (or, for
            // attach values past the switches, to another host), then switch trunks
            let n = hosts + switches;
            let is_host: Vec<bool> = (0..n).map(|i| i < hosts).collect();
            let mut links = Vec::new();
            let mut linked = vec![false; hosts];
            for h in 0..hosts {
                if linked[h] {
                    continue;
                }
                let a = attach[h];
                let other = a - switches.min(a);
                if a >= switches && other < hosts && other != h && !linked[other] {
                    links.push((h, other));
                    linked[other] = true;
                } else {
                    links.push((h, hosts + a % switches));
                }
                linked[h] = true;
            }
            for &(a, b) in &trunks {
                let (a, b) = (hosts + a % switches, hosts + b % switches);
                if a != b {
                    links.push((a, b));
                }
            }
            let mut node_ports = vec![Vec::new(); n];
            let mut neighbour = Vec::new();
            for &(a, b) in &links {
                node_ports[a].push(neighbour.len() as PortId);
                neighbour.push(b);
                node_ports[b].push(neighbour.len() as PortId);
                neighbour.push(a);
            }
            let got = compute_with(&node_ports, |p| neighbour[p as usize], &is_host, false);
            for (me, r) in got.iter().enumerate().skip(hosts) {
                let want = reference(&node_ports, &neighbour, &is_host, me);
                let r = r.as_ref().expect("a switch has routes");
                for (d, w) in want.iter().enumerate() {
                    prop_assert_eq!(r.get(d), &w[..], "switch {} to node {}", me, d);
                }
            }
        }
    }

    /// A fat tree's route tables grow with its switches times its edge switches, not its
    /// switches times its nodes: one entry per edge switch and a few distinct candidate lists
    /// per switch (k = 8: 80 switches, 32 of them edge, 128 hosts, 208 nodes).
    #[test]
    fn a_fat_tree_keeps_one_entry_per_edge_switch_and_each_candidate_list_once() {
        let text = "name = \"ft\"\nduration = \"1us\"\n[fabric]\nkind = \"fat-tree\"\nk = 8\n\
                    host_rate = \"100G\"\ndelay = \"1us\"\n\
                    [fabric.switch]\nbuffer_bytes = 33554432\n";
        let config = crate::scenario::load_str(text, "ft.toml", None, &Default::default()).unwrap();
        let sim = Simulator::new(config).unwrap();
        let k = 8;
        let (mut switches, mut hosts) = (0, 0);
        for node in &sim.nodes {
            match node {
                Node::Host(_) => hosts += 1,
                Node::Switch(sw) => {
                    switches += 1;
                    // two words per edge switch and for none, then the candidate lists: an
                    // edge switch keeps its k/2 hosts' ports and the k/2 uplinks once, an
                    // aggregation switch its k/2 downlinks and its uplinks, a core one port
                    // per pod
                    let ports = sw.routes.words() - 2 * (k * k / 2 + 1);
                    assert!(ports <= k, "{ports} candidate ports kept, at most k = {k}");
                }
            }
        }
        assert_eq!((switches, hosts), (5 * k * k / 4, k * k * k / 4));
        // every host reaches every other over a path of 2, 4 or 6 hops
        for d in 0..sim.nodes.len() {
            let reach = sim.nodes.iter().filter_map(|n| match n {
                Node::Switch(sw) => Some(sw.routes.get(d).len()),
                Node::Host(_) => None,
            });
            if matches!(sim.nodes[d], Node::Host(_)) {
                assert!(reach.clone().all(|c| c >= 1), "every switch routes to host {d}");
            } else {
                assert!(reach.clone().all(|c| c == 0), "no switch routes to switch {d}");
            }
        }
    }
}
