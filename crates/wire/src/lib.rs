//! Wire-exact codecs for lossless Ethernet: Ethernet II with 802.1Q tags, MAC Control
//! (802.3 PAUSE and 802.1Qbb PFC), LLDP (802.1AB) and DCBX (802.1Qaz and CEE), IPv4/IPv6 with
//! ECN and UDP (through etherparse), RoCEv2 (BTH, AETH, CNP, ICRC) and 802.1Qau congestion
//! notification (CN-TAG, CNM).
//!
//! Each protocol has a checked zero-copy view over a byte buffer and an owned
//! representation (`*Repr`) with `parse`, `emit` and `buffer_len`, in the manner of
//! smoltcp's `wire` module. Nothing here panics on input.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod error;

pub use error::{Error, ErrorKind, Result};
pub mod ethernet;
pub mod fcs;
pub mod int;
pub mod ip;
pub mod lldp;
pub mod mac_control;
pub mod pint;
pub mod qcn;
pub mod roce;
pub mod udp;
