//! MAC Control frames (EtherType 0x8808): 802.3 PAUSE and 802.1Qbb PFC.
//!
//! [`Packet`] is a checked zero-copy view of the MAC Control payload (the bytes after the
//! EtherType, opcode first); [`MacControlRepr`] is its owned form. [`decode_frame`] decodes a
//! whole frame, with or without FCS, and reports what a strict receiver would object to in
//! [`Warnings`] without refusing to decode; [`decode_flow_control`] is its copy-free fast path
//! for untagged PAUSE and PFC frames. [`emit_frame`] builds a whole 60- or 64-byte frame.

use core::fmt;

use crate::ethernet::{EtherType, EthernetAddress, EthernetRepr, HEADER_LEN, VlanTags};
use crate::fcs::{self, FcsMode};
use crate::{Error, ErrorKind, Result};

/// Opcode of an 802.3 PAUSE frame.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// Opcode of an 802.1Qbb PFC (class-based flow control) frame.
pub const OPCODE_PFC: u16 = 0x0101;
/// Length of the opcode field.
pub const OPCODE_LEN: usize = 2;
/// Length of a PAUSE payload: opcode + pause_time.
pub const PAUSE_LEN: usize = 4;
/// Length of a PFC payload: opcode + priority_enable_vector + time[0..8].
pub const PFC_LEN: usize = 20;
/// Bytes after the opcode in a minimum-size untagged frame (the MAC Control parameters and pad).
pub const PARAMS_MAX: usize = 44;

const CTX: &str = "MAC Control frame";

