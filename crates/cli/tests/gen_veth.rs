//! `lossless gen` on a veth pair in network namespaces, captured by tcpdump on the far end:
//! exact per-priority counts, frames byte-identical to the codec's emit, decoded by tshark;
//! and the errors an operator sees.

#[path = "dcbx_support/mod.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lossless_capture::CaptureReader;
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use support::{Pair, lossless, ready};

const SRC: &str = "02:aa:bb:cc:dd:01";
const SRC_MAC: [u8; 6] = [0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01];

fn expected(c: MacControlRepr) -> Vec<u8> {
    let mut b = [0u8; 60];
    let n = emit_frame(
        EthernetAddress(SRC_MAC),
        EthernetAddress::MAC_CONTROL,
        &c,
        FcsMode::Absent,
        &mut b,
    )
    .unwrap();
    b[..n].to_vec()
}

/// Starts tcpdump on the pair's `b` end writing `file`; returns its index once it listens.
pub fn start_tcpdump(p: &mut Pair, file: &Path) -> usize {
    // A small snaplen and a 16 MB buffer: libpcap sizes ring slots by the snaplen, and the
    // default 256 KiB slots in a 2 MB ring drop frames of an unpaced burst.
    let i = p.spawn(
        &p.b.clone(),
        &[
            "tcpdump",
            "-n",
            "-U",
            "--immediate-mode",
            "-s",
            "256",
            "-B",
            "16384",
            "-i",
            &p.ib.clone(),
            "-w",
            file.to_str().unwrap(),
            "ether",
            "proto",
            "0x8808",
        ],
        "tcpdump.log",
    );
    p.wait_for(Duration::from_secs(10), "tcpdump to listen", || {
        p.log("tcpdump.log").contains("listening on").then_some(())
    });
    i
}

