//! A fabric split over ranks × threads gives the one-thread run's report byte for byte (issue
//! 22): the ranks here are threads of one process talking through `ranks::local`, which
//! exercises everything an MPI run does — the per-window agreement, the messages encoded to
//! bytes and back, the digests absorbed by rank 0 — except MPI itself (`crates/cli/tests/
//! sim_mpi.rs` runs `mpirun`).

use lossless_sim::config::SimConfig;
use lossless_sim::experiments::parallel::{Placement, Schedule};
use lossless_sim::experiments::partition_model::Partitioning;
use lossless_sim::experiments::ranks::{self, RankError, RankStats, Transport, local};
use lossless_sim::frame::{Frame, NodeId};
use lossless_sim::observer::Observer;
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::sim::exchange::{self, Dec, DecodeError, Digest, Shipped};
use lossless_sim::sim::partition::{Carried, Extra, Mail, Message, NO_EXTRA};
use lossless_sim::trace::split::{self, Recorder};
use lossless_sim::trace::vcd::VcdSink;
use lossless_sim::{Report, Simulator};
use lossless_testkit::pathology::{DCBX_BUILTINS, PATHOLOGY_BUILTINS, assert_acted, fired};

fn json_of(sim: &Simulator) -> String {
    serde_json::to_string_pretty(&Report::collect(sim)).expect("serialises")
}

fn sequential(cfg: &SimConfig) -> String {
    let mut sim = Simulator::new(cfg.clone()).expect("builds");
    sim.run();
    json_of(&sim)
}

fn first_difference(a: &str, b: &str) -> String {
    let at = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
    format!(
        "line {}: {:?} vs {:?}",
        at + 1,
        a.lines().nth(at),
        b.lines().nth(at)
    )
}

/// Runs `cfg` over `r` ranks (threads of this process) of `t` threads each, split as `part`
/// says (default: the automatic partitioning); every rank's result, rank 0 first.
fn over_ranks_split(
    cfg: &SimConfig,
    r: usize,
    t: u16,
    part: Option<&Partitioning>,
) -> Vec<Result<(Option<Simulator>, RankStats), RankError>> {
    over_ranks_scheduled(cfg, r, Schedule::adaptive(t), part)
}

