//! One fabric over processes (MPI ranks) × threads (issue 22): `R` ranks of `T` threads run
//! the `P ≥ R·T` partitions of the automatic partitioning (`partition_model.rs`; by default
//! `P = R·T`, partition `p` on rank `p / T`), rank `r` a fixed contiguous block of them
//! ([`rank_starts`]). Each rank runs its partitions on its threads as `parallel.rs` does,
//! placing them anew each window by last window's cost when it has more than threads
//! (`parallel::Placer`; a partition never leaves its rank); per window
//! the ranks agree on where it starts (the earliest pending event of all: one all-reduce, which
//! also carries a stop and an error flag) and exchange the frames that crossed a cut link
//! between ranks (one all-to-all of bytes, each message encoded by
//! [`exchange::encode_message`]). Every partition takes its messages in sender partition
//! by sender partition, each in the order it sent them — the order of the threaded run, so
//! the result does not depend on `R` or `T`. At the end every partition sends its
//! [`Digest`] to rank 0, whose partition 0 absorbs them ([`Simulator::absorb`]): the report
//! collected there is the one-thread run's, byte for byte. With the trace outputs
//! ([`run_rank_traced`]) every partition's records of each window (`trace::split`) are
//! gathered on rank 0 after that window, where they are merged into one simulator's order.
//!
//! The ranks talk through a [`Transport`]: MPI (`ranks::mpi`, with feature `mpi`) or, in one
//! process, [`local`] (threads standing for ranks), which the tests use where no MPI is
//! installed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError, RwLock};

use lossless_proto::units::{Duration, Instant};

use crate::config::SimConfig;
use crate::event::CalendarQueue;
use crate::experiments::barrier::WindowBarrier;
use crate::experiments::parallel::{Placement, Placer, Published, Schedule, give, run_window, take_mail};
use crate::experiments::partition_model::{Partitioning, cut_lookahead};
use crate::observer::{NoObserver, Observer};
use crate::sim::Simulator;
use crate::sim::exchange::{self, Dec, Digest, Shipped};
use crate::sim::partition::{Mail, PartitionError, ScanPart};
use crate::trace::split::Recorder;

#[cfg(feature = "mpi")]
pub mod mpi;

