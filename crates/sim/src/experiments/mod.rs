//! Runs of the simulator that are not one scenario run: the only callers of
//! [`crate::Simulator`] besides `lossless sim` itself.
//!
//! - [`headroom`]: bisection of the smallest lossless headroom (`lossless headroom --verify`).

pub mod headroom;
