//! The InfiniBand Base Transport Header (12 bytes), as RoCEv2 carries it after UDP.
//!
//! ```text
//!  0       opcode
//!  1       SE(1) M(1) PadCnt(2) TVer(4)
//!  2..4    P_Key
//!  4       FECN(1) BECN(1) resv6(6)      (RoCEv2; variant, not covered by the ICRC)
//!  5..8    DestQP (24 bits)
//!  8       AckReq(1) resv7(7)
//!  9..12   PSN (24 bits)
//! ```

use super::opcode::Opcode;
use crate::{Error, ErrorKind, Result};

/// Length of the BTH.
pub const BTH_LEN: usize = 12;
/// The default partition key (full membership of the default partition).
pub const DEFAULT_P_KEY: u16 = 0xFFFF;
/// Largest 24-bit value (DestQP, PSN, MSN).
pub const MAX_24: u32 = 0x00FF_FFFF;

const CTX: &str = "BTH";

/// A checked zero-copy view of a BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bth<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Bth<T> {
    /// Wraps `buffer` without checking; getters may panic on fewer than 12 bytes.
    pub const fn new_unchecked(buffer: T) -> Bth<T> {
        Bth { buffer }
    }
    /// Wraps `buffer` after checking it holds the 12 bytes of a BTH.
    pub fn new_checked(buffer: T) -> Result<Bth<T>> {
        let len = buffer.as_ref().len();
        if len < BTH_LEN {
            return Err(Error::truncated(0, CTX, "header", BTH_LEN, len));
        }
        Ok(Bth { buffer })
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    fn b(&self, i: usize) -> u8 {
        self.buffer.as_ref()[i]
    }
    fn u24(&self, at: usize) -> u32 {
        u32::from_be_bytes([0, self.b(at), self.b(at + 1), self.b(at + 2)])
    }
    /// The opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode(self.b(0))
    }
    /// Solicited Event.
    pub fn solicited(&self) -> bool {
        self.b(1) & 0x80 != 0
    }
    /// MigReq.
    pub fn migreq(&self) -> bool {
        self.b(1) & 0x40 != 0
    }
    /// Pad count: bytes of padding at the end of the payload (0..=3).
    pub fn pad_count(&self) -> u8 {
        (self.b(1) >> 4) & 3
    }
    /// Transport header version (0).
    pub fn tver(&self) -> u8 {
        self.b(1) & 0x0F
    }
    /// Partition key.
    pub fn p_key(&self) -> u16 {
        u16::from_be_bytes([self.b(2), self.b(3)])
    }
    /// Forward ECN: the packet went through a point of congestion.
    pub fn fecn(&self) -> bool {
        self.b(4) & 0x80 != 0
    }
    /// Backward ECN: set in a CNP (and in ACKs of native InfiniBand).
    pub fn becn(&self) -> bool {
        self.b(4) & 0x40 != 0
    }
    /// The six reserved bits after FECN/BECN.
    pub fn resv6(&self) -> u8 {
        self.b(4) & 0x3F
    }
    /// Destination queue pair (24 bits).
    pub fn dest_qp(&self) -> u32 {
        self.u24(5)
    }
    /// Acknowledge request.
    pub fn ack_req(&self) -> bool {
        self.b(8) & 0x80 != 0
    }
    /// The seven reserved bits after AckReq.
    pub fn resv7(&self) -> u8 {
        self.b(8) & 0x7F
    }
    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        self.u24(9)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bth<T> {
    /// Sets FECN.
    pub fn set_fecn(&mut self, on: bool) {
        let b = &mut self.buffer.as_mut()[4];
        *b = (*b & !0x80) | (u8::from(on) << 7);
    }
    /// Sets BECN.
    pub fn set_becn(&mut self, on: bool) {
        let b = &mut self.buffer.as_mut()[4];
        *b = (*b & !0x40) | (u8::from(on) << 6);
    }
    /// Sets the PSN (the low 24 bits of `psn`).
    pub fn set_psn(&mut self, psn: u32) {
        self.buffer.as_mut()[9..12].copy_from_slice(&psn.to_be_bytes()[1..]);
    }
}

