//! The simulator's hot path allocates nothing per event: once queues and the event calendar
//! have grown to their working size, running on allocates nothing — with PFC only
//! (`four-bridge`, `incast`) and with RoCEv2 QPs, ACKs, CNPs, ECN marking and DCQCN
//! (`incast-dcqcn`, `four-bridge-cn`).

mod common;

use lossless_proto::units::{Duration, Instant};
use lossless_sim::Simulator;
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Events handled and allocations made between `warm` and `end` of built-in `name`.
fn steady(name: &str, set: &[&str], warm: Duration, end: Duration) -> (u64, usize) {
    let c = common::load(name, set, Some(end));
    let mut sim = Simulator::new(c).unwrap();
    sim.run_until(Instant::ZERO + warm);
    let (e0, a0) = (sim.events(), thread_allocations());
    sim.run();
    let (e1, a1) = (sim.events(), thread_allocations());
    assert!(sim.fault().is_none());
    (e1 - e0, a1 - a0)
}

#[test]
fn pfc_runs_allocate_nothing_once_warm() {
    for (name, set, warm, end) in [
        (
            "four-bridge",
            &[][..],
            Duration::from_us(300),
            Duration::from_ms(1),
        ),
        (
            "incast",
            &["senders=16"][..],
            Duration::from_us(300),
            Duration::from_ms(2),
        ),
    ] {
        let (events, allocs) = steady(name, set, warm, end);
        assert!(events > 10_000, "{name}: {events} events");
        assert_eq!(allocs, 0, "{name}: {allocs} allocations in {events} events");
    }
}

#[test]
fn dcqcn_runs_allocate_nothing_once_warm() {
    for (name, warm, end) in [
        ("incast-dcqcn", Duration::from_ms(2), Duration::from_ms(6)),
        ("four-bridge-cn", Duration::from_ms(2), Duration::from_ms(5)),
    ] {
        let (events, allocs) = steady(name, &[], warm, end);
        assert!(events > 100_000, "{name}: {events} events");
        assert_eq!(allocs, 0, "{name}: {allocs} allocations in {events} events");
    }
}
