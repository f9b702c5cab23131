//! No transport call allocates after `new`: whole lossy transfers (go-back-N with a timeout,
//! IRN with SACKs and timeouts) run under a counting global allocator, with the driver's
//! queues reserved beforehand, and the count must not move. Checked against a broken engine:
//! a `Vec::with_capacity(1)` added to `Requester::poll_transmit` makes both tests fail.

use std::collections::VecDeque;

use lossless_proto::rocev2::{DataPacket, RcConfig, Recovery, Reply, Requester, Responder};
use lossless_proto::units::{Duration, Instant};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// splitmix64: a loss decision per packet without an RNG crate.
fn lose(state: &mut u64, percent: u64) -> bool {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % 100 < percent
}

/// Runs a 1 MB message over a 20 %-lossy channel (data and replies); returns the allocations
/// counted on this thread during the run and whether it completed.
fn transfer(cfg: RcConfig) -> (usize, bool, u64) {
    let bytes = 1_000_000;
    let mut req = Requester::new(cfg, bytes).unwrap();
    let mut resp = Responder::new(cfg, bytes).unwrap();
    let mut data: VecDeque<(Instant, DataPacket)> = VecDeque::with_capacity(100_000);
    let mut replies: VecDeque<(Instant, Reply)> = VecDeque::with_capacity(100_000);
    let (gap, delay) = (Duration::from_ns(100), Duration::from_us(2));
    let mut rng = 7;
    let mut now = Instant::ZERO;
    let before = thread_allocations();
    for _ in 0..2_000_000 {
        if let Some(p) = req.poll_transmit(now)
            && !lose(&mut rng, 20)
        {
            data.push_back((now + delay, p));
        }
        while data.front().is_some_and(|e| e.0 <= now) {
            let (at, p) = data.pop_front().unwrap();
            if let Some(r) = resp.handle_data(at, &p).reply
                && !lose(&mut rng, 20)
            {
                replies.push_back((at + delay, r));
            }
        }
        while replies.front().is_some_and(|e| e.0 <= now) {
            let (at, r) = replies.pop_front().unwrap();
            req.handle_reply(at, r);
        }
        if req.poll_timeout().is_some_and(|d| d <= now) {
            req.handle_timeout(now);
        }
        if req.is_complete() {
            break;
        }
        now += gap;
    }
    (
        thread_allocations() - before,
        req.is_complete(),
        req.counters().retransmitted_packets,
    )
}

#[test]
fn go_back_n_transfer_with_losses_and_timeouts_does_not_allocate() {
    let cfg = RcConfig {
        rto: Duration::from_us(20),
        ack_every: 4,
        ..RcConfig::hpcc_ns3()
    };
    let (allocs, complete, retx) = transfer(cfg);
    assert!(
        complete && retx > 0,
        "the run must complete and recover from losses"
    );
    assert_eq!(allocs, 0);
}

#[test]
fn irn_transfer_with_losses_and_timeouts_does_not_allocate() {
    let cfg = RcConfig {
        recovery: Recovery::Irn {
            bdp_cap_bytes: 50_000,
            rto_low: Duration::from_us(10),
            rto_high: Duration::from_us(30),
        },
        ..RcConfig::hpcc_ns3()
    };
    let (allocs, complete, retx) = transfer(cfg);
    assert!(
        complete && retx > 0,
        "the run must complete and recover from losses"
    );
    assert_eq!(allocs, 0);
}
