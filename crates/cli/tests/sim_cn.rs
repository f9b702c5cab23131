//! `lossless sim` on a scenario with congestion notification runs its twin without it and
//! says how much less PFC fired (summary and `--json`); `--no-twin` and scenarios without
//! congestion notification run alone.

#[path = "cli_support/mod.rs"]
mod support;

use lossless_testkit::temp_dir;
use support::*;

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn four_bridge_cn_says_how_much_less_pfc_fired_than_its_twin_without_cn() {
    let dir = temp_dir("sim-cn-twin");
    let out = dir.join("r.json");
    let o = run(&["sim", "four-bridge-cn", "--json", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("PFC with CN vs the same run without CN: "))
        .unwrap_or_else(|| panic!("no comparison line in\n{text}"));
    let r = json(&out);
    let e = &r["cn_effect"];
    let with = e["pfc_xoff_sent_frames"].as_u64().unwrap();
    let without = e["pfc_xoff_sent_without_cn_frames"].as_u64().unwrap();
    // the line states the JSON's figures, and CN made PFC fire less
    assert!(
        line.contains(&format!("{with} vs {without} XOFF frames")),
        "{line}"
    );
    assert!(with < without, "{line}");
    assert!(e["pfc_xoff_reduction_ratio"].as_f64().unwrap() > 0.5, "{e}");
    // the victim flow gets more with CN than its twin got without
    let victim = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "victim")
        .expect("a victim flow");
    let got = victim["throughput_bps"].as_u64().unwrap();
    let twin = victim["throughput_without_cn_bps"].as_u64().unwrap();
    assert!(got > twin, "victim {got} b/s with CN, {twin} without");
}

#[test]
fn no_twin_and_scenarios_without_cn_run_alone() {
    let dir = temp_dir("sim-cn-alone");
    for (args, name) in [
        (
            &["four-bridge-cn", "--no-twin", "--duration", "1ms"][..],
            "cn.json",
        ),
        (&["four-bridge", "--duration", "1ms"][..], "pfc.json"),
    ] {
        let out = dir.join(name);
        let mut a = vec!["sim"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--json", out.to_str().unwrap()]);
        let o = run(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains("without CN"), "{args:?}:\n{text}");
        let r = json(&out);
        assert!(r.get("cn_effect").is_none_or(|v| v.is_null()), "{args:?}");
        for f in r["flows"].as_array().unwrap() {
            assert!(
                f.get("throughput_without_cn_bps").is_none_or(|v| v.is_null()),
                "{args:?}: {f}"
            );
        }
    }
}
