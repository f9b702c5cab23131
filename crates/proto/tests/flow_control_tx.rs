//! Transmit side: what PAUSE/PFC frames go out, when, and what they carry.

use lossless_proto::flow_control::{
    ConfigError, ControlFrame, Counters, FlowControl, FlowControlConfig, MAC_CONTROL_MULTICAST, RequestError,
    TxError,
};
use lossless_proto::units::{Duration, Instant, Rate};

const ME: [u8; 6] = [0x02, 0, 0, 0, 0, 0x30];
const RATE: Rate = Rate::from_gbps(100);
/// One quantum at 100G.
const Q: u128 = 5_120;
/// Wire time of a 64-byte frame at 100G (84 bytes).
const CTRL: u128 = 6_720;

fn t(ps: u128) -> Instant {
    Instant::from_ps(ps)
}

fn pfc_engine(f: impl FnOnce(&mut FlowControlConfig)) -> FlowControl {
    let mut c = FlowControlConfig::pfc(RATE, ME, 0xFF);
    for pc in &mut c.priorities {
        pc.pause_quanta = 1000;
        pc.refresh_quanta = 500;
    }
    f(&mut c);
    FlowControl::new(c).unwrap()
}

fn pfc_frame(fc: &mut FlowControl, now: Instant) -> Option<(u8, [u16; 8])> {
    fc.poll_transmit(now).map(|tx| match tx.frame {
        ControlFrame::Pfc { enable_vector, time } => (enable_vector, time),
        other => panic!("PFC port sent {other:?}"),
    })
}

#[test]
fn a_rising_request_sends_one_xoff_to_the_control_multicast() {
    let mut fc = pfc_engine(|_| {});
    assert!(fc.poll_transmit(t(0)).is_none());
    fc.set_request(t(100), 3, true).unwrap();
    let tx = fc.poll_transmit(t(100)).unwrap();
    assert_eq!(tx.dst, MAC_CONTROL_MULTICAST);
    assert_eq!(tx.src, ME);
    assert_eq!(tx.start, t(100));
    assert_eq!(tx.last_bit, t(100 + 72 * 80));
    assert_eq!(tx.free_at, t(100 + CTRL));
    assert_eq!(
        tx.frame,
        ControlFrame::Pfc {
            enable_vector: 0b1000,
            time: [0, 0, 0, 1000, 0, 0, 0, 0]
        }
    );
    // nothing more until the refresh interval has run
    assert!(fc.poll_transmit(t(100 + CTRL)).is_none());
    assert_eq!(fc.refresh_at(3), Some(t(100 + 500 * Q)));
    assert_eq!(fc.poll_timeout(), Some(t(100 + 500 * Q)));
    assert!(fc.poll_transmit(t(100 + 500 * Q - 1)).is_none());
    assert!(fc.poll_transmit(t(100 + 500 * Q)).is_some());
}

#[test]
fn a_control_frame_waits_for_the_frame_on_the_wire_and_goes_before_queued_data() {
    let mut fc = pfc_engine(|_| {});
    let slot = fc.on_tx_start(t(0), 9216, 0).unwrap();
    fc.set_request(t(1000), 2, true).unwrap();
    assert!(fc.poll_transmit(t(1000)).is_none(), "never interrupts a frame");
    assert_eq!(fc.poll_timeout(), Some(slot.free_at));
    assert_eq!(
        fc.on_tx_start(slot.free_at - Duration::from_ps(1), 64, 0),
        Err(TxError::WireBusy {
            free_at: slot.free_at
        })
    );
    // at the boundary, data is refused while the control frame is due
    assert!(!fc.may_start_data(slot.free_at, 0));
    assert_eq!(fc.on_tx_start(slot.free_at, 64, 0), Err(TxError::ControlDue));
    let tx = fc.poll_transmit(slot.free_at).unwrap();
    assert_eq!(tx.start, slot.free_at);
    assert!(fc.may_start_data(tx.free_at, 0));
}

#[test]
fn a_pfc_frame_carries_new_xoffs_held_refreshes_and_xons_together() {
    let mut fc = pfc_engine(|_| {});
    fc.set_request(t(0), 1, true).unwrap();
    fc.set_request(t(0), 6, true).unwrap();
    assert_eq!(
        pfc_frame(&mut fc, t(0)),
        Some((0b0100_0010, [0, 1000, 0, 0, 0, 0, 1000, 0]))
    );
    // at 100 quanta: 6 released (case 1, XON), 4 newly raised, 1 still held (refreshed too)
    fc.set_request(t(100 * Q), 6, false).unwrap();
    fc.set_request(t(100 * Q), 4, true).unwrap();
    assert_eq!(
        pfc_frame(&mut fc, t(100 * Q)),
        Some((0b0101_0010, [0, 1000, 0, 0, 1000, 0, 0, 0]))
    );
    // the held priority's interval restarted with that frame
    assert_eq!(fc.refresh_at(1), Some(t(600 * Q)));
    let c: &Counters = fc.counters();
    assert_eq!(c.requests, [0, 2, 0, 0, 1, 0, 2, 0]);
    assert_eq!(c.tx_prio_pause, [0, 2, 0, 0, 1, 0, 1, 0]);
    assert_eq!(c.tx_prio_xon, [0, 0, 0, 0, 0, 0, 1, 0]);
    assert_eq!(c.pfc_frames_transmitted, 2);
    assert_eq!(c.mac_control_frames_transmitted, 2);
    assert_eq!(c.pause_mac_ctrl_frames_transmitted, 0);
}

