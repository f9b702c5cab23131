//! Proof against tshark: for every DCBX and MAC Control field, the values in
//! `lossless decode --json` agree with what tshark (`-T fields -e …`) reads from the same
//! capture, frame by frame and occurrence by occurrence.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use lossless_testkit::{corpus_dir, require, tshark_fields};
use serde_json::Value;

/// Every tshark field this test compares (names from `tshark -G fields`; see standards.md).
fn fields() -> Vec<String> {
    let mut f: Vec<String> = ["macc.opcode", "macc.pause_time", "macc.cbfc.enbv"]
        .map(String::from)
        .to_vec();
    for i in 0..8 {
        f.push(format!("macc.cbfc.enbv.c{i}"));
        f.push(format!("macc.cbfc.pause_time.c{i}"));
    }
    f.extend(["macc.dst_address_invalid", "macc.cbfc.enbv.not_zero"].map(String::from));
    f.extend(
        [
            "lldp.ieee.802_1.subtype",
            "lldp.dcbx.ieee.willing",
            "lldp.dcbx.ieee.ets.cbs",
            "lldp.dcbx.ieee.ets.maxtcs",
            "lldp.dcbx.ieee.pfc.mbc",
            "lldp.dcbx.ieee.pfc.numtcs",
            "lldp.dcbx.ieee.app.prio",
            "lldp.dcbx.iee.app.sf",
            "lldp.dcbx.feature.app.proto",
            "lldp.dcbx.proto",
            "lldp.dcbx.type",
            "lldp.dcbx.version",
            "lldp.dcbx.max_version",
            "lldp.dcbx.control.seq",
            "lldp.dcbx.control.ack",
            "lldp.dcbx.feature.enabled",
            "lldp.dcbx.feature.willing",
            "lldp.dcbx.feature.error",
            "lldp.dcbx.feature.subtype",
            "lldp.dcbx.feature.pg.numtcs",
            "lldp.dcbx.feature.pfc.numtcs",
            "lldp.dcbx.feature.app.sf",
            "lldp.dcbx.feature.app.oui",
            "lldp.dcbx.feature.app.prio",
        ]
        .map(String::from),
    );
    for i in 0..8 {
        f.push(format!("lldp.dcbx.feature.pg.pgid_prio{i}"));
        f.push(format!("lldp.dcbx.feature.pg.per{i}"));
        f.push(format!("lldp.dcbx.ieee.ets.tsa{i}"));
        f.push(format!("lldp.dcbx.feature.pfc.prio{i}"));
        f.push(format!("lldp.ieee.802_1qau.cnpv.prio{i}"));
        f.push(format!("lldp.ieee.802_1qau.ready.prio{i}"));
    }
    f
}

/// Runs `lossless decode --json` and returns the frame objects.
fn decode_json(path: &Path) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("decode")
        .arg("--json")
        .arg(path)
        .output()
        .expect("run lossless");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}: {out:?}",
        path.display()
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .filter(|v| v.get("frame").is_some())
        .collect()
}

