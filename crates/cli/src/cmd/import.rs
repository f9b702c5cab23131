//! `lossless import sonic|mlnx-qos FILE`: an operator's configuration as a scenario file
//! (`lossless_sim::scenario::import`), with what could not be mapped on standard error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use lossless_files::{Claims, Output};
use lossless_sim::scenario::import::{self, Imported, MAX_IMPORT_BYTES};

/// Arguments of `lossless import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(subcommand)]
    what: ImportKind,
}

/// What is imported.
#[derive(Subcommand, Debug)]
enum ImportKind {
    /// A SONiC config_db.json: PFC, DSCP_TO_TC_MAP, buffers, WRED/ECN, PFC_WD, cable lengths of its ports.
    Sonic {
        /// The config_db.json (nested tables, or the flat TABLE|key form of a CONFIG_DB dump).
        file: PathBuf,
        /// A port to import (repeat; default: every port with pfc_enable in PORT_QOS_MAP).
        #[arg(long = "port", value_name = "PORT")]
        ports: Vec<String>,
        /// Where the scenario goes (`-`: standard output).
        #[arg(short = 'o', long = "output", default_value = "-")]
        output: PathBuf,
    },
    /// The text `mlnx_qos -i IF` prints: trust, dscp2prio, PFC, ETS, cable length.
    #[command(name = "mlnx-qos")]
    MlnxQos {
        /// The saved output of `mlnx_qos -i IF`.
        file: PathBuf,
        /// The port's speed (mlnx_qos does not print it).
        #[arg(long, default_value = "100G")]
        speed: String,
        /// Where the scenario goes (`-`: standard output).
        #[arg(short = 'o', long = "output", default_value = "-")]
        output: PathBuf,
    },
}

/// Runs `lossless import`: exit 0 with the scenario written, 2 when the input cannot be read
/// or mapped (the message names the file, line and JSON path or section).
pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let (file, output) = match &args.what {
        ImportKind::Sonic { file, output, .. } | ImportKind::MlnxQos { file, output, .. } => (file, output),
    };
    let mut claims = Claims::new();
    claims.input("the configuration", file);
    claims.output("--output", output)?;
    let text = lossless_files::read_input_text(file, "configuration", MAX_IMPORT_BYTES)?;
    let name = file.display().to_string();
    let result = match &args.what {
        ImportKind::Sonic { ports, .. } => import::sonic::import(&text, &name, ports),
        ImportKind::MlnxQos { speed, .. } => import::mlnx_qos::import(&text, &name, speed),
    };
    let Imported { toml, unmapped } = match result {
        Ok(i) => i,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut out = Output::create(output)?;
    out.write_all_named(toml.as_bytes())?;
    out.commit()?;
    if !unmapped.is_empty() {
        errln!("not mapped ({}; also in the scenario's header):", unmapped.len());
        for u in &unmapped {
            errln!("  - {u}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
