//! `lossless sim`'s inputs and outputs as a user meets them: an output never overwrites an
//! input or another output, outputs appear whole or not at all (also on a full disk or when
//! interrupted), the waveform streams with bounded memory, one rule for missing directories,
//! and a scenario file that is a device, a FIFO or too large is refused.

#[path = "cli_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lossless_testkit::temp_dir;
use support::*;

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lossless binary runs")
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok, "kill {sig}");
}

/// Resident memory of a process, KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[test]
fn an_output_that_is_the_scenario_or_another_output_is_refused_before_the_run() {
    let dir = temp_dir("sim-clash");
    let scenario = dir.join("s.toml");
    let o = run(&["sim", "--show", "two-chip"]);
    std::fs::write(&scenario, &o.stdout).unwrap();
    let before = std::fs::read(&scenario).unwrap();
    let hard = dir.join("hard.toml");
    std::fs::hard_link(&scenario, &hard).unwrap();
    let s = scenario.to_str().unwrap();
    for (args, msg) in [
        (vec!["sim", s, "-q", "--json", s], "--json"),
        (vec!["sim", "s.toml", "-q", "--json", "./s.toml"], "./s.toml"),
        (vec!["sim", s, "-q", "--vcd", hard.to_str().unwrap()], "--vcd"),
        (
            vec!["sim", "two-chip", "-q", "--json", "x", "--vcd", "x"],
            "--vcd x is the same file as --json x",
        ),
        (
            vec![
                "sim",
                "two-chip",
                "-q",
                "--json",
                "rpt/index.html",
                "--report",
                "rpt",
            ],
            "--report",
        ),
        (vec!["sim", s, "-q", "--sweep", "seed=1,2", "--json", s], "--json"),
    ] {
        let o = run_in(&dir, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(msg) && err.contains("refusing to overwrite"),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read(&scenario).unwrap(),
            before,
            "{args:?} changed the scenario"
        );
        assert_eq!(
            files_in(&dir),
            ["hard.toml", "s.toml"],
            "{args:?} wrote something"
        );
    }
}

