//! RoCEv2 (InfiniBand Annex A17): the InfiniBand transport over UDP port 4791.
//!
//! [`bth`] is the Base Transport Header with its [`opcode`]; [`ext`] the extension headers
//! (AETH with the ACK/NAK syndrome and MSN; RETH, DETH, … so any packet's payload can be
//! found; the CNP's 16 reserved bytes); [`icrc`] the invariant CRC with RoCEv2's masking;
//! [`frame`] whole frames (Ethernet + IPv4/IPv6 + UDP + BTH + headers + payload + ICRC + FCS)
//! for senders such as the simulator's pcap writer and for decoders.
//!
//! ```
//! use lossless_wire::ethernet::EthernetAddress;
//! use lossless_wire::fcs::FcsMode;
//! use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr};
//! use lossless_wire::roce::{self, Envelope, RoceFrameRepr};
//!
//! let mut ip = Ipv4Repr::udp([10, 0, 0, 2], [10, 0, 0, 1]);
//! ip.dscp = 48;
//! ip.ecn = Ecn::Ect0;
//! let env = Envelope::new(EthernetAddress([2, 0, 0, 0, 0, 2]), EthernetAddress([2, 0, 0, 0, 0, 1]), None, IpRepr::V4(ip), 0xC000);
//! let cnp = RoceFrameRepr::cnp(env, 0x0000d2);
//! let mut buf = [0u8; 128];
//! let n = cnp.emit(FcsMode::Present, &mut buf).unwrap();
//! assert_eq!(n, 78);
//! let back = roce::parse(&buf[..n], FcsMode::Present).unwrap();
//! assert!(back.icrc_ok() && back.is_canonical());
//! assert_eq!(back.repr, cnp);
//! ```

pub mod bth;
pub mod ext;
pub mod frame;
pub mod icrc;
pub mod opcode;

pub use bth::{BTH_LEN, Bth, BthRepr};
pub use ext::{AETH_LEN, AethRepr, ExtHeaders, NakCode, Syndrome, SyndromeKind};
pub use frame::{Envelope, RoceFrame, RoceFrameRepr, UdpChecksum, parse, parse_with};
pub use icrc::{ICRC_LEN, IcrcEngine};
pub use opcode::{Layout, Opcode, Transport};
