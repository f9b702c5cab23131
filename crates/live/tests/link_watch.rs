//! `lossless watch`'s judgement of one interface, driven with exact times: SONiC's pfcwd
//! (the proto engine the simulator also runs) on each direction at its poll instants, its
//! storm/restore events and counters, and the deadlock suspicion when both directions of a
//! slot are paused at once.

use lossless_live::link::{Direction, LinkConfig, LinkEvent, LinkEventKind, LinkWatch, SlotVerdict};
use lossless_live::watch::{Frame, classify};
use lossless_live::watchdog::pfcwd::{self, Rule, Status};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use proptest::prelude::*;

const SPEED: Rate = Rate::from_gbps(10);

fn at_ms(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_ms(ms)
}
fn at_us(us: u64) -> Instant {
    Instant::ZERO + Duration::from_us(us)
}

fn frame(c: MacControlRepr) -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = emit_frame(
        EthernetAddress([2, 0, 0, 0, 0, 1]),
        EthernetAddress::MAC_CONTROL,
        &c,
        FcsMode::Absent,
        &mut b,
    )
    .unwrap();
    b[..n].to_vec()
}

fn xoff(prio: u8) -> Vec<u8> {
    frame(MacControlRepr::pfc_xoff(1 << prio, 65535))
}
fn xon(prio: u8) -> Vec<u8> {
    frame(MacControlRepr::pfc_xon(1 << prio))
}

fn cfg(detection: u64, restoration: u64, poll: u64, rule: Rule) -> LinkConfig {
    LinkConfig {
        pfcwd: pfcwd::Config {
            detection: Duration::from_ms(detection),
            restoration: Duration::from_ms(restoration),
            poll: Duration::from_ms(poll),
            rule,
            ..pfcwd::Config::default()
        },
        deadlock_time: Duration::from_ms(detection),
        speed: SPEED,
    }
}

/// XOFF every millisecond on `prio` from `from` to `to` (exclusive), µs.
fn storm(w: &mut LinkWatch, d: Direction, prio: u8, from_us: u64, to_us: u64) {
    let mut s = Sched::default();
    s.storm(d, prio, from_us, to_us);
    s.feed(w, u64::MAX);
}

/// Frames of both directions, fed to a watch in time order (as the tap delivers them).
#[derive(Default)]
struct Sched {
    frames: Vec<(u64, Direction, Vec<u8>)>,
    fed: usize,
}

impl Sched {
    /// XOFF every millisecond on `prio` over `[from_us, to_us)`.
    fn storm(&mut self, d: Direction, prio: u8, from_us: u64, to_us: u64) {
        let f = xoff(prio);
        self.frames
            .extend((from_us..to_us).step_by(1000).map(|t| (t, d, f.clone())));
    }
    fn at(&mut self, us: u64, d: Direction, f: Vec<u8>) {
        self.frames.push((us, d, f));
    }
    /// Feeds the frames before `until_us` not fed yet, in time order (a stable sort: frames
    /// at one instant keep the order they were scheduled in).
    fn feed(&mut self, w: &mut LinkWatch, until_us: u64) {
        if self.fed == 0 {
            self.frames.sort_by_key(|f| f.0);
        }
        while let Some((t, d, f)) = self.frames.get(self.fed).filter(|f| f.0 < until_us) {
            w.on_control(at_us(*t), *d, f);
            self.fed += 1;
        }
    }
}

fn of(ev: &[LinkEvent], kind: LinkEventKind) -> Vec<LinkEvent> {
    ev.iter().copied().filter(|e| e.kind == kind).collect()
}

