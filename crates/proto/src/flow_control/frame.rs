//! The engine's own small, `Copy` picture of MAC Control frames (independent of the codecs).

use serde::{Deserialize, Serialize};

use crate::units::Instant;

/// Destination of every PAUSE and PFC frame: the MAC Control multicast 01-80-C2-00-00-01.
pub const MAC_CONTROL_MULTICAST: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// EtherType of MAC Control frames.
pub const MAC_CONTROL_ETHERTYPE: u16 = 0x8808;
/// Opcode of a PAUSE frame (802.3 Annex 31B).
pub const OPCODE_PAUSE: u16 = 0x0001;
/// Opcode of a PFC frame (802.1Qbb, 802.3 Annex 31D).
pub const OPCODE_PFC: u16 = 0x0101;
/// Length of every PAUSE and PFC frame on the wire, FCS included (no preamble).
pub const CONTROL_FRAME_BYTES: u64 = 64;

/// A PAUSE or PFC request as it travels on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlFrame {
    /// Link-level PAUSE: stop all data for `quanta` × 512 bit times (0 = XON).
    Pause {
        /// pause_time in quanta.
        quanta: u16,
    },
    /// PFC: for each set bit n of `enable_vector`, stop priority n for `time[n]` quanta.
    Pfc {
        /// priority_enable_vector, low byte (the high byte is reserved, zero).
        enable_vector: u8,
        /// time[0..7] in quanta; meaningful only where the enable bit is set.
        time: [u16; 8],
    },
}

impl ControlFrame {
    /// The MAC Control opcode of this frame.
    pub fn opcode(&self) -> u16 {
        match self {
            ControlFrame::Pause { .. } => OPCODE_PAUSE,
            ControlFrame::Pfc { .. } => OPCODE_PFC,
        }
    }
}

/// What the receive side is told about one received MAC Control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceivedControl {
    /// Destination address of the frame.
    pub dst: [u8; 6],
    /// Length of the frame in bytes, FCS included (valid MAC Control frames are 64).
    pub frame_len: u32,
    /// The decoded operation, or the opcode if it is neither PAUSE nor PFC.
    pub body: ReceivedBody,
}

/// The operation of a received MAC Control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceivedBody {
    /// A PAUSE or PFC operation.
    Known(ControlFrame),
    /// Any other opcode (counted as UnsupportedOpcodesReceived).
    Unknown {
        /// The opcode found.
        opcode: u16,
    },
}

impl ReceivedControl {
    /// A well-formed 64-byte control frame sent to the MAC Control multicast address.
    pub fn multicast(frame: ControlFrame) -> Self {
        ReceivedControl {
            dst: MAC_CONTROL_MULTICAST,
            frame_len: CONTROL_FRAME_BYTES as u32,
            body: ReceivedBody::Known(frame),
        }
    }
}

/// A control frame the engine has put on the wire: the driver transmits it at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transmit {
    /// The frame.
    pub frame: ControlFrame,
    /// Destination address (always [`MAC_CONTROL_MULTICAST`]).
    pub dst: [u8; 6],
    /// Source address (the port's station address).
    pub src: [u8; 6],
    /// When its preamble starts (the `now` of the poll).
    pub start: Instant,
    /// When its last bit (end of FCS) leaves the port.
    pub last_bit: Instant,
    /// When the wire is free again (after the inter-frame gap).
    pub free_at: Instant,
}

/// The wire occupancy of a frame the driver started (see `FlowControl::on_tx_start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxSlot {
    /// When its preamble starts.
    pub start: Instant,
    /// When its last bit (end of FCS) leaves the port.
    pub last_bit: Instant,
    /// When the wire is free again (after the inter-frame gap).
    pub free_at: Instant,
}
