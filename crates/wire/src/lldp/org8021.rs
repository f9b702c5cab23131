//! IEEE 802.1 organizationally specific TLVs (OUI 00-80-C2, 802.1Q-2018 Annex D): Port VLAN
//! ID, Port And Protocol VLAN ID, VLAN Name, Protocol Identity, Link Aggregation, and the
//! DCBX TLVs of [`super::dcbx_ieee`].

use alloc::vec::Vec;

use super::dcbx_ieee::{
    ApplicationPriority, CongestionNotification, EtsConfiguration, EtsRecommendation, PfcConfiguration,
};
use super::tlv::{TlvView, Writer, be16, be32};
use crate::{Error, ErrorKind, Result};

/// The IEEE 802.1 OUI.
pub const OUI_IEEE_8021: [u8; 3] = [0x00, 0x80, 0xc2];

/// Port And Protocol VLAN ID TLV (subtype 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortProtocolVlanId {
    /// Flags: bit 1 = supported, bit 2 = enabled; other bits as sent.
    pub flags: u8,
    /// The PPVID (0 = not known or not supported).
    pub ppvid: u16,
}

impl PortProtocolVlanId {
    /// Flag bit: port and protocol VLAN supported.
    pub const SUPPORTED: u8 = 1 << 1;
    /// Flag bit: port and protocol VLAN enabled.
    pub const ENABLED: u8 = 1 << 2;
}

/// VLAN Name TLV (subtype 3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VlanName<B = Vec<u8>> {
    /// VLAN ID.
    pub vid: u16,
    /// VLAN name, 0 to 32 bytes.
    pub name: B,
}

impl VlanName<&[u8]> {
    /// An owned copy.
    pub fn to_owned(&self) -> VlanName {
        VlanName {
            vid: self.vid,
            name: self.name.to_vec(),
        }
    }
}

/// Link Aggregation TLV (802.1 subtype 7, and the older 802.3 subtype 3 of the same layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LinkAggregation {
    /// Status: bit 0 capable, bit 1 enabled, bits 3..2 port type (802.1AX-2014); others as sent.
    pub status: u8,
    /// Aggregated port ID (ifIndex), 0 when not aggregated.
    pub port_id: u32,
}

impl LinkAggregation {
    /// Status bit: aggregation capable.
    pub const CAPABLE: u8 = 1 << 0;
    /// Status bit: currently aggregated.
    pub const ENABLED: u8 = 1 << 1;
    /// Bytes of the information after OUI and subtype.
    pub const INFO_LEN: usize = 5;

    /// Decodes the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'_>, info: &[u8]) -> Result<Self> {
        if info.len() != Self::INFO_LEN {
            return Err(tlv.bad_length("Link Aggregation TLV", "9"));
        }
        Ok(LinkAggregation {
            status: info[0],
            port_id: be32(info, 1),
        })
    }
    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        w.u8(self.status);
        w.u32(self.port_id);
    }
}

/// An IEEE 802.1 organizationally specific TLV.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ieee8021Tlv<B = Vec<u8>> {
    /// Port VLAN ID (subtype 1): the port's PVID, 0 if unknown.
    PortVlanId(u16),
    /// Port And Protocol VLAN ID (subtype 2).
    PortProtocolVlanId(PortProtocolVlanId),
    /// VLAN Name (subtype 3).
    VlanName(VlanName<B>),
    /// Protocol Identity (subtype 4): the first bytes of a protocol's frames.
    ProtocolIdentity(B),
    /// Link Aggregation (subtype 7).
    LinkAggregation(LinkAggregation),
    /// Congestion Notification (subtype 8).
    CongestionNotification(CongestionNotification),
    /// ETS Configuration (subtype 9).
    EtsConfiguration(EtsConfiguration),
    /// ETS Recommendation (subtype 10).
    EtsRecommendation(EtsRecommendation),
    /// PFC Configuration (subtype 11).
    PfcConfiguration(PfcConfiguration),
    /// Application Priority (subtype 12).
    ApplicationPriority(ApplicationPriority<B>),
    /// Any other subtype, kept as raw bytes.
    Unknown {
        /// The subtype.
        subtype: u8,
        /// The information after OUI and subtype.
        info: B,
    },
}

