//! The agent configuration files: every example parses and validates, mistakes are named
//! with the file and the field, and the default without a file is the willing-host example.

use std::path::{Path, PathBuf};

use lossless_live::dcbx::FileConfig;
use lossless_proto::dcbx::{ModeSetting, TsaName};
use lossless_proto::units::Duration;

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dcbx");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_config_loads_and_builds_an_agent() {
    let files = examples();
    assert!(files.len() >= 4, "{files:?}");
    for f in files {
        let cfg = FileConfig::load(&f).unwrap_or_else(|e| panic!("{e}"));
        let agent = cfg.agent_config([2, 0, 0, 0, 0, 1], "eth0").unwrap();
        lossless_proto::dcbx::Agent::new(agent, cfg.dcbx).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    }
}

#[test]
fn switch_example_holds_the_documented_values() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dcbx/switch-pfc3.toml");
    let cfg = FileConfig::load(&f).unwrap();
    assert_eq!(cfg.dcbx.mode, ModeSetting::Ieee);
    assert_eq!(cfg.dcbx.pfc.params().enable, 1 << 3);
    assert_eq!(cfg.dcbx.ets.params.tsa[1], TsaName::Ets);
    assert_eq!(cfg.dcbx.app[0].protocol, 4791);
    let a = cfg.agent_config([2; 6], "eth1").unwrap();
    assert_eq!(a.timers.msg_tx_interval, Duration::from_secs(30));
    assert_eq!(a.timers.ttl_secs(), 121);
    assert_eq!(a.port_name.as_deref(), Some("eth1"));
}

fn load_text(name: &str, text: &str) -> String {
    let dir = lossless_testkit::temp_dir("dcbx-config");
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    FileConfig::load(&f).unwrap_err().to_string()
}

#[test]
fn mistakes_name_the_file_and_the_field() {
    let e = load_text("typo.toml", "[dcbx.pfc]\nenabled = [3]\n");
    assert!(e.contains("typo.toml") && e.contains("enabled"), "{e}");
    let e = load_text(
        "tsa.toml",
        "[dcbx.ets]\nup2tc=[0,0,0,0,0,0,0,0]\ntcbw=[100,0,0,0,0,0,0,0]\ntsa=[\"fair\",\"ets\",\"ets\",\"ets\",\"ets\",\"ets\",\"ets\",\"ets\"]\n",
    );
    assert!(e.contains("tsa.toml") && e.contains("fair"), "{e}");
    let e = load_text(
        "bw.toml",
        "[dcbx.ets]\nup2tc=[0,0,0,0,0,0,0,0]\ntcbw=[10,0,0,0,0,0,0,0]\ntsa=[\"ets\",\"ets\",\"ets\",\"ets\",\"ets\",\"ets\",\"ets\",\"ets\"]\n",
    );
    assert!(e.contains("bw.toml") && e.contains("tcbw sums to 10%"), "{e}");
    let e = load_text("timer.toml", "[lldp]\ntx_credit_max = 0\n");
    assert!(e.contains("timer.toml") && e.contains("txCreditMax"), "{e}");
    let e = load_text("policy.toml", "[lldp]\ntoo_many_neighbours = \"drop\"\n");
    assert!(
        e.contains("too_many_neighbours") && e.contains("discard-new"),
        "{e}"
    );
    let e = load_text("mode.toml", "[dcbx]\nmode = \"cin\"\n");
    assert!(e.contains("mode.toml") && e.contains("cin"), "{e}");
}

#[test]
fn an_lldp_timer_error_names_its_key_line_value_and_range_not_another_timer() {
    // each timer's own key, line, value and minimum: none of them ends with another timer's
    // rule ("1 s for msgTxInterval")
    for (text, key, line, found, allowed) in [
        (
            "[lldp]\ntx_hold = 4\ntx_credit_max = 0\n",
            "tx_credit_max",
            3,
            "found 0",
            "at least 1",
        ),
        (
            "# c\n[lldp]\ntx_interval_s = 0\n",
            "tx_interval_s",
            3,
            "found 0",
            "at least 1 (seconds)",
        ),
        (
            "[lldp]\nfast_tx_ms = 0\n",
            "fast_tx_ms",
            2,
            "found 0",
            "at least 1 (milliseconds)",
        ),
        (
            "[dcbx]\n[lldp]\n\ntx_hold = 0\n",
            "tx_hold",
            4,
            "found 0",
            "at least 1",
        ),
        (
            "[lldp]\ntx_fast_init=0\n",
            "tx_fast_init",
            2,
            "found 0",
            "at least 1",
        ),
        (
            "[lldp]\nmax_neighbours = 0\n",
            "max_neighbours",
            2,
            "found 0",
            "at least 1",
        ),
    ] {
        let e = load_text("t.toml", text);
        assert!(
            e.contains(&format!("t.toml:{line}: lldp.{key}")) && e.contains(found) && e.contains(allowed),
            "{text:?}: {e}"
        );
        assert!(!e.contains("1 s for msgTxInterval"), "{e}");
    }
    let long = format!("[lldp]\nsystem_name = \"{}\"\n", "x".repeat(300));
    let e = load_text("name.toml", &long);
    assert!(
        e.contains("name.toml:2: lldp.system_name") && e.contains("300 bytes"),
        "{e}"
    );
}

#[test]
fn a_dcbx_value_error_names_its_line() {
    let e = load_text(
        "pfc.toml",
        "[lldp]\ntx_hold = 4\n\n[dcbx.pfc]\nwilling = false\nenable = [3, 9]\n",
    );
    assert!(e.contains("pfc.toml:6: ") && e.contains("pfc.enable"), "{e}");
    let e = load_text("cap.toml", "[dcbx.pfc]\ncap = 9\n");
    assert!(e.contains("cap.toml:2: ") && e.contains("pfc.cap"), "{e}");
    let e = load_text("tcs.toml", "[dcbx]\nmode = \"ieee\"\n[dcbx.ets]\nmax_tcs = 0\n");
    assert!(e.contains("tcs.toml:4: ") && e.contains("ets.max_tcs"), "{e}");
}

#[test]
fn the_default_without_config_is_the_willing_host_example() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dcbx/host-willing.toml");
    let mut example = FileConfig::load(&f).unwrap();
    assert_eq!(example.lldp.system_name.as_deref(), Some("host"));
    example.lldp.system_name = None;
    assert_eq!(FileConfig::willing_host(), example);
}

#[test]
fn errors_carry_no_cause_that_repeats_their_text() {
    use std::error::Error;
    let dir = lossless_testkit::temp_dir("dcbx-config-source");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[dcbx.pfc]\nenable = 3\n").unwrap();
    for path in [bad.clone(), dir.join("missing.toml"), PathBuf::from("/dev/zero")] {
        let e = FileConfig::load(&path).unwrap_err();
        assert!(e.source().is_none(), "{}: {e}", path.display());
        assert!(e.to_string().contains(path.to_str().unwrap()), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
