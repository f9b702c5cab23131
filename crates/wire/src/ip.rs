//! IPv4 and IPv6 headers with their DSCP and ECN fields, decoded and encoded by etherparse and
//! wrapped in this crate's repr style and [`Error`].
//!
//! [`Ipv4Repr`] and [`Ipv6Repr`] hold what a sender chooses; the fields that follow from the
//! payload (IPv4 total length and header checksum, IPv6 payload length) are computed by
//! `emit` and reported by `parse` in [`IpInfo`], with whether the IPv4 checksum is right.
//! Only the fixed IPv6 header is decoded: an extension header shows as its `next_header`.

use core::fmt;

use etherparse::err::{LenError, ipv4, ipv6};
use etherparse::{
    IpDscp, IpEcn, IpFragOffset, IpNumber, Ipv4Header, Ipv4HeaderSlice, Ipv6FlowLabel, Ipv6Header,
};

use crate::ethernet::EtherType;
use crate::{Error, ErrorKind, Result};

/// IP protocol / next-header number of UDP.
pub const PROTOCOL_UDP: u8 = 17;
/// Length of an IPv4 header without options.
pub const IPV4_MIN_LEN: usize = 20;
/// Length of an IPv4 header with the most options (IHL 15).
pub const IPV4_MAX_LEN: usize = 60;
/// Length of the fixed IPv6 header.
pub const IPV6_LEN: usize = 40;

const V4: &str = "IPv4 header";
const V6: &str = "IPv6 header";

/// The two ECN bits of the IPv4 ToS / IPv6 Traffic Class octet (RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Ecn {
    /// 0b00: the transport is not ECN-capable.
    #[default]
    NotEct,
    /// 0b01: ECN-capable transport, ECT(1).
    Ect1,
    /// 0b10: ECN-capable transport, ECT(0).
    Ect0,
    /// 0b11: congestion experienced (set by a marking switch).
    Ce,
}

impl Ecn {
    /// The code point in the low two bits of `bits`.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// The two-bit code point.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }
    /// Whether the sender declared an ECN-capable transport (ECT(0), ECT(1) or CE).
    pub const fn is_capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
    /// RFC 3168's name: `Not-ECT`, `ECT(1)`, `ECT(0)` or `CE`.
    pub const fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "Not-ECT",
            Ecn::Ect1 => "ECT(1)",
            Ecn::Ect0 => "ECT(0)",
            Ecn::Ce => "CE",
        }
    }
    fn to_etherparse(self) -> IpEcn {
        match self {
            Ecn::NotEct => IpEcn::NotEct,
            Ecn::Ect1 => IpEcn::Ect1,
            Ecn::Ect0 => IpEcn::Ect0,
            Ecn::Ce => IpEcn::CongestionExperienced,
        }
    }
}

impl fmt::Display for Ecn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The options of an IPv4 header (0 to 40 bytes, a multiple of 4), stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Options {
    bytes: [u8; 40],
    len: u8,
}

impl Default for Ipv4Options {
    fn default() -> Self {
        Ipv4Options {
            bytes: [0; 40],
            len: 0,
        }
    }
}

impl Ipv4Options {
    /// `data` as options, or an error when it is longer than 40 bytes or not a multiple of 4.
    pub fn new(data: &[u8]) -> Result<Self> {
        if data.len() > 40 || !data.len().is_multiple_of(4) {
            let kind = ErrorKind::BadLength {
                found: data.len(),
                allowed: "0 to 40 bytes, a multiple of 4",
            };
            return Err(Error::new(IPV4_MIN_LEN, V4, "options", kind));
        }
        let mut bytes = [0u8; 40];
        bytes[..data.len()].copy_from_slice(data);
        Ok(Ipv4Options {
            bytes,
            len: data.len() as u8,
        })
    }
    /// The option bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for Ipv4Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ipv4Options(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// An owned IPv4 header, without the fields `emit` derives (total length, checksum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr {
    /// Differentiated Services code point, 0..=63 (tshark `ip.dsfield.dscp`).
    pub dscp: u8,
    /// ECN code point (tshark `ip.dsfield.ecn`).
    pub ecn: Ecn,
    /// Identification.
    pub identification: u16,
    /// DF flag.
    pub dont_fragment: bool,
    /// MF flag.
    pub more_fragments: bool,
    /// Fragment offset in 8-byte units, 0..=8191.
    pub fragment_offset: u16,
    /// Time to live.
    pub ttl: u8,
    /// Protocol of the payload (17 = UDP).
    pub protocol: u8,
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Options (usually none).
    pub options: Ipv4Options,
}

