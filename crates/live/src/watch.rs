//! `lossless watch`: MAC Control frames received on an interface (kernel BPF filter on
//! EtherType 0x8808) fed to a [`Monitor`] with its storm [`Watchdog`], timed by the monotonic
//! clock from the moment the watcher opened.

use std::time::Duration as StdDuration;

use lossless_proto::units::{Duration, Instant, Rate};
use lossless_wire::ethernet::EtherType;
use lossless_wire::fcs::FcsMode;

use crate::monitor::Monitor;
use crate::raw::{LiveError, RawSocket};
use crate::watchdog::Watchdog;

/// Why `watch` could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// Socket or interface trouble.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// The interface reports no speed (loopback, many virtual devices) and none was given.
    #[error(
        "interface {iface} reports no link speed in /sys/class/net/{iface}/speed (many virtual \
         interfaces report none or -1): give it with --speed, e.g. --speed 100G"
    )]
    NoSpeed {
        /// The interface.
        iface: String,
    },
}

/// The link speed the kernel reports for `iface` (`/sys/class/net/IF/speed`, Mb/s), or `None`
/// when it reports none (unknown, -1, down, virtual).
pub fn link_speed(iface: &str) -> Option<Rate> {
    if iface.contains('/') || iface.contains("..") {
        return None;
    }
    let text = std::fs::read_to_string(format!("/sys/class/net/{iface}/speed")).ok()?;
    let mbps: i64 = text.trim().parse().ok()?;
    u64::try_from(mbps).ok().filter(|m| *m > 0).map(Rate::from_mbps)
}

/// How far behind the clock the monitor's time is moved at each step (see [`Watcher::step`]):
/// storm events are observed up to this much later than the polling period alone would allow.
pub const TICK_LAG: Duration = Duration::from_ms(10);

/// Receive buffer the watcher asks for: about 20 000 minimum frames of burst.
pub const RECV_BUFFER: usize = 16 << 20;

/// A live watcher on one interface.
#[derive(Debug)]
pub struct Watcher {
    sock: RawSocket,
    monitor: Monitor,
    epoch: std::time::SystemTime,
    buf: Vec<u8>,
    speed: Rate,
}

impl Watcher {
    /// Opens `iface` for MAC Control frames; `speed` overrides the speed sysfs reports (and is
    /// required when it reports none).
    pub fn open(iface: &str, speed: Option<Rate>, watchdog: Watchdog) -> Result<Self, WatchError> {
        let sock = RawSocket::open(iface, EtherType::MAC_CONTROL.0)?;
        let speed = match speed.or_else(|| link_speed(iface)) {
            Some(s) => s,
            None => {
                return Err(WatchError::NoSpeed {
                    iface: iface.to_owned(),
                });
            }
        };
        sock.attach_ethertype_filter(EtherType::MAC_CONTROL.0)?;
        sock.enable_timestamps()?;
        sock.set_recv_buffer(RECV_BUFFER)?;
        // MAC Control frames go to 01:80:c2:00:00:01; a NIC may filter it without membership.
        sock.join_multicast([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01])?;
        Ok(Watcher {
            sock,
            monitor: Monitor::new(speed, watchdog),
            epoch: std::time::SystemTime::now(),
            buf: vec![0u8; 2048],
            speed,
        })
    }

    /// The link speed in use.
    pub fn speed(&self) -> Rate {
        self.speed
    }

    /// Time since the watcher opened, as the monitor counts it (the wall clock, which the
    /// kernel's receive timestamps use; a clock stepping back counts as no time passing).
    pub fn now(&self) -> Instant {
        self.since_epoch(std::time::SystemTime::now())
    }

    fn since_epoch(&self, t: std::time::SystemTime) -> Instant {
        Instant::from_ps(0) + Duration::from_std(t.duration_since(self.epoch).unwrap_or_default())
    }

    /// Receives and feeds frames (timed by the kernel's arrival stamps) for up to `span` (or
    /// until `stop()`), then lets the monitor's time pass to [`TICK_LAG`] before now. Returns
    /// frames received.
    pub fn step(&mut self, span: StdDuration, stop: &dyn Fn() -> bool) -> Result<u64, LiveError> {
        let end = std::time::Instant::now() + span;
        let mut n = 0;
        loop {
            let now = std::time::Instant::now();
            if now >= end || stop() {
                break;
            }
            // Short waits so a stop request is seen within 50 ms.
            let wait = (end - now).min(StdDuration::from_millis(50));
            let got = self
                .sock
                .recv_timed(&mut self.buf, wait)
                .map_err(|e| self.sock.in_use_error("receiving frames", e))?;
            if let Some((r, stamp)) = got {
                // The kernel's arrival time, not when this process got around to reading it.
                let t = match stamp {
                    Some(s) => self.since_epoch(s),
                    None => self.now(),
                };
                self.monitor.on_frame(t, &self.buf[..r.len], FcsMode::Absent);
                n += 1;
            }
        }
        // Time passes up to a little before now: a frame that arrived just before the tick but
        // is read after it keeps its own arrival time instead of being moved to the tick's.
        let t = Instant::from_ps(self.now().as_ps().saturating_sub(TICK_LAG.as_ps()));
        self.monitor.tick(t);
        Ok(n)
    }

    /// The monitor.
    pub fn monitor(&self) -> &Monitor {
        &self.monitor
    }
    /// The monitor, mutably (to drain events).
    pub fn monitor_mut(&mut self) -> &mut Monitor {
        &mut self.monitor
    }
    /// Frames the kernel dropped because the watcher fell behind, since the last call.
    pub fn take_drops(&self) -> Result<u32, LiveError> {
        self.sock
            .take_drops()
            .map_err(|e| self.sock.in_use_error("reading the drop counter", e))
    }
}
