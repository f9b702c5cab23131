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
