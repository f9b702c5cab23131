//! The state file `lossless dcbx show` reads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use lossless_proto::dcbx::{Agent, DcbxConfig};
use lossless_proto::lldp_agent::mac_text;
use serde::Serialize;

/// What `lossless dcbx show` reads: the agent's state, rewritten on every change.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot<'a> {
    /// The daemon's process ID.
    pub pid: u32,
    /// The interface.
    pub iface: &'a str,
    /// Its MAC address.
    pub mac: String,
    /// When this was written, seconds since the Unix epoch.
    pub updated_unix_s: u64,
    /// The DCBX version in use.
    pub mode: lossless_proto::dcbx::Mode,
    /// The local configuration.
    pub local: &'a DcbxConfig,
    /// The peer's DCBX information.
    pub remote: Option<&'a lossless_proto::dcbx::Remote>,
    /// The operational configuration.
    pub operational: &'a lossless_proto::dcbx::Operational,
    /// 802.1AB statistics.
    pub statistics: lossless_proto::lldp_agent::Statistics,
    /// The neighbour table.
    pub neighbours: Vec<lossless_proto::lldp_agent::NeighbourSummary>,
}

impl<'a> Snapshot<'a> {
    /// The snapshot of `agent` on `iface`.
    pub fn of(agent: &'a Agent, iface: &'a str) -> Self {
        Snapshot {
            pid: std::process::id(),
            iface,
            mac: mac_text(&agent.lldp().config().mac),
            updated_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            mode: agent.mode(),
            local: agent.local(),
            remote: agent.remote(),
            operational: agent.operational(),
            statistics: agent.statistics(),
            neighbours: agent.neighbours().iter().map(|n| n.summary()).collect(),
        }
    }
}

/// Writes `value` as JSON to `path` atomically (a temporary file renamed over it).
pub fn write_state(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    serde_json::to_writer_pretty(&mut f, value).map_err(std::io::Error::other)?;
    f.write_all(b"\n")?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// The default state file of the agent on `iface`.
pub fn default_state_path(iface: &str) -> PathBuf {
    PathBuf::from(format!("/run/lossless/dcbx-{iface}.json"))
}
