//! pcapng as tshark reads it: a signed `if_tsoffset` with every kind of `if_tsresol`, option
//! lists without `opt_endofopt`, options of zero or the wrong length, Simple Packet Blocks with
//! padding, blocks of types the reader does not use, sections in both byte orders. Every case is
//! built byte by byte, read, and compared with tshark's `frame.number`, `frame.time_epoch`,
//! `frame.cap_len` and `frame.len`.

use lossless_capture::model::format_time;
use lossless_capture::reader::{CaptureReader, Frame, ReadError, ReadErrorKind};

#[path = "support/pcapng.rs"]
mod pcapng;
use pcapng::{END, Ng};

/// A 60-byte PFC frame (no FCS).
fn pfc() -> Vec<u8> {
    let mut f = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0x08, 0x01, 0x01, 0, 0xff,
    ];
    for _ in 0..8 {
        f.extend_from_slice(&0xffffu16.to_be_bytes());
    }
    f.resize(60, 0);
    f
}

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

/// `number time cap_len len` of each frame, as tshark prints them.
fn rows(frames: &[Frame]) -> Vec<String> {
    frames
        .iter()
        .map(|f| {
            let t = f.timestamp.map(format_time).unwrap_or_default();
            format!("{} {t} {} {}", f.number, f.data.len(), f.orig_len)
        })
        .collect()
}

/// Reads `bytes`, checks the frames against `expect` (and that no error was met), checks
/// tshark reads the same, and returns the frames.
fn agrees_with_tshark(name: &str, bytes: &[u8], expect: &[&str]) -> Vec<Frame> {
    let (frames, errors) = read_all(bytes);
    assert!(errors.is_empty(), "{name}: {errors:?}");
    assert_eq!(rows(&frames), expect, "{name}");
    if let Some(tshark) = lossless_testkit::require("tshark", name) {
        let dir = lossless_testkit::temp_dir(name);
        let path = dir.join(format!("{name}.pcapng"));
        std::fs::write(&path, bytes).unwrap();
        let fields = ["frame.number", "frame.time_epoch", "frame.cap_len", "frame.len"];
        let theirs: Vec<String> = lossless_testkit::tshark_fields(&tshark, &path, &fields, &[])
            .into_iter()
            .map(|r| r.join(" "))
            // tshark also numbers records that hold no packet (custom blocks): ours skip them.
            .filter(|r| !r.ends_with(" 0 0"))
            .collect();
        assert_eq!(theirs, expect, "{name}: tshark");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    frames
}

const S5000_US: u64 = 5_000_000_000;

#[test]
fn a_negative_if_tsoffset_is_subtracted_for_every_kind_of_if_tsresol() {
    for big in [false, true] {
        let mut ng = Ng::new(big);
        ng.shb(big, &[]);
        let off = (-1000i64).to_le_bytes();
        let off = if big { (-1000i64).to_be_bytes() } else { off };
        let micro = [ng.opt(14, &off), END.to_vec()].concat();
        ng.idb(1, 0, &micro);
        let pow2 = [ng.opt(9, &[0x80 | 10]), ng.opt(14, &off), END.to_vec()].concat();
        ng.idb(1, 0, &pow2);
        let nano = [ng.opt(14, &off), ng.opt(9, &[9])].concat();
        ng.idb(1, 0, &nano);
        ng.epb(0, S5000_US, &pfc(), 60, &[]);
        ng.epb(1, 5000 * 1024 + 512, &pfc(), 60, &[]);
        ng.epb(2, 5_000_000_000_123, &pfc(), 60, &[]);
        let frames = agrees_with_tshark(
            "negative_if_tsoffset",
            &ng.bytes,
            &[
                "1 4000.000000000 60 60",
                "2 4000.500000000 60 60",
                "3 4000.000000123 60 60",
            ],
        );
        assert!(frames.iter().all(|f| f.notes.is_empty()), "{frames:?}");
    }
}

#[test]
fn a_time_before_the_epoch_is_given_as_the_epoch_with_a_note() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    let opts = [ng.opt(14, &(-10_000i64).to_le_bytes()), END.to_vec()].concat();
    ng.idb(1, 0, &opts);
    ng.epb(0, S5000_US + 250, &pfc(), 60, &[]);
    let (frames, errors) = read_all(&ng.bytes);
    assert!(errors.is_empty());
    assert_eq!(frames[0].timestamp.unwrap().as_ps(), 0);
    assert_eq!(
        frames[0].notes,
        ["timestamp is 4999.999750000 s before the Unix epoch (if_tsoffset -10000 s); given as the epoch"]
    );
}

