//! `lossless sim --ns3` against the HPCC ns-3 reference runs of the shared corpus
//! (`hpcc-ns3/`), through the binary as a user runs it: the fct.txt it writes has the
//! reference's lines (flow, ports, size, start, standalone FCT) in the fork's field layout and
//! completion order, with FCT slowdown p50/p95/p99 within 10 % of the reference's; pfc.txt
//! lines have the fork's five fields (and, like the reference, there are none); qlen.txt has
//! the reference's blocks and switch ports with every sample counted once. Skips loudly without
//! the corpus.

#[path = "cli_support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use lossless_sim::ns3::{FctLine, parse_fct};
use lossless_testkit::{corpus_dir, skip_missing_corpus, temp_dir};
use support::*;

fn corpus(run: &str, test: &str) -> Option<PathBuf> {
    let d = corpus_dir().join("hpcc-ns3").join(run);
    if d.join("config.txt").is_file() {
        Some(d)
    } else {
        skip_missing_corpus(test, &d);
        None
    }
}

/// Runs `lossless sim --ns3 DIR/CONFIG` with the run's topology and flows, outputs in `out`,
/// and `extra` arguments.
fn run_ns3(dir: &Path, config: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<std::ffi::OsString> = vec![
        "sim".into(),
        "--ns3".into(),
        dir.join(config).into(),
        "--ns3-topology".into(),
        dir.join("topology.txt").into(),
        "--ns3-flows".into(),
        dir.join("flow.txt").into(),
        "--ns3-out".into(),
        out.into(),
        "--json".into(),
        out.join("report.json").into(),
    ];
    args.extend(extra.iter().map(Into::into));
    let child = Command::new(bin())
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lossless binary runs");
    let o = wait_bounded(child, Duration::from_secs(600), "lossless sim --ns3");
    assert!(
        o.status.success(),
        "lossless sim --ns3 {config}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The nearest-rank quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

fn slowdowns(lines: &[FctLine]) -> Vec<f64> {
    let mut v: Vec<f64> = lines
        .iter()
        .map(|l| l.fct_ns as f64 / l.standalone_ns as f64)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Checks our fct.txt against the reference's and returns nothing; panics naming the line.
fn fct_matches_reference(name: &str, dir: &Path, out: &Path) {
    let ours_text = std::fs::read_to_string(out.join("fct.txt")).unwrap();
    let theirs_text = std::fs::read_to_string(dir.join("fct.txt")).unwrap();
    // the fork's layout: `%08x %08x %u %u %lu %lu %lu %lu`
    for (i, l) in ours_text.lines().enumerate() {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f.len(), 8, "{name} fct.txt line {}: {l:?}", i + 1);
        for hex in &f[..2] {
            assert!(
                hex.len() == 8
                    && hex
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{name} fct.txt line {}: {hex:?} is not 8 lowercase hex digits",
                i + 1
            );
        }
        for n in &f[2..] {
            assert!(
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
                "{name} fct.txt line {}: {n:?}",
                i + 1
            );
        }
    }
    let ours = parse_fct(&ours_text, "ours").unwrap();
    let theirs = parse_fct(&theirs_text, "reference").unwrap();
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{name}: every flow finished, as in the reference"
    );
    // in order of completion
    for w in ours.windows(2) {
        assert!(
            w[0].start_ns + w[0].fct_ns <= w[1].start_ns + w[1].fct_ns,
            "{name}: fct.txt is not in completion order at {w:?}"
        );
    }
    let by_flow: HashMap<(u32, u32, u16), &FctLine> =
        theirs.iter().map(|l| ((l.src, l.dst, l.sport), l)).collect();
    for l in &ours {
        let t = by_flow
            .get(&(l.src, l.dst, l.sport))
            .unwrap_or_else(|| panic!("{name}: no reference line for {l:?}"));
        assert_eq!(
            (l.dport, l.size, l.start_ns, l.standalone_ns),
            (t.dport, t.size, t.start_ns, t.standalone_ns),
            "{name}: flow {}→{} sport {}: dport, size, start and standalone FCT are the reference's",
            l.src,
            l.dst,
            l.sport
        );
    }
    let (o, t) = (slowdowns(&ours), slowdowns(&theirs));
    for q in [0.5, 0.95, 0.99] {
        let (a, b) = (quantile(&o, q), quantile(&t, q));
        println!("{name}: slowdown p{} ours {a:.3} reference {b:.3}", q * 100.0);
        assert!(
            (a / b - 1.0).abs() <= 0.10,
            "{name}: slowdown p{} from our fct.txt is {a:.3}, the reference's {b:.3}",
            q * 100.0
        );
    }
}

/// Every pfc.txt line has the fork's five fields; returns how many lines.
fn pfc_lines(name: &str, path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    for (i, l) in text.lines().enumerate() {
        let f: Vec<u64> = l
            .split(' ')
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("{name} pfc.txt line {}: {l:?}", i + 1))
            })
            .collect();
        assert_eq!(
            f.len(),
            5,
            "{name} pfc.txt line {}: time node type if_index type",
            i + 1
        );
        assert!(
            f[2] <= 1 && f[4] <= 1 && f[3] >= 1,
            "{name} pfc.txt line {}: {l:?}",
            i + 1
        );
    }
    text.lines().count()
}

