//! Issue 14's scenario keys refuse bad values with the file, line, key, what was found and
//! what is allowed.

#[macro_use]
mod common;

use lossless_sim::Simulator;
use lossless_sim::scenario::{Overrides, load_str};

/// Hosts h1, h2 on s1; s1 – s2; h3 on s2; 10 Gb/s, PFC on priority 3.
const BASE: &str = two_switches!("10ms");

/// The error for `BASE` with `extra` spliced in after line `after` (0: appended), and the
/// line the first extra line lands on.
fn error(extra: &str, after: Option<&str>) -> (String, usize) {
    let text = match after {
        None => format!("{BASE}{extra}"),
        Some(a) => BASE.replacen(a, &format!("{a}\n{extra}"), 1),
    };
    let line = text
        .lines()
        .position(|l| l == extra.lines().next().unwrap())
        .unwrap()
        + 1;
    let e = load_str(&text, "bad.toml", None, &Overrides::default()).expect_err("refused");
    (e.to_string(), line)
}

fn check(extra: &str, after: Option<&str>, wants: &[&str]) {
    let (e, line) = error(extra, after);
    assert!(e.starts_with("bad.toml:"), "{e}");
    for w in wants {
        assert!(e.contains(w), "missing {w:?} in: {e}");
    }
    // the line is one of the spliced entries' lines
    let at: usize = e["bad.toml:".len()..].split(':').next().unwrap().parse().unwrap();
    assert!(
        at >= line && at < line + extra.lines().count(),
        "line {at}, entries from {line}: {e}"
    );
}

#[test]
fn a_stall_that_ends_before_it_starts_or_overlaps_is_refused() {
    check(
        "rx_stall = [[\"2ms\", \"1ms\"]]",
        Some("name = \"h1\""),
        &["rx_stall", "end 1 ms", "start 2 ms", "allowed"],
    );
    check(
        "rx_stall = [[\"1ms\", \"forever\"], [\"5ms\", \"6ms\"]]",
        Some("name = \"h1\""),
        &["rx_stall", "overlaps", "allowed stalls in time order"],
    );
    check(
        "rx_stall = [[\"1ms\", \"soon\"]]",
        Some("name = \"h1\""),
        &["rx_stall", "\"soon\"", "forever"],
    );
}

#[test]
fn storm_prevention_outside_mlx5s_range_is_refused() {
    check(
        "pfc_prevention_tout = \"50ms\"",
        Some("name = \"h1\""),
        &["pfc_prevention_tout", "50 ms", "80 ms ..= 8000 ms", "auto"],
    );
}

#[test]
fn pfcwd_settings_sonic_would_refuse_are_refused() {
    check(
        "[pfcwd]\ndetection = \"50ms\"",
        None,
        &["pfcwd", "detection 50 ms", "100 ms ..= 5000 ms"],
    );
    check(
        "[pfcwd]\ndetection = \"300ms\"\npoll = \"400ms\"",
        None,
        &["poll 400 ms is longer than the detection time"],
    );
    check(
        "[pfcwd]\naction = \"reboot\"",
        None,
        &["action", "\"reboot\"", "\"drop\", \"forward\" or \"alert\""],
    );
    check(
        "[pfcwd]\nrule = \"cisco\"",
        None,
        &["rule", "\"cisco\"", "\"broadcom\""],
    );
    check(
        "pfcwd = { detection = \"200ms\", bogus = 1 }",
        Some("name = \"s1\""),
        &["pfcwd", "bogus", "allowed keys detection"],
    );
    check(
        "pfcwd = 3",
        Some("name = \"s1\""),
        &["pfcwd", "found 3", "true, false or a table"],
    );
    check(
        "[[event]]\nat = \"1ms\"\nbig_red_switch = \"on\"",
        None,
        &["big_red_switch", "no switch runs pfcwd"],
    );
}

#[test]
fn routes_must_lead_from_a_switch_through_a_neighbour_to_a_host() {
    check(
        "[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s2\"]\n[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"s9\"]",
        None,
        &["via", "\"s9\"", "allowed a node name"],
    );
    check(
        "[[route]]\nswitch = \"s2\"\ndst = \"h1\"\nvia = [\"s1\"]\nat = \"1ms\"\n[[route]]\nswitch = \"h1\"\ndst = \"h3\"\nvia = [\"s1\"]",
        None,
        &["switch", "\"h1\", a host", "allowed a switch"],
    );
    check(
        "[[route]]\nswitch = \"s1\"\ndst = \"s2\"\nvia = [\"s2\"]",
        None,
        &["dst", "\"s2\", a switch", "allowed a host"],
    );
    check(
        "[[route]]\nswitch = \"s1\"\ndst = \"h3\"\nvia = [\"h3\"]",
        None,
        &["via", "\"h3\", not linked to \"s1\"", "neighbour"],
    );
}

