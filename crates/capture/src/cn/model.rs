//! The decoded form of IP, UDP, RoCEv2 and 802.1Qau (CN-TAG, CNM) headers, as `lossless
//! decode` prints them. Each field's doc names the tshark field it matches, where tshark has
//! one (the proof tests compare them); tshark has no CN-TAG or CNM dissector.

use serde::Serialize;

/// An IPv4 or IPv6 header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpRecord {
    /// 4 or 6 (tshark `ip.version`, `ipv6.version`).
    pub version: u8,
    /// Source address (`ip.src`, `ipv6.src`).
    pub src: String,
    /// Destination address (`ip.dst`, `ipv6.dst`).
    pub dst: String,
    /// DSCP (`ip.dsfield.dscp`, `ipv6.tclass.dscp`).
    pub dscp: u8,
    /// ECN code point, 0..=3 (`ip.dsfield.ecn`, `ipv6.tclass.ecn`).
    pub ecn: u8,
    /// RFC 3168's name of the code point: `Not-ECT`, `ECT(1)`, `ECT(0)` or `CE`.
    pub ecn_name: String,
    /// IPv4 time to live or IPv6 hop limit (`ip.ttl`, `ipv6.hlim`).
    pub ttl: u8,
    /// IPv4 protocol or IPv6 next header (`ip.proto`, `ipv6.nxt`).
    pub protocol: u8,
    /// Header length in bytes (`ip.hdr_len`; 40 for IPv6).
    pub header_bytes: usize,
    /// Payload length the header announces, in bytes (IPv4 total length − header,
    /// `ipv6.plen`).
    pub payload_bytes: usize,
    /// IPv4 identification (`ip.id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identification: Option<u16>,
    /// IPv4 DF flag (`ip.flags.df`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dont_fragment: Option<bool>,
    /// IPv4 MF flag (`ip.flags.mf`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more_fragments: Option<bool>,
    /// IPv4 fragment offset in 8-byte units (`ip.frag_offset` shows bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragment_offset: Option<u16>,
    /// IPv4 header checksum (`ip.checksum`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum: Option<u16>,
    /// Whether the IPv4 header checksum is right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum_ok: Option<bool>,
    /// IPv6 Traffic Class (`ipv6.tclass`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic_class: Option<u8>,
    /// IPv6 flow label (`ipv6.flow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_label: Option<u32>,
}

/// A UDP header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UdpRecord {
    /// Source port (`udp.srcport`).
    pub src_port: u16,
    /// Destination port (`udp.dstport`); 4791 is RoCEv2.
    pub dst_port: u16,
    /// Length field: header and payload in bytes (`udp.length`).
    pub length: usize,
    /// Checksum as found (`udp.checksum`); 0 means none was computed.
    pub checksum: u16,
    /// Whether a non-zero checksum is right; absent when it is zero or the datagram was not
    /// captured whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum_ok: Option<bool>,
}

/// A RoCEv2 packet: BTH, extension headers, payload size and ICRC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoceRecord {
    /// The Base Transport Header (`infiniband.bth`).
    pub bth: BthRecord,
    /// ACK Extended Transport Header (`infiniband.aeth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeth: Option<AethRecord>,
    /// RDMA Extended Transport Header (`infiniband.reth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reth: Option<RethRecord>,
    /// Datagram Extended Transport Header (`infiniband.deth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deth: Option<DethRecord>,
    /// Reliable Datagram EE context (`infiniband.rdeth.eecnxt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdeth_ee_context: Option<u32>,
    /// Immediate data (`infiniband.immdt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immediate: Option<u32>,
    /// IETH: the remote key to invalidate (`infiniband.ieth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalidate_r_key: Option<u32>,
    /// AtomicETH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atomic_eth: Option<AtomicEthRecord>,
    /// AtomicAckETH: the original remote data (`infiniband.atomicacketh.origremdt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atomic_ack_original: Option<u64>,
    /// CNP: whether its 16 reserved bytes are all zero, as they must be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_reserved_zero: Option<bool>,
    /// Payload bytes between the headers and the ICRC, pad bytes included (from the IP
    /// length, so known even when the capture cut the packet short).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload_bytes: Option<usize>,
    /// The ICRC as found, its four wire bytes read big-endian as Wireshark shows it
    /// (`infiniband.invariant.crc`); absent when not captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icrc: Option<u32>,
    /// The ICRC computed over the packet, in the same byte order as `icrc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icrc_computed: Option<u32>,
    /// Whether the ICRC found is the one computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icrc_ok: Option<bool>,
    /// Where the payload starts in the frame (a packet whose opcode carries one), for
    /// [`crate::cn::decode::decode_cc_field`]; not part of the record's output.
    #[serde(skip)]
    pub payload_at: Option<usize>,
    /// The congestion-control field the payload opens with, where `lossless decode
    /// --cc-field` says which one the capture carries (nothing in the packet says it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc_field: Option<CcFieldRecord>,
}

