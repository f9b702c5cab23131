//! Pre-standard CEE DCBX ("DCBX 1.01", OUI 00-1B-21 subtype 2) and the older CIN "baseline
//! 1.0" DCBX (subtype 1, kept raw). Layouts as in lldpad's `tlv_dcbx.h` (`dcbx2_*`), the Linux
//! i40e driver's CEE parser and Wireshark's `packet-lldp.c`.
//!
//! The CEE TLV's information is a sequence of sub-TLVs, each with a 7-bit type and 9-bit
//! length header: Control (1), then feature sub-TLVs Priority Groups (2), PFC (3) and
//! Application (4). Every feature sub-TLV starts with oper version, max version, a flags byte
//! (Enable 0x80, Willing 0x40, Error 0x20) and a subtype.

use alloc::vec::Vec;

use super::tlv::{HEADER_LEN, TlvView, Writer, be16, be32};
use crate::{Error, ErrorKind, Result};

/// The CEE DCBX OUI (Intel's).
pub const OUI_CEE: [u8; 3] = [0x00, 0x1b, 0x21];
/// Subtype of the CIN "baseline 1.0" DCBX TLV.
pub const SUBTYPE_CIN: u8 = 1;
/// Subtype of the CEE DCBX TLV.
pub const SUBTYPE_CEE: u8 = 2;

/// Sub-TLV type: Control.
pub const SUB_CONTROL: u8 = 1;
/// Sub-TLV type: Priority Groups.
pub const SUB_PRIORITY_GROUPS: u8 = 2;
/// Sub-TLV type: Priority-based Flow Control.
pub const SUB_PFC: u8 = 3;
/// Sub-TLV type: Application.
pub const SUB_APPLICATION: u8 = 4;

/// Control sub-TLV: protocol versions and the sequence/acknowledgement numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeeControl {
    /// Operating protocol version.
    pub oper_version: u8,
    /// Highest protocol version supported.
    pub max_version: u8,
    /// Sequence number, changed on every change of the local configuration.
    pub seq: u32,
    /// The peer's sequence number last seen.
    pub ack: u32,
}

/// The 4-byte header every CEE feature sub-TLV starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeeFeatureHeader {
    /// Operating version of the feature.
    pub oper_version: u8,
    /// Highest version of the feature supported.
    pub max_version: u8,
    /// Feature enabled (flags bit 0x80).
    pub enabled: bool,
    /// Willing to accept the peer's configuration (0x40).
    pub willing: bool,
    /// Error (0x20): the configuration could not be applied.
    pub error: bool,
    /// The low five bits of the flags byte, reserved, as sent.
    pub reserved: u8,
    /// Feature subtype.
    pub subtype: u8,
}

impl CeeFeatureHeader {
    /// Bytes of the header.
    pub const LEN: usize = 4;

    fn parse(b: &[u8]) -> Self {
        CeeFeatureHeader {
            oper_version: b[0],
            max_version: b[1],
            enabled: b[2] & 0x80 != 0,
            willing: b[2] & 0x40 != 0,
            error: b[2] & 0x20 != 0,
            reserved: b[2] & 0x1f,
            subtype: b[3],
        }
    }

    fn emit(&self, w: &mut Writer<'_>) {
        w.u8(self.oper_version);
        w.u8(self.max_version);
        w.u8(u8::from(self.enabled) << 7
            | u8::from(self.willing) << 6
            | u8::from(self.error) << 5
            | (self.reserved & 0x1f));
        w.u8(self.subtype);
    }
}

/// Priority Groups sub-TLV: priority→PGID, PG bandwidth shares and number of TCs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeePriorityGroups {
    /// Feature header.
    pub header: CeeFeatureHeader,
    /// Priority group of each priority (4 bits; 15 = strict priority, no bandwidth limit).
    pub pgid: [u8; 8],
    /// Bandwidth percentage of each priority group.
    pub pg_bandwidth: [u8; 8],
    /// Number of traffic classes supported.
    pub num_tcs: u8,
}

/// Priority-based Flow Control sub-TLV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeePfc {
    /// Feature header.
    pub header: CeeFeatureHeader,
    /// Admin map: bit n set = PFC enabled on priority n.
    pub admin_map: u8,
    /// Number of traffic classes that support PFC.
    pub num_tcs: u8,
}

