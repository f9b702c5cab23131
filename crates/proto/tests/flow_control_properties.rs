//! Property tests: two engines back to back under random requests and random data traffic
//! (frames of 64..9216 bytes on random priorities), at several rates, link delays, reaction
//! delays and register settings. Each run's log is checked against the rules, using only the
//! frames on the wire (an oracle independent of the engine's internals):
//! - no frame is ever interrupted, and control frames start only at frame boundaries;
//! - a paused priority never starts a data frame at or after `reaction delay` past the pause's
//!   arrival while that pause (the newest for that priority) runs;
//! - a priority that is certainly not paused is never held back (in particular not by another
//!   priority's pause);
//! - a port sends only its own mode's frames (PAUSE or PFC, never both);
//! - a raised request is answered (XOFF) within one maximum frame time and refreshed at most
//!   one maximum frame time after each interval end; an XON only follows an XOFF and a release
//!   before the end of that XOFF's interval (case 1).

mod flow_control_support;

use flow_control_support::{BackToBack, Script, What};
use lossless_proto::flow_control::{ControlFrame, FlowControlConfig, Mode, RxOutcome};
use lossless_proto::units::{Duration, Instant, Rate};
use proptest::prelude::*;

const MAX_FRAME: u64 = 9216;

#[derive(Clone, Debug)]
struct Case {
    pfc: bool,
    enabled: u8,
    rate: Rate,
    delay_ps: u128,
    reaction: Option<u32>,
    regs: Vec<(u16, u32, bool, bool)>,
    requests: Vec<(u32, usize, u8, bool)>,
    data: Vec<(u32, usize, u8, u64)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        1u8..=255,
        prop::sample::select(vec![
            Rate::from_gbps(1),
            Rate::from_gbps(10),
            Rate::from_gbps(25),
            Rate::from_gbps(100),
            Rate::from_gbps(400),
        ]),
        0u128..3_000_000,
        prop::option::of(0u32..600),
        prop::collection::vec(
            (1u16..3000, 1u32..3000, any::<bool>(), prop::bool::weighted(0.2)),
            8,
        ),
        prop::collection::vec((0u32..1000, 0usize..2, 0u8..8, any::<bool>()), 0..30),
        prop::collection::vec((0u32..1000, 0usize..2, 0u8..8, 64u64..=MAX_FRAME), 0..120),
    )
        .prop_map(
            |(pfc, enabled, rate, delay_ps, reaction, regs, requests, data)| Case {
                pfc,
                enabled,
                rate,
                delay_ps,
                reaction,
                regs,
                requests,
                data,
            },
        )
}

fn configs(c: &Case) -> [FlowControlConfig; 2] {
    let mk = |i: u8| {
        let mac = [2, 0, 0, 0, 0, i];
        let mut cfg = if c.pfc {
            FlowControlConfig::pfc(c.rate, mac, c.enabled)
        } else {
            FlowControlConfig::pause(c.rate, mac)
        };
        if let Some(q) = c.reaction {
            cfg.reaction_delay = c.rate.quanta_time(q.into());
        }
        for (pc, &(q, r, xon, hold)) in cfg.priorities.iter_mut().zip(&c.regs) {
            pc.pause_quanta = q;
            pc.refresh_quanta = r;
            pc.xon_on_release = xon;
            pc.hold_own_data = hold;
        }
        cfg
    };
    [mk(0), mk(1)]
}

/// The register set (slot) a priority maps to, and the enabled priority a request maps to.
fn slot(c: &Case, p: u8) -> usize {
    if c.pfc { p as usize } else { 0 }
}
fn enabled_priority(c: &Case, p: u8) -> u8 {
    if !c.pfc {
        return 0;
    }
    let en: Vec<u8> = (0..8).filter(|b| c.enabled & (1 << b) != 0).collect();
    en[p as usize % en.len()]
}

/// Slot pause values of an obeyed control frame: (slot, quanta).
fn obeyed_slots(frame: ControlFrame, outcome: RxOutcome) -> Vec<(usize, u16)> {
    let RxOutcome::Obeyed { priorities } = outcome else {
        return vec![];
    };
    match frame {
        ControlFrame::Pause { quanta } => vec![(0, quanta)],
        ControlFrame::Pfc { time, .. } => (0..8)
            .filter(|p| priorities & (1 << p) != 0)
            .map(|p| (p, time[p]))
            .collect(),
    }
}

