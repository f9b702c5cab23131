//! The scheduler's hot path (enqueue, select, on_transmitted, set_paused, next_eligible)
//! allocates nothing: counted by a global allocator wrapper.

use lossless_proto::ets::{EtsConfig, PortParams, Scheduler};
use lossless_proto::units::{Instant, Rate};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn decisions_allocate_nothing() {
    let cfg = EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets,2:ets,3:cb_shaper,4:strict up2tc=0:0,1:1,2:2,3:2,4:3,5:3,6:4,7:4 tcbw=7,13,80 numtcs=5",
    )
    .unwrap();
    let params = PortParams::new(Rate::from_gbps(100)).with_idle_slope(3, Rate::from_gbps(10));
    let mut s = Scheduler::ieee(&cfg, &params).unwrap();
    let mut now = Instant::ZERO;
    let mut lens = [0u32; 8];
    let before = thread_allocations();
    let mut x = 12345u64;
    for k in 0..100_000u32 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let p = ((x >> 33) % 8) as u8;
        let len = 64 + ((x >> 40) % 9153) as u32;
        if s.queued_frames(p) == 0 {
            lens[usize::from(p)] = len;
        }
        // one length per priority keeps the bookkeeping here allocation-free too
        s.enqueue(now, p, lens[usize::from(p)]).unwrap();
        let paused = if k % 1000 < 100 { 0b0000_0110 } else { 0 };
        if let Some(sel) = s.select(now, paused) {
            s.on_transmitted(now, sel.priority, lens[usize::from(sel.priority)])
                .unwrap();
            now += Rate::from_gbps(100).wire_time(u64::from(lens[usize::from(sel.priority)]));
        } else if let Some(t) = s.next_eligible(now) {
            now = t;
        }
    }
    assert_eq!(thread_allocations() - before, 0);
}
