//! Transmission selection for lossless Ethernet ports: IEEE 802.1Qaz ETS (strict priority,
//! 802.1Qav credit-based shaper, ETS bandwidth shares) and the pre-standard CEE priority
//! groups, aware of PFC pause.
//!
//! # Driver guide
//!
//! Build a [`Scheduler`] from an [`EtsConfig`] ([`Scheduler::ieee`]) or a [`CeeConfig`]
//! ([`Scheduler::cee`]) and the port's [`PortParams`]. Then, for every port event:
//!
//! - a frame joins priority `p`'s queue: [`Scheduler::enqueue`]`(now, p, len)`;
//! - the set of PFC-paused priorities changes: [`Scheduler::set_paused`]`(now, mask)` (or pass
//!   the mask to `select`, which records a change at that instant);
//! - the transmitter is free: [`Scheduler::select`]`(now, paused)` names the priority whose
//!   oldest frame goes next; start it and call [`Scheduler::on_transmitted`]`(now, p, len)`;
//! - `select` returned `None` with frames queued and unpaused: a shaper holds them; wake at
//!   [`Scheduler::next_eligible`]`(now)` (or at the next enqueue or pause change).
//!
//! Order of service: strict-priority and credit-based-shaper TCs by TC number, highest first
//! (802.1Q 8.6.8: a class sends only when no higher class has a frame its algorithm allows);
//! then the ETS TCs, as Linux `sch_ets` serves its strict bands before its DRR bands.
//! Bandwidth is shared by deficit counters with a one-byte quantum (see `group.rs`): each
//! busy ETS class gets `bw / Σ bw of busy classes` of what the strict classes leave, within
//! about two maximum frames over any interval. An idle or paused class is skipped and its
//! share spreads over the busy ones in proportion to their weights; it gets its share back
//! (without catching up) when it returns.
//!
//! Each priority has its own sub-queue inside its class: a paused priority is skipped while
//! its unpaused siblings of the same class go on (no head-of-line blocking), and the
//! priorities of a class share it equally (IEEE) or by their own percentage (CEE).
//!
//! Bytes are counted per frame as length + `overhead_bytes` (20 by default: preamble, SFD
//! and inter-frame gap), so the shares are of link time.

mod cbs;
mod cee;
mod config;
mod group;
mod parse;
mod scheduler;

pub use cee::{CeeConfig, CeeConfigError, PGID_STRICT};
pub use config::{Algorithm, EtsConfig, EtsConfigError};
pub use parse::{BandwidthMap, ParseError, PrioTcMap, TsaMap};
pub use scheduler::{MAX_FRAME_BYTES, PortParams, Scheduler, SchedulerError, Selection};
