//! The pcap sink writes real frames: tshark decodes the PFC frames of `four-bridge` with the
//! lossless priority's enable bit, the PAUSE frames of `two-chip` with the pause-time
//! register, data frames with the flow's 802.1Q PCP, and the DCBX LLDPDUs of `dcbx-adopt`
//! with the switch's Willing bits, PFC enable and ETS tables.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::trace::pcap::PcapSink;
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

#[test]
fn tshark_decodes_the_rocev2_data_acks_cnps_and_ce_marks_of_incast_dcqcn() {
    let Some(tshark) = require(
        "tshark",
        "tshark_decodes_the_rocev2_data_acks_cnps_and_ce_marks_of_incast_dcqcn",
    ) else {
        return;
    };
    let dir = temp_dir("sim-pcap-incast-dcqcn");
    let c = common::load("incast-dcqcn", &["senders=2"], Some(Duration::from_us(100)));
    let sink = PcapSink::create(&dir, &c).unwrap();
    let mut sim = Simulator::with_observer(c, sink).unwrap();
    sim.run();
    sim.observer_mut().finish().unwrap();
    let r = Report::collect(&sim);
    // sender1's data: RC SEND First/Middle/Last opcodes, PSNs 0, 1, 2, ... to QP 0 (the flow),
    // UDP 4791, priority 3, ECT(0), 1090-byte frames (1024 + 66) without their FCS
    let rows = tshark_fields(
        &tshark,
        &dir.join("sender1.0-to-tor.pcapng"),
        &[
            "infiniband.bth.opcode",
            "infiniband.bth.psn",
            "infiniband.bth.destqp",
            "udp.dstport",
            "vlan.priority",
            "ip.dsfield.ecn",
            "frame.len",
        ],
        &[],
    );
    let f = r.flow("qp:sender1").unwrap();
    assert_eq!(rows.len() as u64, f.sent_frames);
    for (k, row) in rows.iter().enumerate() {
        assert!(["0", "1"].contains(&row[0].as_str()), "{row:?}");
        assert_eq!(row[1], k.to_string(), "PSNs in order: {row:?}");
        assert_eq!(&row[2..], ["0x000000", "4791", "3", "2", "1086"], "{row:?}");
    }
    // the switch marked some of them CE on the congested port
    let marked = tshark_fields(
        &tshark,
        &dir.join("tor.2-to-receiver.pcapng"),
        &["ip.dsfield.ecn"],
        &["-Y", "ip.dsfield.ecn == 3"],
    );
    let port_marks: u64 = r
        .port("tor", "receiver")
        .unwrap()
        .cn
        .as_ref()
        .unwrap()
        .priorities
        .iter()
        .map(|q| q.ecn_marked_frames)
        .sum();
    assert!(port_marks > 0);
    assert_eq!(marked.len() as u64, port_marks);
    // the receiver's ACKs (opcode 17, AETH syndrome 31 = ACK) on priority 3 and CNPs (opcode
    // 129, BECN, DSCP 48) on priority 6
    let rows = tshark_fields(
        &tshark,
        &dir.join("receiver.0-to-tor.pcapng"),
        &[
            "infiniband.bth.opcode",
            "vlan.priority",
            "ip.dsfield.dscp",
            "infiniband.aeth.syndrome",
        ],
        &[],
    );
    let acks = rows.iter().filter(|r| r[0] == "17").count() as u64;
    let cnps: Vec<_> = rows.iter().filter(|r| r[0] == "129").collect();
    let qps: Vec<_> = r.flows.iter().map(|f| f.qp.as_ref().unwrap()).collect();
    assert_eq!(acks, qps.iter().map(|q| q.replies_sent_frames).sum::<u64>());
    assert_eq!(
        cnps.len() as u64,
        qps.iter().map(|q| q.cnps_sent_total).sum::<u64>()
    );
    assert!(!cnps.is_empty());
    assert!(cnps.iter().all(|c| c[1] == "6" && c[2] == "48"), "{cnps:?}");
    assert!(
        rows.iter()
            .filter(|r| r[0] == "17")
            .all(|a| a[1] == "3" && a[3] == "31")
    );
}

