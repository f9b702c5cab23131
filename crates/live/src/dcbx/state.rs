//! The state file `lossless dcbx show` reads, and the lock that keeps it to one agent.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use lossless_files::InputError;
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

/// The default state file of the agent on `iface`, or why `iface` is not an interface name
/// (Linux's rule, `dev_valid_name`: 1 to 15 bytes, not `.` or `..`, no `/`, `:` or white
/// space), so that the name stays one part of the file's name.
pub fn default_state_path(iface: &str) -> Result<PathBuf, String> {
    let valid = (1..=15).contains(&iface.len())
        && iface != "."
        && iface != ".."
        && !iface
            .chars()
            .any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control());
    if !valid {
        return Err(format!(
            "interface {iface:?}: not an interface name (allowed 1 to 15 bytes, not \".\" or \"..\", \
             without `/`, `:` or white space)"
        ));
    }
    Ok(PathBuf::from(format!("/run/lossless/dcbx-{iface}.json")))
}

/// Largest state file `lossless dcbx show` reads, bytes (a real one is a few KiB; with full
/// application tables on both sides well under 100 KiB).
pub const STATE_LIMIT: u64 = 4 << 20;

/// Reads a state file: a regular file of at most [`STATE_LIMIT`] bytes of UTF-8.
pub fn read_state(path: &Path) -> Result<String, InputError> {
    lossless_files::read_input_text(path, "state file", STATE_LIMIT)
}

/// The lock a running agent holds on its state file, so that a second agent with the same
/// state file refuses to start instead of overwriting it and deleting it on exit: `STATE.lock`
/// beside it, locked with `flock(2)` (released by the kernel when the agent exits however it
/// exits) and holding the agent's PID and interface. The lock file itself stays.
#[derive(Debug)]
pub struct StateLock {
    _file: File,
    path: PathBuf,
    state: PathBuf,
}

/// Why [`StateLock::acquire`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another agent holds the lock.
    #[error(
        "state file {} is in use by another `lossless dcbx run` ({holder}; lock {}): stop it, or give this agent another --state",
        state.display(),
        lock.display()
    )]
    Held {
        /// The state file.
        state: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// Who holds it, as the lock file says: "pid 1234 on eth0".
        holder: String,
    },
    /// The lock file could not be created or locked.
    #[error("lock file {}: {error}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The operating system's reason.
        error: std::io::Error,
    },
}

impl StateLock {
    /// Locks the state file `state` for the agent on `iface` (creating its directory).
    pub fn acquire(state: &Path, iface: &str) -> Result<StateLock, LockError> {
        let mut name = state.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let io = |error| LockError::Io {
            path: path.clone(),
            error,
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // SAFETY: flock on a descriptor this function owns.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(io(e));
            }
            let holder = lossless_files::read_input_text(&path, "lock file", 256)
                .ok()
                .and_then(|t| {
                    let mut w = t.split_whitespace();
                    Some(format!("pid {} on {}", w.next()?, w.next()?))
                })
                .unwrap_or_else(|| "pid not yet written".into());
            return Err(LockError::Held {
                state: state.to_owned(),
                lock: path,
                holder,
            });
        }
        file.set_len(0).map_err(io)?;
        writeln!(file, "{} {iface}", std::process::id()).map_err(io)?;
        Ok(StateLock {
            _file: file,
            path,
            state: state.to_owned(),
        })
    }

    /// The state file it locks.
    pub fn state(&self) -> &Path {
        &self.state
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::default_state_path;
    use std::path::Path;

    #[test]
    fn the_default_state_path_never_takes_a_path_from_the_interface_name() {
        assert_eq!(
            default_state_path("eth0.100").unwrap(),
            Path::new("/run/lossless/dcbx-eth0.100.json")
        );
        for bad in [
            "../../etc/passwd",
            "a/b",
            "..",
            ".",
            "",
            "eth 0",
            "eth0:1",
            "sixteen-bytes-xx",
        ] {
            let e = default_state_path(bad).unwrap_err();
            assert!(e.contains("not an interface name"), "{bad:?}: {e}");
        }
    }
}
