//! The frames a run is expected to carry through each node, known before it runs: its fixed
//! flows and its workloads' arrivals (drawn as the run draws them), each on the path the run's
//! routing and ECMP hash give it. The automatic partitioner weighs its groups by it
//! (`partition_model::Partitioning::by_tier`), so that a partition holds a share of the run's
//! events rather than of its ports.

use lossless_proto::units::{Instant, Rate};

use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::config::SimConfig;
use crate::config::traffic::Pattern;
use crate::config::transport::QpSpec;

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

/// The most destinations scanned in drawing the workloads' arrivals for an estimate (arrivals
/// times destinations, as each draw scans them): past it the estimate gives up (`None`), so
/// that a run of millions of arrivals does not wait seconds before it starts; 2^32 is ≈ 2 s
/// here, and the k = 32 fat tree's 1 ms of WebSearch ≈ 2.2 × 10^8.
const REPLAY_BUDGET: f64 = 4_294_967_296.0;

/// The frames `config`'s traffic is expected to carry through each node, or `None` when it
/// offers none known in advance (or its workloads' arrivals are too many to draw: about
/// 2^32 destinations scanned).
///
/// The flows are the run's own, in the order it creates them: its fixed flows, then each
/// workload's arrivals as it draws them from its stream (by time, across workloads). Each
/// counts the frames it can send before the run ends (its size, at most its line for the time
/// left), and its receiver returns one for each when it has a transport (the reference's
/// acknowledgements). A flow's frames are counted at its two hosts and at every switch they
/// cross, on the path the run's routing gives that flow (`sim::RouteReplay`: its ECMP
/// picks included; static routes are not replayed).
pub fn expected_load(config: &SimConfig) -> Option<ExpectedLoad> {
    let n = config.nodes.len();
    let end = Instant::ZERO + config.duration;
    let line_of = |host: u32| {
        config
            .links
            .iter()
            .find(|l| l.a == host || l.b == host)
            .map(|l| l.rate)
    };
    // what a flow from `src`, of `size` bytes in payloads of `mtu`, can send from `start` to
    // `stop` at `rate` (its line's when `None`)
    let sendable =
        |src: u32, mtu: u64, size: Option<u64>, start: Instant, stop: Instant, rate: Option<Rate>| {
            let stop = stop.min(end);
            let Some(rate) = rate.or_else(|| line_of(src)) else {
                return 0.0;
            };
            if stop <= start {
                return 0.0;
            }
            let most = (stop - start).as_ps() as f64 * rate.bps() as f64
                / 8e12
                / mtu.saturating_add(OVERHEAD_BYTES) as f64;
            size.map_or(most, |s| (s.div_ceil(mtu.max(1)) as f64).min(most))
        };
    let mut frames = vec![0.0f64; n];
    let mut replay = crate::sim::RouteReplay::new(config);
    let mut any = false;
    let mut add = |src: u32, dst: u32, f: f64, transport: Option<&QpSpec>| {
        if (src as usize) >= n || (dst as usize) >= n {
            return;
        }
        let ways = if transport.is_some() { 2.0 } else { 1.0 };
        frames[src as usize] += f * ways;
        frames[dst as usize] += f * ways;
        any |= f > 0.0;
        replay.flow(src, dst, transport, |x| frames[x as usize] += f);
    };
    for f in &config.flows {
        let rate = match f.pattern {
            Pattern::Line => None,
            Pattern::Cbr { rate } | Pattern::OnOff { rate, .. } => Some(rate),
        };
        let sent = sendable(f.src, f.mtu, f.size, f.start, f.stop, rate);
        add(f.src, f.dst, sent, f.transport.as_deref());
    }
    // the workloads' arrivals, drawn as the run draws them (each its own stream, from the
    // seed), in the order the run takes them: by time, then by workload; none if drawing
    // them would cost more than the budget (each draw scans the destinations, as the run's)
    let expected: Vec<f64> = (config.workloads.iter())
        .map(|w| {
            let stop = w.stop.min(end);
            let active = if stop > w.start {
                (stop - w.start).as_ps()
            } else {
                0
            };
            active as f64 / w.mean_interarrival.as_ps().max(1) as f64
        })
        .collect();
    let work: f64 = (config.workloads.iter().zip(&expected))
        .map(|(w, &a)| a * (w.dst.len() + 1) as f64)
        .sum();
    if work > REPLAY_BUDGET {
        return None;
    }
    let mut arrivals: Vec<(Instant, usize, u32, u32, u64)> = Vec::new();
    for (i, w) in config.workloads.iter().enumerate() {
        let mut rng = Pcg64::seed_from_u64(crate::sim::workload_seed(config.seed, i));
        let mut t = w.start + w.draw_gap(&mut rng);
        // (exponential gaps: more than twice the mean count is as good as never)
        let most = 2.0 * expected[i] + 1024.0;
        let mut drawn = 0.0;
        while t < w.stop && t < end && drawn < most {
            if let Some((s, d, size)) = w.draw_flow(&mut rng) {
                arrivals.push((t, i, s, d, size));
            }
            drawn += 1.0;
            t += w.draw_gap(&mut rng);
        }
    }
    arrivals.sort_by_key(|a| (a.0, a.1));
    for (t, i, s, d, size) in arrivals {
        let w = &config.workloads[i];
        let sent = sendable(s, w.mtu, Some(size), t, Instant::MAX, None);
        add(s, d, sent, w.transport.as_deref());
    }
    any.then_some(ExpectedLoad { frames })
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
    fn a_flow_counts_its_frames_at_its_hosts_and_at_every_switch_on_its_path() {
        let mut cfg = leaf_spine();
        cfg.workloads.clear();
        cfg.flows.push(plain_flow(&cfg, 0, 2, 100));
        let f = expected_load(&cfg).expect("a flow is known traffic").frames;
        assert_eq!(&f[..6], &[100.0, 0.0, 100.0, 0.0, 100.0, 100.0]);
        // one spine, the one its hash picks
        assert_eq!(f[6] + f[7], 100.0, "{f:?}");
        assert_eq!(f[6] * f[7], 0.0, "{f:?}");
        // a RoCEv2 QP's receiver returns a frame for each (on the path its own hash picks)
        cfg.flows[0].transport = leaf_spine().workloads[0].transport.clone();
        let f = expected_load(&cfg).expect("known traffic").frames;
        assert_eq!(&f[..6], &[200.0, 0.0, 200.0, 0.0, 200.0, 200.0]);
        assert_eq!(f[6] + f[7], 200.0, "{f:?}");
        // a flow counts only what it can send before the run ends (100 Gb/s for 1 µs:
        // 100,000 bits, 11.6 frames of 1,078 bytes)
        cfg.duration = Duration::from_us(1);
        let f = expected_load(&cfg).expect("known traffic").frames;
        assert!((f[0] - 2.0 * 1e5 / (8.0 * 1078.0)).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn the_replay_routes_each_flow_through_the_switches_the_run_sends_it_through() {
        use crate::config::model::Ecmp;
        for ecmp in [Ecmp::FlowHash, Ecmp::Ns3] {
            let mut cfg = leaf_spine();
            cfg.workloads.clear();
            cfg.model.ecmp = ecmp;
            // every pair of hosts on different leaves, both ways, twice (another UDP port,
            // another flow id), each flow a size of its own (so that the spines' sums tell
            // which flows went where): small enough to arrive within the run
            for round in 0..2 {
                for (i, (s, d)) in [(0, 2), (0, 3), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 1)]
                    .into_iter()
                    .enumerate()
                {
                    cfg.flows
                        .push(plain_flow(&cfg, s, d, 1 + 3 * i as u64 + 29 * round));
                }
            }
            // and RoCEv2 QPs, whose replies take the path their own hash gives
            let qp = leaf_spine().workloads[0].transport.clone();
            for (i, (s, d)) in [(0, 2), (1, 3), (3, 0), (2, 1)].into_iter().enumerate() {
                let mut f = plain_flow(&cfg, s, d, 7 + 11 * i as u64);
                f.transport = qp.clone();
                cfg.flows.push(f);
            }
            let f = expected_load(&cfg).expect("known traffic").frames;
            let mut sim = crate::Simulator::new(cfg.clone()).expect("builds");
            sim.run();
            let report = crate::Report::collect(&sim);
            let mut received = vec![0u64; cfg.nodes.len()];
            for p in &report.ports {
                let node = cfg.nodes.iter().position(|n| n.name == p.node).expect("a node");
                received[node] += p.priorities.iter().map(|q| q.rx_frames).sum::<u64>();
            }
            for sw in 4..8 {
                assert_eq!(
                    f[sw], received[sw] as f64,
                    "{ecmp:?}: switch {sw}: {f:?} against {received:?}"
                );
            }
            // the hash spreads them: both spines carry some, and not the same
            assert!(f[6] > 0.0 && f[7] > 0.0 && f[6] != f[7], "{ecmp:?}: {f:?}");
        }
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
    fn a_workload_of_more_arrivals_than_the_budget_is_not_drawn_and_links_weigh_instead() {
        // a flow every picosecond for a second: 10^12 arrivals, refused at once
        let mut cfg = leaf_spine();
        cfg.workloads[0].mean_interarrival = Duration::from_ps(1);
        cfg.duration = Duration::from_ms(1000);
        assert_eq!(expected_load(&cfg), None);
        assert_eq!(node_weights(&cfg), link_weights(&cfg));
        // within the budget it is drawn
        cfg.duration = Duration::from_us(1);
        assert!(expected_load(&cfg).is_some());
    }

    #[test]
    fn every_builtin_scenario_gets_an_estimate_that_loads_only_switches_its_run_uses() {
        for b in crate::scenario::BUILTINS {
            let cfg = crate::scenario::load(b.name, &Default::default()).expect("built-in");
            let weights = node_weights(&cfg);
            assert_eq!(weights.len(), cfg.nodes.len(), "{}", b.name);
            let Some(load) = expected_load(&cfg) else {
                assert_eq!(weights, link_weights(&cfg), "{}", b.name);
                continue;
            };
            assert!(
                load.frames.iter().all(|f| f.is_finite() && *f >= 0.0),
                "{}: {:?}",
                b.name,
                load.frames
            );
            if cfg.nodes.len() > 64 {
                continue;
            }
            // where the estimate sends frames, the run's switches receive some
            let mut sim = crate::Simulator::new(cfg.clone()).expect("builds");
            sim.run();
            let report = crate::Report::collect(&sim);
            for (n, node) in cfg.nodes.iter().enumerate() {
                if !matches!(node.kind, crate::config::NodeKind::Switch(_)) || load.frames[n] < 10.0 {
                    continue;
                }
                let received: u64 = (report.ports.iter().filter(|p| p.node == node.name))
                    .flat_map(|p| p.priorities.iter().map(|q| q.rx_frames))
                    .sum();
                assert!(
                    received > 0,
                    "{}: {} expected {:.0} frames, received none",
                    b.name,
                    node.name,
                    load.frames[n]
                );
            }
        }
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
