//! The congestion-notification sample (`lossless_capture::cn::sample`, written to
//! `examples/captures/roce-cn.pcap`) decodes to the kinds and fields it was built with, and
//! `--filter` picks its RoCEv2, CNP, CNM and CE-marked frames.

use lossless_capture::cn::sample::cn_sample_frames;
use lossless_capture::model::Protocol;
use lossless_capture::{CaptureReader, Filter, FrameKind, decode_frame};

fn committed() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/captures/roce-cn.pcap"
    ))
    .expect("examples/captures/roce-cn.pcap is checked in")
}

#[test]
fn the_committed_capture_is_what_the_generator_builds() {
    let frames: Vec<Vec<u8>> = CaptureReader::new(&committed()[..])
        .map(|f| f.unwrap().data.to_vec())
        .collect();
    assert_eq!(
        frames,
        cn_sample_frames(),
        "run `cargo run -p lossless-capture --example write_cn_sample` if the change is deliberate"
    );
}

#[test]
fn the_sample_decodes_to_roce_cnp_cnm_and_cn_tagged_frames_without_errors() {
    let records: Vec<_> = CaptureReader::new(&committed()[..])
        .map(|f| decode_frame(&f.unwrap()))
        .collect();
    use Protocol::*;
    let kinds: Vec<Protocol> = records.iter().map(|r| r.protocol).collect();
    assert_eq!(
        kinds,
        [
            Roce, Roce, Roce, Roce, Roce, Cnp, Cnp, Roce, Roce, Roce, Roce, Roce, Cnm, Cnm, Other
        ]
    );
    for r in &records {
        assert!(
            r.errors.is_empty() && r.warnings.is_empty(),
            "frame {}: {:?} {:?}",
            r.frame,
            r.errors,
            r.warnings
        );
        if let Some(roce) = &r.roce {
            assert_eq!(roce.icrc_ok, Some(true), "frame {}", r.frame);
        }
    }
    let nak = records[3].roce.as_ref().unwrap().aeth.as_ref().unwrap();
    assert_eq!(
        (nak.syndrome, nak.kind.as_str(), nak.nak_code, nak.msn),
        (0x60, "nak", Some(0), 5)
    );
    let cnp = &records[5];
    assert_eq!(cnp.ip.as_ref().unwrap().dscp, 48);
    assert_eq!(cnp.eth.as_ref().unwrap().vlan[0].pcp, 6);
    assert!(cnp.roce.as_ref().unwrap().bth.becn);
    let cnm = records[12].cnm.as_ref().unwrap();
    assert_eq!(
        (
            cnm.qntz_fb,
            cnm.q_offset,
            cnm.q_delta,
            cnm.encapsulated_msdu_length
        ),
        (42, -1200, 300, 64)
    );
    assert_eq!(records[12].cn_tag.as_ref().unwrap().flow_id, 7);
    assert_eq!(records[14].cn_tag.as_ref().unwrap().ethertype, 0x88B5);
    let shown = |kinds: &[FrameKind]| -> Vec<u64> {
        let f = Filter::new(kinds.iter().copied());
        records.iter().filter(|r| f.accepts(r)).map(|r| r.frame).collect()
    };
    assert_eq!(shown(&[FrameKind::Cnp]), [6, 7]);
    assert_eq!(shown(&[FrameKind::Cnm]), [13, 14]);
    assert_eq!(shown(&[FrameKind::Ecn]), [2, 8], "the CE-marked data frames");
    assert_eq!(shown(&[FrameKind::Roce]), (1..=12).collect::<Vec<u64>>());
    assert_eq!(shown(&[FrameKind::Cnp, FrameKind::Ecn]), [2, 6, 7, 8]);
}

/// A capture that keeps `snaplen` bytes of each frame (as the simulator's pcap writer and
/// `tcpdump -s` do).
fn cut_capture(frames: &[Vec<u8>], snaplen: usize) -> Vec<u8> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
    for f in frames {
        let kept = &f[..f.len().min(snaplen)];
        w.write_packet(&PcapPacket::new(std::time::Duration::ZERO, f.len() as u32, kept))
            .unwrap();
    }
    w.into_writer()
}

#[test]
fn a_capture_cut_short_decodes_as_far_as_it_goes_with_warnings_not_errors() {
    let frames = cn_sample_frames();
    for snaplen in 22..=120 {
        let records: Vec<_> = CaptureReader::new(&cut_capture(&frames, snaplen)[..])
            .map(|f| decode_frame(&f.unwrap()))
            .collect();
        for (r, f) in records.iter().zip(&frames) {
            assert!(
                r.errors.is_empty(),
                "snaplen {snaplen}, frame {}: {:?}",
                r.frame,
                r.errors
            );
            if let Some(roce) = &r.roce {
                assert_eq!(
                    roce.icrc_ok.is_some(),
                    f.len() <= snaplen,
                    "snaplen {snaplen}, frame {}",
                    r.frame
                );
            }
        }
    }
    // The simulator keeps 64 bytes: the BTH of an untagged IPv4 data frame is all there.
    let records: Vec<_> = CaptureReader::new(&cut_capture(&frames, 64)[..])
        .map(|f| decode_frame(&f.unwrap()))
        .collect();
    let first = records[0].roce.as_ref().unwrap();
    assert_eq!(
        (first.bth.psn, first.payload_bytes, first.icrc),
        (100, Some(1024), None)
    );
    assert!(text_of(&records[0]).contains("ICRC not captured"));
}

fn text_of(r: &lossless_capture::FrameRecord) -> String {
    lossless_capture::text::render(r)
}
