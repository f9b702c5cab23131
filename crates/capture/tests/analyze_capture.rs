//! `lossless analyze`'s engine on captures with known timing: per-priority totals, storms with
//! exact start and end, a timeline that adds up, top talkers, malformed frames counted, and the
//! DCBX agreement of two LLDP senders matching what their own agents negotiate.

use std::path::Path;

use lossless_capture::CaptureReader;
use lossless_capture::analyze::{Analysis, Options, analyze};
use lossless_proto::dcbx::{Agent, DcbxConfig, ModeSetting, PfcConfig};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use pcap_file::pcap::{PcapPacket, PcapWriter};

fn frame(src: u8, c: MacControlRepr, fcs: FcsMode) -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = emit_frame(
        EthernetAddress([2, 0, 0, 0, 0, src]),
        EthernetAddress::MAC_CONTROL,
        &c,
        fcs,
        &mut b,
    )
    .unwrap();
    b[..n].to_vec()
}

/// Writes `(microseconds, frame)` to a pcap at `path`.
fn write(path: &Path, frames: &[(u64, Vec<u8>)]) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (us, f) in frames {
        w.write_packet(&PcapPacket::new(
            std::time::Duration::from_micros(*us),
            f.len() as u32,
            f,
        ))
        .unwrap();
    }
}

fn run(name: &str, frames: &[(u64, Vec<u8>)]) -> Analysis {
    let dir = lossless_testkit::temp_dir(name);
    let p = dir.join("c.pcap");
    write(&p, frames);
    let opts = Options {
        speed: Rate::from_gbps(1),
        detection: Duration::from_ms(200),
        restoration: Duration::from_ms(200),
        bucket: Duration::from_ms(100),
        dscp_map: None,
    };
    analyze(CaptureReader::new(std::fs::File::open(&p).unwrap()), opts)
}

#[test]
fn totals_storm_times_and_timeline_from_capture_timestamps() {
    // 1 Gb/s: 65535 quanta = 33.55392 ms. XOFF on p2 every 10 ms for 500 ms from t = 1 s, then
    // XON at 1.6 s; one link PAUSE with FCS at 3 s; XON on p0 at 3.5 s.
    let t0 = 1_000_000u64;
    let mut frames: Vec<(u64, Vec<u8>)> = (0..50)
        .map(|i| {
            (
                t0 + i * 10_000,
                frame(1, MacControlRepr::pfc_xoff(1 << 2, 65535), FcsMode::Absent),
            )
        })
        .collect();
    frames.push((
        t0 + 600_000,
        frame(2, MacControlRepr::pfc_xon(1 << 2), FcsMode::Absent),
    ));
    frames.push((
        t0 + 2_000_000,
        frame(2, MacControlRepr::Pause { pause_time: 1000 }, FcsMode::Present),
    ));
    // The capture ends at 2.5 s; paused time counts up to its end.
    frames.push((
        t0 + 2_500_000,
        frame(2, MacControlRepr::pfc_xon(1), FcsMode::Absent),
    ));
    let a = run("analyze-storm", &frames);
    assert_eq!(
        (a.frames, a.mac_control_frames, a.read_error.as_deref()),
        (53, 53, None)
    );
    let p2 = &a.totals.slots[2];
    assert_eq!((p2.counters.xoff_frames, p2.counters.xon_frames), (50, 1));
    assert_eq!(
        (p2.counters.xoff_transitions, p2.counters.xon_transitions),
        (1, 1)
    );
    let paused = 0.490 + 0.033_553_92;
    assert!((p2.paused_s - paused).abs() < 1e-9, "{}", p2.paused_s);
    let pause = &a.totals.slots[8];
    assert_eq!((pause.counters.xoff_frames, pause.counters.quanta), (1, 1000));
    assert!((pause.paused_s - 512e-6).abs() < 1e-12);
    assert_eq!(a.totals.with_warnings, 0, "the FCS was found and checked");
    // Times are from the first frame: the storm's pause began at 0, detected at 0.2 s,
    // restored 0.2 s after the pause ended.
    assert_eq!(a.storms.len(), 1);
    let s = &a.storms[0];
    assert_eq!(s.slot, "p2");
    assert!(
        s.pause_start_s.abs() < 1e-9 && (s.detected_s - 0.2).abs() < 1e-9,
        "{s:?}"
    );
    assert!((s.restored_s.unwrap() - (paused + 0.2)).abs() < 1e-9, "{s:?}");
    // The timeline's buckets add up to the totals, and the first five are fully paused.
    let sum: f64 = a.timeline.iter().map(|b| b.paused_s[2]).sum();
    assert!((sum - paused).abs() < 1e-9, "{sum}");
    for b in &a.timeline[..4] {
        assert!((b.paused_s[2] - 0.1).abs() < 1e-9, "{b:?}");
    }
    assert_eq!(a.timeline.len(), 25);
    assert_eq!(a.totals.top_talkers[0].source, "02:00:00:00:00:01");
    assert_eq!(a.totals.top_talkers[0].frames, 50);
}

