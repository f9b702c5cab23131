//! One module per `lossless` subcommand.

pub mod analyze;
pub mod cc_compare;
pub mod dcb;
pub mod dcbx;
pub mod decode;
pub mod r#gen;
pub mod headroom;
pub mod import;
pub mod ns3;
pub mod sim;
pub mod sim_mpi;
pub mod sweep;
pub mod watch;

use lossless_files::OutputError;

pub use lossless_sim::experiments::slicer::Slicer;

/// Where a command's human-readable text goes: standard output; standard error when an
/// output file is standard output (`--json -`), so that stays machine-readable; or nowhere
/// (`--quiet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Say {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// Nowhere.
    Quiet,
}

impl Say {
    /// The place for a command with `--quiet` as given, and whether an output is standard
    /// output.
    pub fn new(quiet: bool, output_on_stdout: bool) -> Say {
        if quiet {
            Say::Quiet
        } else if output_on_stdout {
            Say::Stderr
        } else {
            Say::Stdout
        }
    }

    /// Writes `text` as it is.
    pub fn text(self, text: &str) -> Result<(), OutputError> {
        match self {
            Say::Stdout => out!("{text}"),
            Say::Stderr => {
                errout!("{text}");
                Ok(())
            }
            Say::Quiet => Ok(()),
        }
    }

    /// Writes one line.
    pub fn line(self, args: std::fmt::Arguments<'_>) -> Result<(), OutputError> {
        match self {
            Say::Stdout => outln!("{args}"),
            Say::Stderr => {
                errln!("{args}");
                Ok(())
            }
            Say::Quiet => Ok(()),
        }
    }
}
