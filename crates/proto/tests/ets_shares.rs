//! Bandwidth shares under saturation with random frame sizes (64..=9216 bytes): ETS classes
//! get their configured share of what strict classes leave in every window of 1,000 maximum
//! frames, strict classes go first, a CBS class never exceeds its idleSlope, and shares move
//! to the busy classes when a class is idle or paused and come back when it returns.

// indexing by priority and TC number reads as the tables do
#![allow(clippy::needless_range_loop)]

mod ets_support;

use ets_support::{Port, Source, WINDOW, worst_window_deviation};
use lossless_proto::ets::{CeeConfig, EtsConfig, PortParams, Scheduler};
use lossless_proto::units::{Duration, Instant, Rate};

const G100: Rate = Rate::from_gbps(100);

/// TC0 ets 7 %, TC1 ets 13 %, TC2 ets 80 %, TC3 strict; priorities 0→TC0, 1→TC1, 2..=5→TC2,
/// 6..=7→TC3.
fn odd_weights() -> EtsConfig {
    EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets,2:ets,3:strict up2tc=0:0,1:1,2:2,3:2,4:2,5:2,6:3,7:3 tcbw=7,13,80 numtcs=4",
    )
    .unwrap()
}

fn port(cfg: &EtsConfig, params: &PortParams, seed: u64) -> Port {
    Port::new(Scheduler::ieee(cfg, params).unwrap(), seed)
}

fn by_class(s: &ets_support::Sent) -> u8 {
    s.sel.class
}

#[test]
fn ets_classes_get_their_share_of_what_strict_leaves_in_every_window() {
    let mut port = port(&odd_weights(), &PortParams::new(G100), 1);
    for p in 0..6 {
        port.sources[p] = Source::Saturated;
    }
    // strict priority 6: 1500-byte frames at 30 % of the link
    let tx = G100.time_for_bytes(1520);
    port.sources[6] = Source::Paced {
        period: Duration::from_ps(tx.as_ps() * 10 / 3),
        len: 1500,
    };
    let mut strict_backlog_max = 0;
    let mut ets_bytes = 0;
    while ets_bytes < 25 * WINDOW {
        if let Some(s) = port.step()
            && s.sel.class != 3
        {
            ets_bytes += u64::from(s.len) + 20;
        }
        strict_backlog_max = strict_backlog_max.max(port.queues[6].len());
    }
    let (worst, windows) = worst_window_deviation(&port.log, by_class, &[(0, 7.0), (1, 13.0), (2, 80.0)], 20);
    println!("worst deviation {worst:.4} percentage points over {windows} windows");
    assert!(windows > 10_000, "{windows}");
    assert!(worst < 1.0, "worst window deviation {worst} percentage points");
    // the strict class never waits for more than the frame in progress
    assert!(strict_backlog_max <= 1, "strict backlog {strict_backlog_max}");
    let strict: u64 = port
        .log
        .iter()
        .filter(|s| s.sel.class == 3)
        .map(|s| u64::from(s.len) + 20)
        .sum();
    let total: u64 = port.log.iter().map(|s| u64::from(s.len) + 20).sum();
    let share = strict as f64 / total as f64;
    assert!((share - 0.30).abs() < 0.01, "strict share {share}");
}

