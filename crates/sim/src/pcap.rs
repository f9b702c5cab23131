//! A trace sink writing one pcapng file per link direction: data frames as Ethernet frames
//! with an 802.1Q priority tag (PCP = the frame's priority, VID 0), PAUSE and PFC as real MAC
//! Control frames built by `lossless_wire::mac_control`. Timestamps are the start of each
//! frame's preamble, in picoseconds (`if_tsresol` = 12), so they are exact.
//!
//! Data frames are captured up to 64 bytes (the original length is kept): their payload is
//! the flow id (4 bytes, big-endian), the frame id (8 bytes) and zeros. Addresses: hosts are
//! `02:01:<node id, 4 bytes>`; MAC Control frames come from the port's station address
//! `02:00:<port id, 4 bytes>` to 01-80-C2-00-00-01. FCS is not captured.

use std::borrow::Cow;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;
use lossless_wire::ethernet::{EtherType, EthernetAddress, EthernetRepr, VlanTag, VlanTags};
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use pcap_file::DataLink;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};

use crate::config::SimConfig;
use crate::frame::{NodeId, PortId};
use crate::observer::{Observer, WireFrame};

/// EtherType of simulated data frames (IEEE 802 local experimental EtherType 1).
pub const DATA_ETHERTYPE: u16 = 0x88B5;
/// Bytes of each data frame kept in the capture.
pub const DATA_SNAPLEN: usize = 64;

/// The address of host `node` in captures.
pub fn host_address(node: NodeId) -> [u8; 6] {
    let n = node.to_be_bytes();
    [0x02, 0x01, n[0], n[1], n[2], n[3]]
}

/// The station address the simulator gives port `port` (source of its control frames).
pub fn port_address(port: PortId) -> [u8; 6] {
    let p = port.to_be_bytes();
    [0x02, 0x00, p[0], p[1], p[2], p[3]]
}

/// Error writing captures.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    /// A file could not be created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The pcapng writer failed.
    #[error("{path}: {message}")]
    Pcap {
        /// The file.
        path: PathBuf,
        /// The writer's message.
        message: String,
    },
}

/// Writes `DIR/<node>.<port>-to-<peer>.pcapng` for every port.
pub struct PcapSink {
    writers: Vec<(PathBuf, PcapNgWriter<BufWriter<File>>)>,
    error: Option<PcapError>,
    buf: Vec<u8>,
}

