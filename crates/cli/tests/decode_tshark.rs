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
    compare_fields(tshark, capture, &fields(), expected)
}

/// Compares the tshark `names` of every frame with what `expected` derives from our JSON.
fn compare_fields(
    tshark: &Path,
    capture: &Path,
    names: &[String],
    expected: fn(&Value) -> BTreeMap<String, Vec<String>>,
) -> usize {
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

/// A small deterministic generator (xorshift64*), so the generated capture is the same on
/// every run and a failure can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn u8(&mut self) -> u8 {
        self.next() as u8
    }
    fn u16(&mut self) -> u16 {
        self.next() as u16
    }
    fn bit(&mut self) -> bool {
        self.next() & 1 == 1
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Frames of every kind with field values drawn at random: PAUSE, PFC (any vector, any
/// destination), IEEE DCBX (ETS Configuration and Recommendation, PFC, Application Priority)
/// and CEE DCBX (Control, Priority Groups, PFC, Application), all built by the wire emitters.
fn random_frames(rng: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    use lossless_wire::ethernet::EthernetAddress;
    use lossless_wire::fcs::FcsMode;
    use lossless_wire::lldp::*;
    use lossless_wire::mac_control::{self, MacControlRepr};
    let src = EthernetAddress([2, 0, 0, 0, 0, 7]);
    let header = |rng: &mut Rng| {
        vec![
            Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: src.as_bytes().to_vec(),
            }),
            Tlv::PortId(PortId {
                subtype: PortIdSubtype::InterfaceName,
                id: format!("p{}", rng.u8()).into_bytes(),
            }),
            Tlv::Ttl(rng.u16()),
        ]
    };
    let ieee = |t| Tlv::Org(OrgTlv::Ieee8021(t));
    let mut frames = Vec::new();
    for _ in 0..n {
        match rng.below(4) {
            0 | 1 => {
                let control = if rng.bit() {
                    MacControlRepr::Pause {
                        pause_time: rng.u16(),
                    }
                } else {
                    let vector = if rng.below(4) == 0 {
                        rng.u16()
                    } else {
                        u16::from(rng.u8())
                    };
                    MacControlRepr::Pfc {
                        priority_enable_vector: vector,
                        time: std::array::from_fn(|_| rng.u16()),
                    }
                };
                let dst = if rng.below(5) == 0 {
                    src
                } else {
                    EthernetAddress::MAC_CONTROL
                };
                let fcs = if rng.bit() {
                    FcsMode::Present
                } else {
                    FcsMode::Absent
                };
                let mut buf = [0u8; 64];
                let len = mac_control::emit_frame(src, dst, &control, fcs, &mut buf).unwrap();
                frames.push(buf[..len].to_vec());
            }
            2 => {
                let mut tables = || EtsTables {
                    priority_tc: std::array::from_fn(|_| rng.below(8) as u8),
                    tc_bandwidth: std::array::from_fn(|_| rng.below(101) as u8),
                    tsa: std::array::from_fn(|_| Tsa::from([0, 1, 2, 255][rng.below(4) as usize])),
                };
                let (cfg, rec) = (tables(), tables());
                let entries: Vec<AppEntry> = (0..rng.below(5))
                    .map(|_| AppEntry {
                        priority: rng.below(8) as u8,
                        reserved: 0,
                        selector: 1 + rng.below(5) as u8,
                        protocol: rng.u16(),
                    })
                    .collect();
                let mut tlvs = header(rng);
                tlvs.extend([
                    ieee(Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
                        willing: rng.bit(),
                        cbs: rng.bit(),
                        reserved: 0,
                        max_tcs: rng.below(8) as u8,
                        tables: cfg,
                    })),
                    ieee(Ieee8021Tlv::EtsRecommendation(EtsRecommendation {
                        reserved: 0,
                        tables: rec,
                    })),
                    ieee(Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
                        willing: rng.bit(),
                        mbc: rng.bit(),
                        reserved: 0,
                        pfc_cap: rng.below(16) as u8,
                        enabled: rng.u8(),
                    })),
                    ieee(Ieee8021Tlv::ApplicationPriority(ApplicationPriority::new(
                        0, &entries,
                    ))),
                    Tlv::End,
                ]);
                frames.push(lldp_frame(src, &LldpduRepr { tlvs }.to_vec().unwrap()));
            }
            _ => {
                let feature = |rng: &mut Rng| CeeFeatureHeader {
                    oper_version: rng.below(2) as u8,
                    max_version: rng.below(2) as u8,
                    enabled: rng.bit(),
                    willing: rng.bit(),
                    error: rng.bit(),
                    reserved: 0,
                    subtype: 0,
                };
                let apps: Vec<CeeAppEntry> = (0..1 + rng.below(3))
                    .map(|_| CeeAppEntry {
                        protocol: rng.u16(),
                        selector: rng.below(2) as u8,
                        oui: 0x001b21,
                        priority_map: rng.u8(),
                    })
                    .collect();
                let cee = CeeDcbx {
                    sub_tlvs: vec![
                        CeeSubTlv::Control(CeeControl {
                            oper_version: 0,
                            max_version: 0,
                            seq: rng.next() as u32,
                            ack: rng.next() as u32,
                        }),
                        CeeSubTlv::PriorityGroups(CeePriorityGroups {
                            header: feature(rng),
                            pgid: std::array::from_fn(|_| [0, 1, 2, 3, 7, 15][rng.below(6) as usize]),
                            pg_bandwidth: std::array::from_fn(|_| rng.below(101) as u8),
                            num_tcs: 1 + rng.below(8) as u8,
                        }),
                        CeeSubTlv::Pfc(CeePfc {
                            header: feature(rng),
                            admin_map: rng.u8(),
                            num_tcs: 1 + rng.below(8) as u8,
                        }),
                        CeeSubTlv::Application(CeeApplication::new(feature(rng), &apps)),
                    ],
                };
                let mut tlvs = header(rng);
                tlvs.extend([Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(cee))), Tlv::End]);
                frames.push(lldp_frame(src, &LldpduRepr { tlvs }.to_vec().unwrap()));
            }
        }
    }
    frames
}

