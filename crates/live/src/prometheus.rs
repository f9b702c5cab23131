//! Prometheus text exposition of a [`LinkSnapshot`], served over HTTP by a plain thread.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::kernel::{CountersReport, SlotReport};
use crate::link::{LinkSnapshot, PfcwdStats, SlotJudgement, SlotVerdict};
use crate::monitor::{SlotSnapshot, Snapshot};
use crate::watchdog::pfcwd::Status;

/// The exposition text (format 0.0.4) of `s` for interface `iface`: per direction (`rx`:
/// frames received, the peer pausing this interface; `tx`: frames sent) and slot the monitor's
/// counters; SONiC's pfcwd counters under their SONiC names (`pfc_wd_status`,
/// `pfc_wd_queue_stats_deadlock_detected`, `_restored`); the deadlock suspicion.
// One declaration per metric in exposition order: a table, long because there are 18 metrics.
pub fn render(s: &LinkSnapshot, iface: &str) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, rows: Vec<(String, f64)>| {
        let _ = writeln!(o, "# HELP lossless_{name} {help}\n# TYPE lossless_{name} {kind}");
        for (labels, v) in rows {
            let _ = writeln!(o, "lossless_{name}{{iface=\"{iface}\"{labels}}} {v}");
        }
    };
    let dirs = [("rx", &s.rx), ("tx", &s.tx)];
    let link = |f: &dyn Fn(&Snapshot) -> u64| {
        dirs.iter()
            .map(|(d, x)| (format!(",direction=\"{d}\""), f(x) as f64))
            .collect::<Vec<_>>()
    };
    metric(
        "mac_control_frames_total",
        "counter",
        "MAC Control frames received (rx) or sent (tx).",
        link(&|x| x.frames),
    );
    metric(
        "mac_control_malformed_total",
        "counter",
        "Undecodable MAC Control frames.",
        link(&|x| x.malformed),
    );
    let per = |f: &dyn Fn(&SlotSnapshot) -> f64| {
        dirs.iter()
            .flat_map(|(d, x)| {
                x.slots
                    .iter()
                    .map(move |y| (format!(",direction=\"{d}\",slot=\"{}\"", y.slot), f(y)))
            })
            .collect::<Vec<_>>()
    };
    metric(
        "pause_frames_total",
        "counter",
        "Frames addressing the priority (or link PAUSE).",
        per(&|x| x.counters.frames as f64),
    );
    metric(
        "xoff_frames_total",
        "counter",
        "XOFF requests.",
        per(&|x| x.counters.xoff_frames as f64),
    );
    metric(
        "xon_frames_total",
        "counter",
        "XON requests.",
        per(&|x| x.counters.xon_frames as f64),
    );
    metric(
        "xoff_transitions_total",
        "counter",
        "Changes from running to paused.",
        per(&|x| x.counters.xoff_transitions as f64),
    );
    metric(
        "xon_transitions_total",
        "counter",
        "Changes from paused to running.",
        per(&|x| x.counters.xon_transitions as f64),
    );
    metric(
        "paused_seconds_total",
        "counter",
        "Estimated time paused at the link speed.",
        per(&|x| x.paused_s),
    );
    metric(
        "paused",
        "gauge",
        "1 while paused.",
        per(&|x| f64::from(u8::from(x.paused_now))),
    );
    metric(
        "storm",
        "gauge",
        "1 while paused without a break for the detection time or longer (exact, as analyze).",
        per(&|x| f64::from(u8::from(x.stormed))),
    );
    metric(
        "storms_detected_total",
        "counter",
        "Pauses that lasted the detection time (exact, as analyze).",
        per(&|x| x.storms_detected as f64),
    );
    metric(
        "storms_restored_total",
        "counter",
        "Of those, ended a restoration time ago (exact, as analyze).",
        per(&|x| x.storms_restored as f64),
    );
    let wd = |f: &dyn Fn(&PfcwdStats) -> f64| {
        s.verdicts
            .iter()
            .flat_map(|j| {
                [("rx", &j.rx), ("tx", &j.tx)]
                    .map(|(d, st)| (format!(",direction=\"{d}\",slot=\"{}\"", j.slot), f(st)))
            })
            .collect::<Vec<_>>()
    };
    metric(
        "pfc_wd_status",
        "gauge",
        "SONiC PFC_WD_STATUS: 1 stormed, 0 operational (pfcwd's poll rule on what this interface sees).",
        wd(&|x| f64::from(u8::from(x.pfc_wd_status == Status::Stormed))),
    );
    metric(
        "pfc_wd_queue_stats_deadlock_detected",
        "counter",
        "SONiC PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED: storms pfcwd declared (SONiC calls them deadlocks).",
        wd(&|x| x.pfc_wd_queue_stats_deadlock_detected as f64),
    );
    metric(
        "pfc_wd_queue_stats_deadlock_restored",
        "counter",
        "SONiC PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED: storms pfcwd restored.",
        wd(&|x| x.pfc_wd_queue_stats_deadlock_restored as f64),
    );
    let slot = |f: &dyn Fn(&SlotJudgement) -> f64| {
        s.verdicts
            .iter()
            .map(|j| (format!(",slot=\"{}\"", j.slot), f(j)))
            .collect::<Vec<_>>()
    };
    metric(
        "deadlock_suspected",
        "gauge",
        "1 while both directions have been paused at once for the deadlock time.",
        slot(&|j| f64::from(u8::from(j.verdict == SlotVerdict::DeadlockSuspected))),
    );
    metric(
        "deadlock_suspected_total",
        "counter",
        "Deadlock suspicions raised.",
        slot(&|j| j.deadlock_suspected_total as f64),
    );
    metric(
        "data_frames_total",
        "counter",
        "Tagged data frames of the priority (slot pause: all), with --count-data.",
        s.verdicts
            .iter()
            .flat_map(|j| {
                [("rx", j.data_frames_rx_total), ("tx", j.data_frames_tx_total)]
                    .map(|(d, n)| (format!(",direction=\"{d}\",slot=\"{}\"", j.slot), n as f64))
            })
            .collect(),
    );
    o
}

