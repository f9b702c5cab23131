//! PAUSE/PFC frame generator (`lossless gen`): everything SONiC's `pfc_gen.py` does (interfaces,
//! enable bitmap + one pause time, link PAUSE instead of PFC, count) plus per-priority times,
//! source/destination MAC, rate control, a duration, and the storm rate that keeps a priority
//! paused. Frames are built by the codec ([`emit_frame`]) and sent in `sendmmsg` batches or
//! through a PACKET_MMAP TX ring, bypassing the qdisc layer.

use std::time::{Duration, Instant};

use lossless_proto::units::{BITS_PER_QUANTUM, Rate};
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
}

/// The frame rate that keeps a priority paused on a link of `speed`: `oversubscription` frames
/// per longest pause (65535 quanta of 512 bit times), i.e.
/// `oversubscription / (65535 · 512 / speed)` frames/s, as SONiC's storm tests compute it.
pub fn storm_rate(speed: Rate, oversubscription: f64) -> f64 {
    let pause_s = 65535.0 * BITS_PER_QUANTUM as f64 / speed.bps() as f64;
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
    let batch = pacing.batch.clamp(1, 1024);
    let batches: Vec<Vec<&[u8]>> = frames.iter().map(|f| vec![&f[..]; batch]).collect();
    let mut rings = Vec::new();
    if pacing.tx_ring {
        for s in socks {
            rings.push(TxRing::new(s, (4 * batch).max(256))?);
        }
    }
    let start = Instant::now();
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
                let wait = next.saturating_sub(elapsed).min(Duration::from_millis(50));
                std::thread::sleep(wait);
                continue;
            }
            n = n.min(due - sent);
        }
        let mut least = n as usize;
        if rings.is_empty() {
            for (s, b) in socks.iter().zip(&batches) {
                match s.send_batch(&b[..n as usize]) {
                    Ok(k) => least = least.min(k),
                    Err(e) => {
                        error = Some(s.in_use_error("sending frames", e));
                        break 'send;
                    }
                }
            }
        } else {
            for ((r, f), s) in rings.iter_mut().zip(&frames).zip(socks) {
                match r.send_copies(f, n as usize) {
                    Ok(k) => least = least.min(k),
                    Err(e) => {
                        error = Some(s.in_use_error("sending the TX ring", e));
                        break 'send;
                    }
                }
            }
        }
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
        error: error.as_ref().map(ToString::to_string),
    };
    Ok(GenRun { report, error })
}
