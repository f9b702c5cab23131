//! `lossless sim --threads N`: the same JSON report as one thread, and a clear refusal of what
//! the partitioned engine does not split yet.

#[path = "cli_support/mod.rs"]
mod support;

use lossless_testkit::temp_dir;
use support::*;

#[test]
fn an_incast_on_three_threads_writes_the_one_thread_json_byte_for_byte() {
    let dir = temp_dir("sim_threads");
    let (one, three) = (dir.join("one.json"), dir.join("three.json"));
    for (out, threads) in [(&one, "1"), (&three, "3")] {
        let o = run(&[
            "sim",
            "incast",
            "--set",
            "senders=16",
            "--threads",
            threads,
            "--json",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (a, b) = (std::fs::read(&one).unwrap(), std::fs::read(&three).unwrap());
    assert!(!a.is_empty() && a == b, "the reports differ");
}

#[test]
fn threads_on_a_scenario_with_qps_are_refused_saying_what_is_not_split() {
    let o = run(&["sim", "incast-dcqcn", "--threads", "2", "--quiet"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("RoCEv2 QPs") && err.contains("one thread"), "{err}");
}

#[test]
fn sigint_stops_a_threaded_run_at_a_window_and_writes_nothing() {
    let dir = temp_dir("sim_threads_int");
    let cdf = lossless_testkit::corpus_dir().join("workloads/WebSearch_distribution.txt");
    std::fs::copy(&cdf, dir.join("WebSearch_distribution.txt")).expect("the shared corpus");
    // a k = 8 fat tree for half a simulated second: far longer than the test waits
    let toml = "name = \"ft8\"\nseed = 1\nduration = \"500ms\"\n[defaults]\nrate = \"100G\"\nflow_control = \"pfc\"\npfc_priorities = [3]\n\
                [fabric]\nkind = \"fat-tree\"\nk = 8\nhost_rate = \"100G\"\ndelay = \"1us\"\n[fabric.switch]\nbuffer_bytes = 33554432\n\
                [[workload]]\nname = \"w\"\nsrc = [\"h*\"]\ndst = [\"h*\"]\npriority = 3\ncdf_file = \"WebSearch_distribution.txt\"\nload = 0.3\n";
    std::fs::write(dir.join("ft8.toml"), toml).unwrap();
    let child = std::process::Command::new(bin())
        .args(["sim", "ft8.toml", "--threads", "2", "--json", "out.json"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
    let o = wait_bounded(child, std::time::Duration::from_secs(60), "the interrupted run");
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("interrupted at") && err.contains("no output written"),
        "{err}"
    );
    assert!(!dir.join("out.json").exists());
}