fn gen_in(p: &Pair, args: &[&str]) -> String {
    let mut all = vec![lossless(), "gen", "-i", &p.ia, "--src", SRC];
    all.extend_from_slice(args);
    let out = p.exec(&p.a, &all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{all:?}: {}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn gen_frames_arrive_exactly_byte_identical_to_the_codec_and_decode_in_tshark() {
    let test = "gen_frames_arrive_exactly_byte_identical_to_the_codec_and_decode_in_tshark";
    if !ready(test, &["ip", "tcpdump", "tshark"]) {
        return;
    }
    let mut p = Pair::new("gn");
    let pcap = p.dir.join("gen.pcap");
    let td = start_tcpdump(&mut p, &pcap);
    let out = gen_in(
        &p,
        &["--prio", "3=65535", "--prio", "5=100", "-n", "200", "-r", "2000"],
    );
    assert!(out.contains("sent 200 frames"), "{out}");
    gen_in(&p, &["-p", "0x81", "-t", "7", "-n", "50", "--sendmmsg"]);
    gen_in(&p, &["-g", "-t", "300", "-n", "10", "--batch", "3", "--tx-ring"]);
    std::thread::sleep(Duration::from_millis(300));
    p.terminate(td);

    let mut a = [0u16; 8];
    a[3] = 65535;
    a[5] = 100;
    let mut b = [0u16; 8];
    b[0] = 7;
    b[7] = 7;
    let kinds = [
        expected(MacControlRepr::Pfc {
            priority_enable_vector: 0x28,
            time: a,
        }),
        expected(MacControlRepr::Pfc {
            priority_enable_vector: 0x81,
            time: b,
        }),
        expected(MacControlRepr::Pause { pause_time: 300 }),
    ];
    let mut counts = [0u64; 3];
    for f in CaptureReader::new(std::fs::File::open(&pcap).unwrap()) {
        let f = f.unwrap();
        let k = kinds
            .iter()
            .position(|k| *k == f.data)
            .unwrap_or_else(|| panic!("unexpected frame {:02x?}", f.data));
        counts[k] += 1;
    }
    assert_eq!(counts, [200, 50, 10]);

    let tshark = lossless_testkit::which("tshark").unwrap();
    let rows = lossless_testkit::tshark_fields(
        &tshark,
        &pcap,
        &[
            "macc.opcode",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c3",
            "macc.cbfc.pause_time.c5",
            "macc.cbfc.pause_time.c7",
            "macc.pause_time",
            "eth.src",
        ],
        &[],
    );
    assert_eq!(rows.len(), 260);
    let row = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let n = |want: Vec<String>| rows.iter().filter(|r| **r == want).count();
    assert_eq!(
        n(row(&["0x0101", "0x0028", "65535", "100", "0", "", SRC])),
        200,
        "{:?}",
        &rows[..3]
    );
    assert_eq!(
        n(row(&["0x0101", "0x0081", "0", "0", "7", "", SRC])),
        50,
        "{:?}",
        &rows[200..203]
    );
    assert_eq!(
        n(row(&["0x0001", "", "", "", "", "300", SRC])),
        10,
        "{:?}",
        &rows[250..]
    );
}

/// The far end's received-frame counter (veth counts every frame it hands to the peer).
fn rx_packets(p: &Pair) -> u64 {
    let path = format!("/sys/class/net/{}/statistics/rx_packets", p.ib);
    let out = p.exec(&p.b, &["cat", &path]);
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{path}: {out:?}"))
}

#[test]
fn gen_unpaced_bursts_arrive_complete_through_the_tx_ring_and_through_sendmmsg() {
    let test = "gen_unpaced_bursts_arrive_complete_through_the_tx_ring_and_through_sendmmsg";
    if !ready(test, &["ip"]) {
        return;
    }
    let p = Pair::new("gb");
    // Nothing else crosses the link: no IPv6 router solicitations or MLD reports from `a`.
    let sysctl = format!("net.ipv6.conf.{}.disable_ipv6=1", p.ia);
    assert!(p.exec(&p.a, &["sysctl", "-qw", &sysctl]).status.success());
    for path in [&["--tx-ring"][..], &[][..], &["--sendmmsg"][..]] {
        let before = rx_packets(&p);
        let mut args = vec!["-p", "8", "-n", "30000", "--json"];
        args.extend_from_slice(path);
        let out = gen_in(&p, &args);
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["interfaces"][0]["sent"], 30000, "{path:?}: {v}");
        // Frames the device refused (ENOBUFS) were sent again, and the run ended only after
        // the ring drained: the far end saw every frame.
        assert_eq!(rx_packets(&p) - before, 30000, "{path:?}: {v}");
    }
    let out = Command::new(lossless())
        .args(["gen", "-i", "lo", "-p", "1", "--tx-ring", "--sendmmsg"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--sendmmsg") && err.contains("--tx-ring"), "{err}");
}

#[test]
fn gen_duration_and_rate_bound_the_frames_sent() {
    if !ready("gen_duration_and_rate_bound_the_frames_sent", &["ip"]) {
        return;
    }
    let p = Pair::new("gd");
    let out = gen_in(&p, &["-p", "1", "--rate", "500", "--duration", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let sent = v["interfaces"][0]["sent"].as_u64().unwrap();
    // 500 frames/s for 1 s: the schedule allows frame n at n/500 s, so 500 or 501 frames.
    assert!((495..=501).contains(&sent), "{v}");
}

#[test]
fn gen_interrupted_by_sigint_prints_what_it_sent() {
    if !ready("gen_interrupted_by_sigint_prints_what_it_sent", &["ip"]) {
        return;
    }
    let mut p = Pair::new("gi");
    let (a, ia) = (p.a.clone(), p.ia.clone());
    let g = p.spawn(
        &a,
        &[lossless(), "gen", "-i", &ia, "-p", "1", "--rate", "200"],
        "gen.log",
    );
    std::thread::sleep(Duration::from_millis(700));
    let pid = p.pid(g).to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    p.wait_for(Duration::from_secs(10), "gen to exit on SIGINT", || {
        p.log("gen.log").contains("(interrupted)").then_some(())
    });
    let log = p.log("gen.log");
    let sent: u64 = log
        .split("sent ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{log}"));
    assert!((50..=400).contains(&sent), "{log}");
}

#[test]
fn gen_refuses_missing_priorities_and_names_a_missing_interface() {
    let out = Command::new(lossless())
        .args(["gen", "-i", "lo", "-n", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--priority") && err.contains("--global"), "{err}");
    let out = Command::new(lossless())
        .args(["gen", "-i", "nosuchif7", "-p", "1", "-n", "1"])
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
fn gen_without_cap_net_raw_names_the_capability() {
    let test = "gen_without_cap_net_raw_names_the_capability";
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
        .args(["gen", "-i", "lo", "-p", "1", "-n", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("CAP_NET_RAW") && err.contains("lo"), "{err}");
}

/// The frames `gen` says it sent on its one interface.
fn sent_in(log: &str) -> u64 {
    log.split("sent ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of frames sent in: {log}"))
}

#[test]
fn gen_on_an_interface_that_goes_down_or_is_deleted_says_so_once_with_the_frames_sent() {
    const TEST: &str = "gen_on_an_interface_that_goes_down_or_is_deleted_says_so_once_with_the_frames_sent";
    if !ready(TEST, &["ip"]) {
        return;
    }
    for (change, says) in [("down", "went down"), ("deleted", "was deleted")] {
        let mut p = Pair::new("gd");
        let (a, ia) = (p.a.clone(), p.ia.clone());
        let log = format!("gen-{change}.log");
        let g = p.spawn(
            &a,
            &[lossless(), "gen", "-i", &ia, "-p", "1", "--rate", "500"],
            &log,
        );
        std::thread::sleep(Duration::from_millis(600));
        let ip: &[&str] = if change == "down" {
            &["-n", &a, "link", "set", &ia, "down"]
        } else {
            &["-n", &a, "link", "del", &ia]
        };
        assert!(Command::new("ip").args(ip).status().unwrap().success());
        let status = p.wait_exit(g, Duration::from_secs(10));
        let text = p.log(&log);
        assert_eq!(status.code(), Some(1), "{change}: {text}");
        assert!(sent_in(&text) > 50, "{change}: {text}");
        let error = format!("error: interface {ia} {says}");
        assert_eq!(text.matches("error").count(), 1, "{change}: one error: {text}");
        assert!(text.contains(&error), "{change}: {error:?} in {text}");
    }
}
