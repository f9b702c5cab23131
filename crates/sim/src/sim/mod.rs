//! The simulator: ports, hosts and switches wired by links, driven by a time-ordered event
//! queue. One event handler per event kind; nothing allocates per event in steady state
//! (queues keep their capacity, frames are `Copy` handles, events are 8 bytes).
//!
//! # The journey of a frame
//! A data frame goes host → port → link → switch → port → link → host, one file a step:
//!
//! | step | where | what happens |
//! | --- | --- | --- |
//! | a flow emits | `fabric/host.rs` `on_emit` | the frame is queued at the host's NIC port (a QP's packet is pulled by the NIC, `features/qp.rs`) |
//! | queued at egress | `fabric/port.rs` `enqueue` | transmission selection is told; ECN/QCN at enqueue |
//! | sent | `fabric/port.rs` `try_transmit`, `start_frame` | a due PAUSE/PFC frame first, then the class selection picks among those flow control lets go; `Arrive` is scheduled, and `TxEnd` too unless nothing else waits for the wire (then it is owed, `order.rs`) |
//! | on the wire | `fabric/link.rs` `on_arrive` | the last bit reaches the peer port a propagation delay later: control frames go to its MAC, LLDPDUs to DCBX, data to its node |
//! | switched | `fabric/switch.rs` `switch_receive` | hop limit, route (ECMP), buffer admission (which may raise XOFF on the ingress port, `fabric/mac.rs` `set_pair_xoff`), queued at the egress port |
//! | leaves the switch | `fabric/port.rs` `on_tx_end` / `try_transmit` | the buffer's ingress charge is released (`fabric/switch.rs` `release_ingress`), which may send XON |
//! | received | `fabric/host.rs` `host_receive`, `deliver` | the receive pipeline (its own PAUSE when it falls behind), then the flow's or QP's counters (`features/qp.rs` answers with ACK/NAK/CNP) |
//!
//! The MAC's own deadlines (pause expiry, refresh) are `fabric/mac.rs` `on_mac_timer`.
//!
//! # Hook points of the optional features
//! The data path reaches an optional feature only through `features/hooks.rs`, one method
//! per hook point (the features' entry points are visible only inside `features/`). Each
//! tests the flag that says whether its feature is on, so a run without it pays that test:
//!
//! | hook point | hook | called from | features | guard |
//! | --- | --- | --- | --- | --- |
//! | enqueue | `hook_enqueue_cn` | `fabric/port.rs` `enqueue` | ECN marking at enqueue, QCN congestion point (`features/cn.rs`) | `Port::cn_enq` |
//! | enqueue | `hook_enqueued` | `fabric/port.rs` `enqueue_plain` | victim flows (`features/pathology/victims.rs`) | `patho.victims` |
//! | before data | `hook_before_data` | `fabric/port.rs` `try_transmit` | DCBX's LLDPDUs (`features/dcbx.rs`), the NIC's reply queue and QPs (`features/qp.rs`) | `Port::lldp_queued`, `pull`, `reply_first` |
//! | dequeue | `hooks::dequeued` | `fabric/port.rs` `try_transmit` | ECN at dequeue (`features/cn.rs`), a QP's freed slot | `Port::staged`, `cn_deq` |
//! | transmitting | `hook_transmitting` | `fabric/port.rs` `try_transmit` | victim flows | `patho.victims` |
//! | arrival | `hook_lost_on_wire` | `fabric/link.rs` `on_arrive` | link down (`features/pathology/topo.rs`), bit errors (`features/link_errors.rs`) | `PortFault::lost`, `LinkErrors::on` |
//! | arrival | `hook_lldp_arrived` | `fabric/link.rs` `on_arrive` | the DCBX agent | an LLDPDU on the wire |
//! | switch admission | `hook_switch_fault` | `fabric/switch.rs` `switch_receive` | link faults, pfcwd drops (`topo.rs`, `pfcwd.rs`) | `patho.faults` |
//! | XOFF raised | `hook_xoff` | `fabric/switch.rs` `switch_receive` | victims' attribution | (inside) |
//! | host request | `hook_host_request` | `fabric/host.rs` `host_request` | NIC storm prevention (`storm.rs`), victims | (inside) |
//! | deliver | `hook_deliver_roce` | `fabric/host.rs` `deliver` | RoCEv2 responder and requester (`features/qp.rs`) | frame kind not `Plain` |
//! | emit | `hook_emit_qp` | `fabric/host.rs` `on_emit` | QPs | the flow has a QP |
//! | flow created | `hook_flow_added` | `fabric/host.rs` `on_new_flow` | victims | (inside) |
//! | timers | `hook_dcbx_timer`, `hook_pathology_timer`, `hook_qp_timer` | `sim/mod.rs` `handle` | DCBX, the pathology parts (stalls, storm prevention, pfcwd polls, the deadlock detector, topology events), QPs | their own events |
//!
//! The receive pipeline reads one feature's state directly: a receiver stall
//! (`Host::stall`, `features/pathology/storm.rs`) holds frames in `fabric/host.rs`.