#[test]
fn xon_is_sent_only_after_an_xoff_went_out() {
    let mut fc = pfc_engine(|_| {});
    fc.on_tx_start(t(0), 1500, 0).unwrap();
    fc.set_request(t(10), 5, true).unwrap();
    fc.set_request(t(20), 5, false).unwrap();
    assert!(fc.poll_transmit(t(1_000_000)).is_none());
    assert_eq!(fc.counters().mac_control_frames_transmitted, 0);
}

#[test]
fn without_xon_on_release_a_release_sends_nothing() {
    let mut fc = pfc_engine(|c| c.priorities[2].xon_on_release = false);
    fc.set_request(t(0), 2, true).unwrap();
    assert!(fc.poll_transmit(t(0)).is_some());
    fc.set_request(t(10 * Q), 2, false).unwrap();
    assert!(fc.poll_transmit(t(10 * Q)).is_none());
    assert_eq!(fc.poll_timeout(), None);
}

#[test]
fn release_at_or_after_the_interval_end_sends_nothing_even_if_the_refresh_was_pending() {
    let mut fc = pfc_engine(|_| {});
    fc.set_request(t(0), 0, true).unwrap();
    fc.poll_transmit(t(0)).unwrap();
    // a long frame occupies the wire across the interval end: the refresh cannot go out
    fc.on_tx_start(t(400 * Q), 9216, 7).unwrap();
    assert!(fc.has_control_due(t(500 * Q)));
    fc.set_request(t(500 * Q + 1), 0, false).unwrap();
    assert!(!fc.has_control_due(t(500 * Q + 1)));
    assert!(fc.poll_transmit(t(1000 * Q)).is_none());
}

#[test]
fn a_pause_port_sends_link_pause_and_maps_every_priority_to_one_request() {
    let mut c = FlowControlConfig::pause(RATE, ME);
    c.priorities[0].pause_quanta = 0x1234;
    let mut fc = FlowControl::new(c).unwrap();
    fc.set_request(t(0), 6, true).unwrap();
    assert_eq!(
        fc.poll_transmit(t(0)).unwrap().frame,
        ControlFrame::Pause { quanta: 0x1234 }
    );
    assert_eq!(fc.requested_mask(), 1);
    fc.set_request(t(2 * Q), 0, false).unwrap();
    assert_eq!(
        fc.poll_transmit(t(2 * Q)).unwrap().frame,
        ControlFrame::Pause { quanta: 0 }
    );
    let c = fc.counters();
    assert_eq!(c.pause_mac_ctrl_frames_transmitted, 2);
    assert_eq!(c.tx_prio_pause[0], 1);
    assert_eq!(c.tx_prio_xon[0], 1);
    assert_eq!(c.requests, [0; 8], "ieee_pfc.requests count PFC frames only");
}

#[test]
fn hold_own_data_holds_every_data_frame_while_requested() {
    let mut fc = pfc_engine(|c| c.priorities[3].hold_own_data = true);
    fc.set_request(t(0), 3, true).unwrap();
    fc.poll_transmit(t(0)).unwrap();
    assert!(fc.hold_data(t(CTRL)));
    assert_eq!(fc.on_tx_start(t(CTRL), 64, 1), Err(TxError::Held));
    fc.set_request(t(CTRL), 3, false).unwrap();
    // the XON goes first, then data flows
    assert!(fc.poll_transmit(t(CTRL)).is_some());
    assert!(fc.on_tx_start(t(2 * CTRL), 64, 1).is_ok());
}

#[test]
fn requests_are_refused_when_off_or_not_enabled() {
    let mut off = FlowControl::new(FlowControlConfig::off(RATE, ME)).unwrap();
    assert_eq!(off.set_request(t(0), 0, true), Err(RequestError::Off));
    assert!(off.poll_transmit(t(0)).is_none());
    let mut fc = FlowControl::new(FlowControlConfig::pfc(RATE, ME, 0b1000)).unwrap();
    assert_eq!(
        fc.set_request(t(0), 2, true),
        Err(RequestError::NotEnabled {
            priority: 2,
            enabled: 0b1000
        })
    );
    assert!(fc.set_request(t(0), 8, true).is_err());
    assert!(fc.set_request(t(0), 3, true).is_ok());
}

