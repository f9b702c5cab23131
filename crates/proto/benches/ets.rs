//! Transmission selection decisions per second: 8 TCs with mixed algorithms (2 strict, 1
//! credit-based shaper, 5 ETS at odd weights), every queue busy, random frame sizes; one
//! decision = select + on_transmitted + the enqueue that refills the queue.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use lossless_proto::ets::{CeeConfig, EtsConfig, PortParams, Scheduler};
use lossless_proto::units::{Instant, Rate};

const G100: Rate = Rate::from_gbps(100);

fn ieee() -> Scheduler {
    let cfg = EtsConfig::from_dcb_args(
        "tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:cbs 6:strict 7:strict \
         tc-bw 0:7 1:13 2:19 3:23 4:38 prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7",
    )
    .unwrap();
    Scheduler::ieee(
        &cfg,
        &PortParams::new(G100).with_idle_slope(5, Rate::from_gbps(10)),
    )
    .unwrap()
}

fn cee() -> Scheduler {
    let cfg = CeeConfig::new(
        [0, 0, 1, 1, 2, 3, 15, 15],
        [10, 20, 30, 40, 0, 0, 0, 0],
        [30, 70, 50, 50, 100, 100, 0, 0],
        8,
    )
    .unwrap();
    Scheduler::cee(&cfg, &PortParams::new(G100)).unwrap()
}

/// Runs decisions on a saturated scheduler; strict priorities 6 and 7 get a frame only one
/// decision in `strict_every` so the others are served too.
fn saturated(mut s: Scheduler, strict_every: u32, pause_every: u32) -> impl FnMut() {
    let mut now = Instant::ZERO;
    let mut x = 0x1234_5678u64;
    let mut len = [0u32; 8];
    for p in 0..8u8 {
        len[usize::from(p)] = 64 + u32::from(p) * 1000;
        if p < 6 {
            s.enqueue(now, p, len[usize::from(p)]).unwrap();
        }
    }
    let mut k = 0u32;
    let mut paused = 0u8;
    move || {
        k = k.wrapping_add(1);
        if k.is_multiple_of(strict_every) {
            let p = 6 + (k / strict_every % 2) as u8;
            s.enqueue(now, p, len[usize::from(p)]).unwrap();
        }
        if pause_every != 0 && k.is_multiple_of(pause_every) {
            paused ^= 0b0000_0101;
        }
        match s.select(now, paused) {
            Some(sel) => {
                let p = sel.priority;
                let l = len[usize::from(p)];
                s.on_transmitted(now, p, l).unwrap();
                now += G100.wire_time(u64::from(l));
                if p < 6 {
                    x = x
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    len[usize::from(p)] = 64 + ((x >> 33) % 9153) as u32;
                    s.enqueue(now, p, len[usize::from(p)]).unwrap();
                }
                black_box(sel);
            }
            None => now = s.next_eligible(now).unwrap_or(now),
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ets");
    g.throughput(Throughput::Elements(1));
    g.bench_function("ieee_8tc_mixed_decision", |b| {
        let mut step = saturated(ieee(), 10, 0);
        b.iter(&mut step)
    });
    g.bench_function("ieee_8tc_mixed_decision_with_pfc_toggles", |b| {
        let mut step = saturated(ieee(), 10, 7);
        b.iter(&mut step)
    });
    g.bench_function("cee_two_level_decision", |b| {
        let mut step = saturated(cee(), 10, 0);
        b.iter(&mut step)
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