#[test]
fn strict_classes_are_served_first_highest_tc_first() {
    let cfg = EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:strict,2:strict up2tc=0:0,1:0,2:0,3:0,4:0,5:1,6:2,7:2 tcbw=100",
    )
    .unwrap();
    let mut port = port(&cfg, &PortParams::new(G100), 2);
    for p in 0..8 {
        port.sources[p] = Source::Saturated;
    }
    port.run_frames(2_000);
    assert!(
        port.log.iter().all(|s| s.sel.class == 2),
        "TC2 (strict, highest) takes the link"
    );
    // TC2's two priorities share it equally in bytes
    let b6: u64 = port
        .log
        .iter()
        .filter(|s| s.sel.priority == 6)
        .map(|s| u64::from(s.len) + 20)
        .sum();
    let b7: u64 = port
        .log
        .iter()
        .filter(|s| s.sel.priority == 7)
        .map(|s| u64::from(s.len) + 20)
        .sum();
    assert!((b6 as f64 / (b6 + b7) as f64 - 0.5).abs() < 0.01, "{b6} vs {b7}");
    // TC2 idle: TC1 (strict) next, ETS TC0 still nothing
    port.sources[6] = Source::Off;
    port.sources[7] = Source::Off;
    port.queues[6].clear();
    port.queues[7].clear();
    let mut s = Scheduler::ieee(&cfg, &PortParams::new(G100)).unwrap();
    s.enqueue(Instant::ZERO, 0, 64).unwrap();
    s.enqueue(Instant::ZERO, 5, 64).unwrap();
    assert_eq!(s.select(Instant::ZERO, 0).map(|x| x.class), Some(1));
    assert_eq!(
        s.select(Instant::ZERO, 1 << 5).map(|x| x.class),
        Some(0),
        "paused strict lets ETS through"
    );
}

fn cbs_config() -> EtsConfig {
    EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets,2:cb_shaper up2tc=0:0,1:0,2:0,3:1,4:1,5:1,6:2,7:2 tcbw=25,75 numtcs=3",
    )
    .unwrap()
}

/// Checks that over every interval from the start of a frame `i` to the end of a frame `j` of
/// `class`, the bits sent are at most idleSlope × interval + hiCredit + one maximum frame, in
/// exact integers (units of 10^-12 bit).
fn assert_within_idle_slope(log: &[ets_support::Sent], class: u8, slope: Rate, rate: Rate) -> usize {
    let max_tx = rate.time_for_bytes(9216 + 20).as_ps() as i128;
    let s = i128::from(slope.bps());
    let bound = s * max_tx + i128::from(rate.bps()) * max_tx;
    let mut cum: i128 = 0;
    let mut min_g: Option<i128> = None;
    let mut n = 0;
    for f in log.iter().filter(|f| f.sel.class == class) {
        let t = f.at.as_ps() as i128;
        let g = cum - s * t;
        min_g = Some(min_g.map_or(g, |m: i128| m.min(g)));
        cum += (i128::from(f.len) + 20) * 8 * 1_000_000_000_000;
        let fj = cum - s * t;
        assert!(
            fj - min_g.unwrap() <= bound,
            "class {class} exceeded its idle slope at {}",
            f.at
        );
        n += 1;
    }
    n
}

#[test]
fn cbs_class_never_exceeds_its_idle_slope_and_gets_it_when_saturated() {
    let slope = Rate::from_gbps(10);
    let params = PortParams::new(G100).with_idle_slope(2, slope);
    let mut port = port(&cbs_config(), &params, 3);
    for p in 0..8 {
        port.sources[p] = Source::Saturated;
    }
    port.run_frames(60_000);
    let n = assert_within_idle_slope(&port.log, 2, slope, G100);
    assert!(n > 1_000);
    let end = port.now.as_ps() as f64;
    let cbs_bits: f64 = port
        .log
        .iter()
        .filter(|s| s.sel.class == 2)
        .map(|s| (s.len as f64 + 20.0) * 8.0)
        .sum();
    let rate = cbs_bits / (end / 1e12);
    assert!((rate / 10e9 - 1.0).abs() < 0.01, "CBS class rate {rate} b/s");
    // the ETS classes split the other 90 % by 25/75
    let (worst, windows) = worst_window_deviation(&port.log, by_class, &[(0, 25.0), (1, 75.0)], 20);
    assert!(windows > 1_000 && worst < 1.0, "{worst} over {windows}");
}