use lossless_proto::units::Instant;
use rand_pcg::Pcg64;

mod build;
pub mod dcbx_report;
pub mod exchange;
mod exchange_features;
mod fabric;
mod features;
mod ideal;
mod inspect;
pub mod order;
pub mod partition;
mod prefetch;
pub mod qp_report;
pub(crate) use build::workload_seed;
pub(crate) use fabric::routes::RouteReplay;
pub(crate) use ideal::IdealCache;
#[cfg(test)]
mod tests;

pub(crate) use features::cn::PortCn;
pub use features::dcbx::DcbxChangeError;
pub(crate) use features::dcbx::PortDcbx;
pub(crate) use features::qp::Qp;
pub use features::qp::QpError;

use fabric::host::FlowState;
pub(crate) use fabric::host::{Host, Nic};
use fabric::port::station_address;
pub(crate) use fabric::port::{EgressQueue, Port, PortKind};
pub(crate) use fabric::switch::Switch;
use fabric::switch::splitmix64;

use crate::config::SimConfig;
use crate::event::{CalendarQueue, EventQueue};
use crate::frame::{FlowId, NodeId, PortId};
use crate::observer::{NoObserver, Observer};
use crate::stats::Totals;

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port's transmitter finished a frame (IFG included) and may start the next.
    TxEnd(PortId),
    /// The last bit of the oldest frame on the wire towards this port arrived.
    Arrive(PortId),
    /// A flow may emit its next frame.
    Emit(FlowId),
    /// A port's flow-control engine has a deadline.
    MacTimer(PortId),
    /// A host's receiver finished processing its oldest frame.
    RxDone(NodeId),
    /// The next Poisson arrival of a workload.
    NewFlow(u32),
    /// A scripted request change (index into the scenario's signals).
    Signal(u32),
    /// A shaper of the port's transmission selection lets a held frame go.
    Eligible(PortId),
    /// A port's DCBX agent has a deadline.
    DcbxTimer(PortId),
    /// A timer of the pathology parts (stalls, storm prevention, pfcwd polls, the deadlock
    /// detector, topology events): kind and index, see `sim/features/pathology/mod.rs`.
    Pathology(u32),
    /// A QP's sender has a deadline (the earlier of its reaction point's and its
    /// retransmission timer's).
    QpTimer(FlowId),
    /// A QP's receiver has a deadline (its notification point's late CNP).
    NpTimer(FlowId),
}

/// A node; each starts a cache line (see [`Switch`]).
#[repr(align(64))]
pub(crate) enum Node {
    Host(Host),
    Switch(Switch),
}

/// The simulator, generic over its event queue and its observer.
pub struct Simulator<O: Observer = NoObserver, Q: EventQueue<Event> = CalendarQueue<Event>> {
    /// One copy shared by a process's partitions (read only).
    pub(crate) config: std::sync::Arc<SimConfig>,
    pub(crate) now: Instant,
    end: Instant,
    queue: Q,
    pub(crate) ports: Vec<Port>,
    pub(crate) nodes: Vec<Node>,
    flows: Vec<FlowState>,
    /// Flows created so far per (source, destination) pair (UDP source ports).
    pair_flows: std::collections::HashMap<(NodeId, NodeId), u16>,
    /// Each workload's arrival stream (one per workload, so that one's draws never move
    /// another's).
    rngs: Vec<Pcg64>,
    /// Who schedules what the event being handled schedules (`order.rs`).
    scheduler: u32,
    /// The tie of the event being handled (`order.rs`).
    tie: u64,
    pub(crate) totals: Totals,
    pub(crate) events: u64,
    observer: O,
    /// The first error an engine returned on the hot path; it stops the run (see
    /// [`Simulator::fault`]).
    pub(crate) fault: Option<String>,
    /// Pathology state: pfcwd, routes and link events, the detector, victims.
    pub(in crate::sim) patho: features::pathology::PathoState,
    /// Link bit errors: the FCS check of each receiving port of a link with a `ber`.
    link_errors: features::link_errors::LinkErrors,
    /// The part of a split fabric this simulator owns (`partition.rs`); `None`: all of it.
    part: Option<Box<partition::PartState>>,
    /// What the report reads of ports whose engines ran in another process (a run split over
    /// MPI ranks, `exchange.rs`); `None` otherwise.
    absorbed: Option<Box<exchange::Absorbed>>,
}

