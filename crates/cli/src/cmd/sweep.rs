//! `lossless sim --sweep`: run one scenario over the cartesian product of parameter values, in
//! parallel on this machine (`--jobs`) and split across machines (`--shard I/N`), with one JSON
//! line per point and a table of headline figures, both streamed as points finish: memory does
//! not grow with the number of points, and SIGINT/SIGTERM keep the points already finished.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration as StdDuration, Instant as WallClock};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lossless_files::{Claims, Commit, Output, OutputError};
use lossless_live::signals;
use lossless_sim::scenario::Overrides;
use lossless_sim::trace::html::{MAX_SWEEP_REPORT_POINTS, SweepPoint, SweepReport};
use lossless_sim::{Report, Simulator};
use rayon::prelude::*;
use serde::Serialize;

use super::sim::{Scenario, SimArgs, interrupted_status};
use super::{Say, Slicer};

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

/// Most worker threads `--jobs` may ask for.
pub const MAX_JOBS: usize = 1024;

/// Finished points a worker may run ahead of the first unfinished one, per thread: lines are
/// written in point order, and those finished early wait in memory, so this bounds it.
const AHEAD_PER_JOB: usize = 16;

/// Parses `--sweep PATH=V1,V2,...` or `PATH=A..=B` (integers, inclusive) or `PATH=A..=B/STEP`.
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (path, list) = s
        .split_once('=')
        .ok_or_else(|| format!("--sweep {s:?}: expected PATH=V1,V2,... or PATH=A..=B[/STEP]"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(format!("--sweep {s:?}: the path before '=' is empty"));
    }
    let list = list.trim();
    if let Some((a, rest)) = list.split_once("..=") {
        let (b, step) = match rest.split_once('/') {
            Some((b, st)) => (b, st),
            None => (rest, "1"),
        };
        let num = |t: &str, what: &str| {
            t.trim()
                .parse::<i64>()
                .map_err(|_| format!("--sweep {path}: {what} {t:?} is not an integer"))
        };
        let (a, b, step) = (num(a, "start")?, num(b, "end")?, num(step, "step")?);
        if step <= 0 {
            return Err(format!("--sweep {path}: step {step} must be positive"));
        }
        if b < a {
            return Err(format!(
                "--sweep {path}: range {a}..={b} is empty (end before start)"
            ));
        }
        let n = (b - a) / step + 1;
        if n as u128 > MAX_POINTS as u128 {
            return Err(format!(
                "--sweep {path}: {n} values, allowed at most {MAX_POINTS}"
            ));
        }
        let values = (0..n).map(|k| (a + k * step).to_string()).collect();
        return Ok(Axis {
            path: path.to_string(),
            values,
        });
    }
    let values = split_values(list);
    if values.iter().any(|v| v.is_empty()) {
        return Err(format!("--sweep {path}: an empty value in {list:?}"));
    }
    // a value given twice would run the same point twice: compared as the values they are
    // (`1.0` and `1.00`, `100G` and "100G" are one value)
    let canonical = |v: &str| -> String {
        if path == "seed" {
            v.parse::<u64>().map_or_else(|_| v.to_string(), |n| n.to_string())
        } else {
            lossless_sim::scenario::parse_set_value(v).map_or_else(|_| v.to_string(), |x| x.to_string())
        }
    };
    let mut seen = std::collections::HashMap::new();
    for (i, v) in values.iter().enumerate() {
        if let Some(first) = seen.insert(canonical(v), i) {
            return Err(format!(
                "--sweep {path}: value {v} (number {}) is value {} (number {}) again: that point would run \
                 twice; allowed each value once",
                i + 1,
                values[first],
                first + 1
            ));
        }
    }
    Ok(Axis {
        path: path.to_string(),
        values,
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

/// Parses `--shard I/N` (1 ≤ I ≤ N).
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = || format!("--shard {s:?}: expected I/N with 1 ≤ I ≤ N, e.g. 2/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let index: usize = i.trim().parse().map_err(|_| bad())?;
    let count: usize = n.trim().parse().map_err(|_| bad())?;
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// The number of points of the cartesian product, at most [`MAX_POINTS`].
fn count_points(axes: &[Axis]) -> anyhow::Result<usize> {
    let mut total: usize = 1;
    for a in axes {
        total = total
            .checked_mul(a.values.len())
            .filter(|&t| t <= MAX_POINTS)
            .with_context(|| format!("the sweep has more than {MAX_POINTS} points"))?;
    }
    Ok(total)
}

/// The values of point `k` of the cartesian product (the first axis varies slowest).
fn point(axes: &[Axis], k: usize) -> Vec<&str> {
    let mut rest = k;
    let mut vals = vec![""; axes.len()];
    for (i, a) in axes.iter().enumerate().rev() {
        vals[i] = a.values[rest % a.values.len()].as_str();
        rest /= a.values.len();
    }
    vals
}

/// The overrides of one point: the command line's, then the point's values.
fn overrides(args: &SimArgs, axes: &[Axis], vals: &[&str]) -> anyhow::Result<Overrides> {
    let mut ov = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        duration: args.duration,
    };
    for (a, v) in axes.iter().zip(vals) {
        if a.path == "seed" {
            ov.seed = Some(
                v.parse()
                    .with_context(|| format!("--sweep seed: {v:?} is not an unsigned integer"))?,
            );
        } else {
            ov.set.push(format!("{}={v}", a.path));
        }
    }
    Ok(ov)
}

/// One JSON line of a sweep.
#[derive(Serialize)]
struct Line<'a> {
    /// Index of the point in the whole sweep (shards keep it, so their outputs merge by it).
    point: usize,
    /// The swept values of this point, path → value: a number stays a number (`"senders": 2`),
    /// a TOML string or bare word is a string, an array or table is one.
    params: std::collections::BTreeMap<&'a str, serde_json::Value>,
    /// The point's metrics, as `lossless sim --json` writes them.
    report: &'a Report,
}

/// A swept value as JSON: the TOML value it is (the seed's `7` is the number 7, `"100G"` a
/// string), or its text when it is none.
fn param_value(v: &str) -> serde_json::Value {
    lossless_sim::scenario::parse_set_value(v)
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

/// The table's two header lines.
fn header() -> String {
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
enum Finished {
    /// Its JSON line, its table row and, if its check failed, why.
    Ran {
        line: String,
        row: String,
        /// What the `--report` page keeps of it (only with `--report`).
        point: Option<Box<SweepPoint>>,
        failure: Option<String>,
        /// A lossless priority dropped frames in the point.
        lossless_dropped: bool,
    },
    /// The point's simulator could not be built (say, headroom larger than the buffer).
    NotBuilt(String),
}

/// Where finished points go, in point order.
struct Sink<'a> {
    /// Position (in this shard's order) of the next point to write.
    written: usize,
    /// Points finished before an earlier one, waiting for it.
    ahead: BTreeMap<usize, Finished>,
    json: Option<Output>,
    /// The `--report` page, gathering the points as they are written.
    page: Option<SweepReport>,
    say: Say,
    bar: &'a ProgressBar,
    finished: usize,
    failed: usize,
    /// Points in which a lossless priority dropped frames.
    lossless_dropped: usize,
    /// The first output error; the sweep stops at it.
    error: Option<OutputError>,
}

impl Sink<'_> {
    fn write(&mut self, f: Finished) {
        self.finished += 1;
        let r = match f {
            Finished::Ran {
                line,
                row,
                point,
                failure,
                lossless_dropped,
            } => {
                self.lossless_dropped += usize::from(lossless_dropped);
                if let (Some(page), Some(p)) = (&mut self.page, point) {
                    page.add(*p);
                }
                if let Some(why) = failure {
                    self.failed += 1;
                    self.bar.suspend(|| errln!("error: {why}"));
                }
                let j = match &mut self.json {
                    Some(out) => out
                        .write_all_named(line.as_bytes())
                        .and_then(|()| out.flush_named()),
                    None => Ok(()),
                };
                let say = self.say;
                j.and_then(|()| self.bar.suspend(|| say.line(format_args!("{row}"))))
            }
            Finished::NotBuilt(why) => {
                self.failed += 1;
                self.bar.suspend(|| errln!("error: {why}"));
                Ok(())
            }
        };
        if let Err(e) = r
            && self.error.is_none()
        {
            self.error = Some(e);
        }
    }

    /// Takes point `pos`, and writes every point now in order.
    fn finish(&mut self, pos: usize, f: Finished) {
        self.ahead.insert(pos, f);
        while let Some(f) = self.ahead.remove(&self.written) {
            self.write(f);
            self.written += 1;
        }
    }
}

/// Runs one point to its end, or until `stop()`; `None` when stopped.
fn run_point(
    args: &SimArgs,
    scenario: &Scenario,
    k: usize,
    vals: &[&str],
    stop: &dyn Fn() -> bool,
) -> Option<Finished> {
    let axes = &args.sweep;
    let what = describe(axes, vals);
    // loaded before anything ran: an error now would be a change of the file meanwhile
    let config =
        match overrides(args, axes, vals).and_then(|ov| scenario.load(&ov).map_err(anyhow::Error::from)) {
            Ok(c) => c,
            Err(e) => return Some(Finished::NotBuilt(format!("point {k} ({what}): {e:#}"))),
        };
    let wall = WallClock::now();
    let mut sim = match Simulator::new(config) {
        Ok(s) => s,
        Err(e) => {
            return Some(Finished::NotBuilt(format!(
                "point {k} ({what}): {}: the point loads but cannot be built: {}",
                scenario.name(),
                with_causes(&e)
            )));
        }
    };
    // in slices, so that SIGINT stops a long point too
    let mut slicer = Slicer::new();
    loop {
        let t0 = WallClock::now();
        let done = sim.run_until(slicer.next(sim.now()));
        slicer.took(t0.elapsed());
        if done {
            break;
        }
        if stop() {
            return None;
        }
    }
    let report = Report::collect(&sim);
    let wall = wall.elapsed().as_secs_f64();
    let mut line = serde_json::to_string(&Line {
        point: k,
        params: axes
            .iter()
            .map(|a| a.path.as_str())
            .zip(vals.iter().map(|v| param_value(v)))
            .collect(),
        report: &report,
    })
    .unwrap_or_else(|e| format!("{{\"point\":{k},\"error\":{:?}}}", e.to_string()));
    line.push('\n');
    let h = headline(&report);
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
    let point = args.report.is_some().then(|| {
        Box::new(SweepPoint::of(
            k,
            vals.iter().map(|v| v.to_string()).collect(),
            &report,
        ))
    });
    Some(Finished::Ran {
        line,
        row,
        point,
        failure,
        lossless_dropped: report.lossless.dropped(),
    })
}

/// Runs `lossless sim NAME --sweep ...`.
pub fn run(args: &SimArgs, scenario: &Scenario) -> anyhow::Result<ExitCode> {
    if args.pcap.is_some() || args.vcd.is_some() || args.series.is_some() {
        anyhow::bail!(
            "--sweep writes metrics and a report only: --pcap, --vcd and --series are for a single run"
        );
    }
    let axes = &args.sweep;
    // every axis names a value of the scenario, once: a typo or a repeat is refused before
    // any point runs
    let given = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        duration: args.duration,
    };
    let paths: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    if let Err(e) = scenario.check_sweep(&given, &paths) {
        errln!("error: {e}");
        return Ok(ExitCode::from(2));
    }
    let total = count_points(axes)?;
    let shard = args.shard.unwrap_or(Shard { index: 1, count: 1 });
    // this shard's points, by position: point index - 1 + pos · count
    let first = shard.index - 1;
    let mine = total.saturating_sub(first).div_ceil(shard.count);
    let index = |pos: usize| first + pos * shard.count;
    let mut claims = Claims::new();
    if let Some(p) = scenario.path() {
        claims.input("the scenario", p);
    }
    if let Some(p) = &args.json {
        claims.output("--json", p)?;
    }
    if let Some(d) = &args.report {
        // the page keeps every point until it is written: bounded, and refused before anything runs
        if mine > MAX_SWEEP_REPORT_POINTS {
            errln!(
                "error: --report: this sweep has {mine} points{}, allowed at most {MAX_SWEEP_REPORT_POINTS} on one page (use --json for more, or --shard)",
                if shard.count > 1 { " in this shard" } else { "" }
            );
            return Ok(ExitCode::from(2));
        }
        claims.output_dir("--report", d, [SweepReport::FILE])?;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = args.jobs.map_or(cpus, usize::from).min(mine).clamp(1, MAX_JOBS);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting the sweep's worker threads")?;
    // every point's scenario must load before anything runs: a bad value fails fast, naming
    // the first bad point (each is built and dropped: nothing is kept per point)
    let bad = pool.install(|| {
        (0..mine).into_par_iter().find_map_first(|pos| {
            let k = index(pos);
            let vals = point(axes, k);
            overrides(args, axes, &vals)
                .and_then(|ov| scenario.load(&ov).map(drop).map_err(anyhow::Error::from))
                .err()
                .map(|e| format!("point {k} ({}): {e:#}", describe(axes, &vals)))
        })
    });
    if let Some(msg) = bad {
        errln!("error: {msg}");
        return Ok(ExitCode::from(2));
    }
    // before the output exists: a signal from now on stops the sweep and keeps what finished
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let json = args.json.as_deref().map(Output::create).transpose()?;
    let page = match &args.report {
        Some(dir) => {
            lossless_files::create_output_dir(dir)?;
            let axes = axes.iter().map(|a| (a.path.clone(), a.values.clone())).collect();
            Some(SweepReport::new(&scenario.name(), axes))
        }
        None => None,
    };
    let say = Say::new(args.quiet, json.as_ref().is_some_and(Output::is_stdout));
    let bar = ProgressBar::new(mine as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} sweep [{bar:40}] {pos}/{len} points, {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    if args.quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    say.line(format_args!("{}", header()))?;
    let started = WallClock::now();
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let stop = || signals::stop_requested() || abort.load(Ordering::Relaxed);
    let sink = Mutex::new(Sink {
        written: 0,
        ahead: BTreeMap::new(),
        json,
        page,
        say,
        bar: &bar,
        finished: 0,
        failed: 0,
        lossless_dropped: 0,
        error: None,
    });
    let moved = Condvar::new();
    let ahead = AHEAD_PER_JOB * jobs;
    let worker = || {
        loop {
            if stop() {
                return;
            }
            let pos = next.fetch_add(1, Ordering::Relaxed);
            if pos >= mine {
                return;
            }
            // wait while this point would run too far ahead of the first unfinished one
            {
                let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                while pos >= s.written + ahead {
                    if stop() {
                        return;
                    }
                    s = moved
                        .wait_timeout(s, StdDuration::from_millis(100))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
            let k = index(pos);
            let vals = point(axes, k);
            let Some(f) = run_point(args, scenario, k, &vals, &stop) else {
                return;
            };
            let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
            s.finish(pos, f);
            if s.error.is_some() {
                abort.store(true, Ordering::Relaxed);
            }
            drop(s);
            bar.inc(1);
            moved.notify_all();
        }
    };
    pool.scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|_| worker());
        }
    });
    bar.finish_and_clear();
    let mut s = sink.into_inner().unwrap_or_else(|e| e.into_inner());
    // points finished after one that was stopped: kept, out of order (each names its point)
    for (_, f) in std::mem::take(&mut s.ahead) {
        s.write(f);
    }
    let not_run = mine - s.finished;
    let mut closed = false;
    if let Some(e) = s.error.take() {
        if !lossless_files::is_broken_pipe(&e) {
            // a failed output is not put in place (its temporary file goes with it)
            if not_run > 0 {
                errln!("{not_run} of {mine} points not run");
            }
            return Err(e.into());
        }
        // the reader of standard output went away (`| head`): stop as for SIGINT, keeping
        // the points finished, and say nothing more on standard output
        closed = true;
    }
    let say = if closed { Say::Quiet } else { say };
    let interrupted = (closed || signals::stop_requested()) && not_run > 0;
    // the JSON lines and the page of the points finished go in place together (all or none)
    let mut all = Commit::new();
    let kept = match s.json.take() {
        Some(out) => {
            let name = (!out.is_stdout()).then(|| out.path().display().to_string());
            all.add(out.finish()?);
            name
        }
        None => None,
    };
    let page = match (s.page.take(), &args.report) {
        (Some(page), Some(dir)) => Some(page.stage(dir, &mut all)?),
        _ => None,
    };
    all.commit()?;
    say.line(format_args!(
        "{} points{} in {:.2} s on {jobs} threads",
        s.finished,
        if shard.count > 1 {
            format!(" (shard {}/{})", shard.index, shard.count)
        } else {
            String::new()
        },
        started.elapsed().as_secs_f64()
    ))?;
    if let Some(p) = &kept {
        say.line(format_args!("wrote {p} (one JSON line per point)"))?;
    }
    if let Some(p) = &page {
        say.line(format_args!(
            "wrote {} (each metric against the swept parameter)",
            p.display()
        ))?;
    }
    if interrupted {
        errln!(
            "{}: {not_run} of {mine} points not run; the {} finished are kept{}",
            if closed {
                "standard output closed"
            } else {
                "interrupted"
            },
            s.finished,
            kept.map(|p| format!(" in {p}")).unwrap_or_default()
        );
        return Ok(if closed {
            ExitCode::SUCCESS
        } else {
            interrupted_status()
        });
    }
    if s.failed > 0 {
        errln!("error: {} of {mine} points failed (see above)", s.failed);
        return Ok(ExitCode::from(1));
    }
    if s.lossless_dropped > 0 {
        errln!(
            "finding: a lossless priority dropped frames in {} of {mine} points (the `lossless drops` column; exit status 3)",
            s.lossless_dropped
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// An error and each of its causes, joined by ": " (a cause its error's text already holds
/// is said once).
pub(super) fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
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

/// `path=value` pairs of a point, for messages and the table.
fn describe(axes: &[Axis], vals: &[&str]) -> String {
    axes.iter()
        .zip(vals)
        .map(|(a, v)| format!("{}={v}", a.path))
        .collect::<Vec<_>>()
        .join(" ")
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
        assert!(parse_axis("senders").unwrap_err().contains("PATH=V1"));
        assert!(parse_axis("senders=8..=2").unwrap_err().contains("empty"));
        assert!(parse_axis("senders=1..=9/0").unwrap_err().contains("positive"));
        assert!(parse_axis("seed=1..=100000000").unwrap_err().contains("at most"));
        assert!(parse_axis("senders=2,,4").unwrap_err().contains("empty value"));
        // the same value twice runs one point twice: refused, naming both
        let e = parse_axis("seed=1,1").unwrap_err();
        assert!(e.contains("value 1 (number 2) is value 1 (number 1)"), "{e}");
        let e = parse_axis("defaults.rate=100G,\"25G\",\"100G\"").unwrap_err();
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
}
