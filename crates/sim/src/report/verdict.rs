//! The lossless verdict of a run: every frame of a lossless priority that was dropped, where,
//! when first, and why. A lossless class that drops a frame is a finding, never a quiet
//! counter: the summary opens with it, the JSON carries it as `lossless`, the HTML report
//! shows it at the top and `lossless sim` exits with status 3 (docs/limits.md).
//!
//! A priority is lossless on a port when flow control protects it there (PFC enabled, or
//! link PAUSE) or when the port's own DCBX configuration enables PFC on it (a frame dropped
//! because negotiation left PFC off is still a frame of a class the operator made lossless).

use std::fmt::Write as _;

use lossless_proto::flow_control::Mode;
use lossless_proto::units::{Duration, Rate};
use serde::Serialize;

use crate::buffer::SwitchBuffer;
use crate::config::headroom::headroom_bytes_for_delay;
use crate::config::model::BufferModel;
use crate::event::EventQueue;
use crate::frame::DropReason;
use crate::observer::Observer;
use crate::sim::{Event, Node, Simulator};

/// Whether the run kept every lossless priority lossless, and every drop if not.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LosslessVerdict {
    /// "lossless" when no frame of a lossless priority was dropped, "dropped" otherwise.
    pub verdict: &'static str,
    /// Frames of lossless priorities dropped, in all.
    pub dropped_frames: u64,
    /// One entry per (port, priority, reason) that dropped, most frames first.
    pub drops: Vec<LosslessDrop>,
}

/// Frames of one lossless priority dropped at one port for one reason.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LosslessDrop {
    /// The node whose port dropped them (the port they arrived on).
    pub node: String,
    /// The port's local index.
    pub port: u32,
    /// The node at the other end of the port's link (where the frames came from).
    pub peer: String,
    /// The priority.
    pub priority: u8,
    /// Why: a [`DropReason`] name, or `pfc_not_operational` (DCBX left the port's own PFC
    /// priority without PFC, and the frame was tail-dropped as lossy).
    pub reason: &'static str,
    /// Frames dropped.
    pub frames: u64,
    /// When the port first dropped a frame of this priority (any reason).
    pub first_ps: Option<u128>,
    /// The headroom this (port, priority) had, for a headroom overflow.
    pub headroom_bytes: Option<u64>,
    /// What IEEE 802.1Qbb Annex N asks for this port's rate and cable with the run's largest
    /// frames, for a headroom overflow.
    pub annex_n_headroom_bytes: Option<u64>,
    /// The cause in words.
    pub why: String,
}

impl LosslessVerdict {
    /// Whether any frame of a lossless priority was dropped.
    pub fn dropped(&self) -> bool {
        self.dropped_frames > 0
    }

