//! Pause timing at every IEEE rate: exact picoseconds for 0xFFFF and 1 quantum, timers that
//! start at the last bit of the frame being sent, and the reaction delay.

use lossless_proto::flow_control::{
    ControlFrame, FlowControl, FlowControlConfig, ReceivedControl, RxOutcome, default_reaction_delay,
    reaction_delay_quanta,
};
use lossless_proto::units::{Duration, IEEE_RATES, Instant, Rate};

const ME: [u8; 6] = [0x02, 0, 0, 0, 0, 0x10];

/// Picoseconds of `quanta` × 512 bit times at `bps`, computed independently of `units`.
fn expected_ps(quanta: u128, bps: u64) -> u128 {
    let num = quanta * 512 * 1_000_000_000_000;
    assert_eq!(num % bps as u128, 0, "quanta are whole picoseconds at IEEE rates");
    num / bps as u128
}

fn engine(rate: Rate, pfc: bool, delay: Duration) -> FlowControl {
    let mut c = if pfc {
        FlowControlConfig::pfc(rate, ME, 0xFF)
    } else {
        FlowControlConfig::pause(rate, ME)
    };
    c.reaction_delay = delay;
    FlowControl::new(c).unwrap()
}

fn pause(q: u16) -> ReceivedControl {
    ReceivedControl::multicast(ControlFrame::Pause { quanta: q })
}

/// Checks that priority `p` is paused exactly on [from, until) (the instant before `from` is
/// checked only when `from` is later than the last time the engine was given: the engine's
/// clock never goes back).
fn assert_paused_exactly(fc: &FlowControl, p: u8, from: Instant, until: Instant, what: &str) {
    let one = Duration::from_ps(1);
    if from > fc.now() {
        assert!(fc.may_transmit(from - one, p), "{what}: free 1 ps before {from}");
    }
    assert!(!fc.may_transmit(from, p), "{what}: paused at {from}");
    assert!(
        !fc.may_transmit(until - one, p),
        "{what}: still paused 1 ps before {until}"
    );
    assert!(fc.may_transmit(until, p), "{what}: free again at {until}");
}

#[test]
fn max_and_min_pause_last_exactly_their_bit_times_at_every_rate() {
    for rate in IEEE_RATES {
        for q in [0xFFFFu16, 1] {
            for pfc in [false, true] {
                let mut fc = engine(rate, pfc, Duration::ZERO);
                let r = Instant::from_ps(1_000_000);
                let frame = if pfc {
                    ReceivedControl::multicast(ControlFrame::Pfc {
                        enable_vector: 1 << 5,
                        time: [0, 0, 0, 0, 0, q, 0, 0],
                    })
                } else {
                    pause(q)
                };
                assert!(matches!(
                    fc.handle_control_frame(r, &frame),
                    RxOutcome::Obeyed { .. }
                ));
                let until = r + Duration::from_ps(expected_ps(q.into(), rate.bps()));
                let p = if pfc { 5 } else { 0 };
                assert_eq!(fc.pause_until(r, p), Some(until), "{rate} q={q}");
                assert_paused_exactly(&fc, p, r, until, &format!("{rate} q={q} pfc={pfc}"));
                fc.handle_timeout(until);
                assert_eq!(
                    fc.counters().rx_prio_pause_duration[p as usize],
                    until - r,
                    "{rate} q={q}: paused time accounted"
                );
            }
        }
    }
}

#[test]
fn max_pause_is_the_standards_figures() {
    let at = |g: u64| Duration::from_ps(expected_ps(0xFFFF, Rate::from_gbps(g).bps()));
    assert_eq!(at(100), Duration::from_ps(335_539_200)); // 335.5 µs
    assert_eq!(at(10), Duration::from_ps(3_355_392_000)); // 3.355 ms
    assert_eq!(at(800), Duration::from_ps(41_942_400)); // 41.9 µs
}

