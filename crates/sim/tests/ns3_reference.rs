//! Proof against the HPCC ns-3 reference runs in the shared corpus's `hpcc-ns3/` (found by
//! `lossless_testkit::corpus_dir`, `$LOSSLESS_CORPUS` overrides; skipped loudly without it): the same
//! topology, flows and parameters (read by `lossless_sim::ns3`, modelled with the `hpcc-ns3`
//! preset) give FCT slowdowns whose p50, p95 and p99 over all flows are within 10 % of the
//! reference's `fct.txt`; every flow's ideal FCT equals the reference's standalone FCT.
//! The per-flow error distribution is printed (`cargo test -p lossless-sim --test
//! ns3_reference -- --nocapture`; `NS3_FLOWS=1` adds one line per flow, `NS3_SEED=N` runs with
//! another seed of the ECN markers' generators — the reference's own generator cannot be
//! reproduced, so a seed is one more sample of the same model).

use std::collections::HashMap;
use std::path::PathBuf;

use lossless_sim::ns3::{FctLine, Run, parse_fct};
use lossless_sim::{Report, Simulator};

fn corpus(run: &str) -> Option<PathBuf> {
    let d = lossless_testkit::corpus_dir().join("hpcc-ns3").join(run);
    if d.join("config.txt").exists() {
        Some(d)
    } else {
        // the corpus is the project's shared store: without it there is nothing to compare
        lossless_testkit::skip_missing_corpus(&format!("ns3_reference {run}"), &d);
        None
    }
}

/// The nearest-rank quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

struct Compared {
    ours: Vec<f64>,
    theirs: Vec<f64>,
    /// Per flow: our slowdown / theirs − 1.
    errors: Vec<f64>,
    report: Report,
}

