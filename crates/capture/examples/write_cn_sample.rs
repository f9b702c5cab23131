//! Writes the congestion-notification sample capture:
//! `cargo run -p lossless-capture --example write_cn_sample` (to
//! `examples/captures/roce-cn.pcap` at the workspace root, or to the path given).

use std::path::PathBuf;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures/roce-cn.pcap")
    });
    let header = PcapHeader {
        snaplen: 65535,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(std::fs::File::create(&path)?, header)?;
    // 2026-01-01 00:00:00 UTC, frames 1 µs apart
    let start = std::time::Duration::from_secs(1_767_225_600);
    for (i, f) in lossless_capture::cn::sample::cn_sample_frames()
        .iter()
        .enumerate()
    {
        let ts = start + std::time::Duration::from_micros(i as u64);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))?;
    }
    println!("wrote {}", path.display());
    Ok(())
}
