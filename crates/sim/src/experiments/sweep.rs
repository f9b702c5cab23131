//! Sweeps: one scenario run over the cartesian product of parameter values (`lossless sim
//! --sweep`), split across machines by shards, the points run by any number of worker
//! threads and delivered to a [`SweepSink`] in point order, at most a bounded number of
//! finished points waiting in memory.
//!
//! - [`parse_axis`], [`parse_shard`]: the axes and the shard as the command line gives them;
//! - [`Sweep`]: the point space (this shard's points, each one's values and overrides), the
//!   check that every point loads and the run of one point ([`Sweep::run_point`]);
//! - [`Runner`]: what every worker thread runs ([`Runner::work`]), the points in order to
//!   the sink, and the end of the sweep ([`Runner::finish`]).

use std::collections::{BTreeMap, HashMap};
use std::num::ParseIntError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration as StdDuration, Instant as WallClock};

use serde::Serialize;

use super::slicer::Slicer;
use crate::config::SimConfig;
use crate::report::Report;
use crate::scenario::{Overrides, ScenarioError};
use crate::sim::Simulator;
use crate::trace::html::SweepPoint;

/// One swept parameter: its path and the values it takes, as TOML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// `seed`, or a scenario path such as `senders` or `defaults.rate`.
    pub path: String,
    /// The values, in the order given.
    pub values: Vec<String>,
}

/// Which part of a sweep this process runs: points whose index is `index - 1` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

/// Most points a sweep may have (a typo such as `1..=100000000` is refused, not run).
pub const MAX_POINTS: usize = 1_000_000;

/// Most worker threads a sweep may be run by.
pub const MAX_JOBS: usize = 1024;

/// Finished points a worker may run ahead of the first unfinished one, per thread: points are
/// delivered in order, and those finished early wait in memory, so this bounds it.
pub const AHEAD_PER_JOB: usize = 16;

/// An axis (`PATH=V1,V2,...` or `PATH=A..=B[/STEP]`) that cannot be swept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AxisError {
    /// No `=` in the argument.
    #[error("--sweep {arg:?}: expected PATH=V1,V2,... or PATH=A..=B[/STEP]")]
    NoValues {
        /// The argument.
        arg: String,
    },
    /// Nothing before the `=`.
    #[error("--sweep {arg:?}: the path before '=' is empty")]
    NoPath {
        /// The argument.
        arg: String,
    },
    /// A bound or step of a range is not an integer.
    #[error("--sweep {path}: {what} {token:?} is not an integer")]
    NotInteger {
        /// The path.
        path: String,
        /// `start`, `end` or `step`.
        what: &'static str,
        /// What was found.
        token: String,
    },
    /// A range's step is not positive.
    #[error("--sweep {path}: step {step} must be positive")]
    Step {
        /// The path.
        path: String,
        /// The step.
        step: i64,
    },
    /// A range ends before it starts.
    #[error("--sweep {path}: range {start}..={end} is empty (end before start)")]
    EmptyRange {
        /// The path.
        path: String,
        /// Its start.
        start: i64,
        /// Its end.
        end: i64,
    },
    /// A range of more than [`MAX_POINTS`] values.
    #[error("--sweep {path}: {count} values, allowed at most {MAX_POINTS}")]
    TooMany {
        /// The path.
        path: String,
        /// Its values.
        count: i64,
    },
    /// An empty value in a list.
    #[error("--sweep {path}: an empty value in {list:?}")]
    EmptyValue {
        /// The path.
        path: String,
        /// The list.
        list: String,
    },
    /// A value given twice (which would run one point twice).
    #[error(
        "--sweep {path}: value {value} (number {number}) is value {first} (number {first_number}) again: that point would run \
         twice; allowed each value once"
    )]
    Twice {
        /// The path.
        path: String,
        /// The value given again.
        value: String,
        /// Its 1-based place.
        number: usize,
        /// The value it repeats.
        first: String,
        /// That value's 1-based place.
        first_number: usize,
    },
}

