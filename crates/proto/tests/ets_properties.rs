//! Property tests over random valid configurations (IEEE and CEE), random frame sizes and
//! random PFC pauses: the selection rules hold at every decision, and the bandwidth classes
//! get their share of what the strict classes leave in every window of 1,000 maximum frames,
//! before, during and after a pause.

// indexing by priority and TC number reads as the tables do
#![allow(clippy::needless_range_loop)]

mod ets_support;

use ets_support::{Port, Source, worst_window_deviation};
use lossless_proto::ets::{Algorithm, CeeConfig, EtsConfig, PortParams, Scheduler};
use lossless_proto::units::{Duration, Rate};
use lossless_wire::lldp::Tsa;
use proptest::prelude::*;

const G100: Rate = Rate::from_gbps(100);

/// Splits 100 into `n` parts at the given cut points (sorted, distinct, in 1..100).
fn parts(n: usize, cuts: &[u8]) -> Vec<u8> {
    let mut c: Vec<u8> = cuts.iter().copied().take(n.saturating_sub(1)).collect();
    c.sort_unstable();
    c.dedup();
    let mut out = Vec::new();
    let mut prev = 0u8;
    for &x in &c {
        out.push(x - prev);
        prev = x;
    }
    out.push(100 - prev);
    while out.len() < n {
        out.push(0);
    }
    out
}

#[derive(Debug, Clone)]
struct IeeeCase {
    max_tcs: u8,
    alg: Vec<u8>,
    prio_tc: Vec<u8>,
    cuts: Vec<u8>,
    slopes: Vec<u8>,
    seed: u64,
    pause: u8,
}

fn ieee_case() -> impl Strategy<Value = IeeeCase> {
    (1u8..=8)
        .prop_flat_map(|max_tcs| {
            (
                Just(max_tcs),
                prop::collection::vec(0u8..6, 8),
                prop::collection::vec(0..max_tcs, 8),
                prop::collection::vec(1u8..100, 7),
                prop::collection::vec(1u8..=30, 8),
                any::<u64>(),
                any::<u8>(),
            )
        })
        .prop_map(|(max_tcs, alg, prio_tc, cuts, slopes, seed, pause)| IeeeCase {
            max_tcs,
            alg,
            prio_tc,
            cuts,
            slopes,
            seed,
            pause,
        })
}

/// The configuration and port parameters of a case: algorithm codes 0..=2 ETS, 3..=4
/// strict, 5 CBS; ETS bandwidths from the cut points.
fn build(c: &IeeeCase) -> (EtsConfig, PortParams) {
    let mut tsa = [Tsa::STRICT; 8];
    let mut params = PortParams::new(G100);
    let mut ets = Vec::new();
    for tc in 0..usize::from(c.max_tcs) {
        tsa[tc] = match c.alg[tc] {
            0..=2 => {
                ets.push(tc);
                Tsa::ETS
            }
            3 | 4 => Tsa::STRICT,
            _ => {
                params = params.with_idle_slope(tc as u8, Rate::from_gbps(u64::from(c.slopes[tc])));
                Tsa::CREDIT_BASED_SHAPER
            }
        };
    }
    let mut bw = [0u8; 8];
    if !ets.is_empty() {
        for (tc, b) in ets.iter().zip(parts(ets.len(), &c.cuts)) {
            bw[*tc] = b;
        }
    }
    let mut up = [Some(0u8); 8];
    for p in 0..8 {
        up[p] = Some(c.prio_tc[p]);
    }
    (
        EtsConfig::new(c.max_tcs, up, tsa, bw).expect("generated configuration is valid"),
        params,
    )
}

