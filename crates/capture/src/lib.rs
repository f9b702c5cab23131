//! Capture tools: read pcap and pcapng files and decode the MAC Control, LLDP and DCBX,
//! IP/UDP, RoCEv2 (CNP included) and 802.1Qau CN-TAG and CNM frames in them into text and JSON.
//!
//! [`reader::CaptureReader`] yields the frames of a file; [`decode::decode_frame`] turns one
//! into a [`model::FrameRecord`]; [`text::render`] and `serde_json` print it.

pub mod analyze;
pub mod cn;
pub mod decode;
pub mod filter;
pub mod headroom;
pub mod lldp;
pub mod model;
pub mod reader;
pub mod report;
pub mod sample;
pub mod text;

pub use decode::decode_frame;
pub use filter::{Filter, FrameKind};
pub use model::FrameRecord;
pub use reader::{CaptureReader, Format, Frame, ReadError, ReadErrorKind};
