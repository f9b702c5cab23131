//! Proof against tshark for RoCEv2 and ECN: for every BTH, AETH, RETH, DETH, immediate-data
//! and ICRC field, the IP DSCP/ECN (IPv4 `ip.dsfield.*`, IPv6 `ipv6.tclass*`, flow label, TTL /
//! hop limit) and the UDP fields, the values in `lossless decode --json` agree with what
//! tshark 4.0 reads from the same capture. The capture holds the congestion-notification sample
//! and frames with random field values (data, ACK, NAK, RNR NAK, CNP, RDMA WRITE/READ, UD;
//! IPv4 and IPv6; tagged and untagged; with and without FCS), all built by the wire emitters.
//!
//! tshark 4.0 has no FECN/BECN fields: it shows the BTH byte that holds FECN, BECN and resv6
//! as `infiniband.reserved`, which is compared as that byte. It does not know opcode 0x81 (CNP)
//! and shows the CNP's reserved bytes and ICRC as `infiniband.vendor`: compared with 16 zero
//! bytes and our ICRC. tshark's heuristic payload dissectors are disabled: some throw on random
//! payloads, and tshark then drops the ICRC. Values are compared as numbers (tshark prints some in hex, some in
//! decimal).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use lossless_testkit::{require, temp_dir, tshark_fields, write_pcap};
use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTag};
use lossless_wire::fcs::FcsMode;
use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
use lossless_wire::roce::ext::{DethRepr, RethRepr};
use lossless_wire::roce::{BthRepr, Envelope, NakCode, Opcode, RoceFrameRepr, Syndrome, UdpChecksum};
use serde_json::Value;

/// xorshift64*: the same capture on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bit(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

fn random_frame(rng: &mut Rng) -> Vec<u8> {
    let mac = |n: u64| EthernetAddress([2, 1, 0, 0, 0, n as u8]);
    let ecn = Ecn::from_bits(rng.below(4) as u8);
    let dscp = rng.below(64) as u8;
    let ip = if rng.bit() {
        let mut ip = Ipv4Repr::udp([10, 0, 0, rng.below(250) as u8], [10, 0, 1, rng.below(250) as u8]);
        (ip.dscp, ip.ecn, ip.ttl, ip.identification) = (dscp, ecn, rng.below(256) as u8, rng.next() as u16);
        IpRepr::V4(ip)
    } else {
        let mut a = [0u8; 16];
        a[0] = 0xfd;
        a[15] = rng.below(250) as u8;
        let mut ip = Ipv6Repr::udp(a, [0xfe; 16]);
        (ip.dscp, ip.ecn, ip.hop_limit) = (dscp, ecn, rng.below(256) as u8);
        ip.flow_label = rng.below(1 << 20) as u32;
        IpRepr::V6(ip)
    };
    let vlan = rng
        .bit()
        .then(|| VlanTag::from_tci(EtherType::VLAN_C_TAG, rng.next() as u16));
    let env = Envelope::new(mac(rng.below(9)), mac(rng.below(9)), vlan, ip, rng.next() as u16);
    let opcodes = [
        Opcode::RC_SEND_FIRST,
        Opcode::RC_SEND_MIDDLE,
        Opcode::RC_SEND_LAST,
        Opcode::RC_SEND_ONLY,
        Opcode(0x05), // SEND Only with Immediate
        Opcode::RC_RDMA_WRITE_FIRST,
        Opcode::RC_RDMA_WRITE_ONLY,
        Opcode::RC_RDMA_READ_REQUEST,
        Opcode::RC_RDMA_READ_RESPONSE_ONLY,
        Opcode(0x0D), // READ response First
        Opcode::RC_ACKNOWLEDGE,
        Opcode::RC_ACKNOWLEDGE,
        Opcode::UC_SEND_ONLY,
        Opcode::UD_SEND_ONLY,
        Opcode::UD_SEND_ONLY_WITH_IMMEDIATE,
        Opcode::CNP,
    ];
    let opcode = opcodes[rng.below(opcodes.len() as u64) as usize];
    let layout = opcode.layout().expect("defined");
    let payload_len = if layout.payload {
        rng.below(300) as usize
    } else {
        0
    };
    let mut bth = BthRepr::new(opcode, rng.below(1 << 24) as u32, rng.below(1 << 24) as u32);
    bth.solicited = rng.bit();
    bth.migreq = rng.bit();
    bth.pad_count = (rng.below(4) as usize).min(payload_len) as u8;
    bth.p_key = rng.next() as u16;
    bth.fecn = rng.bit();
    bth.becn = rng.bit() || opcode.is_cnp();
    bth.resv6 = if rng.below(4) == 0 { rng.below(64) as u8 } else { 0 };
    bth.ack_req = rng.bit();
    bth.resv7 = if rng.below(4) == 0 {
        rng.below(128) as u8
    } else {
        0
    };
    let mut f = RoceFrameRepr::new(env, bth, payload_len).expect("defined opcode");
    if let Some(a) = f.ext.aeth.as_mut() {
        a.msn = rng.below(1 << 24) as u32;
        a.syndrome = match rng.below(4) {
            0 => Syndrome::ack(rng.below(32) as u8),
            1 => Syndrome::rnr_nak(rng.below(32) as u8),
            2 => Syndrome::nak(NakCode::PsnSequenceError),
            _ => Syndrome::nak(NakCode::from_bits(rng.below(5) as u8)),
        };
    }
    if f.ext.reth.is_some() {
        f.ext.reth = Some(RethRepr {
            va: rng.next(),
            r_key: rng.next() as u32,
            dma_len: rng.next() as u32,
        });
    }
    if f.ext.deth.is_some() {
        f.ext.deth = Some(DethRepr {
            q_key: rng.next() as u32,
            reserved: 0,
            src_qp: rng.below(1 << 24) as u32,
        });
    }
    if f.ext.immdt.is_some() {
        f.ext.immdt = Some(rng.next() as u32);
    }
    if rng.below(4) == 0 {
        f.udp_checksum = UdpChecksum::Valid;
    }
    let fcs = if rng.below(4) == 0 {
        FcsMode::Present
    } else {
        FcsMode::Absent
    };
    let payload: Vec<u8> = (0..payload_len).map(|_| rng.next() as u8).collect();
    let mut buf = vec![0u8; f.buffer_len(fcs)];
    let n = f.emit_with_payload(&payload, fcs, &mut buf).expect("valid frame");
    buf.truncate(n);
    buf
}

