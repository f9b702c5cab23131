//! The live DCBX daemon: the sans-IO [`Agent`] on a [`RawSocket`] with EtherType 0x88CC, a
//! TOML configuration file, a JSON state file `lossless dcbx show` reads, and the shutdown
//! LLDPDU on SIGTERM.

pub mod apply;
mod config;
mod log;
mod state;

use std::time::{Duration as StdDuration, Instant as StdInstant};

use lossless_proto::dcbx::{Agent, Event};
use lossless_proto::units::{Duration, Instant};

use crate::raw::{LiveError, RawSocket};

pub use config::{CONFIG_LIMIT, ConfigFileError, FileConfig, LldpFileConfig, LldpValueError};
pub use log::{LogLimiter, describe};
pub use lossless_files::InputError;
pub use state::{LockError, STATE_LIMIT, Snapshot, StateLock, default_state_path, read_state, write_state};

/// LLDP EtherType.
pub const ETHERTYPE_LLDP: u16 = 0x88cc;
/// The nearest-bridge LLDP address our agent sends to and listens on.
pub const LLDP_MULTICAST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];

/// How often the daemon checks the interface's link state.
const LINK_CHECK: StdDuration = StdDuration::from_millis(500);

/// How long the daemon waits at most between checks of the stop flag.
const MAX_WAIT: StdDuration = StdDuration::from_millis(100);

/// Shortest time between two writes of the state file (a flood of LLDPDUs changes the state
/// with every frame).
const STATE_MIN_INTERVAL: StdDuration = StdDuration::from_millis(100);

/// Lines of one kind logged at most per [`LOG_WINDOW`]; the rest are counted.
pub const LOG_BURST: u32 = 10;
/// The window of [`LOG_BURST`].
pub const LOG_WINDOW: StdDuration = StdDuration::from_secs(10);

/// Runs `agent` on `sock` until `stop()` says so, then sends the shutdown LLDPDU and removes
/// the state file. Events go to `log`, at most [`LOG_BURST`] lines of a kind per
/// [`LOG_WINDOW`] with a count of those suppressed; the state is written to the file `state`
/// locks (if given) on a change (at most every 100 ms) and every second.
pub fn run(
    sock: &RawSocket,
    agent: &mut Agent,
    state: Option<&StateLock>,
    stop: &dyn Fn() -> bool,
    log: &mut dyn FnMut(&str),
) -> Result<(), LiveError> {
    run_with(sock, agent, state, stop, log, &mut |_, _| {})
}

/// What [`run_with`] calls with each event of the agent and the log.
pub type EventHook<'a> = dyn FnMut(&Event, &mut dyn FnMut(&str)) + 'a;

/// [`run`], also handing every event of the agent to `on_event` (with `log`) as it happens:
/// `dcbx run --apply` programs the NIC there on [`Event::OperationalChanged`].
pub fn run_with(
    sock: &RawSocket,
    agent: &mut Agent,
    state: Option<&StateLock>,
    stop: &dyn Fn() -> bool,
    log: &mut dyn FnMut(&str),
    on_event: &mut EventHook<'_>,
) -> Result<(), LiveError> {
    let state = state.map(StateLock::state);
    let mut limiter = LogLimiter::new(LOG_BURST, LOG_WINDOW);
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
            limiter.finish(StdInstant::now(), log);
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
        let wall = StdInstant::now();
        while let Some(e) = agent.poll_event() {
            dirty = true;
            limiter.line(wall, log::kind(&e), &describe(&e), log);
            on_event(&e, log);
        }
        limiter.flush(wall, log);
        let since = last_state.elapsed();
        if (dirty && since >= STATE_MIN_INTERVAL) || since >= StdDuration::from_secs(1) {
            if let Err(e) = write(agent) {
                log(&e);
            }
            dirty = false;
            last_state = StdInstant::now();
        }
        let mut wait = agent.poll_timeout().map_or(MAX_WAIT, |d| {
            d.saturating_duration_since(t).to_std().min(MAX_WAIT)
        });
        if dirty {
            wait = wait.min(STATE_MIN_INTERVAL.saturating_sub(last_state.elapsed()));
        }
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
