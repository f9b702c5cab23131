//! `lossless sim --sweep`: run one scenario over the cartesian product of parameter values, in
//! parallel on this machine (`--jobs`) and split across machines (`--shard I/N`), with one JSON
//! line per point and a table of headline figures, both streamed as points finish: memory does
//! not grow with the number of points, and SIGINT/SIGTERM keep the points already finished.

use std::process::ExitCode;
use std::time::Instant as WallClock;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lossless_files::{Claims, Commit, Output, OutputError};
use lossless_live::signals;
use lossless_sim::config::SimConfig;
use lossless_sim::experiments::sweep::{Finished, PointSource, Runner, Sweep, SweepSink, Tally, header};
use lossless_sim::scenario::{Overrides, ScenarioError};
use lossless_sim::trace::html::{MAX_SWEEP_REPORT_POINTS, SweepReport};
use rayon::prelude::*;

pub use lossless_sim::experiments::sweep::{Axis, MAX_JOBS, Shard, parse_axis, parse_shard};

use super::Say;
use super::sim::{Scenario, SimArgs, interrupted_status};

impl PointSource for Scenario {
    fn load(&self, ov: &Overrides) -> Result<SimConfig, ScenarioError> {
        Scenario::load(self, ov)
    }
    fn name(&self) -> String {
        Scenario::name(self)
    }
}

/// Where the finished points go, in point order: their JSON lines, the `--report` page and
/// the table (printed around the progress bar).
struct Sink<'a> {
    json: Option<Output>,
    /// The `--report` page, gathering the points as they are written.
    page: Option<SweepReport>,
    say: Say,
    bar: &'a ProgressBar,
}

impl SweepSink for Sink<'_> {
    type Error = OutputError;

    fn take(&mut self, f: Finished) -> Result<(), OutputError> {
        match f {
            Finished::Ran {
                line,
                row,
                point,
                failure,
                ..
            } => {
                if let (Some(page), Some(p)) = (&mut self.page, point) {
                    page.add(*p);
                }
                if let Some(why) = failure {
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
                self.bar.suspend(|| errln!("error: {why}"));
                Ok(())
            }
        }
    }
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
    let shard = args.shard.unwrap_or(Shard { index: 1, count: 1 });
    let sweep = Sweep::new(scenario, axes, given, shard, args.report.is_some())?;
    let mine = sweep.points();
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
    // the first bad point
    let bad = pool.install(|| (0..mine).into_par_iter().find_map_first(|pos| sweep.check(pos)));
    if let Some(msg) = bad {
        errln!("error: {msg}");
        return Ok(ExitCode::from(2));
    }
    let points = run_points(args, scenario, &sweep, &pool, jobs)?;
    conclude(args, points, mine, jobs, shard)
}

/// What the points of a sweep came to, their outputs not yet in place.
struct Points {
    json: Option<Output>,
    page: Option<SweepReport>,
    say: Say,
    tally: Tally,
    /// The output error that stopped the sweep.
    error: Option<OutputError>,
    started: WallClock,
}

/// Opens the outputs and runs this shard's points on `jobs` threads of `pool`, with a
/// progress bar, until all are run, a signal stops them or an output fails.
fn run_points(
    args: &SimArgs,
    scenario: &Scenario,
    sweep: &Sweep<'_>,
    pool: &rayon::ThreadPool,
    jobs: usize,
) -> anyhow::Result<Points> {
    // before the output exists: a signal from now on stops the sweep and keeps what finished
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let json = args.json.as_deref().map(Output::create).transpose()?;
    let page = match &args.report {
        Some(dir) => {
            lossless_files::create_output_dir(dir)?;
            let axes = args
                .sweep
                .iter()
                .map(|a| (a.path.clone(), a.values.clone()))
                .collect();
            Some(SweepReport::new(&scenario.name(), axes))
        }
        None => None,
    };
    let say = Say::new(args.quiet, json.as_ref().is_some_and(Output::is_stdout));
    let bar = ProgressBar::new(sweep.points() as u64);
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
    let sink = Sink {
        json,
        page,
        say,
        bar: &bar,
    };
    let progress = || bar.inc(1);
    let runner = Runner::new(sweep, sink, jobs, &signals::stop_requested, &progress);
    pool.scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|_| runner.work());
        }
    });
    bar.finish_and_clear();
    // points finished after one that was stopped: kept, out of order (each names its point)
    let s = runner.finish();
    Ok(Points {
        json: s.sink.json,
        page: s.sink.page,
        say,
        tally: s.tally,
        error: s.error,
        started,
    })
}

/// Puts the outputs of the points run in place, says what was written and gives the sweep's
/// exit status.
fn conclude(
    args: &SimArgs,
    mut s: Points,
    mine: usize,
    jobs: usize,
    shard: Shard,
) -> anyhow::Result<ExitCode> {
    let not_run = mine - s.tally.finished;
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
    let say = if closed { Say::Quiet } else { s.say };
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
        s.tally.finished,
        if shard.count > 1 {
            format!(" (shard {}/{})", shard.index, shard.count)
        } else {
            String::new()
        },
        s.started.elapsed().as_secs_f64()
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
            s.tally.finished,
            kept.map(|p| format!(" in {p}")).unwrap_or_default()
        );
        return Ok(if closed {
            ExitCode::SUCCESS
        } else {
            interrupted_status()
        });
    }
    if s.tally.failed > 0 {
        errln!("error: {} of {mine} points failed (see above)", s.tally.failed);
        return Ok(ExitCode::from(1));
    }
    if s.tally.lossless_dropped > 0 {
        errln!(
            "finding: a lossless priority dropped frames in {} of {mine} points (the `lossless drops` column; exit status 3)",
            s.tally.lossless_dropped
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}
