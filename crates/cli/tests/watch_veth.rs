//! `lossless gen` → `lossless watch` across a veth pair in network namespaces: exact counts per
//! priority and transitions, a storm detected after the detection time and restored after the
//! restoration time, Prometheus metrics, totals on SIGTERM; and the speed/interface errors.

#[path = "dcbx_support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::{Pair, gen_in, lossless, ready};

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn slot<'a>(totals: &'a Value, name: &str) -> &'a Value {
    totals["slots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["slot"] == name)
        .unwrap()
}

#[test]
fn watch_counts_gen_exactly_and_detects_and_restores_the_storm_in_time() {
    let test = "watch_counts_gen_exactly_and_detects_and_restores_the_storm_in_time";
    if !ready(test, &["ip", "python3"]) {
        return;
    }
    let mut p = Pair::new("wt");
    assert!(
        Command::new("ip")
            .args(["-n", &p.b, "link", "set", "lo", "up"])
            .status()
            .unwrap()
            .success()
    );
    let (b, ib) = (p.b.clone(), p.ib.clone());
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
            "0.2",
            "--duration",
            "20",
            "--prometheus",
            "127.0.0.1:9808",
        ],
        "watch.log",
    );
    p.wait_for(Duration::from_secs(10), "watch to start", || {
        p.log("watch.log").contains("watching").then_some(())
    });
    // 400 XOFF at 1000/s on p3 (65535 quanta = 33.5 ms at 1G, so a late sender does not end
    // the pause: paused ~0.43 s), XON on p6.
    gen_in(
        &p,
        &["--prio", "3=65535", "--prio", "6=0", "-n", "400", "-r", "1000"],
    );
    gen_in(&p, &["-p", "8", "-t", "0", "-n", "1"]);
    // Link PAUSE of 1000 quanta (512 µs at 1G) every 10 ms: five separate pauses.
    gen_in(&p, &["-g", "-t", "1000", "-n", "5", "-r", "100"]);
    p.wait_for(Duration::from_secs(5), "the storm to be restored", || {
        p.log("watch.log").contains("storm_restored").then_some(())
    });
    std::thread::sleep(Duration::from_millis(300));
    let metrics = p.exec(
        &b,
        &["python3", "-c", "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:9808/metrics').read().decode())"],
    );
    let metrics = String::from_utf8_lossy(&metrics.stdout).into_owned();
    assert!(
        metrics.contains(&format!(
            "lossless_xoff_frames_total{{iface=\"{ib}\",slot=\"p3\"}} 400"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "lossless_storms_restored_total{{iface=\"{ib}\",slot=\"p3\"}} 1"
        )),
        "{metrics}"
    );
    assert!(p.terminate(w).success());

    let lines = json_lines(&p.log("watch.log"));
    let totals = &lines
        .iter()
        .find(|l| l.get("totals").is_some())
        .expect("totals printed on SIGTERM")["totals"];
    let p3 = slot(totals, "p3");
    assert_eq!(
        (
            p3["frames"].as_u64(),
            p3["xoff_frames"].as_u64(),
            p3["xon_frames"].as_u64()
        ),
        (Some(401), Some(400), Some(1)),
        "{p3}"
    );
    assert_eq!(
        (p3["xoff_transitions"].as_u64(), p3["xon_transitions"].as_u64()),
        (Some(1), Some(1)),
        "{p3}"
    );
    let p6 = slot(totals, "p6");
    assert_eq!(
        (
            p6["xon_frames"].as_u64(),
            p6["xoff_transitions"].as_u64(),
            p6["paused_s"].as_f64()
        ),
        (Some(400), Some(0), Some(0.0)),
        "{p6}"
    );
    let pause = slot(totals, "pause");
    assert_eq!(
        (
            pause["xoff_frames"].as_u64(),
            pause["xoff_transitions"].as_u64(),
            pause["xon_transitions"].as_u64()
        ),
        (Some(5), Some(5), Some(5)),
        "{pause}"
    );
    assert!(
        (pause["paused_s"].as_f64().unwrap() - 5.0 * 512e-6).abs() < 1e-9,
        "{pause}"
    );
    for s in ["p0", "p1", "p2", "p4", "p5", "p7"] {
        assert_eq!(slot(totals, s)["frames"].as_u64(), Some(0));
    }
    assert_eq!(totals["malformed"].as_u64(), Some(0));
    // p3 paused ~0.43 s (399 ms of frames + 33.5 ms), give or take scheduling of the sender.
    let paused = p3["paused_s"].as_f64().unwrap();
    assert!((0.41..0.48).contains(&paused), "{paused}");

    let events: Vec<&Value> = lines.iter().filter(|l| l.get("event").is_some()).collect();
    assert_eq!(events.len(), 2, "{events:?}");
    let (d, r) = (events[0], events[1]);
    assert_eq!(
        (d["event"].as_str(), d["slot"].as_str()),
        (Some("storm_detected"), Some("p3"))
    );
    assert_eq!(
        (r["event"].as_str(), r["slot"].as_str()),
        (Some("storm_restored"), Some("p3"))
    );
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    // Detected at pause start + 200 ms, restored at pause end + 200 ms: the two are the paused
    // time apart; each observed within the 10 ms polling period + the 10 ms tick lag (plus
    // scheduling slack).
    assert!(
        (f(r, "at_s") - f(d, "at_s") - paused).abs() < 1e-6,
        "{d} {r} {paused}"
    );
    for e in [d, r] {
        let late = f(e, "observed_s") - f(e, "at_s");
        assert!((0.0..0.07).contains(&late), "{e}");
    }
}

