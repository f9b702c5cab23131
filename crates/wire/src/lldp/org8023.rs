//! IEEE 802.3 organizationally specific TLVs (OUI 00-12-0F, 802.3-2018 Clause 79): MAC/PHY
//! Configuration/Status, Power via MDI (kept raw), Link Aggregation, Maximum Frame Size.

use alloc::vec::Vec;

use super::org8021::LinkAggregation;
use super::tlv::{TlvView, Writer, be16};
use crate::Result;

/// The IEEE 802.3 OUI.
pub const OUI_IEEE_8023: [u8; 3] = [0x00, 0x12, 0x0f];

/// MAC/PHY Configuration/Status TLV (subtype 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacPhyConfigStatus {
    /// Auto-negotiation: bit 0 supported, bit 1 enabled; other bits as sent.
    pub autoneg: u8,
    /// PMD auto-negotiation advertised capability (ifMauAutoNegCapAdvertisedBits).
    pub advertised: u16,
    /// Operational MAU type (dot3MauType).
    pub mau_type: u16,
}

impl MacPhyConfigStatus {
    /// Auto-negotiation bit: supported.
    pub const AUTONEG_SUPPORTED: u8 = 1 << 0;
    /// Auto-negotiation bit: enabled.
    pub const AUTONEG_ENABLED: u8 = 1 << 1;
}

/// An IEEE 802.3 organizationally specific TLV.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ieee8023Tlv<B = Vec<u8>> {
    /// MAC/PHY Configuration/Status (subtype 1).
    MacPhyConfigStatus(MacPhyConfigStatus),
    /// Power via MDI (subtype 2): its information bytes, undecoded (3 to 26 bytes in use).
    PowerViaMdi(B),
    /// Link Aggregation (subtype 3, deprecated in favour of the 802.1 form).
    LinkAggregation(LinkAggregation),
    /// Maximum Frame Size (subtype 4).
    MaximumFrameSize(u16),
    /// Any other subtype, kept as raw bytes.
    Unknown {
        /// The subtype.
        subtype: u8,
        /// The information after OUI and subtype.
        info: B,
    },
}

impl<'a> Ieee8023Tlv<&'a [u8]> {
    /// Decodes an 802.3 TLV from its subtype and the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'a>, subtype: u8, info: &'a [u8]) -> Result<Self> {
        Ok(match subtype {
            1 => {
                if info.len() != 5 {
                    return Err(tlv.bad_length("MAC/PHY Configuration/Status TLV", "9"));
                }
                Ieee8023Tlv::MacPhyConfigStatus(MacPhyConfigStatus {
                    autoneg: info[0],
                    advertised: be16(info, 1),
                    mau_type: be16(info, 3),
                })
            }
            2 => Ieee8023Tlv::PowerViaMdi(info),
            3 => Ieee8023Tlv::LinkAggregation(LinkAggregation::parse(tlv, info)?),
            4 => {
                if info.len() != 2 {
                    return Err(tlv.bad_length("Maximum Frame Size TLV", "6"));
                }
                Ieee8023Tlv::MaximumFrameSize(be16(info, 0))
            }
            subtype => Ieee8023Tlv::Unknown { subtype, info },
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> Ieee8023Tlv {
        match self {
            Ieee8023Tlv::MacPhyConfigStatus(v) => Ieee8023Tlv::MacPhyConfigStatus(*v),
            Ieee8023Tlv::PowerViaMdi(v) => Ieee8023Tlv::PowerViaMdi(v.to_vec()),
            Ieee8023Tlv::LinkAggregation(v) => Ieee8023Tlv::LinkAggregation(*v),
            Ieee8023Tlv::MaximumFrameSize(v) => Ieee8023Tlv::MaximumFrameSize(*v),
            Ieee8023Tlv::Unknown { subtype, info } => Ieee8023Tlv::Unknown {
                subtype: *subtype,
                info: info.to_vec(),
            },
        }
    }
}

impl<B: AsRef<[u8]>> Ieee8023Tlv<B> {
    /// The subtype byte.
    pub fn subtype(&self) -> u8 {
        match self {
            Ieee8023Tlv::MacPhyConfigStatus(_) => 1,
            Ieee8023Tlv::PowerViaMdi(_) => 2,
            Ieee8023Tlv::LinkAggregation(_) => 3,
            Ieee8023Tlv::MaximumFrameSize(_) => 4,
            Ieee8023Tlv::Unknown { subtype, .. } => *subtype,
        }
    }

    /// Bytes of the information after OUI and subtype.
    pub fn info_len(&self) -> usize {
        match self {
            Ieee8023Tlv::MacPhyConfigStatus(_) => 5,
            Ieee8023Tlv::PowerViaMdi(v) => v.as_ref().len(),
            Ieee8023Tlv::LinkAggregation(_) => LinkAggregation::INFO_LEN,
            Ieee8023Tlv::MaximumFrameSize(_) => 2,
            Ieee8023Tlv::Unknown { info, .. } => info.as_ref().len(),
        }
    }

    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        match self {
            Ieee8023Tlv::MacPhyConfigStatus(v) => {
                w.u8(v.autoneg);
                w.u16(v.advertised);
                w.u16(v.mau_type);
            }
            Ieee8023Tlv::PowerViaMdi(v) => w.bytes(v.as_ref()),
            Ieee8023Tlv::LinkAggregation(v) => v.emit_info(w),
            Ieee8023Tlv::MaximumFrameSize(v) => w.u16(*v),
            Ieee8023Tlv::Unknown { info, .. } => w.bytes(info.as_ref()),
        }
    }
}
