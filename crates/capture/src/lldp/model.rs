//! The decoded form of an LLDP PDU (802.1AB) with its organisational and DCBX TLVs.
//!
//! Each TLV is one JSON object: `type`, `name`, `offset`, `length`, and one key named for
//! the TLV (e.g. `"ets_configuration": {…}`) with the fields the standard defines. Doc
//! comments give the tshark field each value corresponds to.

use serde::Serialize;

/// An LLDP PDU as far as it decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LldpRecord {
    /// The TLVs in wire order, up to the one where decoding stopped.
    pub tlvs: Vec<TlvRecord>,
}

/// One TLV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TlvRecord {
    /// TLV type, 7 bits (tshark `lldp.tlv.type`).
    #[serde(rename = "type")]
    pub tlv_type: u8,
    /// The TLV's name as 802.1AB / 802.1Q / 802.3 / CEE name it.
    pub name: String,
    /// Byte offset of the TLV header in the frame.
    pub offset: usize,
    /// OUI of an organisationally specific TLV, as `xx-xx-xx` (tshark `lldp.orgtlv.oui`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oui: Option<String>,
    /// Subtype of an organisationally specific TLV (tshark `lldp.ieee.802_1.subtype`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtype: Option<u8>,
    /// TLV information string length, 9 bits (tshark `lldp.tlv.len`).
    pub length: usize,
    /// The TLV's fields.
    #[serde(flatten)]
    pub body: TlvBody,
}

/// The fields of a TLV, keyed by the TLV's kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TlvBody {
    /// End of LLDPDU (type 0).
    End {},
    /// Chassis ID (type 1).
    ChassisId(IdRecord),
    /// Port ID (type 2).
    PortId(IdRecord),
    /// Time To Live in seconds (type 3, tshark `lldp.time_to_live`).
    TimeToLive(u16),
    /// Port Description (type 4).
    PortDescription(String),
    /// System Name (type 5).
    SystemName(String),
    /// System Description (type 6).
    SystemDescription(String),
    /// System Capabilities (type 7).
    SystemCapabilities(CapabilitiesRecord),
    /// Management Address (type 8).
    ManagementAddress(ManagementAddressRecord),
    /// IEEE 802.1 Port VLAN ID (subtype 1, tshark `lldp.ieee.802_1.port_vlan.id`).
    PortVlanId(u16),
    /// IEEE 802.1 Port And Protocol VLAN ID (subtype 2).
    PortAndProtocolVlanId(PpvidRecord),
    /// IEEE 802.1 VLAN Name (subtype 3).
    VlanName(VlanNameRecord),
    /// IEEE 802.1 Protocol Identity (subtype 4), as hex.
    ProtocolIdentity(String),
    /// Link Aggregation (IEEE 802.1 subtype 7 or IEEE 802.3 subtype 3).
    LinkAggregation(LinkAggregationRecord),
    /// IEEE 802.3 MAC/PHY Configuration/Status (subtype 1).
    MacPhy(MacPhyRecord),
    /// IEEE 802.3 Maximum Frame Size (subtype 4, tshark `lldp.ieee.802_3.max_frame_size`).
    MaximumFrameSize(u16),
    /// IEEE 802.1Qau Congestion Notification (subtype 8).
    CongestionNotification(CnRecord),
    /// IEEE 802.1Qaz ETS Configuration (subtype 9).
    EtsConfiguration(EtsRecord),
    /// IEEE 802.1Qaz ETS Recommendation (subtype 10).
    EtsRecommendation(EtsRecord),
    /// IEEE 802.1Qaz PFC Configuration (subtype 11).
    PfcConfiguration(PfcConfigRecord),
    /// IEEE 802.1Qaz Application Priority (subtype 12).
    ApplicationPriority(AppPriorityRecord),
    /// CEE DCBX (OUI 00-1B-21, subtype 2) with its sub-TLVs.
    CeeDcbx(CeeRecord),
    /// An organisationally specific TLV this decoder does not interpret.
    Organizational(OrgRecord),
    /// A TLV of a reserved type, kept as hex.
    Unknown(String),
}

/// Chassis ID or Port ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdRecord {
    /// ID subtype (tshark `lldp.chassis.subtype` / `lldp.port.subtype`).
    pub subtype: u8,
    /// The subtype's name (e.g. "MAC address", "Interface name").
    pub subtype_name: String,
    /// The ID: an address as text, a name as text, anything else as hex.
    pub id: String,
}

