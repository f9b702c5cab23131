//! [`Warnings`]: what a strict receiver would object to, without refusing the frame.

use core::fmt;

/// What a strict receiver would object to in a MAC Control frame: a bit set per finding.
/// Decoding never refuses a frame for these.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Warnings(u8);

impl Warnings {
    /// Nothing to report.
    pub const NONE: Warnings = Warnings(0);
    /// Destination is neither 01-80-C2-00-00-01 nor the station address given.
    pub const DESTINATION: Warnings = Warnings(1 << 0);
    /// PFC: the high byte of priority_enable_vector is not zero.
    pub const ENABLE_VECTOR_HIGH_BYTE: Warnings = Warnings(1 << 1);
    /// The frame is not exactly 64 bytes with FCS (60 without).
    pub const LENGTH: Warnings = Warnings(1 << 2);
    /// The FCS is present and wrong.
    pub const BAD_FCS: Warnings = Warnings(1 << 3);
    /// PAUSE/PFC: a byte of padding after the fields is not zero.
    pub const NONZERO_PADDING: Warnings = Warnings(1 << 4);
    /// The opcode is neither PAUSE nor PFC.
    pub const UNKNOWN_OPCODE: Warnings = Warnings(1 << 5);
    /// The frame carries VLAN tags (MAC Control frames are sent untagged).
    pub const VLAN_TAGGED: Warnings = Warnings(1 << 6);

    const NAMES: [(Warnings, &'static str); 7] = [
        (Warnings::DESTINATION, "DESTINATION"),
        (Warnings::ENABLE_VECTOR_HIGH_BYTE, "ENABLE_VECTOR_HIGH_BYTE"),
        (Warnings::LENGTH, "LENGTH"),
        (Warnings::BAD_FCS, "BAD_FCS"),
        (Warnings::NONZERO_PADDING, "NONZERO_PADDING"),
        (Warnings::UNKNOWN_OPCODE, "UNKNOWN_OPCODE"),
        (Warnings::VLAN_TAGGED, "VLAN_TAGGED"),
    ];

    /// The raw bits.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// Whether no warning is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether every warning in `other` is set.
    pub const fn contains(self, other: Warnings) -> bool {
        self.0 & other.0 == other.0
    }
    /// Sets the warnings in `other`.
    pub fn insert(&mut self, other: Warnings) {
        self.0 |= other.0
    }
    /// Sets the warnings in `other` when `cond` holds.
    #[inline]
    pub(super) fn set_if(&mut self, cond: bool, other: Warnings) {
        self.0 |= other.0 * u8::from(cond)
    }
    /// The names of the warnings set, in bit order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Warnings::NAMES
            .into_iter()
            .filter(move |(w, _)| self.contains(*w))
            .map(|(_, n)| n)
    }
}

impl core::ops::BitOr for Warnings {
    type Output = Warnings;
    fn bitor(self, rhs: Warnings) -> Warnings {
        Warnings(self.0 | rhs.0)
    }
}

impl fmt::Debug for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Warnings(")?;
        for (i, n) in self.names().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            f.write_str(n)?;
        }
        f.write_str(")")
    }
}
