//! Issue 26, "messages that point at the wrong place": every refusal names the file, the line
//! and the key of the value at fault, and says the real problem.

#[macro_use]
mod common;

use lossless_sim::scenario::{Overrides, ScenarioError, load_str};

/// Hosts h1, h2 on s1; s1 – s2; h3 on s2; 10 Gb/s, PFC on priority 3.
const BASE: &str = two_switches!("10ms");

fn refused(text: &str) -> ScenarioError {
    match load_str(text, "t.toml", None, &Overrides::default()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// The 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no line {prefix:?}"))
}

#[test]
fn a_pfcwd_error_names_the_line_and_key_of_the_value_refused() {
    // detection is fine; the poll two lines below is longer than it
    let text = format!("{BASE}[pfcwd]\ndetection = \"300ms\"\naction = \"drop\"\npoll = \"400ms\"\n");
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "poll"), "key `poll` in [pfcwd]: "),
        "{e}"
    );
    assert!(
        e.message
            .contains("poll 400 ms is longer than the detection time"),
        "{e}"
    );
    // a restoration out of range, with a detection given before it
    let text = format!("{BASE}[pfcwd]\ndetection = \"300ms\"\nrestoration = \"70s\"\n");
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "restoration"), "key `restoration` in [pfcwd]: "),
        "{e}"
    );
    // a switch's inline table: the line of its `pfcwd`, the key inside it
    let text = BASE.replacen("name = \"s2\"", "name = \"s2\"\npfcwd = { poll = \"2s\" }", 1);
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "pfcwd"), "key `poll` in \"s2\"'s pfcwd: "),
        "{e}"
    );
    assert!(e.message.contains("poll 2 s: allowed 1 ms ..= 1000 ms"), "{e}");
}

#[test]
fn a_flow_control_error_names_the_register_refused_not_the_first_key_given() {
    let text = BASE.replace(
        "pfc_priorities = [3]",
        "pfc_priorities = [3]\nrefresh_quanta = 100\nreaction_delay_quanta = 3\npause_quanta = 0",
    );
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "pause_quanta"), "key `pause_quanta`: "),
        "{e}"
    );
    let text = BASE.replace(
        "pfc_priorities = [3]",
        "pfc_priorities = [3]\npause_quanta = 7\nrefresh_quanta = 0",
    );
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "refresh_quanta"), "key `refresh_quanta`: "),
        "{e}"
    );
}

#[test]
fn a_receive_threshold_error_names_the_key_that_breaks_the_order() {
    let text = BASE.replacen("name = \"h1\"", "name = \"h1\"\nrx_xoff_bytes = 2000000", 1);
    let e = refused(&text);
    assert_eq!(e.key, "key `rx_xoff_bytes`: ", "{e}");
    assert!(e.message.contains("xoff 2000000 / buffer 1048576"), "{e}");
}

// ---------- "loads but cannot be built": now refused when it loads ----------

#[test]
fn a_buffer_smaller_than_its_headroom_names_the_switch_buffer_bytes_line_and_the_reserves() {
    let text = BASE.replacen("buffer_bytes = 1_000_000", "buffer_bytes = 20_000", 1);
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "buffer_bytes = 20_000"), "key `buffer_bytes`: "),
        "{e}"
    );
    assert!(
        e.message.contains("switch \"s1\": found 20000 bytes")
            && e.message
                .contains("3 lossless port priorities × the default headroom"),
        "{e}"
    );
    // an explicit headroom that fits the buffer once but not once per lossless port priority
    let text = BASE.replacen(
        "buffer_bytes = 1_000_000",
        "buffer_bytes = 1_000_000\nheadroom_bytes = 400_000",
        1,
    );
    let e = refused(&text);
    assert!(
        e.message
            .contains("3 lossless port priorities × headroom_bytes 400000"),
        "{e}"
    );
    // one larger than the buffer itself is refused at its own key
    let text = BASE.replacen(
        "buffer_bytes = 1_000_000",
        "buffer_bytes = 1_000_000\nheadroom_bytes = 9_000_000_000_000_000_000",
        1,
    );
    let e = refused(&text);
    assert_eq!(e.key, "key `headroom_bytes`: ", "{e}");
}

#[test]
fn ecn_thresholds_missing_for_a_port_rate_name_the_switch_and_the_rate() {
    let text = format!(
        "{BASE}[ecn]\nby_rate = [{{ rate = \"25G\", kmin_bytes = 1000, kmax_bytes = 2000, pmax = 0.1 }}]\n"
    );
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "name = \"s1\""), "key `ecn`: "),
        "{e}"
    );
    assert!(
        e.message.contains("runs at 10 Gb/s") || e.message.contains("runs at 10G"),
        "{e}"
    );
}

#[test]
fn a_scripted_request_on_a_priority_without_pfc_names_its_signal() {
    let text = format!("{BASE}[[signal]]\nhost = \"h2\"\npriority = 5\nfc_rdy = [[\"1us\", \"2us\"]]\n");
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "host = \"h2\""), "key `priority`: "),
        "{e}"
    );
    assert!(
        e.message.contains("priority 5") && e.message.contains("pfc_priorities [3]"),
        "{e}"
    );
}

#[test]
fn a_default_tables_value_is_named_in_that_table_not_at_the_entry_that_took_it() {
    // a DCQCN value of [qp] too high for the QP's 10G sender: [qp]'s line, not the flow's
    let text = format!(
        "{BASE}[qp]\ndcqcn = {{ rpg_min_rate = \"20G\" }}\n[[flow]]\nname = \"q\"\nsrc = \"h1\"\ndst = \"h3\"\npriority = 3\nsize_bytes = 10000\ntransport = \"rocev2\"\n"
    );
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&text, "[qp]"), "key `dcqcn` in [qp] (for QP \"q\"): "),
        "{e}"
    );
    // the flow's own value stays at the flow
    let text = text.replace(
        "transport = \"rocev2\"",
        "transport = \"rocev2\"\ndcqcn = { rpg_min_rate = \"30G\" }",
    );
    let e = refused(&text);
    assert_eq!(e.key, "key `dcqcn`: ", "{e}");
    // [ecn]'s thresholds out of order: [ecn]'s line, for the switch that took them
    let text = format!("{BASE}[ecn]\nkmin_bytes = 5000\nkmax_bytes = 1000\n");
    let e = refused(&text);
    assert_eq!(
        (e.line, e.key.as_str()),
        (
            line_of(&text, "[ecn]"),
            "key `ecn` in [ecn] (for switch \"s1\"): "
        ),
        "{e}"
    );
}
