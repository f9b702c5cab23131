//! Runs a scenario without the CLI (for profiling and before/after comparisons): prints the
//! events handled and events per second, and with `--json FILE` writes the report.
//!
//! `cargo run --release -p lossless-sim --example simrun -- incast senders=64 [--json FILE]
//! [--queue calendar|heap|radix] [--repeat N]`: the event queue to use (calendar, the default)
//! and how many runs (the best is printed) for before/after comparisons in one binary.
//!
//! `--split T:P[:static|events|time]` (repeatable) runs it instead on T threads split into P
//! automatic partitions placed as given (events by default; issue 22, docs/parallel.md) and
//! prints the engine's figures: busy seconds per thread, the critical path in seconds and in
//! events, and the ideal speed-up it allows; with `--check` the sequential run first, and each
//! split's report compared with it byte for byte.
//!
//! `simrun ns3:DIR` runs the HPCC ns-3 input DIR/config.txt (with the topology and flow files
//! it names) as `lossless sim --ns3` would, without its observer.
//!
//! `simrun fat-tree-websearch [DURATION]` runs the 320-host fat-tree of the shared corpus's
//! `workloads/` (`$LOSSLESS_CORPUS`, else `shared/corpus` beside the checkout) with WebSearch flows at 30 %
//! load, all RoCEv2 QPs with DCQCN and ECN marking (HPCC ns-3 presets), for DURATION (200us).

use std::time::Instant as WallClock;

use lossless_sim::Event;
use lossless_sim::event::{CalendarQueue, EventQueue, HeapQueue, RadixQueue};
use lossless_sim::observer::NoObserver;
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};

/// Runs once with queue `q`: (events, wall seconds, report).
fn run<Q: EventQueue<Event>>(
    config: lossless_sim::config::SimConfig,
    q: Q,
) -> Result<(u64, f64, Report), Box<dyn std::error::Error>> {
    let mut sim = Simulator::build(config, NoObserver, q)?;
    let t = WallClock::now();
    sim.run();
    let wall = t.elapsed().as_secs_f64();
    Ok((sim.events(), wall, Report::collect(&sim)))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "four-bridge".into());
    let mut set = Vec::new();
    let mut json = None;
    let mut queue = String::from("calendar");
    let mut repeat = 1u32;
    let mut model: Vec<u16> = Vec::new();
    let mut splits: Vec<String> = Vec::new();
    let mut check = false;
    while let Some(a) = args.next() {
        if a == "--split" {
            splits.push(args.next().ok_or("--split needs T:P[:static|events|time]")?);
        } else if a == "--check" {
            check = true;
        } else if a == "--model" {
            let v = args
                .next()
                .ok_or("--model needs partition counts, e.g. 2,4,8,16")?;
            for k in v.split(',') {
                model.push(k.parse().map_err(|e| format!("--model {v}: {k}: {e}"))?);
            }
        } else if a == "--json" {
            json = args.next();
        } else if a == "--queue" {
            queue = args.next().ok_or("--queue needs calendar, heap or radix")?;
        } else if a == "--repeat" {
            repeat = args.next().ok_or("--repeat needs a count")?.parse()?;
        } else {
            set.push(a);
        }
    }
    let ov = Overrides {
        set,
        ..Default::default()
    };
    let config = if name == "fat-tree-websearch" {
        let dir = lossless_testkit::corpus_dir().join("workloads");
        // the corpus is found beside the checkout or at $LOSSLESS_CORPUS: say which file is missing
        let read = |f: &str| {
            let path = dir.join(f);
            std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "{}: {e} (the shared corpus; set LOSSLESS_CORPUS to its folder)",
                    path.display()
                )
            })
        };
        let topo = lossless_sim::ns3::Topology::parse(
            &read("fat-tree-320.topology.txt")?,
            &dir.join("fat-tree-320.topology.txt").display().to_string(),
        )?;
        let cdf = lossless_sim::config::traffic::SizeCdf::parse(&read("WebSearch_distribution.txt")?)?;
        let d = ov.set.first().map_or("200us", String::as_str);
        topo.websearch_dcqcn(cdf, 0.3, scenario::parse_duration(d)?)
    } else if let Some(dir) = name.strip_prefix("ns3:") {
        // an HPCC ns-3 run: DIR's config.txt with the topology and flow files it names
        let run = lossless_sim::ns3::Run::load(&std::path::Path::new(dir).join("config.txt"), None, None)?;
        run.to_sim_config("ns3")?
    } else {
        scenario::load(&name, &ov)?
    };
    if !splits.is_empty() {
        return run_splits(&config, &splits, check);
    }
    let mut best: Option<(u64, f64, Report)> = None;
    for _ in 0..repeat.max(1) {
        let r = match queue.as_str() {
            "calendar" => run(config.clone(), CalendarQueue::default())?,
            "heap" => run(config.clone(), HeapQueue::with_capacity(4096))?,
            "radix" => run(config.clone(), RadixQueue::default())?,
            other => return Err(format!("--queue {other}: allowed calendar, heap, radix").into()),
        };
        if std::env::var_os("SIMRUN_EACH").is_some() {
            eprintln!("run: {:.4} s", r.1);
        }
        if best.as_ref().is_none_or(|b| r.1 < b.1) {
            best = Some(r);
        }
    }
    let Some((events, wall, report)) = best else {
        return Err("no run".into());
    };
    report.check()?;
    println!(
        "{name} ({queue}): {events} events in {wall:.4} s: {:.2} M events/s",
        events as f64 / wall / 1e6
    );
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    if !model.is_empty() {
        print_model(&config, &model, events, wall)?;
    }
    Ok(())
}

