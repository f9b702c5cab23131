//! `lossless`: simulate, decode, generate and watch lossless Ethernet (PAUSE, PFC, ETS, DCBX).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// Lossless Ethernet toolkit: 802.3x PAUSE, 802.1Qbb PFC, 802.1Qaz ETS and DCBX.
///
/// Every protocol is implemented once, exact to the bit time, and driven here by a simulator
/// (`sim`) and by capture tools (`decode`).
#[derive(Parser, Debug)]
#[command(name = "lossless", version, about, long_about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate DCB links and fabrics (PFC, PAUSE, ETS) bit-time-accurately.
    Sim(cmd::sim::SimArgs),
    /// Decode PAUSE, PFC, LLDP/DCBX, IP ECN, RoCEv2 (CNP) and 802.1Qau CNM frames in a pcap or
    /// pcapng capture.
    Decode(cmd::decode::DecodeArgs),
    /// Run the LLDP/DCBX agent on an interface, or show a running agent's state.
    Dcbx(cmd::dcbx::DcbxArgs),
    /// Send PAUSE or PFC frames on interfaces (pfc_gen.py and more: rates, storms).
    Gen(cmd::r#gen::GenArgs),
    /// Watch PAUSE/PFC frames on an interface: counters, paused time, PFC storms.
    Watch(cmd::watch::WatchArgs),
    /// Analyze PAUSE/PFC and DCBX in a capture: totals, paused time, storms, agreement.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// PFC headroom: 802.1Qbb Annex N term by term beside mlx5 and SONiC; --verify simulates it.
    Headroom(cmd::headroom::HeadroomArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim(args) => cmd::sim::run(args),
        Command::Decode(args) => cmd::decode::run(args),
        Command::Dcbx(args) => cmd::dcbx::run(args),
        Command::Gen(args) => cmd::r#gen::run(args),
        Command::Watch(args) => cmd::watch::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Headroom(args) => cmd::headroom::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
