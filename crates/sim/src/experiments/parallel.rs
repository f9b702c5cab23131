//! One fabric on several threads (issue 22): partitions of the automatic tier-and-group
//! partitioning (`partition_model.rs`) run in conservative windows — each window lasts the
//! smallest lookahead of the cut links (propagation plus a 64-byte frame's time), so that no
//! frame sent in a window arrives before it ends — with two barriers a window: one to agree
//! on where the window starts (the earliest pending event of all), one before the frames that
//! crossed a cut link are taken in, each partition's in the order it sent them. The partitions merge back into one simulator, whose report is the sequential run's,
//! byte for byte (the order of simultaneous events does not depend on the split: `sim/order.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError, RwLock};

use lossless_proto::units::{Duration, Instant};

use crate::config::SimConfig;
use crate::event::CalendarQueue;
use crate::experiments::barrier::{WaitPolicy, WindowBarrier};
use crate::experiments::partition_model::Partitioning;
use crate::observer::{NoObserver, Observer};
use crate::sim::Simulator;
use crate::sim::partition::{Mail, PartitionError, ScanPart};

/// How a parallel run went.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ParallelStats {
    /// Threads.
    pub threads: u16,
    /// Partitions (at least the threads).
    pub partitions: u16,
    /// How partitions were placed on threads.
    pub placement: Placement,
    /// The window, ps (0: no cut link, one window).
    pub lookahead_ps: u128,
    /// Windows run.
    pub windows: u64,
    /// Frames handed over between partitions.
    pub messages: u64,
    /// Events each thread handled (its partitions' in each window, summed).
    pub events_per_thread: Vec<u64>,
    /// Events each partition handled (the workloads' arrivals in each).
    pub events_per_partition: Vec<u64>,
    /// Sum over windows of the busiest thread's events: the run's length in events if every
    /// event cost the same and the barriers nothing (the model's critical path).
    pub critical_events: u64,
    /// Sum over windows of the busiest thread's seconds busy: the run's length if the
    /// barriers cost nothing (steadier than the wall time on a loaded machine).
    pub critical_s: f64,
    /// Partitions that ran on another thread than in the window before.
    pub moves: u64,
    /// Seconds each thread spent handling events.
    pub busy_s_per_thread: Vec<f64>,
    /// Seconds each thread spent at the barriers and handing frames over (taking them in
    /// included).
    pub wait_s_per_thread: Vec<f64>,
    /// Of that, seconds each thread spent taking in the frames its partitions received.
    pub intake_s_per_thread: Vec<f64>,
    /// Waits at the window barriers that ended while spinning, and waits that slept
    /// (`experiments::barrier`).
    pub barrier_waits: (u64, u64),
}

/// The window of `config` split as `part` says: the smallest lookahead over the links whose
/// ends it puts in different partitions (`None`: nothing is cut).
pub fn window_of(config: &SimConfig, part: &Partitioning) -> Option<Duration> {
    lookahead(config, part)
}

/// The smallest lookahead over the links whose ends `part` puts in different partitions.
fn lookahead(config: &SimConfig, part: &Partitioning) -> Option<Duration> {
    config
        .links
        .iter()
        .filter(|l| part.of_node[l.a as usize] != part.of_node[l.b as usize])
        .map(|l| crate::experiments::partition_model::cut_lookahead(&config.model, l))
        .min()
}

/// The window `config` runs in on `threads` threads (`None`: nothing is cut, one window).
pub fn window(config: &SimConfig, threads: u16) -> Option<Duration> {
    lookahead(config, &Partitioning::by_tier(config, threads.max(1)))
}

/// The shortest window worth a barrier: below it, threads wait more than they work.
pub const SHORT_WINDOW: Duration = Duration::from_ns(200);

/// The least each partition's ports must be able to send in one window, at line rate, for a
/// thread to pay for its barriers, on more than two threads. Measured on a 2-core VM with
/// `std::sync::Barrier` (docs/parallel.md): a k = 4 fat tree with 1 µs links (0.6 MB a window
/// per partition at 2 threads) ran slower on 2 threads than on 1; a k = 8 fat tree (4.8 MB)
/// ran 1.64–1.69× faster. Kept beyond two threads until a machine with the cores measures
/// them with the spinning barrier.
pub const MIN_WINDOW_BYTES: u64 = 2_000_000;

/// [`MIN_WINDOW_BYTES`] on two threads, since the windows end at a spinning barrier
/// (`barrier::WindowBarrier`): the HPCC ns-3 corpus's k = 4 fat trees (0.6 MB a window per
/// partition) ran 1.25–1.6× faster on 2 threads than on 1 on the 2-core VM
/// (docs/benchmarks.md, "Spinning at the window's barrier").
pub const MIN_WINDOW_BYTES_TWO_THREADS: u64 = 500_000;

