//! Document 002 end to end: MAC0 turns module A's fc_rdy into PAUSE frames, MAC1 obeys them;
//! release case 1 sends a PAUSE with time 0 and MAC1 resumes at once, case 2 sends nothing and
//! MAC1 resumes when the last pause runs out. Times asserted to the picosecond.

mod common;

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::{Duration, Instant};
use lossless_sim::frame::PortId;
use lossless_sim::observer::{Observer, WireFrame};
use lossless_sim::{Report, Simulator};

#[derive(Default)]
struct Tx {
    control: Vec<(PortId, ControlFrame, Instant)>,
    data: Vec<(PortId, Instant)>,
}

impl Observer for Tx {
    fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, _last_bit: Instant) {
        match frame {
            WireFrame::Control(c) => self.control.push((port, *c, start)),
            WireFrame::Data(_) => self.data.push((port, start)),
            WireFrame::Lldp { .. } => panic!("two-chip runs no DCBX"),
        }
    }
}

const MAC0: PortId = 0; // module_a's port (the link's `a` end)
const MAC1: PortId = 1; // module_b's port

fn at_ns(ns: u64) -> Instant {
    Instant::ZERO + Duration::from_ns(ns)
}
fn at_ps(ps: u128) -> Instant {
    Instant::from_ps(ps)
}

fn run() -> (Tx, Report) {
    let c = common::load("two-chip", &[], None);
    let mut sim = Simulator::with_observer(c, Tx::default()).unwrap();
    sim.run();
    let r = Report::collect(&sim);
    r.check().unwrap();
    let tx = std::mem::take(sim.observer_mut());
    (tx, r)
}

#[test]
fn mac0_sends_xoff_refreshes_and_one_xon_for_case_1_only() {
    let (tx, r) = run();
    let sent: Vec<(u16, Instant)> = tx
        .control
        .iter()
        .map(|&(p, c, t)| {
            assert_eq!(p, MAC0, "only MAC0 sends control frames");
            match c {
                ControlFrame::Pause { quanta } => (quanta, t),
                other => panic!("PFC frame {other:?} on a PAUSE link"),
            }
        })
        .collect();
    // interval = 512 quanta × 51.2 ns = 26.2144 µs
    assert_eq!(
        sent,
        vec![
            (1024, at_ns(10_000)),
            (1024, at_ps(36_214_400)),
            (0, at_ns(50_000)), // case 1: released inside the interval → XON
            (1024, at_ns(150_000)),
            (1024, at_ps(176_214_400)),
            // case 2: released at 202.4288 µs, exactly at the end of the interval → nothing
        ]
    );
    let a = r.port("module_a", "module_b").unwrap();
    assert_eq!((a.pause_xoff_sent_frames, a.pause_xon_sent_frames), (4, 1));
    let b = r.port("module_b", "module_a").unwrap();
    assert_eq!(
        (b.pause_xoff_received_frames, b.pause_xon_received_frames),
        (4, 1)
    );
}

#[test]
fn mac1_resumes_at_once_on_xon_and_when_the_timer_runs_out_in_case_2() {
    let (tx, _) = run();
    let data: Vec<Instant> = tx.data.iter().filter(|d| d.0 == MAC1).map(|d| d.1).collect();
    assert!(
        tx.data.iter().all(|d| d.0 == MAC1),
        "MAC0 sent own data (module A sends none)"
    );
    // reception of a control frame ends 57.6 ns (72 bytes at 10G) + 10 ns (2 m) after its start
    let arrival = Duration::from_ps(57_600 + 10_000);
    let reaction = Duration::from_ps(60 * 51_200); // 802.3 limit at 10G: 60 quanta
    let first_xoff_rx = at_ns(10_000) + arrival;
    // MAC1 starts nothing in [r + reaction delay, XON reception)
    let xon_rx = at_ns(50_000) + arrival;
    assert!(
        !data.iter().any(|&t| t >= first_xoff_rx + reaction && t < xon_rx),
        "MAC1 sent while paused (case 1)"
    );
    // case 1: resumes the instant the XON has arrived
    assert!(data.contains(&xon_rx), "MAC1 did not resume at the XON's arrival");
    // case 2: the last XOFF (sent 176.2144 µs) reaches MAC1 at +67.6 ns; its 1024 quanta
    // (52.4288 µs) then run out
    let resume = at_ps(176_214_400) + arrival + Duration::from_ps(1024 * 51_200);
    let second_xoff_rx = at_ns(150_000) + arrival;
    assert!(
        !data.iter().any(|&t| t >= second_xoff_rx + reaction && t < resume),
        "MAC1 sent while paused (case 2)"
    );
    assert!(
        data.contains(&resume),
        "MAC1 did not resume when the pause ran out"
    );
}