#[test]
fn cbs_above_a_saturated_strict_class_still_gets_its_slope_and_no_more() {
    let cfg = EtsConfig::from_lldptool_args(
        "tsa=0:strict,1:cb_shaper up2tc=0:0,1:0,2:0,3:0,4:0,5:0,6:1,7:1 numtcs=2",
    )
    .unwrap();
    let slope = Rate::from_gbps(37);
    let params = PortParams::new(G100).with_idle_slope(1, slope);
    let mut port = port(&cfg, &params, 4);
    for p in 0..8 {
        port.sources[p] = Source::Saturated;
    }
    port.run_frames(40_000);
    assert_within_idle_slope(&port.log, 1, slope, G100);
    let end = port.now.as_ps() as f64;
    let cbs_bits: f64 = port
        .log
        .iter()
        .filter(|s| s.sel.class == 1)
        .map(|s| (s.len as f64 + 20.0) * 8.0)
        .sum();
    let rate = cbs_bits / (end / 1e12);
    assert!((rate / 37e9 - 1.0).abs() < 0.02, "CBS class rate {rate} b/s");
}

#[test]
fn a_lone_cbs_class_is_spaced_exactly_by_its_slope() {
    let slope = Rate::from_gbps(10);
    let params = PortParams::new(G100).with_idle_slope(2, slope);
    let mut s = Scheduler::ieee(&cbs_config(), &params).unwrap();
    let t0 = Instant::ZERO;
    for _ in 0..3 {
        s.enqueue(t0, 6, 1500).unwrap();
    }
    let mut now = t0;
    let tx = G100.time_for_bytes(1520);
    for k in 0..3u128 {
        assert_eq!(s.select(now, 0).map(|x| x.priority), Some(6), "frame {k}");
        assert_eq!(
            now.as_ps(),
            k * 10 * tx.as_ps(),
            "frame {k} starts at R/idleSlope × its wire time"
        );
        s.on_transmitted(now, 6, 1500).unwrap();
        now += tx;
        if k < 2 {
            assert_eq!(s.select(now, 0), None, "held by the shaper");
            now = s.next_eligible(now).expect("a held class has a wake-up time");
        }
    }
    assert_eq!(s.next_eligible(now), None);
    // with nothing queued the negative credit recovers to 0 and then stays there
    assert_eq!(s.select(now + Duration::from_ms(1), 0), None);
    assert_eq!(s.shaper_credit(now + Duration::from_ms(1), 2), Some(0));
}

#[test]
fn a_paused_class_share_goes_to_the_others_and_returns_on_release() {
    let mut port = port(&odd_weights(), &PortParams::new(G100), 5);
    for p in 0..6 {
        port.sources[p] = Source::Saturated;
    }
    let weights = [(0, 7.0), (1, 13.0), (2, 80.0)];
    port.run_frames(20_000);
    let (w1, _) = worst_window_deviation(&port.log, by_class, &weights, 20);
    // PFC pauses all of TC2's priorities
    port.pause(0b0011_1100);
    let mark = port.log.len();
    port.run_frames(20_000);
    assert!(port.log[mark..].iter().all(|s| s.sel.class != 2));
    let (w2, n2) = worst_window_deviation(&port.log[mark..], by_class, &[(0, 35.0), (1, 65.0)], 20);
    port.pause(0);
    let mark = port.log.len();
    port.run_frames(20_000);
    let (w3, n3) = worst_window_deviation(&port.log[mark..], by_class, &weights, 20);
    assert!(n2 > 1000 && n3 > 1000);
    assert!(
        w1 < 1.0 && w2 < 1.0 && w3 < 1.0,
        "before {w1}, paused {w2}, after {w3}"
    );
}

