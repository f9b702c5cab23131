//! Shortest-path routes of every switch to every host, with their ECMP candidates. Hosts do
//! not forward, so a host is reached through the one switch it is linked to: one search of
//! the switch graph per such switch gives every switch's candidates towards all its hosts.
//! A switch keeps 8 bytes per node and one candidate list per target switch.

use std::collections::VecDeque;

use super::Port;
use crate::frame::PortId;

/// One switch's egress candidates per destination node.
#[derive(Default)]
pub(crate) struct Routes {
    /// Per node: where its candidates start in `ports`, and how many (0: no route).
    entry: Vec<(u32, u32)>,
    /// The candidate lists, each shared by every host behind the same switch.
    ports: Vec<PortId>,
}

impl Routes {
    /// The egress ports towards node `dst` (empty for a switch or an unreachable host).
    #[inline]
    pub(crate) fn get(&self, dst: usize) -> &[PortId] {
        let (start, len) = self.entry[dst];
        &self.ports[start as usize..(start + len) as usize]
    }

    /// Makes `ports` the candidates towards node `dst` (a static route).
    pub(crate) fn set(&mut self, dst: usize, ports: &[PortId]) {
        let start = self.ports.len() as u32;
        self.ports.extend_from_slice(ports);
        self.entry[dst] = (start, ports.len() as u32);
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
    let neighbour = |p: PortId| ports[ports[p as usize].peer as usize].node as usize;
    if !ns3_order {
        return compute_with(node_ports, neighbour, is_host, false);
    }
    let sorted: Vec<Vec<PortId>> = node_ports
        .iter()
        .map(|ps| {
            let mut v = ps.clone();
            v.sort_by_key(|&p| ns3_node_order(neighbour(p), is_host[neighbour(p)]));
            v
        })
        .collect();
    compute_with(&sorted, neighbour, is_host, true)
}

/// [`compute`] with the node at the far end of each port given by `neighbour`.
fn compute_with(
    node_ports: &[Vec<PortId>],
    neighbour: impl Fn(PortId) -> usize,
    is_host: &[bool],
    by_search_order: bool,
) -> Vec<Option<Routes>> {
    let n = node_ports.len();
    let mut routes: Vec<Option<Routes>> = (0..n)
        .map(|x| {
            (!is_host[x]).then(|| Routes {
                entry: vec![(0, 0); n],
                ports: Vec::new(),
            })
        })
        .collect();
    // the hosts behind each switch (a host linked to a host is reached by no switch)
    let mut hosts_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for d in (0..n).filter(|&d| is_host[d]) {
        if let Some(&p) = node_ports[d].first() {
            let t = neighbour(p);
            if !is_host[t] {
                hosts_at[t].push(d);
            }
        }
    }
    let mut dist = vec![u32::MAX; n];
    // with `by_search_order`: each switch's position in the search from t
    let mut order = vec![u32::MAX; n];
    let mut seen: Vec<usize> = Vec::new();
    let mut bfs = VecDeque::new();
    for t in (0..n).filter(|&t| !hosts_at[t].is_empty()) {
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
            let Some(r) = routes[x].as_mut() else {
                continue;
            };
            let start = r.ports.len() as u32;
            if x == t {
                // t's own hosts: the port facing each (a host has one link, so one port)
                for &p in &node_ports[x] {
                    let d = neighbour(p);
                    if is_host[d] {
                        r.entry[d] = (r.ports.len() as u32, 1);
                        r.ports.push(p);
                    }
                }
                continue;
            }
            // towards t: every neighbour switch one hop closer (in port order, for ECMP)
            r.ports.extend(node_ports[x].iter().copied().filter(|&p| {
                let y = neighbour(p);
                !is_host[y] && dist[y] != u32::MAX && dist[y] + 1 == dist[x]
            }));
            if by_search_order {
                r.ports[start as usize..].sort_by_key(|&p| order[neighbour(p)]);
            }
            let len = r.ports.len() as u32 - start;
            for &d in &hosts_at[t] {
                r.entry[d] = (start, len);
            }
        }
        for &x in &seen {
            dist[x] = u32::MAX;
        }
        seen.clear();
    }
    routes
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
}
