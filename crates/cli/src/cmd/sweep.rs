//! `lossless sim --sweep`: run one scenario over the cartesian product of parameter values, in
//! parallel on this machine (`--jobs`) and split across machines (`--shard I/N`), with one JSON
//! line per point and a table of headline figures.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant as WallClock;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};
use rayon::prelude::*;
use serde::Serialize;

use super::sim::SimArgs;

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

/// The points of the cartesian product (the first axis varies slowest), as (index, values).
fn points(axes: &[Axis]) -> anyhow::Result<Vec<(usize, Vec<&str>)>> {
    let mut total: usize = 1;
    for a in axes {
        total = total
            .checked_mul(a.values.len())
            .filter(|&t| t <= MAX_POINTS)
            .with_context(|| format!("the sweep has more than {MAX_POINTS} points"))?;
    }
    let mut out = Vec::with_capacity(total);
    for k in 0..total {
        let mut rest = k;
        let mut vals = vec![""; axes.len()];
        for (i, a) in axes.iter().enumerate().rev() {
            vals[i] = a.values[rest % a.values.len()].as_str();
            rest /= a.values.len();
        }
        out.push((k, vals));
    }
    Ok(out)
}

/// One JSON line of a sweep.
#[derive(Serialize)]
struct Line<'a> {
    /// Index of the point in the whole sweep (shards keep it, so their outputs merge by it).
    point: usize,
    /// The swept values of this point, path → TOML text.
    params: std::collections::BTreeMap<&'a str, &'a str>,
    /// The point's metrics, as `lossless sim --json` writes them.
    report: &'a Report,
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
    let (mut lossless_drops, mut lossy_drops, mut pause_frames, mut max_paused_ps) = (0, 0, 0, 0);
    for p in &r.ports {
        pause_frames += p.pause_xoff_sent_frames;
        for q in &p.priorities {
            let d: u64 = q.drops_frames.values().sum();
            if q.lossless {
                lossless_drops += d;
            } else {
                lossy_drops += d;
            }
            pause_frames += q.pfc_xoff_sent_frames;
            max_paused_ps = max_paused_ps.max(q.paused_ps);
        }
    }
    Headline {
        events: r.events,
        lossless_drops,
        lossy_drops,
        pause_frames,
        max_paused_ps,
        flows_done: r.flows.iter().filter(|f| f.completion_ps.is_some()).count(),
        flows: r.flows.len(),
        balanced: r.conservation.balanced && r.engine_fault.is_none(),
    }
}

