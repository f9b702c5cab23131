//! `lossless`: simulate, decode, generate and watch lossless Ethernet (PAUSE, PFC, ETS, DCBX).

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `print!` for commands: the text goes through [`lossless_files::print_stdout`], so a
/// closed or full standard output is an error the command returns, never a panic.
macro_rules! out {
    ($($arg:tt)*) => {
        lossless_files::print_stdout(format_args!($($arg)*))
    };
}

/// `println!` for commands, as [`out!`].
macro_rules! outln {
    () => {
        lossless_files::print_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        lossless_files::print_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` for commands: a message on standard error; when standard error cannot be
/// written (closed, on a full disk) the message is lost instead of the command panicking.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` for commands, as [`errln!`].
macro_rules! errout {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod cmd;
mod huge_pages;

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
    Sim(Box<cmd::sim::SimArgs>),
    /// Decode PAUSE, PFC, LLDP/DCBX, IP ECN, RoCEv2 (CNP) and 802.1Qau CNM frames in a pcap or
    /// pcapng capture.
    Decode(cmd::decode::DecodeArgs),
    /// Run the LLDP/DCBX agent on an interface, or show a running agent's state.
    Dcbx(cmd::dcbx::DcbxArgs),
    /// Show or set an interface's DCB state (ETS, PFC, App) through dcbnl, as iproute2's dcb.
    Dcb(cmd::dcb::DcbArgs),
    /// Send PAUSE or PFC frames on interfaces (pfc_gen.py and more: rates, a stuck NIC with mlx5 storm prevention).
    Gen(cmd::r#gen::GenArgs),
    /// Watch PAUSE/PFC frames both ways on an interface: counters, SONiC pfcwd storms, deadlock suspicion.
    Watch(cmd::watch::WatchArgs),
    /// Analyze PAUSE/PFC and DCBX in a capture: totals, paused time, storms, agreement.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// PFC headroom: 802.1Qbb Annex N term by term beside mlx5 and SONiC; --verify simulates it.
    Headroom(cmd::headroom::HeadroomArgs),
    /// Write a scenario from a SONiC config_db.json or mlnx_qos output (PFC, DSCP map, buffers, ECN).
    Import(cmd::import::ImportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim(args) => {
            // a large fabric's run is bound by TLB misses on 4 kB pages
            huge_pages::ensure();
            cmd::sim::run(*args)
        }
        Command::Decode(args) => cmd::decode::run(args),
        Command::Dcbx(args) => cmd::dcbx::run(args),
        Command::Dcb(args) => cmd::dcb::run(args),
        Command::Gen(args) => cmd::r#gen::run(args),
        Command::Watch(args) => cmd::watch::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Headroom(args) => cmd::headroom::run(args),
        Command::Import(args) => cmd::import::run(args),
    };
    // what `out!` left without a newline is still buffered: its error counts too
    let result = result.and_then(|code| {
        std::io::stdout()
            .flush()
            .map_err(|source| lossless_files::OutputError {
                path: "-".into(),
                source,
            })?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        // the reader of an output went away (`| head -1`): stop quietly, as coreutils do
        Err(err) if err.chain().any(lossless_files::is_broken_pipe) => ExitCode::SUCCESS,
        Err(err) => {
            errln!("error: {}", error_text(&err));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes, joined by ": ", each cause only when the text so far does not
/// already say it (many errors print their cause in their own message).
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for e in err.chain() {
        let t = e.to_string();
        if text.contains(&t) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&t);
    }
    text
}
