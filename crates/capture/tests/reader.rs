//! The capture reader: pcap and pcapng in every byte order and resolution, damaged files read
//! as far as they are sound with a positioned error, bounded lengths, and random bytes.

use std::borrow::Cow;
use std::time::Duration;

use lossless_capture::model::format_time;
use lossless_capture::reader::{CaptureReader, Format, Frame, MAX_SNAPLEN, ReadError, ReadErrorKind};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
use pcap_file::pcapng::blocks::simple_packet::SimplePacketBlock;
use pcap_file::{DataLink, Endianness, TsResolution};
use proptest::prelude::*;

fn read_all(bytes: &[u8]) -> (Vec<Frame>, Vec<ReadError>) {
    let mut frames = Vec::new();
    let mut errors = Vec::new();
    for item in CaptureReader::new(bytes) {
        match item {
            Ok(f) => frames.push(f),
            Err(e) => errors.push(e),
        }
    }
    (frames, errors)
}

fn frame_bytes(i: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|k| (k as u8).wrapping_mul(7).wrapping_add(i))
        .collect()
}

fn pcap_file(endianness: Endianness, ts: TsResolution, n: u8) -> Vec<u8> {
    let header = PcapHeader {
        snaplen: 65535,
        endianness,
        ts_resolution: ts,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for i in 0..n {
        let data = frame_bytes(i, 60 + usize::from(i));
        let t = Duration::new(1_700_000_000 + u64::from(i), 123_456_000);
        w.write_packet(&PcapPacket::new(t, data.len() as u32 + 4, &data))
            .unwrap();
    }
    w.into_writer()
}

fn pcapng_file(endianness: Endianness) -> Vec<u8> {
    let shb = SectionHeaderBlock {
        endianness,
        ..Default::default()
    };
    let mut w = PcapNgWriter::with_section_header(Vec::new(), shb).unwrap();
    let eth = InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 65535,
        options: vec![InterfaceDescriptionOption::IfTsResol(9)],
    };
    let raw_ip = InterfaceDescriptionBlock {
        linktype: DataLink::RAW,
        snaplen: 65535,
        options: vec![],
    };
    w.write_pcapng_block(eth).unwrap();
    w.write_pcapng_block(raw_ip).unwrap();
    for i in 0..3u8 {
        let data = frame_bytes(i, 61);
        // Interface 0 counts nanoseconds, interface 1 the default microseconds.
        let epb = EnhancedPacketBlock {
            interface_id: u32::from(i % 2),
            timestamp: Duration::from_nanos(
                1_700_000_000_000_000_000 / if i % 2 == 0 { 1 } else { 1000 } + u64::from(i),
            ),
            original_len: 61,
            data: Cow::Owned(data),
            options: vec![],
        };
        w.write_pcapng_block(epb).unwrap();
    }
    w.write_pcapng_block(SimplePacketBlock {
        original_len: 60,
        data: Cow::Owned(frame_bytes(9, 60)),
    })
    .unwrap();
    w.into_inner()
}

#[test]
fn pcap_in_both_byte_orders_and_resolutions_reads_every_frame_with_its_time() {
    for endianness in [Endianness::Big, Endianness::Little] {
        for ts in [TsResolution::MicroSecond, TsResolution::NanoSecond] {
            let bytes = pcap_file(endianness, ts, 5);
            let mut reader = CaptureReader::new(&bytes[..]);
            let frames: Vec<Frame> = reader.by_ref().map(|r| r.unwrap()).collect();
            assert_eq!(reader.format(), None, "the reader is done");
            assert_eq!(frames.len(), 5);
            let mut offset = 24;
            for (i, f) in frames.iter().enumerate() {
                assert_eq!(f.number, i as u64 + 1);
                assert_eq!(f.link_type, 1);
                assert_eq!(f.data, frame_bytes(i as u8, 60 + i));
                assert_eq!(f.orig_len as usize, 64 + i);
                assert_eq!(f.offset, offset);
                let ps = (1_700_000_000 + i as u128) * 1_000_000_000_000 + 123_456_000_000;
                assert_eq!(f.timestamp.unwrap().as_ps(), ps);
                assert!(f.notes.is_empty(), "{:?}", f.notes);
                offset += 16 + 60 + i as u64;
            }
        }
    }
}