#[test]
fn watch_on_an_interface_without_speed_says_to_give_it() {
    if !ready("watch_on_an_interface_without_speed_says_to_give_it", &["ip"]) {
        return;
    }
    // This kernel's veth reports 10000 Mb/s; loopback reports none.
    let p = Pair::new("ws");
    assert!(
        Command::new("ip")
            .args(["-n", &p.b, "link", "set", "lo", "up"])
            .status()
            .unwrap()
            .success()
    );
    let out = p.exec(&p.b, &[lossless(), "watch", "-i", "lo", "--duration", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no link speed") && err.contains("--speed"), "{err}");
}

#[test]
fn watch_names_a_missing_interface() {
    let out = Command::new(lossless())
        .args(["watch", "-i", "nosuchif7", "--speed", "10G"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nosuchif7") && err.contains("does not exist"),
        "{err}"
    );
}

#[test]
fn watch_prints_its_totals_when_the_interface_goes_down_or_is_deleted() {
    const TEST: &str = "watch_prints_its_totals_when_the_interface_goes_down_or_is_deleted";
    if !ready(TEST, &["ip"]) {
        return;
    }
    for (change, says) in [("down", "went down"), ("deleted", "was deleted")] {
        let mut p = Pair::new("wd");
        let (b, ib) = (p.b.clone(), p.ib.clone());
        let log = format!("watch-{change}.log");
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
                "0.1",
            ],
            &log,
        );
        p.wait_for(Duration::from_secs(10), "watch to start", || {
            p.log(&log).contains("watching").then_some(())
        });
        gen_in(&p, &["-p", "8", "-n", "40", "-r", "2000"]);
        p.wait_for(Duration::from_secs(10), "watch to count the frames", || {
            p.log(&log).contains("\"frames\":40").then_some(())
        });
        let ip: &[&str] = if change == "down" {
            &["-n", &b, "link", "set", &ib, "down"]
        } else {
            &["-n", &b, "link", "del", &ib]
        };
        assert!(Command::new("ip").args(ip).status().unwrap().success());
        let status = p.wait_exit(w, Duration::from_secs(10));
        let text = p.log(&log);
        assert_eq!(status.code(), Some(1), "{change}: {text}");
        let totals: Value = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v.get("totals").cloned())
            .unwrap_or_else(|| panic!("{change}: no totals in {text}"));
        assert_eq!(slot(&totals, "p3")["frames"], 40, "{change}: {totals}");
        let error = format!("error: interface {ib} {says}");
        assert!(text.contains(&error), "{change}: {error:?} in {text}");
        assert!(!text.contains("bring it up"), "{change}: {text}");
    }
}
