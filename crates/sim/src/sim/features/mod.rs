//! The optional features the data path calls at its hook points (listed in `sim/mod.rs`):
//! congestion notification (ECN marking, QCN), DCBX, RoCEv2 queue pairs, and the pathology
//! parts (stalls and storms, pfcwd, topology events, the deadlock detector, victims), link
//! bit errors.

pub(in crate::sim) mod cn;
pub(in crate::sim) mod dcbx;
pub(in crate::sim) mod hooks;
pub(in crate::sim) mod hpcc;
pub(in crate::sim) mod link_errors;
pub(in crate::sim) mod pathology;
pub(in crate::sim) mod qp;
