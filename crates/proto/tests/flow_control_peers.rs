//! The engine against external reference tools: scapy builds PAUSE/PFC frames the engine must
//! obey, and tshark and scapy decode the frames the engine sends. Skipped loudly when the tool
//! is missing (fails with LOSSLESS_REQUIRE_PEERS=1).

mod flow_control_support;

use flow_control_support::{BackToBack, Script, What};
use lossless_proto::flow_control::{
    ControlFrame, FlowControl, FlowControlConfig, ReceivedControl, RxOutcome,
};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_testkit::{python, require, require_python_module, tshark_fields, write_pcap};
use lossless_wire::fcs::FcsMode;

const ME: [u8; 6] = [0x02, 0, 0, 0, 0, 0x42];

fn hex(s: &str) -> Vec<u8> {
    let s = s.trim();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn scapy_built_pause_and_pfc_frames_are_obeyed() {
    if !require_python_module("scapy", "scapy_built_pause_and_pfc_frames_are_obeyed") {
        return;
    }
    let out = python(
        "from scapy.all import Ether\n\
         from scapy.contrib.mac_control import MACControlPause, MACControlClassBasedFlowControl as P\n\
         print(bytes(Ether(dst='01:80:c2:00:00:01', src='02:00:00:00:00:09')/MACControlPause(pause_time=0x0100)).hex())\n\
         print(bytes(Ether(dst='01:80:c2:00:00:01', src='02:00:00:00:00:09')/P(c3_enabled=1, c3_pause_time=0x0100, c5_enabled=1, c5_pause_time=0, c6_pause_time=7)).hex())\n\
         print(bytes(Ether(dst='02:00:00:00:00:42', src='02:00:00:00:00:09')/MACControlPause(pause_time=3)).hex())\n\
         print(bytes(Ether(dst='02:00:00:00:00:43', src='02:00:00:00:00:09')/MACControlPause(pause_time=3)).hex())\n",
    );
    let frames: Vec<Vec<u8>> = out.lines().map(hex).collect();
    assert_eq!(frames.len(), 4, "{out}");
    let rate = Rate::from_gbps(25);
    let q = rate.quanta_time(1);
    let decode = |b: &[u8]| ReceivedControl::decode(b, FcsMode::Absent).unwrap().unwrap();

    // link PAUSE of 256 quanta
    let mut cfg = FlowControlConfig::pause(rate, ME);
    cfg.reaction_delay = Duration::ZERO;
    let mut fc = FlowControl::new(cfg).unwrap();
    let rx = decode(&frames[0]);
    assert_eq!(rx.frame_len, 64, "60 bytes from scapy + 4 of FCS");
    let t0 = Instant::from_ps(1_000);
    assert_eq!(
        fc.handle_control_frame(t0, &rx),
        RxOutcome::Obeyed { priorities: 1 }
    );
    assert_eq!(fc.pause_until(t0, 0), Some(t0 + q.saturating_mul(256)));
    // to the own unicast address: obeyed; to another station: refused
    assert!(matches!(
        fc.handle_control_frame(t0, &decode(&frames[2])),
        RxOutcome::Obeyed { .. }
    ));
    assert!(matches!(
        fc.handle_control_frame(t0, &decode(&frames[3])),
        RxOutcome::Refused(_)
    ));

    // PFC: priority 3 paused 256 quanta, priority 5 released, priority 6 not enabled in the frame
    let mut cfg = FlowControlConfig::pfc(rate, ME, 0xFF);
    cfg.reaction_delay = Duration::ZERO;
    let mut fc = FlowControl::new(cfg).unwrap();
    let rx = decode(&frames[1]);
    assert_eq!(
        rx.body,
        lossless_proto::flow_control::ReceivedBody::Known(ControlFrame::Pfc {
            enable_vector: 0b0010_1000,
            time: [0, 0, 0, 256, 0, 0, 7, 0],
        })
    );
    assert_eq!(
        fc.handle_control_frame(t0, &rx),
        RxOutcome::Obeyed {
            priorities: 0b0010_1000
        }
    );
    assert_eq!(fc.paused_mask(t0), 0b0000_1000);
    assert_eq!(fc.pause_until(t0, 3), Some(t0 + q.saturating_mul(256)));
}

/// The frames port 0 sends in a small PFC exchange: bytes without FCS.
fn engine_frames() -> Vec<(ControlFrame, Vec<u8>)> {
    let rate = Rate::from_gbps(100);
    let mut a = FlowControlConfig::pfc(rate, ME, 0b1010_0001);
    for pc in &mut a.priorities {
        pc.pause_quanta = 0x2000;
        pc.refresh_quanta = 0x1000;
    }
    let b = FlowControlConfig::pfc(rate, [2, 0, 0, 0, 0, 0x43], 0b1010_0001);
    let us = |n: u128| Instant::from_ps(n * 1_000_000);
    let script = vec![
        (
            us(1),
            Script::Request {
                port: 0,
                p: 5,
                asserted: true,
            },
        ),
        (
            us(2),
            Script::Request {
                port: 0,
                p: 7,
                asserted: true,
            },
        ),
        (
            us(3),
            Script::Request {
                port: 0,
                p: 5,
                asserted: false,
            },
        ),
        (
            us(4),
            Script::Request {
                port: 0,
                p: 7,
                asserted: false,
            },
        ),
    ];
    let mut b2b = BackToBack::new([a, b], Duration::from_ns(10), script);
    b2b.run_until(us(100));
    b2b.port_log(0)
        .filter_map(|r| match r.what {
            What::ControlStart(tx) => {
                let mut buf = [0u8; 64];
                let n = tx.emit(FcsMode::Absent, &mut buf).unwrap();
                Some((tx.frame, buf[..n].to_vec()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn tshark_decodes_the_pfc_frames_the_engine_sends() {
    let Some(tshark) = require("tshark", "tshark_decodes_the_pfc_frames_the_engine_sends") else {
        return;
    };
    let frames = engine_frames();
    assert_eq!(frames.len(), 4, "XOFF 5, XOFF 5+7, XON 5 (7 held), XON 7");
    let dir = lossless_testkit::temp_dir("flow_control_tshark");
    let pcap = dir.join("pfc.pcap");
    write_pcap(&pcap, &frames.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>());
    let rows = tshark_fields(
        &tshark,
        &pcap,
        &[
            "eth.dst",
            "macc.opcode",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c5",
            "macc.cbfc.pause_time.c7",
        ],
        &[],
    );
    let want = [
        ["01:80:c2:00:00:01", "0x0101", "0x0020", "8192", "0"],
        ["01:80:c2:00:00:01", "0x0101", "0x00a0", "8192", "8192"],
        ["01:80:c2:00:00:01", "0x0101", "0x00a0", "0", "8192"],
        ["01:80:c2:00:00:01", "0x0101", "0x0080", "0", "0"],
    ];
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    for (row, w) in rows.iter().zip(want) {
        assert_eq!(row, &w.map(str::to_string).to_vec(), "{rows:?}");
    }
}

#[test]
fn scapy_decodes_the_pfc_frames_the_engine_sends() {
    if !require_python_module("scapy", "scapy_decodes_the_pfc_frames_the_engine_sends") {
        return;
    }
    let frames = engine_frames();
    let list: Vec<String> = frames
        .iter()
        .map(|(_, b)| format!("'{}'", b.iter().map(|x| format!("{x:02x}")).collect::<String>()))
        .collect();
    let out = python(&format!(
        "from scapy.all import Ether\n\
         from scapy.contrib.mac_control import MACControlClassBasedFlowControl as P\n\
         for h in [{}]:\n\
         \x20   p = Ether(bytes.fromhex(h))[P]\n\
         \x20   v = sum(getattr(p, 'c%d_enabled' % i) << i for i in range(8))\n\
         \x20   print(v, ' '.join(str(getattr(p, 'c%d_pause_time' % i)) for i in range(8)))\n",
        list.join(", ")
    ));
    let expect: Vec<String> = frames
        .iter()
        .map(|(f, _)| match f {
            ControlFrame::Pfc { enable_vector, time } => {
                format!("{enable_vector} {}", time.map(|t| t.to_string()).join(" "))
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), expect);
}
