//! The RoCEv2 invariant CRC (ICRC): CRC-32 (the Ethernet polynomial, as crc32fast computes
//! it) over eight bytes of 0xFF standing for the absent InfiniBand LRH, then the IP header, UDP
//! header, BTH, extension headers and payload with every field a router may change masked
//! to ones: IPv4 ToS (DSCP + ECN), TTL and header checksum; IPv6 Traffic Class, Flow Label
//! and Hop Limit; the UDP checksum; the BTH's FECN, BECN and resv6 byte. (InfiniBand Annex
//! A17.4.1; the same masking as Linux rxe `rxe_icrc_hdr` and scapy `scapy.contrib.roce`.)
//!
//! The ICRC goes on the wire least significant byte first, like the Ethernet FCS: the four
//! bytes after the payload are `crc.to_le_bytes()`. Wireshark and scapy show those bytes read
//! big-endian (a CNP captured on a ConnectX-4 Lx ends `82 fd 00 2a`: tshark shows
//! `infiniband.invariant.crc` 0x82fd002a, the CRC value is 0x2a00fd82).

use core::fmt;

use crate::ip::{IPV4_MAX_LEN, IPV4_MIN_LEN, IPV6_LEN};
use crate::roce::bth::BTH_LEN;
use crate::udp;
use crate::{Error, ErrorKind, Result};

/// Length of the ICRC.
pub const ICRC_LEN: usize = 4;

const CTX: &str = "RoCEv2 packet";

/// The ICRC of `packet`: the bytes from the first byte of the IPv4 or IPv6 header through the
/// last payload byte (without the ICRC). Errors when `packet` is shorter than its IP header,
/// UDP header and BTH, or does not start with IP version 4 or 6.
pub fn compute(packet: &[u8]) -> Result<u32> {
    IcrcEngine::new().compute(packet)
}

/// An ICRC calculator that detects the CPU's CRC features once and starts from a state that
/// has already absorbed the eight 0xFF bytes.
#[derive(Clone)]
pub struct IcrcEngine {
    start: crc32fast::Hasher,
}

impl fmt::Debug for IcrcEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IcrcEngine")
    }
}

impl Default for IcrcEngine {
    fn default() -> Self {
        IcrcEngine::new()
    }
}

impl IcrcEngine {
    /// A calculator ready for any number of packets.
    pub fn new() -> Self {
        let mut start = crc32fast::Hasher::new();
        start.update(&[0xFF; 8]);
        IcrcEngine { start }
    }

    /// The ICRC of `packet`, as [`compute`].
    pub fn compute(&self, packet: &[u8]) -> Result<u32> {
        let version = packet.first().map(|b| b >> 4);
        let mut ip = [0u8; IPV4_MAX_LEN];
        let ip_len = match version {
            Some(4) => {
                let ihl = usize::from(packet[0] & 0x0F) * 4;
                if ihl < IPV4_MIN_LEN {
                    let kind = ErrorKind::BadValue {
                        found: (ihl / 4) as u64,
                        allowed: "5..=15 (32-bit words)",
                    };
                    return Err(Error::new(0, "IPv4 header", "IHL", kind));
                }
                ihl
            }
            Some(6) => IPV6_LEN,
            found => {
                let kind = ErrorKind::BadValue {
                    found: found.unwrap_or(0).into(),
                    allowed: "4 or 6",
                };
                return Err(Error::new(0, CTX, "IP version", kind));
            }
        };
        let fixed = ip_len + udp::HEADER_LEN + BTH_LEN;
        if packet.len() < fixed {
            return Err(Error::truncated(
                0,
                CTX,
                "IP, UDP and BTH headers",
                fixed,
                packet.len(),
            ));
        }
        let ip = &mut ip[..ip_len];
        ip.copy_from_slice(&packet[..ip_len]);
        if version == Some(6) {
            ip[0] |= 0x0F; // traffic class (high nibble)
            ip[1] = 0xFF; // traffic class (low nibble), flow label
            ip[2] = 0xFF;
            ip[3] = 0xFF;
            ip[7] = 0xFF; // hop limit
        } else {
            ip[1] = 0xFF; // ToS: DSCP and ECN
            ip[8] = 0xFF; // TTL
            ip[10] = 0xFF; // header checksum
            ip[11] = 0xFF;
        }
        let mut u = [0u8; udp::HEADER_LEN];
        u.copy_from_slice(&packet[ip_len..ip_len + udp::HEADER_LEN]);
        u[6] = 0xFF; // checksum
        u[7] = 0xFF;
        let at = ip_len + udp::HEADER_LEN;
        let mut bth = [0u8; BTH_LEN];
        bth.copy_from_slice(&packet[at..at + BTH_LEN]);
        bth[4] = 0xFF; // FECN, BECN, resv6
        let mut h = self.start.clone();
        h.update(ip);
        h.update(&u);
        h.update(&bth);
        h.update(&packet[fixed..]);
        Ok(h.finalize())
    }
}
