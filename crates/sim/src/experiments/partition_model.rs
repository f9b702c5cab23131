//! What a conservative, windowed run of a fabric split into partitions would do, measured on a
//! sequential run (issue 22's model, before the partitioned engine exists): the partitions an
//! automatic partitioner gives, the lookahead of the cut links, the windows, the events each
//! partition handles in each window, and the critical path — the sum over windows of the
//! busiest partition's events, which bounds the speed-up whatever the barrier costs.
//!
//! The partitioner splits a fabric by tier: a switch's tier is its distance to the nearest
//! host; each first-tier switch (a ToR, a leaf) and its hosts form a group, every switch above
//! is a group of its own (in a fabric of one switch, every node is). Groups go, heaviest first,
//! to the least-loaded partition, weighed by the frames the run is expected to carry through
//! them (`expected_load`; by their ports when it offers no traffic known in advance).
//! Windows are those of a windowed barrier: a window starts at the first event at or after
//! the previous one's end and lasts one lookahead (the smallest propagation plus a 64-byte
//! frame's time over the cut links), so that nothing a partition sends in a window can arrive
//! before the window ends.

use std::collections::VecDeque;

use lossless_proto::units::{Duration, Instant};

use crate::config::model::{Framing, ModelConfig};
use crate::config::{LinkConfig, NodeKind, SimConfig};
use crate::frame::PortId;
use crate::observer::{Observer, WireFrame};
use crate::sim::order;

/// An assignment of a fabric's nodes to `parts` partitions.
#[derive(Clone, Debug)]
pub struct Partitioning {
    /// Partition of each node.
    pub of_node: Vec<u16>,
    /// Number of partitions.
    pub parts: u16,
    /// Group of each node (a first-tier switch with its hosts, or a switch alone): the
    /// fine-grained partitions that a load-adaptive scheduler would move between threads.
    pub group_of_node: Vec<u32>,
    /// Number of groups.
    pub groups: u32,
}

impl Partitioning {
    /// The partitioning that puts node `n` in partition `of_node[n]` (each node its own group).
    pub fn from_map(of_node: Vec<u16>) -> Partitioning {
        let parts = of_node.iter().copied().max().map_or(1, |m| m + 1);
        let groups = of_node.len() as u32;
        Partitioning {
            group_of_node: (0..groups).collect(),
            groups,
            of_node,
            parts,
        }
    }

    /// The tier-and-group partitioning of `config` into `parts` partitions (at least 1), its
    /// groups weighed by their expected frames (`expected_load::node_weights`).
    pub fn by_tier(config: &SimConfig, parts: u16) -> Partitioning {
        Partitioning::by_tier_weighted(
            config,
            parts,
            &crate::experiments::expected_load::node_weights(config),
        )
    }

