//! Typed decoding errors that say what was wrong, where, and what is allowed.

use core::fmt;

/// What kind of problem a decoder found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The buffer ended before the field did.
    Truncated {
        /// Bytes the field needs from its offset.
        needed: usize,
        /// Bytes that were left from its offset.
        available: usize,
    },
    /// A length field is smaller or larger than the structure it describes allows.
    BadLength {
        /// The length found.
        found: usize,
        /// What lengths are allowed, in words.
        allowed: &'static str,
    },
    /// A field holds a value the standard does not allow.
    BadValue {
        /// The value found.
        found: u64,
        /// What values are allowed, in words.
        allowed: &'static str,
    },
    /// A structure is out of the order the standard requires (e.g. LLDP's mandatory TLVs).
    Order {
        /// What was expected at this place, in words.
        expected: &'static str,
    },
    /// A structure the standard requires is absent (e.g. the End Of LLDPDU TLV).
    Missing {
        /// What is required, in words.
        expected: &'static str,
    },
}

/// A decoding error: the problem, the byte offset it was found at (from the start of the
/// buffer handed to the decoder that reports it), the structure and the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    /// Byte offset of the offending field.
    pub offset: usize,
    /// The structure being decoded, as the standard names it (e.g. "PFC Configuration TLV").
    pub context: &'static str,
    /// The field, as the standard names it (e.g. "priority_enable_vector").
    pub field: &'static str,
    /// What was wrong.
    pub kind: ErrorKind,
}

impl Error {
    /// An error for `field` of `context` at `offset`.
    pub const fn new(offset: usize, context: &'static str, field: &'static str, kind: ErrorKind) -> Self {
        Error {
            offset,
            context,
            field,
            kind,
        }
    }
    /// A truncation error: `needed` bytes were required at `offset`, `available` were left.
    pub const fn truncated(
        offset: usize,
        context: &'static str,
        field: &'static str,
        needed: usize,
        available: usize,
    ) -> Self {
        Error::new(offset, context, field, ErrorKind::Truncated { needed, available })
    }
    /// The same error with its offset moved by `base` (for errors from a nested decoder).
    pub const fn at(mut self, base: usize) -> Self {
        self.offset += base;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} at byte {}: ", self.context, self.field, self.offset)?;
        match self.kind {
            ErrorKind::Truncated { needed, available } => {
                write!(f, "truncated: needs {needed} bytes, {available} left")
            }
            ErrorKind::BadLength { found, allowed } => write!(f, "length {found}, allowed {allowed}"),
            ErrorKind::BadValue { found, allowed } => write!(f, "value {found:#x}, allowed {allowed}"),
            ErrorKind::Order { expected } => write!(f, "out of order, expected {expected}"),
            ErrorKind::Missing { expected } => write!(f, "missing: {expected}"),
        }
    }
}

impl core::error::Error for Error {}

/// Result of a decoder.
pub type Result<T> = core::result::Result<T, Error>;