#[test]
fn a_peer_storming_one_direction_is_a_storm_published_within_detection_plus_poll() {
    let mut w = LinkWatch::new(cfg(200, 200, 200, Rule::Mellanox));
    // XOFF from 1050 ms to 2049 ms: the poll interval 1000–1200 is paused 75 %, 1200–1400 all.
    storm(&mut w, Direction::Rx, 3, 1_050_000, 2_050_000);
    w.tick(at_ms(1999));
    let ev = w.take_events();
    let storms = of(&ev, LinkEventKind::Storm);
    assert_eq!(storms.len(), 1, "{ev:?}");
    let s = storms[0];
    assert_eq!((s.slot, s.direction, s.at), (3, Some(Direction::Rx), at_ms(1400)));
    assert_eq!(s.paused_since, Some(at_ms(1050)));
    assert!(!s.deadlock_suspected);
    // SONiC: detected once T_storm > T_detect + T_poll at the latest
    assert!(s.at - at_ms(1050) <= Duration::from_ms(400));
    // the exact instant the pause became 200 ms long, as analyze reports it
    let exact = of(&ev, LinkEventKind::StormDetected);
    assert_eq!(exact.len(), 1);
    assert_eq!(exact[0].at, at_ms(1250));
    assert!(of(&ev, LinkEventKind::DeadlockSuspected).is_empty());
    assert_eq!(w.verdict(3, at_ms(1999)), SlotVerdict::Storm);
    let q = w.pfcwd(Direction::Rx, 3).unwrap();
    assert_eq!((q.status(), q.detected(), q.restored()), (Status::Stormed, 1, 0));
    assert_eq!(w.pfcwd(Direction::Tx, 3).unwrap().status(), Status::Operational);

    // last XOFF at 2049 ms: the poll at 2200 still saw frames, 2200–2400 none: restored at
    // 2400, within last frame + T_restore + T_poll
    w.tick(at_ms(3000));
    let ev = w.take_events();
    let r = of(&ev, LinkEventKind::Restore);
    assert_eq!(r.len(), 1, "{ev:?}");
    assert_eq!((r[0].at, r[0].last_frame), (at_ms(2400), Some(at_ms(2049))));
    assert_eq!(w.verdict(3, at_ms(3000)), SlotVerdict::Ok);
    let snap = w.snapshot(at_ms(3000));
    let p3 = &snap.verdicts[3];
    assert_eq!(
        (
            p3.rx.pfc_wd_queue_stats_deadlock_detected,
            p3.rx.pfc_wd_queue_stats_deadlock_restored,
            p3.deadlock_suspected_total
        ),
        (1, 1, 0)
    );
    assert_eq!(snap.rx.slots[3].counters.xoff_frames, 1000);
    assert_eq!(snap.tx.slots[3].counters.frames, 0);
}

#[test]
fn paused_both_ways_at_once_is_a_deadlock_suspicion_from_the_later_start_and_not_a_storm() {
    let mut w = LinkWatch::new(LinkConfig {
        deadlock_time: Duration::from_ms(150),
        ..cfg(1000, 200, 200, Rule::Mellanox)
    });
    // the peer pauses us from 1050 ms, we pause it from 1080 ms; our XON at 1600 ms ends it
    let mut sched = Sched::default();
    sched.storm(Direction::Rx, 5, 1_050_000, 3_000_000);
    sched.storm(Direction::Tx, 5, 1_080_000, 1_600_000);
    sched.at(1_600_000, Direction::Tx, xon(5));
    sched.feed(&mut w, 1_599_000);
    w.tick(at_ms(1599));
    let ev = w.take_events();
    let d = of(&ev, LinkEventKind::DeadlockSuspected);
    assert_eq!(d.len(), 1, "{ev:?}");
    assert_eq!((d[0].slot, d[0].direction), (5, None));
    assert_eq!((d[0].at, d[0].paused_since), (at_ms(1230), Some(at_ms(1080))));
    // pfcwd (1 s detection) has not fired yet: the slot is a deadlock, not a storm
    assert!(of(&ev, LinkEventKind::Storm).is_empty(), "{ev:?}");
    assert_eq!(w.verdict(5, at_ms(1599)), SlotVerdict::DeadlockSuspected);
    sched.feed(&mut w, u64::MAX);
    w.tick(at_ms(2999));
    let ev = w.take_events();
    let c = of(&ev, LinkEventKind::DeadlockCleared);
    assert_eq!(c.len(), 1, "{ev:?}");
    assert_eq!(c[0].at, at_ms(1600));
    // after our XON only the peer pauses us: pfcwd's storm on rx is a storm (SONiC would
    // have said so during the deadlock too, being unable to tell)
    let s = of(&ev, LinkEventKind::Storm);
    assert_eq!(s.len(), 1, "{ev:?}");
    assert_eq!(
        (s[0].direction, s[0].at, s[0].deadlock_suspected),
        (Some(Direction::Rx), at_ms(2200), false)
    );
    assert_eq!(w.verdict(5, at_ms(2999)), SlotVerdict::Storm);
    assert_eq!(w.snapshot(at_ms(2999)).verdicts[5].deadlock_suspected_total, 1);
}

