//! BTH opcodes: their names, transport and which extension headers follow the BTH.

use core::fmt;

/// The 8-bit BTH opcode: transport in the top three bits, operation in the low five
/// (InfiniBand Architecture Specification Vol. 1, Table 38; `include/rdma/ib_pack.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Opcode(pub u8);

/// The transport service an opcode belongs to (its top three bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// 0b000: Reliable Connection.
    Rc,
    /// 0b001: Unreliable Connection.
    Uc,
    /// 0b010: Reliable Datagram.
    Rd,
    /// 0b011: Unreliable Datagram.
    Ud,
    /// 0b100: Congestion Notification (RoCEv2 CNP).
    Cnp,
    /// 0b101: Extended Reliable Connection.
    Xrc,
    /// 0b110 or 0b111: manufacturer specific.
    Vendor,
}

impl Transport {
    /// The short name: `RC`, `UC`, `RD`, `UD`, `CNP`, `XRC` or `vendor`.
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Vendor => "vendor",
        }
    }
}

/// Which headers follow the BTH for one opcode, in wire order, and whether a payload may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    /// Reliable Datagram Extended Transport Header (4 bytes).
    pub rdeth: bool,
    /// Datagram Extended Transport Header (8 bytes).
    pub deth: bool,
    /// RDMA Extended Transport Header (16 bytes).
    pub reth: bool,
    /// Atomic Extended Transport Header (28 bytes).
    pub atomic_eth: bool,
    /// ACK Extended Transport Header (4 bytes).
    pub aeth: bool,
    /// Atomic ACK Extended Transport Header (8 bytes).
    pub atomic_ack_eth: bool,
    /// Immediate data (4 bytes).
    pub immdt: bool,
    /// Invalidate Extended Transport Header (4 bytes).
    pub ieth: bool,
    /// The 16 reserved bytes of a RoCEv2 CNP.
    pub cnp: bool,
    /// Whether a payload may follow (SEND, RDMA WRITE, RDMA READ response data).
    pub payload: bool,
}

const NONE: Layout = Layout {
    rdeth: false,
    deth: false,
    reth: false,
    atomic_eth: false,
    aeth: false,
    atomic_ack_eth: false,
    immdt: false,
    ieth: false,
    cnp: false,
    payload: false,
};

impl Layout {
    /// Bytes of extension headers between the BTH and the payload.
    pub const fn ext_len(&self) -> usize {
        4 * self.rdeth as usize
            + 8 * self.deth as usize
            + 16 * self.reth as usize
            + 28 * self.atomic_eth as usize
            + 4 * self.aeth as usize
            + 8 * self.atomic_ack_eth as usize
            + 4 * self.immdt as usize
            + 4 * self.ieth as usize
            + 16 * self.cnp as usize
    }
}

/// The operations shared by RC, UC and RD (low five bits), with their names and headers.
const OPS: [(&str, Layout); 0x18] = {
    let data = Layout {
        payload: true,
        ..NONE
    };
    let imm = Layout {
        payload: true,
        immdt: true,
        ..NONE
    };
    let reth = Layout {
        payload: true,
        reth: true,
        ..NONE
    };
    let aeth = Layout { aeth: true, ..NONE };
    let aeth_data = Layout {
        aeth: true,
        payload: true,
        ..NONE
    };
    let atomic = Layout {
        atomic_eth: true,
        ..NONE
    };
    let ieth = Layout {
        ieth: true,
        payload: true,
        ..NONE
    };
    [
        ("SEND First", data),
        ("SEND Middle", data),
        ("SEND Last", data),
        ("SEND Last with Immediate", imm),
        ("SEND Only", data),
        ("SEND Only with Immediate", imm),
        ("RDMA WRITE First", reth),
        ("RDMA WRITE Middle", data),
        ("RDMA WRITE Last", data),
        ("RDMA WRITE Last with Immediate", imm),
        ("RDMA WRITE Only", reth),
        ("RDMA WRITE Only with Immediate", Layout { immdt: true, ..reth }),
        (
            "RDMA READ Request",
            Layout {
                payload: false,
                ..reth
            },
        ),
        ("RDMA READ response First", aeth_data),
        ("RDMA READ response Middle", data),
        ("RDMA READ response Last", aeth_data),
        ("RDMA READ response Only", aeth_data),
        ("Acknowledge", aeth),
        (
            "ATOMIC Acknowledge",
            Layout {
                atomic_ack_eth: true,
                ..aeth
            },
        ),
        ("CmpSwap", atomic),
        ("FetchAdd", atomic),
        ("Reserved", NONE),
        ("SEND Last with Invalidate", ieth),
        ("SEND Only with Invalidate", ieth),
    ]
};

