//! Receive side: which MAC Control frames are obeyed, which are only counted, and how pause
//! values replace each other.

use lossless_proto::flow_control::{
    ControlFrame, FlowControl, FlowControlConfig, MAC_CONTROL_MULTICAST, ReceivedBody, ReceivedControl,
    Refusal, RxOutcome,
};
use lossless_proto::units::{Duration, Instant, Rate};

const ME: [u8; 6] = [0x02, 0, 0, 0, 0, 0x20];
const RATE: Rate = Rate::from_gbps(100);
/// One quantum at 100G.
const Q: u128 = 5_120;

fn pfc_engine(enabled: u8) -> FlowControl {
    let mut c = FlowControlConfig::pfc(RATE, ME, enabled);
    c.reaction_delay = Duration::ZERO;
    FlowControl::new(c).unwrap()
}

fn pause_engine() -> FlowControl {
    let mut c = FlowControlConfig::pause(RATE, ME);
    c.reaction_delay = Duration::ZERO;
    FlowControl::new(c).unwrap()
}

fn t(ps: u128) -> Instant {
    Instant::from_ps(ps)
}

fn pfc(vector: u8, time: [u16; 8]) -> ReceivedControl {
    ReceivedControl::multicast(ControlFrame::Pfc {
        enable_vector: vector,
        time,
    })
}

fn pause(q: u16) -> ReceivedControl {
    ReceivedControl::multicast(ControlFrame::Pause { quanta: q })
}

#[test]
fn only_the_control_multicast_and_own_unicast_are_obeyed() {
    let mut fc = pause_engine();
    let mut other = pause(100);
    other.dst = [0x01, 0x80, 0xC2, 0, 0, 0x0E];
    assert_eq!(
        fc.handle_control_frame(t(0), &other),
        RxOutcome::Refused(Refusal::WrongDestination)
    );
    other.dst = [0x02, 0, 0, 0, 0, 0x21];
    assert_eq!(
        fc.handle_control_frame(t(0), &other),
        RxOutcome::Refused(Refusal::WrongDestination)
    );
    assert!(fc.may_transmit(t(0), 0));
    let c = fc.counters();
    assert_eq!(c.rx_wrong_destination, 2);
    assert_eq!(c.mac_control_frames_received, 0);
    assert_eq!(c.pause_mac_ctrl_frames_received, 0);

    let mut own = pause(100);
    own.dst = ME;
    assert_eq!(
        fc.handle_control_frame(t(10), &own),
        RxOutcome::Obeyed { priorities: 1 }
    );
    assert!(!fc.may_transmit(t(10), 0));
    let mut multicast = pause(0);
    multicast.dst = MAC_CONTROL_MULTICAST;
    fc.handle_control_frame(t(20), &multicast);
    assert!(fc.may_transmit(t(20), 0));
    assert_eq!(fc.counters().mac_control_frames_received, 2);
    assert_eq!(fc.counters().pause_mac_ctrl_frames_received, 2);
}

#[test]
fn control_frames_of_any_length_but_64_are_counted_not_obeyed() {
    let mut fc = pause_engine();
    for len in [0u32, 60, 63, 65, 68, 1518] {
        let mut f = pause(0xFFFF);
        f.frame_len = len;
        assert_eq!(
            fc.handle_control_frame(t(0), &f),
            RxOutcome::Refused(Refusal::WrongLength { found: len })
        );
    }
    assert!(fc.may_transmit(t(0), 0));
    assert_eq!(fc.counters().rx_wrong_length, 6);
    assert_eq!(fc.counters().mac_control_frames_received, 0);
}

#[test]
fn unknown_opcodes_are_counted_as_unsupported() {
    let mut fc = pfc_engine(0xFF);
    for opcode in [0x0000u16, 0x0002, 0x0003, 0x0100, 0xFFFF] {
        let f = ReceivedControl {
            dst: MAC_CONTROL_MULTICAST,
            frame_len: 64,
            body: ReceivedBody::Unknown { opcode },
        };
        assert_eq!(
            fc.handle_control_frame(t(0), &f),
            RxOutcome::Refused(Refusal::UnsupportedOpcode { opcode })
        );
    }
    let c = fc.counters();
    assert_eq!(c.unsupported_opcodes_received, 5);
    assert_eq!(c.mac_control_frames_received, 5);
    assert_eq!(fc.paused_mask(t(0)), 0);
}

