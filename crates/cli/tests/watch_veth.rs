//! `lossless gen` → `lossless watch` across a veth pair in network namespaces: exact counts per
//! priority and transitions, a storm detected after the detection time and restored after the
//! restoration time, Prometheus metrics, totals on SIGTERM; `gen --storm` (a stuck NIC)
//! declared a storm by watch's pfcwd within detection + poll, the same NIC with mlx5's storm
//! prevention stopped before pfcwd declares anything, pauses both ways a deadlock suspicion;
//! and the speed/interface errors.

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

/// The received (rx) counters of slot `name` in a snapshot or the totals.
fn slot<'a>(totals: &'a Value, name: &str) -> &'a Value {
    totals["rx"]["slots"]
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
            "lossless_xoff_frames_total{{iface=\"{ib}\",direction=\"rx\",slot=\"p3\"}} 400"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "lossless_storms_restored_total{{iface=\"{ib}\",direction=\"rx\",slot=\"p3\"}} 1"
        )),
        "{metrics}"
    );
    // pfcwd (200 ms polls) saw the 0.43 s pause too, under SONiC's counter names
    assert!(
        metrics.contains(&format!(
            "lossless_pfc_wd_queue_stats_deadlock_restored{{iface=\"{ib}\",direction=\"rx\",slot=\"p3\"}} 1"
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
    assert_eq!(totals["rx"]["malformed"].as_u64(), Some(0));
    // p3 paused ~0.43 s (399 ms of frames + 33.5 ms), give or take scheduling of the sender.
    let paused = p3["paused_s"].as_f64().unwrap();
    assert!((0.41..0.48).contains(&paused), "{paused}");

    let events: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "storm_detected" || l["event"] == "storm_restored")
        .collect();
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

/// The speed at which the storm tests time pauses: 65535 quanta are 335 ms at 100 Mb/s, so a
/// generator descheduled for up to a few hundred ms (a loaded test machine) does not break a
/// storm into several (the veth itself has no speed).
const STORM_SPEED: &str = "100M";

/// Starts `lossless watch` on the pair's `ib` (namespace b) at [`STORM_SPEED`] with JSON
/// lines, and waits until it listens.
fn start_watch(p: &mut Pair, log: &str, extra: &[&str]) -> usize {
    let (b, ib) = (p.b.clone(), p.ib.clone());
    let mut args = vec![
        lossless(),
        "watch",
        "-i",
        &ib,
        "--speed",
        STORM_SPEED,
        "--json",
        "--interval",
        "0.1",
        "--duration",
        "30",
    ];
    args.extend_from_slice(extra);
    let w = p.spawn(&b, &args, log);
    p.wait_for(Duration::from_secs(10), "watch to start", || {
        p.log(log).contains("watching").then_some(())
    });
    w
}

fn events<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == kind).collect()
}

fn totals(lines: &[Value]) -> &Value {
    &lines
        .iter()
        .find(|l| l.get("totals").is_some())
        .expect("totals printed on SIGTERM")["totals"]
}

