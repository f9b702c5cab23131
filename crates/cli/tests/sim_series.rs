//! `lossless sim --series DIR`: queues.csv, pause.csv and flows.csv with the columns
//! docs/series.md documents, at the bin width `--series-bin` sets (with its floor), whose
//! figures add up to the run's JSON.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use lossless_testkit::temp_dir;

fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("the lossless binary runs")
}

/// The header and the rows of a CSV file (no field of these runs is quoted).
fn csv(path: &Path) -> (String, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let head = lines.next().expect("a header").to_string();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (head, rows)
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("{s:?} is a number"))
}

#[test]
fn series_files_have_the_documented_columns_and_add_up_to_the_json() {
    let dir = temp_dir("sim-series");
    let ser = dir.join("ser");
    let json = dir.join("r.json");
    let o = lossless(&[
        "sim",
        "incast",
        "--set",
        "senders=8",
        "--duration",
        "100us",
        "-q",
        "--series",
        ser.to_str().unwrap(),
        "--series-bin",
        "10us",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let bin = 10_000_000u128;
    let end = r["duration_ps"].as_u64().unwrap() as u128;
    let check_bins = |rows: &[Vec<String>]| {
        for row in rows {
            let (t, w) = (num(&row[0]) as u128, num(&row[1]) as u128);
            assert_eq!(t % bin, 0, "bins start on multiples of the width: {row:?}");
            assert_eq!(
                w,
                bin.min(end - t),
                "the width, the last bin ending at the run's end: {row:?}"
            );
        }
    };

    // flows: each flow's delivered bytes add up to the JSON's, no rate above the line rate
    let (head, rows) = csv(&ser.join("flows.csv"));
    assert_eq!(
        head,
        "time_ps,bin_ps,flow_id,flow,src,dst,priority,delivered_bytes,rate_bps"
    );
    check_bins(&rows);
    let mut delivered: BTreeMap<String, f64> = BTreeMap::new();
    let mut last_t: BTreeMap<String, f64> = BTreeMap::new();
    for row in &rows {
        *delivered.entry(row[3].clone()).or_default() += num(&row[7]);
        assert!(
            num(&row[8]) <= 100e9 * 1.000_001,
            "at most the receiver's 100 Gb/s: {row:?}"
        );
        let t = num(&row[0]);
        let before = last_t.insert(row[3].clone(), t);
        assert!(
            before.is_none_or(|b| b + 10e6 == t),
            "a flow's rows are its consecutive bins: {row:?}"
        );
        assert_eq!(row[4], row[3].split(':').nth(1).unwrap_or(&row[4]), "{row:?}");
        assert_eq!((row[5].as_str(), row[6].as_str()), ("receiver", "3"), "{row:?}");
    }
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(delivered.len(), flows.len());
    for f in flows {
        let got = delivered[f["name"].as_str().unwrap()];
        let want = f["delivered_bytes"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 0.01 * 20.0,
            "{}: {got} of {want} bytes",
            f["name"]
        );
    }

    // pause: each port priority's paused time adds up to the JSON's paused_ps, exactly
    let (head, rows) = csv(&ser.join("pause.csv"));
    assert_eq!(head, "time_ps,bin_ps,node,port,peer,priority,paused_ps");
    check_bins(&rows);
    assert!(!rows.is_empty(), "8 senders into one receiver pause");
    let mut paused: BTreeMap<(String, String, String), u128> = BTreeMap::new();
    for row in &rows {
        assert!(
            num(&row[6]) as u128 <= num(&row[1]) as u128,
            "never more than the bin: {row:?}"
        );
        *paused
            .entry((row[2].clone(), row[3].clone(), row[5].clone()))
            .or_default() += num(&row[6]) as u128;
    }
    let mut want = BTreeMap::new();
    for p in r["ports"].as_array().unwrap() {
        for q in p["priorities"].as_array().unwrap() {
            let ps = q["paused_ps"].as_u64().unwrap() as u128;
            if ps > 0 {
                want.insert(
                    (
                        p["node"].as_str().unwrap().to_string(),
                        p["port"].to_string(),
                        q["priority"].to_string(),
                    ),
                    ps,
                );
            }
        }
    }
    assert_eq!(paused, want);

    // queues: the peak of each egress queue over the run is the JSON's largest queue
    let (head, rows) = csv(&ser.join("queues.csv"));
    assert_eq!(head, "time_ps,bin_ps,node,port,peer,priority,max_bytes,end_bytes");
    check_bins(&rows);
    let mut peak: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for row in &rows {
        let (max, end) = (num(&row[6]) as u64, num(&row[7]) as u64);
        assert!(
            max > 0 && end <= max,
            "a row is a bin in which the queue held bytes: {row:?}"
        );
        let e = peak
            .entry((row[2].clone(), row[3].clone(), row[5].clone()))
            .or_default();
        *e = (*e).max(max);
    }
    let tor_to_receiver = r["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["node"] == "tor" && p["peer"] == "receiver")
        .unwrap();
    let port = tor_to_receiver["port"].to_string();
    let got = peak[&("tor".to_string(), port, "3".to_string())];
    assert!(got > 10_000, "the congested egress queue builds up: {got}");
}

#[test]
fn a_series_bin_under_its_floor_or_too_fine_for_the_run_is_refused_before_anything_is_written() {
    let dir = temp_dir("sim-series-bin");
    let ser = dir.join("ser");
    for (bin, duration, says) in [
        ("100ns", "100us", "--series-bin 100 ns: allowed at least 1 µs"),
        ("1us", "2s", "would have 2000000 bins, allowed at most 1000000"),
    ] {
        let o = lossless(&[
            "sim",
            "incast",
            "--duration",
            duration,
            "--series",
            ser.to_str().unwrap(),
            "--series-bin",
            bin,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!ser.exists(), "nothing written");
    }
}

#[test]
fn a_link_under_8023x_pause_is_paused_for_all_priorities_in_pause_csv() {
    let dir = temp_dir("sim-series-pause");
    let ser = dir.join("ser");
    let json = dir.join("r.json");
    let o = lossless(&[
        "sim",
        "two-chip",
        "-q",
        "--series",
        ser.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // PAUSE pauses the link: its paused time is the JSON's priority 0 entry, "all" here
    let want: u128 = r["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["node"] == "module_b")
        .flat_map(|p| p["priorities"].as_array().unwrap())
        .map(|q| q["paused_ps"].as_u64().unwrap() as u128)
        .sum();
    assert!(want > 0);
    let (_, rows) = csv(&ser.join("pause.csv"));
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r[5] == "all" && r[2] == "module_b"),
        "{rows:?}"
    );
    let got: u128 = rows.iter().map(|r| num(&r[6]) as u128).sum();
    assert_eq!(got, want);
}
