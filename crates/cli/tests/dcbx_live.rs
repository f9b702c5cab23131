//! `lossless dcbx run/show` on a veth pair between two network namespaces: our agent against
//! our agent, SIGTERM sending the shutdown LLDPDU, and the errors for a missing or down
//! interface and a missing CAP_NET_RAW.

mod dcbx_support;

use std::process::Command;
use std::time::Duration;

use dcbx_support::{Pair, example, lossless, ready, spawn_agent};

#[test]
fn willing_host_adopts_the_switch_pfc_and_shutdown_on_sigterm_reaches_the_host() {
    let test = "willing_host_adopts_the_switch_pfc_and_shutdown_on_sigterm_reaches_the_host";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("lv");
    let (sw_state, host_state) = (p.dir.join("sw.json"), p.dir.join("host.json"));
    let sw_cfg = example("switch-pfc3.toml");
    let host_cfg = example("host-willing.toml");
    let (a, b, ia, ib) = (p.a.clone(), p.b.clone(), p.ia.clone(), p.ib.clone());
    let sw = spawn_agent(&mut p, &a, &ia, &sw_cfg, &sw_state, "sw.log");
    spawn_agent(&mut p, &b, &ib, &host_cfg, &host_state, "host.log");
    let show = |p: &Pair, json: bool| {
        let mut args = vec![
            lossless(),
            "dcbx",
            "show",
            "--iface",
            &ib,
            "--state",
            host_state.to_str().unwrap(),
        ];
        if json {
            args.push("--json");
        }
        p.exec(&b, &args)
    };
    let v: serde_json::Value = p.wait_for(Duration::from_secs(10), "host to adopt PFC priority 3", || {
        let out = show(&p, true);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        (v["operational"]["pfc"]["params"]["enable"] == 8).then_some(v)
    });
    assert_eq!(v["operational"]["pfc"]["source"], "peer");
    assert_eq!(v["operational"]["ets"]["source"], "peer");
    assert_eq!(
        v["operational"]["ets"]["params"]["tcbw"],
        serde_json::json!([50, 50, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(v["remote"]["pfc"]["willing"], false);
    assert!(v["statistics"]["frames_in_total"].as_u64().unwrap() >= 1);
    let human = String::from_utf8_lossy(&show(&p, false).stdout).into_owned();
    assert!(human.contains("operational: PFC enable [3] (peer)"), "{human}");
    assert!(
        p.log("host.log").contains("operational changed"),
        "changes are logged"
    );

    let st = p.terminate(sw);
    assert!(
        st.success(),
        "switch agent exits 0 on SIGTERM: {st:?}\n{}",
        p.log("sw.log")
    );
    assert!(p.log("sw.log").contains("shutdown LLDPDU (TTL 0) sent"));
    assert!(!sw_state.exists(), "state file removed on exit");
    p.wait_for(Duration::from_secs(5), "host to see the shutdown LLDPDU", || {
        p.log("host.log")
            .contains("shutdown LLDPDU received")
            .then_some(())
    });
    let out = show(&p, true);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["remote"].is_null(),
        "peer removed at once, not after its TTL: {v}"
    );
}

#[test]
fn both_unwilling_and_disagreeing_leaves_pfc_not_operational_and_says_why() {
    let test = "both_unwilling_and_disagreeing_leaves_pfc_not_operational_and_says_why";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("nd");
    let state = p.dir.join("b.json");
    let (a, b, ia, ib) = (p.a.clone(), p.b.clone(), p.ia.clone(), p.ib.clone());
    let sw = example("switch-pfc3.toml");
    let other = example("unwilling-pfc4.toml");
    p.spawn(
        &a,
        &[
            lossless(),
            "dcbx",
            "run",
            "--iface",
            &ia,
            "--config",
            sw.to_str().unwrap(),
            "--state",
            p.dir.join("a.json").to_str().unwrap(),
        ],
        "a.log",
    );
    spawn_agent(&mut p, &b, &ib, &other, &state, "b.log");
    let human = p.wait_for(Duration::from_secs(10), "PFC not operational", || {
        let out = p.exec(
            &b,
            &[
                lossless(),
                "dcbx",
                "show",
                "--iface",
                &ib,
                "--state",
                state.to_str().unwrap(),
            ],
        );
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        s.contains("NOT operational").then_some(s)
    });
    assert!(human.contains("[4]") && human.contains("[3]"), "{human}");
}

#[test]
fn missing_interface_is_named() {
    let out = Command::new(lossless())
        .args(["dcbx", "run", "--iface", "nosuchif7", "--config"])
        .arg(example("host-willing.toml"))
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
fn down_interface_is_named() {
    if !ready("down_interface_is_named", &["ip"]) {
        return;
    }
    let p = Pair::new("dn");
    assert!(
        Command::new("ip")
            .args(["-n", &p.a, "link", "set", &p.ia, "down"])
            .status()
            .unwrap()
            .success()
    );
    let cfg = example("host-willing.toml");
    let out = p.exec(
        &p.a,
        &[
            lossless(),
            "dcbx",
            "run",
            "--iface",
            &p.ia,
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("interface {} is down", p.ia)), "{err}");
}

#[test]
fn without_cap_net_raw_the_error_names_the_capability() {
    let test = "without_cap_net_raw_the_error_names_the_capability";
    if !ready(test, &["setpriv"]) {
        return;
    }
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ])
        .arg(lossless())
        .args(["dcbx", "run", "--iface", "lo", "--config"])
        .arg(example("host-willing.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("CAP_NET_RAW") && err.contains("lo"), "{err}");
}

#[test]
fn show_without_a_running_agent_says_so() {
    let dir = lossless_testkit::temp_dir("dcbx-show-none");
    let out = Command::new(lossless())
        .args(["dcbx", "show", "--iface", "eth9", "--state"])
        .arg(dir.join("none.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("eth9") && err.contains("lossless dcbx run"), "{err}");
}

#[test]
fn bad_config_names_the_file_and_field() {
    let dir = lossless_testkit::temp_dir("dcbx-bad-config");
    let f = dir.join("bad.toml");
    std::fs::write(&f, "[dcbx.pfc]\nenable = [9]\n").unwrap();
    let out = Command::new(lossless())
        .args(["dcbx", "run", "--iface", "lo", "--config"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("bad.toml") && err.contains("pfc.enable"), "{err}");
}

#[test]
fn agent_survives_its_interface_going_down_and_resumes_when_it_comes_back() {
    let test = "agent_survives_its_interface_going_down_and_resumes_when_it_comes_back";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("ld");
    let cfg = p.dir.join("fast.toml");
    std::fs::write(&cfg, "[dcbx.pfc]\nenable = [2]\n").unwrap();
    let state = p.dir.join("b.json");
    let (a, b, ia, ib) = (p.a.clone(), p.b.clone(), p.ia.clone(), p.ib.clone());
    let agent = p.spawn(
        &a,
        &[
            lossless(),
            "dcbx",
            "run",
            "--iface",
            &ia,
            "--config",
            cfg.to_str().unwrap(),
            "--state",
            p.dir.join("a.json").to_str().unwrap(),
        ],
        "a.log",
    );
    let host = example("host-willing.toml");
    spawn_agent(&mut p, &b, &ib, &host, &state, "b.log");
    let frames_in = |p: &Pair| {
        let out = p.exec(
            &b,
            &[
                lossless(),
                "dcbx",
                "show",
                "--json",
                "--iface",
                &ib,
                "--state",
                state.to_str().unwrap(),
            ],
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .ok()
            .and_then(|v| v["statistics"]["frames_in_total"].as_u64())
    };
    p.wait_for(Duration::from_secs(10), "first LLDPDUs", || {
        frames_in(&p).filter(|&n| n >= 1)
    });
    assert!(
        Command::new("ip")
            .args(["-n", &a, "link", "set", &ia, "down"])
            .status()
            .unwrap()
            .success()
    );
    p.wait_for(
        Duration::from_secs(10),
        "the agent to notice the interface is down",
        || p.log("a.log").contains("interface is down").then_some(()),
    );
    let before = frames_in(&p).unwrap();
    assert!(
        Command::new("ip")
            .args(["-n", &a, "link", "set", &ia, "up"])
            .status()
            .unwrap()
            .success()
    );
    p.wait_for(Duration::from_secs(10), "LLDPDUs again after link-up", || {
        frames_in(&p).filter(|&n| n > before)
    });
    let st = p.terminate(agent);
    assert!(st.success(), "{}", p.log("a.log"));
}

#[test]
fn auto_host_falls_back_to_cee_against_a_cee_switch_and_adopts_its_pfc() {
    let test = "auto_host_falls_back_to_cee_against_a_cee_switch_and_adopts_its_pfc";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("ce");
    let state = p.dir.join("host.json");
    let (a, b, ia, ib) = (p.a.clone(), p.b.clone(), p.ia.clone(), p.ib.clone());
    let sw = example("switch-cee.toml");
    let host = example("host-willing.toml");
    p.spawn(
        &a,
        &[
            lossless(),
            "dcbx",
            "run",
            "--iface",
            &ia,
            "--config",
            sw.to_str().unwrap(),
            "--state",
            p.dir.join("sw.json").to_str().unwrap(),
        ],
        "sw.log",
    );
    spawn_agent(&mut p, &b, &ib, &host, &state, "host.log");
    let v: serde_json::Value = p.wait_for(Duration::from_secs(10), "CEE handshake and adoption", || {
        let out = p.exec(
            &b,
            &[
                lossless(),
                "dcbx",
                "show",
                "--json",
                "--iface",
                &ib,
                "--state",
                state.to_str().unwrap(),
            ],
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        (v["operational"]["cee_synced"] == true && v["operational"]["pfc"]["params"]["enable"] == 8)
            .then_some(v)
    });
    assert_eq!(v["mode"], "cee");
    assert_eq!(
        v["operational"]["ets"]["params"]["tcbw"],
        serde_json::json!([60, 40, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(v["remote"]["cee"]["pfc"]["willing"], false);
    assert!(p.log("host.log").contains("mode changed: Cee"));
}

/// Runs `lossless ARGS` with at most 1 GiB of address space (so an unbounded read fails fast
/// instead of eating the machine's memory).
fn lossless_bounded(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576; exec \"$0\" \"$@\"")
        .arg(lossless())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn config_and_state_that_are_devices_or_too_large_are_refused_before_reading() {
    let dir = lossless_testkit::temp_dir("dcbx-bounded");
    let big = dir.join("big.toml");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(lossless_live::dcbx::CONFIG_LIMIT + 1)
        .unwrap();
    let big_state = dir.join("big.json");
    std::fs::File::create(&big_state)
        .unwrap()
        .set_len(lossless_live::dcbx::STATE_LIMIT + 1)
        .unwrap();
    let big = big.to_str().unwrap();
    let big_state = big_state.to_str().unwrap();
    for (args, want) in [
        (
            vec!["dcbx", "run", "--iface", "lo", "--config", "/dev/zero"],
            "dcbx config /dev/zero: is a character device, not a regular file".to_owned(),
        ),
        (
            vec!["dcbx", "run", "--iface", "lo", "--config", big],
            format!("dcbx config {big}: larger than the 1048576 bytes allowed"),
        ),
        (
            vec!["dcbx", "show", "--iface", "lo", "--state", "/dev/zero"],
            "state file /dev/zero: is a character device, not a regular file".to_owned(),
        ),
        (
            vec!["dcbx", "show", "--iface", "lo", "--state", big_state],
            format!("state file {big_state}: larger than the 4194304 bytes allowed"),
        ),
    ] {
        let out = lossless_bounded(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim(), format!("error: {want}"), "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_dcbx_config_error_says_its_text_once() {
    let dir = lossless_testkit::temp_dir("dcbx-error-once");
    let cases = [
        (
            "type.toml",
            "[dcbx.pfc]\nenable = 3\n",
            "invalid type: integer `3`, expected a sequence",
        ),
        ("syntax.toml", "[dcbx.pfc\n", "TOML parse error at line 1"),
        (
            "field.toml",
            "[dcbx.pfc]\nenabled = [3]\n",
            "unknown field `enabled`",
        ),
        (
            "value.toml",
            "[dcbx.pfc]\nenable = [9]\n",
            "priority 9 is not 0..=7",
        ),
        ("timer.toml", "[lldp]\ntx_credit_max = 0\n", "txCreditMax"),
    ];
    for (name, text, what) in cases {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let out = Command::new(lossless())
            .args(["dcbx", "run", "--iface", "lo", "--config"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.matches(what).count(), 1, "{name}: said once: {err}");
        assert_eq!(err.matches(name).count(), 1, "{name}: file named once: {err}");
    }
    let missing = dir.join("missing.toml");
    let out = Command::new(lossless())
        .args(["dcbx", "run", "--iface", "lo", "--config"])
        .arg(&missing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_config_the_agent_runs_as_a_willing_host_and_says_so() {
    let test = "without_config_the_agent_runs_as_a_willing_host_and_says_so";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("nc");
    let (a, b, ia, ib) = (p.a.clone(), p.b.clone(), p.ia.clone(), p.ib.clone());
    let sw = example("switch-pfc3.toml");
    let sw_state = p.dir.join("sw.json");
    spawn_agent(&mut p, &a, &ia, &sw, &sw_state, "sw.log");
    let state = p.dir.join("host.json");
    let state_arg = state.to_str().unwrap().to_owned();
    p.spawn(
        &b,
        &[lossless(), "dcbx", "run", "--iface", &ib, "--state", &state_arg],
        "host.log",
    );
    let v: serde_json::Value = p.wait_for(Duration::from_secs(10), "host to adopt PFC priority 3", || {
        let out = p.exec(
            &b,
            &[
                lossless(),
                "dcbx",
                "show",
                "--json",
                "--iface",
                &ib,
                "--state",
                &state_arg,
            ],
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        (v["operational"]["pfc"]["params"]["enable"] == 8).then_some(v)
    });
    assert_eq!(v["operational"]["pfc"]["source"], "peer");
    assert_eq!(v["operational"]["ets"]["source"], "peer");
    assert_eq!(v["local"]["pfc"]["willing"], true);
    assert_eq!(v["local"]["ets"]["willing"], true);
    let log = p.log("host.log");
    assert!(
        log.contains("no --config: running as a willing host with nothing configured"),
        "{log}"
    );
}

#[test]
fn a_second_agent_on_the_same_state_file_refuses_to_start_and_names_the_first() {
    let test = "a_second_agent_on_the_same_state_file_refuses_to_start_and_names_the_first";
    if !ready(test, &["ip"]) {
        return;
    }
    let mut p = Pair::new("lk");
    let (a, ia) = (p.a.clone(), p.ia.clone());
    let state = p.dir.join("a.json");
    let state_arg = state.to_str().unwrap().to_owned();
    let args = [lossless(), "dcbx", "run", "--iface", &ia, "--state", &state_arg];
    let first = p.spawn(&a, &args, "first.log");
    p.wait_for(Duration::from_secs(10), "the first agent's state file", || {
        state.exists().then_some(())
    });
    let out = p.exec(&a, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let pid = p.pid(first);
    assert!(
        err.contains(&format!(
            "in use by another `lossless dcbx run` (pid {pid} on {ia}"
        )),
        "{err}"
    );
    assert!(!err.contains("shutdown LLDPDU"), "the second never ran: {err}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(state.exists(), "the first agent's state file is left alone");
    let st = p.terminate(first);
    assert!(st.success(), "{}", p.log("first.log"));
    assert!(!state.exists(), "removed by its own agent on exit");
}