/// A `--shard` that is not `I/N` with 1 ≤ I ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard {arg:?}: expected I/N with 1 ≤ I ≤ N, e.g. 2/4")]
pub struct ShardError {
    /// The argument.
    pub arg: String,
}

/// A sweep of more than [`MAX_POINTS`] points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the sweep has more than {MAX_POINTS} points")]
pub struct TooManyPoints;

/// Why a point does not load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointError {
    /// Its seed is not an unsigned integer.
    #[error("--sweep seed: {value:?} is not an unsigned integer")]
    Seed {
        /// The value.
        value: String,
        /// Why.
        source: ParseIntError,
    },
    /// The scenario with its values does not load.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// A point that does not load, named by its index and its values; the message carries the
/// whole chain of causes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("point {k} ({what}): {}", chain(error))]
pub struct PointLoadError {
    k: usize,
    what: String,
    error: PointError,
}

/// Parses `PATH=V1,V2,...` or `PATH=A..=B` (integers, inclusive) or `PATH=A..=B/STEP`.
pub fn parse_axis(s: &str) -> Result<Axis, AxisError> {
    let (path, list) = s
        .split_once('=')
        .ok_or_else(|| AxisError::NoValues { arg: s.to_string() })?;
    let path = path.trim();
    if path.is_empty() {
        return Err(AxisError::NoPath { arg: s.to_string() });
    }
    let list = list.trim();
    if let Some((a, rest)) = list.split_once("..=") {
        return parse_range(path, a, rest);
    }
    let values = split_values(list);
    if values.iter().any(|v| v.is_empty()) {
        return Err(AxisError::EmptyValue {
            path: path.to_string(),
            list: list.to_string(),
        });
    }
    // a value given twice would run the same point twice: compared as the values they are
    // (`1.0` and `1.00`, `100G` and "100G" are one value)
    let canonical = |v: &str| -> String {
        if path == "seed" {
            v.parse::<u64>().map_or_else(|_| v.to_string(), |n| n.to_string())
        } else {
            crate::scenario::parse_set_value(v).map_or_else(|_| v.to_string(), |x| x.to_string())
        }
    };
    let mut seen = HashMap::new();
    for (i, v) in values.iter().enumerate() {
        if let Some(first) = seen.insert(canonical(v), i) {
            return Err(AxisError::Twice {
                path: path.to_string(),
                value: v.clone(),
                number: i + 1,
                first: values[first].clone(),
                first_number: first + 1,
            });
        }
    }
    Ok(Axis {
        path: path.to_string(),
        values,
    })
}

/// The values of `path=A..=B[/STEP]`, given `A` and what follows `..=`.
fn parse_range(path: &str, a: &str, rest: &str) -> Result<Axis, AxisError> {
    let (b, step) = match rest.split_once('/') {
        Some((b, st)) => (b, st),
        None => (rest, "1"),
    };
    let num = |t: &str, what: &'static str| {
        t.trim().parse::<i64>().map_err(|_| AxisError::NotInteger {
            path: path.to_string(),
            what,
            token: t.to_string(),
        })
    };
    let (a, b, step) = (num(a, "start")?, num(b, "end")?, num(step, "step")?);
    if step <= 0 {
        return Err(AxisError::Step {
            path: path.to_string(),
            step,
        });
    }
    if b < a {
        return Err(AxisError::EmptyRange {
            path: path.to_string(),
            start: a,
            end: b,
        });
    }
    let n = (b - a) / step + 1;
    if n as u128 > MAX_POINTS as u128 {
        return Err(AxisError::TooMany {
            path: path.to_string(),
            count: n,
        });
    }
    Ok(Axis {
        path: path.to_string(),
        values: (0..n).map(|k| (a + k * step).to_string()).collect(),
    })
}

/// Splits on commas outside quotes and brackets (TOML arrays and strings stay whole).
fn split_values(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote) = (0i32, None::<char>);
    let mut cur = String::new();
    for c in list.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

