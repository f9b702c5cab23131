//! DCQCN in a closed loop (tests/dcqcn_support/closed_loop.rs: paced senders, one 40 Gb/s
//! bottleneck with an ECN marker, receivers with notification points, CNPs back; integer ps,
//! no simulator) against what DCQCN's own analysis predicts.
//!
//! Setting: Zhu et al. 2015's testbed speed (40 Gb/s), the `paper` presets, the marking
//! thresholds usually cited for the paper (Kmin 5 KB, Kmax 200 KB, Pmax 1 %) applied at
//! dequeue (so the feedback delay is the loop's fixed 4 µs, as the fluid model assumes),
//! 1000-byte packets, 1 µs sender→switch, 1 µs switch→receiver, 2 µs back.
//!
//! The paper's convergence figure was not reachable from here (only its abstract and first
//! page are stored), so the time bound of the first test is derived from the algorithm
//! instead, and the second test holds the loop against the paper's fluid model.
//!
//! Both were run against broken engines (break by hand, reverted): a notification point that
//! drops CEs inside the CNP interval instead of sending a late CNP fails the fixed point (N = 4
//! queue +29 %); a cut by α instead of α/2 fails both (N = 2 queue −31 %; 15/25 Gb/s). A
//! doubled alpha gain passes both, rightly: g sets how fast alpha moves, not where it settles.

mod dcqcn_support;

use dcqcn_support::closed_loop::{LoopConfig, run};
use dcqcn_support::fluid::{FluidParams, fixed_point};
use lossless_proto::dcqcn::{NpParams, RpParams};
use lossless_proto::ecn::{EcnConfig, MarkPoint};
use lossless_proto::units::{Duration, Instant, Rate};

const C: f64 = 40e9;

fn paper_loop(starts: Vec<Instant>, seed: u64) -> LoopConfig {
    LoopConfig {
        starts,
        line: Rate::from_gbps(40),
        bottleneck: Rate::from_gbps(40),
        packet_bytes: 1000,
        delay_to_switch: Duration::from_us(1),
        delay_to_receiver: Duration::from_us(1),
        delay_back: Duration::from_us(2),
        ecn: EcnConfig {
            point: MarkPoint::Dequeue,
            ..EcnConfig::dcqcn_paper()
        },
        rp: RpParams::paper(),
        np: NpParams::paper(),
        seed,
    }
}

fn ms(n: u64) -> Instant {
    Instant::ZERO + Duration::from_ms(n)
}

/// The paper's model with the same parameters as `paper_loop`.
fn model() -> FluidParams {
    let rp = RpParams::paper();
    FluidParams {
        capacity_bps: C,
        line_bps: C,
        packet_bits: 8000.0,
        kmin_bits: 5_000.0 * 8.0,
        kmax_bits: 200_000.0 * 8.0,
        pmax: 0.01,
        g: f64::from(1024 - rp.dce_tcp_g) / 1024.0,
        tau: NpParams::paper().min_time_between_cnps.as_secs_f64(),
        tau_alpha: rp.dce_tcp_rtt.as_secs_f64(),
        timer: rp.rpg_time_reset.as_secs_f64(),
        byte_counter_pkts: rp.rpg_byte_reset as f64 / 1000.0,
        f: f64::from(rp.rpg_threshold),
        r_ai_bps: rp.rpg_ai_rate.bps() as f64,
        delay: 4e-6,
    }
}