    /// [`Partitioning::by_tier`] with each node's weight given (`weight[n]`; a missing one
    /// weighs nothing).
    pub fn by_tier_weighted(config: &SimConfig, parts: u16, weight: &[u64]) -> Partitioning {
        let parts = parts.max(1);
        let n = config.nodes.len();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for l in &config.links {
            adj[l.a as usize].push(l.b as usize);
            adj[l.b as usize].push(l.a as usize);
        }
        let is_host = |i: usize| matches!(config.nodes[i].kind, NodeKind::Host(_));
        // tier: distance to the nearest host
        let mut tier = vec![usize::MAX; n];
        let mut q: VecDeque<usize> = (0..n).filter(|&i| is_host(i)).collect();
        for &h in &q {
            tier[h] = 0;
        }
        while let Some(x) = q.pop_front() {
            for &y in &adj[x] {
                if tier[y] == usize::MAX {
                    tier[y] = tier[x] + 1;
                    q.push_back(y);
                }
            }
        }
        // groups: each first-tier switch (a ToR, a leaf) with its hosts, every switch above
        // alone; in a fabric of one tier (one switch), every node alone
        let one_tier = (0..n).all(|i| is_host(i) || tier[i] <= 1);
        let cut = |i: usize| !is_host(i) && (one_tier || tier[i] >= 2);
        let mut group = vec![usize::MAX; n];
        let mut weights: Vec<(u64, usize)> = Vec::new();
        for start in 0..n {
            if group[start] != usize::MAX {
                continue;
            }
            let g = weights.len();
            let mut w = 0u64;
            group[start] = g;
            let mut stack = vec![start];
            while let Some(x) = stack.pop() {
                w += weight.get(x).copied().unwrap_or(0);
                if cut(x) {
                    continue;
                }
                for &y in &adj[x] {
                    if group[y] == usize::MAX && !cut(y) {
                        group[y] = g;
                        stack.push(y);
                    }
                }
            }
            weights.push((w, g));
        }
        // heaviest first (ties: the group found first), each to the least-loaded partition
        let mut order: Vec<(u64, usize)> = weights.clone();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut load = vec![0u64; parts as usize];
        let mut part_of_group = vec![0u16; weights.len()];
        for (w, g) in order {
            let p = (0..parts as usize).min_by_key(|&p| (load[p], p)).unwrap_or(0);
            load[p] += w;
            part_of_group[g] = p as u16;
        }
        Partitioning {
            of_node: group.iter().map(|&g| part_of_group[g]).collect(),
            parts,
            group_of_node: group.iter().map(|&g| g as u32).collect(),
            groups: weights.len() as u32,
        }
    }
}

/// One partitioning's figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ModelFigures {
    /// Partitions.
    pub parts: u16,
    /// Links whose ends are in different partitions.
    pub cut_links: usize,
    /// The window: the smallest lookahead over the cut links, ps (0: no cut link).
    pub lookahead_ps: u128,
    /// Windows with at least one event.
    pub windows: u64,
    /// Events handled (the workloads' arrivals count once per partition: each runs them).
    pub events: u64,
    /// Sum over windows of the busiest partition's events.
    pub critical_events: u64,
    /// Groups (fine-grained partitions).
    pub groups: u32,
    /// Sum over windows of the busiest thread's events when each window's groups go to
    /// `parts` threads by the previous window's costs (largest first to the least loaded),
    /// as a load-adaptive scheduler of fine-grained partitions (UNISON's) would place them.
    pub critical_events_adaptive: u64,
    /// The partitions the engine splits into on `parts` threads
    /// (`parallel::auto_partitions`).
    pub engine_partitions: u16,
    /// Sum over windows of the busiest thread's events when those partitions go to `parts`
    /// threads as the engine places them (`parallel::Placer`, by the previous window's events,
    /// each partition running the workloads' arrivals).
    pub critical_events_engine: u64,
    /// Frames that crossed a cut link (messages between partitions).
    pub messages: u64,
    /// Events of each partition over the run.
    pub per_partition: Vec<u64>,
    /// Events of each group over the run (the workloads' arrivals not counted).
    pub per_group: Vec<u64>,
    /// The critical path in events if each partition waited only for the partitions it
    /// receives frames from, and only as far as their lookahead asks (channel clocks, no
    /// barrier), with [`CLOCK_SLICES`] slices a lookahead.
    pub critical_events_channels: u64,
}

impl ModelFigures {
    /// The speed-up if events cost the same everywhere and barriers cost nothing.
    pub fn ideal_speedup(&self) -> f64 {
        self.events as f64 / self.critical_events.max(1) as f64
    }

    /// The speed-up with `event_ns` per event and `barrier_ns` per window.
    pub fn predicted_speedup(&self, event_ns: f64, barrier_ns: f64) -> f64 {
        let seq = self.events as f64 * event_ns;
        seq / (self.critical_events as f64 * event_ns + self.windows as f64 * barrier_ns)
    }

    /// [`ModelFigures::ideal_speedup`] with groups placed per window by the previous one's cost.
    pub fn ideal_speedup_adaptive(&self) -> f64 {
        self.events as f64 / self.critical_events_adaptive.max(1) as f64
    }

