//! Organizationally specific TLVs (type 127): a 3-byte OUI and a subtype, dispatched to the
//! 802.1, 802.3 and CEE decoders; other OUIs are kept raw.

use alloc::vec::Vec;

use super::dcbx_cee::{CeeTlv, OUI_CEE};
use super::org8021::{Ieee8021Tlv, OUI_IEEE_8021};
use super::org8023::{Ieee8023Tlv, OUI_IEEE_8023};
use super::tlv::{TlvView, Writer};
use crate::Result;

/// An organizationally specific TLV (type 127), by OUI.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OrgTlv<B = Vec<u8>> {
    /// IEEE 802.1 (00-80-C2), including the IEEE DCBX TLVs.
    Ieee8021(Ieee8021Tlv<B>),
    /// IEEE 802.3 (00-12-0F).
    Ieee8023(Ieee8023Tlv<B>),
    /// CEE / CIN DCBX (00-1B-21).
    Cee(CeeTlv<B>),
    /// Any other OUI, kept raw.
    Other {
        /// The OUI.
        oui: [u8; 3],
        /// The subtype.
        subtype: u8,
        /// The information after OUI and subtype.
        info: B,
    },
}

impl<'a> OrgTlv<&'a [u8]> {
    /// Decodes the value of an organizationally specific TLV.
    #[inline]
    pub fn parse(view: &TlvView<'a>) -> Result<Self> {
        let v = view.value;
        if v.len() < 4 {
            return Err(view.bad_length("Organizationally Specific TLV", "4..=511"));
        }
        let oui = [v[0], v[1], v[2]];
        let (subtype, info) = (v[3], &v[4..]);
        Ok(match oui {
            OUI_IEEE_8021 => OrgTlv::Ieee8021(Ieee8021Tlv::parse(view, subtype, info)?),
            OUI_IEEE_8023 => OrgTlv::Ieee8023(Ieee8023Tlv::parse(view, subtype, info)?),
            OUI_CEE => OrgTlv::Cee(CeeTlv::parse(view, subtype, info)?),
            oui => OrgTlv::Other { oui, subtype, info },
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> OrgTlv {
        match self {
            OrgTlv::Ieee8021(t) => OrgTlv::Ieee8021(t.to_owned()),
            OrgTlv::Ieee8023(t) => OrgTlv::Ieee8023(t.to_owned()),
            OrgTlv::Cee(t) => OrgTlv::Cee(t.to_owned()),
            OrgTlv::Other { oui, subtype, info } => OrgTlv::Other {
                oui: *oui,
                subtype: *subtype,
                info: info.to_vec(),
            },
        }
    }
}

impl<B: AsRef<[u8]>> OrgTlv<B> {
    /// The OUI.
    pub fn oui(&self) -> [u8; 3] {
        match self {
            OrgTlv::Ieee8021(_) => OUI_IEEE_8021,
            OrgTlv::Ieee8023(_) => OUI_IEEE_8023,
            OrgTlv::Cee(_) => OUI_CEE,
            OrgTlv::Other { oui, .. } => *oui,
        }
    }

    /// The subtype.
    pub fn subtype(&self) -> u8 {
        match self {
            OrgTlv::Ieee8021(t) => t.subtype(),
            OrgTlv::Ieee8023(t) => t.subtype(),
            OrgTlv::Cee(t) => t.subtype(),
            OrgTlv::Other { subtype, .. } => *subtype,
        }
    }

    /// Bytes of the TLV value: OUI, subtype and information.
    pub fn value_len(&self) -> usize {
        4 + match self {
            OrgTlv::Ieee8021(t) => t.info_len(),
            OrgTlv::Ieee8023(t) => t.info_len(),
            OrgTlv::Cee(t) => t.info_len(),
            OrgTlv::Other { info, .. } => info.as_ref().len(),
        }
    }

    pub(crate) fn emit_value(&self, w: &mut Writer<'_>) {
        w.bytes(&self.oui());
        w.u8(self.subtype());
        match self {
            OrgTlv::Ieee8021(t) => t.emit_info(w),
            OrgTlv::Ieee8023(t) => t.emit_info(w),
            OrgTlv::Cee(t) => t.emit_info(w),
            OrgTlv::Other { info, .. } => w.bytes(info.as_ref()),
        }
    }
}