#[test]
fn a_storm_still_running_at_the_end_has_no_restoration() {
    let frames: Vec<_> = (0..40)
        .map(|i| {
            (
                i * 10_000,
                frame(1, MacControlRepr::pfc_xoff(1 << 7, 65535), FcsMode::Absent),
            )
        })
        .collect();
    let a = run("analyze-open-storm", &frames);
    assert_eq!(a.storms.len(), 1);
    assert_eq!((a.storms[0].slot.as_str(), a.storms[0].restored_s), ("p7", None));
}

#[test]
fn malformed_mac_control_frames_are_counted_and_analysis_goes_on() {
    let mut bad = frame(1, MacControlRepr::pfc_xoff(1, 1), FcsMode::Absent);
    bad.truncate(18);
    let frames = vec![
        (1, bad),
        (2, frame(1, MacControlRepr::pfc_xoff(1, 1), FcsMode::Absent)),
    ];
    let a = run("analyze-malformed", &frames);
    assert_eq!((a.totals.malformed, a.totals.slots[0].counters.frames), (1, 1));
}

fn lldp(mac: u8, willing: bool, enable: &[u8]) -> (Agent, Vec<u8>) {
    let cfg = DcbxConfig {
        mode: ModeSetting::Ieee,
        pfc: PfcConfig {
            willing,
            enable: enable.to_vec(),
            ..PfcConfig::default()
        },
        ..DcbxConfig::default()
    };
    let mut agent = Agent::new(AgentConfig::new([2, 0, 0, 0, 0, mac]), cfg).unwrap();
    let f = agent.poll_transmit(Instant::ZERO).expect("an LLDPDU at start");
    (agent, f)
}

#[test]
fn dcbx_agreement_matches_what_each_sides_agent_negotiates() {
    for (aw, bw, agree) in [(false, true, true), (false, false, false), (true, true, true)] {
        let (mut a, fa) = lldp(1, aw, &[3]);
        let (mut b, fb) = lldp(2, bw, &[4]);
        a.handle_ethernet(Instant::ZERO, &fb);
        b.handle_ethernet(Instant::ZERO, &fa);
        let r = run("analyze-dcbx", &[(1, fa), (2, fb)]);
        assert_eq!(r.lldp_frames, 2);
        assert_eq!(r.lldp_agreement.len(), 1);
        let g = &r.lldp_agreement[0];
        assert_eq!(
            (g.a.as_str(), g.b.as_str(), g.mode),
            ("02:00:00:00:00:01", "02:00:00:00:00:02", "ieee")
        );
        assert_eq!(g.pfc_agree, Some(agree), "{aw} {bw}: {g:?}");
        assert_eq!(g.pfc_a, a.operational().pfc.enable(), "{aw} {bw}");
        assert_eq!(g.pfc_b, b.operational().pfc.enable(), "{aw} {bw}");
        assert_eq!(g.pfc_reason.is_some(), !agree);
        assert_eq!(g.ets_a, Some(a.operational().ets.params));
        assert_eq!(g.ets_b, Some(b.operational().ets.params));
    }
}

/// The LLDP frame `f` without its IEEE ETS Configuration and Recommendation TLVs.
fn without_ets(f: &[u8]) -> Vec<u8> {
    use lossless_wire::lldp::{Ieee8021Tlv, LldpduRepr, OrgTlv, Tlv};
    let (repr, _) = LldpduRepr::parse(&f[14..]).into_result().unwrap();
    let tlvs = repr
        .tlvs
        .into_iter()
        .filter(|t| {
            !matches!(
                t,
                Tlv::Org(OrgTlv::Ieee8021(
                    Ieee8021Tlv::EtsConfiguration(_) | Ieee8021Tlv::EtsRecommendation(_)
                ))
            )
        })
        .collect();
    let mut out = f[..14].to_vec();
    out.extend(LldpduRepr { tlvs }.to_vec().unwrap());
    out.resize(out.len().max(60), 0);
    out
}

#[test]
fn ets_agreement_is_null_for_a_pair_never_compared_not_false() {
    let (_, fa) = lldp(1, false, &[3]);
    let (_, fb) = lldp(2, false, &[3]);
    let r = run("analyze-no-ets", &[(1, fa.clone()), (2, without_ets(&fb))]);
    let g = &r.lldp_agreement[0];
    assert_eq!((g.ets_b, g.ets_agree), (None, None), "{g:?}");
    let json = serde_json::to_value(g).unwrap();
    assert_eq!(json["ets_agree"], serde_json::Value::Null, "{json}");
    // both sent ETS: compared, and the same tables agree
    let r = run("analyze-both-ets", &[(1, fa), (2, fb)]);
    assert_eq!(r.lldp_agreement[0].ets_agree, Some(true));
}
