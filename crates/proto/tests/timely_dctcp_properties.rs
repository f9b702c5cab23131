//! Properties of the TIMELY and DCTCP senders (issue 23): the rate stays within [floor, line]
//! whatever the ACKs say, for any parameters; flows sharing a link converge to fair shares.
//!
//! The shared link is a fluid model: N flows on one link of rate `cap`, in steps of `tick` ns;
//! the link serves what arrives up to its rate and the rest queues; a flow gets one ACK per
//! 1000 bytes it sent, carrying what the link said at that step (DCTCP: a CE echo when the
//! queue is above K, step marking; TIMELY: the RTT, base plus the queue's delay). Flow k joins
//! at `k·join` ns. Each returns the flows' mean rates over the last quarter of the run.
//!
//! Checked to fail where it should: with T_high at the fork's 500 µs (the gradient region),
//! the same four TIMELY flows end at 1.6, 0.01, 3.2 and 5.2 Gb/s; here 2.45–2.62 Gb/s each.
//! DCTCP's four end at 23.7–24.1 Gb/s of 100.

use lossless_proto::dctcp::{Dctcp, DctcpParams};
use lossless_proto::timely::{Timely, TimelyParams};
use lossless_proto::units::Rate;
use proptest::prelude::*;

const LINE: Rate = Rate::from_gbps(100);

proptest! {
    #[test]
    fn timely_rate_stays_within_the_floor_and_the_line_rate(
        beta in 0.0f64..=1.0,
        alpha in 0.0f64..=1.0,
        t_low in 1u64..200_000,
        t_span in 0u64..1_000_000,
        min_rtt in 1u64..100_000,
        ai_mbps in 1u64..5000,
        hai_mbps in 1u64..20_000,
        min_mbps in 1u64..50_000,
        acks in prop::collection::vec((1u64..5000, 0u64..200_000, 0u64..3_000_000), 1..300),
    ) {
        let p = TimelyParams {
            alpha,
            beta,
            t_low_ns: t_low,
            t_high_ns: t_low + t_span,
            min_rtt_ns: min_rtt,
            rate_ai: Rate::from_mbps(ai_mbps),
            rate_hai: Rate::from_mbps(hai_mbps),
            min_rate: Rate::from_mbps(min_mbps),
        };
        let mut t = Timely::new(p, LINE).unwrap();
        let mut seq = 0u64;
        for (dseq, ahead, rtt) in acks {
            seq += dseq;
            let _ = t.handle_ack(seq, seq + ahead, rtt);
            let r = t.rate().bps();
            prop_assert!(r >= min_mbps * 1_000_000 && r <= LINE.bps(), "rate {}", r);
        }
    }

    #[test]
    fn dctcp_rate_stays_within_the_floor_and_the_line_rate(
        g in 0.0f64..=1.0,
        ai_mbps in 1u64..5000,
        min_mbps in 1u64..50_000,
        acks in prop::collection::vec((1u64..5000, any::<bool>(), 0u64..200_000), 1..300),
    ) {
        let p = DctcpParams {
            g,
            rate_ai: Rate::from_mbps(ai_mbps),
            min_rate: Rate::from_mbps(min_mbps),
            ..DctcpParams::hpcc_ns3()
        };
        let mut d = Dctcp::new(p, LINE).unwrap();
        let mut seq = 0u64;
        for (dseq, ce, ahead) in acks {
            seq += dseq;
            d.handle_ack(seq, ce, seq + ahead);
            let r = d.rate().bps();
            prop_assert!(r >= min_mbps * 1_000_000 && r <= LINE.bps(), "rate {}", r);
            prop_assert!((0.0..=1.0).contains(&d.alpha()), "alpha {}", d.alpha());
        }
    }
}

/// What a sender under test does with one ACK.
trait Sender {
    fn rate_bps(&self) -> f64;
    /// An ACK of byte `seq` with `snd_nxt` sent, the link's queue `q` bytes at `cap` b/s.
    fn ack(&mut self, seq: u64, snd_nxt: u64, q: f64, cap: f64);
}

/// DCTCP with step marking at `k` bytes.
struct StepMarked(Dctcp, f64);

impl Sender for StepMarked {
    fn rate_bps(&self) -> f64 {
        self.0.rate().bps() as f64
    }
    fn ack(&mut self, seq: u64, snd_nxt: u64, q: f64, _cap: f64) {
        self.0.handle_ack(seq, q > self.1, snd_nxt);
    }
}