/// [`over_ranks_split`] on the threads and placement `schedule` gives each rank.
fn over_ranks_scheduled(
    cfg: &SimConfig,
    r: usize,
    schedule: Schedule,
    part: Option<&Partitioning>,
) -> Vec<Result<(Option<Simulator>, RankStats), RankError>> {
    let t = schedule.threads;
    std::thread::scope(|s| {
        let hs: Vec<_> = local::ranks(r)
            .into_iter()
            .map(|mut tr| {
                s.spawn(move || {
                    let p = match part {
                        Some(p) => Ok(p.clone()),
                        None => ranks::partitioning(cfg, tr.ranks(), t),
                    };
                    ranks::run_rank_split(cfg, p, schedule, &mut tr, &|_, _| false)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("no panic")).collect()
    })
}

/// The JSON of rank 0, checking that the other ranks return nothing.
fn json_over_ranks(cfg: &SimConfig, r: usize, t: u16, part: Option<&Partitioning>) -> (String, RankStats) {
    json_over_ranks_scheduled(cfg, r, Schedule::adaptive(t), part)
}

/// [`json_over_ranks`] on the threads and placement `schedule` gives each rank.
fn json_over_ranks_scheduled(
    cfg: &SimConfig,
    r: usize,
    schedule: Schedule,
    part: Option<&Partitioning>,
) -> (String, RankStats) {
    let mut results = over_ranks_scheduled(cfg, r, schedule, part).into_iter();
    let (sim, stats) = results.next().expect("rank 0").expect("rank 0 runs");
    for other in results {
        let (none, _) = other.expect("every rank runs");
        assert!(none.is_none(), "only rank 0 gets the merged simulator");
    }
    (json_of(&sim.expect("rank 0 gets the merged simulator")), stats)
}

fn check(cfg: &SimConfig, shapes: &[(usize, u16)]) {
    let seq = sequential(cfg);
    for &(r, t) in shapes {
        let (par, stats) = json_over_ranks(cfg, r, t, None);
        assert!(
            par == seq,
            "{} over {r} ranks × {t} threads ({stats:?}): {}",
            cfg.name,
            first_difference(&seq, &par)
        );
    }
}

fn load(name: &str, set: &[&str]) -> SimConfig {
    let ov = Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    scenario::load(name, &ov).expect("loads")
}

#[test]
fn a_pfc_firing_incast_over_2_3_and_4_ranks_of_1_and_2_threads_reports_what_one_simulator_does() {
    let cfg = load("incast", &["senders=16"]);
    assert!(
        sequential(&cfg).contains("\"pfc_xoff_sent_frames\": 2"),
        "PFC fires"
    );
    check(&cfg, &[(2, 1), (3, 1), (4, 1), (2, 2), (4, 2)]);
}

#[test]
fn two_chip_and_ets_over_2_ranks_report_what_one_simulator_does() {
    check(&load("two-chip", &[]), &[(2, 1), (3, 1)]);
    check(&load("ets-7-13-80", &[]), &[(2, 1), (2, 2)]);
}

/// A k = 4 fat tree, 100 G, 1 µs links, WebSearch at 50 % for 150 µs, with ECN marking at
/// every switch when `ecn`.
fn fat_tree(ecn: bool) -> SimConfig {
    let dir = lossless_testkit::corpus_dir().join("workloads");
    let mut text = String::from(
        r#"
name = "ft4"
seed = 7
duration = "150us"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
[fabric]
kind = "fat-tree"
k = 4
host_rate = "100G"
delay = "1us"
[fabric.switch]
buffer_bytes = 1000000
alpha = 0.125
[[workload]]
name = "websearch"
src = ["h*"]
dst = ["h*"]
priority = 3
cdf_file = "WebSearch_distribution.txt"
load = 0.5
"#,
    );
    if ecn {
        text += "[ecn]\nkmin_bytes = 20000\nkmax_bytes = 80000\npmax = 0.2\n";
    }
    scenario::load_str(&text, "ft4.toml", Some(&dir), &Overrides::default()).expect("loads")
}

#[test]
fn a_fat_tree_under_a_websearch_workload_over_ranks_and_threads_reports_what_one_simulator_does() {
    let cfg = fat_tree(false);
    let seq = sequential(&cfg);
    for (r, t) in [(2, 1), (4, 1), (2, 2), (4, 2), (3, 3)] {
        let (par, stats) = json_over_ranks(&cfg, r, t, None);
        assert!(stats.messages_between_ranks > 0 && stats.windows > 1, "{stats:?}");
        assert!(
            par == seq,
            "fat tree over {r} × {t} ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn switches_with_ecn_markers_over_4_ranks_report_what_one_simulator_does() {
    // (frames of flows without a transport are not ECN-capable: the markers count nothing
    // until QPs are split; their counters travel in the digest all the same)
    let cfg = fat_tree(true);
    let seq = sequential(&cfg);
    assert!(seq.contains("\"cn\": {"), "the switch ports report their markers");
    let (par, stats) = json_over_ranks(&cfg, 4, 1, None);
    assert!(par == seq, "{stats:?}: {}", first_difference(&seq, &par));
}

#[test]
fn the_dcbx_builtins_over_ranks_and_node_by_node_report_what_one_simulator_does() {
    // the LLDPDUs' bytes cross ranks encoded beside their frames; each DCBX port's report, the
    // flow-control mode and the lossless priorities DCBX left in force reach rank 0 in its
    // owner's digest
    for (name, marks) in DCBX_BUILTINS {
        let (cfg, seq) = acts_and_splits_over_2_and_4_ranks(name, marks);
        let nodes = cfg.nodes.len();
        let mut part = Partitioning::from_map((0..nodes as u16).collect());
        part.parts = nodes as u16;
        let (par, stats) = json_over_ranks(&cfg, nodes, 1, Some(&part));
        assert!(
            par == seq,
            "{name} node by node over {nodes} ranks ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn a_digest_with_dcbx_ports_decodes_to_what_was_encoded_and_refuses_every_cut_short_copy() {
    let cfg = load("dcbx-disagree", &[]);
    let of_node: Vec<u16> = (0..cfg.nodes.len() as u16).collect();
    let mut parts: Vec<Simulator> = (0..cfg.nodes.len() as u16)
        .map(|me| Simulator::partition(cfg.clone(), of_node.clone(), me, Default::default()).expect("builds"))
        .collect();
    let until = lossless_proto::units::Instant::from_ps(2_000_000);
    // (run without exchanging frames: only the encoding is checked here)
    for p in &mut parts {
        p.run_until(until);
    }
    for p in &parts {
        let digest = p.digest();
        let shown = format!("{:?}", digest.features);
        assert!(
            shown.contains("DcbxPart") && shown.contains("lldp_sent_frames: 1"),
            "{shown}"
        );
        let mut bytes = Vec::new();
        digest.encode(&mut bytes);
        assert_eq!(Digest::decode(&mut Dec::new(&bytes)).expect("decodes"), digest);
        for cut in (0..bytes.len()).step_by(13) {
            assert!(
                Digest::decode(&mut Dec::new(&bytes[..cut])).is_err(),
                "cut at {cut}"
            );
        }
    }
}

#[test]
fn dcqcn_qps_whose_ends_run_on_other_ranks_report_what_one_simulator_does() {
    // 300 µs: DCQCN has cut rates (every window is a barrier: the whole 10 ms are slow here)
    let ov = Overrides {
        duration: Some(lossless_proto::units::Duration::from_us(300)),
        ..Default::default()
    };
    let cfg = scenario::load("incast-dcqcn", &ov).expect("loads");
    let seq = sequential(&cfg);
    let v: serde_json::Value = serde_json::from_str(&seq).expect("JSON");
    let qps: Vec<&serde_json::Value> = v["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .map(|f| &f["qp"])
        .collect();
    let some = |k: &str| qps.iter().any(|q| q[k].as_u64().is_some_and(|n| n > 0));
    assert!(
        some("rate_decreases_total") && some("cnps_sent_total") && some("transport_delivered_bytes"),
        "the senders cut their rates on the receiver's CNPs: {qps:?}"
    );
    // the QPs' senders and their receiver are not all partition 0's: their figures travel
    for (r, t) in [(2, 1), (4, 1), (2, 2)] {
        let part = ranks::partitioning(&cfg, r, t).expect("splits");
        let ends_elsewhere = cfg
            .flows
            .iter()
            .filter(|f| part.of_node[f.src as usize] != 0 || part.of_node[f.dst as usize] != 0)
            .count();
        assert!(ends_elsewhere > 0, "{r} × {t}: some QP end is not partition 0's");
    }
    check(&cfg, &[(2, 1), (4, 1), (2, 2)]);
}

/// A transport that gives what rank `victim` receives in its `at`-th exchange and every later
/// one to `tamper` first.
struct Tampering<F: FnMut(&mut [Vec<u8>])> {
    inner: local::LocalRank,
    victim: usize,
    at: usize,
    seen: usize,
    tamper: F,
}

impl<F: FnMut(&mut [Vec<u8>])> Tampering<F> {
    /// Rank `inner`'s transport, rank 1's bytes tampered with from its 20th exchange on.
    fn new(inner: local::LocalRank, tamper: F) -> Self {
        Tampering {
            inner,
            victim: 1,
            at: 20,
            seen: 0,
            tamper,
        }
    }
}

impl<F: FnMut(&mut [Vec<u8>])> Transport for Tampering<F> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn ranks(&self) -> usize {
        self.inner.ranks()
    }
    fn min_all(&mut self, v: [u64; 3]) -> Result<[u64; 3], RankError> {
        self.inner.min_all(v)
    }
    fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankError> {
        let mut got = self.inner.exchange(out)?;
        self.seen += 1;
        if self.inner.rank() == self.victim && self.seen >= self.at {
            (self.tamper)(&mut got);
        }
        Ok(got)
    }
    fn gather(&mut self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, RankError> {
        self.inner.gather(bytes)
    }
}

#[test]
fn bytes_one_rank_cannot_decode_stop_every_rank_at_the_next_window() {
    let cfg = fat_tree(false);
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = local::ranks(3)
            .into_iter()
            .map(|inner| {
                let cfg = &cfg;
                s.spawn(move || {
                    // (each buffer cut short by its last byte)
                    let mut tr = Tampering::new(inner, |got: &mut [Vec<u8>]| {
                        for b in got.iter_mut().filter(|b| !b.is_empty()) {
                            b.truncate(b.len() - 1);
                        }
                    });
                    ranks::run_rank(cfg, 1, &mut tr, &|_, _| false).map(|(sim, _)| sim.is_some())
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    for (rank, r) in results.iter().enumerate() {
        match (rank, r) {
            (1, Err(RankError::Decode(e))) => assert!(e.to_string().contains("cut short"), "{e}"),
            (_, Err(RankError::Elsewhere)) if rank != 1 => {}
            other => panic!("rank {rank}: {other:?}"),
        }
    }
}

#[test]
fn a_message_to_a_port_that_does_not_end_a_cut_link_is_refused_not_taken_in() {
    // the receiver finds the sending port as its port's peer: a message to a port beyond the
    // fabric, or to one inside the receiving partition, would put a frame on a wire that
    // does not cross (or index beyond the ports); the rank says so instead
    let cfg = fat_tree(false);
    let part = ranks::partitioning(&cfg, 2, 1).expect("splits");
    let sim: Simulator =
        Simulator::partition(cfg.clone(), part.of_node.clone(), 1, Default::default()).expect("builds");
    // (every link has a port at each end)
    let inside = (0..2 * cfg.links.len() as u32)
        .find(|&p| !sim.receives_at(p) && part.of_node[sim.node_of_port(p) as usize] == 1)
        .expect("a port of partition 1 inside it");
    for port in [u32::MAX, inside] {
        let results: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = local::ranks(2)
                .into_iter()
                .map(|inner| {
                    let cfg = &cfg;
                    s.spawn(move || {
                        // (the first message's port, its first field after its group's
                        // 12-byte header, is `port`)
                        let mut tr = Tampering::new(inner, move |got: &mut [Vec<u8>]| {
                            if let Some(b) = got.iter_mut().find(|b| b.len() > 16) {
                                b[12..16].copy_from_slice(&port.to_le_bytes());
                            }
                        });
                        ranks::run_rank(cfg, 1, &mut tr, &|_, _| false).map(|(sim, _)| sim.is_some())
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("no panic")).collect()
        });
        match (&results[0], &results[1]) {
            (Err(RankError::Elsewhere), Err(RankError::Decode(e))) => {
                assert!(e.to_string().contains("does not end a cut link"), "{e}")
            }
            other => panic!("port {port}: {other:?}"),
        }
    }
}

#[test]
fn a_stop_asked_on_rank_0_ends_every_rank_after_the_same_window() {
    let cfg = fat_tree(false);
    let stop_at = lossless_proto::units::Instant::from_ps(40_000_000);
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = local::ranks(2)
            .into_iter()
            .map(|mut tr| {
                let cfg = &cfg;
                s.spawn(move || ranks::run_rank(cfg, 1, &mut tr, &|at, _| at >= stop_at))
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    let mut it = results.into_iter();
    let (sim, _) = it.next().expect("rank 0").expect("runs");
    let sim = sim.expect("merged");
    assert!(
        sim.now() >= stop_at && sim.now() < sim.end(),
        "stopped at {}",
        sim.now()
    );
    assert!(it.next().expect("rank 1").is_ok());
}

#[test]
fn a_digest_and_a_message_decode_to_what_was_encoded_and_every_cut_short_copy_is_refused() {
    let cfg = fat_tree(true);
    let part = ranks::partitioning(&cfg, 2, 1).expect("splits");
    let mut sim: Simulator =
        Simulator::partition(cfg.clone(), part.of_node.clone(), 1, Default::default()).expect("builds");
    sim.run_until(lossless_proto::units::Instant::from_ps(30_000_000));
    let mut out = Mail::default();
    sim.take_outbox(&mut out);
    assert!(!out.is_empty(), "frames crossed");
    let mut bytes = Vec::new();
    for m in &out.messages {
        exchange::encode_message(m, out.extra(m), &mut bytes);
    }
    let mut d = Dec::new(&bytes);
    let mut back = Mail::default();
    for _ in &out.messages {
        exchange::decode_message(&mut d, &mut back).expect("decodes");
    }
    assert_eq!(back, out);
    assert!(d.is_empty());
    let digest = sim.digest();
    assert!(!digest.ports.is_empty() && !digest.flows.is_empty());
    let mut bytes = Vec::new();
    digest.encode(&mut bytes);
    assert_eq!(Digest::decode(&mut Dec::new(&bytes)).expect("decodes"), digest);
    for cut in (0..bytes.len()).step_by(97) {
        assert!(
            Digest::decode(&mut Dec::new(&bytes[..cut])).is_err(),
            "cut at {cut}"
        );
    }
}

mod random_fabrics {
    use super::*;
    use proptest::prelude::*;

    /// A leaf-spine of `leaves` × `spines` with `per_leaf` hosts at 10 G, small buffers (so
    /// that PFC fires), and `flows` (source, destination, kilobytes) between its hosts.
    fn fabric(leaves: u32, spines: u32, per_leaf: u32, delay_ns: u32, flows: &[(u32, u32, u32)]) -> String {
        let hosts = leaves * per_leaf;
        let mut t = format!(
            "name = \"random\"\nseed = 3\nduration = \"300us\"\n[defaults]\nrate = \"10G\"\nflow_control = \"pfc\"\npfc_priorities = [3]\n\
             [fabric]\nkind = \"leaf-spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {per_leaf}\nhost_rate = \"10G\"\ndelay = \"{delay_ns}ns\"\n\
             [fabric.switch]\nbuffer_bytes = 200000\nalpha = 0.125\n"
        );
        for (i, &(s, d, kb)) in flows.iter().enumerate() {
            let (s, d) = (s % hosts + 1, d % hosts + 1);
            if s == d {
                continue;
            }
            t += &format!(
                "[[flow]]\nname = \"f{i}\"\nsrc = \"h{s}\"\ndst = \"h{d}\"\npriority = {}\nsize_bytes = {}\n",
                if i % 3 == 0 { 0 } else { 3 },
                kb * 1000
            );
        }
        t
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn any_split_of_a_random_leaf_spine_over_2_ranks_of_2_threads_reports_what_one_simulator_does(
            leaves in 2u32..4, spines in 1u32..3, per_leaf in 1u32..4, delay_ns in 100u32..2000,
            flows in proptest::collection::vec((0u32..64, 0u32..64, 1u32..200), 1..8),
            map in proptest::collection::vec(0u16..4, 64),
        ) {
            let text = fabric(leaves, spines, per_leaf, delay_ns, &flows);
            let cfg = scenario::load_str(&text, "random.toml", None, &Overrides::default()).expect("loads");
            let seq = sequential(&cfg);
            let of_node: Vec<u16> = (0..cfg.nodes.len()).map(|n| map[n % map.len()]).collect();
            let mut part = Partitioning::from_map(of_node);
            part.parts = 4;
            let (par, stats) = json_over_ranks(&cfg, 2, 2, Some(&part));
            prop_assert!(par == seq, "{text}\n{stats:?}: {}", first_difference(&seq, &par));
        }
    }
}

#[test]
fn a_qps_digest_holds_both_ends_figures_decodes_to_what_was_encoded_and_refuses_every_cut_short_copy() {
    // one simulator is partition 0 of 1: it owns both ends of every QP
    let mut sim = Simulator::new(load("incast-dcqcn", &[])).expect("builds");
    sim.run();
    let digest = sim.digest();
    let qps: Vec<_> = digest
        .flows
        .iter()
        .filter_map(|f| f.qp_sender.as_ref().zip(f.qp_receiver.as_ref()))
        .collect();
    assert!(!qps.is_empty(), "every flow has a QP with both ends here");
    assert!(
        qps.iter().any(|(s, r)| s.data_sent_frames > 0
            && s.rate_decreases_total > 0
            && s.rate_series.at_ps.len() > 1
            && r.transport_delivered_bytes > 0
            && r.cnps_sent_total > 0),
        "DCQCN cut a rate: {qps:?}"
    );
    let mut bytes = Vec::new();
    digest.encode(&mut bytes);
    let mut d = Dec::new(&bytes);
    assert_eq!(Digest::decode(&mut d).expect("decodes"), digest);
    assert!(d.is_empty());
    for cut in (0..bytes.len()).step_by(13) {
        assert!(
            Digest::decode(&mut Dec::new(&bytes[..cut])).is_err(),
            "cut at {cut}"
        );
    }
}

/// Records every frame delivered to a host: (instant in ps, node, frame id), for partition
/// `part`.
#[derive(Default)]
struct Deliveries {
    part: u16,
    seen: Vec<(u128, NodeId, u64)>,
}

impl Observer for Deliveries {
    fn delivered(&mut self, node: NodeId, frame: &Frame, at: lossless_proto::units::Instant) {
        self.seen.push((at.as_ps(), node, frame.id));
    }
}

impl Shipped for Deliveries {
    fn ship(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.part.to_le_bytes());
        out.extend_from_slice(&(self.seen.len() as u64).to_le_bytes());
        for (at, node, id) in &self.seen {
            out.extend_from_slice(&at.to_le_bytes());
            out.extend_from_slice(&node.to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
        }
    }
    fn unship(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        if d.u16()? != self.part {
            return Err(d.err("another partition's deliveries"));
        }
        for _ in 0..d.len(28)? {
            self.seen.push((d.u128()?, d.u32()?, d.u64()?));
        }
        Ok(())
    }
}

#[test]
fn every_partitions_observer_reaches_rank_0_in_partition_order_with_what_it_saw_there() {
    let cfg = fat_tree(false);
    let mut one = Simulator::with_observer(cfg.clone(), Deliveries::default()).expect("builds");
    one.run();
    let seq = json_of(
        &Simulator::new(cfg.clone())
            .map(|mut s| {
                s.run();
                s
            })
            .expect("builds"),
    );
    let mut all_seen = one.observer().seen.clone();
    all_seen.sort_unstable();
    assert!(all_seen.len() > 100, "frames were delivered");
    // one partition per thread, and 7 on 2 × 2 (3 on rank 0, 4 on rank 1)
    for (r, t, p) in [(2usize, 2u16, 4u16), (2, 2, 7)] {
        let part = Partitioning::by_tier(&cfg, p);
        let make = |p: u16| Deliveries {
            part: p,
            seen: Vec::new(),
        };
        let results: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = local::ranks(r)
                .into_iter()
                .map(|mut tr| {
                    let (cfg, make, part) = (&cfg, &make, part.clone());
                    s.spawn(move || {
                        let schedule = Schedule::adaptive(t);
                        ranks::run_rank_observed_split(cfg, part, schedule, &mut tr, make, &|_, _| false)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("no panic")).collect()
        });
        let mut results = results.into_iter();
        let (merged, observers) = results
            .next()
            .expect("rank 0")
            .expect("runs")
            .0
            .expect("rank 0 gets the merged run");
        assert!(results.all(|x| x.expect("runs").0.is_none()));
        let merged_json = serde_json::to_string_pretty(&Report::collect(&merged)).expect("serialises");
        assert!(
            merged_json == seq,
            "{p}: {}",
            first_difference(&seq, &merged_json)
        );
        assert_eq!(observers.len(), usize::from(part.parts));
        let mut union = Vec::new();
        for (i, o) in observers.iter().enumerate() {
            assert_eq!(usize::from(o.part), i);
            assert!(
                o.seen
                    .iter()
                    .all(|&(_, node, _)| usize::from(part.of_node[node as usize]) == i),
                "partition {i} saw only its own hosts"
            );
            union.extend_from_slice(&o.seen);
        }
        let rank1 = ranks::rank_starts(usize::from(p), r)[1];
        assert!(
            observers[rank1..].iter().any(|o| !o.seen.is_empty()),
            "rank 1's partitions shipped deliveries"
        );
        union.sort_unstable();
        assert!(
            union == all_seen,
            "{p}: {} vs {} deliveries",
            union.len(),
            all_seen.len()
        );
    }
}

#[test]
fn what_a_frame_carries_for_hpcc_pint_and_timely_is_encoded_byte_for_byte_and_decodes_back() {
    use lossless_proto::flow_control::ControlFrame;
    use lossless_sim::observer::WireFrame;
    use lossless_wire::int::{IntHeader, IntHop};

    let pause = |carried: Carried| {
        let mut mail = Mail::default();
        mail.push(
            0x0102_0304,
            lossless_proto::units::Instant::from_ps(6),
            7,
            WireFrame::Control(ControlFrame::Pause { quanta: 0x0809 }),
            carried,
            0x0a0b,
        );
        mail
    };
    // to, at (16 bytes), tie, origin, the frame (kind 1: PAUSE, its quanta): little-endian
    let head: Vec<u8> = [
        &[4u8, 3, 2, 1][..],
        &[6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        &[7, 0, 0, 0, 0, 0, 0, 0],
        &[0x0b, 0x0a, 0, 0, 0, 0, 0, 0],
        &[1, 9, 8],
    ]
    .concat();
    let mut header = IntHeader::default();
    for k in 0..3 {
        header.push(IntHop(0x1100 + k));
    }
    let cases: [(Carried, Vec<u8>); 5] = [
        (
            Carried::Lldp(vec![0xaa, 0xbb, 0xcc].into()),
            [&[4u8][..], &[3, 0, 0, 0, 0, 0, 0, 0], &[0xaa, 0xbb, 0xcc]].concat(),
        ),
        (Carried::None, vec![0]),
        (
            Carried::Pint {
                field: lossless_wire::pint::PintField(0x0c0d),
                slots: 128,
            },
            [&[3u8, 0x0d, 0x0c][..], &[128, 0, 0, 0]].concat(),
        ),
        (
            Carried::Stamp {
                ns: 0x0a0b,
                slots: 64,
            },
            [&[2u8, 0x0b, 0x0a, 0, 0, 0, 0, 0, 0][..], &[64, 0, 0, 0]].concat(),
        ),
        (
            Carried::Int { header, slots: 256 },
            [
                &[1u8][..],
                &[0x00, 0x11, 0, 0, 0, 0, 0, 0],
                &[0x01, 0x11, 0, 0, 0, 0, 0, 0],
                &[0x02, 0x11, 0, 0, 0, 0, 0, 0],
                &[0; 16],
                &[3, 0],
                &[0, 1, 0, 0],
            ]
            .concat(),
        ),
    ];
    let mut all = Vec::new();
    for (carried, tail) in &cases {
        let mail = pause(carried.clone());
        let m = &mail.messages[0];
        let mut bytes = Vec::new();
        exchange::encode_message(m, mail.extra(m), &mut bytes);
        assert_eq!(bytes, [&head[..], &tail[..]].concat(), "{carried:?}");
        let mut back = Mail::default();
        exchange::decode_message(&mut Dec::new(&bytes), &mut back).expect("decodes");
        assert_eq!(back, mail);
        for cut in 0..bytes.len() {
            assert!(
                exchange::decode_message(&mut Dec::new(&bytes[..cut]), &mut Mail::default()).is_err(),
                "cut at {cut}"
            );
        }
        all.extend_from_slice(&bytes);
    }
    // an unknown kind of field is refused
    let mut bad = head.clone();
    bad.push(5);
    assert!(exchange::decode_message(&mut Dec::new(&bad), &mut Mail::default()).is_err());
    // one after another, as in an exchange
    let mut d = Dec::new(&all);
    let mut back = Mail::default();
    for (carried, _) in &cases {
        exchange::decode_message(&mut d, &mut back).expect("decodes");
        let m = back.messages.last().expect("one more");
        assert_eq!(back.extra(m).map(|x| &x.carried), Some(carried));
    }
    assert!(d.is_empty());
}

#[test]
fn a_message_is_one_cache_line_and_carries_an_extra_only_when_it_has_one() {
    use lossless_proto::flow_control::ControlFrame;
    use lossless_sim::observer::WireFrame;

    assert_eq!(std::mem::size_of::<Message>(), 64);
    assert_eq!(std::mem::align_of::<Message>(), 64);
    let at = lossless_proto::units::Instant::from_ps(9);
    let w = WireFrame::Control(ControlFrame::Pause { quanta: 1 });
    let mut a = Mail::default();
    a.push(1, at, 1, w, Carried::None, 0);
    a.push(2, at, 2, w, Carried::Stamp { ns: 5, slots: 8 }, 0);
    a.push(3, at, 3, w, Carried::None, 12);
    assert_eq!(
        a.messages.iter().map(|m| m.extra).collect::<Vec<_>>(),
        [NO_EXTRA, 0, 1]
    );
    assert_eq!(a.extra(&a.messages[0]), None);
    // appended behind another mail with extras, their indices follow the extras
    let mut b = Mail::default();
    b.push(4, at, 4, w, Carried::Stamp { ns: 6, slots: 8 }, 0);
    b.append(&mut a);
    assert!(a.is_empty() && a.extras.is_empty());
    assert_eq!(b.len(), 4);
    let extras: Vec<Option<&Extra>> = b.messages.iter().map(|m| b.extra(m)).collect();
    assert_eq!(
        extras,
        [
            Some(&Extra {
                carried: Carried::Stamp { ns: 6, slots: 8 },
                origin: 0
            }),
            None,
            Some(&Extra {
                carried: Carried::Stamp { ns: 5, slots: 8 },
                origin: 0
            }),
            Some(&Extra {
                carried: Carried::None,
                origin: 12
            }),
        ]
    );
}

#[test]
fn the_pathology_builtins_over_2_and_4_ranks_of_1_and_2_threads_report_what_one_simulator_does() {
    // each where its mechanism acts (checked on the one-simulator report first): the
    // detector's scans gather every partition's part across ranks, and each rank's digests
    // carry the hosts' stalls, pfcwd, the detector's per-port state, victims (with the blocked
    // time whose pauser ran on another rank) and the frames lost on a cut link
    for (name, marks) in PATHOLOGY_BUILTINS {
        acts_and_splits_over_2_and_4_ranks(name, marks);
    }
}

/// Checks that the built-in `name` shows `marks` on one simulator (its mechanism acts) and
/// reports the same over 2 ranks × 1 and 2 threads and 4 ranks × 1; returns its configuration
/// and the one-simulator JSON.
fn acts_and_splits_over_2_and_4_ranks(name: &str, marks: &[&str]) -> (SimConfig, String) {
    let cfg = load(name, &[]);
    let seq = sequential(&cfg);
    assert_acted(name, &seq, marks);
    for (r, t) in [(2, 1), (2, 2), (4, 1)] {
        let (par, stats) = json_over_ranks(&cfg, r, t, None);
        assert!(
            par == seq,
            "{name} over {r} ranks × {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
    (cfg, seq)
}

#[test]
fn the_deadlock_builtins_one_node_a_partition_over_ranks_report_what_one_simulator_does() {
    // every host and switch its own partition, spread over ranks: each queue of a cycle, each
    // frame's ingress and each flow stuck in it is another partition's, most on another rank
    for name in ["deadlock-ring", "four-bridge", "deadlock-bounce"] {
        let cfg = load(name, &[]);
        let seq = sequential(&cfg);
        let nodes = cfg.nodes.len();
        for r in [2usize, 3] {
            let t = nodes.div_ceil(r);
            let of_node: Vec<u16> = (0..nodes as u16).collect();
            let mut part = Partitioning::from_map(of_node);
            part.parts = (r * t) as u16;
            let (par, stats) = json_over_ranks(&cfg, r, t as u16, Some(&part));
            assert!(
                par == seq,
                "{name} node by node over {r} ranks ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
    }
}

/// A k = 4 fat tree, 100 G, 1 µs links, WebSearch at 50 % on RoCEv2 QPs under QCN (its
/// congestion points at every switch port), every link with a bit error rate of 1e-7.
fn qcn_ber_fat_tree() -> SimConfig {
    let dir = lossless_testkit::corpus_dir().join("workloads");
    let text = r#"
name = "ft4"
seed = 5
duration = "300us"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
ber = 1e-7
[qp]
cc = "qcn"
preset = "mib"
[qcn]
priorities = [3]
[fabric]
kind = "fat-tree"
k = 4
host_rate = "100G"
delay = "1us"
[fabric.switch]
buffer_bytes = 1000000
alpha = 0.125
[[workload]]
name = "websearch"
src = ["h*"]
dst = ["h*"]
priority = 3
transport = "rocev2"
cdf_file = "WebSearch_distribution.txt"
load = 0.5
"#;
    scenario::load_str(text, "ft4.toml", Some(&dir), &Overrides::default()).expect("loads")
}

#[test]
fn qcn_and_link_bit_errors_on_a_fat_tree_over_2_and_4_ranks_report_what_one_simulator_does() {
    // congestion points send CNMs back across ranks; each receiving port's FCS check runs on
    // its rank and its figures reach rank 0 in the digest
    let cfg = qcn_ber_fat_tree();
    let seq = sequential(&cfg);
    assert!(
        seq.contains("\"reason\": \"fcs_error\""),
        "no frame was corrupted"
    );
    assert!(
        fired(&seq, "cnms_received_total") > 0,
        "no CNM reached a reaction point"
    );
    assert!(
        fired(&seq, "cp_sampled_frames") > 0,
        "no congestion point sampled"
    );
    for (r, t) in [(2, 1), (2, 2), (4, 1)] {
        let (par, stats) = json_over_ranks(&cfg, r, t, None);
        assert!(
            par == seq,
            "QCN + BER over {r} ranks × {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn a_digest_with_the_pathology_parts_and_a_scan_part_decode_to_what_was_encoded_and_refuse_every_cut_short_copy()
 {
    // four-bridge split node by node: partition 1's digest holds victims' slots, causes,
    // deferred time and history, and the detector's per-port state
    let cfg = load("four-bridge", &[]);
    let of_node: Vec<u16> = (0..cfg.nodes.len() as u16).collect();
    let mut parts: Vec<Simulator> = (0..cfg.nodes.len() as u16)
        .map(|me| Simulator::partition(cfg.clone(), of_node.clone(), me, Default::default()).expect("builds"))
        .collect();
    let until = lossless_proto::units::Instant::from_ps(150_000_000);
    // (run without exchanging frames: only the encoding is checked here)
    for p in &mut parts {
        p.run_until(until);
    }
    let mut any_victims = false;
    for p in &parts[1..] {
        let digest = p.digest();
        let mut bytes = Vec::new();
        digest.encode(&mut bytes);
        assert_eq!(Digest::decode(&mut Dec::new(&bytes)).expect("decodes"), digest);
        any_victims |= format!("{:?}", digest.features).contains("Slot");
        for cut in (0..bytes.len()).step_by(61) {
            assert!(
                Digest::decode(&mut Dec::new(&bytes[..cut])).is_err(),
                "cut at {cut}"
            );
        }
    }
    assert!(any_victims, "some partition's digest holds victims' slots");
    // the parts of the deadlock ring's scans (one partition holding the whole fabric, its
    // scans driven as a split run drives them) round-trip; cut short, with another tag or
    // with a range past its ingress ports they are refused
    let cfg = load("deadlock-ring", &[]);
    let mut sim: Simulator =
        Simulator::partition(cfg.clone(), vec![0; cfg.nodes.len()], 0, Default::default()).expect("builds");
    let mut scans = Vec::new();
    while !sim.halted() && sim.next_event_at().is_some_and(|t| t < sim.end()) {
        sim.run_until(sim.end());
        if sim.holds_fabric_timer() {
            sim.handle_held();
            if let Some(part) = sim.take_scan_part() {
                sim.scan_parts(&[&part]);
                scans.push(part);
            }
        }
    }
    assert!(sim.halted(), "the detector stopped the run");
    let last = scans.pop().expect("scans ran");
    assert_ne!(last, Default::default(), "the last scan found blocked queues");
    for s in [Default::default(), last] {
        let mut bytes = Vec::new();
        exchange::encode_scan_part(7, &s, &mut bytes);
        let mut d = Dec::new(&bytes);
        assert_eq!(
            exchange::decode_scan_part(&mut d).expect("decodes"),
            (7, s.clone())
        );
        assert!(d.is_empty());
        for cut in 0..bytes.len() {
            assert!(exchange::decode_scan_part(&mut Dec::new(&bytes[..cut])).is_err());
        }
        let mut other = bytes.clone();
        other[0] ^= 1;
        assert!(exchange::decode_scan_part(&mut Dec::new(&other)).is_err());
        if bytes.len() > 11 + 13 {
            // the first queue's end of its ingress range (after tag, partition, count, port
            // and priority) past every ingress port
            bytes[11 + 5..11 + 9].copy_from_slice(&u32::MAX.to_le_bytes());
            assert!(exchange::decode_scan_part(&mut Dec::new(&bytes)).is_err());
        }
    }
}

/// The VCD of `cfg` on one thread.
fn vcd_one_thread(cfg: &SimConfig) -> Vec<u8> {
    let sink = VcdSink::new(cfg, Vec::new()).expect("writes to memory");
    let mut sim = Simulator::with_observer(cfg.clone(), sink).expect("builds");
    sim.run();
    sim.observer_mut().finish().expect("writes to memory");
    std::mem::replace(sim.observer_mut(), VcdSink::new(cfg, Vec::new()).expect("memory")).into_inner()
}

/// One rank's result of a traced run (its merged run and observers on rank 0).
type TracedRank = Result<Option<(Simulator<Recorder<VcdSink<Vec<u8>>>>, usize)>, RankError>;

/// The VCD of `cfg` over `r` ranks × `t` threads, each partition's trace records gathered on
/// rank 0 window by window and merged into one sink there; rank 0's window hook fails at its
/// `fail_at`-th call. Every rank's result, rank 0's VCD and the windows it took.
fn vcd_over_ranks(
    cfg: &SimConfig,
    r: usize,
    t: u16,
    fail_at: Option<usize>,
) -> (Vec<TracedRank>, Vec<u8>, usize) {
    vcd_over_ranks_split(
        cfg,
        r,
        t,
        ranks::partitioning(cfg, r, t).expect("splits"),
        fail_at,
    )
}

/// [`vcd_over_ranks`] split as `part` says.
fn vcd_over_ranks_split(
    cfg: &SimConfig,
    r: usize,
    t: u16,
    part: Partitioning,
    fail_at: Option<usize>,
) -> (Vec<TracedRank>, Vec<u8>, usize) {
    let parts = usize::from(part.parts);
    let mut sink = VcdSink::new(cfg, Vec::new()).expect("writes to memory");
    let mut windows = 0usize;
    let results = std::thread::scope(|s| {
        let mut trs = local::ranks(r).into_iter();
        let lead = trs.next().expect("rank 0");
        let others: Vec<_> = trs
            .map(|mut tr| {
                let part = part.clone();
                s.spawn(move || {
                    ranks::run_rank_traced(
                        cfg,
                        part,
                        Schedule::adaptive(t),
                        &mut tr,
                        &|_| Recorder::<VcdSink<Vec<u8>>>::new(),
                        &|o, out| o.take_encoded(out),
                        None,
                        &|_, _| false,
                    )
                    .map(|(sim, _)| sim.map(|(sim, o)| (sim, o.len())))
                })
            })
            .collect();
        let (sink, windows) = (&mut sink, &mut windows);
        let rank0 = s.spawn(move || {
            let mut tr = lead;
            let mut window = |from_ranks: Vec<Vec<u8>>| {
                *windows += 1;
                if fail_at == Some(*windows) {
                    return Err("the test's output failed".to_string());
                }
                let batches = split::decode_window(&from_ranks, parts).map_err(|e| e.to_string())?;
                split::merge_into(&batches, sink);
                Ok(())
            };
            ranks::run_rank_traced(
                cfg,
                part.clone(),
                Schedule::adaptive(t),
                &mut tr,
                &|_| Recorder::<VcdSink<Vec<u8>>>::new(),
                &|o, out| o.take_encoded(out),
                Some(&mut window),
                &|_, _| false,
            )
            .map(|(sim, _)| sim.map(|(sim, o)| (sim, o.len())))
        });
        let mut all = vec![rank0.join().expect("no panic")];
        all.extend(others.into_iter().map(|h| h.join().expect("no panic")));
        all
    });
    sink.finish().expect("writes to memory");
    (results, sink.into_inner(), windows)
}

#[test]
fn trace_records_gathered_on_rank_0_window_by_window_give_the_one_thread_vcd() {
    // PFC fires in the incast and the storm; LLDPDUs cross cut links in dcbx-adopt
    for (name, set) in [
        ("incast", &["senders=16"][..]),
        ("storm-pfcwd", &[][..]),
        ("dcbx-adopt", &[][..]),
    ] {
        let cfg = load(name, set);
        let one = vcd_one_thread(&cfg);
        assert!(one.len() > 10_000, "{name}: a VCD with changes");
        for (r, t) in [(2, 1), (2, 2), (4, 1)] {
            let (results, vcd, windows) = vcd_over_ranks(&cfg, r, t, None);
            let mut results = results.into_iter();
            let (merged, observers) = results
                .next()
                .expect("rank 0")
                .expect("runs")
                .expect("rank 0 gets the merged run");
            assert!(results.all(|x| x.expect("runs").is_none()));
            assert_eq!(observers, r * usize::from(t));
            assert!(windows > 1, "{name} {r} × {t}: records gathered window by window");
            assert!(
                vcd == one,
                "{name} {r} × {t}: the VCD differs from one thread's: {}",
                first_difference(&String::from_utf8_lossy(&one), &String::from_utf8_lossy(&vcd))
            );
            assert_eq!(
                json_of_observed(&merged),
                sequential(&cfg),
                "{name} {r} × {t}: the report"
            );
        }
    }
}

/// The report of a merged run, whatever its observer.
fn json_of_observed<O: Observer>(sim: &Simulator<O>) -> String {
    serde_json::to_string_pretty(&Report::collect(sim)).expect("serialises")
}

#[test]
fn trace_records_rank_0_cannot_take_stop_every_rank_in_the_run_and_at_its_end() {
    let cfg = load("incast", &["senders=16"]);
    let (_, _, windows) = vcd_over_ranks(&cfg, 2, 1, None);
    // a window in the run, and the records taken after the last window
    for fail_at in [3, windows] {
        let (results, _, _) = vcd_over_ranks(&cfg, 2, 1, Some(fail_at));
        let mut results = results.into_iter();
        match results.next().expect("rank 0") {
            Err(RankError::Trace(why)) => assert!(why.contains("the test's output failed"), "{why}"),
            other => panic!("rank 0 at window {fail_at}: {:?}", other.map(|_| ())),
        }
        for other in results {
            assert!(
                matches!(other, Err(RankError::Elsewhere)),
                "the other rank stops with it at window {fail_at}: {:?}",
                other.map(|_| ())
            );
        }
    }
}

#[test]
fn ranks_that_disagree_on_the_trace_records_all_refuse_before_the_run() {
    let cfg = load("incast", &["senders=16"]);
    let part = ranks::partitioning(&cfg, 2, 1).expect("splits");
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = local::ranks(2)
            .into_iter()
            .map(|mut tr| {
                let (cfg, part) = (&cfg, part.clone());
                s.spawn(move || {
                    if tr.rank() == 0 {
                        ranks::run_rank_traced(
                            cfg,
                            part,
                            Schedule::adaptive(1),
                            &mut tr,
                            &|_| Recorder::<VcdSink<Vec<u8>>>::new(),
                            &|o, out| o.take_encoded(out),
                            Some(&mut |_| Ok(())),
                            &|_, _| false,
                        )
                        .map(|_| ())
                    } else {
                        ranks::run_rank_split(cfg, Ok(part), Schedule::adaptive(1), &mut tr, &|_, _| false)
                            .map(|_| ())
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    for r in results {
        match r {
            Err(RankError::Split(why)) => assert!(why.contains("disagree on whether trace outputs"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}

/// The JSON over `r` ranks × `t` threads of `p` partitions (the automatic partitioning), each
/// rank placing its own on its threads each window by their events; checks the run's figures.
fn json_over_ranks_placed(cfg: &SimConfig, r: usize, t: u16, p: u16) -> (String, RankStats) {
    let part = Partitioning::by_tier(cfg, p);
    let (json, stats) = json_over_ranks(cfg, r, t, Some(&part));
    let here = ranks::rank_starts(usize::from(p), r)[1];
    assert_eq!((stats.partitions, stats.partitions_here), (usize::from(p), here));
    let placed = if here > usize::from(t) {
        Placement::Events
    } else {
        Placement::Static
    };
    assert_eq!(stats.placement, placed, "{stats:?}");
    assert_eq!(stats.events_per_thread.len(), usize::from(t), "{stats:?}");
    (json, stats)
}

#[test]
fn more_partitions_than_threads_on_each_rank_placed_by_events_report_what_one_simulator_does() {
    // 2 × 2 of 6 (three a rank on two threads), 2 × 1 of 3 (ranks of 2 and 1), 3 × 1 of 4
    // (1, 1, 2) and 2 × 2 of 5 (2 and 3): frames cross between partitions of one thread, of
    // one rank and of two ranks, and every partition takes them in sender by sender
    for (name, set) in [("incast", &["senders=16"][..]), ("storm-pfcwd", &[][..])] {
        let cfg = load(name, set);
        let seq = sequential(&cfg);
        for (r, t, p) in [(2, 2, 6), (2, 1, 3), (3, 1, 4), (2, 2, 5)] {
            let (par, stats) = json_over_ranks_placed(&cfg, r, t, p);
            assert!(
                par == seq,
                "{name} over {r} ranks × {t} threads of {p} partitions ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
    }
}

#[test]
fn a_fat_tree_of_more_partitions_than_threads_per_rank_moves_them_and_reports_what_one_simulator_does() {
    let cfg = fat_tree(false);
    let seq = sequential(&cfg);
    for (r, t, p) in [(2, 2, 6), (2, 1, 3), (2, 2, 8), (3, 2, 9)] {
        let (par, stats) = json_over_ranks_placed(&cfg, r, t, p);
        assert!(stats.messages_between_ranks > 0 && stats.windows > 1, "{stats:?}");
        if t > 1 {
            // the busiest partition changes from window to window: the placement follows it
            assert!(stats.moves > 0, "{r} × {t} of {p}: {stats:?}");
        }
        assert!(
            stats.critical_events >= stats.events_per_thread.iter().sum::<u64>() / u64::from(t),
            "{stats:?}"
        );
        assert!(
            par == seq,
            "fat tree over {r} × {t} of {p} ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
    // placed by time, or statically: the same report
    let part = Partitioning::by_tier(&cfg, 6);
    for placement in [Placement::Time, Placement::Static] {
        let schedule = Schedule {
            threads: 2,
            placement,
            wait: Default::default(),
        };
        let (par, stats) = json_over_ranks_scheduled(&cfg, 2, schedule, Some(&part));
        assert_eq!(stats.placement, placement);
        if placement == Placement::Static {
            assert_eq!(stats.moves, 0, "{stats:?}");
        }
        assert!(
            par == seq,
            "fat tree over 2 × 2 of 6 by {placement:?} ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn the_deadlock_builtins_one_node_a_partition_several_a_thread_report_what_one_simulator_does() {
    // the detector's scans gather every partition's part when a thread runs several of its
    // rank's partitions and they move between its threads
    for name in ["deadlock-ring", "four-bridge", "deadlock-bounce"] {
        let cfg = load(name, &[]);
        let seq = sequential(&cfg);
        let nodes = cfg.nodes.len();
        let part = Partitioning::from_map((0..nodes as u16).collect());
        for (r, t) in [(2usize, 1u16), (2, 2), (3, 1)] {
            let (par, stats) = json_over_ranks(&cfg, r, t, Some(&part));
            assert!(stats.partitions_here > usize::from(t), "{stats:?}");
            assert!(
                par == seq,
                "{name} node by node over {r} ranks × {t} threads ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
    }
}

#[test]
fn trace_records_of_more_partitions_than_threads_give_the_one_thread_vcd() {
    for (name, set) in [("incast", &["senders=16"][..]), ("storm-pfcwd", &[][..])] {
        let cfg = load(name, set);
        let one = vcd_one_thread(&cfg);
        let (r, t, p) = (2, 2, 6);
        let (results, vcd, windows) = vcd_over_ranks_split(&cfg, r, t, Partitioning::by_tier(&cfg, p), None);
        let mut results = results.into_iter();
        let (merged, observers) = results
            .next()
            .expect("rank 0")
            .expect("runs")
            .expect("rank 0 gets the merged run");
        assert!(results.all(|x| x.expect("runs").is_none()));
        assert_eq!(observers, usize::from(p));
        assert!(windows > 1, "{name}: records gathered window by window");
        assert!(
            vcd == one,
            "{name} {r} × {t} of {p}: the VCD differs from one thread's: {}",
            first_difference(&String::from_utf8_lossy(&one), &String::from_utf8_lossy(&vcd))
        );
        assert_eq!(json_of_observed(&merged), sequential(&cfg), "{name}: the report");
    }
}

#[test]
fn fewer_partitions_than_ranks_times_threads_are_refused_on_every_rank() {
    let cfg = load("incast", &["senders=16"]);
    let part = Partitioning::by_tier(&cfg, 3);
    for result in over_ranks_split(&cfg, 2, 2, Some(&part)) {
        match result {
            Err(RankError::Split(why)) => assert!(
                why.contains("3 partitions for 2 ranks × 2 threads") && why.contains("at least 4"),
                "{why}"
            ),
            other => panic!("{:?}", other.map(|(_, st)| st)),
        }
    }
}
