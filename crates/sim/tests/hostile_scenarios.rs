//! Hostile scenario files (issue 12): every one is refused when it loads, with the file, the
//! line of the key at fault, what was found and what is allowed; nothing hangs, reads without
//! bound or runs forever.

use lossless_proto::units::Duration;
use lossless_sim::scenario::{MAX_SCENARIO_SIZE, Overrides, ScenarioError, load_str};
use lossless_testkit::temp_dir;

/// Two hosts on one switch at 10 Gb/s, and a flow between them; `extra` is appended.
fn base(extra: &str) -> String {
    format!(
        r#"name = "t"
duration = "2us"
[defaults]
rate = "10G"
mtu = 1500
[[host]]
name = "a"
[[host]]
name = "b"
[[switch]]
name = "s"
buffer_bytes = 1000000
[[link]]
a = "a"
b = "s"
[[link]]
a = "b"
b = "s"
{extra}"#
    )
}

const FLOW: &str = "[[flow]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\npriority = 0\n";

fn load(text: &str) -> Result<lossless_sim::config::SimConfig, ScenarioError> {
    load_str(text, "t.toml", None, &Overrides::default())
}

fn err(text: &str) -> ScenarioError {
    match load(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// The 1-based line of the first line of `text` that starts with `prefix` after line `after`.
fn line_of(text: &str, prefix: &str, after: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(after)
        .find(|(_, l)| l.starts_with(prefix))
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no line {prefix:?}"))
}

fn assert_has(e: &ScenarioError, parts: &[&str]) {
    let s = e.to_string();
    for p in parts {
        assert!(s.contains(p), "{p:?} missing in: {s}");
    }
}

// ---------- item 5: cdf_file reads ----------

fn workload(cdf: &str) -> String {
    base(&format!(
        "[[workload]]\nname = \"w\"\nsrc = [\"a\"]\ndst = [\"b\"]\npriority = 0\ncdf_file = \"{cdf}\"\nload = 0.5\n"
    ))
}

fn load_in(dir: &std::path::Path, text: &str) -> Result<lossless_sim::config::SimConfig, ScenarioError> {
    load_str(text, "w.toml", Some(dir), &Overrides::default())
}

#[test]
fn a_cdf_file_that_is_a_device_a_fifo_or_too_large_is_refused_before_reading_it() {
    let dir = temp_dir("hostile-cdf-files");
    let fifo = dir.join("sizes.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success(),
        "mkfifo"
    );
    std::fs::write(dir.join("big.cdf"), vec![b'1'; 2 << 20]).unwrap();
    for (cdf, why) in [
        ("/dev/zero", "character device"),
        ("/dev/urandom", "character device"),
        ("sizes.fifo", "FIFO"),
        ("big.cdf", "1048576 bytes"),
    ] {
        let text = workload(cdf);
        // a FIFO without a writer would block a plain open: this returns at once
        let e = load_in(&dir, &text).expect_err(cdf);
        assert_eq!(e.line, line_of(&text, "cdf_file", 0), "{e}");
        assert_has(&e, &["w.toml", "`cdf_file`", why]);
    }
}

#[test]
fn a_file_that_is_not_a_cdf_is_named_by_line_number_never_by_its_content() {
    let dir = temp_dir("hostile-cdf-content");
    std::fs::write(
        dir.join("passwd"),
        "root:x:0:0:secret-password-hash:/root:/bin/sh\n",
    )
    .unwrap();
    std::fs::write(dir.join("third.cdf"), "0 0\n10 50\nhunter2 100\n").unwrap();
    for (file, line) in [("passwd", 1), ("third.cdf", 3)] {
        let e = load_in(&dir, &workload(file)).expect_err(file);
        assert_has(&e, &[&format!("{file}:{line}:")]);
        let s = e.to_string();
        assert!(
            !s.contains("secret") && !s.contains("root") && !s.contains("hunter2"),
            "the error shows the file's content: {s}"
        );
    }
}

// ---------- item 6: degenerate CDFs ----------

#[test]
fn a_cdf_of_zero_byte_flows_or_a_mean_below_one_byte_is_refused_with_its_line() {
    let dir = temp_dir("hostile-cdf-degenerate");
    for (cdf, line, why) in [
        // flows of 0 bytes with probability 50 %
        ("0 50\n10 100\n", 1, "size 0 with cdf 50"),
        ("0 0\n0 100\n", 2, "size 0 with cdf 100"),
        // sizes between 0 and 1 byte: a mean of half a byte
        ("0 0\n1 100\n", 2, "mean flow size is 0.5 bytes"),
    ] {
        std::fs::write(dir.join("d.cdf"), cdf).unwrap();
        let e = load_in(&dir, &workload("d.cdf")).expect_err(cdf);
        assert_has(&e, &[&format!("d.cdf:{line}:"), why, "at least 1 byte"]);
    }
    // every flow 1 byte: a valid (if demanding) workload, as a `[[flow]]` of 1 byte is
    std::fs::write(dir.join("one.cdf"), "1 100\n").unwrap();
    let c = load_in(&dir, &workload("one.cdf")).unwrap();
    assert_eq!(c.workloads[0].cdf.mean(), 1.0);
}

// ---------- item 8: one limit on the scenario's size ----------

#[test]
fn separate_host_entries_count_towards_one_limit_on_the_scenario_size() {
    // three groups, each well under the limit, together over it
    let per = MAX_SCENARIO_SIZE / 3 + 1;
    let mut text = String::from("name = \"big\"\nduration = \"1us\"\n");
    for g in ["x", "y", "z"] {
        text.push_str(&format!("[[host]]\nname = \"{g}\"\ncount = {per}\n"));
    }
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "count", 10), "{e}");
    assert_has(
        &e,
        &["too large", &format!("at most {MAX_SCENARIO_SIZE}"), "hosts"],
    );
    // a single absurd count is refused the same way, before anything is allocated
    let e = err("name = \"big\"\nduration = \"1us\"\n[[host]]\nname = \"h\"\ncount = 9223372036854775807\n");
    assert_has(&e, &["too large", &format!("at most {MAX_SCENARIO_SIZE}")]);
}