#[test]
fn a_pfc_port_counts_but_does_not_obey_pause_and_a_pause_port_ignores_pfc() {
    let mut fc = pfc_engine(0xFF);
    assert_eq!(
        fc.handle_control_frame(t(0), &pause(0xFFFF)),
        RxOutcome::Refused(Refusal::Mode)
    );
    assert_eq!(fc.paused_mask(t(1)), 0);
    assert_eq!(fc.counters().pause_mac_ctrl_frames_received, 1);
    assert_eq!(fc.counters().rx_ignored_mode, 1);

    let mut fc = pause_engine();
    assert_eq!(
        fc.handle_control_frame(t(0), &pfc(0xFF, [0xFFFF; 8])),
        RxOutcome::Refused(Refusal::Mode)
    );
    assert!(fc.may_transmit(t(1), 3));
    assert_eq!(fc.counters().pfc_frames_received, 1);
    assert_eq!(fc.counters().indications, [1; 8]);
    assert_eq!(fc.counters().rx_ignored_mode, 1);

    let mut fc = FlowControl::new(FlowControlConfig::off(RATE, ME)).unwrap();
    assert_eq!(
        fc.handle_control_frame(t(0), &pause(0xFFFF)),
        RxOutcome::Refused(Refusal::Mode)
    );
    assert!(fc.may_transmit(t(1), 0));
}

#[test]
fn pfc_reloads_only_priorities_whose_enable_bit_is_set() {
    let mut fc = pfc_engine(0xFF);
    fc.handle_control_frame(t(0), &pfc(0b0000_0110, [9, 100, 200, 9, 9, 9, 9, 9]));
    assert_eq!(fc.paused_mask(t(0)), 0b0000_0110);
    assert_eq!(fc.pause_until(t(0), 1), Some(t(100 * Q)));
    assert_eq!(fc.pause_until(t(0), 2), Some(t(200 * Q)));
    // a second frame for priority 2 only: priority 1 keeps running untouched
    fc.handle_control_frame(t(50 * Q), &pfc(0b0000_0100, [0, 7, 300, 0, 0, 0, 0, 0]));
    assert_eq!(fc.pause_until(t(50 * Q), 1), Some(t(100 * Q)));
    assert_eq!(fc.pause_until(t(50 * Q), 2), Some(t(350 * Q)));
    assert_eq!(fc.counters().indications, [0, 1, 2, 0, 0, 0, 0, 0]);
    assert_eq!(fc.counters().rx_prio_pause, [0, 1, 2, 0, 0, 0, 0, 0]);
}

#[test]
fn pfc_for_a_priority_not_enabled_on_the_port_is_not_obeyed() {
    let mut fc = pfc_engine(0b0000_1000);
    assert_eq!(
        fc.handle_control_frame(t(0), &pfc(0b0001_1000, [0, 0, 0, 50, 50, 0, 0, 0])),
        RxOutcome::Obeyed {
            priorities: 0b0000_1000
        }
    );
    assert_eq!(fc.paused_mask(t(0)), 0b0000_1000);
    assert!(fc.may_transmit(t(0), 4));
}

#[test]
fn the_newest_pause_value_replaces_the_running_one_even_when_shorter() {
    let mut fc = pause_engine();
    fc.handle_control_frame(t(0), &pause(1000));
    assert_eq!(fc.pause_until(t(0), 0), Some(t(1000 * Q)));
    fc.handle_control_frame(t(10 * Q), &pause(5));
    assert_eq!(fc.pause_until(t(10 * Q), 0), Some(t(15 * Q)));
    assert!(fc.may_transmit(t(15 * Q), 0));
    // one continuous pause: a single XOFF→XON transition of 15 quanta
    fc.handle_timeout(t(15 * Q));
    assert_eq!(fc.counters().rx_prio_pause_transition[0], 1);
    assert_eq!(fc.counters().rx_prio_pause_duration[0], Duration::from_ps(15 * Q));
}

#[test]
fn time_zero_releases_at_once() {
    let mut fc = pfc_engine(0xFF);
    fc.handle_control_frame(t(0), &pfc(0xFF, [0xFFFF; 8]));
    assert_eq!(fc.paused_mask(t(1)), 0xFF);
    fc.handle_control_frame(t(3 * Q), &pfc(0b0010_0000, [0; 8]));
    assert_eq!(fc.paused_mask(t(3 * Q)), 0b1101_1111);
    assert_eq!(fc.counters().rx_prio_xon[5], 1);
    assert_eq!(fc.counters().rx_prio_pause_transition[5], 1);
    assert_eq!(fc.counters().rx_prio_pause_duration[5], Duration::from_ps(3 * Q));
    // running totals include open spans
    assert_eq!(fc.rx_pause_duration(t(4 * Q), 0), Duration::from_ps(4 * Q));
}

#[test]
fn a_pause_arriving_while_the_wire_is_idle_starts_at_reception() {
    let mut fc = pause_engine();
    let slot = fc.on_tx_start(t(0), 64, 0).unwrap();
    let r = slot.free_at;
    fc.handle_control_frame(r, &pause(2));
    assert_eq!(fc.pause_until(r, 0), Some(r + Duration::from_ps(2 * Q)));
}

#[test]
fn a_paused_priority_is_refused_by_on_tx_start() {
    let mut fc = pfc_engine(0xFF);
    fc.handle_control_frame(t(0), &pfc(0b1, [10, 0, 0, 0, 0, 0, 0, 0]));
    assert!(fc.on_tx_start(t(1), 64, 0).is_err());
    assert!(fc.on_tx_start(t(1), 64, 1).is_ok());
    assert!(fc.on_tx_start(t(10 * Q), 64, 0).is_ok());
}