    /// [`ModelFigures::ideal_speedup`] of the engine's default: its partitions placed per
    /// window by the previous one's events.
    pub fn ideal_speedup_engine(&self) -> f64 {
        self.events as f64 / self.critical_events_engine.max(1) as f64
    }

    /// [`ModelFigures::ideal_speedup`] with channel clocks instead of windows.
    pub fn ideal_speedup_channels(&self) -> f64 {
        self.events as f64 / self.critical_events_channels.max(1) as f64
    }
}

/// Slices of a lookahead in the channel-clock model ([`ModelFigures::critical_events_channels`]).
pub const CLOCK_SLICES: usize = 8;

/// The critical path of a run whose partitions synchronise by channel clocks (each publishes
/// how far it has run, and runs on as far as the partitions that send to it allow: their
/// clocks plus the lookahead of the links between) instead of windows at a barrier. Time is
/// cut into slices of a [`CLOCK_SLICES`]th of the lookahead: partition `p` finishes slice `s`
/// at `F(p, s) = max(F(p, s − 1), max over its senders q of F(q, s − CLOCK_SLICES)) + c(p, s)`,
/// in events, where `c` is its events in the slice. A windowed barrier is the same with one
/// slice a window and every partition a sender of every other: there a window's busiest
/// partition holds back all; here only those downstream of it, one lookahead later, so that
/// a partition's burst is absorbed while its neighbours have slack.
#[derive(Debug)]
struct ChannelClocks {
    /// The partitions each partition receives frames from.
    senders: Vec<Vec<u16>>,
    slice_ps: u128,
    /// The slice being counted, and each partition's events in it.
    slice: Option<u128>,
    cost: Vec<u64>,
    /// Finish times of the last [`CLOCK_SLICES`] slices, the latest first.
    finish: VecDeque<Vec<u64>>,
    /// Scratch: the oldest slice's finish times while the newest's are computed.
    oldest: Vec<u64>,
}

impl ChannelClocks {
    fn new(senders: Vec<Vec<u16>>, lookahead_ps: u128) -> ChannelClocks {
        let parts = senders.len();
        ChannelClocks {
            slice_ps: (lookahead_ps / CLOCK_SLICES as u128).max(1),
            slice: None,
            cost: vec![0; parts],
            finish: (0..CLOCK_SLICES).map(|_| vec![0; parts]).collect(),
            oldest: vec![0; parts],
            senders,
        }
    }

    /// Closes the current slice (the oldest slice's buffer holds the newest's).
    fn step(&mut self) {
        let Some(mut next) = self.finish.pop_back() else {
            return;
        };
        std::mem::swap(&mut next, &mut self.oldest);
        let latest = &self.finish[0];
        for (p, f) in next.iter_mut().enumerate() {
            let waits = self.senders[p]
                .iter()
                .map(|&q| self.oldest[usize::from(q)])
                .max()
                .unwrap_or(0);
            *f = latest[p].max(waits) + self.cost[p];
        }
        self.finish.push_front(next);
        self.cost.iter_mut().for_each(|c| *c = 0);
    }

    /// Counts one event of partition `p` (every partition's with `None`) at `at` ps.
    fn event(&mut self, at: u128, p: Option<u16>) {
        let slice = at / self.slice_ps;
        let cur = *self.slice.get_or_insert(slice);
        if slice > cur {
            // empty slices only pass finish times on: after a path's length of lookaheads
            // through every partition nothing changes any more
            let settle = (CLOCK_SLICES * (self.cost.len() + 2)) as u128;
            for _ in 0..(slice - cur).min(settle) {
                self.step();
            }
            self.slice = Some(slice);
        }
        match p {
            Some(p) => self.cost[usize::from(p)] += 1,
            None => self.cost.iter_mut().for_each(|c| *c += 1),
        }
    }

