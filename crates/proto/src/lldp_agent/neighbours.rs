//! The bounded table of remote systems (802.1AB's remote MIB), keyed by MSAP
//! (Chassis ID + Port ID), with TTL expiry.

use lossless_wire::lldp::{ChassisId, ChassisIdSubtype, PortId, PortIdSubtype, Tlv};
use serde::Serialize;

use crate::units::Instant;

/// The MSAP identifier of a neighbour: its Chassis ID and Port ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Msap {
    /// The neighbour's Chassis ID.
    pub chassis: ChassisId,
    /// The neighbour's Port ID.
    pub port: PortId,
}

impl Msap {
    /// A printable form: `chassis-hex/port-hex` (MACs as aa:bb:..., names as text).
    pub fn display(&self) -> String {
        let chassis_mac = self.chassis.subtype == ChassisIdSubtype::MacAddress;
        let port_mac = self.port.subtype == PortIdSubtype::MacAddress;
        format!(
            "{}/{}",
            id_text(&self.chassis.id, chassis_mac),
            id_text(&self.port.id, port_mac)
        )
    }
}

/// An ID as text when it is printable ASCII and not a MAC, else as colon-separated hex.
fn id_text(id: &[u8], mac: bool) -> String {
    if !mac && !id.is_empty() && id.iter().all(|b| b.is_ascii_graphic()) {
        String::from_utf8_lossy(id).into_owned()
    } else {
        id.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    }
}

/// One neighbour: what it last sent and when that expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbour {
    /// Its MSAP.
    pub msap: Msap,
    /// Source MAC of its last LLDPDU.
    pub src_mac: [u8; 6],
    /// TTL of its last LLDPDU, seconds.
    pub ttl: u16,
    /// When its information expires (rxInfoTTL).
    pub expires: Instant,
    /// Its optional TLVs (after Chassis ID, Port ID, TTL; without End).
    pub tlvs: Vec<Tlv>,
}

/// A serialisable summary of a neighbour for `dcbx show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NeighbourSummary {
    /// MSAP as text.
    pub msap: String,
    /// Source MAC as aa:bb:cc:dd:ee:ff.
    pub src_mac: String,
    /// TTL in seconds.
    pub ttl: u16,
    /// Number of optional TLVs.
    pub tlvs: usize,
}

impl Neighbour {
    /// Its summary.
    pub fn summary(&self) -> NeighbourSummary {
        NeighbourSummary {
            msap: self.msap.display(),
            src_mac: mac_text(&self.src_mac),
            ttl: self.ttl,
            tlvs: self.tlvs.len(),
        }
    }
}

/// A MAC address as aa:bb:cc:dd:ee:ff.
pub fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The neighbour table, never longer than its capacity.
#[derive(Debug, Clone, Default)]
pub struct NeighbourTable {
    entries: Vec<Neighbour>,
    capacity: usize,
}

impl NeighbourTable {
    /// An empty table holding at most `capacity` neighbours.
    pub fn new(capacity: usize) -> Self {
        NeighbourTable {
            entries: Vec::with_capacity(capacity.min(64)),
            capacity,
        }
    }
    /// The neighbours, in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = &Neighbour> {
        self.entries.iter()
    }
    /// How many neighbours there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Whether no new neighbour fits.
    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }
    /// The neighbour with this MSAP.
    pub fn get(&self, msap: &Msap) -> Option<&Neighbour> {
        self.entries.iter().find(|n| &n.msap == msap)
    }
    /// The neighbour with this MSAP, mutably.
    pub fn get_mut(&mut self, msap: &Msap) -> Option<&mut Neighbour> {
        self.entries.iter_mut().find(|n| &n.msap == msap)
    }
    /// Adds a neighbour; the caller checked there is room.
    pub fn insert(&mut self, n: Neighbour) {
        self.entries.push(n);
    }
    /// Removes and returns the neighbour with this MSAP.
    pub fn remove(&mut self, msap: &Msap) -> Option<Neighbour> {
        let i = self.entries.iter().position(|n| &n.msap == msap)?;
        Some(self.entries.remove(i))
    }
    /// Removes and returns the neighbour that expires first.
    pub fn remove_earliest_expiry(&mut self) -> Option<Neighbour> {
        self.remove_earliest_expiry_except(None)
    }
    /// Removes and returns the neighbour that expires first, `keep` excepted.
    pub fn remove_earliest_expiry_except(&mut self, keep: Option<&Msap>) -> Option<Neighbour> {
        let i = (0..self.entries.len())
            .filter(|&i| Some(&self.entries[i].msap) != keep)
            .min_by_key(|&i| self.entries[i].expires)?;
        Some(self.entries.remove(i))
    }
    /// Removes and returns every neighbour whose information expired at `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<Neighbour> {
        let (gone, kept) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|n| n.expires <= now);
        self.entries = kept;
        gone
    }
    /// When the next neighbour expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.entries.iter().map(|n| n.expires).min()
    }
    /// Removes every neighbour.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