/// Error building a simulator from a configuration. A variant with a `source` names only
/// where the problem is; the source (printed after it in a chain, as `{:#}` of anyhow does)
/// says what it is, so that the reason is not printed twice.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// More nodes than the order of simultaneous events can tell apart.
    #[error("the fabric has {nodes} nodes; at most {} are supported", order::MAX_NODES)]
    TooManyNodes {
        /// How many the configuration has.
        nodes: usize,
    },
    /// A switch's headroom reserves do not fit its buffer.
    #[error("switch {switch}")]
    Buffer {
        /// The switch's name.
        switch: String,
        /// The problem.
        source: crate::buffer::BufferTooSmall,
    },
    /// A host has other than one link.
    #[error("host {host} has {links} links; a host has exactly one NIC port")]
    HostLinks {
        /// The host's name.
        host: String,
        /// How many links it has.
        links: usize,
    },
    /// A flow's source or destination is not a host, or they are the same.
    #[error("flow {flow}: {problem}")]
    Flow {
        /// The flow's name.
        flow: String,
        /// What is wrong.
        problem: String,
    },
    /// A flow's QP configuration was refused by its engines.
    #[error("flow {flow}")]
    Qp {
        /// The flow's name.
        flow: String,
        /// The engine's reason.
        source: QpError,
    },
    /// An ETS configuration was refused by the scheduler.
    #[error("link {link}: ETS")]
    Ets {
        /// Index of the link.
        link: usize,
        /// The scheduler's reason.
        source: lossless_proto::ets::SchedulerError,
    },
    /// A DCBX configuration was refused by the agent.
    #[error("link {link}: DCBX")]
    Dcbx {
        /// Index of the link.
        link: usize,
        /// The agent's reason.
        source: lossless_proto::dcbx::AgentError,
    },
    /// A flow's frames are larger than any port can be built for.
    #[error("frames of {bytes} bytes: allowed up to 4294967295")]
    FrameTooLarge {
        /// The largest frame asked for.
        bytes: u64,
    },
    /// A scripted flow-control request cannot be applied.
    #[error("signal on host {host}: {problem}")]
    Signal {
        /// The host's name.
        host: String,
        /// What is wrong.
        problem: String,
    },
    /// A pathology setting (pfcwd, static route, ...) cannot be applied.
    #[error("{what}: {problem}")]
    Pathology {
        /// Where (e.g. `switch s1 pfcwd`).
        what: String,
        /// What is wrong.
        problem: String,
    },
    /// A switch's congestion notification (ECN marking, QCN) cannot be set up.
    #[error("switch {switch}: {problem}")]
    Cn {
        /// The switch's name.
        switch: String,
        /// What is wrong.
        problem: String,
    },
    /// A flow-control configuration was refused by the engine.
    #[error("link {link}: flow control")]
    FlowControl {
        /// Index of the link.
        link: usize,
        /// The engine's reason.
        source: lossless_proto::flow_control::ConfigError,
    },
}

impl Simulator<NoObserver, CalendarQueue<Event>> {
    /// Builds a simulator without an observer.
    pub fn new(config: SimConfig) -> Result<Self, BuildError> {
        Self::with_observer(config, NoObserver)
    }
}