#[test]
fn pcapng_uses_each_interfaces_link_type_and_timestamp_resolution() {
    for endianness in [Endianness::Big, Endianness::Little] {
        let bytes = pcapng_file(endianness);
        let mut reader = CaptureReader::new(&bytes[..]);
        let first = reader.next().unwrap().unwrap();
        assert_eq!(reader.format(), Some(Format::PcapNg));
        let mut frames = vec![first];
        frames.extend(reader.map(|r| r.unwrap()));
        assert_eq!(frames.len(), 4);
        assert_eq!(frames.iter().map(|f| f.number).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(
            frames.iter().map(|f| f.link_type).collect::<Vec<_>>(),
            [1, 101, 1, 1]
        );
        // each packet says its interface (a Simple Packet Block's is interface 0)
        assert_eq!(
            frames.iter().map(|f| f.interface).collect::<Vec<_>>(),
            [0, 1, 0, 0]
        );
        // Blocks: SHB 0, IDB 1, IDB 2, EPB 3.., SPB 6.
        assert_eq!(
            frames.iter().map(|f| f.block).collect::<Vec<_>>(),
            [Some(3), Some(4), Some(5), Some(6)]
        );
        let ps0 = 1_700_000_000u128 * 1_000_000_000_000;
        assert_eq!(frames[0].timestamp.unwrap().as_ps(), ps0);
        assert_eq!(
            frames[1].timestamp.unwrap().as_ps(),
            ps0 + 1_000_000,
            "microsecond interface"
        );
        assert_eq!(
            frames[2].timestamp.unwrap().as_ps(),
            ps0 + 2_000,
            "nanosecond interface"
        );
        assert_eq!(frames[3].timestamp, None, "a Simple Packet Block has no time");
        assert_eq!(frames[3].data, frame_bytes(9, 60));
    }
}

#[test]
fn a_pcap_cut_at_any_byte_yields_the_whole_frames_then_one_error_at_the_cut_record() {
    let bytes = pcap_file(Endianness::Little, TsResolution::MicroSecond, 4);
    let mut boundaries = vec![24u64];
    for i in 0..4u64 {
        boundaries.push(boundaries.last().unwrap() + 16 + 60 + i);
    }
    for cut in 0..bytes.len() {
        let (frames, errors) = read_all(&bytes[..cut]);
        let whole = boundaries.iter().skip(1).filter(|b| **b <= cut as u64).count();
        assert_eq!(frames.len(), whole, "cut at {cut}");
        if boundaries.contains(&(cut as u64)) {
            assert!(errors.is_empty(), "cut at record boundary {cut}: {errors:?}");
        } else {
            assert_eq!(errors.len(), 1, "cut at {cut}");
            let e = &errors[0];
            assert!(e.fatal);
            let expect = if cut < 24 { 0 } else { boundaries[whole] };
            assert_eq!(e.offset, expect, "cut at {cut}: {e}");
            assert!(
                matches!(e.kind, ReadErrorKind::Truncated { .. }),
                "cut at {cut}: {e}"
            );
            assert!(e.to_string().contains(&format!("at byte {expect}")), "{e}");
        }
    }
}

#[test]
fn a_pcapng_cut_at_any_byte_names_the_block_where_reading_stopped() {
    let bytes = pcapng_file(Endianness::Little);
    let full = read_all(&bytes).0;
    for cut in 1..bytes.len() {
        let (frames, errors) = read_all(&bytes[..cut]);
        assert!(frames.len() <= full.len());
        assert_eq!(frames[..], full[..frames.len()], "cut at {cut}");
        for e in &errors {
            assert!(e.fatal, "cut at {cut}: {e}");
            assert!(e.offset <= cut as u64);
        }
        if let Some(e) = errors.first().filter(|e| e.offset > 0) {
            assert!(e.block.is_some(), "{e}");
            assert!(e.to_string().contains("pcapng block"), "{e}");
        }
    }
}

#[test]
fn an_absurd_pcap_record_length_is_refused_before_any_allocation() {
    let mut bytes = pcap_file(Endianness::Little, TsResolution::MicroSecond, 2);
    // Second record's incl_len (record header at 24 + 76) := 0xffff_fff0.
    let at = 24 + 16 + 60 + 8;
    bytes[at..at + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let (frames, errors) = read_all(&bytes);
    assert_eq!(frames.len(), 1);
    assert_eq!(errors.len(), 1);
    let e = &errors[0];
    assert_eq!(e.offset, 24 + 16 + 60);
    assert!(
        matches!(&e.kind, ReadErrorKind::BadLength { found, .. } if *found == 0xffff_fff0),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("at most {MAX_SNAPLEN}")), "{e}");
}

#[test]
fn an_absurd_pcapng_block_length_is_refused() {
    let mut bytes = pcapng_file(Endianness::Big);
    let (frames, _) = read_all(&bytes);
    let third_block = frames[0].offset as usize; // first EPB, block 3
    bytes[third_block + 4..third_block + 8].copy_from_slice(&0x7fff_fff0u32.to_be_bytes());
    let (frames, errors) = read_all(&bytes);
    assert!(frames.is_empty());
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].block, Some(3));
    assert_eq!(errors[0].offset, third_block as u64);
    assert!(
        errors[0].to_string().contains("block total length"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_packet_of_an_undescribed_interface_is_an_error_and_reading_goes_on() {
    let mut bytes = pcapng_file(Endianness::Little);
    let (frames, _) = read_all(&bytes);
    let epb = frames[0].offset as usize;
    bytes[epb + 8..epb + 12].copy_from_slice(&7u32.to_le_bytes());
    let (frames, errors) = read_all(&bytes);
    assert_eq!(frames.len(), 3, "the other packets are still read");
    assert_eq!(frames[0].number, 2, "the refused packet keeps its number");
    assert_eq!(errors.len(), 1);
    assert!(!errors[0].fatal);
    assert_eq!(errors[0].block, Some(3));
    assert!(
        errors[0].to_string().contains("interface_id is 7"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_file_that_is_not_a_capture_is_refused_at_byte_zero() {
    let (frames, errors) = read_all(b"#!/bin/sh\necho hello\n");
    assert!(frames.is_empty());
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].offset, 0);
    assert!(matches!(
        errors[0].kind,
        ReadErrorKind::BadMagic { found: 0x2321_2f62 }
    ));
}

#[test]
fn every_capture_of_the_corpus_reads_to_its_end() {
    let dir = lossless_testkit::corpus_dir().join("tcpdump");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus directory") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pcap") {
            continue;
        }
        files += 1;
        let bytes = std::fs::read(&path).unwrap();
        let (frames, errors) = read_all(&bytes);
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        assert!(!frames.is_empty(), "{}", path.display());
        if let Some(tshark) =
            lossless_testkit::require("tshark", "every_capture_of_the_corpus_reads_to_its_end")
        {
            let fields = ["frame.number", "frame.len", "frame.cap_len", "frame.time_epoch"];
            let rows = lossless_testkit::tshark_fields(&tshark, &path, &fields, &[]);
            let ours: Vec<Vec<String>> = frames
                .iter()
                .map(|f| {
                    vec![
                        f.number.to_string(),
                        f.orig_len.to_string(),
                        f.data.len().to_string(),
                        format_time(f.timestamp.unwrap()),
                    ]
                })
                .collect();
            assert_eq!(ours, rows, "{}", path.display());
        }
    }
    assert!(files >= 12, "corpus has {files} captures");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_after_a_pcap_header_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..600), nanos: bool, big: bool) {
        let mut bytes = pcap_file(
            if big { Endianness::Big } else { Endianness::Little },
            if nanos { TsResolution::NanoSecond } else { TsResolution::MicroSecond },
            0,
        );
        bytes.extend_from_slice(&tail);
        let (frames, errors) = read_all(&bytes);
        prop_assert!(errors.len() <= 1);
        prop_assert!(frames.len() <= tail.len() / 16 + 1);
    }

    #[test]
    fn random_bytes_as_a_file_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), magic in 0usize..6) {
        let magics: [&[u8]; 6] = [b"", &[0xd4, 0xc3, 0xb2, 0xa1], &[0xa1, 0xb2, 0xc3, 0xd4], &[0x4d, 0x3c, 0xb2, 0xa1],
            &[0x0a, 0x0d, 0x0d, 0x0a], &[0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a]];
        let mut file = magics[magic].to_vec();
        file.extend_from_slice(&bytes);
        let (frames, _errors) = read_all(&file);
        prop_assert!(frames.len() <= file.len() / 12 + 1);
    }

    #[test]
    fn a_pcapng_with_random_bytes_flipped_never_panics(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = pcapng_file(Endianness::Little);
        for (i, v) in flips {
            let at = i.index(bytes.len());
            bytes[at] ^= v;
        }
        let (frames, errors) = read_all(&bytes);
        prop_assert!(frames.len() + errors.len() <= 16);
    }
}