/// A checked zero-copy view of a MAC Control payload (opcode first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` without checking; getters may panic when it is too short for them.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// Wraps `buffer` after checking it holds the opcode and the fields that opcode defines.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Checks the buffer holds the opcode and, for PAUSE and PFC, all of their fields.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < OPCODE_LEN {
            return Err(Error::truncated(0, CTX, "opcode", OPCODE_LEN, len));
        }
        let (need, field) = match self.opcode() {
            OPCODE_PAUSE => (PAUSE_LEN, "pause_time"),
            OPCODE_PFC => (PFC_LEN, "time"),
            _ => (OPCODE_LEN, "opcode"),
        };
        if len < need {
            return Err(Error::truncated(
                OPCODE_LEN,
                CTX,
                field,
                need - OPCODE_LEN,
                len - OPCODE_LEN,
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
    /// The opcode.
    pub fn opcode(&self) -> u16 {
        self.u16_at(0)
    }
    /// PAUSE: the pause_time in quanta of 512 bit times.
    pub fn pause_time(&self) -> u16 {
        self.u16_at(2)
    }
    /// PFC: the priority_enable_vector, raw (the high byte should be zero).
    pub fn priority_enable_vector(&self) -> u16 {
        self.u16_at(2)
    }
    /// PFC: `time[priority]` in quanta (`priority` 0..=7).
    pub fn time(&self, priority: usize) -> u16 {
        self.u16_at(4 + 2 * priority)
    }
    /// The bytes after the opcode.
    pub fn params(&self) -> &[u8] {
        &self.buffer.as_ref()[OPCODE_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16(&mut self, at: usize, v: u16) {
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    /// Sets the opcode.
    pub fn set_opcode(&mut self, v: u16) {
        self.set_u16(0, v)
    }
    /// PAUSE: sets pause_time.
    pub fn set_pause_time(&mut self, v: u16) {
        self.set_u16(2, v)
    }
    /// PFC: sets the raw priority_enable_vector.
    pub fn set_priority_enable_vector(&mut self, v: u16) {
        self.set_u16(2, v)
    }
    /// PFC: sets `time[priority]` (`priority` 0..=7).
    pub fn set_time(&mut self, priority: usize, v: u16) {
        self.set_u16(4 + 2 * priority, v)
    }
}

/// The parameters of a MAC Control frame with an opcode this crate does not interpret:
/// at most [`PARAMS_MAX`] bytes, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnknownParams {
    bytes: [u8; PARAMS_MAX],
    len: u8,
}

impl UnknownParams {
    /// The first [`PARAMS_MAX`] bytes of `data` (all of them when shorter).
    pub fn truncating(data: &[u8]) -> Self {
        let n = data.len().min(PARAMS_MAX);
        let mut bytes = [0u8; PARAMS_MAX];
        bytes[..n].copy_from_slice(&data[..n]);
        UnknownParams { bytes, len: n as u8 }
    }
    /// `data` stored inline, or an error when it is longer than [`PARAMS_MAX`] bytes.
    pub fn new(data: &[u8]) -> Result<Self> {
        if data.len() > PARAMS_MAX {
            let kind = ErrorKind::BadLength {
                found: data.len(),
                allowed: "at most 44 bytes",
            };
            return Err(Error::new(OPCODE_LEN, CTX, "parameters", kind));
        }
        Ok(UnknownParams::truncating(data))
    }
    /// The stored bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for UnknownParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnknownParams(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// A MAC Control payload in owned form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MacControlRepr {
    /// 802.3 Annex 31B PAUSE (opcode 0x0001).
    Pause {
        /// Pause time in quanta of 512 bit times; 0 releases (XON).
        pause_time: u16,
    },
    /// 802.1Qbb PFC (opcode 0x0101).
    Pfc {
        /// Raw enable vector: bit n enables `time[n]`; the high byte is kept as found.
        priority_enable_vector: u16,
        /// Pause time per priority, in quanta.
        time: [u16; 8],
    },
    /// Any other opcode, with the bytes after it (not an error: 802.3 counts and drops these).
    Unknown {
        /// The opcode found.
        opcode: u16,
        /// The bytes after the opcode (at most 44).
        params: UnknownParams,
    },
}

/// What a PAUSE or one PFC priority asks of the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PauseRequest {
    /// Stop transmitting for this many quanta (non-zero).
    Xoff(u16),
    /// Resume now (a pause time of zero).
    Xon,
}

impl PauseRequest {
    /// The request carried by a pause time field.
    pub const fn from_quanta(quanta: u16) -> Self {
        if quanta == 0 {
            PauseRequest::Xon
        } else {
            PauseRequest::Xoff(quanta)
        }
    }
    /// The pause time in quanta (0 for XON).
    pub const fn quanta(self) -> u16 {
        match self {
            PauseRequest::Xoff(q) => q,
            PauseRequest::Xon => 0,
        }
    }
}

/// Iterator over the priorities (0..=7) whose bit is set in a PFC enable vector, ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnabledPriorities(u8);

impl Iterator for EnabledPriorities {
    type Item = u8;
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            return None;
        }
        let p = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(p)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for EnabledPriorities {}

impl MacControlRepr {
    /// A PFC frame that sends XOFF with `quanta` to every priority in the bit mask `priorities`.
    pub fn pfc_xoff(priorities: u8, quanta: u16) -> Self {
        let mut time = [0u16; 8];
        for p in EnabledPriorities(priorities) {
            time[usize::from(p)] = quanta;
        }
        MacControlRepr::Pfc {
            priority_enable_vector: priorities.into(),
            time,
        }
    }
    /// A PFC frame that sends XON (time 0) to every priority in the bit mask `priorities`.
    pub fn pfc_xon(priorities: u8) -> Self {
        MacControlRepr::Pfc {
            priority_enable_vector: priorities.into(),
            time: [0; 8],
        }
    }
    /// The opcode.
    pub const fn opcode(&self) -> u16 {
        match self {
            MacControlRepr::Pause { .. } => OPCODE_PAUSE,
            MacControlRepr::Pfc { .. } => OPCODE_PFC,
            MacControlRepr::Unknown { opcode, .. } => *opcode,
        }
    }
    /// PFC: the enabled priorities (bits 0..=7 of the vector); empty for other opcodes.
    pub fn enabled_priorities(&self) -> EnabledPriorities {
        match self {
            MacControlRepr::Pfc {
                priority_enable_vector,
                ..
            } => EnabledPriorities(*priority_enable_vector as u8),
            _ => EnabledPriorities(0),
        }
    }
    /// PFC: what the frame asks of `priority` (0..=7), or `None` when its bit is clear,
    /// the priority is out of range or the frame is not PFC.
    pub fn priority_request(&self, priority: u8) -> Option<PauseRequest> {
        match self {
            MacControlRepr::Pfc {
                priority_enable_vector,
                time,
            } if priority < 8 && priority_enable_vector & (1 << priority) != 0 => {
                Some(PauseRequest::from_quanta(time[usize::from(priority)]))
            }
            _ => None,
        }
    }
    /// PAUSE: what the frame asks of the whole link; `None` for other opcodes.
    pub fn pause_request(&self) -> Option<PauseRequest> {
        match self {
            MacControlRepr::Pause { pause_time } => Some(PauseRequest::from_quanta(*pause_time)),
            _ => None,
        }
    }
    /// Parses a MAC Control payload (opcode first). Bytes after the opcode's fields (padding)
    /// are ignored, except that an unknown opcode keeps up to 44 of them as its parameters.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<MacControlRepr> {
        MacControlRepr::parse_bytes(packet.buffer.as_ref())
    }
    /// Parses a MAC Control payload given as bytes (opcode first), as [`MacControlRepr::parse`].
    #[inline]
    pub fn parse_bytes(payload: &[u8]) -> Result<MacControlRepr> {
        let Some(&[o0, o1]) = payload.first_chunk::<OPCODE_LEN>() else {
            return Err(Error::truncated(0, CTX, "opcode", OPCODE_LEN, payload.len()));
        };
        let truncated = |need: usize, field| {
            Error::truncated(
                OPCODE_LEN,
                CTX,
                field,
                need - OPCODE_LEN,
                payload.len() - OPCODE_LEN,
            )
        };
        Ok(match u16::from_be_bytes([o0, o1]) {
            OPCODE_PAUSE => {
                let Some(b) = payload.first_chunk::<PAUSE_LEN>() else {
                    return Err(truncated(PAUSE_LEN, "pause_time"));
                };
                MacControlRepr::Pause {
                    pause_time: u16::from_be_bytes([b[2], b[3]]),
                }
            }
            OPCODE_PFC => {
                let Some(b) = payload.first_chunk::<PFC_LEN>() else {
                    return Err(truncated(PFC_LEN, "time"));
                };
                let be = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
                let time = [be(4), be(6), be(8), be(10), be(12), be(14), be(16), be(18)];
                MacControlRepr::Pfc {
                    priority_enable_vector: be(2),
                    time,
                }
            }
            opcode => MacControlRepr::Unknown {
                opcode,
                params: UnknownParams::truncating(&payload[OPCODE_LEN..]),
            },
        })
    }
    /// Length of the payload this repr emits (4 for PAUSE, 20 for PFC, 2 + parameters otherwise).
    pub fn buffer_len(&self) -> usize {
        match self {
            MacControlRepr::Pause { .. } => PAUSE_LEN,
            MacControlRepr::Pfc { .. } => PFC_LEN,
            MacControlRepr::Unknown { params, .. } => OPCODE_LEN + params.as_slice().len(),
        }
    }
    /// Writes the payload at the start of `buf` (no padding) and returns its length.
    /// Refuses an `Unknown` whose opcode is PAUSE's or PFC's (it would parse back differently).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::truncated(0, CTX, "buffer", len, buf.len()));
        }
        let mut p = Packet::new_unchecked(&mut buf[..len]);
        match self {
            MacControlRepr::Pause { pause_time } => {
                p.set_opcode(OPCODE_PAUSE);
                p.set_pause_time(*pause_time);
            }
            MacControlRepr::Pfc {
                priority_enable_vector,
                time,
            } => {
                p.set_opcode(OPCODE_PFC);
                p.set_priority_enable_vector(*priority_enable_vector);
                for (i, t) in time.iter().enumerate() {
                    p.set_time(i, *t);
                }
            }
            MacControlRepr::Unknown { opcode, params } => {
                if matches!(*opcode, OPCODE_PAUSE | OPCODE_PFC) {
                    let kind = ErrorKind::BadValue {
                        found: (*opcode).into(),
                        allowed: "an opcode other than 0x0001 and 0x0101 (use Pause or Pfc)",
                    };
                    return Err(Error::new(0, CTX, "opcode", kind));
                }
                p.set_opcode(*opcode);
                p.into_inner()[OPCODE_LEN..].copy_from_slice(params.as_slice());
            }
        }
        Ok(len)
    }
}