/// One entry of the CEE Application sub-TLV (6 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeeAppEntry {
    /// Protocol ID (an EtherType or a TCP/UDP port, by `selector`).
    pub protocol: u16,
    /// Selector field (2 bits): 0 EtherType, 1 TCP/UDP port.
    pub selector: u8,
    /// The 24-bit OUI field with the two selector bits cleared (as Wireshark shows it).
    pub oui: u32,
    /// Priority map: bit n set = the application uses priority n.
    pub priority_map: u8,
}

impl CeeAppEntry {
    /// Bytes of one entry.
    pub const LEN: usize = 6;

    fn parse(b: &[u8]) -> Self {
        let word = u32::from(b[2]) << 16 | u32::from(be16(b, 3));
        CeeAppEntry {
            protocol: be16(b, 0),
            selector: b[2] & 3,
            oui: word & 0x00fc_ffff,
            priority_map: b[5],
        }
    }

    /// The lowest priority in the priority map (what Wireshark and i40e show), if any.
    pub const fn lowest_priority(&self) -> Option<u8> {
        if self.priority_map == 0 {
            None
        } else {
            Some(self.priority_map.trailing_zeros() as u8)
        }
    }

    /// The entry's 6 bytes.
    pub fn to_bytes(&self) -> [u8; 6] {
        let p = self.protocol.to_be_bytes();
        let o = self.oui.to_be_bytes();
        [
            p[0],
            p[1],
            (o[1] & 0xfc) | (self.selector & 3),
            o[2],
            o[3],
            self.priority_map,
        ]
    }
}

/// Application sub-TLV: a feature header and zero or more 6-byte entries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CeeApplication<B = Vec<u8>> {
    /// Feature header.
    pub header: CeeFeatureHeader,
    entries: B,
}

impl CeeApplication {
    /// An owned sub-TLV with the given entries.
    pub fn new(header: CeeFeatureHeader, entries: &[CeeAppEntry]) -> Self {
        CeeApplication {
            header,
            entries: entries.iter().flat_map(CeeAppEntry::to_bytes).collect(),
        }
    }
}

impl<B: AsRef<[u8]>> CeeApplication<B> {
    /// The entries, in order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = CeeAppEntry> + '_ {
        self.entries
            .as_ref()
            .chunks_exact(CeeAppEntry::LEN)
            .map(CeeAppEntry::parse)
    }
}

/// One sub-TLV of the CEE DCBX TLV.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CeeSubTlv<B = Vec<u8>> {
    /// Control (type 1).
    Control(CeeControl),
    /// Priority Groups (type 2).
    PriorityGroups(CeePriorityGroups),
    /// Priority-based Flow Control (type 3).
    Pfc(CeePfc),
    /// Application (type 4).
    Application(CeeApplication<B>),
    /// Any other sub-TLV type (e.g. logical link), kept raw.
    Unknown {
        /// The 7-bit sub-TLV type.
        ty: u8,
        /// The sub-TLV value.
        value: B,
    },
}

