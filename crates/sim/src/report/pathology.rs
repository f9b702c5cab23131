//! The report's `pathology` section (present only when the scenario uses a part of
//! [`crate::config::pathology`]): receiver stalls and NIC storm prevention per host, pfcwd per
//! watched queue, topology events, the detector's deadlocks and storms, victims per flow and
//! per priority. Every figure names its unit in its key.

mod collect;

use std::fmt::Write as _;

use lossless_proto::units::Duration;
use serde::Serialize;

/// Everything the pathology parts measured.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PathologyReport {
    /// When the detector ended the run on a deadlock (`[deadlock] stop`), if it did.
    pub ended_by_deadlock_at_ps: Option<u128>,
    /// Hosts with a receiver stall or storm prevention.
    pub hosts: Vec<HostPathologyReport>,
    /// Queues watched by pfcwd, in switch and port order.
    pub pfcwd: Vec<PfcwdQueueReport>,
    /// Scripted topology events, as they happened.
    pub events: Vec<TopologyEventReport>,
    /// The detector's findings (`None`: no `[deadlock]` detector ran).
    pub detector: Option<Vec<FindingReport>>,
    /// The detector's verdict on the run (`None`: no `[deadlock]` detector ran).
    pub verdict: Option<VerdictReport>,
    /// Victim accounting (`None`: no `[victims]`).
    pub victims: Option<VictimsReport>,
}

/// A host's receiver stalls and storm prevention.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostPathologyReport {
    /// The host.
    pub host: String,
    /// Time its receiver was stalled.
    pub rx_stalled_ps: u128,
    /// Its mlx5 `pfc_prevention_tout` (`None`: off).
    pub pfc_prevention_tout_ps: Option<u128>,
    /// mlx5 `tx_pause_storm_warning_events`.
    pub tx_pause_storm_warning_events_total: u64,
    /// mlx5 `tx_pause_storm_error_events`.
    pub tx_pause_storm_error_events_total: u64,
    /// When prevention stopped the NIC's pause, each time.
    pub pause_stopped_at_ps: Vec<u128>,
    /// Frames its full receive buffer dropped.
    pub rx_dropped_frames: u64,
    /// Time its NIC requested pause (any priority; PAUSE: the link).
    pub pause_requested_ps: u128,
}

/// One storm of a pfcwd queue.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StormSpan {
    /// When pfcwd declared it.
    pub detected_at_ps: u128,
    /// When pfcwd restored the queue (`None`: still stormed at the end).
    pub restored_at_ps: Option<u128>,
    /// Since when the detector saw the queue blocked without a break, when it runs (its
    /// ground truth, to within one scan).
    pub blocked_since_ps: Option<u128>,
    /// With the detector: whether the queue had really been blocked for the detection time
    /// (to within one scan) when pfcwd declared the storm; `false` is a false positive.
    pub confirmed: Option<bool>,
}

/// One queue pfcwd watched.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PfcwdQueueReport {
    /// The switch.
    pub switch: String,
    /// Its port index.
    pub port: u32,
    /// The node at the other end.
    pub peer: String,
    /// The lossless priority.
    pub priority: u8,
    /// drop, forward or alert.
    pub action: &'static str,
    /// The detection plugin: mellanox, mellanox_legacy or broadcom.
    pub rule: &'static str,
    /// Detection time.
    pub detection_time_ps: u128,
    /// Restoration time.
    pub restoration_time_ps: u128,
    /// Poll interval.
    pub poll_interval_ps: u128,
    /// `PFC_WD_STATUS` at the end: operational or stormed.
    pub status: &'static str,
    /// `PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED` (SONiC counts storms as "deadlocks").
    pub storms_detected_total: u64,
    /// `PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED`.
    pub storms_restored_total: u64,
    /// `PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS`: frames dropped at egress while stormed.
    pub tx_dropped_frames: u64,
    /// `PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS`: frames dropped at ingress while stormed.
    pub rx_dropped_frames: u64,
    /// Each storm.
    pub storms: Vec<StormSpan>,
    /// With the detector: times the queue stayed blocked for detection + poll without being
    /// declared stormed (false negatives; `None` without the detector).
    pub missed_storms_total: Option<u64>,
}

/// A topology event.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TopologyEventReport {
    /// When.
    pub at_ps: u128,
    /// What happened.
    pub what: String,
}