/// What `parse` read besides the repr: lengths and the checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpInfo {
    /// Header length in bytes (IPv4 IHL × 4; 40 for IPv6).
    pub header_len: usize,
    /// Bytes of payload the header announces (IPv4 total length − header, IPv6 payload length).
    pub payload_len: usize,
    /// IPv4 header checksum as found (0 for IPv6).
    pub checksum: u16,
    /// Whether the IPv4 header checksum is right (always true for IPv6, which has none).
    pub checksum_ok: bool,
}

fn len_error(e: &LenError, context: &'static str, field: &'static str) -> Error {
    Error::truncated(e.layer_start_offset, context, field, e.required_len, e.len)
}

impl Ipv4Repr {
    /// A header for UDP from `src` to `dst`: DSCP 0, Not-ECT, identification 0, DF set, TTL 64.
    pub const fn udp(src: [u8; 4], dst: [u8; 4]) -> Self {
        Ipv4Repr {
            dscp: 0,
            ecn: Ecn::NotEct,
            identification: 0,
            dont_fragment: true,
            more_fragments: false,
            fragment_offset: 0,
            ttl: 64,
            protocol: PROTOCOL_UDP,
            src,
            dst,
            options: Ipv4Options {
                bytes: [0; 40],
                len: 0,
            },
        }
    }

    /// Parses the IPv4 header at the start of `bytes`. The payload may be shorter than the
    /// total length announces (a truncated capture): compare [`IpInfo::payload_len`] with
    /// what is there. Errors: version not 4, IHL below 5, header truncated, total length
    /// smaller than the header.
    pub fn parse(bytes: &[u8]) -> Result<(Ipv4Repr, IpInfo)> {
        let slice = Ipv4HeaderSlice::from_slice(bytes).map_err(|e| match e {
            ipv4::HeaderSliceError::Len(l) => len_error(&l, V4, "header"),
            ipv4::HeaderSliceError::Content(ipv4::HeaderError::UnexpectedVersion { version_number }) => {
                let kind = ErrorKind::BadValue {
                    found: version_number.into(),
                    allowed: "4",
                };
                Error::new(0, V4, "version", kind)
            }
            ipv4::HeaderSliceError::Content(ipv4::HeaderError::HeaderLengthSmallerThanHeader { ihl }) => {
                let kind = ErrorKind::BadValue {
                    found: ihl.into(),
                    allowed: "5..=15 (32-bit words)",
                };
                Error::new(0, V4, "IHL", kind)
            }
        })?;
        let h = slice.to_header();
        let header_len = h.header_len();
        let total = usize::from(h.total_len);
        if total < header_len {
            let kind = ErrorKind::BadLength {
                found: total,
                allowed: "at least the header length (IHL × 4)",
            };
            return Err(Error::new(2, V4, "total length", kind));
        }
        let repr = Ipv4Repr {
            dscp: h.dscp.value(),
            ecn: Ecn::from_bits(h.ecn.value()),
            identification: h.identification,
            dont_fragment: h.dont_fragment,
            more_fragments: h.more_fragments,
            fragment_offset: h.fragment_offset.value(),
            ttl: h.time_to_live,
            protocol: h.protocol.0,
            src: h.source,
            dst: h.destination,
            options: Ipv4Options::new(h.options.as_slice())?,
        };
        let info = IpInfo {
            header_len,
            payload_len: total - header_len,
            checksum: h.header_checksum,
            checksum_ok: h.calc_header_checksum() == h.header_checksum,
        };
        Ok((repr, info))
    }

    /// Header length in bytes (20 plus the options).
    pub fn buffer_len(&self) -> usize {
        IPV4_MIN_LEN + self.options.as_slice().len()
    }

