//! The daemon's log lines, and the rate limit that keeps a peer from flooding them.

use std::time::{Duration, Instant};

use lossless_proto::dcbx::Event;

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
        Event::MultiplePeers {
            neighbours,
            kept: None,
        } => format!(
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

/// The kind of an event's log line: what [`LogLimiter`] counts per.
pub fn kind(e: &Event) -> &'static str {
    match e {
        Event::RemoteChanged(_) => "remote changed",
        Event::OperationalChanged(_) => "operational changed",
        Event::ModeChanged(_) => "mode changed",
        Event::NeighbourAgedOut(_) => "neighbour aged out",
        Event::ShutdownReceived(_) => "shutdown LLDPDU received",
        Event::TooManyNeighbours { .. } => "too many neighbours",
        Event::Malformed(_) => "malformed LLDPDU dropped",
        Event::MultiplePeers { .. } => "neighbours on the port",
        Event::PeerTlvRejected(_) => "peer TLV refused",
    }
}

/// Bounds the log a peer can cause: at most `burst` lines of one kind per `window`; the
/// lines past that are counted, and when the window ends one line says how many of that kind
/// were suppressed. Memory is one entry per kind.
#[derive(Debug)]
pub struct LogLimiter {
    burst: u32,
    window: Duration,
    kinds: Vec<KindWindow>,
}

#[derive(Debug)]
struct KindWindow {
    kind: &'static str,
    start: Instant,
    printed: u32,
    suppressed: u64,
}

impl LogLimiter {
    /// At most `burst` lines of a kind per `window`.
    pub fn new(burst: u32, window: Duration) -> Self {
        LogLimiter {
            burst,
            window,
            kinds: Vec::new(),
        }
    }

    /// Writes `line`, of kind `kind`, to `out` unless the kind's burst is spent.
    pub fn line(&mut self, now: Instant, kind: &'static str, line: &str, out: &mut dyn FnMut(&str)) {
        self.flush(now, out);
        let i = match self.kinds.iter().position(|k| k.kind == kind) {
            Some(i) => i,
            None => {
                self.kinds.push(KindWindow {
                    kind,
                    start: now,
                    printed: 0,
                    suppressed: 0,
                });
                self.kinds.len() - 1
            }
        };
        let k = &mut self.kinds[i];
        if k.printed < self.burst {
            k.printed += 1;
            out(line);
        } else {
            k.suppressed += 1;
        }
    }

    /// Ends the windows that are over, writing the count of each one's suppressed lines.
    pub fn flush(&mut self, now: Instant, out: &mut dyn FnMut(&str)) {
        let window = self.window;
        for k in &mut self.kinds {
            if now.saturating_duration_since(k.start) >= window {
                Self::summary(k, now, out);
                k.start = now;
                k.printed = 0;
            }
        }
    }

    /// Writes the counts of lines suppressed so far (at exit).
    pub fn finish(&mut self, now: Instant, out: &mut dyn FnMut(&str)) {
        for k in &mut self.kinds {
            Self::summary(k, now, out);
        }
    }

    fn summary(k: &mut KindWindow, now: Instant, out: &mut dyn FnMut(&str)) {
        if k.suppressed > 0 {
            out(&format!(
                "{} more \"{}\" lines suppressed in the last {:.1} s",
                k.suppressed,
                k.kind,
                now.saturating_duration_since(k.start).as_secs_f64()
            ));
            k.suppressed = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_prints_the_burst_then_one_count_per_window() {
        let mut lines = Vec::new();
        let mut out = |l: &str| lines.push(l.to_owned());
        let mut lim = LogLimiter::new(3, Duration::from_secs(10));
        let t0 = Instant::now();
        for i in 0..1000u64 {
            let t = t0 + Duration::from_millis(i * 15);
            lim.line(t, "too many neighbours", &format!("discarded {i}"), &mut out);
            lim.line(t, "remote changed", "remote", &mut out);
        }
        lim.finish(t0 + Duration::from_millis(15_000), &mut out);
        // 15 s: two windows of each kind, three lines each, and a count per window.
        let flood: Vec<&String> = lines.iter().filter(|l| l.contains("discarded")).collect();
        assert_eq!(flood.len(), 6, "{lines:?}");
        let counts: Vec<&String> = lines
            .iter()
            .filter(|l| l.contains("\"too many neighbours\" lines suppressed"))
            .collect();
        assert_eq!(counts.len(), 2, "{lines:?}");
        let suppressed: u64 = counts
            .iter()
            .map(|l| l.split_whitespace().next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(suppressed + 6, 1000, "every line is printed or counted");
        assert_eq!(lines.len(), 16);
    }
}
