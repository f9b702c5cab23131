//! The outputs of one run go in place together or not at all: when one output fails after
//! the run (`--json /dev/full`), every other output of that run (`--vcd`, `--report`,
//! `--pcap`, `--series`, and fct.txt, pfc.txt, qlen.txt under `--ns3`) keeps its old file and no
//! temporary file is left. And names are data: a scenario whose node names would lead a
//! capture out of its directory is refused before anything is written.

#[path = "cli_support/mod.rs"]
mod support;

use std::fs;
use std::path::Path;

use lossless_testkit::temp_dir;
use support::*;

/// Every entry under `dir` with its text (files) or `/` (directories), hidden ones too.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                out.push((rel, "/".into()));
                stack.push(p);
            } else {
                out.push((rel, String::from_utf8_lossy(&fs::read(&p).unwrap()).into_owned()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_json_that_cannot_be_written_leaves_the_waveform_report_and_captures_as_they_were() {
    let d = temp_dir("all-or-none-sim");
    fs::create_dir(d.join("rpt")).unwrap();
    fs::create_dir(d.join("caps")).unwrap();
    fs::create_dir(d.join("ser")).unwrap();
    fs::write(d.join("ser/queues.csv"), "old series").unwrap();
    fs::write(d.join("w.vcd"), "old waveform").unwrap();
    fs::write(d.join("rpt/index.html"), "old report").unwrap();
    fs::write(d.join("caps/bridge4.0-to-bridge1.pcapng"), "old capture").unwrap();
    let before = snapshot(&d);
    // every output of a run, its JSON to `json`
    let run_all = |json: &str| {
        run_in(
            &d,
            &[
                "sim",
                "four-bridge",
                "--duration",
                "50us",
                "-q",
                "--vcd",
                "w.vcd",
                "--report",
                "rpt",
                "--pcap",
                "caps",
                "--series",
                "ser",
                "--json",
                json,
            ],
        )
    };
    let o = run_all("/dev/full");
    let err = stderr(&o);
    assert_no_panic(o.status, &err, "--json /dev/full");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/full: No space left on device"), "{err}");
    assert_eq!(
        snapshot(&d),
        before,
        "every old file as it was, nothing added: {err}"
    );
    // and with a JSON that can be written, every output is in place
    let o = run_all("r.json");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        fs::read_to_string(d.join("w.vcd"))
            .unwrap()
            .starts_with("$comment")
    );
    assert!(
        fs::read_to_string(d.join("rpt/index.html"))
            .unwrap()
            .contains("<html")
    );
    assert!(
        fs::read(d.join("caps/bridge4.0-to-bridge1.pcapng"))
            .unwrap()
            .len()
            > 100
    );
    assert!(d.join("r.json").is_file());
    assert!(
        fs::read_to_string(d.join("ser/queues.csv"))
            .unwrap()
            .starts_with("time_ps,")
    );
}

#[test]
fn an_ns3_run_whose_json_cannot_be_written_keeps_the_old_fct_pfc_and_qlen_files() {
    let d = temp_dir("all-or-none-ns3");
    let topology = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n";
    let flows = "1\n0 1 3 100 10000 0\n";
    let config = "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n\
                  PFC_OUTPUT_FILE pfc.txt\nQLEN_MON_FILE qlen.txt\nQLEN_MON_START 0\nQLEN_MON_END 20000\n\
                  SIMULATOR_STOP_TIME 0.00002\nKMAX_MAP 1 100000000000 1600\nKMIN_MAP 1 100000000000 400\n\
                  PMAX_MAP 1 100000000000 0.20\n";
    fs::write(d.join("topology.txt"), topology).unwrap();
    fs::write(d.join("flow.txt"), flows).unwrap();
    fs::write(d.join("config.txt"), config).unwrap();
    fs::create_dir(d.join("out")).unwrap();
    for f in ["fct.txt", "pfc.txt", "qlen.txt"] {
        fs::write(d.join("out").join(f), format!("old {f}")).unwrap();
    }
    fs::write(d.join("w.vcd"), "old waveform").unwrap();
    let before = snapshot(&d);
    let args = |json: &'static str| {
        [
            "sim",
            "--ns3",
            "config.txt",
            "--ns3-out",
            "out",
            "--vcd",
            "w.vcd",
            "-q",
            "--json",
            json,
        ]
    };
    let o = run_in(&d, &args("/dev/full"));
    let err = stderr(&o);
    assert_no_panic(o.status, &err, "--ns3 --json /dev/full");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/full: No space left on device"), "{err}");
    assert_eq!(
        snapshot(&d),
        before,
        "every old file as it was, nothing added: {err}"
    );
    let o = run_in(&d, &args("r.json"));
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["fct.txt", "qlen.txt"] {
        let text = fs::read_to_string(d.join("out").join(f)).unwrap();
        assert!(!text.starts_with("old"), "{f}: {text}");
    }
}

#[test]
fn a_node_name_that_would_lead_a_capture_out_of_its_directory_is_refused_before_anything_is_written() {
    let d = temp_dir("names-cli");
    let scenario = "name = \"n\"\nduration = \"5us\"\n[defaults]\nrate = \"100G\"\n\
                    [[host]]\nname = \"../../escaped\"\n[[host]]\nname = \"b\"\n\
                    [[switch]]\nname = \"s\"\nbuffer_bytes = 1000000\n\
                    [[link]]\na = \"../../escaped\"\nb = \"s\"\n[[link]]\na = \"b\"\nb = \"s\"\n";
    fs::create_dir(d.join("work")).unwrap();
    fs::write(d.join("work/n.toml"), scenario).unwrap();
    let before = snapshot(&d);
    let o = run_in(
        &d.join("work"),
        &["sim", "n.toml", "--pcap", "caps", "--vcd", "w.vcd"],
    );
    let err = stderr(&o);
    assert_no_panic(o.status, &err, "a hostile node name");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("n.toml:6: key `name`: found \"../../escaped\"")
            && err.contains("ASCII letters, digits, `_` and `-`"),
        "{err}"
    );
    assert_eq!(snapshot(&d), before, "nothing created anywhere");
}
