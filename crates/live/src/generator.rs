//! PAUSE/PFC frame generator (`lossless gen`): everything SONiC's `pfc_gen.py` does (interfaces,
//! enable bitmap + one pause time, link PAUSE instead of PFC, count) plus per-priority times,
//! source/destination MAC, rate control, a duration, and the storm rate that keeps a priority
//! paused. Frames are built by the codec ([`emit_frame`]) and sent in `sendmmsg` batches or
//! through a PACKET_MMAP TX ring, bypassing the qdisc layer.
//!
//! A stuck NIC: sent without end (`--storm`), the frames keep the peer paused as a NIC whose
//! receive pipeline stalled does; with [`Pacing::prevention`] the run stops as mlx5's
//! `pfc_prevention_tout` stops such a NIC's pause ([`StallPrevention`]: the warning at the
//! minor watermark, the error and the end of pause at the timeout, counted as mlx5 counts them).

use std::time::{Duration, Instant};

use lossless_proto::units::{self, BITS_PER_QUANTUM, Rate};
use lossless_proto::watchdog::nic::{StallCounters, StallPrevention};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, emit_frame};
use serde::Serialize;

use crate::raw::{LiveError, RawSocket};
use crate::tx_ring::TxRing;

/// Length of every generated frame (untagged minimum frame without FCS; the NIC appends it).
pub const FRAME_LEN: usize = 60;
/// Default frames per `sendmmsg` call.
pub const DEFAULT_BATCH: usize = 256;

/// What frames to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpec {
    /// The MAC Control payload (PAUSE, or PFC with its enable vector and per-priority times).
    pub control: MacControlRepr,
    /// Source MAC; `None` uses the interface's own.
    pub src: Option<[u8; 6]>,
    /// Destination MAC (01:80:c2:00:00:01 normally).
    pub dst: [u8; 6],
}

impl FrameSpec {
    /// The 60-byte frame (no FCS) the codec emits for this spec from `src`.
    pub fn frame(&self, iface_mac: [u8; 6]) -> Result<[u8; FRAME_LEN], lossless_wire::Error> {
        let mut buf = [0u8; FRAME_LEN];
        let src = EthernetAddress(self.src.unwrap_or(iface_mac));
        emit_frame(
            src,
            EthernetAddress(self.dst),
            &self.control,
            FcsMode::Absent,
            &mut buf,
        )?;
        Ok(buf)
    }
}

/// How many frames and how fast.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    /// Frames to send on each interface; `None` = until `duration` or a stop request.
    pub count: Option<u64>,
    /// Frames per second on each interface; `None` = as fast as possible.
    pub rate: Option<f64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Frames per `sendmmsg` call or ring flush (at most).
    pub batch: usize,
    /// Send through a PACKET_MMAP TX ring instead of `sendmmsg`.
    pub tx_ring: bool,
    /// Emulate mlx5's storm prevention with this critical timeout (80–8000 ms): the pause
    /// request counts as raised from the first frame on, never falling (a stalled receive
    /// pipeline); the run stops sending at the timeout.
    pub prevention: Option<units::Duration>,
}

/// A watermark the emulated storm prevention passed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PreventionEvent {
    /// `tx_pause_storm_warning` (the minor watermark) or `tx_pause_storm_error` (the
    /// timeout: pause stops).
    pub event: &'static str,
    /// When it fell due, seconds after the first frame (exact).
    pub at_s: f64,
    /// When the generator noticed, seconds after the first frame.
    pub observed_s: f64,
}

/// What the emulated storm prevention did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreventionReport {
    /// The critical timeout (`pfc_prevention_tout`), ms.
    pub timeout_ms: f64,
    /// The minor watermark: max(80 ms, 85 % of the timeout), ms.
    pub warning_ms: f64,
    /// mlx5's counters (`ethtool -S`).
    #[serde(flatten)]
    pub counters: StallCounters,
    /// The watermarks passed, in order.
    pub events: Vec<PreventionEvent>,
    /// Whether the timeout stopped the pause (the run ended there).
    pub stopped: bool,
}

