//! The agent's TOML configuration file: `[lldp]` timers and table, `[dcbx]` features.

use std::path::{Path, PathBuf};

use lossless_proto::dcbx::DcbxConfig;
use lossless_proto::lldp_agent::{AgentConfig, Timers, TooManyNeighbours};
use lossless_proto::units::Duration;
use serde::{Deserialize, Serialize};

/// The `[lldp]` table of a configuration file (802.1AB timers and the neighbour table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LldpFileConfig {
    /// msgTxInterval, seconds.
    pub tx_interval_s: u64,
    /// msgTxHold.
    pub tx_hold: u32,
    /// msgFastTx, milliseconds.
    pub fast_tx_ms: u64,
    /// txFastInit.
    pub tx_fast_init: u32,
    /// txCreditMax.
    pub tx_credit_max: u32,
    /// reinitDelay, seconds.
    pub reinit_delay_s: u64,
    /// Largest neighbour table.
    pub max_neighbours: usize,
    /// `discard-new` (802.1AB) or `replace-earliest-expiry`.
    pub too_many_neighbours: String,
    /// System Name TLV.
    pub system_name: Option<String>,
}

impl Default for LldpFileConfig {
    fn default() -> Self {
        LldpFileConfig {
            tx_interval_s: 30,
            tx_hold: 4,
            fast_tx_ms: 1000,
            tx_fast_init: 4,
            tx_credit_max: 5,
            reinit_delay_s: 2,
            max_neighbours: 4,
            too_many_neighbours: "discard-new".into(),
            system_name: None,
        }
    }
}

/// A whole agent configuration file: `[lldp]` and `[dcbx]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileConfig {
    /// LLDP timers and table.
    pub lldp: LldpFileConfig,
    /// DCBX features.
    pub dcbx: DcbxConfig,
}

/// A configuration file problem, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// Unreadable.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Not valid TOML for this schema.
    #[error("{path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (line and column).
        source: toml::de::Error,
    },
    /// A value out of range.
    #[error("{path}: {detail}")]
    Value {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

impl FileConfig {
    /// Reads and checks a TOML configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        let cfg: FileConfig = toml::from_str(&text).map_err(|source| ConfigFileError::Parse {
            path: path.to_owned(),
            source,
        })?;
        let value = |detail: String| ConfigFileError::Value {
            path: path.to_owned(),
            detail,
        };
        cfg.dcbx.validate().map_err(|e| value(e.to_string()))?;
        cfg.agent_config([0; 6], "x").map_err(value)?;
        Ok(cfg)
    }

    /// The LLDP agent configuration for a port with `mac` named `iface`.
    pub fn agent_config(&self, mac: [u8; 6], iface: &str) -> Result<AgentConfig, String> {
        let l = &self.lldp;
        let too_many = match l.too_many_neighbours.as_str() {
            "discard-new" => TooManyNeighbours::DiscardNew,
            "replace-earliest-expiry" => TooManyNeighbours::ReplaceEarliestExpiry,
            other => {
                return Err(format!(
                    "lldp.too_many_neighbours = {other:?}: allowed \"discard-new\", \"replace-earliest-expiry\""
                ));
            }
        };
        let timers = Timers {
            msg_tx_interval: Duration::from_secs(l.tx_interval_s),
            msg_tx_hold: l.tx_hold,
            msg_fast_tx: Duration::from_ms(l.fast_tx_ms),
            tx_fast_init: l.tx_fast_init,
            tx_credit_max: l.tx_credit_max,
            reinit_delay: Duration::from_secs(l.reinit_delay_s),
        };
        timers.validate().map_err(|e| format!("lldp: {e}"))?;
        if l.max_neighbours == 0 {
            return Err("lldp.max_neighbours must be at least 1".into());
        }
        Ok(AgentConfig {
            mac,
            port_name: Some(iface.to_owned()),
            system_name: l.system_name.clone(),
            timers,
            max_neighbours: l.max_neighbours,
            too_many,
        })
    }
}
