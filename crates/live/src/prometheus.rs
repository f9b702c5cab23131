//! Prometheus text exposition of a [`Snapshot`], served over HTTP by a plain thread.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::monitor::Snapshot;

/// The exposition text (format 0.0.4) of `s` for interface `iface`.
pub fn render(s: &Snapshot, iface: &str) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, rows: &mut dyn Iterator<Item = (String, f64)>| {
        let _ = writeln!(o, "# HELP lossless_{name} {help}\n# TYPE lossless_{name} {kind}");
        for (labels, v) in rows {
            let _ = writeln!(o, "lossless_{name}{{iface=\"{iface}\"{labels}}} {v}");
        }
    };
    let one = |v: u64| std::iter::once((String::new(), v as f64));
    metric(
        "mac_control_frames_total",
        "counter",
        "MAC Control frames received.",
        &mut one(s.frames),
    );
    metric(
        "mac_control_malformed_total",
        "counter",
        "Undecodable MAC Control frames.",
        &mut one(s.malformed),
    );
    let per = |f: &dyn Fn(&crate::monitor::SlotSnapshot) -> f64| {
        s.slots
            .iter()
            .map(|x| (format!(",slot=\"{}\"", x.slot), f(x)))
            .collect::<Vec<_>>()
            .into_iter()
    };
    metric(
        "pause_frames_total",
        "counter",
        "Frames addressing the priority (or link PAUSE).",
        &mut per(&|x| x.counters.frames as f64),
    );
    metric(
        "xoff_frames_total",
        "counter",
        "XOFF requests.",
        &mut per(&|x| x.counters.xoff_frames as f64),
    );
    metric(
        "xon_frames_total",
        "counter",
        "XON requests.",
        &mut per(&|x| x.counters.xon_frames as f64),
    );
    metric(
        "xoff_transitions_total",
        "counter",
        "Changes from running to paused.",
        &mut per(&|x| x.counters.xoff_transitions as f64),
    );
    metric(
        "xon_transitions_total",
        "counter",
        "Changes from paused to running.",
        &mut per(&|x| x.counters.xon_transitions as f64),
    );
    metric(
        "paused_seconds_total",
        "counter",
        "Estimated time paused at the link speed.",
        &mut per(&|x| x.paused_s),
    );
    metric(
        "paused",
        "gauge",
        "1 while paused.",
        &mut per(&|x| f64::from(u8::from(x.paused_now))),
    );
    metric(
        "storm",
        "gauge",
        "1 while in a PFC storm (watchdog).",
        &mut per(&|x| f64::from(u8::from(x.stormed))),
    );
    metric(
        "storms_detected_total",
        "counter",
        "Storms detected.",
        &mut per(&|x| x.storms_detected as f64),
    );
    metric(
        "storms_restored_total",
        "counter",
        "Storms restored.",
        &mut per(&|x| x.storms_restored as f64),
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
