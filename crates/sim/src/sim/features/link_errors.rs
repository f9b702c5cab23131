//! Link bit errors: a link with a bit error rate (`ber` of a `[[link]]`) corrupts frames, and
//! the receiving MAC's FCS check discards them — data frames (a drop with reason `fcs_error`,
//! which on a lossless priority is a finding PFC cannot prevent; a RoCEv2 QP recovers by
//! retransmission), PAUSE/PFC frames (the MAC never acts on them: a lost XOFF lets the peer
//! send into the headroom until the next refresh) and LLDPDUs.
//!
//! A frame of `n` bits (FCS included, preamble and IFG not: a damaged preamble is not modelled)
//! is corrupted with probability `1 − (1 − ber)^n`, each bit independently. Each receiving
//! port draws from its own stream, seeded from the run's seed and the port's index, so the
//! draws do not depend on the order in which other ports receive.

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::event::EventQueue;
use crate::frame::{DropReason, PortId};
use crate::observer::{Observer, WireFrame};
use crate::sim::fabric::switch::splitmix64;
use crate::sim::{Event, Simulator};
use crate::stats::FcsErrors;

/// One receiving port's error model.
struct PortErrors {
    /// `ln(1 − ber)`: a frame of `n` bits survives with probability `exp(n · ln_keep)`.
    ln_keep: f64,
    ber: f64,
    rng: Pcg64,
    corrupted: FcsErrors,
}

/// The link error state of a run: one model per receiving port of a link with a bit error
/// rate; empty (and never consulted) when no link has one.
#[derive(Default)]
pub(in crate::sim) struct LinkErrors {
    ports: Vec<Option<Box<PortErrors>>>,
    /// Whether any port has a model: the one test the arrival hook pays when off.
    pub(in crate::sim) on: bool,
}

impl LinkErrors {
    /// The models of the ports of links with a nonzero `ber`, for `port_count` ports; `ends`
    /// gives each link's bit error rate and its two ports.
    pub(in crate::sim) fn new(
        seed: u64,
        port_count: usize,
        ends: impl Iterator<Item = (f64, PortId, PortId)>,
    ) -> LinkErrors {
        let mut ports: Vec<Option<Box<PortErrors>>> = Vec::new();
        for (ber, a, b) in ends {
            if ber <= 0.0 {
                continue;
            }
            if ports.is_empty() {
                ports.resize_with(port_count, || None);
            }
            for p in [a, b] {
                let stream = splitmix64(seed ^ splitmix64(0x6c69_6e6b_5f65_7272 ^ u64::from(p)));
                ports[p as usize] = Some(Box::new(PortErrors {
                    ln_keep: (-ber).ln_1p(),
                    ber,
                    rng: Pcg64::seed_from_u64(stream),
                    corrupted: FcsErrors::default(),
                }));
            }
        }
        let on = !ports.is_empty();
        LinkErrors { ports, on }
    }

    /// A port's bit error rate and what it discarded; `None` when its link has no errors.
    /// Takes the FCS checks of the receiving ports `mine` says are another partition's from
    /// `other` (a split fabric: the receiver's partition ran them).
    pub(in crate::sim) fn take_ports(&mut self, other: &mut LinkErrors, mine: impl Fn(usize) -> bool) {
        for (p, (a, b)) in self.ports.iter_mut().zip(&mut other.ports).enumerate() {
            if mine(p) {
                std::mem::swap(a, b);
            }
        }
    }

    /// Sets what port `p`'s FCS check discarded (its receiver ran in another process);
    /// false when `p` has no error model.
    pub(in crate::sim) fn set_corrupted(&mut self, p: PortId, e: FcsErrors) -> bool {
        match self.ports.get_mut(p as usize).and_then(|x| x.as_deref_mut()) {
            Some(x) => {
                x.corrupted = e;
                true
            }
            None => false,
        }
    }

    fn port(&self, p: PortId) -> Option<(f64, FcsErrors)> {
        let e = self.ports.get(p as usize)?.as_deref()?;
        Some((e.ber, e.corrupted))
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The bit error rate of the link port `p` receives from, and what its FCS check
    /// discarded so far; `None` when that link has no errors.
    pub fn fcs_errors(&self, p: PortId) -> Option<(f64, FcsErrors)> {
        self.link_errors.port(p)
    }

    /// The frame arriving whole at `p` from `peer`: true when its FCS check fails, after
    /// discarding it (data frames are dropped with [`DropReason::FcsError`]).
    pub(in crate::sim::features) fn corrupted_on_arrival(&mut self, p: PortId, peer: PortId) -> bool {
        let Some(e) = self.link_errors.ports[p as usize].as_deref_mut() else {
            return false;
        };
        let Some(w) = self.ports[peer as usize].inflight.front() else {
            return false;
        };
        let bits = w.len() * 8;
        let keep = (bits as f64 * e.ln_keep).exp();
        if e.rng.r#gen::<f64>() < keep {
            return false;
        }
        e.corrupted.first.get_or_insert(self.now);
        let w = self.ports[peer as usize].inflight.pop_front();
        match w {
            Some(WireFrame::Data(mut frame)) => {
                e.corrupted.data_frames += 1;
                frame.ingress = p;
                self.drop_frame(p, frame, DropReason::FcsError);
            }
            Some(WireFrame::Control(_)) => e.corrupted.control_frames += 1,
            Some(WireFrame::Lldp { .. }) => {
                e.corrupted.lldp_frames += 1;
                self.ports[peer as usize].lldp_wire.pop_front();
            }
            None => {}
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ports_of_links_with_errors_get_a_model() {
        let e = LinkErrors::new(1, 6, [(0.0, 0, 1), (1e-9, 2, 3), (0.0, 4, 5)].into_iter());
        assert!(e.on);
        assert!(e.port(0).is_none() && e.port(5).is_none());
        assert_eq!(e.port(2).map(|(ber, _)| ber), Some(1e-9));
        assert_eq!(e.port(3).map(|(ber, _)| ber), Some(1e-9));
        let off = LinkErrors::new(1, 6, [(0.0, 0, 1)].into_iter());
        assert!(!off.on && off.port(0).is_none());
    }

    #[test]
    fn the_two_ends_of_a_link_draw_from_different_streams() {
        let mut e = LinkErrors::new(7, 2, [(1e-3, 0, 1)].into_iter());
        let a: Vec<f64> = (0..4).map(|_| e.ports[0].as_mut().unwrap().rng.r#gen()).collect();
        let b: Vec<f64> = (0..4).map(|_| e.ports[1].as_mut().unwrap().rng.r#gen()).collect();
        assert_ne!(a, b);
    }
}
