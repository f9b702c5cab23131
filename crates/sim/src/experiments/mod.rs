//! Runs of the simulator that are not one scenario run: the only callers of
//! [`crate::Simulator`] besides `lossless sim` itself.
//!
//! - [`headroom`]: bisection of the smallest lossless headroom (`lossless headroom --verify`);
//! - [`cc_compare`]: two fabrics under every congestion control (`lossless sim cc-compare`);
//! - [`cn_twin`]: a scenario with congestion notification run beside its twin without it
//!   (`lossless sim`);
//! - [`sweep`]: one scenario over the cartesian product of parameter values (`lossless sim
//!   --sweep`);
//! - [`parallel`], [`ranks`]: one fabric on several threads, and over MPI ranks × threads
//!   (their windows end at a [`barrier::WindowBarrier`]);
//! - [`slicer`]: runs in slices of wall time, so that a stop request is seen soon.

pub mod barrier;
pub mod cc_compare;
pub mod cn_twin;
pub mod expected_load;
pub mod headroom;
pub mod parallel;
pub mod partition_file;
pub mod partition_model;
pub mod ranks;
pub mod slicer;
pub mod sweep;
