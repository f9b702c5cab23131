//! A trace sink writing a VCD waveform (opens in GTKWave), in the spirit of document 002's
//! timing diagram. Per port, the engine's own signals: `tx` (0 idle, 1 data, 2 PAUSE/PFC
//! frame, 3 LLDP on the wire, from the first preamble bit to the last FCS bit), `request` (the
//! XOFF request per priority), `paused` (the priorities the port may not start) and
//! `pause_quanta` (the pause time last received, cleared when the pause ends); beside them
//! document 002's names: `fc_rdy` (module A asks its MAC TX for flow control: any priority
//! requested, bit 0 of `request` on a PAUSE port), `fc` (MAC RX tells module B to stop: any
//! priority paused) and `mac_tx_state` (a string, `idle`, `data`, `pause` or `lldp`, the MAC
//! TX state `tx` counts). Timescale 1 ps.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;

use crate::config::SimConfig;
use crate::frame::PortId;
use crate::observer::{Observer, WireFrame};

/// Per port: name and width; width 0 is a VCD string (GTKWave's extension).
const SIGNALS: [(&str, u32); 7] = [
    ("tx", 2),
    ("request", 8),
    ("paused", 8),
    ("pause_quanta", 16),
    ("fc_rdy", 1),
    ("fc", 1),
    ("mac_tx_state", 0),
];
/// Index of `mac_tx_state` in [`SIGNALS`], and the texts its values stand for (those of `tx`).
const MAC_TX_STATE: u32 = 6;
const MAC_TX_STATES: [&str; 4] = ["idle", "data", "pause", "lldp"];

/// Writes value changes as VCD while the simulation runs. Every trace call but one carries
/// the simulator's current time, and the exception (a frame's last bit, in the future) is
/// held in a small window ordered by (time, arrival): a change is written as soon as no later
/// call can come before it, so memory stays bounded (about one pending change per port)
/// however long the run, and the file is in time order as VCD requires.
pub struct VcdSink<W: Write> {
    out: W,
    ids: Vec<String>,
    pending: BinaryHeap<Reverse<(Instant, u64, u32, u32)>>,
    seq: u64,
    last: Option<Instant>,
    error: Option<io::Error>,
    request: Vec<u8>,
    paused: Vec<u8>,
    /// Off only in tests: hold every change to the end (the whole-run sort this streams).
    streaming: bool,
}

impl<W: Write> VcdSink<W> {
    /// A sink for every port of `config` (link i has ports 2i at `a`, 2i + 1 at `b`), writing
    /// the VCD header to `out` now and the changes as they become final.
    pub fn new(config: &SimConfig, mut out: W) -> io::Result<Self> {
        let mut names = Vec::new();
        let mut local = vec![0u32; config.nodes.len()];
        for link in &config.links {
            for n in [link.a, link.b] {
                // a scope name is one VCD word: a node name's other bytes are escaped
                let node = lossless_files::name_part(&config.nodes[n as usize].name);
                names.push(format!("{node}_{}", local[n as usize]));
                local[n as usize] += 1;
            }
        }
        let ids: Vec<String> = (0..names.len() * SIGNALS.len()).map(id).collect();
        writeln!(out, "$comment lossless sim $end")?;
        writeln!(out, "$timescale 1ps $end")?;
        writeln!(out, "$scope module sim $end")?;
        for (p, name) in names.iter().enumerate() {
            writeln!(out, "$scope module {name} $end")?;
            for (i, (sig, width)) in SIGNALS.iter().enumerate() {
                let id = &ids[p * SIGNALS.len() + i];
                if *width == 0 {
                    writeln!(out, "$var string 1 {id} {sig} $end")?;
                } else {
                    writeln!(out, "$var wire {width} {id} {sig} $end")?;
                }
            }
            writeln!(out, "$upscope $end")?;
        }
        writeln!(out, "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars")?;
        for (k, i) in ids.iter().enumerate() {
            if SIGNALS[k % SIGNALS.len()].1 == 0 {
                writeln!(out, "s{} {i}", MAC_TX_STATES[0])?;
            } else {
                writeln!(out, "b0 {i}")?;
            }
        }
        writeln!(out, "$end")?;
        Ok(VcdSink {
            out,
            ids,
            pending: BinaryHeap::new(),
            seq: 0,
            last: None,
            error: None,
            request: vec![0; names.len()],
            paused: vec![0; names.len()],
            streaming: true,
        })
    }

    fn push(&mut self, at: Instant, port: PortId, signal: u32, value: u32) {
        let sig = port * SIGNALS.len() as u32 + signal;
        self.pending.push(Reverse((at, self.seq, sig, value)));
        self.seq += 1;
    }

    /// Writes every pending change at or before `now`, the time of the trace call being made:
    /// later calls carry `now` or later, so nothing can come before them any more.
    fn release(&mut self, now: Instant) {
        if !self.streaming {
            return;
        }
        while let Some(Reverse((t, _, _, _))) = self.pending.peek() {
            if *t > now {
                break;
            }
            let Some(Reverse((t, _, sig, v))) = self.pending.pop() else {
                break;
            };
            self.write_change(t, sig, v);
        }
    }

