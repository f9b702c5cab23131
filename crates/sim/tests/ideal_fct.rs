//! Slowdown as the field defines it: the default ideal FCT (`IdealFct::Alone`) is the flow's
//! own completion time alone in the idle fabric, so a flow run alone completes in exactly its
//! ideal (slowdown 1, to the picosecond) on every built-in topology, for plain flows and
//! RoCEv2 QPs, one-frame and many-frame, paced or at line rate; and in the built-ins' own
//! runs no completed flow is faster than its ideal.

use lossless_proto::units::{Duration, Instant};
use lossless_sim::config::SimConfig;
use lossless_sim::config::model::IdealFct;
use lossless_sim::config::traffic::FlowSpec;
use lossless_sim::scenario::{BUILTINS, Overrides};
use lossless_sim::{Report, Simulator};

/// `config` with `flow` alone in it: no other flow, workload, signal, pathology or DCBX
/// (LLDPDUs are traffic too), long enough for the flow to finish.
fn alone(config: &SimConfig, flow: &FlowSpec) -> SimConfig {
    let mut c = config.clone();
    c.flows = vec![flow.clone()];
    c.workloads.clear();
    c.signals.clear();
    c.pathology = Default::default();
    for l in &mut c.links {
        l.dcbx_a = None;
        l.dcbx_b = None;
    }
    for n in &mut c.nodes {
        n.dcbx = None;
    }
    c.duration = Duration::from_ms(50);
    c
}

fn run(c: SimConfig) -> Report {
    let mut sim = Simulator::new(c).expect("builds");
    sim.run();
    Report::collect(&sim)
}

#[test]
fn a_flow_alone_completes_in_exactly_its_ideal_on_every_built_in_topology() {
    let mut checked = 0;
    for b in BUILTINS {
        let config = lossless_sim::scenario::load(b.name, &Overrides::default()).unwrap();
        assert_eq!(
            config.model.ideal_fct,
            IdealFct::Alone,
            "{}: the default ideal",
            b.name
        );
        // the scenario's own flows (their paths, patterns and transports), a few per scenario
        let mut seen = Vec::new();
        for f in config.flows.iter().filter(|f| {
            let k = (f.src, f.dst, f.transport.is_some());
            let new = !seen.contains(&k);
            if new {
                seen.push(k);
            }
            new
        }) {
            let mtu = f.transport.as_ref().map_or(f.mtu, |t| u64::from(t.rc.mtu));
            for size in [1, mtu, mtu + 1, 7 * mtu + 13] {
                let mut lone = f.clone();
                lone.size = Some(size);
                lone.stop = Instant::MAX;
                let r = run(alone(&config, &lone));
                let fr = &r.flows[0];
                let done = fr
                    .completion_ps
                    .unwrap_or_else(|| panic!("{} {} ({size} B) completes alone", b.name, f.name));
                assert_eq!(
                    Some(done),
                    fr.fct_ideal_ps,
                    "{} {} ({size} B, {}): alone it takes its ideal",
                    b.name,
                    f.name,
                    if f.transport.is_some() { "QP" } else { "plain" }
                );
                assert_eq!(fr.fct_slowdown_ratio, Some(1.0));
                checked += 1;
            }
        }
    }
    // every built-in with fixed flows took part: plain and QP flows, one switch to a Clos
    assert!(checked >= 40, "{checked} lone flows checked");
}

#[test]
fn no_completed_flow_of_a_built_in_is_faster_than_its_ideal() {
    let mut completed = 0;
    for b in BUILTINS {
        let r = run(lossless_sim::scenario::load(b.name, &Overrides::default()).unwrap());
        for f in &r.flows {
            if let (Some(done), Some(ideal)) = (f.completion_ps, f.fct_ideal_ps) {
                assert!(
                    done >= ideal,
                    "{} {}: {done} ps < ideal {ideal} ps",
                    b.name,
                    f.name
                );
                completed += 1;
            }
        }
    }
    assert!(completed > 0, "some built-in completes finite flows");
}

