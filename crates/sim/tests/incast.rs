//! Incast through one switch: with headroom sized by 802.1Qbb Annex N no lossless frame is
//! ever dropped, for any fan-in; with headroom far too small, lossless frames are dropped as
//! headroom overflow.

mod common;

use common::{load, run, set_headroom};

#[test]
fn annex_n_headroom_never_drops_a_lossless_frame_for_2_to_64_senders() {
    // every fan-in up to 16, then every fourth up to 64
    for n in (2..=16).chain((20..=64).step_by(4)) {
        let r = run(load("incast", &[&format!("senders={n}")], None));
        assert_eq!(r.lossless_drops(), 0, "N = {n}");
        assert_eq!(r.flows.len(), n);
        for f in &r.flows {
            assert!(f.completion_ps.is_some(), "N = {n}: {} did not complete", f.name);
        }
        let tor_in: u64 = r
            .ports
            .iter()
            .filter(|p| p.node.starts_with("sender"))
            .map(|p| {
                p.priorities
                    .iter()
                    .map(|q| q.pfc_xoff_received_frames)
                    .sum::<u64>()
            })
            .sum();
        {
            assert!(tor_in > 0, "N = {n}: no sender was paused");
        }
    }
}

#[test]
fn headroom_far_too_small_drops_lossless_frames_as_headroom_overflow() {
    let mut c = load("incast", &["senders=16"], None);
    set_headroom(&mut c, 2_000);
    let r = run(c);
    let overflow: u64 = r
        .ports
        .iter()
        .flat_map(|p| &p.priorities)
        .map(|q| q.drops_frames.get("headroom_overflow").copied().unwrap_or(0))
        .sum();
    assert!(overflow > 0, "no headroom overflow with 2 kB headroom");
    assert_eq!(r.lossless_drops(), overflow);
}

#[test]
fn annex_n_headroom_still_holds_with_the_8023_interface_delays_simulated() {
    // the headroom formula counts both PHYs' 802.3 upper bound (122,880 bit times each way at
    // 100G, 25 times the 5 m cable): simulate them and the headroom must still suffice
    for n in [2, 16, 64] {
        let r = run(load(
            "incast",
            &[&format!("senders={n}"), "defaults.interface_delay=\"802.3\""],
            None,
        ));
        assert_eq!(r.lossless_drops(), 0, "N = {n}");
        assert!(r.flows.iter().all(|f| f.completion_ps.is_some()), "N = {n}");
    }
}
