//! HPCC-PINT's field: the HPCC ns-3 fork's `IntHeader` in its `PINT` mode (`CC_MODE 10`,
//! `src/network/utils/int-header.{h,cc}`), one code that every switch on the path may raise.
//!
//! # Layout (1 or 2 bytes)
//!
//! Like HPCC's INT field it follows the 6-byte sequence/timestamp header of a data packet (at
//! byte 48 as the fork counts) and the 12-byte qbb header of an ACK or NACK, which copies the
//! acknowledged packet's field.
//!
//! | width | bytes | what |
//! | --- | --- | --- |
//! | 2 (`PINT_LOG_BASE` 1.01: 11 bits) | 0..2 | the code, little-endian `u16` (ns-3 `WriteU16`) |
//! | 1 (a base whose codes fit 8 bits, e.g. 1.05) | 0 | the code's low byte |
//!
//! The code c stands for the utilisation b^c / 512 (b = `PINT_LOG_BASE`); a switch writes
//! its own code only when it is larger than the one the packet carries, so the packet ends
//! with the maximum over its path. At width 1 the fork keeps only the low byte of the code it
//! writes ([`PintField::raise`]). How a switch computes its code: `lossless_proto::hpcc_pint`.

use crate::error::{Error, Result};

/// The field's width on the wire, from the number of bits the codes need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PintWidth {
    /// 1 byte: codes of at most 8 bits.
    One,
    /// 2 bytes: codes of 9 to 16 bits.
    Two,
}

impl PintWidth {
    /// The width for codes of `bits` bits (1..=16), as the fork's `Pint::get_n_bytes`;
    /// `None` for 0 or more than 16.
    pub fn for_bits(bits: u32) -> Option<PintWidth> {
        match bits {
            1..=8 => Some(PintWidth::One),
            9..=16 => Some(PintWidth::Two),
            _ => None,
        }
    }
    /// Bytes on the wire.
    pub fn bytes(self) -> usize {
        match self {
            PintWidth::One => 1,
            PintWidth::Two => 2,
        }
    }
}

/// The PINT code a packet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PintField(pub u16);

impl PintField {
    /// A switch's code `code`: written only if larger than the packet's (the fork's
    /// `power > GetPower()`), and at width 1 only its low byte (`power_lo8 = power`).
    pub fn raise(&mut self, code: u16, width: PintWidth) {
        if code > self.0 {
            self.0 = match width {
                PintWidth::One => code & 0xFF,
                PintWidth::Two => code,
            };
        }
    }

    /// Reads the field from the first `width` bytes of `buf`.
    pub fn parse(buf: &[u8], width: PintWidth) -> Result<PintField> {
        match (width, buf) {
            (PintWidth::One, [b, ..]) => Ok(PintField(u16::from(*b))),
            (PintWidth::Two, [lo, hi, ..]) => Ok(PintField(u16::from_le_bytes([*lo, *hi]))),
            _ => Err(Error::truncated(
                0,
                "PINT field",
                "code",
                width.bytes(),
                buf.len(),
            )),
        }
    }

    /// Writes the field into the first `width` bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8], width: PintWidth) -> Result<()> {
        let len = buf.len();
        let Some(out) = buf.get_mut(..width.bytes()) else {
            return Err(Error::truncated(0, "PINT field", "code", width.bytes(), len));
        };
        match width {
            PintWidth::One => out[0] = self.0 as u8,
            PintWidth::Two => out.copy_from_slice(&self.0.to_le_bytes()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_is_a_little_endian_u16_or_its_low_byte() {
        let mut buf = [0u8; 2];
        PintField(0x0123).emit(&mut buf, PintWidth::Two).unwrap();
        assert_eq!(buf, [0x23, 0x01]);
        assert_eq!(PintField::parse(&buf, PintWidth::Two).unwrap(), PintField(0x0123));
        let mut one = [0u8; 1];
        PintField(0x7F).emit(&mut one, PintWidth::One).unwrap();
        assert_eq!(one, [0x7F]);
        assert_eq!(PintField::parse(&one, PintWidth::One).unwrap(), PintField(0x7F));
    }

    #[test]
    fn a_switch_raises_the_code_to_the_path_maximum_only() {
        let mut f = PintField::default();
        f.raise(700, PintWidth::Two);
        f.raise(300, PintWidth::Two);
        assert_eq!(f, PintField(700));
        // width 1 keeps the low byte of what it writes, as the fork's `power_lo8` does
        let mut g = PintField(10);
        g.raise(0x105, PintWidth::One);
        assert_eq!(g, PintField(5));
    }

    #[test]
    fn widths_follow_the_code_bits_and_short_buffers_are_refused() {
        assert_eq!(PintWidth::for_bits(11), Some(PintWidth::Two));
        assert_eq!(PintWidth::for_bits(8), Some(PintWidth::One));
        assert_eq!(PintWidth::for_bits(0), None);
        assert_eq!(PintWidth::for_bits(17), None);
        assert!(PintField::parse(&[1], PintWidth::Two).is_err());
        assert!(PintField(1).emit(&mut [], PintWidth::One).is_err());
    }
}