/// The least each partition's ports must be able to send in one window on `threads` threads.
pub fn min_window_bytes(threads: u16) -> u64 {
    if threads <= 2 {
        MIN_WINDOW_BYTES_TWO_THREADS
    } else {
        MIN_WINDOW_BYTES
    }
}

/// The most threads the default chooses.
pub const MAX_AUTO_THREADS: u16 = 64;

/// The thread count chosen when none is given, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoThreads {
    /// Threads (1: the run is not split).
    pub threads: u16,
    /// The window at that count (`None` on one thread).
    pub window: Option<Duration>,
    /// What the least loaded partition's ports can send in one window, bytes (0 on one
    /// thread).
    pub window_bytes: u64,
}

/// The threads that help `config` on a machine with `cores` cores: the most, up to `cores`
/// (and [`MAX_AUTO_THREADS`]), for which the automatic partitioning gives every thread a
/// partition with windows of at least [`SHORT_WINDOW`] in which its ports can send at least
/// [`min_window_bytes`]; one thread when none does or when the engine cannot split the run.
pub fn auto_threads(config: &SimConfig, cores: u16) -> AutoThreads {
    let one = AutoThreads {
        threads: 1,
        window: None,
        window_bytes: 0,
    };
    if crate::sim::partition::unsupported(config).is_some() {
        return one;
    }
    let weights = crate::experiments::expected_load::node_weights(config);
    for n in (2..=cores.min(MAX_AUTO_THREADS)).rev() {
        let part = Partitioning::by_tier_weighted(config, n, &weights);
        let Some(w) = lookahead(config, &part).filter(|&w| w >= SHORT_WINDOW) else {
            continue;
        };
        // what each partition's ports can send in one window
        let mut bytes = vec![0u64; usize::from(part.parts)];
        for l in &config.links {
            let per_port = (u128::from(l.rate.bps()) * w.as_ps() / 8 / 1_000_000_000_000) as u64;
            bytes[usize::from(part.of_node[l.a as usize])] += per_port;
            bytes[usize::from(part.of_node[l.b as usize])] += per_port;
        }
        let least = bytes.iter().copied().min().unwrap_or(0);
        if usize::from(n) == bytes.len() && least >= min_window_bytes(n) {
            return AutoThreads {
                threads: n,
                window: Some(w),
                window_bytes: least,
            };
        }
    }
    one
}

/// Runs `config` on `threads` threads and returns the merged simulator, whose report is the
/// one-thread run's: the automatic partitioning into [`auto_partitions`] partitions, placed
/// on the threads anew each window ([`Placement::Events`]).
pub fn run(config: &SimConfig, threads: u16) -> Result<(Simulator, ParallelStats), PartitionError> {
    let threads = threads.max(1);
    let part = Partitioning::by_tier(config, auto_partitions(threads));
    run_scheduled(config, &part, Schedule::adaptive(threads), &|_, _| false)
}

/// Runs `config` split as `part` says, one thread per partition. After each window the
/// thread that ran partition 0 calls `window_done` with the window's end and partition 0's
/// events so far; when it returns true the run stops there, every partition after the same
/// window (the merged simulator's `now` says where).
pub fn run_split(
    config: &SimConfig,
    part: &Partitioning,
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Simulator, ParallelStats), PartitionError> {
    run_scheduled(config, part, Schedule::one_each(part), window_done)
}

/// Runs `config` split as `part` says on the threads `schedule` gives, and returns the
/// merged simulator, as [`run_split`].
pub fn run_scheduled(
    config: &SimConfig,
    part: &Partitioning,
    schedule: Schedule,
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Simulator, ParallelStats), PartitionError> {
    let (parts, stats) = run_parts_on(config, part, schedule, &|_| NoObserver, window_done, &|_, _| {})?;
    Ok((Simulator::merge(parts), stats))
}

/// Runs `config` split as `part` says, one thread per partition, each observed by the
/// observer `observer` makes for it, and returns the partitions unmerged (in partition order:
/// [`Simulator::merge`] joins them once their observers have been read), as [`run_split`].
pub fn run_parts<O: Observer + Send>(
    config: &SimConfig,
    part: &Partitioning,
    observer: &(dyn Fn(u16) -> O + Sync),
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Vec<Simulator<O>>, ParallelStats), PartitionError> {
    run_parts_on(
        config,
        part,
        Schedule::one_each(part),
        observer,
        window_done,
        &|_, _| {},
    )
}

/// How a run's partitions go onto its threads in each window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub enum Placement {
    /// Partition `p` on thread `p mod threads` for the whole run (one partition per thread
    /// when there are as many: the engine before load-adaptive placement).
    Static,
    /// In each window, longest first to the least loaded thread ([`Placer`]), each
    /// partition weighed by the events it handled in the previous window, the last window's
    /// placement kept unless the new one is better by [`REPLACE_ABOVE_PERCENT`]: the
    /// placement is a function of the run alone (the same on every machine).
    #[default]
    Events,
    /// As [`Placement::Events`], weighed by the time each partition took in the previous
    /// window (its events and its intake of frames), measured on this machine.
    Time,
}

