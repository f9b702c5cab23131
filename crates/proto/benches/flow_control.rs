//! Engine operations per second: set_request, poll_transmit, handle_control_frame,
//! may_transmit (and on_tx_start / poll_timeout / handle_timeout as a driver would call them).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use lossless_proto::flow_control::{ControlFrame, FlowControl, FlowControlConfig, ReceivedControl};
use lossless_proto::units::{Duration, Instant, Rate};

fn engine() -> FlowControl {
    let mut c = FlowControlConfig::pfc(Rate::from_gbps(100), [2, 0, 0, 0, 0, 1], 0xFF);
    for pc in &mut c.priorities {
        pc.pause_quanta = 0xFFFF;
        pc.refresh_quanta = 100;
    }
    FlowControl::new(c).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("flow_control");
    g.throughput(Throughput::Elements(1));
    g.bench_function("set_request", |b| {
        let mut fc = engine();
        let mut now = Instant::ZERO;
        let mut up = false;
        b.iter(|| {
            now += Duration::from_ps(1);
            up = !up;
            fc.set_request(now, 3, up).unwrap();
        })
    });
    g.bench_function("poll_transmit", |b| {
        let mut fc = engine();
        fc.set_request(Instant::ZERO, 5, true).unwrap();
        let mut now = Instant::ZERO;
        b.iter(|| {
            // every poll at a new refresh interval end sends a frame
            now += Duration::from_ps(512_000);
            black_box(fc.poll_transmit(now));
        })
    });
    g.bench_function("handle_control_frame", |b| {
        let mut fc = engine();
        let mut now = Instant::ZERO;
        let mut q = 0u16;
        b.iter(|| {
            now += Duration::from_ps(6_720);
            q = q.wrapping_add(7);
            let f = ReceivedControl::multicast(ControlFrame::Pfc {
                enable_vector: 0b1010_1010,
                time: [q; 8],
            });
            black_box(fc.handle_control_frame(now, &f));
        })
    });
    g.bench_function("may_transmit", |b| {
        let mut fc = engine();
        fc.handle_control_frame(
            Instant::ZERO,
            &ReceivedControl::multicast(ControlFrame::Pfc {
                enable_vector: 0x0F,
                time: [0xFFFF; 8],
            }),
        );
        let mut p = 0u8;
        b.iter(|| {
            p = (p + 1) & 7;
            black_box(fc.may_transmit(black_box(Instant::from_ps(1_000)), p))
        })
    });
    g.throughput(Throughput::Elements(6));
    g.bench_function("driver_cycle_6_calls", |b| {
        // one simulated frame time: a request change, a poll, a data start, a reception,
        // a may_transmit and a poll_timeout/handle_timeout pair
        let mut fc = engine();
        let mut now = Instant::ZERO;
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let p = (i & 7) as u8;
            fc.set_request(now, p, i & 8 == 0).unwrap();
            if let Some(tx) = fc.poll_transmit(now) {
                now = tx.free_at;
            }
            if fc.may_start_data(now, p) {
                now = fc.on_tx_start(now, 1500, p).unwrap().free_at;
            } else {
                now = now.max(fc.wire_free_at());
            }
            let f = ReceivedControl::multicast(ControlFrame::Pfc {
                enable_vector: 1 << ((i + 3) & 7),
                time: [(i & 0xFF) as u16; 8],
            });
            black_box(fc.handle_control_frame(now, &f));
            black_box(fc.may_transmit(now, p));
            if let Some(t) = fc.poll_timeout() {
                fc.handle_timeout(t.min(now + Duration::from_ns(10)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
