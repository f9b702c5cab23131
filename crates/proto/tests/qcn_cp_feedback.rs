//! QCN congestion-point feedback on crafted queue traces, computed by hand.
//!
//! MIB defaults: Qeq = 26 000 octets, w = 2, sample base 150 000 octets, so
//! Fbmax = Qeq·(2w + 1) = 130 000 and QntzFb = ⌈63·|Fb|/130 000⌉ for Fb < 0.
//! Sampling interval after a sample: 150 000/(1 + ⌊QntzFb/8⌋).

use lossless_proto::qcn::{CnmFeedback, Cp, CpCounters, CpParams};

fn cp() -> Cp {
    Cp::without_jitter(CpParams::default()).unwrap()
}

/// Feeds 1500-byte frames; `queue(k)` is the queue length after frame k (1-based). Returns
/// the frames that asked for a CNM, with their feedback.
fn run(cp: &mut Cp, frames: u64, queue: impl Fn(u64) -> u64) -> Vec<(u64, CnmFeedback)> {
    (1..=frames)
        .filter_map(|k| cp.on_enqueue(1500, queue(k)).map(|fb| (k, fb)))
        .collect()
}

#[test]
fn a_growing_then_draining_queue_gives_the_hand_computed_cnms() {
    // Queue after frame k: 500·k up to frame 120 (fills at 500 B per frame), then drains by
    // 1000 B per frame from 60 000.
    let queue = |k: u64| {
        if k <= 120 {
            500 * k
        } else {
            60_000u64.saturating_sub(1000 * (k - 120))
        }
    };
    let mut cp = cp();
    let cnms = run(&mut cp, 300, queue);
    // Frame 100 (100·1500 = 150 000 octets): Q = 50 000, Qold = 0.
    //   Qoff = 24 000, Qδ = 50 000, Fb = −(24 000 + 2·50 000) = −124 000,
    //   QntzFb = ⌈63·124 000/130 000⌉ = ⌈60.09⌉ = 61; cnmQOffset = 24 000/64 = 375,
    //   cnmQDelta = 50 000/64 = 781 (781.25 truncated). Next interval 150 000/(1 + 7) = 18 750:
    //   12 frames are 18 000 < 18 750, so the 13th after it, frame 113, is sampled.
    // Frame 113: Q = 56 500, Qold = 50 000: Qoff = 30 500, Qδ = 6 500,
    //   Fb = −(30 500 + 13 000) = −43 500, QntzFb = ⌈63·43 500/130 000⌉ = ⌈21.08⌉ = 22;
    //   cnmQOffset = 30 500/64 = 476 (476.6), cnmQDelta = 6 500/64 = 101 (101.6).
    //   Next interval 150 000/(1 + 2) = 50 000: 34 frames (33·1500 = 49 500 < 50 000), frame 147.
    // Frame 147: Q = 60 000 − 27 000 = 33 000, Qold = 56 500: Qoff = 7 000, Qδ = −23 500,
    //   Fb = −(7 000 − 47 000) = +40 000 > 0: no CNM; QntzFb 0, next interval 150 000 →
    //   frame 247: Q = 0 (drained), Qoff = −26 000, Qδ = −33 000, Fb = +92 000: no CNM;
    //   next sample at frame 347, past the trace.
    assert_eq!(
        cnms,
        vec![
            (
                100,
                CnmFeedback {
                    qntz_fb: 61,
                    q_offset: 375,
                    q_delta: 781
                }
            ),
            (
                113,
                CnmFeedback {
                    qntz_fb: 22,
                    q_offset: 476,
                    q_delta: 101
                }
            ),
        ]
    );
    assert_eq!(
        cp.counters(),
        CpCounters {
            enqueued_frames: 300,
            sampled_frames: 4,
            transmitted_cnms: 2
        }
    );
    // After frame 247 (a 150 000 interval), 53 frames = 79 500 octets were counted.
    assert_eq!(cp.bytes_to_next_sample(), 150_000 - 79_500);
}

