//! `mpirun -n R lossless sim --mpi`: the JSON report of rank 0 is the one-thread run's byte for
//! byte, and so are its trace outputs (pcapng, VCD, HTML report, CSV series), the other ranks
//! write nothing, and what fails is said on every rank without a hang. Needs a build with `--features mpi` and `mpirun`
//! (scripts/install-peers.sh installs OpenMPI; scripts/test.sh runs these with the feature).

#[path = "cli_support/mod.rs"]
mod support;

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_mpi_feature_mpi_is_refused_saying_how_to_build_it() {
    let o = support::run(&["sim", "incast", "--mpi", "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--features mpi") && err.contains("install-peers"),
        "{err}"
    );
    // scripts/test.sh runs this file again with the feature (it sets the variable for the
    // run without): elsewhere the runs over mpirun below are a loud skip
    if std::env::var("LOSSLESS_MPI_STEP").is_ok_and(|v| v == "later") {
        return;
    }
    lossless_testkit::skip(
        "sim_mpi (mpirun -n 2 and -n 4 against one thread)",
        "this build has no `mpi` feature (cargo test -p lossless-cli --features mpi --test sim_mpi)",
    );
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};
    use std::time::Duration;

    use lossless_testkit::temp_dir;

    use super::support::{bin, files_under, run_in, wait_bounded};

    /// `mpirun ARGS lossless ...` in `dir`, at most two minutes, allowed as root, waits yielding.
    fn mpirun(mpirun: &Path, dir: &Path, mpi_args: &[&str], args: &[&str]) -> Output {
        let child = Command::new(mpirun)
            .args(mpi_args)
            .arg(bin())
            .args(args)
            .current_dir(dir)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            // ranks that wait yield the core: the tests' ranks share two cores with each
            // other and with the build (a spinning wait made a 2-rank run miss its two minutes)
            .env("OMPI_MCA_mpi_yield_when_idle", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mpirun starts");
        wait_bounded(child, Duration::from_secs(120), "the mpirun run")
    }

    fn text(o: &Output) -> String {
        format!(
            "status {:?}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }

    fn require_mpirun(test: &str) -> Option<PathBuf> {
        lossless_testkit::require("mpirun", test)
    }

    /// The k = 4 fat tree under WebSearch at 50 % for 150 µs, written into `dir`.
    fn fat_tree(dir: &Path) -> String {
        let cdf = lossless_testkit::corpus_dir().join("workloads/WebSearch_distribution.txt");
        std::fs::copy(&cdf, dir.join("WebSearch_distribution.txt")).expect("the shared corpus");
        let toml = "name = \"ft4\"\nseed = 7\nduration = \"150us\"\n[defaults]\nrate = \"100G\"\nflow_control = \"pfc\"\npfc_priorities = [3]\n\
                    [fabric]\nkind = \"fat-tree\"\nk = 4\nhost_rate = \"100G\"\ndelay = \"1us\"\n[fabric.switch]\nbuffer_bytes = 1000000\nalpha = 0.125\n\
                    [[workload]]\nname = \"websearch\"\nsrc = [\"h*\"]\ndst = [\"h*\"]\npriority = 3\ncdf_file = \"WebSearch_distribution.txt\"\nload = 0.5\n";
        std::fs::write(dir.join("ft4.toml"), toml).unwrap();
        "ft4.toml".into()
    }

    /// The JSON of `scenario` (with `extra` arguments) on one thread, then under mpirun with
    /// each of `shapes` (mpirun's arguments, --threads): the same bytes, and only rank 0's file.
    fn same_json(test: &str, scenario_of: impl Fn(&Path) -> String, extra: &[&str]) {
        same_json_and_exit(test, scenario_of, extra, 0);
    }

    /// [`same_json`] where the run ends with exit status `code` (3: the report has findings),
    /// on one thread and under mpirun alike.
    fn same_json_and_exit(test: &str, scenario_of: impl Fn(&Path) -> String, extra: &[&str], code: i32) {
        let Some(mpi) = require_mpirun(test) else {
            return;
        };
        let dir = temp_dir(test);
        let scenario = scenario_of(&dir);
        let mut args = vec!["sim".to_string(), scenario];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args_for = |out: &str, more: &[&str]| -> Vec<String> {
            let mut a = args.clone();
            a.extend(["--json", out].iter().map(|s| s.to_string()));
            a.extend(more.iter().map(|s| s.to_string()));
            a
        };
        let one = args_for("one.json", &["--threads", "1", "--quiet"]);
        let one: Vec<&str> = one.iter().map(String::as_str).collect();
        let o = run_in(&dir, &one);
        assert_eq!(o.status.code(), Some(code), "{}", text(&o));
        let expected = std::fs::read(dir.join("one.json")).unwrap();
        assert!(!expected.is_empty());
        for (mpi_args, threads) in [
            (&["-n", "2", "--oversubscribe"][..], "1"),
            (&["-n", "2", "--oversubscribe"][..], "2"),
            (&["-n", "4", "--oversubscribe"][..], "1"),
        ] {
            let out = format!("mpi-{}-{threads}.json", mpi_args[1]);
            let a = args_for(&out, &["--mpi", "--threads", threads]);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let o = mpirun(&mpi, &dir, mpi_args, &a);
            assert_eq!(
                o.status.code(),
                Some(code),
                "{mpi_args:?} --threads {threads}: {}",
                text(&o)
            );
            let got = std::fs::read(dir.join(&out)).unwrap();
            assert!(
                got == expected,
                "{mpi_args:?} --threads {threads}: the JSON differs from one thread's"
            );
            // one summary (rank 0's), and no file but the ones written so far
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert_eq!(stdout.matches("M events/s").count(), 1, "{}", text(&o));
        }
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".json"))
            .collect();
        files.sort();
        assert_eq!(
            files,
            ["mpi-2-1.json", "mpi-2-2.json", "mpi-4-1.json", "one.json"]
        );
    }

    #[test]
    fn a_pfc_firing_incast_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_byte_for_byte() {
        same_json("sim_mpi_incast", |_| "incast".into(), &["--set", "senders=16"]);
    }

    #[test]
    fn a_websearch_fat_tree_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_byte_for_byte() {
        same_json("sim_mpi_fat_tree", fat_tree, &[]);
    }

    #[test]
    fn two_chip_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_byte_for_byte() {
        same_json("sim_mpi_two_chip", |_| "two-chip".into(), &[]);
    }

    #[test]
    fn dcqcn_qps_under_mpirun_n_2_and_n_4_write_the_one_thread_json_byte_for_byte() {
        // (the QPs' ends run on other ranks than the receiver's: their figures travel)
        same_json("sim_mpi_dcqcn", |_| "incast-dcqcn".into(), &["--duration", "1ms"]);
    }

    #[test]
    fn storm_pfcwd_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_and_exit_status() {
        // a stalled receiver's storm, pfcwd on switches of different ranks, the detector's
        // scans gathered over ranks (exit status 3: pfcwd dropped lossless frames)
        same_json_and_exit("sim_mpi_storm_pfcwd", |_| "storm-pfcwd".into(), &[], 3);
    }

    #[test]
    fn deadlock_ring_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_and_exit_status() {
        // static routes close a loop across ranks; every rank stops at the detector's scan
        // (exit status 0: the report's verdict, not a lossless drop)
        same_json_and_exit("sim_mpi_deadlock_ring", |_| "deadlock-ring".into(), &[], 0);
    }

    /// `lossless sim --ns3` of the corpus run `name` with `extra` arguments, outputs into
    /// `out` (relative to `dir`): the arguments after `lossless`.
    fn ns3_args(name: &str, out: &str, extra: &[&str]) -> Vec<String> {
        let run = lossless_testkit::corpus_dir().join("hpcc-ns3").join(name);
        let file = |f: &str| run.join(f).to_string_lossy().into_owned();
        let mut a: Vec<String> = vec![
            "sim".into(),
            "--ns3".into(),
            file("config.txt"),
            "--ns3-topology".into(),
            file("topology.txt"),
            "--ns3-flows".into(),
            file("flow.txt"),
            "--ns3-out".into(),
            out.into(),
            "--json".into(),
            format!("{out}/report.json"),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    }

    /// The frames rank 0 sent to other ranks per window, from its line on stderr.
    fn to_other_ranks(o: &Output) -> f64 {
        let err = String::from_utf8_lossy(&o.stderr);
        err.lines()
            .find_map(|l| {
                let (_, rest) = l.split_once(" frames per window (")?;
                rest.split_once(" to other ranks")?.0.parse().ok()
            })
            .unwrap_or_else(|| panic!("no line of rank 0's exchange: {}", text(o)))
    }

    /// The corpus run `name` on one thread, then under mpirun -n 2 (1 and 2 threads) and
    /// -n 4: the same fct.txt, pfc.txt and JSON report, byte for byte, with frames between
    /// ranks; returns the one-thread pfc.txt.
    fn same_ns3(test: &str, name: &str) -> Option<String> {
        let mpi = require_mpirun(test)?;
        let dir = temp_dir(test);
        let files = ["fct.txt", "pfc.txt", "report.json"];
        std::fs::create_dir_all(dir.join("one")).unwrap();
        let a = ns3_args(name, "one", &["--threads", "1", "--quiet"]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = run_in(&dir, &a);
        assert!(o.status.success(), "{}", text(&o));
        let read = |out: &str, f: &str| std::fs::read(dir.join(out).join(f)).unwrap();
        assert!(!read("one", "fct.txt").is_empty());
        for (mpi_args, threads) in [
            (&["-n", "2", "--oversubscribe"][..], "1"),
            (&["-n", "2", "--oversubscribe"][..], "2"),
            (&["-n", "4", "--oversubscribe"][..], "1"),
        ] {
            let out = format!("mpi-{}-{threads}", mpi_args[1]);
            std::fs::create_dir_all(dir.join(&out)).unwrap();
            let a = ns3_args(name, &out, &["--mpi", "--threads", threads]);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let o = mpirun(&mpi, &dir, mpi_args, &a);
            assert!(
                o.status.success(),
                "{name} {mpi_args:?} --threads {threads}: {}",
                text(&o)
            );
            assert!(to_other_ranks(&o) > 0.0, "frames cross between ranks");
            for f in files {
                assert!(
                    read(&out, f) == read("one", f),
                    "{name} {mpi_args:?} --threads {threads}: {f} differs from one thread's"
                );
            }
            // the loading notes and the summary once, from rank 0
            let (stdout, stderr) = (
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr),
            );
            assert_eq!(stdout.matches("M events/s").count(), 1, "{}", text(&o));
            assert_eq!(stderr.matches("TOPOLOGY_FILE").count(), 1, "{}", text(&o));
        }
        Some(String::from_utf8(read("one", "pfc.txt")).unwrap())
    }

    #[test]
    fn an_ns3_dcqcn_incast_where_pfc_fires_under_mpirun_writes_the_one_thread_files_byte_for_byte() {
        if let Some(pfc) = same_ns3("sim_mpi_ns3_buf8", "incast-16-4MB-buf8") {
            assert!(pfc.lines().count() > 10, "PFC fires: {pfc}");
        }
    }

    #[test]
    fn an_ns3_hpcc_incast_whose_int_records_cross_ranks_writes_the_one_thread_files_byte_for_byte() {
        same_ns3("sim_mpi_ns3_hpcc", "incast-16-4MB-hpcc");
    }

    #[test]
    fn an_ns3_timely_incast_whose_timestamps_cross_ranks_writes_the_one_thread_files_byte_for_byte() {
        if let Some(pfc) = same_ns3("sim_mpi_ns3_timely", "incast-16-4MB-timely-buf4") {
            assert!(pfc.lines().count() > 10, "PFC fires: {pfc}");
        }
    }

    #[test]
    fn dcbx_adopt_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_byte_for_byte() {
        // willing hosts adopt the switch's PFC from LLDPDUs that cross ranks
        same_json("sim_mpi_dcbx_adopt", |_| "dcbx-adopt".into(), &[]);
    }

    #[test]
    fn dcbx_disagree_under_mpirun_n_2_and_n_4_writes_the_one_thread_json_and_exit_status() {
        // PFC not operational on a link whose ends disagree (exit status 3: lossless drops)
        same_json_and_exit("sim_mpi_dcbx_disagree", |_| "dcbx-disagree".into(), &[], 3);
    }

    /// `args` with every trace output (--pcap, --vcd, --report, --series) and --json into
    /// `out` (relative to the run's directory).
    fn with_traces(args: &[String], out: &str, pcap: bool) -> Vec<String> {
        let mut a = args.to_vec();
        if pcap {
            a.extend(["--pcap".into(), format!("{out}/pcap")]);
        }
        a.extend([
            "--vcd".into(),
            format!("{out}/w.vcd"),
            "--report".into(),
            format!("{out}/rpt"),
            "--series".into(),
            format!("{out}/ser"),
            "--json".into(),
            format!("{out}/r.json"),
        ]);
        a
    }

    /// The files `args` (after `lossless`, with every trace output added) write into a
    /// directory of their own on one thread, then under mpirun with each of `shapes`
    /// (mpirun's arguments, --threads): the same files, byte for byte, and the same exit
    /// status (0, or 3 where a lossless priority dropped); returns the one-thread files.
    fn same_traces(
        test: &str,
        args: &[String],
        pcap: bool,
        shapes: &[(&[&str], &str)],
    ) -> Option<Vec<(PathBuf, Vec<u8>)>> {
        let mpi = require_mpirun(test)?;
        let dir = temp_dir(test);
        std::fs::create_dir_all(dir.join("one")).unwrap();
        let mut a = with_traces(args, "one", pcap);
        a.extend(["--threads".into(), "1".into(), "--quiet".into()]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = run_in(&dir, &a);
        let code = o.status.code();
        assert!(matches!(code, Some(0 | 3)), "{}", text(&o));
        let one = files_under(&dir.join("one"));
        for (mpi_args, threads) in shapes {
            let out = format!("mpi-{}-{threads}", mpi_args[1]);
            std::fs::create_dir_all(dir.join(&out)).unwrap();
            let mut a = with_traces(args, &out, pcap);
            a.extend(["--mpi".into(), "--threads".into(), threads.to_string()]);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let o = mpirun(&mpi, &dir, mpi_args, &a);
            assert_eq!(
                o.status.code(),
                code,
                "{mpi_args:?} --threads {threads}: {}",
                text(&o)
            );
            let got = files_under(&dir.join(&out));
            let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            assert_eq!(
                names(&one),
                names(&got),
                "{mpi_args:?} --threads {threads}: the same files"
            );
            for ((path, a), (_, b)) in one.iter().zip(&got) {
                assert!(
                    a == b,
                    "{args:?} {mpi_args:?} --threads {threads}: {} differs from one thread's",
                    path.display()
                );
            }
            // one summary (rank 0's)
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert_eq!(stdout.matches("M events/s").count(), 1, "{}", text(&o));
        }
        Some(one)
    }

    /// mpirun -n 2 (1 and 2 threads a rank) and -n 4.
    const SHAPES: [(&[&str], &str); 3] = [
        (&["-n", "2", "--oversubscribe"], "1"),
        (&["-n", "2", "--oversubscribe"], "2"),
        (&["-n", "4", "--oversubscribe"], "1"),
    ];

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// The bytes of the file of `files` whose path ends with `name`.
    fn file<'a>(files: &'a [(PathBuf, Vec<u8>)], name: &str) -> &'a [u8] {
        &files
            .iter()
            .find(|(p, _)| p.ends_with(name))
            .unwrap_or_else(|| panic!("{name} written"))
            .1
    }

    #[test]
    fn pcap_vcd_html_and_series_of_builtins_where_pfc_fires_under_mpirun_are_the_one_thread_files() {
        // incast (PFC at the ToR), storm-pfcwd (a stalled NIC's XOFF storm, pfcwd acting;
        // the NIC stalls at 10 ms)
        for args in [
            strings(&["sim", "incast", "--set", "senders=16", "--duration", "300us"]),
            strings(&["sim", "storm-pfcwd", "--duration", "12ms"]),
        ] {
            let Some(one) = same_traces("sim_mpi_traces", &args, true, &SHAPES) else {
                return;
            };
            let pause = String::from_utf8_lossy(file(&one, "pause.csv"));
            assert!(pause.lines().count() > 10, "{args:?}: ports paused: {pause}");
            assert!(
                one.iter()
                    .filter(|(p, b)| p.starts_with("pcap") && b.len() > 1000)
                    .count()
                    > 2,
                "{args:?}: frames captured"
            );
            assert!(file(&one, "index.html").len() > 10_000 && file(&one, "w.vcd").len() > 10_000);
        }
    }

    #[test]
    fn traces_of_dcbx_adopt_with_lldpdus_crossing_ranks_under_mpirun_are_the_one_thread_files() {
        let args = strings(&["sim", "dcbx-adopt"]);
        let Some(one) = same_traces("sim_mpi_dcbx_traces", &args, true, &SHAPES) else {
            return;
        };
        // an LLDPDU (EtherType 0x88cc) in a capture
        assert!(
            one.iter()
                .filter(|(p, _)| p.starts_with("pcap"))
                .any(|(_, b)| b.windows(2).any(|w| w == [0x88, 0xcc])),
            "LLDPDUs captured"
        );
    }

    #[test]
    fn a_partition_file_splits_every_rank_as_written_and_the_traces_are_the_one_thread_files() {
        // not the automatic split (the ToR alone): half the senders with the ToR on rank 0,
        // the others with the receiver on rank 1; every rank reads the file
        let dir = temp_dir("sim_mpi_partition_file");
        let mut file = String::from("tor 0\nreceiver 1\n");
        for s in 1..=16 {
            file.push_str(&format!("sender{s} {}\n", usize::from(s > 8)));
        }
        let part = dir.join("halves.part");
        std::fs::write(&part, file).unwrap();
        let args = strings(&[
            "sim",
            "incast",
            "--set",
            "senders=16",
            "--duration",
            "300us",
            "--partition",
            part.to_str().unwrap(),
        ]);
        let shapes: [(&[&str], &str); 1] = [(&["-n", "2", "--oversubscribe"], "1")];
        same_traces("sim_mpi_partition_file", &args, true, &shapes);
    }

    #[test]
    fn ns3_traces_of_an_incast_where_pfc_fires_under_mpirun_are_the_one_thread_files() {
        // fct.txt, pfc.txt and the JSON beside the VCD, the page and the series (the
        // captures are 144 MB here: the built-ins above check them)
        let name = "incast-16-4MB-timely-buf4";
        let run = lossless_testkit::corpus_dir().join("hpcc-ns3").join(name);
        if !run.join("config.txt").is_file() {
            lossless_testkit::skip_missing_corpus("sim_mpi_ns3_traces", &run);
            return;
        }
        let mut args = ns3_args(name, "OUT", &[]);
        // (ns3_args writes --ns3-out and --json for one directory: each run has its own)
        args.truncate(args.len() - 4);
        let shapes: [(&[&str], &str); 2] = [
            (&["-n", "2", "--oversubscribe"], "1"),
            (&["-n", "4", "--oversubscribe"], "1"),
        ];
        let Some(mpi) = require_mpirun("sim_mpi_ns3_traces") else {
            return;
        };
        let dir = temp_dir("sim_mpi_ns3_traces");
        let run_in_dir = |out: &str, extra: &[&str], mpi_args: Option<&[&str]>| {
            std::fs::create_dir_all(dir.join(out)).unwrap();
            let mut a = with_traces(&args, out, false);
            a.extend(["--ns3-out".into(), out.into()]);
            a.extend(extra.iter().map(|s| s.to_string()));
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let o = match mpi_args {
                Some(m) => mpirun(&mpi, &dir, m, &a),
                None => run_in(&dir, &a),
            };
            assert!(o.status.success(), "{mpi_args:?}: {}", text(&o));
            files_under(&dir.join(out))
        };
        let one = run_in_dir("one", &["--threads", "1", "--quiet"], None);
        let pfc = String::from_utf8_lossy(file(&one, "pfc.txt")).into_owned();
        assert!(pfc.lines().count() > 10, "PFC fires: {pfc}");
        assert!(file(&one, "w.vcd").len() > 10_000 && !file(&one, "fct.txt").is_empty());
        for (mpi_args, threads) in shapes {
            let out = format!("mpi-{}-{threads}", mpi_args[1]);
            let got = run_in_dir(&out, &["--mpi", "--threads", threads, "--quiet"], Some(mpi_args));
            let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            assert_eq!(names(&one), names(&got), "{mpi_args:?}: the same files");
            for ((path, a), (_, b)) in one.iter().zip(&got) {
                assert!(
                    a == b,
                    "{mpi_args:?}: {} differs from one thread's",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn a_trace_output_rank_0_cannot_open_ends_every_rank_with_its_error_and_no_hang() {
        let Some(mpi) = require_mpirun("sim_mpi_bad_output") else {
            return;
        };
        let dir = temp_dir("sim_mpi_bad_output");
        for out in [
            &["--vcd", "no/such/dir/w.vcd"][..],
            &["--pcap", "no/such/dir/pcap"][..],
        ] {
            let mut a = vec!["sim", "incast", "--mpi", "--quiet", "--json", "r.json"];
            a.extend(out);
            let o = mpirun(&mpi, &dir, &["-n", "2", "--oversubscribe"], &a);
            assert!(!o.status.success(), "{}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("no/such/dir"), "{out:?}: {}", text(&o));
            assert!(!err.contains("panicked"), "{}", text(&o));
            assert!(!dir.join("r.json").exists());
        }
    }

    #[test]
    fn the_ns3_queue_monitor_under_mpirun_writes_the_one_thread_qlen_txt_byte_for_byte() {
        // every rank's partitions sample their own switch ports; the counts reach rank 0 with
        // their pfc.txt lines: the incast's config_qlen.txt (its congested port's whole incast
        // in the 100 ms dump) and the HPCC fat tree monitored from 100 ns before its flows
        // start (2 s) to 2.1 s (switches on every rank)
        let Some(mpi) = require_mpirun("sim_mpi_qlen") else {
            return;
        };
        let dir = temp_dir("sim_mpi_qlen");
        let corpus = lossless_testkit::corpus_dir().join("hpcc-ns3");
        let ft_config = dir.join("ft_qlen.txt");
        lossless_testkit::write_monitored_ft_config(
            &corpus.join("ft-k4-websearch-hpcc/config.txt"),
            &ft_config,
        );
        let incast_config = corpus.join("incast-16-4MB-buf8/config_qlen.txt");
        for (run, config) in [
            ("incast-16-4MB-buf8", incast_config),
            ("ft-k4-websearch-hpcc", ft_config),
        ] {
            let config = config.to_string_lossy().into_owned();
            let args = |out: &str, extra: &[&str]| {
                std::fs::create_dir_all(dir.join(out)).unwrap();
                let mut a = ns3_args(run, out, extra);
                a[2].clone_from(&config);
                a
            };
            let one = format!("{run}-one");
            let a = args(&one, &["--threads", "1", "--quiet"]);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let o = run_in(&dir, &a);
            assert!(o.status.success(), "{}", text(&o));
            let read = |out: &str, f: &str| std::fs::read(dir.join(out).join(f)).unwrap();
            let qlen = String::from_utf8(read(&one, "qlen.txt")).unwrap();
            assert!(
                qlen.matches("time: ").count() == 2 && qlen.lines().any(|l| l.split(' ').count() > 3),
                "{run}: {qlen}"
            );
            for (mpi_args, threads) in [
                (&["-n", "2", "--oversubscribe"][..], "1"),
                (&["-n", "2", "--oversubscribe"][..], "2"),
            ] {
                let out = format!("{run}-mpi-{}-{threads}", mpi_args[1]);
                let a = args(&out, &["--mpi", "--threads", threads, "--quiet"]);
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                let o = mpirun(&mpi, &dir, mpi_args, &a);
                assert!(
                    o.status.success(),
                    "{run} {mpi_args:?} --threads {threads}: {}",
                    text(&o)
                );
                for f in ["qlen.txt", "fct.txt", "pfc.txt", "report.json"] {
                    assert!(
                        read(&out, f) == read(&one, f),
                        "{run} {mpi_args:?} --threads {threads}: {f} differs from one thread's"
                    );
                }
            }
        }
    }

    #[test]
    fn more_partitions_than_threads_under_mpirun_write_the_one_thread_json_and_refuse_too_few() {
        // 6 partitions on 2 ranks × 2 threads: each rank places its 3 on its 2 threads anew
        // each window (frames between partitions of one thread, of one rank, of two ranks)
        let Some(mpi) = require_mpirun("sim_mpi_partitions") else {
            return;
        };
        let dir = temp_dir("sim_mpi_partitions");
        let ft = fat_tree(&dir);
        for (scenario, extra) in [(ft.as_str(), &[][..]), ("incast", &["--set", "senders=16"][..])] {
            let mut one = vec!["sim", scenario, "--json", "one.json", "--threads", "1", "--quiet"];
            one.extend(extra);
            let o = run_in(&dir, &one);
            assert!(o.status.success(), "{}", text(&o));
            let expected = std::fs::read(dir.join("one.json")).unwrap();
            let mut a = vec![
                "sim",
                scenario,
                "--json",
                "mpi.json",
                "--mpi",
                "--threads",
                "2",
                "--partitions",
                "6",
            ];
            a.extend(extra);
            let o = mpirun(&mpi, &dir, &["-n", "2", "--oversubscribe"], &a);
            assert!(o.status.success(), "{scenario}: {}", text(&o));
            let got = std::fs::read(dir.join("mpi.json")).unwrap();
            assert!(got == expected, "{scenario}: the JSON differs from one thread's");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(
                    "2 ranks × 2 threads of 6 partitions (rank 0's 3 placed by events each window ("
                ),
                "{scenario}: {}",
                text(&o)
            );
            if scenario == ft {
                assert!(to_other_ranks(&o) > 0.0, "frames cross between ranks");
            }
        }
        // fewer partitions than ranks × threads: every rank says why, none hangs
        let o = mpirun(
            &mpi,
            &dir,
            &["-n", "2", "--oversubscribe"],
            &[
                "sim",
                "incast",
                "--mpi",
                "--threads",
                "2",
                "--partitions",
                "3",
                "--quiet",
            ],
        );
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("--partitions 3: fewer than 4 for --mpi on 2 ranks × 2 threads"),
            "{}",
            text(&o)
        );
        assert!(!err.contains("panicked"), "{}", text(&o));
    }

    #[test]
    fn a_scenario_that_does_not_load_ends_every_rank_with_its_error() {
        let Some(mpi) = require_mpirun("sim_mpi_bad_scenario") else {
            return;
        };
        let dir = temp_dir("sim_mpi_bad_scenario");
        std::fs::write(dir.join("bad.toml"), "name = \"bad\"\nduration = \"forever\"\n").unwrap();
        let o = mpirun(
            &mpi,
            &dir,
            &["-n", "2", "--oversubscribe"],
            &["sim", "bad.toml", "--mpi", "--quiet"],
        );
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("bad.toml") && err.contains("duration"),
            "{}",
            text(&o)
        );
    }
}