#[test]
fn a_partly_paused_class_keeps_its_share_through_its_unpaused_priorities() {
    let mut port = port(&odd_weights(), &PortParams::new(G100), 6);
    for p in 0..6 {
        port.sources[p] = Source::Saturated;
    }
    port.pause(0b0001_1100); // priorities 2, 3, 4 of TC2 paused; 5 still flows
    port.run_frames(30_000);
    assert!(port.log.iter().all(|s| !(2..=4).contains(&s.sel.priority)));
    let (w, n) = worst_window_deviation(&port.log, by_class, &[(0, 7.0), (1, 13.0), (2, 80.0)], 20);
    assert!(n > 1000 && w < 1.0, "{w}");
}

#[test]
fn an_idle_class_share_is_spread_in_proportion_and_restored() {
    let mut port = port(&odd_weights(), &PortParams::new(G100), 7);
    for p in 0..6 {
        port.sources[p] = Source::Saturated;
    }
    // TC1 idle: TC0 and TC2 share 7:80
    port.sources[1] = Source::Off;
    port.run_frames(30_000);
    let (w1, _) = worst_window_deviation(&port.log, by_class, &[(0, 700.0 / 87.0), (2, 8000.0 / 87.0)], 20);
    port.sources[1] = Source::Saturated;
    let mark = port.log.len();
    port.run_frames(30_000);
    let (w2, _) = worst_window_deviation(&port.log[mark..], by_class, &[(0, 7.0), (1, 13.0), (2, 80.0)], 20);
    assert!(w1 < 1.0 && w2 < 1.0, "idle {w1}, restored {w2}");
}

#[test]
fn cee_groups_and_priorities_share_in_two_levels() {
    // PG0 = {0,1} 20 % split 25/75; PG1 = {2,3,4} 50 % split 20/30/50; PG2 = {5} 30 %;
    // priorities 6 and 7 strict (PGID 15)
    let cfg = CeeConfig::new(
        [0, 0, 1, 1, 1, 2, 15, 15],
        [20, 50, 30, 0, 0, 0, 0, 0],
        [25, 75, 20, 30, 50, 100, 0, 0],
        8,
    )
    .unwrap();
    let mut port = Port::new(Scheduler::cee(&cfg, &PortParams::new(G100)).unwrap(), 8);
    for p in 0..6 {
        port.sources[p] = Source::Saturated;
    }
    port.sources[7] = Source::Paced {
        period: Duration::from_us(1),
        len: 1000,
    };
    port.run_frames(60_000);
    assert!(
        port.log
            .iter()
            .filter(|s| s.sel.priority == 7)
            .all(|s| s.sel.class == 15)
    );
    let expected = [(0, 5.0), (1, 15.0), (2, 10.0), (3, 15.0), (4, 25.0), (5, 30.0)];
    let (w, n) = worst_window_deviation(&port.log, |s| s.sel.priority, &expected, 20);
    assert!(n > 1000 && w < 1.0, "worst {w} over {n}");
    // strict priority 7 higher than strict 6
    let mut s = Scheduler::cee(&cfg, &PortParams::new(G100)).unwrap();
    s.enqueue(Instant::ZERO, 6, 64).unwrap();
    s.enqueue(Instant::ZERO, 7, 64).unwrap();
    s.enqueue(Instant::ZERO, 0, 64).unwrap();
    assert_eq!(s.select(Instant::ZERO, 0).map(|x| x.priority), Some(7));
    assert_eq!(s.select(Instant::ZERO, 1 << 7).map(|x| x.priority), Some(6));
    assert_eq!(
        s.select(Instant::ZERO, 0xc0).map(|x| (x.priority, x.class)),
        Some((0, 0))
    );
}

#[test]
fn bytes_are_accounted_exactly_per_priority() {
    let mut port = port(&odd_weights(), &PortParams::new(G100), 9);
    for p in 0..8 {
        port.sources[p] = Source::Saturated;
    }
    port.run_frames(5_000);
    for p in 0..8u8 {
        let logged: u64 = port
            .log
            .iter()
            .filter(|s| s.sel.priority == p)
            .map(|s| u64::from(s.len))
            .sum();
        assert_eq!(port.s.sent_bytes(p), logged, "priority {p}");
        assert_eq!(
            port.s.queued_bytes(p),
            port.queues[usize::from(p)]
                .iter()
                .map(|&l| u64::from(l))
                .sum::<u64>()
        );
        assert_eq!(
            port.s.queued_frames(p) as usize,
            port.queues[usize::from(p)].len()
        );
    }
    // time advanced by exactly the wire time of everything sent
    let wire: u64 = port.log.iter().map(|s| u64::from(s.len) + 20).sum();
    assert_eq!(port.now - Instant::ZERO, G100.time_for_bytes(wire));
}

