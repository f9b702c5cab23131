//! The simulator's state for issue 14's pathologies and the one event kind that drives them
//! all ([`Event::Pathology`], a timer kind and an index in 32 bits). The parts: receiver
//! stalls and NIC storm prevention (`storm.rs`), switch PFC watchdogs (`pfcwd.rs`), static
//! routes, link events and the hop limit (`topo.rs`), the deadlock and storm detector
//! (`deadlock.rs`) and victim accounting (`victims.rs`). With none configured, the only cost
//! on the hot path is the hop counter and a few flag tests.

pub(in crate::sim) mod deadlock;
pub(in crate::sim) mod pfcwd;
pub(in crate::sim) mod storm;
pub(in crate::sim) mod topo;
pub(in crate::sim) mod victims;

use lossless_proto::units::Instant;

use crate::config::pathology::{StaticRoute, TopologyAction, TopologyEvent};
use crate::event::EventQueue;
use crate::frame::{FlowId, NodeId, PortId};
use crate::observer::Observer;
use crate::sim::features::pathology::deadlock::Detector;
use crate::sim::features::pathology::pfcwd::SwitchWd;
use crate::sim::features::pathology::victims::Victims;
use crate::sim::order::schedule;
use crate::sim::{BuildError, Event, Node, Simulator};

/// Timer kinds of [`Event::Pathology`] (top 3 bits of its payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// A host's receiver stall starts or ends (index: the host's node).
    Stall = 0,
    /// A host NIC's storm-prevention watermark (index: the host's node).
    Prevention = 1,
    /// A switch's pfcwd poll (index into [`PathoState::pfcwd`]).
    PfcwdPoll = 2,
    /// The deadlock detector's scan.
    DeadlockScan = 3,
    /// A scripted topology event (index into [`PathoState::events`]).
    Topology = 4,
}

const KIND_SHIFT: u32 = 29;
const INDEX_MASK: u32 = (1 << KIND_SHIFT) - 1;

impl Timer {
    /// The event for this timer and `index` (below 2^29).
    pub(crate) fn event(self, index: u32) -> Event {
        Event::Pathology(((self as u32) << KIND_SHIFT) | (index & INDEX_MASK))
    }
    fn decode(x: u32) -> (Option<Timer>, u32) {
        let t = match x >> KIND_SHIFT {
            0 => Some(Timer::Stall),
            1 => Some(Timer::Prevention),
            2 => Some(Timer::PfcwdPoll),
            3 => Some(Timer::DeadlockScan),
            4 => Some(Timer::Topology),
            _ => None,
        };
        (t, x & INDEX_MASK)
    }
}

/// Whether pathology timer `x` is the deadlock detector's scan.
pub(crate) fn is_scan(x: u32) -> bool {
    Timer::decode(x).0 == Some(Timer::DeadlockScan)
}

/// Something the topology did, for the report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EventRecord {
    pub(crate) at: Instant,
    pub(crate) what: String,
}

/// Everything the pathology parts keep during a run.
pub(crate) struct PathoState {
    /// Switches a frame may enter.
    pub(crate) hop_limit: u8,
    /// Static routes and whether each is installed yet.
    pub(crate) routes: Vec<(StaticRoute, bool)>,
    /// Scripted events, in time order.
    pub(crate) events: Vec<TopologyEvent>,
    /// What the scripted events did.
    pub(crate) log: Vec<EventRecord>,
    /// Switches running pfcwd.
    pub(crate) pfcwd: Vec<SwitchWd>,
    /// Per port, per priority: index of its watched queue in `pfcwd` (switch, queue), or
    /// `u32::MAX`.
    pub(crate) wd_queue: Vec<[(u32, u32); 8]>,
    /// The deadlock and storm detector.
    pub(crate) detector: Option<Box<Detector>>,
    /// Victim accounting.
    pub(crate) victims: Option<Box<Victims>>,
    /// Set when the detector ended the run on a deadlock.
    pub(crate) stopped_by_deadlock: Option<Instant>,
    /// The run is halted (an engine fault, or the detector's stop): the run loop ends.
    pub(crate) halted: bool,
    /// Some port may drop frames (a link is or was down, pfcwd drop installed): only then
    /// does a switch look at the ports' fault masks.
    pub(crate) faults: bool,
}

