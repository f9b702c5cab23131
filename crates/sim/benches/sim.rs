//! Simulator throughput: events per second (and simulated time per wall second) on `incast`
//! with 64 senders and on `four-bridge`. Run: `cargo bench -p lossless-sim --bench sim`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lossless_sim::Simulator;
use lossless_sim::config::SimConfig;
use lossless_sim::event::{HeapQueue, RadixQueue};
use lossless_sim::observer::NoObserver;
use lossless_sim::scenario::{self, Overrides};

fn config(name: &str, set: &[&str]) -> SimConfig {
    let ov = Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    scenario::load(name, &ov).expect("built-in scenario loads")
}

fn events_of(c: &SimConfig) -> u64 {
    let mut sim = Simulator::new(c.clone()).expect("builds");
    sim.run();
    sim.events()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    for (label, cfg) in [
        ("incast-64", config("incast", &["senders=64"])),
        ("four-bridge", config("four-bridge", &[])),
    ] {
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

criterion_group!(benches, bench);
criterion_main!(benches);