    fn write_change(&mut self, t: Instant, sig: u32, v: u32) {
        if self.error.is_some() {
            return;
        }
        let r = (|| {
            // time never goes back in a VCD file (see the type's invariant)
            if self.last.is_none_or(|l| t > l) {
                writeln!(self.out, "#{}", t.as_ps())?;
                self.last = Some(t);
            }
            let id = &self.ids[sig as usize];
            if sig % SIGNALS.len() as u32 == MAC_TX_STATE {
                let text = MAC_TX_STATES.get(v as usize).unwrap_or(&"unknown");
                writeln!(self.out, "s{text} {id}")
            } else {
                writeln!(self.out, "b{v:b} {id}")
            }
        })();
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    /// Writes what is still pending (the last frames' ends) and flushes; returns the first
    /// write error met during the run, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        while let Some(Reverse((t, _, sig, v))) = self.pending.pop() {
            self.write_change(t, sig, v);
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }

    /// Whether a write failed (the error comes from [`VcdSink::finish`]).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Changes held back because a later one may still come before them (bounded by the
    /// number of ports).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The writer, after [`VcdSink::finish`].
    pub fn into_inner(self) -> W {
        self.out
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

impl<W: Write> Observer for VcdSink<W> {
    const PAUSE_STATE: bool = true;

    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, last_bit: Instant) {
        let v = match frame {
            WireFrame::Data(_) => 1,
            WireFrame::Control(_) => 2,
            WireFrame::Lldp { .. } => 3,
        };
        self.push(start, port, 0, v);
        self.push(start, port, MAC_TX_STATE, v);
        self.push(last_bit, port, 0, 0);
        self.push(last_bit, port, MAC_TX_STATE, 0);
        self.release(start);
    }
    fn request_changed(&mut self, port: PortId, prio: u8, on: bool, at: Instant) {
        let Some(r) = self.request.get_mut(port as usize) else {
            return;
        };
        let before = *r;
        if on {
            *r |= 1 << prio;
        } else {
            *r &= !(1 << prio);
        }
        let v = u32::from(*r);
        self.push(at, port, 1, v);
        if (before != 0) != (v != 0) {
            self.push(at, port, 4, u32::from(v != 0));
        }
        self.release(at);
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        self.push(at, port, 2, u32::from(mask));
        if let Some(p) = self.paused.get_mut(port as usize) {
            let before = std::mem::replace(p, mask);
            if (before != 0) != (mask != 0) {
                self.push(at, port, 5, u32::from(mask != 0));
            }
        }
        if mask == 0 {
            self.push(at, port, 3, 0);
        }
        self.release(at);
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
        self.release(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulator;
    use crate::scenario::{self, Overrides};
    use lossless_proto::units::Duration;

    #[test]
    fn identifiers_are_distinct_printable_ascii() {
        let ids: std::collections::BTreeSet<String> = (0..10_000).map(id).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|s| s.bytes().all(|b| (b'!'..=b'~').contains(&b))));
    }

    /// The waveform of `name` run for `us` µs, streamed or held to the end and sorted; the
    /// most changes held back at any step.
    fn waveform(name: &str, us: u64, streaming: bool) -> (String, usize, usize) {
        let ov = Overrides {
            duration: Some(Duration::from_us(us)),
            ..Overrides::default()
        };
        let c = scenario::load(name, &ov).unwrap();
        let ports = c.links.len() * 2;
        let mut sink = VcdSink::new(&c, Vec::new()).unwrap();
        sink.streaming = streaming;
        let mut sim = Simulator::with_observer(c, sink).unwrap();
        let step = Duration::from_ns(100);
        let mut most = 0;
        while !sim.run_until(sim.now().saturating_add(step)) {
            most = most.max(sim.observer().pending());
        }
        let sink = sim.observer_mut();
        sink.finish().unwrap();
        (String::from_utf8(sink.get_ref().clone()).unwrap(), most, ports)
    }

    #[test]
    fn the_streamed_waveform_equals_the_whole_run_sorted_by_time() {
        for (name, us) in [("two-chip", 300), ("four-bridge", 200), ("dcbx-adopt", 300)] {
            let (streamed, most, ports) = waveform(name, us, true);
            let (sorted, held, _) = waveform(name, us, false);
            assert!(streamed.lines().count() > 100, "{name}: a real waveform");
            assert_eq!(streamed, sorted, "{name}");
            // a frame end is two held changes: `tx` and `mac_tx_state` back to idle
            assert!(
                most <= 2 * ports,
                "{name}: at most one frame end per port held back, found {most} changes for {ports} ports"
            );
            assert!(held > 10 * ports, "{name}: the reference holds the run ({held})");
        }
    }
}