/// Issue 22's model: a second run that measures, for each partition count, the windows of a
/// windowed barrier and the critical path, with the speed-up they allow at this run's cost
/// per event and this machine's barrier cost, the same under channel clocks, and how evenly
/// the partitions' events fall by links, by expected frames and by the events themselves.
fn print_model(
    config: &lossless_sim::config::SimConfig,
    parts: &[u16],
    events: u64,
    wall: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    use lossless_sim::experiments::barrier::round_ns;
    use lossless_sim::experiments::partition_model::{PartitionModel, Partitioning};
    let mut sim = Simulator::with_observer(config.clone(), PartitionModel::new(config, parts))?;
    sim.run();
    let model = std::mem::replace(sim.observer_mut(), PartitionModel::new(config, &[]));
    let event_ns = wall * 1e9 / events.max(1) as f64;
    let barrier2 = round_ns(2, 200_000, true);
    let std2 = round_ns(2, 200_000, false);
    println!(
        "model: {event_ns:.1} ns per event (this run, one core); the engine's barrier with 2 threads: {barrier2:.0} ns per window (std::sync::Barrier: {std2:.0} ns; this machine)"
    );
    println!(
        "parts  groups  cut  lookahead_ns  windows  events/window  messages/window  critical_events  ideal×  predicted×  balance  adaptive×  engine_parts  engine×  channels×"
    );
    let figs = model.finish();
    for f in &figs {
        let w = f.windows.max(1) as f64;
        let mean = f.per_partition.iter().sum::<u64>() as f64 / f.per_partition.len().max(1) as f64;
        let max = f.per_partition.iter().copied().max().unwrap_or(0) as f64;
        println!(
            "{:>5}  {:>6}  {:>4}  {:>12.1}  {:>7}  {:>13.1}  {:>15.2}  {:>15}  {:>6.2}  {:>10.2}  {:>7.3}  {:>9.2}  {:>12}  {:>7.2}  {:>9.2}",
            f.parts,
            f.groups,
            f.cut_links,
            f.lookahead_ps as f64 / 1000.0,
            f.windows,
            f.events as f64 / w,
            f.messages as f64 / w,
            f.critical_events,
            f.ideal_speedup(),
            f.predicted_speedup(event_ns, barrier2),
            max / mean.max(1.0),
            f.ideal_speedup_adaptive(),
            f.engine_partitions,
            f.ideal_speedup_engine(),
            f.ideal_speedup_channels(),
        );
    }
    // how the groups' events balance as the partitioner places them (by expected frames),
    // as it placed them before (by links), and longest first by the events themselves
    println!(
        "parts  partitions' events, busiest / mean: by links  by expected frames  by the events (longest first)"
    );
    let by_links = lossless_sim::experiments::expected_load::link_weights(config);
    for f in &figs {
        let placed = |part: &Partitioning| {
            let mut load = vec![0u64; usize::from(f.parts)];
            for (g, &e) in f.per_group.iter().enumerate() {
                if let Some(n) = part.group_of_node.iter().position(|&x| x as usize == g) {
                    load[usize::from(part.of_node[n])] += e;
                }
            }
            load
        };
        let mut order = f.per_group.clone();
        order.sort_unstable_by(|a, b| b.cmp(a));
        let mut by_events = vec![0u64; usize::from(f.parts)];
        for e in order {
            if let Some(m) = by_events.iter_mut().min() {
                *m += e;
            }
        }
        let bal = |v: &[u64]| {
            let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
            v.iter().copied().max().unwrap_or(0) as f64 / mean.max(1.0)
        };
        println!(
            "{:>5}  {:>48.3}  {:>18.3}  {:>29.3}",
            f.parts,
            bal(&placed(&Partitioning::by_tier_weighted(
                config, f.parts, &by_links
            ))),
            bal(&placed(&Partitioning::by_tier(config, f.parts))),
            bal(&by_events)
        );
    }
    Ok(())
}

