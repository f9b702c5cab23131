//! The pathology parts allocate nothing per event once a run is warm: stalls and storm
//! prevention, pfcwd polls, the detector's scans, link-fault checks and victim accounting.

mod common;

use common::load;
use lossless_proto::units::{Duration, Instant};
use lossless_sim::Simulator;
use lossless_sim::config::SimConfig;
use lossless_sim::config::pathology::VictimConfig;
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Runs `c` to `warm`, then counts the allocations from `warm` to `until`; the events handled
/// in that span come back too.
fn steady(c: SimConfig, warm: Duration, until: Duration) -> (usize, u64) {
    let mut sim = Simulator::new(c).expect("builds");
    sim.run_until(Instant::ZERO + warm);
    let events = sim.events();
    let before = thread_allocations();
    sim.run_until(Instant::ZERO + until);
    (thread_allocations() - before, sim.events() - events)
}

#[test]
fn a_storm_with_its_detector_and_victims_allocates_nothing_per_event() {
    let mut c = load("storm-nic", &[], None);
    c.pathology.victims = Some(VictimConfig::default());
    // the storm, its finding (31 ms) and the prevention (110 ms) are behind: the fabric runs
    let (allocs, events) = steady(c, Duration::from_ms(200), Duration::from_ms(260));
    assert!(events > 50_000, "{events}");
    assert_eq!(allocs, 0, "{allocs} allocations in {events} events");
}

#[test]
fn pfcwd_polls_and_a_held_storm_allocate_nothing() {
    let c = load("storm-pfcwd", &[], None);
    // from 410 ms the stalled queue is in the drop state, collateral queues wait for their
    // restoration: polls, drops, scans
    let (allocs, events) = steady(c, Duration::from_ms(410), Duration::from_ms(790));
    assert!(events > 10_000, "{events}");
    assert_eq!(allocs, 0, "{allocs} allocations in {events} events");
}

#[test]
fn a_held_deadlock_under_the_detector_allocates_nothing() {
    let mut c = load("deadlock-ring", &[], None);
    if let Some(d) = c.pathology.deadlock.as_mut() {
        d.stop = false;
    }
    let (allocs, events) = steady(c, Duration::from_ms(2), Duration::from_ms(20));
    assert!(events > 1_000, "{events}");
    assert_eq!(allocs, 0, "{allocs} allocations in {events} events");
}

#[test]
fn four_bridge_with_victim_accounting_allocates_nothing_per_event() {
    let c = load("four-bridge", &[], Some(Duration::from_ms(2)));
    let (allocs, events) = steady(c, Duration::from_ms(1), Duration::from_ms(2));
    assert!(events > 40_000, "{events}");
    assert_eq!(allocs, 0, "{allocs} allocations in {events} events");
}
