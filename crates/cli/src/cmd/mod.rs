//! One module per `lossless` subcommand.

pub mod decode;
pub mod sim;
