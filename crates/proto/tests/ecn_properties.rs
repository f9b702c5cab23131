//! Properties of the RED marker.
//!
//! Shown to fail on deliberately broken markers (break made by hand in `src/ecn.rs`, test run
//! and seen to fail, break reverted):
//! - `never_marks_at_or_below_kmin_and_always_above_kmax`: Kmin stored halved in `new` (a
//!   units slip: marks between Kmin/2 and Kmin); "always" tested as `> kmax + 1`. (`<` for
//!   `<=` at Kmin is not a bug: the probability there is 0 either way.)
//! - `for_one_draw_a_longer_queue_marks_whenever_a_shorter_one_does`: the probability computed
//!   from `Kmax − q` instead of `q − Kmin`.
//! - `marking_frequency_matches_pmax_times_the_position_between_thresholds`: `pmax` rounded up
//!   to the next percent; the probability from `Kmax − q`; Kmin halved.

use lossless_proto::ecn::{EcnConfig, EcnMarker, MarkPoint};
use proptest::prelude::*;

fn config() -> impl Strategy<Value = EcnConfig> {
    (0u64..2_000_000, 0u64..2_000_000, 0.0f64..=1.0, any::<bool>()).prop_map(|(a, b, pmax, deq)| EcnConfig {
        kmin_bytes: a.min(b),
        kmax_bytes: a.max(b),
        pmax,
        point: if deq {
            MarkPoint::Dequeue
        } else {
            MarkPoint::Enqueue
        },
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn never_marks_at_or_below_kmin_and_always_above_kmax(
        cfg in config(),
        seed in any::<u64>(),
        qs in prop::collection::vec(0u64..2_100_000, 1..200),
    ) {
        let mut m = EcnMarker::new(cfg, seed).unwrap();
        for q in qs.iter().copied().chain([cfg.kmin_bytes, cfg.kmax_bytes + 1]) {
            let mark = m.decide(q);
            if q <= cfg.kmin_bytes {
                prop_assert!(!mark, "marked at q = {} <= Kmin = {}", q, cfg.kmin_bytes);
            }
            if q > cfg.kmax_bytes {
                prop_assert!(mark, "not marked at q = {} > Kmax = {}", q, cfg.kmax_bytes);
            }
        }
        let c = m.counters();
        prop_assert_eq!(c.marked + c.not_marked, qs.len() as u64 + 2);
    }

    #[test]
    fn for_one_draw_a_longer_queue_marks_whenever_a_shorter_one_does(
        cfg in config(),
        seed in any::<u64>(),
        pairs in prop::collection::vec((0u64..2_100_000, 0u64..2_100_000), 1..100),
    ) {
        let mut m = EcnMarker::new(cfg, seed).unwrap();
        for (a, b) in pairs {
            let (lo, hi) = (a.min(b), a.max(b));
            // the same generator state for both decisions
            let mut twin = m.clone();
            let short = m.decide(lo);
            let long = twin.decide(hi);
            prop_assert!(!short || long, "q = {} marked but q = {} not", lo, hi);
        }
    }

    #[test]
    fn marking_frequency_matches_pmax_times_the_position_between_thresholds(
        kmin in 0u64..100_000,
        span in 1u64..1_000_000,
        pmax in 0.0f64..=1.0,
        at in 0.0f64..=1.0,
        seed in any::<u64>(),
    ) {
        let cfg = EcnConfig { kmin_bytes: kmin, kmax_bytes: kmin + span, pmax, point: MarkPoint::Dequeue };
        let q = kmin + ((span as f64 * at).ceil() as u64).clamp(1, span);
        let p = pmax * (q - kmin) as f64 / span as f64;
        let mut m = EcnMarker::new(cfg, seed).unwrap();
        let n = 20_000u64;
        let marked = (0..n).filter(|_| m.decide(q)).count() as f64;
        // within 5 standard deviations (plus the 2^-32 quantisation)
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        prop_assert!((marked - n as f64 * p).abs() <= 5.0 * sd + 1.0, "p = {} marked {} of {}", p, marked, n);
    }
}
