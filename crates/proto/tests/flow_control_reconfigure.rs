//! `FlowControl::reconfigure`: a run-time configuration change (DCBX changed the PFC enable
//! vector) keeps counters, the wire and the state of register sets still in use, ends what the
//! new configuration no longer obeys or requests, and is a no-op for the configuration in
//! force. Unit tests pin each rule; property tests drive random operation sequences.

use lossless_proto::flow_control::{
    ConfigError, ControlFrame, Counters, FlowControl, FlowControlConfig, Mode, ReceivedControl, TxError,
};
use lossless_proto::units::{Duration, Instant, Rate};
use proptest::prelude::*;

const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];

fn at(ns: u64) -> Instant {
    Instant::ZERO + Duration::from_ns(ns)
}

fn pfc(rate: Rate, enabled: u8) -> FlowControlConfig {
    let mut c = FlowControlConfig::pfc(rate, MAC, enabled);
    c.reaction_delay = Duration::ZERO;
    c
}

fn xoff(mask: u8, quanta: u16) -> ReceivedControl {
    ReceivedControl::multicast(ControlFrame::Pfc {
        enable_vector: mask,
        time: [quanta; 8],
    })
}

#[test]
fn a_pause_on_a_priority_still_enabled_runs_to_its_end_and_a_dropped_one_ends_at_the_change() {
    let rate = Rate::from_gbps(100);
    let mut fc = FlowControl::new(pfc(rate, 0b0001_1000)).unwrap();
    fc.handle_control_frame(at(100), &xoff(0b0001_1000, 1000));
    let until = at(100) + rate.quanta_time(1000);
    assert_eq!(fc.pause_until(at(100), 3), Some(until));
    fc.reconfigure(at(2000), pfc(rate, 0b0000_1000)).unwrap();
    // priority 3 is still enabled: its pause keeps running to the same end
    assert_eq!(fc.pause_until(at(2000), 3), Some(until));
    assert!(!fc.may_transmit(at(2000), 3));
    assert_eq!(
        fc.on_tx_start(at(2000), 64, 3),
        Err(TxError::Paused { priority: 3 })
    );
    assert!(fc.may_transmit(until, 3));
    // priority 4 is no longer PFC: its pause ended at the change, accounted up to it
    assert!(fc.may_transmit(at(2000), 4));
    assert_eq!(fc.pause_until(at(2000), 4), None);
    let c = fc.counters();
    assert_eq!(c.rx_prio_pause_duration[4], Duration::from_ns(1900));
    assert_eq!(c.rx_prio_pause_transition[4], 1);
    assert_eq!(c.rx_prio_pause_duration[3], Duration::ZERO, "3 still runs");
    assert_eq!(c.rx_prio_pause[3], 1);
    assert_eq!(c.rx_prio_pause[4], 1);
    fc.handle_timeout(until);
    assert_eq!(fc.counters().rx_prio_pause_duration[3], rate.quanta_time(1000));
}

#[test]
fn a_request_on_a_priority_no_longer_enabled_is_dropped_without_an_xon() {
    let rate = Rate::from_gbps(100);
    let mut fc = FlowControl::new(pfc(rate, 0b0001_1000)).unwrap();
    fc.set_request(at(0), 3, true).unwrap();
    fc.set_request(at(0), 4, true).unwrap();
    let sent = fc.poll_transmit(at(0)).unwrap();
    assert!(matches!(
        sent.frame,
        ControlFrame::Pfc {
            enable_vector: 0b0001_1000,
            ..
        }
    ));
    let refresh3 = fc.refresh_at(3);
    fc.reconfigure(at(500), pfc(rate, 0b0000_1000)).unwrap();
    assert_eq!(fc.requested_mask(), 0b0000_1000, "3 kept, 4 dropped");
    assert_eq!(fc.refresh_at(3), refresh3, "3's refresh deadline is kept");
    assert_eq!(fc.refresh_at(4), None);
    assert!(!fc.has_control_due(at(500)), "no XON for the dropped priority");
    assert_eq!(fc.poll_transmit(at(500)), None);
    let c = fc.counters();
    assert_eq!(c.tx_prio_xon, [0; 8]);
    assert_eq!(c.tx_prio_pause_duration[4], Duration::from_ns(500));
    assert_eq!(c.mac_control_frames_transmitted, 1);
    // the kept request is refreshed at its deadline, carrying only priority 3
    let t = fc.poll_timeout().unwrap();
    assert_eq!(Some(t), refresh3);
    fc.handle_timeout(t);
    let f = fc.poll_transmit(t).unwrap();
    assert!(matches!(
        f.frame,
        ControlFrame::Pfc {
            enable_vector: 0b0000_1000,
            ..
        }
    ));
    // the priority enabled again later starts clean
    fc.reconfigure(t, pfc(rate, 0b0001_1000)).unwrap();
    assert_eq!(fc.requested_mask(), 0b0000_1000);
    assert_eq!(fc.refresh_at(4), None);
}

