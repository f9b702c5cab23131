//! The LLDPDU: typed TLVs in order, decoded from and emitted to bytes exactly, with the
//! mandatory-order checks of 802.1AB-2016 9.2.7.7 reported as warnings.

use alloc::vec::Vec;

use super::basic::{ChassisId, ManagementAddress, PortId, SystemCapabilities, parse_ttl};
use super::org::OrgTlv;
use super::tlv::{self, HEADER_LEN, TlvIter, TlvView, Writer};
use crate::ethernet::{EtherType, EthernetAddress};
use crate::{Error, ErrorKind, Result};

/// One LLDP TLV, decoded. `B` is `&[u8]` for a zero-copy decode and `Vec<u8>` when owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tlv<B = Vec<u8>> {
    /// End Of LLDPDU (type 0).
    End,
    /// Chassis ID (type 1).
    ChassisId(ChassisId<B>),
    /// Port ID (type 2).
    PortId(PortId<B>),
    /// Time To Live in seconds (type 3).
    Ttl(u16),
    /// Port Description (type 4), bytes as sent (normally UTF-8/ASCII).
    PortDescription(B),
    /// System Name (type 5).
    SystemName(B),
    /// System Description (type 6).
    SystemDescription(B),
    /// System Capabilities (type 7).
    SystemCapabilities(SystemCapabilities),
    /// Management Address (type 8).
    ManagementAddress(ManagementAddress<B>),
    /// Organizationally specific (type 127).
    Org(OrgTlv<B>),
    /// A reserved type (9..=126), kept raw.
    Unknown {
        /// The 7-bit type.
        ty: u8,
        /// The value.
        value: B,
    },
}