impl PathoState {
    pub(crate) fn new(hop_limit: u8) -> Self {
        PathoState {
            hop_limit,
            routes: Vec::new(),
            events: Vec::new(),
            log: Vec::new(),
            pfcwd: Vec::new(),
            wd_queue: Vec::new(),
            detector: None,
            victims: None,
            stopped_by_deadlock: None,
            halted: false,
            faults: false,
        }
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// Handles an [`Event::Pathology`] (rare: kept out of the run loop).
    #[inline(never)]
    #[cold]
    /// The node pathology timer `x` belongs to, if it belongs to one (the deadlock detector's
    /// scans and scripted topology events are the fabric's).
    pub(in crate::sim) fn pathology_node(&self, x: u32) -> Option<NodeId> {
        match Timer::decode(x) {
            (Some(Timer::Stall | Timer::Prevention), node) => Some(node),
            (Some(Timer::PfcwdPoll), i) => self.patho.pfcwd.get(i as usize).map(|w| w.node),
            _ => None,
        }
    }

    pub(in crate::sim::features) fn on_pathology(&mut self, x: u32) {
        match Timer::decode(x) {
            (Some(Timer::Stall), node) => self.on_stall_edge(node),
            (Some(Timer::Prevention), node) => self.on_prevention_timer(node),
            (Some(Timer::PfcwdPoll), i) => self.on_pfcwd_poll(i as usize),
            (Some(Timer::DeadlockScan), _) => self.on_deadlock_scan(),
            (Some(Timer::Topology), i) => self.on_topology_event(i as usize),
            (None, _) => {}
        }
    }

    /// Sets up the configured parts once ports, nodes and flows exist.
    pub(in crate::sim) fn build_pathology(&mut self) -> Result<(), BuildError> {
        let pc = self.config.pathology.clone();
        let names: Vec<String> = self.config.nodes.iter().map(|n| n.name.clone()).collect();
        let name = |n: u32| names[n as usize].clone();
        // static routes: those with a time are installed by an event at that time
        let mut events = pc.events.clone();
        for r in &pc.routes {
            if !matches!(self.nodes[r.switch as usize], Node::Switch(_)) {
                return Err(BuildError::Pathology {
                    what: format!("route at {}", name(r.switch)),
                    problem: "not a switch".into(),
                });
            }
            if let Some(at) = r.at
                && !events
                    .iter()
                    .any(|e| e.at == at && e.action == TopologyAction::InstallRoutes)
            {
                events.push(TopologyEvent {
                    at,
                    action: TopologyAction::InstallRoutes,
                });
            }
        }
        events.sort_by_key(|e| e.at);
        self.patho.routes = pc.routes.iter().map(|r| (r.clone(), r.at.is_none())).collect();
        self.patho.events = events;
        self.apply_static_routes(false);
        for &(node, cfg) in &pc.pfcwd {
            let what = || format!("switch {} pfcwd", name(node));
            let Node::Switch(sw) = &self.nodes[node as usize] else {
                return Err(BuildError::Pathology {
                    what: what(),
                    problem: "not a switch".into(),
                });
            };
            cfg.validate().map_err(|e| BuildError::Pathology {
                what: what(),
                problem: e.to_string(),
            })?;
            if sw.ports.iter().any(|&p| self.ports[p as usize].dcbx.is_some()) {
                return Err(BuildError::Pathology {
                    what: what(),
                    problem: "a port of the switch runs DCBX; pfcwd watches the priorities lossless when the run starts, allowed only on switches without DCBX ports".into(),
                });
            }
            let watched: Vec<(PortId, u8)> = sw
                .ports
                .iter()
                .flat_map(|&p| {
                    let lossless = self.ports[p as usize].lossless;
                    (0..8u8)
                        .filter(move |q| lossless & (1 << q) != 0)
                        .map(move |q| (p, q))
                })
                .collect();
            self.patho
                .pfcwd
                .push(SwitchWd::new(node, cfg, watched.into_iter()));
        }
        if let Some(dc) = pc.deadlock {
            self.patho.detector = Some(Box::new(Detector::new(dc, self.ports.len())));
        }
        if let Some(vc) = pc.victims {
            self.patho.victims = Some(Box::new(Victims::new(vc, self.ports.len())));
            for f in 0..self.flows.len() {
                self.victims_add_flow(f as FlowId);
            }
        }
        Ok(())
    }

    /// Schedules the first timers of every configured part (called once the simulator is
    /// built).
    pub(in crate::sim) fn start_pathology(&mut self) {
        self.start_stalls();
        self.start_pfcwd();
        for (i, e) in self.patho.events.iter().enumerate() {
            schedule!(self, e.at, Timer::Topology.event(i as u32));
        }
        if let Some(d) = &self.patho.detector {
            schedule!(self, Instant::ZERO + d.cfg.interval, Timer::DeadlockScan.event(0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_events_round_trip_and_stay_eight_bytes() {
        for t in [
            Timer::Stall,
            Timer::Prevention,
            Timer::PfcwdPoll,
            Timer::DeadlockScan,
            Timer::Topology,
        ] {
            for i in [0, 1, 12345, INDEX_MASK] {
                let Event::Pathology(x) = t.event(i) else {
                    panic!("not a pathology event")
                };
                assert_eq!(Timer::decode(x), (Some(t), i));
            }
        }
        assert_eq!(std::mem::size_of::<Event>(), 8);
    }
}
