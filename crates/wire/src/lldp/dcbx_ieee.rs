//! IEEE 802.1Qaz DCBX TLVs (802.1 OUI 00-80-C2): ETS Configuration (9), ETS Recommendation
//! (10), PFC Configuration (11), Application Priority (12), and 802.1Qau Congestion
//! Notification (8). Layouts as in 802.1Q-2018 D.2.8–D.2.12, lldpad's `lldp_8021qaz.h` and
//! Wireshark's `packet-lldp.c`.

use alloc::vec::Vec;

use super::tlv::{TlvView, Writer, be16};
use crate::Result;

/// Transmission selection algorithm of a traffic class (802.1Q Table 8-6), as sent: the
/// named values below, or any reserved value kept unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tsa(pub u8);

impl Tsa {
    /// 0: strict priority.
    pub const STRICT: Tsa = Tsa(0);
    /// 1: credit-based shaper.
    pub const CREDIT_BASED_SHAPER: Tsa = Tsa(1);
    /// 2: enhanced transmission selection.
    pub const ETS: Tsa = Tsa(2);
    /// 255: vendor specific.
    pub const VENDOR: Tsa = Tsa(255);

    /// The algorithm's name, or `None` for a reserved value.
    pub const fn name(self) -> Option<&'static str> {
        match self.0 {
            0 => Some("strict"),
            1 => Some("cbs"),
            2 => Some("ets"),
            255 => Some("vendor"),
            _ => None,
        }
    }
}

impl From<u8> for Tsa {
    fn from(v: u8) -> Self {
        Tsa(v)
    }
}

impl From<Tsa> for u8 {
    fn from(t: Tsa) -> u8 {
        t.0
    }
}

/// The three tables shared by ETS Configuration and ETS Recommendation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EtsTables {
    /// Traffic class of each priority (index = priority), a 4-bit value as sent (0..=7 valid).
    pub priority_tc: [u8; 8],
    /// Bandwidth percentage of each traffic class.
    pub tc_bandwidth: [u8; 8],
    /// Transmission selection algorithm of each traffic class.
    pub tsa: [Tsa; 8],
}

impl Default for EtsTables {
    fn default() -> Self {
        EtsTables {
            priority_tc: [0; 8],
            tc_bandwidth: [0; 8],
            tsa: [Tsa::STRICT; 8],
        }
    }
}

impl EtsTables {
    /// Bytes of the tables on the wire.
    pub const LEN: usize = 20;

    /// Decodes the 20 bytes of tables (caller checked the length).
    #[inline]
    fn parse(b: &[u8]) -> Self {
        // Spread the eight nibbles into eight bytes in a register (priority 0 = high nibble).
        let w = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let mut spread = 0u64;
        for i in 0..8 {
            spread |= ((w >> (28 - 4 * i)) & 0x0f) << (56 - 8 * i);
        }
        let mut tc_bandwidth = [0; 8];
        tc_bandwidth.copy_from_slice(&b[4..12]);
        let mut tsa = [0; 8];
        tsa.copy_from_slice(&b[12..20]);
        EtsTables {
            priority_tc: spread.to_be_bytes(),
            tc_bandwidth,
            tsa: tsa.map(Tsa),
        }
    }

    /// Writes the tables; priority-table values keep their low 4 bits.
    fn emit(&self, w: &mut Writer<'_>) {
        for i in 0..4 {
            w.u8((self.priority_tc[2 * i] & 0x0f) << 4 | (self.priority_tc[2 * i + 1] & 0x0f));
        }
        w.bytes(&self.tc_bandwidth);
        for t in self.tsa {
            w.u8(t.into());
        }
    }

    /// Sum of the bandwidth percentages (100 in a consistent configuration).
    pub fn bandwidth_sum(&self) -> u32 {
        self.tc_bandwidth.iter().map(|&b| u32::from(b)).sum()
    }
}

/// ETS Configuration TLV (subtype 9): the sender's ETS settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EtsConfiguration {
    /// Willing to accept the peer's recommendation.
    pub willing: bool,
    /// Credit-based shaper supported.
    pub cbs: bool,
    /// Reserved bits 5..3 of the flags byte, as sent.
    pub reserved: u8,
    /// Max TCs field, 3 bits as sent (0 means 8): see [`EtsConfiguration::max_tcs_count`].
    pub max_tcs: u8,
    /// Priority assignment, bandwidth and TSA tables.
    pub tables: EtsTables,
}

