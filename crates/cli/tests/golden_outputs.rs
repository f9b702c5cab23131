//! Golden outputs: what the simulator writes today, pinned byte for byte, so that a change of
//! behaviour is never an accident. Each test fails on any byte of difference and says what
//! changed (the JSON paths with their old and new values, the first differing lines, or the
//! artefact whose hash moved):
//! - the `--json` report and exit status of every built-in, and `cc-compare`'s JSON (its
//!   wall times and events/s left out);
//! - hashes of the pcapng, VCD and HTML of a few built-ins (four-bridge, incast-dcqcn,
//!   deadlock-ring);
//! - the JSON report of the corpus's 320-host fat tree with WebSearch at 30 % and DCQCN,
//!   200 µs (the `simrun fat-tree-websearch` benchmark);
//! - `fct.txt` and `pfc.txt` of HPCC ns-3 corpus runs through `--ns3`: ft-k4-websearch
//!   (DCQCN), ft-k4-websearch-60-nocc-12MB (PFC fires thousands of times) and
//!   incast-16-4MB-buf8 (random ECN marks with the default seed).
//!
//! A change that is meant is re-blessed on purpose, in its own commit, with the reason:
//! `scripts/bless.sh` (`LOSSLESS_BLESS=1` on this test) rewrites the golden files under
//! `tests/golden/outputs/` and prints the same summary of what changed. The corpus runs skip
//! loudly when the shared corpus is absent.

#[path = "cli_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use lossless_testkit::{corpus_dir, skip_missing_corpus, temp_dir};
use sha2::{Digest, Sha256};
use support::*;

/// Differences listed per artefact before the rest are counted.
const SHOWN: usize = 12;

/// The golden files and what differs from them.
struct Golden {
    dir: PathBuf,
    bless: bool,
    changes: Vec<String>,
}

impl Golden {
    fn new() -> Golden {
        Golden {
            dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/outputs"),
            bless: std::env::var_os("LOSSLESS_BLESS").is_some_and(|v| v == "1"),
            changes: Vec::new(),
        }
    }

    /// Compares (or blesses) `actual` with the golden file `name`; `summary` says how they differ.
    fn check_with(&mut self, name: &str, actual: &[u8], summary: impl FnOnce(&[u8], &[u8]) -> String) {
        let path = self.dir.join(name);
        let old = std::fs::read(&path).ok();
        if old.as_deref() == Some(actual) {
            return;
        }
        let what = match &old {
            None => format!("{name}: new ({} bytes)", actual.len()),
            Some(old) => format!("{name}: {}", summary(old, actual)),
        };
        if self.bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, actual).unwrap();
            println!("blessed {what}");
        }
        self.changes.push(what);
    }

    /// A JSON document, compared byte for byte and summarised by the paths that differ.
    fn json(&mut self, name: &str, actual: &[u8]) {
        self.check_with(name, actual, json_diff);
    }

    /// A text file, summarised by its differing lines.
    fn text(&mut self, name: &str, actual: &[u8]) {
        self.check_with(name, actual, text_diff);
    }

    /// A binary or large artefact, pinned by its SHA-256 and size in `NAME.sha256`.
    fn hash(&mut self, name: &str, actual: &[u8]) {
        let line = format!("{:x}  {} bytes\n", Sha256::digest(actual), actual.len());
        self.check_with(&format!("{name}.sha256"), line.as_bytes(), |old, new| {
            format!(
                "hash and size {} → {}",
                String::from_utf8_lossy(old).trim(),
                String::from_utf8_lossy(new).trim()
            )
        });
    }

    /// Fails with every change (checking), or reports them (blessing).
    fn finish(self, what: &str) {
        if self.bless {
            println!("{what}: {} golden file(s) rewritten", self.changes.len());
            return;
        }
        assert!(
            self.changes.is_empty(),
            "{what}: {} output(s) differ from the golden ones (re-bless with scripts/bless.sh \
             if the change is meant):\n  {}",
            self.changes.len(),
            self.changes.join("\n  ")
        );
    }
}

