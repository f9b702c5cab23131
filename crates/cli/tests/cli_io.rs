//! Every command against a closed or full standard output, out-of-range numbers, `-` as
//! standard output and the error text, as a user meets them (the real binary).

#[path = "cli_support/mod.rs"]
mod support;

use std::process::Command;

use lossless_testkit::temp_dir;
use support::*;

/// Command lines that print to standard output without needing root.
fn printing_commands() -> Vec<Vec<String>> {
    let cap = sample_capture().display().to_string();
    [
        vec!["sim", "four-bridge", "--duration", "50us"],
        vec!["sim", "--list"],
        vec!["sim", "--show", "incast"],
        vec!["sim", "incast", "--duration", "20us", "--sweep", "senders=2..=5"],
        vec!["analyze", "--speed", "10G", &cap],
        vec!["analyze", "--speed", "10G", "--json", &cap],
        vec!["decode", &cap],
        vec!["headroom", "--speed", "100G", "--cable", "100m"],
        vec!["headroom", "--speed", "100G", "--cable", "100m", "--json"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_closed_standard_output_ends_every_command_quietly() {
    for cmd in printing_commands() {
        let (status, err) = with_closed_stdout(&mut lossless(&args(&cmd)));
        assert_no_panic(status, &err, &cmd.join(" "));
        assert!(
            status.success(),
            "{}: exit {status:?}, stderr {err}",
            cmd.join(" ")
        );
        assert!(err.is_empty(), "{}: nothing on stderr, got {err}", cmd.join(" "));
    }
}

#[test]
fn a_full_standard_output_is_an_error_naming_it() {
    for cmd in printing_commands() {
        let (status, err) = with_full_stdout(&mut lossless(&args(&cmd)));
        assert_no_panic(status, &err, &cmd.join(" "));
        assert_eq!(status.code(), Some(2), "{}: {err}", cmd.join(" "));
        assert!(
            err.contains("standard output: No space left on device"),
            "{}: {err}",
            cmd.join(" ")
        );
    }
}

#[test]
fn the_live_commands_end_quietly_on_a_closed_output_and_report_a_full_one() {
    const TEST: &str = "the_live_commands_end_quietly_on_a_closed_output_and_report_a_full_one";
    if !lossless_testkit::require_root(TEST) || lossless_testkit::require("unshare", TEST).is_none() {
        return;
    }
    // in a private network namespace: its loopback is ours to send PAUSE frames on
    let script = "ip link set lo up && exec \"$@\"";
    let bin = bin();
    let cmds: [&[&str]; 2] = [
        &["gen", "-i", "lo", "-p", "1", "-n", "3"],
        &[
            "watch",
            "-i",
            "lo",
            "--speed",
            "10G",
            "--interval",
            "0.05",
            "--duration",
            "0.3",
        ],
    ];
    for cmd in cmds {
        let mut c = Command::new("unshare");
        c.args(["-n", "sh", "-c", script, "sh"]).arg(&bin).args(cmd);
        let (status, err) = with_closed_stdout(&mut c);
        assert_no_panic(status, &err, &cmd.join(" "));
        assert!(status.success(), "{cmd:?}: {status:?} {err}");
        assert!(!err.contains("error"), "{cmd:?}: {err}");
        let mut c = Command::new("unshare");
        c.args(["-n", "sh", "-c", script, "sh"]).arg(&bin).args(cmd);
        let (status, err) = with_full_stdout(&mut c);
        assert_no_panic(status, &err, &cmd.join(" "));
        assert_eq!(status.code(), Some(2), "{cmd:?}: {err}");
        assert!(
            err.contains("standard output: No space left on device"),
            "{cmd:?}: {err}"
        );
    }
}

#[test]
fn float_and_period_options_out_of_range_are_refused_with_the_range() {
    let cases: [(&[&str], &str); 18] = [
        (
            &["gen", "-i", "lo", "-p", "8", "-r", "1e-20", "-n", "2"],
            "allowed 1e-3..=1e10",
        ),
        (&["gen", "-i", "lo", "-p", "8", "-r", "NaN"], "out of range"),
        (&["gen", "-i", "lo", "-p", "8", "-r", "inf"], "out of range"),
        (&["gen", "-i", "lo", "-p", "8", "-d", "1e300"], "0..=1e9"),
        (&["gen", "-i", "lo", "-p", "8", "--duration=-1"], "0..=1e9"),
        (
            &[
                "gen",
                "-i",
                "lo",
                "-p",
                "8",
                "--storm",
                "--speed",
                "10M",
                "--oversubscription",
                "1e-30",
                "-n",
                "2",
            ],
            "allowed 1e-3..=1e10",
        ),
        (&["gen", "-i", "lo", "-p", "8", "--batch", "0"], "1..=1024"),
        (&["watch", "-i", "lo", "--interval", "1e300"], "0.01..=1e9"),
        (&["watch", "-i", "lo", "--duration", "1e300"], "0..=1e9"),
        (&["watch", "-i", "lo", "--poll-ms", "0"], "1..=1000"),
        (
            &[
                "gen",
                "-i",
                "lo",
                "-p",
                "8",
                "--storm",
                "--speed",
                "10G",
                "--prevention-tout",
                "79",
            ],
            "80..=8000 ms, auto (100 ms) or off",
        ),
        // SONiC's pfcwd ranges, refused before the interface is opened
        (
            &["watch", "-i", "lo", "--detection-ms", "50"],
            "detection 50 ms: allowed 100 ms ..= 5000 ms",
        ),
        (
            &["watch", "-i", "lo", "--restoration-ms", "60001"],
            "allowed 100 ms ..= 60000 ms",
        ),
        (
            &["watch", "-i", "lo", "--poll-ms", "300"],
            "poll 300 ms is longer than the detection time 200 ms",
        ),
        (&["watch", "-i", "lo", "--deadlock-ms", "0"], "1..=60000"),
        // a storm of XON frames pauses nothing: refused, not run at the 65535-quanta rate
        (
            &["gen", "-i", "lo", "--prio", "3=0", "--storm", "--speed", "10G"],
            "--storm with priority 3 at 0 quanta",
        ),
        (
            &["gen", "-i", "lo", "-g", "-t", "0", "--storm", "--speed", "10G"],
            "--storm with the link PAUSE at 0 quanta",
        ),
        (
            &["analyze", "--speed", "10G", "--bucket-ms", "0", "x.pcap"],
            "1..=86400000",
        ),
    ];
    for (args, range) in cases {
        let o = run(args);
        let err = stderr(&o);
        assert_no_panic(o.status, &err, &args.join(" "));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: the range {range} in {err}");
    }
}

#[test]
fn json_dash_is_standard_output_for_every_command_that_takes_an_output_file() {
    let dir = temp_dir("json-dash");
    let file = dir.join("run.json");
    let o = run(&["sim", "two-chip", "-q", "--json", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["sim", "two-chip", "--json", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let on_stdout: serde_json::Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    let in_file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(on_stdout, in_file);
    assert!(stderr(&o).contains("conserved"), "the summary went to stderr");
    assert!(!dir.join("-").exists() && !std::path::Path::new("-").exists());
    let o = run(&["sim", "two-chip", "-q", "--vcd", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("$comment"), "{}", stdout(&o));
    let o = run(&[
        "sim",
        "incast",
        "--duration",
        "20us",
        "--sweep",
        "senders=2,3",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line, no table"))
        .collect();
    assert_eq!(lines.len(), 2);
    let o = run(&["sim", "two-chip", "--json", "-", "--vcd", "/dev/stdout"]);
    assert_eq!(o.status.code(), Some(2), "two outputs on standard output");
    assert!(stderr(&o).contains("same file"), "{}", stderr(&o));
}

#[test]
fn an_error_says_its_cause_once() {
    let dir = temp_dir("error-once");
    let file = dir.join("f");
    std::fs::write(&file, "x").unwrap();
    let report = dir.join("rpt");
    std::fs::create_dir_all(report.join("index.html")).unwrap();
    for args in [
        vec!["sim", "two-chip", "-q", "--pcap", file.to_str().unwrap()],
        vec!["sim", "two-chip", "-q", "--report", report.to_str().unwrap()],
    ] {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(dir.to_str().unwrap()), "names the file: {err}");
        for (i, part) in err.trim().split(": ").enumerate().skip(1) {
            assert!(
                !err.trim().split(": ").skip(i + 1).any(|later| later == part),
                "{part:?} said twice in {err}"
            );
        }
    }
}

#[test]
fn jobs_are_capped_by_the_points_and_a_huge_count_is_refused() {
    let o = run(&[
        "sim",
        "incast",
        "--duration",
        "20us",
        "--sweep",
        "seed=1..=4",
        "--jobs",
        "10000",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("1..=1024"), "{}", stderr(&o));
    let o = run(&[
        "sim",
        "incast",
        "--duration",
        "20us",
        "--sweep",
        "seed=1..=4",
        "--jobs",
        "1000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("4 points in"), "{}", stdout(&o));
    assert!(stdout(&o).contains("on 4 threads"), "{}", stdout(&o));
}

#[test]
fn a_capture_may_be_standard_input_and_a_file_that_is_not_one_is_refused_alike() {
    let cap = std::fs::read(sample_capture()).unwrap();
    for cmd in [&["decode", "-"][..], &["analyze", "--speed", "10G", "-"][..]] {
        let mut child = lossless(cmd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(&cap).unwrap();
        let o = wait_bounded(child, std::time::Duration::from_secs(30), "reading stdin");
        assert!(o.status.success(), "{cmd:?}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{cmd:?}");
    }
    let dir = temp_dir("not-a-capture");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a capture\n").unwrap();
    let n = notes.to_str().unwrap();
    for cmd in [vec!["decode", n], vec!["analyze", "--speed", "10G", n]] {
        let o = run(&cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("not a pcap or pcapng file"), "{}", stderr(&o));
        assert!(o.stdout.is_empty(), "{cmd:?}: no table of zeros: {}", stdout(&o));
    }
    let d = dir.to_str().unwrap();
    for cmd in [vec!["decode", d], vec!["analyze", "--speed", "10G", d]] {
        let o = run(&cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    }
}

#[test]
fn a_full_standard_error_loses_the_message_but_keeps_the_exit_status() {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    for (args, code) in [
        (&["sim", "no-such-scenario"][..], 2),
        (&["sim", "two-chip", "-q", "--json", "no/such/dir/x.json"][..], 2),
        (&["decode", "/nonexistent/x.pcap"][..], 2),
        (&["sim", "two-chip", "--json", "-"][..], 0),
    ] {
        let child = lossless(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(full())
            .spawn()
            .unwrap();
        let o = wait_bounded(child, std::time::Duration::from_secs(30), "with stderr full");
        assert_eq!(o.status.code(), Some(code), "{args:?}: {:?}", o.status);
    }
}
