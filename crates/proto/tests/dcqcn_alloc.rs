//! No DCQCN engine call allocates: `handle_cnp`, `on_sent`, `poll_timeout`, `handle_timeout`
//! of every preset's reaction point and `on_ce` / timeouts of the notification point, over a
//! long run with long idle gaps (alpha decaying to 0, timers skipped lazily) and releases.
//!
//! Shown to fail with a `std::hint::black_box(vec![0u8; 1])` put by hand into the engine's
//! hot path (break reverted).

use lossless_proto::dcqcn::{Np, NpParams, Rp, RpParams};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn reaction_and_notification_points_allocate_nothing_per_call() {
    for preset in ["connectx", "paper", "hpcc_ns3"] {
        let mut rp = Rp::new(RpParams::preset(preset).unwrap(), Rate::from_gbps(100)).unwrap();
        let mut np = Np::new(NpParams::preset(preset).unwrap());
        let mut now = Instant::ZERO;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let before = thread_allocations();
        for k in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // mostly 1 µs steps, now and then a 5 ms silence
            now += if k.is_multiple_of(5000) {
                Duration::from_ms(5)
            } else {
                Duration::from_ns(x % 2000)
            };
            while let Some(t) = rp.poll_timeout().filter(|&t| t <= now) {
                rp.handle_timeout(t);
            }
            while let Some(t) = np.poll_timeout().filter(|&t| t <= now) {
                np.handle_timeout(t);
            }
            if x.is_multiple_of(7) && np.on_ce(now) {
                rp.handle_cnp(now);
            }
            rp.on_sent(now, 1048);
        }
        assert_eq!(thread_allocations() - before, 0, "{preset}");
        assert!(
            rp.counters().rate_decreases > 0 && rp.counters().fast_recovery > 0,
            "{preset}"
        );
    }
}
