//! Congestion-notification engine calls per second, driven as a simulator would drive them:
//! DCQCN reaction point `handle_cnp` (CNPs 5 µs apart, so each call also catches up five
//! 1 µs alpha updates in the periodic presets); `handle_timeout` at every instant
//! `poll_timeout` names through whole recovery episodes (a CNP, its cut, the increases back
//! to line rate, then the next CNP, which catches up the alpha updates of the idle time:
//! about 6 000 for the periodic presets, once per episode); `on_sent` per 1048-byte packet at
//! 100 Gb/s; notification point `on_ce`; ECN `decide` over queues below, between and above
//! the thresholds; QCN congestion point `on_enqueue` and reaction point `handle_cnm`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use lossless_proto::dcqcn::{Np, NpParams, Rp, RpParams};
use lossless_proto::ecn::{EcnConfig, EcnMarker};
use lossless_proto::qcn::{Cp, CpParams, QcnRp, QcnRpParams};
use lossless_proto::units::{Duration, Instant, Rate};

const G100: Rate = Rate::from_gbps(100);
const PRESETS: [&str; 3] = ["connectx", "paper", "hpcc_ns3"];

fn rp(preset: &str) -> Rp {
    Rp::new(RpParams::preset(preset).unwrap(), G100).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("cc");
    g.throughput(Throughput::Elements(1));
    for preset in PRESETS {
        g.bench_function(format!("rp_handle_cnp/{preset}"), |b| {
            let mut rp = rp(preset);
            let mut now = Instant::ZERO;
            b.iter(|| {
                now += Duration::from_us(5);
                rp.handle_cnp(black_box(now));
            })
        });
        g.bench_function(format!("rp_handle_timeout/{preset}"), |b| {
            let mut rp = rp(preset);
            let mut now = Instant::ZERO;
            b.iter(|| match rp.poll_timeout() {
                Some(t) => {
                    now = t;
                    rp.handle_timeout(black_box(t));
                }
                // back at line rate: a CNP starts the next episode (one call in ~40)
                None => {
                    now += Duration::from_us(1);
                    rp.handle_cnp(now);
                }
            })
        });
        g.bench_function(format!("rp_on_sent/{preset}"), |b| {
            let mut rp = rp(preset);
            let mut now = Instant::ZERO;
            let mut k = 0u32;
            b.iter(|| {
                now += Duration::from_ps(83_840);
                k = k.wrapping_add(1);
                // a CNP every 1000 packets keeps the byte counter armed
                if k.is_multiple_of(1000) {
                    rp.handle_cnp(now);
                }
                rp.on_sent(black_box(now), 1048);
            })
        });
    }
    g.bench_function("np_on_ce/connectx", |b| {
        let mut np = Np::new(NpParams::connectx());
        let mut now = Instant::ZERO;
        b.iter(|| {
            now += Duration::from_ps(83_840);
            black_box(np.on_ce(black_box(now)))
        })
    });
    g.bench_function("ecn_decide", |b| {
        let mut m = EcnMarker::new(EcnConfig::hpcc_ns3(G100), 1).unwrap();
        let mut q = 0u64;
        b.iter(|| {
            // 0..2.1 MB: below Kmin (400 KB), between, above Kmax (1.6 MB)
            q = (q + 1048 * 37) % 2_100_000;
            black_box(m.decide(black_box(q)))
        })
    });
    g.bench_function("qcn_cp_on_enqueue", |b| {
        let mut cp = Cp::new(CpParams::default(), 1).unwrap();
        let mut q = 0u64;
        b.iter(|| {
            q = (q + 1500 * 11) % 300_000;
            black_box(cp.on_enqueue(1500, black_box(q)))
        })
    });
    g.bench_function("qcn_rp_handle_cnm", |b| {
        let mut rp = QcnRp::new(QcnRpParams::default(), Rate::from_gbps(10)).unwrap();
        let mut now = Instant::ZERO;
        let mut fb = 0u8;
        b.iter(|| {
            now += Duration::from_us(20);
            fb = (fb + 7) & 0x3F;
            rp.handle_cnm(black_box(now), fb);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
