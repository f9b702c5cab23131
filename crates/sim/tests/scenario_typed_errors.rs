//! The scenario front end's typed errors (durations, `--set` values and paths, a QP's
//! `rocev2`, `dcqcn` and `ecn` keys) say exactly what they said as strings: every case's
//! message, byte for byte.

use lossless_sim::scenario::{Overrides, ScenarioError, load_str, parse_duration, parse_set_value};

const INCAST: &str = include_str!("../../../examples/scenarios/incast-dcqcn.toml");

/// The error of loading incast-dcqcn with `from` replaced by `to` (which must be there).
fn incast_with(from: &str, to: &str) -> ScenarioError {
    assert!(INCAST.contains(from), "{from:?} is not in incast-dcqcn.toml");
    load_str(
        &INCAST.replacen(from, to, 1),
        "incast.toml",
        None,
        &Overrides::default(),
    )
    .unwrap_err()
}

/// The error of loading `text` with one `--set`.
fn with_set(text: &str, set: &str) -> ScenarioError {
    let ov = Overrides {
        set: vec![set.to_string()],
        ..Overrides::default()
    };
    load_str(text, "s.toml", None, &ov).unwrap_err()
}

#[test]
fn a_duration_without_a_unit_or_finer_than_a_picosecond_says_which() {
    assert_eq!(
        parse_duration("10").unwrap_err().to_string(),
        "found \"10\", allowed a number with a unit ps, ns, us, ms or s (e.g. \"10us\", \"2.5ms\")"
    );
    assert_eq!(
        parse_duration(" 1.5ps").unwrap_err().to_string(),
        "found \" 1.5ps\": finer than a picosecond"
    );
}

#[test]
fn a_set_value_with_toml_after_it_or_broken_toml_is_refused_with_what_was_found() {
    assert_eq!(
        parse_set_value("1\nx = 2").unwrap_err().to_string(),
        "found \"1\\nx = 2\": TOML after the value (key `x`); allowed one value (set each key with \
         its own --set)"
    );
    let e = parse_set_value("[3, 4").unwrap_err().to_string();
    assert!(e.starts_with("found \"[3, 4\", not one TOML value ("), "{e}");
    assert!(
        e.ends_with("); allowed a number, a \"string\", an array, a table or a bare word"),
        "{e}"
    );
}

#[test]
fn a_set_path_that_names_nothing_or_goes_through_a_value_is_refused() {
    let text = "name = \"t\"\n[params]\nsenders = 4\n[defaults]\nets_idle_slope = 5\n";
    let e = with_set(text, "bogus=1");
    assert_eq!((e.file.as_str(), e.line, e.key.as_str()), ("--set", 0, ""));
    assert!(
        e.message.starts_with(
            "bogus=1: \"bogus\" is not a parameter of this scenario; allowed: [params] senders; top-level "
        ),
        "{e}"
    );
    let e = with_set(text, "a..b=1");
    assert!(
        e.message.starts_with(
            "a..b=1: found the path \"a..b\", which has an empty part; allowed: [params] senders;"
        ),
        "{e}"
    );
    let e = with_set(text, "defaults.ets_idle_slope.3=\"1G\"");
    assert_eq!(
        e.message,
        "defaults.ets_idle_slope.3=\"1G\": `ets_idle_slope` is not a table"
    );
    let e = with_set(text, "senders=1\nx = 2");
    assert_eq!(
        e.message,
        "senders=1\nx = 2: found \"1\\nx = 2\": TOML after the value (key `x`); allowed one value (set \
         each key with its own --set)"
    );
}

#[test]
fn a_qp_rocev2_table_names_the_key_found_and_allowed() {
    let rc = "rocev2 = { preset = \"perftest\" }";
    let e = incast_with(rc, "rocev2 = { preset = \"nope\" }");
    assert_eq!(e.key, "key `rocev2` in [qp] (for QP \"qp\"): ");
    assert_eq!(
        e.message,
        "preset: found \"nope\", allowed \"hpcc-ns3\", \"irn-tlt\", \"perftest\""
    );
    let e = incast_with(rc, "rocev2 = { max_retries = \"x\" }");
    assert_eq!(e.message, "max_retries: found \"x\", allowed a count or \"none\"");
    let e = incast_with(rc, "rocev2 = { rto = \"5\" }");
    assert_eq!(
        e.message,
        "rto: found \"5\", allowed a number with a unit ps, ns, us, ms or s (e.g. \"10us\", \"2.5ms\")"
    );
    let e = incast_with(rc, "rocev2 = { recovery = 3 }");
    assert_eq!(
        e.message,
        "recovery: found 3, allowed \"go_back_n\" or { irn = { bdp_cap_bytes, rto_low, rto_high } }"
    );
    let e = incast_with(rc, "rocev2 = { recovery = { irn = { bdp_cap_bytes = 1 } } }");
    assert!(e.message.starts_with("recovery.irn: missing field"), "{e}");
    let e = incast_with(rc, "rocev2 = { mtu = 3 }");
    assert_eq!(e.key, "key `rocev2` in [qp] (for QP \"qp\"): ");
    assert!(!e.message.is_empty() && !e.message.contains("rocev2"), "{e}");
}

#[test]
fn a_qp_engine_table_names_its_key_found_and_allowed() {
    let dcqcn = "dcqcn = { cnp_mode = \"packet\", min_time_between_cnps = \"4us\", cnp_802p_prio = 6 }";
    let e = incast_with(dcqcn, "dcqcn = { min_time_between_cnps = 4 }");
    assert_eq!(e.key, "key `dcqcn` in [qp] (for QP \"qp\"): ");
    assert_eq!(
        e.message,
        "key `min_time_between_cnps`: found 4, allowed a duration with a unit (e.g. \"300us\", \"4us\")"
    );
    let e = incast_with(dcqcn, "dcqcn = { min_time_between_cnps = \"4\" }");
    assert_eq!(
        e.message,
        "key `min_time_between_cnps`: found \"4\", allowed a number with a unit ps, ns, us, ms or s \
         (e.g. \"10us\", \"2.5ms\")"
    );
    let e = incast_with(dcqcn, "dcqcn = { rpg_ai_rate = 5 }");
    assert_eq!(
        e.message,
        "key `rpg_ai_rate`: found 5, allowed a rate such as \"5M\", \"100G\" (or \"none\")"
    );
    let e = incast_with(dcqcn, "dcqcn = { rpg_ai_rate = \"fast\" }");
    assert!(
        e.message.starts_with("key `rpg_ai_rate`: ") && e.message.contains("fast"),
        "{e}"
    );
    let e = incast_with(dcqcn, "dcqcn = { bogus = 1 }");
    assert!(
        e.message.contains("bogus") && e.message.ends_with(
            " (notification point keys: min_time_between_cnps, cnp_802p_prio, cnp_dscp, late_cnp, cnp_mode)"
        ),
        "{e}"
    );
}

#[test]
fn an_ecn_priority_above_7_is_refused() {
    let e = incast_with("\npriorities = [3]", "\npriorities = [9]");
    assert!(e.message.ends_with("priorities: found 9, allowed 0..=7"), "{e}");
}
