//! `lossless watch`: MAC Control frames received on an interface and sent through it (a tap
//! socket with a kernel BPF filter on EtherType 0x8808; optionally tagged data frames too)
//! fed to a [`LinkWatch`] (per direction a [`Monitor`](crate::monitor::Monitor), SONiC's pfcwd, deadlock suspicion),
//! timed by the kernel's stamps on the wall clock from the moment the watcher opened.

use std::time::Duration as StdDuration;

use lossless_proto::units::{Duration, Instant, Rate};

use crate::link::{Direction, LinkConfig, LinkWatch};
use crate::raw::{LiveError, RawSocket, watch_filter};
use crate::watchdog::pfcwd;

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
    link: LinkWatch,
    epoch: std::time::SystemTime,
    buf: Vec<u8>,
    speed: Rate,
}

impl Watcher {
    /// Opens `iface` for MAC Control frames in both directions (and, with `count_data`, the
    /// priority of tagged data frames); `speed` overrides the speed sysfs reports (and is
    /// required when it reports none).
    pub fn open(
        iface: &str,
        speed: Option<Rate>,
        pfcwd: pfcwd::Config,
        deadlock_time: Duration,
        count_data: bool,
    ) -> Result<Self, WatchError> {
        let sock = RawSocket::open_tap(iface)?;
        let speed = match speed.or_else(|| link_speed(iface)) {
            Some(s) => s,
            None => {
                return Err(WatchError::NoSpeed {
                    iface: iface.to_owned(),
                });
            }
        };
        sock.attach_filter(&watch_filter(count_data))?;
        sock.enable_timestamps()?;
        if count_data {
            sock.enable_auxdata()?;
        }
        sock.set_recv_buffer(RECV_BUFFER)?;
        // MAC Control frames go to 01:80:c2:00:00:01; a NIC may filter it without membership.
        sock.join_multicast([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01])?;
        Ok(Watcher {
            sock,
            link: LinkWatch::new(LinkConfig {
                pfcwd,
                deadlock_time,
                speed,
            }),
            epoch: std::time::SystemTime::now(),
            buf: vec![0u8; 2048],
            speed,
        })
    }

    /// The link speed in use.
    pub fn speed(&self) -> Rate {
        self.speed
    }

    /// The wall-clock instant the watcher's time counts from.
    pub fn epoch(&self) -> std::time::SystemTime {
        self.epoch
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
                .recv_tapped(&mut self.buf, wait)
                .map_err(|e| self.sock.in_use_error("receiving frames", e))?;
            if let Some(f) = got {
                // The kernel's arrival time, not when this process got around to reading it.
                let t = match f.stamp {
                    Some(s) => self.since_epoch(s),
                    None => self.now(),
                };
                let d = if f.outgoing { Direction::Tx } else { Direction::Rx };
                let frame = &self.buf[..f.len];
                match classify(frame, f.vlan_tci) {
                    Some(Frame::Control) => self.link.on_control(t, d, frame),
                    Some(Frame::Data(p)) => self.link.on_data(t, d, p),
                    None => {}
                }
                n += 1;
            }
        }
        // Time passes up to a little before now: a frame that arrived just before the tick but
        // is read after it keeps its own arrival time instead of being moved to the tick's.
        let t = Instant::from_ps(self.now().as_ps().saturating_sub(TICK_LAG.as_ps()));
        self.link.tick(t);
        Ok(n)
    }

    /// The watch: monitors, pfcwd, deadlock suspicion.
    pub fn link(&self) -> &LinkWatch {
        &self.link
    }
    /// The watch, mutably (to drain events).
    pub fn link_mut(&mut self) -> &mut LinkWatch {
        &mut self.link
    }
    /// Frames the kernel dropped because the watcher fell behind, since the last call.
    pub fn take_drops(&self) -> Result<u32, LiveError> {
        self.sock
            .take_drops()
            .map_err(|e| self.sock.in_use_error("reading the drop counter", e))
    }
}

/// What a tapped frame is to the watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A MAC Control frame (EtherType 0x8808 after the tag the device took off, if any).
    Control,
    /// A data frame of this 802.1Q priority.
    Data(u8),
}

/// Sorts a frame the tap's filter let through: `vlan_tci` is the tag the device took off.
/// A MAC Control frame with its tag still in it is neither (a strict receiver drops it, and
/// the watcher counts untagged MAC Control only).
pub fn classify(frame: &[u8], vlan_tci: Option<u16>) -> Option<Frame> {
    let word = |i: usize| frame.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    match word(12)? {
        0x8808 => Some(Frame::Control),
        0x8100 | 0x88a8 if word(16)? != 0x8808 => Some(Frame::Data((word(14)? >> 13) as u8)),
        0x8100 | 0x88a8 => None,
        _ => vlan_tci.map(|tci| Frame::Data((tci >> 13) as u8)),
    }
}
