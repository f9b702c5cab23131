//! Same scenario and seed → identical results, bit for bit; every built-in conserves frames.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::scenario::BUILTINS;

#[test]
fn two_runs_of_each_builtin_give_identical_json() {
    for b in BUILTINS {
        let d = Some(Duration::from_us(300));
        let one = serde_json::to_string(&common::run(common::load(b.name, &[], d))).unwrap();
        let two = serde_json::to_string(&common::run(common::load(b.name, &[], d))).unwrap();
        assert_eq!(one, two, "{}", b.name);
    }
}

#[test]
fn every_builtin_conserves_frames_at_any_stopping_time() {
    for b in BUILTINS {
        for us in [1, 37, 150] {
            let r = common::run(common::load(b.name, &[], Some(Duration::from_us(us))));
            assert!(r.conservation.balanced, "{} at {us} µs", b.name);
            assert!(
                r.conservation.injected_frames > 0,
                "{} at {us} µs injected nothing",
                b.name
            );
        }
    }
}

#[test]
fn a_different_seed_changes_ecmp_and_poisson_choices_but_still_conserves() {
    let mut c = common::load("incast", &[], Some(Duration::from_us(100)));
    c.seed = 99;
    let r = common::run(c);
    assert!(r.conservation.balanced);
}