/// Runs `lossless decode --json` and returns the frame objects.
fn decode_json(path: &Path) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["decode", "--json"])
        .arg(path)
        .output()
        .expect("run lossless");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const FIELDS: &[&str] = &[
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.ttl",
    "ip.id",
    "ipv6.tclass",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "ipv6.flow",
    "ipv6.hlim",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "udp.checksum",
    "udp.checksum.status",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.m",
    "infiniband.bth.padcnt",
    "infiniband.bth.tver",
    "infiniband.bth.p_key",
    "infiniband.reserved",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.reserved7",
    "infiniband.bth.psn",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.syndrome.opcode",
    "infiniband.aeth.syndrome.credit_count",
    "infiniband.aeth.syndrome.timer",
    "infiniband.aeth.syndrome.error_code",
    "infiniband.aeth.msn",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.immdt",
    "infiniband.invariant.crc",
    "infiniband.vendor",
];

fn u(v: &Value) -> u64 {
    match v {
        Value::Bool(b) => u64::from(*b),
        v => v.as_u64().unwrap_or_else(|| panic!("not a number: {v}")),
    }
}

/// What tshark should show, per field, as numbers (`infiniband.vendor` as hex text).
fn expected(rec: &Value) -> BTreeMap<&'static str, Vec<String>> {
    let mut m: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut put = |k: &'static str, v: u64| m.entry(k).or_default().push(v.to_string());
    if let Some(ip) = rec.get("ip") {
        if u(&ip["version"]) == 4 {
            put("ip.dsfield.dscp", u(&ip["dscp"]));
            put("ip.dsfield.ecn", u(&ip["ecn"]));
            put("ip.ttl", u(&ip["ttl"]));
            put("ip.id", u(&ip["identification"]));
        } else {
            put("ipv6.tclass", u(&ip["traffic_class"]));
            put("ipv6.tclass.dscp", u(&ip["dscp"]));
            put("ipv6.tclass.ecn", u(&ip["ecn"]));
            put("ipv6.flow", u(&ip["flow_label"]));
            put("ipv6.hlim", u(&ip["ttl"]));
        }
    }
    if let Some(udp) = rec.get("udp") {
        put("udp.srcport", u(&udp["src_port"]));
        put("udp.dstport", u(&udp["dst_port"]));
        put("udp.length", u(&udp["length"]));
        put("udp.checksum", u(&udp["checksum"]));
        // Wireshark: 1 good, 3 not present (zero over IPv4), 4 illegal (zero over IPv6).
        let v6 = rec["ip"]["version"] == 6;
        let status = match (u(&udp["checksum"]), udp.get("checksum_ok")) {
            (0, _) if v6 => 4,
            (0, _) => 3,
            (_, Some(Value::Bool(true))) => 1,
            _ => 0,
        };
        put("udp.checksum.status", status);
    }
    let Some(r) = rec.get("roce") else { return m };
    let b = &r["bth"];
    put("infiniband.bth.opcode", u(&b["opcode"]));
    for (k, f) in [
        ("infiniband.bth.se", "se"),
        ("infiniband.bth.m", "m"),
        ("infiniband.bth.padcnt", "padcnt"),
        ("infiniband.bth.tver", "tver"),
        ("infiniband.bth.p_key", "p_key"),
        ("infiniband.bth.destqp", "dest_qp"),
        ("infiniband.bth.a", "ack_req"),
        ("infiniband.bth.reserved7", "resv7"),
        ("infiniband.bth.psn", "psn"),
    ] {
        put(k, u(&b[f]));
    }
    put(
        "infiniband.reserved",
        u(&b["fecn"]) << 7 | u(&b["becn"]) << 6 | u(&b["resv6"]),
    );
    if let Some(a) = r.get("aeth") {
        put("infiniband.aeth.syndrome", u(&a["syndrome"]));
        put("infiniband.aeth.syndrome.opcode", u(&a["kind_code"]));
        for (k, f) in [
            ("infiniband.aeth.syndrome.credit_count", "credit_count"),
            ("infiniband.aeth.syndrome.timer", "timer"),
            ("infiniband.aeth.syndrome.error_code", "nak_code"),
        ] {
            if let Some(v) = a.get(f) {
                put(k, u(v));
            }
        }
        put("infiniband.aeth.msn", u(&a["msn"]));
    }
    if let Some(x) = r.get("reth") {
        put("infiniband.reth.va", u(&x["va"]));
        put("infiniband.reth.r_key", u(&x["r_key"]));
        put("infiniband.reth.dmalen", u(&x["dma_len"]));
    }
    if let Some(x) = r.get("deth") {
        put("infiniband.deth.q_key", u(&x["q_key"]));
        put("infiniband.deth.srcqp", u(&x["src_qp"]));
    }
    if let Some(x) = r.get("immediate") {
        put("infiniband.immdt", u(x));
    }
    if r["cnp_reserved_zero"] == Value::Bool(true) {
        let icrc = u(&r["icrc"]);
        m.entry("infiniband.vendor")
            .or_default()
            .push(format!("{}{icrc:08x}", "00".repeat(16)));
    } else if let Some(i) = r.get("icrc") {
        m.entry("infiniband.invariant.crc")
            .or_default()
            .push(u(i).to_string());
    }
    m
}