impl<'a> CeeSubTlv<&'a [u8]> {
    /// Decodes one sub-TLV; `offset` is where its header starts in the LLDPDU.
    fn parse(ty: u8, offset: usize, v: &'a [u8]) -> Result<Self> {
        let bad = |ctx: &'static str, allowed: &'static str| {
            Error::new(
                offset,
                ctx,
                "length",
                ErrorKind::BadLength {
                    found: v.len(),
                    allowed,
                },
            )
        };
        Ok(match ty {
            SUB_CONTROL => {
                if v.len() != 10 {
                    return Err(bad("CEE Control sub-TLV", "10"));
                }
                CeeSubTlv::Control(CeeControl {
                    oper_version: v[0],
                    max_version: v[1],
                    seq: be32(v, 2),
                    ack: be32(v, 6),
                })
            }
            SUB_PRIORITY_GROUPS => {
                if v.len() != 17 {
                    return Err(bad("CEE Priority Groups sub-TLV", "17"));
                }
                let mut pgid = [0; 8];
                for i in 0..4 {
                    pgid[2 * i] = v[4 + i] >> 4;
                    pgid[2 * i + 1] = v[4 + i] & 0x0f;
                }
                let mut pg_bandwidth = [0; 8];
                pg_bandwidth.copy_from_slice(&v[8..16]);
                CeeSubTlv::PriorityGroups(CeePriorityGroups {
                    header: CeeFeatureHeader::parse(v),
                    pgid,
                    pg_bandwidth,
                    num_tcs: v[16],
                })
            }
            SUB_PFC => {
                if v.len() != 6 {
                    return Err(bad("CEE PFC sub-TLV", "6"));
                }
                CeeSubTlv::Pfc(CeePfc {
                    header: CeeFeatureHeader::parse(v),
                    admin_map: v[4],
                    num_tcs: v[5],
                })
            }
            SUB_APPLICATION => {
                if v.len() < CeeFeatureHeader::LEN
                    || !(v.len() - CeeFeatureHeader::LEN).is_multiple_of(CeeAppEntry::LEN)
                {
                    return Err(bad("CEE Application sub-TLV", "4 + 6n"));
                }
                CeeSubTlv::Application(CeeApplication {
                    header: CeeFeatureHeader::parse(v),
                    entries: &v[4..],
                })
            }
            ty => CeeSubTlv::Unknown { ty, value: v },
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> CeeSubTlv {
        match self {
            CeeSubTlv::Control(c) => CeeSubTlv::Control(*c),
            CeeSubTlv::PriorityGroups(p) => CeeSubTlv::PriorityGroups(*p),
            CeeSubTlv::Pfc(p) => CeeSubTlv::Pfc(*p),
            CeeSubTlv::Application(a) => CeeSubTlv::Application(CeeApplication {
                header: a.header,
                entries: a.entries.to_vec(),
            }),
            CeeSubTlv::Unknown { ty, value } => CeeSubTlv::Unknown {
                ty: *ty,
                value: value.to_vec(),
            },
        }
    }
}

impl<B: AsRef<[u8]>> CeeSubTlv<B> {
    /// The sub-TLV type.
    pub fn ty(&self) -> u8 {
        match self {
            CeeSubTlv::Control(_) => SUB_CONTROL,
            CeeSubTlv::PriorityGroups(_) => SUB_PRIORITY_GROUPS,
            CeeSubTlv::Pfc(_) => SUB_PFC,
            CeeSubTlv::Application(_) => SUB_APPLICATION,
            CeeSubTlv::Unknown { ty, .. } => *ty,
        }
    }

    /// Bytes of the sub-TLV value (after its header).
    pub fn value_len(&self) -> usize {
        match self {
            CeeSubTlv::Control(_) => 10,
            CeeSubTlv::PriorityGroups(_) => 17,
            CeeSubTlv::Pfc(_) => 6,
            CeeSubTlv::Application(a) => CeeFeatureHeader::LEN + a.entries.as_ref().len(),
            CeeSubTlv::Unknown { value, .. } => value.as_ref().len(),
        }
    }

    fn emit(&self, w: &mut Writer<'_>) {
        w.header(self.ty(), self.value_len());
        match self {
            CeeSubTlv::Control(c) => {
                w.u8(c.oper_version);
                w.u8(c.max_version);
                w.u32(c.seq);
                w.u32(c.ack);
            }
            CeeSubTlv::PriorityGroups(p) => {
                p.header.emit(w);
                for i in 0..4 {
                    w.u8((p.pgid[2 * i] & 0x0f) << 4 | (p.pgid[2 * i + 1] & 0x0f));
                }
                w.bytes(&p.pg_bandwidth);
                w.u8(p.num_tcs);
            }
            CeeSubTlv::Pfc(p) => {
                p.header.emit(w);
                w.u8(p.admin_map);
                w.u8(p.num_tcs);
            }
            CeeSubTlv::Application(a) => {
                a.header.emit(w);
                w.bytes(a.entries.as_ref());
            }
            CeeSubTlv::Unknown { value, .. } => w.bytes(value.as_ref()),
        }
    }
}

/// The CEE DCBX TLV (subtype 2): its sub-TLVs in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CeeDcbx<B = Vec<u8>> {
    /// Sub-TLVs, in the order sent.
    pub sub_tlvs: Vec<CeeSubTlv<B>>,
}

impl<'a> CeeDcbx<&'a [u8]> {
    /// Decodes the information after OUI and subtype; `base` is its offset in the LLDPDU.
    pub fn parse(info: &'a [u8], base: usize) -> Result<Self> {
        let mut sub_tlvs = Vec::new();
        let mut pos = 0;
        while pos < info.len() {
            let sub = TlvView::parse(info, pos).map_err(|e| Error {
                context: "CEE DCBX sub-TLV",
                ..e.at(base)
            })?;
            sub_tlvs.push(CeeSubTlv::parse(sub.ty, base + pos, sub.value)?);
            pos += HEADER_LEN + sub.value.len();
        }
        Ok(CeeDcbx { sub_tlvs })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> CeeDcbx {
        CeeDcbx {
            sub_tlvs: self.sub_tlvs.iter().map(CeeSubTlv::to_owned).collect(),
        }
    }
}

impl<B: AsRef<[u8]>> CeeDcbx<B> {
    /// Bytes of the information after OUI and subtype.
    pub fn info_len(&self) -> usize {
        self.sub_tlvs.iter().map(|s| HEADER_LEN + s.value_len()).sum()
    }

    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        for s in &self.sub_tlvs {
            s.emit(w);
        }
    }

    /// The Control sub-TLV, if present.
    pub fn control(&self) -> Option<&CeeControl> {
        self.sub_tlvs.iter().find_map(|s| {
            if let CeeSubTlv::Control(c) = s {
                Some(c)
            } else {
                None
            }
        })
    }
}

/// An organizationally specific TLV with the CEE OUI 00-1B-21.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CeeTlv<B = Vec<u8>> {
    /// CEE DCBX (subtype 2).
    Dcbx(CeeDcbx<B>),
    /// CIN "baseline 1.0" DCBX (subtype 1), its information kept raw.
    Cin(B),
    /// Any other subtype, kept raw.
    Unknown {
        /// The subtype.
        subtype: u8,
        /// The information after OUI and subtype.
        info: B,
    },
}

impl<'a> CeeTlv<&'a [u8]> {
    /// Decodes a TLV with the CEE OUI from its subtype and information.
    pub fn parse(tlv: &TlvView<'a>, subtype: u8, info: &'a [u8]) -> Result<Self> {
        Ok(match subtype {
            SUBTYPE_CEE => CeeTlv::Dcbx(CeeDcbx::parse(info, tlv.value_offset() + 4)?),
            SUBTYPE_CIN => CeeTlv::Cin(info),
            subtype => CeeTlv::Unknown { subtype, info },
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> CeeTlv {
        match self {
            CeeTlv::Dcbx(d) => CeeTlv::Dcbx(d.to_owned()),
            CeeTlv::Cin(i) => CeeTlv::Cin(i.to_vec()),
            CeeTlv::Unknown { subtype, info } => CeeTlv::Unknown {
                subtype: *subtype,
                info: info.to_vec(),
            },
        }
    }
}

impl<B: AsRef<[u8]>> CeeTlv<B> {
    /// The subtype byte.
    pub fn subtype(&self) -> u8 {
        match self {
            CeeTlv::Dcbx(_) => SUBTYPE_CEE,
            CeeTlv::Cin(_) => SUBTYPE_CIN,
            CeeTlv::Unknown { subtype, .. } => *subtype,
        }
    }

    /// Bytes of the information after OUI and subtype.
    pub fn info_len(&self) -> usize {
        match self {
            CeeTlv::Dcbx(d) => d.info_len(),
            CeeTlv::Cin(i) | CeeTlv::Unknown { info: i, .. } => i.as_ref().len(),
        }
    }

    /// Writes the information after OUI and subtype.
    pub(crate) fn emit_info(&self, w: &mut Writer<'_>) {
        match self {
            CeeTlv::Dcbx(d) => d.emit_info(w),
            CeeTlv::Cin(i) | CeeTlv::Unknown { info: i, .. } => w.bytes(i.as_ref()),
        }
    }
}
