//! The HPCC ns-3 simulator's PFC signalling (`Signalling::Ns3`): one PAUSE frame per rise of
//! a request and one RESUME per fall, each for its priority alone and in the order they
//! happened, nothing refreshed; a received PAUSE holds its priority until a RESUME, with no
//! timer (corpus MODEL.md §5, the fork's `SwitchNode::CheckAndSendPfc`/`CheckAndSendResume`
//! and `QbbNetDevice::Receive`).

use lossless_proto::flow_control::{
    ControlFrame, FlowControl, FlowControlConfig, Framing, ReceivedControl, Signalling,
};
use lossless_proto::units::{Duration, Instant, Rate};

const ME: [u8; 6] = [0x02, 0, 0, 0, 0, 0x21];

fn ns3(enabled: u8) -> FlowControl {
    let mut c = FlowControlConfig::pfc(Rate::from_gbps(100), ME, enabled);
    c.framing = Framing::Ns3;
    c.signalling = Signalling::Ns3;
    c.reaction_delay = Duration::ZERO;
    FlowControl::new(c).unwrap()
}

fn pfc(p: u8, quanta: u16) -> ReceivedControl {
    let mut time = [0u16; 8];
    time[p as usize] = quanta;
    ReceivedControl::multicast(ControlFrame::Pfc {
        enable_vector: 1 << p,
        time,
    })
}

/// Every control frame the engine sends from `t` on, as (priority, pause?) in order.
fn drain(fc: &mut FlowControl, mut t: Instant) -> Vec<(u8, bool)> {
    let mut out = Vec::new();
    while let Some(tx) = fc.poll_transmit(t) {
        let ControlFrame::Pfc { enable_vector, time } = tx.frame else {
            panic!("a PFC port sends PFC frames");
        };
        assert_eq!(enable_vector.count_ones(), 1, "one priority per frame");
        let p = enable_vector.trailing_zeros() as u8;
        out.push((p, time[p as usize] > 0));
        t = tx.free_at;
    }
    out
}

#[test]
fn a_pause_and_its_resume_raised_while_the_wire_is_busy_both_go_out_in_order() {
    let mut fc = ns3(1 << 3);
    let t0 = Instant::from_ps(1_000_000);
    // a data frame holds the wire for 83 ns; the request rises and falls meanwhile
    let s = fc.on_tx_start(t0, 1048, 5).unwrap();
    fc.set_request(t0 + Duration::from_ns(10), 3, true).unwrap();
    fc.set_request(t0 + Duration::from_ns(20), 3, false).unwrap();
    assert!(
        fc.poll_transmit(t0 + Duration::from_ns(30)).is_none(),
        "wire busy"
    );
    assert_eq!(drain(&mut fc, s.free_at), [(3, true), (3, false)]);
    let c = fc.counters();
    assert_eq!((c.tx_prio_pause[3], c.tx_prio_xon[3]), (1, 1));
}

#[test]
fn edges_of_several_priorities_keep_their_order_one_frame_each() {
    let mut fc = ns3(0b0011_1000);
    let t0 = Instant::from_ps(1_000_000);
    let s = fc.on_tx_start(t0, 1048, 0).unwrap();
    fc.set_request(t0, 4, true).unwrap();
    fc.set_request(t0, 3, true).unwrap();
    fc.set_request(t0, 5, true).unwrap();
    fc.set_request(t0, 4, false).unwrap();
    assert_eq!(
        drain(&mut fc, s.free_at),
        [(4, true), (3, true), (5, true), (4, false)]
    );
}

#[test]
fn a_raised_request_is_never_refreshed() {
    let mut fc = ns3(1 << 3);
    let t0 = Instant::from_ps(1_000_000);
    fc.set_request(t0, 3, true).unwrap();
    assert_eq!(drain(&mut fc, t0), [(3, true)]);
    // no refresh deadline, however long the request stays raised
    assert_eq!(fc.poll_timeout(), None);
    let much_later = t0 + Duration::from_ms(50);
    fc.handle_timeout(much_later);
    assert!(fc.poll_transmit(much_later).is_none());
    fc.set_request(much_later, 3, false).unwrap();
    assert_eq!(drain(&mut fc, much_later), [(3, false)]);
}

#[test]
fn a_received_pause_holds_until_a_resume_whatever_its_time() {
    let mut fc = ns3(1 << 3);
    let t0 = Instant::from_ps(1_000_000);
    // the fork's PAUSE carries 5 (PAUSE_TIME); no timer runs from it
    fc.handle_control_frame(t0, &pfc(3, 5));
    assert!(!fc.may_transmit(t0, 3), "in effect at once: no reaction delay");
    assert_eq!(fc.poll_timeout(), None, "no expiry to wake up for");
    let later = t0 + Duration::from_ms(10);
    fc.handle_timeout(later);
    assert!(!fc.may_transmit(later, 3));
    assert!(fc.may_transmit(later, 4), "other priorities run");
    fc.handle_control_frame(later, &pfc(3, 0));
    assert!(fc.may_transmit(later, 3));
    assert_eq!(fc.rx_pause_duration(later, 3), Duration::from_ms(10));
}

#[test]
fn ieee_signalling_is_unchanged_a_pause_runs_out_by_itself() {
    let mut c = FlowControlConfig::pfc(Rate::from_gbps(100), ME, 1 << 3);
    c.reaction_delay = Duration::ZERO;
    let mut fc = FlowControl::new(c).unwrap();
    let t0 = Instant::from_ps(1_000_000);
    fc.handle_control_frame(t0, &pfc(3, 5));
    // 5 quanta of 512 bit times at 100 Gb/s = 25.6 ns
    assert!(!fc.may_transmit(t0 + Duration::from_ps(25_599), 3));
    assert!(fc.may_transmit(t0 + Duration::from_ps(25_600), 3));
}

#[test]
fn many_edges_while_the_wire_is_busy_keep_the_final_state() {
    // more toggles than the engine queues: opposite edges of the newest cancel, so the peer
    // still ends in the requester's state and sees pauses and resumes alternate
    let mut fc = ns3(1 << 3);
    let t0 = Instant::from_ps(1_000_000);
    let s = fc.on_tx_start(t0, 9000, 0).unwrap();
    for i in 0..41u128 {
        fc.set_request(t0 + Duration::from_ps(i), 3, i % 2 == 0).unwrap();
    }
    let sent = drain(&mut fc, s.free_at);
    assert!(sent.len() <= 16, "bounded: {} frames", sent.len());
    assert_eq!(sent.last(), Some(&(3, true)), "41 edges end raised");
    for w in sent.windows(2) {
        assert_ne!(w[0].1, w[1].1, "pause and resume alternate: {sent:?}");
    }
}