/// tshark's text for one field, as the numbers (or hex text) `expected` gives.
fn normalise(field: &str, text: &str) -> Vec<String> {
    if text.is_empty() {
        return vec![];
    }
    let mut values: Vec<String> = text
        .split(',')
        .map(|v| match field {
            "infiniband.vendor" => v.to_string(),
            // FT_BYTES fields: hex digits without 0x.
            "infiniband.reserved" | "infiniband.immdt" => u64::from_str_radix(v, 16).unwrap().to_string(),
            _ => match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).unwrap().to_string(),
                None => v
                    .parse::<u64>()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| v.to_string()),
            },
        })
        .collect();
    match field {
        // the byte after the P_Key comes first; DETH's reserved byte may follow
        "infiniband.reserved" => values.truncate(1),
        // tshark 4.0 lists UD immediate data twice
        "infiniband.immdt" => values.dedup(),
        // the subtree item (its first four bytes), then the data: keep the data
        "infiniband.vendor" => {
            values.drain(..values.len().saturating_sub(1));
        }
        _ => {}
    }
    values
}

#[test]
fn roce_ecn_and_udp_fields_agree_with_tshark() {
    let Some(tshark) = require("tshark", "roce_ecn_and_udp_fields_agree_with_tshark") else {
        return;
    };
    let mut frames = lossless_capture::cn::sample::cn_sample_frames();
    let mut rng = Rng(0x5eed_0011);
    frames.extend((0..400).map(|_| random_frame(&mut rng)));
    let dir = temp_dir("roce-tshark");
    let pcap = dir.join("roce.pcap");
    write_pcap(&pcap, &frames);
    // The heuristic payload dissectors (RPC-over-RDMA, EoIB, …) throw on some of our random
    // payloads, and tshark then drops the ICRC: the payload is opaque here.
    let mut prefs = vec!["-o", "udp.check_checksum:TRUE"];
    for p in [
        "smc",
        "smb_direct",
        "rpcordma",
        "nvme-rdma",
        "lnet",
        "iser",
        "infiniband.eoib",
        "infiniband_sdp",
        "fcoib",
    ] {
        prefs.extend(["--disable-protocol", p]);
    }
    let rows = tshark_fields(&tshark, &pcap, FIELDS, &prefs);
    let ours = decode_json(&pcap);
    assert_eq!(rows.len(), ours.len());
    let mut compared = 0;
    let mut per_field: BTreeMap<&str, usize> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for (row, rec) in rows.iter().zip(&ours) {
        let exp = expected(rec);
        for (field, theirs) in FIELDS.iter().zip(row) {
            let theirs = normalise(field, theirs);
            let mine = exp.get(field).cloned().unwrap_or_default();
            if mine != theirs {
                mismatches.push(format!(
                    "frame {}: {field}: ours {mine:?}, tshark {theirs:?}",
                    rec["frame"]
                ));
            } else if !mine.is_empty() {
                compared += mine.len();
                *per_field.entry(field).or_default() += 1;
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    eprintln!("{compared} values agree with tshark: {per_field:?}");
    // Every field was exercised (the capture did not lose the frames this test is about).
    for f in FIELDS {
        assert!(
            per_field.get(f).copied().unwrap_or(0) >= 3,
            "{f} compared fewer than 3 times"
        );
    }
}