#[test]
fn a_pcap_link_type_field_carrying_fcs_bits_is_still_ethernet_as_tshark_reads_it() {
    use lossless_capture::decode_frame;
    use lossless_capture::model::Protocol;
    let mut pfc = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0x08, 0x01, 0x01, 0, 0xff,
    ];
    pfc.resize(60, 0);
    let with_fcs = [pfc.clone(), lossless_wire::fcs::compute_bytes(&pfc).to_vec()].concat();
    // The pcap header's LinkType field: FCS length (bits 28-31, in 16-bit units), F bit (26).
    for (field, data) in [(0x2400_0001u32, with_fcs), (0x0400_0001, pfc)] {
        let mut bytes = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
        bytes.extend_from_slice(&2u16.to_le_bytes());
        bytes.extend_from_slice(&4u16.to_le_bytes());
        for w in [
            0u32,
            0,
            65535,
            field,
            5000,
            0,
            data.len() as u32,
            data.len() as u32,
        ] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes.extend_from_slice(&data);
        let (frames, errors) = read_all(&bytes);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(frames[0].link_type, 1, "{field:#x}");
        let rec = decode_frame(&frames[0]);
        assert_eq!(rec.protocol, Protocol::Pfc, "{field:#x}: {rec:?}");
        assert_eq!(rec.eth.unwrap().fcs.is_some(), field >> 28 == 2);
        if let Some(tshark) = lossless_testkit::require(
            "tshark",
            "a_pcap_link_type_field_carrying_fcs_bits_is_still_ethernet_as_tshark_reads_it",
        ) {
            let dir = lossless_testkit::temp_dir("pcap-fcs-bits");
            let path = dir.join("fcs-bits.pcap");
            std::fs::write(&path, &bytes).unwrap();
            let rows = lossless_testkit::tshark_fields(&tshark, &path, &["eth.type", "macc.opcode"], &[]);
            assert_eq!(rows, [["0x8808", "0x0101"]], "{field:#x}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