#[test]
fn interface_options_without_opt_endofopt_or_of_zero_length_keep_the_interfaces_packets() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    // 0: if_tsresol (nanoseconds) and no opt_endofopt.
    let o = ng.opt(9, &[9]);
    ng.idb(1, 0, &o);
    // 1: an empty if_name, an empty comment, then if_tsresol and opt_endofopt.
    let o = [ng.opt(2, &[]), ng.opt(1, &[]), ng.opt(9, &[3]), END.to_vec()].concat();
    ng.idb(1, 0, &o);
    // 2: a four-byte if_tzone, a non-UTF-8 if_name and a non-zero reserved field.
    let o = [ng.opt(10, &[0, 0, 0, 0]), ng.opt(2, &[0xff, 0xfe]), END.to_vec()].concat();
    let at = ng.idb(1, 0, &o);
    ng.bytes[at + 10] = 7;
    // 3: stray zero bytes after opt_endofopt.
    let o = [END.to_vec(), vec![0; 8]].concat();
    ng.idb(1, 0, &o);
    for i in 0..4 {
        ng.epb(i, 5_000_000_000_000 + u64::from(i), &pfc(), 60, &[]);
    }
    let frames = agrees_with_tshark(
        "options_without_endofopt",
        &ng.bytes,
        &[
            "1 5000.000000000 60 60",
            "2 5000000000.001000000 60 60",
            "3 5000000.000002000 60 60",
            "4 5000000.000003000 60 60",
        ],
    );
    assert!(frames.iter().all(|f| f.notes.is_empty()), "{frames:?}");
}

#[test]
fn an_if_tsresol_of_the_wrong_length_is_ignored_as_tshark_ignores_it_and_said() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    let o = [ng.opt(9, &[]), END.to_vec()].concat();
    ng.idb(1, 0, &o);
    let o = [ng.opt(9, &[9, 0]), ng.opt(14, &[1, 0, 0, 0]), END.to_vec()].concat();
    ng.idb(1, 0, &o);
    // Repeated: tshark uses the first.
    let o = [ng.opt(9, &[3]), ng.opt(9, &[9]), END.to_vec()].concat();
    ng.idb(1, 0, &o);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    ng.epb(1, S5000_US, &pfc(), 60, &[]);
    ng.epb(2, 5_000_000, &pfc(), 60, &[]);
    let frames = agrees_with_tshark(
        "wrong_length_if_tsresol",
        &ng.bytes,
        &[
            "1 5000.000000000 60 60",
            "2 5000.000000000 60 60",
            "3 5000.000000000 60 60",
        ],
    );
    assert_eq!(
        frames[0].notes,
        [
            "interface 0: if_tsresol has 0 bytes, must be 1; ignored, timestamps count the default microseconds"
        ]
    );
    assert_eq!(frames[1].notes.len(), 2, "{:?}", frames[1].notes);
    assert!(
        frames[1].notes[1].contains("if_tsoffset has 4 bytes, must be 8"),
        "{:?}",
        frames[1].notes
    );
    assert_eq!(
        frames[2].notes,
        ["interface 2: if_tsresol repeated; the first one is used"]
    );
}

