//! A deterministic, bit-time-accurate discrete-event simulator of DCB links and fabrics,
//! driving the sans-IO engines of `lossless-proto`.
//!
//! - [`event`]: the (time, sequence)-ordered event queue behind a trait.
//! - [`sim`]: ports, hosts, switches and links; the event handlers.
//! - [`buffer`]: a switch's shared buffer, thresholds, XOFF/XON and headroom.
//! - [`headroom`]: the 802.1Qbb Annex N headroom formula.
//! - [`traffic`]: flows, patterns, flow-size CDFs, Poisson arrivals.
//! - [`scenario`]: TOML scenario files and the built-in scenarios.
//! - [`report`]: metrics (terminal summary, JSON) and the conservation check.
//! - [`observer`]: the trace hook; [`pcap`] is a sink writing pcapng per link direction.

pub mod buffer;
pub mod config;
pub mod event;
pub mod frame;
pub mod headroom;
pub mod html;
pub mod observer;
pub mod pcap;
pub mod report;
pub mod scenario;
pub mod selection;
pub mod sim;
pub mod stats;
pub mod traffic;
pub mod vcd;

pub use report::Report;
pub use sim::{BuildError, Event, Simulator};