#[test]
fn pause_arriving_mid_frame_starts_its_timer_at_that_frames_last_bit_at_every_rate() {
    for rate in IEEE_RATES {
        let byte = rate.bps() as u128;
        let byte_ps = 8 * 1_000_000_000_000 / byte;
        let mut fc = engine(rate, false, Duration::ZERO);
        let t0 = Instant::from_ps(5_000_000_000);
        let slot = fc.on_tx_start(t0, 1500, 3).unwrap();
        // last bit: preamble+SFD (8) + 1500 bytes after the start; wire free 12 bytes later
        let last_bit = t0 + Duration::from_ps(1508 * byte_ps);
        assert_eq!(slot.last_bit, last_bit, "{rate}");
        assert_eq!(slot.free_at, t0 + Duration::from_ps(1520 * byte_ps), "{rate}");
        // the pause's last bit arrives in the middle of that frame
        let r = t0 + Duration::from_ps(700 * byte_ps);
        fc.handle_control_frame(r, &pause(0xFFFF));
        let until = last_bit + Duration::from_ps(expected_ps(0xFFFF, rate.bps()));
        assert_eq!(fc.pause_until(r, 0), Some(until), "{rate}");
        assert_paused_exactly(&fc, 0, r, until, &format!("{rate} mid-frame"));
        // a pause arriving after the last bit (in the inter-frame gap) starts at once
        let mut fc = engine(rate, false, Duration::ZERO);
        fc.on_tx_start(t0, 1500, 3).unwrap();
        let r = last_bit;
        fc.handle_control_frame(r, &pause(1));
        assert_eq!(
            fc.pause_until(r, 0),
            Some(r + Duration::from_ps(expected_ps(1, rate.bps()))),
            "{rate} gap"
        );
    }
}

#[test]
fn default_reaction_delay_follows_the_802_3_table() {
    let table = [
        (Rate::from_mbps(10), 1),
        (Rate::from_mbps(100), 1),
        (Rate::from_gbps(1), 2),
        (Rate::from_mbps(2_500), 60),
        (Rate::from_gbps(5), 60),
        (Rate::from_gbps(10), 60),
        (Rate::from_gbps(25), 80),
        (Rate::from_gbps(40), 118),
        (Rate::from_gbps(50), 147),
        (Rate::from_gbps(100), 394),
        (Rate::from_gbps(200), 453),
        (Rate::from_gbps(400), 905),
        (Rate::from_gbps(800), 905),
        (Rate::from_gbps(1_600), 905),
    ];
    assert_eq!(table.len(), IEEE_RATES.len());
    for (rate, q) in table {
        assert_eq!(reaction_delay_quanta(rate), q, "{rate}");
        assert_eq!(
            default_reaction_delay(rate),
            Duration::from_ps(expected_ps(q.into(), rate.bps())),
            "{rate}"
        );
        assert_eq!(
            FlowControlConfig::pause(rate, ME).reaction_delay,
            default_reaction_delay(rate)
        );
    }
}

#[test]
fn data_may_start_until_the_reaction_delay_ends_and_never_after_at_every_rate() {
    for rate in IEEE_RATES {
        let d = default_reaction_delay(rate);
        let mut fc = engine(rate, true, d);
        let r = Instant::from_ps(1_000_000_000);
        fc.handle_control_frame(
            r,
            &ReceivedControl::multicast(ControlFrame::Pfc {
                enable_vector: 0b1000_0000,
                time: [0, 0, 0, 0, 0, 0, 0, 0xFFFF],
            }),
        );
        let until = r + Duration::from_ps(expected_ps(0xFFFF, rate.bps()));
        assert_paused_exactly(&fc, 7, r + d, until, &format!("{rate} reaction"));
        assert_eq!(
            fc.poll_timeout(),
            Some(r + d),
            "{rate}: the engine wakes when the pause bites"
        );
        // a frame started 1 ps before the end of the reaction delay is accepted
        assert!(
            fc.on_tx_start(r + d - Duration::from_ps(1), 64, 7).is_ok(),
            "{rate}"
        );
        // other priorities are untouched
        assert!(fc.may_transmit(r + d, 6), "{rate}");
    }
}

#[test]
fn a_pause_shorter_than_the_reaction_delay_may_never_take_effect() {
    let rate = Rate::from_gbps(100);
    let mut fc = engine(rate, false, default_reaction_delay(rate));
    let r = Instant::from_ps(10_000_000);
    fc.handle_control_frame(r, &pause(1));
    for t in [r, r + Duration::from_ps(5_120), r + default_reaction_delay(rate)] {
        assert!(fc.may_transmit(t, 0), "{t}");
    }
    fc.handle_timeout(r + Duration::from_us(10));
    assert_eq!(fc.counters().rx_prio_pause_transition[0], 0);
    assert_eq!(fc.counters().rx_prio_pause_duration[0], Duration::ZERO);
}
