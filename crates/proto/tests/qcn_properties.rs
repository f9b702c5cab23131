//! Properties of the QCN engines.
//!
//! Shown to fail on deliberately broken engines (break made by hand in `src/qcn/` or
//! `src/dcqcn/increase.rs`, test run and seen to fail, break reverted):
//! - `cnm_feedback_is_6_bit_negative_fb_only_and_matches_the_formula`: the clamp to Fbmax
//!   removed (QntzFb above 63); Qold not updated at samples (wrong Fb); QntzFb rounded down
//!   (no CNM for a small negative Fb).
//! - `rate_stays_between_min_and_max_and_below_target`: `.max(self.min.bps())` dropped from
//!   the cut (rate below the minimum); the target guard applied on every event (target below
//!   the rate).
//! - `lazy_reaction_point_announces_every_change_of_one_ticked_every_microsecond`:
//!   `poll_timeout` returning the timer only while the byte counter is armed; `poll_timeout`
//!   announcing the timer 1 µs late.

use lossless_proto::qcn::{Cp, CpParams, QcnRp, QcnRpParams};
use lossless_proto::units::{Duration, Instant, Rate};
use proptest::prelude::*;

fn cp_params() -> impl Strategy<Value = CpParams> {
    (100u64..200_000, -10i8..=10, 10_000u64..300_000).prop_map(|(qeq, w, base)| CpParams {
        qeq_bytes: qeq,
        w_log2: w,
        min_sample_base: base,
        ..CpParams::default()
    })
}

fn rp_params() -> impl Strategy<Value = QcnRpParams> {
    (
        (10u64..20_000, prop_oneof![Just(0u64), 1_000u64..200_000], 0u32..7),
        (1u64..200, 1u64..1000, 0u32..12, 0u32..=100, 1u64..2000),
        any::<bool>(),
    )
        .prop_map(
            |((t_us, bc, f), (ai, hai, gd, dec, min_mbps), release)| QcnRpParams {
                rpg_time_reset: Duration::from_us(t_us),
                rpg_byte_reset: bc,
                rpg_threshold: f,
                rpg_max_rate: None,
                rpg_ai_rate: Rate::from_mbps(ai),
                rpg_hai_rate: Rate::from_mbps(hai),
                rpg_gd: gd,
                rpg_min_dec_fac: dec,
                rpg_min_rate: Rate::from_mbps(min_mbps),
                release_at_line_rate: release,
            },
        )
}

#[derive(Clone, Copy, Debug)]
enum Input {
    Cnm(u8),
    Sent(u64),
}

fn inputs() -> impl Strategy<Value = Vec<(u64, Input)>> {
    prop::collection::vec(
        (
            prop_oneof![4 => 0u64..50_000, 1 => 50_000u64..20_000_000],
            prop_oneof![
                (0u8..64).prop_map(Input::Cnm),
                (64u64..70_000).prop_map(Input::Sent)
            ],
        ),
        1..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn cnm_feedback_is_6_bit_negative_fb_only_and_matches_the_formula(
        p in cp_params(),
        seed in any::<u64>(),
        frames in prop::collection::vec((64u64..20_000, 0u64..2_000_000), 1..400),
    ) {
        let mut cp = Cp::new(p, seed).unwrap();
        let w = 2f64.powi(i32::from(p.w_log2));
        let fb_max = p.qeq_bytes as f64 * (2.0 * w + 1.0);
        let mut qold = 0u64;
        for (len, q) in frames {
            let sampled = len >= cp.bytes_to_next_sample();
            let out = cp.on_enqueue(len, q);
            if !sampled {
                prop_assert!(out.is_none());
                continue;
            }
            // Fb computed here independently, in floating point.
            let fb = -((q as f64 - p.qeq_bytes as f64) + w * (q as f64 - qold as f64));
            qold = q;
            match out {
                None => prop_assert!(fb >= 0.0, "no CNM at Fb = {}", fb),
                Some(f) => {
                    prop_assert!(fb < 0.0, "CNM at Fb = {}", fb);
                    prop_assert!((1..=63).contains(&f.qntz_fb), "QntzFb {}", f.qntz_fb);
                    let expect = (63.0 * (-fb).min(fb_max) / fb_max).ceil();
                    prop_assert!((f64::from(f.qntz_fb) - expect).abs() <= 1.0, "QntzFb {} vs {}", f.qntz_fb, expect);
                }
            }
        }
    }

    #[test]
    fn rate_stays_between_min_and_max_and_below_target(p in rp_params(), steps in inputs()) {
        let line = Rate::from_gbps(10);
        let mut rp = QcnRp::new(p, line).unwrap();
        let mut now = Instant::ZERO;
        for (gap, inp) in steps {
            now += Duration::from_ns(gap);
            while let Some(t) = rp.poll_timeout().filter(|&t| t <= now) {
                rp.handle_timeout(t);
            }
            match inp {
                Input::Cnm(fb) => rp.handle_cnm(now, fb),
                Input::Sent(b) => rp.on_sent(now, b),
            }
            let (rate, target) = (rp.rate().bps(), rp.target_rate().bps());
            prop_assert!(p.rpg_min_rate.bps() <= rate && rate <= target && target <= line.bps(),
                "{} <= {} <= {} <= {}", p.rpg_min_rate.bps(), rate, target, line.bps());
        }
    }

    #[test]
    fn lazy_reaction_point_announces_every_change_of_one_ticked_every_microsecond(
        p in rp_params(),
        steps in inputs(),
    ) {
        let line = Rate::from_gbps(10);
        let mut lazy = QcnRp::new(p, line).unwrap();
        let mut ticked = QcnRp::new(p, line).unwrap();
        let mut now = Instant::ZERO;
        let mut tick = Instant::ZERO;
        for (gap, inp) in steps {
            now += Duration::from_ns(gap);
            // The ticked one is asked every µs whatever it says. Whenever its rate changes,
            // the lazy one must have announced an instant at or before that tick.
            while tick + Duration::from_us(1) <= now {
                tick += Duration::from_us(1);
                let before = ticked.rate();
                ticked.handle_timeout(tick);
                if ticked.rate() != before {
                    let due = lazy.poll_timeout();
                    prop_assert!(due.is_some_and(|d| d <= tick), "change at {} unannounced ({:?})", tick, due);
                    while let Some(t) = lazy.poll_timeout().filter(|&t| t <= tick) {
                        lazy.handle_timeout(t);
                    }
                    prop_assert_eq!(lazy.rate(), ticked.rate());
                }
            }
            while let Some(t) = lazy.poll_timeout().filter(|&t| t <= now) {
                lazy.handle_timeout(t);
            }
            match inp {
                Input::Cnm(fb) => { lazy.handle_cnm(now, fb); ticked.handle_cnm(now, fb); }
                Input::Sent(b) => { lazy.on_sent(now, b); ticked.on_sent(now, b); }
            }
            prop_assert_eq!(lazy.rate(), ticked.rate());
            prop_assert_eq!(lazy.target_rate(), ticked.target_rate());
            prop_assert_eq!(lazy.counters(), ticked.counters());
        }
    }
}
