//! The barrier that ends each window of a run on threads ([`super::parallel`], [`super::ranks`]).
//!
//! A window of a busy fabric is about a microsecond of simulated time and tens to hundreds of
//! microseconds of work, and every thread crosses two or more barriers a window (thousands a
//! run). `std::sync::Barrier` puts each early thread to sleep on a condition variable; the last
//! one then wakes them through the kernel, and each wake-up costs microseconds to tens of
//! microseconds on a virtual machine (on the 320-host run on two threads of a 2-core VM,
//! ≈ 50 µs a window: docs/benchmarks.md, "Spinning at the window's barrier").
//! [`WindowBarrier`] lets an early thread spin while its peers arrive, for a bounded time, and
//! sleep only after that. Spinning pays only while every waiting thread has a core of its own,
//! so a thread sleeps at once
//! - when the window threads of this process (all its barriers' together: ranks of one process,
//!   tests running side by side), times the processes that share the machine (MPI ranks on one
//!   node), outnumber its cores;
//! - when the recent waits at this barrier were long (a loaded machine: other processes want
//!   the cores; a peer that was descheduled makes every wait last a time slice), which a
//!   process cannot count: it spins again once they are short.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long an early thread spins before it sleeps.
const SPIN: Duration = Duration::from_micros(500);
/// Spins between two readings of the clock.
const SPINS_PER_CHECK: u32 = 256;
/// The recent waits' mean (ns) above which a thread sleeps at once: longer waits are not a
/// peer finishing its window's work but a peer without a core.
const LONG_WAIT_NS: u64 = SPIN.as_nanos() as u64 / 2;

/// Window threads of this process now: each [`WindowBarrier`] counts its threads while it
/// lives.
static WINDOW_THREADS: AtomicUsize = AtomicUsize::new(0);

/// A reusable barrier for `n` threads that spins before it sleeps while the machine has a core
/// for every waiting thread.
#[derive(Debug)]
pub struct WindowBarrier {
    n: usize,
    /// Threads arrived in the current round.
    arrived: AtomicUsize,
    /// Rounds completed.
    round: AtomicU64,
    /// Threads asleep (or about to be) on `wake`.
    sleepers: AtomicUsize,
    /// How long an early thread spins (zero: it sleeps at once).
    spin: Duration,
    /// Processes on this machine that run window threads as this one does (MPI ranks on one
    /// node: 1 for a process alone).
    processes: usize,
    /// The machine's cores, as this process may use them.
    cores: usize,
    /// An exponential mean of this barrier's recent waits, in nanoseconds.
    recent_wait_ns: AtomicU64,
    /// Waits that ended while spinning, and waits that slept.
    spun: AtomicU64,
    slept: AtomicU64,
    lock: Mutex<()>,
    wake: Condvar,
}

impl WindowBarrier {
    /// A barrier for `n` threads of this process, one of `processes` on this machine that
    /// run window threads at once: its early threads spin while the machine has a core for
    /// every such thread and the recent waits were short.
    pub fn new(n: usize, processes: usize) -> WindowBarrier {
        WindowBarrier::with_spin(n, processes, SPIN)
    }

