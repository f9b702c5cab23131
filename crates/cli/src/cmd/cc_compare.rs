//! `lossless sim cc-compare`: the incast and the fat tree with WebSearch traffic
//! (`incast-cc`, `fat-tree-websearch`) under every congestion control and without one, run
//! in parallel; one table, one JSON object, one HTML page with the slowdown by flow size of
//! each CC (`lossless_sim::experiments::cc_compare`).

use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant as WallClock;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lossless_files::{Claims, Commit, Output};
use lossless_live::signals;
use lossless_sim::experiments::cc_compare::{CCS, FABRICS, Plan};
use lossless_sim::report::cc_compare::{CcRun, table};
use lossless_sim::scenario::Overrides;
use lossless_sim::trace::html::CcCompareReport;
use rayon::prelude::*;
use serde::Serialize;

use super::Say;
use super::sim::{SimArgs, interrupted_status};

/// The name it runs by.
pub const NAME: &str = "cc-compare";

/// Its line in `lossless sim --list`.
pub const SUMMARY: &str = "incast-cc and fat-tree-websearch under DCQCN, HPCC, TIMELY, DCTCP, HPCC-PINT and none: slowdown by flow size, PFC, drops side by side";

/// The JSON object of `--json`.
#[derive(Serialize)]
struct Json<'a> {
    /// What ran.
    comparison: &'static str,
    /// The fabrics, in order.
    fabrics: Vec<&'static str>,
    /// The congestion controls, in order.
    ccs: Vec<&'static str>,
    /// One per fabric and CC, fabric by fabric.
    runs: Vec<JsonRun<'a>>,
}

/// One run in the JSON: its figures and the overrides it was loaded with.
#[derive(Serialize)]
struct JsonRun<'a> {
    #[serde(flatten)]
    run: &'a CcRun,
    /// The `--set`s of this run, in order (`lossless sim FABRIC --set ...` repeats it).
    set: &'a [String],
}