    fn to_etherparse(self, payload_len: usize) -> Result<Ipv4Header> {
        let bad =
            |field, found: u64, allowed| Error::new(1, V4, field, ErrorKind::BadValue { found, allowed });
        let dscp = IpDscp::try_new(self.dscp).map_err(|_| bad("DSCP", self.dscp.into(), "0..=63"))?;
        let frag = IpFragOffset::try_new(self.fragment_offset)
            .map_err(|_| bad("fragment offset", self.fragment_offset.into(), "0..=8191").at(5))?;
        let mut h = Ipv4Header {
            dscp,
            ecn: self.ecn.to_etherparse(),
            total_len: 0,
            identification: self.identification,
            dont_fragment: self.dont_fragment,
            more_fragments: self.more_fragments,
            fragment_offset: frag,
            time_to_live: self.ttl,
            protocol: IpNumber(self.protocol),
            header_checksum: 0,
            source: self.src,
            destination: self.dst,
            options: Default::default(),
        };
        h.options = etherparse::Ipv4Options::try_from(self.options.as_slice()).map_err(|_| {
            let kind = ErrorKind::BadLength {
                found: self.options.as_slice().len(),
                allowed: "0 to 40 bytes, a multiple of 4",
            };
            Error::new(IPV4_MIN_LEN, V4, "options", kind)
        })?;
        h.set_payload_len(payload_len).map_err(|_| {
            let kind = ErrorKind::BadLength {
                found: payload_len,
                allowed: "a total length of at most 65535 bytes",
            };
            Error::new(2, V4, "total length", kind)
        })?;
        h.header_checksum = h.calc_header_checksum();
        Ok(h)
    }

    /// Writes the header for `payload_len` bytes of payload at the start of `buf` (total
    /// length and checksum computed) and returns its length. Refuses a DSCP above 63, a
    /// fragment offset above 8191 and a total length above 65535.
    pub fn emit(&self, payload_len: usize, buf: &mut [u8]) -> Result<usize> {
        let h = self.to_etherparse(payload_len)?;
        let bytes = h.to_bytes();
        let Some(out) = buf.get_mut(..bytes.len()) else {
            return Err(Error::truncated(0, V4, "buffer", bytes.len(), buf.len()));
        };
        out.copy_from_slice(&bytes);
        Ok(bytes.len())
    }
}

/// An owned IPv6 fixed header, without the payload length `emit` derives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Repr {
    /// Differentiated Services code point, 0..=63 (the top six bits of the Traffic Class).
    pub dscp: u8,
    /// ECN code point (the low two bits of the Traffic Class).
    pub ecn: Ecn,
    /// Flow label, 0..=0xFFFFF.
    pub flow_label: u32,
    /// Next header (17 = UDP).
    pub next_header: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
}

impl Ipv6Repr {
    /// A header for UDP from `src` to `dst`: DSCP 0, Not-ECT, flow label 0, hop limit 64.
    pub const fn udp(src: [u8; 16], dst: [u8; 16]) -> Self {
        Ipv6Repr {
            dscp: 0,
            ecn: Ecn::NotEct,
            flow_label: 0,
            next_header: PROTOCOL_UDP,
            hop_limit: 64,
            src,
            dst,
        }
    }

    /// The 8-bit Traffic Class (tshark `ipv6.tclass`): DSCP and ECN.
    pub const fn traffic_class(&self) -> u8 {
        (self.dscp << 2) | self.ecn.bits()
    }

    /// Parses the fixed IPv6 header at the start of `bytes` (the payload may be truncated:
    /// compare [`IpInfo::payload_len`] with what is there). Errors: version not 6, header
    /// truncated.
    pub fn parse(bytes: &[u8]) -> Result<(Ipv6Repr, IpInfo)> {
        let (h, _) = Ipv6Header::from_slice(bytes).map_err(|e| match e {
            ipv6::HeaderSliceError::Len(l) => len_error(&l, V6, "header"),
            ipv6::HeaderSliceError::Content(ipv6::HeaderError::UnexpectedVersion { version_number }) => {
                let kind = ErrorKind::BadValue {
                    found: version_number.into(),
                    allowed: "6",
                };
                Error::new(0, V6, "version", kind)
            }
        })?;
        let repr = Ipv6Repr {
            dscp: h.traffic_class >> 2,
            ecn: Ecn::from_bits(h.traffic_class),
            flow_label: h.flow_label.value(),
            next_header: h.next_header.0,
            hop_limit: h.hop_limit,
            src: h.source,
            dst: h.destination,
        };
        let info = IpInfo {
            header_len: IPV6_LEN,
            payload_len: usize::from(h.payload_length),
            checksum: 0,
            checksum_ok: true,
        };
        Ok((repr, info))
    }

    /// Header length: 40.
    pub const fn buffer_len(&self) -> usize {
        IPV6_LEN
    }