impl EtsConfiguration {
    /// TLV subtype.
    pub const SUBTYPE: u8 = 9;
    /// Bytes of the information after OUI and subtype.
    pub const INFO_LEN: usize = 21;
    /// Name of the structure, for errors.
    pub const NAME: &str = "ETS Configuration TLV";

    /// Decodes the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'_>, info: &[u8]) -> Result<Self> {
        if info.len() != Self::INFO_LEN {
            return Err(tlv.bad_length(Self::NAME, "25"));
        }
        let f = info[0];
        Ok(EtsConfiguration {
            willing: f & 0x80 != 0,
            cbs: f & 0x40 != 0,
            reserved: (f >> 3) & 0x07,
            max_tcs: f & 0x07,
            tables: EtsTables::parse(&info[1..]),
        })
    }
    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        w.u8(u8::from(self.willing) << 7
            | u8::from(self.cbs) << 6
            | (self.reserved & 7) << 3
            | (self.max_tcs & 7));
        self.tables.emit(w);
    }
    /// Number of traffic classes supported (the Max TCs field, with 0 meaning 8).
    pub const fn max_tcs_count(&self) -> u8 {
        if self.max_tcs == 0 { 8 } else { self.max_tcs }
    }
}

/// ETS Recommendation TLV (subtype 10): the ETS settings the sender recommends to its peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EtsRecommendation {
    /// The reserved first byte, as sent.
    pub reserved: u8,
    /// Priority assignment, bandwidth and TSA tables.
    pub tables: EtsTables,
}

impl EtsRecommendation {
    /// TLV subtype.
    pub const SUBTYPE: u8 = 10;
    /// Bytes of the information after OUI and subtype.
    pub const INFO_LEN: usize = 21;
    /// Name of the structure, for errors.
    pub const NAME: &str = "ETS Recommendation TLV";

    /// Decodes the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'_>, info: &[u8]) -> Result<Self> {
        if info.len() != Self::INFO_LEN {
            return Err(tlv.bad_length(Self::NAME, "25"));
        }
        Ok(EtsRecommendation {
            reserved: info[0],
            tables: EtsTables::parse(&info[1..]),
        })
    }
    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        w.u8(self.reserved);
        self.tables.emit(w);
    }
}

/// PFC Configuration TLV (subtype 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PfcConfiguration {
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// MACsec bypass capability.
    pub mbc: bool,
    /// Reserved bits 5..4 of the flags byte, as sent.
    pub reserved: u8,
    /// PFC capability: how many traffic classes may have PFC enabled at once (4 bits).
    pub pfc_cap: u8,
    /// PFC enable bitmap: bit n set = PFC enabled on priority n.
    pub enabled: u8,
}

impl PfcConfiguration {
    /// TLV subtype.
    pub const SUBTYPE: u8 = 11;
    /// Bytes of the information after OUI and subtype.
    pub const INFO_LEN: usize = 2;
    /// Name of the structure, for errors.
    pub const NAME: &str = "PFC Configuration TLV";

    /// Decodes the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'_>, info: &[u8]) -> Result<Self> {
        if info.len() != Self::INFO_LEN {
            return Err(tlv.bad_length(Self::NAME, "6"));
        }
        let f = info[0];
        Ok(PfcConfiguration {
            willing: f & 0x80 != 0,
            mbc: f & 0x40 != 0,
            reserved: (f >> 4) & 0x03,
            pfc_cap: f & 0x0f,
            enabled: info[1],
        })
    }
    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        w.u8(u8::from(self.willing) << 7
            | u8::from(self.mbc) << 6
            | (self.reserved & 3) << 4
            | (self.pfc_cap & 0x0f));
        w.u8(self.enabled);
    }
    /// Whether PFC is enabled on `priority` (0..=7).
    pub const fn is_enabled(&self, priority: u8) -> bool {
        priority < 8 && self.enabled & (1 << priority) != 0
    }
}

/// Application Priority selector values (802.1Q-2018 Table D-9).
pub mod selector {
    /// EtherType.
    pub const ETHERTYPE: u8 = 1;
    /// Well-known port over TCP or SCTP.
    pub const TCP_SCTP: u8 = 2;
    /// Well-known port over UDP or DCCP.
    pub const UDP_DCCP: u8 = 3;
    /// Well-known port over TCP, SCTP, UDP or DCCP.
    pub const TCP_SCTP_UDP_DCCP: u8 = 4;
    /// Differentiated Services Code Point.
    pub const DSCP: u8 = 5;
}

