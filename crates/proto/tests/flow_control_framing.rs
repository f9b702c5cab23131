//! The wire framing option: 802.3 (preamble, SFD, gap, exact picoseconds) by default, and the
//! HPCC ns-3 simulator's (the frame alone, one nanosecond less than its exact time rounded
//! up, 43-byte PFC packets) when a simulator reproduces that reference.

use lossless_proto::flow_control::{
    ControlFrame, FlowControl, FlowControlConfig, Framing, ReceivedControl, ns3_tx_time,
};
use lossless_proto::units::{Duration, Instant, Rate};

const ME: [u8; 6] = [0x02, 0, 0, 0, 0, 0x20];

fn engine(rate: Rate, framing: Framing) -> FlowControl {
    let mut c = FlowControlConfig::pfc(rate, ME, 1 << 3);
    c.framing = framing;
    FlowControl::new(c).unwrap()
}

#[test]
fn ieee_framing_adds_preamble_before_and_the_gap_after_a_data_frame() {
    let mut fc = engine(Rate::from_gbps(100), Framing::Ieee8023);
    let t0 = Instant::from_ps(1_000_000);
    let s = fc.on_tx_start(t0, 1048, 3).unwrap();
    // 80 ps a byte: last bit after 1048 + 8 bytes, wire free after 12 more
    assert_eq!(s.last_bit, t0 + Duration::from_ps(1056 * 80));
    assert_eq!(s.free_at, t0 + Duration::from_ps(1068 * 80));
}

#[test]
fn ns3_framing_times_the_frame_alone_one_ns_below_its_exact_time_rounded_up() {
    // MODEL.md §0 and §9.4: 1048 B at 100 Gb/s take 83 ns (not 83.84), a 60-byte ACK 4 ns
    // (not 4.8), at 400 Gb/s 1048 B take 20 ns (not 20.96); a whole number of ns is one
    // less: 1000 B at 100 Gb/s 79 ns, 1250 B 99 ns, 1050 B at 400 Gb/s 20 ns
    for (gbps, bytes, ns) in [
        (100, 1048, 83),
        (100, 60, 4),
        (400, 1048, 20),
        (100, 1000, 79),
        (100, 1250, 99),
        (400, 1050, 20),
        (400, 60, 1),
    ] {
        let mut fc = engine(Rate::from_gbps(gbps), Framing::Ns3);
        let t0 = Instant::from_ps(5_000_000);
        let s = fc.on_tx_start(t0, bytes, 3).unwrap();
        assert_eq!(s.start, t0);
        assert_eq!(s.last_bit, t0 + Duration::from_ns(ns), "{bytes} B at {gbps}G");
        assert_eq!(s.free_at, s.last_bit, "no gap after the frame");
        // the next frame may start exactly then, not a picosecond before
        assert!(fc.on_tx_start(s.free_at - Duration::from_ps(1), 64, 3).is_err());
        assert!(fc.on_tx_start(s.free_at, 64, 3).is_ok());
    }
}

#[test]
fn ns3_framing_sends_pfc_frames_in_the_time_of_43_bytes() {
    let mut fc = engine(Rate::from_gbps(100), Framing::Ns3);
    let t0 = Instant::from_ps(2_000_000);
    fc.set_request(t0, 3, true).unwrap();
    let tx = fc.poll_transmit(t0).unwrap();
    // 43 × 80 ps = 3.44 ns → 3 ns (MODEL.md §0: "a 43-byte PFC frame 3 ns")
    assert_eq!(tx.last_bit, t0 + Duration::from_ns(3));
    assert_eq!(tx.free_at, tx.last_bit);
    let mut ieee = engine(Rate::from_gbps(100), Framing::Ieee8023);
    ieee.set_request(t0, 3, true).unwrap();
    let tx = ieee.poll_transmit(t0).unwrap();
    assert_eq!(tx.free_at, t0 + Duration::from_ps(84 * 80));
}

#[test]
fn ns3_framing_still_obeys_received_pfc_frames_as_64_byte_mac_control_frames() {
    let mut fc = engine(Rate::from_gbps(100), Framing::Ns3);
    let t0 = Instant::from_ps(1_000_000);
    let pfc = ReceivedControl::multicast(ControlFrame::Pfc {
        enable_vector: 1 << 3,
        time: [0, 0, 0, 0xFFFF, 0, 0, 0, 0],
    });
    fc.handle_control_frame(t0, &pfc);
    let later = t0 + Duration::from_us(10);
    assert!(!fc.may_transmit(later, 3));
}

#[test]
fn ns3_tx_time_is_exact_integer_arithmetic() {
    let byte = Rate::from_gbps(25).time_for_bytes(1); // 320 ps
    assert_eq!(ns3_tx_time(byte, 1048), Duration::from_ns(335)); // 335.36 ns
    assert_eq!(ns3_tx_time(byte, 1000), Duration::from_ns(319)); // exactly 320 ns
    assert_eq!(ns3_tx_time(byte, 0), Duration::ZERO);
    // a 43-byte PFC frame at 400 Gb/s (0.86 ns) takes no time: a pause and its resume sent
    // back to back arrive at the same nanosecond, as the reference's pfc.txt shows
    assert_eq!(
        ns3_tx_time(Rate::from_gbps(400).time_for_bytes(1), 43),
        Duration::ZERO
    );
    // saturates instead of overflowing
    assert_eq!(ns3_tx_time(Duration::MAX, 2).as_ps() % 1_000, 0);
}

#[test]
fn the_framing_defaults_to_ieee_when_a_serialized_config_has_none() {
    let c = FlowControlConfig::pfc(Rate::from_gbps(100), ME, 1 << 3);
    let mut v = serde_json::to_value(c).unwrap();
    v.as_object_mut().unwrap().remove("framing");
    let back: FlowControlConfig = serde_json::from_value(v).unwrap();
    assert_eq!(back.framing, Framing::Ieee8023);
    assert_eq!(back, c);
}

#[test]
fn ns3_framing_times_each_frame_by_its_own_length_and_the_rate_in_force() {
    // the engine reuses the last frame's time while lengths repeat: a length that changes,
    // and a rate that changes under the same length, are timed afresh
    let mut fc = engine(Rate::from_gbps(100), Framing::Ns3);
    let mut t = Instant::from_ps(1_000_000);
    for (bytes, ns) in [(1048, 83), (1048, 83), (60, 4), (1048, 83), (0, 0), (1048, 83)] {
        let s = fc.on_tx_start(t, bytes, 3).unwrap();
        assert_eq!(s.free_at, t + Duration::from_ns(ns), "{bytes} B at 100G");
        t = s.free_at + Duration::from_ns(1);
    }
    let mut c = *fc.config();
    c.rate = Rate::from_gbps(400);
    fc.reconfigure(t, c).unwrap();
    let s = fc.on_tx_start(t, 1048, 3).unwrap();
    assert_eq!(
        s.free_at,
        t + Duration::from_ns(20),
        "1048 B at 400G after the change"
    );
}
