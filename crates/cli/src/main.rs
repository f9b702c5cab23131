//! `lossless`: simulate, decode, generate and watch lossless Ethernet (PAUSE, PFC, ETS, DCBX).

use clap::Parser;

/// Lossless Ethernet toolkit: 802.3x PAUSE, 802.1Qbb PFC, 802.1Qaz ETS and DCBX.
#[derive(Parser, Debug)]
#[command(name = "lossless", version, about, long_about = None)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