/// TIMELY over a path of `base` ns round trip.
struct Rtt(Timely, f64);

impl Sender for Rtt {
    fn rate_bps(&self) -> f64 {
        self.0.rate().bps() as f64
    }
    fn ack(&mut self, seq: u64, snd_nxt: u64, q: f64, cap: f64) {
        let rtt = self.1 + q * 8e9 / cap;
        let _ = self.0.handle_ack(seq, snd_nxt, rtt as u64);
    }
}

fn shared_link<S: Sender>(
    mut flows: Vec<S>,
    cap_gbps: u64,
    rtt_ns: f64,
    join: u64,
    end: u64,
) -> (Vec<f64>, f64) {
    let n = flows.len();
    let tick = 100u64;
    let cap = cap_gbps as f64 * 1e9;
    let mut acked = vec![0f64; n];
    let mut q = 0f64;
    let mut t = 0u64;
    let (mut mean, mut samples, mut qmax) = (vec![0f64; n], 0f64, 0f64);
    while t < end {
        t += tick;
        let active = |k: usize| t >= k as u64 * join;
        let arrive: f64 = (0..n)
            .filter(|&k| active(k))
            .map(|k| flows[k].rate_bps() * tick as f64 / 8e9)
            .sum();
        let serve = (q + arrive).min(cap * tick as f64 / 8e9);
        q = q + arrive - serve;
        for k in (0..n).filter(|&k| active(k)) {
            let r = flows[k].rate_bps();
            let before = acked[k] as u64 / 1000;
            acked[k] += r * tick as f64 / 8e9;
            if acked[k] as u64 / 1000 == before {
                continue;
            }
            let seq = acked[k] as u64;
            let inflight = (r * rtt_ns / 8e9) as u64;
            flows[k].ack(seq, seq + inflight.max(1000), q, cap);
        }
        if t >= end / 4 * 3 {
            for (m, f) in mean.iter_mut().zip(&flows) {
                *m += f.rate_bps();
            }
            samples += 1.0;
            qmax = qmax.max(q);
        }
    }
    (mean.iter().map(|m| m / samples).collect(), qmax)
}

fn assert_fair(what: &str, rates: &[f64], cap: f64, within: f64) {
    let sum: f64 = rates.iter().sum();
    let fair = sum / rates.len() as f64;
    for r in rates {
        assert!((r - fair).abs() / fair < within, "{what}: rates {rates:?}");
    }
    assert!(
        sum > 0.8 * cap && sum <= cap * 1.001,
        "{what}: sum {sum} of {cap}: {rates:?}"
    );
}

#[test]
fn dctcp_flows_sharing_a_link_converge_to_fair_shares() {
    // four flows join a 100 G link 1 ms apart, step marking at 300 KB (the fork's profile)
    let flows = (0..4)
        .map(|_| StepMarked(Dctcp::new(DctcpParams::hpcc_ns3(), LINE).unwrap(), 300_000.0))
        .collect();
    let (rates, q) = shared_link(flows, 100, 10_000.0, 1_000_000, 60_000_000);
    assert_fair("dctcp", &rates, 100e9, 0.10);
    assert!(q < 2_000_000.0, "queue {q}");
}

#[test]
fn timely_flows_sharing_a_link_above_t_high_converge_to_fair_shares() {
    // TIMELY's gradient alone has many fixed points (Zhu et al., CoNEXT 2016: its shares
    // depend on where the flows started); above T_high its decrease is multiplicative and
    // its increase additive, which is fair. A 10 G link whose standing queue keeps the RTT
    // near T_high: four flows joining 1 ms apart
    let p = TimelyParams {
        t_low_ns: 5_000,
        t_high_ns: 20_000,
        min_rtt_ns: 5_000,
        rate_ai: Rate::from_mbps(10),
        rate_hai: Rate::from_mbps(50),
        min_rate: Rate::from_mbps(10),
        ..TimelyParams::hpcc_ns3()
    };
    let line = Rate::from_gbps(10);
    let flows = (0..4)
        .map(|_| Rtt(Timely::new(p, line).unwrap(), 5_000.0))
        .collect();
    let (rates, _) = shared_link(flows, 10, 5_000.0, 1_000_000, 200_000_000);
    assert_fair("timely", &rates, 10e9, 0.15);
}
