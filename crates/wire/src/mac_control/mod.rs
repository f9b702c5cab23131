//! MAC Control frames (EtherType 0x8808): 802.3 PAUSE and 802.1Qbb PFC.
//!
//! [`Packet`] is a checked zero-copy view of the MAC Control payload (the bytes after the
//! EtherType, opcode first); [`MacControlRepr`] is its owned form. [`decode_frame`] decodes a
//! whole frame, with or without FCS, and reports what a strict receiver would object to in
//! [`Warnings`] without refusing to decode; [`decode_flow_control`] is its copy-free fast path
//! for untagged PAUSE and PFC frames. [`emit_frame`] builds a whole 60- or 64-byte frame.

mod decode;
mod emit;
mod packet;
mod repr;
mod view;
mod warnings;

pub use decode::{MacControlFrame, decode_frame};
pub use emit::emit_frame;
pub use packet::Packet;
pub use repr::{EnabledPriorities, MacControlRepr, PauseRequest, UnknownParams};
pub use view::{FlowControlView, decode_flow_control, decode_flow_control_with};
pub use warnings::Warnings;

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

pub(super) const CTX: &str = "MAC Control frame";
