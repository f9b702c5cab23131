//! A fabric split over threads gives the one-thread run's report byte for byte (issue 22).

use lossless_sim::experiments::parallel;
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};
use lossless_testkit::pathology::{DCBX_BUILTINS, PATHOLOGY_BUILTINS, assert_acted, fired};

fn json_of(sim: &Simulator) -> String {
    serde_json::to_string_pretty(&Report::collect(sim)).expect("serialises")
}

fn sequential(cfg: &lossless_sim::config::SimConfig) -> String {
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

fn check(name: &str, set: &[&str], threads: &[u16]) {
    let ov = Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let cfg = scenario::load(name, &ov).expect("loads");
    let seq = sequential(&cfg);
    if name == "incast" {
        // the comparison is where PFC fires: the switch pauses the senders
        assert!(seq.contains("\"pfc_xoff_sent_frames\": 2"), "PFC fired in {name}");
    }
    for &t in threads {
        let (sim, stats) = parallel::run(&cfg, t).expect("splits");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "{name} {set:?} at {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn a_pfc_firing_incast_at_1_2_3_and_8_threads_reports_what_one_simulator_does() {
    check("incast", &["senders=16"], &[1, 2, 3, 8]);
}

#[test]
fn two_chip_and_ets_at_2_and_3_threads_report_what_one_simulator_does() {
    check("two-chip", &[], &[2, 3]);
    check("ets-7-13-80", &[], &[2, 3]);
}

#[test]
fn the_dcbx_builtins_at_1_2_3_threads_and_node_by_node_report_what_one_simulator_does() {
    // every LLDPDU crosses a cut link (the switch is partition 0, the hosts elsewhere; node
    // by node every link is cut): its bytes travel in the message, the receiving agent adopts
    // the peer's willing configuration or reports the disagreement, and the report's DCBX
    // section comes from the port's owner
    use lossless_sim::experiments::partition_model::Partitioning;
    for (name, marks) in DCBX_BUILTINS {
        let cfg = scenario::load(name, &Overrides::default()).expect("loads");
        let seq = sequential(&cfg);
        assert_acted(name, &seq, marks);
        for t in [1, 2, 3] {
            let (sim, stats) = parallel::run(&cfg, t).expect("splits");
            let par = json_of(&sim);
            assert!(
                par == seq,
                "{name} at {t} threads ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
        let of_node: Vec<u16> = (0..cfg.nodes.len() as u16).collect();
        let (sim, stats) =
            parallel::run_split(&cfg, &Partitioning::from_map(of_node), &|_, _| false).expect("splits");
        assert!(stats.messages > 0, "{name}: LLDPDUs crossed cut links");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "{name} node by node ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn a_dcqcn_incast_where_pfc_fires_at_1_2_3_and_8_threads_reports_what_one_simulator_does() {
    // 64 QPs at line rate into one port: ECN marks, CNPs cut the rates, and PFC pauses every
    // sender before DCQCN has caught up (the QPs' senders and their receiver in different
    // partitions: every data packet, ACK and CNP crosses a cut link)
    let ov = Overrides {
        set: vec!["senders=64".into(), "duration=\"400us\"".into()],
        ..Default::default()
    };
    let cfg = scenario::load("incast-dcqcn", &ov).expect("loads");
    let seq = sequential(&cfg);
    let counted = |key: &str| {
        seq.lines()
            .filter(|l| l.trim().starts_with(&format!("\"{key}\": ")) && !l.trim_end().ends_with(": 0,"))
            .count()
    };
    assert!(counted("pfc_xoff_sent_frames") > 0, "PFC fired");
    assert!(counted("cnps_sent_total") > 0, "DCQCN acted");
    for t in [1, 2, 3, 8] {
        let (sim, stats) = parallel::run(&cfg, t).expect("splits");
        assert!(t == 1 || stats.messages > 0, "{stats:?}");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "incast-dcqcn at {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

/// A k = 4 fat tree of 100 G hosts (1 µs links) under WebSearch at 50 % for `duration`;
/// with `cc`, every flow a RoCEv2 QP under it, ECN marking on priority 3 where it reads it;
/// `defaults` added to its link defaults.
fn fat_tree_k4(
    seed: u64,
    duration: &str,
    cc: Option<&str>,
    defaults: &str,
) -> lossless_sim::config::SimConfig {
    fat_tree(4, seed, duration, cc, defaults)
}

/// [`fat_tree_k4`] with `k` pods.
fn fat_tree(
    k: u32,
    seed: u64,
    duration: &str,
    cc: Option<&str>,
    defaults: &str,
) -> lossless_sim::config::SimConfig {
    let dir = lossless_testkit::corpus_dir().join("workloads");
    let (qp, transport) = match cc {
        None => (String::new(), ""),
        Some(cc) => {
            let extra = match cc {
                "dcqcn" | "dctcp" => "[ecn]\npreset = \"hpcc-ns3\"\npriorities = [3]\n",
                // the base RTT of the longest path (6 hops of 1 µs each way) and its BDP at 100 G
                "hpcc" => "hpcc = { base_rtt = \"13us\", bdp = 162500 }\n",
                "qcn" => "[qcn]\npriorities = [3]\n",
                _ => "",
            };
            // (QCN's preset is the IEEE8021-CN-MIB's defaults)
            let preset = if cc == "qcn" { "mib" } else { "hpcc-ns3" };
            (
                format!("[qp]\ncc = \"{cc}\"\npreset = \"{preset}\"\n{extra}"),
                "transport = \"rocev2\"\n",
            )
        }
    };
    // (1 MB a switch at k = 4: room for the headroom of more ports as k grows)
    let buffer = 250_000 * k;
    let text = format!(
        r#"
name = "ft4"
seed = {seed}
duration = "{duration}"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
{defaults}
{qp}
[fabric]
kind = "fat-tree"
k = {k}
host_rate = "100G"
delay = "1us"
[fabric.switch]
buffer_bytes = {buffer}
alpha = 0.125
[[workload]]
name = "websearch"
src = ["h*"]
dst = ["h*"]
priority = 3
{transport}cdf_file = "WebSearch_distribution.txt"
load = 0.5
"#
    );
    scenario::load_str(&text, "ft4.toml", Some(&dir), &Overrides::default()).expect("loads")
}

#[test]
fn qps_under_dcqcn_hpcc_timely_and_dctcp_on_a_fat_tree_at_2_3_and_8_threads_report_what_one_simulator_does() {
    // HPCC's INT records and TIMELY's timestamps cross cut links with their packets; their
    // paths re-enter the sender's partition (host → edge → aggregation → core → …), and the
    // rings that hold them grow while replies are in flight
    for cc in ["dcqcn", "hpcc", "timely", "dctcp"] {
        let cfg = fat_tree_k4(3, "800us", Some(cc), "");
        let seq = sequential(&cfg);
        for t in [2, 3, 8] {
            let (sim, stats) = parallel::run(&cfg, t).expect("splits");
            assert!(stats.messages > 0 && stats.windows > 1, "{stats:?}");
            let par = json_of(&sim);
            assert!(
                par == seq,
                "{cc} fat tree at {t} threads ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
    }
}

#[test]
fn a_partition_holds_its_switches_ecn_markers_and_its_hosts_qps_only_unless_switches_stamp_them() {
    // a partition's memory: a QP's engines and state are its ends' (DCQCN, DCTCP), the
    // switches on its path write HPCC's INT records and TIMELY's timestamps into the QP's
    // rings in every partition they cross (so those stay everywhere); a switch port's ECN
    // markers are its switch's
    use lossless_sim::experiments::partition_model::Partitioning;
    for (cc, everywhere) in [
        ("dcqcn", false),
        ("dctcp", false),
        ("hpcc", true),
        ("timely", true),
    ] {
        let cfg = fat_tree_k4(3, "100us", Some(cc), "");
        let part = Partitioning::by_tier(&cfg, 8);
        let (mut held, mut not_held) = (0, 0);
        let whole = Simulator::new(cfg.clone()).expect("builds");
        let cn: Vec<u32> = whole.port_cn_held().collect();
        assert_eq!(
            !cn.is_empty(),
            matches!(cc, "dcqcn" | "dctcp"),
            "{cc}: ECN markers"
        );
        for me in 0..8 {
            let mut sim: Simulator =
                Simulator::partition(cfg.clone(), part.of_node.clone(), me, Default::default())
                    .expect("builds");
            // the ECN markers of its own switches' ports, no other
            let mine: Vec<u32> = (cn.iter().copied())
                .filter(|&p| part.of_node[sim.node_of_port(p) as usize] == me)
                .collect();
            assert_eq!(
                sim.port_cn_held().collect::<Vec<_>>(),
                mine,
                "{cc}: partition {me}"
            );
            // (alone, without the frames of the others: the workload's flows are created in
            // every partition all the same)
            sim.run_until(lossless_proto::units::Instant::from_ps(100_000_000));
            for (src, dst, holds) in sim.qps_held() {
                let mine = part.of_node[src as usize] == me || part.of_node[dst as usize] == me;
                assert_eq!(
                    holds,
                    mine || everywhere,
                    "{cc}: partition {me}, flow {src} -> {dst}"
                );
                if holds {
                    held += 1;
                } else {
                    not_held += 1;
                }
            }
        }
        assert!(held > 0, "{cc}");
        assert_eq!(not_held > 0, !everywhere, "{cc}: {held} held, {not_held} not");
    }
    // and the report is one simulator's, placed over fewer threads than partitions
    check_scheduled(
        "dcqcn fat tree",
        &fat_tree_k4(3, "300us", Some("dcqcn"), ""),
        8,
        &[2],
    );
}

#[test]
fn a_fat_tree_under_a_websearch_workload_at_2_3_and_8_threads_reports_what_one_simulator_does() {
    // ECMP, three tiers, flows created by a workload (every partition runs its arrivals, so
    // that flow ids agree)
    let cfg = fat_tree_k4(7, "150us", None, "");
    let seq = sequential(&cfg);
    for t in [2, 3, 8] {
        let (sim, stats) = parallel::run(&cfg, t).expect("splits");
        assert!(stats.messages > 0 && stats.windows > 1, "{stats:?}");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "fat tree at {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn qcn_and_link_bit_errors_on_a_fat_tree_at_2_3_and_8_threads_report_what_one_simulator_does() {
    // QCN's congestion points at every switch port send CNMs back across cut links to the
    // sources' reaction points; every link corrupts frames (each receiving port's FCS check
    // draws from its own stream, in its partition), QPs retransmit what was lost
    let cfg = fat_tree_k4(5, "300us", Some("qcn"), "ber = 1e-7");
    let seq = sequential(&cfg);
    assert!(
        seq.contains("\"reason\": \"fcs_error\""),
        "no frame was corrupted"
    );
    assert!(
        fired(&seq, "cnms_received_total") > 0,
        "no CNM reached a reaction point"
    );
    for t in [2, 3, 8] {
        let (sim, stats) = parallel::run(&cfg, t).expect("splits");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "QCN + BER at {t} threads ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

#[test]
fn the_default_thread_count_is_one_where_threads_do_not_pay_and_grows_with_the_fabric() {
    use lossless_sim::experiments::parallel::{
        MIN_WINDOW_BYTES, SHORT_WINDOW, auto_threads, min_window_bytes,
    };
    // a switch with 5 m cables: windows of 30 ns
    let incast = scenario::load("incast", &Overrides::default()).expect("loads");
    assert_eq!(auto_threads(&incast, 16).threads, 1);
    // a k = 4 fat tree with 1 µs links: 0.6 MB a window per partition at 2 threads (measured
    // slower on 2 threads than on 1 with std's barrier, 1.25–1.6× faster with the spinning
    // one): two threads on any machine, not more (0.4 MB at 3)
    for cores in [2, 3, 4, 16] {
        let k4 = auto_threads(&fat_tree_k4(1, "1ms", None, ""), cores);
        assert_eq!(k4.threads, 2, "{cores} cores: {k4:?}");
        assert!(
            k4.window_bytes >= min_window_bytes(2) && k4.window_bytes < MIN_WINDOW_BYTES,
            "{k4:?}"
        );
    }
    // a k = 8 fat tree: 4.8 MB a window per partition at 2 threads (measured 1.64–1.69×)
    let k8 = fat_tree(8, 1, "1ms", None, "");
    let two = auto_threads(&k8, 2);
    assert_eq!(two.threads, 2, "{two:?}");
    assert!(two.window.is_some_and(|w| w >= SHORT_WINDOW) && two.window_bytes >= min_window_bytes(2));
    let many = auto_threads(&k8, 16);
    assert!(
        many.threads > 2 && many.threads < 16 && many.window_bytes >= MIN_WINDOW_BYTES,
        "{many:?}"
    );
    assert_eq!(auto_threads(&k8, 1).threads, 1, "one core, one thread");
    // a k = 16 fat tree holds more threads than a k = 8 one
    assert!(auto_threads(&fat_tree(16, 1, "1ms", None, ""), 64).threads > many.threads);
    // a DCBX switch with 5 m cables: windows of 30 ns
    let dcbx = scenario::load("dcbx-adopt", &Overrides::default()).expect("loads");
    assert_eq!(auto_threads(&dcbx, 16).threads, 1);
}

#[test]
fn the_pathology_builtins_at_1_2_3_and_8_threads_report_what_one_simulator_does() {
    // each where its mechanism acts (checked on the one-simulator report first):
    // - storm: a stalled receiver's pause storm spreads over every tier; the detector
    //   reports it (a storm), taking each partition's part of its scans;
    // - storm-nic: the NIC's storm prevention stops the pause (the host's partition);
    // - storm-pfcwd: pfcwd detects storms on switches in different partitions and drops;
    // - deadlock-ring: static routes close a loop; the deadlock's cycle crosses every
    //   partition at 3 threads (one switch each) and the detector stops the run there;
    // - deadlock-bounce: a link goes down at 100 µs with frames on it (a cut link at 2
    //   and 8 threads: lost in the receiver's partition), routes are installed, a deadlock;
    // - four-bridge: victim accounting whose pausers are in other partitions (classified at
    //   the merge with the cause recorded there at the time).
    for (name, marks) in PATHOLOGY_BUILTINS {
        let cfg = scenario::load(name, &Overrides::default()).expect("loads");
        let seq = sequential(&cfg);
        assert_acted(name, &seq, marks);
        for t in [1, 2, 3, 8] {
            let (sim, stats) = parallel::run(&cfg, t).expect("splits");
            let par = json_of(&sim);
            assert!(
                par == seq,
                "{name} at {t} threads ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
    }
}

/// `cfg` split into `parts` automatic partitions on each of `threads`, placed each way, gives
/// the one-thread report byte for byte.
fn check_scheduled(what: &str, cfg: &lossless_sim::config::SimConfig, parts: u16, threads: &[u16]) {
    use lossless_sim::experiments::parallel::{Placement, Schedule};
    use lossless_sim::experiments::partition_model::Partitioning;
    let seq = sequential(cfg);
    let part = Partitioning::by_tier(cfg, parts);
    for &t in threads {
        for placement in [Placement::Events, Placement::Time, Placement::Static] {
            let schedule = Schedule {
                threads: t,
                placement,
                wait: Default::default(),
            };
            let (sim, stats) = parallel::run_scheduled(cfg, &part, schedule, &|_, _| false).expect("splits");
            assert_eq!((stats.threads, stats.partitions), (t, parts), "{stats:?}");
            let par = json_of(&sim);
            assert!(
                par == seq,
                "{what}: {parts} partitions on {t} threads, {placement:?} ({stats:?}): {}",
                first_difference(&seq, &par)
            );
        }
    }
}

#[test]
fn eight_partitions_on_2_and_3_threads_placed_each_window_report_what_one_simulator_does() {
    // more partitions than threads: each thread runs several partitions a window, partitions
    // move between threads (placed by their events or time in the window before), and the
    // frames between partitions of one thread go through the mail like any other
    let ov = Overrides {
        set: vec!["senders=16".into()],
        ..Default::default()
    };
    let incast = scenario::load("incast", &ov).expect("loads");
    check_scheduled("incast", &incast, 8, &[2, 3]);
    let ft = fat_tree_k4(7, "150us", None, "");
    check_scheduled("fat tree", &ft, 8, &[2, 3]);
    // QPs whose INT records cross cut links between partitions that share a thread
    let hpcc = fat_tree_k4(3, "300us", Some("hpcc"), "");
    check_scheduled("HPCC fat tree", &hpcc, 8, &[3]);
    // the deadlock detector's scans (one barrier more, every partition's part) and its stop,
    // pfcwd and a stalled receiver, with several partitions on a thread
    for name in ["deadlock-ring", "storm-pfcwd", "deadlock-bounce"] {
        let cfg = scenario::load(name, &Overrides::default()).expect("loads");
        let parts = (cfg.nodes.len() as u16).min(8);
        check_scheduled(name, &cfg, parts, &[2, 3]);
    }
}

#[test]
fn the_default_split_is_one_partition_a_thread_and_more_are_placed_when_asked() {
    use lossless_sim::experiments::parallel::{PARTITIONS_PER_THREAD, Schedule, auto_partitions};
    use lossless_sim::experiments::partition_model::Partitioning;
    // one a thread (measured on 16 cores: four a thread lost at 2 to 16 threads), whatever
    // the fabric; no threads asked is one
    assert_eq!(PARTITIONS_PER_THREAD, 1);
    for t in [1, 2, 8, 16] {
        assert_eq!(auto_partitions(t), t);
    }
    assert_eq!(auto_partitions(0), 1);
    let ft = fat_tree_k4(7, "150us", None, "");
    let (_, stats) = parallel::run(&ft, 2).expect("splits");
    assert_eq!(
        (stats.threads, stats.partitions, stats.moves),
        (2, 2, 0),
        "{stats:?}"
    );
    // eight asked for on two threads: placed anew each window
    let part = Partitioning::by_tier(&ft, 8);
    let (_, stats) =
        parallel::run_scheduled(&ft, &part, Schedule::adaptive(2), &|_, _| false).expect("splits");
    assert_eq!((stats.threads, stats.partitions), (2, 8));
    assert!(stats.moves > 0, "partitions moved between threads: {stats:?}");
    assert!(
        stats.critical_events < stats.events_per_thread.iter().sum::<u64>(),
        "{stats:?}"
    );
}

#[test]
fn the_deadlock_ring_split_node_by_node_finds_the_same_deadlock_and_stops_at_the_same_scan() {
    // every host and switch its own partition: each queue of the cycle, each frame's ingress
    // and each flow stuck in it is another partition's
    use lossless_sim::experiments::partition_model::Partitioning;
    for name in ["deadlock-ring", "four-bridge", "deadlock-bounce"] {
        let cfg = scenario::load(name, &Overrides::default()).expect("loads");
        let seq = sequential(&cfg);
        let of_node: Vec<u16> = (0..cfg.nodes.len() as u16).collect();
        let (sim, stats) =
            parallel::run_split(&cfg, &Partitioning::from_map(of_node), &|_, _| false).expect("splits");
        let par = json_of(&sim);
        assert!(
            par == seq,
            "{name} node by node ({stats:?}): {}",
            first_difference(&seq, &par)
        );
    }
}

mod random_fabrics {
    use super::*;
    use lossless_sim::experiments::partition_model::Partitioning;
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
        #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn any_split_of_a_random_leaf_spine_reports_what_one_simulator_does(
            leaves in 2u32..4, spines in 1u32..3, per_leaf in 1u32..4, delay_ns in 100u32..2000,
            flows in proptest::collection::vec((0u32..64, 0u32..64, 1u32..200), 1..8),
            map in proptest::collection::vec(0u16..4, 64),
        ) {
            let text = fabric(leaves, spines, per_leaf, delay_ns, &flows);
            let cfg = scenario::load_str(&text, "random.toml", None, &Overrides::default()).expect("loads");
            let seq = sequential(&cfg);
            let of_node: Vec<u16> = (0..cfg.nodes.len()).map(|n| map[n % map.len()]).collect();
            let (sim, stats) = parallel::run_split(&cfg, &Partitioning::from_map(of_node), &|_, _| false).expect("splits");
            let par = json_of(&sim);
            prop_assert!(par == seq, "{text}\n{stats:?}: {}", first_difference(&seq, &par));
        }

        #[test]
        fn any_split_into_more_partitions_than_threads_reports_what_one_simulator_does(
            leaves in 2u32..4, spines in 1u32..3, per_leaf in 1u32..4, delay_ns in 100u32..2000,
            flows in proptest::collection::vec((0u32..64, 0u32..64, 1u32..200), 1..8),
            map in proptest::collection::vec(0u16..8, 64),
            threads in 2u16..5, how in 0u8..3,
        ) {
            use lossless_sim::experiments::parallel::{Placement, Schedule};
            let text = fabric(leaves, spines, per_leaf, delay_ns, &flows);
            let cfg = scenario::load_str(&text, "random.toml", None, &Overrides::default()).expect("loads");
            let seq = sequential(&cfg);
            let of_node: Vec<u16> = (0..cfg.nodes.len()).map(|n| map[n % map.len()]).collect();
            let part = Partitioning::from_map(of_node);
            let placement = [Placement::Events, Placement::Time, Placement::Static][usize::from(how)];
            let schedule = Schedule { threads: threads.min(part.parts), placement, wait: Default::default() };
            let (sim, stats) = parallel::run_scheduled(&cfg, &part, schedule, &|_, _| false).expect("splits");
            let par = json_of(&sim);
            prop_assert!(par == seq, "{text}\n{schedule:?} {stats:?}: {}", first_difference(&seq, &par));
        }
    }
}
