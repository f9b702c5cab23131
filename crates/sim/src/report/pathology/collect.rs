//! Collects the report's `pathology` section from a simulator at the end of a run, through
//! its read-only views (`sim/inspect.rs`): the hosts' stalls and storm prevention, the pfcwd
//! queues, the topology events, the detector's findings and verdict, the victims.

use lossless_proto::units::Instant;
use lossless_proto::watchdog::pfcwd::{Action, Rule};

use crate::config::traffic::{FlowSpec, frame_len};
use crate::event::EventQueue;
use crate::frame::{DropReason, PortId};
use crate::observer::Observer;
use crate::report::pathology::{
    FindingReport, FlowVictimReport, HopVictimReport, HostPathologyReport, PathologyReport, PfcwdQueueReport,
    PrioVictimReport, StormSpan, TopologyEventReport, VerdictReport, VictimsReport,
};
use crate::sim::{Event, Node, Simulator};
use crate::stats::FlowStats;

fn ps(t: Instant) -> u128 {
    t.as_ps()
}

impl PathologyReport {
    /// The section of `sim` at its current time, or `None` when the scenario uses none of
    /// the pathology parts; `throughput_bps` is each flow's throughput, in flow order (the
    /// victims' shortfall).
    pub(crate) fn collect<O: Observer, Q: EventQueue<Event>>(
        sim: &Simulator<O, Q>,
        throughput_bps: &[u64],
    ) -> Option<PathologyReport> {
        if sim.config.pathology.is_off() {
            return None;
        }
        let c = Collector {
            sim,
            flows: sim.flow_views().map(|(spec, stats, _)| (spec, stats)).collect(),
        };
        let hosts = c.hosts();
        let pfcwd = c.pfcwd();
        let events = c.events();
        let mut detector = c.findings();
        let verdict = detector
            .as_mut()
            .and_then(|found| c.verdict(found, &pfcwd, &hosts, &events));
        Some(PathologyReport {
            ended_by_deadlock_at_ps: sim.stopped_by_deadlock().map(ps),
            hosts,
            pfcwd,
            events,
            detector,
            verdict,
            victims: c.victims(throughput_bps),
        })
    }
}

/// The simulator being read and its flows, in flow order.
struct Collector<'a, O: Observer, Q: EventQueue<Event>> {
    sim: &'a Simulator<O, Q>,
    flows: Vec<(&'a FlowSpec, &'a FlowStats)>,
}