/// An HTTP server answering every request with the latest exposition text.
#[derive(Debug)]
pub struct Exporter {
    text: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Listens on `addr` (use a loopback address unless the metrics may be public).
    pub fn start(addr: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let text = Arc::new(Mutex::new(String::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (text.clone(), stop.clone());
        let thread = std::thread::spawn(move || serve(listener, t, s));
        Ok(Exporter {
            text,
            stop,
            addr,
            thread: Some(thread),
        })
    }
    /// The address actually bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// Replaces the text served.
    pub fn publish(&self, text: String) {
        if let Ok(mut t) = self.text.lock() {
            *t = text;
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: TcpListener, text: Arc<Mutex<String>>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((mut conn, _)) => {
                let _ = conn.set_nonblocking(false);
                let _ = conn.set_read_timeout(Some(Duration::from_millis(500)));
                let _ = conn.set_write_timeout(Some(Duration::from_millis(500)));
                let mut req = [0u8; 1024];
                let _ = conn.read(&mut req);
                let body = text.lock().map(|t| t.clone()).unwrap_or_default();
                let _ = write!(
                    conn,
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The exposition text of what the kernel's counters said ([`CountersReport`]) for interface
/// `iface`, appended to [`render`]'s by `lossless watch`: `lossless_kernel_counters_available`
/// (0 when only frames are seen, as on veth), and per direction and slot with a counter the
/// counts since watch started and pfcwd-on-counters' SONiC counters, each metric named
/// `lossless_kernel_…` so that frames and counters never mix.
pub fn render_kernel(r: &CountersReport, iface: &str) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, rows: Vec<(String, f64)>| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            o,
            "# HELP lossless_kernel_{name} {help}\n# TYPE lossless_kernel_{name} {kind}"
        );
        for (labels, v) in rows {
            let _ = writeln!(o, "lossless_kernel_{name}{{iface=\"{iface}\"{labels}}} {v}");
        }
    };
    metric(
        "counters_available",
        "gauge",
        "1 when the driver gives pause counters, 0 when only frames are seen (veth).",
        vec![(String::new(), if r.only_frames_seen { 0.0 } else { 1.0 })],
    );
    let per = |f: &dyn Fn(&SlotReport) -> Option<f64>| {
        r.slots
            .iter()
            .filter_map(|s| {
                f(s).map(|v| {
                    (
                        format!(",direction=\"{}\",slot=\"{}\"", s.direction.name(), s.slot),
                        v,
                    )
                })
            })
            .collect::<Vec<_>>()
    };
    metric(
        "pause_frames_total",
        "counter",
        "PAUSE/PFC frames the driver counted since watch started.",
        per(&|s| s.frames.map(|v| v as f64)),
    );
    metric(
        "xoff_frames_total",
        "counter",
        "XOFF frames the driver counted since watch started (drivers counting them apart).",
        per(&|s| s.xoff.map(|v| v as f64)),
    );
    metric(
        "paused_seconds_total",
        "counter",
        "Paused time the driver counted since watch started.",
        per(&|s| s.paused_s),
    );
    metric(
        "xoff_transitions_total",
        "counter",
        "Running to paused transitions the driver counted since watch started.",
        per(&|s| s.transitions.map(|v| v as f64)),
    );
    if !r.pfcwd.starts_with("not run") {
        metric(
            "pfc_wd_status",
            "gauge",
            "pfcwd on the kernel's counters: 1 stormed, 0 operational.",
            per(&|s| {
                Some(if s.pfc_wd_status == Status::Stormed {
                    1.0
                } else {
                    0.0
                })
            }),
        );
        metric(
            "pfc_wd_queue_stats_deadlock_detected",
            "counter",
            "pfcwd on the kernel's counters: storms detected.",
            per(&|s| Some(s.pfc_wd_queue_stats_deadlock_detected as f64)),
        );
        metric(
            "pfc_wd_queue_stats_deadlock_restored",
            "counter",
            "pfcwd on the kernel's counters: storms restored.",
            per(&|s| Some(s.pfc_wd_queue_stats_deadlock_restored as f64)),
        );
    }
    let one = |v: Option<u64>| v.map(|v| vec![(String::new(), v as f64)]).unwrap_or_default();
    metric(
        "tx_pause_storm_warning_events_total",
        "counter",
        "mlx5 stall prevention reached its warning watermark (since watch started).",
        one(r.storm_warning_events),
    );
    metric(
        "tx_pause_storm_error_events_total",
        "counter",
        "mlx5 stall prevention reached its error watermark and stopped pausing (since watch started).",
        one(r.storm_error_events),
    );
    o
}
