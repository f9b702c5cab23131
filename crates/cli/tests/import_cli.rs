//! `lossless import`: each example of examples/import/ imports and the scenario it writes
//! runs with `lossless sim`; what is not mapped goes to standard error; bad input exits 2 with
//! file, line and path, and writes nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lossless_testkit::temp_dir;

fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("run lossless")
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/import")
        .join(name)
}

fn import_and_run(kind: &str, file: &str, tag: &str) -> String {
    let dir = temp_dir(tag);
    let toml = dir.join("x.toml");
    let input = example(file);
    let out = lossless(&[
        "import",
        kind,
        input.to_str().unwrap(),
        "-o",
        toml.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let run = lossless(&["sim", toml.to_str().unwrap(), "--no-twin"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary = String::from_utf8_lossy(&run.stdout);
    assert!(summary.contains("✓ conserved"), "{summary}");
    assert!(summary.contains("lossless frames dropped: 0"), "{summary}");
    stderr
}

#[test]
fn the_sonic_example_imports_and_its_scenario_runs() {
    let stderr = import_and_run("sonic", "sonic-config_db.json", "import-sonic");
    assert!(
        stderr.contains("not mapped (7; also in the scenario's header)"),
        "{stderr}"
    );
}

#[test]
fn the_mlnx_qos_example_imports_and_its_scenario_runs() {
    let stderr = import_and_run("mlnx-qos", "mlnx_qos-eth2.txt", "import-mlnx");
    assert!(stderr.contains("DCBX mode: OS controlled"), "{stderr}");
}

#[test]
fn bad_input_exits_2_naming_file_line_and_path_and_writes_nothing() {
    let dir = temp_dir("import-bad");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\n \"PORT_QOS_MAP\": {\n  \"Ethernet0,Ethernet4\": {\"pfc_enable\": \"3,x\"}}}\n",
    )
    .unwrap();
    let toml = dir.join("x.toml");
    let out = lossless(&[
        "import",
        "sonic",
        bad.to_str().unwrap(),
        "-o",
        toml.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:3: PORT_QOS_MAP/Ethernet0,Ethernet4/pfc_enable: found \"x\"",
            bad.display()
        )),
        "{stderr}"
    );
    assert!(!toml.exists());
}

#[test]
fn the_output_may_not_be_the_input() {
    let dir = temp_dir("import-clash");
    let f = dir.join("q.txt");
    std::fs::copy(example("mlnx_qos-eth2.txt"), &f).unwrap();
    let out = lossless(&[
        "import",
        "mlnx-qos",
        f.to_str().unwrap(),
        "-o",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read(&f).unwrap(),
        std::fs::read(example("mlnx_qos-eth2.txt")).unwrap()
    );
}