/// A deadlock or storm the detector found.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FindingReport {
    /// `deadlock` (a cycle of blocked queues) or `storm` (blocked queues leading to a host
    /// that keeps pausing).
    pub kind: &'static str,
    /// Deadlock: the cycle, `switch.port:prio` each waiting for the next (and the last for
    /// the first). Storm: the queue facing the sink.
    pub cycle: Vec<String>,
    /// Storm: the host that keeps pausing.
    pub sink: Option<String>,
    /// Every blocked queue of the deadlock's component, or leading to the storm's sink (at
    /// most 64 named).
    pub members: Vec<String>,
    /// How many members.
    pub members_total: u64,
    /// When it formed (the first scan that saw it, less one scan interval).
    pub formed_at_ps: u128,
    /// When it was reported (it had persisted for the threshold).
    pub detected_at_ps: u128,
    /// When it went away, if it did.
    pub resolved_at_ps: Option<u128>,
    /// What acted in the scan interval before it went away, if something did: `pfcwd drop
    /// on switch.port:prio, …` (pfcwd declared members stormed, action drop or forward),
    /// `NIC storm prevention of host`, `receiver of host resumed`, or a topology event.
    pub resolved_by: Option<String>,
    /// Hosts whose NIC queue is a member: servers paused by the storm or the deadlock.
    pub hosts_blocked: Vec<String>,
    /// Flows with frames stuck in the members when found (at most 64 named).
    pub stuck_flows: Vec<String>,
    /// How many flows.
    pub stuck_flows_total: u64,
}

/// The detector's verdict: whether the run deadlocked or stormed, and how it ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VerdictReport {
    /// `deadlock`, `storm`, `deadlock and storm`, or `none`.
    pub kind: &'static str,
    /// Deadlocks found.
    pub deadlocks_total: u64,
    /// Storms found.
    pub storms_total: u64,
    /// Findings still there when the run ended.
    pub unresolved_total: u64,
    /// The verdict in words, as the summary prints it.
    pub text: String,
}

impl VerdictReport {
    /// The verdict on `findings`, for a detector reporting what persists for `threshold`.
    pub fn new(findings: &[FindingReport], threshold: Duration) -> Self {
        let dl: Vec<&FindingReport> = findings.iter().filter(|f| f.kind == "deadlock").collect();
        let st: Vec<&FindingReport> = findings.iter().filter(|f| f.kind == "storm").collect();
        let kind = match (dl.is_empty(), st.is_empty()) {
            (true, true) => "none",
            (false, true) => "deadlock",
            (true, false) => "storm",
            (false, false) => "deadlock and storm",
        };
        let ending = |f: &FindingReport| match (f.resolved_at_ps, &f.resolved_by) {
            (None, _) => "still there when the run ended".to_string(),
            (Some(t), Some(by)) => format!("gone at {} ({by})", d(t)),
            (Some(t), None) => format!("gone at {} (drained)", d(t)),
        };
        let mut parts = Vec::new();
        if let Some(first) = dl.first() {
            parts.push(format!(
                "DEADLOCK: {} found; the first, cycle {} formed at {}, {}",
                if dl.len() == 1 {
                    "1 cycle".to_string()
                } else {
                    format!("{} cycles", dl.len())
                },
                first.cycle.join(" → "),
                d(first.formed_at_ps),
                ending(first)
            ));
        }
        for f in &st {
            parts.push(format!(
                "STORM from {}: formed at {}, {} queues blocked{}, {}",
                f.sink.as_deref().unwrap_or("?"),
                d(f.formed_at_ps),
                f.members_total,
                if f.hosts_blocked.is_empty() {
                    String::new()
                } else {
                    format!(" (the NICs of {} hosts among them)", f.hosts_blocked.len())
                },
                ending(f)
            ));
        }
        if parts.is_empty() {
            parts.push(format!(
                "no deadlock and no storm (nothing stayed blocked for {})",
                threshold
            ));
        }
        VerdictReport {
            kind,
            deadlocks_total: dl.len() as u64,
            storms_total: st.len() as u64,
            unresolved_total: findings.iter().filter(|f| f.resolved_at_ps.is_none()).count() as u64,
            text: parts.join("; "),
        }
    }
}