fn b(v: &Value) -> String {
    match v.as_bool() {
        Some(true) => "1".into(),
        Some(false) => "0".into(),
        None => panic!("not a bool: {v}"),
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// What tshark should print for each field of `rec`, occurrences in wire order.
fn expected(rec: &Value) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut put = |k: String, v: String| m.entry(k).or_default().push(v);
    if let Some(mc) = rec.get("mac_control") {
        put("macc.opcode".into(), format!("0x{:04x}", u(&mc["opcode"])));
        if let Some(t) = mc.get("pause_time") {
            put("macc.pause_time".into(), u(t).to_string());
        }
        if let Some(p) = mc.get("pfc") {
            put(
                "macc.cbfc.enbv".into(),
                format!("0x{:04x}", u(&p["priority_enable_vector"])),
            );
            for i in 0..8 {
                put(format!("macc.cbfc.enbv.c{i}"), b(&p["enabled"][i]));
                put(format!("macc.cbfc.pause_time.c{i}"), u(&p["time"][i]).to_string());
            }
        }
        if mc["dst_address_invalid"] == Value::Bool(true) {
            put("macc.dst_address_invalid".into(), "1".into());
        }
        if mc["enbv_not_zero"] == Value::Bool(true) {
            put("macc.cbfc.enbv.not_zero".into(), "1".into());
        }
    }
    let tlvs = rec
        .get("lldp")
        .map(|l| l["tlvs"].as_array().unwrap().clone())
        .unwrap_or_default();
    for t in &tlvs {
        if t.get("oui").and_then(Value::as_str) == Some("00-80-c2") {
            put(
                "lldp.ieee.802_1.subtype".into(),
                format!("0x{:02x}", u(&t["subtype"])),
            );
        }
        for key in ["ets_configuration", "ets_recommendation"] {
            if let Some(e) = t.get(key) {
                if let Some(w) = e.get("willing") {
                    put("lldp.dcbx.ieee.willing".into(), b(w));
                    put("lldp.dcbx.ieee.ets.cbs".into(), b(&e["cbs"]));
                    put("lldp.dcbx.ieee.ets.maxtcs".into(), u(&e["max_tcs"]).to_string());
                }
                for i in 0..8 {
                    put(
                        format!("lldp.dcbx.feature.pg.pgid_prio{i}"),
                        u(&e["priority_tc"][i]).to_string(),
                    );
                }
                for i in 0..8 {
                    put(
                        format!("lldp.dcbx.feature.pg.per{i}"),
                        u(&e["tc_bandwidth"][i]).to_string(),
                    );
                }
                for i in 0..8 {
                    put(format!("lldp.dcbx.ieee.ets.tsa{i}"), u(&e["tsa"][i]).to_string());
                }
            }
        }
        if let Some(p) = t.get("pfc_configuration") {
            put("lldp.dcbx.ieee.willing".into(), b(&p["willing"]));
            put("lldp.dcbx.ieee.pfc.mbc".into(), b(&p["mbc"]));
            put("lldp.dcbx.ieee.pfc.numtcs".into(), u(&p["pfc_cap"]).to_string());
            for i in 0..8 {
                put(format!("lldp.dcbx.feature.pfc.prio{i}"), b(&p["enabled"][i]));
            }
        }
        if let Some(a) = t.get("application_priority") {
            for e in a["entries"].as_array().unwrap() {
                put("lldp.dcbx.ieee.app.prio".into(), u(&e["priority"]).to_string());
                put("lldp.dcbx.iee.app.sf".into(), u(&e["selector"]).to_string());
                put(
                    "lldp.dcbx.feature.app.proto".into(),
                    format!("0x{:04x}", u(&e["protocol"])),
                );
            }
        }
        if let Some(c) = t.get("congestion_notification") {
            for i in 0..8 {
                put(format!("lldp.ieee.802_1qau.cnpv.prio{i}"), b(&c["cnpv"][i]));
            }
            for i in 0..8 {
                put(format!("lldp.ieee.802_1qau.ready.prio{i}"), b(&c["ready"][i]));
            }
        }
        if let Some(c) = t.get("cee_dcbx") {
            put("lldp.dcbx.proto".into(), format!("0x{:02x}", u(&t["subtype"])));
            for sub in c["sub_tlvs"].as_array().unwrap() {
                let (kind, s) = sub.as_object().unwrap().iter().next().unwrap();
                let ty = match kind.as_str() {
                    "control" => 1,
                    "priority_groups" => 2,
                    "pfc" => 3,
                    "application" => 4,
                    _ => u(&s["type"]),
                };
                put("lldp.dcbx.type".into(), ty.to_string());
                if ty > 4 {
                    continue;
                }
                put(
                    "lldp.dcbx.version".into(),
                    format!("0x{:02x}", u(&s["oper_version"])),
                );
                put(
                    "lldp.dcbx.max_version".into(),
                    format!("0x{:02x}", u(&s["max_version"])),
                );
                if kind == "control" {
                    put("lldp.dcbx.control.seq".into(), u(&s["seq"]).to_string());
                    put("lldp.dcbx.control.ack".into(), u(&s["ack"]).to_string());
                    continue;
                }
                put("lldp.dcbx.feature.enabled".into(), b(&s["enable"]));
                put("lldp.dcbx.feature.willing".into(), b(&s["willing"]));
                put("lldp.dcbx.feature.error".into(), b(&s["error"]));
                put(
                    "lldp.dcbx.feature.subtype".into(),
                    format!("0x{:02x}", u(&s["subtype"])),
                );
                match kind.as_str() {
                    "priority_groups" => {
                        for i in 0..8 {
                            put(
                                format!("lldp.dcbx.feature.pg.pgid_prio{i}"),
                                u(&s["pgid"][i]).to_string(),
                            );
                        }
                        for i in 0..8 {
                            put(
                                format!("lldp.dcbx.feature.pg.per{i}"),
                                u(&s["pg_bandwidth"][i]).to_string(),
                            );
                        }
                        put(
                            "lldp.dcbx.feature.pg.numtcs".into(),
                            format!("0x{:02x}", u(&s["num_tcs"])),
                        );
                    }
                    "pfc" => {
                        for i in 0..8 {
                            put(format!("lldp.dcbx.feature.pfc.prio{i}"), b(&s["enabled"][i]));
                        }
                        put(
                            "lldp.dcbx.feature.pfc.numtcs".into(),
                            format!("0x{:02x}", u(&s["num_tcs"])),
                        );
                    }
                    _ => {
                        for e in s["entries"].as_array().unwrap() {
                            put(
                                "lldp.dcbx.feature.app.proto".into(),
                                format!("0x{:04x}", u(&e["protocol"])),
                            );
                            put(
                                "lldp.dcbx.feature.app.oui".into(),
                                format!("0x{:06x}", u(&e["oui"])),
                            );
                            put("lldp.dcbx.feature.app.sf".into(), u(&e["selector"]).to_string());
                            // Wireshark shows the lowest priority set in the map.
                            let map = u(&e["priority_map"]);
                            if map != 0 {
                                put(
                                    "lldp.dcbx.feature.app.prio".into(),
                                    map.trailing_zeros().to_string(),
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    m
}

/// Compares every field of every frame; returns how many values agreed.
fn agree_with_tshark(tshark: &Path, capture: &Path) -> usize {
    let names = fields();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let rows = tshark_fields(tshark, capture, &refs, &[]);
    let ours = decode_json(capture);
    assert_eq!(rows.len(), ours.len(), "{}: frame count", capture.display());
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for (row, rec) in rows.iter().zip(&ours) {
        let exp = expected(rec);
        for (name, theirs) in names.iter().zip(row) {
            let mine = exp.get(name).map(|v| v.join(",")).unwrap_or_default();
            // tshark prints values of one field in tree order; ours are in wire order, which
            // is the same for every field here except the shared CEE/IEEE fields, which never
            // meet in one frame in these captures.
            if &mine != theirs {
                mismatches.push(format!(
                    "frame {}: {name}: ours {mine:?}, tshark {theirs:?}",
                    rec["frame"]
                ));
            } else if !mine.is_empty() {
                compared += mine.split(',').count();
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{}:\n{}",
        capture.display(),
        mismatches.join("\n")
    );
    compared
}

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures/sample.pcapng")
}

macro_rules! tshark_test {
    ($name:ident, $path:expr, $min:expr) => {
        #[test]
        fn $name() {
            let Some(tshark) = require("tshark", stringify!($name)) else {
                return;
            };
            let n = agree_with_tshark(&tshark, &$path);
            eprintln!("{}: {n} field values agree with tshark", stringify!($name));
            let min: usize = $min;
            assert!(
                n >= min,
                "only {n} values compared: the capture lost the frames this test is about"
            );
        }
    };
}

tshark_test!(
    dcb_ets_fields_agree_with_tshark,
    corpus_dir().join("tcpdump/dcb_ets.pcap"),
    100
);
tshark_test!(
    dcb_pfc_fields_agree_with_tshark,
    corpus_dir().join("tcpdump/dcb_pfc.pcap"),
    20
);
tshark_test!(
    dcb_qcn_fields_agree_with_tshark,
    corpus_dir().join("tcpdump/dcb_qcn.pcap"),
    20
);
tshark_test!(
    lldp_app_priority_fields_agree_with_tshark,
    corpus_dir().join("tcpdump/lldp-app-priority.pcap"),
    10
);
tshark_test!(sample_capture_fields_agree_with_tshark, sample(), 150);
// No DCBX or MAC Control field in plain LLDP: we must not invent one either.
tshark_test!(
    plain_lldp_fields_agree_with_tshark,
    corpus_dir().join("tcpdump/LLDP_and_CDP.pcap"),
    0
);

/// Our FCS detection (a frame ends with a valid CRC-32) agrees with tshark told that every
/// frame has an FCS: where we found one, tshark checks it good and shows the same value;
/// everywhere else tshark finds it bad.
#[test]
fn fcs_detection_agrees_with_tshark_checking_every_frame() {
    let Some(tshark) = require("tshark", "fcs_detection_agrees_with_tshark_checking_every_frame") else {
        return;
    };
    let prefs = ["-o", "eth.fcs:Always", "-o", "eth.check_fcs:TRUE"];
    for capture in [sample(), corpus_dir().join("tcpdump/dcb_ets.pcap")] {
        let rows = tshark_fields(&tshark, &capture, &["eth.fcs", "eth.fcs.status"], &prefs);
        let ours = decode_json(&capture);
        assert_eq!(rows.len(), ours.len());
        let mut found = 0;
        for (row, rec) in rows.iter().zip(&ours) {
            match rec["eth"].get("fcs") {
                Some(fcs) => {
                    found += 1;
                    assert_eq!(row[0], format!("0x{:08x}", u(fcs)), "frame {}", rec["frame"]);
                    assert_eq!(row[1], "1", "frame {}: tshark checks the FCS good", rec["frame"]);
                }
                None => assert_ne!(
                    row[1], "1",
                    "frame {}: tshark finds a good FCS we missed",
                    rec["frame"]
                ),
            }
        }
        if capture == sample() {
            assert_eq!(found, 1, "the sample has one frame captured with its FCS");
        }
    }
}