/// Two flows: the second joins a link the first fills. After the join both are cut (deeply:
/// alpha starts at 1 and the queue overshoots Kmax before the first CNP returns), then climb
/// back by additive increase: R_AI = 40 Mb/s per timer period T = 55 µs once F = 5 fast
/// recovery periods passed (the 10 MB byte counter is too slow at these rates to reach hyper
/// increase). From any trough, reaching C/2 = 20 Gb/s takes at most
/// F·T + (C/2)/(R_AI/T) = 0.275 + 27.5 ms; with the 10 ms averaging window, fair share (both
/// 10 ms averages within ±10 % of C/2) must show by join + 37.8 ms. After that, DCQCN keeps
/// oscillating around fair share; asserted: every later 10 ms average within ±25 % of C/2,
/// and from one window later (the climb is over) the link at least 95 % used. Measured over seeds 1..6 (200 ms runs): fair share first at
/// join + 17..31 ms, worst later deviation 17.5 %, worst utilisation 97.9 %.
#[test]
fn two_paper_flows_reach_fair_share_within_the_additive_increase_bound() {
    let join = 5u64;
    let bound_us = 5_000 + 275 + 27_500 + 10_000;
    for seed in [1, 2, 3] {
        let cfg = paper_loop(vec![ms(0), ms(join)], seed);
        let trace = run(&cfg, ms(120), Duration::from_ms(1), ms(0));
        // before the join, flow 1 alone at line rate
        for s in &trace.samples[1..join as usize] {
            assert_eq!(s.delivered[0], 5_000_000, "40 Gb/s = 5 MB per ms, at {}", s.at);
        }
        // (end of window in µs, flow 1 b/s, flow 2 b/s) for every 10 ms window
        let windows: Vec<(u64, f64, f64)> = (9..trace.samples.len())
            .map(|k| {
                let w = &trace.samples[k - 9..=k];
                let rate = |f: usize| w.iter().map(|s| s.delivered[f]).sum::<u64>() as f64 * 8.0 / 10e-3;
                (1_000 * (k as u64 + 1), rate(0), rate(1))
            })
            .collect();
        let dev = |r: f64| (r - C / 2.0).abs() / (C / 2.0);
        let fair = windows
            .iter()
            .find(|w| w.0 > 1_000 * join && dev(w.1) <= 0.10 && dev(w.2) <= 0.10)
            .unwrap_or_else(|| panic!("seed {seed}: never within 10 % of fair share"));
        assert!(
            fair.0 <= bound_us,
            "seed {seed}: fair share only at {} µs",
            fair.0
        );
        for w in windows.iter().filter(|w| w.0 >= fair.0) {
            assert!(
                dev(w.1) <= 0.25 && dev(w.2) <= 0.25,
                "seed {seed}: {:.2} / {:.2} Gb/s in the 10 ms to {} µs",
                w.1 / 1e9,
                w.2 / 1e9,
                w.0
            );
            if w.0 >= fair.0 + 10_000 {
                assert!(
                    w.1 + w.2 >= 0.95 * C,
                    "seed {seed}: link {:.2} Gb/s to {} µs",
                    (w.1 + w.2) / 1e9,
                    w.0
                );
            }
        }
    }
}

/// N flows started together settle where the paper's fluid model has its fixed point:
/// R_C* = C/N, α* = 1 − (1 − p*)^{τ'R_C*}, q* = Kmin + p*/Pmax·(Kmax − Kmin), p* the root of
/// dR_C/dt = 0 once dR_T/dt = dα/dt = 0 (tests/dcqcn_support/fluid.rs): q* = 20.2, 41.8 and
/// 93.8 KB, α* = 0.101, 0.122, 0.145 for N = 2, 4, 8. Averages over 60..200 ms.
/// Stated tolerance: mean queue within 25 % and mean alpha within 20 % of the model, link at
/// least 98 % used, Jain's fairness index of the throughputs at least 0.99. Why 25 %: the
/// model replaces per-packet random marks and discrete CNP windows by their expectations,
/// and the loop sits consistently below it; measured over seeds 1..20, queue −21..−7 %,
/// −9..0 %, −16..−7 % (means −14, −4, −11 %) and alpha −14..−8 %, −6..−3 %, −4..−2 % for
/// N = 2, 4, 8.
#[test]
fn closed_loop_settles_at_the_fluid_model_fixed_point() {
    let m = model();
    for n in [2usize, 4, 8] {
        let (p, alpha, _) = fixed_point(&m, n);
        let q_model = 5_000.0 + p / 0.01 * 195_000.0;
        let cfg = paper_loop(vec![ms(0); n], 7);
        let t = run(&cfg, ms(200), Duration::from_ms(10), ms(60));
        let q_err = t.mean_queue / q_model - 1.0;
        assert!(
            q_err.abs() <= 0.25,
            "N={n}: mean queue {:.0} B vs model {q_model:.0} B",
            t.mean_queue
        );
        for (f, a) in t.mean_alpha.iter().enumerate() {
            assert!(
                (a / alpha - 1.0).abs() <= 0.20,
                "N={n} flow {f}: mean alpha {a:.4} vs model {alpha:.4}"
            );
        }
        let rates: Vec<f64> = t.delivered_since.iter().map(|&b| b as f64 * 8.0 / 0.14).collect();
        let sum: f64 = rates.iter().sum();
        let jain = sum * sum / (n as f64 * rates.iter().map(|r| r * r).sum::<f64>());
        assert!(sum >= 0.98 * C, "N={n}: link {:.3} Gb/s", sum / 1e9);
        assert!(jain >= 0.99, "N={n}: Jain index {jain:.4} over {rates:?}");
    }
}
