//! Running a simulation in slices of wall time, so that a stop request is seen soon.

use std::time::Duration as StdDuration;

use lossless_proto::units::{Duration, Instant};

/// Runs a simulation in slices of simulated time sized so that each takes 10-50 ms of wall
/// time, whatever the scenario's speed: a stop request (SIGINT) or an output failure is seen
/// within about that, and checking costs nothing measurable.
#[derive(Debug, Clone, Copy)]
pub struct Slicer {
    step_ps: u128,
}

impl Slicer {
    /// Starts with 1 µs slices.
    pub fn new() -> Slicer {
        Slicer { step_ps: 1_000_000 }
    }

    /// The end of the next slice after `now`.
    pub fn next(&self, now: Instant) -> Instant {
        now.saturating_add(Duration::from_ps(self.step_ps))
    }

    /// Adjusts the slice to the wall time the last one took.
    pub fn took(&mut self, wall: StdDuration) {
        if wall < StdDuration::from_millis(10) {
            self.step_ps = self.step_ps.saturating_mul(2);
        } else if wall > StdDuration::from_millis(50) {
            self.step_ps = (self.step_ps / 2).max(1);
        }
    }
}

impl Slicer {
    /// Runs `sim` to its end in slices, asking `stop` after each; false when `stop` said to
    /// stop first.
    pub fn run<O: crate::observer::Observer>(sim: &mut crate::Simulator<O>, stop: &dyn Fn() -> bool) -> bool {
        let mut slicer = Slicer::new();
        loop {
            let t0 = std::time::Instant::now();
            let done = sim.run_until(slicer.next(sim.now()));
            slicer.took(t0.elapsed());
            if done {
                return true;
            }
            if stop() {
                return false;
            }
        }
    }
}

impl Default for Slicer {
    fn default() -> Self {
        Slicer::new()
    }
}
