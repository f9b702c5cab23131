//! One module per `lossless` subcommand.

pub mod dcbx;
pub mod decode;
pub mod sim;
