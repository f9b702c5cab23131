//! [`decode_flow_control`]: the copy-free fast path for untagged PAUSE and PFC frames.

use super::decode::{MIN_BODY, all_zero, padding_is_zero};
use super::*;
use crate::ethernet::{EtherType, EthernetAddress, EthernetRepr, HEADER_LEN, VlanTags};
use crate::fcs::{self, FcsMode};

/// Length of the part of an untagged frame that [`FlowControlView`] reads: header + PFC payload.
pub(super) const VIEW_LEN: usize = HEADER_LEN + PFC_LEN;

/// A decoded untagged PAUSE or PFC frame, borrowed from the frame buffer: the allocation-free,
/// copy-free result of [`decode_flow_control`]. Two words, so it is returned in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowControlView<'a> {
    head: &'a [u8; VIEW_LEN],
    warnings: Warnings,
}

impl<'a> FlowControlView<'a> {
    #[inline]
    fn be(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.head[at], self.head[at + 1]])
    }
    /// Destination address.
    #[inline]
    pub fn dst(&self) -> EthernetAddress {
        let h = self.head;
        EthernetAddress([h[0], h[1], h[2], h[3], h[4], h[5]])
    }
    /// Source address.
    #[inline]
    pub fn src(&self) -> EthernetAddress {
        EthernetAddress([
            self.head[6],
            self.head[7],
            self.head[8],
            self.head[9],
            self.head[10],
            self.head[11],
        ])
    }
    /// The opcode: [`OPCODE_PAUSE`] or [`OPCODE_PFC`].
    #[inline]
    pub fn opcode(&self) -> u16 {
        self.be(HEADER_LEN)
    }
    /// Whether the frame is PFC (otherwise it is PAUSE).
    #[inline]
    pub fn is_pfc(&self) -> bool {
        self.opcode() == OPCODE_PFC
    }
    /// PFC: the raw priority_enable_vector; 0 for PAUSE.
    #[inline]
    pub fn priority_enable_vector(&self) -> u16 {
        if self.is_pfc() { self.be(HEADER_LEN + 2) } else { 0 }
    }
    /// PFC: what the frame asks of `priority` (0..=7), or `None` when its bit is clear, the
    /// priority is out of range or the frame is PAUSE (as [`MacControlRepr::priority_request`]).
    #[inline]
    pub fn priority_request(&self, priority: u8) -> Option<PauseRequest> {
        let on = priority < 8 && self.priority_enable_vector() & (1 << priority) != 0;
        on.then(|| PauseRequest::from_quanta(self.be(HEADER_LEN + 4 + 2 * usize::from(priority))))
    }
    /// PAUSE: what the frame asks of the whole link; `None` for PFC.
    #[inline]
    pub fn pause_request(&self) -> Option<PauseRequest> {
        (!self.is_pfc()).then(|| PauseRequest::from_quanta(self.be(HEADER_LEN + 2)))
    }
    /// What a strict receiver would object to (the same as [`decode_frame`] reports).
    #[inline]
    pub fn warnings(&self) -> Warnings {
        self.warnings
    }
    /// The MAC Control payload in owned form.
    pub fn control(&self) -> MacControlRepr {
        let p = HEADER_LEN;
        if self.is_pfc() {
            let t = |i: usize| self.be(p + 4 + 2 * i);
            MacControlRepr::Pfc {
                priority_enable_vector: self.be(p + 2),
                time: [t(0), t(1), t(2), t(3), t(4), t(5), t(6), t(7)],
            }
        } else {
            MacControlRepr::Pause {
                pause_time: self.be(p + 2),
            }
        }
    }
    /// The whole frame in owned form, equal to what [`decode_frame`] returns for it.
    pub fn to_frame(&self) -> MacControlFrame {
        MacControlFrame {
            ethernet: EthernetRepr {
                dst: self.dst(),
                src: self.src(),
                tags: VlanTags::Untagged,
                ethertype: EtherType::MAC_CONTROL,
            },
            control: self.control(),
            warnings: self.warnings,
        }
    }
}

/// The fast path of [`decode_frame`]: decodes and validates an untagged PAUSE or PFC frame
/// whose body (without FCS) holds at least the 34 bytes of header and PFC payload, without
/// copying it. `None` for every other frame (tagged, shorter, other EtherType or opcode):
/// call [`decode_frame`] for those. When `Some`, the view, its warnings included, equals what
/// [`decode_frame`] returns.
#[inline]
pub fn decode_flow_control(
    frame: &[u8],
    fcs: FcsMode,
    station: Option<EthernetAddress>,
) -> Option<FlowControlView<'_>> {
    view(frame, fcs, station, crc32fast::hash)
}

/// [`decode_flow_control`] with the FCS (in [`FcsMode::Present`]) checked by `checker`, which
/// skips the per-call CPU-feature detection; same results.
#[inline]
pub fn decode_flow_control_with<'a>(
    frame: &'a [u8],
    fcs: FcsMode,
    station: Option<EthernetAddress>,
    checker: &fcs::FcsChecker,
) -> Option<FlowControlView<'a>> {
    view(frame, fcs, station, |f| checker.compute(f))
}

#[inline(always)]
pub(super) fn view(
    frame: &[u8],
    fcs: FcsMode,
    station: Option<EthernetAddress>,
    crc: impl Fn(&[u8]) -> u32,
) -> Option<FlowControlView<'_>> {
    let body = match fcs {
        FcsMode::Present => frame.get(..frame.len().checked_sub(fcs::FCS_LEN)?)?,
        FcsMode::Absent => frame,
    };
    let (head, _) = body.split_first_chunk::<VIEW_LEN>()?;
    let type_and_opcode = u32::from_be_bytes([head[12], head[13], head[14], head[15]]);
    const PAUSE: u32 = (EtherType::MAC_CONTROL.0 as u32) << 16 | OPCODE_PAUSE as u32;
    const PFC: u32 = (EtherType::MAC_CONTROL.0 as u32) << 16 | OPCODE_PFC as u32;
    let mut w = Warnings::NONE;
    let fields = match type_and_opcode {
        PAUSE => PAUSE_LEN,
        PFC => {
            w.set_if(head[HEADER_LEN + 2] != 0, Warnings::ENABLE_VECTOR_HIGH_BYTE);
            PFC_LEN
        }
        _ => return None,
    };
    let (dst, _) = head.split_first_chunk::<6>()?;
    let dst_ok = *dst == EthernetAddress::MAC_CONTROL.0 || station.is_some_and(|s| s.0 == *dst);
    w.set_if(!dst_ok, Warnings::DESTINATION);
    w.set_if(frame.len() != fcs.min_frame_len(), Warnings::LENGTH);
    let padded = match body.first_chunk::<MIN_BODY>() {
        Some(b) if body.len() == MIN_BODY => padding_is_zero(b, fields),
        _ => all_zero(body.get(HEADER_LEN + fields..).unwrap_or(&[])),
    };
    w.set_if(!padded, Warnings::NONZERO_PADDING);
    if fcs == FcsMode::Present {
        w.set_if(crc(frame) != fcs::RESIDUE, Warnings::BAD_FCS);
    }
    Some(FlowControlView { head, warnings: w })
}
