//! Throughput of reading a pcapng capture: frames only, frames decoded (what `lossless decode`
//! does before printing), and the whole analysis (what `lossless analyze` does).
#![allow(missing_docs)] // criterion_main! generates an undocumented `main`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lossless_capture::analyze::{Options, analyze};
use lossless_capture::sample::write_pcapng;
use lossless_capture::{CaptureReader, decode_frame};
use lossless_proto::units::{Duration as Span, Rate};

const FRAMES: usize = 100_000;

/// 100 000 PFC frames, 60 bytes, 10 µs apart, one priority each in turn; every tenth tagged.
fn capture() -> Vec<u8> {
    let frames: Vec<(Duration, Vec<u8>)> = (0..FRAMES)
        .map(|i| {
            let mut f = vec![
                0x01, 0x80, 0xc2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0x08, 0x01, 0x01, 0,
            ];
            f.push(1 << (i % 8));
            for _ in 0..8 {
                f.extend_from_slice(&1000u16.to_be_bytes());
            }
            f.resize(60, 0);
            if i % 10 == 0 {
                f.splice(12..12, [0x81, 0x00, 0x60, 0x05]);
            }
            (Duration::from_micros(1_700_000_000_000_000 + 10 * i as u64), f)
        })
        .collect();
    write_pcapng(&frames)
}

fn bench(c: &mut Criterion) {
    let bytes = capture();
    let mut g = c.benchmark_group("capture");
    g.throughput(Throughput::Elements(FRAMES as u64));
    g.bench_function("read_pcapng", |b| {
        b.iter(|| {
            CaptureReader::new(black_box(&bytes[..]))
                .filter(Result::is_ok)
                .count()
        })
    });
    g.bench_function("read_and_decode_pcapng", |b| {
        b.iter(|| {
            CaptureReader::new(black_box(&bytes[..]))
                .filter_map(Result::ok)
                .map(|f| decode_frame(&f).caplen)
                .sum::<usize>()
        })
    });
    let opts = Options {
        speed: Rate::from_gbps(100),
        detection: Span::from_ms(200),
        restoration: Span::from_ms(200),
        bucket: Span::from_ms(100),
        dscp_map: None,
    };
    g.bench_function("analyze_pcapng", |b| {
        b.iter(|| analyze(CaptureReader::new(black_box(&bytes[..])), opts).frames)
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
