//! Issue 26 and the HPCC ns-3 fork's input files: values the fork keeps differently, wraps or
//! cannot run are read as it reads them or refused, and every error names the file that holds
//! the problem, its line and its key.

use lossless_proto::units::Rate;
use lossless_sim::ns3::{Config, Ns3Error, Run, Topology, parse_flows};

/// A config of an experiment that runs (DCQCN, ECN at 100G).
const CONFIG: &str = "ENABLE_QCN 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE t.txt
FLOW_FILE f.txt
CC_MODE 1
KMAX_MAP 1 100000000000 1600
KMIN_MAP 1 100000000000 400
PMAX_MAP 1 100000000000 0.2
BUFFER_SIZE 16
SIMULATOR_STOP_TIME 0.01
";

/// Two hosts (0, 1) on switch 2, 100G, 1 µs.
const TOPOLOGY: &str = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n";

const FLOWS: &str = "1\n0 1 3 100 10000 0\n";

fn config(text: &str) -> Result<Config, Ns3Error> {
    Config::parse(text, "c.txt")
}

fn run(config_text: &str, topology: &str, flows: &str) -> Result<Run, Ns3Error> {
    Run::from_parts(config(config_text)?, (topology, "t.txt"), (flows, "f.txt"))
}

fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

#[test]
fn the_base_experiment_loads_and_converts() {
    let r = run(CONFIG, TOPOLOGY, FLOWS).unwrap();
    r.to_sim_config("c.txt").unwrap();
}

#[test]
fn kmin_or_kmax_that_the_forks_32_bits_would_wrap_is_refused_at_its_line() {
    let text = CONFIG.replace("KMAX_MAP 1 100000000000 1600", "KMAX_MAP 1 100000000000 4294968");
    let e = config(&text).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("c.txt", 6, "KMAX_MAP"),
        "{e}"
    );
    assert!(
        e.message.contains("4294968 KB") && e.message.contains("0..=4294967") && e.message.contains("wraps"),
        "{e}"
    );
    // u64 × 1000 wrapped here before: the largest u64 is refused the same way
    let text = CONFIG.replace(
        "KMIN_MAP 1 100000000000 400",
        "KMIN_MAP 1 100000000000 18446744073709551615",
    );
    assert_eq!(config(&text).unwrap_err().what, "KMIN_MAP");
    let c = config(&CONFIG.replace("1600", "4294967")).unwrap();
    assert_eq!(c.kmax_kb[0].1, 4_294_967);
}

#[test]
fn a_rate_given_twice_or_a_key_on_two_lines_keeps_the_last_value_as_the_fork_does() {
    // third.cc: `rate2kmax[rate] = k` for every pair, and a later line's value replaces
    let text = CONFIG.replace(
        "KMAX_MAP 1 100000000000 1600",
        "KMAX_MAP 2 100000000000 1600 100000000000 2000",
    );
    let c = config(&text).unwrap();
    assert_eq!(c.kmax_kb, vec![(Rate::from_gbps(100), 2000)]);
    let text = format!("{CONFIG}KMAX_MAP 1 100000000000 3000\nPMAX_MAP 1 100000000000 0.5\n");
    let c = config(&text).unwrap();
    assert_eq!(c.kmax_kb, vec![(Rate::from_gbps(100), 3000)]);
    assert_eq!(c.pmax, vec![(Rate::from_gbps(100), 0.5)]);
    assert_eq!(c.map_line("KMAX_MAP", Rate::from_gbps(100)), 11);
    // a scalar key given twice: its last value and its last line
    let text = format!("{CONFIG}TOPOLOGY_FILE other.txt\n");
    let c = config(&text).unwrap();
    assert_eq!(
        (c.topology_file.as_str(), c.line_of("TOPOLOGY_FILE")),
        ("other.txt", 11)
    );
}

#[test]
fn pmax_and_kmin_errors_name_their_own_key_and_line() {
    // PMAX_MAP 1.5 was reported as KMIN_MAP at line 0
    let text = CONFIG.replace("0.2", "1.5");
    let e = config(&text).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (8, "PMAX_MAP"), "{e}");
    assert!(
        e.message.contains("found 1.5") && e.message.contains("0..=1"),
        "{e}"
    );
    let text = CONFIG.replace("KMIN_MAP 1 100000000000 400", "KMIN_MAP 1 100000000000 2000");
    let e = config(&text).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (7, "KMIN_MAP"), "{e}");
    assert!(e.message.contains("Kmax 1600 KB (KMAX_MAP, line 6)"), "{e}");
}