/// What `--show cc-compare` prints: what runs, and each run's overrides.
pub fn show() -> String {
    let mut s = String::from(
        "# cc-compare runs these built-ins (`lossless sim --show NAME` prints each), each under\n\
         # every congestion control with these overrides (any one run is `lossless sim NAME --set ...`):\n",
    );
    if let Ok(plan) = Plan::new(&Overrides::default()) {
        for p in &plan.points {
            s.push_str(&format!(
                "lossless sim {} {}\n",
                p.fabric.builtin,
                p.overrides
                    .set
                    .iter()
                    .map(|x| format!("--set '{x}'"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
    }
    s
}

/// Runs `lossless sim cc-compare`.
pub fn run(args: &SimArgs) -> anyhow::Result<ExitCode> {
    if args.pcap.is_some() || args.vcd.is_some() || args.series.is_some() || args.plot_flows.is_some() {
        anyhow::bail!(
            "cc-compare writes a table, --json and --report only: --pcap, --vcd, --series and --plot-flows are for one run (e.g. `lossless sim incast-cc --set qp.cc=hpcc --pcap DIR`)"
        );
    }
    if !args.sweep.is_empty() || args.threads.is_some_and(|t| t > 1) {
        anyhow::bail!(
            "cc-compare runs its own set of runs in parallel: --sweep and --threads are for one scenario"
        );
    }
    let user = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        duration: args.duration,
    };
    let plan = match Plan::new(&user) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut claims = Claims::new();
    if let Some(p) = &args.json {
        claims.output("--json", p)?;
    }
    if let Some(d) = &args.report {
        claims.output_dir("--report", d, [CcCompareReport::FILE])?;
    }
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let json = args.json.as_deref().map(Output::create).transpose()?;
    let say = Say::new(args.quiet, json.as_ref().is_some_and(Output::is_stdout));
    let n = plan.points.len();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = args.jobs.map_or(cpus, usize::from).clamp(1, n);
    say.line(format_args!(
        "cc-compare: {} fabrics × {} congestion controls = {n} runs on {jobs} thread(s)",
        FABRICS.len(),
        CCS.len()
    ))?;
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{spinner} cc-compare [{bar:40}] {pos}/{len} runs, {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    if !args.quiet {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    let started = WallClock::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting the worker threads")?;
    let failures = Mutex::new(Vec::new());
    let results: Vec<Option<CcRun>> = pool.install(|| {
        (0..n)
            .into_par_iter()
            .map(|k| {
                let p = &plan.points[k];
                let out = plan.run(k, &signals::stop_requested);
                bar.inc(1);
                match out {
                    None => None,
                    Some(Err(e)) => {
                        failures.lock().unwrap_or_else(|e| e.into_inner()).push(e);
                        None
                    }
                    Some(Ok((report, run))) => {
                        if let Err(e) = report.check() {
                            failures
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(format!("{} under {}: {e}", p.fabric.builtin, p.cc.name));
                        }
                        bar.set_message(format!("{} under {} done", p.fabric.builtin, p.cc.name));
                        Some(run)
                    }
                }
            })
            .collect()
    });
    bar.finish_and_clear();
    if signals::stop_requested() && results.iter().any(Option::is_none) {
        errln!("interrupted: no output written");
        return Ok(interrupted_status());
    }
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    for f in &failures {
        errln!("error: {f}");
    }
    let runs: Vec<CcRun> = results.into_iter().flatten().collect();
    let sets: Vec<&[String]> = plan
        .points
        .iter()
        .filter(|p| {
            runs.iter()
                .any(|r| r.fabric == p.fabric.builtin && r.cc == p.cc.name)
        })
        .map(|p| p.overrides.set.as_slice())
        .collect();
    let mut all = Commit::new();
    let mut wrote = Vec::new();
    if let Some(mut out) = json {
        let doc = Json {
            comparison: NAME,
            fabrics: FABRICS.iter().map(|f| f.builtin).collect(),
            ccs: CCS.iter().map(|c| c.name).collect(),
            runs: runs
                .iter()
                .zip(&sets)
                .map(|(run, set)| JsonRun { run, set })
                .collect(),
        };
        serde_json::to_writer_pretty(&mut out, &doc)?;
        out.write_all_named(b"\n")?;
        if !out.is_stdout() {
            wrote.push(out.path().display().to_string());
        }
        all.add(out.finish()?);
    }
    if let Some(dir) = &args.report {
        let about = format!(
            "{} under {}; every run is its built-in with the overrides `lossless sim --show cc-compare` lists{}",
            FABRICS
                .iter()
                .map(|f| f.builtin)
                .collect::<Vec<_>>()
                .join(" and "),
            CCS.iter().map(|c| c.name).collect::<Vec<_>>().join(", "),
            if args.set.is_empty() {
                String::new()
            } else {
                format!(", and --set {}", args.set.join(" --set "))
            }
        );
        let page = CcCompareReport::new(runs.clone(), &about);
        wrote.push(page.stage(dir, &mut all)?.display().to_string());
    }
    all.commit()?;
    say.text(&table(&runs))?;
    let events: u64 = runs.iter().map(|r| r.events).sum();
    let wall = started.elapsed().as_secs_f64();
    say.line(format_args!(
        "wall {wall:.3} s for {n} runs, {:.2} M events/s over all (each run's events/s is its own wall time, {jobs} at a time)",
        events as f64 / wall.max(1e-9) / 1e6
    ))?;
    for w in &wrote {
        say.line(format_args!("wrote {w}"))?;
    }
    if !failures.is_empty() {
        return Ok(ExitCode::from(1));
    }
    let dropped: Vec<String> = runs
        .iter()
        .filter(|r| r.lossless_dropped_frames > 0)
        .map(|r| {
            format!(
                "{} under {} ({} frames)",
                r.fabric, r.cc, r.lossless_dropped_frames
            )
        })
        .collect();
    if !dropped.is_empty() {
        errln!(
            "finding: frames of lossless priorities dropped in {} (exit status 3; run that fabric alone for where and why)",
            dropped.join(", ")
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}