/// How ranks talk: collective operations that every rank calls in the same order, from one
/// thread of each rank.
pub trait Transport {
    /// This rank, `0..ranks()`.
    fn rank(&self) -> usize;
    /// How many ranks.
    fn ranks(&self) -> usize;
    /// The element-wise minimum of `v` over all ranks.
    fn min_all(&mut self, v: [u64; 3]) -> Result<[u64; 3], RankError>;
    /// Sends `out[r]` to rank `r` (`out` has one entry per rank) and returns what each rank
    /// sent to this one, in rank order.
    fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankError>;
    /// Every rank's `bytes`, in rank order, at rank 0 (`None` elsewhere).
    fn gather(&mut self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, RankError>;
    /// How many processes on this machine run ranks, this one included (ranks that are
    /// threads of one process count once: the barrier counts their threads itself), so that
    /// a rank's threads spin at their barriers only while the machine has a core for each.
    fn processes_on_this_machine(&self) -> usize {
        1
    }
}

/// Why a run over ranks failed.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    /// The fabric cannot be split (the same on every rank).
    #[error(transparent)]
    Partition(#[from] PartitionError),
    /// Bytes from another rank that do not decode.
    #[error(transparent)]
    Decode(#[from] exchange::DecodeError),
    /// The transport failed.
    #[error("MPI: {0}")]
    Transport(String),
    /// Another rank failed (it says why); this one stopped with it.
    #[error("another rank failed and stopped the run (its message says why)")]
    Elsewhere,
    /// A run whose end does not fit the all-reduce's 64-bit picoseconds (213 days).
    #[error("the run lasts {0}; over MPI ranks at most 2^64 - 2 ps (about 213 days)")]
    TooLong(Duration),
    /// A partitioning that does not fit the ranks and threads.
    #[error("{0}")]
    Split(String),
    /// The digests did not fit partition 0's simulator.
    #[error("merging the partitions: {0}")]
    Merge(String),
    /// Rank 0 could not take a window's trace records (its collector refused bytes that did
    /// not decode and stopped); every rank stopped after the next window.
    #[error("the trace outputs: {0}")]
    Trace(String),
}

/// What a partition's observer records for the trace outputs goes to rank 0 window by window
/// ([`run_rank_traced`]), not behind its digest: a recorder ships nothing.
impl<O> Shipped for Recorder<O> {
    fn ship(&self, _out: &mut Vec<u8>) {}
    fn unship(&mut self, _d: &mut Dec<'_>) -> Result<(), exchange::DecodeError> {
        Ok(())
    }
}

/// An observer beside a recorder ([`run_rank_traced`]): ships what the observer ships.
impl<A: Shipped, O> Shipped for (A, Recorder<O>) {
    fn ship(&self, out: &mut Vec<u8>) {
        self.0.ship(out);
    }
    fn unship(&mut self, d: &mut Dec<'_>) -> Result<(), exchange::DecodeError> {
        self.0.unship(d)
    }
}

/// Appends what one partition's observer recorded in a window to the bytes its rank sends
/// rank 0 (`trace::split::Recorder::take_encoded`), leaving none recorded.
pub type TakeRecords<'a, O> = &'a (dyn Fn(&mut O, &mut Vec<u8>) + Sync);

/// On rank 0, takes one window's trace records: every rank's bytes, in rank order (each its
/// partitions' records in partition order, as [`TakeRecords`] appended them). An error stops
/// every rank after the next window.
pub type WindowRecords<'a> = &'a mut WindowFn<'a>;

/// What takes one window's trace records on rank 0 ([`WindowRecords`]).
pub type WindowFn<'a> = dyn FnMut(Vec<Vec<u8>>) -> Result<(), String> + 'a;

/// The trace records of a run: how each partition's are taken, and on rank 0 where they go.
struct Traces<'a, 'b, O> {
    take: TakeRecords<'a, O>,
    window: Option<WindowRecords<'b>>,
}

/// How a run over ranks went (this rank's threads; rank 0 adds nothing of the others).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RankStats {
    /// Ranks.
    pub ranks: usize,
    /// Threads per rank.
    pub threads: u16,
    /// Partitions in all (at least ranks × threads).
    pub partitions: usize,
    /// Of them, this rank's.
    pub partitions_here: usize,
    /// How this rank's partitions went onto its threads (static with one per thread).
    pub placement: Placement,
    /// This rank's partitions that ran on another of its threads than in the window before.
    pub moves: u64,
    /// Events each of this rank's threads handled.
    pub events_per_thread: Vec<u64>,
    /// Sum over windows of this rank's busiest thread's events (its critical path in
    /// events).
    pub critical_events: u64,
    /// The window, ps (0: no cut link, one window).
    pub lookahead_ps: u128,
    /// Windows run.
    pub windows: u64,
    /// Frames this rank's partitions sent to other partitions.
    pub messages: u64,
    /// Of them, to partitions on other ranks.
    pub messages_between_ranks: u64,
    /// Seconds each of this rank's threads spent handling events.
    pub busy_s_per_thread: Vec<f64>,
    /// Seconds each spent at barriers and exchanges.
    pub wait_s_per_thread: Vec<f64>,
    /// Seconds the rank spent in the transport's collectives (its first thread).
    pub transport_s: f64,
    /// Bytes of trace records gathered (rank 0: from every rank, its own included; another
    /// rank: what it sent), over the run.
    pub trace_bytes: u64,
    /// Gathers of trace records (the windows and the run's end).
    pub trace_gathers: u64,
    /// Waits at this rank's window barriers that ended while spinning, and waits that slept
    /// (`experiments::barrier`).
    pub barrier_waits: (u64, u64),
}

/// The partitioning of a run over `ranks` × `threads`: the automatic one for `ranks · threads`
/// partitions.
pub fn partitioning(config: &SimConfig, ranks: usize, threads: u16) -> Result<Partitioning, RankError> {
    let n = ranks.saturating_mul(usize::from(threads.max(1)));
    let parts = u16::try_from(n).map_err(|_| {
        RankError::Partition(PartitionError::Unsupported(
            "more than 65,535 partitions (ranks × threads)",
        ))
    })?;
    Ok(Partitioning::by_tier(config, parts))
}

/// The window of a run over `ranks` × `threads` (`None`: nothing is cut).
pub fn window(config: &SimConfig, ranks: usize, threads: u16) -> Option<Duration> {
    let part = partitioning(config, ranks, threads).ok()?;
    lookahead(config, &part)
}

fn lookahead(config: &SimConfig, part: &Partitioning) -> Option<Duration> {
    config
        .links
        .iter()
        .filter(|l| part.of_node[l.a as usize] != part.of_node[l.b as usize])
        .map(|l| cut_lookahead(&config.model, l))
        .min()
}

/// `MAX - flag`: the all-reduce's minimum of these is `MAX - 1` when any rank raised it.
fn flag(on: bool) -> u64 {
    u64::MAX - u64::from(on)
}

/// Runs this rank's share of `config` on `threads` threads; every rank calls it with the same
/// configuration and thread count. Rank 0 gets the merged simulator (whose report is the
/// one-thread run's), the others `None`. `window_done` is called on rank 0 after each window
/// with its end and the first partition's events; when it returns true every rank stops after
/// that window (the merged simulator's `now` says where).
pub fn run_rank<T: Transport + ?Sized>(
    config: &SimConfig,
    threads: u16,
    transport: &mut T,
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Option<Simulator>, RankStats), RankError> {
    let part = partitioning(config, transport.ranks(), threads);
    run_rank_split(config, part, Schedule::adaptive(threads), transport, window_done)
}

/// What rank 0 gets of an observed run: the merged simulator and every partition's observer,
/// in partition order.
pub type Observed<O> = (Simulator<O>, Vec<O>);

/// [`run_rank`] with each partition observed by the observer `observer` makes for it (which
/// sees only that partition's events): rank 0 also gets every partition's observer, in
/// partition order — its own as they ran, the others' as their ranks shipped them
/// ([`Shipped`]) into observers made here.
pub fn run_rank_observed<O: Observer + Shipped + Send, T: Transport + ?Sized>(
    config: &SimConfig,
    threads: u16,
    transport: &mut T,
    observer: &(dyn Fn(u16) -> O + Sync),
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Option<Observed<O>>, RankStats), RankError> {
    let part = partitioning(config, transport.ranks(), threads);
    let schedule = Schedule::adaptive(threads);
    run_observed(config, part, schedule, transport, observer, window_done, None)
}

/// [`run_rank_observed`] split as `part` says, e.g. a partitioning read from a partition file,
/// on `schedule.threads` threads per rank: as [`run_rank_split`].
pub fn run_rank_observed_split<O: Observer + Shipped + Send, T: Transport + ?Sized>(
    config: &SimConfig,
    part: Partitioning,
    schedule: Schedule,
    transport: &mut T,
    observer: &(dyn Fn(u16) -> O + Sync),
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Option<Observed<O>>, RankStats), RankError> {
    run_observed(config, Ok(part), schedule, transport, observer, window_done, None)
}

/// [`run_rank_observed_split`] with the trace outputs (`trace::split`): after every window,
/// and once more at the end, `take` appends each partition's records of that window to its
/// rank's bytes, which are gathered on rank 0 (one `MPI_Gather`/`MPI_Gatherv` a window) and
/// handed to `window` there (the other ranks pass `None`), so that no rank holds more than a
/// window's records. Every rank calls it with the same arguments but `window`.
#[allow(clippy::too_many_arguments)]
pub fn run_rank_traced<O: Observer + Shipped + Send, T: Transport + ?Sized>(
    config: &SimConfig,
    part: Partitioning,
    schedule: Schedule,
    transport: &mut T,
    observer: &(dyn Fn(u16) -> O + Sync),
    take: TakeRecords<'_, O>,
    window: Option<WindowRecords<'_>>,
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Option<Observed<O>>, RankStats), RankError> {
    let traces = Traces { take, window };
    run_observed(
        config,
        Ok(part),
        schedule,
        transport,
        observer,
        window_done,
        Some(traces),
    )
}

/// [`run_rank`] split as `part` says, e.g. a partitioning read from a file or drawn by a
/// test, on `schedule.threads` threads per rank: its `P` partitions (at least ranks ×
/// threads) go to the ranks in contiguous blocks ([`rank_starts`]: with `P = ranks × threads`,
/// partition `p` on rank `p / threads`), and each rank places its own on its threads anew each
/// window as `schedule.placement` says (`parallel::Placer`; a partition never leaves its
/// rank).
pub fn run_rank_split<T: Transport + ?Sized>(
    config: &SimConfig,
    part: Result<Partitioning, RankError>,
    schedule: Schedule,
    transport: &mut T,
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
) -> Result<(Option<Simulator>, RankStats), RankError> {
    let (sim, stats) = run_observed(
        config,
        part,
        schedule,
        transport,
        &|_| NoObserver,
        window_done,
        None,
    )?;
    Ok((sim.map(|(sim, _)| sim), stats))
}

fn run_observed<O: Observer + Shipped + Send, T: Transport + ?Sized>(
    config: &SimConfig,
    part: Result<Partitioning, RankError>,
    schedule: Schedule,
    transport: &mut T,
    observer: &(dyn Fn(u16) -> O + Sync),
    window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
    traces: Option<Traces<'_, '_, O>>,
) -> Result<(Option<Observed<O>>, RankStats), RankError> {
    let (rank, ranks) = (transport.rank(), transport.ranks());
    let t = usize::from(schedule.threads.max(1));
    // every rank builds its partitions; one that cannot tells the others before any window
    let built = part.and_then(|p| build_rank(config, p, ranks, t, rank, observer));
    // (and all agree on whether the trace records are gathered: a gather some ranks skip
    // would leave the others waiting)
    let traced = traces.is_some();
    let [all_traced, none_traced, failed] =
        transport.min_all([u64::from(traced), u64::from(!traced), flag(built.is_err())])?;
    let (part, sims) = match built {
        Err(e) => return Err(e),
        Ok(_) if failed != u64::MAX => return Err(RankError::Elsewhere),
        Ok(_) if all_traced == 0 && none_traced == 0 => {
            return Err(RankError::Split(
                "the ranks disagree on whether trace outputs are written (every rank must be given the same arguments)".into(),
            ));
        }
        Ok(b) => b,
    };
    let n = usize::from(part.parts);
    let starts = rank_starts(n, ranks);
    let (first, m) = (starts[rank], starts[rank + 1] - starts[rank]);
    // one partition per thread: no placement balances better than keeping them where they are
    let placement = if m == t {
        Placement::Static
    } else {
        schedule.placement
    };
    let la = lookahead(config, &part);
    let end = sims[0].end();
    let end_ps = u64::try_from(end.as_ps())
        .ok()
        .filter(|&e| e < u64::MAX - 1)
        .ok_or(RankError::TooLong(config.duration))?;
    let barrier = WindowBarrier::new(t, transport.processes_on_this_machine(), schedule.wait);
    // this rank's partitions (local numbers); each locked by the one thread that runs it in a
    // window
    let sims: Vec<Mutex<Option<Simulator<O>>>> = sims.into_iter().map(|s| Mutex::new(Some(s))).collect();
    // each local partition's next event and its cost in the last window, in two slots by
    // window parity (as in `parallel.rs`)
    let published: [Vec<Published>; 2] =
        std::array::from_fn(|_| (0..m).map(|_| Published::default()).collect());
    // mail[to_local * n + from]: what partition `from` (global) sent to this rank's `to_local`
    let mail: Vec<Mutex<Mail>> = (0..m * n).map(|_| Mutex::new(Mail::default())).collect();
    // away[from_local * n + to]: what this rank's `from_local` sent to partition `to` elsewhere
    let away: Vec<Mutex<Mail>> = (0..m * n).map(|_| Mutex::new(Mail::default())).collect();
    // the window agreed on: its start (None: the run is over), stop, error
    let agreed: Mutex<(Option<Instant>, bool, bool)> = Mutex::new((None, false, false));
    let failure: Mutex<Option<RankError>> = Mutex::new(None);
    // a deadlock scan: this rank's partitions' parts, then every partition's (all ranks)
    let scans: Vec<Mutex<Option<ScanPart>>> = (0..m).map(|_| Mutex::new(None)).collect();
    let all_scans: RwLock<Option<Vec<ScanPart>>> = RwLock::new(None);
    // each partition's trace records of the window, encoded (gathered on rank 0 after it)
    let records: Vec<Mutex<Vec<u8>>> = (0..m).map(|_| Mutex::new(Vec::new())).collect();
    let window_events: Vec<AtomicU64> = (0..t).map(|_| AtomicU64::new(0)).collect();
    let stop_next = AtomicBool::new(false);
    let (take, window_records) = match traces {
        Some(tr) => (Some(tr.take), tr.window),
        None => (None, None),
    };
    let stats = Mutex::new(RankStats {
        ranks,
        threads: t as u16,
        partitions: n,
        partitions_here: m,
        placement,
        lookahead_ps: la.map_or(0, |d| d.as_ps()),
        busy_s_per_thread: vec![0.0; t],
        wait_s_per_thread: vec![0.0; t],
        events_per_thread: vec![0; t],
        ..Default::default()
    });
    let shared = Shared {
        barrier: &barrier,
        sims: &sims,
        published: &published,
        mail: &mail,
        away: &away,
        agreed: &agreed,
        failure: &failure,
        scans: &scans,
        all_scans: &all_scans,
        records: &records,
        window_events: &window_events,
        stop_next: &stop_next,
        stats: &stats,
        starts: &starts,
        placement,
        n,
        t,
        m,
        first,
        la,
        end,
        end_ps,
    };
    // (only rank 0 runs partition 0, whose thread asks `window_done`)
    let window_done = |at, ev| rank == 0 && window_done(at, ev);
    let errors: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..t)
            .map(|me| {
                let (shared, window_done) = (&shared, &window_done);
                s.spawn(move || shared.worker(me, None::<&mut T>, take, None, window_done))
            })
            .collect();
        // the rank's first thread runs here: the one that talks to the other ranks
        let lead = shared.worker(0, Some(&mut *transport), take, window_records, &window_done);
        let mut all = vec![lead];
        all.extend(
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        all
    });
    let mut stats = stats
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    stats.barrier_waits = barrier.waits();
    let failure = failure
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let errored = errors.iter().any(|&e| e);
    if take.is_some() && !errored {
        // (the last window's trace records may have failed on this rank only: the others
        // learn it here, before they would wait for its digests)
        let [_, _, failed] = transport.min_all([0, 0, flag(failure.is_some())])?;
        if let Some(e) = failure {
            return Err(e);
        }
        if failed != u64::MAX {
            return Err(RankError::Elsewhere);
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if errored {
        return Err(RankError::Elsewhere);
    }

    // the digests of every partition (each followed by what its observer ships) go to rank
    // 0, whose partition 0 absorbs them
    let mut sims: Vec<Simulator<O>> = sims
        .into_iter()
        .filter_map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect();
    if sims.len() != m {
        return Err(RankError::Merge(format!(
            "{} of this rank's {m} partitions ran",
            sims.len()
        )));
    }
    let mut bytes = Vec::new();
    for (i, sim) in sims.iter().enumerate() {
        if rank == 0 && i == 0 {
            continue;
        }
        sim.digest().encode(&mut bytes);
        if rank != 0 {
            sim.observer().ship(&mut bytes);
        }
    }
    let Some(from_ranks) = transport.gather(bytes)? else {
        return Ok((None, stats));
    };
    // rank 0's partitions' observers as they ran, then the others' as shipped
    let mut observers: Vec<O> = sims
        .iter_mut()
        .enumerate()
        .map(|(i, s)| std::mem::replace(s.observer_mut(), observer(i as u16)))
        .collect();
    let mut digests = Vec::with_capacity(n.saturating_sub(1));
    for b in &from_ranks {
        let mut d = Dec::new(b);
        while !d.is_empty() {
            let digest = Digest::decode(&mut d)?;
            if usize::from(digest.part) != digests.len() + 1 || usize::from(digest.part) >= n {
                return Err(RankError::Merge(format!(
                    "the digest of partition {} came where partition {}'s was due",
                    digest.part,
                    digests.len() + 1
                )));
            }
            // (rank 0's own partitions are 0..m)
            if usize::from(digest.part) >= m {
                let mut o = observer(digest.part);
                o.unship(&mut d)?;
                observers.push(o);
            }
            digests.push(digest);
        }
    }
    if digests.len() + 1 != n {
        return Err(RankError::Merge(format!(
            "{} digests for {n} partitions",
            digests.len() + 1
        )));
    }
    // (its observer is in `observers`, a fresh one in its place)
    let mut merged = sims.swap_remove(0);
    merged.absorb(&digests).map_err(RankError::Merge)?;
    Ok((Some((merged, observers)), stats))
}

/// Where each rank's partitions start when `n` partitions go to `ranks` ranks: rank `r` runs
/// partitions `starts[r]..starts[r + 1]`, a contiguous block of ⌊n/ranks⌋ or ⌈n/ranks⌉ (with
/// `n = ranks × threads`, partition `p` on rank `p / threads`).
pub fn rank_starts(n: usize, ranks: usize) -> Vec<usize> {
    let ranks = ranks.max(1);
    (0..=ranks).map(|r| r * n / ranks).collect()
}

type Built<O> = (Partitioning, Vec<Simulator<O>>);

/// This rank's partitions of `config`, each observed by the observer `observer` makes for it.
fn build_rank<O: Observer>(
    config: &SimConfig,
    part: Partitioning,
    ranks: usize,
    t: usize,
    rank: usize,
    observer: &dyn Fn(u16) -> O,
) -> Result<Built<O>, RankError> {
    let n = usize::from(part.parts);
    if n < ranks * t {
        return Err(RankError::Split(format!(
            "{n} partitions for {ranks} ranks × {t} threads: every thread runs at least one (at least {} partitions)",
            ranks * t
        )));
    }
    if part.of_node.iter().any(|&p| usize::from(p) >= n) {
        return Err(RankError::Split(format!(
            "a partitioning into {n} partitions that puts a node in partition {}",
            part.of_node.iter().max().copied().unwrap_or(0)
        )));
    }
    if lookahead(config, &part) == Some(Duration::ZERO) {
        return Err(PartitionError::Unsupported("a cut link without delay (no lookahead)").into());
    }
    let starts = rank_starts(n, ranks);
    // one copy of the configuration for this rank's partitions (they only read it)
    let shared = std::sync::Arc::new(config.clone());
    let sims = (starts[rank]..starts[rank + 1])
        .map(|me| {
            Simulator::partition_observed(
                std::sync::Arc::clone(&shared),
                part.of_node.clone(),
                me as u16,
                observer(me as u16),
                CalendarQueue::numbered_if(O::PUSH_NUMBERS),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((part, sims))
}

/// What a rank's threads share.
struct Shared<'a, O: Observer> {
    barrier: &'a WindowBarrier,
    /// This rank's partitions, by local number.
    sims: &'a [Mutex<Option<Simulator<O>>>],
    published: &'a [Vec<Published>; 2],
    mail: &'a [Mutex<Mail>],
    away: &'a [Mutex<Mail>],
    agreed: &'a Mutex<(Option<Instant>, bool, bool)>,
    failure: &'a Mutex<Option<RankError>>,
    scans: &'a [Mutex<Option<ScanPart>>],
    /// Every partition's part of the scan just made (`None`: gathering it failed).
    all_scans: &'a RwLock<Option<Vec<ScanPart>>>,
    /// Each partition's trace records of the window, encoded.
    records: &'a [Mutex<Vec<u8>>],
    /// Each thread's events in the current window (written before the third barrier, read
    /// by the first thread after it).
    window_events: &'a [AtomicU64],
    /// Set by the thread that ran partition 0 when `window_done` asked to stop.
    stop_next: &'a AtomicBool,
    stats: &'a Mutex<RankStats>,
    /// Each rank's first partition, and the partitions in all at the end ([`rank_starts`]).
    starts: &'a [usize],
    placement: Placement,
    /// Partitions in all.
    n: usize,
    /// Threads on this rank.
    t: usize,
    /// Partitions on this rank.
    m: usize,
    /// This rank's first partition.
    first: usize,
    la: Option<Duration>,
    end: Instant,
    end_ps: u64,
}

impl<O: Observer> Shared<'_, O> {
    /// The rank that runs partition `p`.
    fn rank_of(&self, p: usize) -> usize {
        self.starts.partition_point(|&s| s <= p).saturating_sub(1)
    }

    /// Runs thread `me` of this rank to the end: in each window the partitions the placement
    /// gives it (`parallel::Placer`, as in `parallel.rs`; with as many partitions as threads,
    /// local partition `me` throughout); the thread with the transport talks to the other
    /// ranks between the barriers. Returns whether the run was stopped by an error (here or
    /// elsewhere). With `take`, each partition's trace records are taken after every window
    /// and once at the end, and the thread with the transport gathers its rank's on rank 0,
    /// where `window` takes them.
    fn worker<T: Transport + ?Sized>(
        &self,
        me: usize,
        mut transport: Option<&mut T>,
        take: Option<TakeRecords<'_, O>>,
        mut window: Option<WindowRecords<'_>>,
        window_done: &(dyn Fn(Instant, u64) -> bool + Sync),
    ) -> bool {
        let (n, t, m) = (self.n, self.t, self.m);
        // local partition p starts on thread p mod t (the placement with every cost 0)
        let mut thread_of: Vec<u16> = (0..m).map(|p| (p % t) as u16).collect();
        let mut mine: Vec<(usize, u64)> = (me..m).step_by(t).map(|p| (p, 0)).collect();
        let mut placer = Placer::default();
        let mut costs = vec![0u64; m];
        let (mut windows, mut messages, mut between, mut moves) = (0u64, 0u64, 0u64, 0u64);
        let (mut events, mut critical_events) = (0u64, 0u64);
        let (mut busy, mut wait, mut talk) = (0.0f64, 0.0f64, 0.0f64);
        let mut clock = std::time::Instant::now();
        let mut stopped = false;
        let mut error = false;
        // bytes of trace records gathered, and gathers
        let mut traced = (0u64, 0u64);
        for parity in (0..2).cycle() {
            // 1. publish what this thread's partitions need of the next window
            let slots = &self.published[parity];
            for &(p, c) in &mine {
                slots[p].set(lock(&self.sims[p]).as_ref().and_then(|s| s.next_event_at()), c);
            }
            self.barrier.wait();
            if let Some(tr) = transport.as_deref_mut() {
                let local = slots.iter().filter_map(Published::at).min();
                let local_ps = local.map_or(u64::MAX, |x| {
                    u64::try_from(x.as_ps()).unwrap_or(u64::MAX).min(self.end_ps)
                });
                let failed = lock(self.failure).is_some();
                let stop_next = self.stop_next.load(Relaxed);
                let t0 = std::time::Instant::now();
                let agreed = match tr.min_all([local_ps, flag(stop_next), flag(failed)]) {
                    Ok([start, stop, err]) => (
                        (start < self.end_ps).then(|| Instant::from_ps(u128::from(start))),
                        stop != u64::MAX,
                        err != u64::MAX,
                    ),
                    Err(e) => {
                        lock(self.failure).get_or_insert(e);
                        (None, false, true)
                    }
                };
                talk += t0.elapsed().as_secs_f64();
                *lock(self.agreed) = agreed;
            }
            self.barrier.wait();
            // 2. the window agreed on, and this window's placement (the same on every thread
            // of the rank: computed from the same slots)
            let (start, stop, err) = *lock(self.agreed);
            if err {
                error = true;
                break;
            }
            if stop {
                stopped = true;
                break;
            }
            let Some(start) = start.filter(|&x| x < self.end) else {
                break;
            };
            let until = self.la.map_or(self.end, |d| (start + d).min(self.end));
            if self.placement != Placement::Static {
                for (c, slot) in costs.iter_mut().zip(slots) {
                    *c = slot.cost.load(Relaxed);
                }
                moves += placer.place_mine(&costs, t, me, &mut thread_of, &mut mine);
            }
            wait += clock.elapsed().as_secs_f64();
            clock = std::time::Instant::now();
            // 3. run this thread's partitions through the window
            let mut window_ev = 0u64;
            for (p, c) in &mut mine {
                let mut guard = lock(&self.sims[*p]);
                let Some(sim) = guard.as_mut() else { continue };
                let (ev, cost) = run_window(sim, until, self.placement);
                *c = cost;
                window_ev += ev;
                let from = self.first + *p;
                sim.hand_over(|to, v| {
                    messages += v.len() as u64;
                    if (self.first..self.first + m).contains(&to) {
                        give(&self.mail[(to - self.first) * n + from], v);
                    } else {
                        between += v.len() as u64;
                        give(&self.away[*p * n + to], v);
                    }
                });
                if let Some(take) = take {
                    take(sim.observer_mut(), &mut lock(&self.records[*p]));
                }
                if from == 0 && window_done(until, sim.events()) {
                    self.stop_next.store(true, Relaxed);
                }
            }
            busy += clock.elapsed().as_secs_f64();
            events += window_ev;
            self.window_events[me].store(window_ev, Relaxed);
            clock = std::time::Instant::now();
            windows += 1;
            self.barrier.wait();
            // 4. the frames between ranks, and the window's trace records
            if let Some(tr) = transport.as_deref_mut() {
                critical_events += self
                    .window_events
                    .iter()
                    .map(|e| e.load(Relaxed))
                    .max()
                    .unwrap_or(0);
                let t0 = std::time::Instant::now();
                if let Err(e) = self.swap_with_ranks(tr) {
                    lock(self.failure).get_or_insert(e);
                }
                if take.is_some() {
                    match self.gather_records(tr, window.as_deref_mut()) {
                        Ok(bytes) => traced = (traced.0 + bytes, traced.1 + 1),
                        Err(e) => {
                            lock(self.failure).get_or_insert(e);
                        }
                    }
                }
                talk += t0.elapsed().as_secs_f64();
            }
            self.barrier.wait();
            // 5. take in each partition's mail, sender by sender
            for (p, c) in &mut mine {
                let mut guard = lock(&self.sims[*p]);
                let Some(sim) = guard.as_mut() else { continue };
                *c += take_mail(sim, &self.mail[*p * n..(*p + 1) * n], self.placement);
            }
            // 6. a fabric-wide timer ended the window in every partition at the same point (as
            // in `parallel.rs`): each handles it now that the frames sent before it are in; a
            // deadlock scan's parts are gathered from every partition of every rank, and each
            // partition builds the same graph from all of them (every thread has a partition,
            // and every partition holds the same timer: all threads take the same barriers)
            let held = mine.first().is_some_and(|&(p, _)| {
                lock(&self.sims[p])
                    .as_ref()
                    .is_some_and(|s| s.holds_fabric_timer())
            });
            if held {
                let mut scanned = false;
                for &(p, _) in &mine {
                    let mut guard = lock(&self.sims[p]);
                    let Some(sim) = guard.as_mut() else { continue };
                    sim.handle_held();
                    if let Some(part) = sim.take_scan_part() {
                        *lock(&self.scans[p]) = Some(part);
                        scanned = true;
                    }
                }
                if scanned {
                    self.barrier.wait();
                    if let Some(tr) = transport.as_deref_mut() {
                        let t0 = std::time::Instant::now();
                        let all = self.gather_scans(tr);
                        talk += t0.elapsed().as_secs_f64();
                        let all = match all {
                            Ok(all) => Some(all),
                            Err(e) => {
                                lock(self.failure).get_or_insert(e);
                                None
                            }
                        };
                        *self.all_scans.write().unwrap_or_else(PoisonError::into_inner) = all;
                    }
                    self.barrier.wait();
                    {
                        let all = self.all_scans.read().unwrap_or_else(PoisonError::into_inner);
                        let Some(all) = all.as_ref() else {
                            error = true;
                            break;
                        };
                        let parts: Vec<&ScanPart> = all.iter().collect();
                        for &(p, _) in &mine {
                            if let Some(sim) = lock(&self.sims[p]).as_mut() {
                                sim.scan_parts(&parts);
                            }
                        }
                    }
                    // (the first thread writes the next scan's parts only after the window
                    // barriers that follow: every thread has read these by then)
                }
                // every partition halts at the same scan (the same findings everywhere), so
                // every thread of every rank leaves the loop after this window (and, as in
                // `parallel.rs`, `run_until` below finds the run halted)
                let halted = mine
                    .first()
                    .is_some_and(|&(p, _)| lock(&self.sims[p]).as_ref().is_some_and(|s| s.halted()));
                if halted {
                    break;
                }
            }
        }
        // (after a stop, each partition stays where the window left it)
        for &(p, _) in &mine {
            if let Some(sim) = lock(&self.sims[p]).as_mut()
                && !stopped
                && !error
            {
                sim.run_until(self.end);
            }
        }
        // the records since the last window's (every partition of every rank takes as many
        // as the others: the k-th gather of every rank covers the same window)
        if let Some(take) = take
            && !error
        {
            for &(p, _) in &mine {
                if let Some(sim) = lock(&self.sims[p]).as_mut() {
                    take(sim.observer_mut(), &mut lock(&self.records[p]));
                }
            }
            self.barrier.wait();
            if let Some(tr) = transport.as_deref_mut() {
                let t0 = std::time::Instant::now();
                match self.gather_records(tr, window) {
                    Ok(bytes) => traced = (traced.0 + bytes, traced.1 + 1),
                    Err(e) => {
                        lock(self.failure).get_or_insert(e);
                    }
                }
                talk += t0.elapsed().as_secs_f64();
            }
        }
        let mut st = lock(self.stats);
        st.windows = windows;
        st.messages += messages;
        st.messages_between_ranks += between;
        st.moves += moves;
        st.events_per_thread[me] = events;
        st.busy_s_per_thread[me] = busy;
        st.wait_s_per_thread[me] = wait + clock.elapsed().as_secs_f64();
        if transport.is_some() {
            st.critical_events = critical_events;
            st.transport_s = talk;
            st.trace_bytes = traced.0;
            st.trace_gathers = traced.1;
        }
        error
    }

    /// Gathers this rank's partitions' trace records of the window on rank 0 (in partition
    /// order), where `window` takes every rank's; returns the bytes gathered (rank 0) or sent.
    fn gather_records<T: Transport + ?Sized>(
        &self,
        tr: &mut T,
        window: Option<&mut WindowFn<'_>>,
    ) -> Result<u64, RankError> {
        let mut bytes = Vec::new();
        for slot in self.records {
            bytes.append(&mut lock(slot));
        }
        let mut n = bytes.len() as u64;
        if let Some(all) = tr.gather(bytes)? {
            n = all.iter().map(|b| b.len() as u64).sum();
            if let Some(window) = window {
                window(all).map_err(RankError::Trace)?;
            }
        }
        Ok(n)
    }

    /// Every partition's part of the deadlock scan just made, in partition order: this rank's
    /// threads' parts (each set before the barrier that precedes this call), sent to every
    /// rank and taken from every rank (an all-gather through [`Transport::exchange`]).
    fn gather_scans<T: Transport + ?Sized>(&self, tr: &mut T) -> Result<Vec<ScanPart>, RankError> {
        let mut bytes = Vec::new();
        for (i, slot) in self.scans.iter().enumerate() {
            let part = lock(slot).take().unwrap_or_default();
            exchange::encode_scan_part((self.first + i) as u16, &part, &mut bytes);
        }
        let got = tr.exchange(vec![bytes; tr.ranks()])?;
        let mut all = Vec::with_capacity(self.n);
        for bytes in &got {
            let mut d = Dec::new(bytes);
            while !d.is_empty() {
                let (part, scan) = exchange::decode_scan_part(&mut d)?;
                if usize::from(part) != all.len() {
                    return Err(RankError::Merge(format!(
                        "the deadlock scan's part of partition {part} came where partition {}'s was due",
                        all.len()
                    )));
                }
                all.push(scan);
            }
        }
        if all.len() != self.n {
            return Err(RankError::Merge(format!(
                "{} parts of a deadlock scan for {} partitions",
                all.len(),
                self.n
            )));
        }
        Ok(all)
    }

    /// Sends what this rank's partitions sent to other ranks' and takes in what theirs sent
    /// to this rank's, into the mail. Per destination rank: groups of (from, to, count,
    /// messages), from this rank's partitions in order.
    fn swap_with_ranks<T: Transport + ?Sized>(&self, tr: &mut T) -> Result<(), RankError> {
        let (n, m) = (self.n, self.m);
        let ranks = tr.ranks();
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); ranks];
        for from_local in 0..m {
            for to in 0..n {
                // (emptied in place: the sender swaps its next frames into this allocation)
                let mut v = lock(&self.away[from_local * n + to]);
                if v.is_empty() {
                    continue;
                }
                let buf = &mut out[self.rank_of(to)];
                exchange::encode_group((self.first + from_local) as u16, to as u16, v.len(), buf);
                for m in &v.messages {
                    exchange::encode_message(m, v.extra(m), buf);
                }
                v.clear();
            }
        }
        let got = tr.exchange(out)?;
        for (r, bytes) in got.iter().enumerate() {
            let mut d = Dec::new(bytes);
            while !d.is_empty() {
                let (from, to, count) = exchange::decode_group(&mut d)?;
                let (from, to) = (from as usize, to as usize);
                if from >= n || self.rank_of(from) != r || !(self.first..self.first + m).contains(&to) {
                    return Err(exchange::DecodeError {
                        what: "messages between partitions that do not belong there",
                        at: 0,
                        len: bytes.len(),
                    }
                    .into());
                }
                let sim = lock(&self.sims[to - self.first]);
                let mut mail = lock(&self.mail[(to - self.first) * n + from]);
                for _ in 0..count {
                    let bad = d.err("a message to a port that does not end a cut link in its partition");
                    let kept = (mail.messages.len(), mail.extras.len());
                    exchange::decode_message(&mut d, &mut mail)?;
                    // (a message taken in goes to its port's peer's wire: only a port of the
                    // receiving partition at a cut link has one there; a refused one is not
                    // left in the mail, which this window still takes in)
                    let to_port = mail.messages.last().map(|m| m.to);
                    if !to_port.is_some_and(|p| sim.as_ref().is_some_and(|s| s.receives_at(p))) {
                        mail.messages.truncate(kept.0);
                        mail.extras.truncate(kept.1);
                        return Err(bad.into());
                    }
                }
            }
        }
        Ok(())
    }
}

