//! The HTML report of a 320-host fat-tree (the corpus's `fat-tree-320.topology.txt`, the
//! HPCC simulator's, with WebSearch arrivals at 30 % load and a 16-to-1 incast that makes PFC
//! spread from a ToR up to the cores) opened in a headless Chromium: the page renders (a
//! screenshot far from blank), its DOM has the topology picture, heat maps for buffer and
//! pause, the slowdown by flow size, and no legend or label list that grows with the fabric.
//! Built-ins (four-bridge, deadlock-ring, storm) read back from the DOM: no throughput point
//! above the receivers' line rate, every time axis in one unit and ending at the run's end, the
//! egress queue depth section present.
//! Skipped loudly without chromium or the corpus (required with LOSSLESS_REQUIRE_PEERS=1).

mod common;

use std::path::Path;
use std::process::Command;

use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::trace::html::HtmlReport;
use lossless_sim::{Report, Simulator, SummaryOptions};
use lossless_testkit::{corpus_dir, require, skip_missing_corpus, temp_dir};

/// The scenario TOML of an HPCC ns-3 topology file (`nodes switches links`, the switch ids,
/// then `a b rate delay error` per link): hosts `h1..`, switches `s<id>`, 4 MB switch
/// buffers so the incast pauses, PFC on priority 3 everywhere.
fn fat_tree_toml(topology: &str, cdf: &Path) -> String {
    let mut lines = topology.lines();
    let head: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (nodes, switches, links) = (head[0], head[1], head[2]);
    let sw: std::collections::BTreeSet<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(sw.len(), switches);
    let hosts = nodes - switches;
    // hosts come first in the file's numbering, so `h{id + 1}` is the group's member
    assert!(sw.iter().all(|&s| s >= hosts));
    let name = |id: usize| {
        if sw.contains(&id) {
            format!("s{id}")
        } else {
            format!("h{}", id + 1)
        }
    };
    let mut t = format!(
        "name = \"fat-tree-320\"\nduration = \"200us\"\n[defaults]\nflow_control = \"pfc\"\npfc_priorities = [3]\n[[host]]\nname = \"h\"\ncount = {hosts}\n"
    );
    for s in &sw {
        t += &format!("[[switch]]\nname = \"s{s}\"\nbuffer_bytes = 4_000_000\n");
    }
    for l in lines.take(links) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let rate = f[2].trim_end_matches("bps");
        let delay_ns: u64 = f[3].trim_end_matches("ns").parse().unwrap();
        t += &format!(
            "[[link]]\na = \"{}\"\nb = \"{}\"\nrate = \"{rate}\"\nlength_m = {}\n",
            name(f[0].parse().unwrap()),
            name(f[1].parse().unwrap()),
            delay_ns / 5
        );
    }
    t += &format!(
        "[[workload]]\nname = \"websearch\"\nsrc = [\"h*\"]\ndst = [\"h*\"]\npriority = 3\ncdf_file = {:?}\nload = 0.3\n",
        cdf.display().to_string()
    );
    // two 16-to-1 incasts, into the first host of two pods, from hosts all over the fabric
    for (dst, shift) in [(1, 0), (161, 2)] {
        for k in 1..=16 {
            t += &format!(
                "[[flow]]\nname = \"incast{dst}-{k}\"\nsrc = \"h{}\"\ndst = \"h{dst}\"\npriority = 3\nstart = \"5us\"\nsize_bytes = 500_000\n",
                k * 19 + shift
            );
        }
    }
    t
}

/// Runs chromium headless on `url` with `args`; its standard output.
fn chromium(exe: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    let out = Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The part of `dom` in `<section id="ID">`.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let from = dom
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &dom[from..];
    &rest[..rest.find("</section>").unwrap_or(rest.len())]
}