#[test]
fn a_payload_size_a_stop_time_of_zero_and_a_buffer_that_wraps_are_refused_at_their_lines() {
    let e = config(&CONFIG.replace("PACKET_PAYLOAD_SIZE 1000", "PACKET_PAYLOAD_SIZE 9000")).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (2, "PACKET_PAYLOAD_SIZE"), "{e}");
    let e = config(&CONFIG.replace("SIMULATOR_STOP_TIME 0.01", "SIMULATOR_STOP_TIME 0")).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (10, "SIMULATOR_STOP_TIME"), "{e}");
    assert!(e.message.contains("positive"), "{e}");
    let e = config(&CONFIG.replace("BUFFER_SIZE 16", "BUFFER_SIZE 4096")).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (9, "BUFFER_SIZE"), "{e}");
    assert!(e.message.contains("1..=4095"), "{e}");
}

#[test]
fn link_rates_outside_ethernets_range_and_hosts_without_one_link_are_refused_in_the_topology() {
    for rate in ["1Mbps", "2Tbps"] {
        let e = Topology::parse(&TOPOLOGY.replacen("100Gbps", rate, 1), "t.txt").unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.what.as_str()),
            ("t.txt", 3, "link rate"),
            "{e}"
        );
        assert!(e.message.contains("10Mbps … 1.6Tbps"), "{e}");
    }
    // host 0 with a second link (to host 1): the simulator builds one NIC port per host
    let e = Topology::parse(
        "3 1 3\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n0 1 100Gbps 1us 0\n",
        "t.txt",
    )
    .unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (5, "link end"), "{e}");
    assert!(
        e.message.contains("host 0") && e.message.contains("line 3"),
        "{e}"
    );
    let e = Topology::parse("3 1 1\n2\n0 2 100Gbps 1us 0\n", "t.txt").unwrap_err();
    assert!(
        e.message.contains("host 1") && e.message.contains("no link"),
        "{e}"
    );
}

#[test]
fn a_flow_of_zero_bytes_or_between_unlinked_hosts_is_refused_at_its_line_in_the_flow_file() {
    let e = parse_flows("2\n0 1 3 100 1000 0\n0 1 3 100 0 0\n", "f.txt").unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("f.txt", 3, "size"),
        "{e}"
    );
    // two switches, not linked
    let topo = "4 2 2\n2 3\n0 2 100Gbps 1us 0\n1 3 100Gbps 1us 0\n";
    let e = run(CONFIG, topo, FLOWS).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("f.txt", 2, "dst"),
        "{e}"
    );
    assert!(
        e.message.contains("no path from host 0 to host 1 in t.txt"),
        "{e}"
    );
}

#[test]
fn dcqcn_errors_name_the_config_key_not_the_engines_field() {
    // a minimum rate above the senders' 100G line rate: MIN_RATE, not rpg_min_rate
    let text = format!("{CONFIG}MIN_RATE 200Gb/s\n");
    let e = run(&text, TOPOLOGY, FLOWS).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("c.txt", 11, "MIN_RATE"),
        "{e}"
    );
    assert!(!e.to_string().contains("rpg_"), "{e}");
    assert!(
        e.message.contains("line rate 100G of host 0") && e.message.contains("t.txt:3"),
        "{e}"
    );
    let text = format!("{CONFIG}RP_TIMER 0\n");
    let e = run(&text, TOPOLOGY, FLOWS).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (11, "RP_TIMER"), "{e}");
    assert!(!e.to_string().contains("rpg_time_reset"), "{e}");
    let text = format!("{CONFIG}ALPHA_RESUME_INTERVAL 0\n");
    let e = run(&text, TOPOLOGY, FLOWS).unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (11, "ALPHA_RESUME_INTERVAL"), "{e}");
}

#[test]
fn topology_problems_are_named_in_the_topology_and_config_problems_at_their_key() {
    // a 25G link: the ECN maps have no entry for it; the config key's line, the link's place
    let topo = TOPOLOGY.replace("1 2 100Gbps", "1 2 25Gbps");
    let e = run(CONFIG, &topo, FLOWS).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("c.txt", line_of(CONFIG, "KMIN_MAP"), "KMIN_MAP"),
        "{e}"
    );
    assert!(e.message.contains("25G") && e.message.contains("t.txt:4"), "{e}");
    // a 100 ms link: 3 × 100G × 100 ms of headroom per port and priority do not fit 16 MiB
    let topo = TOPOLOGY.replace("0 2 100Gbps 1000ns", "0 2 100Gbps 100ms");
    let e = run(CONFIG, &topo, FLOWS).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("c.txt", line_of(CONFIG, "BUFFER_SIZE"), "BUFFER_SIZE"),
        "{e}"
    );
    assert!(
        e.message.contains("switch 2") && e.message.contains("t.txt:3"),
        "{e}"
    );
    // a link longer than a second
    let e = Topology::parse(&TOPOLOGY.replace("1000ns", "2s"), "t.txt").unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (3, "link delay"), "{e}");
}

