//! The `hpcc_ns3` preset's timeline, computed by hand from MODEL.md §3 and checked to the
//! picosecond and the bit per second.
//!
//! Arithmetic used in the comments: alpha is kept in units of 2⁻³² (1.0 = 4 294 967 296 =
//! 2³²); an update is `α ← ⌊(α·1020 + 4·2³²·[CNP in the period])/1024⌋` (g = 1/256); a cut is
//! `rate ← max(1 Gb/s, ⌊rate·(2·2³² − α)/(2·2³²)⌋)` (rate·(1 − α/2), rounded down); an increase
//! is `rate ← ⌈(rate + target)/2⌉`. The first CNP arrives at t0 = 10 µs on a 100 Gb/s link.

use lossless_proto::dcqcn::{Rp, RpParams};
use lossless_proto::units::{Duration, Instant, Rate};

const G100: u64 = 100_000_000_000;
const ONE: f64 = 4_294_967_296.0;

fn at_ps(ps: u128) -> Instant {
    Instant::from_ps(ps)
}

/// t0 + `us` µs + `ns` ns, in ps.
fn t(us: u128, ns: u128) -> Instant {
    at_ps(10_000_000 + us * 1_000_000 + ns * 1_000)
}

fn rp() -> Rp {
    Rp::new(RpParams::hpcc_ns3(), Rate::from_gbps(100)).unwrap()
}

#[test]
fn first_cnp_sets_alpha_to_one_and_cuts_4us_plus_1ns_later() {
    let mut rp = rp();
    assert_eq!(rp.poll_timeout(), None, "idle before any CNP");
    rp.handle_cnp(t(0, 0));
    // MODEL §3.1: alpha = 1, rate unchanged (RateOnFirstCnp 1.0), first check at +4 µs + 1 ns.
    assert_eq!(rp.alpha(), 1.0);
    assert_eq!(rp.rate().bps(), G100);
    assert_eq!(rp.poll_timeout(), Some(t(4, 1)));
    // Nothing happens before the check.
    rp.handle_timeout(t(4, 0));
    assert_eq!(rp.rate().bps(), G100);
    // Alpha updates at t0+1..4 µs, no CNP counted (the first one is not):
    // 2³² → 4 278 190 080 → 4 261 478 400 → 4 244 832 000 → 4 228 250 625 (= 255⁴, exact).
    assert_eq!(rp.alpha(), 4_228_250_625.0 / ONE);
    rp.handle_timeout(t(4, 1));
    // Cut: ⌊100e9·(8 589 934 592 − 4 228 250 625)/8 589 934 592⌋ = ⌊50 776 684 272.57⌋.
    assert_eq!(rp.rate().bps(), 50_776_684_272);
    // No increase happened since the (non-existent) last cut: target stays at line rate.
    assert_eq!(rp.target_rate().bps(), G100);
    assert_eq!(rp.counters().rate_decreases, 1);
    // The increase timer starts at the cut: first expiry 300 µs later.
    assert_eq!(rp.poll_timeout(), Some(t(304, 1)));
}

#[test]
fn timer_steps_fast_recovery_then_additive_then_hyper_until_line_rate() {
    let mut rp = rp();
    rp.handle_cnp(t(0, 0));
    rp.handle_timeout(t(4, 1));
    let c1 = t(4, 1);
    let step = |k: u64| c1 + Duration::from_us(300 * k);
    // Stage 0 < F = 1: fast recovery, ⌈(50 776 684 272 + 100e9)/2⌉ = 75 388 342 136.
    assert_eq!(rp.poll_timeout(), Some(step(1)));
    rp.handle_timeout(step(1));
    assert_eq!(rp.rate().bps(), 75_388_342_136);
    assert_eq!(rp.counters().fast_recovery, 1);
    // Stage 1 = F: additive, target = min(100e9, 100e9 + 20e6) = 100e9, rate 87 694 171 068.
    rp.handle_timeout(step(2));
    assert_eq!((rp.rate().bps(), rp.target_rate().bps()), (87_694_171_068, G100));
    assert_eq!(rp.counters().additive_increase, 1);
    // Stage 2 > F: hyper, target capped at 100e9, rate 93 847 085 534, then 96 923 542 767.
    rp.handle_timeout(step(3));
    assert_eq!(rp.rate().bps(), 93_847_085_534);
    rp.handle_timeout(step(4));
    assert_eq!(rp.rate().bps(), 96_923_542_767);
    assert_eq!(rp.counters().hyper_increase, 2);
    // The gap to 100e9 halves (rounded down) each step: 49 223 315 728 has 36 bits, so the
    // 36th expiry brings the rate to exactly 100e9, 36·300 µs after the cut.
    for k in 5..36 {
        assert_eq!(rp.poll_timeout(), Some(step(k)));
        rp.handle_timeout(step(k));
        assert!(rp.rate().bps() < G100, "step {k}");
    }
    rp.handle_timeout(step(36));
    assert_eq!(rp.rate().bps(), G100);
    // Nothing observable is left: the reference keeps its 1 µs alpha and 300 µs timers
    // running to the flow's end; here they are only brought up to date on the next call.
    assert_eq!(rp.poll_timeout(), None);
    assert_eq!(rp.counters().hyper_increase, 34);
}

