//! A trace sink writing one pcapng file per link direction: data frames as Ethernet frames
//! with an 802.1Q priority tag (PCP = the frame's priority, VID 0), PAUSE and PFC as real MAC
//! Control frames built by `lossless_wire::mac_control`. Timestamps are the start of each
//! frame's preamble, in picoseconds (`if_tsresol` = 12), so they are exact.
//!
//! Data frames of flows without a transport are captured up to 64 bytes (the original length
//! is kept): their payload is the flow id (4 bytes, big-endian), the frame id (8 bytes) and
//! zeros. Frames of RoCEv2 QPs are real RoCEv2 packets built by `lossless_wire::roce`: an
//! 802.1Q tag with the frame's priority, IPv4 from host to host ([`host_ipv4`]), the QP's `dscp` (data and replies, default 26) or `dcqcn.cnp_dscp` (CNPs, default 48; a workload's QPs: the defaults), the frame's ECN field, UDP from
//! the flow's source port to 4791, BTH with the flow's id as destination QP and the packet's
//! PSN, AckReq and SEND First/Middle/Last/Only opcode, AETH on ACK/NAK (NAK: PSN sequence
//! error), the CNP's 16 reserved bytes, a zero payload and a computed ICRC; every RoCEv2 frame
//! is captured whole (a cut one is "[Malformed Packet]" to Wireshark, whose InfiniBand
//! dissector reads the payload and ICRC the UDP length promises). Data packets of QCN QPs carry an
//! 802.1Qau CN-TAG (EtherType 0x22E9, flow id) after the 802.1Q tag. CNMs are 802.1Qau CNM
//! frames (EtherType 0x22E7) from the congestion point's port address to the sampled
//! frame's source, with its QntzFb, offset and delta, the sampled frame's priority and
//! destination, and CPID = the port address, the priority and 0. IRN's SACKs have no wire
//! format in RoCEv2: they are written as ACKs of their cumulative PSN. Addresses: hosts
//! are `12:00:<node id, 4 bytes>` ([`host_address`]); MAC Control frames come from the port's
//! station address `02:00:<port id, 4 bytes>` to 01-80-C2-00-00-01. FCS is not captured.
//!
//! Every Enhanced Packet Block says the frame's original length without FCS; its captured
//! length is the bytes written (the whole frame, but for plain data frames), and the
//! interface's snaplen is 0 (no limit), as pcapng means them.

use std::borrow::Cow;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use lossless_files::{AtomicFile, Commit};
use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;
use lossless_wire::ethernet::{EtherType, EthernetAddress, EthernetRepr, VlanTag, VlanTags};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn as WireEcn, IpRepr, Ipv4Repr};
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use lossless_wire::qcn::{CnmFrameRepr, CnmRepr, ETHERTYPE_CN_TAG, EncapsulatedMsdu};
use lossless_wire::roce::{AethRepr, Envelope, RoceFrameRepr, Syndrome};
use pcap_file::DataLink;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};

use crate::config::SimConfig;
use crate::frame::{Ecn, Frame, FrameKind, NodeId, PortId, flags};
use crate::observer::{CcField, Observer, WireFrame};

/// EtherType of simulated data frames (IEEE 802 local experimental EtherType 1).
pub const DATA_ETHERTYPE: u16 = 0x88B5;
/// Bytes of each data frame kept in the capture.
pub const DATA_SNAPLEN: usize = 64;
/// DSCP of RoCEv2 data packets and replies of a QP that gives none (ConnectX's usual RoCE
/// DSCP); a QP's own is its `dscp`.
pub const ROCE_DSCP: u8 = crate::config::qos::ROCE_DSCP;
/// DSCP of CNPs of a QP that gives none (ConnectX `np_cnp_dscp` default).
pub const CNP_DSCP: u8 = crate::config::qos::CNP_DSCP;

/// The IPv4 address of host `node` in captures: `10.` and the low 24 bits of the node id + 1
/// (node 0 is 10.0.0.1).
pub fn host_ipv4(node: NodeId) -> [u8; 4] {
    let n = node.wrapping_add(1).to_be_bytes();
    [10, n[1], n[2], n[3]]
}

