//! Builds the seed corpora of the fuzz targets: `lossless-fuzz-seeds OUT_DIR INPUT...`.
//!
//! An INPUT ending in `.toml` is a scenario: it goes whole to `scenario_toml`. A directory
//! holding `config.txt`, `topology.txt` and `flow.txt` is an HPCC ns-3 experiment: the three
//! texts, NUL-separated, go to `ns3_files` (the flow file cut to its first 32 flows). Any
//! other INPUT is a capture:
//!
//! Every capture goes whole to `capture_file`; each Ethernet frame in it to `ethernet`,
//! `mac_control`, `capture_frame`, `roce_frame` and `cnm_frame` (and its IP and UDP headers to
//! `ip_udp`); each LLDPDU to `lldp_pdu` and `lldp_tlv`, each of its
//! TLVs to `lldp_tlv` and each organizationally specific TLV value to `lldp_org`; each MAC
//! Control payload, wrapped as a "receive" step, to `flow_control_rx`. The frames the wire
//! emitters build (`lossless_capture::sample`, `lossless_capture::cn_sample`) are added the
//! same way. Files are named by a
//! hash of their content, so re-running adds nothing twice.

use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lossless_capture::CaptureReader;
use lossless_capture::reader::LINKTYPE_ETHERNET;
use lossless_capture::sample::{sample_frames, sample_pcapng};
use lossless_wire::ethernet::{EtherType, EthernetRepr};
use lossless_wire::lldp::tlv::{self, TlvIter};

/// FNV-1a, 64 bits: a stable content name.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

struct Out {
    dir: PathBuf,
    written: usize,
}

impl Out {
    fn put(&mut self, target: &str, bytes: &[u8]) -> std::io::Result<()> {
        let dir = self.dir.join(target);
        fs::create_dir_all(&dir)?;
        let path = dir.join(format!("seed-{:016x}", fnv(bytes)));
        if !path.exists() {
            fs::write(path, bytes)?;
            self.written += 1;
        }
        Ok(())
    }

    fn frame(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.put("ethernet", data)?;
        self.put("mac_control", data)?;
        let mut framed = vec![0u8];
        framed.extend_from_slice(data);
        self.put("capture_frame", &framed)?;
        let Ok((eth, at)) = EthernetRepr::parse_bytes(data) else {
            return Ok(());
        };
        let payload = &data[at..];
        for ctl in [0u8, 1] {
            let mut framed = vec![ctl];
            framed.extend_from_slice(data);
            self.put("roce_frame", &framed)?;
            self.put("cnm_frame", &framed)?;
        }
        if eth.ethertype == EtherType::IPV4 || eth.ethertype == EtherType::IPV6 {
            self.put("ip_udp", payload)?;
            let udp_at = if eth.ethertype == EtherType::IPV4 {
                usize::from(payload.first().map_or(5, |b| b & 0x0F)) * 4
            } else {
                40
            };
            if let Some(udp) = payload.get(udp_at..) {
                self.put("ip_udp", udp)?;
            }
        }
        if eth.ethertype == EtherType::LLDP {
            self.put("lldp_pdu", payload)?;
            self.put("lldp_tlv", payload)?;
            for view in TlvIter::new(payload).flatten() {
                self.put("lldp_tlv", &payload[view.offset..view.offset + view.total_len()])?;
                if view.ty == tlv::TYPE_ORGANIZATIONALLY_SPECIFIC {
                    self.put("lldp_org", view.value)?;
                }
            }
        } else if eth.ethertype == EtherType::MAC_CONTROL {
            // flow_control_rx input: a PFC port on all priorities at 100G without reaction
            // delay (mode, rate index, station, enabled, delay, registers), then "receive
            // this payload", "advance 1 µs", "start a 1500-byte frame of priority 3", "timeout".
            let mut steps = vec![2, 9, 1, 0xFF, 0, 0];
            steps.extend_from_slice(&[4, 0]);
            let mut p = payload[..payload.len().min(20)].to_vec();
            p.resize(20, 0);
            steps.extend_from_slice(&p);
            steps.extend_from_slice(&[12, 0, 0, 0x03, 0xE8, 3, 0x05, 0xDC, 3, 5, 2]);
            self.put("flow_control_rx", &steps)?;
        }
        Ok(())
    }

    fn capture(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.put("capture_file", bytes)?;
        for frame in CaptureReader::new(Cursor::new(bytes)).flatten() {
            if frame.link_type == LINKTYPE_ETHERNET {
                self.frame(&frame.data)?;
            }
        }
        Ok(())
    }
}

/// The first `n` flows of a flow file's text, with its count line changed to match.
fn first_flows(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().skip(1).filter(|l| !l.trim().is_empty()).take(n).collect();
    let mut out = format!("{}\n", lines.len());
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

fn run(dir: &Path, inputs: &[String]) -> std::io::Result<usize> {
    let mut out = Out {
        dir: dir.to_path_buf(),
        written: 0,
    };
    for path in inputs {
        let p = Path::new(path);
        if p.is_dir() {
            let read = |name: &str| fs::read_to_string(p.join(name));
            let (config, topology, flows) = (read("config.txt")?, read("topology.txt")?, read("flow.txt")?);
            let joined = format!("{config}\0{topology}\0{}", first_flows(&flows, 32));
            out.put("ns3_files", joined.as_bytes())?;
        } else if path.ends_with(".toml") {
            out.put("scenario_toml", &fs::read(p)?)?;
        } else {
            out.capture(&fs::read(p)?)?;
        }
    }
    out.capture(&sample_pcapng())?;
    for (_, frame) in sample_frames() {
        out.frame(&frame)?;
    }
    for frame in lossless_capture::cn_sample::cn_sample_frames() {
        out.frame(&frame)?;
    }
    Ok(out.written)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((dir, inputs)) = args.split_first() else {
        eprintln!("usage: lossless-fuzz-seeds OUT_DIR INPUT... (captures, *.toml scenarios, ns-3 experiment directories)");
        return ExitCode::from(2);
    };
    match run(Path::new(dir), inputs) {
        Ok(n) => {
            eprintln!("{n} new seed files under {dir}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