    /// The critical path so far, closing the current slice.
    fn finish(&mut self) -> u64 {
        if self.slice.take().is_some() {
            self.step();
        }
        self.finish[0].iter().copied().max().unwrap_or(0)
    }
}

/// The state of one partitioning while the run goes.
#[derive(Debug)]
struct Tracker {
    part: Partitioning,
    /// Partition of each port's node, and of its peer's.
    port_part: Vec<(u16, u16)>,
    lookahead: u128,
    window_end: Option<u128>,
    in_window: Vec<u64>,
    /// Events of each group in this window, and in the previous one.
    group_now: Vec<u64>,
    group_prev: Vec<u64>,
    /// Events every thread runs in this window (the workloads' arrivals).
    replicated_now: u64,
    /// Scratch: groups in placement order, threads' loads.
    order: Vec<u32>,
    threads: Vec<u64>,
    /// The engine's partitions: each node's, and each one's events in this window and the
    /// one before, its thread, and their placer.
    engine_of_node: Vec<u16>,
    engine_now: Vec<u64>,
    engine_prev: Vec<u64>,
    engine_thread: Vec<u16>,
    placer: crate::experiments::parallel::Placer,
    /// The same partitions on channel clocks.
    clocks: ChannelClocks,
    fig: ModelFigures,
}

impl Tracker {
    fn new(config: &SimConfig, part: Partitioning) -> Tracker {
        let mut port_part = Vec::with_capacity(2 * config.links.len());
        let mut lookahead = u128::MAX;
        let mut cut_links = 0;
        let parts = part.parts as usize;
        let mut senders: Vec<Vec<u16>> = vec![Vec::new(); parts];
        for l in &config.links {
            let (pa, pb) = (part.of_node[l.a as usize], part.of_node[l.b as usize]);
            // port 2·i is end a of link i, 2·i + 1 its end b
            port_part.push((pa, pb));
            port_part.push((pb, pa));
            if pa != pb {
                cut_links += 1;
                lookahead = lookahead.min(cut_lookahead(&config.model, l).as_ps());
                for (to, from) in [(pa, pb), (pb, pa)] {
                    if !senders[usize::from(to)].contains(&from) {
                        senders[usize::from(to)].push(from);
                    }
                }
            }
        }
        let engine = Partitioning::by_tier(config, crate::experiments::parallel::auto_partitions(part.parts));
        let units = usize::from(engine.parts);
        Tracker {
            engine_of_node: engine.of_node,
            engine_now: vec![0; units],
            engine_prev: vec![0; units],
            engine_thread: (0..units).map(|u| (u % parts) as u16).collect(),
            placer: Default::default(),
            clocks: ChannelClocks::new(senders, if cut_links == 0 { u128::MAX } else { lookahead }),
            fig: ModelFigures {
                parts: part.parts,
                cut_links,
                lookahead_ps: if cut_links == 0 { 0 } else { lookahead },
                windows: 0,
                events: 0,
                critical_events: 0,
                messages: 0,
                per_partition: vec![0; parts],
                groups: part.groups,
                critical_events_adaptive: 0,
                engine_partitions: units as u16,
                critical_events_engine: 0,
                critical_events_channels: 0,
                per_group: vec![0; part.groups as usize],
            },
            group_now: vec![0; part.groups as usize],
            group_prev: vec![0; part.groups as usize],
            replicated_now: 0,
            order: (0..part.groups).collect(),
            threads: vec![0; parts],
            part,
            port_part,
            lookahead: if cut_links == 0 { u128::MAX } else { lookahead },
            window_end: None,
            in_window: vec![0; parts],
        }
    }

