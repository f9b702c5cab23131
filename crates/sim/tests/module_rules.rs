//! The simulator crate's module rules, read from its source: which top-level module may use
//! which (`crate::NAME` in code, comments and test modules aside).
//! - the event queues (`event`) use nothing of the crate;
//! - the front ends and the configuration (`config`, `scenario`) never name `Simulator`;
//! - the engine (`sim`) uses none of the report modules: reports read the simulator, never the
//!   other way round;
//! - the trace sinks (`trace`) never name `Simulator` nor use the engine: they read the report
//!   and the observer hook;
//! - no import cycle between top-level modules
//!   (cut in issue 21: config/headroom/traffic, whose headroom constants now come from
//!   `lossless_proto::headroom`; the engine and its reports, which it no longer builds; the
//!   reports and the CN twin, whose figures' types moved into `report`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of crates/sim/src and the files of each.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" {
            continue;
        }
        let files = out.entry(name).or_default();
        if p.is_dir() {
            let mut stack = vec![p];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(d).unwrap() {
                    let q = e.unwrap().path();
                    if q.is_dir() {
                        stack.push(q);
                    } else if q.extension().is_some_and(|x| x == "rs") {
                        files.push(q);
                    }
                }
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
    out
}

/// The code of `path` without comments and without its test module or test file.
fn code(path: &Path) -> String {
    if path.file_name().is_some_and(|f| f == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules each module uses (`crate::x` and `crate::{x, ..}`).
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    let mut out = BTreeMap::new();
    for (m, files) in &mods {
        let mut used = BTreeSet::new();
        for f in files {
            let c = code(f);
            let mut rest = c.as_str();
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let group = if let Some(inner) = rest.strip_prefix('{') {
                    &inner[..inner.find('}').unwrap_or(inner.len())]
                } else {
                    rest
                };
                let heads: Vec<&str> = if rest.starts_with('{') {
                    group.split(',').map(|s| s.trim()).collect()
                } else {
                    vec![group]
                };
                for h in heads {
                    let name: String = h
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if name != *m && names.contains(&name) {
                        used.insert(name);
                    }
                }
            }
        }
        out.insert(m.clone(), used);
    }
    out
}

/// Strongly connected components of more than one module.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    // reachability closure: small graph, plain DFS from every node
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(v) = stack.pop() {
            for w in g.get(&v).into_iter().flatten() {
                if seen.insert(w.clone()) {
                    stack.push(w.clone());
                }
            }
        }
        seen
    };
    let r: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|k| (k, reach(k))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for k in g.keys() {
        let comp: BTreeSet<String> = g
            .keys()
            .filter(|j| *j == k || (r[k].contains(*j) && r[*j].contains(k)))
            .cloned()
            .collect();
        if comp.len() > 1 && !out.contains(&comp) {
            out.push(comp);
        }
    }
    out
}

#[test]
fn the_event_queues_use_nothing_of_the_crate() {
    let u = uses();
    assert!(u["event"].is_empty(), "event uses {:?}", u["event"]);
}

#[test]
fn configuration_and_scenario_never_name_the_simulator() {
    let mods = modules();
    for m in ["config", "scenario"] {
        for f in &mods[m] {
            assert!(
                !code(f).contains("Simulator"),
                "{} names Simulator: the front ends produce a SimConfig and nothing else",
                f.display()
            );
        }
    }
}

#[test]
fn the_engine_uses_no_report_module() {
    let u = uses();
    for r in ["report", "trace", "experiments"] {
        assert!(!u["sim"].contains(r), "sim uses {r}: {:?}", u["sim"]);
    }
}

#[test]
fn the_trace_sinks_never_name_the_simulator_nor_use_the_engine() {
    let u = uses();
    assert!(!u["trace"].contains("sim"), "trace uses sim: {:?}", u["trace"]);
    for f in &modules()["trace"] {
        assert!(
            !code(f).contains("Simulator"),
            "{} names Simulator: the trace sinks read the report and the observer hook",
            f.display()
        );
    }
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let u = uses();
    let found = cycles(&u);
    assert!(
        found.is_empty(),
        "import cycles: {found:?} (every module uses: {u:?})"
    );
}

#[test]
fn the_engine_schedules_only_through_the_order_of_simultaneous_events() {
    // every event the engine schedules carries the tie of `sim/order.rs` (`schedule!`); a
    // plain `push` (tie 0) would order it by the queue's insertion counter, which depends on
    // what else shares the queue — not the same in a partitioned run
    let mut bad = Vec::new();
    for path in &modules()["sim"] {
        let squeezed: String = code(path).split_whitespace().collect();
        if squeezed.contains("queue.push(") {
            bad.push(path.display().to_string());
        }
    }
    assert!(bad.is_empty(), "plain pushes in {bad:?}");
}
