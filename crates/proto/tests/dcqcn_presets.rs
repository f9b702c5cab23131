//! What distinguishes the `connectx` and `paper` presets, checked by hand (alpha in units of
//! 2⁻³²; a cut is `⌊rate·(2·2³² − α)/(2·2³²)⌋`, an increase `⌈(rate + target)/2⌉`).

use lossless_proto::dcqcn::{Rp, RpParams};
use lossless_proto::units::{Duration, Instant, Rate};

fn us(n: u64) -> Instant {
    Instant::ZERO + Duration::from_us(n)
}

#[test]
fn paper_cuts_at_each_cnp_with_the_alpha_it_finds_then_raises_alpha() {
    let mut rp = Rp::new(RpParams::paper(), Rate::from_gbps(40)).unwrap();
    // First CNP: alpha ← 1, cut at once with it: 40 Gb/s → 20 Gb/s (target clamped to 40),
    // then alpha ← (1 − g)·1 + g = 1.
    rp.handle_cnp(us(0));
    assert_eq!(
        (rp.rate().bps(), rp.target_rate().bps()),
        (20_000_000_000, 40_000_000_000)
    );
    assert_eq!(rp.alpha(), 1.0);
    // A second CNP 10 µs later cuts again at once (no coalescing): target ← 20, rate ← 10.
    rp.handle_cnp(us(10));
    assert_eq!(
        (rp.rate().bps(), rp.target_rate().bps()),
        (10_000_000_000, 20_000_000_000)
    );
    assert_eq!(rp.counters().rate_decreases, 2);
    // 55 µs without CNP: alpha ← 2³²·1020/1024 = 4 278 190 080; the timer restarted by the
    // last cut expires at the same instant: fast recovery to ⌈(10 + 20)/2⌉ = 15 Gb/s.
    assert_eq!(rp.poll_timeout(), Some(us(65)));
    rp.handle_timeout(us(65));
    assert_eq!(rp.alpha(), 4_278_190_080.0 / 4_294_967_296.0);
    assert_eq!(rp.rate().bps(), 15_000_000_000);
}

#[test]
fn connectx_releases_at_line_rate_and_the_next_cnp_is_a_first_cnp_again() {
    let mut rp = Rp::new(RpParams::connectx(), Rate::from_gbps(100)).unwrap();
    rp.handle_cnp(us(0));
    assert!(rp.is_active());
    // alpha ← 1023/1024 = 4 290 772 992; four updates with G = 1019 by the check at 4 µs:
    // 4 207 580 635; cut ⌊100e9·(2³³ − 4 207 580 635)/2³³⌋ = 51 017 314 626 (above the 50 %
    // floor of rpg_min_dec_fac).
    assert_eq!(rp.poll_timeout(), Some(us(4)));
    rp.handle_timeout(us(4));
    assert_eq!(rp.rate().bps(), 51_017_314_626);
    // Timer increases every 300 µs (no bytes sent): the gap to 100 Gb/s halves each time and
    // closes after 36 expiries; the limiter is then released, nothing is left to time.
    let mut n = 0;
    while let Some(t) = rp.poll_timeout() {
        rp.handle_timeout(t);
        n += 1;
    }
    assert_eq!(n, 36);
    assert!(!rp.is_active());
    assert_eq!(rp.rate().bps(), 100_000_000_000);
    assert_eq!(rp.counters().releases, 1);
    // The next CNP starts over: alpha back to 1023/1024, a first cut 4 µs later.
    let t = us(4 + 36 * 300 + 50);
    rp.handle_cnp(t);
    assert_eq!(rp.counters().first_cnps, 2);
    assert_eq!(rp.alpha(), 1023.0 / 1024.0);
    assert_eq!(rp.poll_timeout(), Some(t + Duration::from_us(4)));
}

#[test]
fn connectx_byte_counter_raises_the_rate_every_32767_bytes() {
    let mut rp = Rp::new(RpParams::connectx(), Rate::from_gbps(100)).unwrap();
    rp.handle_cnp(us(0));
    rp.handle_timeout(us(4));
    let cut = rp.rate().bps();
    rp.on_sent(us(5), 32_766);
    assert_eq!(rp.rate().bps(), cut);
    rp.on_sent(us(5), 1);
    // fast recovery: ⌈(51 017 314 626 + 100e9)/2⌉
    assert_eq!(rp.rate().bps(), 75_508_657_313);
    assert_eq!(rp.counters().byte_counter_increases, 1);
}

#[test]
fn rate_on_first_cnp_sets_rate_and_target_and_min_dec_fac_bounds_a_cut() {
    let p = RpParams {
        rate_to_set_on_first_cnp: Some(Rate::from_gbps(60)),
        rpg_gd: 10,
        initial_alpha_value: 1024,
        ..RpParams::connectx()
    };
    let mut rp = Rp::new(p, Rate::from_gbps(100)).unwrap();
    rp.handle_cnp(us(0));
    assert_eq!(
        (rp.rate().bps(), rp.target_rate().bps()),
        (60_000_000_000, 60_000_000_000)
    );
    // rpg_gd 10 cuts by the whole alpha (~0.995 after four updates): ~0.3 Gb/s, but
    // rpg_min_dec_fac 50 keeps half the rate.
    rp.handle_timeout(us(4));
    assert_eq!(rp.rate().bps(), 30_000_000_000);
}
