//! The monitor and storm watchdog behind `lossless watch` and `lossless analyze`, driven with
//! exact times: counts, transitions, paused time at the link speed, SONiC pfcwd storm semantics.

use lossless_live::generator::{FRAME_LEN, FrameSpec, storm_rate};
use lossless_live::monitor::{Monitor, PAUSE_SLOT};
use lossless_live::watchdog::{DEFAULT_TIME, StormKind, Watchdog};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};

const SRC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];

fn at_ms(ms: u64) -> Instant {
    Instant::from_ps(0) + Duration::from_ms(ms)
}

fn frame(c: MacControlRepr) -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = emit_frame(
        EthernetAddress(SRC),
        EthernetAddress::MAC_CONTROL,
        &c,
        FcsMode::Absent,
        &mut b,
    )
    .unwrap();
    b[..n].to_vec()
}

fn monitor() -> Monitor {
    Monitor::new(Rate::from_gbps(10), Watchdog::new(DEFAULT_TIME, DEFAULT_TIME))
}

#[test]
fn xoff_burst_then_xon_is_one_transition_each_way_with_exact_paused_time() {
    let mut m = monitor();
    let xoff = frame(MacControlRepr::pfc_xoff(1 << 3, 65535));
    // 65535 quanta at 10G = 3.355392 ms, so frames 1 ms apart keep priority 3 paused.
    for i in 0..50 {
        m.on_frame(at_ms(i), &xoff, FcsMode::Absent);
    }
    m.on_frame(
        at_ms(60),
        &frame(MacControlRepr::pfc_xon(1 << 3)),
        FcsMode::Absent,
    );
    let c = m.counters(3);
    assert_eq!((c.frames, c.xoff_frames, c.xon_frames), (51, 50, 1));
    assert_eq!((c.xoff_transitions, c.xon_transitions), (1, 1));
    assert_eq!(c.quanta, 50 * 65535);
    // Paused from 0 until the last XOFF's time ran out: 49 ms + 3.355392 ms (XON at 60 ms is later).
    assert_eq!(
        m.paused_time(3, at_ms(100)),
        Duration::from_ms(49) + Rate::from_gbps(10).quanta_time(65535)
    );
    assert_eq!(m.counters(2).frames, 0);
}

#[test]
fn pause_expiry_counts_as_xon_transition_and_a_new_xoff_starts_another() {
    let mut m = monitor();
    let xoff = frame(MacControlRepr::Pause { pause_time: 1000 });
    m.on_frame(at_ms(0), &xoff, FcsMode::Absent);
    m.on_frame(at_ms(10), &xoff, FcsMode::Absent);
    m.tick(at_ms(20));
    let c = m.counters(PAUSE_SLOT);
    assert_eq!((c.xoff_transitions, c.xon_transitions), (2, 2));
    // 1000 quanta × 512 bit times at 10 Gb/s = 51.2 µs, twice.
    assert_eq!(m.paused_time(PAUSE_SLOT, at_ms(20)), Duration::from_ns(102_400));
}

#[test]
fn storm_detected_after_detection_time_and_restored_after_restoration_time() {
    let mut m = monitor();
    let xoff = frame(MacControlRepr::pfc_xoff(1 << 4, 65535));
    for i in 0..300 {
        m.on_frame(at_ms(1000 + i), &xoff, FcsMode::Absent);
        m.tick(at_ms(1000 + i));
    }
    let ev = m.take_events();
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (ev[0].kind, ev[0].slot, ev[0].at),
        (StormKind::Detected, 4, at_ms(1200))
    );
    let end = at_ms(1299) + Rate::from_gbps(10).quanta_time(65535);
    m.tick(at_ms(1400));
    assert!(m.take_events().is_empty(), "restored too early");
    m.tick(at_ms(1600));
    let ev = m.take_events();
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (ev[0].kind, ev[0].at),
        (StormKind::Restored, end + Duration::from_ms(200))
    );
    assert_eq!((m.watchdog().detected(4), m.watchdog().restored(4)), (1, 1));
}