/// System Capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapabilitiesRecord {
    /// System capabilities bitmap (tshark `lldp.tlv.system_cap`).
    pub capabilities: u16,
    /// Enabled capabilities bitmap (tshark `lldp.tlv.enable_system_cap`).
    pub enabled: u16,
    /// Names of the capabilities present.
    pub names: Vec<String>,
}

/// Management Address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManagementAddressRecord {
    /// Address subtype (IANA address family number).
    pub address_subtype: u8,
    /// The address (IPv4/IPv6/MAC as text, otherwise hex).
    pub address: String,
    /// Interface numbering subtype (1 unknown, 2 ifIndex, 3 system port number).
    pub interface_subtype: u8,
    /// Interface number.
    pub interface_number: u32,
    /// Object identifier, as hex.
    pub oid: String,
}

/// Port And Protocol VLAN ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PpvidRecord {
    /// Port and protocol VLAN supported.
    pub supported: bool,
    /// Port and protocol VLAN enabled.
    pub enabled: bool,
    /// PPVID.
    pub ppvid: u16,
}

/// VLAN Name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VlanNameRecord {
    /// VLAN ID.
    pub vid: u16,
    /// VLAN name.
    pub name: String,
}

/// Link Aggregation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkAggregationRecord {
    /// Aggregation status byte.
    pub status: u8,
    /// Aggregated port ID.
    pub port_id: u32,
}

/// MAC/PHY Configuration/Status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MacPhyRecord {
    /// Auto-negotiation support/status byte.
    pub autoneg_status: u8,
    /// PMD auto-negotiation advertised capability.
    pub advertised: u16,
    /// Operational MAU type.
    pub mau_type: u16,
}

/// Congestion Notification (802.1Qau).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CnRecord {
    /// Per-priority CNPV indicators (tshark `lldp.ieee.802_1qau.cnpv.prio0`…`7`).
    pub cnpv: [bool; 8],
    /// Per-priority Ready indicators (tshark `lldp.ieee.802_1qau.ready.prio0`…`7`).
    pub ready: [bool; 8],
}

/// ETS Configuration or Recommendation (802.1Qaz D.2.9 / D.2.10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EtsRecord {
    /// Willing bit (tshark `lldp.dcbx.ieee.willing`); absent in a Recommendation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub willing: Option<bool>,
    /// Credit-based shaper supported (tshark `lldp.dcbx.ieee.ets.cbs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cbs: Option<bool>,
    /// Max TCs field as sent (0 means 8) (tshark `lldp.dcbx.ieee.ets.maxtcs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tcs: Option<u8>,
    /// Priority → traffic class, priorities 0..7 (tshark `lldp.dcbx.feature.pg.pgid_prio0`…`7`).
    pub priority_tc: [u8; 8],
    /// TC bandwidth in percent (tshark `lldp.dcbx.feature.pg.per0`…`7`).
    pub tc_bandwidth: [u8; 8],
    /// TSA per TC: 0 strict, 1 CBS, 2 ETS, 255 vendor (tshark `lldp.dcbx.ieee.ets.tsa0`…`7`).
    pub tsa: [u8; 8],
}

/// PFC Configuration (802.1Qaz D.2.11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PfcConfigRecord {
    /// Willing bit (tshark `lldp.dcbx.ieee.willing`).
    pub willing: bool,
    /// MACsec bypass capability (tshark `lldp.dcbx.ieee.pfc.mbc`).
    pub mbc: bool,
    /// PFC capability: how many TCs may have PFC enabled (tshark `lldp.dcbx.ieee.pfc.numtcs`).
    pub pfc_cap: u8,
    /// PFC enable bitmap, bit n = priority n.
    pub pfc_enable: u8,
    /// Per priority (tshark `lldp.dcbx.feature.pfc.prio0`…`7`).
    pub enabled: [bool; 8],
}

/// One Application Priority entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppEntryRecord {
    /// Priority, 3 bits (tshark `lldp.dcbx.ieee.app.prio`).
    pub priority: u8,
    /// Selector, 3 bits: 1 EtherType, 2 TCP/SCTP, 3 UDP/DCCP, 4 any, 5 DSCP (tshark `lldp.dcbx.iee.app.sf`).
    pub selector: u8,
    /// Protocol ID (tshark `lldp.dcbx.feature.app.proto`).
    pub protocol: u16,
}