/// The JSON paths whose values differ, old → new, the first [`SHOWN`] of them.
fn json_diff(old: &[u8], new: &[u8]) -> String {
    fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        use serde_json::Value::{Array, Object};
        match (a, b) {
            (Object(x), Object(y)) => {
                for (k, v) in x {
                    match y.get(k) {
                        Some(w) => walk(&format!("{path}.{k}"), v, w, out),
                        None => out.push(format!("{path}.{k}: removed")),
                    }
                }
                for k in y.keys().filter(|k| !x.contains_key(*k)) {
                    out.push(format!("{path}.{k}: added"));
                }
            }
            (Array(x), Array(y)) => {
                if x.len() != y.len() {
                    out.push(format!("{path}: {} → {} elements", x.len(), y.len()));
                }
                for (i, (v, w)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}[{i}]"), v, w, out);
                }
            }
            _ if a != b => out.push(format!("{path}: {a} → {b}")),
            _ => {}
        }
    }
    let (Ok(a), Ok(b)) = (
        serde_json::from_slice::<serde_json::Value>(old),
        serde_json::from_slice::<serde_json::Value>(new),
    ) else {
        return text_diff(old, new);
    };
    let mut out = Vec::new();
    walk("", &a, &b, &mut out);
    if out.is_empty() {
        return "same values, different bytes (formatting or key order)".into();
    }
    let n = out.len();
    out.truncate(SHOWN);
    let more = if n > SHOWN {
        format!("\n      … and {} more", n - SHOWN)
    } else {
        String::new()
    };
    format!("{n} value(s) differ:\n      {}{more}", out.join("\n      "))
}