#[test]
fn section_and_packet_options_without_opt_endofopt_keep_the_packets() {
    let mut ng = Ng::new(false);
    let o = ng.opt(4, b"lossless");
    ng.shb(false, &o);
    ng.idb(1, 0, &[]);
    // epb_flags without opt_endofopt; a non-UTF-8 comment; an empty comment.
    let flags = ng.opt(2, &[0, 0, 0, 0]);
    ng.epb(0, S5000_US, &pfc(), 60, &flags);
    let o = [ng.opt(1, &[0xff, 0xfe, 0xfd]), END.to_vec()].concat();
    ng.epb(0, S5000_US + 1, &pfc(), 60, &o);
    let o = ng.opt(1, &[]);
    ng.epb(0, S5000_US + 2, &pfc(), 60, &o);
    agrees_with_tshark(
        "packet_options_without_endofopt",
        &ng.bytes,
        &[
            "1 5000.000000000 60 60",
            "2 5000.000001000 60 60",
            "3 5000.000002000 60 60",
        ],
    );
}

#[test]
fn a_simple_packet_block_holds_its_original_length_not_its_padding() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    let mut data = pfc();
    data.push(0xaa);
    ng.spb(61, &data);
    let frames = agrees_with_tshark("simple_packet_padding", &ng.bytes, &["1  61 61"]);
    assert_eq!(frames[0].data, data);
}

#[test]
fn blocks_the_reader_does_not_use_are_stepped_over_and_numbered_as_tshark_numbers_them() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.block(0x1234_5678, b"unknown"); // unknown type
    ng.block(0x8000_0001, b"local"); // local use
    let isb = [ng.u32(0), ng.u32(0), ng.u32(0)].concat();
    ng.block(5, &isb); // Interface Statistics
    let nrb = [ng.u16(0), ng.u16(0)].concat();
    ng.block(4, &nrb); // Name Resolution
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    ng.block(0x0000_0BAD, &[0, 0, 0, 0]); // Custom Block: tshark gives it frame number 2
    ng.pb(0, S5000_US + 3, &pfc(), 60); // the obsolete Packet Block
    agrees_with_tshark(
        "blocks_not_used",
        &ng.bytes,
        &["1 5000.000000000 60 60", "3 5000.000003000 60 60"],
    );
}

#[test]
fn sections_of_both_byte_orders_each_have_their_own_interfaces() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    ng.shb(true, &[]);
    let o = [ng.opt(9, &[3]), END.to_vec()].concat();
    ng.idb(1, 0, &o);
    ng.epb(0, 7_000_000, &pfc(), 60, &[]);
    agrees_with_tshark(
        "two_byte_orders",
        &ng.bytes,
        &["1 5000.000000000 60 60", "2 7000.000000000 60 60"],
    );
}

#[test]
fn an_interface_option_running_past_its_block_keeps_the_interface_with_a_note() {
    // tshark refuses the whole file here; the fixed fields are sound, so the packets are kept.
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    let mut o = ng.opt(9, &[9]);
    o.extend_from_slice(&ng.u16(2));
    o.extend_from_slice(&ng.u16(100));
    o.extend_from_slice(b"eth0");
    ng.idb(1, 0, &o);
    ng.epb(0, 5_000_000_000_000, &pfc(), 60, &[]);
    let (frames, errors) = read_all(&ng.bytes);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(rows(&frames), ["1 5000.000000000 60 60"]);
    assert_eq!(
        frames[0].notes,
        [
            "interface 0: option 2 at byte 24 of its block claims 100 bytes, more than the block holds; it and the options after it are ignored"
        ]
    );
}

#[test]
fn a_section_of_an_unknown_major_version_is_skipped_with_one_error() {
    let mut ng = Ng::new(false);
    let at = ng.shb(false, &[]);
    ng.bytes[at + 12] = 2; // major version 2
    ng.idb(1, 0, &[]);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, S5000_US + 1, &pfc(), 60, &[]);
    let (frames, errors) = read_all(&ng.bytes);
    assert_eq!(rows(&frames), ["1 5000.000001000 60 60"]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(!errors[0].fatal);
    assert_eq!((errors[0].offset, errors[0].block), (0, Some(0)));
    assert!(
        errors[0]
            .to_string()
            .contains("version is 2, allowed 1 (version 2.0 is not known; the section is skipped)"),
        "{}",
        errors[0]
    );
}