/// Parses `I/N` (1 ≤ I ≤ N).
pub fn parse_shard(s: &str) -> Result<Shard, ShardError> {
    let bad = || ShardError { arg: s.to_string() };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let index: usize = i.trim().parse().map_err(|_| bad())?;
    let count: usize = n.trim().parse().map_err(|_| bad())?;
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// The number of points of the cartesian product of `axes`, at most [`MAX_POINTS`].
pub fn count_points(axes: &[Axis]) -> Result<usize, TooManyPoints> {
    let mut total: usize = 1;
    for a in axes {
        total = total
            .checked_mul(a.values.len())
            .filter(|&t| t <= MAX_POINTS)
            .ok_or(TooManyPoints)?;
    }
    Ok(total)
}

/// The values of point `k` of the cartesian product of `axes` (the first axis varies slowest).
pub fn point(axes: &[Axis], k: usize) -> Vec<&str> {
    let mut rest = k;
    let mut vals = vec![""; axes.len()];
    for (i, a) in axes.iter().enumerate().rev() {
        vals[i] = a.values[rest % a.values.len()].as_str();
        rest /= a.values.len();
    }
    vals
}

/// `path=value` pairs of a point, for messages and the table.
pub fn describe(axes: &[Axis], vals: &[&str]) -> String {
    axes.iter()
        .zip(vals)
        .map(|(a, v)| format!("{}={v}", a.path))
        .collect::<Vec<_>>()
        .join(" ")
}

/// An error and each of its causes, joined by ": " (a cause its error's text already holds
/// is said once).
pub fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cause = c.source();
    }
    text
}

/// An error and every one of its causes, joined by ": ".
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The scenario a sweep varies: loaded once per point with that point's overrides.
pub trait PointSource: Sync {
    /// The scenario with `ov` applied.
    fn load(&self, ov: &Overrides) -> Result<SimConfig, ScenarioError>;
    /// Its name in messages.
    fn name(&self) -> String;
}

/// One JSON line of a sweep.
#[derive(Serialize)]
struct Line<'a> {
    /// Index of the point in the whole sweep (shards keep it, so their outputs merge by it).
    point: usize,
    /// The swept values of this point, path → value: a number stays a number (`"senders": 2`),
    /// a TOML string or bare word is a string, an array or table is one.
    params: BTreeMap<&'a str, serde_json::Value>,
    /// The point's metrics, as `lossless sim --json` writes them.
    report: &'a Report,
}

/// A swept value as JSON: the TOML value it is (the seed's `7` is the number 7, `"100G"` a
/// string), or its text when it is none.
pub fn param_value(v: &str) -> serde_json::Value {
    crate::scenario::parse_set_value(v)
        .ok()
        .and_then(|t| serde_json::to_value(t).ok())
        .unwrap_or_else(|| serde_json::Value::String(v.to_string()))
}

/// Headline figures of one run, for the table.
struct Headline {
    events: u64,
    lossless_drops: u64,
    lossy_drops: u64,
    pause_frames: u64,
    max_paused_ps: u128,
    flows_done: usize,
    flows: usize,
    balanced: bool,
}

fn headline(r: &Report) -> Headline {
    // the lossless verdict's count (it includes priorities whose PFC DCBX left off)
    let lossless_drops = r.lossless.dropped_frames;
    let (mut all_drops, mut pause_frames, mut max_paused_ps) = (0u64, 0, 0);
    for p in &r.ports {
        pause_frames += p.pause_xoff_sent_frames;
        for q in &p.priorities {
            all_drops += q.drops_frames.values().sum::<u64>();
            pause_frames += q.pfc_xoff_sent_frames;
            max_paused_ps = max_paused_ps.max(q.paused_ps);
        }
    }
    Headline {
        events: r.events,
        lossless_drops,
        lossy_drops: all_drops.saturating_sub(lossless_drops),
        pause_frames,
        max_paused_ps,
        flows_done: r.flows.iter().filter(|f| f.completion_ps.is_some()).count(),
        flows: r.flows.len(),
        balanced: r.conservation.balanced && r.engine_fault.is_none(),
    }
}