impl<'a> Tlv<&'a [u8]> {
    /// Decodes a TLV from its checked view, borrowing variable-length fields.
    #[inline]
    pub fn parse(view: &TlvView<'a>) -> Result<Self> {
        let v = view.value;
        Ok(match view.ty {
            tlv::TYPE_END => {
                if !v.is_empty() {
                    return Err(view.bad_length("End Of LLDPDU TLV", "0"));
                }
                Tlv::End
            }
            tlv::TYPE_CHASSIS_ID => Tlv::ChassisId(ChassisId::parse(view)?),
            tlv::TYPE_PORT_ID => Tlv::PortId(PortId::parse(view)?),
            tlv::TYPE_TTL => Tlv::Ttl(parse_ttl(view)?),
            tlv::TYPE_PORT_DESCRIPTION => Tlv::PortDescription(v),
            tlv::TYPE_SYSTEM_NAME => Tlv::SystemName(v),
            tlv::TYPE_SYSTEM_DESCRIPTION => Tlv::SystemDescription(v),
            tlv::TYPE_SYSTEM_CAPABILITIES => Tlv::SystemCapabilities(SystemCapabilities::parse(view)?),
            tlv::TYPE_MANAGEMENT_ADDRESS => Tlv::ManagementAddress(ManagementAddress::parse(view)?),
            tlv::TYPE_ORGANIZATIONALLY_SPECIFIC => Tlv::Org(OrgTlv::parse(view)?),
            ty => Tlv::Unknown { ty, value: v },
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> Tlv {
        match self {
            Tlv::End => Tlv::End,
            Tlv::ChassisId(t) => Tlv::ChassisId(t.to_owned()),
            Tlv::PortId(t) => Tlv::PortId(t.to_owned()),
            Tlv::Ttl(t) => Tlv::Ttl(*t),
            Tlv::PortDescription(t) => Tlv::PortDescription(t.to_vec()),
            Tlv::SystemName(t) => Tlv::SystemName(t.to_vec()),
            Tlv::SystemDescription(t) => Tlv::SystemDescription(t.to_vec()),
            Tlv::SystemCapabilities(t) => Tlv::SystemCapabilities(*t),
            Tlv::ManagementAddress(t) => Tlv::ManagementAddress(t.to_owned()),
            Tlv::Org(t) => Tlv::Org(t.to_owned()),
            Tlv::Unknown { ty, value } => Tlv::Unknown {
                ty: *ty,
                value: value.to_vec(),
            },
        }
    }
}

impl<B: AsRef<[u8]>> Tlv<B> {
    /// The 7-bit TLV type.
    pub fn ty(&self) -> u8 {
        match self {
            Tlv::End => tlv::TYPE_END,
            Tlv::ChassisId(_) => tlv::TYPE_CHASSIS_ID,
            Tlv::PortId(_) => tlv::TYPE_PORT_ID,
            Tlv::Ttl(_) => tlv::TYPE_TTL,
            Tlv::PortDescription(_) => tlv::TYPE_PORT_DESCRIPTION,
            Tlv::SystemName(_) => tlv::TYPE_SYSTEM_NAME,
            Tlv::SystemDescription(_) => tlv::TYPE_SYSTEM_DESCRIPTION,
            Tlv::SystemCapabilities(_) => tlv::TYPE_SYSTEM_CAPABILITIES,
            Tlv::ManagementAddress(_) => tlv::TYPE_MANAGEMENT_ADDRESS,
            Tlv::Org(_) => tlv::TYPE_ORGANIZATIONALLY_SPECIFIC,
            Tlv::Unknown { ty, .. } => *ty,
        }
    }

    /// Bytes of the value (after the 2-byte header).
    pub fn value_len(&self) -> usize {
        match self {
            Tlv::End => 0,
            Tlv::ChassisId(t) => t.value_len(),
            Tlv::PortId(t) => t.value_len(),
            Tlv::Ttl(_) => 2,
            Tlv::PortDescription(t) | Tlv::SystemName(t) | Tlv::SystemDescription(t) => t.as_ref().len(),
            Tlv::SystemCapabilities(_) => SystemCapabilities::VALUE_LEN,
            Tlv::ManagementAddress(t) => t.value_len(),
            Tlv::Org(t) => t.value_len(),
            Tlv::Unknown { value, .. } => value.as_ref().len(),
        }
    }

    /// Bytes the whole TLV occupies on the wire.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.value_len()
    }

    /// Refuses a TLV whose value is longer than the 9-bit length field can say (511 bytes);
    /// TLVs nested in its value (CEE sub-TLVs) are shorter, so they fit when it does.
    pub fn check_len(&self) -> Result<()> {
        tlv::check_len(0, self.ty(), self.value_len())
    }

    /// Writes the TLV at the start of `buf` and returns its length.
    ///
    /// Refuses, writing nothing, a value longer than 511 bytes ([`Tlv::check_len`]) and a
    /// `buf` shorter than [`Tlv::buffer_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.check_len()?;
        let need = self.buffer_len();
        if buf.len() < need {
            return Err(Error::truncated(
                0,
                tlv::type_name(self.ty()),
                "buffer",
                need,
                buf.len(),
            ));
        }
        let mut w = Writer::new(buf);
        self.emit_to(&mut w);
        Ok(w.position())
    }

    fn emit_to(&self, w: &mut Writer<'_>) {
        w.header(self.ty(), self.value_len());
        match self {
            Tlv::End => {}
            Tlv::ChassisId(t) => t.emit_value(w),
            Tlv::PortId(t) => t.emit_value(w),
            Tlv::Ttl(t) => w.u16(*t),
            Tlv::PortDescription(t) | Tlv::SystemName(t) | Tlv::SystemDescription(t) => w.bytes(t.as_ref()),
            Tlv::SystemCapabilities(t) => t.emit_value(w),
            Tlv::ManagementAddress(t) => t.emit_value(w),
            Tlv::Org(t) => t.emit_value(w),
            Tlv::Unknown { value, .. } => w.bytes(value.as_ref()),
        }
    }
}

/// A checked zero-copy view of an LLDPDU (the Ethernet payload of an LLDP frame).
#[derive(Debug, Clone, Copy)]
pub struct Lldpdu<'a> {
    buf: &'a [u8],
}

impl<'a> Lldpdu<'a> {
    /// A view of `buf`; nothing is checked until the TLVs are read.
    pub const fn new(buf: &'a [u8]) -> Self {
        Lldpdu { buf }
    }

