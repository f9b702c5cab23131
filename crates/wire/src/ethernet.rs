//! Ethernet II frames with 802.1Q / QinQ tags, FCS and minimum-frame padding.
//!
//! [`Frame`] is a checked zero-copy view over a frame buffer (without FCS: use
//! [`crate::fcs`] to check and strip one first); [`EthernetRepr`] is the owned header with
//! zero, one or two VLAN tags.

use core::fmt;
use core::str::FromStr;

use crate::{Error, ErrorKind, Result};

/// A 48-bit IEEE 802 MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EthernetAddress(pub [u8; 6]);

impl EthernetAddress {
    /// 01-80-C2-00-00-01: the MAC Control (PAUSE/PFC) multicast destination.
    pub const MAC_CONTROL: EthernetAddress = EthernetAddress([0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
    /// 01-80-C2-00-00-0E: the LLDP nearest-bridge multicast destination.
    pub const LLDP_NEAREST_BRIDGE: EthernetAddress = EthernetAddress([0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E]);
    /// FF-FF-FF-FF-FF-FF: the broadcast address.
    pub const BROADCAST: EthernetAddress = EthernetAddress([0xFF; 6]);

    /// The address in the first six bytes of `bytes`, or `None` when there are fewer.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let b: [u8; 6] = bytes.get(..6)?.try_into().ok()?;
        Some(EthernetAddress(b))
    }
    /// The six address bytes in transmission order.
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }
    /// Whether the individual/group bit (bit 0 of the first byte) marks a group address.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }
    /// Whether this is an individual (unicast) address.
    pub const fn is_unicast(&self) -> bool {
        !self.is_multicast()
    }
    /// Whether this is the broadcast address.
    pub const fn is_broadcast(&self) -> bool {
        matches!(self.0, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    }
    /// Whether the universal/local bit marks a locally administered address.
    pub const fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }
}

impl fmt::Display for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

const ADDR_TEXT: &str = "six two-digit hex octets separated by ':' or '-'";

impl FromStr for EthernetAddress {
    type Err = Error;
    /// Parses `01:80:c2:00:00:01` or `01-80-C2-00-00-01` (one separator throughout).
    fn from_str(s: &str) -> Result<Self> {
        let b = s.as_bytes();
        if b.len() != 17 {
            let kind = ErrorKind::BadLength {
                found: b.len(),
                allowed: "17 characters",
            };
            return Err(Error::new(0, "Ethernet address", "text", kind));
        }
        let sep = b[2];
        let mut out = [0u8; 6];
        for (i, octet) in out.iter_mut().enumerate() {
            let at = i * 3;
            if i > 0 && (b[at - 1] != sep || !(sep == b':' || sep == b'-')) {
                let kind = ErrorKind::BadValue {
                    found: u64::from(b[at - 1]),
                    allowed: ADDR_TEXT,
                };
                return Err(Error::new(at - 1, "Ethernet address", "separator", kind));
            }
            let hi = hex_digit(b[at]).ok_or_else(|| bad_digit(b[at], at))?;
            let lo = hex_digit(b[at + 1]).ok_or_else(|| bad_digit(b[at + 1], at + 1))?;
            *octet = hi << 4 | lo;
        }
        Ok(EthernetAddress(out))
    }
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn bad_digit(c: u8, at: usize) -> Error {
    let kind = ErrorKind::BadValue {
        found: u64::from(c),
        allowed: ADDR_TEXT,
    };
    Error::new(at, "Ethernet address", "octet", kind)
}

/// An EtherType (the 16-bit type field of an Ethernet II header or of a VLAN tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EtherType(pub u16);

impl EtherType {
    /// 0x0800, IPv4.
    pub const IPV4: EtherType = EtherType(0x0800);
    /// 0x86DD, IPv6.
    pub const IPV6: EtherType = EtherType(0x86DD);
    /// 0x8808, MAC Control (PAUSE, PFC).
    pub const MAC_CONTROL: EtherType = EtherType(0x8808);
    /// 0x88CC, LLDP.
    pub const LLDP: EtherType = EtherType(0x88CC);
    /// 0x8100, 802.1Q customer VLAN tag (C-tag).
    pub const VLAN_C_TAG: EtherType = EtherType(0x8100);
    /// 0x88A8, 802.1ad service VLAN tag (S-tag).
    pub const VLAN_S_TAG: EtherType = EtherType(0x88A8);
    /// 0x9100, pre-standard QinQ outer tag.
    pub const VLAN_9100: EtherType = EtherType(0x9100);