/// The two header lines of the table of points ([`Finished::Ran`]'s `row`).
pub fn header() -> String {
    format!(
        "{:>6}  {:<28} {:>10} {:>9} {:>9} {:>9} {:>12} {:>9} {:>8}\n{:>6}  {:<28} {:>10} {:>9} {:>9} {:>9} {:>12} {:>9} {:>8}",
        "point",
        "params",
        "events",
        "lossless",
        "lossy",
        "XOFF",
        "max paused",
        "flows",
        "wall",
        "",
        "",
        "",
        "drops",
        "drops",
        "sent",
        "µs",
        "done",
        "s"
    )
}

/// A point that ran to its end (or could not be built).
#[derive(Debug)]
pub enum Finished {
    /// Its JSON line, its table row and, if its check failed, why.
    Ran {
        /// Its JSON line, newline-terminated.
        line: String,
        /// Its row of the table.
        row: String,
        /// What the sweep's page keeps of it (only when the sweep keeps points).
        point: Option<Box<SweepPoint>>,
        /// Why its check failed (frames unaccounted for, an engine fault).
        failure: Option<String>,
        /// A lossless priority dropped frames in the point.
        lossless_dropped: bool,
    },
    /// The point's simulator could not be built (say, headroom larger than the buffer): why.
    NotBuilt(String),
}

/// One scenario over the cartesian product of axes, the part of it one shard runs.
pub struct Sweep<'a> {
    source: &'a dyn PointSource,
    axes: &'a [Axis],
    base: Overrides,
    shard: Shard,
    total: usize,
    keep_points: bool,
}