/// A congestion-control field at the start of a RoCEv2 data payload, as the HPCC ns-3 fork's
/// packets carry it after their headers and `lossless sim --pcap` writes it (MODEL.md §9.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CcFieldRecord {
    /// HPCC's 42-byte INT field (`lossless_wire::int`).
    Int {
        /// Switches that stamped the packet (records in slots `nhop` mod 5).
        nhop: u16,
        /// The records, in slot order (at most 5).
        hops: Vec<IntHopRecord>,
    },
    /// HPCC-PINT's code (`lossless_wire::pint`).
    Pint {
        /// The code: the path's largest utilisation, log base `log_base`.
        code: u16,
        /// Its width on the wire, bytes.
        bytes: u8,
        /// The utilisation it stands for, b^code / 512, in millionths.
        utilisation_ppm: u64,
    },
    /// TIMELY's send timestamp (little-endian, as ns-3 writes it).
    Timestamp {
        /// When the sender's NIC started the packet, ns.
        send_time_ns: u64,
    },
}

/// One HPCC INT record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IntHopRecord {
    /// The port's line rate, b/s.
    pub line_rate_bps: u64,
    /// When the port started the packet, ns modulo 2^24.
    pub time_ns: u64,
    /// Bytes the port had sent, in 128·`INT_MULTI`-byte units (modulo 2^20).
    pub bytes_units: u64,
    /// The port's egress queue, in 80·`INT_MULTI`-byte units.
    pub qlen_units: u64,
}

/// The BTH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BthRecord {
    /// Opcode (`infiniband.bth.opcode`; 129 is a CNP).
    pub opcode: u8,
    /// The opcode's name: `RC SEND Only`, `RC Acknowledge`, `CNP`, `reserved 0x15`…
    pub opcode_name: String,
    /// Solicited Event (`infiniband.bth.se`).
    pub se: bool,
    /// MigReq (`infiniband.bth.m`).
    pub m: bool,
    /// Pad count (`infiniband.bth.padcnt`).
    pub padcnt: u8,
    /// Transport header version (`infiniband.bth.tver`).
    pub tver: u8,
    /// Partition key (`infiniband.bth.p_key`).
    pub p_key: u16,
    /// FECN (no tshark 4.0 field: it is the top bit of the byte after the P_Key).
    pub fecn: bool,
    /// BECN (the next bit; set in a CNP).
    pub becn: bool,
    /// The six reserved bits after BECN.
    pub resv6: u8,
    /// Destination QP (`infiniband.bth.destqp`).
    pub dest_qp: u32,
    /// AckReq (`infiniband.bth.a`).
    pub ack_req: bool,
    /// The seven reserved bits after AckReq (`infiniband.bth.reserved7`).
    pub resv7: u8,
    /// PSN (`infiniband.bth.psn`).
    pub psn: u32,
}

/// The AETH with its syndrome decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AethRecord {
    /// Syndrome byte (`infiniband.aeth.syndrome`).
    pub syndrome: u8,
    /// Syndrome kind bits 6–5 (`infiniband.aeth.syndrome.opcode`): 0 ACK, 1 RNR NAK, 3 NAK.
    pub kind_code: u8,
    /// `ack`, `rnr_nak`, `nak` or `reserved`.
    pub kind: String,
    /// ACK: credit count, 31 = invalid (`infiniband.aeth.syndrome.credit_count`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_count: Option<u8>,
    /// RNR NAK: timer code (`infiniband.aeth.syndrome.timer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<u8>,
    /// NAK: code (`infiniband.aeth.syndrome.error_code`): 0 PSN sequence error, 1 invalid
    /// request, 2 remote access error, 3 remote operational error, 4 invalid RD request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nak_code: Option<u8>,
    /// NAK: the code's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nak: Option<String>,
    /// Message sequence number (`infiniband.aeth.msn`).
    pub msn: u32,
}

/// The RETH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RethRecord {
    /// Virtual address (`infiniband.reth.va`).
    pub va: u64,
    /// Remote key (`infiniband.reth.r_key`).
    pub r_key: u32,
    /// DMA length in bytes (`infiniband.reth.dmalen`).
    pub dma_len: u32,
}

/// The DETH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DethRecord {
    /// Queue key (`infiniband.deth.q_key`).
    pub q_key: u32,
    /// Source QP (`infiniband.deth.srcqp`).
    pub src_qp: u32,
}

/// The AtomicETH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtomicEthRecord {
    /// Virtual address.
    pub va: u64,
    /// Remote key.
    pub r_key: u32,
    /// Swap (or add) data (`infiniband.atomiceth.swapdt`).
    pub swap: u64,
    /// Compare data (`infiniband.atomiceth.cmpdt`).
    pub compare: u64,
}

/// An 802.1Qau CN-TAG.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CnTagRecord {
    /// Flow ID (RPID).
    pub flow_id: u16,
    /// EtherType after the CN-TAG.
    pub ethertype: u16,
}

/// An 802.1Qau CNM PDU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CnmRecord {
    /// Version (0).
    pub version: u8,
    /// The six reserved bits after the version.
    pub reserved_v: u8,
    /// Quantized feedback, 0..=63.
    pub qntz_fb: u8,
    /// Congestion point identifier, eight bytes as hex.
    pub cpid: String,
    /// cnmQOffset (signed).
    pub q_offset: i16,
    /// cnmQDelta (signed).
    pub q_delta: i16,
    /// Priority of the sampled frame.
    pub encapsulated_priority: u8,
    /// Destination address of the sampled frame.
    pub encapsulated_dst: String,
    /// Encapsulated MSDU length field: bytes of the sampled frame's MSDU carried.
    pub encapsulated_msdu_length: u16,
    /// Those bytes, as hex.
    pub encapsulated_msdu: String,
}