/// `--split`: the run on threads, each split as given; with `check`, each report against the
/// sequential run's.
fn run_splits(
    config: &lossless_sim::config::SimConfig,
    splits: &[String],
    check: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    use lossless_sim::experiments::parallel::{self, Placement, Schedule};
    use lossless_sim::experiments::partition_model::Partitioning;
    let seq = if check {
        let (events, wall, report) = run(config.clone(), CalendarQueue::default())?;
        println!("one thread: {events} events in {wall:.3} s");
        Some(serde_json::to_string_pretty(&report)?)
    } else {
        None
    };
    for s in splits {
        let mut it = s.split(':');
        let threads: u16 = it.next().ok_or("--split T:P")?.parse()?;
        let parts: u16 = match it.next() {
            Some(p) => p.parse()?,
            None => parallel::auto_partitions(threads),
        };
        let placement = match it.next().unwrap_or("events") {
            "static" => Placement::Static,
            "events" => Placement::Events,
            "time" => Placement::Time,
            other => return Err(format!("--split {s}: {other}: allowed static, events, time").into()),
        };
        let part = Partitioning::by_tier(config, parts);
        let t = WallClock::now();
        let (sim, st) = parallel::run_scheduled(
            config,
            &part,
            Schedule {
                threads,
                placement,
                wait: Default::default(),
            },
            &|_, _| false,
        )?;
        let wall = t.elapsed().as_secs_f64();
        let handled: u64 = st.events_per_thread.iter().sum();
        let per = |v: &[f64]| v.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" ");
        println!(
            "{threads} threads, {} partitions, {:?}: wall {wall:.3} s; {} windows, {:.1} frames handed over per window, {} moves; busy per thread {} s, at barriers {} s (taking frames in {} s; waits {} spun, {} slept); critical path {:.3} s busy, {} of {handled} events (ideal {:.2}×)",
            st.partitions,
            st.placement,
            st.windows,
            st.messages as f64 / st.windows.max(1) as f64,
            st.moves,
            per(&st.busy_s_per_thread),
            per(&st.wait_s_per_thread),
            per(&st.intake_s_per_thread),
            st.barrier_waits.0,
            st.barrier_waits.1,
            st.critical_s,
            st.critical_events,
            handled as f64 / st.critical_events.max(1) as f64,
        );
        if let Some(seq) = &seq {
            let par = serde_json::to_string_pretty(&Report::collect(&sim))?;
            if &par != seq {
                return Err(format!("--split {s}: the report differs from the sequential run's").into());
            }
            println!("  the report is the sequential run's, byte for byte");
        }
    }
    Ok(())
}
