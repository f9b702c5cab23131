//! No QCN engine call allocates: the congestion point's `on_enqueue` (sampling jitter drawn
//! from its own generator) and the reaction point's inputs and timeouts.
//!
//! Shown to fail with a `std::hint::black_box(vec![0u8; 1])` put by hand into the engine's
//! hot path (break reverted).

use lossless_proto::qcn::{Cp, CpParams, QcnRp, QcnRpParams};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn congestion_and_reaction_points_allocate_nothing_per_call() {
    let mut cp = Cp::new(CpParams::default(), 5).unwrap();
    let mut rp = QcnRp::new(QcnRpParams::default(), Rate::from_gbps(10)).unwrap();
    let mut now = Instant::ZERO;
    let mut q = 0u64;
    let before = thread_allocations();
    for k in 0..300_000u64 {
        now += Duration::from_ns(1_200);
        // a queue that swells and drains
        q = if (k / 20_000) % 2 == 0 {
            q + 300
        } else {
            q.saturating_sub(300)
        };
        if let Some(fb) = cp.on_enqueue(1500, q) {
            rp.handle_cnm(now, fb.qntz_fb);
        }
        while let Some(t) = rp.poll_timeout().filter(|&t| t <= now) {
            rp.handle_timeout(t);
        }
        rp.on_sent(now, 1500);
    }
    assert_eq!(thread_allocations() - before, 0);
    assert!(cp.counters().transmitted_cnms > 0 && rp.counters().rate_decreases > 0);
}