/// The threads of a run and how its partitions go onto them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Schedule {
    /// Threads (at most the partitions: a run has no more threads than partitions).
    pub threads: u16,
    /// How partitions are placed on them.
    pub placement: Placement,
    /// How a thread waits at a window's barrier.
    pub wait: WaitPolicy,
}

impl Schedule {
    /// One thread per partition of `part`, each running its own for the whole run.
    pub fn one_each(part: &Partitioning) -> Schedule {
        Schedule {
            threads: part.parts,
            placement: Placement::Static,
            wait: WaitPolicy::Auto,
        }
    }

    /// `threads` threads, partitions placed anew each window by their events
    /// ([`Placement::Events`]).
    pub fn adaptive(threads: u16) -> Schedule {
        Schedule {
            threads,
            placement: Placement::Events,
            wait: WaitPolicy::Auto,
        }
    }
}

/// Partitions per thread that the automatic count aims at ([`auto_partitions`]).
///
/// One: measured by the clock on a 16-core machine (docs/benchmarks.md, "On a 16-core
/// machine"), one partition a thread beat four at 2, 4, 8 and 16 threads on the 320-host and
/// the k = 16 fat trees (16 threads: 1.37–1.46 s against 1.70–1.79 s, and 0.90–1.15 s against
/// 1.35–1.45 s) with a quarter of the memory: the busiest thread's events fall with more
/// partitions placed each window (docs/parallel.md, "The scheduler"), but the cut links and
/// per-partition work cost more. `--partitions` still asks for more.
pub const PARTITIONS_PER_THREAD: u16 = 1;

/// The partitions the automatic partitioning gets on `threads` threads:
/// [`PARTITIONS_PER_THREAD`] per thread. (Until that was one it also stopped at the fabric's
/// groups, at 4 GiB of copies of the fabric and where finer partitions cut a link with a
/// shorter lookahead; one a thread meets all three.)
pub fn auto_partitions(threads: u16) -> u16 {
    threads.max(1).saturating_mul(PARTITIONS_PER_THREAD)
}

/// How much busier (per cent) the busiest thread would be under the last window's placement
/// than under a new one, at this window's costs, before [`Placer::place_sticky`] moves
/// partitions. Measured on the 320-host `--ns3` run on 16 threads with 32 partitions (the
/// engine's counts, the same on any machine; docs/parallel.md, "Moves"): placing anew every
/// window moved 65,428 partitions in 7,523 windows; keeping the last placement unless the new
/// one is better moved 17,691 with the same critical path (2.570 M events against 2.572 M),
/// unless it is 5 % better 4,727 (2.595 M), 10 % 2,464 (2.636 M).
pub const REPLACE_ABOVE_PERCENT: u64 = 5;

/// The busiest of `threads` threads' loads when partition `p` (of `cost[p]`) runs on
/// `thread_of[p]`, in `loads` (`None`: a partition on no such thread).
fn busiest(loads: &mut Vec<u64>, cost: &[u64], thread_of: &[u16], threads: usize) -> Option<u64> {
    loads.clear();
    loads.resize(threads, 0);
    for (&c, &t) in cost.iter().zip(thread_of) {
        *loads.get_mut(usize::from(t))? += c;
    }
    loads.iter().copied().max()
}

/// Longest processing time first (Graham's LPT), with scratch kept between windows so that a
/// window's placement allocates nothing: the partitions, heaviest first (ties: the lower
/// number), each to the thread with the least cost so far (ties: the fewer partitions, then
/// the lower number). While a thread has no partition it is among the least loaded, so with at
/// least as many partitions as threads every thread gets one. The threads' sets are then
/// numbered to keep partitions where they were: a set goes to the thread that ran its heaviest
/// partition in the previous window if that thread is still free, so that with as many
/// partitions as threads none moves, and a partition moves only when the balance asks.
#[derive(Debug, Default)]
pub struct Placer {
    /// Scratch: the last placement, kept where a new one is not better enough, and the
    /// threads' loads.
    last: Vec<u16>,
    loads: Vec<u64>,
    order: Vec<u32>,
    /// Per set: its cost, its partitions, its heaviest partition.
    sets: Vec<(u64, u32, u32)>,
    set_of: Vec<u32>,
    thread_of_set: Vec<u16>,
    taken: Vec<bool>,
}

