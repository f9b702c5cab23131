//! One module per `lossless` subcommand.

pub mod analyze;
pub mod dcbx;
pub mod decode;
pub mod r#gen;
pub mod headroom;
pub mod ns3;
pub mod sim;
pub mod sweep;
pub mod watch;

use lossless_files::OutputError;
use lossless_proto::units::{Duration, Instant};

/// Runs a simulation in slices of simulated time sized so that each takes 10-50 ms of wall
/// time, whatever the scenario's speed: a stop request (SIGINT) or an output failure is seen
/// within about that, and checking costs nothing measurable.
#[derive(Debug, Clone, Copy)]
pub struct Slicer {
    step_ps: u128,
}

impl Slicer {
    /// Starts with 1 µs slices.
    pub fn new() -> Slicer {
        Slicer { step_ps: 1_000_000 }
    }

    /// The end of the next slice after `now`.
    pub fn next(&self, now: Instant) -> Instant {
        now.saturating_add(Duration::from_ps(self.step_ps))
    }

    /// Adjusts the slice to the wall time the last one took.
    pub fn took(&mut self, wall: std::time::Duration) {
        if wall < std::time::Duration::from_millis(10) {
            self.step_ps = self.step_ps.saturating_mul(2);
        } else if wall > std::time::Duration::from_millis(50) {
            self.step_ps = (self.step_ps / 2).max(1);
        }
    }
}

impl Default for Slicer {
    fn default() -> Self {
        Slicer::new()
    }
}

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
