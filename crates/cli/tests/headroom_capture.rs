//! `lossless analyze`'s headroom on a capture the simulator wrote, where the answer is known:
//! the worst case of `lossless headroom --verify`, both directions of a sender's link merged
//! by mergecap (one interface per direction), the sender's side shifted by editcap to the
//! instant its frames reach the switch — a capture taken at the XOFF's sender. There the
//! bytes that kept arriving after the XOFF left are the headroom the bisection found less the
//! trigger frame, which arrived before the switch decided.

use std::path::Path;
use std::process::Command;

use lossless_proto::headroom::PeerDelay;
use lossless_proto::units::{Duration, Rate};
use lossless_sim::Simulator;
use lossless_sim::experiments::headroom::verify::{Setup, verify};
use lossless_sim::experiments::headroom::worst_case::{config, plan};
use lossless_sim::trace::pcap::PcapSink;
use lossless_testkit::{require, temp_dir};
use serde_json::Value;

fn analyze(file: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["analyze", "--speed", "100G", "--json"])
        .arg(file)
        .output()
        .expect("run lossless analyze");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn analyze_finds_the_verified_headroom_less_the_trigger_in_a_simulated_capture() {
    let name = "analyze_finds_the_verified_headroom_less_the_trigger_in_a_simulated_capture";
    let (Some(editcap), Some(mergecap)) = (require("editcap", name), require("mergecap", name)) else {
        return;
    };
    let rate = Rate::from_gbps(100);
    let setup = Setup {
        rate,
        cable_m: 100,
        mtu: 9216,
        lossless_mtu: 9216,
        // a whole number of nanoseconds one way (500 + 200 ns), which editcap can shift by
        interface_delay: Duration::from_ns(200),
        peer_delay: PeerDelay::Ieee8023.duration(rate),
        priority: 3,
        senders: 1,
        reverse_traffic: false,
    };
    let v = verify(&setup, &mut |_| {}).expect("verifies");
    let needed = v.phases[0].needed_bytes;
    let cfg = config(&setup, &plan(&setup).unwrap(), v.headroom_bytes);
    let dir = temp_dir("headroom-capture");
    let sink = PcapSink::create(&dir, &cfg).expect("pcap files");
    let mut sim = Simulator::with_observer(cfg, sink).expect("builds");
    sim.run();
    sim.observer_mut().finish().expect("pcap written");
    let data = dir.join("s0.0-to-switch.pcapng");
    let control = dir.join("switch.0-to-s0.pcapng");
    let shifted = dir.join("s0-at-switch.pcapng");
    let both = dir.join("both.pcapng");
    let st = Command::new(editcap)
        .args(["-t", "0.000000700"])
        .arg(&data)
        .arg(&shifted)
        .status()
        .unwrap();
    assert!(st.success(), "editcap");
    let st = Command::new(mergecap)
        .arg("-w")
        .arg(&both)
        .arg(&shifted)
        .arg(&control)
        .status()
        .unwrap();
    assert!(st.success(), "mergecap");

    let j = analyze(&both);
    let h = &j["headroom"];
    assert_eq!(h["directions"], "interfaces", "{h}");
    let slots = h["slots"].as_array().unwrap();
    assert_eq!(slots.len(), 1, "{h}");
    let p3 = &slots[0];
    assert_eq!(p3["slot"], "p3");
    assert_eq!(p3["episodes_total"], 1, "one XOFF and its refreshes: {p3}");
    assert_eq!(p3["max_bytes"].as_u64().unwrap(), needed - v.frame_bytes, "{p3}");

    // the same figures in the text and in the HTML report
    let report = dir.join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["analyze", "--speed", "100G", "--report"])
        .arg(&report)
        .arg(&both)
        .output()
        .expect("run lossless analyze --report");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want = needed - v.frame_bytes;
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("headroom after each XOFF (the other direction's frames"),
        "{text}"
    );
    assert!(text.contains(&format!("   p3         1 {want:>12}")), "{text}");
    let html = std::fs::read_to_string(report.join("index.html")).expect("index.html");
    assert!(
        html.contains("<h2>Headroom needed after each XOFF</h2>"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<tr><td>p3</td><td>1</td><td>{want}</td><td>{want}</td>"
        )),
        "{html}"
    );

    // the XOFFs alone, one interface: an episode in which nothing could be seen arriving
    let j = analyze(&control);
    assert_eq!(j["headroom"]["directions"], "unknown");
    assert_eq!(j["headroom"]["slots"][0]["max_bytes"], 0);
}