fn run(c: &Case) -> Result<(), TestCaseError> {
    let cfgs = configs(c);
    let unit = c.rate.wire_time(MAX_FRAME).as_ps() / 4;
    let mut script = Vec::new();
    for &(at, port, p, asserted) in &c.requests {
        let p = enabled_priority(c, p);
        script.push((
            Instant::from_ps(at as u128 * unit),
            Script::Request { port, p, asserted },
        ));
    }
    for &(at, port, p, bytes) in &c.data {
        script.push((
            Instant::from_ps(at as u128 * unit),
            Script::Enqueue { port, p, bytes },
        ));
    }
    let mut b = BackToBack::new(cfgs, Duration::from_ps(c.delay_ps), script);
    let end = Instant::from_ps(3000 * unit);
    b.run_until(end);

    let rate = c.rate;
    let max_frame = rate.wire_time(MAX_FRAME);
    let max_last_bit = rate.time_for_bytes(MAX_FRAME + 8);
    for (port, cfg) in cfgs.iter().enumerate() {
        let reaction = cfg.reaction_delay;
        // 1. frames never overlap: each start is at or after the previous frame's free_at
        let mut free = Instant::ZERO;
        // receptions (obeyed) per slot: (r, quanta)
        let mut rx: [Vec<(Instant, u16)>; 8] = Default::default();
        for r in b.port_log(port) {
            match r.what {
                What::ControlStart(tx) => {
                    prop_assert!(
                        r.t >= free,
                        "port {port}: control frame at {} cuts a frame ending {free}",
                        r.t
                    );
                    free = tx.free_at;
                    let pfc_frame = matches!(tx.frame, ControlFrame::Pfc { .. });
                    prop_assert_eq!(pfc_frame, c.pfc, "port sent the other mode's frame");
                }
                What::DataStart { p, free_at, .. } => {
                    prop_assert!(
                        r.t >= free,
                        "port {port}: data at {} cuts a frame ending {free}",
                        r.t
                    );
                    free = free_at;
                    // 2. a paused priority never starts data after the reaction delay
                    let s = slot(c, p);
                    if cfg.active_mask() & (1 << s) != 0
                        && let Some(&(ra, q)) = rx[s].last()
                    {
                        let until = ra + rate.quanta_time(q.into());
                        prop_assert!(
                            !(q > 0 && r.t >= ra + reaction && r.t < until),
                            "port {port}: priority {p} started at {} though paused by {q} quanta received at {ra} (reaction {reaction})",
                            r.t
                        );
                    }
                }
                What::ControlReceived { frame, outcome } => {
                    for (s, q) in obeyed_slots(frame, outcome) {
                        rx[s].push((r.t, q));
                    }
                }
                What::Idle { queued, held } => {
                    // 3. certainly-free priorities are never held back
                    if held || r.t < free {
                        continue;
                    }
                    for p in (0..8u8).filter(|p| queued & (1 << p) != 0) {
                        let s = slot(c, p);
                        let certainly_free = match rx[s].last() {
                            None => true,
                            Some(&(_, 0)) => true,
                            Some(&(ra, q)) => r.t >= ra + max_last_bit + rate.quanta_time(q.into()),
                        };
                        prop_assert!(
                            !certainly_free,
                            "port {port}: priority {p} held back at {} though not paused",
                            r.t
                        );
                    }
                }
                _ => {}
            }
        }
        // 4. requests are answered and refreshed in time; XON only in case 1
        for s in 0..8usize {
            if cfg.active_mask() & (1 << s) == 0 {
                continue;
            }
            let refresh = rate.quanta_time(cfg.priorities[s].refresh_quanta.into());
            let mut raised_at: Option<Instant> = None;
            let mut last_xoff: Option<Instant> = None;
            let mut released_in_case_1 = false;
            let mut due_by: Option<Instant> = None;
            for r in b.port_log(port) {
                match r.what {
                    What::Request { p, asserted } if slot(c, p) == s => {
                        if asserted && raised_at.is_none() {
                            raised_at = Some(r.t);
                            due_by = Some(r.t + max_frame);
                            released_in_case_1 = false;
                        } else if !asserted && raised_at.is_some() {
                            raised_at = None;
                            due_by = None;
                            released_in_case_1 = last_xoff.is_some_and(|x| r.t < x + refresh);
                        }
                    }
                    What::ControlStart(tx) => {
                        let q = match tx.frame {
                            ControlFrame::Pause { quanta } => Some(quanta),
                            ControlFrame::Pfc { enable_vector, time } => {
                                (enable_vector & (1 << s) != 0).then_some(time[s])
                            }
                        };
                        match q {
                            Some(0) => {
                                prop_assert!(
                                    last_xoff.is_some() && released_in_case_1 && raised_at.is_none(),
                                    "port {port} slot {s}: XON at {} without a case-1 release after an XOFF",
                                    r.t
                                );
                                last_xoff = None;
                                released_in_case_1 = false;
                            }
                            Some(_) => {
                                prop_assert!(
                                    raised_at.is_some(),
                                    "port {port} slot {s}: XOFF at {} with no request",
                                    r.t
                                );
                                last_xoff = Some(r.t);
                                due_by = Some(r.t + refresh + max_frame);
                            }
                            None => {}
                        }
                    }
                    _ => {}
                }
                if let Some(due) = due_by {
                    prop_assert!(
                        r.t <= due || raised_at.is_none(),
                        "port {port} slot {s}: XOFF due by {due} not sent (log at {})",
                        r.t
                    );
                }
            }
            if let (Some(_), Some(due)) = (raised_at, due_by) {
                prop_assert!(due >= end, "port {port} slot {s}: XOFF due by {due} never sent");
            }
        }
        // engine-side sanity: configured mode is what we asked for
        prop_assert_eq!(cfg.mode == Mode::Pfc, c.pfc);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn flow_control_rules_hold_under_random_requests_and_traffic(c in case()) {
        run(&c)?;
    }
}

/// Case 1 / case 2 on a grid: port 0 (idle wire, so its XOFFs go out exactly at the raise and
/// at each interval end) releases `delta` ps around the end of its k-th interval.
fn release_around_interval_end(
    pfc: bool,
    rate: Rate,
    refresh: u32,
    k: u32,
    delta: i8,
    xon: bool,
    peer_data: Vec<u64>,
) -> Result<(), TestCaseError> {
    let [mut a, b_cfg] = [0u8, 1].map(|i| {
        let mac = [2, 0, 0, 0, 0, i];
        if pfc {
            FlowControlConfig::pfc(rate, mac, 0b0100_0000)
        } else {
            FlowControlConfig::pause(rate, mac)
        }
    });
    let s = if pfc { 6 } else { 0 };
    a.priorities[s].refresh_quanta = refresh;
    a.priorities[s].pause_quanta = 0xFFFF;
    a.priorities[s].xon_on_release = xon;
    let t0 = Instant::from_ps(1_000_000);
    let interval = rate.quanta_time(refresh.into());
    let end_k = t0 + interval.saturating_mul(k.into());
    let release = Instant::from_ps((end_k.as_ps() as i128 + delta as i128) as u128);
    let mut script = vec![
        (
            t0,
            Script::Request {
                port: 0,
                p: s as u8,
                asserted: true,
            },
        ),
        (
            release,
            Script::Request {
                port: 0,
                p: s as u8,
                asserted: false,
            },
        ),
    ];
    for bytes in peer_data {
        script.push((
            Instant::ZERO,
            Script::Enqueue {
                port: 1,
                p: s as u8,
                bytes,
            },
        ));
    }
    let mut b = BackToBack::new([a, b_cfg], Duration::from_ns(100), script);
    b.run_until(t0 + rate.quanta_time(0x1_0000) + interval.saturating_mul(8));
    let sent: Vec<(Instant, u16)> = b
        .port_log(0)
        .filter_map(|r| match r.what {
            What::ControlStart(tx) => Some((
                r.t,
                match tx.frame {
                    ControlFrame::Pause { quanta } => quanta,
                    ControlFrame::Pfc { time, .. } => time[s],
                },
            )),
            _ => None,
        })
        .collect();
    // XOFFs at t0 + j·interval for every interval end reached before the release
    let xoffs: Vec<Instant> = sent.iter().filter(|(_, q)| *q != 0).map(|(t, _)| *t).collect();
    let expected_xoffs: Vec<Instant> = (0..=k)
        .map(|j| t0 + interval.saturating_mul(j.into()))
        .filter(|t| *t < release)
        .collect();
    prop_assert_eq!(&xoffs, &expected_xoffs);
    let xons: Vec<Instant> = sent.iter().filter(|(_, q)| *q == 0).map(|(t, _)| *t).collect();
    if delta != 0 && xon {
        // at the release, or when the XOFF still on the wire has gone
        let xon_at = release.max(*xoffs.last().expect("an XOFF went out") + rate.wire_time(64));
        prop_assert_eq!(xons, vec![xon_at], "case 1: XON at the release");
        let arrival = xon_at + rate.time_for_bytes(72) + Duration::from_ns(100);
        let fc_events = |may: bool| {
            b.port_log(1)
                .filter(
                    move |r| matches!(r.what, What::MayTransmit { p, may: m } if p as usize == s && m == may),
                )
                .map(|r| r.t)
                .collect::<Vec<_>>()
        };
        let paused = fc_events(false);
        prop_assert!(paused.iter().all(|t| *t < arrival), "no pause after the XON");
        if !paused.is_empty() {
            // the pause took effect (after the reaction delay): it ends at the XON's arrival
            prop_assert_eq!(
                fc_events(true),
                vec![arrival],
                "peer resumes at the XON's arrival"
            );
        }
    } else {
        prop_assert!(xons.is_empty(), "case 2 (delta 0) or XON off: nothing at release");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn xon_follows_a_release_before_the_interval_end_and_never_one_exactly_at_it(
        pfc in any::<bool>(),
        rate in prop::sample::select(vec![Rate::from_gbps(10), Rate::from_gbps(100), Rate::from_gbps(800)]),
        refresh in 2u32..5000,
        k in 1u32..5,
        delta in -3i8..=3,
        xon in prop::bool::weighted(0.8),
        peer_data in prop::collection::vec(64u64..=MAX_FRAME, 0..20),
    ) {
        release_around_interval_end(pfc, rate, refresh, k, delta, xon, peer_data)?;
    }
}