impl<'a> Sweep<'a> {
    /// The sweep of `source` over `axes` with the `base` overrides under every point's
    /// values, shard `shard` of it; `keep_points`: each finished point carries what a
    /// sweep's page shows of it.
    pub fn new(
        source: &'a dyn PointSource,
        axes: &'a [Axis],
        base: Overrides,
        shard: Shard,
        keep_points: bool,
    ) -> Result<Sweep<'a>, TooManyPoints> {
        Ok(Sweep {
            source,
            axes,
            base,
            shard,
            total: count_points(axes)?,
            keep_points,
        })
    }

    /// Points of the whole sweep.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Points of this shard.
    pub fn points(&self) -> usize {
        self.total
            .saturating_sub(self.shard.index - 1)
            .div_ceil(self.shard.count)
    }

    /// The index in the whole sweep of this shard's point `pos`: `index - 1 + pos · count`.
    pub fn index(&self, pos: usize) -> usize {
        self.shard.index - 1 + pos * self.shard.count
    }

    /// The overrides of a point with values `vals`: the base's, then the point's values.
    pub fn overrides(&self, vals: &[&str]) -> Result<Overrides, PointError> {
        let mut ov = self.base.clone();
        for (a, v) in self.axes.iter().zip(vals) {
            if a.path == "seed" {
                ov.seed = Some(v.parse().map_err(|source| PointError::Seed {
                    value: v.to_string(),
                    source,
                })?);
            } else {
                ov.set.push(format!("{}={v}", a.path));
            }
        }
        Ok(ov)
    }

    /// This shard's point `pos` loaded, or what is wrong with it (naming the point).
    fn load(&self, k: usize, vals: &[&str]) -> Result<SimConfig, PointLoadError> {
        self.overrides(vals)
            .and_then(|ov| Ok(self.source.load(&ov)?))
            .map_err(|error| PointLoadError {
                k,
                what: describe(self.axes, vals),
                error,
            })
    }

    /// Whether this shard's point `pos` loads: `None`, or why not (naming the point). Each is
    /// built and dropped: nothing is kept per point.
    pub fn check(&self, pos: usize) -> Option<String> {
        let k = self.index(pos);
        self.load(k, &point(self.axes, k)).err().map(|e| e.to_string())
    }

    /// Runs point `k` of the sweep to its end, or until `stop()`; `None` when stopped.
    pub fn run_point(&self, k: usize, stop: &dyn Fn() -> bool) -> Option<Finished> {
        let axes = self.axes;
        let vals = point(axes, k);
        let what = describe(axes, &vals);
        // loaded before anything ran: an error now would be a change of the file meanwhile
        let config = match self.load(k, &vals) {
            Ok(c) => c,
            Err(e) => return Some(Finished::NotBuilt(e.to_string())),
        };
        let wall = WallClock::now();
        let mut sim = match Simulator::new(config) {
            Ok(s) => s,
            Err(e) => {
                return Some(Finished::NotBuilt(format!(
                    "point {k} ({what}): {}: the point loads but cannot be built: {}",
                    self.source.name(),
                    with_causes(&e)
                )));
            }
        };
        // in slices, so that a stop request stops a long point too
        if !Slicer::run(&mut sim, &stop) {
            return None;
        }
        let report = Report::collect(&sim);
        let wall = wall.elapsed().as_secs_f64();
        Some(self.finished(k, &vals, &what, &report, wall))
    }

    /// What point `k` with values `vals` (`what`) came to: its JSON line, its row, what the
    /// page keeps, its failure.
    fn finished(&self, k: usize, vals: &[&str], what: &str, report: &Report, wall: f64) -> Finished {
        let mut line = serde_json::to_string(&Line {
            point: k,
            params: self
                .axes
                .iter()
                .map(|a| a.path.as_str())
                .zip(vals.iter().map(|v| param_value(v)))
                .collect(),
            report,
        })
        .unwrap_or_else(|e| format!("{{\"point\":{k},\"error\":{:?}}}", e.to_string()));
        line.push('\n');
        let h = headline(report);
        let failure = (!h.balanced).then(|| {
            format!(
                "point {k} ({what}): {}",
                report
                    .check()
                    .err()
                    .map_or_else(|| "engine fault".to_string(), |e| e.to_string())
            )
        });
        let row = format!(
            "{:>6}  {:<28} {:>10} {:>9} {:>9} {:>9} {:>12.3} {:>9} {:>8.3}{}",
            k,
            what,
            h.events,
            h.lossless_drops,
            h.lossy_drops,
            h.pause_frames,
            h.max_paused_ps as f64 / 1e6,
            format!("{}/{}", h.flows_done, h.flows),
            wall,
            if h.balanced { "" } else { "  ✗" }
        );
        let point = self.keep_points.then(|| {
            Box::new(SweepPoint::of(
                k,
                vals.iter().map(|v| v.to_string()).collect(),
                report,
            ))
        });
        Finished::Ran {
            line,
            row,
            point,
            failure,
            lossless_dropped: report.lossless.dropped(),
        }
    }
}

/// Where a sweep's finished points go, in point order.
pub trait SweepSink: Send {
    /// What stops the sweep.
    type Error: Send;
    /// Takes the next point; an error stops the sweep (the points still to come are taken
    /// too, the first error is kept).
    fn take(&mut self, point: Finished) -> Result<(), Self::Error>;
}

/// The points delivered so far and those waiting for an earlier one.
struct Ordered<S: SweepSink> {
    /// Position (in this shard's order) of the next point to deliver.
    written: usize,
    /// Points finished before an earlier one, waiting for it.
    ahead: BTreeMap<usize, Finished>,
    sink: S,
    tally: Tally,
    /// The sink's first error; the sweep stops at it.
    error: Option<S::Error>,
}

/// What the points delivered came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Points delivered.
    pub finished: usize,
    /// Points whose check failed or that could not be built.
    pub failed: usize,
    /// Points in which a lossless priority dropped frames.
    pub lossless_dropped: usize,
}

impl<S: SweepSink> Ordered<S> {
    fn deliver(&mut self, f: Finished) {
        self.tally.finished += 1;
        match &f {
            Finished::Ran {
                failure,
                lossless_dropped,
                ..
            } => {
                self.tally.lossless_dropped += usize::from(*lossless_dropped);
                self.tally.failed += usize::from(failure.is_some());
            }
            Finished::NotBuilt(_) => self.tally.failed += 1,
        }
        if let Err(e) = self.sink.take(f)
            && self.error.is_none()
        {
            self.error = Some(e);
        }
    }

