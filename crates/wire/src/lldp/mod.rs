//! LLDP (802.1AB) PDUs and TLVs, with the 802.1/802.3 organisational TLVs and DCBX.
//!
//! [`tlv::TlvIter`] walks the raw TLVs of an LLDPDU; [`Lldpdu`] decodes them into typed
//! [`Tlv`]s that borrow from the buffer (no allocation; [`Lldpdu::visit`] is the fastest
//! path, [`Lldpdu::tlvs`] the iterator); [`LldpduRepr::parse`] gives owned
//! TLVs plus the first error and order warnings ([`Decoded`]), and [`LldpduRepr::emit`]
//! writes them back byte for byte. Unknown TLVs, subtypes and OUIs are kept raw.

pub mod basic;
pub mod dcbx_cee;
pub mod dcbx_ieee;
pub mod org;
pub mod org8021;
pub mod org8023;
pub mod pdu;
pub mod tlv;

pub use basic::{ChassisId, ChassisIdSubtype, ManagementAddress, PortId, PortIdSubtype, SystemCapabilities};
pub use dcbx_cee::{
    CeeAppEntry, CeeApplication, CeeControl, CeeDcbx, CeeFeatureHeader, CeePfc, CeePriorityGroups, CeeSubTlv,
    CeeTlv,
};
pub use dcbx_ieee::{
    AppEntry, ApplicationPriority, CongestionNotification, EtsConfiguration, EtsRecommendation, EtsTables,
    PfcConfiguration, Tsa,
};
pub use org::OrgTlv;
pub use org8021::{Ieee8021Tlv, LinkAggregation, PortProtocolVlanId, VlanName};
pub use org8023::{Ieee8023Tlv, MacPhyConfigStatus};
pub use pdu::{Decoded, Lldpdu, LldpduRepr, Tlv, Tlvs, lldp_frame};