/// A lock that a panicked thread did not leave unusable (its panic is re-raised at the join).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Ranks as threads of one process: the [`Transport`] of tests and of machines without MPI.
pub mod local {
    use std::sync::{Arc, Barrier, Mutex};

    use super::{RankError, Transport};

    /// What the ranks of one process share.
    struct Hub {
        ranks: usize,
        barrier: Barrier,
        mins: Mutex<Vec<[u64; 3]>>,
        /// post[to * ranks + from].
        post: Mutex<Vec<Vec<u8>>>,
    }

    /// One rank of [`ranks`].
    pub struct LocalRank {
        rank: usize,
        hub: Arc<Hub>,
    }

    /// `n` ranks that talk through shared memory; each is to be driven by its own thread.
    pub fn ranks(n: usize) -> Vec<LocalRank> {
        let n = n.max(1);
        let hub = Arc::new(Hub {
            ranks: n,
            barrier: Barrier::new(n),
            mins: Mutex::new(vec![[0; 3]; n]),
            post: Mutex::new(vec![Vec::new(); n * n]),
        });
        (0..n)
            .map(|rank| LocalRank {
                rank,
                hub: hub.clone(),
            })
            .collect()
    }

    impl Transport for LocalRank {
        fn rank(&self) -> usize {
            self.rank
        }
        fn ranks(&self) -> usize {
            self.hub.ranks
        }
        fn min_all(&mut self, v: [u64; 3]) -> Result<[u64; 3], RankError> {
            super::lock(&self.hub.mins)[self.rank] = v;
            self.hub.barrier.wait();
            let m = super::lock(&self.hub.mins)
                .iter()
                .fold([u64::MAX; 3], |a, b| std::array::from_fn(|i| a[i].min(b[i])));
            self.hub.barrier.wait();
            Ok(m)
        }
        fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankError> {
            let n = self.hub.ranks;
            {
                let mut post = super::lock(&self.hub.post);
                for (to, b) in out.into_iter().enumerate() {
                    post[to * n + self.rank] = b;
                }
            }
            self.hub.barrier.wait();
            let got = {
                let mut post = super::lock(&self.hub.post);
                (0..n)
                    .map(|from| std::mem::take(&mut post[self.rank * n + from]))
                    .collect()
            };
            self.hub.barrier.wait();
            Ok(got)
        }
        fn gather(&mut self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, RankError> {
            let n = self.hub.ranks;
            super::lock(&self.hub.post)[self.rank] = bytes;
            self.hub.barrier.wait();
            let got = (self.rank == 0).then(|| {
                let mut post = super::lock(&self.hub.post);
                (0..n).map(|from| std::mem::take(&mut post[from])).collect()
            });
            self.hub.barrier.wait();
            Ok(got)
        }
    }
}
