//! Congestion notification in captures: IP with its ECN field, UDP and RoCEv2 (BTH, extension
//! headers, ICRC), 802.1Qau CN-TAG and CNM — decoded ([`decode`]), their decoded form
//! ([`model`]), as text ([`text`]), and a sample of such frames ([`sample`]).

pub mod decode;
pub mod model;
pub mod sample;
pub mod text;
