//! The basic 802.1AB TLVs: Chassis ID, Port ID, Time To Live, the three text TLVs, System
//! Capabilities and Management Address (802.1AB-2016 8.5).

use alloc::vec::Vec;

use super::tlv::{TlvView, Writer, be16, be32};
use crate::{Error, ErrorKind, Result};

/// Defines a subtype enum with named values and a `Reserved` catch-all that keeps the byte.
macro_rules! subtype_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $val:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $var,)*
            /// A reserved subtype, kept as sent.
            Reserved(u8),
        }
        impl From<u8> for $name {
            fn from(v: u8) -> Self {
                match v { $($val => $name::$var,)* other => $name::Reserved(other) }
            }
        }
        impl From<$name> for u8 {
            fn from(v: $name) -> u8 {
                match v { $($name::$var => $val,)* $name::Reserved(other) => other }
            }
        }
    };
}

subtype_enum! {
    /// Chassis ID subtype (802.1AB-2016 Table 8-2).
    ChassisIdSubtype {
        /// entPhysicalAlias of a chassis component.
        ChassisComponent = 1,
        /// ifAlias of an interface.
        InterfaceAlias = 2,
        /// entPhysicalAlias of a port or backplane component.
        PortComponent = 3,
        /// A MAC address.
        MacAddress = 4,
        /// A network address: IANA address family byte, then the address.
        NetworkAddress = 5,
        /// ifName of an interface.
        InterfaceName = 6,
        /// A locally assigned string.
        LocallyAssigned = 7,
    }
}

subtype_enum! {
    /// Port ID subtype (802.1AB-2016 Table 8-3).
    PortIdSubtype {
        /// ifAlias of the port.
        InterfaceAlias = 1,
        /// entPhysicalAlias of a port component.
        PortComponent = 2,
        /// A MAC address.
        MacAddress = 3,
        /// A network address: IANA address family byte, then the address.
        NetworkAddress = 4,
        /// ifName of the port.
        InterfaceName = 5,
        /// Agent circuit ID (RFC 3046).
        AgentCircuitId = 6,
        /// A locally assigned string.
        LocallyAssigned = 7,
    }
}

/// The ID of a Chassis ID or Port ID TLV: 1 to 255 bytes whose meaning the subtype gives.
fn parse_id<'a>(tlv: &TlvView<'a>, context: &'static str) -> Result<(u8, &'a [u8])> {
    if !(2..=256).contains(&tlv.value.len()) {
        return Err(tlv.bad_length(context, "2..=256"));
    }
    Ok((tlv.value[0], &tlv.value[1..]))
}

/// The ID as a MAC address, when it is six bytes.
fn id_mac(id: &[u8]) -> Option<[u8; 6]> {
    id.try_into().ok()
}

/// The ID as (IANA address family, address), when it is at least one byte.
fn id_network(id: &[u8]) -> Option<(u8, &[u8])> {
    id.split_first().map(|(f, a)| (*f, a))
}

/// Chassis ID TLV (type 1): identifies the sending system.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChassisId<B = Vec<u8>> {
    /// What kind of ID this is.
    pub subtype: ChassisIdSubtype,
    /// The ID, 1 to 255 bytes.
    pub id: B,
}

impl<'a> ChassisId<&'a [u8]> {
    /// Decodes the value of a Chassis ID TLV.
    #[inline]
    pub fn parse(tlv: &TlvView<'a>) -> Result<Self> {
        let (subtype, id) = parse_id(tlv, "Chassis ID TLV")?;
        Ok(ChassisId {
            subtype: subtype.into(),
            id,
        })
    }
    /// An owned copy.
    pub fn to_owned(&self) -> ChassisId {
        ChassisId {
            subtype: self.subtype,
            id: self.id.to_vec(),
        }
    }
}

impl<B: AsRef<[u8]>> ChassisId<B> {
    /// Bytes of the value (after the TLV header).
    pub fn value_len(&self) -> usize {
        1 + self.id.as_ref().len()
    }
    /// Writes the value.
    pub(crate) fn emit_value(&self, w: &mut Writer<'_>) {
        w.u8(self.subtype.into());
        w.bytes(self.id.as_ref());
    }
    /// The ID as a MAC address when the subtype says so and it is six bytes long.
    pub fn mac(&self) -> Option<[u8; 6]> {
        (self.subtype == ChassisIdSubtype::MacAddress)
            .then(|| id_mac(self.id.as_ref()))
            .flatten()
    }
    /// The ID as (IANA address family, address) when the subtype is a network address.
    pub fn network_address(&self) -> Option<(u8, &[u8])> {
        (self.subtype == ChassisIdSubtype::NetworkAddress)
            .then(|| id_network(self.id.as_ref()))
            .flatten()
    }
}

