//! The `[fabric]` generators: node and link counts of fat trees and leaf-spines, every host
//! reaching every other through switches only, the k = 4 fat tree equal link for link to the
//! HPCC ns-3 corpus's `topo_ftk4` and the 320-host one to the corpus's `fat-tree-320`, a
//! `[[workload]]` over the generated hosts running to completion, and errors that name the key.

use std::collections::VecDeque;
use std::path::Path;

use lossless_proto::units::{Duration, Rate};
use lossless_sim::config::{NodeKind, SimConfig};
use lossless_sim::ns3::Topology;
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};
use lossless_testkit::{corpus_dir, skip_missing_corpus};

const SWITCH: &str = "[fabric.switch]\nbuffer_bytes = 33554432\nalpha = 0.125\n";

fn fabric(keys: &str) -> SimConfig {
    let text = format!("name = \"f\"\nduration = \"10us\"\n[fabric]\n{keys}\n{SWITCH}");
    load_str(&text, "f.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn counts(c: &SimConfig) -> (usize, usize, usize) {
    let hosts = c
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Host(_)))
        .count();
    (hosts, c.nodes.len() - hosts, c.links.len())
}

/// Every host reaches every other host through switches only (a BFS per host).
fn all_hosts_reach_all(c: &SimConfig) {
    let n = c.nodes.len();
    let mut adj = vec![Vec::new(); n];
    for l in &c.links {
        adj[l.a as usize].push(l.b as usize);
        adj[l.b as usize].push(l.a as usize);
    }
    let is_host = |i: usize| matches!(c.nodes[i].kind, NodeKind::Host(_));
    for s in (0..n).filter(|&i| is_host(i)) {
        let mut seen = vec![false; n];
        let mut q = VecDeque::from([s]);
        seen[s] = true;
        while let Some(x) = q.pop_front() {
            if x != s && is_host(x) {
                continue; // hosts do not forward
            }
            for &y in &adj[x] {
                if !seen[y] {
                    seen[y] = true;
                    q.push_back(y);
                }
            }
        }
        let missed: Vec<&str> = (0..n)
            .filter(|&i| is_host(i) && !seen[i])
            .map(|i| c.nodes[i].name.as_str())
            .collect();
        assert!(missed.is_empty(), "{} does not reach {missed:?}", c.nodes[s].name);
    }
}

/// The links of `c` equal those of the fork's topology file `path` (same order, ends, rates,
/// delays) and its switches are the file's.
fn equals_topology_file(c: &SimConfig, path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let t = Topology::parse(&text, &path.display().to_string()).unwrap();
    assert_eq!(c.nodes.len(), t.nodes as usize);
    for (i, n) in c.nodes.iter().enumerate() {
        assert_eq!(
            matches!(n.kind, NodeKind::Switch(_)),
            t.is_switch[i],
            "node {i} ({})",
            n.name
        );
    }
    assert_eq!(c.links.len(), t.links.len());
    for (ours, theirs) in c.links.iter().zip(&t.links) {
        assert_eq!(
            (ours.a, ours.b, ours.rate, ours.delay),
            (theirs.a, theirs.b, theirs.rate, Some(theirs.delay)),
            "{}: line {}",
            path.display(),
            theirs.line
        );
    }
}

#[test]
fn a_k4_fat_tree_has_16_hosts_20_switches_48_links_and_is_the_corpus_topo_ftk4() {
    let c = fabric("kind = \"fat-tree\"\nk = 4\nhost_rate = \"100G\"\ndelay = \"1us\"");
    assert_eq!(counts(&c), (16, 20, 48));
    assert_eq!(
        (
            c.nodes[0].name.as_str(),
            c.nodes[16].name.as_str(),
            c.nodes[24].name.as_str(),
            c.nodes[35].name.as_str()
        ),
        ("h1", "edge1", "agg1", "core4")
    );
    all_hosts_reach_all(&c);
    let file = corpus_dir().join("hpcc-ns3/ft-k4-websearch/topology.txt");
    if file.is_file() {
        equals_topology_file(&c, &file);
    } else {
        skip_missing_corpus("a_k4_fat_tree_..._is_the_corpus_topo_ftk4", &file);
    }
}

#[test]
fn five_pods_of_a_k8_fat_tree_at_4_to_1_rates_are_the_320_host_fabric() {
    let c = fabric(
        "kind = \"fat-tree\"\nk = 8\npods = 5\nhost_rate = \"100G\"\nfabric_rate = \"400G\"\ndelay = \"1us\"",
    );
    assert_eq!(counts(&c), (320, 56, 480));
    assert_eq!(
        c.links.iter().filter(|l| l.rate == Rate::from_gbps(400)).count(),
        160
    );
    all_hosts_reach_all(&c);
    let file = corpus_dir().join("workloads/fat-tree-320.topology.txt");
    if file.is_file() {
        equals_topology_file(&c, &file);
    } else {
        skip_missing_corpus(
            "five_pods_of_a_k8_fat_tree_at_4_to_1_rates_are_the_320_host_fabric",
            &file,
        );
    }
}