    /// Whether this value introduces a VLAN tag (0x8100, 0x88A8 or 0x9100).
    pub const fn is_vlan_tpid(self) -> bool {
        matches!(self.0, 0x8100 | 0x88A8 | 0x9100)
    }
    /// Whether the field is an 802.3 length (below 0x0600) rather than an EtherType.
    pub const fn is_length(self) -> bool {
        self.0 < 0x0600
    }
}

impl fmt::Display for EtherType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04x}", self.0)
    }
}

/// Length of the untagged Ethernet II header (destination, source, EtherType).
pub const HEADER_LEN: usize = 14;
/// Length of one VLAN tag (TPID + TCI).
pub const TAG_LEN: usize = 4;
/// Most VLAN tags this codec decodes before the inner EtherType.
pub const MAX_TAGS: usize = 2;

const CTX: &str = "Ethernet II header";

/// One 802.1Q tag: TPID and the Tag Control Information (PCP, DEI, VID).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanTag {
    /// Tag protocol identifier (0x8100, 0x88A8 or 0x9100).
    pub tpid: EtherType,
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0..=4095.
    pub vid: u16,
}

impl VlanTag {
    /// The tag whose TPID is `tpid` and whose TCI is `tci`.
    pub const fn from_tci(tpid: EtherType, tci: u16) -> Self {
        VlanTag {
            tpid,
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0FFF,
        }
    }
    /// The 16-bit Tag Control Information.
    pub const fn tci(&self) -> u16 {
        (self.pcp as u16 & 7) << 13 | (self.dei as u16) << 12 | (self.vid & 0x0FFF)
    }
    fn check(&self, offset: usize) -> Result<()> {
        if !self.tpid.is_vlan_tpid() {
            let kind = ErrorKind::BadValue {
                found: self.tpid.0.into(),
                allowed: "0x8100, 0x88a8 or 0x9100",
            };
            return Err(Error::new(offset, "VLAN tag", "TPID", kind));
        }
        if self.pcp > 7 {
            let kind = ErrorKind::BadValue {
                found: self.pcp.into(),
                allowed: "0..=7",
            };
            return Err(Error::new(offset + 2, "VLAN tag", "PCP", kind));
        }
        if self.vid > 0x0FFF {
            let kind = ErrorKind::BadValue {
                found: self.vid.into(),
                allowed: "0..=4095",
            };
            return Err(Error::new(offset + 2, "VLAN tag", "VID", kind));
        }
        Ok(())
    }
}

/// The VLAN tags of a frame, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VlanTags {
    /// No tag.
    #[default]
    Untagged,
    /// One tag.
    Single(VlanTag),
    /// Two tags (QinQ): outer, then inner.
    Double(VlanTag, VlanTag),
}

impl VlanTags {
    /// Number of tags (0, 1 or 2).
    pub const fn count(&self) -> usize {
        match self {
            VlanTags::Untagged => 0,
            VlanTags::Single(_) => 1,
            VlanTags::Double(..) => 2,
        }
    }
    /// The outermost tag, if any.
    pub const fn outer(&self) -> Option<&VlanTag> {
        match self {
            VlanTags::Untagged => None,
            VlanTags::Single(t) | VlanTags::Double(t, _) => Some(t),
        }
    }
    /// The innermost tag, if any (the same as the outer one for a single tag).
    pub const fn inner(&self) -> Option<&VlanTag> {
        match self {
            VlanTags::Untagged => None,
            VlanTags::Single(t) | VlanTags::Double(_, t) => Some(t),
        }
    }
    /// The tags in wire order: element `i` is the `i`-th tag, `None` past the count.
    pub const fn get(&self, i: usize) -> Option<&VlanTag> {
        match (self, i) {
            (VlanTags::Single(t), 0) | (VlanTags::Double(t, _), 0) | (VlanTags::Double(_, t), 1) => Some(t),
            _ => None,
        }
    }
}

