//! A hostile peer on a veth pair: scapy in one network namespace sends LLDPDUs to a running
//! `lossless dcbx run` (a willing host, no --config) in the other. Each invalid DCBX TLV of
//! issue 12 item 15 is refused with its reason while Operational keeps the last valid
//! state; a flood of new chassis IDs neither locks the real peer out nor floods the log.

mod dcbx_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use dcbx_support::{Pair, lossless, ready};
use serde_json::{Value, json};

/// The peer: `peer.py IFACE` reads commands from stdin and answers each with "done": `CASE`
/// sends CASE's LLDPDU three times (0.2 s apart) from chassis 02:00:00:00:00:01; `flood N`
/// sends N LLDPDUs, each from a new chassis ID, as fast as the socket takes them. Frames are
/// built with scapy's LLDP layers; the DCBX TLV payloads are spelled out byte by byte from
/// 802.1Qaz D.2.
const PEER_PY: &str = r#"
import socket, sys, time
from scapy.config import conf
from scapy.layers.l2 import Ether
from scapy.contrib.lldp import (LLDPDUChassisID, LLDPDUPortID, LLDPDUTimeToLive,
    LLDPDUGenericOrganisationSpecific as Org, LLDPDUEndOfLLDPDU)
conf.verb = 0

def tables(up2tc, tcbw, tsa):
    return bytes((up2tc[2 * i] << 4) | up2tc[2 * i + 1] for i in range(4)) + bytes(tcbw) + bytes(tsa)

UP2TC = [0, 0, 0, 1, 0, 0, 0, 0]
BW = [50, 50, 0, 0, 0, 0, 0, 0]
TSA = [2, 2, 0, 0, 0, 0, 0, 0]          # ETS on TC 0 and 1, strict on the others

CASES = {
    "valid": {},
    "bw180": {"rec": (UP2TC, [90, 90, 0, 0, 0, 0, 0, 0], TSA)},
    "tc9": {"rec": ([0, 0, 0, 1, 0, 9, 0, 0], BW, TSA)},
    "tsa9": {"rec": (UP2TC, BW, [2, 2, 9, 0, 0, 0, 0, 0])},
    "pfc_cap0_all": {"pfc": (0, 0xFF)},
    "pfc4": {"pfc": (8, 1 << 4)},
}

def frame(chassis, rec=(UP2TC, BW, TSA), pfc=(8, 1 << 3)):
    mac = ":".join("%02x" % b for b in chassis)
    return (Ether(dst="01:80:c2:00:00:0e", src=mac, type=0x88CC)
            / LLDPDUChassisID(subtype=4, id=bytes(chassis))
            / LLDPDUPortID(subtype=5, id=b"eth0")
            / LLDPDUTimeToLive(ttl=120)
            # ETS Configuration: not willing, CBS 0, MaxTCs 0 (= 8)
            / Org(org_code=0x0080C2, subtype=9, data=bytes([0]) + tables(UP2TC, BW, TSA))
            # ETS Recommendation: one reserved byte, then the tables
            / Org(org_code=0x0080C2, subtype=10, data=bytes([0]) + tables(*rec))
            # PFC Configuration: not willing, MBC 0, capability; enable bitmap
            / Org(org_code=0x0080C2, subtype=11, data=bytes([pfc[0] & 0x0F, pfc[1]]))
            / LLDPDUEndOfLLDPDU())

def send(raw):
    while True:
        try:
            s.send(raw)
            return
        except OSError:                    # ENOBUFS: the veth queue is full
            time.sleep(0.001)

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "flood":
        template = bytearray(bytes(frame([0x06, 0x66, 0, 0, 0, 0], pfc=(8, 1 << 6))))
        for i in range(int(cmd[1])):
            n = i.to_bytes(4, "big")
            template[8:12] = n             # source MAC
            template[19:23] = n            # Chassis ID: bytes 17..23 (after type/len, subtype)
            send(template)
    else:
        raw = bytes(frame([2, 0, 0, 0, 0, 1], **CASES[cmd[0]]))
        for _ in range(3):
            send(raw)
            time.sleep(0.2)
    print("done", flush=True)
"#;

const PEER_MAC: &str = "02:00:00:00:00:01";

