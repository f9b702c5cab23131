//! The in-band network telemetry (INT) field of the HPCC ns-3 fork (`IntHeader`, `IntHop`,
//! `src/network/utils/int-header.h`), as its HPCC mode (`CC_MODE 3`) puts it on the wire.
//!
//! # Layout (42 bytes)
//!
//! In a data packet the field follows the 6-byte sequence/timestamp header, at byte 48 of the
//! packet as the fork counts it (14 bytes of link header, IPv4 20, UDP 8, seq/ts 6); in an ACK
//! or NACK it follows the 12-byte qbb header and is a copy of the acknowledged packet's field.
//!
//! | bytes | what |
//! | --- | --- |
//! | 0..40 | five hop records, 8 bytes each, in slot order |
//! | 40..42 | `nhop`: how many switches stamped the packet (little-endian `u16`) |
//!
//! A hop record is one 64-bit little-endian word of bit fields, from the low bits up:
//!
//! | bits | field | unit |
//! | --- | --- | --- |
//! | 0..3 | line rate | index into 25, 50, 100, 200, 400 Gb/s (5..7: unknown, read as 0 b/s) |
//! | 3..27 | time | ns, modulo 2^24 |
//! | 27..47 | bytes | the port's transmitted bytes / (128 · `INT_MULTI`), modulo 2^20 |
//! | 47..64 | qlen | the port's egress queue bytes / (80 · `INT_MULTI`), modulo 2^17 |
//!
//! The switch at hop n (counting from 0) writes slot n mod 5, then `nhop` grows by one; with
//! more than five switches the slots are overwritten in turn. ns-3 writes the two 32-bit
//! halves of each word and `nhop` with `WriteU32`/`WriteU16`, which are little-endian.

use crate::error::{Error, Result};

/// The records an INT field holds.
pub const MAX_HOPS: usize = 5;
/// Bytes of the field on the wire.
pub const INT_LEN: usize = MAX_HOPS * 8 + 2;
/// The line rates a record's 3-bit index stands for, b/s (indices 5..=7 stand for 0).
pub const LINE_RATES: [u64; 8] = [
    25_000_000_000,
    50_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
    0,
    0,
    0,
];
/// Unit of the transmitted-bytes field at `INT_MULTI` 1.
pub const BYTE_UNIT: u64 = 128;
/// Unit of the queue-length field at `INT_MULTI` 1.
pub const QLEN_UNIT: u64 = 80;

const RATE_BITS: u32 = 3;
const TIME_BITS: u32 = 24;
const BYTES_BITS: u32 = 20;
const QLEN_BITS: u32 = 17;

/// One switch's record: the raw 64-bit word of bit fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntHop(pub u64);

impl IntHop {
    /// The record a port of rate `rate_bps` writes at `time_ns` having sent `tx_bytes` bytes
    /// before this packet, with `qlen_bytes` in its egress queue, at `multi` = `INT_MULTI`
    /// (at least 1); a rate outside [`LINE_RATES`] gets index 0, as the fork leaves it.
    pub fn stamp(time_ns: u64, tx_bytes: u64, qlen_bytes: u64, rate_bps: u64, multi: u32) -> IntHop {
        let multi = u64::from(multi.max(1));
        let rate = LINE_RATES[..5].iter().position(|&r| r == rate_bps).unwrap_or(0) as u64;
        let time = time_ns & mask(TIME_BITS);
        let bytes = (tx_bytes / (BYTE_UNIT * multi)) & mask(BYTES_BITS);
        let qlen = (qlen_bytes / (QLEN_UNIT * multi)) & mask(QLEN_BITS);
        IntHop(
            rate | time << RATE_BITS
                | bytes << (RATE_BITS + TIME_BITS)
                | qlen << (RATE_BITS + TIME_BITS + BYTES_BITS),
        )
    }
    /// The 3-bit line-rate index.
    pub fn rate_index(self) -> u8 {
        (self.0 & mask(RATE_BITS)) as u8
    }
    /// The line rate in b/s (0 for an index above 4).
    pub fn line_rate(self) -> u64 {
        LINE_RATES[usize::from(self.rate_index())]
    }
    /// The time field, ns modulo 2^24.
    pub fn time(self) -> u64 {
        (self.0 >> RATE_BITS) & mask(TIME_BITS)
    }
    /// The transmitted-bytes field, in units of 128 · `INT_MULTI` bytes.
    pub fn bytes_units(self) -> u64 {
        (self.0 >> (RATE_BITS + TIME_BITS)) & mask(BYTES_BITS)
    }
    /// The queue-length field, in units of 80 · `INT_MULTI` bytes.
    pub fn qlen_units(self) -> u64 {
        self.0 >> (RATE_BITS + TIME_BITS + BYTES_BITS)
    }
    /// The queue length in bytes at `INT_MULTI` = `multi`.
    pub fn qlen(self, multi: u32) -> u64 {
        self.qlen_units() * QLEN_UNIT * u64::from(multi)
    }
    /// Nanoseconds from `earlier`'s time to this one's, allowing one wrap of 2^24.
    pub fn time_delta(self, earlier: IntHop) -> u64 {
        self.time().wrapping_sub(earlier.time()) & mask(TIME_BITS)
    }
    /// Bytes sent from `earlier` to this one at `INT_MULTI` = `multi`, allowing one wrap.
    pub fn bytes_delta(self, earlier: IntHop, multi: u32) -> u64 {
        (self.bytes_units().wrapping_sub(earlier.bytes_units()) & mask(BYTES_BITS))
            * BYTE_UNIT
            * u64::from(multi)
    }
}

