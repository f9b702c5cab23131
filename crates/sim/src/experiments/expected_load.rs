//! The frames a run is expected to carry through each node, known before it runs: from its
//! fixed flows and the means of its workloads, routed along shortest paths with equal shares
//! over equal-cost next hops (ECMP). The automatic partitioner weighs its groups by it
//! (`partition_model::Partitioning::by_tier`), so that a partition holds a share of the run's
//! events rather than of its ports.

use std::collections::{BTreeMap, VecDeque};

use lossless_proto::units::{Duration, Instant};

use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::config::traffic::Pattern;
use crate::config::{NodeKind, SimConfig};

/// Frames a node is expected to handle: those its hosts send and receive, those its switches
/// forward.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExpectedLoad {
    /// Frames each node handles (a host: sent and received; a switch: forwarded).
    pub frames: Vec<f64>,
}

/// Bytes a frame takes on the wire beyond its payload in this estimate (Ethernet, IP, UDP,
/// BTH and the wire's preamble and gap: the exact figure does not matter for a weight).
const OVERHEAD_BYTES: u64 = 78;

/// What the traffic asks of the fabric, by host and by the switches it enters and leaves at.
struct Demand {
    /// Switch neighbours of each node (once per link: parallel links take a share each).
    adj: Vec<Vec<u32>>,
    /// Frames each host sends and receives.
    host: Vec<f64>,
    /// Frames from the switch they enter at to the switch they leave at, by (leave, enter):
    /// ordered, so that every process sums them in the same order.
    pairs: BTreeMap<(u32, u32), f64>,
}

impl Demand {
    /// `f` frames from `from` (leaving it at each of its switches in equal shares) to each
    /// switch of `at` in `to_share[at]`.
    fn enter(&mut self, from: u32, to_switches: &[(u32, f64)], f: f64) {
        let from_sw = &self.adj[from as usize];
        let k = from_sw.len() as f64;
        for &a in from_sw {
            for &(b, share) in to_switches {
                *self.pairs.entry((b, a)).or_insert(0.0) += f * share / k;
            }
        }
    }

    /// `f` frames from host `s` to host `d` (both ways when `both`).
    fn flow(&mut self, s: u32, d: u32, f: f64, both: bool) {
        let (su, du) = (s as usize, d as usize);
        if self.adj[su].is_empty() || self.adj[du].is_empty() {
            return;
        }
        let ways: &[(u32, u32)] = if both { &[(s, d), (d, s)] } else { &[(s, d)] };
        for &(x, y) in ways {
            self.host[x as usize] += f;
            self.host[y as usize] += f;
            let k = self.adj[y as usize].len() as f64;
            let to: Vec<(u32, f64)> = self.adj[y as usize].iter().map(|&b| (b, 1.0 / k)).collect();
            self.enter(x, &to, f);
        }
    }
}

