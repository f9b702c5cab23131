//! Document 003 §3.2 in the simulator: congestion spreads from the oversubscribed red link
//! hop by hop back to all three clients, without losing a lossless frame.

mod common;

use common::{drops_of_priority, load, run};

const LOSSLESS: u8 = 3;
const LOSSY: u8 = 0;

fn pfc_received(r: &lossless_sim::Report, node: &str, peer: &str) -> u64 {
    let port = r
        .port(node, peer)
        .unwrap_or_else(|| panic!("port {node} → {peer}"));
    port.priorities
        .iter()
        .filter(|q| q.priority == LOSSLESS)
        .map(|q| q.pfc_xoff_received_frames)
        .sum()
}

#[test]
fn congestion_spreads_to_every_client_without_losing_a_lossless_frame() {
    let r = run(load("four-bridge", &[], None));
    // first hop: bridge 4 pauses bridges 1–3
    for b in ["bridge1", "bridge2", "bridge3"] {
        assert!(
            pfc_received(&r, b, "bridge4") > 0,
            "{b} was not paused by bridge4"
        );
    }
    // second hop: bridges 1–3 pause clients 1–3
    for i in 1..=3 {
        let (c, b) = (format!("client{i}"), format!("bridge{i}"));
        assert!(pfc_received(&r, &c, &b) > 0, "{c} received no PFC from {b}");
        let paused = r
            .port(&c, &b)
            .unwrap()
            .priorities
            .iter()
            .find(|q| q.priority == LOSSLESS)
            .unwrap()
            .paused_ps;
        assert!(paused > 0, "{c} was never paused");
    }
    // nothing lossless is lost; the sink never pauses anyone (it keeps up)
    assert_eq!(r.lossless_drops(), 0);
    assert_eq!(drops_of_priority(&r, LOSSLESS), 0);
    assert_eq!(pfc_received(&r, "bridge4", "sink"), 0);
}

#[test]
fn lossy_frames_are_dropped_at_the_bottleneck_only() {
    let r = run(load("four-bridge", &[], None));
    let at_bridge4: u64 = r
        .ports
        .iter()
        .filter(|p| p.node == "bridge4")
        .flat_map(|p| &p.priorities)
        .filter(|q| q.priority == LOSSY)
        .map(|q| q.drops_frames.get("tail_drop").copied().unwrap_or(0))
        .sum();
    assert!(at_bridge4 > 0, "no lossy drop at bridge4");
    assert_eq!(
        drops_of_priority(&r, LOSSY),
        at_bridge4,
        "lossy drops elsewhere than bridge4"
    );
}

#[test]
fn the_victim_flow_loses_throughput_without_crossing_the_red_link() {
    let r = run(load("four-bridge", &[], None));
    let v = r.flow("victim").expect("victim flow");
    assert_eq!(v.dropped_frames, 0);
    // offered 20 Gb/s on a path with 100 Gb/s links everywhere; PFC head-of-line blocking
    // holds it well below that
    assert!(
        v.throughput_bps < v.offered_bps * 3 / 4,
        "victim got {} of {}",
        v.throughput_bps,
        v.offered_bps
    );
    assert!(v.throughput_bps > 0);
    // the server's link itself is never congested
    let server = r.port("bridge4", "server").unwrap();
    assert!(server.priorities.iter().all(|q| q.pfc_xoff_received_frames == 0));
}

#[test]
fn without_pfc_lossless_frames_are_lost_and_with_pfc_none_are() {
    let off = run(load("four-bridge", &["defaults.flow_control=\"off\""], None));
    assert!(
        drops_of_priority(&off, LOSSLESS) > 0,
        "PFC off lost no lossless frame"
    );
    let on = run(load("four-bridge", &[], None));
    assert_eq!(drops_of_priority(&on, LOSSLESS), 0);
}

#[test]
fn link_pause_instead_of_pfc_also_loses_nothing_but_stops_the_lossy_class_too() {
    let r = run(load("four-bridge", &["defaults.flow_control=\"pause\""], None));
    assert_eq!(drops_of_priority(&r, LOSSLESS), 0);
    let c1 = r.port("client1", "bridge1").unwrap();
    assert!(c1.pause_xoff_received_frames > 0);
}

#[test]
fn ets_gives_each_class_its_half_of_the_red_link() {
    let r = run(load("four-bridge", &[], None));
    let red = r.port("bridge4", "sink").unwrap();
    let share = |p: u8| {
        red.priorities
            .iter()
            .find(|q| q.priority == p)
            .map_or(0, |q| q.tx_throughput_bps)
    };
    // 40 Gb/s of wire time split 50/50 between TC 0 (priority 0) and TC 1 (priority 3);
    // frame bytes are 1522 of every 1542 bytes of wire time
    for p in [LOSSY, LOSSLESS] {
        let got = share(p);
        assert!(
            (19_000_000_000..=20_000_000_000).contains(&got),
            "priority {p}: {got} b/s"
        );
    }
}