#[test]
fn an_output_in_a_missing_directory_is_refused_alike_for_every_option() {
    let dir = temp_dir("sim-missing-dir");
    for opt in ["--json", "--vcd", "--pcap", "--report"] {
        let o = run_in(&dir, &["sim", "two-chip", "-q", opt, "no/such/out"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{opt}: {err}");
        assert!(
            err.contains("the directory no/such does not exist"),
            "{opt}: {err}"
        );
    }
    let o = run_in(
        &dir,
        &[
            "sim",
            "two-chip",
            "-q",
            "--sweep",
            "seed=1,2",
            "--json",
            "no/such/out",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the directory no/such does not exist"),
        "{}",
        stderr(&o)
    );
    assert!(files_in(&dir).is_empty(), "nothing created: {:?}", files_in(&dir));
    // the output directory itself is created, as `mkdir` does
    let o = run_in(&dir, &["sim", "two-chip", "-q", "--pcap", "p", "--report", "r"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(files_in(&dir.join("r")), ["index.html"]);
    assert_eq!(files_in(&dir.join("p")).len(), 2);
}

#[test]
fn a_full_disk_leaves_no_half_file_and_names_the_file_that_failed() {
    const TEST: &str = "a_full_disk_leaves_no_half_file_and_names_the_file_that_failed";
    let scratch = temp_dir("sim-full-disk");
    let run100 = ["sim", "four-bridge", "--duration", "100us", "-q"];
    let cases: [(&[&str], &str); 5] = [
        (&["--json", "a.json"], "a.json: No space left on device"),
        (&["--vcd", "w.vcd"], "w.vcd: No space left on device"),
        (&["--pcap", "caps"], ".pcapng: No space left on device"),
        (&["--report", "rpt"], "rpt/index.html: No space left on device"),
        (
            &["--sweep", "seed=1..=4", "--jobs", "1", "--json", "sweep.jsonl"],
            "sweep.jsonl: No space left on device",
        ),
    ];
    for (extra, says) in cases {
        let args: Vec<&str> = run100.iter().chain(extra).copied().collect();
        let Some(r) = on_tiny_disk(TEST, &scratch, 16, &args) else {
            return;
        };
        assert_no_panic(r.status, &r.stderr, &args.join(" "));
        assert_eq!(r.status.code(), Some(2), "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{extra:?}: {says:?} in {}", r.stderr);
        assert!(!r.stderr.contains("Error reading bytes"), "{}", r.stderr);
        assert!(r.left.is_empty(), "{extra:?} left half files: {:?}", r.left);
    }
}

#[test]
fn an_interrupted_run_writes_nothing_and_exits_with_the_signal() {
    let dir = temp_dir("sim-interrupted");
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        let child = spawn_in(
            &dir,
            &[
                "sim",
                "four-bridge",
                "--duration",
                "10s",
                "-q",
                "--json",
                "a.json",
                "--vcd",
                "w.vcd",
            ],
        );
        // the run is under way once its waveform's temporary file exists
        let start = Instant::now();
        while !files_in(&dir).iter().any(|f| f.ends_with(".tmp")) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no temporary file appeared"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(&child, sig);
        let o = wait_bounded(child, Duration::from_secs(20), "the interrupted run");
        assert_eq!(o.status.code(), Some(code), "{sig}: {}", stderr(&o));
        assert!(stderr(&o).contains("interrupted at"), "{}", stderr(&o));
        assert!(files_in(&dir).is_empty(), "{sig} left {:?}", files_in(&dir));
    }
}

#[test]
fn the_waveform_streams_to_disk_while_memory_stays_flat() {
    let dir = temp_dir("sim-vcd-stream");
    let child = spawn_in(
        &dir,
        &[
            "sim",
            "four-bridge",
            "--duration",
            "1000s",
            "-q",
            "--vcd",
            "w.vcd",
        ],
    );
    let pid = child.id();
    let tmp = || -> Option<PathBuf> {
        files_in(&dir)
            .into_iter()
            .find(|f| f.ends_with(".tmp"))
            .map(|f| dir.join(f))
    };
    let size = || {
        tmp()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    };
    // RSS once 1 MiB of waveform is on disk, and again once 6 MiB more are
    let start = Instant::now();
    let mut first = None;
    let last = loop {
        assert!(
            start.elapsed() < Duration::from_secs(45),
            "the waveform did not reach the disk while the run went on ({} bytes)",
            size()
        );
        let (s, rss) = (size(), rss_kib(pid).unwrap_or(0));
        match first {
            None if s > 1 << 20 => first = Some((s, rss)),
            Some((s0, _)) if s > s0 + (6 << 20) => break (s, rss),
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (s0, rss0) = first.unwrap();
    let (s1, rss1) = last;
    signal(&child, "-INT");
    let o = wait_bounded(child, Duration::from_secs(20), "the interrupted run");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        rss1 < rss0 + 4096,
        "memory grew from {rss0} KiB to {rss1} KiB while the file grew {s0} -> {s1} bytes"
    );
    // the atomic rule: an interrupted waveform is not left (not even its temporary file)
    assert!(files_in(&dir).is_empty(), "left {:?}", files_in(&dir));
}

#[test]
fn a_scenario_that_is_a_device_a_fifo_or_too_large_is_refused_at_once() {
    let dir = temp_dir("sim-bad-scenario");
    let fifo = dir.join("fifo.toml");
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap().success();
    assert!(ok, "mkfifo");
    let big = dir.join("big.toml");
    std::fs::write(&big, vec![b'#'; 5 << 20]).unwrap();
    for (file, says) in [
        (
            PathBuf::from("/dev/zero"),
            "is a character device, not a regular file",
        ),
        (fifo, "is a FIFO, not a regular file"),
        (big, "larger than the 4194304 bytes allowed"),
        (dir.to_path_buf(), "is a directory, not a regular file"),
    ] {
        let start = Instant::now();
        let o = run(&["sim", file.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{file:?}: {err}");
        assert!(err.contains(says) && err.contains("scenario"), "{file:?}: {err}");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{file:?} took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn the_pace_line_divides_the_time_actually_simulated_not_the_configured_duration() {
    // deadlock-ring is configured for 100 ms; the detector halts it at 600 µs
    let out = run(&["sim", "deadlock-ring"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let head = text
        .lines()
        .find(|l| l.starts_with("scenario deadlock-ring"))
        .unwrap();
    assert!(head.contains("simulated 600 µs"), "{head}");
    let events: f64 = head.split("events ").nth(1).unwrap().trim().parse().unwrap();
    let pace = text.lines().find(|l| l.starts_with("wall ")).unwrap();
    let num = |after: &str| -> f64 {
        pace.split(after)
            .next()
            .unwrap()
            .split(", ")
            .last()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let m_events_per_s = num(" M events/s");
    let ms_per_s = num(" ms simulated per wall second");
    // ms per wall second × wall seconds = ms simulated; wall seconds = events / events per s
    let simulated_ms = ms_per_s * events / (m_events_per_s * 1e6);
    assert!(
        (simulated_ms - 0.6).abs() < 0.6 * 0.2,
        "{simulated_ms} ms simulated from {pace:?} and {events} events"
    );
}

/// The summary the page repeats, unescaped.
fn page_summary(html: &str) -> String {
    let pre = html.split("<h2>Summary</h2><pre>").nth(1).unwrap();
    pre.split("</pre>")
        .next()
        .unwrap()
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

#[test]
fn the_html_page_shows_the_cn_comparison_and_the_top_rows_the_terminal_shows() {
    let dir = temp_dir("sim-html-terminal");
    let report = dir.join("r");
    let r = report.to_str().unwrap();
    let out = run(&["sim", "four-bridge-cn", "--report", r]);
    let text = String::from_utf8(out.stdout).unwrap();
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(text.contains("PFC with CN vs the same run without CN"), "{text}");
    assert!(
        page_summary(&html).contains("PFC with CN vs the same run without CN"),
        "the page has the terminal's comparison"
    );
    // --top 3: the page cuts its tables as the terminal does
    let out = run(&[
        "sim",
        "incast",
        "--set",
        "senders=48",
        "--top",
        "3",
        "--report",
        r,
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let page = page_summary(&html);
    assert!(text.contains("top 3 port priorities by time paused"), "{text}");
    assert!(page.contains("top 3 port priorities by time paused"), "{page}");
    assert!(!page.contains("top 10 "), "{page}");
    assert!(
        text.starts_with(&page) || text.contains(&page),
        "the page's summary is the terminal's"
    );
}
