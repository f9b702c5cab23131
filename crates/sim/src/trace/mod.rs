//! What a run leaves behind besides its report, all fed through the [`crate::observer::Observer`]
//! hook: pcapng per link direction ([`pcap`]), waveforms ([`vcd`]) and the HTML report with
//! its SVG plots ([`html`]) and the CSV time series of `--series` ([`csv`]).

pub mod csv;
pub mod html;
pub mod pcap;
pub mod vcd;