struct Host {
    p: Pair,
    agent: usize,
    state: String,
    peer: Child,
    to_peer: ChildStdin,
    from_peer: Receiver<String>,
}

impl Host {
    /// The pair, `lossless dcbx run` without --config in namespace b, the script written.
    fn start(tag: &str) -> Host {
        let mut p = Pair::new(tag);
        let state = p.dir.join("host.json").to_str().unwrap().to_owned();
        let script = p.dir.join("peer.py");
        std::fs::write(&script, PEER_PY).unwrap();
        let (b, ib) = (p.b.clone(), p.ib.clone());
        let agent = p.spawn(
            &b,
            &[lossless(), "dcbx", "run", "--iface", &ib, "--state", &state],
            "host.log",
        );
        let mut peer = Command::new("ip")
            .args(["netns", "exec", &p.a, "python3"])
            .arg(&script)
            .arg(&p.ia)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(p.dir.join("peer.err")).unwrap())
            .spawn()
            .expect("python3");
        let to_peer = peer.stdin.take().unwrap();
        let out = BufReader::new(peer.stdout.take().unwrap());
        let (tx, from_peer) = channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let h = Host {
            p,
            agent,
            state,
            peer,
            to_peer,
            from_peer,
        };
        h.answer("ready");
        h
    }

    fn answer(&self, want: &str) {
        match self.from_peer.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line == want => {}
            other => panic!(
                "peer.py: {other:?} instead of {want:?}: {}",
                self.p.log("peer.err")
            ),
        }
    }

    /// Has the peer in namespace a send `cmd`, and waits until it has.
    fn peer(&mut self, cmd: &[&str]) {
        writeln!(self.to_peer, "{}", cmd.join(" ")).unwrap();
        self.to_peer.flush().unwrap();
        self.answer("done");
    }

    fn show(&self, json: bool) -> String {
        let mut args = vec![
            lossless(),
            "dcbx",
            "show",
            "--iface",
            &self.p.ib,
            "--state",
            &self.state,
        ];
        if json {
            args.push("--json");
        }
        String::from_utf8_lossy(&self.p.exec(&self.p.b, &args).stdout).into_owned()
    }

    /// Waits until the state satisfies `f`.
    fn wait(&self, what: &str, f: impl Fn(&Value) -> bool) -> Value {
        self.p.wait_for(Duration::from_secs(15), what, || {
            let v: Value = serde_json::from_str(&self.show(true)).ok()?;
            f(&v).then_some(v)
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.peer.kill();
        let _ = self.peer.wait();
    }
}

fn adopted(v: &Value, enable: u64) -> bool {
    let o = &v["operational"];
    o["pfc"]["source"] == "peer"
        && o["pfc"]["params"]["enable"] == enable
        && o["ets"]["source"] == "peer"
        && o["ets"]["params"]["tcbw"] == json!([50, 50, 0, 0, 0, 0, 0, 0])
}

#[test]
fn hostile_peer_each_invalid_tlv_is_refused_with_its_reason_and_operational_keeps_the_last_valid_state() {
    let test =
        "hostile_peer_each_invalid_tlv_is_refused_with_its_reason_and_operational_keeps_the_last_valid_state";
    if !ready(test, &["ip", "python3"]) || !lossless_testkit::require_python_module("scapy", test) {
        return;
    }
    let mut h = Host::start("hp");
    h.peer(&["valid"]);
    let valid = h.wait("the host to adopt the peer's PFC [3] and ETS 50/50", |v| {
        adopted(v, 1 << 3)
    });
    assert_eq!(valid["remote"]["src_mac"], PEER_MAC);
    let valid_oper = valid["operational"].clone();
    let cases = [
        ("bw180", "ets_recommendation", "tcbw sums to 180%, ETS needs 100%"),
        (
            "tc9",
            "ets_recommendation",
            "up2tc[5] = 9 is not a traffic class 0..=7",
        ),
        (
            "tsa9",
            "ets_recommendation",
            "tsa[2] = 9 is reserved (allowed 0 strict, 1 cbs, 2 ets, 255 vendor)",
        ),
        (
            "pfc_cap0_all",
            "pfc_configuration",
            "priorities [0, 1, 2, 3, 4, 5, 6, 7] enabled in 2 traffic class(es), more than the capability 0",
        ),
    ];
    let mut refused_before = valid["statistics"]["dcbx_tlvs_rejected_total"].as_u64().unwrap();
    assert_eq!(refused_before, 0);
    for (case, tlv, reason) in cases {
        h.peer(&[case]);
        let v = h.wait(&format!("{case} to be refused"), |v| {
            v["remote"]["rejected"]
                .as_array()
                .is_some_and(|r| r.len() == 1 && r[0]["tlv"] == tlv)
        });
        let r = &v["remote"]["rejected"][0];
        assert_eq!(r["reason"], reason, "{case}: {v}");
        assert_eq!(v["operational"], valid_oper, "{case}: last valid state kept: {v}");
        assert!(
            v["remote"][if tlv == "pfc_configuration" {
                "pfc"
            } else {
                "ets_recommendation"
            }]
            .is_null(),
            "{case}: the refused values are not shown as the peer's: {v}"
        );
        let refused = v["statistics"]["dcbx_tlvs_rejected_total"].as_u64().unwrap();
        assert!(refused > refused_before, "{case}: counted: {v}");
        refused_before = refused;
        let human = h.show(false);
        assert!(
            human.contains(&format!("refused:     peer's {tlv}: {reason}")),
            "{case}: {human}"
        );
        assert!(
            human.contains("operational: PFC enable [3] (peer)"),
            "{case}: {human}"
        );
        // A valid LLDPDU between the cases, so each is judged against the same last state.
        h.peer(&["valid"]);
        h.wait("the refusal to clear", |v| {
            v["remote"]["rejected"].as_array().is_some_and(Vec::is_empty)
        });
    }
    let log = h.p.log("host.log");
    for (_, _, reason) in cases {
        assert_eq!(
            log.matches(&format!("{reason}; operational keeps its last valid value"))
                .count(),
            1,
            "each refusal logged once: {log}"
        );
    }
    // Not stuck: a valid change is followed.
    h.peer(&["pfc4"]);
    h.wait("the host to follow the peer's PFC [4]", |v| adopted(v, 1 << 4));
}

#[test]
fn a_flood_of_new_chassis_ids_keeps_the_real_peer_and_the_log_short() {
    let test = "a_flood_of_new_chassis_ids_keeps_the_real_peer_and_the_log_short";
    if !ready(test, &["ip", "python3"]) || !lossless_testkit::require_python_module("scapy", test) {
        return;
    }
    let mut h = Host::start("fl");
    h.peer(&["valid"]);
    h.wait("the host to adopt the real peer", |v| adopted(v, 1 << 3));
    const ROGUES: u64 = 20_000;
    h.peer(&["flood", &ROGUES.to_string()]);
    let v = h.wait("the flood to be received", |v| {
        v["statistics"]["frames_discarded_total"].as_u64().unwrap_or(0) >= 500
    });
    assert!(adopted(&v, 1 << 3), "the real peer is kept: {v}");
    assert_eq!(v["remote"]["src_mac"], PEER_MAC);
    assert_eq!(v["neighbours"].as_array().unwrap().len(), 4, "bounded table: {v}");
    // The real peer changes its configuration during the rogues' TTL: followed at once.
    h.peer(&["pfc4"]);
    h.wait("the host to follow the real peer's PFC [4]", |v| {
        adopted(v, 1 << 4)
    });
    let st = h.p.terminate(h.agent);
    assert!(st.success());
    let log = h.p.log("host.log");
    let discarded = log
        .matches("too many neighbours: new neighbour discarded")
        .count();
    assert!((1..=10).contains(&discarded), "{discarded} lines:\n{log}");
    let suppressed: u64 = log
        .lines()
        .filter(|l| l.contains("more \"too many neighbours\" lines suppressed"))
        .map(|l| {
            let after = l.split(": ").nth(1).unwrap();
            after.split_whitespace().next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    let counted = v["statistics"]["frames_discarded_total"].as_u64().unwrap();
    assert!(
        suppressed + discarded as u64 >= counted,
        "every discarded frame is logged or counted: {suppressed} + {discarded} < {counted}\n{log}"
    );
    assert!(log.len() < 64 * 1024, "{} bytes of log", log.len());
}