/// The frames `config`'s traffic is expected to carry through each node, or `None` when it
/// offers none known in advance.
///
/// Fixed flows count what they can send before the run ends, and so do a workload's
/// arrivals, drawn from its stream as the run draws them; a flow's receiver returns a frame for
/// each it receives, as the reference's acknowledgements. Each host's traffic enters at the
/// switches it is linked to (equal shares) and goes along shortest paths through switches
/// (hosts never forward) to its destination's switches, split equally over the links to every
/// next hop closer to them: one breadth-first search per switch that destinations hang off.
pub fn expected_load(config: &SimConfig) -> Option<ExpectedLoad> {
    let n = config.nodes.len();
    let is_switch: Vec<bool> = config
        .nodes
        .iter()
        .map(|c| matches!(c.kind, NodeKind::Switch(_)))
        .collect();
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for l in &config.links {
        let (a, b) = (l.a as usize, l.b as usize);
        if a >= n || b >= n {
            continue;
        }
        if is_switch[b] {
            adj[a].push(l.b);
        }
        if is_switch[a] {
            adj[b].push(l.a);
        }
    }
    let mut dm = Demand {
        adj,
        host: vec![0.0; n],
        pairs: BTreeMap::new(),
    };
    let end = Instant::ZERO + config.duration;
    let active = |start: Instant, stop: Instant| -> Duration {
        let stop = stop.min(end);
        if stop > start {
            stop - start
        } else {
            Duration::ZERO
        }
    };
    let line_of = |host: u32| {
        config
            .links
            .iter()
            .find(|l| l.a == host || l.b == host)
            .map(|l| l.rate)
    };
    for f in &config.flows {
        let Some(line) = line_of(f.src) else { continue };
        let rate = match f.pattern {
            Pattern::Line => line,
            Pattern::Cbr { rate } | Pattern::OnOff { rate, .. } => rate,
        };
        let wire = f.mtu + OVERHEAD_BYTES;
        let most = active(f.start, f.stop).as_ps() as f64 * rate.bps() as f64 / 8e12 / wire as f64;
        let frames = f
            .size
            .map_or(most, |s| (s.div_ceil(f.mtu.max(1)) as f64).min(most));
        if frames > 0.0 && (f.src as usize) < n && (f.dst as usize) < n {
            dm.flow(f.src, f.dst, frames, f.transport.is_some());
        }
    }
    // a workload's arrivals, drawn as the run draws them (its own stream, from the seed)
    for (i, w) in config.workloads.iter().enumerate() {
        let mut rng = Pcg64::seed_from_u64(crate::sim::workload_seed(config.seed, i));
        let both = w.transport.is_some();
        let mut t = w.start + w.draw_gap(&mut rng);
        while t < w.stop && t < end {
            if let Some((s, d, size)) = w.draw_flow(&mut rng)
                && let Some(line) = line_of(s)
            {
                let most =
                    (end - t).as_ps() as f64 * line.bps() as f64 / 8e12 / (w.mtu + OVERHEAD_BYTES) as f64;
                let frames = (size.div_ceil(w.mtu.max(1)) as f64).min(most);
                if (s as usize) < n && (d as usize) < n {
                    dm.flow(s, d, frames, both);
                }
            }
            t += w.draw_gap(&mut rng);
        }
    }
    if dm.pairs.is_empty() {
        return None;
    }
    let Demand { adj, host, pairs } = dm;
    let mut frames = host;
    let mut dist = vec![u32::MAX; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut flow = vec![0.0f64; n];
    let mut queue = VecDeque::new();
    let mut pairs = pairs.into_iter().peekable();
    while let Some(&((target, _), _)) = pairs.peek() {
        let t = target as usize;
        // distances to the target through switches
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        order.clear();
        dist[t] = 0;
        queue.push_back(target);
        while let Some(x) = queue.pop_front() {
            order.push(x);
            for &y in &adj[x as usize] {
                if dist[y as usize] == u32::MAX {
                    dist[y as usize] = dist[x as usize] + 1;
                    queue.push_back(y);
                }
            }
        }
        while let Some(((_, from), f)) = pairs.next_if(|p| p.0.0 == target) {
            // (traffic from a switch that cannot reach the target is left out, and what
            // a source's own share took back to nothing)
            if dist[from as usize] != u32::MAX && f > 0.0 {
                flow[from as usize] += f;
            }
        }
        // farthest first: each switch forwards what reached it to its next hops
        for &x in order.iter().rev() {
            let x = x as usize;
            let here = std::mem::take(&mut flow[x]);
            if here == 0.0 {
                continue;
            }
            frames[x] += here;
            let closer = adj[x]
                .iter()
                .filter(|&&y| dist[y as usize] + 1 == dist[x])
                .count();
            if x == t || closer == 0 {
                continue;
            }
            let each = here / closer as f64;
            for &y in adj[x].iter().filter(|&&y| dist[y as usize] + 1 == dist[x]) {
                flow[y as usize] += each;
            }
        }
    }
    Some(ExpectedLoad { frames })
}

/// Each node's weight for the automatic partitioner: its expected frames
/// ([`expected_load`]), in 1/1,024ths of a frame, or its links when the run offers no
/// traffic known in advance. Measured on the HPCC ns-3 corpus's 320-host run and a fat tree
/// under WebSearch (docs/benchmarks.md, "Partitions weighed by their expected frames"), a
/// group's events follow its expected frames at one rate across hosts and every tier of
/// switches, where its links did not.
pub fn node_weights(config: &SimConfig) -> Vec<u64> {
    match expected_load(config) {
        Some(load) => load
            .frames
            .iter()
            .map(|&f| (f.max(0.0) * 1024.0).round() as u64)
            .collect(),
        None => link_weights(config),
    }
}

/// Each node's links: the partitioner's weights before expected frames, and still where the
/// run offers no traffic known in advance.
pub fn link_weights(config: &SimConfig) -> Vec<u64> {
    let mut links = vec![0u64; config.nodes.len()];
    for l in &config.links {
        for end in [l.a, l.b] {
            if let Some(c) = links.get_mut(end as usize) {
                *c += 1;
            }
        }
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::traffic::{FlowSpec, SizeCdf};
    use crate::experiments::partition_model::Partitioning;
    use lossless_proto::units::Duration;

    /// Hosts 0, 1 on leaf 4, hosts 2, 3 on leaf 5, spines 6 and 7, every leaf to every spine;
    /// all-to-all WebSearch-like workload for 1 ms.
    fn leaf_spine() -> SimConfig {
        let text = "8 4 8\n4 5 6 7\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n\
                    3 5 100Gbps 1us 0\n4 6 100Gbps 1us 0\n4 7 100Gbps 1us 0\n5 6 100Gbps 1us 0\n\
                    5 7 100Gbps 1us 0\n";
        let topo = crate::ns3::Topology::parse(text, "t").expect("a topology");
        let cdf = SizeCdf::parse("1000 0\n100000 100\n").expect("a CDF");
        topo.websearch_dcqcn(cdf, 0.3, Duration::from_ms(1))
    }

    /// `frames` payloads of 1,000 bytes from `src` to `dst`, plain (nothing comes back).
    fn plain_flow(cfg: &SimConfig, src: u32, dst: u32, frames: u64) -> FlowSpec {
        FlowSpec {
            name: format!("{src}-{dst}"),
            src,
            dst,
            priority: 3,
            mtu: 1000,
            pattern: Pattern::Line,
            start: Instant::ZERO,
            stop: Instant::ZERO + cfg.duration,
            size: Some(frames * 1000),
            transport: None,
        }
    }

    #[test]
    fn a_flow_loads_its_hosts_and_leaves_fully_and_each_spine_with_an_equal_share() {
        let mut cfg = leaf_spine();
        cfg.workloads.clear();
        cfg.flows.push(plain_flow(&cfg, 0, 2, 100));
        let load = expected_load(&cfg).expect("a flow is known traffic");
        let want = [100.0, 0.0, 100.0, 0.0, 100.0, 100.0, 50.0, 50.0];
        assert_eq!(load.frames, want);
        // a RoCEv2 QP's receiver returns a frame for each: every count doubles
        cfg.flows[0].transport = leaf_spine().workloads[0].transport.clone();
        let load = expected_load(&cfg).expect("known traffic");
        assert_eq!(load.frames, want.map(|f| 2.0 * f));
        // a flow counts only what it can send before the run ends (100 Gb/s for 1 µs:
        // 100,000 bits, 11.6 frames of 1,078 bytes)
        cfg.duration = Duration::from_us(1);
        let load = expected_load(&cfg).expect("known traffic");
        assert!(
            (load.frames[0] - 2.0 * 1e5 / (8.0 * 1078.0)).abs() < 1e-9,
            "{:?}",
            load.frames
        );
    }

    #[test]
    fn a_workload_weighs_what_the_run_draws_from_its_stream() {
        let cfg = leaf_spine();
        let drawn = expected_load(&cfg).expect("a workload is known traffic");
        // the run's own arrivals, listed as fixed flows instead: the same estimate, to the bit
        let mut sim = crate::Simulator::new(cfg.clone()).expect("builds");
        sim.run();
        let mut listed = cfg.clone();
        listed.workloads.clear();
        listed.flows = sim.flow_views().map(|(spec, _, _)| spec.clone()).collect();
        assert!(listed.flows.len() > 10, "{} arrivals", listed.flows.len());
        assert_eq!(expected_load(&listed), Some(drawn.clone()));
        // another seed draws other arrivals
        let mut other = cfg.clone();
        other.seed += 1;
        assert_ne!(expected_load(&other), Some(drawn));
    }

    #[test]
    fn without_known_traffic_a_node_weighs_its_links() {
        let mut cfg = leaf_spine();
        cfg.workloads.clear();
        assert_eq!(expected_load(&cfg), None);
        assert_eq!(node_weights(&cfg), vec![1, 1, 1, 1, 4, 4, 2, 2]);
    }

    #[test]
    fn the_partitioner_gives_the_group_that_carries_the_traffic_a_partition_of_its_own() {
        let mut cfg = leaf_spine();
        cfg.workloads.clear();
        // by links, each leaf's group (6) shares a partition with a spine (2)
        let by_links = Partitioning::by_tier(&cfg, 2);
        assert_ne!(by_links.of_node[4], by_links.of_node[5]);
        // all the traffic inside leaf 4: its group alone, everything else in the other
        cfg.flows.push(plain_flow(&cfg, 0, 1, 1000));
        let p = Partitioning::by_tier(&cfg, 2);
        let busy = p.of_node[4];
        for n in 0..8 {
            assert_eq!(
                p.of_node[n] == busy,
                [0, 1, 4].contains(&n),
                "node {n}: {:?}",
                p.of_node
            );
        }
    }
}
