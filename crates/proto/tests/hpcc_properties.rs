//! Properties of the HPCC sender: its rate stays within [floor, line] whatever the INT records
//! say; flows sharing a link converge to fair shares near η of it; no HPCC or TIMELY call allocates.
//!
//! Shown to fail on a broken engine (break made by hand in `src/hpcc.rs`, reverted): dropping
//! the clamp (`rate_stays_within_the_floor_and_the_line_rate`), and using the flow's own
//! line rate instead of the hop's in uᵢ's queue term with a 25 G hop (`flows_sharing_...`
//! stays fair then, but the 25 G case below it fails).

use lossless_proto::hpcc::{Hpcc, HpccParams};
use lossless_proto::units::Rate;
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};
use lossless_wire::int::{IntHeader, IntHop};
use proptest::prelude::*;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const LINE: Rate = Rate::from_gbps(100);

proptest! {
    #[test]
    fn rate_stays_within_the_floor_and_the_line_rate(
        eta in 0.5f64..=1.0,
        ai_mbps in 1u64..5000,
        min_mbps in 1u64..50_000,
        stage in 0u32..6,
        fast in any::<bool>(),
        acks in prop::collection::vec((1u64..5000, 0u64..200_000, 0u64..2_000_000, 1u16..=5, 0usize..5), 1..300),
    ) {
        let p = HpccParams {
            eta,
            rate_ai: Rate::from_mbps(ai_mbps),
            min_rate: Rate::from_mbps(min_mbps),
            max_stage: stage,
            fast_react: fast,
            ..HpccParams::hpcc_ns3()
        };
        let mut h = Hpcc::new(p, LINE, 12_480, 156_000).unwrap();
        let (mut t, mut tx, mut seq) = (0u64, 0u64, 0u64);
        for (dt, dtx, q, nhop, rate_idx) in acks {
            t += dt;
            tx += dtx;
            seq += 1000;
            let mut int = IntHeader::default();
            for k in 0..nhop {
                let rate = [25u64, 50, 100, 200, 400][(rate_idx + usize::from(k)) % 5] * 1_000_000_000;
                int.push(IntHop::stamp(t + u64::from(k), tx, q, rate, 4));
            }
            let snd = seq + (dtx % 100_000);
            let _ = h.handle_ack(seq, snd, &int);
            let r = h.rate().bps();
            prop_assert!(r >= min_mbps * 1_000_000 && r <= LINE.bps(), "rate {}", r);
        }
    }
}

/// N flows on one link of rate `cap` with instant feedback, in steps of `tick` ns: the link
/// serves what arrives up to its rate, the rest queues; a flow gets one ACK per 1000 bytes it
/// sent (as one per packet), carrying the link's record at that step. Flow k joins at `k·join` ns. Returns each flow's mean rate over
/// the last quarter of the run (one ACK's rate is noisy: a 100-ns tick carries a few 512-B
/// INT units) and the largest queue then.
fn shared_link(n: usize, cap_gbps: u64, tick: u64, join: u64, end: u64) -> (Vec<u64>, f64) {
    let t_rtt = 4160u64;
    let cap = cap_gbps * 1_000_000_000;
    let mut flows: Vec<Hpcc> = (0..n)
        .map(|_| Hpcc::new(HpccParams::hpcc_ns3(), LINE, t_rtt, 52_000).unwrap())
        .collect();
    let mut acked = vec![0f64; n];
    let (mut q, mut tx) = (0f64, 0f64);
    let mut t = 0u64;
    let (mut mean, mut samples, mut qmax) = (vec![0f64; n], 0f64, 0f64);
    while t < end {
        t += tick;
        let active = |k: usize| t >= k as u64 * join;
        let arrive: f64 = (0..n)
            .filter(|&k| active(k))
            .map(|k| flows[k].rate().bps() as f64 * tick as f64 / 8e9)
            .sum();
        let serve = (q + arrive).min(cap as f64 * tick as f64 / 8e9);
        q = q + arrive - serve;
        tx += serve;
        let mut int = IntHeader::default();
        int.push(IntHop::stamp(t, tx as u64, q as u64, cap, 4));
        for k in (0..n).filter(|&k| active(k)) {
            let r = flows[k].rate().bps() as f64;
            let before = acked[k] as u64 / 1000;
            acked[k] += r * tick as f64 / 8e9;
            if acked[k] as u64 / 1000 == before {
                continue;
            }
            let seq = acked[k] as u64;
            let inflight = (r * t_rtt as f64 / 8e9) as u64;
            let _ = flows[k].handle_ack(seq, seq + inflight, &int);
        }
        if t >= end / 4 * 3 {
            for (m, f) in mean.iter_mut().zip(&flows) {
                *m += f.rate().bps() as f64;
            }
            samples += 1.0;
            qmax = qmax.max(q);
        }
    }
    (mean.iter().map(|m| (m / samples) as u64).collect(), qmax)
}

#[test]
fn flows_sharing_a_link_converge_to_fair_shares_near_eta_of_it() {
    // four flows join a 100 G link 1 ms apart; 40 ms later each has about a quarter of η
    let (rates, q) = shared_link(4, 100, 100, 1_000_000, 40_000_000);
    let sum: u64 = rates.iter().sum();
    let fair = sum as f64 / 4.0;
    for r in &rates {
        assert!((*r as f64 - fair).abs() / fair < 0.05, "rates {rates:?}");
    }
    let eta = 0.95 * 100e9;
    assert!(
        (sum as f64 - eta).abs() / eta < 0.03,
        "sum {sum}, rates {rates:?}"
    );
    assert!(q < 52_000.0, "queue {q}");
}

#[test]
fn flows_on_a_slower_hop_share_that_hop() {
    // a 25 G bottleneck under 100 G senders: the hop's own rate is the capacity. The shares
    // wander more here (a 512-B INT unit is 4 times as large against 25 G), within 15 %
    let (rates, _) = shared_link(2, 25, 100, 500_000, 40_000_000);
    let sum: u64 = rates.iter().sum();
    let eta = 0.95 * 25e9;
    assert!(
        (sum as f64 - eta).abs() / eta < 0.05,
        "sum {sum}, rates {rates:?}"
    );
    let fair = sum as f64 / 2.0;
    for r in &rates {
        assert!((*r as f64 - fair).abs() / fair < 0.15, "rates {rates:?}");
    }
}

#[test]
fn handle_ack_allocates_nothing() {
    let mut h = Hpcc::new(HpccParams::hpcc_ns3(), LINE, 12_480, 156_000).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let (mut t, mut tx, mut seq) = (0u64, 0u64, 0u64);
    let before = thread_allocations();
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += x % 200;
        tx += x % 3000;
        seq += 1000;
        let mut int = IntHeader::default();
        for k in 0..(x % 5 + 1) {
            int.push(IntHop::stamp(t + k, tx, (x >> 20) % 300_000, 100_000_000_000, 4));
        }
        std::hint::black_box(h.handle_ack(seq, seq + (x >> 30) % 200_000, &int));
    }
    assert_eq!(thread_allocations() - before, 0);
}

#[test]
fn timely_handle_ack_allocates_nothing() {
    use lossless_proto::timely::{Timely, TimelyParams};
    let mut t = Timely::new(TimelyParams::hpcc_ns3(), LINE).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut seq = 0u64;
    let before = thread_allocations();
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        seq += 1000;
        std::hint::black_box(t.handle_ack(seq, seq + (x >> 40) % 5000, (x >> 8) % 1_000_000));
    }
    assert_eq!(thread_allocations() - before, 0);
}
