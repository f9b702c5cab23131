//! IEEE 802.1Qau congestion notification (802.1Q clauses 30–33): the CN-TAG a reaction point
//! puts on its data frames and the CNM a congestion point sends back.
//!
//! # EtherTypes
//!
//! - CN-TAG: **0x22E9**, followed by the 16-bit Flow ID (RPID) and then the EtherType of the
//!   payload, like a VLAN tag.
//! - CNM: **0x22E7**, followed by the CNM PDU ([`cnm`]).
//!
//! Neither value is in the Linux `if_ether.h` nor in Wireshark's `etypes.h` copies we could
//! read, and the IEEE EtherType registry text was not available. Three vendor manuals agree
//! on both: the HP FlexFabric 5700 and HPE FlexFabric 5940 configuration guides (QCN chapter:
//! "PDU EtherType … has a value of 0x22E7", data-flow CN tag "EtherType … 0x22E9") and the
//! Fortinet FortiSwitch 548B administration guide (defaults "Ether Type for CN-TAG … 8937",
//! "Ether Type for CNM … 8935", decimal for 0x22E9 and 0x22E7). We use those.
//!
//! # Where the CN-TAG sits
//!
//! After the 802.1Q tags, right before the payload's EtherType: `DA SA [S-TAG] [C-TAG]
//! 0x22E9 FlowID EtherType payload`. The HP/HPE manuals build a CNM by copying "the VLAN tag
//! and CN tag of the sampled frame", in that order. A VLAN TPID after a CN-TAG is refused
//! ([`ErrorKind::Order`]).

pub mod cnm;
mod frame;

pub use cnm::{CNM_HEADER_LEN, Cnm, CnmRepr, EncapsulatedMsdu, MAX_ENCAPSULATED};
pub use frame::{CnTaggedFrameRepr, CnmFrame, CnmFrameRepr, parse_cnm_frame};

use crate::ethernet::{EtherType, EthernetRepr, TAG_LEN, VlanTags};
use crate::{Error, ErrorKind, Result};

/// EtherType of the CN-TAG.
pub const ETHERTYPE_CN_TAG: EtherType = EtherType(0x22E9);
/// EtherType of the CNM.
pub const ETHERTYPE_CNM: EtherType = EtherType(0x22E7);
/// Length of a CN-TAG (EtherType + Flow ID).
pub const CN_TAG_LEN: usize = 4;

/// A CN-TAG: the reaction point's flow identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CnTag {
    /// Flow ID (RPID), chosen by the reaction point to find its rate limiter from a CNM.
    pub flow_id: u16,
}

/// An Ethernet header with an optional CN-TAG after its VLAN tags. `ethernet.ethertype` is the
/// EtherType of the payload (after the CN-TAG, when there is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CnEthernetRepr {
    /// Addresses, VLAN tags and the payload's EtherType.
    pub ethernet: EthernetRepr,
    /// The CN-TAG, if any.
    pub cn_tag: Option<CnTag>,
}

impl CnEthernetRepr {
    /// Parses the header at the start of `bytes`; returns it and the payload offset. Errors:
    /// the Ethernet header or CN-TAG truncated, a VLAN tag or a second CN-TAG after a CN-TAG.
    pub fn parse_bytes(bytes: &[u8]) -> Result<(CnEthernetRepr, usize)> {
        let (mut ethernet, at) = EthernetRepr::parse_bytes(bytes)?;
        if ethernet.ethertype != ETHERTYPE_CN_TAG {
            return Ok((
                CnEthernetRepr {
                    ethernet,
                    cn_tag: None,
                },
                at,
            ));
        }
        let Some(&[f0, f1, t0, t1]) = bytes.get(at..at + CN_TAG_LEN) else {
            return Err(Error::truncated(
                at,
                "CN-TAG",
                "Flow ID and EtherType",
                4,
                bytes.len() - at,
            ));
        };
        let inner = EtherType(u16::from_be_bytes([t0, t1]));
        if inner.is_vlan_tpid() || inner == ETHERTYPE_CN_TAG {
            return Err(Error::new(
                at + 2,
                "CN-TAG",
                "EtherType",
                ErrorKind::Order {
                    expected: "the payload's EtherType: VLAN tags come before the CN-TAG, and there is one CN-TAG",
                },
            ));
        }
        ethernet.ethertype = inner;
        let tag = CnTag {
            flow_id: u16::from_be_bytes([f0, f1]),
        };
        Ok((
            CnEthernetRepr {
                ethernet,
                cn_tag: Some(tag),
            },
            at + CN_TAG_LEN,
        ))
    }
    /// Header length: the Ethernet header with its tags, plus 4 with a CN-TAG.
    pub fn buffer_len(&self) -> usize {
        self.ethernet.buffer_len() + if self.cn_tag.is_some() { CN_TAG_LEN } else { 0 }
    }
    /// Writes the header at the start of `buf` and returns its length. Refuses what
    /// [`EthernetRepr::emit`] refuses, and with a CN-TAG an EtherType that is a VLAN TPID or
    /// 0x22E9.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let Some(tag) = self.cn_tag else {
            return self.ethernet.emit(buf);
        };
        let inner = self.ethernet.ethertype;
        let at = self.ethernet.buffer_len();
        if inner.is_vlan_tpid() || inner == ETHERTYPE_CN_TAG {
            let kind = ErrorKind::BadValue {
                found: inner.0.into(),
                allowed: "an EtherType that is neither a VLAN TPID nor 0x22e9",
            };
            return Err(Error::new(at + 2, "CN-TAG", "EtherType", kind));
        }
        let len = at + CN_TAG_LEN;
        if buf.len() < len {
            return Err(Error::truncated(0, "CN-TAG", "buffer", len, buf.len()));
        }
        let outer = EthernetRepr {
            ethertype: ETHERTYPE_CN_TAG,
            ..self.ethernet
        };
        outer.emit(buf)?;
        buf[at..at + 2].copy_from_slice(&tag.flow_id.to_be_bytes());
        buf[at + 2..at + 4].copy_from_slice(&inner.0.to_be_bytes());
        Ok(len)
    }
    /// The 802.1Q tags.
    pub fn vlan(&self) -> &VlanTags {
        &self.ethernet.tags
    }
}

const _: () = assert!(CN_TAG_LEN == TAG_LEN);
