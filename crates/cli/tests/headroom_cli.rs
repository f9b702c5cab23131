//! `lossless headroom` through the real binary: the sonic-swss#3235 vectors, Annex N's terms,
//! `--verify`'s answer against Annex N, and errors that name the option and its range.

use std::process::{Command, Output};

use serde_json::Value;

fn headroom(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("headroom")
        .args(args)
        .output()
        .expect("run lossless headroom")
}

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let out = headroom(&a);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn the_sonic_swss_3235_vectors_come_out_of_the_command_exactly() {
    // port MTU 9100, RDMA MTU 1024, 50 % small packets (the default), pipeline latency 19 kB;
    // 400G on Spectrum-3 and 800G on Spectrum-4 are 8-lane ports by lane speed
    for (speed, cable, asic, want) in [
        ("400G", "300m", "spc3", [38_912, 272_384, 320_512]),
        ("100G", "40m", "spc3", [19_456, 51_200, 70_656]),
        ("800G", "300m", "spc4", [38_912, 474_112, 522_240]),
        ("200G", "40m", "spc4", [19_456, 65_536, 84_992]),
    ] {
        let mut args = vec![
            "--speed",
            speed,
            "--cable",
            cable,
            "--mtu",
            "9100",
            "--lossless-mtu",
            "1024",
            "--asic",
            asic,
            "--pipeline-latency",
            "19",
        ];
        if asic == "spc4" {
            args.extend(["--cell", "144"]);
        }
        let s = &json(&args)["sonic"];
        let got = [&s["xon_bytes"], &s["xoff_bytes"], &s["size_bytes"]].map(|v| v.as_u64().unwrap());
        assert_eq!(got, want, "{speed} {cable} {asic}");
    }
}

#[test]
fn annex_n_terms_sum_to_the_headroom_in_json_and_in_the_table() {
    let j = json(&["--speed", "100G", "--cable", "100m", "--mtu", "9216"]);
    let a = &j["annex_n"];
    let terms = a["terms"].as_array().unwrap();
    let bits: Vec<u64> = terms.iter().map(|t| t["bit_times"].as_u64().unwrap()).collect();
    assert_eq!(bits, [74_064, 672, 100_000, 245_760, 201_728, 74_064]);
    assert_eq!(a["total_bit_times"].as_u64().unwrap(), bits.iter().sum::<u64>());
    assert_eq!(a["headroom_bytes"], 87_036);
    // mlx5 upstream: (301 + 216·100/100)·100_000/1000 + 272·9216/100 = 51_700 + 25_067
    assert_eq!(j["mlx5_upstream"]["xoff_bytes"], 76_767);
    let out = headroom(&["--speed", "100G", "--cable", "100m", "--mtu", "9216"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "largest frame being received (9238 B + 20)",
        "cable round trip (2 x 100 m x 5 ns/m)",
        "peer reaction (2.017 µs, 802.3 31B.3.7)",
        "87,036",
        "76,767",
    ] {
        assert!(text.contains(line), "{line:?} missing from\n{text}");
    }
}

#[test]
fn verify_finds_annex_n_enough_and_says_how_far_each_formula_is_from_the_need() {
    let j = json(&[
        "--speed",
        "25G",
        "--cable",
        "3m",
        "--mtu",
        "1500",
        "--verify",
        "--senders",
        "4",
    ]);
    let v = &j["verify"];
    let need = v["headroom_bytes"].as_u64().unwrap();
    let annex = j["annex_n"]["headroom_bytes"].as_u64().unwrap();
    assert!(
        need <= annex && need > annex - 200,
        "need {need}, Annex N {annex}"
    );
    assert!(v["drops_below_total"].as_u64().unwrap() > 0);
    assert_eq!(v["phases"].as_array().unwrap().len(), 4);
    for row in j["comparison"].as_array().unwrap() {
        let h = row["headroom_bytes"].as_i64().unwrap();
        assert_eq!(
            row["vs_verified_bytes"].as_i64().unwrap(),
            h - need as i64,
            "{row}"
        );
    }
}

#[test]
fn bad_values_exit_2_naming_the_option_and_the_allowed_range() {
    for (args, want) in [
        (vec!["--speed", "3G", "--cable", "3m"], "allowed: 10M"),
        (vec!["--speed", "100G", "--cable", "1.5m"], "0..=100000"),
        (vec!["--speed", "100G", "--cable=-1m"], "0..=100000"),
        (
            vec!["--speed", "100G", "--cable", "3m", "--mtu", "70000"],
            "42..=65535",
        ),
        (
            vec!["--speed", "100G", "--cable", "3m", "--peer-delay", "70000"],
            "0..=65535",
        ),
        (
            vec!["--speed", "100G", "--cable", "3m", "--interface-delay", "2ms"],
            "0..=1 ms",
        ),
        (
            vec!["--speed", "100G", "--cable", "3m", "--asic", "spc4"],
            "--cell",
        ),
        (
            vec![
                "--speed",
                "100G",
                "--cable",
                "3m",
                "--small-packet-percentage",
                "101",
            ],
            "0..=100",
        ),
        (
            vec!["--speed", "100G", "--cable", "3m", "--senders", "0"],
            "1..=64",
        ),
    ] {
        let out = headroom(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_teaches_with_examples() {
    let out = headroom(&["--help"]);
    let h = String::from_utf8(out.stdout).unwrap();
    for s in [
        "Examples:",
        "--verify",
        "--reverse-traffic",
        "sonic-swss#3235",
        "Exit status",
    ] {
        assert!(h.contains(s), "{s:?} missing from --help");
    }
}

#[test]
fn the_sonic_example_verifies_with_reverse_traffic_and_a_smaller_lossless_mtu() {
    // docs/headroom.md's SONiC example; with --reverse-traffic it ended in exit 2 ("the worst
    // case did not hold") whenever --lossless-mtu was below --mtu
    let j = json(&[
        "--speed",
        "400G",
        "--cable",
        "300m",
        "--mtu",
        "9100",
        "--lossless-mtu",
        "1024",
        "--pipeline-latency",
        "19",
        "--verify",
        "--reverse-traffic",
        "--senders",
        "2",
    ]);
    let v = j["verify"]["headroom_bytes"]
        .as_u64()
        .expect("a verified headroom");
    let annex = j["annex_n"]["headroom_bytes"].as_u64().unwrap();
    assert!(v > 0 && v.abs_diff(annex) < 9122, "verified {v}, Annex N {annex}");
}

#[test]
fn sonic_kilobytes_of_1024_bytes_are_called_kib_not_the_summarys_1000_byte_kb() {
    let help = String::from_utf8(headroom(&["--help"]).stdout).unwrap();
    let text =
        String::from_utf8(headroom(&["--speed", "100G", "--cable", "100m", "--mtu", "9216"]).stdout).unwrap();
    for (what, s) in [("--help", &help), ("the table", &text)] {
        assert!(!s.contains("kB"), "{what} says kB for 1024 bytes: {s}");
        assert!(s.contains("KiB"), "{what}: {s}");
    }
    let bad = headroom(&[
        "--speed",
        "100G",
        "--cable",
        "100m",
        "--mtu",
        "9216",
        "--pipeline-latency",
        "x",
    ]);
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(err.contains("a number of KiB"), "{err}");
}
