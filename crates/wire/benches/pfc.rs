//! Throughput of PFC frame decoding (parse + validate, with and without FCS check) and emission.
#![allow(missing_docs)] // criterion_main! generates an undocumented `main`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::{FcsChecker, FcsMode};
use lossless_wire::mac_control::{
    MacControlRepr, decode_flow_control, decode_flow_control_with, decode_frame, emit_frame,
};

const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0x01, 0x02, 0x03]);

fn pfc() -> MacControlRepr {
    MacControlRepr::Pfc {
        priority_enable_vector: 0x0018,
        time: [0, 0, 0, 0xFFFF, 0x1234, 0, 0, 0],
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux scheduler accounting), so a number
/// measured on a loaded machine is still per core; `None` where it cannot be read.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Prints the rate of `decode` in frames per second of this thread's on-CPU time (less
/// sensitive to other work on the machine than wall-clock time), and the wall-clock rate.
/// `PFC_ON_CPU_N` sets the iteration count (default 20 M) and `PFC_ON_CPU_FILTER` runs only the
/// loops whose name contains it, so one loop can be counted under `valgrind --tool=callgrind`.
fn on_cpu_rate<R>(name: &str, frame: &[u8], decode: impl Fn(&[u8]) -> R) {
    let env = |k: &str| std::env::var(k).ok();
    // `cargo test --all-targets` runs benches once without `--bench` (and unoptimised): a
    // 20 M-iteration loop there only costs CI time.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    if env("PFC_ON_CPU_FILTER").is_some_and(|f| !name.contains(f.as_str())) {
        return;
    }
    let n: u64 = env("PFC_ON_CPU_N")
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000_000);
    let (Some(cpu0), wall0) = (thread_cpu_ns(), std::time::Instant::now()) else {
        return;
    };
    for _ in 0..n {
        black_box(decode(black_box(frame)));
    }
    let cpu = thread_cpu_ns().unwrap_or(cpu0).saturating_sub(cpu0).max(1);
    let wall = wall0.elapsed().as_nanos().max(1);
    eprintln!(
        "pfc/{name}: {n} frames, {:.1} M frames/s of on-CPU time ({:.2} ns each), {:.1} M frames/s wall",
        n as f64 * 1e3 / cpu as f64,
        cpu as f64 / n as f64,
        n as f64 * 1e3 / wall as f64
    );
}

fn bench(c: &mut Criterion) {
    let mut with_fcs = [0u8; 64];
    emit_frame(
        SRC,
        EthernetAddress::MAC_CONTROL,
        &pfc(),
        FcsMode::Present,
        &mut with_fcs,
    )
    .unwrap();
    let without_fcs: [u8; 60] = with_fcs[..60].try_into().unwrap();

    let mut g = c.benchmark_group("pfc");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode+validate, 64 B with FCS verify", |b| {
        b.iter(|| decode_frame(black_box(&with_fcs[..]), FcsMode::Present, None).unwrap())
    });
    g.bench_function("decode+validate, 60 B without FCS", |b| {
        b.iter(|| decode_frame(black_box(&without_fcs[..]), FcsMode::Absent, None).unwrap())
    });
    g.bench_function("decode+validate, 60 B without FCS, result fields consumed", |b| {
        b.iter(|| {
            let f = decode_frame(black_box(&without_fcs[..]), FcsMode::Absent, None).unwrap();
            (f.warnings, f.control.priority_request(3), f.ethernet.src)
        })
    });
    g.bench_function(
        "decode_flow_control view, 60 B without FCS, result fields consumed",
        |b| {
            b.iter(|| {
                let v = decode_flow_control(black_box(&without_fcs[..]), FcsMode::Absent, None).unwrap();
                (v.warnings(), v.priority_request(3), v.src())
            })
        },
    );
    g.bench_function("decode_flow_control view, 64 B with FCS verify", |b| {
        b.iter(|| decode_flow_control(black_box(&with_fcs[..]), FcsMode::Present, None).unwrap())
    });
    on_cpu_rate("decode_frame, 60 B without FCS", &without_fcs, |f| {
        decode_frame(f, FcsMode::Absent, None).unwrap()
    });
    on_cpu_rate("decode_frame, 64 B with FCS verify", &with_fcs, |f| {
        decode_frame(f, FcsMode::Present, None).unwrap()
    });
    on_cpu_rate(
        "decode_flow_control, 60 B without FCS, fields consumed",
        &without_fcs,
        |f| {
            let v = decode_flow_control(f, FcsMode::Absent, None).unwrap();
            (v.warnings(), v.priority_request(3), v.src())
        },
    );
    on_cpu_rate("decode_flow_control, 64 B with FCS verify", &with_fcs, |f| {
        decode_flow_control(f, FcsMode::Present, None).unwrap().warnings()
    });
    let checker = FcsChecker::new();
    on_cpu_rate(
        "decode_flow_control_with checker, 64 B with FCS verify",
        &with_fcs,
        |f| {
            decode_flow_control_with(f, FcsMode::Present, None, &checker)
                .unwrap()
                .warnings()
        },
    );
    let mut buf = [0u8; 64];
    g.bench_function("emit_frame, 64 B with FCS", |b| {
        b.iter(|| {
            emit_frame(
                SRC,
                EthernetAddress::MAC_CONTROL,
                black_box(&pfc()),
                FcsMode::Present,
                &mut buf,
            )
            .unwrap()
        })
    });
    g.bench_function("emit_frame, 60 B without FCS", |b| {
        b.iter(|| {
            emit_frame(
                SRC,
                EthernetAddress::MAC_CONTROL,
                black_box(&pfc()),
                FcsMode::Absent,
                &mut buf,
            )
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