#[test]
fn the_workload_arrivals_expected_over_the_run_count_towards_the_limit() {
    let dir = temp_dir("hostile-arrivals");
    std::fs::write(dir.join("one.cdf"), "1 100\n").unwrap();
    // 1-byte flows at half of 10 Gb/s: 625 M arrivals a second, 625,000 in a millisecond
    let text = workload("one.cdf").replace("duration = \"2us\"", "duration = \"1ms\"");
    let e = load_in(&dir, &text).unwrap_err();
    assert_eq!(e.line, line_of(&text, "load", 0), "{e}");
    assert_has(&e, &["too large", "expected workload arrivals", "625000"]);
    // the same workload for 20 µs (12,500 arrivals) loads
    let ov = Overrides {
        duration: Some(Duration::from_us(20)),
        ..Default::default()
    };
    load_str(&text, "w.toml", Some(&dir), &ov).unwrap();
}

// ---------- item 17: degenerate patterns ----------

#[test]
fn an_on_off_pattern_with_a_zero_period_or_a_rate_above_the_line_is_refused() {
    for (keys, key, why) in [
        ("rate = \"1G\"\non = \"0us\"\noff = \"0us\"\n", "on", "never send"),
        ("rate = \"1G\"\non = \"0us\"\noff = \"1us\"\n", "on", "never send"),
        ("rate = \"1G\"\non = \"1us\"\noff = \"0us\"\n", "off", "cbr"),
        (
            "rate = \"40G\"\non = \"1us\"\noff = \"1us\"\n",
            "rate",
            "line rate 10G",
        ),
    ] {
        let text = base(&format!("{FLOW}pattern = \"on_off\"\n{keys}"));
        let e = err(&text);
        assert_eq!(e.line, line_of(&text, &format!("{key} ="), 20), "{e}");
        assert_has(&e, &[&format!("`{key}`"), why]);
    }
    let text = base(&format!("{FLOW}pattern = \"cbr\"\nrate = \"11G\"\n"));
    assert_has(
        &err(&text),
        &["`rate`", "above the line rate 10G of the source a"],
    );
}