#[test]
fn a_mode_change_ends_pauses_and_requests_but_keeps_counters_and_the_wire() {
    let rate = Rate::from_gbps(25);
    let mut fc = FlowControl::new(pfc(rate, 0b0000_1000)).unwrap();
    fc.set_request(at(0), 3, true).unwrap();
    fc.poll_transmit(at(0)).unwrap();
    fc.handle_control_frame(at(50), &xoff(0b0000_1000, 5000));
    let slot = fc.on_tx_start(fc.wire_free_at(), 1500, 0).unwrap();
    let before = *fc.counters();
    fc.reconfigure(slot.start, FlowControlConfig::off(rate, MAC))
        .unwrap();
    assert_eq!(fc.config().mode, Mode::Off);
    assert_eq!(fc.wire_free_at(), slot.free_at, "the frame on the wire is kept");
    assert_eq!(fc.requested_mask(), 0);
    assert_eq!(fc.paused_mask(slot.start), 0);
    assert!(fc.may_transmit(slot.start, 3));
    assert_eq!(fc.poll_timeout(), None);
    let after = fc.counters();
    assert_eq!(after.tx_prio_pause, before.tx_prio_pause);
    assert_eq!(after.rx_prio_pause, before.rx_prio_pause);
    assert_eq!(after.pfc_frames_transmitted, 1);
    assert_eq!(
        after.rx_prio_pause_duration[3],
        slot.start.saturating_duration_since(at(50))
    );
    assert_eq!(
        after.tx_prio_pause_duration[3],
        slot.start.saturating_duration_since(at(0))
    );
    // back to PFC: a request starts from scratch and its XOFF waits for the wire
    fc.reconfigure(slot.start, pfc(rate, 0b0000_1000)).unwrap();
    fc.set_request(slot.start, 3, true).unwrap();
    assert_eq!(
        fc.poll_transmit(slot.start),
        None,
        "the data frame is still on the wire"
    );
    assert_eq!(fc.poll_timeout(), Some(slot.free_at));
    assert!(fc.poll_transmit(slot.free_at).is_some());
    assert_eq!(fc.counters().pfc_frames_transmitted, 2);
}

#[test]
fn a_rate_change_recomputes_the_quantum_and_the_refresh_interval() {
    let mut cfg = pfc(Rate::from_gbps(10), 0b0000_0001);
    cfg.priorities[0].refresh_quanta = 100;
    let mut fc = FlowControl::new(cfg).unwrap();
    let fast = Rate::from_gbps(100);
    cfg.rate = fast;
    fc.reconfigure(at(10), cfg).unwrap();
    fc.handle_control_frame(at(20), &xoff(1, 1000));
    assert_eq!(fc.pause_until(at(20), 0), Some(at(20) + fast.quanta_time(1000)));
    fc.set_request(at(20), 0, true).unwrap();
    let tx = fc.poll_transmit(at(20)).unwrap();
    assert_eq!(fc.refresh_at(0), Some(tx.start + fast.quanta_time(100)));
    assert_eq!(
        tx.free_at,
        tx.start + fast.wire_time(64),
        "byte time at the new rate"
    );
}

#[test]
fn a_refused_configuration_changes_nothing() {
    let rate = Rate::from_gbps(100);
    let mut fc = FlowControl::new(pfc(rate, 0b0000_1000)).unwrap();
    fc.set_request(at(0), 3, true).unwrap();
    fc.handle_control_frame(at(10), &xoff(0b0000_1000, 100));
    let before = format!("{fc:?}");
    let mut bad = pfc(rate, 0b0001_1000);
    bad.priorities[4].pause_quanta = 0;
    assert_eq!(
        fc.reconfigure(at(5000), bad),
        Err(ConfigError::ZeroPauseQuanta { priority: 4 })
    );
    let mut inexact = pfc(rate, 0b0000_1000);
    inexact.rate = Rate::from_bps(3).unwrap();
    assert_eq!(
        fc.reconfigure(at(5000), inexact),
        Err(ConfigError::InexactRate { bps: 3 })
    );
    assert_eq!(format!("{fc:?}"), before, "state, clock and counters untouched");
}