impl<O: Observer, Q: EventQueue<Event>> Collector<'_, O, Q> {
    /// A node's name.
    fn name(&self, node: u32) -> &str {
        &self.sim.config.nodes[node as usize].name
    }

    /// `node.local`, a port's short name.
    fn port_short(&self, p: PortId) -> String {
        let port = &self.sim.ports[p as usize];
        format!("{}.{}", self.name(port.node), port.local)
    }

    /// `node.local → peer`.
    fn port_long(&self, p: PortId) -> String {
        let port = &self.sim.ports[p as usize];
        let peer = self.sim.ports[port.peer as usize].node;
        format!("{} → {}", self.port_short(p), self.name(peer))
    }

    /// Whether node `n` is a host.
    fn is_host(&self, n: u32) -> bool {
        matches!(self.sim.nodes[n as usize], Node::Host(_))
    }

    /// The detector's scan interval, when one runs.
    fn scan_interval(&self) -> Option<lossless_proto::units::Duration> {
        self.sim.deadlock_detector().map(|d| d.cfg.interval)
    }

    /// Hosts with a receiver stall or storm prevention, in node order.
    fn hosts(&self) -> Vec<HostPathologyReport> {
        let mut hosts = Vec::new();
        for (i, n) in self.sim.nodes.iter().enumerate() {
            let Node::Host(h) = n else {
                continue;
            };
            // (the figures of its stall and prevention: here, or where the host ran)
            let Some(f) = self.sim.host_figures(i as u32) else {
                continue;
            };
            let port = &self.sim.ports[h.port as usize];
            hosts.push(HostPathologyReport {
                host: self.name(i as u32).to_string(),
                rx_stalled_ps: f.rx_stalled_ps,
                pfc_prevention_tout_ps: f.prevention_tout_ps,
                tx_pause_storm_warning_events_total: f.storm_warnings,
                tx_pause_storm_error_events_total: f.storm_errors,
                pause_stopped_at_ps: f.pause_stopped_at.iter().map(|&t| ps(t)).collect(),
                rx_dropped_frames: port
                    .counts()
                    .prio
                    .iter()
                    .map(|st| st.drops[DropReason::ReceiverOverflow.index()])
                    .sum(),
                pause_requested_ps: f.pause_requested_ps,
            });
        }
        hosts
    }

    /// The queues pfcwd watches, in switch and port order.
    fn pfcwd(&self) -> Vec<PfcwdQueueReport> {
        let interval = self.scan_interval();
        let mut pfcwd = Vec::new();
        for sw in self.sim.pfcwd_switches() {
            for q in &sw.queues {
                let port = &self.sim.ports[q.port as usize];
                let peer = self.sim.ports[port.peer as usize].node;
                pfcwd.push(PfcwdQueueReport {
                    switch: self.name(sw.node).to_string(),
                    port: port.local,
                    peer: self.name(peer).to_string(),
                    priority: q.prio,
                    action: match sw.cfg.action {
                        Action::Drop => "drop",
                        Action::Forward => "forward",
                        Action::Alert => "alert",
                    },
                    rule: match sw.cfg.rule {
                        Rule::Mellanox => "mellanox",
                        Rule::MellanoxLegacy => "mellanox_legacy",
                        Rule::Broadcom => "broadcom",
                    },
                    detection_time_ps: sw.cfg.detection.as_ps(),
                    restoration_time_ps: sw.cfg.restoration.as_ps(),
                    poll_interval_ps: sw.cfg.poll.as_ps(),
                    status: if q.stormed() { "stormed" } else { "operational" },
                    storms_detected_total: q.detected(),
                    storms_restored_total: q.restored(),
                    tx_dropped_frames: q.tx_dropped,
                    rx_dropped_frames: q.rx_dropped,
                    storms: q
                        .storms
                        .iter()
                        .map(|&(det, res, truth)| StormSpan {
                            detected_at_ps: ps(det),
                            restored_at_ps: res.map(ps),
                            blocked_since_ps: truth.map(ps),
                            confirmed: interval.map(|i| {
                                truth
                                    .is_some_and(|t| det.saturating_duration_since(t) + i >= sw.cfg.detection)
                            }),
                        })
                        .collect(),
                    missed_storms_total: interval.map(|_| q.missed),
                });
            }
        }
        pfcwd
    }

    /// The scripted topology events, as they happened.
    fn events(&self) -> Vec<TopologyEventReport> {
        self.sim
            .topology_log()
            .iter()
            .map(|e| TopologyEventReport {
                at_ps: ps(e.at),
                what: e.what.clone(),
            })
            .collect()
    }

    /// The detector's findings (what resolved them is filled in by [`Self::verdict`]), or
    /// `None` when no detector ran.
    fn findings(&self) -> Option<Vec<FindingReport>> {
        let d = self.sim.deadlock_detector()?;
        let name = |&(p, q): &(PortId, u8)| self.sim.queue_name(p, q);
        let found = d
            .findings
            .iter()
            .map(|f| FindingReport {
                kind: f.kind.name(),
                cycle: f.cycle.iter().map(name).collect(),
                sink: f.sink.map(|h| self.name(h).to_string()),
                members: f.members.iter().take(64).map(name).collect(),
                members_total: f.members.len() as u64,
                formed_at_ps: ps(f.formed_at),
                detected_at_ps: ps(f.detected_at),
                resolved_at_ps: f.resolved_at.map(ps),
                resolved_by: None,
                hosts_blocked: f
                    .members
                    .iter()
                    .map(|&(p, _)| self.sim.ports[p as usize].node)
                    .filter(|&n| self.is_host(n))
                    .map(|n| self.name(n).to_string())
                    .collect(),
                stuck_flows: f
                    .flows
                    .iter()
                    .map(|&fl| self.flows[fl as usize].0.name.clone())
                    .collect(),
                stuck_flows_total: f.flows_total as u64,
            })
            .collect();
        Some(found)
    }

    /// Fills in what resolved each of the detector's `found` (within the scan before its
    /// resolution) and gives the verdict; `None` when no detector ran.
    fn verdict(
        &self,
        found: &mut [FindingReport],
        pfcwd: &[PfcwdQueueReport],
        hosts: &[HostPathologyReport],
        events: &[TopologyEventReport],
    ) -> Option<VerdictReport> {
        let d = self.sim.deadlock_detector()?;
        let i = d.cfg.interval;
        for f in found.iter_mut() {
            f.resolved_by = f
                .resolved_at_ps
                .and_then(|r| self.resolved_by(f, r.saturating_sub(i.as_ps()), r, pfcwd, hosts, events));
        }
        Some(VerdictReport::new(found, d.cfg.threshold))
    }

    /// What acted in `[from, to]` that can have ended `f`: pfcwd declaring its members
    /// stormed (drop or forward), its sink's NIC storm prevention, its sink's receiver
    /// resuming, a topology event.
    fn resolved_by(
        &self,
        f: &FindingReport,
        from: u128,
        to: u128,
        pfcwd: &[PfcwdQueueReport],
        hosts: &[HostPathologyReport],
        events: &[TopologyEventReport],
    ) -> Option<String> {
        let within = |t: u128| from <= t && t <= to;
        let mut acts = Vec::new();
        let mut dropped: Vec<(String, &str)> = pfcwd
            .iter()
            .filter(|q| q.action != "alert")
            .filter(|q| q.storms.iter().any(|s| within(s.detected_at_ps)))
            .map(|q| (format!("{}.{}:{}", q.switch, q.port, q.priority), q.action))
            .filter(|(name, _)| f.members.contains(name) || f.cycle.contains(name))
            .collect();
        // the cycle (a storm's queue facing its sink) first: the drop that broke it
        dropped.sort_by_key(|(name, _)| !f.cycle.contains(name));
        if let Some(&(_, action)) = dropped.first() {
            let names: Vec<&str> = dropped.iter().take(4).map(|(n, _)| n.as_str()).collect();
            acts.push(format!(
                "pfcwd {action} on {}{}",
                names.join(", "),
                if dropped.len() > 4 {
                    format!(" and {} more", dropped.len() - 4)
                } else {
                    String::new()
                }
            ));
        }
        if let Some(sink) = &f.sink {
            if hosts
                .iter()
                .any(|h| &h.host == sink && h.pause_stopped_at_ps.iter().any(|&t| within(t)))
            {
                acts.push(format!("NIC storm prevention of {sink}"));
            }
            let resumed = self.sim.config.pathology.hosts.iter().any(|h| {
                self.name(h.node) == sink
                    && h.rx_stall
                        .iter()
                        .any(|(_, until)| until.is_some_and(|u| within(u.as_ps())))
            });
            if resumed {
                acts.push(format!("receiver of {sink} resumed"));
            }
        }
        for e in events.iter().filter(|e| within(e.at_ps)) {
            acts.push(e.what.clone());
        }
        (!acts.is_empty()).then(|| acts.join("; "))
    }

    /// Victims per flow and per priority, or `None` without victim accounting.
    fn victims(&self, throughput_bps: &[u64]) -> Option<VictimsReport> {
        let v = self.sim.victims()?;
        let slots = self.sim.victims_settled()?;
        let fair = self.fair_shares();
        let mut out = Vec::new();
        let mut prio = [(0u64, 0u64, 0u64); 8];
        for (f, &throughput) in throughput_bps.iter().enumerate() {
            let &(start, len) = v.flows.get(f).unwrap_or(&(0, 0));
            let (spec, stats) = self.flows[f];
            let mut hops = Vec::new();
            let (mut blocked, mut off) = (0u128, 0u128);
            let mut paused_by: Vec<String> = Vec::new();
            for i in start..start + len {
                let s = &slots[i as usize];
                blocked += s.blocked.as_ps();
                off += s.off_path.as_ps();
                let pauser = self.sim.ports[s.port as usize].peer;
                let pauser_node = self.sim.ports[pauser as usize].node;
                let pauser_name = if self.is_host(pauser_node) {
                    self.name(pauser_node).to_string()
                } else {
                    self.port_short(pauser)
                };
                if s.off_path.as_ps() > 0 && !paused_by.contains(&pauser_name) {
                    paused_by.push(pauser_name.clone());
                }
                hops.push(HopVictimReport {
                    egress: self.port_long(s.port),
                    blocked_ps: s.blocked.as_ps(),
                    off_path_blocked_ps: s.off_path.as_ps(),
                    paused_by: (s.blocked.as_ps() > 0).then_some(pauser_name),
                    off_path_cause: s.off_path_cause().map(|c| self.port_long(c)),
                });
            }
            let until = match (spec.size, stats.completed) {
                (Some(_), Some(c)) => c,
                _ => spec.stop.min(self.sim.now),
            };
            let active = until.saturating_duration_since(spec.start).as_ps();
            let ratio = if active == 0 {
                0.0
            } else {
                off as f64 / active as f64
            };
            let victim = off > 0 && ratio >= v.cfg.min_blocked_ratio;
            let share = fair.get(f).copied().flatten();
            let line = self.sim.ports[self.sim.host_port(spec.src) as usize].rate;
            let frame = frame_len(spec.mtu) as f64;
            let to_frame = frame / (frame + 20.0);
            let lost = share.map(|s| {
                let expect = s.min(spec.offered_bps(line)) * to_frame;
                if victim {
                    (expect - throughput as f64).max(0.0) as u64
                } else {
                    0
                }
            });
            let pr = &mut prio[spec.priority as usize & 7];
            pr.0 += 1;
            if victim {
                pr.1 += 1;
                pr.2 += lost.unwrap_or(0);
            }
            out.push(FlowVictimReport {
                flow: spec.name.clone(),
                priority: spec.priority,
                victim,
                blocked_ps: blocked,
                off_path_blocked_ps: off,
                off_path_blocked_ratio: ratio,
                paused_by,
                fair_share_bps: share.map(|s| (s * to_frame) as u64),
                throughput_lost_bps: lost,
                hops,
            });
        }
        Some(VictimsReport {
            min_blocked_ratio: v.cfg.min_blocked_ratio,
            flows: out,
            priorities: (0..8u8)
                .filter(|&p| prio[p as usize].0 > 0)
                .map(|p| {
                    let (n, vi, lost) = prio[p as usize];
                    PrioVictimReport {
                        priority: p,
                        flows_total: n,
                        victims_total: vi,
                        throughput_lost_bps: lost,
                    }
                })
                .collect(),
        })
    }

    /// Max-min fair shares (wire bits per second) of the scenario's fixed flows, all active
    /// at once, each capped by its offered load, over their egress ports at line rate
    /// (progressive filling). `None` for workload flows.
    fn fair_shares(&self) -> Vec<Option<f64>> {
        let Some(v) = self.sim.victims() else {
            return Vec::new();
        };
        let ports = &self.sim.ports;
        let fixed = self.sim.config.flows.len().min(self.flows.len());
        let demand: Vec<f64> = (0..fixed)
            .map(|f| {
                let spec = self.flows[f].0;
                spec.offered_bps(ports[self.sim.host_port(spec.src) as usize].rate)
            })
            .collect();
        let path = |f: usize| -> &[_] {
            let &(start, len) = v.flows.get(f).unwrap_or(&(0, 0));
            &v.slots[start as usize..(start + len) as usize]
        };
        let mut rate = vec![0.0f64; fixed];
        let mut frozen = vec![false; fixed];
        let mut cap: Vec<f64> = ports.iter().map(|p| p.rate.bps() as f64).collect();
        loop {
            // flows still growing on each port
            let mut users = vec![0u32; ports.len()];
            for f in (0..fixed).filter(|&f| !frozen[f]) {
                for s in path(f) {
                    users[s.port as usize] += 1;
                }
            }
            let mut inc = f64::INFINITY;
            for f in (0..fixed).filter(|&f| !frozen[f]) {
                inc = inc.min(demand[f] - rate[f]);
                for s in path(f) {
                    inc = inc.min(cap[s.port as usize] / f64::from(users[s.port as usize]));
                }
            }
            if !inc.is_finite() {
                break;
            }
            for f in (0..fixed).filter(|&f| !frozen[f]) {
                rate[f] += inc;
                for s in path(f) {
                    cap[s.port as usize] -= inc;
                }
            }
            let mut any = false;
            for f in 0..fixed {
                if frozen[f] {
                    continue;
                }
                let full = path(f)
                    .iter()
                    .any(|s| cap[s.port as usize] <= 1e-6 * ports[s.port as usize].rate.bps() as f64);
                if full || rate[f] >= demand[f] - 1e-6 {
                    frozen[f] = true;
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        (0..self.flows.len())
            .map(|f| (f < fixed).then(|| rate[f]))
            .collect()
    }
}