/// Runs `lossless sim NAME --sweep ...`.
pub fn run(args: &SimArgs, name: &str) -> anyhow::Result<ExitCode> {
    if args.pcap.is_some() || args.vcd.is_some() || args.report.is_some() {
        anyhow::bail!("--sweep writes metrics only: --pcap, --vcd and --report are for a single run");
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
    if let Err(e) = scenario::check_sweep(name, &given, &paths) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(2));
    }
    let all = points(axes)?;
    let shard = args.shard.unwrap_or(Shard { index: 1, count: 1 });
    let mine: Vec<_> = all
        .into_iter()
        .filter(|(k, _)| k % shard.count == shard.index - 1)
        .collect();
    // every point's scenario must load before anything runs: a bad value fails fast
    let mut configs = Vec::with_capacity(mine.len());
    for (k, vals) in &mine {
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
        match scenario::load(name, &ov) {
            Ok(c) => configs.push((*k, vals.clone(), c)),
            Err(e) => {
                eprintln!("error: point {k} ({}): {e}", describe(axes, vals));
                return Ok(ExitCode::from(2));
            }
        }
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .context("starting the sweep's worker threads")?;
    let bar = ProgressBar::new(configs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} sweep [{bar:40}] {pos}/{len} points, {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    if args.quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let started = WallClock::now();
    let results: Vec<_> = pool.install(|| {
        configs
            .into_par_iter()
            .map(|(k, vals, config)| {
                // a point that cannot be built (say, headroom larger than the buffer) is
                // reported with the others; the rest of the sweep still runs
                let wall = WallClock::now();
                let out = Simulator::new(config)
                    .map(|mut sim| {
                        sim.run();
                        Report::collect(&sim)
                    })
                    .map_err(anyhow::Error::from);
                bar.inc(1);
                (k, vals, out.map(|r| (r, wall.elapsed().as_secs_f64())))
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut json_out = match &args.json {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => None,
    };
    let mut table = String::new();
    let mut failed = Vec::new();
    let _ = writeln!(
        table,
        "{:>6}  {:<28} {:>10} {:>9} {:>9} {:>9} {:>12} {:>9} {:>8}",
        "point", "params", "events", "lossless", "lossy", "XOFF", "max paused", "flows", "wall"
    );
    let _ = writeln!(
        table,
        "{:>6}  {:<28} {:>10} {:>9} {:>9} {:>9} {:>12} {:>9} {:>8}",
        "", "", "", "drops", "drops", "sent", "µs", "done", "s"
    );
    for (k, vals, out) in &results {
        match out {
            Ok((report, wall)) => {
                if let Some(w) = json_out.as_mut() {
                    let line = Line {
                        point: *k,
                        params: axes
                            .iter()
                            .map(|a| a.path.as_str())
                            .zip(vals.iter().copied())
                            .collect(),
                        report,
                    };
                    serde_json::to_writer(&mut *w, &line)?;
                    w.write_all(b"\n")?;
                }
                let h = headline(report);
                if !h.balanced {
                    failed.push(format!(
                        "point {k} ({}): {}",
                        describe(axes, vals),
                        report
                            .check()
                            .err()
                            .map_or_else(|| "engine fault".to_string(), |e| e.to_string())
                    ));
                }
                let _ = writeln!(
                    table,
                    "{:>6}  {:<28} {:>10} {:>9} {:>9} {:>9} {:>12.3} {:>9} {:>8.3}{}",
                    k,
                    describe(axes, vals),
                    h.events,
                    h.lossless_drops,
                    h.lossy_drops,
                    h.pause_frames,
                    h.max_paused_ps as f64 / 1e6,
                    format!("{}/{}", h.flows_done, h.flows),
                    wall,
                    if h.balanced { "" } else { "  ✗" }
                );
            }
            Err(e) => failed.push(format!("point {k} ({}): {e:#}", describe(axes, vals))),
        }
    }
    if let Some(mut w) = json_out {
        w.flush()?;
    }
    if !args.quiet {
        print!("{table}");
        println!(
            "{} points{} in {:.2} s on {jobs} threads",
            results.len(),
            if shard.count > 1 {
                format!(" (shard {}/{})", shard.index, shard.count)
            } else {
                String::new()
            },
            started.elapsed().as_secs_f64()
        );
        if let Some(p) = &args.json {
            println!("wrote {} (one JSON line per point)", p.display());
        }
    }
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        for f in &failed {
            eprintln!("error: {f}");
        }
        Ok(ExitCode::from(1))
    }
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
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("x").is_err());
        assert_eq!(parse_shard("2/4").unwrap(), Shard { index: 2, count: 4 });
    }

    #[test]
    fn points_are_the_cartesian_product_with_the_first_axis_slowest() {
        let axes = [parse_axis("a=1,2").unwrap(), parse_axis("b=x,y,z").unwrap()];
        let p = points(&axes).unwrap();
        let flat: Vec<String> = p.iter().map(|(k, v)| format!("{k}:{}{}", v[0], v[1])).collect();
        assert_eq!(flat, ["0:1x", "1:1y", "2:1z", "3:2x", "4:2y", "5:2z"]);
    }

    #[test]
    fn a_product_too_large_is_refused_before_anything_is_allocated() {
        let big = parse_axis("a=1..=1000").unwrap();
        let axes = [big.clone(), big.clone(), big];
        assert!(points(&axes).unwrap_err().to_string().contains("more than"));
    }
}