#[test]
fn the_ideal_counts_each_switch_hop_and_the_acks_way_back() {
    // incast-dcqcn: one switch between QPs at 100 Gb/s; a lone 1-byte QP message takes two
    // data hops and two ACK hops, each its frame's last bit plus the link's delay
    let config = lossless_sim::scenario::load("incast-dcqcn", &Overrides::default()).unwrap();
    let mut f = config.flows[0].clone();
    f.size = Some(1);
    let r = run(alone(&config, &f));
    let ideal = r.flows[0].fct_ideal_ps.unwrap();
    // a 1-byte payload makes a 67-byte RoCEv2 frame: 75 bytes to its last bit at 80 ps a byte;
    // the ACK is 70 bytes, 78 to its last bit
    let link = |i: usize| config.links[i].propagation() + config.links[i].interface_delay;
    let src_link = config
        .links
        .iter()
        .position(|l| l.a == f.src || l.b == f.src)
        .unwrap();
    let dst_link = config
        .links
        .iter()
        .position(|l| l.a == f.dst || l.b == f.dst)
        .unwrap();
    let per_link = |i: usize, bytes: u128| Duration::from_ps(bytes * 80) + link(i);
    let want =
        per_link(src_link, 75) + per_link(dst_link, 75) + per_link(dst_link, 78) + per_link(src_link, 78);
    assert_eq!(ideal, want.as_ps());
}

#[test]
fn a_flow_alone_across_generated_fabrics_completes_in_exactly_its_ideal() {
    use lossless_sim::config::traffic::Pattern;
    use lossless_sim::scenario::load_str;
    let switch = "[fabric.switch]\nbuffer_bytes = 33554432\nalpha = 0.125\n";
    for keys in [
        // k = 4 fat tree, 100G everywhere: 6 switch hops between pods
        "kind = \"fat-tree\"\nk = 4\nhost_rate = \"100G\"\ndelay = \"1us\"",
        // 400G fabric links above 100G hosts: the bottleneck is the first and last hop
        "kind = \"fat-tree\"\nk = 4\nhost_rate = \"100G\"\nfabric_rate = \"400G\"\ndelay = \"1us\"",
        // a leaf-spine of 25G hosts under 100G spines, 10 m cables
        "kind = \"leaf-spine\"\nleaves = 4\nspines = 3\nhosts_per_leaf = 8\nhost_rate = \"25G\"\nfabric_rate = \"100G\"",
    ] {
        let text = format!("name = \"f\"\nduration = \"1ms\"\n[fabric]\n{keys}\n{switch}");
        let config = load_str(&text, "f.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
        let hosts: Vec<u32> = (0..config.nodes.len() as u32)
            .filter(|&i| {
                matches!(
                    config.nodes[i as usize].kind,
                    lossless_sim::config::NodeKind::Host(_)
                )
            })
            .collect();
        // within a rack, within a pod, across pods
        for (src, dst) in [
            (hosts[0], hosts[1]),
            (hosts[0], hosts[2]),
            (hosts[0], hosts[hosts.len() - 1]),
        ] {
            for size in [1u64, 1500, 100_000] {
                let flow = FlowSpec {
                    name: "lone".into(),
                    src,
                    dst,
                    priority: 3,
                    mtu: 1500,
                    pattern: Pattern::Line,
                    start: Instant::ZERO + Duration::from_us(1),
                    stop: Instant::MAX,
                    size: Some(size),
                    transport: None,
                };
                let r = run(alone(&config, &flow));
                let f = &r.flows[0];
                assert!(f.completion_ps.is_some(), "{keys}: {src}→{dst} completes");
                assert_eq!(f.completion_ps, f.fct_ideal_ps, "{keys}: {src}→{dst} {size} B");
            }
        }
    }
}