#[test]
fn pause_shorter_than_detection_is_no_storm_and_new_pause_before_restoration_keeps_it() {
    let mut m = Monitor::new(
        Rate::from_gbps(10),
        Watchdog::new(Duration::from_ms(100), Duration::from_ms(300)),
    );
    let xoff = frame(MacControlRepr::pfc_xoff(1, 65535));
    for i in 0..90 {
        m.on_frame(at_ms(i), &xoff, FcsMode::Absent);
    }
    m.tick(at_ms(500));
    assert!(
        m.take_events().is_empty(),
        "a 93 ms pause is no storm at 100 ms detection"
    );
    for i in 0..150 {
        m.on_frame(at_ms(1000 + i), &xoff, FcsMode::Absent);
    }
    m.tick(at_ms(1200));
    // Paused again 100 ms after the storm's pause ended: still stormed.
    for i in 0..10 {
        m.on_frame(at_ms(1250 + i), &xoff, FcsMode::Absent);
    }
    m.tick(at_ms(1500));
    let kinds: Vec<_> = m.take_events().iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [StormKind::Detected]);
    m.tick(at_ms(1700));
    let ev = m.take_events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].kind, StormKind::Restored);
}

#[test]
fn a_long_pause_between_two_polls_is_detected_and_restored_once() {
    let mut m = monitor();
    // One XOFF of 65535 quanta at 1 Gb/s pauses 33.5 ms; at 100 Mb/s 335 ms.
    let mut m100 = Monitor::new(Rate::from_mbps(100), Watchdog::new(DEFAULT_TIME, DEFAULT_TIME));
    m100.on_frame(
        at_ms(0),
        &frame(MacControlRepr::pfc_xoff(1 << 7, 65535)),
        FcsMode::Absent,
    );
    m100.tick(at_ms(10_000));
    let ev = m100.take_events();
    assert_eq!(
        ev.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [StormKind::Detected, StormKind::Restored]
    );
    assert_eq!(ev[0].at, at_ms(200));
    m100.tick(at_ms(20_000));
    assert!(m100.take_events().is_empty());
    m.tick(at_ms(1));
    assert!(m.take_events().is_empty());
}

#[test]
fn malformed_and_unknown_opcode_frames_are_counted_not_fatal() {
    let mut m = monitor();
    m.on_frame(at_ms(0), &[0u8; 5], FcsMode::Absent);
    let mut short = frame(MacControlRepr::pfc_xoff(1, 1));
    short.truncate(20);
    m.on_frame(at_ms(0), &short, FcsMode::Absent);
    let mut unknown = frame(MacControlRepr::Pause { pause_time: 1 });
    unknown[15] = 0x99;
    m.on_frame(at_ms(0), &unknown, FcsMode::Absent);
    let s = m.snapshot(at_ms(1));
    assert_eq!((s.frames, s.malformed, s.unknown_opcode), (3, 2, 1));
    assert_eq!(s.top_talkers.len(), 1);
    assert_eq!(s.top_talkers[0].source, "02:00:00:00:00:01");
}

#[test]
fn generator_frame_is_the_codecs_emit_and_storm_rate_follows_pfc_gen() {
    let spec = FrameSpec {
        control: MacControlRepr::Pfc {
            priority_enable_vector: 0b1010_0000,
            time: [0, 0, 0, 0, 0, 7, 0, 65535],
        },
        src: None,
        dst: EthernetAddress::MAC_CONTROL.0,
    };
    let f = spec.frame(SRC).unwrap();
    assert_eq!(f.len(), FRAME_LEN);
    assert_eq!(f.to_vec(), frame(spec.control));
    // 65535·512 bit times at 100 Gb/s = 335.5392 µs; 2 frames per pause → 5960.56 frames/s.
    let r = storm_rate(Rate::from_gbps(100), 65535, 2.0);
    assert!((r - 2.0 / 335.5392e-6).abs() < 1e-6, "{r}");
    // shorter pauses need proportionally more frames to keep the priority paused
    let r = storm_rate(Rate::from_gbps(100), 100, 2.0);
    assert!((r - 2.0 / (100.0 * 512.0 / 100e9)).abs() < 1e-3, "{r}");
}