// ---------- item 18: times and reachability ----------

#[test]
fn a_flow_that_stops_before_it_starts_or_starts_after_the_run_is_refused() {
    let text = base(&format!("{FLOW}start = \"1us\"\nstop = \"500ns\"\n"));
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "stop", 0), "{e}");
    assert_has(&e, &["flow \"f\"", "stops at 500 ns", "not after its start 1 µs"]);
    let text = base(&format!("{FLOW}start = \"3us\"\n"));
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "start", 0), "{e}");
    assert_has(&e, &["flow \"f\"", "starts at 3 µs", "end of the run (2 µs)"]);
    // a run cut short by --duration on purpose (to watch what precedes the traffic) loads
    let ov = Overrides {
        duration: Some(Duration::from_us(1)),
        ..Default::default()
    };
    load_str(&text, "t.toml", None, &ov).unwrap();
}

#[test]
fn a_destination_behind_unlinked_switches_is_refused_naming_the_flow_and_both_hosts() {
    let island = "[[host]]\nname = \"c\"\n[[switch]]\nname = \"s2\"\nbuffer_bytes = 1000000\n[[link]]\na = \"c\"\nb = \"s2\"\n";
    let text = base(&format!("{island}{}", FLOW.replace("dst = \"b\"", "dst = \"c\"")));
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "dst", 0), "{e}");
    assert_has(&e, &["flow \"f\"", "no path from a to c", "`dst`"]);
    // a workload with one unreachable destination among others
    let text = base(&format!(
        "{island}[[workload]]\nname = \"w\"\nsrc = [\"a\"]\ndst = [\"b\", \"c\"]\npriority = 0\ncdf_file = \"x\"\nload = 0.5\n"
    ));
    assert_has(&err(&text), &["workload \"w\"", "no path from a to c"]);
    // linking the switches makes it reachable
    let text = base(&format!(
        "{island}[[link]]\na = \"s\"\nb = \"s2\"\n{}",
        FLOW.replace("dst = \"b\"", "dst = \"c\"")
    ));
    load(&text).unwrap();
}

#[test]
fn hosts_without_exactly_one_link_and_flows_between_non_hosts_are_refused_with_lines() {
    let text = base("[[link]]\na = \"a\"\nb = \"b\"\n");
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "a = \"a\"", 18), "{e}");
    assert_has(&e, &["host \"a\" has a second link (its first is at line 14)"]);
    let text = base("[[host]]\nname = \"c\"\n");
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "name = \"c\"", 0), "{e}");
    assert_has(&e, &["host \"c\" has no link"]);
    let text = base(&FLOW.replace("dst = \"b\"", "dst = \"a\""));
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "dst", 0), "{e}");
    assert_has(&e, &["same host \"a\""]);
    let text = base(&FLOW.replace("dst = \"b\"", "dst = \"s\""));
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "dst", 0), "{e}");
    assert_has(&e, &["found \"s\", a switch; allowed a host"]);
    let text = base(&FLOW.replace("priority = 0", "priority = 9"));
    assert_has(&err(&text), &["`priority`", "found 9, allowed 0..=7"]);
}

#[test]
fn a_workload_priority_above_seven_is_refused_not_run() {
    let text = workload("x").replace("priority = 0", "priority = 8");
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "priority", 0), "{e}");
    assert_has(&e, &["found 8, allowed 0..=7"]);
}

// ---------- messages ----------

