//! The ECN marker's decision allocates nothing.
//!
//! Shown to fail with a `std::hint::black_box(vec![0u8; 1])` put by hand into the engine's
//! hot path (break reverted).

use lossless_proto::ecn::{EcnConfig, EcnMarker};
use lossless_proto::units::Rate;
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn decide_allocates_nothing() {
    let mut m = EcnMarker::new(EcnConfig::hpcc_ns3(Rate::from_gbps(100)), 1).unwrap();
    let before = thread_allocations();
    let mut marked = 0u32;
    for q in (0..2_000_000u64).step_by(7) {
        marked += u32::from(m.decide(q));
    }
    assert_eq!(thread_allocations() - before, 0);
    assert!(marked > 0);
}