impl Opcode {
    /// RC SEND First (0x00).
    pub const RC_SEND_FIRST: Opcode = Opcode(0x00);
    /// RC SEND Middle (0x01).
    pub const RC_SEND_MIDDLE: Opcode = Opcode(0x01);
    /// RC SEND Last (0x02).
    pub const RC_SEND_LAST: Opcode = Opcode(0x02);
    /// RC SEND Only (0x04).
    pub const RC_SEND_ONLY: Opcode = Opcode(0x04);
    /// RC RDMA WRITE First (0x06), with a RETH.
    pub const RC_RDMA_WRITE_FIRST: Opcode = Opcode(0x06);
    /// RC RDMA WRITE Middle (0x07).
    pub const RC_RDMA_WRITE_MIDDLE: Opcode = Opcode(0x07);
    /// RC RDMA WRITE Last (0x08).
    pub const RC_RDMA_WRITE_LAST: Opcode = Opcode(0x08);
    /// RC RDMA WRITE Only (0x0A), with a RETH.
    pub const RC_RDMA_WRITE_ONLY: Opcode = Opcode(0x0A);
    /// RC RDMA READ Request (0x0C), with a RETH.
    pub const RC_RDMA_READ_REQUEST: Opcode = Opcode(0x0C);
    /// RC RDMA READ response Only (0x10), with an AETH.
    pub const RC_RDMA_READ_RESPONSE_ONLY: Opcode = Opcode(0x10);
    /// RC Acknowledge (0x11): ACK or NAK, with an AETH.
    pub const RC_ACKNOWLEDGE: Opcode = Opcode(0x11);
    /// UC SEND Only (0x24).
    pub const UC_SEND_ONLY: Opcode = Opcode(0x24);
    /// UD SEND Only (0x64), with a DETH.
    pub const UD_SEND_ONLY: Opcode = Opcode(0x64);
    /// UD SEND Only with Immediate (0x65), with a DETH and immediate data.
    pub const UD_SEND_ONLY_WITH_IMMEDIATE: Opcode = Opcode(0x65);
    /// RoCEv2 Congestion Notification Packet (0x81), with 16 reserved bytes.
    pub const CNP: Opcode = Opcode(0x81);

    /// The transport (top three bits).
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            _ => Transport::Vendor,
        }
    }

    /// The operation's name without the transport (`SEND Only`, `Acknowledge`, `CNP`…), or
    /// `None` for an opcode the specification reserves.
    pub fn operation(self) -> Option<&'static str> {
        self.entry().map(|(n, _)| n)
    }

    /// The headers that follow the BTH, or `None` when the opcode is reserved or vendor
    /// specific (the packet cannot be decoded past the BTH).
    pub fn layout(self) -> Option<Layout> {
        self.entry().map(|(_, l)| l)
    }

    fn entry(self) -> Option<(&'static str, Layout)> {
        let op = usize::from(self.0 & 0x1F);
        let shared = OPS.get(op).filter(|(n, _)| *n != "Reserved").copied();
        match self.transport() {
            Transport::Rc => shared,
            // UC: the SEND and RDMA WRITE operations only.
            Transport::Uc => shared.filter(|_| op <= 0x0B),
            // RD: an RDETH first; requests also carry a DETH.
            Transport::Rd => match op {
                0x00..=0x0C | 0x13 | 0x14 => shared.map(|(n, l)| {
                    (
                        n,
                        Layout {
                            rdeth: true,
                            deth: true,
                            ..l
                        },
                    )
                }),
                0x0D..=0x12 => shared.map(|(n, l)| (n, Layout { rdeth: true, ..l })),
                0x15 => Some((
                    "RESYNC",
                    Layout {
                        rdeth: true,
                        deth: true,
                        ..NONE
                    },
                )),
                _ => None,
            },
            Transport::Ud => match op {
                0x04 | 0x05 => shared.map(|(n, l)| (n, Layout { deth: true, ..l })),
                _ => None,
            },
            Transport::Cnp => (op == 0x01).then_some(("CNP", Layout { cnp: true, ..NONE })),
            Transport::Xrc | Transport::Vendor => None,
        }
    }

    /// Whether this is the RoCEv2 CNP opcode (0x81).
    pub const fn is_cnp(self) -> bool {
        self.0 == Opcode::CNP.0
    }

    /// Whether the packet carries an AETH (ACK/NAK, RDMA READ responses).
    pub fn has_aeth(self) -> bool {
        self.layout().is_some_and(|l| l.aeth)
    }
}

impl fmt::Display for Opcode {
    /// `RC Acknowledge`, `UD SEND Only`, `CNP`, or `reserved 0x15`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operation() {
            Some("CNP") => f.write_str("CNP"),
            Some(op) => write!(f, "{} {op}", self.transport().name()),
            None => write!(f, "reserved {:#04x}", self.0),
        }
    }
}
