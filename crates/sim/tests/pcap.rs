//! The pcap sink writes real frames: tshark decodes the PFC frames of `four-bridge` with the
//! lossless priority's enable bit, the PAUSE frames of `two-chip` with the pause-time
//! register, data frames with the flow's 802.1Q PCP, and the DCBX LLDPDUs of `dcbx-adopt`
//! with the switch's Willing bits, PFC enable and ETS tables.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::pcap::PcapSink;
use lossless_sim::{Report, Simulator};
use lossless_testkit::{require, temp_dir, tshark_fields};

fn capture(name: &str, dir: &std::path::Path, duration: Duration) -> Report {
    let c = common::load(name, &[], Some(duration));
    let sink = PcapSink::create(dir, &c).unwrap();
    let mut sim = Simulator::with_observer(c, sink).unwrap();
    sim.run();
    sim.observer_mut().finish().unwrap();
    Report::collect(&sim)
}

#[test]
fn tshark_finds_pfc_frames_with_the_lossless_priority_enabled() {
    let Some(tshark) = require(
        "tshark",
        "tshark_finds_pfc_frames_with_the_lossless_priority_enabled",
    ) else {
        return;
    };
    let dir = temp_dir("sim-pcap-four-bridge");
    let r = capture("four-bridge", &dir, Duration::from_us(300));
    let sent = r
        .port("bridge4", "bridge1")
        .unwrap()
        .priorities
        .iter()
        .find(|q| q.priority == 3)
        .unwrap();
    let rows = tshark_fields(
        &tshark,
        &dir.join("bridge4.0-to-bridge1.pcapng"),
        &[
            "macc.opcode",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c3",
            "eth.dst",
        ],
        &["-Y", "macc"],
    );
    assert_eq!(
        rows.len() as u64,
        sent.pfc_xoff_sent_frames + sent.pfc_xon_sent_frames
    );
    assert!(!rows.is_empty());
    let mut xoff = 0;
    for row in &rows {
        assert_eq!(row[0], "0x0101", "{row:?}");
        assert_eq!(row[1], "0x0008", "only priority 3 is enabled: {row:?}");
        assert_eq!(row[3], "01:80:c2:00:00:01");
        if row[2] == "65535" {
            xoff += 1;
        } else {
            assert_eq!(row[2], "0", "{row:?}");
        }
    }
    assert_eq!(xoff, sent.pfc_xoff_sent_frames);
    // data frames carry their priority in the 802.1Q PCP
    let data = tshark_fields(
        &tshark,
        &dir.join("client1.0-to-bridge1.pcapng"),
        &["vlan.priority"],
        &["-c", "200"],
    );
    let pcps: std::collections::BTreeSet<&str> = data.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(pcps, ["0", "3"].into_iter().collect());
}

#[test]
fn tshark_reads_two_chip_pause_frames_at_their_exact_times() {
    let Some(tshark) = require(
        "tshark",
        "tshark_reads_two_chip_pause_frames_at_their_exact_times",
    ) else {
        return;
    };
    let dir = temp_dir("sim-pcap-two-chip");
    capture("two-chip", &dir, Duration::from_us(300));
    let rows = tshark_fields(
        &tshark,
        &dir.join("module_a.0-to-module_b.pcapng"),
        &["frame.time_epoch", "macc.opcode", "macc.pause_time", "frame.len"],
        &[],
    );
    let got: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[2].as_str(), r[3].as_str()))
        .collect();
    // Wireshark keeps nanoseconds: 36.2144 µs shows as 0.000036214
    let want = [
        ("0.000010000", "1024", "60"),
        ("0.000036214", "1024", "60"),
        ("0.000050000", "0", "60"),
        ("0.000150000", "1024", "60"),
        ("0.000176214", "1024", "60"),
    ];
    assert_eq!(got, want);
    for r in &rows {
        assert_eq!(r[1], "0x0001", "PAUSE opcode: {r:?}");
    }
}

#[test]
fn tshark_decodes_the_dcbx_lldpdus_of_dcbx_adopt() {
    let Some(tshark) = require("tshark", "tshark_decodes_the_dcbx_lldpdus_of_dcbx_adopt") else {
        return;
    };
    let dir = temp_dir("sim-pcap-dcbx-adopt");
    let r = capture("dcbx-adopt", &dir, Duration::from_us(30));
    let sent = r
        .port("tor", "sender1")
        .unwrap()
        .dcbx
        .as_ref()
        .unwrap()
        .lldp_sent_frames;
    // the switch: not willing (ETS Configuration and PFC TLVs), PFC on priority 3 only,
    // priority 3 in TC 1 at 50 % (ETS Configuration and Recommendation TLVs)
    let rows = tshark_fields(
        &tshark,
        &dir.join("tor.0-to-sender1.pcapng"),
        &[
            "eth.type",
            "eth.dst",
            "lldp.dcbx.ieee.willing",
            "lldp.dcbx.feature.pfc.prio3",
            "lldp.dcbx.feature.pfc.prio4",
            "lldp.dcbx.feature.pg.pgid_prio3",
            "lldp.dcbx.feature.pg.per1",
        ],
        &["-Y", "lldp"],
    );
    assert_eq!(rows.len() as u64, sent, "{rows:?}");
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(
            row,
            &["0x88cc", "01:80:c2:00:00:0e", "0,0", "1", "0", "1,1", "50,50"],
            "{row:?}"
        );
    }
    // a host: willing, nothing enabled
    let rows = tshark_fields(
        &tshark,
        &dir.join("sender1.0-to-tor.pcapng"),
        &["lldp.dcbx.ieee.willing", "lldp.dcbx.feature.pfc.prio3"],
        &["-Y", "lldp"],
    );
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[0] == "1,1"), "{rows:?}");
}