#[test]
fn incast_8_through_the_front_door_writes_the_references_files() {
    let test = "incast_8_through_the_front_door_writes_the_references_files";
    let Some(dir) = corpus("incast-8", test) else {
        return;
    };
    let out = temp_dir("ns3-incast");
    let o = run_ns3(&dir, "config.txt", &out, &[]);
    fct_matches_reference("incast-8", &dir, &out);
    // the reference sent no PFC frame; neither does this run
    assert_eq!(pfc_lines("incast-8", &out.join("pfc.txt")), 0);
    assert_eq!(std::fs::read_to_string(dir.join("pfc.txt")).unwrap(), "");
    // the queue monitor starts after the stop time: an empty qlen.txt, as the fork's
    assert_eq!(std::fs::read(out.join("qlen.txt")).unwrap(), b"");
    // keys it ignores are said one per line with the reason, and the JSON report is written
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.ends_with(":8: TRACE_FILE ignored: packet traces are not written (use --pcap)")),
        "{err}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["flows"].as_array().map(Vec::len), Some(8));
}

#[test]
fn incast_8_queue_monitor_has_the_references_blocks() {
    let test = "incast_8_queue_monitor_has_the_references_blocks";
    let Some(dir) = corpus("incast-8", test) else {
        return;
    };
    let out = temp_dir("ns3-qlen");
    run_ns3(&dir, "config_qlen.txt", &out, &[]);
    let ours = std::fs::read_to_string(out.join("qlen.txt")).unwrap();
    let theirs = std::fs::read_to_string(dir.join("qlen.txt")).unwrap();
    // same blocks, same switch ports in the same order
    let heads = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(heads(&ours), heads(&theirs));
    // every sample of every port counted once: 1 at time 0, 1,000,001 at 100 ms
    let mut samples = 0;
    for l in ours.lines() {
        if let Some(t) = l.strip_prefix("time: ") {
            samples = if t == "0" { 1 } else { 1_000_001 };
            continue;
        }
        let counts: u64 = l.split(' ').skip(2).map(|c| c.parse::<u64>().unwrap()).sum();
        assert_eq!(counts, samples, "qlen.txt line {l:?}");
    }
    // the congested port (9, to host 8) queues: its distribution reaches past 100 KB as the
    // reference's does; the others never hold 1000 bytes
    let last = |t: &str, port: &str| -> usize {
        t.lines()
            .rev()
            .find(|l| l.starts_with(&format!("9 {port} ")))
            .map_or(0, |l| l.split(' ').count() - 2)
    };
    assert!(last(&ours, "9") > 100 && last(&theirs, "9") > 100);
    assert_eq!((last(&ours, "1"), last(&theirs, "1")), (1, 1));
}

#[test]
fn fat_tree_websearch_through_the_front_door_is_within_10_percent() {
    let test = "fat_tree_websearch_through_the_front_door_is_within_10_percent";
    let Some(dir) = corpus("ft-k4-websearch", test) else {
        return;
    };
    let out = temp_dir("ns3-ftk4");
    let o = run_ns3(&dir, "config.txt", &out, &["--top", "3"]);
    fct_matches_reference("ft-k4-websearch", &dir, &out);
    assert_eq!(pfc_lines("ft-k4-websearch", &out.join("pfc.txt")), 0);
    // its 321 flows and QPs are too many to list: --top 3 cuts the summary's tables
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("top 3 flows by FCT slowdown (of 321 flows")
            && stdout.contains("top 3 of 321 QPs by rate cuts"),
        "{stdout}"
    );
}

