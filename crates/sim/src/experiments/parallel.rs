//! One fabric on several threads (issue 22): partitions of the automatic tier-and-group
//! partitioning (`partition_model.rs`) run in conservative windows — each window lasts the
//! smallest lookahead of the cut links (propagation plus a 64-byte frame's time), so that no
//! frame sent in a window arrives before it ends — with two barriers a window: one to agree
//! on where the window starts (the earliest pending event of all), one before the frames that
//! crossed a cut link are taken in, each partition's in the order it sent them. The partitions merge back into one simulator, whose report is the sequential run's,
//! byte for byte (the order of simultaneous events does not depend on the split: `sim/order.rs`).

use std::sync::{Barrier, Mutex, PoisonError, RwLock};

use lossless_proto::units::{Duration, Instant};

use crate::config::SimConfig;
use crate::event::CalendarQueue;
use crate::experiments::partition_model::Partitioning;
use crate::observer::{NoObserver, Observer};
use crate::sim::Simulator;
use crate::sim::partition::{Message, PartitionError, ScanPart};

/// How a parallel run went.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ParallelStats {
    /// Partitions (threads).
    pub threads: u16,
    /// The window, ps (0: no cut link, one window).
    pub lookahead_ps: u128,
    /// Windows run.
    pub windows: u64,
    /// Frames handed over between partitions.
    pub messages: u64,
    /// Events each partition handled (the workloads' arrivals in each).
    pub events_per_thread: Vec<u64>,
    /// Seconds each thread spent handling events.
    pub busy_s_per_thread: Vec<f64>,
    /// Seconds each thread spent at the barriers and handing frames over.
    pub wait_s_per_thread: Vec<f64>,
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
/// thread to pay for its barriers. Measured on a 2-core VM (docs/parallel.md): a k = 4 fat
/// tree with 1 µs links (0.6 MB a window per partition at 2 threads) ran slower on 2 threads
/// than on 1; a k = 8 fat tree (4.8 MB) ran 1.64–1.69× faster.
pub const MIN_WINDOW_BYTES: u64 = 2_000_000;

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
/// [`MIN_WINDOW_BYTES`]; one thread when none does or when the engine cannot split the run.
pub fn auto_threads(config: &SimConfig, cores: u16) -> AutoThreads {
    let one = AutoThreads {
        threads: 1,
        window: None,
        window_bytes: 0,
    };
    if crate::sim::partition::unsupported(config).is_some() {
        return one;
    }
    for n in (2..=cores.min(MAX_AUTO_THREADS)).rev() {
        let part = Partitioning::by_tier(config, n);
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
        if usize::from(n) == bytes.len() && least >= MIN_WINDOW_BYTES {
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
/// one-thread run's.
pub fn run(config: &SimConfig, threads: u16) -> Result<(Simulator, ParallelStats), PartitionError> {
    run_split(config, &Partitioning::by_tier(config, threads.max(1)), &|_, _| {
        false
    })
}

/// Runs `config` split as `part` says, one thread per partition. After each window the first
/// partition's thread calls `window_done` with the window's end and its events so far; when it
/// returns true the run stops there, every partition after the same window (the merged
/// simulator's `now` says where).
pub fn run_split(
    config: &SimConfig,
    part: &Partitioning,
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Simulator, ParallelStats), PartitionError> {
    let (parts, stats) = run_parts(config, part, &|_| NoObserver, window_done)?;
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
    run_parts_with(config, part, observer, window_done, &|_, _| {})
}

/// [`run_parts`], with `after_window` called by each partition's thread with its number and
/// its observer after each window it ran (before the frames are handed over) and once more
/// at the end: every thread calls it the same number of times, so that the k-th calls of all
/// threads cover the same window (`trace::split` takes the parts' trace records there).
pub fn run_parts_with<O: Observer + Send>(
    config: &SimConfig,
    part: &Partitioning,
    observer: &(dyn Fn(u16) -> O + Sync),
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
    after_window: &(dyn Fn(u16, &mut O) + Sync),
) -> Result<(Vec<Simulator<O>>, ParallelStats), PartitionError> {
    let n = part.parts as usize;
    let la = lookahead(config, part);
    if la == Some(Duration::ZERO) {
        return Err(PartitionError::Unsupported(
            "a cut link without delay (no lookahead)",
        ));
    }
    // (a bad map or configuration is refused before any thread starts; each partition is
    // built on its own thread)
    if let Some(what) = crate::sim::partition::unsupported(config) {
        return Err(PartitionError::Unsupported(what));
    }
    let end = Instant::ZERO + config.duration;
    let barrier = Barrier::new(n);
    let build_failed: Mutex<Option<PartitionError>> = Mutex::new(None);
    // each partition's next event, in two slots by window parity: a partition that starts the
    // next window writes the other slot while the slowest still reads this one
    let next: Vec<[Mutex<Option<Instant>>; 2]> =
        (0..n).map(|_| [Mutex::new(None), Mutex::new(None)]).collect();
    // mail[to * n + from]: the frames partition `from` sent to partition `to` in a window
    let mail: Vec<Mutex<Vec<Message>>> = (0..n * n).map(|_| Mutex::new(Vec::new())).collect();
    // each partition's part of a deadlock scan (written before a barrier, read by all after)
    let scans: Vec<RwLock<Option<ScanPart>>> = (0..n).map(|_| RwLock::new(None)).collect();
    let stats = Mutex::new(ParallelStats {
        threads: part.parts,
        lookahead_ps: la.map_or(0, |d| d.as_ps()),
        events_per_thread: vec![0; n],
        busy_s_per_thread: vec![0.0; n],
        wait_s_per_thread: vec![0.0; n],
        ..Default::default()
    });
    let of_node = &part.of_node;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let stop = &stop;
    let build_failed = &build_failed;
    let done: Vec<Option<Simulator<O>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..part.parts)
            .map(|me| {
                let (barrier, next, mail, stats, scans) = (&barrier, &next, &mail, &stats, &scans);
                s.spawn(move || {
                    let built = Simulator::partition_observed(
                        config.clone(),
                        part.of_node.clone(),
                        me,
                        observer(me),
                        CalendarQueue::default(),
                    );
                    let mut sim = match built {
                        Ok(sim) => Some(sim),
                        Err(e) => {
                            lock(build_failed).get_or_insert(e);
                            None
                        }
                    };
                    barrier.wait();
                    if lock(build_failed).is_some() {
                        return None;
                    }
                    let mut sim = sim.take()?;
                    let me = usize::from(me);
                    let mut out: Vec<Message> = Vec::new();
                    let mut by_dest: Vec<Vec<Message>> = vec![Vec::new(); n];
                    let (mut windows, mut messages) = (0u64, 0u64);
                    let (mut busy, mut wait) = (0.0f64, 0.0f64);
                    let mut clock = std::time::Instant::now();
                    for parity in (0..2).cycle() {
                        *lock(&next[me][parity]) = sim.next_event_at();
                        barrier.wait();
                        let start = next.iter().filter_map(|m| *lock(&m[parity])).min();
                        let Some(start) = start.filter(|&t| t < end) else {
                            break;
                        };
                        let until = la.map_or(end, |d| (start + d).min(end));
                        wait += clock.elapsed().as_secs_f64();
                        clock = std::time::Instant::now();
                        sim.run_until(until);
                        busy += clock.elapsed().as_secs_f64();
                        clock = std::time::Instant::now();
                        windows += 1;
                        sim.take_outbox(&mut out);
                        after_window(me as u16, sim.observer_mut());
                        messages += out.len() as u64;
                        if me == 0 && window_done(until, sim.events()) {
                            stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        }
                        for m in out.drain(..) {
                            let to = of_node[sim.node_of_port(m.to) as usize] as usize;
                            by_dest[to].push(m);
                        }
                        for (to, v) in by_dest.iter_mut().enumerate() {
                            if !v.is_empty() {
                                lock(&mail[to * n + me]).append(v);
                            }
                        }
                        barrier.wait();
                        for from in 0..n {
                            let v = std::mem::take(&mut *lock(&mail[me * n + from]));
                            for m in &v {
                                sim.take_in(m);
                            }
                        }
                        // (set before the barrier above by the first thread: all see it here)
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        // a fabric-wide timer ended the window in every partition at the same
                        // point: each handles it now that the frames sent before it are in;
                        // a deadlock scan's parts are gathered and each builds the same graph
                        if sim.holds_fabric_timer() {
                            sim.handle_held();
                            if let Some(mine) = sim.take_scan_part() {
                                *scans[me].write().unwrap_or_else(PoisonError::into_inner) = Some(mine);
                                barrier.wait();
                                let all: Vec<_> = scans
                                    .iter()
                                    .map(|s| s.read().unwrap_or_else(PoisonError::into_inner))
                                    .collect();
                                let parts: Vec<&ScanPart> = all.iter().filter_map(|g| g.as_ref()).collect();
                                sim.scan_parts(&parts);
                            }
                            if sim.halted() {
                                break;
                            }
                        }
                    }
                    if !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        sim.run_until(end);
                    }
                    after_window(me as u16, sim.observer_mut());
                    let mut st = lock(stats);
                    st.windows = windows;
                    st.messages += messages;
                    st.events_per_thread[me] = sim.events();
                    st.busy_s_per_thread[me] = busy;
                    st.wait_s_per_thread[me] = wait + clock.elapsed().as_secs_f64();
                    Some(sim)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    if let Some(e) = lock(build_failed).take() {
        return Err(e);
    }
    let done = done.into_iter().flatten().collect();
    let stats = stats
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok((done, stats))
}

/// A lock that a panicked thread did not leave unusable (its panic is re-raised at the join).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