/// Application Priority (802.1Qaz D.2.12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppPriorityRecord {
    /// The entries, in wire order (zero entries is allowed).
    pub entries: Vec<AppEntryRecord>,
}

/// A CEE DCBX TLV: its sub-TLVs in wire order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CeeRecord {
    /// The sub-TLVs.
    pub sub_tlvs: Vec<CeeSubRecord>,
}

/// One CEE sub-TLV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CeeSubRecord {
    /// Control sub-TLV (type 1).
    Control {
        /// Operating version (tshark `lldp.dcbx.version`).
        oper_version: u8,
        /// Max version (tshark `lldp.dcbx.max_version`).
        max_version: u8,
        /// Sequence number (tshark `lldp.dcbx.control.seq`).
        seq: u32,
        /// Acknowledgement number (tshark `lldp.dcbx.control.ack`).
        ack: u32,
    },
    /// Priority Groups sub-TLV (type 2).
    PriorityGroups {
        /// Feature header.
        #[serde(flatten)]
        feature: CeeFeatureRecord,
        /// Priority → PGID (15 = strict) (tshark `lldp.dcbx.feature.pg.pgid_prio0`…`7`).
        pgid: [u8; 8],
        /// PG bandwidth percent (tshark `lldp.dcbx.feature.pg.per0`…`7`).
        pg_bandwidth: [u8; 8],
        /// Number of TCs supported (tshark `lldp.dcbx.feature.pg.numtcs`).
        num_tcs: u8,
    },
    /// PFC sub-TLV (type 3).
    Pfc {
        /// Feature header.
        #[serde(flatten)]
        feature: CeeFeatureRecord,
        /// Per-priority enable (tshark `lldp.dcbx.feature.pfc.prio0`…`7`).
        enabled: [bool; 8],
        /// Number of TCs supporting PFC (tshark `lldp.dcbx.feature.pfc.numtcs`).
        num_tcs: u8,
    },
    /// Application sub-TLV (type 4).
    Application {
        /// Feature header.
        #[serde(flatten)]
        feature: CeeFeatureRecord,
        /// Entries.
        entries: Vec<CeeAppRecord>,
    },
    /// Any other sub-TLV, as hex.
    Other {
        /// Sub-TLV type.
        #[serde(rename = "type")]
        sub_type: u8,
        /// Value as hex.
        value: String,
    },
}

/// The header common to CEE feature sub-TLVs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CeeFeatureRecord {
    /// Operating version (tshark `lldp.dcbx.version`).
    pub oper_version: u8,
    /// Max version (tshark `lldp.dcbx.max_version`).
    pub max_version: u8,
    /// Enable flag (tshark `lldp.dcbx.feature.enabled`).
    pub enable: bool,
    /// Willing flag (tshark `lldp.dcbx.feature.willing`).
    pub willing: bool,
    /// Error flag (tshark `lldp.dcbx.feature.error`).
    pub error: bool,
    /// Subtype (tshark `lldp.dcbx.feature.subtype`).
    pub subtype: u8,
}

/// One CEE Application entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CeeAppRecord {
    /// Protocol ID (tshark `lldp.dcbx.feature.app.proto`).
    pub protocol: u16,
    /// Selector field, 2 bits (0 EtherType, 1 TCP/UDP port) (tshark `lldp.dcbx.feature.app.sf`).
    pub selector: u8,
    /// OUI, upper bits (tshark `lldp.dcbx.feature.app.oui`).
    pub oui: u32,
    /// Priority bitmap (tshark `lldp.dcbx.feature.app.prio`).
    pub priority_map: u8,
}

/// An organisationally specific TLV not interpreted here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrgRecord {
    /// OUI as `xx-xx-xx` (tshark `lldp.orgtlv.oui`).
    pub oui: String,
    /// Subtype.
    pub subtype: u8,
    /// Information string after the subtype, as hex.
    pub info: String,
}

impl LldpRecord {
    /// Whether the PDU carries a DCBX TLV (IEEE 802.1Qaz subtypes 9..12, 802.1Qau CN, or CEE).
    pub fn has_dcbx(&self) -> bool {
        self.tlvs.iter().any(|t| {
            matches!(
                t.body,
                TlvBody::EtsConfiguration(_)
                    | TlvBody::EtsRecommendation(_)
                    | TlvBody::PfcConfiguration(_)
                    | TlvBody::ApplicationPriority(_)
                    | TlvBody::CongestionNotification(_)
                    | TlvBody::CeeDcbx(_)
            )
        })
    }
}