#[test]
fn randomly_generated_dcbx_and_pfc_frames_agree_with_tshark_field_by_field() {
    let Some(tshark) = require(
        "tshark",
        "randomly_generated_dcbx_and_pfc_frames_agree_with_tshark_field_by_field",
    ) else {
        return;
    };
    let dir = lossless_testkit::temp_dir("decode-random-tshark");
    let path = dir.join("random.pcap");
    let frames = random_frames(&mut Rng(0x005e_ed0f_1055_1e55), 400);
    lossless_testkit::write_pcap(&path, &frames);
    let n = agree_with_tshark(&tshark, &path);
    eprintln!("random frames: {n} field values agree with tshark");
    assert!(n > 10_000, "only {n} values compared");
}

/// The basic 802.1AB TLVs and the common 802.1/802.3 ones, as tshark names them.
fn basic_expected(rec: &Value) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut put = |k: &str, v: String| m.entry(k.to_string()).or_default().push(v);
    let tlvs = rec
        .get("lldp")
        .map(|l| l["tlvs"].as_array().unwrap().clone())
        .unwrap_or_default();
    for t in &tlvs {
        if let Some(c) = t.get("chassis_id") {
            put("lldp.chassis.subtype", u(&c["subtype"]).to_string());
            if u(&c["subtype"]) == 4 {
                put("lldp.chassis.id.mac", c["id"].as_str().unwrap().to_string());
            }
        }
        if let Some(p) = t.get("port_id") {
            put("lldp.port.subtype", u(&p["subtype"]).to_string());
            match u(&p["subtype"]) {
                3 => put("lldp.port.id.mac", p["id"].as_str().unwrap().to_string()),
                1 | 5 | 7 => put("lldp.port.id", p["id"].as_str().unwrap().to_string()),
                _ => {}
            }
        }
        if let Some(ttl) = t.get("time_to_live") {
            put("lldp.time_to_live", u(ttl).to_string());
        }
        if let Some(n) = t.get("system_name") {
            put("lldp.tlv.system.name", n.as_str().unwrap().to_string());
        }
        if let Some(c) = t.get("system_capabilities") {
            put("lldp.tlv.system_cap", format!("0x{:04x}", u(&c["capabilities"])));
            put(
                "lldp.tlv.enable_system_cap",
                format!("0x{:04x}", u(&c["enabled"])),
            );
        }
        if let Some(v) = t.get("port_vlan_id") {
            put("lldp.ieee.802_1.port_vlan.id", u(v).to_string());
        }
        if let Some(v) = t.get("maximum_frame_size") {
            put("lldp.ieee.802_3.max_frame_size", u(v).to_string());
        }
        if let Some(a) = t.get("management_address") {
            put("lldp.mgn.address.subtype", u(&a["address_subtype"]).to_string());
            put(
                "lldp.mgn.interface.subtype",
                u(&a["interface_subtype"]).to_string(),
            );
            put("lldp.mgn.interface.number", u(&a["interface_number"]).to_string());
        }
    }
    m
}

#[test]
fn basic_lldp_tlvs_agree_with_tshark() {
    let Some(tshark) = require("tshark", "basic_lldp_tlvs_agree_with_tshark") else {
        return;
    };
    let names: Vec<String> = [
        "lldp.chassis.subtype",
        "lldp.chassis.id.mac",
        "lldp.port.subtype",
        "lldp.port.id",
        "lldp.port.id.mac",
        "lldp.time_to_live",
        "lldp.tlv.system.name",
        "lldp.tlv.system_cap",
        "lldp.tlv.enable_system_cap",
        "lldp.ieee.802_1.port_vlan.id",
        "lldp.ieee.802_3.max_frame_size",
        "lldp.mgn.address.subtype",
        "lldp.mgn.interface.subtype",
        "lldp.mgn.interface.number",
    ]
    .map(String::from)
    .to_vec();
    let tcpdump = corpus_dir().join("tcpdump");
    let mut total = 0;
    for file in [
        "LLDP_and_CDP.pcap",
        "dcb_ets.pcap",
        "dcb_pfc.pcap",
        "dcb_qcn.pcap",
        "lldp-app-priority.pcap",
        "lldp_mudurl.pcap",
    ] {
        total += compare_fields(&tshark, &tcpdump.join(file), &names, basic_expected);
    }
    total += compare_fields(&tshark, &sample(), &names, basic_expected);
    eprintln!("basic LLDP: {total} field values agree with tshark");
    assert!(total > 100, "only {total} values compared");
}