    /// Writes the header for `payload_len` bytes of payload at the start of `buf` and returns
    /// 40. Refuses a DSCP above 63, a flow label above 0xFFFFF and a payload above 65535 bytes.
    pub fn emit(&self, payload_len: usize, buf: &mut [u8]) -> Result<usize> {
        if self.dscp > 63 {
            let kind = ErrorKind::BadValue {
                found: self.dscp.into(),
                allowed: "0..=63",
            };
            return Err(Error::new(0, V6, "DSCP", kind));
        }
        let flow_label = Ipv6FlowLabel::try_new(self.flow_label).map_err(|_| {
            let kind = ErrorKind::BadValue {
                found: self.flow_label.into(),
                allowed: "0..=0xfffff",
            };
            Error::new(1, V6, "flow label", kind)
        })?;
        let payload_length = u16::try_from(payload_len).map_err(|_| {
            let kind = ErrorKind::BadLength {
                found: payload_len,
                allowed: "at most 65535 bytes (no jumbogram)",
            };
            Error::new(4, V6, "payload length", kind)
        })?;
        let h = Ipv6Header {
            traffic_class: self.traffic_class(),
            flow_label,
            payload_length,
            next_header: IpNumber(self.next_header),
            hop_limit: self.hop_limit,
            source: self.src,
            destination: self.dst,
        };
        let Some(out) = buf.get_mut(..IPV6_LEN) else {
            return Err(Error::truncated(0, V6, "buffer", IPV6_LEN, buf.len()));
        };
        out.copy_from_slice(&h.to_bytes());
        Ok(IPV6_LEN)
    }
}

/// An IPv4 or IPv6 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpRepr {
    /// IPv4.
    V4(Ipv4Repr),
    /// IPv6.
    V6(Ipv6Repr),
}

impl IpRepr {
    /// Parses the header of the IP version `ethertype` announces (0x0800 or 0x86DD).
    pub fn parse(ethertype: EtherType, bytes: &[u8]) -> Result<(IpRepr, IpInfo)> {
        match ethertype {
            EtherType::IPV4 => Ipv4Repr::parse(bytes).map(|(r, i)| (IpRepr::V4(r), i)),
            EtherType::IPV6 => Ipv6Repr::parse(bytes).map(|(r, i)| (IpRepr::V6(r), i)),
            other => {
                let kind = ErrorKind::BadValue {
                    found: other.0.into(),
                    allowed: "0x0800 (IPv4) or 0x86dd (IPv6)",
                };
                Err(Error::new(0, "IP header", "EtherType", kind))
            }
        }
    }
    /// The EtherType that carries this header: 0x0800 or 0x86DD.
    pub const fn ethertype(&self) -> EtherType {
        match self {
            IpRepr::V4(_) => EtherType::IPV4,
            IpRepr::V6(_) => EtherType::IPV6,
        }
    }
    /// The DSCP.
    pub const fn dscp(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.dscp,
            IpRepr::V6(r) => r.dscp,
        }
    }
    /// The ECN code point.
    pub const fn ecn(&self) -> Ecn {
        match self {
            IpRepr::V4(r) => r.ecn,
            IpRepr::V6(r) => r.ecn,
        }
    }
    /// Sets the ECN code point (a marking switch sets [`Ecn::Ce`]).
    pub fn set_ecn(&mut self, ecn: Ecn) {
        match self {
            IpRepr::V4(r) => r.ecn = ecn,
            IpRepr::V6(r) => r.ecn = ecn,
        }
    }
    /// Sets the DSCP.
    pub fn set_dscp(&mut self, dscp: u8) {
        match self {
            IpRepr::V4(r) => r.dscp = dscp,
            IpRepr::V6(r) => r.dscp = dscp,
        }
    }
    /// The protocol (IPv4) or next header (IPv6) number.
    pub const fn protocol(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.protocol,
            IpRepr::V6(r) => r.next_header,
        }
    }
    /// Header length in bytes.
    pub fn buffer_len(&self) -> usize {
        match self {
            IpRepr::V4(r) => r.buffer_len(),
            IpRepr::V6(r) => r.buffer_len(),
        }
    }
    /// Writes the header for `payload_len` bytes of payload; see [`Ipv4Repr::emit`] and
    /// [`Ipv6Repr::emit`].
    pub fn emit(&self, payload_len: usize, buf: &mut [u8]) -> Result<usize> {
        match self {
            IpRepr::V4(r) => r.emit(payload_len, buf),
            IpRepr::V6(r) => r.emit(payload_len, buf),
        }
    }
}
