//! Simulator throughput: events per second (and simulated time per wall second) on `incast`
//! with 64 senders and on `four-bridge` (PFC only), and with RoCEv2 QPs, ECN marking and
//! DCQCN on `incast-dcqcn` (2 ms) and on the 320-host fat-tree of the shared corpus's
//! `workloads/` (`lossless_testkit::corpus_dir`) with WebSearch flows at 30 % load (200 µs;
//! skipped, saying so, when the corpus is absent). Also the event queues alone in the classic
//! "hold" model (pop the earliest event, push one a random delay later) with as many events
//! pending as the fat tree's busy run holds: the floor under any event rate the simulator can
//! reach. Run: `cargo bench -p lossless-sim --bench sim`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lossless_proto::units::{Duration, Instant};
use lossless_sim::config::SimConfig;
use lossless_sim::config::traffic::SizeCdf;
use lossless_sim::event::{CalendarQueue, EventQueue};
use lossless_sim::event::{HeapQueue, RadixQueue};
use lossless_sim::ns3::Topology;
use lossless_sim::observer::NoObserver;
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Event, Simulator};

fn config(name: &str, set: &[&str]) -> SimConfig {
    let ov = Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    scenario::load(name, &ov).expect("built-in scenario loads")
}

/// The 320-host fat-tree with WebSearch flows at 30 % load under DCQCN, 200 µs.
fn fat_tree() -> Option<SimConfig> {
    let dir = lossless_testkit::corpus_dir().join("workloads");
    let read = |f: &str| {
        let path = dir.join(f);
        std::fs::read_to_string(&path)
            .map_err(|e| eprintln!("SKIPPED fat-tree-320-websearch-dcqcn: {}: {e}", path.display()))
            .ok()
    };
    let topo = read("fat-tree-320.topology.txt")?;
    let cdf = read("WebSearch_distribution.txt")?;
    let topo = Topology::parse(&topo, "fat-tree-320.topology.txt").expect("topology parses");
    let cdf = SizeCdf::parse(&cdf).expect("CDF parses");
    Some(topo.websearch_dcqcn(cdf, 0.3, Duration::from_us(200)))
}

fn events_of(c: &SimConfig) -> u64 {
    let mut sim = Simulator::new(c.clone()).expect("builds");
    sim.run();
    sim.events()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    let mut runs = vec![
        ("incast-64", config("incast", &["senders=64"])),
        ("four-bridge", config("four-bridge", &[])),
        ("incast-dcqcn", {
            let mut c = config("incast-dcqcn", &[]);
            c.duration = Duration::from_ms(2);
            c
        }),
    ];
    if let Some(c) = fat_tree() {
        runs.push(("fat-tree-320-websearch-dcqcn", c));
    }
    for (label, cfg) in runs {
        let events = events_of(&cfg);
        eprintln!("{label}: {events} events per run, {} simulated", cfg.duration);
        g.throughput(Throughput::Elements(events));
        // building the simulator is setup, not timed: the figure is the engine's event rate
        g.bench_function(format!("{label}/calendar"), |b| {
            b.iter_batched(
                || Simulator::new(cfg.clone()).expect("builds"),
                |mut sim| {
                    sim.run();
                    sim.events()
                },
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("{label}/binary-heap"), |b| {
            b.iter_batched(
                || Simulator::build(cfg.clone(), NoObserver, HeapQueue::with_capacity(4096)).expect("builds"),
                |mut sim| {
                    sim.run();
                    sim.events()
                },
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("{label}/radix-heap"), |b| {
            b.iter_batched(
                || Simulator::build(cfg.clone(), NoObserver, RadixQueue::default()).expect("builds"),
                |mut sim| {
                    sim.run();
                    sim.events()
                },
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("{label}/build-only"), |b| {
            b.iter(|| Simulator::new(cfg.clone()).expect("builds").events())
        });
    }
    g.finish();
}

/// Pending events in the hold model: about what the 320-host fat tree holds at 1 ms
/// (13.5 events per ns, most of them a 1 µs propagation delay ahead).
const HOLD_PENDING: usize = 16_384;
/// Hold operations (one pop, one push) per timed iteration.
const HOLD_OPS: u64 = 1 << 20;

/// Delays like the simulator's, in ps: a third a frame time ahead (0–120 ns, the end of a
/// transmission), the rest a 1 µs link plus a frame time (the arrival at the peer).
fn hold_delays() -> Vec<u128> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
    (0..4096)
        .map(|_| {
            let frame = rng.gen_range(0..120_000u128);
            if rng.gen_bool(1.0 / 3.0) {
                frame
            } else {
                1_000_000 + frame
            }
        })
        .collect()
}

/// One pre-filled queue, then `HOLD_OPS` hold operations; returns a checksum of the times.
fn hold<Q: EventQueue<Event>>(mut q: Q, delays: &[u128]) -> u128 {
    for (i, d) in delays.iter().cycle().take(HOLD_PENDING).enumerate() {
        q.push(Instant::from_ps(*d), Event::TxEnd(i as u32));
    }
    let mut sum = 0u128;
    let mut i = 0;
    for _ in 0..HOLD_OPS {
        let Some(s) = q.pop() else { break };
        sum = sum.wrapping_add(s.at.as_ps());
        q.push(Instant::from_ps(s.at.as_ps() + delays[i]), s.event);
        i = (i + 1) % delays.len();
    }
    sum
}

fn bench_queues(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue-hold-16k");
    g.sample_size(10);
    g.throughput(Throughput::Elements(HOLD_OPS));
    let delays = hold_delays();
    g.bench_function("calendar", |b| b.iter(|| hold(CalendarQueue::default(), &delays)));
    g.bench_function("binary-heap", |b| {
        b.iter(|| hold(HeapQueue::with_capacity(HOLD_PENDING), &delays))
    });
    g.bench_function("radix-heap", |b| b.iter(|| hold(RadixQueue::default(), &delays)));
    g.finish();
}

criterion_group!(benches, bench, bench_queues);
criterion_main!(benches);
