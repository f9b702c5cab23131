//! [`decode_frame`]: a whole MAC Control frame decoded and validated, with or without FCS.

use super::*;
use crate::ethernet::{EtherType, EthernetAddress, EthernetRepr};
use crate::fcs::{self, FcsMode};
use crate::{Error, ErrorKind, Result};

/// A decoded MAC Control frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MacControlFrame {
    /// The Ethernet header (EtherType 0x8808 after any tags).
    pub ethernet: EthernetRepr,
    /// The MAC Control payload.
    pub control: MacControlRepr,
    /// What a strict receiver would object to.
    pub warnings: Warnings,
}

/// Decodes a whole MAC Control frame (`fcs` says whether `frame` ends with its FCS) and
/// validates it; `station` is the receiver's own address, also accepted as destination.
/// Errors only when the frame is too short for its fields or its EtherType is not 0x8808.
pub fn decode_frame(frame: &[u8], fcs: FcsMode, station: Option<EthernetAddress>) -> Result<MacControlFrame> {
    if let Some(view) = decode_flow_control(frame, fcs, station) {
        return Ok(view.to_frame());
    }
    let mut warnings = Warnings::NONE;
    let body = match fcs {
        FcsMode::Present => {
            let (body, _) = fcs::split(frame)?;
            warnings.set_if(!fcs::verify(frame)?, Warnings::BAD_FCS);
            body
        }
        FcsMode::Absent => frame,
    };
    let (mut out, at) = decode_any(body)?;
    let (ethernet, control) = (&out.ethernet, &out.control);
    let payload = &body[at..];
    let dst_ok = ethernet.dst == EthernetAddress::MAC_CONTROL || station == Some(ethernet.dst);
    warnings.set_if(!dst_ok, Warnings::DESTINATION);
    warnings.set_if(frame.len() != fcs.min_frame_len(), Warnings::LENGTH);
    warnings.set_if(ethernet.tags.count() != 0, Warnings::VLAN_TAGGED);
    let fields = match control {
        MacControlRepr::Pause { .. } => PAUSE_LEN,
        MacControlRepr::Pfc {
            priority_enable_vector,
            ..
        } => {
            warnings.set_if(
                priority_enable_vector >> 8 != 0,
                Warnings::ENABLE_VECTOR_HIGH_BYTE,
            );
            PFC_LEN
        }
        MacControlRepr::Unknown { .. } => {
            warnings.insert(Warnings::UNKNOWN_OPCODE);
            payload.len()
        }
    };
    warnings.set_if(!all_zero(&payload[fields..]), Warnings::NONZERO_PADDING);
    out.warnings = warnings;
    Ok(out)
}

/// Length of a minimum-size frame without FCS.
pub(super) const MIN_BODY: usize = fcs::MIN_FRAME_LEN_WITHOUT_FCS;

/// Whether the padding after a `fields`-byte PAUSE or PFC payload of a minimum-size untagged
/// frame is zero: a fixed set of overlapping eight-byte words, no loop.
#[inline]
pub(super) fn padding_is_zero(b: &[u8; MIN_BODY], fields: usize) -> bool {
    let w = |at: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[at..at + 8]);
        u64::from_ne_bytes(x)
    };
    let after_pfc = w(34) | w(42) | w(50) | w(52);
    let pause_only = w(18) | w(26);
    let mask = if fields == PAUSE_LEN { u64::MAX } else { 0 };
    after_pfc | (pause_only & mask) == 0
}

/// Any MAC Control frame (tagged, short, unknown opcode): the decoded frame and its payload offset.
pub(super) fn decode_any(body: &[u8]) -> Result<(MacControlFrame, usize)> {
    let (ethernet, at) = EthernetRepr::parse_bytes(body)?;
    if ethernet.ethertype != EtherType::MAC_CONTROL {
        let kind = ErrorKind::BadValue {
            found: ethernet.ethertype.0.into(),
            allowed: "0x8808 (MAC Control)",
        };
        return Err(Error::new(at - 2, "Ethernet II header", "EtherType", kind));
    }
    let control = MacControlRepr::parse_bytes(&body[at..]).map_err(|e| e.at(at))?;
    Ok((
        MacControlFrame {
            ethernet,
            control,
            warnings: Warnings::NONE,
        },
        at,
    ))
}

/// Whether every byte of `b` is zero, eight bytes at a time (the tail as one overlapping word).
#[inline]
pub(super) fn all_zero(b: &[u8]) -> bool {
    let word = |c: &[u8; 8]| u64::from_ne_bytes(*c);
    let Some(last) = b.last_chunk::<8>() else {
        return b.iter().fold(0u8, |acc, &x| acc | x) == 0;
    };
    let mut acc = word(last);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        acc |= u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    }
    acc == 0
}
