//! Throughput of RoCEv2 decoding with ICRC verification: a 1,024-byte RC SEND over IPv4
//! (1,082-byte frame) and a CNP (78-byte frame with FCS), through `roce::parse` (a fresh ICRC
//! engine per frame: crc32fast's CPU-feature detection each time) and `roce::parse_with` (one
//! engine reused); and emission of both, ICRC computed.
#![allow(missing_docs)] // criterion_main! generates an undocumented `main`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr};
use lossless_wire::roce::{self, Envelope, IcrcEngine, RoceFrameRepr};

fn frames() -> [(&'static str, RoceFrameRepr, FcsMode); 2] {
    let mut ip = Ipv4Repr::udp([10, 0, 0, 1], [10, 0, 0, 2]);
    (ip.dscp, ip.ecn) = (26, Ecn::Ect0);
    let a = EthernetAddress([2, 1, 0, 0, 0, 1]);
    let b = EthernetAddress([2, 1, 0, 0, 0, 2]);
    let data = RoceFrameRepr::rc_send(
        Envelope::new(a, b, None, IpRepr::V4(ip), 0xC000),
        0x12,
        7,
        true,
        true,
        true,
        1024,
    );
    (ip.dscp, ip.src, ip.dst) = (48, ip.dst, ip.src);
    let cnp = RoceFrameRepr::cnp(Envelope::new(b, a, None, IpRepr::V4(ip), 0xC000), 0x12);
    [
        ("data_1024", data, FcsMode::Absent),
        ("cnp", cnp, FcsMode::Present),
    ]
}

fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Frames per second of this thread's on-CPU time (criterion's wall clock counts the time
/// other processes take the CPU; this machine is shared), printed after the groups.
fn on_cpu_rate(name: &str, bytes: &[u8], fcs: FcsMode, engine: &IcrcEngine) {
    const N: u64 = 1_000_000;
    // Not under `cargo test --all-targets`, which runs benches once without `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some(cpu0) = thread_cpu_ns() else {
        return;
    };
    for _ in 0..N {
        let f = roce::parse_with(black_box(bytes), fcs, engine).unwrap();
        black_box((f.icrc_ok(), f.repr.bth.psn));
    }
    let cpu = thread_cpu_ns().unwrap_or(cpu0).saturating_sub(cpu0).max(1);
    eprintln!(
        "roce/parse_with_{name}: {N} frames, {:.2} M frames/s of on-CPU time ({:.1} ns each)",
        N as f64 * 1e3 / cpu as f64,
        cpu as f64 / N as f64
    );
}

fn bench(c: &mut Criterion) {
    let engine = IcrcEngine::new();
    let mut g = c.benchmark_group("roce");
    g.throughput(Throughput::Elements(1));
    for (name, repr, fcs) in frames() {
        let mut bytes = vec![0u8; repr.buffer_len(fcs)];
        repr.emit(fcs, &mut bytes).expect("a valid frame");
        assert!(roce::parse(&bytes, fcs).unwrap().icrc_ok());
        g.bench_function(format!("parse_{name}"), |b| {
            b.iter(|| {
                let f = roce::parse(black_box(&bytes), fcs).unwrap();
                (f.icrc_ok(), f.repr.bth.psn)
            })
        });
        g.bench_function(format!("parse_with_{name}"), |b| {
            b.iter(|| {
                let f = roce::parse_with(black_box(&bytes), fcs, &engine).unwrap();
                (f.icrc_ok(), f.repr.bth.psn)
            })
        });
        on_cpu_rate(name, &bytes, fcs, &engine);
        let mut out = vec![0u8; bytes.len()];
        g.bench_function(format!("emit_{name}"), |b| {
            b.iter(|| black_box(&repr).emit(fcs, black_box(&mut out)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