#[test]
fn cnps_in_one_check_period_give_one_cut_and_a_clamp_needs_an_increase_first() {
    let mut rp = rp();
    // CNPs at t0, t0+2.5 µs and t0+2.7 µs; then t0+5 µs; then t0+309.5 µs.
    rp.handle_cnp(t(0, 0));
    rp.handle_cnp(t(2, 500));
    rp.handle_cnp(t(2, 700));
    assert_eq!(rp.counters().cnps_coalesced, 2, "one cut pending for all three");
    // Alpha: 2³² → 4 278 190 080 (1 µs) → 4 261 478 400 (2 µs) → +g at 3 µs:
    // ⌊(4 261 478 400·1020 + 4·2³²)/1024⌋ = 4 261 609 216 → 4 244 962 305 (4 µs).
    rp.handle_timeout(t(4, 1));
    assert_eq!(rp.alpha(), 4_244_962_305.0 / ONE);
    // One cut: ⌊100e9·(2·2³² − 4 244 962 305)/(2·2³²)⌋ = 50 582 134 712.
    assert_eq!(rp.rate().bps(), 50_582_134_712);
    assert_eq!(rp.counters().rate_decreases, 1);

    // A CNP at exactly t0+5 µs: the alpha update of t0+5 µs comes first, so the +g goes to
    // the update of t0+6 µs. Alpha 5..8 µs: 4 228 380 420, 4 228 640 524 (+g),
    // 4 212 122 396, 4 195 668 792. The check of t0+8 µs + 1 ns cuts again; still no
    // increase since the last cut, so the target stays at 100e9:
    // ⌊50 582 134 712·(2·2³² − 4 195 668 792)/(2·2³²)⌋ = 25 875 790 121.
    rp.handle_cnp(t(5, 0));
    assert_eq!(rp.poll_timeout(), Some(t(8, 1)));
    rp.handle_timeout(t(8, 1));
    assert_eq!(rp.rate().bps(), 25_875_790_121);
    assert_eq!(rp.target_rate().bps(), G100);

    // The second cut restarted the timer: fast recovery at t0+308 µs + 1 ns,
    // ⌈(25 875 790 121 + 100e9)/2⌉ = 62 937 895 061.
    assert_eq!(rp.poll_timeout(), Some(t(308, 1)));
    rp.handle_timeout(t(308, 1));
    assert_eq!(rp.rate().bps(), 62_937_895_061);

    // A CNP at t0+309.5 µs: its +g goes to the update of t0+310 µs; the next check is
    // t0+312 µs + 1 ns. Alpha there, after 312 updates in all (two with +g at 3 and 6 µs, one
    // at 310 µs): 1 293 280 863. An increase happened since the last cut, so target ← rate
    // (62 937 895 061), then rate ← ⌊62 937 895 061·(2·2³² − 1 293 280 863)/(2·2³²)⌋
    // = 53 462 109 841.
    rp.handle_cnp(t(309, 500));
    assert_eq!(rp.poll_timeout(), Some(t(312, 1)));
    rp.handle_timeout(t(312, 1));
    assert_eq!(rp.alpha(), 1_293_280_863.0 / ONE);
    assert_eq!(rp.target_rate().bps(), 62_937_895_061);
    assert_eq!(rp.rate().bps(), 53_462_109_841);
    assert_eq!(rp.counters().rate_decreases, 3);
}

#[test]
fn the_cut_never_goes_below_1000_mbps() {
    let mut rp = rp();
    // A CNP in every check period: each check cuts by about half.
    for k in 0..40u128 {
        rp.handle_cnp(t(4 * k, 500));
        rp.handle_timeout(t(4 * k + 4, 1));
    }
    assert_eq!(rp.rate().bps(), 1_000_000_000);
}
