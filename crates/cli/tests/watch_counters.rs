//! `lossless watch` and the kernel's pause counters on a veth (root only; skipped loudly
//! otherwise): a veth has no pause counter in `ethtool -S` and no pause statistics
//! (ETHTOOL_MSG_PAUSE_GET: EOPNOTSUPP), and watch says plainly that only frames are seen, in
//! the log, the table and the JSON; `--no-counters` reads none. The counter mapping and pfcwd
//! on counters are pinned in `crates/live/tests/kernel_counters.rs`.

use std::process::{Command, Output};

use serde_json::Value;

struct Veth(String);
impl Veth {
    fn new(tag: &str) -> Veth {
        let pid = std::process::id();
        let a = format!("lw{tag}{pid}a");
        let b = format!("lw{tag}{pid}b");
        let ip = |args: &[&str]| assert!(Command::new("ip").args(args).status().unwrap().success());
        ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]);
        ip(&["link", "set", &a, "up"]);
        ip(&["link", "set", &b, "up"]);
        Veth(a)
    }
}
impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).status();
    }
}

fn watch(iface: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "watch",
        "-i",
        iface,
        "--duration",
        "0.5",
        "--poll-ms",
        "100",
        "--detection-ms",
        "100",
        "--restoration-ms",
        "100",
    ];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(&args)
        .output()
        .expect("run lossless watch")
}

#[test]
fn on_a_veth_watch_says_only_frames_are_seen_and_why() {
    let test = "on_a_veth_watch_says_only_frames_are_seen_and_why";
    if !lossless_testkit::require_root(test) {
        return;
    }
    let v = Veth::new("c");
    let out = watch(&v.0, &["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{} (driver veth): the kernel gives no pause counters",
            v.0
        )) && err.contains("ETHTOOL_MSG_PAUSE_GET: Operation not supported")
            && err.contains("only frames are seen"),
        "{err}"
    );
    let totals: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l.get("totals").is_some())
        .expect("totals");
    let k = &totals["kernel_counters"];
    assert_eq!(k["only_frames_seen"], true, "{k}");
    assert_eq!(k["driver"], "veth");
    assert_eq!(k["slots"].as_array().map(Vec::len), Some(0));
    assert!(
        k["pfcwd"].as_str().unwrap().starts_with("not run on counters"),
        "{k}"
    );

    let out = watch(&v.0, &[]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(" statistics, none a pause counter of a known driver")
            && text.contains("kernel counters: none (ethtool -S: "),
        "{text}"
    );
    assert!(
        text.contains("every figure above from frames seen on the taps"),
        "{text}"
    );
}

#[test]
fn no_counters_reads_no_counter() {
    if !lossless_testkit::require_root("no_counters_reads_no_counter") {
        return;
    }
    let v = Veth::new("n");
    let out = watch(&v.0, &["--json", "--no-counters"]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("kernel gives no pause counters"));
    let totals: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l.get("totals").is_some())
        .expect("totals");
    assert!(totals["kernel_counters"].is_null());
}