    /// The raw TLVs, each a checked view; stops after End or the first error.
    pub fn raw_tlvs(&self) -> TlvIter<'a> {
        TlvIter::new(self.buf)
    }

    /// The decoded TLVs, borrowing from the buffer (allocates only for CEE sub-TLV lists);
    /// stops after End or the first error.
    pub fn tlvs(&self) -> Tlvs<'a> {
        Tlvs {
            raw: TlvIter::new(self.buf),
            failed: false,
        }
    }

    /// Decodes every TLV in order and hands each to `f` by reference, without allocating
    /// (except for CEE sub-TLV lists) or moving it: the fastest decode. Returns the bytes of
    /// the LLDPDU through End, or the first error (after `f` saw the TLVs before it).
    #[inline]
    pub fn visit<F: FnMut(&TlvView<'a>, &Tlv<&'a [u8]>)>(&self, mut f: F) -> Result<usize> {
        let mut iter = TlvIter::new(self.buf);
        for view in iter.by_ref() {
            let view = view?;
            let t = Tlv::parse(&view);
            match &t {
                Ok(t) => f(&view, t),
                Err(e) => return Err(*e),
            }
        }
        Ok(iter.position())
    }

    /// Decodes the whole LLDPDU as far as it is sound, borrowing from the buffer.
    pub fn decode(&self) -> Decoded<&'a [u8]> {
        let mut tlvs = Vec::new();
        let mut warnings = Vec::new();
        let mut error = None;
        let mut iter = TlvIter::new(self.buf);
        let mut seen_end = false;
        for r in iter.by_ref() {
            let parsed = r.and_then(|v| Tlv::parse(&v).map(|t| (v, t)));
            match parsed {
                Ok((view, t)) => {
                    check_order(tlvs.len(), view.offset, view.ty, &mut warnings);
                    seen_end = view.ty == tlv::TYPE_END;
                    tlvs.push(t);
                }
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let len = if error.is_some() {
            self.buf.len()
        } else {
            iter.position()
        };
        if error.is_none() && !seen_end {
            // the PDU ends without its End TLV: nothing is out of order, the TLV is absent
            let kind = ErrorKind::Missing {
                expected: "an End Of LLDPDU TLV (type 0, length 0) after the last TLV",
            };
            warnings.push(Error::new(len, "LLDPDU", "End Of LLDPDU TLV", kind));
        }
        if error.is_none()
            && seen_end
            && let Some(at) = self.buf[len..].iter().position(|&b| b != 0)
        {
            let kind = ErrorKind::BadValue {
                found: u64::from(self.buf[len + at]),
                allowed: "only zero padding after End Of LLDPDU TLV",
            };
            warnings.push(Error::new(
                len + at,
                "LLDPDU",
                "bytes after End Of LLDPDU TLV",
                kind,
            ));
        }
        Decoded {
            tlvs,
            error,
            warnings,
            len,
        }
    }
}

/// Iterator over the decoded TLVs of an LLDPDU (see [`Lldpdu::tlvs`]).
#[derive(Debug, Clone)]
pub struct Tlvs<'a> {
    raw: TlvIter<'a>,
    failed: bool,
}

impl<'a> Iterator for Tlvs<'a> {
    type Item = Result<Tlv<&'a [u8]>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let r = match self.raw.next()? {
            Ok(view) => Tlv::parse(&view),
            Err(e) => Err(e),
        };
        self.failed = r.is_err();
        Some(r)
    }
}

/// What the mandatory TLV at each of the first three places must be.
const MANDATORY: [(u8, &str); 3] = [
    (tlv::TYPE_CHASSIS_ID, "Chassis ID TLV first"),
    (tlv::TYPE_PORT_ID, "Port ID TLV second"),
    (tlv::TYPE_TTL, "Time To Live TLV third"),
];

/// Records a warning when the TLV of type `ty` at place `index` breaks the mandatory order.
fn check_order(index: usize, offset: usize, ty: u8, warnings: &mut Vec<Error>) {
    let expected = match MANDATORY.get(index) {
        Some(&(want, expected)) if ty != want => Some(expected),
        None if MANDATORY.iter().any(|&(t, _)| t == ty) => {
            Some("Chassis ID, Port ID and Time To Live TLVs only once")
        }
        _ => None,
    };
    if let Some(expected) = expected {
        // End before a mandatory TLV means the PDU lacks it; another TLV in its place is out
        // of order
        let kind = if ty == tlv::TYPE_END {
            ErrorKind::Missing { expected }
        } else {
            ErrorKind::Order { expected }
        };
        warnings.push(Error::new(offset, "LLDPDU", tlv::type_name(ty), kind));
    }
}