    fn close_window(&mut self) {
        if self.window_end.take().is_some() {
            self.fig.windows += 1;
            self.fig.critical_events += self.in_window.iter().copied().max().unwrap_or(0);
            for (t, c) in self.fig.per_partition.iter_mut().zip(&mut self.in_window) {
                *t += *c;
                *c = 0;
            }
            // place groups by last window's cost, measure with this window's
            let prev = &self.group_prev;
            self.order
                .sort_by(|&a, &b| prev[b as usize].cmp(&prev[a as usize]).then(a.cmp(&b)));
            let replicated = std::mem::take(&mut self.replicated_now);
            // the engine: its partitions placed by last window's events, each running the
            // workloads' arrivals
            self.placer
                .place_sticky(&self.engine_prev, self.threads.len(), &mut self.engine_thread);
            self.threads.iter_mut().for_each(|t| *t = 0);
            for (u, &t) in self.engine_thread.iter().enumerate() {
                self.engine_now[u] += replicated;
                self.threads[usize::from(t)] += self.engine_now[u];
            }
            self.fig.critical_events_engine += self.threads.iter().copied().max().unwrap_or(0);
            std::mem::swap(&mut self.engine_now, &mut self.engine_prev);
            self.engine_now.iter_mut().for_each(|c| *c = 0);
            self.threads.iter_mut().for_each(|t| *t = replicated);
            let mut planned = vec![0u64; self.threads.len()];
            for &g in &self.order {
                let t = (0..planned.len()).min_by_key(|&t| (planned[t], t)).unwrap_or(0);
                planned[t] += prev[g as usize];
                self.threads[t] += self.group_now[g as usize];
            }
            self.fig.critical_events_adaptive += self.threads.iter().copied().max().unwrap_or(0);
            std::mem::swap(&mut self.group_now, &mut self.group_prev);
            self.group_now.iter_mut().for_each(|c| *c = 0);
        }
    }

    fn event(&mut self, at: u128, scheduler: u32) {
        if self.window_end.is_some_and(|e| at >= e) {
            self.close_window();
        }
        if self.window_end.is_none() {
            self.window_end = Some(at.saturating_add(self.lookahead));
        }
        match order::scheduler_node(scheduler) {
            Some(n) => {
                self.clocks.event(at, Some(self.part.of_node[n as usize]));
                self.in_window[self.part.of_node[n as usize] as usize] += 1;
                self.group_now[self.part.group_of_node[n as usize] as usize] += 1;
                self.fig.per_group[self.part.group_of_node[n as usize] as usize] += 1;
                self.engine_now[self.engine_of_node[n as usize] as usize] += 1;
                self.fig.events += 1;
            }
            None if scheduler == order::WORKLOADS => {
                // every partition runs every workload's arrivals (their flow ids agree)
                for c in &mut self.in_window {
                    *c += 1;
                }
                self.clocks.event(at, None);
                self.replicated_now += 1;
                self.fig.events += u64::from(self.part.parts);
            }
            None => {
                self.clocks.event(at, Some(0));
                self.in_window[0] += 1;
                self.group_now[0] += 1;
                self.engine_now[0] += 1;
                self.fig.events += 1;
            }
        }
    }
}

/// How far ahead a partition may run of a frame that crosses link `l`: its propagation plus the
/// shortest frame's time on the wire under `model`'s framing.
///
/// Under 802.3 framing no frame is shorter than 64 bytes. The ns-3 framing has no minimum (an
/// ACK is 60 bytes, and a frame takes one nanosecond less than its time rounded up: 4 ns at
/// 100 Gb/s, where 64 bytes take 5.12), so there only the propagation is certain.
pub fn cut_lookahead(model: &ModelConfig, l: &LinkConfig) -> Duration {
    match model.framing {
        Framing::Ieee8023 => l.propagation() + l.rate.time_for_bits(64 * 8),
        Framing::Ns3 => l.propagation(),
    }
}

/// An observer that measures the model for several partitionings in one run.
#[derive(Debug)]
pub struct PartitionModel {
    trackers: Vec<Tracker>,
}

impl PartitionModel {
    /// The model of `config` split into each of `parts` partitions.
    pub fn new(config: &SimConfig, parts: &[u16]) -> PartitionModel {
        PartitionModel {
            trackers: parts
                .iter()
                .map(|&k| Tracker::new(config, Partitioning::by_tier(config, k)))
                .collect(),
        }
    }