/// What a strict receiver would object to in a MAC Control frame: a bit set per finding.
/// Decoding never refuses a frame for these.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Warnings(u8);

impl Warnings {
    /// Nothing to report.
    pub const NONE: Warnings = Warnings(0);
    /// Destination is neither 01-80-C2-00-00-01 nor the station address given.
    pub const DESTINATION: Warnings = Warnings(1 << 0);
    /// PFC: the high byte of priority_enable_vector is not zero.
    pub const ENABLE_VECTOR_HIGH_BYTE: Warnings = Warnings(1 << 1);
    /// The frame is not exactly 64 bytes with FCS (60 without).
    pub const LENGTH: Warnings = Warnings(1 << 2);
    /// The FCS is present and wrong.
    pub const BAD_FCS: Warnings = Warnings(1 << 3);
    /// PAUSE/PFC: a byte of padding after the fields is not zero.
    pub const NONZERO_PADDING: Warnings = Warnings(1 << 4);
    /// The opcode is neither PAUSE nor PFC.
    pub const UNKNOWN_OPCODE: Warnings = Warnings(1 << 5);
    /// The frame carries VLAN tags (MAC Control frames are sent untagged).
    pub const VLAN_TAGGED: Warnings = Warnings(1 << 6);

    const NAMES: [(Warnings, &'static str); 7] = [
        (Warnings::DESTINATION, "DESTINATION"),
        (Warnings::ENABLE_VECTOR_HIGH_BYTE, "ENABLE_VECTOR_HIGH_BYTE"),
        (Warnings::LENGTH, "LENGTH"),
        (Warnings::BAD_FCS, "BAD_FCS"),
        (Warnings::NONZERO_PADDING, "NONZERO_PADDING"),
        (Warnings::UNKNOWN_OPCODE, "UNKNOWN_OPCODE"),
        (Warnings::VLAN_TAGGED, "VLAN_TAGGED"),
    ];

    /// The raw bits.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// Whether no warning is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether every warning in `other` is set.
    pub const fn contains(self, other: Warnings) -> bool {
        self.0 & other.0 == other.0
    }
    /// Sets the warnings in `other`.
    pub fn insert(&mut self, other: Warnings) {
        self.0 |= other.0
    }
    /// Sets the warnings in `other` when `cond` holds.
    #[inline]
    fn set_if(&mut self, cond: bool, other: Warnings) {
        self.0 |= other.0 * u8::from(cond)
    }
    /// The names of the warnings set, in bit order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Warnings::NAMES
            .into_iter()
            .filter(move |(w, _)| self.contains(*w))
            .map(|(_, n)| n)
    }
}