#[test]
fn a_storm_sonic_publishes_during_a_deadlock_says_so() {
    let mut w = LinkWatch::new(cfg(200, 200, 200, Rule::Mellanox));
    let mut sched = Sched::default();
    sched.storm(Direction::Rx, 2, 1_010_000, 1_900_000);
    sched.storm(Direction::Tx, 2, 1_010_000, 1_900_000);
    sched.feed(&mut w, u64::MAX);
    // the same frames, each direction's at its instant 300 µs after the other's
    let mut w2 = LinkWatch::new(cfg(200, 200, 200, Rule::Mellanox));
    let mut sched = Sched::default();
    sched.storm(Direction::Tx, 2, 1_010_000, 1_900_000);
    sched.storm(Direction::Rx, 2, 1_010_300, 1_900_000);
    sched.feed(&mut w2, u64::MAX);
    for (w, later) in [(&mut w, 0), (&mut w2, 300)] {
        w.tick(at_ms(1899));
        let ev = w.take_events();
        let d = of(&ev, LinkEventKind::DeadlockSuspected);
        assert_eq!(d.len(), 1, "{ev:?}");
        // from the later of the two starts
        assert_eq!(d[0].at, at_ms(1210) + Duration::from_us(later));
        // both directions stormed at 1400 (1200–1400 fully paused), each flagged
        let s = of(&ev, LinkEventKind::Storm);
        assert_eq!(s.len(), 2, "{ev:?}");
        assert!(
            s.iter().all(|e| e.at == at_ms(1400) && e.deadlock_suspected),
            "{s:?}"
        );
        assert_eq!(w.verdict(2, at_ms(1899)), SlotVerdict::DeadlockSuspected);
    }
}

#[test]
fn a_deadlock_that_runs_out_is_cleared_at_the_exact_end_of_the_overlap() {
    let mut w = LinkWatch::new(cfg(200, 200, 200, Rule::Mellanox));
    let mut sched = Sched::default();
    sched.storm(Direction::Rx, 1, 0, 2_000_000);
    sched.storm(Direction::Tx, 1, 100_000, 700_000);
    sched.feed(&mut w, u64::MAX);
    w.tick(at_ms(1000));
    let ev = w.take_events();
    let d = of(&ev, LinkEventKind::DeadlockSuspected);
    let c = of(&ev, LinkEventKind::DeadlockCleared);
    assert_eq!(d.len(), 1, "{ev:?}");
    assert_eq!(d[0].at, at_ms(300));
    // our last XOFF at 699 ms ran out 65535 quanta later
    assert_eq!(c.len(), 1, "{ev:?}");
    assert_eq!(c[0].at, at_ms(699) + SPEED.quanta_time(65535));
}

#[test]
fn overlaps_shorter_than_the_deadlock_time_and_one_way_pauses_raise_no_suspicion() {
    let mut w = LinkWatch::new(cfg(200, 200, 200, Rule::Mellanox));
    let mut sched = Sched::default();
    sched.storm(Direction::Rx, 4, 0, 1_000_000);
    // we pause it for 190 ms + 3.4 ms only
    sched.storm(Direction::Tx, 4, 300_000, 490_000);
    // and pause another priority for long, which the peer does not
    sched.storm(Direction::Tx, 6, 0, 1_000_000);
    sched.feed(&mut w, u64::MAX);
    w.tick(at_ms(2000));
    let ev = w.take_events();
    assert!(of(&ev, LinkEventKind::DeadlockSuspected).is_empty(), "{ev:?}");
    // p6: we storm the peer: pfcwd on tx, as the peer's switch would see it
    let s: Vec<_> = of(&ev, LinkEventKind::Storm)
        .into_iter()
        .filter(|e| e.slot == 6)
        .collect();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].direction, Some(Direction::Tx));
}

