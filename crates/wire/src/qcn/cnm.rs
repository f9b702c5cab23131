//! The CNM PDU (802.1Q clause 33.4): what a congestion point sends back to the source of a
//! sampled frame.
//!
//! ```text
//!  0       Version(4) ReservedV(4 of 6)
//!  1       ReservedV(2 of 6) QntzFb(6)
//!  2..10   CPID (congestion point identifier)
//!  10..12  cnmQOffset (signed)
//!  12..14  cnmQDelta (signed)
//!  14..16  Encapsulated priority (3 bits, then 13 reserved)
//!  16..22  Encapsulated destination MAC address
//!  22..24  Encapsulated MSDU length
//!  24..    Encapsulated MSDU (0–64 bytes)
//! ```
//!
//! The Encapsulated MSDU length is read as the number of encapsulated bytes that follow (the
//! SystemVerilog pktlib `cnm_hdr_class` computes it so; HP/HPE FlexFabric manuals: "number of
//! bytes in the Encapsulated MSDU field"), which is also what tells them apart from the
//! Ethernet padding of a short CNM frame.

use core::fmt;

use crate::ethernet::EthernetAddress;
use crate::{Error, ErrorKind, Result};

/// Length of the CNM PDU before the encapsulated MSDU.
pub const CNM_HEADER_LEN: usize = 24;
/// Most encapsulated MSDU bytes a CNM carries.
pub const MAX_ENCAPSULATED: usize = 64;
/// The only CNM version defined.
pub const CNM_VERSION: u8 = 0;

const CTX: &str = "CNM PDU";

/// A checked zero-copy view of a CNM PDU (the bytes after its EtherType).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cnm<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Cnm<T> {
    /// Wraps `buffer` without checking; getters may panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Cnm<T> {
        Cnm { buffer }
    }
    /// Wraps `buffer` after checking it holds the 24-byte header and the encapsulated bytes
    /// its length field announces (at most 64).
    pub fn new_checked(buffer: T) -> Result<Cnm<T>> {
        let c = Cnm { buffer };
        let len = c.buffer.as_ref().len();
        if len < CNM_HEADER_LEN {
            return Err(Error::truncated(0, CTX, "header", CNM_HEADER_LEN, len));
        }
        let n = usize::from(c.encapsulated_len());
        if n > MAX_ENCAPSULATED {
            let kind = ErrorKind::BadValue {
                found: n as u64,
                allowed: "0..=64",
            };
            return Err(Error::new(22, CTX, "Encapsulated MSDU length", kind));
        }
        if len - CNM_HEADER_LEN < n {
            return Err(Error::truncated(
                CNM_HEADER_LEN,
                CTX,
                "Encapsulated MSDU",
                n,
                len - CNM_HEADER_LEN,
            ));
        }
        Ok(c)
    }
    fn b(&self, i: usize) -> u8 {
        self.buffer.as_ref()[i]
    }
    fn u16_at(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.b(at), self.b(at + 1)])
    }
    /// Version (the top four bits; must be 0).
    pub fn version(&self) -> u8 {
        self.b(0) >> 4
    }
    /// The six reserved bits between Version and QntzFb.
    pub fn reserved_v(&self) -> u8 {
        (self.u16_at(0) >> 6) as u8 & 0x3F
    }
    /// Quantized feedback, 0..=63 (how congested the CP is).
    pub fn qntz_fb(&self) -> u8 {
        self.b(1) & 0x3F
    }
    /// Congestion point identifier.
    pub fn cpid(&self) -> [u8; 8] {
        let mut c = [0u8; 8];
        c.copy_from_slice(&self.buffer.as_ref()[2..10]);
        c
    }
    /// cnmQOffset: queue size minus its set point at the sample (signed).
    pub fn q_offset(&self) -> i16 {
        self.u16_at(10) as i16
    }
    /// cnmQDelta: queue size change since the previous sample (signed).
    pub fn q_delta(&self) -> i16 {
        self.u16_at(12) as i16
    }
    /// Priority of the sampled frame (the top three bits of the field).
    pub fn encapsulated_priority(&self) -> u8 {
        self.b(14) >> 5
    }
    /// The 13 reserved bits after the encapsulated priority.
    pub fn encapsulated_priority_reserved(&self) -> u16 {
        self.u16_at(14) & 0x1FFF
    }
    /// Destination address of the sampled frame.
    pub fn encapsulated_dst(&self) -> EthernetAddress {
        let b = self.buffer.as_ref();
        EthernetAddress([b[16], b[17], b[18], b[19], b[20], b[21]])
    }
    /// Encapsulated MSDU length: how many encapsulated bytes follow.
    pub fn encapsulated_len(&self) -> u16 {
        self.u16_at(22)
    }
    /// The encapsulated bytes (the start of the sampled frame's MSDU).
    pub fn encapsulated(&self) -> &[u8] {
        &self.buffer.as_ref()[CNM_HEADER_LEN..CNM_HEADER_LEN + usize::from(self.encapsulated_len())]
    }
}

/// Up to 64 encapsulated MSDU bytes, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EncapsulatedMsdu {
    bytes: [u8; MAX_ENCAPSULATED],
    len: u8,
}

impl Default for EncapsulatedMsdu {
    fn default() -> Self {
        EncapsulatedMsdu {
            bytes: [0; MAX_ENCAPSULATED],
            len: 0,
        }
    }
}