#[test]
fn damaged_packet_blocks_are_named_and_reading_goes_on() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    // A captured length past the block.
    let at = ng.epb(0, S5000_US, &pfc(), 60, &[]);
    ng.bytes[at + 20..at + 24].copy_from_slice(&200u32.to_le_bytes());
    // A trailing length that is not the leading one.
    let at2 = ng.epb(0, S5000_US + 1, &pfc(), 60, &[]);
    let end = ng.bytes.len();
    ng.bytes[end - 4..].copy_from_slice(&84u32.to_le_bytes());
    ng.epb(0, S5000_US + 2, &pfc(), 60, &[]);
    let (frames, errors) = read_all(&ng.bytes);
    assert_eq!(rows(&frames), ["3 5000.000002000 60 60"]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().all(|e| !e.fatal));
    assert_eq!(errors[0].offset, at as u64);
    assert!(
        matches!(errors[0].kind, ReadErrorKind::BadLength { found: 200, .. }),
        "{}",
        errors[0]
    );
    assert_eq!(errors[1].offset, at2 as u64);
    assert!(
        errors[1]
            .to_string()
            .contains("trailing block total length is 84"),
        "{}",
        errors[1]
    );
}

#[test]
fn a_truncated_last_block_ends_reading_after_the_frames_tshark_also_reads() {
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    let last = ng.epb(0, S5000_US + 1, &pfc(), 60, &[]);
    let cut = ng.bytes.len() - 10;
    ng.bytes.truncate(cut);
    let (frames, errors) = read_all(&ng.bytes);
    assert_eq!(rows(&frames), ["1 5000.000000000 60 60"]);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].fatal);
    assert_eq!((errors[0].offset, errors[0].block), (last as u64, Some(3)));
    assert!(
        matches!(errors[0].kind, ReadErrorKind::Truncated { .. }),
        "{}",
        errors[0]
    );
    if let Some(tshark) = lossless_testkit::require("tshark", "truncated_last_block") {
        let dir = lossless_testkit::temp_dir("truncated-last-block");
        let path = dir.join("cut.pcapng");
        std::fs::write(&path, &ng.bytes).unwrap();
        let out = std::process::Command::new(tshark)
            .args(["-n", "-T", "fields", "-e", "frame.number", "-r"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
        assert!(String::from_utf8_lossy(&out.stderr).contains("cut short"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_block_the_reader_does_not_use_may_be_longer_than_any_packet() {
    // A 1 MiB Name Resolution Block and a 1 MiB block of unknown type between two packets
    // (tshark reads both packets); the reader steps over them without holding them in memory.
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    let mut nrb = [ng.u16(1), ng.u16(8)].concat();
    nrb.extend_from_slice(&[10, 0, 0, 1, b'a', b'b', 0, 0]);
    nrb.extend_from_slice(&[ng.u16(0), ng.u16(0)].concat());
    nrb.resize(1 << 20, 0);
    ng.block(4, &nrb);
    ng.block(0x1234_5678, &vec![0x55; 1 << 20]);
    ng.epb(0, S5000_US + 1, &pfc(), 60, &[]);
    agrees_with_tshark(
        "long_unused_blocks",
        &ng.bytes,
        &["1 5000.000000000 60 60", "2 5000.000001000 60 60"],
    );
    // Cut inside the long block: the error names it.
    let cut = ng.bytes.len() - 100 - (1 << 20);
    let (frames, errors) = read_all(&ng.bytes[..cut]);
    assert_eq!(frames.len(), 1);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].fatal);
    assert_eq!(errors[0].block, Some(4), "{}", errors[0]);
    assert!(
        matches!(errors[0].kind, ReadErrorKind::Truncated { .. }),
        "{}",
        errors[0]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

    /// Whatever bytes an interface's or a packet's option list holds, the packet is read, with
    /// its bytes, and nothing panics.
    #[test]
    fn any_option_bytes_keep_the_packet(
        idb_opts in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        epb_opts in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        shb_opts in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        big: bool,
    ) {
        let mut ng = Ng::new(big);
        ng.shb(big, &shb_opts);
        ng.idb(1, 0, &idb_opts);
        ng.epb(0, S5000_US, &pfc(), 60, &epb_opts);
        let (frames, errors) = read_all(&ng.bytes);
        proptest::prop_assert!(errors.is_empty(), "{:?}", errors);
        proptest::prop_assert_eq!(frames.len(), 1);
        proptest::prop_assert_eq!(&frames[0].data, &pfc());
        proptest::prop_assert_eq!(frames[0].link_type, 1);
    }
}

#[test]
fn an_option_repeated_in_one_block_is_one_note_on_the_interfaces_first_frame_only() {
    // issue 26: 40,000 repeats made every frame print 40,000 warnings
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    let mut o = ng.opt(9, &[9]);
    for _ in 0..20_000 {
        o.extend(ng.opt(9, &[6]));
        o.extend(ng.opt(9, &[1, 2]));
    }
    o.extend(END);
    ng.idb(1, 0, &o);
    for i in 0..3 {
        ng.epb(0, 5_000_000_000_000 + i, &pfc(), 60, &[]);
    }
    let (frames, errors) = read_all(&ng.bytes);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(frames.len(), 3);
    assert_eq!(
        frames[0].notes,
        ["interface 0: if_tsresol repeated 40000 times; the first one is used"],
        "the first valid if_tsresol (nanoseconds) is used, every later one counted"
    );
    assert_eq!(frames[0].timestamp.unwrap().as_ps(), 5_000_000_000_000_000);
    assert!(
        frames[1].notes.is_empty() && frames[2].notes.is_empty(),
        "{frames:?}"
    );
    // wrong-length options are counted in one note too
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    let mut o = Vec::new();
    for _ in 0..1000 {
        o.extend(ng.opt(14, &[1, 0, 0, 0]));
    }
    ng.idb(1, 0, &o);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    ng.epb(0, S5000_US, &pfc(), 60, &[]);
    let (frames, _) = read_all(&ng.bytes);
    assert_eq!(
        frames[0].notes,
        ["interface 0: if_tsoffset has 4 bytes, must be 8; ignored, no offset is added (1000 such options)"]
    );
    assert!(frames[1].notes.is_empty());
}

#[test]
fn a_section_keeps_at_most_max_interfaces_and_reads_on_past_the_others() {
    use lossless_capture::reader::MAX_INTERFACES;
    let mut ng = Ng::new(false);
    ng.shb(false, &[]);
    for _ in 0..MAX_INTERFACES + 2 {
        ng.idb(1, 0, &[]);
    }
    let last = u32::try_from(MAX_INTERFACES - 1).unwrap();
    ng.epb(last, S5000_US, &pfc(), 60, &[]);
    ng.epb(last + 1, S5000_US, &pfc(), 60, &[]);
    // a new section starts with no interfaces again
    ng.shb(false, &[]);
    ng.idb(1, 0, &[]);
    ng.epb(0, S5000_US + 1, &pfc(), 60, &[]);
    let (frames, errors) = read_all(&ng.bytes);
    assert_eq!(
        rows(&frames),
        ["1 5000.000000000 60 60", "3 5000.000001000 60 60"]
    );
    let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 3, "{texts:?}");
    for t in &texts[..2] {
        assert!(
            t.contains("Interface Description Blocks in one section") && t.contains("at most 65536"),
            "{t}"
        );
    }
    assert!(
        texts[2].contains("interface_id") && texts[2].contains("65536 described"),
        "{}",
        texts[2]
    );
    assert!(errors.iter().all(|e| !e.fatal));
}