/// Victim accounting.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VictimsReport {
    /// A flow blocked off its path for at least this fraction of its active time is a
    /// victim.
    pub min_blocked_ratio: f64,
    /// Per flow.
    pub flows: Vec<FlowVictimReport>,
    /// Per priority with flows.
    pub priorities: Vec<PrioVictimReport>,
}

/// One flow's blocking.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowVictimReport {
    /// The flow.
    pub flow: String,
    /// Its priority.
    pub priority: u8,
    /// Blocked off its own path for at least the ratio: slowed by pauses it did not cause.
    pub victim: bool,
    /// Time some hop of its path was paused while holding a frame of it (summed over hops).
    pub blocked_ps: u128,
    /// Of that, time the pause came from congestion off its path.
    pub off_path_blocked_ps: u128,
    /// `off_path_blocked_ps` over the flow's active time.
    pub off_path_blocked_ratio: f64,
    /// The ports whose pauses blocked it off its path (`switch.port`).
    pub paused_by: Vec<String>,
    /// Its max-min fair share with no PFC (fixed flows only: every `[[flow]]` active at
    /// once, each capped by its offered load, links at their line rate), in frame bits.
    pub fair_share_bps: Option<u64>,
    /// Victims: its fair share (or offered load, if less) minus its throughput, at least 0.
    pub throughput_lost_bps: Option<u64>,
    /// Per hop of its path, from its source NIC.
    pub hops: Vec<HopVictimReport>,
}

/// One hop of a flow's path.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HopVictimReport {
    /// The egress, `node.port → peer`.
    pub egress: String,
    /// Time this queue was paused while holding a frame of the flow.
    pub blocked_ps: u128,
    /// Of that, time whose pause was caused off the flow's path.
    pub off_path_blocked_ps: u128,
    /// The port that sent the pauses (`switch.port`, or the host), when the hop was blocked.
    pub paused_by: Option<String>,
    /// The congested egress behind the last off-path pause (`switch.port → peer`).
    pub off_path_cause: Option<String>,
}

/// Victims of one priority.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PrioVictimReport {
    /// The priority.
    pub priority: u8,
    /// Flows of the priority.
    pub flows_total: u64,
    /// Of them, victims.
    pub victims_total: u64,
    /// Throughput the victims lost (sum of `throughput_lost_bps`).
    pub throughput_lost_bps: u64,
}

fn d(ps: u128) -> String {
    Duration::from_ps(ps).to_string()
}

