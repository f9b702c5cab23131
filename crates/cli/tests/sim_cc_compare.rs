//! `lossless sim cc-compare`: every congestion control runs in both fabrics, the table, the
//! JSON and the page have a row or a line for each, and the CCs act (they differ from each
//! other and from PFC alone). One comparison is run and shared by the tests.

#[path = "cli_support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use lossless_testkit::temp_dir;
use serde_json::Value;
use support::*;

const FABRICS: [&str; 2] = ["incast-cc", "fat-tree-websearch"];
const CCS: [&str; 6] = ["none", "dcqcn", "hpcc", "timely", "dctcp", "hpcc-pint"];

/// The default comparison: its exit status, standard output, JSON and page.
struct Compared {
    code: Option<i32>,
    stdout: String,
    json: Value,
    page: String,
}

fn compared() -> &'static Compared {
    static RUN: OnceLock<Compared> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = temp_dir("cc_compare");
        let (json, report) = (dir.join("cc.json"), dir.join("rpt"));
        let o = run_for(
            &[
                "sim",
                "cc-compare",
                "--json",
                json.to_str().unwrap(),
                "--report",
                report.to_str().unwrap(),
            ],
            Duration::from_secs(900),
        );
        assert!(o.status.success(), "exit {:?}: {}", o.status.code(), stderr(&o));
        let read =
            |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        Compared {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            json: serde_json::from_str(&read(json)).unwrap(),
            page: read(report.join("index.html")),
        }
    })
}

/// The JSON run of `fabric` under `cc`.
fn run_of<'a>(c: &'a Compared, fabric: &str, cc: &str) -> &'a Value {
    let runs = c.json["runs"].as_array().unwrap();
    let found: Vec<&Value> = runs
        .iter()
        .filter(|r| r["fabric"] == fabric && r["cc"] == cc)
        .collect();
    assert_eq!(found.len(), 1, "{fabric} under {cc}: {} runs", found.len());
    found[0]
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn every_cc_runs_in_both_fabrics_with_a_json_run_and_a_table_row_each() {
    let c = compared();
    assert_eq!(c.code, Some(0));
    assert_eq!(
        c.json["runs"].as_array().unwrap().len(),
        FABRICS.len() * CCS.len()
    );
    assert_eq!(c.json["ccs"], serde_json::json!(CCS));
    assert_eq!(c.json["fabrics"], serde_json::json!(FABRICS));
    for f in FABRICS {
        for cc in CCS {
            let r = run_of(c, f, cc);
            assert_eq!(r["sound"], true, "{f} under {cc}");
            assert!(u(&r["flows"]) > 0, "{f} under {cc}");
            assert_eq!(
                r["flows_completed"], r["flows"],
                "{f} under {cc}: every flow completes"
            );
            assert_eq!(u(&r["lossless_dropped_frames"]), 0, "{f} under {cc}");
            assert!(u(&r["events"]) > 0);
            assert!(
                r["slowdown"]["p50_ratio"].as_f64().unwrap() >= 1.0,
                "{f} under {cc}"
            );
            // the run names the overrides that repeat it
            let set = r["set"].as_array().unwrap();
            assert_eq!(set[0], format!("qp.cc=\"{cc}\""), "{f} under {cc}");
            // the table's overall row of this run
            let row = c
                .stdout
                .lines()
                .filter(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    w.len() > 3 && w[0] == f && w[1] == cc && w[2] == "all"
                })
                .count();
            assert_eq!(row, 1, "{f} under {cc}: table\n{}", c.stdout);
        }
    }
    // the fat tree's WebSearch flows fill every size bucket
    let buckets = run_of(c, "fat-tree-websearch", "dcqcn")["by_size"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(buckets, 4);
}