#[test]
fn the_legacy_rule_storms_on_short_pauses_unless_the_paused_queue_is_seen_sending() {
    // The peer sends one XOFF of 1000 quanta (51.2 µs at 10G) every 50 ms: paused a
    // thousandth of the time. The legacy Mellanox rule needs only PFC received and no packet
    // sent (queue occupancy assumed); the 99 % rule needs the queue paused all the interval.
    let run = |rule: Rule, data: bool| {
        let mut w = LinkWatch::new(cfg(200, 200, 200, rule));
        let f = frame(MacControlRepr::pfc_xoff(1 << 3, 1000));
        for i in 0..40u64 {
            w.on_control(at_ms(i * 50), Direction::Rx, &f);
            if data {
                // our priority-3 frames go out between the pauses
                w.on_data(at_ms(i * 50 + 10), Direction::Tx, 3);
            }
        }
        w.tick(at_ms(2000));
        let storms = of(&w.take_events(), LinkEventKind::Storm);
        (
            storms.len(),
            w.snapshot(at_ms(2000)).verdicts[3].data_frames_tx_total,
        )
    };
    assert_eq!(run(Rule::MellanoxLegacy, false), (1, 0));
    assert_eq!(run(Rule::MellanoxLegacy, true), (0, 40));
    assert_eq!(run(Rule::Mellanox, false).0, 0);
    assert_eq!(run(Rule::Broadcom, false).0, 0);
}

#[test]
fn the_broadcom_rule_needs_two_agreeing_samples_so_detects_one_poll_later() {
    let mut w = LinkWatch::new(cfg(200, 200, 200, Rule::Broadcom));
    storm(&mut w, Direction::Rx, 0, 1_050_000, 2_000_000);
    w.tick(at_ms(1999));
    let s = of(&w.take_events(), LinkEventKind::Storm);
    // 1200: paused now but not at 1000; 1400: both samples paused, charged 200 ms − 1 µs;
    // 1600: detected — within T_detect + 2·T_poll
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].at, at_ms(1600));
}

#[test]
fn tap_frames_are_sorted_into_control_and_data_by_priority() {
    let ctl = xoff(3);
    assert_eq!(classify(&ctl, None), Some(Frame::Control));
    let mut tagged = vec![0u8; 18];
    tagged[12..14].copy_from_slice(&[0x81, 0x00]);
    tagged[14..16].copy_from_slice(&(5u16 << 13 | 100).to_be_bytes());
    tagged[16..18].copy_from_slice(&[0x08, 0x00]);
    assert_eq!(classify(&tagged, None), Some(Frame::Data(5)));
    // a tagged MAC Control frame is neither
    tagged[16..18].copy_from_slice(&[0x88, 0x08]);
    assert_eq!(classify(&tagged, None), None);
    // the tag the device took off
    let mut ip = vec![0u8; 18];
    ip[12..14].copy_from_slice(&[0x08, 0x00]);
    assert_eq!(classify(&ip, Some(7 << 13 | 1)), Some(Frame::Data(7)));
    assert_eq!(classify(&ip, None), None);
    assert_eq!(classify(&[0u8; 5], None), None);
}