/// The identifier of VCD signal `name` in port scope `scope`, read from the header.
fn vcd_id(text: &str, scope: &str, name: &str) -> String {
    let mut current = "";
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["$scope", "module", s, "$end"] => current = s,
            ["$var", _, _, id, n, "$end"] if current == scope && *n == name => {
                return id.to_string();
            }
            ["$enddefinitions", ..] => break,
            _ => {}
        }
    }
    panic!("no signal {scope}.{name} in the VCD header")
}

/// (time in ps, value) of every change of VCD signal `id` after the initial values (`b` vectors
/// and `s` strings alike).
fn vcd_changes(text: &str, id: &str) -> Vec<(u128, String)> {
    let mut t = 0u128;
    let mut out = Vec::new();
    let mut dumped = false;
    for line in text.lines() {
        if line == "$end" {
            dumped = true;
        } else if let Some(ts) = line.strip_prefix('#') {
            t = ts.parse().unwrap();
        } else if let Some((v, i)) = line
            .strip_prefix('b')
            .or_else(|| line.strip_prefix('s'))
            .and_then(|l| l.split_once(' '))
            && i == id
            && dumped
        {
            out.push((t, v.to_string()));
        }
    }
    out
}

fn two_chip_waveform() -> String {
    let c = common::load("two-chip", &[], None);
    let sink = lossless_sim::trace::vcd::VcdSink::new(&c, Vec::new()).unwrap();
    let mut sim = Simulator::with_observer(c, sink).unwrap();
    sim.run();
    sim.observer_mut().finish().unwrap();
    String::from_utf8(sim.observer().get_ref().clone()).unwrap()
}

const FC_RDY: [(u128, &str); 4] = [
    (10_000_000, "1"),
    (50_000_000, "0"),
    (150_000_000, "1"),
    (202_428_800, "0"),
];
// fc (MAC1 paused): from reception (+67.6 ns) + reaction delay (3.072 µs) until the XON
// arrives (case 1) or the last pause runs out (case 2)
const FC: [(u128, &str); 4] = [
    (13_139_600, "1"),
    (50_067_600, "0"),
    (153_139_600, "1"),
    (228_710_800, "0"),
];

fn owned(v: &[(u128, &str)]) -> Vec<(u128, String)> {
    v.iter().map(|&(t, s)| (t, s.to_string())).collect()
}

#[test]
fn the_waveform_shows_fc_rdy_and_fc_at_the_documented_instants() {
    let text = two_chip_waveform();
    // the engine's own signals: module A's request vector (bit 0 = fc_rdy on a PAUSE port) and
    // module B's paused vector
    let request = vcd_changes(&text, &vcd_id(&text, "module_a_0", "request"));
    assert_eq!(request, owned(&FC_RDY));
    let paused = vcd_changes(&text, &vcd_id(&text, "module_b_0", "paused"));
    assert_eq!(paused, owned(&FC));
}