#[test]
fn zero_bandwidth_ets_class_only_gets_what_the_others_leave() {
    let cfg = EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets up2tc=0:0,1:1,2:1,3:1,4:1,5:1,6:1,7:1 tcbw=0,100 numtcs=2",
    )
    .unwrap();
    let mut port = port(&cfg, &PortParams::new(G100), 10);
    port.sources[0] = Source::Saturated;
    port.sources[1] = Source::Saturated;
    port.run_frames(2_000);
    assert!(port.log.iter().all(|s| s.sel.class == 1));
    port.sources[1] = Source::Off;
    port.queues[1].clear();
    let mut s = Scheduler::ieee(&cfg, &PortParams::new(G100)).unwrap();
    s.enqueue(Instant::ZERO, 0, 64).unwrap();
    assert_eq!(s.select(Instant::ZERO, 0).map(|x| x.class), Some(0));
}

#[test]
fn skewed_weights_hold_in_every_window() {
    for (args, expected) in [
        (
            "tsa=0:ets,1:ets up2tc=0:0,1:1,2:1,3:1,4:1,5:1,6:1,7:1 tcbw=1,99 numtcs=2",
            vec![(0, 1.0), (1, 99.0)],
        ),
        (
            "tsa=0:ets,1:ets,2:ets,3:ets,4:ets,5:ets,6:ets,7:ets \
             up2tc=0:0,1:1,2:2,3:3,4:4,5:5,6:6,7:7 tcbw=1,1,1,1,1,1,1,93",
            (0..7).map(|c| (c, 1.0)).chain([(7, 93.0)]).collect(),
        ),
    ] {
        let cfg = EtsConfig::from_lldptool_args(args).unwrap();
        let mut port = port(&cfg, &PortParams::new(G100), 11);
        for p in 0..8 {
            port.sources[p] = Source::Saturated;
        }
        port.run_frames(40_000);
        let (worst, windows) = worst_window_deviation(&port.log, by_class, &expected, 20);
        assert!(
            windows > 10_000 && worst < 1.0,
            "{args}: worst {worst} over {windows}"
        );
    }
}

#[test]
fn a_new_configuration_takes_over_the_queues_of_the_old() {
    let mut port = port(&odd_weights(), &PortParams::new(G100), 12);
    for p in 0..6 {
        port.sources[p] = Source::Saturated;
    }
    port.run_frames(5_000);
    // DCBX recommends 50/25/25 instead of 7/13/80
    let new = EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets,2:ets,3:strict up2tc=0:0,1:1,2:2,3:2,4:2,5:2,6:3,7:3 tcbw=50,25,25 numtcs=4",
    )
    .unwrap();
    let old = port.s.clone();
    port.s = Scheduler::ieee(&new, &PortParams::new(G100))
        .unwrap()
        .with_queues_of(port.now, &old);
    for p in 0..8u8 {
        assert_eq!(port.s.queued_bytes(p), old.queued_bytes(p));
        assert_eq!(port.s.sent_bytes(p), old.sent_bytes(p));
    }
    let mark = port.log.len();
    port.run_frames(30_000);
    let (w, n) = worst_window_deviation(
        &port.log[mark..],
        by_class,
        &[(0, 50.0), (1, 25.0), (2, 25.0)],
        20,
    );
    assert!(n > 1_000 && w < 1.0, "worst {w} over {n}");
}