    /// [`WindowBarrier::new`] whose early threads spin for at most `spin` (zero: never).
    pub fn with_spin(n: usize, processes: usize, spin: Duration) -> WindowBarrier {
        let n = n.max(1);
        WINDOW_THREADS.fetch_add(n, Ordering::Relaxed);
        WindowBarrier {
            n,
            arrived: AtomicUsize::new(0),
            round: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            spin,
            processes: processes.max(1),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            recent_wait_ns: AtomicU64::new(0),
            spun: AtomicU64::new(0),
            slept: AtomicU64::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Whether an early thread spins now: a core for every window thread on the machine and
    /// short recent waits.
    fn spins(&self) -> bool {
        !self.spin.is_zero()
            && WINDOW_THREADS
                .load(Ordering::Relaxed)
                .saturating_mul(self.processes)
                <= self.cores
            && self.recent_wait_ns.load(Ordering::Relaxed) <= LONG_WAIT_NS
    }

    /// Blocks until all `n` threads have called `wait` in this round.
    pub fn wait(&self) {
        // (this thread has not arrived: the round cannot end before the read)
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // the last: the next round's count starts before any thread can leave this one
            self.arrived.store(0, Ordering::Relaxed);
            self.round.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
                self.wake.notify_all();
            }
            return;
        }
        let start = Instant::now();
        if self.spins() && self.spin_until_round_ends(round, start) {
            self.note_wait(start);
            self.spun.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // asleep: counted before the round is read again under the lock, so that the last
        // thread, which ends the round before it reads the count, either is seen to have
        // ended it here or sees this one asleep and wakes it
        let mut held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.round.load(Ordering::SeqCst) == round {
            held = self.wake.wait(held).unwrap_or_else(PoisonError::into_inner);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        drop(held);
        self.note_wait(start);
        self.slept.fetch_add(1, Ordering::Relaxed);
    }

    /// Waits so far that ended while spinning, and waits that slept (the last thread of a
    /// round does not wait).
    pub fn waits(&self) -> (u64, u64) {
        (
            self.spun.load(Ordering::Relaxed),
            self.slept.load(Ordering::Relaxed),
        )
    }

    /// Spins until round `round` ends (true) or the spin time since `start` is over (false).
    fn spin_until_round_ends(&self, round: u64, start: Instant) -> bool {
        loop {
            for _ in 0..SPINS_PER_CHECK {
                if self.round.load(Ordering::Acquire) != round {
                    return true;
                }
                spin_loop();
            }
            if start.elapsed() >= self.spin {
                return false;
            }
        }
    }

    /// Adds a wait that began at `start` to the recent waits' mean (weight 1/8; two threads
    /// that update it at once may lose one of the updates, which only delays the mean).
    fn note_wait(&self, start: Instant) {
        let w = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mean = self.recent_wait_ns.load(Ordering::Relaxed);
        let next = if w >= mean {
            mean + (w - mean) / 8
        } else {
            mean - (mean - w) / 8
        };
        self.recent_wait_ns.store(next, Ordering::Relaxed);
    }
}

impl Drop for WindowBarrier {
    fn drop(&mut self) {
        WINDOW_THREADS.fetch_sub(self.n, Ordering::Relaxed);
    }
}

/// Nanoseconds a round of a barrier for `threads` threads takes on this machine, over `rounds`
/// rounds with no work between them: [`WindowBarrier`] (`spin` true) or `std::sync::Barrier`.
pub fn round_ns(threads: usize, rounds: u32, spin: bool) -> f64 {
    let threads = threads.max(1);
    let ours = WindowBarrier::new(threads, 1);
    let std = std::sync::Barrier::new(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..rounds {
                    if spin {
                        ours.wait();
                    } else {
                        std.wait();
                    }
                }
            });
        }
    });
    start.elapsed().as_nanos() as f64 / f64::from(rounds.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every thread sees every other's writes of a round once the round's barrier is
    /// crossed, round after round, whether the early threads spin or sleep.
    fn rounds_are_ordered(spin: Duration) {
        const THREADS: usize = 3;
        const ROUNDS: u64 = 1_000;
        let barrier = WindowBarrier::with_spin(THREADS, 1, spin);
        let written: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for me in 0..THREADS {
                let (barrier, written) = (&barrier, &written);
                s.spawn(move || {
                    for r in 1..=ROUNDS {
                        written[me].store(r, Ordering::Relaxed);
                        barrier.wait();
                        for w in written {
                            assert_eq!(w.load(Ordering::Relaxed), r, "a thread left round {r} early");
                        }
                        barrier.wait();
                    }
                });
            }
        });
    }

    #[test]
    fn spinning_threads_leave_a_round_only_when_all_have_arrived() {
        rounds_are_ordered(Duration::from_micros(100));
    }

    #[test]
    fn sleeping_threads_leave_a_round_only_when_all_have_arrived() {
        rounds_are_ordered(Duration::ZERO);
    }

    #[test]
    fn a_late_thread_wakes_the_ones_that_stopped_spinning() {
        // the early threads spin 1 µs, the last arrives 20 ms later: they must have gone to
        // sleep, stay asleep until it arrives, and be woken (a lost wake-up hangs here)
        let barrier = WindowBarrier::with_spin(3, 1, Duration::from_micros(1));
        let late_arrived = AtomicU64::new(0);
        let left = AtomicU64::new(0);
        std::thread::scope(|s| {
            for i in 0..3 {
                let (barrier, late_arrived, left) = (&barrier, &late_arrived, &left);
                s.spawn(move || {
                    if i == 2 {
                        std::thread::sleep(Duration::from_millis(20));
                        late_arrived.store(1, Ordering::SeqCst);
                    }
                    barrier.wait();
                    assert_eq!(
                        late_arrived.load(Ordering::SeqCst),
                        1,
                        "thread {i} left before the last arrived"
                    );
                    left.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(left.load(Ordering::SeqCst), 3);
        assert_eq!(barrier.sleepers.load(Ordering::SeqCst), 0);
        assert_eq!(barrier.waits().1, 2, "both early threads slept");
    }

    #[test]
    fn threads_that_outnumber_the_cores_do_not_spin() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        // one process with more window threads than cores, and processes sharing the machine
        // that together have more
        assert!(!WindowBarrier::new(cores + 1, 1).spins());
        assert!(!WindowBarrier::new(1, cores + 1).spins());
    }

    #[test]
    fn long_recent_waits_stop_the_spinning_and_short_ones_bring_it_back() {
        let barrier = WindowBarrier::with_spin(2, 1, SPIN);
        barrier.recent_wait_ns.store(LONG_WAIT_NS + 1, Ordering::Relaxed);
        assert!(
            !barrier.spins(),
            "a barrier whose waits last long must sleep at once"
        );
        // waits of about nothing bring the mean down within a few dozen rounds
        for _ in 0..64 {
            barrier.note_wait(Instant::now());
        }
        assert!(barrier.recent_wait_ns.load(Ordering::Relaxed) < LONG_WAIT_NS);
    }
}
