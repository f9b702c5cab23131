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