#[test]
fn oversubscription_puts_more_hosts_under_each_edge() {
    // 2:1 at equal rates: 2 × k/2 = 4 hosts per edge, 8 edges
    let c = fabric("kind = \"fat-tree\"\nk = 4\noversubscription = 2\nhost_rate = \"100G\"");
    assert_eq!(counts(&c), (32, 20, 32 + 16 + 16));
    all_hosts_reach_all(&c);
    let e = load_str(
        &format!(
            "name = \"f\"\nduration = \"1us\"\n[fabric]\nkind = \"fat-tree\"\nk = 4\noversubscription = 1.3\nhost_rate = \"100G\"\n{SWITCH}"
        ),
        "f.toml",
        None,
        &Overrides::default(),
    )
    .unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (6, "key `oversubscription`: "));
    assert!(
        e.message.contains("2.6") && e.message.contains("whole number"),
        "{e}"
    );
}

#[test]
fn a_leaf_spine_links_every_leaf_to_every_spine() {
    let c = fabric(
        "kind = \"leaf-spine\"\nleaves = 4\nspines = 3\nhosts_per_leaf = 8\nhost_rate = \"25G\"\nfabric_rate = \"100G\"",
    );
    assert_eq!(counts(&c), (32, 7, 32 + 12));
    assert_eq!(c.nodes[32].name, "leaf1");
    assert_eq!(c.nodes[38].name, "spine3");
    for leaf in 32..36u32 {
        let spines: Vec<u32> = c.links.iter().filter(|l| l.a == leaf).map(|l| l.b).collect();
        assert_eq!(spines, vec![36, 37, 38], "leaf {leaf}");
    }
    assert!(c.links[..32].iter().all(|l| l.rate == Rate::from_gbps(25)));
    all_hosts_reach_all(&c);
}

#[test]
fn a_workload_over_a_generated_fabric_runs_and_completes_flows() {
    let dir = lossless_testkit::temp_dir("fabric-workload");
    std::fs::write(dir.join("sizes.txt"), "1000 0\n20000 50\n100000 100\n").unwrap();
    let text = format!(
        "name = \"f\"\nseed = 7\nduration = \"300us\"\n[defaults]\nflow_control = \"pfc\"\npfc_priorities = [3]\n\
         [fabric]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\nhost_rate = \"100G\"\ndelay = \"1us\"\n{SWITCH}\
         [[workload]]\nname = \"w\"\nsrc = [\"h*\"]\ndst = [\"h*\"]\npriority = 3\ncdf_file = \"sizes.txt\"\nload = 0.3\nstop = \"100us\"\n"
    );
    let c =
        load_str(&text, "f.toml", Some(dir.path()), &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.links[0].delay, Some(Duration::from_us(1)));
    let mut sim = Simulator::new(c).unwrap();
    sim.run();
    let r = Report::collect(&sim);
    r.check().unwrap();
    let done = r.fct.all.as_ref().map_or(0, |a| a.flows_completed_total);
    assert!(done > 20, "8 hosts at 30 % of 100G for 100 us: {done} flows");
    assert_eq!(r.fct.flows_unfinished_total, 0);
}

#[test]
fn fabric_errors_name_the_key() {
    let err = |keys: &str| {
        load_str(
            &format!("name = \"f\"\nduration = \"1us\"\n[fabric]\n{keys}\n{SWITCH}"),
            "f.toml",
            None,
            &Overrides::default(),
        )
        .unwrap_err()
    };
    let e = err("kind = \"fat-tree\"\nk = 5\nhost_rate = \"100G\"");
    assert!(e.key.contains("`k`") && e.message.contains("even"), "{e}");
    let e = err("kind = \"fat-tree\"\nhost_rate = \"100G\"");
    assert!(e.key.contains("`k`") && e.message.contains("missing"), "{e}");
    let e =
        err("kind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nk = 4\nhost_rate = \"100G\"");
    assert!(e.key.contains("`k`") && e.message.contains("leaf-spine"), "{e}");
    let e = err("kind = \"torus\"\nhost_rate = \"100G\"");
    assert!(e.message.contains("fat-tree"), "{e}");
    let e = err("kind = \"fat-tree\"\nk = 128\nhost_rate = \"100G\"");
    assert!(e.message.contains("at most"), "{e}");
}