/// Port ID TLV (type 2): identifies the sending port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortId<B = Vec<u8>> {
    /// What kind of ID this is.
    pub subtype: PortIdSubtype,
    /// The ID, 1 to 255 bytes.
    pub id: B,
}

impl<'a> PortId<&'a [u8]> {
    /// Decodes the value of a Port ID TLV.
    #[inline]
    pub fn parse(tlv: &TlvView<'a>) -> Result<Self> {
        let (subtype, id) = parse_id(tlv, "Port ID TLV")?;
        Ok(PortId {
            subtype: subtype.into(),
            id,
        })
    }
    /// An owned copy.
    pub fn to_owned(&self) -> PortId {
        PortId {
            subtype: self.subtype,
            id: self.id.to_vec(),
        }
    }
}

impl<B: AsRef<[u8]>> PortId<B> {
    /// Bytes of the value (after the TLV header).
    pub fn value_len(&self) -> usize {
        1 + self.id.as_ref().len()
    }
    /// Writes the value.
    pub(crate) fn emit_value(&self, w: &mut Writer<'_>) {
        w.u8(self.subtype.into());
        w.bytes(self.id.as_ref());
    }
    /// The ID as a MAC address when the subtype says so and it is six bytes long.
    pub fn mac(&self) -> Option<[u8; 6]> {
        (self.subtype == PortIdSubtype::MacAddress)
            .then(|| id_mac(self.id.as_ref()))
            .flatten()
    }
    /// The ID as (IANA address family, address) when the subtype is a network address.
    pub fn network_address(&self) -> Option<(u8, &[u8])> {
        (self.subtype == PortIdSubtype::NetworkAddress)
            .then(|| id_network(self.id.as_ref()))
            .flatten()
    }
}

/// Decodes the value of a Time To Live TLV: seconds the information stays valid (0 = shutdown).
#[inline]
pub fn parse_ttl(tlv: &TlvView<'_>) -> Result<u16> {
    if tlv.value.len() != 2 {
        return Err(tlv.bad_length("Time To Live TLV", "2"));
    }
    Ok(be16(tlv.value, 0))
}

/// Named bits of the System Capabilities TLV's two bitmaps (802.1AB-2016 Table 8-4).
pub mod capability {
    /// Other.
    pub const OTHER: u16 = 1 << 0;
    /// Repeater.
    pub const REPEATER: u16 = 1 << 1;
    /// MAC Bridge component.
    pub const MAC_BRIDGE: u16 = 1 << 2;
    /// WLAN Access Point.
    pub const WLAN_ACCESS_POINT: u16 = 1 << 3;
    /// Router.
    pub const ROUTER: u16 = 1 << 4;
    /// Telephone.
    pub const TELEPHONE: u16 = 1 << 5;
    /// DOCSIS cable device.
    pub const DOCSIS_CABLE_DEVICE: u16 = 1 << 6;
    /// Station Only.
    pub const STATION_ONLY: u16 = 1 << 7;
    /// C-VLAN component.
    pub const C_VLAN: u16 = 1 << 8;
    /// S-VLAN component.
    pub const S_VLAN: u16 = 1 << 9;
    /// Two-port MAC Relay component.
    pub const TWO_PORT_MAC_RELAY: u16 = 1 << 10;

    /// Every named bit with its name, lowest bit first.
    pub const NAMES: [(u16, &str); 11] = [
        (OTHER, "Other"),
        (REPEATER, "Repeater"),
        (MAC_BRIDGE, "MAC Bridge"),
        (WLAN_ACCESS_POINT, "WLAN Access Point"),
        (ROUTER, "Router"),
        (TELEPHONE, "Telephone"),
        (DOCSIS_CABLE_DEVICE, "DOCSIS cable device"),
        (STATION_ONLY, "Station Only"),
        (C_VLAN, "C-VLAN component"),
        (S_VLAN, "S-VLAN component"),
        (TWO_PORT_MAC_RELAY, "Two-port MAC Relay"),
    ];
}

/// System Capabilities TLV (type 7): what the system can do and what is enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SystemCapabilities {
    /// Bitmap of capabilities the system has (bits in [`capability`]).
    pub capabilities: u16,
    /// Bitmap of capabilities that are enabled.
    pub enabled: u16,
}

impl SystemCapabilities {
    /// Bytes of the value.
    pub const VALUE_LEN: usize = 4;