fn verdict<'a>(totals: &'a Value, name: &str) -> &'a Value {
    totals["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["slot"] == name)
        .unwrap()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[test]
fn a_stuck_nic_from_gen_storm_is_a_storm_to_watchs_pfcwd_within_detection_plus_poll() {
    let test = "a_stuck_nic_from_gen_storm_is_a_storm_to_watchs_pfcwd_within_detection_plus_poll";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("wn");
    let w = start_watch(&mut p, "watch.log", &[]);
    // A stuck NIC for 1.5 s, 10 frames per pause time (33.5 ms apart at 100 Mb/s).
    gen_in(
        &p,
        &[
            "--prio",
            "3=65535",
            "--storm",
            "--speed",
            STORM_SPEED,
            "--oversubscription",
            "10",
            "-d",
            "1.5",
        ],
    );
    p.wait_for(Duration::from_secs(10), "pfcwd to restore", || {
        p.log("watch.log").contains("\"event\":\"restore\"").then_some(())
    });
    assert!(p.terminate(w).success());
    let lines = json_lines(&p.log("watch.log"));
    let storms = events(&lines, "storm");
    assert_eq!(storms.len(), 1, "{storms:?}");
    let s = storms[0];
    assert_eq!(
        (s["slot"].as_str(), s["direction"].as_str()),
        (Some("p3"), Some("rx")),
        "{s}"
    );
    assert_eq!(s["deadlock_suspected"], false, "{s}");
    // SONiC (default 200 ms detection and poll): detected once T_storm > T_detect + T_poll,
    // and not before the detection time (less the 1 % the 99 % rule tolerates). These are the
    // kernel's stamps of the frames and pfcwd's poll instants: load cannot move them.
    let late = f(s, "at_s") - f(s, "paused_since_s");
    assert!((0.198..=0.4 + 1e-9).contains(&late), "{s}");
    // restored T_restore..T_restore + T_poll after the last frame
    let r = events(&lines, "restore");
    assert_eq!(r.len(), 1, "{r:?}");
    let quiet = f(r[0], "at_s") - f(r[0], "last_frame_s");
    assert!((0.2..=0.4 + 1e-9).contains(&quiet), "{}", r[0]);
    assert!(f(r[0], "at_s") > f(s, "at_s"));
    // and nothing else is a storm or a deadlock
    assert!(events(&lines, "deadlock_suspected").is_empty());
    let t = totals(&lines);
    let v = verdict(t, "p3");
    assert_eq!(
        (
            v["rx"]["pfc_wd_status"].as_str(),
            v["rx"]["pfc_wd_queue_stats_deadlock_detected"].as_u64(),
            v["rx"]["pfc_wd_queue_stats_deadlock_restored"].as_u64(),
            v["tx"]["pfc_wd_queue_stats_deadlock_detected"].as_u64(),
            v["verdict"].as_str(),
        ),
        (Some("operational"), Some(1), Some(1), Some(0), Some("ok")),
        "{v}"
    );
    for other in ["p0", "p1", "p2", "p4", "p5", "p6", "p7", "pause"] {
        assert_eq!(
            verdict(t, other)["rx"]["pfc_wd_queue_stats_deadlock_detected"].as_u64(),
            Some(0),
            "{other}"
        );
    }
    // paused the whole 1.5 s (+ the last frame's 335 ms), in one pause
    let p3 = slot(t, "p3");
    assert_eq!(p3["xoff_transitions"].as_u64(), Some(1), "{p3}");
    let paused = f(p3, "paused_s");
    assert!((1.8..2.5).contains(&paused), "{p3}");
}

#[test]
fn storm_prevention_stops_the_stuck_nic_at_its_timeout_before_pfcwd_declares_a_storm() {
    let test = "storm_prevention_stops_the_stuck_nic_at_its_timeout_before_pfcwd_declares_a_storm";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("wp");
    let w = start_watch(&mut p, "watch.log", &[]);
    let out = p.exec(
        &p.a,
        &[
            lossless(),
            "gen",
            "-i",
            &p.ia,
            // 10000 quanta: 51.2 ms at 100 Mb/s; 40 frames per 65535 quanta: 8.4 ms apart
            "--prio",
            "3=10000",
            "--storm",
            "--speed",
            STORM_SPEED,
            "--oversubscription",
            "40",
            "--prevention-tout",
            "auto",
            "-d",
            "5",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let g: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pr = &g["prevention"];
    // mlx5's auto: timeout 100 ms, warning at max(80 ms, 85 %) = 85 ms, each counted once
    assert_eq!((f(pr, "timeout_ms"), f(pr, "warning_ms")), (100.0, 85.0), "{g}");
    assert_eq!(
        (
            pr["tx_pause_storm_warning_events"].as_u64(),
            pr["tx_pause_storm_error_events"].as_u64(),
            pr["stopped"].as_bool()
        ),
        (Some(1), Some(1), Some(true)),
        "{g}"
    );
    let ev = pr["events"].as_array().unwrap();
    assert_eq!(ev.len(), 2, "{g}");
    assert_eq!(
        (ev[0]["event"].as_str(), f(&ev[0], "at_s")),
        (Some("tx_pause_storm_warning"), 0.085)
    );
    assert_eq!(
        (ev[1]["event"].as_str(), f(&ev[1], "at_s")),
        (Some("tx_pause_storm_error"), 0.1)
    );
    for e in ev {
        assert!(f(e, "observed_s") >= f(e, "at_s"), "{e}");
    }
    // the run ended at the timeout, not at -d 5
    let elapsed = f(&g, "elapsed_s");
    assert!((0.1..2.0).contains(&elapsed), "{g}");
    std::thread::sleep(Duration::from_millis(800));
    assert!(p.terminate(w).success());
    let lines = json_lines(&p.log("watch.log"));
    // the pause lasted ~100 ms + the last frame's 51.2 ms: below pfcwd's 200 ms
    assert!(events(&lines, "storm").is_empty(), "{}", p.log("watch.log"));
    assert!(events(&lines, "storm_detected").is_empty());
    let t = totals(&lines);
    let p3 = slot(t, "p3");
    let sent = g["interfaces"][0]["sent"].as_u64().unwrap();
    assert_eq!(p3["xoff_frames"].as_u64(), Some(sent), "{p3}");
    assert_eq!(p3["xoff_transitions"].as_u64(), Some(1), "{p3}");
    let paused = f(p3, "paused_s");
    assert!(paused >= 0.1 && paused < elapsed + 0.052, "{p3} {g}");
}

#[test]
fn pauses_both_ways_on_a_priority_are_a_deadlock_suspicion_and_pfcwd_storms_are_flagged() {
    let test = "pauses_both_ways_on_a_priority_are_a_deadlock_suspicion_and_pfcwd_storms_are_flagged";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("wk");
    let w = start_watch(&mut p, "watch.log", &[]);
    // this side pauses the peer (through the qdisc layer, so the kernel's tap sees it) while
    // the peer pauses this side, both 2 s on priority 4
    let (b, ib) = (p.b.clone(), p.ib.clone());
    let ours = p.spawn(
        &b,
        &[
            lossless(),
            "gen",
            "-i",
            &ib,
            "--prio",
            "4=65535",
            "--storm",
            "--speed",
            STORM_SPEED,
            "--oversubscription",
            "10",
            "-d",
            "2",
            "--no-qdisc-bypass",
        ],
        "gen-b.log",
    );
    gen_in(
        &p,
        &[
            "--prio",
            "4=65535",
            "--storm",
            "--speed",
            STORM_SPEED,
            "--oversubscription",
            "10",
            "-d",
            "2",
        ],
    );
    let status = p.wait_exit(ours, Duration::from_secs(20));
    assert!(status.success(), "{}", p.log("gen-b.log"));
    p.wait_for(Duration::from_secs(10), "the suspicion to clear", || {
        p.log("watch.log").contains("deadlock_cleared").then_some(())
    });
    assert!(p.terminate(w).success());
    let lines = json_lines(&p.log("watch.log"));
    let d = events(&lines, "deadlock_suspected");
    assert_eq!(d.len(), 1, "{}", p.log("watch.log"));
    assert_eq!(d[0]["slot"], "p4");
    // raised the deadlock time (= detection, 200 ms) after both directions were paused
    assert!(
        (f(d[0], "at_s") - f(d[0], "paused_since_s") - 0.2).abs() < 1e-9,
        "{}",
        d[0]
    );
    let c = events(&lines, "deadlock_cleared");
    assert_eq!(c.len(), 1);
    // the two 2 s storms overlapped for over a second
    assert!(
        f(c[0], "at_s") - f(d[0], "paused_since_s") > 1.0,
        "{} {}",
        d[0],
        c[0]
    );
    // pfcwd stormed both directions, as SONiC would (it cannot tell), each flagged
    let s = events(&lines, "storm");
    let dirs: Vec<_> = s
        .iter()
        .map(|e| (e["slot"].as_str(), e["direction"].as_str()))
        .collect();
    assert_eq!(s.len(), 2, "{s:?}");
    assert!(
        dirs.contains(&(Some("p4"), Some("rx"))) && dirs.contains(&(Some("p4"), Some("tx"))),
        "{s:?}"
    );
    // flagged when the suspicion was up at that poll (the later-starting direction's storm
    // always is: it needs the detection time, which equals the deadlock time here)
    for e in &s {
        let up = f(e, "at_s") >= f(d[0], "at_s") - 1e-9;
        assert_eq!(e["deadlock_suspected"], up, "{e} {}", d[0]);
    }
    assert!(s.iter().any(|e| e["deadlock_suspected"] == true), "{s:?}");
    // a snapshot during the overlap said so
    assert!(
        lines
            .iter()
            .filter_map(|l| l.get("snapshot"))
            .any(|s| verdict(s, "p4")["verdict"] == "deadlock_suspected"),
        "no snapshot with the suspicion"
    );
    let t = totals(&lines);
    assert_eq!(verdict(t, "p4")["deadlock_suspected_total"].as_u64(), Some(1));
    let tx = &t["tx"]["slots"].as_array().unwrap()[4];
    assert_eq!(tx["xoff_transitions"].as_u64(), Some(1), "{tx}");
}