impl<O: Observer> Simulator<O, CalendarQueue<Event>> {
    /// Builds a simulator that reports to `observer`.
    pub fn with_observer(config: SimConfig, observer: O) -> Result<Self, BuildError> {
        Self::build(config, observer, CalendarQueue::default())
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }
    /// When the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }
    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// The configuration this simulator was built from.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }
    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }
    /// The observer, mutably (e.g. to finish writing files).
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.observer
    }

    /// The first error an engine (flow control, transmission selection) returned during the
    /// run, with the time and port; the run stops there. `None` for a sound run.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_deref()
    }

    /// Records an engine error at `p` and ends the run now: an engine refusing what the
    /// simulator asks is a bug or a configuration the build did not catch, never ignored.
    pub(crate) fn engine_fault(&mut self, p: PortId, what: &str, err: &dyn std::fmt::Display) {
        if self.fault.is_none() {
            self.fault = Some(format!("at {} port {p}: {what}: {err}", self.now));
        }
        self.end = self.now;
        self.patho.halted = true;
    }

    /// Runs until the end of the scenario.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    /// Handles every event before `until` (capped at the end of the scenario) and advances
    /// the clock to it. Returns true when the end has been reached.
    pub fn run_until(&mut self, until: Instant) -> bool {
        assert!(
            !O::PUSH_NUMBERS || self.queue.numbers(),
            "an observer that reads the pushes' numbers needs a queue that keeps them (CalendarQueue::numbered)"
        );
        let until = until.min(self.end);
        // an engine fault or the deadlock detector halts the run (and moves `end` to now)
        while !self.patho.halted {
            let Some(s) = self.queue.pop_before(until) else {
                break;
            };
            self.now = s.at;
            self.tie = s.tie;
            self.events += 1;
            self.observer.event_start(s.at, s.tie, s.seq);
            self.prefetch_ahead();
            self.handle(s.event);
            self.observer.event_handled(s.at, self.scheduler);
        }
        if until > self.now && !self.patho.halted {
            self.now = until;
            // nothing due at `until` has been handled: what a caller changes now comes first
            self.tie = 0;
        }
        // what is scheduled between runs (a caller's change) is the fabric's
        self.scheduler = order::FABRIC;
        self.now >= self.end
    }

    #[inline(always)]
    fn handle(&mut self, ev: Event) {
        // each arm first says who schedules what its handler schedules (`order.rs`)
        match ev {
            Event::TxEnd(p) => {
                self.scheduler = self.port_scheduler(p);
                if !self.here() {
                    return;
                }
                self.on_tx_end(p)
            }
            Event::Arrive(p) => {
                self.scheduler = self.port_scheduler(p);
                if !self.here() {
                    return;
                }
                self.on_arrive(p)
            }
            Event::Emit(f) => {
                self.scheduler = self.flow_scheduler(f);
                if !self.here() {
                    return;
                }
                self.on_emit(f)
            }
            Event::MacTimer(p) => {
                self.scheduler = self.port_scheduler(p);
                if !self.here() {
                    return;
                }
                self.on_mac_timer(p)
            }
            Event::RxDone(n) => {
                self.scheduler = order::node_scheduler(n);
                if !self.here() {
                    return;
                }
                self.on_rx_done(n)
            }
            Event::NewFlow(w) => {
                self.scheduler = order::WORKLOADS;
                if !self.here() {
                    return;
                }
                self.on_new_flow(w)
            }
            Event::Signal(i) => {
                self.scheduler = self.signal_scheduler(i);
                if !self.here() {
                    return;
                }
                self.on_signal(i)
            }
            Event::Eligible(p) => {
                self.scheduler = self.port_scheduler(p);
                if !self.here() {
                    return;
                }
                self.try_transmit(p)
            }
            Event::DcbxTimer(p) => {
                self.scheduler = self.port_scheduler(p);
                if !self.here() {
                    return;
                }
                self.hook_dcbx_timer(p)
            }
            Event::Pathology(x) => {
                self.scheduler = self.pathology_scheduler(x);
                if self.scheduler == order::FABRIC && self.is_partition() {
                    return self.hold_fabric_timer(x);
                }
                if !self.here() {
                    return;
                }
                self.hook_pathology_timer(x)
            }
            Event::QpTimer(f) => {
                self.scheduler = self.flow_scheduler(f);
                if !self.here() {
                    return;
                }
                self.hook_qp_timer(f)
            }
            Event::NpTimer(f) => {
                self.scheduler = self.flow_receiver_scheduler(f);
                if !self.here() {
                    return;
                }
                self.hook_np_timer(f)
            }
        }
    }
}
