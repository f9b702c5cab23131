//! Real captures (tcpdump's test corpus): every LLDP frame decodes; well-formed PDUs re-emit
//! byte for byte; the malformed ones (fuzzer finds) yield errors or warnings, never panics.

use std::path::{Path, PathBuf};

use lossless_wire::ethernet::{EtherType, EthernetRepr};
use lossless_wire::lldp::{Decoded, LldpduRepr};

/// The LLDP payloads (after Ethernet and VLAN headers) of the frames in a pcap.
fn lldp_payloads(path: &Path) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).expect("open pcap");
    let mut reader = match pcap_file::pcap::PcapReader::new(file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return vec![];
        }
    };
    if reader.header().datalink != pcap_file::DataLink::ETHERNET {
        return vec![];
    }
    let mut out = vec![];
    // A damaged record ends the capture (some corpus files are fuzzer outputs).
    // Raw records: the fuzzer-made files claim original lengths above the snap length,
    // which the checked reader refuses; the captured bytes are what we decode.
    while let Some(r) = reader.next_raw_packet() {
        let pkt = match r {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                break;
            }
        };
        if let Ok((eth, off)) = EthernetRepr::parse_bytes(&pkt.data)
            && eth.ethertype == EtherType::LLDP
        {
            out.push(pkt.data[off..].to_vec());
        }
    }
    out
}

/// The shared corpus. testkit's path is fixed when testkit is compiled; a build of another
/// checkout sharing the target dir can leave it pointing there, so fall back to ours.
pub fn corpus_dir() -> PathBuf {
    let dir = lossless_testkit::corpus_dir();
    if dir.is_dir() {
        dir
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
    }
}

/// Every pcap of the tcpdump corpus with its LLDP payloads.
fn corpus() -> Vec<(PathBuf, Vec<Vec<u8>>)> {
    let dir = corpus_dir().join("tcpdump");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), lldp_payloads(&p)))
        .collect()
}

fn is_malformed(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.starts_with("lldp-infinite-loop") || name.contains("asan") || name.contains("oobr")
}

fn describe(d: &Decoded) -> String {
    let mut s = format!("{} TLVs", d.tlvs.len());
    if let Some(e) = d.error {
        s += &format!(", error: {e}");
    }
    for w in &d.warnings {
        s += &format!(", warning: {w}");
    }
    s
}

#[test]
fn well_formed_corpus_lldpdus_re_emit_byte_for_byte() {
    let mut checked = 0;
    for (path, payloads) in corpus().iter().filter(|(p, _)| !is_malformed(p)) {
        for (i, payload) in payloads.iter().enumerate() {
            let d = LldpduRepr::parse(payload);
            eprintln!("{} #{i}: {}", path.display(), describe(&d));
            assert_eq!(d.error, None, "{} frame {i}", path.display());
            let emitted = LldpduRepr { tlvs: d.tlvs.clone() }
                .to_vec()
                .expect("decoded TLVs fit");
            assert_eq!(emitted, payload[..d.len], "{} frame {i}", path.display());
            // What follows End is frame padding.
            assert!(
                payload[d.len..].iter().all(|&b| b == 0),
                "{} frame {i}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} LLDP frames in the corpus");
}

#[test]
fn malformed_corpus_lldpdus_give_errors_not_panics() {
    let mut files = 0;
    for (path, payloads) in corpus().iter().filter(|(p, _)| is_malformed(p)) {
        files += 1;
        let mut problems = 0;
        for (i, payload) in payloads.iter().enumerate() {
            let d = LldpduRepr::parse(payload);
            eprintln!("{} #{i}: {}", path.display(), describe(&d));
            problems += usize::from(d.error.is_some()) + d.warnings.len();
            if d.error.is_none() {
                let emitted = LldpduRepr { tlvs: d.tlvs }.to_vec();
                assert_eq!(emitted.as_deref(), Ok(&payload[..d.len]));
            }
        }
        assert!(
            payloads.is_empty() || problems > 0,
            "{}: no error or warning",
            path.display()
        );
    }
    assert!(files >= 5, "malformed corpus files missing: {files}");
}

#[test]
fn malformed_corpus_files_report_the_exact_problem() {
    let expected = [
        (
            "lldp_8023_mtu-oobr.pcap",
            "Maximum Frame Size TLV: length at byte 0: length 4, allowed 6",
        ),
        (
            "lldp_mgmt_addr_tlv_asan.pcap",
            "Management Address TLV: length at byte 0: length 15, allowed the sum of its string lengths + 7",
        ),
        (
            "lldp-infinite-loop-2.pcap",
            "End Of LLDPDU TLV: length at byte 623: length 194, allowed 0",
        ),
        (
            "lldp-infinite-loop-1.pcap",
            "LLDPDU: bytes after End Of LLDPDU TLV at byte 337: value 0x80, allowed only zero padding after End Of LLDPDU TLV",
        ),
        (
            "lldp_asan.pcap",
            "LLDPDU: Organizationally Specific TLV at byte 8: out of order, expected Port ID TLV second",
        ),
    ];
    let dir = corpus_dir().join("tcpdump");
    for (file, message) in expected {
        let payloads = lldp_payloads(&dir.join(file));
        let d = LldpduRepr::parse(&payloads[0]);
        let first = d.error.or(d.warnings.first().copied()).expect("a problem");
        assert_eq!(first.to_string(), message, "{file}");
    }
}
