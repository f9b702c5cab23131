//! `lossless decode`: decode the frames of a capture.

use std::process::ExitCode;

/// Arguments of `lossless decode`.
#[derive(clap::Args, Debug)]
pub struct DecodeArgs {}

/// Runs `lossless decode`.
pub fn run(_args: DecodeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the decoder is being built; `lossless decode` is not available in this build")
}
