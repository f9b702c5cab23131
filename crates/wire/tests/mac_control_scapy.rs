//! scapy (`scapy.contrib.mac_control`) as an independent peer: it decodes the PAUSE and PFC
//! frames we emit, and it builds frames that we decode. Skips loudly (fails with
//! LOSSLESS_REQUIRE_PEERS=1) when python3 or scapy is missing.

use lossless_testkit::{python, require, require_python_module};
use lossless_wire::ethernet::{EtherType, EthernetAddress, VlanTags};
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, Warnings, decode_frame, emit_frame};

const SRC: EthernetAddress = EthernetAddress([0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]);

fn have_scapy(test: &str) -> bool {
    require("python3", test).is_some() && require_python_module("scapy.contrib.mac_control", test)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Prints one line per frame: dst src type, then `pause T` or `pfc RESERVED E0..E7 T0..T7`.
const DECODE: &str = r#"
import sys
from scapy.layers.l2 import Ether
from scapy.contrib.mac_control import *
for h in FRAMES:
    p = Ether(bytes.fromhex(h))
    out = [p.dst, p.src, "%04x" % p.type]
    if MACControlPause in p:
        out += ["pause", str(p[MACControlPause].pause_time)]
    elif MACControlClassBasedFlowControl in p:
        c = p[MACControlClassBasedFlowControl]
        out += ["pfc", str(c._reserved)]
        out += [str(getattr(c, "c%d_enabled" % i)) for i in range(8)]
        out += [str(getattr(c, "c%d_pause_time" % i)) for i in range(8)]
    else:
        out += ["other"]
    print(" ".join(out))
"#;

#[test]
fn scapy_decodes_our_pause_and_pfc_frames_to_the_same_fields() {
    if !have_scapy("scapy_decodes_our_pause_and_pfc_frames") {
        return;
    }
    let station = EthernetAddress([0x00, 0x1b, 0x21, 0x11, 0x22, 0x33]);
    let cases = [
        (
            EthernetAddress::MAC_CONTROL,
            MacControlRepr::Pause { pause_time: 0 },
        ),
        (
            EthernetAddress::MAC_CONTROL,
            MacControlRepr::Pause { pause_time: 0xFFFF },
        ),
        (station, MacControlRepr::Pause { pause_time: 777 }),
        (
            EthernetAddress::MAC_CONTROL,
            MacControlRepr::pfc_xoff(0xFF, 0xFFFF),
        ),
        (EthernetAddress::MAC_CONTROL, MacControlRepr::pfc_xon(0x81)),
        (
            EthernetAddress::MAC_CONTROL,
            MacControlRepr::Pfc {
                priority_enable_vector: 0x5A5A,
                time: [1, 2, 3, 4, 5, 6, 7, 8],
            },
        ),
        (
            station,
            MacControlRepr::Pfc {
                priority_enable_vector: 0x0000,
                time: [0xFFFF; 8],
            },
        ),
    ];
    let frames: Vec<Vec<u8>> = cases
        .iter()
        .map(|(dst, r)| {
            let mut b = [0u8; 60];
            let n = emit_frame(SRC, *dst, r, FcsMode::Absent, &mut b).unwrap();
            b[..n].to_vec()
        })
        .collect();
    let list: Vec<String> = frames.iter().map(|f| format!("\"{}\"", hex(f))).collect();
    let script = format!("FRAMES = [{}]\n{DECODE}", list.join(", "));
    let out = python(&script);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        cases.len(),
        "scapy printed one line per frame:\n{out}"
    );
    for ((dst, repr), line) in cases.iter().zip(&lines) {
        let mut want = vec![dst.to_string(), SRC.to_string(), "8808".to_string()];
        match *repr {
            MacControlRepr::Pause { pause_time } => want.extend(["pause".into(), pause_time.to_string()]),
            MacControlRepr::Pfc {
                priority_enable_vector: v,
                time,
            } => {
                want.extend(["pfc".into(), (v >> 8).to_string()]);
                want.extend((0..8).map(|p| ((v >> p) & 1).to_string()));
                want.extend(time.iter().map(u16::to_string));
            }
            MacControlRepr::Unknown { .. } => unreachable!("no unknown opcodes in this table"),
        }
        assert_eq!(line.split(' ').collect::<Vec<_>>(), want, "{repr:?} to {dst}");
    }
}

