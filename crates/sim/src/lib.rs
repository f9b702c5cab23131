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
//! headroom ([`headroom::default_headroom_bytes`] by default), XON below threshold − offset, lossy
//! frames tail-dropped, shortest-path static routes with ECMP by flow hash; hosts with bounded
//! NIC queues (a blocked sender waits, it does not drop) and a receiver with an optional
//! processing rate that raises XOFF when its backlog grows (document 002's module A).
//!
//! - [`event`]: the (time, sequence)-ordered event queue behind a trait.
//! - [`sim`]: ports, hosts, switches and links; the event handlers.
//! - [`traffic`]: flows (line rate, CBR, on/off, finite or not), flow-size CDFs, Poisson arrivals.
//! - [`scenario`]: TOML scenario files and the built-in scenarios (`four-bridge`, `two-chip`,
//!   `incast`, `ets-7-13-80`, `dcbx-adopt`, `dcbx-disagree`, `four-bridge-cn`,
//!   `incast-dcqcn`).
//! - [`transport`], `sim/features/qp.rs`, `sim/features/cn.rs`: RoCEv2 QPs (the `rocev2` transport, DCQCN and QCN
//!   reaction and notification points in the flow's state) and switch congestion notification
//!   (ECN markers, QCN congestion points) — see [`cn_report`] for what a run reports and
//!   [`model`] for the 802.3-exact vs HPCC ns-3 modelling choices; [`ns3`] reads the HPCC ns-3
//!   reference's input files.
//! - [`dcbx_report`]: the per-port DCBX figures of the report.
//! - [`verdict`]: the lossless verdict (every frame of a lossless priority dropped, where and
//!   why).
//! - [`report`]: metrics (JSON with units in every key) and the frame conservation check;
//!   [`summary`]: the terminal summary (totals, then the top ports and flows at fabric scale).
//! - [`observer`]: the trace hook (zero cost when off); sinks [`pcap`] (pcapng per link
//!   direction), [`vcd`] (waveforms) and [`html`] (report with SVG plots).

pub mod buffer;
pub mod cn_report;
pub mod config;
pub mod dcbx_report;
pub mod event;
pub mod frame;
pub mod headroom;
pub mod html;
pub mod model;
pub mod ns3;
pub mod observer;
pub mod pathology;
pub mod pathology_report;
pub mod pcap;
pub mod report;
pub mod scenario;
pub mod selection;
pub mod series;
pub mod sim;
pub mod stats;
pub mod summary;
pub mod traffic;
pub mod transport;
pub mod vcd;
pub mod verdict;

pub use report::Report;
pub use sim::{BuildError, DcbxChangeError, Event, QpError, Simulator};
pub use summary::SummaryOptions;

#[cfg(test)]
mod tests {
    use crate::event::Scheduled;
    use crate::frame::Frame;
    use crate::observer::WireFrame;
    use crate::sim::Event;

    #[test]
    fn hot_path_values_stay_small() {
        // memory per frame: 32 bytes queued, 40 bytes on the wire (+ 2 events of 32 bytes)
        assert_eq!(std::mem::size_of::<Event>(), 8);
        assert!(std::mem::size_of::<Frame>() <= 32);
        assert!(std::mem::size_of::<WireFrame>() <= 40);
        assert!(std::mem::size_of::<Scheduled<Event>>() <= 32);
    }
}