#[test]
fn the_configuration_in_force_changes_nothing_not_even_the_clock() {
    let rate = Rate::from_gbps(100);
    let cfg = pfc(rate, 0b0000_1000);
    let mut fc = FlowControl::new(cfg).unwrap();
    fc.handle_control_frame(at(10), &xoff(0b0000_1000, 1));
    let before = format!("{fc:?}");
    fc.reconfigure(at(1_000_000), cfg).unwrap();
    assert_eq!(fc.now(), at(10));
    assert_eq!(format!("{fc:?}"), before);
}

// ---------------------------------------------------------------------------------------------
// Property tests

/// One call on an engine; times are offsets (ns) from the previous operation.
#[derive(Clone, Debug)]
enum Op {
    Request {
        dt: u32,
        p: u8,
        on: bool,
    },
    Receive {
        dt: u32,
        mask: u8,
        quanta: u16,
        pause: bool,
    },
    Data {
        dt: u32,
        p: u8,
        bytes: u64,
    },
    Poll {
        dt: u32,
    },
    Timeout,
    Reconfigure {
        dt: u32,
        cfg: usize,
    },
}

fn op(configs: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..2000, 0u8..8, any::<bool>()).prop_map(|(dt, p, on)| Op::Request { dt, p, on }),
        3 => (0u32..2000, any::<u8>(), 0u16..3000, prop::bool::weighted(0.2))
            .prop_map(|(dt, mask, quanta, pause)| Op::Receive { dt, mask, quanta, pause }),
        3 => (0u32..2000, 0u8..8, 64u64..9216).prop_map(|(dt, p, bytes)| Op::Data { dt, p, bytes }),
        2 => (0u32..2000).prop_map(|dt| Op::Poll { dt }),
        2 => Just(Op::Timeout),
        2 => (0u32..5000, 0..configs).prop_map(|(dt, cfg)| Op::Reconfigure { dt, cfg }),
    ]
}

/// A configuration: mode (0 off, 1 PAUSE, 2+ PFC), rate, enabled mask, registers.
fn config() -> impl Strategy<Value = FlowControlConfig> {
    (
        0u8..5,
        prop::sample::select(vec![
            Rate::from_gbps(10),
            Rate::from_gbps(25),
            Rate::from_gbps(100),
        ]),
        any::<u8>(),
        0u32..200,
        prop::collection::vec(
            (0u16..3000, 0u32..3000, any::<bool>(), prop::bool::weighted(0.2)),
            8,
        ),
    )
        .prop_map(|(mode, rate, enabled, reaction, regs)| {
            let mut c = match mode {
                0 => FlowControlConfig::off(rate, MAC),
                1 => FlowControlConfig::pause(rate, MAC),
                _ => FlowControlConfig::pfc(rate, MAC, enabled),
            };
            c.reaction_delay = rate.quanta_time(reaction.into());
            for (pc, &(q, r, xon, hold)) in c.priorities.iter_mut().zip(&regs) {
                // mostly valid registers; a zero now and then exercises the refusal path
                pc.pause_quanta = q;
                pc.refresh_quanta = r;
                pc.xon_on_release = xon;
                pc.hold_own_data = hold;
            }
            c
        })
}

/// A valid configuration (zero registers raised to 1).
fn valid(mut c: FlowControlConfig) -> FlowControlConfig {
    for pc in &mut c.priorities {
        pc.pause_quanta = pc.pause_quanta.max(1);
        pc.refresh_quanta = pc.refresh_quanta.max(1);
    }
    c
}