/// The line counts and the first [`SHOWN`] differing lines.
fn text_diff(old: &[u8], new: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let differ: Vec<usize> = (0..a.len().max(b.len()))
        .filter(|&i| a.get(i) != b.get(i))
        .collect();
    let shown: Vec<String> = differ
        .iter()
        .take(SHOWN)
        .map(|&i| {
            format!(
                "line {}: {:?} → {:?}",
                i + 1,
                a.get(i).copied().unwrap_or("(none)"),
                b.get(i).copied().unwrap_or("(none)")
            )
        })
        .collect();
    format!(
        "{} → {} lines, {} differ:\n      {}",
        a.len(),
        b.len(),
        differ.len(),
        shown.join("\n      ")
    )
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_builtin_writes_its_golden_json_and_exit_status() {
    let mut g = Golden::new();
    let dir = temp_dir("golden_builtins");
    let mut exits = String::new();
    for b in lossless_sim::scenario::BUILTINS {
        let json = dir.join(format!("{}.json", b.name));
        let o = run(&["sim", b.name, "--json", json.to_str().unwrap(), "--quiet"]);
        let code = o.status.code();
        assert!(
            matches!(code, Some(0 | 3)),
            "{}: exit {code:?}\n{}",
            b.name,
            stderr(&o)
        );
        exits.push_str(&format!("{} {}\n", b.name, code.unwrap_or(-1)));
        g.json(&format!("builtins/{}.json", b.name), &read(&json));
    }
    g.text("builtins/exit-status.txt", exits.as_bytes());
    g.finish("built-ins");
}

#[test]
fn cc_compare_writes_its_golden_json_but_for_wall_times() {
    let mut g = Golden::new();
    let dir = temp_dir("golden_cc_compare");
    let json = dir.join("cc-compare.json");
    let o = run_for(
        &["sim", "cc-compare", "--json", json.to_str().unwrap(), "--quiet"],
        Duration::from_secs(900),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // the wall time and events/s of each run are not the simulator's to pin
    let mut doc: serde_json::Value = serde_json::from_slice(&read(&json)).unwrap();
    for r in doc["runs"].as_array_mut().unwrap() {
        let r = r.as_object_mut().unwrap();
        assert!(r.remove("wall_s").is_some() && r.remove("events_per_s").is_some());
    }
    let mut text = serde_json::to_vec_pretty(&doc).unwrap();
    text.push(b'\n');
    g.json("cc-compare.json", &text);
    g.finish("cc-compare");
}

#[test]
fn pcapng_vcd_and_html_of_a_few_builtins_hash_to_their_golden_ones() {
    let mut g = Golden::new();
    let dir = temp_dir("golden_traces");
    for name in ["four-bridge", "incast-dcqcn", "deadlock-ring"] {
        let out = dir.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let (pcap, vcd, html) = (out.join("pcap"), out.join("wave.vcd"), out.join("report"));
        let o = run(&[
            "sim",
            name,
            "--pcap",
            pcap.to_str().unwrap(),
            "--vcd",
            vcd.to_str().unwrap(),
            "--report",
            html.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(matches!(o.status.code(), Some(0 | 3)), "{name}: {}", stderr(&o));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&pcap)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{name} wrote no pcapng");
        // one hash over every link direction's capture, each named, so a renamed file counts
        let mut all = Vec::new();
        for f in &files {
            all.extend_from_slice(f.file_name().unwrap().as_encoded_bytes());
            all.push(0);
            all.extend_from_slice(&read(f));
        }
        g.hash(&format!("traces/{name}.pcapng-set"), &all);
        g.hash(&format!("traces/{name}.vcd"), &read(&vcd));
        g.hash(&format!("traces/{name}.html"), &read(&html.join("index.html")));
    }
    g.finish("traces");
}

#[test]
fn the_320_host_fat_tree_writes_its_golden_json() {
    use lossless_sim::event::CalendarQueue;
    use lossless_sim::observer::NoObserver;
    use lossless_sim::{Report, Simulator};
    let dir = corpus_dir().join("workloads");
    let (Ok(topo), Ok(cdf)) = (
        std::fs::read_to_string(dir.join("fat-tree-320.topology.txt")),
        std::fs::read_to_string(dir.join("WebSearch_distribution.txt")),
    ) else {
        skip_missing_corpus("golden_outputs fat tree", &dir);
        return;
    };
    let topo = lossless_sim::ns3::Topology::parse(&topo, "fat-tree-320.topology.txt").unwrap();
    let cdf = lossless_sim::config::traffic::SizeCdf::parse(&cdf).unwrap();
    let config = topo.websearch_dcqcn(cdf, 0.3, lossless_proto::units::Duration::from_us(200));
    let mut sim = Simulator::build(config, NoObserver, CalendarQueue::default()).unwrap();
    sim.run();
    let report = Report::collect(&sim);
    let mut g = Golden::new();
    g.json(
        "fat-tree-320-200us.json",
        serde_json::to_string_pretty(&report).unwrap().as_bytes(),
    );
    g.finish("fat tree");
}

#[test]
fn hpcc_ns3_corpus_runs_write_their_golden_fct_and_pfc_files() {
    let root = corpus_dir().join("hpcc-ns3");
    if !root.is_dir() {
        skip_missing_corpus("golden_outputs ns3", &root);
        return;
    }
    let mut g = Golden::new();
    let scratch = temp_dir("golden_ns3");
    // (run, pfc.txt pinned by hash: thousands of lines)
    for (name, pfc_by_hash) in [
        ("ft-k4-websearch", false),
        ("ft-k4-websearch-60-nocc-12MB", true),
        ("incast-16-4MB-buf8", false),
    ] {
        let run = root.join(name);
        let out = scratch.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let args: Vec<std::ffi::OsString> = vec![
            "sim".into(),
            "--ns3".into(),
            run.join("config.txt").into(),
            "--ns3-topology".into(),
            run.join("topology.txt").into(),
            "--ns3-flows".into(),
            run.join("flow.txt").into(),
            "--ns3-out".into(),
            out.clone().into(),
            "--quiet".into(),
        ];
        let o = run_for(&args, Duration::from_secs(900));
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        g.text(&format!("ns3/{name}/fct.txt"), &read(&out.join("fct.txt")));
        let pfc = read(&out.join("pfc.txt"));
        if pfc_by_hash {
            g.hash(&format!("ns3/{name}/pfc.txt"), &pfc);
        } else {
            g.text(&format!("ns3/{name}/pfc.txt"), &pfc);
        }
    }
    g.finish("HPCC ns-3 runs");
}
