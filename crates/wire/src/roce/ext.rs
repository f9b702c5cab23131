//! The extension headers between the BTH and the payload: the AETH (ACK/NAK with its
//! syndrome and MSN) and, so that any RoCEv2 packet's payload can be found, the RDETH, DETH,
//! RETH, AtomicETH, AtomicAckETH, immediate data, IETH and the CNP's 16 reserved bytes.

use core::fmt;

use super::bth::MAX_24;
use super::opcode::Layout;
use crate::{Error, ErrorKind, Result};

/// Length of the AETH.
pub const AETH_LEN: usize = 4;
/// Length of the reserved bytes of a CNP.
pub const CNP_RESERVED_LEN: usize = 16;

/// The AETH syndrome byte, raw: bit 7 reserved, bits 6–5 the kind (00 ACK, 01 RNR NAK, 10
/// reserved, 11 NAK), bits 4–0 the credit count, RNR timer or NAK code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Syndrome(pub u8);

/// A NAK code (the low five bits of a NAK syndrome).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error (syndrome 0x60): a PSN arrived beyond the expected one.
    PsnSequenceError,
    /// 1: invalid request (0x61).
    InvalidRequest,
    /// 2: remote access error (0x62).
    RemoteAccessError,
    /// 3: remote operational error (0x63).
    RemoteOperationalError,
    /// 4: invalid RD request (0x64).
    InvalidRdRequest,
    /// Any other code (reserved).
    Reserved(u8),
}

impl NakCode {
    /// The code from its five bits.
    pub const fn from_bits(v: u8) -> NakCode {
        match v & 0x1F {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            v => NakCode::Reserved(v),
        }
    }
    /// The five-bit code.
    pub const fn bits(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(v) => v & 0x1F,
        }
    }
    /// The specification's name.
    pub const fn name(self) -> &'static str {
        match self {
            NakCode::PsnSequenceError => "PSN sequence error",
            NakCode::InvalidRequest => "invalid request",
            NakCode::RemoteAccessError => "remote access error",
            NakCode::RemoteOperationalError => "remote operational error",
            NakCode::InvalidRdRequest => "invalid RD request",
            NakCode::Reserved(_) => "reserved",
        }
    }
}

/// What a syndrome says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyndromeKind {
    /// ACK with the end-to-end credit count (0x1F: invalid / unlimited credits).
    Ack {
        /// Credit count, 0..=31.
        credit_count: u8,
    },
    /// Receiver Not Ready NAK with the RNR timer code.
    RnrNak {
        /// Timer code, 0..=31.
        timer: u8,
    },
    /// NAK with its code.
    Nak(NakCode),
    /// The reserved kind 0b10, with its five low bits.
    Reserved(u8),
}

impl Syndrome {
    /// An ACK with `credit_count` (0..=31; 0x1F means invalid credits).
    pub const fn ack(credit_count: u8) -> Syndrome {
        Syndrome(credit_count & 0x1F)
    }
    /// An RNR NAK with timer code `timer` (0..=31).
    pub const fn rnr_nak(timer: u8) -> Syndrome {
        Syndrome(0x20 | (timer & 0x1F))
    }
    /// A NAK with `code` (a PSN sequence error is 0x60).
    pub const fn nak(code: NakCode) -> Syndrome {
        Syndrome(0x60 | code.bits())
    }
    /// The kind bits (6–5): 0 ACK, 1 RNR NAK, 2 reserved, 3 NAK (tshark
    /// `infiniband.aeth.syndrome.opcode`).
    pub const fn kind_bits(self) -> u8 {
        (self.0 >> 5) & 3
    }
    /// The reserved top bit.
    pub const fn reserved_bit(self) -> bool {
        self.0 & 0x80 != 0
    }
    /// The low five bits: credit count, timer or NAK code.
    pub const fn value(self) -> u8 {
        self.0 & 0x1F
    }
    /// What the syndrome says.
    pub const fn kind(self) -> SyndromeKind {
        match self.kind_bits() {
            0 => SyndromeKind::Ack {
                credit_count: self.value(),
            },
            1 => SyndromeKind::RnrNak { timer: self.value() },
            3 => SyndromeKind::Nak(NakCode::from_bits(self.value())),
            _ => SyndromeKind::Reserved(self.value()),
        }
    }
    /// Whether this is a plain ACK.
    pub const fn is_ack(self) -> bool {
        self.kind_bits() == 0
    }
    /// Whether this is a NAK (not an RNR NAK).
    pub const fn is_nak(self) -> bool {
        self.kind_bits() == 3
    }
}

impl fmt::Display for Syndrome {
    /// `ACK (credit count 31)`, `RNR NAK (timer 14)`, `NAK (PSN sequence error)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            SyndromeKind::Ack { credit_count } => write!(f, "ACK (credit count {credit_count})"),
            SyndromeKind::RnrNak { timer } => write!(f, "RNR NAK (timer {timer})"),
            SyndromeKind::Nak(code) => write!(f, "NAK ({})", code.name()),
            SyndromeKind::Reserved(v) => write!(f, "reserved ({v})"),
        }
    }
}