    /// The verdict in a few lines: how many, then the worst places (at most `top`).
    pub fn text(&self, top: usize) -> String {
        let mut s = String::new();
        if !self.dropped() {
            return s;
        }
        let _ = writeln!(
            s,
            "FINDING: {} frame(s) of lossless priorities dropped at {} place(s) (JSON `lossless`):",
            self.dropped_frames,
            self.drops.len()
        );
        for d in self.drops.iter().take(top) {
            let first = d
                .first_ps
                .map(|t| format!(", first at {}", Duration::from_ps(t)))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  {} at {}.{} (from {}) priority {}{first}: {}",
                d.frames, d.node, d.port, d.peer, d.priority, d.why
            );
        }
        if self.drops.len() > top {
            let _ = writeln!(
                s,
                "  … {} more places (the JSON lists them all)",
                self.drops.len() - top
            );
        }
        s
    }

    /// The verdict of `sim` now.
    pub(crate) fn collect<O: Observer, Q: EventQueue<Event>>(sim: &Simulator<O, Q>) -> LosslessVerdict {
        let names = |n: u32| sim.config.nodes[n as usize].name.clone();
        let largest_payload = sim
            .config
            .flows
            .iter()
            .map(|f| f.transport.as_ref().map_or(f.mtu, |t| u64::from(t.rc.mtu)))
            .chain(
                sim.config
                    .workloads
                    .iter()
                    .map(|w| w.transport.as_ref().map_or(w.mtu, |t| u64::from(t.rc.mtu))),
            )
            .max()
            .unwrap_or(1500);
        let mut drops = Vec::new();
        for (pi, port) in sim.ports.iter().enumerate() {
            let local_pfc = port
                .dcbx
                .as_deref()
                .map_or(0, |d| d.agent.local().pfc.params().enable);
            let operational = port.lossless;
            for q in 0..8u8 {
                let bit = 1u8 << q;
                if (operational | local_pfc) & bit == 0 {
                    continue;
                }
                let s = &port.counts().prio[q as usize];
                for r in DropReason::ALL {
                    let frames = s.drops[r.index()];
                    if frames == 0 {
                        continue;
                    }
                    let lost_pfc = operational & bit == 0;
                    let link = &sim.config.links[pi / 2];
                    let (headroom, annex, why) = if lost_pfc {
                        (
                            None,
                            None,
                            "PFC not operational: DCBX did not agree on this priority, so its frames were handled as lossy"
                                .to_string(),
                        )
                    } else {
                        why(sim, pi, q, r, port.rate, link.propagation(), largest_payload)
                    };
                    drops.push(LosslessDrop {
                        node: names(port.node),
                        port: port.local,
                        peer: names(sim.ports[port.peer as usize].node),
                        priority: q,
                        reason: if lost_pfc { "pfc_not_operational" } else { r.name() },
                        frames,
                        first_ps: port.counts().first_drop[q as usize].map(|t| t.as_ps()),
                        headroom_bytes: headroom,
                        annex_n_headroom_bytes: annex,
                        why,
                    });
                }
            }
        }
        drops.sort_by(|a, b| b.frames.cmp(&a.frames).then(a.first_ps.cmp(&b.first_ps)));
        let dropped_frames = drops.iter().map(|d| d.frames).sum();
        LosslessVerdict {
            verdict: if dropped_frames > 0 { "dropped" } else { "lossless" },
            dropped_frames,
            drops,
        }
    }
}

/// The headroom, Annex N's and the cause of drops for `reason` at port `pi`, priority `q`.
fn why<O: Observer, Q: EventQueue<Event>>(
    sim: &Simulator<O, Q>,
    pi: usize,
    q: u8,
    reason: DropReason,
    rate: Rate,
    delay: Duration,
    largest_payload: u64,
) -> (Option<u64>, Option<u64>, String) {
    let port = &sim.ports[pi];
    let text = match reason {
        DropReason::HeadroomOverflow => {
            let Node::Switch(sw) = &sim.nodes[port.node as usize] else {
                return (None, None, "headroom overflow".into());
            };
            let have = sw.buffer.headroom_of(port.local as usize, q);
            let annex = headroom_bytes_for_delay(rate, delay, largest_payload);
            let source = match (&sw.buffer, sim.config.model.buffer) {
                (SwitchBuffer::Ns3(_), _) | (_, BufferModel::Ns3) => {
                    "the HPCC ns-3 MMU's 3 × rate × delay / 8, or the switch's headroom_bytes"
                }
                _ => "the switch's headroom_bytes, or Annex N at its mtu",
            };
            let verdict = if have < annex {
                format!("{} B short of Annex N", annex - have)
            } else {
                "at or above Annex N, yet not enough: the worst case here is larger (a transmitter busy with a frame in the other direction delays the PFC frame by one more frame, docs/headroom.md; `lossless headroom --verify` finds it)".into()
            };
            let pause = if port.mac.config().mode == Mode::Pause {
                " (link PAUSE: one headroom for the whole port)"
            } else {
                ""
            };
            let text = format!(
                "headroom overflow: {have} B of headroom{pause} ({source}) against {annex} B that Annex N needs at {rate} over {delay} with {largest_payload}-byte payloads: {verdict}"
            );
            return (Some(have), Some(annex), text);
        }
        other => other.explanation().into(),
    };
    (None, None, text)
}
