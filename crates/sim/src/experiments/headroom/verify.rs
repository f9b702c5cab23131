//! The smallest headroom with zero lossless drops in the worst case the simulator can make
//! ([`super::worst_case`]), found by bisection: `lossless headroom --verify`.
//!
//! A probe run places each sender's frame phase; then the headroom doubles from twice Annex N
//! until a run drops nothing, and halves the interval until one byte separates a run with
//! drops from one without. Runs are deterministic, so the answer is exact; a last run at the
//! answer records what each sender's pair used and how its last frame fell.

use lossless_proto::units::Instant;
use serde::Serialize;

pub use super::worst_case::{MAX_HEADROOM_BYTES, Plan, Setup, VerifyError};
use super::worst_case::{Trace, plan, run_once, simulate};

/// One sender's share of the answer (the run at the bisected headroom).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// The sender.
    pub sender: String,
    /// Filler frames sent right after the trigger to set the phase (bytes each, FCS included).
    pub filler_frame_bytes: Vec<u64>,
    /// Headroom this sender's (port, priority) pair used, bytes.
    pub needed_bytes: u64,
    /// Frames in that headroom, the trigger included.
    pub frames_in_headroom: u64,
    /// From the switch's XOFF decision (the trigger's last bit there) until the sender's
    /// pause took effect, picoseconds.
    pub decision_to_pause_ps: u128,
    /// How long before its pause took effect the sender started its last frame, picoseconds.
    pub last_start_before_pause_ps: u128,
}

/// The answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verified {
    /// The setup verified.
    pub setup: Setup,
    /// The smallest headroom per (port, lossless priority) with zero lossless drops, bytes.
    pub headroom_bytes: u64,
    /// Lossless frames dropped with one byte less.
    pub drops_below_total: u64,
    /// Frame bytes of each lossless frame, FCS included.
    pub frame_bytes: u64,
    /// Simulated time of each run, picoseconds.
    pub run_ps: u128,
    /// Simulator runs made.
    pub runs_total: u32,
    /// How the runs were laid out.
    pub plan: Plan,
    /// Per sender, the worst phase first.
    pub phases: Vec<Phase>,
}

/// How far a verification has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Runs done.
    pub runs: u32,
    /// Runs it will take (an estimate until the upper bound is known).
    pub estimated_total: u32,
}

/// Finds the smallest headroom with zero lossless drops in the worst case (module doc).
pub fn verify(setup: &Setup, progress: &mut dyn FnMut(Progress)) -> Result<Verified, VerifyError> {
    setup.check()?;
    let l = setup.frame_bytes();
    let mut runs = 0u32;
    let mut hi = setup.annex_n().headroom_bytes.saturating_mul(2) + 4 * l;
    let estimate = |hi: u64| 3 + (64 - hi.leading_zeros());
    progress(Progress {
        runs,
        estimated_total: estimate(hi),
    });
    let plan = plan(setup)?;
    runs += if setup.reverse_traffic { 2 } else { 1 };
    progress(Progress {
        runs,
        estimated_total: estimate(hi),
    });
    let mut step = |h: u64, runs: &mut u32, total: u32| -> Result<u64, VerifyError> {
        let d = run_once(setup, &plan, h)?.drops_total();
        *runs += 1;
        progress(Progress {
            runs: *runs,
            estimated_total: total.max(*runs + 1),
        });
        Ok(d)
    };
    while step(hi, &mut runs, estimate(hi))? > 0 {
        if hi >= MAX_HEADROOM_BYTES {
            return Err(VerifyError::NoHeadroomHolds);
        }
        hi = (hi * 2).min(MAX_HEADROOM_BYTES);
    }
    // drops at lo (no headroom: no XOFF at all), none at hi
    let (mut lo, mut drops_lo) = (0u64, None);
    let total = runs + (64 - hi.leading_zeros()) + 1;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let d = step(mid, &mut runs, total)?;
        if d > 0 {
            (lo, drops_lo) = (mid, Some(d));
        } else {
            hi = mid;
        }
    }
    let drops_lo = match drops_lo {
        Some(d) => d,
        None => step(lo, &mut runs, total)?,
    };
    let (outcome, trace) = simulate(setup, &plan, hi, Trace::new(setup))?;
    runs += 1;
    (progress)(Progress {
        runs,
        estimated_total: runs,
    });
    if outcome.drops_total() != 0 {
        return Err(VerifyError::Premise(
            "the bisected headroom dropped on its own run".into(),
        ));
    }
    let mut phases = Vec::new();
    for (i, fill) in plan.fillers.iter().enumerate() {
        let starts = &trace.starts[i];
        let (trigger, xoff) = trace.trigger_and_xoff(i)?;
        let decided = trace.decided_at[i].unwrap_or(trigger);
        let pause = xoff + setup.peer_delay;
        let in_headroom: Vec<Instant> = starts
            .iter()
            .copied()
            .filter(|&s| s >= trigger && s < pause)
            .collect();
        let last = in_headroom.last().copied().unwrap_or(trigger);
        phases.push(Phase {
            sender: format!("s{i}"),
            filler_frame_bytes: fill.clone(),
            needed_bytes: outcome.peak_bytes[i].saturating_sub(setup.trigger() as u64 * l),
            frames_in_headroom: in_headroom.len() as u64,
            decision_to_pause_ps: pause.saturating_duration_since(decided).as_ps(),
            last_start_before_pause_ps: pause.saturating_duration_since(last).as_ps(),
        });
    }
    phases.sort_by_key(|p| std::cmp::Reverse(p.needed_bytes));
    Ok(Verified {
        setup: *setup,
        headroom_bytes: hi,
        drops_below_total: drops_lo,
        frame_bytes: l,
        run_ps: setup.end().as_ps(),
        runs_total: runs,
        plan,
        phases,
    })
}