/// Everything a driver can observe of an engine at its current time (query answers only).
fn observe(fc: &FlowControl) -> String {
    let now = fc.now();
    let per_p: Vec<_> = (0..8u8)
        .map(|p| {
            (
                fc.may_transmit(now, p),
                fc.may_start_data(now, p),
                fc.pause_until(now, p),
                fc.refresh_at(p),
                fc.rx_pause_duration(now, p),
                fc.tx_pause_duration(now, p),
            )
        })
        .collect();
    format!(
        "now {:?} counters {:?} timeout {:?} paused {} requested {} wire {:?} due {} hold {} per-p {:?}",
        now,
        fc.counters(),
        fc.poll_timeout(),
        fc.paused_mask(now),
        fc.requested_mask(),
        fc.wire_free_at(),
        fc.has_control_due(now),
        fc.hold_data(now),
        per_p,
    )
}

/// Applies `op` (except reconfigure) at the time after `t`; returns the call's answer.
fn apply(fc: &mut FlowControl, t: &mut Instant, op: &Op) -> String {
    let step = |t: &mut Instant, dt: u32| {
        *t += Duration::from_ns(dt.into());
        *t
    };
    match *op {
        Op::Request { dt, p, on } => format!("{:?}", fc.set_request(step(t, dt), p, on)),
        Op::Receive {
            dt,
            mask,
            quanta,
            pause,
        } => {
            let frame = if pause {
                ControlFrame::Pause { quanta }
            } else {
                ControlFrame::Pfc {
                    enable_vector: mask,
                    time: [quanta; 8],
                }
            };
            format!(
                "{:?}",
                fc.handle_control_frame(step(t, dt), &ReceivedControl::multicast(frame))
            )
        }
        Op::Data { dt, p, bytes } => {
            let now = step(t, dt).max(fc.wire_free_at());
            *t = now;
            format!("{:?}", fc.on_tx_start(now, bytes, p))
        }
        Op::Poll { dt } => format!("{:?}", fc.poll_transmit(step(t, dt))),
        Op::Timeout => match fc.poll_timeout() {
            Some(d) => {
                *t = (*t).max(d);
                fc.handle_timeout(d);
                format!("timeout {d:?}")
            }
            None => "none".into(),
        },
        Op::Reconfigure { .. } => unreachable!("handled by the caller"),
    }
}

