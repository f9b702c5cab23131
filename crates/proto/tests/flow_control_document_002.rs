//! Document 002 ("What is a PAUSE frame?") steps 1–9, end to end: MAC0 (port 0) raises
//! `fc_rdy`, sends PAUSE at the next frame boundary, refreshes it each interval while holding its
//! own data, and releases it — case 1 (before the interval ends: XON, MAC1 resumes at once)
//! and case 2 (exactly at the end: nothing, MAC1 resumes when the last pause runs out). MAC1
//! (port 1) streams data and obeys. Every time below is exact, in picoseconds.
//!
//! Set-up: 10 Gb/s (a byte is 800 ps, a quantum 51,200 ps), 500 ns of cable each way. MAC0
//! PAUSE registers: 256 quanta, refresh every 128 quanta, XON on release, hold own data. MAC1
//! reaction delay: the 802.3 maximum at 10G, 60 quanta = 3,072,000 ps. MAC1 sends 1518-byte
//! frames back to back (wire time 1,230,400 ps, last bit 1,220,800 ps after the start), MAC0
//! sends 1000-byte frames (wire time 816,000 ps).

mod flow_control_support;

use flow_control_support::{BackToBack, Record, Script, What};
use lossless_proto::flow_control::{ControlFrame, FlowControlConfig, RxOutcome};
use lossless_proto::units::{Duration, Instant, Rate};

const MAC0: usize = 0;
const MAC1: usize = 1;

fn ps(v: u128) -> Instant {
    Instant::from_ps(v)
}

fn scenario(release_at: u128) -> BackToBack {
    let rate = Rate::from_gbps(10);
    let mut mac0 = FlowControlConfig::pause(rate, [0x02, 0, 0, 0, 0, 0]);
    mac0.priorities[0].pause_quanta = 256;
    mac0.priorities[0].refresh_quanta = 128;
    mac0.priorities[0].hold_own_data = true;
    let mac1 = FlowControlConfig::pause(rate, [0x02, 0, 0, 0, 0, 1]);
    assert_eq!(mac1.reaction_delay, Duration::from_ps(3_072_000));
    let mut script = Vec::new();
    for _ in 0..40 {
        script.push((
            ps(0),
            Script::Enqueue {
                port: MAC1,
                p: 0,
                bytes: 1518,
            },
        ));
        script.push((
            ps(0),
            Script::Enqueue {
                port: MAC0,
                p: 0,
                bytes: 1000,
            },
        ));
    }
    // step 3: module A cannot keep up
    script.push((
        ps(2_000_000),
        Script::Request {
            port: MAC0,
            p: 0,
            asserted: true,
        },
    ));
    // step 9: module A has worked off its backlog
    script.push((
        ps(release_at),
        Script::Request {
            port: MAC0,
            p: 0,
            asserted: false,
        },
    ));
    let mut b2b = BackToBack::new([mac0, mac1], Duration::from_ns(500), script);
    b2b.run_until(ps(40_000_000));
    b2b
}

/// Control frames sent by `port`: (start, frame).
fn control_sent(b: &BackToBack, port: usize) -> Vec<(u128, ControlFrame)> {
    b.port_log(port)
        .filter_map(|r| match r.what {
            What::ControlStart(tx) => Some((r.t.as_ps(), tx.frame)),
            _ => None,
        })
        .collect()
}

/// Control frames received by `port`: (end of reception, frame, outcome).
fn control_received(b: &BackToBack, port: usize) -> Vec<(u128, ControlFrame, RxOutcome)> {
    b.port_log(port)
        .filter_map(|r| match r.what {
            What::ControlReceived { frame, outcome } => Some((r.t.as_ps(), frame, outcome)),
            _ => None,
        })
        .collect()
}

/// Changes of MAC1's `fc` (may_transmit of priority 0): (time, may).
fn fc_changes(b: &BackToBack, port: usize) -> Vec<(u128, bool)> {
    b.port_log(port)
        .filter_map(|r| match r.what {
            What::MayTransmit { p: 0, may } => Some((r.t.as_ps(), may)),
            _ => None,
        })
        .collect()
}

/// Data frame starts of `port`.
fn data_starts(b: &BackToBack, port: usize) -> Vec<u128> {
    b.port_log(port)
        .filter(|r: &&Record| matches!(r.what, What::DataStart { .. }))
        .map(|r| r.t.as_ps())
        .collect()
}

const PAUSE256: ControlFrame = ControlFrame::Pause { quanta: 256 };
const XON: ControlFrame = ControlFrame::Pause { quanta: 0 };
const OBEYED: RxOutcome = RxOutcome::Obeyed { priorities: 1 };