#[test]
fn congestion_spreads_hop_by_hop_bridge4_first_then_each_bridge() {
    use lossless_proto::flow_control::ControlFrame;
    use lossless_proto::units::Instant;
    use lossless_sim::frame::PortId;
    use lossless_sim::observer::{Observer, WireFrame};
    use std::collections::BTreeMap;

    #[derive(Default)]
    struct FirstXoff(BTreeMap<PortId, Instant>);
    impl Observer for FirstXoff {
        fn tx_start(&mut self, port: PortId, frame: &WireFrame, start: Instant, _: Instant) {
            if let WireFrame::Control(ControlFrame::Pfc { enable_vector, time }) = frame
                && enable_vector & (1 << LOSSLESS) != 0
                && time[LOSSLESS as usize] != 0
            {
                self.0.entry(port).or_insert(start);
            }
        }
    }
    let c = load("four-bridge", &[], None);
    // ports: link i has 2i at `a`, 2i + 1 at `b`; links 0..3 client_i–bridge_i, 3..6 bridge_i–bridge4
    let mut sim = lossless_sim::Simulator::with_observer(c, FirstXoff::default()).unwrap();
    sim.run();
    let first = &sim.observer().0;
    for i in 0..3u32 {
        let bridge_to_client = 2 * i + 1; // bridge_i's port on link i
        let bridge4_to_bridge = 2 * (3 + i) + 1; // bridge4's port on link 3 + i
        let hop1 = first
            .get(&bridge4_to_bridge)
            .copied()
            .expect("bridge4 paused bridge");
        let hop2 = first
            .get(&bridge_to_client)
            .copied()
            .expect("bridge paused client");
        assert!(
            hop1 < hop2,
            "bridge{}: client paused at {hop2} before bridge4 paused the bridge at {hop1}",
            i + 1
        );
    }
}

#[test]
fn a_client_that_ignores_pfc_overflows_its_bridges_headroom() {
    use lossless_sim::scenario::{BUILTINS, Overrides, load_str};
    let text = BUILTINS[0].text.replace(
        "[[link]]\na = \"client1\"\nb = \"bridge1\"\n",
        "[[link]]\na = \"client1\"\nb = \"bridge1\"\na_end = { flow_control = \"off\" }   # the NIC ignores PFC\n",
    );
    assert_ne!(text, BUILTINS[0].text, "the edit did not apply");
    let c = load_str(&text, "misconfigured.toml", None, &Overrides::default()).unwrap();
    let r = run(c);
    let client = r.port("client1", "bridge1").unwrap();
    let c3 = client.priorities.iter().find(|q| q.priority == LOSSLESS).unwrap();
    assert!(
        c3.pfc_xoff_received_frames > 0,
        "bridge1 still asks client1 to stop"
    );
    assert_eq!(c3.paused_ps, 0, "but client1 never stops");
    let at_bridge1 = r.port("bridge1", "client1").unwrap();
    let overflow: u64 = at_bridge1
        .priorities
        .iter()
        .filter(|q| q.priority == LOSSLESS)
        .map(|q| q.drops_frames.get("headroom_overflow").copied().unwrap_or(0))
        .sum();
    assert!(overflow > 0, "no headroom overflow at bridge1");
    // the other clients obey and lose nothing
    for i in 2..=3 {
        let p = r.port(&format!("bridge{i}"), &format!("client{i}")).unwrap();
        assert!(
            p.priorities
                .iter()
                .all(|q| q.priority != LOSSLESS || q.drops_frames.is_empty())
        );
    }
}

#[test]
fn a_port_counts_received_what_its_peer_sent_less_the_wire_and_a_host_what_its_flows_delivered() {
    let r = run(load("four-bridge", &[], None));
    for p in &r.ports {
        let peer = r
            .ports
            .iter()
            .find(|o| o.node == p.peer && o.peer == p.node)
            .expect("the peer port");
        for q in &p.priorities {
            let sent = peer
                .priorities
                .iter()
                .find(|o| o.priority == q.priority)
                .map_or(0, |o| o.tx_frames);
            // a frame sent and not received is on the wire (nothing is lost in four-bridge)
            assert!(q.rx_frames <= sent, "{}→{} pri {}", p.node, p.peer, q.priority);
        }
    }
    // at each sink, the frames received are the frames its flows delivered (counted apart)
    let mut received_by_hosts = 0;
    for host in r
        .flows
        .iter()
        .map(|f| f.dst.as_str())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let rx: u64 = r
            .ports
            .iter()
            .filter(|p| p.node == host)
            .flat_map(|p| &p.priorities)
            .map(|q| q.rx_frames)
            .sum();
        let delivered: u64 = r
            .flows
            .iter()
            .filter(|f| f.dst == host)
            .map(|f| f.delivered_frames)
            .sum();
        assert_eq!(rx, delivered, "{host}");
        received_by_hosts += rx;
    }
    assert!(received_by_hosts > 0);
}