/// scapy builds frames and prints `hex|expected fields`; we decode the hex.
const BUILD: &str = r#"
from scapy.layers.l2 import Ether, Dot1Q
from scapy.contrib.mac_control import *
MC = "01:80:c2:00:00:01"
SRC = "00:1b:21:aa:bb:cc"
frames = [
    Ether(dst=MC, src=SRC) / MACControlPause(pause_time=0),
    Ether(dst=MC, src=SRC) / MACControlPause(pause_time=65535),
    Ether(dst=MC, src=SRC) / MACControlPause(pause_time=4660),
    Ether(dst=MC, src=SRC) / MACControlClassBasedFlowControl(
        c0_enabled=1, c3_enabled=1, c7_enabled=1, c0_pause_time=65535, c3_pause_time=0x1234, c7_pause_time=1),
    Ether(dst=MC, src=SRC) / MACControlClassBasedFlowControl(
        _reserved=1, c5_enabled=1, c5_pause_time=0, c6_pause_time=99),
    Ether(dst=MC, src=SRC) / Dot1Q(prio=7, vlan=10) / MACControlClassBasedFlowControl(
        c2_enabled=1, c2_pause_time=300),
]
for f in frames:
    print(bytes(f).hex())
"#;

#[test]
fn we_decode_pause_and_pfc_frames_that_scapy_builds() {
    if !have_scapy("we_decode_pause_and_pfc_frames_that_scapy_builds") {
        return;
    }
    let out = python(BUILD);
    let frames: Vec<Vec<u8>> = out.lines().map(unhex).collect();
    assert_eq!(frames.len(), 6, "scapy built six frames:\n{out}");
    let pfc = |v: u16, time: [u16; 8]| MacControlRepr::Pfc {
        priority_enable_vector: v,
        time,
    };
    let want = [
        (MacControlRepr::Pause { pause_time: 0 }, Warnings::NONE),
        (MacControlRepr::Pause { pause_time: 65535 }, Warnings::NONE),
        (MacControlRepr::Pause { pause_time: 4660 }, Warnings::NONE),
        (pfc(0x0089, [65535, 0, 0, 0x1234, 0, 0, 0, 1]), Warnings::NONE),
        (
            pfc(0x0120, [0, 0, 0, 0, 0, 0, 99, 0]),
            Warnings::ENABLE_VECTOR_HIGH_BYTE,
        ),
        (pfc(0x0004, [0, 0, 300, 0, 0, 0, 0, 0]), Warnings::VLAN_TAGGED),
    ];
    for (i, (frame, (repr, warnings))) in frames.iter().zip(want).enumerate() {
        assert_eq!(
            frame.len(),
            60,
            "frame {i}: scapy pads to 64 bytes counting the FCS it omits"
        );
        let d = decode_frame(frame, FcsMode::Absent, None).unwrap();
        assert_eq!(d.control, repr, "frame {i}");
        assert_eq!(d.warnings, warnings, "frame {i}");
        assert_eq!(
            (d.ethernet.src, d.ethernet.dst),
            (SRC, EthernetAddress::MAC_CONTROL),
            "frame {i}"
        );
        if i < 5 {
            // Untagged frames are byte-for-byte what emit_frame builds from the decoded repr.
            let mut again = [0u8; 60];
            emit_frame(
                SRC,
                EthernetAddress::MAC_CONTROL,
                &d.control,
                FcsMode::Absent,
                &mut again,
            )
            .unwrap();
            assert_eq!(&again[..], &frame[..], "frame {i}: emit(parse(scapy bytes))");
        }
    }
    let tagged = decode_frame(&frames[5], FcsMode::Absent, None).unwrap();
    let VlanTags::Single(tag) = tagged.ethernet.tags else {
        panic!("{:?}", tagged.ethernet.tags)
    };
    assert_eq!(
        (tag.tpid, tag.pcp, tag.dei, tag.vid),
        (EtherType::VLAN_C_TAG, 7, false, 10)
    );
}
