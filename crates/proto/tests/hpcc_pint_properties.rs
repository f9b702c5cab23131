//! Properties of HPCC-PINT: the sender's rate stays within [floor, line] whatever the codes
//! say; flows sharing a link whose port computes the code converge to fair shares near η of
//! it; no call allocates.
//!
//! Shown to fail on a broken engine (breaks made by hand in `src/hpcc_pint.rs`, reverted):
//! dropping the clamp (`rate_stays_within_the_floor_and_the_line_rate`), and leaving out the
//! queue term of the port's estimate (`flows_sharing_a_link_...`).

use lossless_proto::hpcc_pint::{HpccPint, PintCodec, PintParams, PintPort};
use lossless_proto::units::Rate;
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};
use lossless_wire::pint::PintField;
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
        prob in 0.0f64..=1.0,
        base in prop::sample::select(vec![1.01f64, 1.05, 1.2]),
        acks in prop::collection::vec((0u16..2048, 0u64..200_000), 1..300),
    ) {
        let p = PintParams {
            eta,
            rate_ai: Rate::from_mbps(ai_mbps),
            min_rate: Rate::from_mbps(min_mbps),
            max_stage: stage,
            log_base: base,
            prob,
        };
        let mut h = HpccPint::new(p, LINE, 5).unwrap();
        let mut seq = 0u64;
        for (code, ahead) in acks {
            seq += 1000;
            let _ = h.handle_ack(seq, seq + ahead, PintField(code));
            let r = h.rate().bps();
            prop_assert!(r >= min_mbps * 1_000_000 && r <= LINE.bps(), "rate {}", r);
        }
    }
}

/// N flows on one link of rate `cap`: in steps of one 1050-B packet time, the link's port
/// sends a packet when it has one queued and stamps it with its code; a flow gets one ACK per
/// 1000 bytes it sent, carrying the code of the last packet the port sent (feedback without
/// delay). Flow k joins at `k·join` ns. Returns each flow's mean rate over the last quarter and
/// the largest queue then.
fn shared_link(n: usize, cap_gbps: u64, join: u64, end: u64) -> (Vec<u64>, f64) {
    let t_rtt = 12_480u64;
    let cap = cap_gbps * 1_000_000_000;
    let tick = 1050 * 8 * 1_000_000_000 / cap; // ns per packet at the link's rate
    let codec = PintCodec::new(1.01).unwrap();
    let mut port = PintPort::new(codec, Rate::from_bps(cap).unwrap(), t_rtt, 11).unwrap();
    let mut flows: Vec<HpccPint> = (0..n)
        .map(|k| HpccPint::new(PintParams::hpcc_ns3(), LINE, k as u64).unwrap())
        .collect();
    let mut sent = vec![0f64; n];
    let mut q = 0f64;
    let mut t = 0u64;
    let mut code = PintField::default();
    let (mut mean, mut samples, mut qmax) = (vec![0f64; n], 0f64, 0f64);
    while t < end {
        t += tick;
        let active = |k: usize| t >= k as u64 * join;
        q += (0..n)
            .filter(|&k| active(k))
            .map(|k| flows[k].rate().bps() as f64 * tick as f64 / 8e9)
            .sum::<f64>();
        if q >= 1050.0 {
            q -= 1050.0;
            let mut f = PintField::default();
            port.stamp(&mut f, t, q as u64, 1050);
            code = f;
        }
        for k in (0..n).filter(|&k| active(k)) {
            let r = flows[k].rate().bps() as f64;
            let before = sent[k] as u64 / 1000;
            sent[k] += r * tick as f64 / 8e9;
            if sent[k] as u64 / 1000 == before {
                continue;
            }
            let seq = sent[k] as u64;
            let inflight = (r * t_rtt as f64 / 8e9) as u64;
            let _ = flows[k].handle_ack(seq, seq + inflight, code);
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
    // four flows join a 100 G link 1 ms apart; 200 ms later each has about a quarter of η (the
    // shares converge by a factor 1 − N·R_AI/(η·C) per round trip)
    let (rates, q) = shared_link(4, 100, 1_000_000, 200_000_000);
    let sum: u64 = rates.iter().sum();
    let fair = sum as f64 / 4.0;
    for r in &rates {
        assert!((*r as f64 - fair).abs() / fair < 0.05, "rates {rates:?}");
    }
    let eta = 0.95 * 100e9;
    assert!(
        (sum as f64 - eta).abs() / eta < 0.05,
        "sum {sum}, rates {rates:?}"
    );
    assert!(q < 156_000.0, "queue {q}");
}

#[test]
fn handle_ack_and_the_port_update_allocate_nothing() {
    let mut h = HpccPint::new(
        PintParams {
            prob: 0.5,
            ..PintParams::hpcc_ns3()
        },
        LINE,
        1,
    )
    .unwrap();
    let mut port = PintPort::new(PintCodec::new(1.01).unwrap(), LINE, 12_480, 2).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let (mut t, mut seq) = (0u64, 0u64);
    let before = thread_allocations();
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += x % 200;
        seq += 1000;
        let mut f = PintField::default();
        port.stamp(&mut f, t, (x >> 20) % 3_000_000, 60 + x % 1000);
        std::hint::black_box(h.handle_ack(seq, seq + (x >> 30) % 200_000, f));
    }
    assert_eq!(thread_allocations() - before, 0);
}
