//! The live DCBX daemon: the sans-IO [`Agent`] on a [`RawSocket`] with EtherType 0x88CC, a
//! TOML configuration file, a JSON state file `lossless dcbx show` reads, and the shutdown
//! LLDPDU on SIGTERM.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration as StdDuration, Instant as StdInstant, SystemTime, UNIX_EPOCH};

use lossless_proto::dcbx::{Agent, DcbxConfig, Event};
use lossless_proto::lldp_agent::{AgentConfig, Timers, TooManyNeighbours, mac_text};
use lossless_proto::units::{Duration, Instant};
use serde::{Deserialize, Serialize};

use crate::raw::{LiveError, RawSocket};

/// LLDP EtherType.
pub const ETHERTYPE_LLDP: u16 = 0x88cc;
/// The nearest-bridge LLDP address our agent sends to and listens on.
pub const LLDP_MULTICAST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];

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

/// One log line for an event.
pub fn describe(e: &Event) -> String {
    let json = |v: &dyn erased::Ser| v.to_json();
    match e {
        Event::RemoteChanged(Some(r)) => format!("remote changed: {}", json(r.as_ref())),
        Event::RemoteChanged(None) => "remote changed: no DCBX peer".into(),
        Event::OperationalChanged(o) => format!("operational changed: {}", json(o.as_ref())),
        Event::ModeChanged(m) => format!("mode changed: {m:?}"),
        Event::NeighbourAgedOut(m) => format!("neighbour aged out: {}", m.display()),
        Event::ShutdownReceived(m) => format!("shutdown LLDPDU received from {}", m.display()),
        Event::TooManyNeighbours { evicted } => format!(
            "too many neighbours: {}",
            evicted
                .as_ref()
                .map_or("new neighbour discarded".into(), |m| format!(
                    "evicted {}",
                    m.display()
                ))
        ),
        Event::Malformed(err) => format!("malformed LLDPDU dropped: {err}"),
        Event::MultiplePeers {
            neighbours,
            kept: Some(peer),
        } => format!(
            "{neighbours} neighbours on the port: DCBX keeps its peer {} and ignores the others",
            peer.display()
        ),
        Event::MultiplePeers { neighbours, kept: None } => format!(
            "{neighbours} neighbours on the port and no established peer: DCBX uses the local configuration until one is left"
        ),
        Event::PeerTlvRejected(x) => format!("{x}; operational keeps its last valid value"),
    }
}

/// Serialises a value to compact JSON for log lines.
mod erased {
    /// A value that can be logged as JSON.
    pub trait Ser {
        /// Compact JSON.
        fn to_json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn to_json(&self) -> String {
            serde_json::to_string(self).unwrap_or_else(|e| format!("<{e}>"))
        }
    }
}

/// How often the daemon checks the interface's link state.
const LINK_CHECK: StdDuration = StdDuration::from_millis(500);

/// How long the daemon waits at most between checks of the stop flag.
const MAX_WAIT: StdDuration = StdDuration::from_millis(100);

/// Runs `agent` on `sock` until `stop()` says so, then sends the shutdown LLDPDU. Every event
/// goes to `log`; the state is written to `state` (if given) on every change and every second.
pub fn run(
    sock: &RawSocket,
    agent: &mut Agent,
    state: Option<&Path>,
    stop: &dyn Fn() -> bool,
    log: &mut dyn FnMut(&str),
) -> Result<(), LiveError> {
    sock.join_multicast(LLDP_MULTICAST)?;
    let epoch = StdInstant::now();
    let now = || Instant::ZERO + Duration::from_std(epoch.elapsed());
    let mut buf = vec![0u8; 9216 + 14];
    let mut last_state = StdInstant::now() - StdDuration::from_secs(10);
    let mut dirty = true;
    let mut link_down = false;
    let mut link_up = true;
    let mut last_link_check = StdInstant::now();
    let write = |agent: &Agent| {
        if let Some(p) = state
            && let Err(e) = write_state(p, &Snapshot::of(agent, sock.iface()))
        {
            return Err(format!("writing state file {}: {e}", p.display()));
        }
        Ok(())
    };
    loop {
        let t = now();
        if stop() {
            agent.shutdown(t);
            while let Some(f) = agent.poll_transmit(t) {
                sock.send(&f)?;
            }
            log("stopping: shutdown LLDPDU (TTL 0) sent");
            if let Some(p) = state {
                let _ = std::fs::remove_file(p);
            }
            return Ok(());
        }
        if last_link_check.elapsed() >= LINK_CHECK {
            last_link_check = StdInstant::now();
            let up = sock.is_up()?;
            if up != link_up {
                link_up = up;
                if up {
                    log("link up: fast start");
                    agent.link_up(t);
                } else {
                    log("link down: peer information deleted");
                    agent.link_down(t);
                }
            }
        }
        while let Some(f) = agent.poll_transmit(t) {
            match sock.send(&f) {
                Ok(()) => link_down = false,
                // The agent keeps running: LLDPDUs go out again once the link is back.
                Err(LiveError::InterfaceDown { .. }) => {
                    if !link_down {
                        log("interface is down: LLDPDU not sent; waiting for it to come back");
                    }
                    link_down = true;
                }
                Err(e) => return Err(e),
            }
        }
        while let Some(e) = agent.poll_event() {
            dirty = true;
            log(&describe(&e));
        }
        if dirty || last_state.elapsed() >= StdDuration::from_secs(1) {
            if let Err(e) = write(agent) {
                log(&e);
            }
            dirty = false;
            last_state = StdInstant::now();
        }
        let wait = agent.poll_timeout().map_or(MAX_WAIT, |d| {
            d.saturating_duration_since(t).to_std().min(MAX_WAIT)
        });
        match sock.recv(&mut buf, wait) {
            Ok(Some(rx)) => {
                agent.handle_ethernet(now(), &buf[..rx.len]);
                dirty = true;
            }
            Ok(None) => {}
            // The socket reports the link going down once; keep listening for when it is back.
            Err(LiveError::InterfaceDown { .. }) => {
                if !link_down {
                    log("interface is down: waiting for it to come back");
                }
                link_down = true;
                std::thread::sleep(wait);
            }
            Err(e) => return Err(e),
        }
        let t = now();
        if agent.poll_timeout().is_some_and(|d| d <= t) {
            agent.handle_timeout(t);
        }
    }
}