/// One entry of the Application Priority table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AppEntry {
    /// Priority (3 bits).
    pub priority: u8,
    /// Reserved bits 4..3, as sent.
    pub reserved: u8,
    /// Selector (3 bits): what `protocol` is, see [`selector`].
    pub selector: u8,
    /// Protocol ID: an EtherType, a port number or a DSCP value.
    pub protocol: u16,
}

impl AppEntry {
    /// Bytes of one entry.
    pub const LEN: usize = 3;

    /// Decodes one 3-byte entry.
    fn parse(b: &[u8]) -> Self {
        AppEntry {
            priority: b[0] >> 5,
            reserved: (b[0] >> 3) & 3,
            selector: b[0] & 7,
            protocol: be16(b, 1),
        }
    }
    /// The entry's 3 bytes.
    pub fn to_bytes(&self) -> [u8; 3] {
        let p = self.protocol.to_be_bytes();
        [
            (self.priority & 7) << 5 | (self.reserved & 3) << 3 | (self.selector & 7),
            p[0],
            p[1],
        ]
    }
}

/// Application Priority TLV (subtype 12): a reserved byte and zero or more 3-byte entries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ApplicationPriority<B = Vec<u8>> {
    /// The reserved byte before the table, as sent.
    pub reserved: u8,
    entries: B,
}

impl ApplicationPriority {
    /// An owned TLV with the given entries.
    pub fn new(reserved: u8, entries: &[AppEntry]) -> Self {
        ApplicationPriority {
            reserved,
            entries: entries.iter().flat_map(AppEntry::to_bytes).collect(),
        }
    }
}

impl<B> ApplicationPriority<B> {
    /// TLV subtype.
    pub const SUBTYPE: u8 = 12;
    /// Name of the structure, for errors.
    pub const NAME: &str = "Application Priority TLV";
}

impl<'a> ApplicationPriority<&'a [u8]> {
    /// Decodes the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'a>, info: &'a [u8]) -> Result<Self> {
        if info.is_empty() || !(info.len() - 1).is_multiple_of(AppEntry::LEN) {
            return Err(tlv.bad_length(Self::NAME, "5 + 3n"));
        }
        Ok(ApplicationPriority {
            reserved: info[0],
            entries: &info[1..],
        })
    }
    /// An owned copy.
    pub fn to_owned(&self) -> ApplicationPriority {
        ApplicationPriority {
            reserved: self.reserved,
            entries: self.entries.to_vec(),
        }
    }
}

impl<B: AsRef<[u8]>> ApplicationPriority<B> {
    /// The entries of the table, in order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = AppEntry> + '_ {
        self.entries
            .as_ref()
            .chunks_exact(AppEntry::LEN)
            .map(AppEntry::parse)
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.as_ref().len() / AppEntry::LEN
    }
    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of the information after OUI and subtype.
    pub fn info_len(&self) -> usize {
        1 + self.entries.as_ref().len()
    }
    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        w.u8(self.reserved);
        w.bytes(self.entries.as_ref());
    }
}

/// Congestion Notification TLV (subtype 8, 802.1Qau): per-priority CNPV and Ready bitmaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CongestionNotification {
    /// Bit n set = priority n is a congestion notification priority value.
    pub cnpv: u8,
    /// Bit n set = priority n is ready.
    pub ready: u8,
}

impl CongestionNotification {
    /// TLV subtype.
    pub const SUBTYPE: u8 = 8;
    /// Bytes of the information after OUI and subtype.
    pub const INFO_LEN: usize = 2;
    /// Name of the structure, for errors.
    pub const NAME: &str = "Congestion Notification TLV";

    /// Decodes the information after OUI and subtype.
    #[inline]
    pub fn parse(tlv: &TlvView<'_>, info: &[u8]) -> Result<Self> {
        if info.len() != Self::INFO_LEN {
            return Err(tlv.bad_length(Self::NAME, "6"));
        }
        Ok(CongestionNotification {
            cnpv: info[0],
            ready: info[1],
        })
    }
    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        w.u8(self.cnpv);
        w.u8(self.ready);
    }
}
