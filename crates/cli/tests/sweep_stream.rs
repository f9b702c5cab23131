//! `lossless sim --sweep` streams: one flushed JSON line per finished point, memory that does
//! not grow with the number of points, and a stop (SIGINT, SIGTERM, a closed standard output)
//! that keeps the finished points and says how many were not run.

#[path = "cli_support/mod.rs"]
mod support;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lossless_testkit::temp_dir;
use serde_json::Value;
use support::*;

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

/// The sweep's temporary output in `dir`, if it exists yet.
fn temporary(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tmp"))
}

/// Complete lines of a file (a line being written is not counted).
fn complete_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.matches('\n').count())
}

fn points_of(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("every kept line is whole JSON");
            v["point"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn a_sweep_writes_each_finished_point_at_once_and_a_signal_keeps_them() {
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        let dir = temp_dir("sweep-signal");
        let child = spawn_in(
            &dir,
            &[
                "sim",
                "incast",
                "--duration",
                "300us",
                "--sweep",
                "seed=1..=400",
                "--jobs",
                "2",
                "-q",
                "--json",
                "s.jsonl",
                "--report",
                "rpt",
            ],
        );
        // lines reach the disk while the sweep runs, not at its end
        let start = Instant::now();
        while temporary(&dir).map_or(0, |t| complete_lines(&t)) < 3 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no finished point reached the disk"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let ok = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let o = wait_bounded(child, Duration::from_secs(30), "the interrupted sweep");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{sig}: {err}");
        let kept = points_of(&dir.join("s.jsonl"));
        assert!(kept.len() >= 3, "{kept:?}");
        let mut sorted = kept.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), kept.len(), "each point once: {kept:?}");
        // in point order (up to a point a signal stopped, after which any finished are added)
        assert_eq!(kept[..3], [0, 1, 2], "{kept:?}");
        let said = format!(
            "interrupted: {} of 400 points not run; the {} finished are kept in s.jsonl",
            400 - kept.len(),
            kept.len()
        );
        assert!(err.contains(&said), "{said:?} in {err}");
        assert!(temporary(&dir).is_none(), "the temporary file is gone");
        // the page has the same points: a table row each
        let page = std::fs::read_to_string(dir.join("rpt/index.html")).expect("the sweep's page");
        let table = &page[page.find("<section id=\"sweep-points\">").expect("its table")..];
        assert_eq!(
            table.matches("<tr><th>").count(),
            1 + kept.len(),
            "header and a row per point"
        );
    }
}

#[test]
fn a_closed_standard_output_stops_a_sweep_and_keeps_its_finished_points() {
    let dir = temp_dir("sweep-closed");
    let mut child = spawn_in(
        &dir,
        &[
            "sim",
            "incast",
            "--duration",
            "100us",
            "--sweep",
            "seed=1..=400",
            "--jobs",
            "1",
            "--json",
            "s.jsonl",
        ],
    );
    // as `| head -3`: the two header lines and one row, then the reader goes away
    let mut out = BufReader::new(child.stdout.take().unwrap());
    for _ in 0..3 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
    }
    drop(out);
    let o = wait_bounded(child, Duration::from_secs(60), "the sweep after its reader left");
    let err = stderr(&o);
    assert_no_panic(o.status, &err, "sweep | head -3");
    assert!(o.status.success(), "{err}");
    let kept = points_of(&dir.join("s.jsonl"));
    assert!(!kept.is_empty() && kept.len() < 400, "{} kept", kept.len());
    assert!(err.contains("standard output closed:"), "{err}");
    assert!(
        err.contains(&format!("{} of 400 points not run", 400 - kept.len())),
        "{err}"
    );
}

/// Runs `lossless ARGS` and returns its peak resident memory (VmHWM), KiB, read until it ends.
fn peak_kib(args: &[&str]) -> u64 {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if let Some(v) = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(v);
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "{args:?} did not finish"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    peak
}

#[test]
fn a_sweep_s_memory_does_not_grow_with_its_points() {
    let dir = temp_dir("sweep-memory");
    let f = dir.join("s.jsonl");
    let f = f.to_str().unwrap();
    let run = |n: u32| {
        let points = format!("seed=1..={n}");
        peak_kib(&[
            "sim",
            "two-chip",
            "--duration",
            "1us",
            "-q",
            "--jobs",
            "2",
            "--sweep",
            &points,
            "--json",
            f,
        ])
    };
    let (small, large) = (run(200), run(2000));
    assert_eq!(complete_lines(Path::new(f)), 2000);
    // each point's report and scenario held to the end would add about 8 KiB per point
    assert!(
        large < small + 4096,
        "200 points: {small} KiB, 2000 points: {large} KiB at the peak"
    );
}
