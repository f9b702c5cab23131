//! What a run leaves behind besides its report, all fed through the [`crate::observer::Observer`]
//! hook: pcapng per link direction ([`pcap`]), waveforms ([`vcd`]) and the HTML report with
//! its SVG plots ([`html`]) and the CSV time series of `--series` ([`csv`]); a split run records them per partition
//! and merges them into one simulator's order ([`split`]).

pub mod csv;
pub mod html;
pub mod pcap;
pub mod split;
pub mod vcd;
