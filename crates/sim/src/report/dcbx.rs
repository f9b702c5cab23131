//! The DCBX part of a port's report (defined beside the engine, whose partition digests carry
//! it).

pub use crate::sim::dcbx_report::DcbxReport;
