//! The decoded form of one captured frame: what `lossless decode` prints as text or JSON.
//!
//! Field names follow the standards (802.3 Annex 31B `pause_time`, 802.1Qbb
//! `priority_enable_vector`, 802.1Qaz `willing`, `TSA`, …); the doc comment of each field
//! gives the tshark field it corresponds to, which the proof tests compare against.

use lossless_proto::units::Instant;
use serde::Serialize;

use crate::cn::model::{CnTagRecord, CnmRecord, IpRecord, RoceRecord, UdpRecord};
use crate::lldp::model::LldpRecord;

/// One frame of the capture, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameRecord {
    /// Frame number, from 1 (tshark `frame.number`).
    pub frame: u64,
    /// Capture time, seconds since the Unix epoch with nine decimals (tshark `frame.time_epoch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// The same instant as a UTC date and time (`2026-01-01 00:00:00.000250000`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utc: Option<String>,
    /// LINKTYPE_* number of the capturing interface.
    pub link_type: u32,
    /// Bytes captured (tshark `frame.cap_len`).
    pub caplen: usize,
    /// Bytes on the wire (tshark `frame.len`).
    pub len: u32,
    /// Byte offset of the frame's record or block in the file.
    pub offset: u64,
    /// What the frame carries, as a short tag: `pause`, `pfc`, `mac_control`, `lldp`, `roce`,
    /// `cnp`, `cnm`, `ip` (IPv4/IPv6 that is not RoCEv2), `other`, `skipped` (link type not
    /// decoded) or `malformed` (no Ethernet header).
    pub protocol: Protocol,
    /// The Ethernet II header (tshark `eth.*`, `vlan.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eth: Option<EthRecord>,
    /// The MAC Control payload (tshark `macc.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac_control: Option<MacControlRecord>,
    /// The LLDP PDU (tshark `lldp.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lldp: Option<LldpRecord>,
    /// The 802.1Qau CN-TAG after the VLAN tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cn_tag: Option<CnTagRecord>,
    /// The IPv4 or IPv6 header (tshark `ip.*`, `ipv6.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<IpRecord>,
    /// The UDP header (tshark `udp.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpRecord>,
    /// The RoCEv2 packet (tshark `infiniband.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roce: Option<RoceRecord>,
    /// The 802.1Qau CNM PDU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnm: Option<CnmRecord>,
    /// Things a strict receiver would object to, that did not stop decoding.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why (part of) the frame could not be decoded, with the byte offset in the frame.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// The kind of a frame, for filtering and for the one-line summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// 802.3 PAUSE (MAC Control opcode 0x0001).
    Pause,
    /// 802.1Qbb PFC (MAC Control opcode 0x0101).
    Pfc,
    /// MAC Control with another opcode, or too short to tell.
    MacControl,
    /// LLDP (EtherType 0x88CC).
    Lldp,
    /// RoCEv2 (UDP port 4791) other than a CNP.
    Roce,
    /// RoCEv2 Congestion Notification Packet (BTH opcode 0x81).
    Cnp,
    /// 802.1Qau Congestion Notification Message (EtherType 0x22E7).
    Cnm,
    /// IPv4 or IPv6 that is not RoCEv2.
    Ip,
    /// Any other Ethernet frame.
    Other,
    /// A frame of a link type other than Ethernet, not decoded.
    Skipped,
    /// Too short for an Ethernet header.
    Malformed,
}

/// One 802.1Q tag (tshark `vlan.priority`, `vlan.dei`, `vlan.id`, `vlan.etype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VlanRecord {
    /// Tag Protocol Identifier (0x8100, 0x88a8, 0x9100).
    pub tpid: u16,
    /// Priority Code Point.
    pub pcp: u8,
    /// Drop Eligible Indicator.
    pub dei: bool,
    /// VLAN Identifier.
    pub vid: u16,
}

/// The Ethernet II header of a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthRecord {
    /// Destination address (tshark `eth.dst`).
    pub dst: String,
    /// Source address (tshark `eth.src`).
    pub src: String,
    /// VLAN tags, outermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vlan: Vec<VlanRecord>,
    /// EtherType after the tags (tshark `eth.type`); a value ≤ 1500 is an 802.3 length.
    pub ethertype: u16,
    /// The frame check sequence, its four bytes read in wire order as Wireshark shows it
    /// (tshark `eth.fcs`), when the capture kept it (detected by a matching CRC-32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fcs: Option<u32>,
}

/// A MAC Control payload (EtherType 0x8808).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MacControlRecord {
    /// Opcode (tshark `macc.opcode`): 0x0001 PAUSE, 0x0101 PFC.
    pub opcode: u16,
    /// PAUSE `pause_time` in quanta of 512 bit times (tshark `macc.pause_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_time: Option<u16>,
    /// The PFC fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcRecord>,
    /// Parameters of an unknown opcode, as hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// Destination is not 01-80-C2-00-00-01 (tshark `macc.dst_address_invalid`).
    pub dst_address_invalid: bool,
    /// High byte of the enable vector is not zero (tshark `macc.cbfc.enbv.not_zero`).
    pub enbv_not_zero: bool,
    /// Frame is not exactly 64 bytes with FCS / 60 without.
    pub length_invalid: bool,
    /// The FCS is present and wrong.
    pub fcs_bad: bool,
    /// A byte of padding after the fields is not zero.
    pub padding_not_zero: bool,
    /// The frame carries VLAN tags (MAC Control frames are sent untagged).
    pub vlan_tagged: bool,
}

/// The fields of an 802.1Qbb PFC frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PfcRecord {
    /// `priority_enable_vector` (tshark `macc.cbfc.enbv`).
    pub priority_enable_vector: u16,
    /// `priority_enable_vector` bit n, priority by priority (tshark `macc.cbfc.enbv.c0`…`c7`).
    pub enabled: [bool; 8],
    /// `time[n]` in quanta (tshark `macc.cbfc.pause_time.c0`…`c7`).
    pub time: [u16; 8],
}

/// Formats `t` as seconds since the epoch with nine decimals.
pub fn format_time(t: Instant) -> String {
    let ps = t.as_ps();
    let secs = ps / 1_000_000_000_000;
    let nanos = (ps % 1_000_000_000_000) / 1_000;
    format!("{secs}.{nanos:09}")
}

/// Formats `t` as a UTC date and time with nine decimals, `2026-01-01 00:00:00.000250000`.
pub fn format_utc(t: Instant) -> String {
    let ps = t.as_ps();
    let secs = ps / 1_000_000_000_000;
    let nanos = (ps % 1_000_000_000_000) / 1_000;
    let days = (secs / 86_400) as i128;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{nanos:09}",
        rem / 3_600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Formats six bytes as `aa:bb:cc:dd:ee:ff`, as tshark prints addresses.
pub fn mac_text(b: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5]
    )
}

/// Formats bytes as lowercase hex without separators.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

impl FrameRecord {
    /// Whether the frame has any error (decoding stopped somewhere).
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }
}
