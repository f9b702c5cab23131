//! `lossless analyze` on a tcpdump capture of `lossless gen`'s frames finds the same totals
//! as `lossless watch` did on the same link at the same time; `--report` writes HTML and SVG.

#[path = "dcbx_support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::{Pair, gen_in, lossless, ready};

#[test]
fn analyze_of_a_tcpdump_capture_matches_watch_on_the_same_link() {
    let test = "analyze_of_a_tcpdump_capture_matches_watch_on_the_same_link";
    if !ready(test, &["ip", "tcpdump"]) {
        return;
    }
    let mut p = Pair::new("an");
    let (b, ib) = (p.b.clone(), p.ib.clone());
    let pcap = p.dir.join("link.pcap");
    // A small snaplen and a 16 MB buffer: libpcap sizes ring slots by the snaplen, and the
    // default 256 KiB slots in a 2 MB ring drop frames of an unpaced burst.
    let td = p.spawn(
        &b,
        &[
            "tcpdump",
            "-n",
            "-U",
            "--immediate-mode",
            "-s",
            "256",
            "-B",
            "16384",
            "--time-stamp-precision=nano",
            "-i",
            &ib,
            "-w",
            pcap.to_str().unwrap(),
            "ether",
            "proto",
            "0x8808",
        ],
        "tcpdump.log",
    );
    let w = p.spawn(
        &b,
        &[
            lossless(),
            "watch",
            "-i",
            &ib,
            "--speed",
            "1G",
            "--json",
            "--interval",
            "100",
            "--duration",
            "30",
        ],
        "watch.log",
    );
    p.wait_for(Duration::from_secs(10), "tcpdump and watch to start", || {
        (p.log("tcpdump.log").contains("listening on") && p.log("watch.log").contains("watching"))
            .then_some(())
    });
    // p1: a storm; p2: 200 quanta = 102.4 µs pauses, so frames sent back to back (the rate
    // control catching up) merge and frames ~1 ms apart do not — far from the few µs by which
    // tcpdump's and the watcher's kernel timestamps of the same frame can differ.
    gen_in(
        &p,
        &["--prio", "1=65535", "--prio", "2=200", "-n", "300", "-r", "1000"],
    );
    gen_in(&p, &["-p", "2", "-t", "0", "-n", "3"]);
    gen_in(
        &p,
        &[
            "-g",
            "-t",
            "500",
            "-n",
            "20",
            "-r",
            "200",
            "--src",
            "02:00:00:00:00:99",
        ],
    );
    p.wait_for(Duration::from_secs(5), "the storm to be restored", || {
        p.log("watch.log").contains("storm_restored").then_some(())
    });
    // A pcap records no end time: one last frame shows the analysis that time has passed.
    gen_in(&p, &["-p", "1", "-t", "0", "-n", "1"]);
    std::thread::sleep(Duration::from_millis(300));
    p.terminate(td);
    assert!(p.terminate(w).success());
    let watch: Vec<Value> = p
        .log("watch.log")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // what the watcher received (rx); it sent nothing
    let watched = &watch.iter().find(|l| l.get("totals").is_some()).unwrap()["totals"]["rx"];

    let report = p.dir.join("report");
    let out = Command::new(lossless())
        .args(["analyze", "--speed", "1G", "--json", "--report"])
        .arg(&report)
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    let analyzed = &a["totals"];
    assert_eq!(
        analyzed["frames"],
        watched["frames"],
        "tcpdump: {}",
        p.log("tcpdump.log")
    );
    assert_eq!(analyzed["frames"].as_u64(), Some(324));
    for i in 0..9 {
        let (x, y) = (&analyzed["slots"][i], &watched["slots"][i]);
        for k in [
            "slot",
            "frames",
            "xoff_frames",
            "xon_frames",
            "xoff_transitions",
            "xon_transitions",
            "quanta",
            "storms_detected",
            "storms_restored",
        ] {
            assert_eq!(x[k], y[k], "{k}: analyze {x} watch {y}");
        }
        // Kernel capture timestamps vs the watcher's receive clock: within a few ms.
        let d = x["paused_s"].as_f64().unwrap() - y["paused_s"].as_f64().unwrap();
        assert!(d.abs() < 0.01, "paused_s: analyze {x} watch {y}");
    }
    assert_eq!(analyzed["slots"][1]["storms_detected"].as_u64(), Some(1));
    assert_eq!(a["storms"].as_array().unwrap().len(), 1);
    assert_eq!(analyzed["top_talkers"][0]["frames"].as_u64(), Some(304));
    assert_eq!(
        analyzed["top_talkers"][1]["source"].as_str(),
        Some("02:00:00:00:00:99")
    );
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains("paused.svg") && html.contains("<td>p1</td><td>303</td>"),
        "{html}"
    );
    for svg in ["paused.svg", "frames.svg"] {
        let s = std::fs::read_to_string(report.join(svg)).unwrap();
        assert!(s.starts_with("<svg") || s.contains("<svg"), "{svg}");
    }
}

#[test]
fn analyze_of_a_missing_file_names_it() {
    let out = Command::new(lossless())
        .args(["analyze", "--speed", "10G", "/nonexistent/x.pcap"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/nonexistent/x.pcap"), "{err}");
}
