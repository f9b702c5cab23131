//! Throughput of PFC frame decoding (parse + validate, with and without FCS check) and emission.
#![allow(missing_docs)] // criterion_main! generates an undocumented `main`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, decode_frame, emit_frame};

const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0x01, 0x02, 0x03]);

fn pfc() -> MacControlRepr {
    MacControlRepr::Pfc {
        priority_enable_vector: 0x0018,
        time: [0, 0, 0, 0xFFFF, 0x1234, 0, 0, 0],
    }
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