#[test]
fn a_missing_topology_names_the_key_its_line_and_the_option() {
    let test = "a_missing_topology_names_the_key_its_line_and_the_option";
    let Some(dir) = corpus("incast-8", test) else {
        return;
    };
    let cwd = temp_dir("ns3-missing");
    let config = dir.join("config.txt");
    let o = run_in(&cwd, &["sim", "--ns3", config.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("config.txt:6: TOPOLOGY_FILE:")
            && err.contains("mix/topo_incast9.txt")
            && err.contains("--ns3-topology"),
        "{err}"
    );
    // nothing was written
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
}

#[test]
fn an_ns3_run_writes_the_html_report_over_its_busy_span_pcap_and_vcd_as_a_scenario_does() {
    let test = "an_ns3_run_writes_the_html_report_over_its_busy_span_pcap_and_vcd_as_a_scenario_does";
    let Some(dir) = corpus("incast-8", test) else {
        return;
    };
    let out = temp_dir("ns3-extras");
    let (rpt, pcap, vcd) = (out.join("rpt"), out.join("pcap"), out.join("run.vcd"));
    // the reference's flows moved to 2 s, where the fork's experiments start theirs
    let flows: String = std::fs::read_to_string(dir.join("flow.txt"))
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut f: Vec<&str> = l.split_whitespace().collect();
            if i > 0 {
                f[5] = "2.000000000";
            }
            f.join(" ") + "\n"
        })
        .collect();
    let flow_file = out.join("flow-at-2s.txt");
    std::fs::write(&flow_file, flows).unwrap();
    let child = Command::new(bin())
        .arg("sim")
        .arg("--ns3")
        .arg(dir.join("config.txt"))
        .arg("--ns3-topology")
        .arg(dir.join("topology.txt"))
        .arg("--ns3-flows")
        .arg(&flow_file)
        .arg("--ns3-out")
        .arg(&*out)
        .arg("--report")
        .arg(&rpt)
        .arg("--pcap")
        .arg(&pcap)
        .arg("--vcd")
        .arg(&vcd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lossless binary runs");
    let o = wait_bounded(child, Duration::from_secs(600), "lossless sim --ns3 --report");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{}\n{stderr}", o.status);
    // the fork's files as without the extra outputs: every flow in fct.txt, started at 2 s
    let fct = std::fs::read_to_string(out.join("fct.txt")).unwrap();
    let lines = parse_fct(&fct, "fct.txt").unwrap();
    assert_eq!(lines.len(), 8, "{fct}");
    assert!(lines.iter().all(|l| l.start_ns == 2_000_000_000), "{fct}");
    // the report's time axis starts where the flows start (2 s), not at zero, in the unit of
    // its busy span (a few ms), the same on every plot
    let html = std::fs::read_to_string(rpt.join("index.html")).expect("the report is written");
    assert!(html.contains("time (ms) since 2 s"), "axis from the first flow");
    assert!(!html.contains("time (µs)"), "one unit on the page");
    assert!(html.contains("<section id=\"fct-size\""), "FCT slowdown by size");
    // one pcapng per link direction, and the waveform
    let files = std::fs::read_dir(&pcap).unwrap().count();
    assert!(files > 0, "pcapng files in {}", pcap.display());
    let v = std::fs::read_to_string(&vcd).expect("the VCD is written");
    assert!(v.contains("$enddefinitions"), "a VCD header");
    assert!(stdout.contains("FCT pri"), "the summary's FCT table: {stdout}");
    for w in [rpt.join("index.html"), vcd.clone()] {
        assert!(stdout.contains(&format!("wrote {}", w.display())), "{stdout}");
    }
}

#[test]
fn a_missing_output_directory_is_named_with_the_config_line_and_the_ways_on() {
    let test = "a_missing_output_directory_is_named_with_the_config_line_and_the_ways_on";
    let Some(dir) = corpus("incast-8", test) else {
        return;
    };
    let cwd = temp_dir("ns3-no-out");
    let (config, topo, flows) = (
        dir.join("config.txt"),
        dir.join("topology.txt"),
        dir.join("flow.txt"),
    );
    // the fork's command line, run in `cwd`, with `extra` arguments
    let ns3 = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "--ns3",
            config.to_str().unwrap(),
            "--ns3-topology",
            topo.to_str().unwrap(),
            "--ns3-flows",
            flows.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run_in(&cwd, &args)
    };
    let o = ns3(&[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "config.txt:10: FCT_OUTPUT_FILE out/incast-8/fct.txt: the directory out/incast-8 does not exist"
        ) && err.contains("mkdir -p out/incast-8")
            && err.contains("--ns3-out DIR"),
        "{err}"
    );
    // nothing was written, and the run did not start
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
    // made, the directory takes the fork's outputs
    std::fs::create_dir_all(cwd.path().join("out/incast-8")).unwrap();
    let o = ns3(&["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["fct.txt", "pfc.txt", "qlen.txt"] {
        assert!(cwd.path().join("out/incast-8").join(f).is_file(), "{f}");
    }
}
