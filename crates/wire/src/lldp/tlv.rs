//! The generic LLDP TLV: a 16-bit header of 7-bit type and 9-bit length, then the value
//! (802.1AB-2016 8.4.1), and a checked zero-copy iterator over the TLVs of an LLDPDU.

use crate::{Error, ErrorKind, Result};

/// Length of a TLV header in bytes.
pub const HEADER_LEN: usize = 2;
/// Largest value length a 9-bit length field can express.
pub const MAX_VALUE_LEN: usize = 511;

/// End Of LLDPDU TLV type.
pub const TYPE_END: u8 = 0;
/// Chassis ID TLV type.
pub const TYPE_CHASSIS_ID: u8 = 1;
/// Port ID TLV type.
pub const TYPE_PORT_ID: u8 = 2;
/// Time To Live TLV type.
pub const TYPE_TTL: u8 = 3;
/// Port Description TLV type.
pub const TYPE_PORT_DESCRIPTION: u8 = 4;
/// System Name TLV type.
pub const TYPE_SYSTEM_NAME: u8 = 5;
/// System Description TLV type.
pub const TYPE_SYSTEM_DESCRIPTION: u8 = 6;
/// System Capabilities TLV type.
pub const TYPE_SYSTEM_CAPABILITIES: u8 = 7;
/// Management Address TLV type.
pub const TYPE_MANAGEMENT_ADDRESS: u8 = 8;
/// Organizationally Specific TLV type.
pub const TYPE_ORGANIZATIONALLY_SPECIFIC: u8 = 127;

/// The standard's name of a TLV type, used as the context of errors.
pub const fn type_name(ty: u8) -> &'static str {
    match ty {
        TYPE_END => "End Of LLDPDU TLV",
        TYPE_CHASSIS_ID => "Chassis ID TLV",
        TYPE_PORT_ID => "Port ID TLV",
        TYPE_TTL => "Time To Live TLV",
        TYPE_PORT_DESCRIPTION => "Port Description TLV",
        TYPE_SYSTEM_NAME => "System Name TLV",
        TYPE_SYSTEM_DESCRIPTION => "System Description TLV",
        TYPE_SYSTEM_CAPABILITIES => "System Capabilities TLV",
        TYPE_MANAGEMENT_ADDRESS => "Management Address TLV",
        TYPE_ORGANIZATIONALLY_SPECIFIC => "Organizationally Specific TLV",
        _ => "reserved TLV",
    }
}

/// A checked view of one TLV inside an LLDPDU: its type, where it starts, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlvView<'a> {
    /// The 7-bit TLV type.
    pub ty: u8,
    /// Byte offset of the TLV header from the start of the LLDPDU.
    pub offset: usize,
    /// The value (information string), exactly as long as the header's length says.
    pub value: &'a [u8],
}

impl<'a> TlvView<'a> {
    /// Reads one TLV at `offset` of `buf`; errors name the TLV type when the header is readable.
    #[inline]
    pub fn parse(buf: &'a [u8], offset: usize) -> Result<Self> {
        let rest = buf.get(offset..).unwrap_or(&[]);
        if rest.len() < HEADER_LEN {
            return Err(Error::truncated(
                offset,
                "LLDP TLV",
                "type/length header",
                HEADER_LEN,
                rest.len(),
            ));
        }
        let word = u16::from_be_bytes([rest[0], rest[1]]);
        let ty = (word >> 9) as u8;
        let len = usize::from(word & 0x01ff);
        let Some(value) = rest.get(HEADER_LEN..HEADER_LEN + len) else {
            return Err(Error::truncated(
                offset + HEADER_LEN,
                type_name(ty),
                "value",
                len,
                rest.len() - HEADER_LEN,
            ));
        };
        Ok(TlvView { ty, offset, value })
    }

    /// Bytes the whole TLV (header and value) occupies.
    pub const fn total_len(&self) -> usize {
        HEADER_LEN + self.value.len()
    }

    /// Byte offset of the value from the start of the LLDPDU.
    pub const fn value_offset(&self) -> usize {
        self.offset + HEADER_LEN
    }

    /// An error saying the TLV's length is not one the structure `context` allows.
    #[cold]
    #[inline(never)]
    pub const fn bad_length(&self, context: &'static str, allowed: &'static str) -> Error {
        Error::new(
            self.offset,
            context,
            "length",
            ErrorKind::BadLength {
                found: self.value.len(),
                allowed,
            },
        )
    }
}

/// Iterator over the TLVs of an LLDPDU. It stops after the End Of LLDPDU TLV, at the end of
/// the buffer, or after yielding the first error: it never loops and never reads out of bounds.
#[derive(Debug, Clone)]
pub struct TlvIter<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> TlvIter<'a> {
    /// Iterates over the TLVs in `buf` (an LLDPDU, starting after the Ethernet header).
    pub const fn new(buf: &'a [u8]) -> Self {
        TlvIter {
            buf,
            pos: 0,
            done: false,
        }
    }

    /// Bytes consumed so far (the offset of the next TLV).
    pub const fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Result<TlvView<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.buf.len() {
            return None;
        }
        match TlvView::parse(self.buf, self.pos) {
            Ok(tlv) => {
                self.pos += tlv.total_len();
                if tlv.ty == TYPE_END {
                    self.done = true;
                }
                Some(Ok(tlv))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// The error for a TLV of type `ty` whose value of `len` bytes does not fit the 9-bit length
/// field, or `Ok` when it fits; `offset` is where the TLV header would start.
pub const fn check_len(offset: usize, ty: u8, len: usize) -> Result<()> {
    if len > MAX_VALUE_LEN {
        return Err(Error::new(
            offset,
            type_name(ty),
            "length",
            ErrorKind::BadLength {
                found: len,
                allowed: "0..=511",
            },
        ));
    }
    Ok(())
}

/// Writes a TLV header for `ty` and a value of `len` bytes into `buf[0..2]`.
///
/// Refuses a `len` above [`MAX_VALUE_LEN`] (the 9-bit field cannot hold it) and a `buf`
/// shorter than the header, writing nothing.
pub fn emit_header(buf: &mut [u8], ty: u8, len: usize) -> Result<()> {
    check_len(0, ty, len)?;
    let Some(dst) = buf.get_mut(..HEADER_LEN) else {
        return Err(Error::truncated(
            0,
            type_name(ty),
            "type/length header",
            HEADER_LEN,
            buf.len(),
        ));
    };
    let word = (u16::from(ty & 0x7f) << 9) | (len as u16 & 0x01ff);
    dst.copy_from_slice(&word.to_be_bytes());
    Ok(())
}

/// A small writer that appends fields to a byte buffer whose size was computed beforehand.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// Writes into `buf` from its start.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }
    /// Appends bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
    /// Appends one byte.
    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    /// Appends a big-endian u16.
    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    /// Appends a big-endian u32.
    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    /// Appends a TLV header whose length the caller checked with [`check_len`] (every TLV
    /// inside a checked TLV fits too, being shorter than it).
    pub(crate) fn header(&mut self, ty: u8, len: usize) {
        debug_assert!(len <= MAX_VALUE_LEN, "TLV length {len} not checked");
        let word = (u16::from(ty & 0x7f) << 9) | (len as u16 & 0x01ff);
        self.u16(word);
    }
    /// Bytes written so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }
}

/// Reads a big-endian u16 at `i` of a slice already checked to be long enough.
pub(crate) fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// Reads a big-endian u32 at `i` of a slice already checked to be long enough.
pub(crate) fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}
