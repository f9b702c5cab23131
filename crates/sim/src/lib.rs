//! A deterministic, bit-time-accurate discrete-event simulator of DCB links and fabrics,
//! driving the sans-IO MAC flow-control engine of `lossless-proto` (one engine per port; the
//! simulator never re-implements PAUSE/PFC).
//!
//! Model, in short: full-duplex links (rate, 5 ns/m, preamble + SFD + IFG on the wire); ports
//! with eight egress queues, strict-priority or 802.1Qaz ETS/CBS transmission selection behind
//! [`selection::TransmissionSelection`], control frames first at frame boundaries; optional
//! DCBX agents whose LLDPDUs cross the links and whose operational PFC/ETS configure the
//! ports at run time (see `sim/features/dcbx.rs`); switches
//! with a shared buffer ([`buffer`]) charging each frame to its (ingress port, priority), XOFF
//! raised into the ingress port's engine when a lossless frame overflows its threshold into
//! headroom ([`config::headroom::default_headroom_bytes`] by default), XON below threshold − offset, lossy
//! frames tail-dropped, shortest-path static routes with ECMP by flow hash; hosts with bounded
//! NIC queues (a blocked sender waits, it does not drop) and a receiver with an optional
//! processing rate that raises XOFF when its backlog grows (document 002's module A).
//!
//! The crate, in the order a run uses it:
//!
//! - Front ends: [`scenario`] (TOML scenario files and the built-ins) and [`ns3`] (the HPCC ns-3
//!   reference's input files) produce a [`config::SimConfig`]; [`config`] also holds traffic
//!   ([`config::traffic`]), RoCEv2 QPs and congestion notification ([`config::transport`]), the
//!   modelling choices of the 802.3-exact and HPCC ns-3 models ([`config::model`]), the pathology
//!   settings ([`config::pathology`]) and the default PFC headroom ([`config::headroom`]).
//! - The engine: [`sim`] (the [`Simulator`], its event dispatch and run loop; `sim/fabric/` the
//!   data path in frame order, `sim/features/` the optional features behind one hook list),
//!   built from the components [`event`] (the (time, sequence)-ordered event queues),
//!   [`frame`], [`buffer`], [`selection`], [`stats`] and [`series`].
//! - What a run leaves: [`report`] (metrics as JSON with units in every key, the conservation
//!   check, the CN, DCBX and pathology sections, the lossless [`report::verdict`] and the
//!   terminal [`report::summary`]); [`observer`] (the trace hook, zero cost when off) and its
//!   sinks in [`trace`] (pcapng, VCD, the HTML report, CSV time series).
//! - [`experiments`]: the other callers of the simulator (headroom verification).

pub mod buffer;
pub mod config;
pub mod event;
pub mod experiments;
pub mod frame;
pub mod ns3;
pub mod observer;
pub mod report;
pub mod scenario;
pub mod selection;
pub mod series;
pub mod sim;
pub mod stats;
pub mod trace;

pub use report::Report;
pub use report::summary::SummaryOptions;
pub use sim::{BuildError, DcbxChangeError, Event, QpError, Simulator};

#[cfg(test)]
mod tests {
    use crate::frame::Frame;
    use crate::observer::WireFrame;
    use crate::sim::Event;

    #[test]
    fn hot_path_values_stay_small() {
        // memory per frame: 32 bytes queued, 40 bytes on the wire (+ 2 events of at most 32
        // bytes in the queue, see event.rs)
        assert_eq!(std::mem::size_of::<Event>(), 8);
        assert!(std::mem::size_of::<Frame>() <= 32);
        assert!(std::mem::size_of::<WireFrame>() <= 40);
    }
}
