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
//! - for a while after a spin at this barrier ran out (a loaded machine: other processes want
//!   the cores, and a peer that was descheduled makes a wait last a time slice; no process
//!   can count them): 2 ms after a lone one (a long window, a slow start), twice the last
//!   while they follow each other (up to a second), after which it tries again.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long an early thread spins before it sleeps.
const SPIN: Duration = Duration::from_micros(500);
/// Spins between two readings of the clock.
const SPINS_PER_CHECK: u32 = 256;
/// How long the early threads sleep at once after a spin ran out, at first ...
const COOL_DOWN: Duration = Duration::from_millis(2);
/// ... and at most, after spins that ran out one soon after the other.
const MAX_COOL_DOWN: Duration = Duration::from_secs(1);

/// How a thread waits at a window's barrier (`lossless sim --wait-policy`, after OpenMP's
/// `OMP_WAIT_POLICY`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum WaitPolicy {
    /// Spins (up to 500 µs) while the machine has a core for every window thread and the
    /// spins have not been running out, then sleeps.
    #[default]
    Auto,
    /// Sleeps at once (a machine shared with other work; or to measure what spinning saves).
    Passive,
}

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
    /// When this barrier was made: the clock's origin for `calm_at_ns`.
    epoch: Instant,
    /// Nanoseconds after `epoch` before which an early thread sleeps at once (a spin ran out
    /// before then).
    calm_at_ns: AtomicU64,
    /// The length of the last cool-down, ns (0 before the first).
    cool_ns: AtomicU64,
    /// Waits that ended while spinning, and waits that slept.
    spun: AtomicU64,
    slept: AtomicU64,
    lock: Mutex<()>,
    wake: Condvar,
}

impl WindowBarrier {
    /// A barrier for `n` threads of this process, one of `processes` on this machine that
    /// run window threads at once: under [`WaitPolicy::Auto`] its early threads spin while
    /// the machine has a core for every such thread and the spins have not been running out.
    pub fn new(n: usize, processes: usize, policy: WaitPolicy) -> WindowBarrier {
        let spin = match policy {
            WaitPolicy::Auto => SPIN,
            WaitPolicy::Passive => Duration::ZERO,
        };
        WindowBarrier::with_spin(n, processes, spin)
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
            epoch: Instant::now(),
            calm_at_ns: AtomicU64::new(0),
            cool_ns: AtomicU64::new(0),
            spun: AtomicU64::new(0),
            slept: AtomicU64::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Whether an early thread that arrives at `at` spins: a core for every window thread on
    /// the machine, and no cool-down (after a spin that ran out) going on.
    fn spins(&self, at: Instant) -> bool {
        !self.spin.is_zero()
            && WINDOW_THREADS
                .load(Ordering::Relaxed)
                .saturating_mul(self.processes)
                <= self.cores
            && self.nanos(at) >= self.calm_at_ns.load(Ordering::Relaxed)
    }

    /// Nanoseconds from `epoch` to `at`.
    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    /// A spin ran out at `at`: the early threads sleep at once for a while — [`COOL_DOWN`],
    /// or twice the last cool-down (up to [`MAX_COOL_DOWN`]) if it ended less than its own
    /// length ago. (Two threads that run out at once may both double it; updates may race,
    /// which only changes how long the machine is left alone.)
    fn cool_down(&self, at: Instant) {
        let t = self.nanos(at);
        let (calm, last) = (
            self.calm_at_ns.load(Ordering::Relaxed),
            self.cool_ns.load(Ordering::Relaxed),
        );
        let cool = if t < calm.saturating_add(last) {
            last.saturating_mul(2).min(MAX_COOL_DOWN.as_nanos() as u64)
        } else {
            COOL_DOWN.as_nanos() as u64
        };
        self.cool_ns.store(cool, Ordering::Relaxed);
        self.calm_at_ns
            .fetch_max(t.saturating_add(cool), Ordering::Relaxed);
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
        if self.spins(start) && self.spin_until_round_ends(round, start) {
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

    /// Spins until round `round` ends (true) or the spin time since `start` is over (false,
    /// and a cool-down starts).
    fn spin_until_round_ends(&self, round: u64, start: Instant) -> bool {
        loop {
            for _ in 0..SPINS_PER_CHECK {
                if self.round.load(Ordering::Acquire) != round {
                    return true;
                }
                spin_loop();
            }
            let now = Instant::now();
            if now.duration_since(start) >= self.spin {
                self.cool_down(now);
                return false;
            }
        }
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
    if spin {
        let barrier = WindowBarrier::new(threads, 1, WaitPolicy::Auto);
        time_rounds(threads, rounds, || barrier.wait())
    } else {
        let barrier = std::sync::Barrier::new(threads);
        time_rounds(threads, rounds, || {
            barrier.wait();
        })
    }
}

/// Nanoseconds per round of `threads` threads each calling `wait` `rounds` times.
fn time_rounds(threads: usize, rounds: u32, wait: impl Fn() + Sync) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..rounds {
                    wait();
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
        let now = Instant::now();
        assert!(!WindowBarrier::new(cores + 1, 1, WaitPolicy::Auto).spins(now));
        assert!(!WindowBarrier::new(1, cores + 1, WaitPolicy::Auto).spins(now));
    }

    #[test]
    fn the_passive_policy_never_spins() {
        let barrier = WindowBarrier::new(1, 1, WaitPolicy::Passive);
        assert!(!barrier.spins(Instant::now()));
        // two threads: the early one sleeps, and is woken
        let barrier = WindowBarrier::new(2, 1, WaitPolicy::Passive);
        std::thread::scope(|s| {
            s.spawn(|| barrier.wait());
            std::thread::sleep(Duration::from_millis(5));
            barrier.wait();
        });
        assert_eq!(barrier.waits(), (0, 1));
    }

    #[test]
    fn a_spin_that_runs_out_makes_the_early_threads_sleep_at_once_for_a_while() {
        // (the spin itself, so that other tests' barriers, counted process-wide, do not
        // decide whether it spins)
        let barrier = WindowBarrier::with_spin(2, 1, Duration::from_micros(1));
        let before = Instant::now();
        assert!(
            !barrier.spin_until_round_ends(0, before),
            "nobody else came: it runs out"
        );
        let after = Instant::now();
        assert!(!barrier.spins(after), "no spinning within the cool-down");
        let calm = barrier.calm_at_ns.load(Ordering::Relaxed);
        assert!(calm >= barrier.nanos(before + COOL_DOWN));
        assert!(barrier.nanos(after + COOL_DOWN) >= calm, "it lasts COOL_DOWN");
    }

    #[test]
    fn spins_that_run_out_one_after_the_other_double_the_cool_down_up_to_a_second() {
        let barrier = WindowBarrier::with_spin(2, 1, Duration::from_micros(1));
        let t0 = Instant::now();
        // each right at the end of the cool-down before it
        let mut at = t0;
        let mut cool = COOL_DOWN;
        for _ in 0..12 {
            barrier.cool_down(at);
            assert_eq!(barrier.cool_ns.load(Ordering::Relaxed), cool.as_nanos() as u64);
            at += cool;
            cool = (cool * 2).min(MAX_COOL_DOWN);
        }
        assert_eq!(
            barrier.cool_ns.load(Ordering::Relaxed),
            MAX_COOL_DOWN.as_nanos() as u64
        );
        // one long after the last cool-down ended: back to the first length
        barrier.cool_down(at + Duration::from_secs(5));
        assert_eq!(
            barrier.cool_ns.load(Ordering::Relaxed),
            COOL_DOWN.as_nanos() as u64
        );
    }
}