#[test]
fn an_event_needs_exactly_one_action_on_a_real_link_before_the_end() {
    check(
        "[[event]]\nat = \"1ms\"\nlink_down = [\"s1\", \"s2\"]\nbig_red_switch = \"on\"",
        None,
        &["2 actions", "exactly one of link_down, link_up, big_red_switch"],
    );
    check(
        "[[event]]\nat = \"1ms\"\nlink_down = [\"h1\", \"s2\"]",
        None,
        &["link_down", "not linked", "the ends of a [[link]]"],
    );
    check(
        "[[event]]\nat = \"1ms\"\nlink_up = [\"s1\"]",
        None,
        &["link_up", "found 1 names", "two"],
    );
    check(
        "[[event]]\nat = \"20ms\"\nlink_down = [\"s1\", \"s2\"]",
        None,
        &["at", "20 ms", "before the end of the run"],
    );
}

#[test]
fn every_timer_period_of_a_scenario_has_a_floor_of_one_microsecond() {
    // 1 ps turned a 1 ms run into half an hour of deadlock scans
    for bad in ["1ps", "999ns", "0ps"] {
        check(
            &format!("[deadlock]\ninterval = \"{bad}\""),
            None,
            &["key `interval`", "allowed at least 1 µs"],
        );
    }
    let ok = format!("{BASE}[deadlock]\ninterval = \"1us\"\nthreshold = \"1us\"");
    load_str(&ok, "ok.toml", None, &Overrides::default()).unwrap();
    // the engines' periods: a QP's DCQCN timers and its retransmission timeout
    let qp = |keys: &str| {
        format!(
            "{BASE}[[flow]]\nname = \"q\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\ntransport = \"rocev2\"\n{keys}\n"
        )
    };
    for (keys, field) in [
        ("dcqcn = { dce_tcp_rtt = \"1ps\" }", "dce_tcp_rtt"),
        ("dcqcn = { rpg_time_reset = \"500ns\" }", "rpg_time_reset"),
        (
            "dcqcn = { rate_reduce_monitor_period = \"1ns\" }",
            "rate_reduce_monitor_period",
        ),
        ("rocev2 = { preset = \"perftest\", rto = \"1ns\" }", "rto"),
    ] {
        let e = load_str(&qp(keys), "qp.toml", None, &Overrides::default())
            .err()
            .map(|e| e.to_string())
            .or_else(|| {
                // an engine's own check may come when the simulator is built
                let c = load_str(&qp(keys), "qp.toml", None, &Overrides::default()).unwrap();
                Simulator::new(c).err().map(|e| format!("{e:#}"))
            })
            .unwrap_or_else(|| panic!("{keys}: accepted"));
        assert!(e.contains(field) && e.contains("1 µs"), "{keys}: {e}");
    }
    load_str(
        &qp("dcqcn = { dce_tcp_rtt = \"1us\" }"),
        "qp.toml",
        None,
        &Overrides::default(),
    )
    .unwrap();
}

#[test]
fn detector_hop_limit_and_victim_settings_are_checked() {
    check(
        "hop_limit = 0",
        Some("duration = \"10ms\""),
        &["hop_limit", "found 0", "1..=255"],
    );
    check(
        "[deadlock]\ninterval = \"1ms\"\nthreshold = \"100us\"",
        None,
        &["threshold", "below the scan interval", "at least one interval"],
    );
    check(
        "[deadlock]\non_deadlock = \"panic\"",
        None,
        &["on_deadlock", "\"stop\" or \"continue\""],
    );
    check(
        "[victims]\nmin_blocked_ratio = 2.0",
        None,
        &["min_blocked_ratio", "found 2", "0 < ratio ≤ 1"],
    );
    check(
        "[victims]\nmin_blocked = 0.1",
        None,
        &["min_blocked", "min_blocked_ratio"],
    );
}

#[test]
fn pfcwd_on_a_switch_with_dcbx_ports_is_refused_when_the_scenario_loads() {
    // it was a build error without file, line or key; now the [pfcwd] table is named
    let text = BASE.replace("[defaults]\n", "[defaults]\ndcbx = true\n") + "[pfcwd]\n";
    let e = load_str(&text, "dcbx.toml", None, &Overrides::default())
        .expect_err("refused")
        .to_string();
    let line = text.lines().position(|l| l == "[pfcwd]").unwrap() + 1;
    assert!(
        e.starts_with(&format!("dcbx.toml:{line}: key `pfcwd`: switch \"s1\"")) && e.contains("DCBX"),
        "{e}"
    );
    // the switches opted out: it loads and builds
    let text = text.replace(
        "buffer_bytes = 1_000_000\n",
        "buffer_bytes = 1_000_000\npfcwd = false\n",
    );
    let c = load_str(&text, "dcbx.toml", None, &Overrides::default()).expect("loads");
    Simulator::new(c).expect("builds");
}
