//! The daemon's log lines.

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
