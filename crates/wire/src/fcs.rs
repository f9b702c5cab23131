//! The IEEE 802.3 Frame Check Sequence (CRC-32) and minimum-frame padding.
//!
//! The FCS is the CRC-32 (polynomial 0x04C11DB7, reflected, initial value and final XOR
//! 0xFFFFFFFF) of the frame from the destination address to the end of the padding. The MAC
//! sends it least significant byte first, so in a frame buffer it appears as the CRC's
//! little-endian bytes. A consequence used by [`verify`]: the CRC over frame + FCS is the
//! constant [`RESIDUE`].

use core::fmt;

use crate::{Error, ErrorKind, Result};

/// Length of the FCS in bytes.
pub const FCS_LEN: usize = 4;
/// Minimum Ethernet frame length without the FCS (the length padding brings a frame to).
pub const MIN_FRAME_LEN_WITHOUT_FCS: usize = 60;
/// Minimum Ethernet frame length with the FCS (`minFrameSize`, 512 bits).
pub const MIN_FRAME_LEN_WITH_FCS: usize = 64;
/// CRC-32 of any frame followed by its correct FCS (the 802.3 receiver's "magic" residue
/// after the final XOR).
pub const RESIDUE: u32 = 0x2144_DF1C;

/// Whether a frame buffer ends with its 4-byte FCS (as on the wire) or not (as most captures
/// and raw sockets deliver it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FcsMode {
    /// The last four bytes of the buffer are the FCS.
    Present,
    /// The buffer ends with the last byte of data or padding; there is no FCS.
    Absent,
}

impl FcsMode {
    /// The FCS mode for `true` = FCS present.
    pub const fn from_present(present: bool) -> Self {
        if present {
            FcsMode::Present
        } else {
            FcsMode::Absent
        }
    }
    /// Number of FCS bytes at the end of a buffer in this mode (4 or 0).
    pub const fn len(self) -> usize {
        match self {
            FcsMode::Present => FCS_LEN,
            FcsMode::Absent => 0,
        }
    }
    /// Whether the mode carries no FCS bytes.
    pub const fn is_empty(self) -> bool {
        matches!(self, FcsMode::Absent)
    }
    /// The minimum frame length in this mode (64 with FCS, 60 without).
    pub const fn min_frame_len(self) -> usize {
        MIN_FRAME_LEN_WITHOUT_FCS + self.len()
    }
}

/// The FCS value of `frame` (destination address through padding, without FCS).
pub fn compute(frame: &[u8]) -> u32 {
    crc32fast::hash(frame)
}

/// The FCS of `frame` as the four bytes that follow it on the wire.
pub fn compute_bytes(frame: &[u8]) -> [u8; FCS_LEN] {
    compute(frame).to_le_bytes()
}

/// Splits a frame that ends with its FCS into the frame proper and the FCS value found.
pub fn split(frame_with_fcs: &[u8]) -> Result<(&[u8], u32)> {
    match frame_with_fcs.len().checked_sub(FCS_LEN) {
        Some(n) => {
            let (body, fcs) = frame_with_fcs.split_at(n);
            Ok((body, u32::from_le_bytes([fcs[0], fcs[1], fcs[2], fcs[3]])))
        }
        None => Err(Error::truncated(
            0,
            "Ethernet frame",
            "FCS",
            FCS_LEN,
            frame_with_fcs.len(),
        )),
    }
}

/// Whether a frame that ends with its FCS has the correct FCS.
pub fn verify(frame_with_fcs: &[u8]) -> Result<bool> {
    if frame_with_fcs.len() < FCS_LEN {
        return Err(Error::truncated(
            0,
            "Ethernet frame",
            "FCS",
            FCS_LEN,
            frame_with_fcs.len(),
        ));
    }
    Ok(crc32fast::hash(frame_with_fcs) == RESIDUE)
}

/// A CRC-32 engine whose implementation (table or PCLMULQDQ) is picked once, at construction:
/// [`compute`] and [`verify`] repeat crc32fast's CPU-feature detection on every call, which is
/// about a third of the cost of checking a 64-byte frame.
#[derive(Clone, Default)]
pub struct FcsChecker {
    start: crc32fast::Hasher,
}

impl fmt::Debug for FcsChecker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FcsChecker")
    }
}

impl FcsChecker {
    /// Detects the CPU's CRC features once.
    pub fn new() -> Self {
        FcsChecker {
            start: crc32fast::Hasher::new(),
        }
    }
    /// The FCS value of `frame` (as [`compute`]).
    #[inline]
    pub fn compute(&self, frame: &[u8]) -> u32 {
        let mut h = self.start.clone();
        h.update(frame);
        h.finalize()
    }
    /// Whether a frame that ends with its FCS has the correct FCS (`false` when it is shorter
    /// than the FCS).
    #[inline]
    pub fn verify(&self, frame_with_fcs: &[u8]) -> bool {
        frame_with_fcs.len() >= FCS_LEN && self.compute(frame_with_fcs) == RESIDUE
    }
}

/// Zero-pads the first `len` bytes of `buf` to the 60-byte minimum (nothing happens when `len`
/// is already at least 60) and returns the padded length.
pub fn pad(buf: &mut [u8], len: usize) -> Result<usize> {
    let padded = len.max(MIN_FRAME_LEN_WITHOUT_FCS);
    if buf.len() < padded {
        return Err(Error::truncated(
            0,
            "Ethernet frame",
            "padding",
            padded,
            buf.len(),
        ));
    }
    buf[len..padded].fill(0);
    Ok(padded)
}

/// Finishes a frame whose first `len` bytes are written in `buf`: pads it to the minimum and,
/// in [`FcsMode::Present`], appends the FCS. Returns the final frame length.
pub fn finish(buf: &mut [u8], len: usize, mode: FcsMode) -> Result<usize> {
    let needed = len.max(MIN_FRAME_LEN_WITHOUT_FCS) + mode.len();
    if buf.len() < needed {
        return Err(Error::new(
            0,
            "Ethernet frame",
            "buffer",
            ErrorKind::Truncated {
                needed,
                available: buf.len(),
            },
        ));
    }
    let padded = pad(buf, len)?;
    if mode == FcsMode::Present {
        let fcs = compute_bytes(&buf[..padded]);
        buf[padded..padded + FCS_LEN].copy_from_slice(&fcs);
    }
    Ok(padded + mode.len())
}