#[test]
fn feedback_saturates_at_63_and_the_interval_at_a_base_over_8() {
    let mut cp = cp();
    // 99 small frames then a jump: the 100th frame sees Q = 200 000, Qold = 0:
    //   Fb = −(174 000 + 400 000) = −574 000 < −130 000: clamped, QntzFb = 63,
    //   cnmQOffset = 174 000/64 = 2 718, cnmQDelta = 200 000/64 = 3 125;
    //   next interval 150 000/(1 + 7) = 18 750.
    for _ in 0..99 {
        assert_eq!(cp.on_enqueue(1500, 1_000), None);
    }
    assert_eq!(
        cp.on_enqueue(1500, 200_000),
        Some(CnmFeedback {
            qntz_fb: 63,
            q_offset: 2_718,
            q_delta: 3_125
        })
    );
    assert_eq!(cp.bytes_to_next_sample(), 18_750);
    // One 18 750-octet frame is sampled at once: Q = 26 001 = Qold + ... with Qold = 200 000:
    //   Qoff = 1, Qδ = −173 999, Fb = −(1 − 347 998) = +347 997: no CNM, interval 150 000.
    assert_eq!(cp.on_enqueue(18_750, 26_001), None);
    assert_eq!(cp.bytes_to_next_sample(), 150_000);
    // Then Q stays 26 001 (Qδ = 0, Qoff = 1): Fb = −1, the smallest congestion, QntzFb = 1.
    assert_eq!(
        cp.on_enqueue(150_000, 26_001),
        Some(CnmFeedback {
            qntz_fb: 1,
            q_offset: 0,
            q_delta: 0
        })
    );
    // Back to the set point, Q = 26 000, Qδ = −1: Fb = −(0 − 2) = +2, no CNM; and staying
    // there, Qδ = 0: Fb = 0, no CNM either (only Fb < 0 asks for one).
    assert_eq!(cp.on_enqueue(150_000, 26_000), None);
    assert_eq!(cp.on_enqueue(150_000, 26_000), None);
    assert_eq!(cp.counters().transmitted_cnms, 2);
}

#[test]
fn weights_other_than_two_scale_the_derivative() {
    // w = 2^-1 = 0.5: Fbmax = 26 000·(1 + 1) = 52 000. At the first sample Q = 30 000,
    // Qold = 0: Fb = −(4 000 + 15 000) = −19 000, QntzFb = ⌈63·19 000/52 000⌉ = ⌈23.02⌉ = 24.
    let p = CpParams {
        w_log2: -1,
        ..CpParams::default()
    };
    let mut cp = Cp::without_jitter(p).unwrap();
    let fb = cp.on_enqueue(150_000, 30_000).unwrap();
    assert_eq!(fb.qntz_fb, 24);
}

#[test]
fn randomised_sampling_stays_within_15_percent_and_repeats_with_the_seed() {
    let intervals = |seed| {
        let mut cp = Cp::new(CpParams::default(), seed).unwrap();
        let mut out = vec![cp.bytes_to_next_sample()];
        for _ in 0..200 {
            // one frame exactly as long as the interval: always sampled, Fb > 0 (empty queue)
            let len = cp.bytes_to_next_sample();
            assert_eq!(cp.on_enqueue(len, 0), None);
            out.push(cp.bytes_to_next_sample());
        }
        out
    };
    let a = intervals(7);
    assert_eq!(a, intervals(7));
    assert_ne!(a, intervals(8));
    assert!(a.iter().all(|&i| (127_500..=172_500).contains(&i)), "{a:?}");
    // not stuck at one value: spread over the range
    let (lo, hi) = (a.iter().min().unwrap(), a.iter().max().unwrap());
    assert!(*lo < 135_000 && *hi > 165_000, "{lo}..{hi}");
}

#[test]
fn bad_parameters_name_the_mib_field() {
    let p = CpParams {
        w_log2: 11,
        ..CpParams::default()
    };
    assert_eq!(
        Cp::new(p, 0).unwrap_err().to_string(),
        "w_log2: found 11, allowed -10..=10 (w = 2^value)"
    );
    let p = CpParams {
        min_sample_base: 9_999,
        ..CpParams::default()
    };
    assert_eq!(Cp::new(p, 0).unwrap_err().field, "min_sample_base");
    let p = CpParams {
        qeq_bytes: 99,
        ..CpParams::default()
    };
    assert_eq!(Cp::new(p, 0).unwrap_err().field, "qeq_bytes");
}