/// An owned AETH: syndrome and 24-bit message sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AethRepr {
    /// Syndrome (tshark `infiniband.aeth.syndrome`).
    pub syndrome: Syndrome,
    /// Message sequence number, 0..=0xFFFFFF (`infiniband.aeth.msn`).
    pub msn: u32,
}

impl AethRepr {
    /// Parses the AETH at the start of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<AethRepr> {
        let Some(b) = bytes.first_chunk::<AETH_LEN>() else {
            return Err(Error::truncated(0, "AETH", "header", AETH_LEN, bytes.len()));
        };
        Ok(AethRepr {
            syndrome: Syndrome(b[0]),
            msn: u32::from_be_bytes([0, b[1], b[2], b[3]]),
        })
    }
    /// Writes the AETH at the start of `buf`; returns 4. Refuses an MSN above 24 bits.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        if self.msn > MAX_24 {
            let kind = ErrorKind::BadValue {
                found: self.msn.into(),
                allowed: "0..=0xffffff",
            };
            return Err(Error::new(1, "AETH", "MSN", kind));
        }
        let Some(b) = buf.get_mut(..AETH_LEN) else {
            return Err(Error::truncated(0, "AETH", "buffer", AETH_LEN, buf.len()));
        };
        b[0] = self.syndrome.0;
        b[1..4].copy_from_slice(&self.msn.to_be_bytes()[1..]);
        Ok(AETH_LEN)
    }
}

/// RDMA Extended Transport Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RethRepr {
    /// Virtual address (tshark `infiniband.reth.va`).
    pub va: u64,
    /// Remote key (`infiniband.reth.r_key`).
    pub r_key: u32,
    /// DMA length in bytes (`infiniband.reth.dmalen`).
    pub dma_len: u32,
}

/// Datagram Extended Transport Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DethRepr {
    /// Queue key (`infiniband.deth.q_key`).
    pub q_key: u32,
    /// The reserved byte before the source QP.
    pub reserved: u8,
    /// Source QP, 0..=0xFFFFFF (`infiniband.deth.srcqp`).
    pub src_qp: u32,
}

/// Atomic Extended Transport Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AtomicEthRepr {
    /// Virtual address.
    pub va: u64,
    /// Remote key.
    pub r_key: u32,
    /// Swap (or add) data.
    pub swap: u64,
    /// Compare data.
    pub compare: u64,
}

/// The extension headers of one packet, present or not, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExtHeaders {
    /// RDETH: the reserved byte and the 24-bit EE context.
    pub rdeth: Option<(u8, u32)>,
    /// DETH.
    pub deth: Option<DethRepr>,
    /// RETH.
    pub reth: Option<RethRepr>,
    /// AtomicETH.
    pub atomic_eth: Option<AtomicEthRepr>,
    /// AETH.
    pub aeth: Option<AethRepr>,
    /// AtomicAckETH: the original remote data.
    pub atomic_ack_eth: Option<u64>,
    /// Immediate data.
    pub immdt: Option<u32>,
    /// IETH: the remote key to invalidate.
    pub ieth: Option<u32>,
    /// The 16 reserved bytes of a CNP (transmitted as zero).
    pub cnp: Option<[u8; CNP_RESERVED_LEN]>,
}

const CTX: &str = "extended transport header";

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

impl ExtHeaders {
    /// The headers `layout` asks for, zeroed (an ACK's AETH is `ACK, credit count 0x1F, MSN 0`).
    pub fn zeroed(layout: Layout) -> ExtHeaders {
        ExtHeaders {
            rdeth: layout.rdeth.then_some((0, 0)),
            deth: layout.deth.then(DethRepr::default),
            reth: layout.reth.then(RethRepr::default),
            atomic_eth: layout.atomic_eth.then(AtomicEthRepr::default),
            aeth: layout.aeth.then_some(AethRepr {
                syndrome: Syndrome::ack(0x1F),
                msn: 0,
            }),
            atomic_ack_eth: layout.atomic_ack_eth.then_some(0),
            immdt: layout.immdt.then_some(0),
            ieth: layout.ieth.then_some(0),
            cnp: layout.cnp.then_some([0; CNP_RESERVED_LEN]),
        }
    }

    /// The layout these headers make (with `payload` false).
    pub fn layout(&self) -> Layout {
        Layout {
            rdeth: self.rdeth.is_some(),
            deth: self.deth.is_some(),
            reth: self.reth.is_some(),
            atomic_eth: self.atomic_eth.is_some(),
            aeth: self.aeth.is_some(),
            atomic_ack_eth: self.atomic_ack_eth.is_some(),
            immdt: self.immdt.is_some(),
            ieth: self.ieth.is_some(),
            cnp: self.cnp.is_some(),
            payload: false,
        }
    }

    /// Bytes these headers take.
    pub fn buffer_len(&self) -> usize {
        self.layout().ext_len()
    }