/// Steps 1–8, common to both cases.
fn check_steps_1_to_8(b: &BackToBack) {
    // steps 1-2: MAC1 streams to MAC0 from t=0, frames back to back until the pause bites
    let mac1_data = data_starts(b, MAC1);
    assert_eq!(
        &mac1_data[..5],
        &[0, 1_230_400, 2_460_800, 3_691_200, 4_921_600],
        "MAC1 data before the pause (the frames at 3,691,200 and 4,921,600 start inside the \
         reaction delay, which ends at 6,077,600)"
    );
    // step 4: MAC0 was sending its 3rd frame (1,632,000..2,448,000) when fc_rdy rose at 2 µs:
    // the PAUSE waits for that frame's end and then MAC0 sends no data
    let mac0_data = data_starts(b, MAC0);
    assert_eq!(&mac0_data[..3], &[0, 816_000, 1_632_000]);
    // step 5: MAC1 RX gets the PAUSE's last bit at 2,505,600 + 500,000; it is sending the
    // frame started at 2,460,800 whose last bit is at 3,681,600, so the 256-quanta timer runs
    // from there to 16,788,800; data stops from 3,005,600 + 3,072,000 = 6,077,600.
    let fc = fc_changes(b, MAC1);
    assert_eq!(
        fc[0],
        (6_077_600, false),
        "MAC1 fc raised at end of reaction delay"
    );
    assert!(b.ports[MAC1].fc.config().reaction_delay == Duration::from_ps(3_072_000));
}

#[test]
fn case_1_release_before_interval_end_sends_xon_and_peer_resumes_at_once() {
    let b = scenario(20_000_000);
    check_steps_1_to_8(&b);
    // MAC0 TX: PAUSE at the boundary, two refreshes 6,553,600 ps (128 quanta) apart, then XON
    // as soon as fc_rdy falls (the wire is idle: MAC0 holds its data)
    assert_eq!(
        control_sent(&b, MAC0),
        vec![
            (2_448_000, PAUSE256),
            (9_001_600, PAUSE256),
            (15_555_200, PAUSE256),
            (20_000_000, XON),
        ]
    );
    // each arrives 57,600 (72 bytes) + 500,000 ps later
    assert_eq!(
        control_received(&b, MAC1),
        vec![
            (3_005_600, PAUSE256, OBEYED),
            (9_559_200, PAUSE256, OBEYED),
            (16_112_800, PAUSE256, OBEYED),
            (20_557_600, XON, OBEYED),
        ]
    );
    // MAC1's fc: raised once (refreshes replace the running timer without a gap), lowered by XON
    assert_eq!(fc_changes(&b, MAC1), vec![(6_077_600, false), (20_557_600, true)]);
    // step 9 case 1: MAC1 resumes at the XON's reception
    let mac1_data = data_starts(&b, MAC1);
    assert_eq!(mac1_data[5], 20_557_600);
    // MAC0 resumes its own data when the XON has left the wire (20,000,000 + 84 × 800)
    let mac0_data = data_starts(&b, MAC0);
    assert_eq!(mac0_data[3], 20_067_200);
    // counters
    let c0 = b.ports[MAC0].fc.counters();
    assert_eq!(c0.pause_mac_ctrl_frames_transmitted, 4);
    assert_eq!(c0.mac_control_frames_transmitted, 4);
    assert_eq!(c0.tx_prio_pause[0], 3);
    assert_eq!(c0.tx_prio_xon[0], 1);
    assert_eq!(c0.tx_prio_pause_duration[0], Duration::from_ps(18_000_000));
    let c1 = b.ports[MAC1].fc.counters();
    assert_eq!(c1.pause_mac_ctrl_frames_received, 4);
    assert_eq!(c1.rx_prio_pause[0], 3);
    assert_eq!(c1.rx_prio_xon[0], 1);
    assert_eq!(c1.rx_prio_pause_transition[0], 1);
    assert_eq!(
        c1.rx_prio_pause_duration[0],
        Duration::from_ps(20_557_600 - 6_077_600)
    );
}

#[test]
fn case_2_release_exactly_at_interval_end_sends_nothing_and_peer_waits_for_expiry() {
    // the third PAUSE went out at 15,555,200: its interval ends at 22,108,800
    let b = scenario(22_108_800);
    check_steps_1_to_8(&b);
    assert_eq!(
        control_sent(&b, MAC0),
        vec![
            (2_448_000, PAUSE256),
            (9_001_600, PAUSE256),
            (15_555_200, PAUSE256)
        ],
        "no refresh and no XON when fc_rdy falls exactly as the interval ends"
    );
    assert_eq!(control_received(&b, MAC1).len(), 3);
    // the last PAUSE arrived at 16,112,800 while MAC1 was idle: it runs out 256 quanta later,
    // at 16,112,800 + 13,107,200 = 29,220,000, and MAC1 resumes then
    assert_eq!(fc_changes(&b, MAC1), vec![(6_077_600, false), (29_220_000, true)]);
    let mac1_data = data_starts(&b, MAC1);
    assert_eq!(mac1_data[5], 29_220_000);
    // MAC0's own data resumes at the release (its wire is idle)
    assert_eq!(data_starts(&b, MAC0)[3], 22_108_800);
    let c0 = b.ports[MAC0].fc.counters();
    assert_eq!(c0.pause_mac_ctrl_frames_transmitted, 3);
    assert_eq!(c0.tx_prio_xon[0], 0);
    let c1 = b.ports[MAC1].fc.counters();
    assert_eq!(c1.rx_prio_pause_transition[0], 1);
    assert_eq!(
        c1.rx_prio_pause_duration[0],
        Duration::from_ps(29_220_000 - 6_077_600)
    );
}

#[test]
fn release_one_picosecond_before_interval_end_is_still_case_1() {
    let b = scenario(22_108_799);
    let sent = control_sent(&b, MAC0);
    assert_eq!(sent.last(), Some(&(22_108_799, XON)));
    assert_eq!(fc_changes(&b, MAC1)[1], (22_108_799 + 57_600 + 500_000, true));
}