    /// The figures, once the run is over.
    pub fn finish(mut self) -> Vec<ModelFigures> {
        for t in &mut self.trackers {
            t.close_window();
            t.fig.critical_events_channels = t.clocks.finish();
        }
        self.trackers.into_iter().map(|t| t.fig).collect()
    }
}

impl Observer for PartitionModel {
    const BUFFER_STATE: bool = false;

    fn tx_start(&mut self, port: PortId, _frame: &WireFrame, _start: Instant, _last_bit: Instant) {
        for t in &mut self.trackers {
            if let Some(&(a, b)) = t.port_part.get(port as usize)
                && a != b
            {
                t.fig.messages += 1;
            }
        }
    }

    fn event_handled(&mut self, at: Instant, scheduler: u32) {
        for t in &mut self.trackers {
            t.event(at.as_ps(), scheduler);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario;

    /// The nodes partition `p` holds.
    fn nodes_of(part: &Partitioning, p: u16) -> Vec<crate::frame::NodeId> {
        (0..part.of_node.len() as crate::frame::NodeId)
            .filter(|&n| part.of_node[n as usize] == p)
            .collect()
    }

    #[test]
    fn a_leaf_spine_splits_between_switches_never_between_a_host_and_its_leaf() {
        let cfg = scenario::load("storm", &Default::default()).expect("built-in");
        let p = Partitioning::by_tier(&cfg, 2);
        // every host sits in its edge switch's partition: only switch-to-switch links are cut
        for l in &cfg.links {
            let host_end = [l.a, l.b]
                .into_iter()
                .any(|n| matches!(cfg.nodes[n as usize].kind, NodeKind::Host(_)));
            if host_end {
                assert_eq!(p.of_node[l.a as usize], p.of_node[l.b as usize]);
            }
        }
        // both partitions get nodes
        let sizes: Vec<usize> = (0..2).map(|i| nodes_of(&p, i).len()).collect();
        assert!(sizes.iter().all(|&s| s > 0), "{sizes:?}");
    }

    #[test]
    fn one_partition_is_the_sequential_run_and_its_critical_path_is_every_event() {
        let cfg = scenario::load("four-bridge", &Default::default()).expect("built-in");
        let mut sim =
            crate::Simulator::with_observer(cfg.clone(), PartitionModel::new(&cfg, &[1, 2])).expect("builds");
        sim.run();
        let events = sim.events();
        let figs = std::mem::replace(sim.observer_mut(), PartitionModel { trackers: Vec::new() }).finish();
        assert_eq!(figs[0].cut_links, 0);
        assert_eq!(figs[0].critical_events, figs[0].events);
        assert_eq!(figs[0].events, events);
        // two partitions: a cut, a positive lookahead, frames crossing it, and a critical path
        // between half the events and all of them
        let two = &figs[1];
        assert!(
            two.cut_links > 0 && two.lookahead_ps > 0 && two.messages > 0,
            "{two:?}"
        );
        assert!(
            two.critical_events < two.events && 2 * two.critical_events >= two.events,
            "{two:?}"
        );
        assert_eq!(two.per_partition.iter().sum::<u64>(), two.events);
        // one thread: the adaptive placement is the sequential run too, and so is the engine's
        assert_eq!(figs[0].critical_events_adaptive, figs[0].events);
        assert_eq!(figs[0].critical_events_engine, figs[0].events);
        assert!(two.critical_events_engine <= two.events);
        assert!(two.critical_events_adaptive <= two.events);
        // channel clocks: on one partition every event, on two at least the busier one's
        assert_eq!(figs[0].critical_events_channels, figs[0].events);
        let busier = two.per_partition.iter().copied().max().unwrap_or(0);
        assert!(
            two.critical_events_channels >= busier && two.critical_events_channels < two.events,
            "{two:?}"
        );
    }
}
