//! Live drivers: the same engines on real Linux interfaces, over AF_PACKET sockets.
//!
//! [`raw::RawSocket`] is a general AF_PACKET socket bound to one interface and one EtherType;
//! [`dcbx`] runs the sans-IO DCBX agent on it (`lossless dcbx run`); [`netlink`] speaks dcbnl
//! and ethtool's netlink family, [`ethtool_stats`] reads `ethtool -S`, and [`counters`] says
//! what the drivers' pause counters mean and runs pfcwd on them.

pub mod counters;
pub mod dcbx;
pub mod ethtool_stats;
pub mod generator;
pub mod kernel;
pub mod link;
pub mod netlink;
pub mod prometheus;
pub mod raw;
pub mod signals;
pub mod tx_ring;
pub mod watch;

pub use raw::{LiveError, RawSocket};

// The PAUSE/PFC monitor and storm watchdog are sans-IO and live in proto, shared with
// `lossless analyze`; re-exported for the live tools.
pub use lossless_proto::{monitor, watchdog};