/// The address of host `node` in captures: `12:00:<node id, 4 bytes>`.
///
/// A locally administered unicast address (U/L bit set, I/G clear) in the AAI quadrant of
/// IEEE 802c's Structured Local Address Plan (second hex digit 2: administratively assigned),
/// which names no vendor: Wireshark's `manuf` has no `12:` prefix and its `wka` none either,
/// whereas it names `02-01-…` to `02-20-…` (/16 each) "MS-NLB-PhysServer-NN", so the hosts'
/// former `02:01:` addresses read as Microsoft NLB servers. Ports keep `02:00:`, which names
/// nothing either ([`port_address`]).
pub fn host_address(node: NodeId) -> [u8; 6] {
    let n = node.to_be_bytes();
    [0x12, 0x00, n[0], n[1], n[2], n[3]]
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

/// The error of the pcapng writer on `path`: an I/O failure keeps the system's reason (the
/// crate's own text for it is "Error reading bytes", even when writing).
fn pcap_error(path: &Path, e: pcap_file::PcapError) -> PcapError {
    match e {
        pcap_file::PcapError::IoError(source) => PcapError::Io {
            path: path.to_path_buf(),
            source,
        },
        other => PcapError::Pcap {
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    }
}

/// Writes `DIR/<node>.<port>-to-<peer>.pcapng` for every port; each file is written beside
/// its final name and renamed into place by [`PcapSink::finish`], so a failed run leaves no
/// half capture.
pub struct PcapSink {
    writers: Vec<(PathBuf, PcapNgWriter<BufWriter<AtomicFile>>)>,
    error: Option<PcapError>,
    buf: Vec<u8>,
    /// Per node, its ports in local order (a CNM names its congestion point by local index).
    node_ports: Vec<Vec<PortId>>,
    /// Per flow: its UDP source port, whether its data carries a CN-TAG, its source and
    /// destination; flows made at run time by workloads are not here (their frames get port
    /// 10000, no CN-TAG, and CNMs about them the CNM's own addresses).
    flow_info: Vec<FlowInfo>,
    /// The congestion-control field of the data packet a port starts next
    /// ([`Observer::cc_field`]), written at the start of its payload.
    pending_field: Option<(PortId, CcField)>,
}

impl PcapSink {
    /// The file names [`PcapSink::create`] writes for `config`, one per port in the
    /// simulator's port order (link i has ports 2i at `a` and 2i + 1 at `b`): node names go
    /// through [`lossless_files::name_part`], so every name is one file in the directory.
    pub fn file_names(config: &SimConfig) -> Vec<String> {
        let mut names = Vec::with_capacity(config.links.len() * 2);
        let mut local = vec![0u32; config.nodes.len()];
        for link in &config.links {
            for (me, peer) in [(link.a, link.b), (link.b, link.a)] {
                // the names are data: never a path (a scenario's names are checked when it
                // loads; a configuration built otherwise is escaped here all the same)
                names.push(format!(
                    "{}.{}-to-{}.pcapng",
                    lossless_files::name_part(&config.nodes[me as usize].name),
                    local[me as usize],
                    lossless_files::name_part(&config.nodes[peer as usize].name)
                ));
                local[me as usize] += 1;
            }
        }
        names
    }

    /// Creates the directory `dir` if it is missing (not its parents) and starts one capture
    /// per port of `config`.
    pub fn create(dir: &Path, config: &SimConfig) -> Result<Self, PcapError> {
        lossless_files::create_output_dir(dir).map_err(|e| PcapError::Io {
            path: e.path,
            source: e.source,
        })?;
        let mut writers = Vec::with_capacity(config.links.len() * 2);
        let rates = config.links.iter().flat_map(|l| [l.rate, l.rate]);
        for (name, rate) in Self::file_names(config).into_iter().zip(rates) {
            let path = dir.join(name);
            let file = AtomicFile::create(&path).map_err(|e| PcapError::Io {
                path: path.clone(),
                source: e.source,
            })?;
            let mut w = PcapNgWriter::new(BufWriter::new(file)).map_err(|e| pcap_error(&path, e))?;
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: 0,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(
                        path.file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    )),
                    InterfaceDescriptionOption::IfSpeed(rate.bps()),
                    InterfaceDescriptionOption::IfTsResol(12),
                ],
            };
            w.write_pcapng_block(idb).map_err(|e| pcap_error(&path, e))?;
            writers.push((path, w));
        }
        // each node's ports in local order (link i has ports 2i at `a` and 2i + 1 at `b`)
        let mut node_ports = vec![Vec::new(); config.nodes.len()];
        for (i, link) in config.links.iter().enumerate() {
            node_ports[link.a as usize].push(2 * i as PortId);
            node_ports[link.b as usize].push(2 * i as PortId + 1);
        }
        // UDP source ports as the simulator numbers them (10000 + index in the pair)
        let mut pairs = std::collections::HashMap::new();
        let flow_info = config
            .flows
            .iter()
            .map(|f| {
                let n = pairs.entry((f.src, f.dst)).or_insert(0u16);
                let sport = 10_000u16.wrapping_add(*n);
                *n = n.wrapping_add(1);
                FlowInfo {
                    sport,
                    cn_tag: f.transport.as_ref().is_some_and(|t| t.cc.cn_tag()),
                    dscp: f.transport.as_ref().map_or(ROCE_DSCP, |t| t.dscp),
                    cnp_dscp: f
                        .transport
                        .as_ref()
                        .and_then(|t| t.cc.cnp_dscp())
                        .unwrap_or(CNP_DSCP),
                    src: f.src,
                    dst: f.dst,
                }
            })
            .collect();
        Ok(PcapSink {
            writers,
            error: None,
            buf: vec![0; 16_384],
            pending_field: None,
            node_ports,
            flow_info,
        })
    }

    /// Whether a write failed (the error comes from [`PcapSink::finish`]).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Completes every file and renames it into place; reports the first error met while
    /// writing, if any (then no file is put in place and the temporary files are removed).
    pub fn finish(&mut self) -> Result<Vec<PathBuf>, PcapError> {
        let mut all = Commit::new();
        let files = self.stage(&mut all)?;
        all.commit().map_err(|e| PcapError::Io {
            path: e.path,
            source: e.source,
        })?;
        Ok(files)
    }

    /// Completes every file and adds it to `all`, to be put in place with the run's other
    /// outputs; reports the first error met while writing, if any (then no file is added and
    /// the temporary files are removed). Returns the files' final names.
    pub fn stage(&mut self, all: &mut Commit) -> Result<Vec<PathBuf>, PcapError> {
        if let Some(e) = self.error.take() {
            self.writers.clear();
            return Err(e);
        }
        let mut files = Vec::with_capacity(self.writers.len());
        let mut done = Vec::with_capacity(self.writers.len());
        // flush all before adding any: a full disk is found before a file is staged
        for (path, w) in std::mem::take(&mut self.writers) {
            let file = w.into_inner().into_inner().map_err(|e| PcapError::Io {
                path: path.clone(),
                source: e.into_error(),
            })?;
            done.push((path, file));
        }
        let mut staged = Commit::new();
        for (path, file) in done {
            staged.add_file(file).map_err(|e| PcapError::Io {
                path: path.clone(),
                source: e.source,
            })?;
            files.push(path);
        }
        all.append(staged);
        Ok(files)
    }

    fn bytes(&mut self, port: PortId, frame: &WireFrame) -> (usize, u32) {
        if let WireFrame::Data(f) = frame
            && f.kind != FrameKind::Plain
        {
            return self.roce_bytes(port, f);
        }
        let buf = &mut self.buf;
        buf[..128].fill(0);
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

/// What the pcap sink knows of a flow.
#[derive(Clone, Copy, Debug)]
struct FlowInfo {
    sport: u16,
    cn_tag: bool,
    src: NodeId,
    dst: NodeId,
    /// DSCP of its data packets and replies.
    dscp: u8,
    /// DSCP of its CNPs.
    cnp_dscp: u8,
}

impl PcapSink {
    /// The bytes of a RoCEv2 frame or CNM: (bytes captured, original length without FCS).
    fn roce_bytes(&mut self, port: PortId, f: &Frame) -> (usize, u32) {
        let wire_len = f.len.saturating_sub(4);
        let info = self.flow_info.get(f.flow as usize).copied();
        let (sport, cn_tag) = info.map_or((10_000, false), |i| (i.sport, i.cn_tag));
        let (dscp, cnp_dscp) = info.map_or((ROCE_DSCP, CNP_DSCP), |i| (i.dscp, i.cnp_dscp));
        let vlan = Some(VlanTag::from_tci(
            EtherType::VLAN_C_TAG,
            u16::from(f.priority) << 13,
        ));
        let ecn = match f.ecn() {
            Ecn::NotEct => WireEcn::NotEct,
            Ecn::Ect1 => WireEcn::Ect1,
            Ecn::Ect0 => WireEcn::Ect0,
            Ecn::Ce => WireEcn::Ce,
        };
        let envelope = |dscp: u8| {
            let mut ip = Ipv4Repr::udp(host_ipv4(f.src), host_ipv4(f.dst));
            ip.dscp = dscp;
            ip.ecn = ecn;
            Envelope::new(
                EthernetAddress(host_address(f.src)),
                EthernetAddress(host_address(f.dst)),
                vlan,
                IpRepr::V4(ip),
                sport,
            )
        };
        let qp = f.flow & 0x00FF_FFFF;
        let result = match f.kind {
            FrameKind::RoceData => {
                // the payload: what is left of the frame after the headers
                let headers = 14 + 4 + 20 + 8 + 12 + 4 + if cn_tag { 4 } else { 0 };
                let payload = (wire_len as usize).saturating_sub(headers);
                let r = RoceFrameRepr::rc_send(
                    envelope(dscp),
                    qp,
                    f.psn(),
                    f.has(flags::FIRST),
                    f.has(flags::LAST),
                    f.has(flags::ACK_REQ),
                    payload,
                );
                // HPCC's INT, PINT's code or TIMELY's timestamp open the payload (the ICRC
                // covers them)
                let mut field = [0u8; lossless_wire::int::INT_LEN];
                let field_len = match self.pending_field.take() {
                    Some((p, cc)) if p == port => cc_field_bytes(&cc, &mut field),
                    _ => 0,
                };
                r.emit_with_payload(&field[..field_len.min(payload)], FcsMode::Absent, &mut self.buf)
                    .map(|n| {
                        if cn_tag {
                            // the CN-TAG (EtherType 0x22E9, flow id) after the 802.1Q tag; the
                            // ICRC covers IP onwards, so it stays right
                            self.buf.copy_within(16..n, 20);
                            self.buf[16..18].copy_from_slice(&ETHERTYPE_CN_TAG.0.to_be_bytes());
                            self.buf[18..20].copy_from_slice(&(f.flow as u16).to_be_bytes());
                            n + 4
                        } else {
                            n
                        }
                    })
            }
            FrameKind::Ack | FrameKind::Nak | FrameKind::Sack => {
                let syndrome = if f.kind == FrameKind::Nak {
                    Syndrome(0x60) // NAK: PSN sequence error
                } else {
                    Syndrome(0x1F) // ACK, unlimited credits
                };
                let aeth = AethRepr {
                    syndrome,
                    msn: f.msn(),
                };
                RoceFrameRepr::rc_ack(envelope(dscp), qp, f.psn(), aeth).emit(FcsMode::Absent, &mut self.buf)
            }
            FrameKind::Cnp => RoceFrameRepr::cnp(envelope(cnp_dscp), qp).emit(FcsMode::Absent, &mut self.buf),
            FrameKind::Cnm => {
                let c = f.cnm_feedback();
                let cp_port = self
                    .node_ports
                    .get(f.src as usize)
                    .and_then(|p| p.get(c.cp_port as usize))
                    .copied()
                    .unwrap_or(0);
                let a = port_address(cp_port);
                // the sampled frame went from the CNM's destination to the flow's other end
                let sampled_dst = match info {
                    Some(i) if i.src == f.dst => i.dst,
                    Some(i) => i.src,
                    None => f.dst,
                };
                let cnm = CnmRepr {
                    reserved_v: 0,
                    qntz_fb: c.qntz_fb,
                    cpid: [a[0], a[1], a[2], a[3], a[4], a[5], c.sampled_priority, 0],
                    q_offset: c.q_offset,
                    q_delta: c.q_delta,
                    encapsulated_priority: c.sampled_priority,
                    encapsulated_priority_reserved: 0,
                    encapsulated_dst: EthernetAddress(host_address(sampled_dst)),
                    encapsulated: EncapsulatedMsdu::truncating(&[]),
                };
                CnmFrameRepr::new(
                    EthernetAddress(a),
                    EthernetAddress(host_address(f.dst)),
                    vlan,
                    None,
                    cnm,
                )
                .emit(FcsMode::Absent, &mut self.buf)
            }
            FrameKind::Plain => Ok(0),
        };
        match result {
            // never more captured than the frame's length (pcapng's captured ≤ original)
            Ok(n) => (n.min(wire_len as usize), wire_len),
            Err(_) => (0, wire_len),
        }
    }
}

/// Writes `field` as a data packet carries it into `out`; returns its length: HPCC's 42-byte
/// INT field (`lossless_wire::int`), PINT's 1- or 2-byte code (`lossless_wire::pint`),
/// TIMELY's 8-byte timestamp (ns, little-endian, as ns-3's `WriteU64` writes it).
fn cc_field_bytes(field: &CcField, out: &mut [u8; lossless_wire::int::INT_LEN]) -> usize {
    match field {
        CcField::Int(h) => h.emit(out).map_or(0, |()| lossless_wire::int::INT_LEN),
        CcField::Pint(code, width) => code.emit(out, *width).map_or(0, |()| width.bytes()),
        CcField::Timestamp(ns) => {
            out[..8].copy_from_slice(&ns.to_le_bytes());
            8
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
    const CC_FIELDS: bool = true;
    fn cc_field(&mut self, port: PortId, field: &CcField) {
        self.pending_field = Some((port, *field));
    }
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, _last_bit: Instant) {
        if self.error.is_some() || matches!(frame, WireFrame::Lldp { .. }) {
            return; // LLDP frames come whole through `lldp_tx`
        }
        let (caplen, original_len) = self.bytes(port, frame);
        let Some((path, w)) = self.writers.get_mut(port as usize) else {
            return;
        };
        if let Err(e) = w.write_pcapng_block(packet(start, original_len, &self.buf[..caplen])) {
            self.error = Some(pcap_error(path, e));
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
            self.error = Some(pcap_error(path, e));
        }
    }
}
