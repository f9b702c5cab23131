//! Runs of the simulator that are not one scenario run: the only callers of
//! [`crate::Simulator`] besides `lossless sim` itself.
//!
//! - [`headroom`]: bisection of the smallest lossless headroom (`lossless headroom --verify`);
//! - [`cn_twin`]: a scenario with congestion notification run beside its twin without it
//!   (`lossless sim`).

pub mod cn_twin;
pub mod headroom;