    /// Takes point `pos`, and delivers every point now in order.
    fn finish(&mut self, pos: usize, f: Finished) {
        self.ahead.insert(pos, f);
        while let Some(f) = self.ahead.remove(&self.written) {
            self.deliver(f);
            self.written += 1;
        }
    }
}

/// A sweep being run by worker threads, each running [`Runner::work`].
pub struct Runner<'a, S: SweepSink> {
    sweep: &'a Sweep<'a>,
    next: AtomicUsize,
    abort: AtomicBool,
    interrupted: &'a (dyn Fn() -> bool + Sync),
    progress: &'a (dyn Fn() + Sync),
    ordered: Mutex<Ordered<S>>,
    moved: Condvar,
    /// Most points finished ahead of the first unfinished one.
    window: usize,
}

/// How a sweep ended.
pub struct Ended<S: SweepSink> {
    /// The sink, every finished point delivered.
    pub sink: S,
    /// What the points came to.
    pub tally: Tally,
    /// The sink's first error, which stopped the sweep.
    pub error: Option<S::Error>,
}

impl<'a, S: SweepSink> Runner<'a, S> {
    /// A run of `sweep` by `jobs` workers into `sink`; `interrupted` says when to stop
    /// (a signal), `progress` is told of every point finished.
    pub fn new(
        sweep: &'a Sweep<'a>,
        sink: S,
        jobs: usize,
        interrupted: &'a (dyn Fn() -> bool + Sync),
        progress: &'a (dyn Fn() + Sync),
    ) -> Self {
        Runner {
            sweep,
            next: AtomicUsize::new(0),
            abort: AtomicBool::new(false),
            interrupted,
            progress,
            ordered: Mutex::new(Ordered {
                written: 0,
                ahead: BTreeMap::new(),
                sink,
                tally: Tally::default(),
                error: None,
            }),
            moved: Condvar::new(),
            window: AHEAD_PER_JOB * jobs,
        }
    }

    fn stop(&self) -> bool {
        (self.interrupted)() || self.abort.load(Ordering::Relaxed)
    }