/// A checked zero-copy view of an Ethernet II frame (without FCS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

mod field {
    pub const DST: core::ops::Range<usize> = 0..6;
    pub const SRC: core::ops::Range<usize> = 6..12;
    pub const TYPE: usize = 12;
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps `buffer` without checking its length; getters may panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }
    /// Wraps `buffer` after checking it holds the header and all of its tags.
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Frame::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }
    /// Checks the buffer holds the untagged header and every tag it announces.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::truncated(0, CTX, "header", HEADER_LEN, len));
        }
        let need = HEADER_LEN + TAG_LEN * self.tag_count();
        if len < need {
            return Err(Error::truncated(
                HEADER_LEN,
                "VLAN tag",
                "TCI",
                need - HEADER_LEN,
                len - HEADER_LEN,
            ));
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    fn u16_at(&self, at: usize) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[at], b[at + 1]])
    }
    /// The destination address.
    pub fn dst_addr(&self) -> EthernetAddress {
        let b = self.buffer.as_ref();
        EthernetAddress([b[0], b[1], b[2], b[3], b[4], b[5]])
    }
    /// The source address.
    pub fn src_addr(&self) -> EthernetAddress {
        let b = self.buffer.as_ref();
        EthernetAddress([b[6], b[7], b[8], b[9], b[10], b[11]])
    }
    /// The type field at byte 12 (a TPID when the frame is tagged).
    pub fn outer_ethertype(&self) -> EtherType {
        EtherType(self.u16_at(field::TYPE))
    }
    /// Number of VLAN tags (0..=2) announced by TPIDs; a third TPID counts as the EtherType.
    /// Only tags whose TPID lies inside the buffer are counted.
    pub fn tag_count(&self) -> usize {
        let b = self.buffer.as_ref();
        let mut n = 0;
        while n < MAX_TAGS {
            let at = field::TYPE + TAG_LEN * n;
            match b.get(at..at + 2) {
                Some(&[hi, lo]) if EtherType(u16::from_be_bytes([hi, lo])).is_vlan_tpid() => n += 1,
                _ => break,
            }
        }
        n
    }
    /// The `i`-th VLAN tag (outermost is 0), if present.
    pub fn tag(&self, i: usize) -> Option<VlanTag> {
        if i >= self.tag_count() {
            return None;
        }
        let at = field::TYPE + TAG_LEN * i;
        Some(VlanTag::from_tci(EtherType(self.u16_at(at)), self.u16_at(at + 2)))
    }
    /// The EtherType after the tags (the protocol of the payload).
    pub fn ethertype(&self) -> EtherType {
        EtherType(self.u16_at(field::TYPE + TAG_LEN * self.tag_count()))
    }
    /// Offset of the payload: 14, 18 or 22.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + TAG_LEN * self.tag_count()
    }
    /// The bytes after the header (payload and any padding).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.0);
    }
    /// Sets the source address.
    pub fn set_src_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.0);
    }
    /// Sets the type field at byte 12 (the EtherType of an untagged frame, or the outer TPID).
    pub fn set_outer_ethertype(&mut self, ty: EtherType) {
        self.buffer.as_mut()[field::TYPE..field::TYPE + 2].copy_from_slice(&ty.0.to_be_bytes());
    }
    /// Sets the EtherType after the tags currently in the buffer.
    pub fn set_ethertype(&mut self, ty: EtherType) {
        let at = field::TYPE + TAG_LEN * self.tag_count();
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&ty.0.to_be_bytes());
    }
    /// Sets the TCI (PCP, DEI, VID) of the `i`-th tag present; returns false when there is none.
    pub fn set_tag_tci(&mut self, i: usize, tag: &VlanTag) -> bool {
        if i >= self.tag_count() {
            return false;
        }
        let at = field::TYPE + TAG_LEN * i + 2;
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&tag.tci().to_be_bytes());
        true
    }
    /// The bytes after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