impl core::ops::BitOr for Warnings {
    type Output = Warnings;
    fn bitor(self, rhs: Warnings) -> Warnings {
        Warnings(self.0 | rhs.0)
    }
}

impl fmt::Debug for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Warnings(")?;
        for (i, n) in self.names().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            f.write_str(n)?;
        }
        f.write_str(")")
    }
}

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

/// Length of the part of an untagged frame that [`FlowControlView`] reads: header + PFC payload.
const VIEW_LEN: usize = HEADER_LEN + PFC_LEN;

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
fn view(
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

/// Length of a minimum-size frame without FCS.
const MIN_BODY: usize = fcs::MIN_FRAME_LEN_WITHOUT_FCS;

/// Whether the padding after a `fields`-byte PAUSE or PFC payload of a minimum-size untagged
/// frame is zero: a fixed set of overlapping eight-byte words, no loop.
#[inline]
fn padding_is_zero(b: &[u8; MIN_BODY], fields: usize) -> bool {
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
fn decode_any(body: &[u8]) -> Result<(MacControlFrame, usize)> {
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
fn all_zero(b: &[u8]) -> bool {
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

/// Builds an untagged MAC Control frame from `src` to `dst` in `buf`: header, payload, zero
/// padding to 60 bytes and, in [`FcsMode::Present`], the FCS. Returns 60 or 64.
pub fn emit_frame(
    src: EthernetAddress,
    dst: EthernetAddress,
    control: &MacControlRepr,
    fcs: FcsMode,
    buf: &mut [u8],
) -> Result<usize> {
    let need = fcs.min_frame_len();
    if buf.len() < need {
        return Err(Error::truncated(0, CTX, "buffer", need, buf.len()));
    }
    let eth = EthernetRepr {
        dst,
        src,
        tags: VlanTags::Untagged,
        ethertype: EtherType::MAC_CONTROL,
    };
    let at = eth.emit(buf)?;
    debug_assert_eq!(at, HEADER_LEN);
    let n = control.emit(&mut buf[at..]).map_err(|e| e.at(at))?;
    fcs::finish(buf, at + n, fcs)
}
