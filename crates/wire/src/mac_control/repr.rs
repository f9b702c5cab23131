//! [`MacControlRepr`]: a MAC Control payload in owned form (PAUSE, PFC or an opcode this
//! crate does not interpret) and what each asks of the receiver.

use core::fmt;

use super::*;
use crate::{Error, ErrorKind, Result};

/// The parameters of a MAC Control frame with an opcode this crate does not interpret:
/// at most [`PARAMS_MAX`] bytes, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnknownParams {
    bytes: [u8; PARAMS_MAX],
    len: u8,
}

impl UnknownParams {
    /// The first [`PARAMS_MAX`] bytes of `data` (all of them when shorter).
    pub fn truncating(data: &[u8]) -> Self {
        let n = data.len().min(PARAMS_MAX);
        let mut bytes = [0u8; PARAMS_MAX];
        bytes[..n].copy_from_slice(&data[..n]);
        UnknownParams { bytes, len: n as u8 }
    }
    /// `data` stored inline, or an error when it is longer than [`PARAMS_MAX`] bytes.
    pub fn new(data: &[u8]) -> Result<Self> {
        if data.len() > PARAMS_MAX {
            let kind = ErrorKind::BadLength {
                found: data.len(),
                allowed: "at most 44 bytes",
            };
            return Err(Error::new(OPCODE_LEN, CTX, "parameters", kind));
        }
        Ok(UnknownParams::truncating(data))
    }
    /// The stored bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for UnknownParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnknownParams(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// A MAC Control payload in owned form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MacControlRepr {
    /// 802.3 Annex 31B PAUSE (opcode 0x0001).
    Pause {
        /// Pause time in quanta of 512 bit times; 0 releases (XON).
        pause_time: u16,
    },
    /// 802.1Qbb PFC (opcode 0x0101).
    Pfc {
        /// Raw enable vector: bit n enables `time[n]`; the high byte is kept as found.
        priority_enable_vector: u16,
        /// Pause time per priority, in quanta.
        time: [u16; 8],
    },
    /// Any other opcode, with the bytes after it (not an error: 802.3 counts and drops these).
    Unknown {
        /// The opcode found.
        opcode: u16,
        /// The bytes after the opcode (at most 44).
        params: UnknownParams,
    },
}

/// What a PAUSE or one PFC priority asks of the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PauseRequest {
    /// Stop transmitting for this many quanta (non-zero).
    Xoff(u16),
    /// Resume now (a pause time of zero).
    Xon,
}

impl PauseRequest {
    /// The request carried by a pause time field.
    pub const fn from_quanta(quanta: u16) -> Self {
        if quanta == 0 {
            PauseRequest::Xon
        } else {
            PauseRequest::Xoff(quanta)
        }
    }
    /// The pause time in quanta (0 for XON).
    pub const fn quanta(self) -> u16 {
        match self {
            PauseRequest::Xoff(q) => q,
            PauseRequest::Xon => 0,
        }
    }
}

/// Iterator over the priorities (0..=7) whose bit is set in a PFC enable vector, ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnabledPriorities(u8);

impl Iterator for EnabledPriorities {
    type Item = u8;
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            return None;
        }
        let p = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(p)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for EnabledPriorities {}