#[test]
fn the_waveform_carries_document_002s_signal_names() {
    let text = two_chip_waveform();
    // fc_rdy on MAC0's side (module A raises it), fc on MAC1's side (MAC1 RX tells module B)
    let fc_rdy = vcd_changes(&text, &vcd_id(&text, "module_a_0", "fc_rdy"));
    assert_eq!(fc_rdy, owned(&FC_RDY));
    let fc = vcd_changes(&text, &vcd_id(&text, "module_b_0", "fc"));
    assert_eq!(fc, owned(&FC));
    // MAC0 TX state follows `tx` exactly, as text: every PAUSE frame is `pause`, back to `idle`
    let a = "module_a_0";
    let tx = vcd_changes(&text, &vcd_id(&text, a, "tx"));
    let state = vcd_changes(&text, &vcd_id(&text, a, "mac_tx_state"));
    let names = ["idle", "data", "pause", "lldp"];
    let from_tx: Vec<(u128, String)> = tx
        .iter()
        .map(|(t, v)| (*t, names[usize::from_str_radix(v, 2).unwrap()].to_string()))
        .collect();
    assert_eq!(state, from_tx);
    assert!(state.iter().any(|(_, s)| s == "pause"), "MAC0 sent PAUSE frames");
    assert!(
        text.contains(&format!(
            "$var string 1 {} mac_tx_state $end",
            vcd_id(&text, a, "mac_tx_state")
        )),
        "mac_tx_state is declared as a string"
    );
}

#[test]
fn mac0_holds_its_own_data_while_fc_rdy_is_high_and_never_cuts_a_frame() {
    use lossless_proto::units::Rate;
    use lossless_sim::config::traffic::{FlowSpec, Pattern};
    let mut c = common::load("two-chip", &[], Some(Duration::from_us(120)));
    // module A also sends: 3 Gb/s of full frames towards module B
    c.flows.push(FlowSpec {
        name: "a_to_b".into(),
        src: 0,
        dst: 1,
        priority: 0,
        mtu: 1500,
        pattern: Pattern::Cbr {
            rate: Rate::from_gbps(3),
        },
        start: Instant::ZERO,
        stop: Instant::MAX,
        size: None,
        transport: None,
    });
    let mut sim = Simulator::with_observer(c, Tx::default()).unwrap();
    sim.run();
    let tx = std::mem::take(sim.observer_mut());
    let frame_time = Duration::from_ps((1522 + 8) * 800); // preamble to last FCS bit at 10G
    let gap = Duration::from_ps(12 * 800);
    let own: Vec<Instant> = tx.data.iter().filter(|d| d.0 == MAC0).map(|d| d.1).collect();
    assert!(own.len() > 10, "module A sent too little: {}", own.len());
    // document 002 step 4: no own data while fc_rdy is high (10 µs … 50 µs)
    assert!(
        !own.iter().any(|&t| t >= at_ns(10_000) && t < at_ns(50_000)),
        "MAC0 sent data while fc_rdy was high"
    );
    // rule 1: the first XOFF goes out at fc_rdy's rise or right after the frame then on the wire
    let xoff = tx.control.iter().find(|c| c.0 == MAC0).unwrap().2;
    let busy = own
        .iter()
        .find(|&&t| t < at_ns(10_000) && t + frame_time + gap > at_ns(10_000));
    match busy {
        Some(&t) => assert_eq!(
            xoff,
            t + frame_time + gap,
            "XOFF did not wait for the frame in progress"
        ),
        None => assert_eq!(xoff, at_ns(10_000)),
    }
    // frames never overlap on MAC0's wire
    let mut starts: Vec<(Instant, Duration)> = own.iter().map(|&t| (t, frame_time + gap)).collect();
    starts.extend(
        tx.control
            .iter()
            .filter(|c| c.0 == MAC0)
            .map(|c| (c.2, Duration::from_ps((64 + 8 + 12) * 800))),
    );
    starts.sort();
    for w in starts.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "overlap at {:?}", w[1].0);
    }
}