impl Placer {
    /// Places the partitions, of `cost` each, on `threads` threads: `thread_of[p]` holds
    /// partition `p`'s thread in the previous window on entry and in this one on return.
    pub fn place(&mut self, cost: &[u64], threads: usize, thread_of: &mut [u16]) {
        let n = cost.len();
        let threads = threads.clamp(1, n.max(1));
        self.order.clear();
        self.order.extend(0..n as u32);
        self.order
            .sort_by(|&a, &b| cost[b as usize].cmp(&cost[a as usize]).then(a.cmp(&b)));
        self.sets.clear();
        self.sets.resize(threads, (0, 0, u32::MAX));
        self.set_of.clear();
        self.set_of.resize(n, 0);
        for &p in &self.order {
            let s = (0..threads)
                .min_by_key(|&s| (self.sets[s].0, self.sets[s].1, s))
                .unwrap_or(0);
            let set = &mut self.sets[s];
            set.0 += cost[p as usize];
            set.1 += 1;
            if set.2 == u32::MAX {
                set.2 = p;
            }
            self.set_of[p as usize] = s as u32;
        }
        // number the sets: each to the thread of its heaviest partition where free, the rest
        // to the free threads in order
        self.taken.clear();
        self.taken.resize(threads, false);
        self.thread_of_set.clear();
        self.thread_of_set.resize(threads, u16::MAX);
        for s in 0..threads {
            let head = self.sets[s].2;
            if let Some(&t) = thread_of.get(head as usize)
                && usize::from(t) < threads
                && !self.taken[usize::from(t)]
            {
                self.taken[usize::from(t)] = true;
                self.thread_of_set[s] = t;
            }
        }
        let mut free = (0..threads).filter(|&t| !self.taken[t]);
        for t in self.thread_of_set.iter_mut().filter(|t| **t == u16::MAX) {
            *t = free.next().unwrap_or(0) as u16;
        }
        for (p, t) in thread_of.iter_mut().enumerate().take(n) {
            *t = self.thread_of_set[self.set_of[p] as usize];
        }
    }

    /// [`Placer::place`], unless the placement in `thread_of` (the last window's) leaves its
    /// busiest thread no more than [`REPLACE_ABOVE_PERCENT`] busier at these costs than the new
    /// one would: then it is kept, and no partition moves (a partition that moves leaves its
    /// lines in another core's caches).
    pub fn place_sticky(&mut self, cost: &[u64], threads: usize, thread_of: &mut [u16]) {
        let n = cost.len().min(thread_of.len());
        let threads_n = threads.clamp(1, n.max(1));
        self.last.clear();
        self.last.extend_from_slice(&thread_of[..n]);
        let before = busiest(&mut self.loads, cost, &self.last, threads_n);
        self.place(cost, threads, thread_of);
        let after = busiest(&mut self.loads, cost, thread_of, threads_n);
        if let (Some(before), Some(after)) = (before, after)
            && u128::from(before) * 100 <= u128::from(after) * u128::from(100 + REPLACE_ABOVE_PERCENT)
        {
            thread_of[..n].copy_from_slice(&self.last);
        }
    }

    /// One window's placement as thread `me` of `threads` sees it: places the partitions, of
    /// `cost` each ([`Placer::place_sticky`]; every thread computes the same from the same costs),
    /// refills `mine` with the partitions `me` runs now (each with cost 0, to be measured in
    /// this window), and returns how many of those it ran in the last window left it (each
    /// thread counts the partitions that leave it: their sum is the window's moves).
    pub fn place_mine(
        &mut self,
        cost: &[u64],
        threads: usize,
        me: usize,
        thread_of: &mut [u16],
        mine: &mut Vec<(usize, u64)>,
    ) -> u64 {
        self.place_sticky(cost, threads, thread_of);
        let left = mine.iter().filter(|m| usize::from(thread_of[m.0]) != me).count() as u64;
        mine.clear();
        mine.extend(
            (0..cost.len())
                .filter(|&p| usize::from(thread_of[p]) == me)
                .map(|p| (p, 0)),
        );
        left
    }
}