impl EncapsulatedMsdu {
    /// The first 64 bytes of `msdu` (all of it when shorter), as a CP copies a sampled frame.
    pub fn truncating(msdu: &[u8]) -> Self {
        let n = msdu.len().min(MAX_ENCAPSULATED);
        let mut bytes = [0u8; MAX_ENCAPSULATED];
        bytes[..n].copy_from_slice(&msdu[..n]);
        EncapsulatedMsdu { bytes, len: n as u8 }
    }
    /// `msdu`, or an error when it is longer than 64 bytes.
    pub fn new(msdu: &[u8]) -> Result<Self> {
        if msdu.len() > MAX_ENCAPSULATED {
            let kind = ErrorKind::BadLength {
                found: msdu.len(),
                allowed: "at most 64 bytes",
            };
            return Err(Error::new(CNM_HEADER_LEN, CTX, "Encapsulated MSDU", kind));
        }
        Ok(EncapsulatedMsdu::truncating(msdu))
    }
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for EncapsulatedMsdu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EncapsulatedMsdu(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// An owned CNM PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CnmRepr {
    /// The six reserved bits after the version (transmitted as 0).
    pub reserved_v: u8,
    /// Quantized feedback, 0..=63.
    pub qntz_fb: u8,
    /// Congestion point identifier.
    pub cpid: [u8; 8],
    /// cnmQOffset.
    pub q_offset: i16,
    /// cnmQDelta.
    pub q_delta: i16,
    /// Priority of the sampled frame, 0..=7.
    pub encapsulated_priority: u8,
    /// The 13 reserved bits after the priority (transmitted as 0).
    pub encapsulated_priority_reserved: u16,
    /// Destination address of the sampled frame.
    pub encapsulated_dst: EthernetAddress,
    /// The start of the sampled frame's MSDU (its length goes in the length field).
    pub encapsulated: EncapsulatedMsdu,
}

impl CnmRepr {
    /// Parses a CNM PDU at the start of `bytes` (bytes after the PDU, such as padding, are
    /// ignored); returns it and its length. Errors: header truncated, version not 0,
    /// encapsulated length above 64 or beyond the buffer.
    pub fn parse(bytes: &[u8]) -> Result<(CnmRepr, usize)> {
        let c = Cnm::new_checked(bytes)?;
        if c.version() != CNM_VERSION {
            let kind = ErrorKind::BadValue {
                found: c.version().into(),
                allowed: "0",
            };
            return Err(Error::new(0, CTX, "Version", kind));
        }
        let encapsulated = EncapsulatedMsdu::truncating(c.encapsulated());
        let repr = CnmRepr {
            reserved_v: c.reserved_v(),
            qntz_fb: c.qntz_fb(),
            cpid: c.cpid(),
            q_offset: c.q_offset(),
            q_delta: c.q_delta(),
            encapsulated_priority: c.encapsulated_priority(),
            encapsulated_priority_reserved: c.encapsulated_priority_reserved(),
            encapsulated_dst: c.encapsulated_dst(),
            encapsulated,
        };
        Ok((repr, CNM_HEADER_LEN + encapsulated.as_slice().len()))
    }
    /// Length of the PDU: 24 plus the encapsulated bytes.
    pub fn buffer_len(&self) -> usize {
        CNM_HEADER_LEN + self.encapsulated.as_slice().len()
    }
    /// Writes the PDU at the start of `buf` and returns its length. Refuses a field out of
    /// range (reserved bits 0..=63, QntzFb 0..=63, priority 0..=7, reserved 0..=0x1fff).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let range = |at, field, found: u64, allowed| {
            Err(Error::new(at, CTX, field, ErrorKind::BadValue { found, allowed }))
        };
        if self.reserved_v > 63 {
            return range(0, "ReservedV", self.reserved_v.into(), "0..=63");
        }
        if self.qntz_fb > 63 {
            return range(1, "QntzFb", self.qntz_fb.into(), "0..=63");
        }
        if self.encapsulated_priority > 7 {
            return range(
                14,
                "Encapsulated priority",
                self.encapsulated_priority.into(),
                "0..=7",
            );
        }
        if self.encapsulated_priority_reserved > 0x1FFF {
            return range(
                14,
                "reserved",
                self.encapsulated_priority_reserved.into(),
                "0..=0x1fff",
            );
        }
        let len = self.buffer_len();
        let Some(b) = buf.get_mut(..len) else {
            return Err(Error::truncated(0, CTX, "buffer", len, buf.len()));
        };
        let first = u16::from(CNM_VERSION) << 12 | u16::from(self.reserved_v) << 6 | u16::from(self.qntz_fb);
        b[0..2].copy_from_slice(&first.to_be_bytes());
        b[2..10].copy_from_slice(&self.cpid);
        b[10..12].copy_from_slice(&self.q_offset.to_be_bytes());
        b[12..14].copy_from_slice(&self.q_delta.to_be_bytes());
        let prio = u16::from(self.encapsulated_priority) << 13 | self.encapsulated_priority_reserved;
        b[14..16].copy_from_slice(&prio.to_be_bytes());
        b[16..22].copy_from_slice(&self.encapsulated_dst.0);
        let msdu = self.encapsulated.as_slice();
        b[22..24].copy_from_slice(&(msdu.len() as u16).to_be_bytes());
        b[CNM_HEADER_LEN..].copy_from_slice(msdu);
        Ok(len)
    }
}