#[test]
fn a_320_host_report_renders_in_a_browser_with_a_topology_heat_maps_and_no_long_legend() {
    const TEST: &str = "a_320_host_report_renders_in_a_browser";
    let corpus = corpus_dir().join("workloads");
    let (topo, cdf) = (
        corpus.join("fat-tree-320.topology.txt"),
        corpus.join("WebSearch_distribution.txt"),
    );
    if !topo.is_file() || !cdf.is_file() {
        skip_missing_corpus(TEST, if topo.is_file() { &cdf } else { &topo });
        return;
    }
    let Some(exe) = require("chromium", TEST) else {
        return;
    };
    let text = fat_tree_toml(&std::fs::read_to_string(&topo).unwrap(), &cdf);
    let config = load_str(&text, "fat-tree-320.toml", None, &Overrides::default()).expect("loads");
    assert_eq!(
        config.nodes.len(),
        376,
        "320 hosts and 56 switches, as the corpus's file has"
    );
    let mut sim = Simulator::with_observer(config.clone(), HtmlReport::new(&config)).unwrap();
    sim.run();
    let report = Report::collect(&sim);
    report.check().expect("conserved");
    let end = sim.now();
    let dir = temp_dir("html-browser");
    let page = sim.observer_mut().write(&dir, end, &report).unwrap();

    // the terminal summary reads at this scale: a screenful, not a line per port
    let summary = report.summary_with(&SummaryOptions::default());
    let rows: usize = report.ports.iter().map(|p| p.priorities.len()).sum();
    assert!(rows > 500, "{rows} port priorities");
    assert!(
        summary.lines().count() < 90,
        "{} lines:\n{summary}",
        summary.lines().count()
    );

    // the screenshot: far from the size of a blank page's
    let url = format!("file://{}", page.display());
    let shot = dir.join("report.png");
    let blank_page = dir.join("blank.html");
    std::fs::write(&blank_page, "<!doctype html><html><body></body></html>").unwrap();
    let blank_shot = dir.join("blank.png");
    let size = "--window-size=1400,3000";
    chromium(
        &exe,
        &dir.join("profile"),
        &[&format!("--screenshot={}", shot.display()), size],
        &url,
    );
    chromium(
        &exe,
        &dir.join("profile"),
        &[&format!("--screenshot={}", blank_shot.display()), size],
        &format!("file://{}", blank_page.display()),
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let blank = std::fs::metadata(&blank_shot).unwrap().len() as usize;
    assert!(
        png.len() > 10 * blank,
        "the screenshot ({} bytes) is about as small as a blank page's ({blank})",
        png.len()
    );
    if let Some(keep) = std::env::var_os("LOSSLESS_REPORT_SHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }

    // the DOM as the browser built it
    let dom = chromium(&exe, &dir.join("profile"), &["--dump-dom"], &url);
    let topology = section(&dom, "topology");
    assert!(topology.contains("<svg"), "no topology picture");
    // every one of the 480 links is drawn, and the spread list is numbered in time order
    assert!(topology.matches("<polyline").count() >= 480);
    let items: Vec<&str> = topology.split("<li>").skip(1).collect();
    assert!(
        !items.is_empty() && items.len() <= 30,
        "{} list items",
        items.len()
    );
    // switch ids: ToRs 320..=339, aggregation 340..=359, cores 360..=375
    let hop = |item: &str| -> (u32, u32) {
        let id = |w: &str| w.trim_start_matches('s').parse::<u32>().unwrap_or(0);
        let w: Vec<&str> = item.split_whitespace().collect();
        (id(w[0]), id(w[2]))
    };
    let (from, to) = hop(items[0]);
    assert!(
        (320..340).contains(&from) && (340..360).contains(&to),
        "an incast's ToR pauses an aggregation switch first: {}",
        items[0]
    );
    assert!(
        items
            .iter()
            .map(|i| hop(i))
            .any(|(f, t)| (340..360).contains(&f) && (360..376).contains(&t)),
        "PFC spreads a hop further, from the aggregation to the core: {items:?}"
    );
    for id in ["buffer", "pause"] {
        let s = section(&dom, id);
        assert!(s.contains("heat map"), "{id} is not a heat map");
        assert!(s.contains("<svg"), "{id} has no plot");
    }
    assert!(section(&dom, "fct-size").contains("<table>"));
    // no legend of hundreds: every plot's texts (ticks, labels, legend entries) stay few
    for (k, svg) in dom.split("<svg").skip(1).enumerate() {
        let svg = &svg[..svg.find("</svg>").unwrap_or(svg.len())];
        let texts = svg.matches("<text").count();
        assert!(
            texts <= 120,
            "plot {k} has {texts} texts: a legend or label list grew with the fabric"
        );
    }
    // the heat maps name at most about 40 rows of their hundreds
    for id in ["buffer", "pause"] {
        let s = section(&dom, id);
        let names = s.matches(" prio 3</text>").count() + s.matches(" → ").count();
        assert!(names <= 45, "{id}: {names} row names");
    }
}

/// The x axis's tick labels of the plot `svg`: the numeric texts on its lowest row.
fn x_ticks(svg: &str) -> Vec<f64> {
    let mut texts: Vec<(f64, f64)> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            let y: f64 = t.split(" y=\"").nth(1)?.split('"').next()?.parse().ok()?;
            let body = t.split('>').nth(1)?.split('<').next()?.trim();
            Some((y, body.parse::<f64>().ok()?))
        })
        .collect();
    let bottom = texts.iter().map(|t| t.0).fold(f64::MIN, f64::max);
    texts.retain(|t| t.0 == bottom);
    texts.into_iter().map(|t| t.1).collect()
}