#[test]
fn the_window_is_the_forks_max_bdp_printed_as_max_rtt_and_max_bdp() {
    // MODEL.md §9.3: 4,160 ns and 52,000 B with one 100 G switch; 12,480 ns and 156,000 B in
    // the k = 4 fat tree
    let t = Topology::parse(TOPOLOGY, "t.txt").unwrap();
    let b = t.pair_bdps(1000, &[(0, 1)]);
    assert_eq!((b.max_rtt_ns, b.max, b.of(0, 1)), (4_160, 52_000, 52_000));
    let mut ft = String::from("36 20 48\n");
    ft += &(16..36).map(|s| s.to_string()).collect::<Vec<_>>().join(" ");
    ft += "\n";
    let mut link = |a: u32, b: u32| ft += &format!("{a} {b} 100Gbps 1000ns 0\n");
    for h in 0..16 {
        link(h, 16 + h / 2);
    }
    for p in 0..4 {
        for e in 0..2 {
            for j in 0..2 {
                link(16 + 2 * p + e, 24 + 2 * p + j);
            }
        }
        for j in 0..2 {
            for c in 0..2 {
                link(24 + 2 * p + j, 32 + 2 * j + c);
            }
        }
    }
    let t = Topology::parse(&ft, "ft.txt").unwrap();
    let b = t.pair_bdps(1000, &[(0, 1), (0, 15)]);
    assert_eq!((b.max_rtt_ns, b.max), (12_480, 156_000));
    // GLOBAL_T 0 would give a pair on one edge switch its own: 2 hops
    assert_eq!((b.of(0, 1), b.of(0, 15)), (52_000, 156_000));
}

#[test]
fn dctcp_runs_with_its_window_and_its_keys_named_when_wrong() {
    let dctcp = CONFIG.replace("CC_MODE 1", "CC_MODE 8\nEWMA_GAIN 0.0625\nDCTCP_RATE_AI 615Mb/s\nMIN_RATE 1000Mb/s\nHAS_WIN 1\nVAR_WIN 1\nGLOBAL_T 1\nRP_TIMER 300");
    let r = run(&dctcp, TOPOLOGY, FLOWS).unwrap();
    let p = r.dctcp_params();
    assert_eq!(
        (p.g, p.rate_ai, p.min_rate, p.mtu),
        (0.0625, Rate::from_mbps(615), Rate::from_mbps(1000), 1000)
    );
    let sim = r.to_sim_config("t").unwrap();
    let qp = sim.flows[0].transport.as_ref().unwrap();
    assert_eq!(qp.cc.name(), "dctcp");
    assert_eq!((qp.window.bytes, qp.window.variable), (52_000, true));
    // the DCQCN keys are read and said to have no effect; DCTCP_RATE_AI is used
    let keys: Vec<&str> = r.config.ignored.iter().map(|k| k.key.as_str()).collect();
    assert!(
        keys.contains(&"RP_TIMER") && !keys.contains(&"DCTCP_RATE_AI"),
        "{keys:?}"
    );
    // EWMA_GAIN need not be a multiple of 1/1024 for DCTCP, but must be for DCQCN
    assert!(config(&dctcp.replace("EWMA_GAIN 0.0625", "EWMA_GAIN 0.3")).is_ok());
    let e = config(&CONFIG.replace("CC_MODE 1", "CC_MODE 1\nEWMA_GAIN 0.3")).unwrap_err();
    assert_eq!((e.what.as_str(), e.line), ("EWMA_GAIN", 6));
    let e = run(
        &dctcp.replace("MIN_RATE 1000Mb/s", "MIN_RATE 200Gb/s"),
        TOPOLOGY,
        FLOWS,
    )
    .unwrap_err();
    assert_eq!(e.what, "MIN_RATE");
    assert!(e.message.contains("line rate"), "{e}");
    // a DCQCN run keeps no window with HAS_WIN 0
    let r = run(
        &CONFIG.replace("CC_MODE 1", "CC_MODE 1\nHAS_WIN 0"),
        TOPOLOGY,
        FLOWS,
    )
    .unwrap();
    let sim = r.to_sim_config("t").unwrap();
    assert_eq!(sim.flows[0].transport.as_ref().unwrap().window.bytes, 0);
    // HPCC-PINT (10), refused here before it was modelled, is read as such
    let c = config(&CONFIG.replace("CC_MODE 1", "CC_MODE 10")).expect("CC_MODE 10 is modelled");
    assert_eq!(c.cc_mode, 10);
}