/// The result of decoding an LLDPDU: what was decoded, the first error that stopped the
/// decoding (if any), and the order warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded<B = Vec<u8>> {
    /// The TLVs decoded before the error (all of them when there is none), in order.
    pub tlvs: Vec<Tlv<B>>,
    /// The first error; decoding stopped there.
    pub error: Option<Error>,
    /// Order problems real devices cause, which did not stop the decoding.
    pub warnings: Vec<Error>,
    /// Bytes of the LLDPDU through the End TLV; bytes after it (frame padding) are not part
    /// of it. The whole buffer when there is an error.
    pub len: usize,
}

impl Decoded<&[u8]> {
    /// An owned copy.
    pub fn to_owned(&self) -> Decoded {
        Decoded {
            tlvs: self.tlvs.iter().map(Tlv::to_owned).collect(),
            error: self.error,
            warnings: self.warnings.clone(),
            len: self.len,
        }
    }
}

impl<B> Decoded<B> {
    /// The decoded PDU and its warnings when decoding met no error, else the error.
    pub fn into_result(self) -> Result<(LldpduRepr<B>, Vec<Error>)> {
        match self.error {
            Some(e) => Err(e),
            None => Ok((LldpduRepr { tlvs: self.tlvs }, self.warnings)),
        }
    }
}

/// An LLDPDU as a list of typed TLVs in order; `emit(parse(b)) == b` for well-formed PDUs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LldpduRepr<B = Vec<u8>> {
    /// The TLVs in order, normally ending with [`Tlv::End`].
    pub tlvs: Vec<Tlv<B>>,
}

impl LldpduRepr {
    /// Decodes `buf` (the Ethernet payload) into owned TLVs, as far as it is sound.
    #[inline]
    pub fn parse(buf: &[u8]) -> Decoded {
        Lldpdu::new(buf).decode().to_owned()
    }
}

impl<B: AsRef<[u8]>> LldpduRepr<B> {
    /// Bytes the LLDPDU occupies.
    pub fn buffer_len(&self) -> usize {
        self.tlvs.iter().map(Tlv::buffer_len).sum()
    }

    /// Refuses an LLDPDU holding a TLV longer than the 9-bit length field can say; the
    /// error's offset is where that TLV would start.
    pub fn check_len(&self) -> Result<()> {
        let mut offset = 0;
        for t in &self.tlvs {
            t.check_len().map_err(|e| e.at(offset))?;
            offset += t.buffer_len();
        }
        Ok(())
    }

    /// Writes the LLDPDU at the start of `buf` and returns its length.
    ///
    /// Refuses, writing nothing, a TLV longer than 511 bytes ([`LldpduRepr::check_len`]) and
    /// a `buf` shorter than [`LldpduRepr::buffer_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.check_len()?;
        let need = self.buffer_len();
        if buf.len() < need {
            return Err(Error::truncated(0, "LLDPDU", "buffer", need, buf.len()));
        }
        let mut w = Writer::new(buf);
        for t in &self.tlvs {
            t.emit_to(&mut w);
        }
        Ok(w.position())
    }

    /// The LLDPDU's bytes, or the error of [`LldpduRepr::check_len`].
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = alloc::vec![0; self.buffer_len()];
        self.emit(&mut v)?;
        Ok(v)
    }
}

/// Length of the untagged Ethernet header [`lldp_frame`] writes.
pub const FRAME_HEADER_LEN: usize = 14;

/// An untagged LLDP frame (without FCS or padding): DA 01-80-C2-00-00-0E, `source`,
/// EtherType 0x88CC, then `lldpdu`.
pub fn lldp_frame(source: EthernetAddress, lldpdu: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(FRAME_HEADER_LEN + lldpdu.len());
    f.extend_from_slice(EthernetAddress::LLDP_NEAREST_BRIDGE.as_bytes());
    f.extend_from_slice(source.as_bytes());
    f.extend_from_slice(&EtherType::LLDP.0.to_be_bytes());
    f.extend_from_slice(lldpdu);
    f
}
