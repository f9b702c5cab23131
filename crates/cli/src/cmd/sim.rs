//! `lossless sim`: run a simulation scenario.

use std::process::ExitCode;

/// Arguments of `lossless sim`.
#[derive(clap::Args, Debug)]
pub struct SimArgs {}

/// Runs `lossless sim`.
pub fn run(_args: SimArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the simulator is being built; `lossless sim` is not available in this build")
}