#[test]
fn unusable_registers_are_refused_at_creation() {
    let mut c = FlowControlConfig::pfc(RATE, ME, 0b1);
    c.priorities[0].pause_quanta = 0;
    assert_eq!(
        FlowControl::new(c).unwrap_err(),
        ConfigError::ZeroPauseQuanta { priority: 0 }
    );
    let mut c = FlowControlConfig::pause(RATE, ME);
    c.priorities[0].refresh_quanta = 0;
    assert_eq!(
        FlowControl::new(c).unwrap_err(),
        ConfigError::ZeroRefresh { priority: 0 }
    );
    // registers of priorities that are not in use are not checked
    let mut c = FlowControlConfig::pfc(RATE, ME, 0b10);
    c.priorities[0].pause_quanta = 0;
    assert!(FlowControl::new(c).is_ok());
    let c = FlowControlConfig::pause(Rate::from_bps(3).unwrap(), ME);
    assert_eq!(
        FlowControl::new(c).unwrap_err(),
        ConfigError::InexactRate { bps: 3 }
    );
}

#[test]
fn requested_time_is_accounted() {
    let mut fc = pfc_engine(|_| {});
    fc.set_request(t(0), 4, true).unwrap();
    assert_eq!(fc.tx_pause_duration(t(7 * Q), 4), Duration::from_ps(7 * Q));
    fc.set_request(t(10 * Q), 4, false).unwrap();
    assert_eq!(fc.counters().tx_prio_pause_duration[4], Duration::from_ps(10 * Q));
}

#[test]
fn counters_serialize_with_the_standard_names() {
    let mut fc = pfc_engine(|_| {});
    fc.set_request(t(0), 4, true).unwrap();
    fc.poll_transmit(t(0)).unwrap();
    let json = serde_json::to_value(fc.counters()).unwrap();
    assert_eq!(json["MACControlFramesTransmitted"], 1);
    assert_eq!(json["PAUSEMACCtrlFramesTransmitted"], 0);
    assert_eq!(json["requests"][4], 1);
    for name in [
        "MACControlFramesReceived",
        "UnsupportedOpcodesReceived",
        "PAUSEMACCtrlFramesReceived",
        "indications",
        "tx_prio_pause",
        "rx_prio_pause",
        "rx_prio_pause_duration",
        "tx_prio_pause_duration",
        "rx_prio_pause_transition",
        "rx_wrong_destination",
        "rx_wrong_length",
    ] {
        assert!(json.get(name).is_some(), "{name} missing in {json}");
    }
    let back: Counters = serde_json::from_value(json).unwrap();
    assert_eq!(&back, fc.counters());
}

#[test]
fn extreme_times_and_lengths_saturate_instead_of_panicking() {
    let mut fc = pfc_engine(|c| c.priorities[0].refresh_quanta = u32::MAX);
    let late = Instant::MAX - Duration::from_ps(10);
    let slot = fc.on_tx_start(late, u64::MAX, 1).unwrap();
    assert_eq!(slot.free_at, Instant::MAX);
    fc.set_request(late, 0, true).unwrap();
    assert!(fc.poll_transmit(Instant::MAX).is_some());
    fc.handle_control_frame(
        Instant::MAX,
        &lossless_proto::flow_control::ReceivedControl::multicast(ControlFrame::Pfc {
            enable_vector: 0xFF,
            time: [0xFFFF; 8],
        }),
    );
    // time going backwards is taken as "no time passed"
    fc.handle_timeout(Instant::ZERO);
    assert_eq!(fc.now(), Instant::MAX);
    let _ = fc.poll_timeout();
    let _ = fc.paused_mask(Instant::ZERO);
}

#[test]
fn sent_frames_round_trip_through_the_wire_codec() {
    use lossless_proto::flow_control::{ReceivedBody, ReceivedControl};
    use lossless_wire::fcs::FcsMode;
    let mut fc = pfc_engine(|_| {});
    fc.set_request(t(0), 2, true).unwrap();
    fc.set_request(t(0), 7, true).unwrap();
    let tx = fc.poll_transmit(t(0)).unwrap();
    let mut buf = [0u8; 64];
    assert_eq!(tx.emit(FcsMode::Present, &mut buf).unwrap(), 64);
    let rx = ReceivedControl::decode(&buf, FcsMode::Present).unwrap().unwrap();
    assert_eq!(rx.dst, MAC_CONTROL_MULTICAST);
    assert_eq!(rx.frame_len, 64);
    assert_eq!(rx.body, ReceivedBody::Known(tx.frame));
    // a corrupted frame fails its FCS: the MAC drops it before MAC Control
    buf[20] ^= 0x01;
    assert_eq!(ReceivedControl::decode(&buf, FcsMode::Present).unwrap(), None);
    // the codec's picture of the frame
    assert_eq!(
        lossless_wire::mac_control::MacControlRepr::from(tx.frame),
        lossless_wire::mac_control::MacControlRepr::Pfc {
            priority_enable_vector: 0b1000_0100,
            time: [0, 0, 1000, 0, 0, 0, 0, 1000],
        }
    );
}
