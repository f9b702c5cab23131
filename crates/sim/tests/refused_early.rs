//! Input whose size is too large is refused from its parameters, before the structures it
//! would need are built: the bytes allocated while loading stay small, whatever the input
//! asks for (docs/limits.md: "refused before anything is allocated").

use lossless_sim::scenario::{MAX_FORWARDING_ENTRIES, MAX_SCENARIO_SIZE, Overrides, ScenarioError, load_str};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocated_bytes};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Most bytes loading a refused scenario may allocate: the text, its TOML tree and the error.
const SMALL: usize = 1 << 20;

const SWITCH: &str = "[fabric.switch]\nbuffer_bytes = 33554432\nalpha = 0.125\n";

/// Loads a `[fabric]` with `keys`; its error and the bytes the load allocated.
fn fabric(keys: &str) -> (ScenarioError, usize) {
    let text = format!("name = \"f\"\nduration = \"1us\"\n[fabric]\n{keys}\n{SWITCH}");
    let before = thread_allocated_bytes();
    let e = load_str(&text, "f.toml", None, &Overrides::default()).unwrap_err();
    (e, thread_allocated_bytes() - before)
}

#[test]
fn a_leaf_spine_of_four_million_links_is_refused_from_its_parameters() {
    let (e, bytes) = fabric(
        "kind = \"leaf-spine\"\nleaves = 2000\nspines = 2000\nhosts_per_leaf = 1\nhost_rate = \"100G\"",
    );
    assert!(bytes < SMALL, "{bytes} bytes allocated before the refusal: {e}");
    assert_eq!(e.line, 4, "{e}");
    let m = &e.message;
    assert!(
        m.contains("2000 hosts, 4000 switches and 4002000 links (8004000 ports)")
            && m.contains(&format!("at most {MAX_SCENARIO_SIZE}")),
        "{e}"
    );
}

#[test]
fn a_heavily_oversubscribed_fat_tree_of_k_128_is_refused_from_its_parameters() {
    let (e, bytes) = fabric("kind = \"fat-tree\"\nk = 128\noversubscription = 4\nhost_rate = \"100G\"");
    assert!(bytes < SMALL, "{bytes} bytes allocated before the refusal: {e}");
    assert!(
        e.message
            .contains("2097152 hosts, 20480 switches and 3145728 links"),
        "{e}"
    );
    assert!(e.message.contains(&format!("at most {MAX_SCENARIO_SIZE}")), "{e}");
    // within the element limit, the forwarding tables refuse it just as early
    let (e, bytes) = fabric("kind = \"fat-tree\"\nk = 48\nhost_rate = \"100G\"");
    assert!(bytes < SMALL, "{bytes} bytes allocated before the refusal: {e}");
    assert!(
        e.message
            .contains("2880 switches × 30528 nodes = 87920640 forwarding entries")
            && e.message.contains(&MAX_FORWARDING_ENTRIES.to_string()),
        "{e}"
    );
}

#[test]
fn a_leaf_spine_whose_host_count_does_not_fit_in_64_bits_is_refused_not_wrapped() {
    // 2^62 + 1 leaves × 16 hosts is 2^66 + 16: wrapped, it was a fabric of 16 hosts
    let (e, bytes) = fabric(&format!(
        "kind = \"leaf-spine\"\nleaves = {}\nspines = 1\nhosts_per_leaf = 16\nhost_rate = \"100G\"",
        (1u64 << 62) + 1
    ));
    assert!(bytes < SMALL, "{bytes} bytes allocated before the refusal: {e}");
    assert!(e.message.contains("more than 2^64 hosts"), "{e}");
    let (e, _) = fabric(&format!(
        "kind = \"leaf-spine\"\nleaves = {m}\nspines = {m}\nhosts_per_leaf = {m}\nhost_rate = \"100G\"",
        m = i64::MAX
    ));
    assert!(e.message.contains("more than 2^64"), "{e}");
}

#[test]
fn an_ns3_flow_file_announcing_too_many_flows_is_refused_by_count_before_any_is_read() {
    use lossless_sim::ns3::{MAX_FLOWS, parse_flows};
    let text = format!("{}\n0 1 3 100 1000 0\n", u64::from(MAX_FLOWS) + 1);
    let before = thread_allocated_bytes();
    let e = parse_flows(&text, "flow.txt").unwrap_err();
    let bytes = thread_allocated_bytes() - before;
    assert!(bytes < 4096, "{bytes} bytes allocated before the refusal: {e}");
    assert_eq!(
        (e.file.as_str(), e.line, e.what.as_str()),
        ("flow.txt", 1, "flow count")
    );
    assert!(e.message.contains(&format!("at most {MAX_FLOWS}")), "{e}");
}

#[test]
fn an_ns3_file_of_millions_of_tokens_is_read_without_holding_them() {
    use lossless_sim::ns3::{Topology, parse_flows};
    // one flow announced, then four million more tokens: refused at the first extra one
    let mut text = String::from("1\n0 1 3 100 1000 0\n");
    text.push_str(&"7 ".repeat(4_000_000));
    let before = thread_allocated_bytes();
    let e = parse_flows(&text, "flow.txt").unwrap_err();
    let bytes = thread_allocated_bytes() - before;
    assert!(bytes < SMALL, "{bytes} bytes allocated for the tokens: {e}");
    assert_eq!((e.line, e.what.as_str()), (3, "end"), "{e}");
    // a topology announcing more links than allowed, by count
    let e = Topology::parse("3 1 4294967295\n2\n", "topology.txt").unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (1, "link count"), "{e}");
}