/// The deadlock oracle: two pause intervals of one slot, `[a0, a1)` and `[b0, b1)`.
fn overlap(a: (u64, u64), b: (u64, u64)) -> Option<(u64, u64)> {
    let (o, e) = (a.0.max(b.0), a.1.min(b.1));
    (o < e).then_some((o, e))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For a storm starting anywhere between polls, pfcwd's 99 % rule publishes "storm" no
    /// earlier than the detection time (less the 1 % it tolerates) and no later than
    /// T_detect + T_poll after the first XOFF, with detection a multiple of the poll as
    /// SONiC's documentation states it; restore no earlier than T_restore and no later than
    /// T_restore (rounded up to whole polls) + T_poll after the last frame.
    #[test]
    fn pfcwd_detects_within_detection_plus_poll_and_restores_within_restoration_plus_poll(
        start_us in 500_000u64..1_500_000,
        polls in 1u64..5,
        poll_ms in prop::sample::select(vec![100u64, 200, 250]),
        restoration_ms in 100u64..600,
        extra_ms in 0u64..800,
    ) {
        let detection = poll_ms * polls;
        // long enough to be seen: the first full poll interval starts within a poll
        let len_ms = detection + poll_ms + extra_ms;
        prop_assume!(detection >= 100 && restoration_ms >= poll_ms);
        let mut w = LinkWatch::new(cfg(detection, restoration_ms, poll_ms, Rule::Mellanox));
        let end_us = start_us + len_ms * 1000;
        storm(&mut w, Direction::Rx, 7, start_us, end_us);
        w.tick(at_us(end_us + 3_000_000));
        let ev = w.take_events();
        let s = of(&ev, LinkEventKind::Storm);
        prop_assert_eq!(s.len(), 1);
        let late = s[0].at.saturating_duration_since(at_us(start_us));
        prop_assert!(late <= Duration::from_ms(detection + poll_ms), "{:?}", late);
        prop_assert!(late.as_ps() * 100 >= Duration::from_ms(detection).as_ps() * 100 - Duration::from_ms(poll_ms).as_ps(), "{:?}", late);
        let r = of(&ev, LinkEventKind::Restore);
        prop_assert_eq!(r.len(), 1);
        let last = r[0].last_frame.unwrap();
        // the countdown is charged a whole poll at a time: restoration rounded up to polls
        let restoration_polls = restoration_ms.div_ceil(poll_ms) * poll_ms;
        prop_assert!(r[0].at - last <= Duration::from_ms(restoration_polls + poll_ms));
        prop_assert!(r[0].at - last >= Duration::from_ms(restoration_ms));
    }

    /// A deadlock is suspected exactly when the two directions' pauses overlap for the
    /// deadlock time, at the later start plus that time, and cleared at the overlap's end.
    #[test]
    fn deadlock_suspicion_is_exactly_an_overlap_of_the_deadlock_time(
        a0 in 0u64..400, alen in 1u64..600, b0 in 0u64..400, blen in 1u64..600,
        xon_a in any::<bool>(),
    ) {
        let mut w = LinkWatch::new(LinkConfig {
            deadlock_time: Duration::from_ms(100),
            ..cfg(200, 200, 200, Rule::Mellanox)
        });
        // each pause: XOFF every ms over [start, start + len), then XON (or the last XOFF
        // runs out 3.3554 ms later)
        let q = SPEED.quanta_time(65535);
        let end = |s: u64, l: u64, x: bool| if x { at_ms(s + l) } else { at_ms(s + l - 1) + q };
        let f = xoff(0);
        let mut sched: Vec<(u64, Direction, bool)> = Vec::new();
        for (d, s, l, x) in [(Direction::Rx, a0, alen, xon_a), (Direction::Tx, b0, blen, !xon_a)] {
            for t in s..s + l {
                sched.push((t * 1000, d, false));
            }
            if x {
                sched.push(((s + l) * 1000, d, true));
            }
        }
        sched.sort_by_key(|e| e.0);
        for (t, d, is_xon) in sched {
            if is_xon {
                w.on_control(at_us(t), d, &xon(0));
            } else {
                w.on_control(at_us(t), d, &f);
            }
        }
        w.tick(at_ms(2000));
        let ev = w.take_events();
        let d = of(&ev, LinkEventKind::DeadlockSuspected);
        let c = of(&ev, LinkEventKind::DeadlockCleared);
        let ea = end(a0, alen, xon_a);
        let eb = end(b0, blen, !xon_a);
        let o = at_ms(a0.max(b0));
        let e = ea.min(eb);
        let expect = overlap((a0, 1), (b0, 1)).is_some() || o < e;
        if expect && e.saturating_duration_since(o) >= Duration::from_ms(100) {
            prop_assert_eq!(d.len(), 1, "{:?}", ev);
            prop_assert_eq!(d[0].at, o + Duration::from_ms(100));
            prop_assert_eq!(c.len(), 1, "{:?}", ev);
            prop_assert_eq!(c[0].at, e);
        } else {
            prop_assert!(d.is_empty() && c.is_empty(), "{:?}", ev);
        }
    }
}

#[test]
fn a_frame_stamped_before_the_latest_instant_counts_then_and_time_never_goes_back() {
    let mut w = LinkWatch::new(cfg(200, 200, 200, Rule::Mellanox));
    w.on_control(at_ms(500), Direction::Tx, &xoff(2));
    // the received frame's stamp is 2 ms older (taken on another CPU)
    w.on_control(at_ms(498), Direction::Rx, &xoff(2));
    assert_eq!(
        w.monitor(Direction::Rx).current_pause(2).map(|p| p.0),
        Some(at_ms(500))
    );
    w.tick(at_ms(400));
    // both pauses run out 65535 quanta after 500 ms, not before
    assert_eq!(w.verdict(2, at_ms(501)), SlotVerdict::Paused);
    assert_eq!(w.snapshot(at_ms(501)).rx.slots[2].counters.xoff_frames, 1);
}