    /// Decodes the value of a System Capabilities TLV.
    #[inline]
    pub fn parse(tlv: &TlvView<'_>) -> Result<Self> {
        if tlv.value.len() != Self::VALUE_LEN {
            return Err(tlv.bad_length("System Capabilities TLV", "4"));
        }
        Ok(SystemCapabilities {
            capabilities: be16(tlv.value, 0),
            enabled: be16(tlv.value, 2),
        })
    }
    /// Writes the value.
    pub(crate) fn emit_value(&self, w: &mut Writer<'_>) {
        w.u16(self.capabilities);
        w.u16(self.enabled);
    }
    /// Whether the system has capability `bit`.
    pub const fn has(&self, bit: u16) -> bool {
        self.capabilities & bit != 0
    }
    /// Whether capability `bit` is enabled.
    pub const fn is_enabled(&self, bit: u16) -> bool {
        self.enabled & bit != 0
    }
}

/// Interface numbering subtype "unknown" of the Management Address TLV.
pub const IF_NUMBERING_UNKNOWN: u8 = 1;
/// Interface numbering subtype "ifIndex".
pub const IF_NUMBERING_IFINDEX: u8 = 2;
/// Interface numbering subtype "system port number".
pub const IF_NUMBERING_SYSTEM_PORT: u8 = 3;

/// Management Address TLV (type 8): an address to reach the system's management entity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ManagementAddress<B = Vec<u8>> {
    /// IANA address family number of the address (1 IPv4, 2 IPv6, 6 802 MAC, …).
    pub address_subtype: u8,
    /// The address, 1 to 31 bytes.
    pub address: B,
    /// Interface numbering subtype (1 unknown, 2 ifIndex, 3 system port number).
    pub interface_subtype: u8,
    /// Interface number.
    pub interface_number: u32,
    /// Object identifier (BER-encoded), 0 to 128 bytes.
    pub oid: B,
}

impl<'a> ManagementAddress<&'a [u8]> {
    /// Decodes the value of a Management Address TLV.
    #[inline]
    pub fn parse(tlv: &TlvView<'a>) -> Result<Self> {
        const CTX: &str = "Management Address TLV";
        let v = tlv.value;
        let base = tlv.value_offset();
        if !(9..=167).contains(&v.len()) {
            return Err(tlv.bad_length(CTX, "9..=167"));
        }
        let str_len = usize::from(v[0]);
        if !(2..=32).contains(&str_len) {
            let kind = ErrorKind::BadValue {
                found: str_len as u64,
                allowed: "2..=32",
            };
            return Err(Error::new(base, CTX, "management address string length", kind));
        }
        // string length byte, subtype + address, interface subtype, number, OID length.
        let oid_len_at = 1 + str_len + 5;
        if v.len() < oid_len_at + 1 {
            return Err(Error::truncated(
                base + 1,
                CTX,
                "management address",
                str_len + 6,
                v.len() - 1,
            ));
        }
        let oid_len = usize::from(v[oid_len_at]);
        if oid_len > 128 {
            let kind = ErrorKind::BadValue {
                found: oid_len as u64,
                allowed: "0..=128",
            };
            return Err(Error::new(
                base + oid_len_at,
                CTX,
                "object identifier string length",
                kind,
            ));
        }
        let end = oid_len_at + 1 + oid_len;
        if v.len() != end {
            let kind = ErrorKind::BadLength {
                found: v.len(),
                allowed: "the sum of its string lengths + 7",
            };
            return Err(Error::new(tlv.offset, CTX, "length", kind));
        }
        Ok(ManagementAddress {
            address_subtype: v[1],
            address: &v[2..1 + str_len],
            interface_subtype: v[1 + str_len],
            interface_number: be32(v, 2 + str_len),
            oid: &v[oid_len_at + 1..end],
        })
    }
    /// An owned copy.
    pub fn to_owned(&self) -> ManagementAddress {
        ManagementAddress {
            address_subtype: self.address_subtype,
            address: self.address.to_vec(),
            interface_subtype: self.interface_subtype,
            interface_number: self.interface_number,
            oid: self.oid.to_vec(),
        }
    }
}

impl<B: AsRef<[u8]>> ManagementAddress<B> {
    /// Bytes of the value.
    pub fn value_len(&self) -> usize {
        1 + 1 + self.address.as_ref().len() + 1 + 4 + 1 + self.oid.as_ref().len()
    }
    /// Writes the value.
    pub(crate) fn emit_value(&self, w: &mut Writer<'_>) {
        let address = self.address.as_ref();
        let oid = self.oid.as_ref();
        w.u8((address.len() + 1) as u8);
        w.u8(self.address_subtype);
        w.bytes(address);
        w.u8(self.interface_subtype);
        w.u32(self.interface_number);
        w.u8(oid.len() as u8);
        w.bytes(oid);
    }
}