/// Runs reference run `name` with our ECN markers seeded `seed` (default: the config's 1, or
/// `$NS3_SEED`) and compares it flow by flow; prints the comparison.
fn compare(name: &str, seed: Option<u64>) -> Option<Compared> {
    let dir = corpus(name)?;
    let run = Run::load(
        &dir.join("config.txt"),
        Some(&dir.join("topology.txt")),
        Some(&dir.join("flow.txt")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut config = run.to_sim_config(name).unwrap_or_else(|e| panic!("{e}"));
    if let Some(seed) = seed.or_else(|| std::env::var("NS3_SEED").ok().and_then(|s| s.parse().ok())) {
        config.seed = seed;
    }
    let mut sim = Simulator::new(config).expect("builds");
    sim.run();
    let report = Report::collect(&sim);
    report.check().expect("conserved, every byte once");
    let fct_path = dir.join("fct.txt");
    let text = std::fs::read_to_string(&fct_path).unwrap();
    let reference: Vec<FctLine> = parse_fct(&text, &fct_path.display().to_string()).unwrap();
    // our flows in file order, keyed as the reference keys them: (src, dst, sport)
    let mut pair = HashMap::new();
    let mut ours = HashMap::new();
    for (f, r) in run.flows.iter().zip(&report.flows) {
        let n = pair.entry((f.src, f.dst)).or_insert(0u16);
        ours.insert((f.src, f.dst, 10_000 + *n), r);
        *n += 1;
    }
    assert_eq!(
        reference.len(),
        run.flows.len(),
        "the reference finished every flow"
    );
    let mut c = Compared {
        ours: Vec::new(),
        theirs: Vec::new(),
        errors: Vec::new(),
        report: report.clone(),
    };
    for l in &reference {
        let r = ours
            .get(&(l.src, l.dst, l.sport))
            .unwrap_or_else(|| panic!("no flow {}→{} sport {}", l.src, l.dst, l.sport));
        let ideal = r.fct_ideal_ps.expect("finite") as u64;
        assert_eq!(
            ideal,
            l.standalone_ns * 1_000,
            "{}: the ideal FCT is the reference's",
            r.name
        );
        let fct = r
            .completion_ps
            .unwrap_or_else(|| panic!("{} did not complete", r.name)) as f64;
        let ours = fct / ideal as f64;
        let theirs = l.fct_ns as f64 / l.standalone_ns as f64;
        if std::env::var_os("NS3_FLOWS").is_some() {
            println!(
                "FLOW {} {}->{} size {} start {} ours {} theirs {} ideal {} err {:+.3}",
                r.name,
                l.src,
                l.dst,
                l.size,
                l.start_ns,
                fct as u64 / 1000,
                l.fct_ns,
                l.standalone_ns,
                ours / theirs - 1.0
            );
        }
        c.ours.push(ours);
        c.theirs.push(theirs);
        c.errors.push(ours / theirs - 1.0);
    }
    c.ours.sort_by(f64::total_cmp);
    c.theirs.sort_by(f64::total_cmp);
    let mut e = c.errors.clone();
    e.sort_by(f64::total_cmp);
    let abs: Vec<f64> = {
        let mut a: Vec<f64> = e.iter().map(|x| x.abs()).collect();
        a.sort_by(f64::total_cmp);
        a
    };
    let mut out = format!(
        "{name} (seed {}): {} flows, {} events\n",
        report.seed,
        e.len(),
        report.events
    );
    for q in [0.5, 0.95, 0.99] {
        out += &format!(
            "  slowdown p{:<4} ours {:>8.3}  reference {:>8.3}  ({:+.1} %)\n",
            q * 100.0,
            quantile(&c.ours, q),
            quantile(&c.theirs, q),
            100.0 * (quantile(&c.ours, q) / quantile(&c.theirs, q) - 1.0)
        );
    }
    out += &format!(
        "  per-flow error (ours/reference − 1): min {:+.1} %, p5 {:+.1} %, p25 {:+.1} %, median {:+.1} %, p75 {:+.1} %, p95 {:+.1} %, max {:+.1} %\n",
        100.0 * e[0],
        100.0 * quantile(&e, 0.05),
        100.0 * quantile(&e, 0.25),
        100.0 * quantile(&e, 0.5),
        100.0 * quantile(&e, 0.75),
        100.0 * quantile(&e, 0.95),
        100.0 * e[e.len() - 1]
    );
    out += &format!(
        "  |error|: median {:.1} %, p90 {:.1} %, p99 {:.1} %; within 1 %: {}, within 10 %: {} of {}\n",
        100.0 * quantile(&abs, 0.5),
        100.0 * quantile(&abs, 0.9),
        100.0 * quantile(&abs, 0.99),
        abs.iter().filter(|&&x| x <= 0.01).count(),
        abs.iter().filter(|&&x| x <= 0.10).count(),
        abs.len()
    );
    print!("{out}");
    Some(c)
}

fn assert_quantiles_within_10_percent(c: &Compared, name: &str) {
    for q in [0.5, 0.95, 0.99] {
        let (o, t) = (quantile(&c.ours, q), quantile(&c.theirs, q));
        assert!(
            (o / t - 1.0).abs() <= 0.10,
            "{name}: slowdown p{} is {o:.3}, the reference's {t:.3}",
            q * 100.0
        );
    }
}

#[test]
fn incast_8_slowdowns_are_within_10_percent_of_the_reference() {
    if let Some(c) = compare("incast-8", None) {
        assert_quantiles_within_10_percent(&c, "incast-8");
        // like the reference, no PFC frame
        assert_eq!(pfc_frames(&c.report), 0);
    }
}

#[test]
fn fat_tree_websearch_slowdowns_are_within_10_percent_of_the_reference() {
    if let Some(c) = compare("ft-k4-websearch", None) {
        assert_quantiles_within_10_percent(&c, "ft-k4-websearch");
        assert_eq!(pfc_frames(&c.report), 0);
    }
}

/// The reference's ECN markers draw from a generator that cannot be reproduced, so one seed of
/// ours is one sample of the same model, and its 99th percentile (the 4th-largest of 321
/// slowdowns) moves with it: over seeds 1..=12 it ranged from 5.66 to 7.91 (±17 % around the
/// reference's 6.12), so the median of five seeds still moved by about ±7 %. Over nine seeds the
/// median of each quantile is within 10 % of the reference too (not only the default seed's).
#[test]
fn fat_tree_websearch_slowdown_medians_over_nine_seeds_are_within_10_percent() {
    let runs: Vec<Compared> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=9u64)
            .map(|seed| s.spawn(move || compare("ft-k4-websearch", Some(seed))))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("run"))
            .collect()
    });
    if runs.is_empty() {
        return; // skipped: no corpus
    }
    for q in [0.5, 0.95, 0.99] {
        let mut ours: Vec<f64> = runs.iter().map(|c| quantile(&c.ours, q)).collect();
        ours.sort_by(f64::total_cmp);
        let median = ours[ours.len() / 2];
        let theirs = quantile(&runs[0].theirs, q);
        println!(
            "ft-k4-websearch p{}: seeds 1..=9 give {ours:.3?}, median {median:.3}, reference {theirs:.3} ({:+.1} %)",
            q * 100.0,
            100.0 * (median / theirs - 1.0)
        );
        assert!(
            (median / theirs - 1.0).abs() <= 0.10,
            "slowdown p{}: median over seeds {median:.3}, the reference's {theirs:.3}",
            q * 100.0
        );
    }
}

fn pfc_frames(r: &Report) -> u64 {
    r.ports
        .iter()
        .flat_map(|p| &p.priorities)
        .map(|q| q.pfc_xoff_sent_frames + q.pfc_xon_sent_frames)
        .sum()
}
