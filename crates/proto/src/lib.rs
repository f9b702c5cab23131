//! Sans-IO engines for lossless Ethernet. An engine is handed the current time and an
//! input and hands back what to do; it never reads a clock, a socket or a file.

pub mod dcbx;
pub mod dcqcn;
pub mod dctcp;
pub mod ecn;
pub mod ets;
pub mod flow_control;
pub mod headroom;
pub mod hpcc;
pub mod hpcc_pint;
pub mod lldp_agent;
pub mod monitor;
pub mod qcn;
pub mod rocev2;
pub mod timely;
pub mod units;
pub mod watchdog;