#[test]
fn every_frame_of_incast_dcqcn_is_captured_whole_and_decodes_clean_in_tshark() {
    let test = "every_frame_of_incast_dcqcn_is_captured_whole_and_decodes_clean_in_tshark";
    let Some(tshark) = require("tshark", test) else {
        return;
    };
    let dir = temp_dir("sim-pcap-incast-dcqcn-whole");
    let r = capture("incast-dcqcn", &dir, Duration::from_us(60));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2 * 9, "a file per link direction: {files:?}");
    let (mut data, mut frames) = (0u64, 0u64);
    for file in &files {
        // -N m: name the MAC addresses as Wireshark would (manuf and wka), nothing else
        let rows = tshark_fields(
            &tshark,
            file,
            &[
                "frame.len",
                "frame.cap_len",
                "_ws.col.Info",
                "_ws.col.Protocol",
                "infiniband.bth.opcode",
                "infiniband.bth.psn",
                "eth.src",
                "eth.src_resolved",
                "eth.dst",
                "eth.dst_resolved",
                "ip.len",
            ],
            &["-N", "m"],
        );
        for row in &rows {
            frames += 1;
            assert_eq!(
                row[0], row[1],
                "captured whole (frame.len, frame.cap_len): {file:?} {row:?}"
            );
            // a cut RoCEv2 frame was "Invalid Packet Length from LRH! [Malformed Packet]" in
            // the summary line (tshark says it there, not in the fields of the tree)
            assert!(
                !row[2].contains("Malformed") && !row[2].contains("Invalid"),
                "decoded clean: {file:?} {row:?}"
            );
            assert_eq!(row[3], "RRoCE", "{file:?} {row:?}");
            assert!(!row[4].is_empty(), "a RoCEv2 BTH decoded: {file:?} {row:?}");
            assert!(!row[5].is_empty(), "its PSN: {file:?} {row:?}");
            // every host address names nothing: resolved, it is the address itself
            assert_eq!(row[6], row[7], "source names nothing: {file:?} {row:?}");
            assert_eq!(row[8], row[9], "destination names nothing: {file:?} {row:?}");
            assert!(row[6].starts_with("12:00:"), "{row:?}");
            // IPv4's total length + 14 (Ethernet) + 4 (802.1Q) = the frame
            assert_eq!(
                row[10].parse::<u64>().unwrap() + 18,
                row[0].parse::<u64>().unwrap(),
                "{row:?}"
            );
            if ["0", "1", "2", "4"].contains(&row[4].as_str()) {
                data += 1;
            }
        }
    }
    // every frame the QPs sent is there, decoded
    let sent: u64 = r.flows.iter().map(|f| f.sent_frames).sum();
    assert!(sent > 100, "{sent}");
    assert!(data >= sent, "{data} data frames decoded, {sent} sent");
    assert!(frames > data);
}

#[test]
fn cnms_and_cn_tags_are_real_8021qau_frames() {
    use lossless_wire::fcs::FcsMode;
    use lossless_wire::qcn::parse_cnm_frame;
    use pcap_file::pcapng::{Block, PcapNgReader};
    // tshark has no 802.1Qau dissector: the frames are read back with the CN codecs, whose
    // byte layout the cn-wire tests check against scapy
    let text = r#"
name = "qcn"
duration = "300us"
[defaults]
rate = "10G"
flow_control = "pfc"
pfc_priorities = [3]
[qp]
cc = "qcn"
[qcn]
priorities = [3]
cnm_priority = 6
jitter = false
[[host]]
name = "s"
count = 3
[[host]]
name = "r"
[[switch]]
name = "tor"
buffer_bytes = 2_000_000
[[link]]
a = "s*"
b = "tor"
[[link]]
a = "tor"
b = "r"
[[flow]]
name = "f"
src = "s*"
dst = "r"
priority = 3
transport = "rocev2"
"#;
    let c = lossless_sim::scenario::load_str(text, "qcn.toml", None, &Default::default()).unwrap();
    let dir = temp_dir("sim-pcap-qcn");
    let sink = PcapSink::create(&dir, &c).unwrap();
    let mut sim = Simulator::with_observer(c, sink).unwrap();
    sim.run();
    sim.observer_mut().finish().unwrap();
    let r = Report::collect(&sim);
    let frames = |file: &str| -> Vec<Vec<u8>> {
        let f = std::fs::File::open(dir.join(file)).unwrap();
        let mut rd = PcapNgReader::new(f).unwrap();
        let mut out = Vec::new();
        while let Some(b) = rd.next_block() {
            if let Block::EnhancedPacket(p) = b.unwrap() {
                out.push(p.data.into_owned());
            }
        }
        out
    };
    // CNMs to s1: from the CP's port address, EtherType 0x22E7, QntzFb 1..=63, the sampled
    // frame's priority 3 and destination r (node 3), the CPID = port address + priority
    let mut cnms = 0;
    for bytes in frames("tor.0-to-s1.pcapng") {
        if bytes.get(16..18) != Some(&[0x22, 0xE7]) {
            continue;
        }
        let f = parse_cnm_frame(&bytes, FcsMode::Absent).unwrap();
        assert!(f.is_canonical());
        assert!((1..=63).contains(&f.repr.cnm.qntz_fb), "{:?}", f.repr.cnm);
        assert_eq!(f.repr.cnm.encapsulated_priority, 3);
        assert_eq!(
            f.repr.cnm.encapsulated_dst.0,
            lossless_sim::trace::pcap::host_address(3)
        );
        assert_eq!(
            &f.repr.cnm.cpid[..6],
            &bytes[6..12],
            "CPID starts with the CP's address"
        );
        assert_eq!(f.repr.cnm.cpid[6], 3);
        cnms += 1;
    }
    let q = r.flow("f:s1").unwrap().qp.as_ref().unwrap();
    assert!(cnms > 0);
    assert_eq!(cnms, q.cnms_received_total);
    // s1's data frames carry a CN-TAG (EtherType 0x22E9, the flow id) after the 802.1Q tag
    let data = frames("s1.0-to-tor.pcapng");
    assert!(!data.is_empty());
    for bytes in &data {
        assert_eq!(&bytes[12..14], &[0x81, 0x00]);
        assert_eq!(&bytes[16..20], &[0x22, 0xE9, 0, 0], "CN-TAG of flow 0");
        assert_eq!(&bytes[20..22], &[0x08, 0x00], "then IPv4");
    }
}