impl MacControlRepr {
    /// A PFC frame that sends XOFF with `quanta` to every priority in the bit mask `priorities`.
    pub fn pfc_xoff(priorities: u8, quanta: u16) -> Self {
        let mut time = [0u16; 8];
        for p in EnabledPriorities(priorities) {
            time[usize::from(p)] = quanta;
        }
        MacControlRepr::Pfc {
            priority_enable_vector: priorities.into(),
            time,
        }
    }
    /// A PFC frame that sends XON (time 0) to every priority in the bit mask `priorities`.
    pub fn pfc_xon(priorities: u8) -> Self {
        MacControlRepr::Pfc {
            priority_enable_vector: priorities.into(),
            time: [0; 8],
        }
    }
    /// The opcode.
    pub const fn opcode(&self) -> u16 {
        match self {
            MacControlRepr::Pause { .. } => OPCODE_PAUSE,
            MacControlRepr::Pfc { .. } => OPCODE_PFC,
            MacControlRepr::Unknown { opcode, .. } => *opcode,
        }
    }
    /// PFC: the enabled priorities (bits 0..=7 of the vector); empty for other opcodes.
    pub fn enabled_priorities(&self) -> EnabledPriorities {
        match self {
            MacControlRepr::Pfc {
                priority_enable_vector,
                ..
            } => EnabledPriorities(*priority_enable_vector as u8),
            _ => EnabledPriorities(0),
        }
    }
    /// PFC: what the frame asks of `priority` (0..=7), or `None` when its bit is clear,
    /// the priority is out of range or the frame is not PFC.
    pub fn priority_request(&self, priority: u8) -> Option<PauseRequest> {
        match self {
            MacControlRepr::Pfc {
                priority_enable_vector,
                time,
            } if priority < 8 && priority_enable_vector & (1 << priority) != 0 => {
                Some(PauseRequest::from_quanta(time[usize::from(priority)]))
            }
            _ => None,
        }
    }
    /// PAUSE: what the frame asks of the whole link; `None` for other opcodes.
    pub fn pause_request(&self) -> Option<PauseRequest> {
        match self {
            MacControlRepr::Pause { pause_time } => Some(PauseRequest::from_quanta(*pause_time)),
            _ => None,
        }
    }
    /// Parses a MAC Control payload (opcode first). Bytes after the opcode's fields (padding)
    /// are ignored, except that an unknown opcode keeps up to 44 of them as its parameters.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<MacControlRepr> {
        MacControlRepr::parse_bytes(packet.buffer.as_ref())
    }
    /// Parses a MAC Control payload given as bytes (opcode first), as [`MacControlRepr::parse`].
    #[inline]
    pub fn parse_bytes(payload: &[u8]) -> Result<MacControlRepr> {
        let Some(&[o0, o1]) = payload.first_chunk::<OPCODE_LEN>() else {
            return Err(Error::truncated(0, CTX, "opcode", OPCODE_LEN, payload.len()));
        };
        let truncated = |need: usize, field| {
            Error::truncated(
                OPCODE_LEN,
                CTX,
                field,
                need - OPCODE_LEN,
                payload.len() - OPCODE_LEN,
            )
        };
        Ok(match u16::from_be_bytes([o0, o1]) {
            OPCODE_PAUSE => {
                let Some(b) = payload.first_chunk::<PAUSE_LEN>() else {
                    return Err(truncated(PAUSE_LEN, "pause_time"));
                };
                MacControlRepr::Pause {
                    pause_time: u16::from_be_bytes([b[2], b[3]]),
                }
            }
            OPCODE_PFC => {
                let Some(b) = payload.first_chunk::<PFC_LEN>() else {
                    return Err(truncated(PFC_LEN, "time"));
                };
                let be = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
                let time = [be(4), be(6), be(8), be(10), be(12), be(14), be(16), be(18)];
                MacControlRepr::Pfc {
                    priority_enable_vector: be(2),
                    time,
                }
            }
            opcode => MacControlRepr::Unknown {
                opcode,
                params: UnknownParams::truncating(&payload[OPCODE_LEN..]),
            },
        })
    }
    /// Length of the payload this repr emits (4 for PAUSE, 20 for PFC, 2 + parameters otherwise).
    pub fn buffer_len(&self) -> usize {
        match self {
            MacControlRepr::Pause { .. } => PAUSE_LEN,
            MacControlRepr::Pfc { .. } => PFC_LEN,
            MacControlRepr::Unknown { params, .. } => OPCODE_LEN + params.as_slice().len(),
        }
    }
    /// Writes the payload at the start of `buf` (no padding) and returns its length.
    /// Refuses an `Unknown` whose opcode is PAUSE's or PFC's (it would parse back differently).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::truncated(0, CTX, "buffer", len, buf.len()));
        }
        let mut p = Packet::new_unchecked(&mut buf[..len]);
        match self {
            MacControlRepr::Pause { pause_time } => {
                p.set_opcode(OPCODE_PAUSE);
                p.set_pause_time(*pause_time);
            }
            MacControlRepr::Pfc {
                priority_enable_vector,
                time,
            } => {
                p.set_opcode(OPCODE_PFC);
                p.set_priority_enable_vector(*priority_enable_vector);
                for (i, t) in time.iter().enumerate() {
                    p.set_time(i, *t);
                }
            }
            MacControlRepr::Unknown { opcode, params } => {
                if matches!(*opcode, OPCODE_PAUSE | OPCODE_PFC) {
                    let kind = ErrorKind::BadValue {
                        found: (*opcode).into(),
                        allowed: "an opcode other than 0x0001 and 0x0101 (use Pause or Pfc)",
                    };
                    return Err(Error::new(0, CTX, "opcode", kind));
                }
                p.set_opcode(*opcode);
                p.into_inner()[OPCODE_LEN..].copy_from_slice(params.as_slice());
            }
        }
        Ok(len)
    }
}
