//! Document 003's picture of PFC ("lane 3 paused, the rest flowing"), end to end with exact
//! times: port 0 pauses priority 3 of port 1 with PFC, refreshes once and releases it with
//! XON; port 1's priority 1 fills the wire meanwhile and priority 3 resumes at the XON.
//!
//! 100 Gb/s (byte 80 ps, quantum 5,120 ps), 100 ns of cable. Port 0: pause 1000 quanta,
//! refresh 500 quanta. Port 1 reacts at once (reaction delay 0, so the lane switch is visible
//! at the reception instant) and sends 1000-byte frames (wire time 81,600 ps, last bit 80,640
//! ps after the start), priority 3 before priority 1 (strict priority).

mod flow_control_support;

use flow_control_support::{BackToBack, Script, What};
use lossless_proto::flow_control::{ControlFrame, FlowControlConfig};
use lossless_proto::units::{Duration, Instant, Rate};

fn ps(v: u128) -> Instant {
    Instant::from_ps(v)
}

#[test]
fn pfc_pauses_one_priority_while_the_others_keep_the_wire_busy() {
    let rate = Rate::from_gbps(100);
    let mut a = FlowControlConfig::pfc(rate, [2, 0, 0, 0, 0, 0xA], 0xFF);
    a.priorities[3].pause_quanta = 1000;
    a.priorities[3].refresh_quanta = 500;
    let mut b = FlowControlConfig::pfc(rate, [2, 0, 0, 0, 0, 0xB], 0xFF);
    b.reaction_delay = Duration::ZERO;
    let mut script = vec![
        (
            ps(1_000_000),
            Script::Request {
                port: 0,
                p: 3,
                asserted: true,
            },
        ),
        (
            ps(5_000_000),
            Script::Request {
                port: 0,
                p: 3,
                asserted: false,
            },
        ),
    ];
    for _ in 0..60 {
        script.push((
            ps(0),
            Script::Enqueue {
                port: 1,
                p: 3,
                bytes: 1000,
            },
        ));
        script.push((
            ps(0),
            Script::Enqueue {
                port: 1,
                p: 1,
                bytes: 1000,
            },
        ));
    }
    let mut b2b = BackToBack::new([a, b], Duration::from_ns(100), script);
    b2b.run_until(ps(20_000_000));

    let xoff = ControlFrame::Pfc {
        enable_vector: 0b1000,
        time: [0, 0, 0, 1000, 0, 0, 0, 0],
    };
    let xon = ControlFrame::Pfc {
        enable_vector: 0b1000,
        time: [0; 8],
    };
    let sent: Vec<_> = b2b
        .port_log(0)
        .filter_map(|r| match r.what {
            What::ControlStart(tx) => Some((r.t.as_ps(), tx.frame)),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent,
        vec![(1_000_000, xoff), (3_560_000, xoff), (5_000_000, xon)],
        "XOFF at the request, a refresh 500 quanta (2,560,000 ps) later, XON at the release"
    );

    // port 1's fc: only priority 3 changes; XOFF arrives 1,000,000 + 72 × 80 + 100,000
    let fc: Vec<_> = b2b
        .port_log(1)
        .filter_map(|r| match r.what {
            What::MayTransmit { p, may } => Some((r.t.as_ps(), p, may)),
            _ => None,
        })
        .collect();
    assert_eq!(fc, vec![(1_105_760, 3, false), (5_105_760, 3, true)]);

    let data: Vec<_> = b2b
        .port_log(1)
        .filter_map(|r| match r.what {
            What::DataStart { p, .. } => Some((r.t.as_ps(), p)),
            _ => None,
        })
        .collect();
    // priority 3 back to back until the pause: the frame started at 1,060,800 finishes
    for (k, &(t, p)) in data[..14].iter().enumerate() {
        assert_eq!((t, p), (k as u128 * 81_600, 3));
    }
    // then priority 1 owns the wire, back to back, from the next boundary
    for (j, &(t, p)) in data[14..14 + 49].iter().enumerate() {
        assert_eq!((t, p), (1_142_400 + j as u128 * 81_600, 1));
    }
    // the XON arrives during priority 1's frame started at 5,059,200; priority 3 goes next
    assert_eq!(data[14 + 49], (5_140_800, 3));

    let c1 = b2b.ports[1].fc.counters();
    assert_eq!(c1.indications[3], 3);
    assert_eq!(c1.rx_prio_pause[3], 2);
    assert_eq!(c1.rx_prio_xon[3], 1);
    assert_eq!(c1.rx_prio_pause_transition[3], 1);
    assert_eq!(c1.rx_prio_pause_duration[3], Duration::from_ps(4_000_000));
    assert_eq!(c1.rx_prio_pause_duration[1], Duration::ZERO);
    let c0 = b2b.ports[0].fc.counters();
    assert_eq!(c0.requests[3], 3);
    assert_eq!(c0.pfc_frames_transmitted, 3);
}
