//! UDP headers, decoded and encoded by etherparse, and the UDP checksum over IPv4 or IPv6.

use etherparse::{UdpHeader, UdpHeaderSlice};

use crate::ip::IpRepr;
use crate::{Error, ErrorKind, Result};

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;
/// The UDP destination port of RoCEv2 (IANA, InfiniBand Annex A17).
pub const ROCEV2_PORT: u16 = 4791;

const CTX: &str = "UDP header";

/// An owned UDP header: the ports. The length follows from the payload; the checksum is
/// chosen at emit time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdpRepr {
    /// Source port (tshark `udp.srcport`).
    pub src_port: u16,
    /// Destination port (tshark `udp.dstport`).
    pub dst_port: u16,
}

/// What `parse` read besides the ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdpInfo {
    /// The length field: header plus payload, in bytes (at least 8).
    pub length: usize,
    /// The checksum field as found (0: not computed, allowed over IPv4 and for RoCEv2).
    pub checksum: u16,
}

impl UdpRepr {
    /// Parses the UDP header at the start of `bytes`. Errors: fewer than 8 bytes, or a length
    /// field below 8.
    pub fn parse(bytes: &[u8]) -> Result<(UdpRepr, UdpInfo)> {
        let s = UdpHeaderSlice::from_slice(bytes)
            .map_err(|e| Error::truncated(0, CTX, "header", e.required_len, e.len))?;
        let length = usize::from(s.length());
        if length < HEADER_LEN {
            let kind = ErrorKind::BadLength {
                found: length,
                allowed: "at least 8 (the header)",
            };
            return Err(Error::new(4, CTX, "length", kind));
        }
        let repr = UdpRepr {
            src_port: s.source_port(),
            dst_port: s.destination_port(),
        };
        Ok((
            repr,
            UdpInfo {
                length,
                checksum: s.checksum(),
            },
        ))
    }

    /// Writes the header for `payload_len` bytes of payload with checksum field `checksum` at
    /// the start of `buf`; returns 8. Refuses a payload above 65527 bytes.
    pub fn emit(&self, payload_len: usize, checksum: u16, buf: &mut [u8]) -> Result<usize> {
        let h = self.header(payload_len, checksum)?;
        let Some(out) = buf.get_mut(..HEADER_LEN) else {
            return Err(Error::truncated(0, CTX, "buffer", HEADER_LEN, buf.len()));
        };
        out.copy_from_slice(&h.to_bytes());
        Ok(HEADER_LEN)
    }

    fn header(&self, payload_len: usize, checksum: u16) -> Result<UdpHeader> {
        let length = payload_len
            .checked_add(HEADER_LEN)
            .and_then(|l| u16::try_from(l).ok())
            .ok_or_else(|| {
                let kind = ErrorKind::BadLength {
                    found: payload_len,
                    allowed: "a payload of at most 65527 bytes",
                };
                Error::new(4, CTX, "length", kind)
            })?;
        Ok(UdpHeader {
            source_port: self.src_port,
            destination_port: self.dst_port,
            length,
            checksum,
        })
    }

    /// The checksum of this header with `payload` over `ip` (the pseudo-header's addresses),
    /// as the sender would write it: a computed zero is sent as 0xFFFF.
    pub fn checksum(&self, ip: &IpRepr, payload: &[u8]) -> Result<u16> {
        let h = self.header(payload.len(), 0)?;
        let too_big = |_| {
            let kind = ErrorKind::BadLength {
                found: payload.len(),
                allowed: "a payload of at most 65527 bytes",
            };
            Error::new(4, CTX, "length", kind)
        };
        match ip {
            IpRepr::V4(v4) => h.calc_checksum_ipv4_raw(v4.src, v4.dst, payload).map_err(too_big),
            IpRepr::V6(v6) => h.calc_checksum_ipv6_raw(v6.src, v6.dst, payload).map_err(too_big),
        }
    }
}
