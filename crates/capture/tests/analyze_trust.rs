//! `lossless analyze --trust dscp`: untagged RoCEv2 counts on the priority its DSCP maps to
//! (ConnectX's default map: DSCP 26 → 3), so the bytes that keep arriving after an XOFF on
//! priority 3 are the headroom it needed; under PCP trust the same frames are priority 0.
//! `decode --filter dscp=D|prio=P` selects by the same classification.

use lossless_capture::CaptureReader;
use lossless_capture::analyze::{Analysis, Options, analyze, ip_dscp};
use lossless_capture::filter::{DEFAULT_DSCP_MAP, Filter, FrameKind, parse_dscp2prio};
use lossless_proto::units::{Duration, Rate};
use lossless_wire::ethernet::{EtherType, EthernetAddress};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use lossless_wire::roce::{Envelope, RoceFrameRepr};

const HOST: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 1]);
const SWITCH: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 2]);

/// An untagged RoCEv2 SEND Only of `dscp` from the host.
fn roce(dscp: u8, v6: bool) -> Vec<u8> {
    let ip = if v6 {
        let mut ip = Ipv6Repr::udp([0x20; 16], [0x21; 16]);
        (ip.dscp, ip.ecn) = (dscp, Ecn::Ect0);
        IpRepr::V6(ip)
    } else {
        let mut ip = Ipv4Repr::udp([192, 0, 2, 2], [192, 0, 2, 1]);
        (ip.dscp, ip.ecn) = (dscp, Ecn::Ect0);
        IpRepr::V4(ip)
    };
    let env = Envelope::new(HOST, SWITCH, None, ip, 49152);
    let f = RoceFrameRepr::rc_send(env, 0x11, 1, true, true, true, 1000);
    let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
    let n = f.emit(FcsMode::Absent, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

fn xoff3() -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = emit_frame(
        SWITCH,
        EthernetAddress::MAC_CONTROL,
        &MacControlRepr::pfc_xoff(1 << 3, 65535),
        FcsMode::Absent,
        &mut b,
    )
    .unwrap();
    b[..n].to_vec()
}

/// An XOFF on priority 3 at 1 ms, then ten RoCE frames of DSCP 26 (and one of DSCP 48) in
/// the pause, one interface.
fn capture() -> Vec<u8> {
    let mut frames = vec![(std::time::Duration::from_millis(1), xoff3())];
    for i in 0..10 {
        frames.push((std::time::Duration::from_micros(1001 + i), roce(26, i % 2 == 1)));
    }
    frames.push((std::time::Duration::from_micros(1020), roce(48, false)));
    let mut w = pcap_file::pcap::PcapWriter::new(Vec::new()).unwrap();
    for (t, f) in &frames {
        w.write_packet(&pcap_file::pcap::PcapPacket::new(*t, f.len() as u32, f))
            .unwrap();
    }
    w.into_writer()
}

fn run(map: Option<[u8; 64]>) -> Analysis {
    let opts = Options {
        speed: Rate::from_gbps(100),
        detection: Duration::from_ms(200),
        restoration: Duration::from_ms(200),
        bucket: Duration::from_ms(100),
        dscp_map: map,
    };
    analyze(CaptureReader::new(&capture()[..]), opts)
}

#[test]
fn untagged_roce_counts_on_its_dscps_priority_under_dscp_trust() {
    let a = run(Some(DEFAULT_DSCP_MAP));
    let t = a.trust.as_ref().expect("trust counts under --trust dscp");
    assert_eq!(t.data_frames_by_priority, [0, 0, 0, 10, 0, 0, 1, 0]);
    assert_eq!(
        (
            t.classified_by_dscp_frames,
            t.untagged_ip_frames,
            t.pcp_disagrees_frames
        ),
        (11, 11, 0)
    );
    // the ten frames on priority 3 arrived while it was paused: the headroom it needed
    let p3 = a
        .headroom
        .slots
        .iter()
        .find(|s| s.slot == "p3")
        .expect("an XOFF episode on p3");
    assert_eq!(p3.max_bytes, t.data_bytes_by_priority[3]);
    assert!(p3.max_bytes > 10_000);
    assert!(
        serde_json::to_string(&a)
            .unwrap()
            .contains("\"trust\":{\"trust\":\"dscp\"")
    );
}

#[test]
fn under_pcp_trust_the_same_frames_are_priority_0_and_the_output_has_no_trust_section() {
    let a = run(None);
    assert!(a.trust.is_none());
    assert!(!serde_json::to_string(&a).unwrap().contains("\"trust\""));
    let p3 = a
        .headroom
        .slots
        .iter()
        .find(|s| s.slot == "p3")
        .expect("the XOFF episode");
    assert_eq!(p3.max_bytes, 0, "untagged frames are priority 0 under PCP trust");
}

#[test]
fn a_dscp2prio_map_moves_dscp_26_elsewhere() {
    let map = parse_dscp2prio(["26=5", "48=6"]).unwrap();
    let a = run(Some(map));
    assert_eq!(
        a.trust.unwrap().data_frames_by_priority,
        [0, 0, 0, 0, 0, 10, 1, 0]
    );
    assert_eq!(
        parse_dscp2prio(["26=8"]).unwrap_err(),
        "priority \"8\" in \"26=8\"; allowed 0..=7"
    );
    assert_eq!(
        parse_dscp2prio(["64=1"]).unwrap_err(),
        "DSCP \"64\" in \"64=1\"; allowed 0..=63"
    );
    assert!(
        parse_dscp2prio(["26"])
            .unwrap_err()
            .contains("expected DSCP=PRIORITY")
    );
}

#[test]
fn ip_dscp_reads_ipv4_and_ipv6_headers() {
    let v4 = roce(46, false);
    let v6 = roce(46, true);
    assert_eq!(ip_dscp(EtherType::IPV4, &v4[14..]), Some(46));
    assert_eq!(ip_dscp(EtherType::IPV6, &v6[14..]), Some(46));
    assert_eq!(
        ip_dscp(EtherType::IPV4, &v6[14..]),
        None,
        "the version nibble is checked"
    );
}

#[test]
fn decode_filters_select_by_dscp_and_by_the_priority_trust_gives() {
    let recs: Vec<_> = CaptureReader::new(&capture()[..])
        .map(|f| lossless_capture::decode_frame(&f.unwrap()))
        .collect();
    let count = |f: &Filter| recs.iter().filter(|r| f.accepts(r)).count();
    assert_eq!(count(&Filter::new(["dscp=26".parse::<FrameKind>().unwrap()])), 10);
    assert_eq!(count(&Filter::new([FrameKind::Dscp(48)])), 1);
    // PCP trust: untagged RoCE is priority 0 (the XOFF frame too)
    assert_eq!(count(&Filter::new([FrameKind::Priority(0)])), 12);
    assert_eq!(count(&Filter::new([FrameKind::Priority(3)])), 0);
    let dscp = |p| Filter::new([FrameKind::Priority(p)]).trust_dscp(DEFAULT_DSCP_MAP);
    assert_eq!(count(&dscp(3)), 10);
    assert_eq!(count(&dscp(6)), 1);
    assert_eq!(
        count(&dscp(0)),
        1,
        "the PFC frame has no IP header: its PCP (untagged 0)"
    );
    assert!(
        "dscp=64"
            .parse::<FrameKind>()
            .unwrap_err()
            .contains("allowed 0..=63")
    );
    assert!(
        "prio=9"
            .parse::<FrameKind>()
            .unwrap_err()
            .contains("allowed 0..=7")
    );
}