/// The class that must be chosen, by the rules: the highest strict or eligible CBS TC with a
/// ready priority, else some ETS TC (`None` = any ETS TC with a ready priority).
fn expected_strict(port: &mut Port, cfg: &EtsConfig) -> Option<u8> {
    let ready = port.s.backlogged() & !port.paused;
    for tc in (0..cfg.max_tcs()).rev() {
        if cfg.priorities_of(tc) & ready == 0 {
            continue;
        }
        match cfg.algorithm()[usize::from(tc)] {
            Algorithm::Strict => return Some(tc),
            Algorithm::CreditBasedShaper => {
                if port.s.shaper_credit(port.now, tc).unwrap() >= 0 {
                    return Some(tc);
                }
            }
            Algorithm::Ets => {}
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn selection_rules_hold_at_every_decision(c in ieee_case(), kinds in prop::collection::vec(0u8..4, 8)) {
        let (cfg, params) = build(&c);
        let mut port = Port::new(Scheduler::ieee(&cfg, &params).unwrap(), c.seed);
        for p in 0..8 {
            port.sources[p] = match kinds[p] {
                0 => Source::Off,
                1 | 2 => Source::Saturated,
                _ => Source::Paced { period: Duration::from_ns(700), len: 64 + (p as u32) * 1000 },
            };
        }
        let mut rng = ets_support::Rng(c.seed ^ 0x5555);
        for step in 0..3_000 {
            if step % 97 == 0 {
                let m = (rng.next_u64() & u64::from(c.pause)) as u8;
                port.pause(m);
            }
            port.feed();
            let ready = port.s.backlogged() & !port.paused;
            let want = expected_strict(&mut port, &cfg);
            let ets_ready = (0..cfg.max_tcs())
                .filter(|&tc| cfg.algorithm()[usize::from(tc)] == Algorithm::Ets)
                .any(|tc| cfg.priorities_of(tc) & ready != 0);
            let before = port.log.len();
            port.step();
            if port.log.len() > before {
                let s = *port.log.last().unwrap();
                prop_assert!(ready & (1 << s.sel.priority) != 0, "chose a priority without a ready frame");
                prop_assert_eq!(s.sel.class, cfg.prio_tc()[usize::from(s.sel.priority)]);
                match want {
                    Some(tc) => prop_assert_eq!(s.sel.class, tc, "strict/CBS rank order"),
                    None => prop_assert_eq!(cfg.algorithm()[usize::from(s.sel.class)], Algorithm::Ets),
                }
            } else {
                // work-conserving: idle only when nothing may be sent
                prop_assert!(want.is_none() && !ets_ready, "idle with a sendable frame");
            }
        }
        for p in 0..8u8 {
            let sent: u64 = port.log.iter().filter(|s| s.sel.priority == p).map(|s| u64::from(s.len)).sum();
            prop_assert_eq!(port.s.sent_bytes(p), sent);
        }
    }

    #[test]
    fn ets_shares_hold_in_every_window_before_during_and_after_a_pause(c in ieee_case()) {
        let (cfg, params) = build(&c);
        let ets: Vec<u8> = (0..cfg.max_tcs())
            .filter(|&tc| cfg.algorithm()[usize::from(tc)] == Algorithm::Ets && cfg.priorities_of(tc) != 0)
            .collect();
        prop_assume!(ets.len() >= 2);
        let mut port = Port::new(Scheduler::ieee(&cfg, &params).unwrap(), c.seed);
        for p in 0..8u8 {
            let tc = cfg.prio_tc()[usize::from(p)];
            port.sources[usize::from(p)] = match cfg.algorithm()[usize::from(tc)] {
                Algorithm::Ets | Algorithm::CreditBasedShaper => Source::Saturated,
                // strict traffic: 1500-byte frames every 1.5 µs (8 % of 100 Gb/s) per priority
                Algorithm::Strict => Source::Paced { period: Duration::from_ns(1500), len: 1500 },
            };
        }
        // the pause keeps at least one ETS class running
        let mut pause = c.pause;
        if ets.iter().all(|&tc| cfg.priorities_of(tc) & !pause == 0) {
            pause &= !cfg.priorities_of(ets[0]);
        }
        let expected = |paused: u8| -> Vec<(u8, f64)> {
            let busy: Vec<u8> = ets.iter().copied().filter(|&tc| cfg.priorities_of(tc) & !paused != 0).collect();
            let sum: u32 = busy.iter().map(|&tc| u32::from(cfg.bandwidth()[usize::from(tc)])).sum();
            ets.iter()
                .map(|&tc| {
                    let share = if !busy.contains(&tc) {
                        0.0
                    } else if sum == 0 {
                        100.0 / busy.len() as f64
                    } else {
                        f64::from(cfg.bandwidth()[usize::from(tc)]) * 100.0 / f64::from(sum)
                    };
                    (tc, share)
                })
                .collect()
        };
        let by_class = |s: &ets_support::Sent| s.sel.class;
        for (phase, mask) in [(0, 0u8), (1, pause), (2, 0)] {
            port.pause(mask);
            let mark = port.log.len();
            let mut ets_bytes = 0u64;
            while ets_bytes < 4 * ets_support::WINDOW {
                if let Some(s) = port.step()
                    && ets.contains(&s.sel.class)
                {
                    ets_bytes += u64::from(s.len) + 20;
                }
            }
            let (worst, windows) = worst_window_deviation(&port.log[mark..], by_class, &expected(mask), 20);
            prop_assert!(windows > 100, "phase {}: {} windows", phase, windows);
            prop_assert!(worst < 1.0, "phase {}: worst window off by {} points, {:?}", phase, worst, cfg);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn cee_priorities_get_group_share_times_their_share(
        pgid in prop::collection::vec(prop_oneof![0u8..4, Just(15u8)], 8),
        pg_cuts in prop::collection::vec(1u8..100, 3),
        up_cuts in prop::collection::vec(prop::collection::vec(1u8..100, 7), 4),
        seed in any::<u64>(),
    ) {
        let groups: Vec<u8> = (0..4).filter(|g| pgid.contains(g)).collect();
        prop_assume!(!groups.is_empty());
        let mut pg_bw = [0u8; 8];
        for (g, b) in groups.iter().zip(parts(groups.len(), &pg_cuts)) {
            pg_bw[usize::from(*g)] = b;
        }
        let mut up = [0u8; 8];
        for &g in &groups {
            let members: Vec<usize> = (0..8).filter(|&p| pgid[p] == g).collect();
            for (p, b) in members.iter().zip(parts(members.len(), &up_cuts[usize::from(g)])) {
                up[*p] = b;
            }
        }
        let pgid: [u8; 8] = pgid.try_into().unwrap();
        let cfg = CeeConfig::new(pgid, pg_bw, up, 0).unwrap();
        let mut port = Port::new(Scheduler::cee(&cfg, &PortParams::new(G100)).unwrap(), seed);
        let mut expected = Vec::new();
        let busy_sum: u32 = groups.iter().map(|&g| u32::from(pg_bw[usize::from(g)])).sum();
        for p in 0..8u8 {
            let g = pgid[usize::from(p)];
            if g == 15 {
                port.sources[usize::from(p)] = Source::Paced { period: Duration::from_us(2), len: 1000 };
                continue;
            }
            port.sources[usize::from(p)] = Source::Saturated;
            let g_share = if busy_sum == 0 { 100.0 / groups.len() as f64 } else { f64::from(pg_bw[usize::from(g)]) * 100.0 / f64::from(busy_sum) };
            let members = pgid.iter().filter(|&&x| x == g).count();
            let up_sum: u32 = (0..8).filter(|&q| pgid[q] == g).map(|q| u32::from(up[q])).sum();
            let p_share = if up_sum == 0 { 1.0 / members as f64 } else { f64::from(up[usize::from(p)]) / f64::from(up_sum) };
            // zero-share priorities of a group with others wait; zero-share groups likewise
            expected.push((p, g_share * p_share));
        }
        port.run_frames(12_000);
        let (worst, windows) = worst_window_deviation(&port.log, |s| s.sel.priority, &expected, 20);
        prop_assume!(windows > 100);
        prop_assert!(worst < 1.0, "worst {} over {} windows; {:?}", worst, windows, cfg);
    }
}