    /// Parses the headers `layout` names from the start of `bytes`.
    pub fn parse(layout: Layout, bytes: &[u8]) -> Result<ExtHeaders> {
        let need = layout.ext_len();
        if bytes.len() < need {
            return Err(Error::truncated(0, CTX, "headers", need, bytes.len()));
        }
        let b = bytes;
        let mut at = 0;
        let mut take = |on: bool, n: usize| {
            let start = at;
            at += if on { n } else { 0 };
            on.then_some(start)
        };
        let rdeth =
            take(layout.rdeth, 4).map(|s| (b[s], u32::from_be_bytes([0, b[s + 1], b[s + 2], b[s + 3]])));
        let deth = take(layout.deth, 8).map(|s| DethRepr {
            q_key: u32::from_be_bytes(be(b, s)),
            reserved: b[s + 4],
            src_qp: u32::from_be_bytes([0, b[s + 5], b[s + 6], b[s + 7]]),
        });
        let reth = take(layout.reth, 16).map(|s| RethRepr {
            va: u64::from_be_bytes(be(b, s)),
            r_key: u32::from_be_bytes(be(b, s + 8)),
            dma_len: u32::from_be_bytes(be(b, s + 12)),
        });
        let atomic_eth = take(layout.atomic_eth, 28).map(|s| AtomicEthRepr {
            va: u64::from_be_bytes(be(b, s)),
            r_key: u32::from_be_bytes(be(b, s + 8)),
            swap: u64::from_be_bytes(be(b, s + 12)),
            compare: u64::from_be_bytes(be(b, s + 20)),
        });
        let aeth = match take(layout.aeth, AETH_LEN) {
            Some(s) => Some(AethRepr::parse(&b[s..])?),
            None => None,
        };
        let atomic_ack_eth = take(layout.atomic_ack_eth, 8).map(|s| u64::from_be_bytes(be(b, s)));
        let immdt = take(layout.immdt, 4).map(|s| u32::from_be_bytes(be(b, s)));
        let ieth = take(layout.ieth, 4).map(|s| u32::from_be_bytes(be(b, s)));
        let cnp = take(layout.cnp, CNP_RESERVED_LEN).map(|s| be(b, s));
        Ok(ExtHeaders {
            rdeth,
            deth,
            reth,
            atomic_eth,
            aeth,
            atomic_ack_eth,
            immdt,
            ieth,
            cnp,
        })
    }

    /// Writes the headers present at the start of `buf`; returns their length. Refuses a
    /// 24-bit field (EE context, source QP, MSN) above 0xFFFFFF.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::truncated(0, CTX, "buffer", len, buf.len()));
        }
        let too_big = |at, field, v: u32| {
            let kind = ErrorKind::BadValue {
                found: v.into(),
                allowed: "0..=0xffffff",
            };
            Err(Error::new(at, CTX, field, kind))
        };
        let mut at = 0;
        if let Some((r, ee)) = self.rdeth {
            if ee > MAX_24 {
                return too_big(at + 1, "EE context", ee);
            }
            buf[at] = r;
            buf[at + 1..at + 4].copy_from_slice(&ee.to_be_bytes()[1..]);
            at += 4;
        }
        if let Some(d) = self.deth {
            if d.src_qp > MAX_24 {
                return too_big(at + 5, "source QP", d.src_qp);
            }
            buf[at..at + 4].copy_from_slice(&d.q_key.to_be_bytes());
            buf[at + 4] = d.reserved;
            buf[at + 5..at + 8].copy_from_slice(&d.src_qp.to_be_bytes()[1..]);
            at += 8;
        }
        if let Some(r) = self.reth {
            buf[at..at + 8].copy_from_slice(&r.va.to_be_bytes());
            buf[at + 8..at + 12].copy_from_slice(&r.r_key.to_be_bytes());
            buf[at + 12..at + 16].copy_from_slice(&r.dma_len.to_be_bytes());
            at += 16;
        }
        if let Some(a) = self.atomic_eth {
            buf[at..at + 8].copy_from_slice(&a.va.to_be_bytes());
            buf[at + 8..at + 12].copy_from_slice(&a.r_key.to_be_bytes());
            buf[at + 12..at + 20].copy_from_slice(&a.swap.to_be_bytes());
            buf[at + 20..at + 28].copy_from_slice(&a.compare.to_be_bytes());
            at += 28;
        }
        if let Some(a) = self.aeth {
            at += a.emit(&mut buf[at..]).map_err(|e| e.at(at))?;
        }
        if let Some(v) = self.atomic_ack_eth {
            buf[at..at + 8].copy_from_slice(&v.to_be_bytes());
            at += 8;
        }
        if let Some(v) = self.immdt {
            buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
            at += 4;
        }
        if let Some(v) = self.ieth {
            buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
            at += 4;
        }
        if let Some(r) = self.cnp {
            buf[at..at + CNP_RESERVED_LEN].copy_from_slice(&r);
            at += CNP_RESERVED_LEN;
        }
        debug_assert_eq!(at, len);
        Ok(at)
    }
}
