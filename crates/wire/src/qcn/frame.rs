//! Whole 802.1Qau frames: the CNM frame and a data frame carrying a CN-TAG.

use crate::ethernet::{EtherType, EthernetAddress, EthernetRepr, VlanTag, VlanTags};
use crate::fcs::{self, FcsMode};
use crate::qcn::cnm::CnmRepr;
use crate::qcn::{CnEthernetRepr, CnTag, ETHERTYPE_CNM};
use crate::{Error, ErrorKind, Result};

fn header(
    src: EthernetAddress,
    dst: EthernetAddress,
    vlan: Option<VlanTag>,
    cn_tag: Option<CnTag>,
    ethertype: EtherType,
) -> CnEthernetRepr {
    CnEthernetRepr {
        ethernet: EthernetRepr {
            dst,
            src,
            tags: match vlan {
                Some(t) => VlanTags::Single(t),
                None => VlanTags::Untagged,
            },
            ethertype,
        },
        cn_tag,
    }
}

/// A whole CNM frame: header (EtherType 0x22E7, optionally after a CN-TAG) and CNM PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CnmFrameRepr {
    /// The header; its `ethernet.ethertype` is 0x22E7.
    pub header: CnEthernetRepr,
    /// The PDU.
    pub cnm: CnmRepr,
}

impl CnmFrameRepr {
    /// A CNM from the congestion point's address `src` to `dst` (the source of the sampled
    /// frame), with the sampled frame's VLAN tag and CN-TAG when it had them.
    pub fn new(
        src: EthernetAddress,
        dst: EthernetAddress,
        vlan: Option<VlanTag>,
        cn_tag: Option<CnTag>,
        cnm: CnmRepr,
    ) -> Self {
        CnmFrameRepr {
            header: header(src, dst, vlan, cn_tag, ETHERTYPE_CNM),
            cnm,
        }
    }
    /// Length of the frame `emit` writes: padded to 60 bytes, plus 4 with an FCS.
    pub fn buffer_len(&self, fcs: FcsMode) -> usize {
        (self.header.buffer_len() + self.cnm.buffer_len()).max(fcs::MIN_FRAME_LEN_WITHOUT_FCS) + fcs.len()
    }
    /// Writes the whole frame (zero padding, FCS in [`FcsMode::Present`]) and returns its
    /// length. Refuses an EtherType other than 0x22E7 and what the header and PDU refuse.
    pub fn emit(&self, fcs: FcsMode, buf: &mut [u8]) -> Result<usize> {
        if self.header.ethernet.ethertype != ETHERTYPE_CNM {
            let kind = ErrorKind::BadValue {
                found: self.header.ethernet.ethertype.0.into(),
                allowed: "0x22e7 (CNM)",
            };
            return Err(Error::new(
                self.header.buffer_len() - 2,
                "CNM frame",
                "EtherType",
                kind,
            ));
        }
        let need = self.buffer_len(fcs);
        if buf.len() < need {
            return Err(Error::truncated(0, "CNM frame", "buffer", need, buf.len()));
        }
        let at = self.header.emit(buf)?;
        let n = self.cnm.emit(&mut buf[at..]).map_err(|e| e.at(at))?;
        fcs::finish(buf, at + n, fcs)
    }
}

/// A CNM frame decoded by [`parse_cnm_frame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CnmFrame<'a> {
    /// The frame in owned form.
    pub repr: CnmFrameRepr,
    /// Bytes after the PDU (padding, without the FCS).
    pub trailer: &'a [u8],
    /// With [`FcsMode::Present`]: whether the FCS is right.
    pub fcs_ok: Option<bool>,
}

impl CnmFrame<'_> {
    /// Whether the FCS (if any) is right and the padding is what `emit` writes.
    pub fn is_canonical(&self) -> bool {
        let end = self.repr.header.buffer_len() + self.repr.cnm.buffer_len();
        self.trailer.iter().all(|&b| b == 0)
            && end + self.trailer.len() == end.max(fcs::MIN_FRAME_LEN_WITHOUT_FCS)
            && self.fcs_ok != Some(false)
    }
}

/// Decodes a whole CNM frame (`fcs` says whether it ends with its FCS). Errors: a header or PDU
/// error, or an EtherType (after any CN-TAG) other than 0x22E7.
pub fn parse_cnm_frame(frame: &[u8], fcs: FcsMode) -> Result<CnmFrame<'_>> {
    let (body, fcs_ok) = match fcs {
        FcsMode::Present => (fcs::split(frame)?.0, Some(fcs::verify(frame)?)),
        FcsMode::Absent => (frame, None),
    };
    let (header, at) = CnEthernetRepr::parse_bytes(body)?;
    if header.ethernet.ethertype != ETHERTYPE_CNM {
        let kind = ErrorKind::BadValue {
            found: header.ethernet.ethertype.0.into(),
            allowed: "0x22e7 (CNM)",
        };
        return Err(Error::new(at - 2, "CNM frame", "EtherType", kind));
    }
    let (cnm, n) = CnmRepr::parse(&body[at..]).map_err(|e| e.at(at))?;
    Ok(CnmFrame {
        repr: CnmFrameRepr { header, cnm },
        trailer: &body[at + n..],
        fcs_ok,
    })
}

/// A data frame carrying a CN-TAG: header and `payload_len` bytes of payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CnTaggedFrameRepr {
    /// The header; `cn_tag` should be `Some` (a frame without one is emitted untagged).
    pub header: CnEthernetRepr,
    /// Bytes of payload after the header (before padding).
    pub payload_len: usize,
}

impl CnTaggedFrameRepr {
    /// A frame from `src` to `dst`, with `vlan` when given, the CN-TAG of `flow_id`, payload
    /// EtherType `ethertype` and `payload_len` bytes of payload.
    pub fn new(
        src: EthernetAddress,
        dst: EthernetAddress,
        vlan: Option<VlanTag>,
        flow_id: u16,
        ethertype: EtherType,
        payload_len: usize,
    ) -> Self {
        CnTaggedFrameRepr {
            header: header(src, dst, vlan, Some(CnTag { flow_id }), ethertype),
            payload_len,
        }
    }
    /// Length of the frame `emit` writes: padded to 60 bytes, plus 4 with an FCS.
    pub fn buffer_len(&self, fcs: FcsMode) -> usize {
        (self.header.buffer_len() + self.payload_len).max(fcs::MIN_FRAME_LEN_WITHOUT_FCS) + fcs.len()
    }
    /// Writes the frame, its payload starting with `payload` and zero after it (then padding
    /// and the FCS in [`FcsMode::Present`]); returns its length. Refuses a `payload` longer
    /// than `payload_len`.
    pub fn emit(&self, payload: &[u8], fcs: FcsMode, buf: &mut [u8]) -> Result<usize> {
        let at = self.header.buffer_len();
        if payload.len() > self.payload_len {
            let kind = ErrorKind::BadLength {
                found: payload.len(),
                allowed: "at most payload_len bytes",
            };
            return Err(Error::new(at, "CN-tagged frame", "payload", kind));
        }
        let need = self.buffer_len(fcs);
        if buf.len() < need {
            return Err(Error::truncated(0, "CN-tagged frame", "buffer", need, buf.len()));
        }
        self.header.emit(buf)?;
        buf[at..at + payload.len()].copy_from_slice(payload);
        buf[at + payload.len()..at + self.payload_len].fill(0);
        fcs::finish(buf, at + self.payload_len, fcs)
    }
}