impl PcapSink {
    /// Creates the directory and one capture per port of `config` (ports numbered as the
    /// simulator numbers them: link i has ports 2i at `a` and 2i + 1 at `b`).
    pub fn create(dir: &Path, config: &SimConfig) -> Result<Self, PcapError> {
        std::fs::create_dir_all(dir).map_err(|source| PcapError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut writers = Vec::with_capacity(config.links.len() * 2);
        let mut local = vec![0u32; config.nodes.len()];
        for link in &config.links {
            for (me, peer) in [(link.a, link.b), (link.b, link.a)] {
                let name = format!(
                    "{}.{}-to-{}.pcapng",
                    config.nodes[me as usize].name, local[me as usize], config.nodes[peer as usize].name
                );
                local[me as usize] += 1;
                let path = dir.join(name);
                let file = File::create(&path).map_err(|source| PcapError::Io {
                    path: path.clone(),
                    source,
                })?;
                let mut w = PcapNgWriter::new(BufWriter::new(file)).map_err(|e| PcapError::Pcap {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                let idb = InterfaceDescriptionBlock {
                    linktype: DataLink::ETHERNET,
                    snaplen: 0,
                    options: vec![
                        InterfaceDescriptionOption::IfName(Cow::Owned(
                            path.file_stem()
                                .map(|s| s.to_string_lossy().into_owned())
                                .unwrap_or_default(),
                        )),
                        InterfaceDescriptionOption::IfSpeed(link.rate.bps()),
                        InterfaceDescriptionOption::IfTsResol(12),
                    ],
                };
                w.write_pcapng_block(idb).map_err(|e| PcapError::Pcap {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                writers.push((path, w));
            }
        }
        Ok(PcapSink {
            writers,
            error: None,
            buf: vec![0; 128],
        })
    }

    /// Flushes every file; reports the first error met while writing, if any.
    pub fn finish(&mut self) -> Result<Vec<PathBuf>, PcapError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        use std::io::Write as _;
        for (path, w) in &mut self.writers {
            w.get_mut().flush().map_err(|source| PcapError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Ok(self.writers.iter().map(|(p, _)| p.clone()).collect())
    }

    fn bytes(&mut self, port: PortId, frame: &WireFrame) -> (usize, u32) {
        let buf = &mut self.buf;
        buf.fill(0);
        match frame {
            WireFrame::Data(f) => {
                let eth = EthernetRepr {
                    dst: EthernetAddress(host_address(f.dst)),
                    src: EthernetAddress(host_address(f.src)),
                    tags: VlanTags::Single(VlanTag::from_tci(
                        EtherType::VLAN_C_TAG,
                        u16::from(f.priority) << 13,
                    )),
                    ethertype: EtherType(DATA_ETHERTYPE),
                };
                let h = eth.emit(buf).unwrap_or(0);
                buf[h..h + 4].copy_from_slice(&f.flow.to_be_bytes());
                buf[h + 4..h + 12].copy_from_slice(&f.id.to_be_bytes());
                let wire_len = f.len.saturating_sub(4); // no FCS
                (DATA_SNAPLEN.min(wire_len as usize), wire_len)
            }
            WireFrame::Control(c) => {
                let repr = match *c {
                    ControlFrame::Pause { quanta } => MacControlRepr::Pause { pause_time: quanta },
                    ControlFrame::Pfc { enable_vector, time } => MacControlRepr::Pfc {
                        priority_enable_vector: u16::from(enable_vector),
                        time,
                    },
                };
                let n = emit_frame(
                    EthernetAddress(port_address(port)),
                    EthernetAddress::MAC_CONTROL,
                    &repr,
                    FcsMode::Absent,
                    buf,
                )
                .unwrap_or(0);
                (n, n as u32)
            }
            WireFrame::Lldp { .. } => (0, 0),
        }
    }
}

/// An enhanced packet block of interface 0 at `start` (picosecond resolution).
fn packet(start: Instant, original_len: u32, data: &[u8]) -> EnhancedPacketBlock<'_> {
    let ps = start.as_ps();
    EnhancedPacketBlock {
        interface_id: 0,
        // the crate writes `as_nanos()`; with if_tsresol = 12 that number is read as ps
        timestamp: std::time::Duration::from_nanos(u64::try_from(ps).unwrap_or(u64::MAX)),
        original_len,
        data: Cow::Borrowed(data),
        options: vec![],
    }
}

impl Observer for PcapSink {
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, _last_bit: Instant) {
        if self.error.is_some() || matches!(frame, WireFrame::Lldp { .. }) {
            return; // LLDP frames come whole through `lldp_tx`
        }
        let (caplen, original_len) = self.bytes(port, frame);
        let Some((path, w)) = self.writers.get_mut(port as usize) else {
            return;
        };
        if let Err(e) = w.write_pcapng_block(packet(start, original_len, &self.buf[..caplen])) {
            self.error = Some(PcapError::Pcap {
                path: path.clone(),
                message: e.to_string(),
            });
        }
    }
    fn lldp_tx(&mut self, port: PortId, frame: &[u8], start: Instant) {
        if self.error.is_some() {
            return;
        }
        let Some((path, w)) = self.writers.get_mut(port as usize) else {
            return;
        };
        if let Err(e) = w.write_pcapng_block(packet(start, frame.len() as u32, frame)) {
            self.error = Some(PcapError::Pcap {
                path: path.clone(),
                message: e.to_string(),
            });
        }
    }
}