/// An owned Ethernet II header: addresses, up to two VLAN tags and the inner EtherType.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    /// Destination address.
    pub dst: EthernetAddress,
    /// Source address.
    pub src: EthernetAddress,
    /// VLAN tags, outermost first.
    pub tags: VlanTags,
    /// EtherType of the payload (after the tags).
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Parses the header of `frame` (a frame without FCS, or any prefix holding the header).
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<EthernetRepr> {
        EthernetRepr::parse_bytes(frame.buffer.as_ref()).map(|(repr, _)| repr)
    }
    /// Parses the header at the start of `bytes`; returns it and the payload offset.
    #[inline]
    pub fn parse_bytes(bytes: &[u8]) -> Result<(EthernetRepr, usize)> {
        let Some(hdr) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(Error::truncated(0, CTX, "header", HEADER_LEN, bytes.len()));
        };
        let dst = EthernetAddress([hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5]]);
        let src = EthernetAddress([hdr[6], hdr[7], hdr[8], hdr[9], hdr[10], hdr[11]]);
        let mut ty = EtherType(u16::from_be_bytes([hdr[12], hdr[13]]));
        if !ty.is_vlan_tpid() {
            return Ok((
                EthernetRepr {
                    dst,
                    src,
                    tags: VlanTags::Untagged,
                    ethertype: ty,
                },
                HEADER_LEN,
            ));
        }
        let mut found = [VlanTag::from_tci(ty, 0); MAX_TAGS];
        let mut n = 0;
        while n < MAX_TAGS && ty.is_vlan_tpid() {
            let at = HEADER_LEN + TAG_LEN * n;
            let Some(&[t0, t1, e0, e1]) = bytes.get(at..at + TAG_LEN) else {
                let need = TAG_LEN * (n + 1);
                return Err(Error::truncated(
                    HEADER_LEN,
                    "VLAN tag",
                    "TCI",
                    need,
                    bytes.len() - HEADER_LEN,
                ));
            };
            found[n] = VlanTag::from_tci(ty, u16::from_be_bytes([t0, t1]));
            ty = EtherType(u16::from_be_bytes([e0, e1]));
            n += 1;
        }
        let tags = if n == 1 {
            VlanTags::Single(found[0])
        } else {
            VlanTags::Double(found[0], found[1])
        };
        Ok((
            EthernetRepr {
                dst,
                src,
                tags,
                ethertype: ty,
            },
            HEADER_LEN + TAG_LEN * n,
        ))
    }
    /// Header length in bytes (14, 18 or 22): the payload offset.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + TAG_LEN * self.tags.count()
    }
    /// Writes the header at the start of `buf` and returns its length. Refuses values that
    /// would not parse back to the same header: a tag field out of range, a tag whose TPID is
    /// not a VLAN TPID, or an EtherType that is a VLAN TPID while fewer than two tags precede it.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::truncated(0, CTX, "buffer", len, buf.len()));
        }
        let mut at = field::TYPE;
        let mut i = 0;
        while let Some(tag) = self.tags.get(i) {
            tag.check(at)?;
            i += 1;
            at += TAG_LEN;
        }
        if self.ethertype.is_vlan_tpid() && self.tags.count() < MAX_TAGS {
            let kind = ErrorKind::BadValue {
                found: self.ethertype.0.into(),
                allowed: "an EtherType that is not a VLAN TPID (use a tag instead)",
            };
            return Err(Error::new(at, CTX, "EtherType", kind));
        }
        buf[field::DST].copy_from_slice(&self.dst.0);
        buf[field::SRC].copy_from_slice(&self.src.0);
        let mut at = field::TYPE;
        let mut i = 0;
        while let Some(tag) = self.tags.get(i) {
            buf[at..at + 2].copy_from_slice(&tag.tpid.0.to_be_bytes());
            buf[at + 2..at + 4].copy_from_slice(&tag.tci().to_be_bytes());
            i += 1;
            at += TAG_LEN;
        }
        buf[at..at + 2].copy_from_slice(&self.ethertype.0.to_be_bytes());
        Ok(len)
    }
}
