//! `lossless sim --sweep`: one JSON line per point, identical to a single run of that point
//! whatever the thread count, shards that partition the sweep, clear errors for bad input.

use std::path::Path;
use std::process::{Command, Output};

use lossless_testkit::temp_dir;

fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("the lossless binary runs")
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("the sweep wrote its file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect()
}

#[test]
fn each_point_of_a_sweep_equals_a_single_run_of_it_on_any_number_of_threads() {
    let dir = temp_dir("sweep-points");
    let sweep = dir.join("sweep.jsonl");
    let s = sweep.to_str().unwrap();
    let o = lossless(&[
        "sim",
        "incast",
        "--duration",
        "300us",
        "--sweep",
        "senders=2,3,5",
        "--sweep",
        "seed=1,7",
        "--jobs",
        "3",
        "--json",
        s,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = lines(&sweep);
    assert_eq!(got.len(), 6);
    for (k, line) in got.iter().enumerate() {
        assert_eq!(line["point"], k, "lines come in point order");
        // numbers stay numbers
        let senders = line["params"]["senders"].as_u64().unwrap().to_string();
        let seed = line["params"]["seed"].as_u64().unwrap().to_string();
        let seed = seed.as_str();
        assert_eq!(
            (senders.as_str(), seed),
            (["2", "3", "5"][k / 2], ["1", "7"][k % 2])
        );
        let one = dir.join(format!("one{k}.json"));
        let o = lossless(&[
            "sim",
            "incast",
            "--duration",
            "300us",
            "--set",
            &format!("senders={senders}"),
            "--seed",
            seed,
            "-q",
            "--json",
            one.to_str().unwrap(),
        ]);
        assert!(o.status.success());
        let single: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
        assert_eq!(line["report"], single, "point {k} differs from its single run");
    }
    // the table names every point and the conservation held
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("senders=5 seed=7") && table.contains("6 points"),
        "{table}"
    );
}

#[test]
fn shards_partition_the_sweep_and_keep_point_numbers() {
    let dir = temp_dir("sweep-shards");
    let mut seen = Vec::new();
    for i in 1..=3 {
        let f = dir.join(format!("s{i}.jsonl"));
        let o = lossless(&[
            "sim",
            "incast",
            "--duration",
            "100us",
            "--sweep",
            "senders=2..=8",
            "--shard",
            &format!("{i}/3"),
            "--jobs",
            "1",
            "-q",
            "--json",
            f.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for l in lines(&f) {
            let k = l["point"].as_u64().unwrap();
            assert_eq!(k % 3, i - 1, "shard {i}/3 ran point {k}");
            assert_eq!(l["params"]["senders"], k + 2, "a number, not a string");
            seen.push(k);
        }
    }
    seen.sort();
    assert_eq!(seen, (0..7).collect::<Vec<u64>>(), "every point exactly once");
}

#[test]
fn a_bad_sweep_value_names_the_point_and_the_key_and_nothing_runs() {
    let dir = temp_dir("sweep-bad");
    let f = dir.join("bad.jsonl");
    let o = lossless(&[
        "sim",
        "incast",
        "--sweep",
        "senders=2,many",
        "--json",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("point 1 (senders=many)") && err.contains("senders"),
        "{err}"
    );
    assert!(!f.exists(), "nothing is written when a point cannot load");
    let o = lossless(&["sim", "incast", "--sweep", "senders=9..=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("empty"));
    let o = lossless(&["sim", "incast", "--sweep", "senders=2,4", "--pcap", "x"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("single run"));
}

/// The cells of the sweep table's row whose first cell is `first` (the point number).
fn table_row(page: &str, first: &str) -> Vec<String> {
    let table = &page[page.find("<section id=\"sweep-points\">").expect("the table")..];
    let row = table
        .split("<tr>")
        .find(|r| r.starts_with(&format!("<th>{first}</th>")))
        .unwrap_or_else(|| panic!("row {first}"));
    let row = &row[..row.find("</tr>").unwrap_or(row.len())];
    row.split("</th>")
        .flat_map(|c| c.split("</td>"))
        .filter_map(|c| c.rsplit_once('>').map(|(_, v)| v.to_string()))
        .collect()
}

#[test]
fn a_sweep_report_draws_each_metric_against_the_swept_parameter_with_a_table_of_the_points() {
    let dir = temp_dir("sweep-report");
    let sweep = dir.join("sweep.jsonl");
    let rpt = dir.join("rpt");
    let o = lossless(&[
        "sim",
        "incast",
        "--duration",
        "50us",
        "--sweep",
        "senders=2,4,8",
        "--sweep",
        r#"defaults.flow_control="pfc","off""#,
        "--json",
        sweep.to_str().unwrap(),
        "--report",
        rpt.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(rpt.join("index.html")).expect("the sweep's page");
    for id in [
        "sweep-lossless-drops",
        "sweep-lossy-drops",
        "sweep-xoff",
        "sweep-max-paused",
        "sweep-goodput",
    ] {
        let at = page
            .find(&format!("<section id=\"{id}\">"))
            .unwrap_or_else(|| panic!("section {id}"));
        let section = &page[at..at + page[at..].find("</section>").unwrap()];
        assert!(section.contains("against senders</h2>"), "{id}: x is senders");
        assert!(section.contains("<svg"), "{id}: a plot");
        // one line per value of the other axis, named in the legend
        assert!(section.contains("(2 lines)"), "{id}");
        assert!(section.contains("defaults.flow_control=&quot;off&quot;"), "{id}");
    }
    // every point in the table, with the figures its JSON line has
    for line in lines(&sweep) {
        let k = line["point"].as_u64().unwrap().to_string();
        let row = table_row(&page, &k);
        let r = &line["report"];
        let senders = line["params"]["senders"].as_u64().unwrap().to_string();
        // the axes' values as given, in the axes' order
        assert_eq!(row[1], senders);
        let fc = line["params"]["defaults.flow_control"].as_str().unwrap();
        assert_eq!(row[2], format!("&#34;{fc}&#34;"));
        let (mut drops, mut xoff) = (0u64, 0u64);
        for p in r["ports"].as_array().unwrap() {
            xoff += p["pause_xoff_sent_frames"].as_u64().unwrap();
            for q in p["priorities"].as_array().unwrap() {
                xoff += q["pfc_xoff_sent_frames"].as_u64().unwrap();
                drops += q["drops_frames"]
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|v| v.as_u64().unwrap())
                    .sum::<u64>();
            }
        }
        let lossless_drops = r["lossless"]["dropped_frames"].as_u64().unwrap();
        assert_eq!(row[3], lossless_drops.to_string(), "point {k}: {row:?}");
        assert_eq!(row[4], (drops - lossless_drops).to_string(), "point {k}: {row:?}");
        assert_eq!(row[5], xoff.to_string(), "point {k}: {row:?}");
        if line["params"]["defaults.flow_control"] == "off" && senders == "8" {
            assert!(drops > 0, "without PFC, 8 senders overflow the buffer");
        }
        if line["params"]["defaults.flow_control"] == "pfc" && senders == "8" {
            assert!(xoff > 0, "with PFC, 8 senders pause");
        }
    }
}

#[test]
fn a_sweep_report_of_more_points_than_a_page_holds_is_refused_before_anything_runs() {
    let dir = temp_dir("sweep-report-too-many");
    let rpt = dir.join("rpt");
    let o = lossless(&[
        "sim",
        "incast",
        "--sweep",
        "seed=1..=10001",
        "--report",
        rpt.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--report: this sweep has 10001 points, allowed at most 10000"),
        "{err}"
    );
    assert!(!rpt.exists(), "nothing written");
}
