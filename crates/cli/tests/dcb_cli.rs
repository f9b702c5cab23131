//! `lossless dcb`: iproute2 dcb's command line, its errors said with what is allowed, and a
//! veth (no dcbnl operations in its driver) reported plainly with exit 2 (root only; skipped
//! loudly otherwise). No kernel here has a DCB-capable device: the bytes sent are pinned in
//! `crates/live/tests/dcbnl.rs` against what iproute2's dcb sends.

use std::process::{Command, Output};

fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("run lossless")
}

#[test]
fn a_bad_priority_is_refused_with_the_range_and_exit_2() {
    let out = lossless(&["dcb", "pfc", "set", "dev", "eth0", "prio-pfc", "9:on"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("prio-pfc: priority \"9\" is out of range: allowed 0..=7"),
        "{err}"
    );
}

#[test]
fn an_apptrust_order_naming_a_selector_twice_is_refused_with_exit_2() {
    let out = lossless(&["dcb", "apptrust", "set", "dev", "eth0", "order", "pcp", "pcp"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("apptrust set: order: pcp given twice: each selector once"),
        "{err}"
    );
}

#[test]
fn help_teaches_the_dcb_vocabulary() {
    let out = lossless(&["dcb", "--help"]);
    assert!(out.status.success());
    let t = String::from_utf8_lossy(&out.stdout);
    for s in [
        "prio-pfc PRIO:on|off",
        "tc-tsa TC:TSA",
        "dscp-prio DSCP:PRIO",
        "apptrust set dev IF order [SELECTOR ...]",
        "ethtype, stream-port, dgram-port, port, dscp, pcp",
        "no DCB",
    ] {
        assert!(t.contains(s), "{s} missing from:\n{t}");
    }
}

struct Veth(String);
impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).status();
    }
}

#[test]
fn a_veth_is_said_to_have_no_dcb_support_for_show_and_set() {
    if !lossless_testkit::require_root("a_veth_is_said_to_have_no_dcb_support_for_show_and_set") {
        return;
    }
    let pid = std::process::id();
    let a = format!("ldc{pid}a");
    let st = Command::new("ip")
        .args([
            "link",
            "add",
            &a,
            "type",
            "veth",
            "peer",
            "name",
            &format!("ldc{pid}b"),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let v = Veth(a);
    let want = format!(
        "error: {} has no DCB support in its driver (dcbnl: Operation not supported);",
        v.0
    );
    for args in [
        vec!["dcb", "show", "dev", &v.0],
        vec!["dcb", "--json", "ets", "show", "dev", &v.0],
        vec!["dcb", "pfc", "set", "dev", &v.0, "prio-pfc", "3:on"],
        vec!["dcb", "app", "add", "dev", &v.0, "dscp-prio", "26:3"],
        vec!["dcb", "apptrust", "show", "dev", &v.0],
        vec![
            "dcb", "--json", "apptrust", "set", "dev", &v.0, "order", "dscp", "pcp",
        ],
    ] {
        let out = lossless(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(&want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = lossless(&["dcb", "show", "dev", "nosuchif0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no interface named nosuchif0"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn dcbx_run_apply_on_a_veth_refuses_to_start_and_says_why() {
    if !lossless_testkit::require_root("dcbx_run_apply_on_a_veth_refuses_to_start_and_says_why") {
        return;
    }
    let pid = std::process::id();
    let a = format!("ldx{pid}a");
    let st = Command::new("ip")
        .args([
            "link",
            "add",
            &a,
            "type",
            "veth",
            "peer",
            "name",
            &format!("ldx{pid}b"),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let v = Veth(a);
    assert!(
        Command::new("ip")
            .args(["link", "set", &v.0, "up"])
            .status()
            .unwrap()
            .success()
    );
    let dir = std::env::temp_dir().join(format!("ldx{pid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["dcbx", "run", "--iface", &v.0, "--apply", "--state"])
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "--apply: {} has no DCB support in its driver (dcbnl: Operation not supported)",
            v.0
        )),
        "{err}"
    );
    assert!(!state.exists(), "no state written before refusing");
    let _ = std::fs::remove_dir_all(&dir);
}