/// Every counter as a number, in a fixed order (durations in ps).
fn flat(c: &Counters) -> Vec<u128> {
    let mut v: Vec<u128> = [
        c.mac_control_frames_transmitted,
        c.mac_control_frames_received,
        c.unsupported_opcodes_received,
        c.pause_mac_ctrl_frames_transmitted,
        c.pause_mac_ctrl_frames_received,
        c.pfc_frames_transmitted,
        c.pfc_frames_received,
        c.rx_wrong_destination,
        c.rx_wrong_length,
        c.rx_ignored_mode,
    ]
    .iter()
    .map(|&n| u128::from(n))
    .collect();
    for a in [
        &c.requests,
        &c.indications,
        &c.tx_prio_pause,
        &c.tx_prio_xon,
        &c.rx_prio_pause,
        &c.rx_prio_xon,
        &c.rx_prio_pause_transition,
    ] {
        v.extend(a.iter().map(|&n| u128::from(n)));
    }
    for a in [&c.tx_prio_pause_duration, &c.rx_prio_pause_duration] {
        v.extend(a.iter().map(|d| d.as_ps()));
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Reconfiguring to the configuration in force, at any point of a random run, leaves every
    /// answer identical to an engine that was never reconfigured.
    #[test]
    fn reconfiguring_to_the_same_configuration_is_observably_a_no_op(
        cfg in config(),
        ops in prop::collection::vec(op(1), 1..120),
    ) {
        let cfg = valid(cfg);
        let mut a = FlowControl::new(cfg).unwrap();
        let mut twin = a.clone();
        let (mut ta, mut tt) = (Instant::ZERO, Instant::ZERO);
        for op in &ops {
            if let Op::Reconfigure { dt, .. } = *op {
                // the twin's clock is not advanced, so neither is the reconfigured one's
                a.reconfigure(ta + Duration::from_ns(dt.into()), *a.config()).unwrap();
                continue;
            }
            let ra = apply(&mut a, &mut ta, op);
            let rt = apply(&mut twin, &mut tt, op);
            prop_assert_eq!(ra, rt, "answers to {:?}", op);
            prop_assert_eq!(observe(&a), observe(&twin), "after {:?}", op);
        }
        prop_assert_eq!(observe(&a), observe(&twin));
    }

    /// No counter ever decreases across a reconfigure to any configuration (refused ones
    /// included), and within one mode no running pause or request total shrinks either.
    #[test]
    fn counters_never_decrease_across_any_reconfigure(
        cfgs in prop::collection::vec(config(), 2..6),
        ops in prop::collection::vec(op(6), 1..150),
    ) {
        let mut fc = FlowControl::new(valid(cfgs[0])).unwrap();
        let mut t = Instant::ZERO;
        for op in &ops {
            let Op::Reconfigure { dt, cfg } = *op else {
                apply(&mut fc, &mut t, op);
                continue;
            };
            t += Duration::from_ns(dt.into());
            let new = cfgs[cfg % cfgs.len()];
            let before = fc.clone();
            let b = flat(before.counters());
            if let Err(e) = fc.reconfigure(t, new) {
                prop_assert_eq!(Err(e), new.validate());
                prop_assert_eq!(format!("{fc:?}"), format!("{before:?}"), "refused: nothing changes");
                continue;
            }
            let a = flat(fc.counters());
            for (i, (x, y)) in b.iter().zip(&a).enumerate() {
                prop_assert!(y >= x, "counter #{} went from {} to {} ({:?} -> {:?})", i, x, y, before.config(), new);
            }
            if before.config().mode == new.mode {
                let now = fc.now();
                for p in 0..8u8 {
                    prop_assert!(fc.rx_pause_duration(now, p) >= before.rx_pause_duration(now, p), "rx total of {}", p);
                    prop_assert!(fc.tx_pause_duration(now, p) >= before.tx_pause_duration(now, p), "tx total of {}", p);
                }
            }
        }
    }

    /// A pause running (or about to take effect) on a PFC priority that stays enabled blocks
    /// that priority exactly as before, up to the same end, whatever else changes (other
    /// enabled priorities, registers, reaction delay); the others are free at once.
    #[test]
    fn a_pause_on_a_still_enabled_priority_blocks_until_its_end(
        rate in prop::sample::select(vec![Rate::from_gbps(10), Rate::from_gbps(100)]),
        old_mask in 1u8..=255,
        new_mask in 0u8..=255,
        new_regs in config(),
        pauses in prop::collection::vec((0u32..2000, any::<u8>(), 0u16..3000), 1..10),
        change_dt in 0u32..20_000,
        reaction in 0u32..100,
    ) {
        let mut old = pfc(rate, old_mask);
        old.reaction_delay = rate.quanta_time(reaction.into());
        let mut fc = FlowControl::new(old).unwrap();
        let mut t = Instant::ZERO;
        for &(dt, mask, q) in &pauses {
            t += Duration::from_ns(dt.into());
            fc.handle_control_frame(t, &xoff(mask, q));
        }
        let change = t + Duration::from_ns(change_dt.into());
        let mut new = valid(new_regs);
        new.mode = Mode::Pfc;
        new.rate = rate;
        for (p, pc) in new.priorities.iter_mut().enumerate() {
            pc.enabled = new_mask & (1 << p) != 0;
        }
        let twin = fc.clone();
        fc.reconfigure(change, new).unwrap();
        let kept = old_mask & new_mask;
        for p in 0..8u8 {
            let until = twin.pause_until(change, p);
            if kept & (1 << p) != 0 {
                prop_assert_eq!(fc.pause_until(change, p), until, "priority {} keeps its end", p);
                let end = until.unwrap_or(change);
                // sample the span: start, just before its end, its end, and points between
                let span = end.saturating_duration_since(change).as_ps();
                for k in [0u128, 1, 2, 3] {
                    let s = change + Duration::from_ps(span * k / 4);
                    prop_assert_eq!(fc.may_transmit(s, p), twin.may_transmit(s, p), "priority {} at {:?}", p, s);
                }
                if span > 0 {
                    let last = change + Duration::from_ps(span - 1);
                    prop_assert_eq!(fc.may_transmit(last, p), twin.may_transmit(last, p));
                    if !twin.may_transmit(change, p) {
                        prop_assert!(!fc.may_transmit(last, p), "priority {} blocked until its end", p);
                        let mut probe = fc.clone();
                        prop_assert_eq!(probe.on_tx_start(change, 64, p), Err(TxError::Paused { priority: p }));
                    }
                }
                prop_assert!(fc.may_transmit(end, p));
            } else {
                prop_assert!(fc.may_transmit(change, p), "priority {} not PFC any more", p);
                prop_assert_eq!(fc.pause_until(change, p), None);
            }
        }
    }
}
