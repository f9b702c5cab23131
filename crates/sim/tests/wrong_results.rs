//! Issue 26, "wrong results that look right": inputs that ran to a result nobody should trust
//! are refused when they load (naming file, line, key, what was found and what is allowed), and
//! what the checks cannot see at load is caught by the run's own checks.

#[macro_use]
mod common;

use lossless_sim::config::SimConfig;
use lossless_sim::scenario::{Overrides, ScenarioError, load_str};
use lossless_sim::{Report, Simulator};

/// Hosts h1, h2 on s1; s1 – s2; h3 on s2; 10 Gb/s, PFC on priority 3.
const BASE: &str = two_switches!("200us");

fn load(text: &str) -> Result<SimConfig, ScenarioError> {
    load_str(text, "t.toml", None, &Overrides::default())
}

/// The error of `text`, which must be refused.
fn refused(text: &str) -> ScenarioError {
    match load(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// The 1-based line of the `n`-th (0-based) line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str, n: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with(prefix))
        .nth(n)
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no line {prefix:?}"))
}

fn assert_has(e: &ScenarioError, parts: &[&str]) {
    let s = e.to_string();
    for p in parts {
        assert!(s.contains(p), "{p:?} missing in: {s}");
    }
}

fn run(c: SimConfig) -> Report {
    let mut sim = Simulator::new(c).expect("builds");
    sim.run();
    Report::collect(&sim)
}

// ---------- static routes through hosts ----------

#[test]
fn a_route_whose_next_hop_is_a_host_other_than_its_destination_is_refused() {
    // h2 is a neighbour of s1, but frames for h3 sent to it would be "delivered" to h2
    let text = format!("{BASE}[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"h2\"]\n");
    let e = refused(&text);
    assert_eq!(e.line, line_of(&text, "via", 0), "{e}");
    assert_has(
        &e,
        &["key `via`", "\"h2\"", "towards \"h3\"", "hosts do not forward"],
    );
    // a group destination: g1 is the next hop of g1's route, not of g2's
    let text = "name = \"g\"\nduration = \"10us\"\n[defaults]\nrate = \"10G\"\n[[host]]\nname = \"g\"\ncount = 2\n\
                [[switch]]\nname = \"s\"\nbuffer_bytes = 1_000_000\n[[link]]\na = \"g*\"\nb = \"s\"\n\
                [[route]]\nswitch = \"s\"\ndst = \"g*\"\nvia = [\"g1\"]\n";
    assert_has(&refused(text), &["\"g1\" as next hop towards \"g2\""]);
    let text = format!("{BASE}[[route]]\nswitch = \"s1\"\ndst = \"h1\"\nvia = [\"h1\"]\n");
    load(&text).expect("a host is the next hop of the route to itself");
}

#[test]
fn frames_delivered_to_a_host_other_than_their_destination_fail_the_conservation_check() {
    // the loader refuses such a route; a configuration built otherwise still cannot pass
    let text = format!(
        "{BASE}[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s2\"]\n[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nsize_bytes = 15000\n"
    );
    let mut c = load(&text).unwrap();
    let h2 = c.nodes.iter().position(|n| n.name == "h2").unwrap() as u32;
    c.pathology.routes[0].via = vec![h2];
    let r = run(c);
    let f = r.flow("f").unwrap();
    assert_eq!(f.delivered_frames, 0, "{f:?}");
    assert_eq!(f.completion_ps, None, "{f:?}");
    assert_eq!(r.conservation.misdelivered_frames, 10, "{:?}", r.conservation);
    assert!(!r.conservation.balanced);
    let e = r.check().unwrap_err().to_string();
    assert!(
        e.contains("10 of the delivered frames reached a host other than their destination"),
        "{e}"
    );
    assert!(
        r.summary()
            .contains("reached a host other than their destination")
    );
    let json = serde_json::to_value(&r.conservation).unwrap();
    assert_eq!(json["misdelivered_frames"], 10);
}

#[test]
fn a_correct_run_writes_no_misdelivered_key() {
    let text = format!(
        "{BASE}[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nsize_bytes = 15000\n"
    );
    let r = run(load(&text).unwrap());
    r.check().unwrap();
    let json = serde_json::to_value(&r.conservation).unwrap();
    assert!(json.get("misdelivered_frames").is_none(), "{json}");
}

// ---------- the silently accepted ----------

#[test]
fn two_routes_for_one_switch_destination_and_time_are_refused() {
    let text = format!(
        "{BASE}[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s2\"]\n[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s2\"]\n"
    );
    let e = refused(&text);
    assert_eq!(e.line, line_of(&text, "dst = \"h3\"", 1), "{e}");
    assert_has(&e, &["second route", "\"s1\"", "\"h3\"", "one route per switch"]);
    // at another time it is a change of route, which is allowed
    let text = format!(
        "{BASE}[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s2\"]\n[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s2\"]\nat = \"10us\"\n"
    );
    load(&text).expect("a route installed later");
}

#[test]
fn two_flows_or_workloads_with_one_name_are_refused() {
    let flow =
        |name: &str| format!("[[flow]]\nname = \"{name}\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\n");
    let text = format!("{BASE}{}{}", flow("f"), flow("f"));
    let e = refused(&text);
    assert_eq!(e.line, line_of(&text, "name = \"f\"", 1), "{e}");
    assert_has(&e, &["key `name`", "\"f\" a second time", "line"]);
    // a group's generated name colliding with a given one
    let text = format!(
        "{BASE}[[flow]]\nname = \"g\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\n[[flow]]\nname = \"g:h2\"\nsrc = \"h2\"\ndst = \"h3\"\npriority = 3\n[[flow]]\nname = \"g\"\nsrc = \"h*\"\ndst = \"h3\"\npriority = 3\n"
    );
    assert_has(&refused(&text), &["\"g\" a second time"]);
}

#[test]
fn a_priority_listed_twice_in_pfc_priorities_is_refused() {
    let text = BASE.replace("pfc_priorities = [3]", "pfc_priorities = [3, 3]");
    let e = refused(&text);
    assert_eq!(e.line, line_of(&text, "pfc_priorities", 0), "{e}");
    assert_has(&e, &["pfc_priorities", "priority 3 twice", "each priority once"]);
}

#[test]
fn an_alpha_the_buffer_cannot_hold_exactly_is_refused_not_rounded() {
    for alpha in ["1e-300", "0.3", "0.0001"] {
        let text = BASE.replacen(
            "buffer_bytes = 1_000_000",
            &format!("buffer_bytes = 1_000_000\nalpha = {alpha}"),
            1,
        );
        let e = refused(&text);
        assert_has(&e, &["alpha", "multiple of 1/1024"]);
    }
    let text = BASE.replacen(
        "buffer_bytes = 1_000_000",
        "buffer_bytes = 1_000_000\nalpha = 0.0009765625",
        1,
    );
    load(&text).expect("1/1024 is exact");
}

#[test]
fn overlapping_or_touching_fc_rdy_spans_and_spans_after_the_end_are_refused() {
    let signal = |spans: &str| format!("[[signal]]\nhost = \"h1\"\npriority = 3\nfc_rdy = {spans}\n");
    // in one entry
    let text = format!("{BASE}{}", signal("[[\"10us\", \"50us\"], [\"40us\", \"60us\"]]"));
    assert_has(
        &refused(&text),
        &["fc_rdy", "overlaps or touches", "h1", "priority 3"],
    );
    // across entries, touching: the fall and the rise at 50 µs would run in entry order
    let text = format!(
        "{BASE}{}{}",
        signal("[[\"50us\", \"60us\"]]"),
        signal("[[\"10us\", \"50us\"]]")
    );
    let e = refused(&text);
    assert_eq!(e.line, line_of(&text, "fc_rdy", 0), "{e}");
    assert_has(&e, &["overlaps or touches", "(line"]);
    // a rise at or after the end of the run never happens
    let text = format!("{BASE}{}", signal("[[\"200us\", \"300us\"]]"));
    assert_has(&refused(&text), &["fc_rdy", "rise at 200 µs", "end of the run"]);
    // other priorities, other hosts and spans with a gap are fine
    let text = format!(
        "{BASE}{}{}",
        signal("[[\"10us\", \"50us\"], [\"51us\", \"60us\"]]"),
        "[[signal]]\nhost = \"h2\"\npriority = 3\nfc_rdy = [[\"10us\", \"50us\"]]\n"
    );
    load(&text).expect("separate spans");
}

#[test]
fn siblings_a_value_given_twice_is_refused_wherever_a_list_or_map_takes_it() {
    // an idle slope for one TC under two spellings
    let text = BASE.replace(
        "pfc_priorities = [3]",
        "pfc_priorities = [3]\nets_tsa = [\"strict\", \"strict\", \"strict\", \"strict\", \"cbs\", \"strict\", \"strict\", \"strict\"]\nets_idle_slope = { 4 = \"1G\", 04 = \"2G\" }",
    );
    assert_has(
        &refused(&text),
        &["ets_idle_slope", "traffic class 4 a second time"],
    );
    // a DCBX PFC priority twice
    let text = BASE.replace("pfc_priorities = [3]", "dcbx = true").replacen(
        "name = \"s1\"",
        "name = \"s1\"\ndcbx = { pfc = { enable = [3, 3] } }",
        1,
    );
    assert_has(&refused(&text), &["pfc.enable", "priority 3 a second time"]);
    // an ECN rate twice
    let text = format!(
        "{BASE}[ecn]\nby_rate = [{{ rate = \"10G\", kmin_bytes = 1000, kmax_bytes = 2000, pmax = 0.1 }}, {{ rate = \"10G\", kmin_bytes = 5000, kmax_bytes = 9000, pmax = 0.1 }}]\n"
    );
    assert_has(&refused(&text), &["by_rate", "rate 10G a second time"]);
    // a workload host twice
    let dir = lossless_testkit::temp_dir("wrong-results-workload");
    std::fs::write(dir.join("cdf.txt"), "1000 100\n").unwrap();
    let text = format!(
        "{BASE}[[workload]]\nname = \"w\"\nsrc = [\"h1\", \"h1\"]\ndst = [\"h3\"]\npriority = 3\ncdf_file = \"cdf.txt\"\nload = 0.1\n"
    );
    let e = load_str(&text, "t.toml", Some(&dir), &Overrides::default()).unwrap_err();
    assert_has(&e, &["key `src`", "host \"h1\" is in the list twice"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------- flows cut by `stop` ----------

#[test]
fn a_plain_flow_cut_by_its_stop_before_its_size_is_unfinished_not_completed() {
    // 1 MB at 10 Gb/s takes 800 µs; the flow stops sending at 10 µs
    let flow = |extra: &str| {
        format!(
            "{BASE}[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nsize_bytes = 1_000_000\nstop = \"10us\"\n{extra}"
        )
    };
    let r = run(load(&flow("")).unwrap());
    r.check().unwrap();
    let f = r.flow("f").unwrap();
    assert!(f.delivered_frames > 0 && f.delivered_bytes < 1_000_000, "{f:?}");
    assert_eq!((f.completion_ps, f.fct_slowdown_ratio), (None, None), "{f:?}");
    assert!(f.fct_ideal_ps.is_some());
    assert_eq!(r.fct.flows_unfinished_total, 1);
    assert_eq!(r.fct.all, None);
    // the same as a RoCEv2 QP: not completed either
    let r = run(load(&flow("transport = \"rocev2\"\ncc = \"none\"\n")).unwrap());
    let f = r.flow("f").unwrap();
    assert_eq!(f.completion_ps, None, "{f:?}");
    assert_eq!(r.fct.flows_unfinished_total, 1);
    // one that fits before its stop completes
    let text = flow("").replace("size_bytes = 1_000_000", "size_bytes = 3_000");
    let r = run(load(&text).unwrap());
    assert!(r.flow("f").unwrap().completion_ps.is_some());
}

#[test]
fn an_endless_flow_that_stops_reports_no_completion_time() {
    let text =
        format!("{BASE}[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nstop = \"10us\"\n");
    let r = run(load(&text).unwrap());
    let f = r.flow("f").unwrap();
    assert!(f.delivered_frames > 0);
    assert_eq!(f.completion_ps, None, "{f:?}");
}

// ---------- the MTU means something ----------

#[test]
fn a_flow_whose_frames_exceed_a_switch_mtu_on_its_way_is_refused() {
    // jumbo flows through switches left at 1500: the headroom was sized for 1522-byte frames
    let text =
        format!("{BASE}[[flow]]\nname = \"jumbo\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nmtu = 9216\n")
            .replace("rate = \"10G\"", "rate = \"10G\"\nmtu = 9216")
            .replacen(
                "buffer_bytes = 1_000_000",
                "buffer_bytes = 1_000_000\nmtu = 1500",
                1,
            );
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "mtu = 9216", 1), "key `mtu`: "),
        "{e}"
    );
    assert_has(
        &e,
        &[
            "flow \"jumbo\"",
            "frames of 9238 bytes",
            "switch \"s1\"",
            "mtu is 1500",
        ],
    );
    // the switch raised to the flows' MTU: loads
    let ok = text.replace("mtu = 1500", "mtu = 9216");
    load(&ok).expect("every mtu on the way fits");
}

#[test]
fn a_links_mtu_is_no_longer_ignored() {
    // the link h3 – s2 carries 1500-byte payloads: a 9000-byte flow to h3 is refused
    let text = BASE
        .replace("rate = \"10G\"", "rate = \"10G\"\nmtu = 9000")
        .replace("a = \"h3\"\nb = \"s2\"", "a = \"h3\"\nb = \"s2\"\nmtu = 1500")
        + "[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\n";
    let e = refused(&text);
    assert_has(
        &e,
        &[
            "flow \"f\"",
            "frames of 9022 bytes",
            "the link h3 – s2",
            "mtu is 1500",
        ],
    );
    // a switch-to-switch link too
    let text = BASE
        .replace("rate = \"10G\"", "rate = \"10G\"\nmtu = 9000")
        .replace("a = \"s1\"\nb = \"s2\"", "a = \"s1\"\nb = \"s2\"\nmtu = 4000")
        + "[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h2\"\npriority = 3\n";
    assert_has(&refused(&text), &["the link s1 – s2", "mtu is 4000"]);
    // no mtu anywhere: links and switches carry 1500, and a 1500 flow fits
    let text =
        format!("{BASE}[[flow]]\nname = \"f\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nmtu = 1501\n");
    assert_has(&refused(&text), &["frames of 1523 bytes", "mtu is 1500"]);
}

#[test]
fn a_qps_frames_are_checked_with_their_headers() {
    // RoCEv2 mtu 4096: 4162-byte frames do not fit a 1500 fabric; 1024 does
    let qp = |mtu: u32| {
        format!(
            "{BASE}[[flow]]\nname = \"q\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nsize_bytes = 100000\ntransport = \"rocev2\"\ncc = \"none\"\nrocev2 = {{ mtu = {mtu} }}\n"
        )
    };
    let e = refused(&qp(4096));
    assert_has(&e, &["key `rocev2`", "RoCEv2 mtu of 4096", "mtu is 1500"]);
    load(&qp(1024)).expect("fits");
}
