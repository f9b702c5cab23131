//! Congestion notification in captures: IP with its ECN field, UDP and RoCEv2 (BTH, extension
//! headers, ICRC), 802.1Qau CN-TAG and CNM — decoded ([`decode`]), their decoded form
//! ([`model`]), as text ([`text`]), a sample of such frames ([`sample`]), and a capture's RoCEv2 traffic
//! per queue pair for `analyze` ([`traffic`]).

pub mod decode;
pub mod model;
pub mod sample;
pub mod text;
pub mod traffic;