#[test]
fn hpcc_pint_data_frames_carry_the_code_their_switch_port_wrote() {
    use lossless_proto::hpcc_pint::PintCodec;
    use lossless_wire::fcs::FcsMode;
    use lossless_wire::pint::{PintField, PintWidth};
    use pcap_file::pcapng::{Block, PcapNgReader};
    // four 25 G senders into one 25 G port: the tor's port to r is loaded (U about 1 or
    // more), so the 2-byte codes it writes decode to about 1; the senders' own links carry
    // the code a data packet starts with (0: hosts write none)
    let text = r#"
name = "pint"
duration = "2ms"
seed = 1
[defaults]
rate = "25G"
length_m = 5
flow_control = "pfc"
pfc_priorities = [3]
[qp]
cc = "hpcc-pint"
hpcc_pint = { preset = "hpcc-ns3", base_rtt = "2us", bdp = 6250, rate_ai = "500M", min_rate = "100M" }
[[host]]
name = "s"
count = 4
[[host]]
name = "r"
[[switch]]
name = "tor"
buffer_bytes = 2_000_000
[[link]]
a = "s*"
b = "tor"
[[link]]
a = "tor"
b = "r"
[[flow]]
name = "f"
src = "s*"
dst = "r"
priority = 3
size_bytes = 300_000
transport = "rocev2"
"#;
    let c = lossless_sim::scenario::load_str(text, "pint.toml", None, &Default::default()).unwrap();
    let dir = temp_dir("sim-pcap-pint");
    let sink = PcapSink::create(&dir, &c).unwrap();
    let mut sim = Simulator::with_observer(c, sink).unwrap();
    sim.run();
    sim.observer_mut().finish().unwrap();
    let r = Report::collect(&sim);
    assert!(
        r.flows.iter().all(|f| f.completion_ps.is_some()),
        "the flows complete"
    );
    // the code of every RoCEv2 data frame of a file, read from the first 2 payload bytes
    let codes = |file: &str| -> Vec<u16> {
        let f = std::fs::File::open(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut rd = PcapNgReader::new(f).unwrap();
        let mut out = Vec::new();
        while let Some(b) = rd.next_block() {
            let Block::EnhancedPacket(p) = b.unwrap() else {
                continue;
            };
            let Ok(roce) = lossless_wire::roce::parse(&p.data, FcsMode::Absent) else {
                continue;
            };
            if roce.repr.bth.opcode.0 > 0x04 {
                continue; // an ACK
            }
            assert!(
                roce.is_canonical(),
                "{file}: ICRC and checksums right, code included"
            );
            out.push(PintField::parse(roce.payload, PintWidth::Two).unwrap().0);
        }
        out
    };
    let to_r = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("tor.") && n.ends_with("-to-r.pcapng"))
        .expect("the tor's port to r has a capture");
    let at_r = codes(&to_r);
    // 4 × ⌈300,000 / 1024⌉ packets (the perftest MTU), retransmissions aside
    assert!(at_r.len() >= 4 * 293, "{} data frames to r", at_r.len());
    let codec = PintCodec::new(1.01).unwrap();
    let mut u: Vec<f64> = at_r.iter().map(|&c| codec.decode_u(c)).collect();
    u.sort_by(f64::total_cmp);
    let median = u[u.len() / 2];
    assert!((0.8..=3.0).contains(&median), "median U {median}");
    // the port's first packet follows no frame over an empty queue with U′ = 0: U = 0, code 0
    // (n = 1); every later one follows the previous packet
    let zeros: Vec<usize> = (0..at_r.len()).filter(|&i| at_r[i] == 0).collect();
    assert_eq!(zeros, [0], "codes {:?}", &at_r[..8]);
    for s in 1..=4 {
        let from_s = codes(&format!("s{s}.0-to-tor.pcapng"));
        assert!(!from_s.is_empty());
        assert!(from_s.iter().all(|&c| c == 0), "s{s}: hosts write no code");
    }
}