    /// One worker: runs the next point not taken until none is left or the sweep stops, never
    /// more than the window ahead of the first unfinished point.
    pub fn work(&self) {
        let mine = self.sweep.points();
        let stop = || self.stop();
        loop {
            if stop() {
                return;
            }
            let pos = self.next.fetch_add(1, Ordering::Relaxed);
            if pos >= mine {
                return;
            }
            // wait while this point would run too far ahead of the first unfinished one
            {
                let mut s = self.ordered.lock().unwrap_or_else(|e| e.into_inner());
                while pos >= s.written + self.window {
                    if stop() {
                        return;
                    }
                    s = self
                        .moved
                        .wait_timeout(s, StdDuration::from_millis(100))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
            let Some(f) = self.sweep.run_point(self.sweep.index(pos), &stop) else {
                return;
            };
            let mut s = self.ordered.lock().unwrap_or_else(|e| e.into_inner());
            s.finish(pos, f);
            if s.error.is_some() {
                self.abort.store(true, Ordering::Relaxed);
            }
            drop(s);
            (self.progress)();
            self.moved.notify_all();
        }
    }

    /// After the workers: delivers the points finished after one that was stopped (out of
    /// order; each names its point) and says how the sweep ended.
    pub fn finish(self) -> Ended<S> {
        let mut s = self.ordered.into_inner().unwrap_or_else(|e| e.into_inner());
        for (_, f) in std::mem::take(&mut s.ahead) {
            s.deliver(f);
        }
        Ended {
            sink: s.sink,
            tally: s.tally,
            error: s.error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swept_values_keep_their_json_type_numbers_as_numbers() {
        use serde_json::json;
        assert_eq!(param_value("2"), json!(2));
        assert_eq!(param_value("0.5"), json!(0.5));
        assert_eq!(param_value("\"100G\""), json!("100G"));
        assert_eq!(param_value("100G"), json!("100G"), "a bare word is a string");
        assert_eq!(param_value("true"), json!(true));
        assert_eq!(param_value("[3, 4]"), json!([3, 4]));
    }

    #[test]
    fn axes_parse_lists_ranges_and_steps() {
        assert_eq!(parse_axis("senders=2,4, 8").unwrap().values, ["2", "4", "8"]);
        assert_eq!(parse_axis("seed=1..=4").unwrap().values, ["1", "2", "3", "4"]);
        assert_eq!(parse_axis("senders=2..=64/31").unwrap().values, ["2", "33", "64"]);
        assert_eq!(
            parse_axis(r#"defaults.flow_control="off","pfc""#).unwrap().values,
            [r#""off""#, r#""pfc""#]
        );
        assert_eq!(
            parse_axis("defaults.pfc_priorities=[3],[3,4]").unwrap().values,
            ["[3]", "[3,4]"]
        );
    }

    #[test]
    fn bad_axes_and_shards_are_refused_with_the_reason() {
        let err = |s: &str| parse_axis(s).unwrap_err().to_string();
        assert!(err("senders").contains("PATH=V1"));
        assert!(err("senders=8..=2").contains("empty"));
        assert!(err("senders=1..=9/0").contains("positive"));
        assert!(err("seed=1..=100000000").contains("at most"));
        assert!(err("senders=2,,4").contains("empty value"));
        // the same value twice runs one point twice: refused, naming both
        let e = err("seed=1,1");
        assert!(e.contains("value 1 (number 2) is value 1 (number 1)"), "{e}");
        let e = err("defaults.rate=100G,\"25G\",\"100G\"");
        assert!(e.contains("run") && e.contains("twice"), "{e}");
        assert!(parse_axis("x=1.0,1.00").is_err());
        assert_eq!(parse_axis("seed=1,2").unwrap().values, ["1", "2"]);
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("x").is_err());
        assert_eq!(parse_shard("2/4").unwrap(), Shard { index: 2, count: 4 });
    }

    #[test]
    fn a_point_that_cannot_be_built_keeps_the_cause() {
        #[derive(Debug)]
        struct Inner;
        impl std::fmt::Display for Inner {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("headroom reserves total 9 bytes but the buffer holds only 8 bytes")
            }
        }
        impl std::error::Error for Inner {}
        #[derive(Debug)]
        struct Outer(Inner);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("switch s1")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        assert_eq!(
            with_causes(&Outer(Inner)),
            "switch s1: headroom reserves total 9 bytes but the buffer holds only 8 bytes"
        );
    }

    #[test]
    fn points_are_the_cartesian_product_with_the_first_axis_slowest() {
        let axes = [parse_axis("a=1,2").unwrap(), parse_axis("b=x,y,z").unwrap()];
        assert_eq!(count_points(&axes).unwrap(), 6);
        let flat: Vec<String> = (0..6)
            .map(|k| {
                let v = point(&axes, k);
                format!("{k}:{}{}", v[0], v[1])
            })
            .collect();
        assert_eq!(flat, ["0:1x", "1:1y", "2:1z", "3:2x", "4:2y", "5:2z"]);
    }

    #[test]
    fn a_product_too_large_is_refused_before_anything_is_allocated() {
        let big = parse_axis("a=1..=1000").unwrap();
        let axes = [big.clone(), big.clone(), big];
        assert!(count_points(&axes).unwrap_err().to_string().contains("more than"));
    }

    #[test]
    fn a_seed_that_is_not_a_number_is_refused_with_its_cause() {
        let e = PointError::Seed {
            value: "x".into(),
            source: "x".parse::<u64>().unwrap_err(),
        };
        assert_eq!(
            chain(&e),
            "--sweep seed: \"x\" is not an unsigned integer: invalid digit found in string"
        );
    }
}
