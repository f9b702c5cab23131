//! The agent's TOML configuration file: `[lldp]` timers and table, `[dcbx]` features.

use std::path::{Path, PathBuf};

use lossless_files::InputError;
use lossless_proto::dcbx::{DcbxConfig, EtsConfig, ModeSetting, PfcConfig, TsaName};
use lossless_proto::lldp_agent::{AgentConfig, ConfigError, Timers, TooManyNeighbours};
use lossless_proto::units::Duration;
use serde::{Deserialize, Serialize};

/// Largest configuration file read, bytes (the largest valid one, with 166 application
/// entries spelled out, is about 12 KiB).
pub const CONFIG_LIMIT: u64 = 1 << 20;

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

/// A configuration file problem, naming the file. Each says its whole text once: none has
/// a `source()` whose text a caller printing the error chain would repeat.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// Unreadable, not a regular file, or larger than [`CONFIG_LIMIT`].
    #[error("{0}")]
    Read(InputError),
    /// Not valid TOML for this schema.
    #[error("{path}: {error}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (line, column, the line, what was expected).
        error: toml::de::Error,
    },
    /// A value out of range.
    #[error("{}{detail}", at(path, *line))]
    Value {
        /// The file.
        path: PathBuf,
        /// The 1-based line of the key at fault (0: not known).
        line: usize,
        /// What is wrong: the key, what was found and what is allowed.
        detail: String,
    },
}

/// `path:line: ` (or `path: ` without a line).
fn at(path: &Path, line: usize) -> String {
    if line > 0 {
        format!("{}:{line}: ", path.display())
    } else {
        format!("{}: ", path.display())
    }
}

/// The 1-based line where `key` is set in `[table]` of a TOML `text` (0 when not found, e.g.
/// a value left at its default).
fn line_of_key(text: &str, table: &str, key: &str) -> usize {
    let mut current = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap_or("").trim();
        if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = h.trim().to_string();
            continue;
        }
        if current == table
            && let Some((k, _)) = l.split_once('=')
            && k.trim() == key
        {
            return i + 1;
        }
    }
    0
}

/// The line of the `[dcbx]` field `field` (`pfc.enable`, `ets`, `app`): the key in its table,
/// else its own table's header, else its key in `[dcbx]` (0 when none is written).
fn line_of_dcbx_field(text: &str, field: &str) -> usize {
    let (table, key) = match field.rsplit_once('.') {
        Some((t, k)) => (format!("dcbx.{t}"), k),
        None => ("dcbx".to_string(), field),
    };
    let header = |h: &str| {
        text.lines()
            .position(|l| {
                let l = l.split('#').next().unwrap_or("").trim();
                l == format!("[{h}]") || l == format!("[[{h}]]")
            })
            .map_or(0, |i| i + 1)
    };
    [
        line_of_key(text, &table, key),
        header(&format!("dcbx.{field}")),
        field
            .split('.')
            .next()
            .map_or(0, |first| line_of_key(text, "dcbx", first)),
    ]
    .into_iter()
    .find(|&l| l > 0)
    .unwrap_or(0)
}

/// A value of the `[lldp]` table the agent cannot run with: the key, what was found and
/// what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LldpValueError {
    /// The key of `[lldp]` at fault.
    pub key: &'static str,
    /// The key, the value found and what is allowed.
    pub message: String,
}

impl std::fmt::Display for LldpValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl FileConfig {
    /// Reads (a regular file of at most [`CONFIG_LIMIT`] bytes) and checks a TOML
    /// configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigFileError> {
        let text = lossless_files::read_input_text(path, "dcbx config", CONFIG_LIMIT)
            .map_err(ConfigFileError::Read)?;
        let cfg: FileConfig = toml::from_str(&text).map_err(|error| ConfigFileError::Parse {
            path: path.to_owned(),
            error,
        })?;
        let value = |line: usize, detail: String| ConfigFileError::Value {
            path: path.to_owned(),
            line,
            detail,
        };
        cfg.dcbx
            .validate()
            .map_err(|e| value(line_of_dcbx_field(&text, e.field()), e.to_string()))?;
        cfg.lldp_agent_config([0; 6], "x")
            .map_err(|e| value(line_of_key(&text, "lldp", e.key), e.message))?;
        Ok(cfg)
    }

    /// What `lossless dcbx run` without `--config` runs (as lldpad starts with defaults): a
    /// willing host with nothing configured, the same as `examples/dcbx/host-willing.toml`
    /// without its system name. ETS and PFC willing, every priority in TC 0 with 100% (ETS),
    /// the other TCs strict, no PFC priority, no application entry, IEEE with CEE fallback,
    /// the 802.1AB default timers.
    pub fn willing_host() -> Self {
        let mut tsa = [TsaName::Strict; 8];
        tsa[0] = TsaName::Ets;
        let mut ets = EtsConfig {
            willing: true,
            ..EtsConfig::default()
        };
        ets.params.tsa = tsa;
        FileConfig {
            lldp: LldpFileConfig::default(),
            dcbx: DcbxConfig {
                mode: ModeSetting::Auto,
                ets,
                pfc: PfcConfig {
                    willing: true,
                    ..PfcConfig::default()
                },
                app: Vec::new(),
            },
        }
    }

    /// The LLDP agent configuration for a port with `mac` named `iface`.
    pub fn agent_config(&self, mac: [u8; 6], iface: &str) -> Result<AgentConfig, String> {
        self.lldp_agent_config(mac, iface).map_err(|e| e.message)
    }

    /// [`Self::agent_config`], the error naming the `[lldp]` key at fault.
    pub fn lldp_agent_config(&self, mac: [u8; 6], iface: &str) -> Result<AgentConfig, LldpValueError> {
        let l = &self.lldp;
        let too_many = match l.too_many_neighbours.as_str() {
            "discard-new" => TooManyNeighbours::DiscardNew,
            "replace-earliest-expiry" => TooManyNeighbours::ReplaceEarliestExpiry,
            other => {
                return Err(LldpValueError {
                    key: "too_many_neighbours",
                    message: format!(
                        "lldp.too_many_neighbours: found {other:?}, allowed \"discard-new\", \"replace-earliest-expiry\""
                    ),
                });
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
        if let Err(ConfigError::Timer { field, .. }) = timers.validate() {
            // the file's own key and unit for each 802.1AB timer
            let (key, found, allowed) = match field {
                "msgTxInterval" => (
                    "tx_interval_s",
                    l.tx_interval_s.to_string(),
                    "at least 1 (seconds)",
                ),
                "msgTxHold" => ("tx_hold", l.tx_hold.to_string(), "at least 1"),
                "msgFastTx" => (
                    "fast_tx_ms",
                    l.fast_tx_ms.to_string(),
                    "at least 1 (milliseconds)",
                ),
                "txFastInit" => ("tx_fast_init", l.tx_fast_init.to_string(), "at least 1"),
                _ => ("tx_credit_max", l.tx_credit_max.to_string(), "at least 1"),
            };
            return Err(LldpValueError {
                key,
                message: format!("lldp.{key} (802.1AB {field}): found {found}, allowed {allowed}"),
            });
        }
        if let Some(n) = &l.system_name
            && n.len() > 255
        {
            return Err(LldpValueError {
                key: "system_name",
                message: format!(
                    "lldp.system_name: found {} bytes, allowed at most 255 (802.1AB System Name TLV)",
                    n.len()
                ),
            });
        }
        if l.max_neighbours == 0 {
            return Err(LldpValueError {
                key: "max_neighbours",
                message: "lldp.max_neighbours: found 0, allowed at least 1".into(),
            });
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
