//! A trace sink writing a VCD waveform (opens in GTKWave), in the spirit of document 002's
//! timing diagram. Per port: `tx` (0 idle, 1 data, 2 PAUSE/PFC frame on the wire, from the
//! first preamble bit to the last FCS bit), `request` (the XOFF request per priority — module
//! A's `fc_rdy` for a PAUSE port is bit 0), `paused` (the priorities the port may not start —
//! document 002's `fc` to module B), and `pause_quanta` (the pause time last received, cleared
//! when the pause ends). Timescale 1 ps.

use std::fmt::Write as _;
use std::path::Path;

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;

use crate::config::SimConfig;
use crate::frame::PortId;
use crate::observer::{Observer, WireFrame};

/// Most value changes kept; beyond it the waveform is cut (and says so in its header).
pub const MAX_CHANGES: usize = 20_000_000;

const SIGNALS: [(&str, u32); 4] = [("tx", 2), ("request", 8), ("paused", 8), ("pause_quanta", 16)];

/// Records value changes and writes them as VCD at the end.
pub struct VcdSink {
    names: Vec<String>,
    changes: Vec<(Instant, u32, u32)>,
    truncated: bool,
    request: Vec<u8>,
}

impl VcdSink {
    /// A sink for every port of `config` (link i has ports 2i at `a`, 2i + 1 at `b`).
    pub fn new(config: &SimConfig) -> Self {
        let mut names = Vec::new();
        let mut local = vec![0u32; config.nodes.len()];
        for link in &config.links {
            for n in [link.a, link.b] {
                names.push(format!("{}_{}", config.nodes[n as usize].name, local[n as usize]));
                local[n as usize] += 1;
            }
        }
        let ports = names.len();
        VcdSink {
            names,
            changes: Vec::with_capacity(4096),
            truncated: false,
            request: vec![0; ports],
        }
    }

    fn push(&mut self, at: Instant, port: PortId, signal: u32, value: u32) {
        if self.changes.len() >= MAX_CHANGES {
            self.truncated = true;
            return;
        }
        self.changes
            .push((at, port * SIGNALS.len() as u32 + signal, value));
    }

    /// The VCD text of everything recorded (changes sorted by time, stable).
    pub fn render(&mut self) -> String {
        self.changes.sort_by_key(|c| c.0);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "$comment lossless sim{} $end",
            if self.truncated { " (truncated)" } else { "" }
        );
        let _ = writeln!(s, "$timescale 1ps $end");
        let _ = writeln!(s, "$scope module sim $end");
        for (p, name) in self.names.iter().enumerate() {
            let _ = writeln!(s, "$scope module {name} $end");
            for (i, (sig, width)) in SIGNALS.iter().enumerate() {
                let _ = writeln!(s, "$var wire {width} {} {sig} $end", id(p * SIGNALS.len() + i));
            }
            let _ = writeln!(s, "$upscope $end");
        }
        let _ = writeln!(s, "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars");
        for k in 0..self.names.len() * SIGNALS.len() {
            let _ = writeln!(s, "b0 {}", id(k));
        }
        let _ = writeln!(s, "$end");
        let mut last = None;
        for &(t, sig, v) in &self.changes {
            if last != Some(t) {
                let _ = writeln!(s, "#{}", t.as_ps());
                last = Some(t);
            }
            let _ = writeln!(s, "b{v:b} {}", id(sig as usize));
        }
        s
    }

    /// Writes the waveform to `path`.
    pub fn write(&mut self, path: &Path) -> std::io::Result<()> {
        let text = self.render();
        std::fs::write(path, text)
    }
}

/// VCD identifier of signal `k` (printable ASCII, base 94).
fn id(mut k: usize) -> String {
    let mut s = String::new();
    loop {
        s.push((b'!' + (k % 94) as u8) as char);
        k /= 94;
        if k == 0 {
            return s;
        }
    }
}

impl Observer for VcdSink {
    const PAUSE_STATE: bool = true;

    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, last_bit: Instant) {
        let v = match frame {
            WireFrame::Data(_) => 1,
            WireFrame::Control(_) => 2,
            WireFrame::Lldp { .. } => 3,
        };
        self.push(start, port, 0, v);
        self.push(last_bit, port, 0, 0);
    }
    fn request_changed(&mut self, port: PortId, prio: u8, on: bool, at: Instant) {
        let Some(r) = self.request.get_mut(port as usize) else {
            return;
        };
        if on {
            *r |= 1 << prio;
        } else {
            *r &= !(1 << prio);
        }
        let v = u32::from(*r);
        self.push(at, port, 1, v);
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        self.push(at, port, 2, u32::from(mask));
        if mask == 0 {
            self.push(at, port, 3, 0);
        }
    }
    fn control_received(&mut self, port: PortId, frame: &ControlFrame, at: Instant) {
        let q = match *frame {
            ControlFrame::Pause { quanta } => quanta,
            ControlFrame::Pfc { enable_vector, time } => (0..8)
                .filter(|p| enable_vector & (1 << p) != 0)
                .map(|p| time[p])
                .max()
                .unwrap_or(0),
        };
        self.push(at, port, 3, u32::from(q));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_distinct_printable_ascii() {
        let ids: std::collections::BTreeSet<String> = (0..10_000).map(id).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|s| s.bytes().all(|b| (b'!'..=b'~').contains(&b))));
    }
}
