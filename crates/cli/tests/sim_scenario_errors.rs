//! `lossless sim` refuses what a scenario does not have (issue 12): unknown `--set` and
//! `--sweep` paths, repeated sweeps, a zero `--duration`, and says each reason once, naming
//! the option or the file, line and key at fault. Runs the real binary.

use std::process::{Command, Output};

use lossless_testkit::temp_dir;

fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("the lossless binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 2 (input refused), nothing run, and every part in the message.
fn refused(args: &[&str], parts: &[&str]) -> String {
    let o = lossless(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert!(
        o.stdout.is_empty(),
        "{args:?} ran: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    for p in parts {
        assert!(e.contains(p), "{args:?}: {p:?} missing in: {e}");
    }
    e
}

#[test]
fn a_set_path_the_scenario_does_not_have_is_refused_listing_the_known_ones() {
    refused(
        &["sim", "incast", "--set", "sendrs=32", "-q"],
        &[
            "--set",
            "\"sendrs\" is not a parameter",
            "[params] senders",
            "defaults.KEY",
        ],
    );
    // four-bridge has no [params]
    refused(
        &["sim", "four-bridge", "--set", "senders=32", "-q"],
        &["\"senders\" is not a parameter", "no [params]"],
    );
    refused(
        &["sim", "four-bridge", "--set", "=3", "-q"],
        &["--set", "empty part"],
    );
    refused(
        &["sim", "incast", "--set", "defaults.bogus=1", "-q"],
        &["\"defaults.bogus\" is not a parameter", "pfc_priorities"],
    );
}

#[test]
fn a_sweep_of_an_unknown_path_or_of_a_value_twice_is_refused_before_any_point_runs() {
    refused(
        &["sim", "incast", "--sweep", "sendrs=1..=3"],
        &["--sweep", "\"sendrs\" is not a parameter", "[params] senders"],
    );
    refused(
        &["sim", "incast", "--sweep", "seed=1..=2", "--sweep", "seed=3"],
        &["--sweep", "seed (axis 2)", "already sweeps it"],
    );
    // the same parameter under two spellings
    refused(
        &[
            "sim",
            "incast",
            "--sweep",
            "senders=2,3",
            "--sweep",
            "incast.senders=4",
        ],
        &["already sweeps it"],
    );
    refused(
        &["sim", "incast", "--sweep", "senders=2,3", "--set", "senders=4"],
        &["--set also sets it"],
    );
    refused(
        &["sim", "incast", "--sweep", "seed=1,2", "--seed", "3"],
        &["--seed also sets it"],
    );
}

#[test]
fn a_zero_duration_option_is_blamed_on_the_option_not_the_file() {
    let e = refused(&["sim", "--duration", "0ps"], &["--duration", "positive"]);
    assert!(!e.contains("four-bridge (built-in)"), "{e}");
}

#[test]
fn a_buffer_too_small_for_its_headroom_is_refused_when_it_loads_at_its_line_and_key_once() {
    // it was a build error ("loads but cannot be built") without line or key
    let dir = temp_dir("sim-build-error");
    let path = dir.join("b0.toml");
    std::fs::write(
        &path,
        r#"name = "b0"
duration = "1us"
[defaults]
rate = "10G"
flow_control = "pfc"
pfc_priorities = [0]
[[host]]
name = "a"
[[host]]
name = "b"
[[switch]]
name = "s"
buffer_bytes = 0
[[link]]
a = "a"
b = "s"
[[link]]
a = "b"
b = "s"
"#,
    )
    .unwrap();
    let o = lossless(&["sim", path.to_str().unwrap(), "-q"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("b0.toml:13: key `buffer_bytes`: switch \"s\": found 0 bytes"),
        "{e}"
    );
    assert!(!e.contains("cannot be built"), "{e}");
    assert_eq!(e.matches("headroom reserves").count(), 1, "said twice: {e}");
}