fn check_len(
    tlv: &TlvView<'_>,
    info: &[u8],
    want: usize,
    ctx: &'static str,
    allowed: &'static str,
) -> Result<()> {
    if info.len() == want {
        Ok(())
    } else {
        Err(tlv.bad_length(ctx, allowed))
    }
}

impl<'a> Ieee8021Tlv<&'a [u8]> {
    /// Decodes an 802.1 TLV from its subtype and the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'a>, subtype: u8, info: &'a [u8]) -> Result<Self> {
        // Offset of `info` from the start of the LLDPDU.
        let base = tlv.value_offset() + 4;
        Ok(match subtype {
            1 => {
                check_len(tlv, info, 2, "Port VLAN ID TLV", "6")?;
                Ieee8021Tlv::PortVlanId(be16(info, 0))
            }
            2 => {
                check_len(tlv, info, 3, "Port And Protocol VLAN ID TLV", "7")?;
                Ieee8021Tlv::PortProtocolVlanId(PortProtocolVlanId {
                    flags: info[0],
                    ppvid: be16(info, 1),
                })
            }
            3 => {
                const CTX: &str = "VLAN Name TLV";
                if info.len() < 3 {
                    return Err(tlv.bad_length(CTX, "7..=39"));
                }
                let name_len = usize::from(info[2]);
                if name_len > 32 {
                    let kind = ErrorKind::BadValue {
                        found: name_len as u64,
                        allowed: "0..=32",
                    };
                    return Err(Error::new(base + 2, CTX, "VLAN name length", kind));
                }
                if info.len() != 3 + name_len {
                    let kind = ErrorKind::BadLength {
                        found: tlv.value.len(),
                        allowed: "7 + VLAN name length",
                    };
                    return Err(Error::new(tlv.offset, CTX, "length", kind));
                }
                Ieee8021Tlv::VlanName(VlanName {
                    vid: be16(info, 0),
                    name: &info[3..],
                })
            }
            4 => {
                const CTX: &str = "Protocol Identity TLV";
                let Some((&len, identity)) = info.split_first() else {
                    return Err(tlv.bad_length(CTX, "5..=260"));
                };
                if identity.len() != usize::from(len) {
                    let kind = ErrorKind::BadLength {
                        found: tlv.value.len(),
                        allowed: "5 + protocol identity length",
                    };
                    return Err(Error::new(tlv.offset, CTX, "length", kind));
                }
                Ieee8021Tlv::ProtocolIdentity(identity)
            }
            7 => Ieee8021Tlv::LinkAggregation(LinkAggregation::parse(tlv, info)?),
            CongestionNotification::SUBTYPE => {
                Ieee8021Tlv::CongestionNotification(CongestionNotification::parse(tlv, info)?)
            }
            EtsConfiguration::SUBTYPE => Ieee8021Tlv::EtsConfiguration(EtsConfiguration::parse(tlv, info)?),
            EtsRecommendation::SUBTYPE => {
                Ieee8021Tlv::EtsRecommendation(EtsRecommendation::parse(tlv, info)?)
            }
            PfcConfiguration::SUBTYPE => Ieee8021Tlv::PfcConfiguration(PfcConfiguration::parse(tlv, info)?),
            12 => Ieee8021Tlv::ApplicationPriority(ApplicationPriority::parse(tlv, info)?),
            subtype => Ieee8021Tlv::Unknown { subtype, info },
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> Ieee8021Tlv {
        match self {
            Ieee8021Tlv::PortVlanId(v) => Ieee8021Tlv::PortVlanId(*v),
            Ieee8021Tlv::PortProtocolVlanId(v) => Ieee8021Tlv::PortProtocolVlanId(*v),
            Ieee8021Tlv::VlanName(v) => Ieee8021Tlv::VlanName(v.to_owned()),
            Ieee8021Tlv::ProtocolIdentity(v) => Ieee8021Tlv::ProtocolIdentity(v.to_vec()),
            Ieee8021Tlv::LinkAggregation(v) => Ieee8021Tlv::LinkAggregation(*v),
            Ieee8021Tlv::CongestionNotification(v) => Ieee8021Tlv::CongestionNotification(*v),
            Ieee8021Tlv::EtsConfiguration(v) => Ieee8021Tlv::EtsConfiguration(*v),
            Ieee8021Tlv::EtsRecommendation(v) => Ieee8021Tlv::EtsRecommendation(*v),
            Ieee8021Tlv::PfcConfiguration(v) => Ieee8021Tlv::PfcConfiguration(*v),
            Ieee8021Tlv::ApplicationPriority(v) => Ieee8021Tlv::ApplicationPriority(v.to_owned()),
            Ieee8021Tlv::Unknown { subtype, info } => Ieee8021Tlv::Unknown {
                subtype: *subtype,
                info: info.to_vec(),
            },
        }
    }
}

impl<B: AsRef<[u8]>> Ieee8021Tlv<B> {
    /// The subtype byte.
    pub fn subtype(&self) -> u8 {
        match self {
            Ieee8021Tlv::PortVlanId(_) => 1,
            Ieee8021Tlv::PortProtocolVlanId(_) => 2,
            Ieee8021Tlv::VlanName(_) => 3,
            Ieee8021Tlv::ProtocolIdentity(_) => 4,
            Ieee8021Tlv::LinkAggregation(_) => 7,
            Ieee8021Tlv::CongestionNotification(_) => CongestionNotification::SUBTYPE,
            Ieee8021Tlv::EtsConfiguration(_) => EtsConfiguration::SUBTYPE,
            Ieee8021Tlv::EtsRecommendation(_) => EtsRecommendation::SUBTYPE,
            Ieee8021Tlv::PfcConfiguration(_) => PfcConfiguration::SUBTYPE,
            Ieee8021Tlv::ApplicationPriority(_) => 12,
            Ieee8021Tlv::Unknown { subtype, .. } => *subtype,
        }
    }

    /// Bytes of the information after OUI and subtype.
    pub fn info_len(&self) -> usize {
        match self {
            Ieee8021Tlv::PortVlanId(_) => 2,
            Ieee8021Tlv::PortProtocolVlanId(_) => 3,
            Ieee8021Tlv::VlanName(v) => 3 + v.name.as_ref().len(),
            Ieee8021Tlv::ProtocolIdentity(v) => 1 + v.as_ref().len(),
            Ieee8021Tlv::LinkAggregation(_) => LinkAggregation::INFO_LEN,
            Ieee8021Tlv::CongestionNotification(_) => CongestionNotification::INFO_LEN,
            Ieee8021Tlv::EtsConfiguration(_) => EtsConfiguration::INFO_LEN,
            Ieee8021Tlv::EtsRecommendation(_) => EtsRecommendation::INFO_LEN,
            Ieee8021Tlv::PfcConfiguration(_) => PfcConfiguration::INFO_LEN,
            Ieee8021Tlv::ApplicationPriority(v) => v.info_len(),
            Ieee8021Tlv::Unknown { info, .. } => info.as_ref().len(),
        }
    }

    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        match self {
            Ieee8021Tlv::PortVlanId(v) => w.u16(*v),
            Ieee8021Tlv::PortProtocolVlanId(v) => {
                w.u8(v.flags);
                w.u16(v.ppvid);
            }
            Ieee8021Tlv::VlanName(v) => {
                w.u16(v.vid);
                w.u8(v.name.as_ref().len() as u8);
                w.bytes(v.name.as_ref());
            }
            Ieee8021Tlv::ProtocolIdentity(v) => {
                w.u8(v.as_ref().len() as u8);
                w.bytes(v.as_ref());
            }
            Ieee8021Tlv::LinkAggregation(v) => v.emit_info(w),
            Ieee8021Tlv::CongestionNotification(v) => v.emit_info(w),
            Ieee8021Tlv::EtsConfiguration(v) => v.emit_info(w),
            Ieee8021Tlv::EtsRecommendation(v) => v.emit_info(w),
            Ieee8021Tlv::PfcConfiguration(v) => v.emit_info(w),
            Ieee8021Tlv::ApplicationPriority(v) => v.emit_info(w),
            Ieee8021Tlv::Unknown { info, .. } => w.bytes(info.as_ref()),
        }
    }
}
