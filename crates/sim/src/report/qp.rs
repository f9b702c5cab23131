//! The QP figures of a flow with a RoCEv2 transport (defined beside the engine, whose
//! partition digests carry them).

pub use crate::sim::qp_report::QpReport;