#[test]
fn defaults_values_are_reported_at_their_own_line_in_defaults() {
    for (key, value, why) in [
        ("mtu", "0", "found 0, allowed 1..=9216"),
        ("pfc_priorities", "[9]", "found priority 9"),
        ("ets_prio_tc", "[0, 1, 2, 3, 4, 5, 6, 9]", "TC 9"),
        ("ets_tc_bandwidth", "[50, 60, 0, 0, 0, 0, 0, 0]", "sum to 110%"),
        (
            "ets_tsa",
            "[\"x\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\"]",
            "found \"x\"",
        ),
    ] {
        let text = base("").replace("mtu = 1500\n", &format!("{key} = {value}\n"));
        let e = err(&text);
        assert_eq!(e.line, 5, "{key}: {e}");
        assert_has(&e, &[&format!("`{key}`"), why]);
    }
}

#[test]
fn a_link_rate_outside_ethernets_range_is_refused_with_the_range() {
    for rate in ["1", "9M", "3.2T", "1000000T"] {
        let text = base("").replace("rate = \"10G\"", &format!("rate = \"{rate}\""));
        let e = err(&text);
        assert_eq!(e.line, 4, "{e}");
        assert_has(&e, &["`rate`"]);
        assert!(
            e.to_string().contains("10M … 1.6T") || e.to_string().contains("whole picoseconds"),
            "{e}"
        );
    }
    for rate in ["10M", "2.5G", "1.6T"] {
        let text = base("").replace("rate = \"10G\"", &format!("rate = \"{rate}\""));
        load(&text).unwrap_or_else(|e| panic!("{rate}: {e}"));
    }
}

#[test]
fn an_idle_slope_above_the_link_rate_or_missing_is_refused_at_its_line() {
    let cbs = "ets_tsa = [\"cbs\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\"]\n";
    let text = base("").replace(
        "mtu = 1500\n",
        &format!("{cbs}ets_idle_slope = {{ 0 = \"20G\" }}\n"),
    );
    let e = err(&text);
    assert_eq!(e.line, 6, "{e}");
    assert_has(&e, &["found 20G for TC 0, allowed up to the link's rate 10G"]);
    let text = base("").replace("mtu = 1500\n", cbs);
    let e = err(&text);
    assert_eq!(e.line, 5, "{e}");
    assert_has(&e, &["TC 0 is \"cbs\" but has no idleSlope"]);
}

#[test]
fn an_unknown_table_is_named_by_its_header_not_by_a_bracket() {
    let e = err("name = \"x\"\nduration = \"1us\"\n[bogus]\nx = 1\n");
    assert_has(&e, &["t.toml:3: in [bogus]: unknown field `bogus`"]);
    let e = err("name = \"x\"\nduration = \"1us\"\n[[bogus]] # note\nx = 1\n");
    assert_has(&e, &["in [[bogus]]: unknown field"]);
}

#[test]
fn a_negative_group_count_from_params_says_the_number_found() {
    let ov = Overrides {
        set: vec!["senders=-1".into()],
        ..Default::default()
    };
    let e = lossless_sim::scenario::load("incast", &ov).unwrap_err();
    assert_has(&e, &["`count`", "found -1 (from $senders)", "allowed 1 or more"]);
    assert!(!e.to_string().contains("found \"$senders\""), "{e}");
}

#[test]
fn the_switches_forwarding_tables_are_bounded_too() {
    // 4,000 switches and 4,000 hosts: 32 M forwarding entries (8 bytes each), though only
    // 8,000 nodes
    let mut text =
        String::from("name = \"wide\"\nduration = \"1us\"\n[[host]]\nname = \"h\"\ncount = 4000\n");
    for i in 0..4000 {
        text.push_str(&format!("[[switch]]\nname = \"s{i}\"\nbuffer_bytes = 1000\n"));
    }
    let e = err(&text);
    assert_eq!(e.line, line_of(&text, "name = \"s3999\"", 0), "{e}");
    assert_has(
        &e,
        &[
            "4000 switches × 8000 nodes",
            &format!("at most {}", lossless_sim::scenario::MAX_FORWARDING_ENTRIES),
        ],
    );
}