impl PathologyReport {
    /// The summary lines of this section.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        self.summary_run(&mut s);
        self.summary_hosts(&mut s);
        self.summary_pfcwd(&mut s);
        self.summary_detector(&mut s);
        self.summary_victims(&mut s);
        s
    }

    /// How the run ended, the verdict, the topology events.
    fn summary_run(&self, s: &mut String) {
        if let Some(t) = self.ended_by_deadlock_at_ps {
            let _ = writeln!(s, "RUN ENDED BY THE DEADLOCK DETECTOR at {}", d(t));
        }
        if let Some(v) = &self.verdict {
            let _ = writeln!(s, "verdict: {}", v.text);
        }
        for e in &self.events {
            let _ = writeln!(s, "event at {}: {}", d(e.at_ps), e.what);
        }
    }

    /// A line per host with a stall or storm prevention.
    fn summary_hosts(&self, s: &mut String) {
        for h in &self.hosts {
            let _ = writeln!(
                s,
                "host {:<12} rx stalled {}, pause requested {}, rx drops {}{}",
                h.host,
                d(h.rx_stalled_ps),
                d(h.pause_requested_ps),
                h.rx_dropped_frames,
                match h.pfc_prevention_tout_ps {
                    Some(t) => format!(
                        "; pfc_prevention_tout {}: tx_pause_storm_warning_events {}, tx_pause_storm_error_events {}{}",
                        d(t),
                        h.tx_pause_storm_warning_events_total,
                        h.tx_pause_storm_error_events_total,
                        match h.pause_stopped_at_ps.first() {
                            Some(&t) => format!(", pause stopped at {}", d(t)),
                            None => String::new(),
                        }
                    ),
                    None => String::new(),
                }
            );
        }
    }

    /// The watched queues, and a line per queue that stormed.
    fn summary_pfcwd(&self, s: &mut String) {
        let stormed: Vec<&PfcwdQueueReport> = self
            .pfcwd
            .iter()
            .filter(|q| q.storms_detected_total > 0 || q.status == "stormed")
            .collect();
        if !self.pfcwd.is_empty() {
            let _ = writeln!(
                s,
                "pfcwd: {} queues watched, {} stormed{}",
                self.pfcwd.len(),
                stormed.len(),
                if stormed.is_empty() { "" } else { ":" }
            );
        }
        for q in stormed {
            let spans: Vec<String> = q
                .storms
                .iter()
                .map(|st| {
                    format!(
                        "{}–{}",
                        d(st.detected_at_ps),
                        st.restored_at_ps.map_or("…".into(), d)
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "  {}.{}:{} → {} ({} {}): storms {} [{}], dropped tx {} rx {}, now {}",
                q.switch,
                q.port,
                q.priority,
                q.peer,
                q.action,
                q.rule,
                q.storms_detected_total,
                spans.join(", "),
                q.tx_dropped_frames,
                q.rx_dropped_frames,
                q.status
            );
        }
    }

    /// A line per finding of the detector.
    fn summary_detector(&self, s: &mut String) {
        if let Some(found) = &self.detector {
            if found.is_empty() {
                let _ = writeln!(s, "detector: no deadlock, no storm");
            }
            for f in found {
                let what = match (f.kind, &f.sink) {
                    ("storm", Some(h)) => format!("STORM from {h} ({} queues blocked)", f.members_total),
                    _ => format!("DEADLOCK cycle {}", f.cycle.join(" → ")),
                };
                let _ = writeln!(
                    s,
                    "detector: {what}; formed {}, found {}, {}; {} flows stuck{}",
                    d(f.formed_at_ps),
                    d(f.detected_at_ps),
                    match (f.resolved_at_ps, &f.resolved_by) {
                        (None, _) => "still there at the end".into(),
                        (Some(t), Some(by)) => format!("gone at {} ({by})", d(t)),
                        (Some(t), None) => format!("gone at {}", d(t)),
                    },
                    f.stuck_flows_total,
                    if f.stuck_flows.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " ({})",
                            f.stuck_flows
                                .iter()
                                .take(8)
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                );
            }
        }
    }

    /// The victims table (flows held by PFC, the victims' hops), then per priority.
    fn summary_victims(&self, s: &mut String) {
        if let Some(v) = &self.victims {
            let _ = writeln!(
                s,
                "{:<20} {:>3} {:>6} {:>12} {:>12} {:>9}  paused by",
                "victims: flow", "pri", "victim", "Σ blocked", "Σ off path", "lost Gb/s"
            );
            let _ = writeln!(
                s,
                "(Σ blocked, Σ off path: time the flow's frames were held by PFC, summed over the hops of its path, so it may exceed the run; each hop below)"
            );
            for f in v.flows.iter().filter(|f| f.blocked_ps > 0).take(40) {
                let _ = writeln!(
                    s,
                    "{:<20} {:>3} {:>6} {:>12} {:>12} {:>9}  {}",
                    f.flow,
                    f.priority,
                    if f.victim { "yes" } else { "no" },
                    d(f.blocked_ps),
                    d(f.off_path_blocked_ps),
                    f.throughput_lost_bps
                        .map_or("-".into(), |b| format!("{:.3}", b as f64 / 1e9)),
                    f.paused_by.join(" ")
                );
                if f.victim {
                    for h in f.hops.iter().filter(|h| h.blocked_ps > 0) {
                        let _ = writeln!(
                            s,
                            "    at {}: blocked {}, off path {}{}{}",
                            h.egress,
                            d(h.blocked_ps),
                            d(h.off_path_blocked_ps),
                            h.paused_by
                                .as_ref()
                                .map_or(String::new(), |p| format!(", paused by {p}")),
                            h.off_path_cause
                                .as_ref()
                                .map_or(String::new(), |c| format!(" for {c}"))
                        );
                    }
                }
            }
            for p in &v.priorities {
                let _ = writeln!(
                    s,
                    "victims of priority {}: {} of {} flows, {:.3} Gb/s lost",
                    p.priority,
                    p.victims_total,
                    p.flows_total,
                    p.throughput_lost_bps as f64 / 1e9
                );
            }
        }
    }
}