#[test]
fn the_ccs_slow_the_incast_senders_and_pfc_fires_less_than_without_one() {
    let c = compared();
    let none = run_of(c, "incast-cc", "none");
    let line = 100_000_000_000u64;
    assert_eq!(u(&none["rate_decreases_total"]), 0);
    assert_eq!(u(&none["min_qp_rate_bps"]), line);
    assert!(
        u(&none["pfc_xoff_sent_frames"]) > 0,
        "16 × line rate into one port pauses without CC"
    );
    for cc in &CCS[1..] {
        let r = run_of(c, "incast-cc", cc);
        assert!(u(&r["rate_decreases_total"]) > 0, "{cc} cut no rate");
        assert!(
            u(&r["min_qp_rate_bps"]) < line / 10,
            "{cc}: rate stayed near line"
        );
    }
    // DCQCN, HPCC and HPCC-PINT keep the queue under PFC's threshold (DCTCP's step marking at
    // 300 KB and TIMELY's 50 µs do not always: their pause time is still below PFC alone's)
    for cc in ["dcqcn", "hpcc", "hpcc-pint"] {
        assert!(
            u(&run_of(c, "incast-cc", cc)["pfc_xoff_sent_frames"]) < u(&none["pfc_xoff_sent_frames"]),
            "{cc}"
        );
    }
    for cc in &CCS[1..] {
        assert!(
            u(&run_of(c, "incast-cc", cc)["paused_ps"]) < u(&none["paused_ps"]),
            "{cc} paused as long as PFC alone"
        );
    }
    // in the fat tree at 30 % load, every CC keeps PFC from firing where PFC alone pauses
    assert!(u(&run_of(c, "fat-tree-websearch", "none")["paused_ps"]) > 0);
    for cc in &CCS[1..] {
        assert_eq!(u(&run_of(c, "fat-tree-websearch", cc)["paused_ps"]), 0, "{cc}");
    }
}

#[test]
fn each_cc_gives_its_own_slowdowns_and_hpcc_the_shortest_small_flow_tail() {
    let c = compared();
    for f in FABRICS {
        let key = |cc: &str| -> String {
            let r = run_of(c, f, cc);
            format!("{} {}", r["slowdown"], r["by_size"])
        };
        for (i, a) in CCS.iter().enumerate() {
            for b in &CCS[i + 1..] {
                assert_ne!(key(a), key(b), "{f}: {a} and {b} gave the same slowdowns");
            }
        }
    }
    // the HPCC paper's finding: short flows wait behind the shortest queues under HPCC
    let small_p99 = |cc: &str| {
        run_of(c, "fat-tree-websearch", cc)["by_size"][0]["p99_ratio"]
            .as_f64()
            .unwrap()
    };
    for cc in ["none", "dcqcn", "timely", "dctcp"] {
        assert!(
            small_p99("hpcc") < small_p99(cc),
            "hpcc {} vs {cc} {}",
            small_p99("hpcc"),
            small_p99(cc)
        );
    }
}

#[test]
fn the_page_plots_slowdown_by_size_with_one_line_per_cc_for_each_fabric() {
    let c = compared();
    for (k, f) in FABRICS.iter().enumerate() {
        for q in ["p50", "p99"] {
            let id = format!("<section id=\"cc-fabric{}-{q}\">", k + 1);
            let at = c.page.find(&id).unwrap_or_else(|| panic!("no {id}"));
            let section = &c.page[at..];
            let section = &section[..section.find("</section>").unwrap()];
            assert!(section.contains(f), "{id} names its fabric");
            assert!(section.contains("(6 lines)"), "{id}: {section}");
            for cc in CCS {
                // the legend names each line once
                assert_eq!(
                    section.matches(&format!(">\n{cc}\n</text>")).count(),
                    1,
                    "{id}: {cc}"
                );
            }
        }
    }
    assert!(c.page.contains("<section id=\"cc-runs\">"));
}

#[test]
fn set_reaches_the_fabrics_that_have_the_value_and_a_wrong_one_is_refused() {
    for (set, says) in [
        ("qp.cc=hpcc", "runs every congestion control itself"),
        ("sendrs=4", "names a value of neither fabric"),
        ("senders=0", "incast-cc under none"),
    ] {
        let o = run(&["sim", "cc-compare", "--set", set]);
        assert_eq!(o.status.code(), Some(2), "{set}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{set}: {}", stderr(&o));
    }
    let o = run(&["sim", "--show", "cc-compare"]);
    assert!(o.status.success());
    let shown = String::from_utf8_lossy(&o.stdout);
    let commands: Vec<&str> = shown.lines().filter(|l| l.starts_with("lossless sim ")).collect();
    assert_eq!(commands.len(), 12, "{shown}");
    assert!(shown.contains("--set 'qp.hpcc_pint.bdp=156000'"), "{shown}");
    let o = run(&["sim", "--list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("cc-compare"));
}

#[test]
fn jobs_is_taken_by_cc_compare_and_refused_by_a_single_run() {
    let o = run(&["sim", "incast", "--duration", "20us", "--jobs", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--jobs is for --sweep and cc-compare"),
        "{}",
        stderr(&o)
    );
    let o = run(&["sim", "cc-compare", "--jobs", "1", "--duration", "50us", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