fn mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

/// The whole INT field: five slots and the count of switches that stamped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntHeader {
    /// The slots, in order.
    pub hops: [IntHop; MAX_HOPS],
    /// Switches that stamped (may exceed 5: slots are then reused).
    pub nhop: u16,
}

impl IntHeader {
    /// A switch's stamp: the record goes in slot `nhop` mod 5 and `nhop` grows by one.
    pub fn push(&mut self, hop: IntHop) {
        self.hops[usize::from(self.nhop) % MAX_HOPS] = hop;
        self.nhop = self.nhop.wrapping_add(1);
    }

    /// The records a reader may use: the first `nhop` slots, or `None` past 5 switches.
    pub fn records(&self) -> Option<&[IntHop]> {
        self.hops.get(..usize::from(self.nhop))
    }

    /// Reads the field from the first [`INT_LEN`] bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<IntHeader> {
        if buf.len() < INT_LEN {
            return Err(Error::truncated(
                0,
                "INT header",
                "hop records and nhop",
                INT_LEN,
                buf.len(),
            ));
        }
        let mut h = IntHeader::default();
        for (slot, chunk) in h.hops.iter_mut().zip(buf.chunks_exact(8)) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            *slot = IntHop(u64::from_le_bytes(w));
        }
        h.nhop = u16::from_le_bytes([buf[40], buf[41]]);
        Ok(h)
    }

    /// Writes the field into the first [`INT_LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = buf.len();
        let Some(out) = buf.get_mut(..INT_LEN) else {
            return Err(Error::truncated(
                0,
                "INT header",
                "hop records and nhop",
                INT_LEN,
                len,
            ));
        };
        for (chunk, hop) in out.chunks_exact_mut(8).zip(self.hops.iter()) {
            chunk.copy_from_slice(&hop.0.to_le_bytes());
        }
        out[40..42].copy_from_slice(&self.nhop.to_le_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_quantizes_and_wraps_each_field_as_the_fork_does() {
        let h = IntHop::stamp((1 << 24) + 5, 512 * 7 + 511, 320 * 3 + 319, 100_000_000_000, 4);
        assert_eq!(h.rate_index(), 2);
        assert_eq!(h.line_rate(), 100_000_000_000);
        assert_eq!(h.time(), 5);
        assert_eq!(h.bytes_units(), 7);
        assert_eq!(h.qlen_units(), 3);
        assert_eq!(h.qlen(4), 960);
        // bytes wrap at 2^20 units (512 MiB at INT_MULTI 4)
        let w = IntHop::stamp(0, 512 << 20, 0, 25_000_000_000, 4);
        assert_eq!(w.bytes_units(), 0);
        assert_eq!(w.rate_index(), 0);
        // an unknown rate reads as index 0
        assert_eq!(IntHop::stamp(0, 0, 0, 40_000_000_000, 1).rate_index(), 0);
    }

    #[test]
    fn deltas_allow_one_wrap() {
        let a = IntHop::stamp((1 << 24) - 10, ((1 << 20) - 1) * 128, 0, 100_000_000_000, 1);
        let b = IntHop::stamp((1 << 24) + 15, (1 << 20) * 128 + 2 * 128, 0, 100_000_000_000, 1);
        assert_eq!(b.time_delta(a), 25);
        assert_eq!(b.bytes_delta(a, 1), 3 * 128);
    }

    #[test]
    fn the_field_is_42_bytes_of_little_endian_words_then_nhop() {
        let mut h = IntHeader::default();
        h.push(IntHop(0x0102_0304_0506_0708));
        h.push(IntHop(u64::MAX));
        let mut buf = [0u8; INT_LEN];
        h.emit(&mut buf).unwrap();
        assert_eq!(&buf[..8], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&buf[8..16], &[0xff; 8]);
        assert_eq!(&buf[16..40], &[0; 24]);
        assert_eq!(&buf[40..], &[2, 0]);
        assert_eq!(IntHeader::parse(&buf).unwrap(), h);
        assert_eq!(h.records().unwrap().len(), 2);
    }

    #[test]
    fn a_sixth_switch_overwrites_slot_0_and_leaves_no_usable_records() {
        let mut h = IntHeader::default();
        for k in 0..6 {
            h.push(IntHop(k + 1));
        }
        assert_eq!(h.nhop, 6);
        assert_eq!(h.hops[0], IntHop(6));
        assert!(h.records().is_none());
    }

    #[test]
    fn a_short_buffer_is_refused_with_the_bytes_it_needed() {
        let e = IntHeader::parse(&[0u8; 41]).unwrap_err();
        assert_eq!(e.context, "INT header");
        assert_eq!(
            e.kind,
            crate::error::ErrorKind::Truncated {
                needed: 42,
                available: 41
            }
        );
        assert!(IntHeader::default().emit(&mut [0u8; 10]).is_err());
    }
}