#[test]
fn built_in_reports_in_a_browser_keep_throughput_under_the_line_rate_and_axes_within_the_run() {
    const TEST: &str = "built_in_reports_in_a_browser";
    let Some(exe) = require("chromium", TEST) else {
        return;
    };
    use lossless_proto::units::Duration;
    let runs: [(&str, Option<Duration>, &str, f64); 3] = [
        ("four-bridge", Some(Duration::from_us(300)), "µs", 300.0),
        ("deadlock-ring", None, "µs", 600.0),
        ("storm", None, "ms", 500.0),
    ];
    for (name, duration, unit, run_end) in runs {
        let ov = Overrides {
            duration,
            ..Overrides::default()
        };
        let config = lossless_sim::scenario::load(name, &ov).expect("built-in");
        let mut sim = Simulator::with_observer(config.clone(), HtmlReport::new(&config)).unwrap();
        sim.run();
        let report = Report::collect(&sim);
        let end = sim.now();
        let dir = temp_dir(&format!("html-browser-{name}"));
        let page = sim.observer_mut().write(&dir, end, &report).unwrap();
        let dom = chromium(
            &exe,
            &dir.join("profile"),
            &["--dump-dom"],
            &format!("file://{}", page.display()),
        );
        // one time unit on the page
        let units: Vec<&str> = dom
            .split("\ntime (")
            .skip(1)
            .filter_map(|s| s.split(')').next())
            .collect();
        assert!(!units.is_empty(), "{name}: no time axis");
        assert!(units.iter().all(|u| *u == unit), "{name}: units {units:?}");
        // the throughput never above the grey line of the receivers' line rate
        let thr = section(&dom, "throughput");
        let lines = common::polylines(thr);
        let limit_y = lines
            .iter()
            .find(|(c, _)| c == "#888888")
            .unwrap_or_else(|| panic!("{name}: no line-rate line"))
            .1[0]
            .1;
        let colours = [
            "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        ];
        for (c, pts) in lines
            .iter()
            .filter(|(c, p)| colours.contains(&c.as_str()) && p.len() > 2)
        {
            assert!(
                pts.iter().all(|p| p.1 >= limit_y),
                "{name}: {c} rises above the line rate"
            );
        }
        // the cause in view: the egress queues' depth
        assert!(
            section(&dom, "egress").contains("<svg"),
            "{name}: no egress queue plot"
        );
        // every time axis ends at the run's end: its last tick is at most the end and near it
        for id in ["throughput", "buffer", "egress", "pause", "pathology"] {
            if !dom.contains(&format!("<section id=\"{id}\">")) {
                continue;
            }
            let s = section(&dom, id);
            let svg = &s[s.find("<svg").unwrap_or_else(|| panic!("{name} {id}: no plot"))..];
            let ticks = x_ticks(svg);
            let last = ticks.iter().copied().fold(f64::MIN, f64::max);
            assert!(
                ticks.len() >= 3 && last <= run_end && last >= 0.75 * run_end,
                "{name} {id}: x ticks {ticks:?} for a run to {run_end} {unit}"
            );
        }
    }
}
