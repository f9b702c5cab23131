//! Conversions between the engine's frames and the codecs of `lossless_wire::mac_control`.

use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{self, MacControlFrame, MacControlRepr, Warnings};

use super::frame::{ControlFrame, ReceivedBody, ReceivedControl, Transmit};

impl From<ControlFrame> for MacControlRepr {
    fn from(f: ControlFrame) -> Self {
        match f {
            ControlFrame::Pause { quanta } => MacControlRepr::Pause { pause_time: quanta },
            ControlFrame::Pfc { enable_vector, time } => MacControlRepr::Pfc {
                priority_enable_vector: enable_vector.into(),
                time,
            },
        }
    }
}

impl From<MacControlRepr> for ReceivedBody {
    /// PFC: the reserved high byte of the enable vector is ignored (802.1Qbb: transmitted as
    /// zero, ignored on receipt; Wireshark only warns).
    fn from(r: MacControlRepr) -> Self {
        match r {
            MacControlRepr::Pause { pause_time } => {
                ReceivedBody::Known(ControlFrame::Pause { quanta: pause_time })
            }
            MacControlRepr::Pfc {
                priority_enable_vector,
                time,
            } => ReceivedBody::Known(ControlFrame::Pfc {
                enable_vector: (priority_enable_vector & 0xFF) as u8,
                time,
            }),
            MacControlRepr::Unknown { opcode, .. } => ReceivedBody::Unknown { opcode },
        }
    }
}

impl ReceivedControl {
    /// What the engine needs from a decoded frame that was `frame_len` bytes long (FCS
    /// included) on the wire.
    pub fn from_decoded(frame: &MacControlFrame, frame_len: u32) -> Self {
        ReceivedControl {
            dst: frame.ethernet.dst.0,
            frame_len,
            body: frame.control.into(),
        }
    }

    /// Decodes a received MAC Control frame (`fcs` says whether `bytes` end with the FCS).
    /// `Ok(None)` for a frame whose FCS is wrong: the MAC discards it before MAC Control sees it.
    pub fn decode(bytes: &[u8], fcs: FcsMode) -> lossless_wire::Result<Option<Self>> {
        let decoded = mac_control::decode_frame(bytes, fcs, None)?;
        if decoded.warnings.contains(Warnings::BAD_FCS) {
            return Ok(None);
        }
        let fcs_len = match fcs {
            FcsMode::Present => 0,
            FcsMode::Absent => 4,
        };
        let len = u32::try_from(bytes.len())
            .unwrap_or(u32::MAX)
            .saturating_add(fcs_len);
        Ok(Some(Self::from_decoded(&decoded, len)))
    }
}

impl Transmit {
    /// Writes the frame's bytes (header, payload, zero padding and, if asked, the FCS) into
    /// `buf`; returns 60 or 64.
    pub fn emit(&self, fcs: FcsMode, buf: &mut [u8]) -> lossless_wire::Result<usize> {
        mac_control::emit_frame(
            EthernetAddress(self.src),
            EthernetAddress(self.dst),
            &self.frame.into(),
            fcs,
            buf,
        )
    }
}
