//! One module per `lossless` subcommand.

pub mod analyze;
pub mod dcbx;
pub mod decode;
pub mod r#gen;
pub mod headroom;
pub mod sim;
pub mod sweep;
pub mod watch;
