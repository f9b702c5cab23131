//! What operators fear, as simulator settings (issue 14): receivers that stall and the
//! storms they cause, NIC storm prevention and switch PFC watchdogs, static routes, link
//! failures and the hop limit, the deadlock detector and victim-flow accounting.
//!
//! Every part is off unless the scenario asks for it (`rx_stall`, `pfc_prevention_tout`,
//! `[pfcwd]`, `[[route]]`, `[[event]]`, `[deadlock]`, `[victims]`); a scenario without them
//! runs and reports exactly as before. The simulator's handlers are in `sim/features/pathology/storm.rs`,
//! `sim/features/pathology/pfcwd.rs`, `sim/features/pathology/topo.rs`, `sim/features/pathology/deadlock.rs` and `sim/features/pathology/victims.rs`; the figures in
//! [`crate::report::pathology`].

use lossless_proto::units::{Duration, Instant};
use lossless_proto::watchdog::pfcwd;

use crate::frame::NodeId;

/// Default hop limit: switches a frame may enter before it is dropped (`hop_limit`).
pub const DEFAULT_HOP_LIMIT: u8 = 64;

/// Every pathology setting of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct PathologyConfig {
    /// Switches a frame may enter; the next one drops it (`DropReason::HopLimit`).
    pub hop_limit: u8,
    /// Hosts with a stalling receiver or NIC storm prevention.
    pub hosts: Vec<HostPathology>,
    /// Switches running SONiC's PFC watchdog, with its settings.
    pub pfcwd: Vec<(NodeId, pfcwd::Config)>,
    /// Static routes, over the computed shortest paths.
    pub routes: Vec<StaticRoute>,
    /// Link failures and repairs, big red switch changes.
    pub events: Vec<TopologyEvent>,
    /// The wait-for-graph detector of deadlocks and storms.
    pub deadlock: Option<DeadlockConfig>,
    /// Per-flow accounting of PFC blocking and victims.
    pub victims: Option<VictimConfig>,
}

impl Default for PathologyConfig {
    fn default() -> Self {
        PathologyConfig {
            hop_limit: DEFAULT_HOP_LIMIT,
            hosts: Vec::new(),
            pfcwd: Vec::new(),
            routes: Vec::new(),
            events: Vec::new(),
            deadlock: None,
            victims: None,
        }
    }
}

impl PathologyConfig {
    /// Whether nothing of this module is in use (the report then has no pathology section).
    pub fn is_off(&self) -> bool {
        self.hosts.is_empty()
            && self.pfcwd.is_empty()
            && self.routes.is_empty()
            && self.events.is_empty()
            && self.deadlock.is_none()
            && self.victims.is_none()
    }
}

/// A host's receiver stalls and NIC storm prevention.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPathology {
    /// The host.
    pub node: NodeId,
    /// Spans during which its receive pipeline processes nothing: from, until (`None`:
    /// forever). Sorted, not overlapping.
    pub rx_stall: Vec<(Instant, Option<Instant>)>,
    /// mlx5 `pfc_prevention_tout` (80–8000 ms); `None` = off.
    pub pfc_prevention: Option<Duration>,
}

/// A static route: at `switch`, frames to host `dst` leave by the ports facing `via`.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticRoute {
    /// The switch.
    pub switch: NodeId,
    /// The destination host.
    pub dst: NodeId,
    /// Next-hop nodes; every port of `switch` facing one of them is a candidate (ECMP by
    /// flow hash, in port order).
    pub via: Vec<NodeId>,
    /// When the route is installed (`None`: from the start).
    pub at: Option<Instant>,
}

/// Something that happens to the topology at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyEvent {
    /// When.
    pub at: Instant,
    /// What.
    pub action: TopologyAction,
}

/// A change of the topology.
#[derive(Clone, Debug, PartialEq)]
pub enum TopologyAction {
    /// Every link between `a` and `b` goes down: frames on it, queued at its ports or routed
    /// to them are dropped (`link_down`); with `reroute`, every switch recomputes its
    /// shortest paths over the links still up (static routes whose next hops are all down
    /// fall back to them).
    LinkDown {
        /// One end.
        a: NodeId,
        /// The other.
        b: NodeId,
        /// Recompute routes.
        reroute: bool,
    },
    /// Every link between `a` and `b` comes back up (engines keep their state).
    LinkUp {
        /// One end.
        a: NodeId,
        /// The other.
        b: NodeId,
        /// Recompute routes.
        reroute: bool,
    },
    /// pfcwd's big red switch, on every switch running pfcwd.
    BigRedSwitch(bool),
    /// Installs the static routes whose `at` is this event's time (internal).
    InstallRoutes,
}

/// Settings of the deadlock and storm detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlockConfig {
    /// How often the wait-for graph is built.
    pub interval: Duration,
    /// How long a cycle (or a storm's blocked chain) must persist, with no member sending,
    /// before it is reported.
    pub threshold: Duration,
    /// End the run when a deadlock is reported (otherwise keep running to see whether
    /// something breaks it).
    pub stop: bool,
}

impl Default for DeadlockConfig {
    fn default() -> Self {
        DeadlockConfig {
            interval: Duration::from_us(100),
            threshold: Duration::from_ms(1),
            stop: true,
        }
    }
}

/// Settings of victim accounting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VictimConfig {
    /// A flow blocked off its own path for at least this fraction of its active time is a
    /// victim.
    pub min_blocked_ratio: f64,
}

impl Default for VictimConfig {
    fn default() -> Self {
        VictimConfig {
            min_blocked_ratio: 0.01,
        }
    }
}