/// The frame rate that keeps a priority paused on a link of `speed` by frames that pause it
/// for `quanta` (the shortest pause time the frames carry; 65535, the longest, in SONiC's storm
/// tests): `oversubscription` frames per pause time, i.e.
/// `oversubscription / (quanta · 512 / speed)` frames/s. Zero quanta (an XON) pause nothing:
/// the rate is then infinite, which no range admits.
pub fn storm_rate(speed: Rate, quanta: u16, oversubscription: f64) -> f64 {
    let pause_s = f64::from(quanta) * BITS_PER_QUANTUM as f64 / speed.bps() as f64;
    oversubscription / pause_s
}

/// Frames sent on one interface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IfaceReport {
    /// The interface.
    pub iface: String,
    /// Frames handed to the kernel.
    pub sent: u64,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenReport {
    /// Per interface.
    pub interfaces: Vec<IfaceReport>,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
    /// Frames per second per interface achieved.
    pub rate_fps: f64,
    /// Whether a stop request (Ctrl-C) ended the run early.
    pub interrupted: bool,
    /// The emulated NIC storm prevention, with [`Pacing::prevention`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prevention: Option<PreventionReport>,
    /// Why sending stopped before the count or duration (the interface went down or was
    /// deleted), if it did; the counts above are what was handed to the kernel before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What [`run`] came to: the report, and the error that ended it early, if one did.
#[derive(Debug)]
pub struct GenRun {
    /// Frames sent, always (also when `error` is set).
    pub report: GenReport,
    /// The failure that stopped sending (its text is also in `report.error`).
    pub error: Option<LiveError>,
}

/// Sends `spec`'s frames on every socket of `socks` (each gets `pacing.count` frames) until the
/// count or duration is reached or `stop()` returns true. Rate control sends each frame no
/// earlier than its slot `n / rate` after the start (batches never run ahead of the schedule).
/// An error before the first frame (building the frame, setting up the TX ring) is returned
/// as such; one while sending ends the run with the counts so far and the error in
/// [`GenRun::error`].
pub fn run(
    socks: &[RawSocket],
    spec: &FrameSpec,
    pacing: &Pacing,
    stop: &dyn Fn() -> bool,
) -> Result<GenRun, LiveError> {
    let frames: Vec<[u8; FRAME_LEN]> = socks
        .iter()
        .map(|s| spec.frame(s.mac()))
        .collect::<Result<_, _>>()
        .map_err(|e| LiveError::Io {
            op: "building the frame",
            iface: socks.first().map(|s| s.iface().to_owned()).unwrap_or_default(),
            source: std::io::Error::other(e.to_string()),
        })?;
    let mut prevention = match pacing.prevention {
        Some(t) => Some(StallPrevention::new(t).map_err(|e| LiveError::Io {
            op: "setting up storm prevention",
            iface: socks.first().map(|s| s.iface().to_owned()).unwrap_or_default(),
            source: std::io::Error::other(e.to_string()),
        })?),
        None => None,
    };
    let mut prevention_events = Vec::new();
    let mut stopped = false;
    let batch = pacing.batch.clamp(1, 1024);
    let batches: Vec<Vec<&[u8]>> = frames.iter().map(|f| vec![&f[..]; batch]).collect();
    let mut rings = Vec::new();
    if pacing.tx_ring {
        for s in socks {
            rings.push(TxRing::new(s, (4 * batch).max(256))?);
        }
    }
    let start = Instant::now();
    // the stall begins with the first frame and never ends by itself
    if let Some(p) = &mut prevention {
        p.on_request(units::Instant::ZERO, true);
    }
    let mut sent = 0u64;
    let mut interrupted = false;
    let mut error = None;
    'send: loop {
        if stop() {
            interrupted = true;
            break;
        }
        let now = Instant::now();
        let elapsed = now - start;
        let mut next_watermark = None;
        if let Some(p) = &mut prevention {
            stopped = poll_prevention(p, elapsed, &mut prevention_events);
            if stopped {
                break;
            }
            next_watermark = p
                .poll_timeout()
                .map(|t| Duration::from_nanos(t.since_epoch().as_ns() as u64));
        }
        if pacing.duration.is_some_and(|d| elapsed >= d) {
            break;
        }
        let mut n = batch as u64;
        if let Some(c) = pacing.count {
            if sent >= c {
                break;
            }
            n = n.min(c - sent);
        }
        if let Some(rate) = pacing.rate {
            let due = (elapsed.as_secs_f64() * rate).floor() as u64 + 1;
            if due <= sent {
                // Sleep until the next frame's slot (bounded, so stop requests are seen).
                let next = Duration::try_from_secs_f64(sent as f64 / rate).unwrap_or(Duration::MAX);
                let wait = next
                    .min(next_watermark.unwrap_or(Duration::MAX))
                    .saturating_sub(elapsed)
                    .min(Duration::from_millis(50));
                std::thread::sleep(wait);
                continue;
            }
            n = n.min(due - sent);
        }
        let least = match send_batch(socks, &batches, &mut rings, &frames, n as usize) {
            Ok(k) => k,
            Err(e) => {
                error = Some(e);
                break 'send;
            }
        };
        sent += least as u64;
        if least < n as usize {
            interrupted = true;
            break;
        }
    }
    if error.is_none() {
        for (r, s) in rings.iter().zip(socks) {
            if let Err(e) = r.drain() {
                error = Some(s.in_use_error("sending the TX ring", e));
                break;
            }
        }
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    let report = GenReport {
        interfaces: socks
            .iter()
            .map(|s| IfaceReport {
                iface: s.iface().to_owned(),
                sent,
            })
            .collect(),
        elapsed_s,
        rate_fps: if elapsed_s > 0.0 {
            sent as f64 / elapsed_s
        } else {
            0.0
        },
        interrupted,
        prevention: prevention.map(|p| PreventionReport {
            timeout_ms: p.critical().as_secs_f64() * 1e3,
            warning_ms: p.minor().as_secs_f64() * 1e3,
            counters: p.counters(),
            events: prevention_events,
            stopped,
        }),
        error: error.as_ref().map(ToString::to_string),
    };
    Ok(GenRun { report, error })
}

/// Runs the storm prevention's deadlines up to `elapsed` after the start, recording the
/// events it raised; true when it reached its error watermark (the generator stops, as the
/// NIC would).
fn poll_prevention(p: &mut StallPrevention, elapsed: Duration, events: &mut Vec<PreventionEvent>) -> bool {
    let v = units::Instant::ZERO + units::Duration::from_std(elapsed);
    let mut stopped = false;
    while let Some(due) = p.poll_timeout().filter(|t| *t <= v) {
        let before = p.counters();
        p.handle_timeout(due);
        let after = p.counters();
        let at_s = due.since_epoch().as_secs_f64();
        let observed_s = elapsed.as_secs_f64();
        if after.tx_pause_storm_warning_events > before.tx_pause_storm_warning_events {
            events.push(PreventionEvent {
                event: "tx_pause_storm_warning",
                at_s,
                observed_s,
            });
        }
        if after.tx_pause_storm_error_events > before.tx_pause_storm_error_events {
            events.push(PreventionEvent {
                event: "tx_pause_storm_error",
                at_s,
                observed_s,
            });
            stopped = true;
        }
    }
    stopped
}

/// Sends `n` copies of each socket's frame, through its TX ring when there are rings; the
/// fewest any socket took, or the first send error.
fn send_batch(
    socks: &[RawSocket],
    batches: &[Vec<&[u8]>],
    rings: &mut [TxRing<'_>],
    frames: &[[u8; FRAME_LEN]],
    n: usize,
) -> Result<usize, LiveError> {
    let mut least = n;
    if rings.is_empty() {
        for (s, b) in socks.iter().zip(batches) {
            let k = s
                .send_batch(&b[..n])
                .map_err(|e| s.in_use_error("sending frames", e))?;
            least = least.min(k);
        }
    } else {
        for ((r, f), s) in rings.iter_mut().zip(frames).zip(socks) {
            let k = r
                .send_copies(f, n)
                .map_err(|e| s.in_use_error("sending the TX ring", e))?;
            least = least.min(k);
        }
    }
    Ok(least)
}
