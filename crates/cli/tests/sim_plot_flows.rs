//! `lossless sim --report DIR --plot-flows FLOWS`: the page draws the throughput over time of
//! the flows named (keywords `victims`, `slowest`, or name patterns with `*`); a malformed
//! list is refused before anything runs.

use std::process::{Command, Output};

use lossless_testkit::temp_dir;

fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("the lossless binary runs")
}

#[test]
fn plot_flows_on_the_command_line_draws_the_flows_it_names() {
    let dir = temp_dir("sim-plot-flows");
    let rpt = dir.join("rpt");
    let o = lossless(&[
        "sim",
        "four-bridge",
        "--duration",
        "200us",
        "-q",
        "--report",
        rpt.to_str().unwrap(),
        "--plot-flows",
        "victim,lossy:*",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(rpt.join("index.html")).unwrap();
    let at = page
        .find("<section id=\"flow-throughput\">")
        .expect("the section");
    let section = &page[at..at + page[at..].find("</section>").unwrap()];
    assert!(
        section.contains("<p>4 of the flows --plot-flows chose"),
        "{section}"
    );
    for name in ["victim", "lossy:client1", "lossy:client2", "lossy:client3"] {
        assert!(section.contains(&format!("\n{name}\n")), "{name} in the legend");
    }
    assert!(!section.contains("lossless:client"), "not chosen");
}

#[test]
fn a_plot_flows_list_with_an_empty_item_or_without_report_is_refused() {
    let dir = temp_dir("sim-plot-flows-bad");
    let rpt = dir.join("rpt");
    let o = lossless(&[
        "sim",
        "four-bridge",
        "--report",
        rpt.to_str().unwrap(),
        "--plot-flows",
        "victim,,x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("item 2 is empty"), "{err}");
    assert!(!rpt.exists(), "nothing written");
    let o = lossless(&["sim", "four-bridge", "--plot-flows", "victim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--report"));
}