/// An owned BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BthRepr {
    /// Opcode (tshark `infiniband.bth.opcode`).
    pub opcode: Opcode,
    /// Solicited Event (`infiniband.bth.se`).
    pub solicited: bool,
    /// MigReq (`infiniband.bth.m`).
    pub migreq: bool,
    /// Pad count 0..=3 (`infiniband.bth.padcnt`).
    pub pad_count: u8,
    /// Transport header version 0..=15 (`infiniband.bth.tver`).
    pub tver: u8,
    /// Partition key (`infiniband.bth.p_key`).
    pub p_key: u16,
    /// FECN.
    pub fecn: bool,
    /// BECN.
    pub becn: bool,
    /// Reserved, 0..=63 (transmitted as 0).
    pub resv6: u8,
    /// Destination QP, 0..=0xFFFFFF (`infiniband.bth.destqp`).
    pub dest_qp: u32,
    /// AckReq (`infiniband.bth.a`).
    pub ack_req: bool,
    /// Reserved, 0..=127 (`infiniband.bth.reserved7`).
    pub resv7: u8,
    /// PSN, 0..=0xFFFFFF (`infiniband.bth.psn`).
    pub psn: u32,
}

impl BthRepr {
    /// A BTH with `opcode`, `dest_qp` and `psn`, P_Key 0xFFFF and every flag clear.
    pub const fn new(opcode: Opcode, dest_qp: u32, psn: u32) -> Self {
        BthRepr {
            opcode,
            solicited: false,
            migreq: false,
            pad_count: 0,
            tver: 0,
            p_key: DEFAULT_P_KEY,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp,
            ack_req: false,
            resv7: 0,
            psn,
        }
    }
    /// Parses the BTH at the start of `bytes`. Never refuses a field value: reserved bits and
    /// opcodes are kept as found.
    pub fn parse<T: AsRef<[u8]>>(bth: &Bth<T>) -> BthRepr {
        BthRepr {
            opcode: bth.opcode(),
            solicited: bth.solicited(),
            migreq: bth.migreq(),
            pad_count: bth.pad_count(),
            tver: bth.tver(),
            p_key: bth.p_key(),
            fecn: bth.fecn(),
            becn: bth.becn(),
            resv6: bth.resv6(),
            dest_qp: bth.dest_qp(),
            ack_req: bth.ack_req(),
            resv7: bth.resv7(),
            psn: bth.psn(),
        }
    }
    /// Parses the BTH at the start of `bytes` (errors only when it is shorter than 12).
    pub fn parse_bytes(bytes: &[u8]) -> Result<BthRepr> {
        Ok(BthRepr::parse(&Bth::new_checked(bytes)?))
    }
    /// Length: 12.
    pub const fn buffer_len(&self) -> usize {
        BTH_LEN
    }
    /// Writes the BTH at the start of `buf`; returns 12. Refuses a field out of its range.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let range = |at, field, found: u64, allowed| {
            Err(Error::new(at, CTX, field, ErrorKind::BadValue { found, allowed }))
        };
        if self.pad_count > 3 {
            return range(1, "PadCnt", self.pad_count.into(), "0..=3");
        }
        if self.tver > 15 {
            return range(1, "TVer", self.tver.into(), "0..=15");
        }
        if self.resv6 > 63 {
            return range(4, "resv6", self.resv6.into(), "0..=63");
        }
        if self.dest_qp > MAX_24 {
            return range(5, "DestQP", self.dest_qp.into(), "0..=0xffffff");
        }
        if self.resv7 > 127 {
            return range(8, "resv7", self.resv7.into(), "0..=127");
        }
        if self.psn > MAX_24 {
            return range(9, "PSN", self.psn.into(), "0..=0xffffff");
        }
        let Some(b) = buf.get_mut(..BTH_LEN) else {
            return Err(Error::truncated(0, CTX, "buffer", BTH_LEN, buf.len()));
        };
        b[0] = self.opcode.0;
        b[1] = u8::from(self.solicited) << 7 | u8::from(self.migreq) << 6 | self.pad_count << 4 | self.tver;
        b[2..4].copy_from_slice(&self.p_key.to_be_bytes());
        b[4] = u8::from(self.fecn) << 7 | u8::from(self.becn) << 6 | self.resv6;
        b[5..8].copy_from_slice(&self.dest_qp.to_be_bytes()[1..]);
        b[8] = u8::from(self.ack_req) << 7 | self.resv7;
        b[9..12].copy_from_slice(&self.psn.to_be_bytes()[1..]);
        Ok(BTH_LEN)
    }
}