/// Runs `config` split as `part` says on `schedule.threads` threads, each partition observed
/// by the observer `observer` makes for it, and returns the partitions unmerged (in partition
/// order), as [`run_split`].
///
/// One window, on every thread (`parity` alternates, so that a slot one window reads is not
/// the one the next window writes):
/// 1. for each partition this thread ran in the last window (at first, the ones it built):
///    publish its next event and its cost in the last window (`next`, `cost` at `parity`);
/// 2. barrier; every thread reads every partition's next event (the window's start: the
///    earliest) and cost, and computes the same placement for this window ([`Placer`]);
/// 3. runs its partitions of this window to the window's end, each one's frames for other
///    partitions into `mail[to · P + from]`;
/// 4. barrier; takes in each of its partitions' mail, sending partition by sending partition,
///    each in the order sent (the order does not depend on which thread ran what, so neither
///    does the result);
/// 5. a fabric-wide timer held by every partition (a deadlock scan: one more barrier to share
///    the scan's parts) is handled by each.
///
/// A partition is touched by one thread from step 3 of a window to step 1 of the next (it
/// moves between threads only at barrier 2), so its lock is never contended.
///
/// `after_window` is called with each partition's number and observer after each window it
/// ran (in step 3, before its frames are handed over) and once more at the end: every
/// partition is called the same number of times, so that the k-th calls of all partitions
/// cover the same window (`trace::split` takes the parts' trace records there).
pub fn run_parts_on<O: Observer + Send>(
    config: &SimConfig,
    part: &Partitioning,
    schedule: Schedule,
    observer: &(dyn Fn(u16) -> O + Sync),
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
    after_window: &(dyn Fn(u16, &mut O) + Sync),
) -> Result<(Vec<Simulator<O>>, ParallelStats), PartitionError> {
    let n = usize::from(part.parts.max(1));
    let threads = usize::from(schedule.threads).clamp(1, n);
    let placement = if threads == n {
        // one partition each: no placement balances better than keeping them where they are
        Placement::Static
    } else {
        schedule.placement
    };
    let la = lookahead(config, part);
    if la == Some(Duration::ZERO) {
        return Err(PartitionError::Unsupported(
            "a cut link without delay (no lookahead)",
        ));
    }
    // (a bad map or configuration is refused before any thread starts; each partition is
    // built by the thread that first runs it)
    if let Some(what) = crate::sim::partition::unsupported(config) {
        return Err(PartitionError::Unsupported(what));
    }
    let end = Instant::ZERO + config.duration;
    let barrier = WindowBarrier::new(threads, 1, schedule.wait);
    let build_failed: Mutex<Option<PartitionError>> = Mutex::new(None);
    // the partitions; partition p is locked by the one thread that runs it in a window
    let sims: Vec<Mutex<Option<Simulator<O>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    // each partition's next event and its cost in the last window, in two sets by window
    // parity: a thread that starts the next window writes the other set while the slowest
    // still reads this one
    let published: [Vec<Published>; 2] =
        std::array::from_fn(|_| (0..n).map(|_| Published::default()).collect());
    // mail[to * n + from]: the frames partition `from` sent to partition `to` in a window
    let mail: Vec<Mutex<Mail>> = (0..n * n).map(|_| Mutex::new(Mail::default())).collect();
    // each partition's part of a deadlock scan (written before a barrier, read by all after)
    let scans: Vec<RwLock<Option<ScanPart>>> = (0..n).map(|_| RwLock::new(None)).collect();
    // each thread's busy time (ns) and events in the current window, for the critical path
    // (written before barrier 4, read by thread 0 after it, rewritten after the next barrier 2)
    let window_busy: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let window_events: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let stats = Mutex::new(ParallelStats {
        threads: threads as u16,
        partitions: n as u16,
        placement,
        lookahead_ps: la.map_or(0, |d| d.as_ps()),
        events_per_thread: vec![0; threads],
        events_per_partition: vec![0; n],
        busy_s_per_thread: vec![0.0; threads],
        wait_s_per_thread: vec![0.0; threads],
        intake_s_per_thread: vec![0.0; threads],
        ..Default::default()
    });
    let stop = AtomicBool::new(false);
    // one copy of the configuration for every partition (they only read it)
    let shared = std::sync::Arc::new(config.clone());
    let (stop, build_failed, sims, shared) = (&stop, &build_failed, &sims, &shared);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|me| {
                let (barrier, published, mail, stats, scans) = (&barrier, &published, &mail, &stats, &scans);
                let (window_busy, window_events) = (&window_busy, &window_events);
                s.spawn(move || {
                    // partition p is built by thread p mod threads, which runs it first
                    // (the placement with every cost 0 is that one too)
                    let mut thread_of: Vec<u16> = (0..n).map(|p| (p % threads) as u16).collect();
                    for p in (me..n).step_by(threads) {
                        let built = Simulator::partition_observed(
                            std::sync::Arc::clone(shared),
                            part.of_node.clone(),
                            p as u16,
                            observer(p as u16),
                            CalendarQueue::numbered_if(O::PUSH_NUMBERS),
                        );
                        match built {
                            Ok(sim) => *lock(&sims[p]) = Some(sim),
                            Err(e) => {
                                lock(build_failed).get_or_insert(e);
                            }
                        }
                    }
                    barrier.wait();
                    if lock(build_failed).is_some() {
                        return;
                    }
                    // the partitions this thread runs, with each one's cost in the last window
                    let mut mine: Vec<(usize, u64)> = (me..n).step_by(threads).map(|p| (p, 0)).collect();
                    let mut placer = Placer::default();
                    let mut costs = vec![0u64; n];
                    let (mut windows, mut messages, mut moves) = (0u64, 0u64, 0u64);
                    let (mut critical_s, mut critical_events) = (0.0f64, 0u64);
                    let (mut busy, mut wait, mut intake) = (0.0f64, 0.0f64, 0.0f64);
                    let mut events = 0u64;
                    let mut clock = std::time::Instant::now();
                    for parity in (0..2).cycle() {
                        // 1. publish what this thread's partitions need of the next window
                        let slots = &published[parity];
                        for &(p, c) in &mine {
                            slots[p].set(lock(&sims[p]).as_ref().and_then(|s| s.next_event_at()), c);
                        }
                        barrier.wait();
                        // 2. the window's start, and this window's placement (the same on
                        // every thread: computed from the same slots)
                        let start = slots.iter().filter_map(Published::at).min();
                        let Some(start) = start.filter(|&t| t < end) else {
                            break;
                        };
                        let until = la.map_or(end, |d| (start + d).min(end));
                        if placement != Placement::Static {
                            for (c, slot) in costs.iter_mut().zip(slots) {
                                *c = slot.cost.load(Relaxed);
                            }
                            moves += placer.place_mine(&costs, threads, me, &mut thread_of, &mut mine);
                        }
                        wait += clock.elapsed().as_secs_f64();
                        clock = std::time::Instant::now();
                        // 3. run this thread's partitions through the window
                        let mut window_ev = 0u64;
                        for (p, c) in &mut mine {
                            let mut guard = lock(&sims[*p]);
                            let Some(sim) = guard.as_mut() else { continue };
                            let (ev, cost) = run_window(sim, until, placement);
                            *c = cost;
                            window_ev += ev;
                            sim.hand_over(|to, v| {
                                messages += v.len() as u64;
                                give(&mail[to * n + *p], v);
                            });
                            after_window(*p as u16, sim.observer_mut());
                            if *p == 0 && window_done(until, sim.events()) {
                                stop.store(true, Relaxed);
                            }
                        }
                        let window_s = clock.elapsed().as_secs_f64();
                        busy += window_s;
                        events += window_ev;
                        window_busy[me].store((window_s * 1e9) as u64, Relaxed);
                        window_events[me].store(window_ev, Relaxed);
                        clock = std::time::Instant::now();
                        windows += 1;
                        barrier.wait();
                        if me == 0 {
                            critical_s +=
                                window_busy.iter().map(|b| b.load(Relaxed)).max().unwrap_or(0) as f64 / 1e9;
                            critical_events +=
                                window_events.iter().map(|e| e.load(Relaxed)).max().unwrap_or(0);
                        }
                        // 4. take in each partition's mail, sender by sender
                        let taking = std::time::Instant::now();
                        for (p, c) in &mut mine {
                            let mut guard = lock(&sims[*p]);
                            let Some(sim) = guard.as_mut() else { continue };
                            *c += take_mail(sim, &mail[*p * n..(*p + 1) * n], placement);
                        }
                        intake += taking.elapsed().as_secs_f64();
                        // (set before the barrier above by partition 0's thread: all see it)
                        if stop.load(Relaxed) {
                            break;
                        }
                        // 5. a fabric-wide timer ended the window in every partition at the
                        // same point: each handles it now that the frames sent before it are
                        // in; a deadlock scan's parts are gathered and each builds the same
                        // graph (every thread has a partition, and every partition holds the
                        // same timer: all threads take the same barriers)
                        let held = mine.first().is_some_and(|&(p, _)| {
                            lock(&sims[p]).as_ref().is_some_and(|s| s.holds_fabric_timer())
                        });
                        if held {
                            let mut scanned = false;
                            for &(p, _) in &mine {
                                let mut guard = lock(&sims[p]);
                                let Some(sim) = guard.as_mut() else { continue };
                                sim.handle_held();
                                if let Some(part) = sim.take_scan_part() {
                                    *scans[p].write().unwrap_or_else(PoisonError::into_inner) = Some(part);
                                    scanned = true;
                                }
                            }
                            if scanned {
                                barrier.wait();
                                let all: Vec<_> = scans
                                    .iter()
                                    .map(|s| s.read().unwrap_or_else(PoisonError::into_inner))
                                    .collect();
                                let parts: Vec<&ScanPart> = all.iter().filter_map(|g| g.as_ref()).collect();
                                for &(p, _) in &mine {
                                    if let Some(sim) = lock(&sims[p]).as_mut() {
                                        sim.scan_parts(&parts);
                                    }
                                }
                            }
                            let halted = mine
                                .first()
                                .is_some_and(|&(p, _)| lock(&sims[p]).as_ref().is_some_and(|s| s.halted()));
                            if halted {
                                break;
                            }
                        }
                    }
                    // (after a stop, each partition stays where the window left it)
                    for &(p, _) in &mine {
                        if let Some(sim) = lock(&sims[p]).as_mut() {
                            if !stop.load(Relaxed) {
                                sim.run_until(end);
                            }
                            after_window(p as u16, sim.observer_mut());
                        }
                    }
                    let mut st = lock(stats);
                    st.windows = windows;
                    st.messages += messages;
                    st.moves += moves;
                    if me == 0 {
                        st.critical_s = critical_s;
                        st.critical_events = critical_events;
                    }
                    st.events_per_thread[me] = events;
                    st.busy_s_per_thread[me] = busy;
                    st.intake_s_per_thread[me] = intake;
                    st.wait_s_per_thread[me] = wait + clock.elapsed().as_secs_f64();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
    });
    if let Some(e) = lock(build_failed).take() {
        return Err(e);
    }
    let mut stats = stats.into_inner().unwrap_or_else(PoisonError::into_inner);
    stats.barrier_waits = barrier.waits();
    let mut done = Vec::with_capacity(n);
    for (p, slot) in sims.iter().enumerate() {
        let sim = lock(slot).take();
        if let Some(sim) = sim {
            stats.events_per_partition[p] = sim.events();
            done.push(sim);
        }
    }
    Ok((done, stats))
}

/// A partition's earliest pending event and its cost in the last window, as its thread
/// publishes them before a window's first barrier and every thread reads them after it. Plain
/// atomics (the barrier orders the writes before the reads): a mutex each cost every thread
/// a contended lock per partition and window, whose lines went from core to core.
#[derive(Default)]
pub(crate) struct Published {
    /// The event's time, ps, high and low halves (`u128::MAX`: none).
    at_hi: AtomicU64,
    at_lo: AtomicU64,
    /// The partition's cost in the last window (`run_window`).
    pub(crate) cost: AtomicU64,
}

impl Published {
    /// Publishes the partition's next event `at` and its last window's `cost`.
    pub(crate) fn set(&self, at: Option<Instant>, cost: u64) {
        let ps = at.map_or(u128::MAX, Instant::as_ps);
        self.at_hi.store((ps >> 64) as u64, Relaxed);
        self.at_lo.store(ps as u64, Relaxed);
        self.cost.store(cost, Relaxed);
    }

    /// The partition's next event, as published (`None`: it has none; an event at
    /// `Instant::MAX` reads as none too, as it is never before a run's end).
    pub(crate) fn at(&self) -> Option<Instant> {
        let ps = (u128::from(self.at_hi.load(Relaxed)) << 64) | u128::from(self.at_lo.load(Relaxed));
        (ps != u128::MAX).then(|| Instant::from_ps(ps))
    }
}

/// Runs `sim` to `until` (one window of a partition, on threads or over ranks): returns its
/// events in the window and its cost as `placement` weighs it (the events, or under
/// [`Placement::Time`] the nanoseconds taken).
pub(crate) fn run_window<O: Observer>(
    sim: &mut Simulator<O>,
    until: Instant,
    placement: Placement,
) -> (u64, u64) {
    let t0 = std::time::Instant::now();
    let e0 = sim.events();
    sim.run_until(until);
    let ev = sim.events() - e0;
    let cost = match placement {
        Placement::Time => t0.elapsed().as_nanos() as u64,
        _ => ev,
    };
    (ev, cost)
}

/// Takes into `sim` the frames of its mail, `mail[from]` for each sending partition in turn,
/// each sender's in the order sent (the order that makes the result independent of the
/// split); returns what that adds to its cost under `placement` (the nanoseconds taken under
/// [`Placement::Time`], else 0).
pub(crate) fn take_mail<O: Observer>(
    sim: &mut Simulator<O>,
    mail: &[Mutex<Mail>],
    placement: Placement,
) -> u64 {
    let t0 = std::time::Instant::now();
    for slot in mail {
        // (emptied in place: the sender swaps its next frames into this allocation)
        let mut v = lock(slot);
        for m in &v.messages {
            sim.take_in(m, v.extra(m));
        }
        v.clear();
    }
    match placement {
        Placement::Time => t0.elapsed().as_nanos() as u64,
        _ => 0,
    }
}

/// Moves the frames of `v` into the mail `slot`: by swapping the two vectors when the slot is
/// empty (as the receiver leaves it), so that no frame is copied and the allocations go round.
pub(crate) fn give(slot: &Mutex<Mail>, v: &mut Mail) {
    let mut slot = lock(slot);
    if slot.is_empty() {
        std::mem::swap(&mut *slot, v);
    } else {
        slot.append(v);
    }
}

/// A lock that a panicked thread did not leave unusable (its panic is re-raised at the join).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each thread's load under `thread_of`.
    fn loads(cost: &[u64], thread_of: &[u16], threads: usize) -> Vec<u64> {
        let mut l = vec![0; threads];
        for (p, &t) in thread_of.iter().enumerate() {
            l[usize::from(t)] += cost[p];
        }
        l
    }

    #[test]
    fn longest_first_places_two_heavy_partitions_apart_and_balances_the_light_ones() {
        // two heavy partitions (a core switch, a busy group) among light ones: statically,
        // by number (p mod 2), both heavy ones land on thread 0 (17 against 4); placed longest
        // first, the heavy ones go to different threads and the light ones even them out:
        // 11 against 10, the best there is (21 in all)
        let cost = [8, 1, 1, 1, 7, 1, 1, 1];
        let fixed: Vec<u16> = (0..8).map(|p| (p % 2) as u16).collect();
        assert_eq!(loads(&cost, &fixed, 2), vec![17, 4]);
        let mut thread_of = fixed.clone();
        Placer::default().place(&cost, 2, &mut thread_of);
        let mut l = loads(&cost, &thread_of, 2);
        l.sort_unstable();
        assert_eq!(l, vec![10, 11], "{thread_of:?}");
        assert_ne!(thread_of[0], thread_of[4], "the heavy ones apart");
        // three threads: 8 | 7 | six 1s
        let mut thread_of = vec![0; 8];
        Placer::default().place(&cost, 3, &mut thread_of);
        let mut l = loads(&cost, &thread_of, 3);
        l.sort_unstable();
        assert_eq!(l, vec![6, 7, 8], "{thread_of:?}");
    }

    #[test]
    fn a_published_next_event_reads_back_whole_and_none_stays_none() {
        let slot = Published::default();
        slot.set(None, 7);
        assert_eq!(slot.at(), None);
        assert_eq!(slot.cost.load(Relaxed), 7);
        // both halves: a time past 2^64 ps (213 days) keeps its high bits
        for ps in [0, 1_000_000, u128::from(u64::MAX) + 5, u128::MAX - 1] {
            slot.set(Some(Instant::from_ps(ps)), 0);
            assert_eq!(slot.at(), Some(Instant::from_ps(ps)));
        }
        slot.set(None, 0);
        assert_eq!(slot.at(), None, "a slot that held a time reads none once set so");
    }

    #[test]
    fn a_placement_is_kept_until_a_new_one_is_better_by_more_than_the_margin() {
        let mut placer = Placer::default();
        // partitions 0, 1 on thread 0 and 2, 3 on thread 1
        let mut thread_of = vec![0, 0, 1, 1];
        // 20 against 19: the best there is, kept
        placer.place_sticky(&[10, 10, 10, 9], 2, &mut thread_of);
        assert_eq!(thread_of, vec![0, 0, 1, 1]);
        // 41 | 40, as good as LPT's 41 | 40 with 1 and 3 swapped: kept, nothing moves
        let mut lpt = thread_of.clone();
        placer.place(&[21, 20, 20, 20], 2, &mut lpt);
        assert_ne!(lpt, thread_of);
        placer.place_sticky(&[21, 20, 20, 20], 2, &mut thread_of);
        assert_eq!(thread_of, vec![0, 0, 1, 1]);
        // 60 | 1 (LPT: 30 | 31): placed anew, the heaviest where it was
        placer.place_sticky(&[30, 30, 1, 0], 2, &mut thread_of);
        let load = loads(&[30, 30, 1, 0], &thread_of, 2);
        assert_eq!(load.iter().max(), Some(&31), "{thread_of:?}");
        assert_eq!(thread_of[0], 0);
    }

    #[test]
    fn every_thread_gets_a_partition_and_partitions_stay_where_they_were_when_nothing_changes() {
        // nothing measured yet (every cost 0): round robin, each thread at least one
        let mut thread_of: Vec<u16> = (0..5).map(|p| (p % 3) as u16).collect();
        let mut placer = Placer::default();
        placer.place(&[0; 5], 3, &mut thread_of);
        assert_eq!(thread_of, vec![0, 1, 2, 0, 1]);
        // one heavy partition and idle ones: still every thread runs one
        placer.place(&[100, 0, 0, 0, 0], 3, &mut thread_of);
        let mut counts = [0; 3];
        thread_of.iter().for_each(|&t| counts[usize::from(t)] += 1);
        assert!(counts.iter().all(|&c| c > 0), "{thread_of:?}");
        // the heaviest stays on its thread
        assert_eq!(thread_of[0], 0);
        // as many partitions as threads: whatever the costs, none moves
        let mut thread_of = vec![2, 0, 1];
        placer.place(&[1, 50, 7], 3, &mut thread_of);
        assert_eq!(thread_of, vec![2, 0, 1]);
        // the same costs again: the same placement, nothing moves
        let cost = [5, 9, 2, 2, 4, 6, 1, 3];
        let mut thread_of = vec![0; 8];
        placer.place(&cost, 3, &mut thread_of);
        let before = thread_of.clone();
        placer.place(&cost, 3, &mut thread_of);
        assert_eq!(thread_of, before);
    }
}
