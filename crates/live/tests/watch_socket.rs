//! The socket features `gen` and `watch` rely on, over a veth pair in this namespace (root only;
//! skipped loudly otherwise): the EtherType BPF filter, kernel arrival stamps, `sendmmsg`
//! batches, the generator's count and pacing through the TX ring, the watcher's counts and the
//! Prometheus exporter.

use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, SystemTime};

use lossless_live::RawSocket;
use lossless_live::generator::{self, FrameSpec, Pacing};
use lossless_live::prometheus::{Exporter, render};
use lossless_live::watch::Watcher;
use lossless_live::watchdog::{DEFAULT_TIME, Watchdog};
use lossless_proto::units::Rate;
use lossless_wire::mac_control::MacControlRepr;

struct Veth {
    a: String,
    b: String,
}

impl Veth {
    fn new(tag: &str) -> Veth {
        let pid = std::process::id();
        let v = Veth {
            a: format!("lw{tag}{pid}a"),
            b: format!("lw{tag}{pid}b"),
        };
        let ip = |args: &[&str]| {
            assert!(
                Command::new("ip").args(args).status().unwrap().success(),
                "ip {args:?}"
            )
        };
        ip(&["link", "add", &v.a, "type", "veth", "peer", "name", &v.b]);
        ip(&["link", "set", &v.a, "up"]);
        ip(&["link", "set", &v.b, "up"]);
        v
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.a]).status();
    }
}

fn frame(ethertype: u16, fill: u8) -> Vec<u8> {
    let mut f = vec![fill; 60];
    f[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 1]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
    f[12..14].copy_from_slice(&ethertype.to_be_bytes());
    f
}

/// Receives until `limit` passes with nothing new; returns the frames.
fn drain(s: &RawSocket) -> Vec<(Vec<u8>, Option<SystemTime>)> {
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    while let Some((r, t)) = s.recv_timed(&mut buf, Duration::from_millis(300)).unwrap() {
        out.push((buf[..r.len].to_vec(), t));
        assert!(out.len() < 100_000);
    }
    out
}

#[test]
fn bpf_filter_passes_only_mac_control_and_frames_carry_kernel_stamps() {
    if !lossless_testkit::require_root("bpf_filter_passes_only_mac_control_and_frames_carry_kernel_stamps") {
        return;
    }
    let v = Veth::new("f");
    let rx = RawSocket::open(&v.b, libc::ETH_P_ALL as u16).unwrap();
    rx.attach_ethertype_filter(0x8808).unwrap();
    rx.enable_timestamps().unwrap();
    // Frames sent before the filter was attached may be queued already: drop them.
    drain(&rx);
    let tx = RawSocket::open(&v.a, 0).unwrap();
    let before = SystemTime::now();
    for (et, fill) in [(0x88cc, 1), (0x8808, 2), (0x0800, 3), (0x8808, 4)] {
        tx.send(&frame(et, fill)).unwrap();
    }
    let got = drain(&rx);
    let kinds: Vec<(u16, u8)> = got
        .iter()
        .map(|(f, _)| (u16::from_be_bytes([f[12], f[13]]), f[20]))
        .collect();
    assert_eq!(kinds, [(0x8808, 2), (0x8808, 4)]);
    for (_, t) in &got {
        let t = t.expect("SO_TIMESTAMPNS stamp");
        let d = t.duration_since(before).expect("stamped after sending began");
        assert!(d < Duration::from_secs(2), "{d:?}");
    }
}

#[test]
fn send_batch_and_the_generator_deliver_exact_counts_to_the_watcher() {
    if !lossless_testkit::require_root("send_batch_and_the_generator_deliver_exact_counts_to_the_watcher") {
        return;
    }
    let v = Veth::new("g");
    let mut w = Watcher::open(
        &v.b,
        Some(Rate::from_gbps(100)),
        Watchdog::new(DEFAULT_TIME, DEFAULT_TIME),
    )
    .unwrap();
    let tx = RawSocket::open(&v.a, 0).unwrap();
    tx.set_qdisc_bypass(true).unwrap();
    let pfc = FrameSpec {
        control: MacControlRepr::pfc_xoff(1, 65535),
        src: Some([2, 0, 0, 0, 0, 9]),
        dst: [0x01, 0x80, 0xc2, 0, 0, 1],
    }
    .frame([0; 6])
    .unwrap();
    assert_eq!(tx.send_batch(&vec![&pfc[..]; 37]).unwrap(), 37);
    let spec = FrameSpec {
        control: MacControlRepr::pfc_xoff(1 << 6, 100),
        src: None,
        dst: [0x01, 0x80, 0xc2, 0, 0, 1],
    };
    let pacing = Pacing {
        count: Some(500),
        rate: Some(5000.0),
        duration: Some(Duration::from_secs(5)),
        batch: 64,
        tx_ring: true,
    };
    let run = generator::run(std::slice::from_ref(&tx), &spec, &pacing, &|| false).unwrap();
    assert!(run.error.is_none(), "{:?}", run.error);
    let r = run.report;
    assert_eq!(r.interfaces[0].sent, 500);
    assert!(
        r.elapsed_s >= 0.099 && r.elapsed_s < 2.0,
        "500 frames at 5000/s: {}",
        r.elapsed_s
    );
    for _ in 0..20 {
        w.step(Duration::from_millis(50), &|| false).unwrap();
    }
    let m = w.monitor();
    assert_eq!(m.counters(0).xoff_frames, 37);
    assert_eq!(m.counters(6).xoff_frames, 500);
    assert_eq!(
        m.top_talkers(1)[0].frames,
        500,
        "the generator used the interface's own MAC: {:?}",
        m.top_talkers(5)
    );
    let exporter = Exporter::start("127.0.0.1:0".parse().unwrap()).unwrap();
    exporter.publish(render(&m.snapshot(w.now()), &v.b));
    let mut c = std::net::TcpStream::connect(exporter.addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut text = String::new();
    c.read_to_string(&mut text).unwrap();
    assert!(text.starts_with("HTTP/1.0 200 OK"), "{text}");
    assert!(
        text.contains(&format!(
            "lossless_xoff_frames_total{{iface=\"{}\",slot=\"p6\"}} 500",
            v.b
        )),
        "{text}"
    );
    assert!(text.contains("# TYPE lossless_storm gauge"), "{text}");
}