/// 20,000 hosts on one switch, then `extra`.
fn many_hosts(extra: &str) -> Result<lossless_sim::config::SimConfig, ScenarioError> {
    let text = format!(
        "name = \"m\"\nduration = \"1ms\"\n[defaults]\nrate = \"100G\"\n[[host]]\nname = \"h\"\ncount = 20000\n\
         {extra}\n[[switch]]\nname = \"s\"\nbuffer_bytes = 1000000\n[[link]]\na = \"h*\"\nb = \"s\"\n"
    );
    load_str(&text, "m.toml", None, &Overrides::default())
}

#[test]
fn stall_spans_copied_to_every_member_of_a_group_are_bounded_before_copying() {
    let spans: Vec<String> = (0..20)
        .map(|i| format!("[\"{}us\", \"{}us\"]", 10 * i + 1, 10 * i + 2))
        .collect();
    let e = many_hosts(&format!("rx_stall = [{}]", spans.join(", "))).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (6, "key `rx_stall`: "), "{e}");
    assert!(
        e.message.contains("20 stall spans × 20000 hosts = 400000 spans")
            && e.message.contains(&format!("at most {MAX_SCENARIO_SIZE}")),
        "{e}"
    );
    many_hosts("rx_stall = [[\"1us\", \"2us\"]]").unwrap();
}

#[test]
fn static_routes_to_every_member_of_a_group_are_counted_before_they_are_made() {
    // via a second switch (a host is a next hop only towards itself), each entry at its own
    // time (one route per switch, destination and time)
    let n = MAX_SCENARIO_SIZE / 20_000 + 1;
    let routes: String = (0..n)
        .map(|i| {
            format!(
                "[[route]]\nswitch = \"s\"\ndst = \"h*\"\nvia = [\"t\"]\nat = \"{}ns\"\n",
                i + 1
            )
        })
        .collect();
    let text =
        format!("[[switch]]\nname = \"t\"\nbuffer_bytes = 1000000\n[[link]]\na = \"t\"\nb = \"s\"\n{routes}");
    let e = many_hosts(&text).unwrap_err();
    assert!(
        e.message.contains(&format!("{} static routes", n * 20_000))
            && e.message.contains(&format!("at most {MAX_SCENARIO_SIZE}")),
        "{e}"
    );
    assert_eq!(e.key, "key `dst`: ", "{e}");
}

#[test]
fn a_link_delay_beyond_one_second_is_refused_where_it_is_written() {
    // found by fuzzing (ns3_files): a topology link of 1e17 ns made the switches' headroom
    // reserves overflow 64 bits when the buffer added them up
    use lossless_sim::ns3::Topology;
    use lossless_sim::scenario::{MAX_BUFFER_BYTES, MAX_LINK_DELAY};
    let topo = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 100222222222222220ns 0\n";
    let e = Topology::parse(topo, "topology.txt").unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (4, "link delay"), "{e}");
    assert!(e.message.contains(&format!("at most {MAX_LINK_DELAY}")), "{e}");
    Topology::parse(&topo.replace("100222222222222220ns", "1s"), "topology.txt").unwrap();
    let scenario = |keys: &str| {
        format!(
            "name = \"d\"\nduration = \"1us\"\n[defaults]\nrate = \"100G\"\n{keys}\n[[host]]\nname = \"a\"\n\
             [[host]]\nname = \"b\"\n[[switch]]\nname = \"s\"\nbuffer_bytes = 1000000\n\
             [[link]]\na = \"a\"\nb = \"s\"\n[[link]]\na = \"b\"\nb = \"s\"\n"
        )
    };
    for (keys, key) in [
        ("delay = \"100000000s\"", "delay"),
        ("length_m = 9223372036854775807", "length_m"),
        ("interface_delay = \"2s\"", "interface_delay"),
    ] {
        let e = load_str(&scenario(keys), "d.toml", None, &Overrides::default()).unwrap_err();
        assert_eq!(
            (e.line, e.key.clone()),
            (5, format!("key `{key}`: ")),
            "{keys}: {e}"
        );
    }
    load_str(&scenario("delay = \"1s\""), "d.toml", None, &Overrides::default()).unwrap();
    // a switch's buffer and its headroom are bounded for the same reason
    let big = scenario("").replace(
        "buffer_bytes = 1000000",
        &format!("buffer_bytes = {}", MAX_BUFFER_BYTES + 1),
    );
    let e = load_str(&big, "d.toml", None, &Overrides::default()).unwrap_err();
    assert!(
        e.key.contains("buffer_bytes") && e.message.contains("1 TiB"),
        "{e}"
    );
    let over = scenario("").replace(
        "buffer_bytes = 1000000",
        "buffer_bytes = 1000000\nheadroom_bytes = 4611686018427387904",
    );
    let e = load_str(&over, "d.toml", None, &Overrides::default()).unwrap_err();
    assert!(
        e.key.contains("headroom_bytes") && e.message.contains("buffer_bytes 1000000"),
        "{e}"
    );
    let e = lossless_sim::ns3::Config::parse(
        "TOPOLOGY_FILE t\nFLOW_FILE f\nBUFFER_SIZE 18446744073709551615\n",
        "config.txt",
    )
    .unwrap_err();
    assert_eq!((e.line, e.what.as_str()), (3, "BUFFER_SIZE"), "{e}");
}
