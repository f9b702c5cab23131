//! Engine errors on the hot path are never ignored: they stop the run as a reported fault.

use lossless_proto::ets::{EtsConfig, PortParams, Scheduler};
use lossless_wire::lldp::Tsa;

use crate::Report;
use crate::report::CheckError;
use crate::scenario::{self, Overrides};
use crate::selection::{Ets, PortSelection};
use crate::sim::Simulator;

#[test]
fn a_frame_the_ets_scheduler_refuses_stops_the_run_with_an_engine_fault() {
    let c = scenario::load("ets-7-13-80", &Overrides::default()).unwrap();
    let mut sim = Simulator::new(c).unwrap();
    // a scheduler built for 1000-byte frames on the sender's port: 1522-byte frames are refused
    let cfg = EtsConfig::new(8, [0, 1, 2, 3, 4, 5, 6, 7].map(Some), [Tsa::STRICT; 8], [0; 8]).unwrap();
    let small = PortParams {
        max_frame_bytes: 1000,
        ..PortParams::new(sim.ports[0].rate)
    };
    sim.ports[0].sel = PortSelection::Ets(Box::new(Ets(Scheduler::ieee(&cfg, &small).unwrap())));
    sim.run();
    let fault = sim.fault().expect("the refusal is a fault").to_string();
    assert!(fault.contains("port 0") && fault.contains("1522"), "{fault}");
    // the scenario runs 1 ms; the fault ended it at the first refused frame
    assert!(
        sim.end().as_ps() < 1_000_000_000,
        "the run stopped at {}",
        sim.end()
    );
    assert_eq!(sim.now(), sim.end());
    let r = Report::collect(&sim);
    assert!(
        matches!(r.check(), Err(CheckError::EngineFault(_))),
        "{:?}",
        r.check()
    );
    assert!(r.summary().contains("ENGINE FAULT"));
}

/// The hand layout of `Port` (a performance property at fabric scale, see its doc): what every
/// event reads stays in the first cache line, what a frame's start and arrival read beside it
/// in the second, the engine and the queue headers start lines.
#[test]
fn port_hot_fields_stay_in_the_first_cache_line() {
    use std::mem::{align_of, offset_of, size_of};

    use lossless_proto::units::Duration;

    use super::Port;
    assert_eq!(align_of::<Port>(), 64);
    assert!(
        offset_of!(Port, prop) + size_of::<Duration>() <= 64,
        "prop ends at {}",
        offset_of!(Port, prop) + size_of::<Duration>()
    );
    for off in [
        offset_of!(Port, node),
        offset_of!(Port, fault),
        offset_of!(Port, sel),
        offset_of!(Port, cn),
    ] {
        assert!(off < 64, "a hot field at {off}");
    }
    // a frame's start and arrival: the second line (the wire, its lost entries, the owed
    // end's flag, tie and time, the INT and DSCP flags)
    assert_eq!(offset_of!(Port, inflight), 64);
    for off in [
        offset_of!(Port, tx_end_tie),
        offset_of!(Port, wire_lost),
        offset_of!(Port, peer_trusts_dscp),
        offset_of!(Port, tx_end_owed),
        offset_of!(Port, int_stamp),
    ] {
        assert!((64..128).contains(&off), "a frame's field at {off}");
    }
    assert_eq!(
        offset_of!(Port, tx_end_at) + size_of::<lossless_proto::units::Instant>(),
        128
    );
    // the frame being sent: the third
    assert!(offset_of!(Port, current) + size_of::<Option<crate::frame::Frame>>() <= 192);
    assert_eq!(offset_of!(Port, queues) % 64, 0);
    assert_eq!(offset_of!(Port, mac) % 64, 0);
    // an odd number of lines: the ports' first lines spread over every set of a cache
    assert_eq!(
        size_of::<Port>() / 64 % 2,
        1,
        "a port of {} bytes",
        size_of::<Port>()
    );
}

/// An egress queue's frames, bytes, peak and the frames and bytes sent share one cache line:
/// an enqueue, a dequeue and the frame's start touch that line and no counter line.
#[test]
fn an_egress_queue_is_one_cache_line() {
    use std::mem::{align_of, size_of};

    use super::EgressQueue;
    assert_eq!((size_of::<EgressQueue>(), align_of::<EgressQueue>()), (64, 64));
}

/// The hand layout of `Switch` in `Node`: a frame's routing, admission and release touch the
/// node's first two cache lines only.
#[test]
fn a_switch_routes_and_buffer_totals_stay_in_its_first_two_cache_lines() {
    use std::mem::{align_of, offset_of, size_of};

    use super::fabric::routes::Routes;
    use super::{Node, Switch};
    use crate::scenario::{self, Overrides};
    assert_eq!(align_of::<Node>(), 64);
    let sim = Simulator::new(scenario::load("four-bridge", &Overrides::default()).unwrap()).unwrap();
    let mut switches = 0;
    for n in &sim.nodes {
        if let Node::Switch(sw) = n {
            switches += 1;
            let payload = sw as *const Switch as usize - n as *const Node as usize;
            assert!(payload + offset_of!(Switch, routes) + size_of::<Routes>() <= 64);
            // the totals and the pairs' vector: 72 bytes from the buffer's start
            assert!(payload + offset_of!(Switch, buffer) + 72 <= 128);
        }
    }
    assert!(switches > 0);
}

/// A transmitter's end that found nothing else to send is owed, not scheduled
/// (`Port::tx_end_owed`): where no two events share a time and a tie, owing them changes
/// nothing but the number of events, including in runs where PFC fires, pfcwd acts and
/// DCQCN reacts.
#[test]
fn owing_idle_transmitter_ends_changes_nothing_but_the_event_count() {
    let run = |name: &str, every_end: bool| {
        super::fabric::port::EVERY_TX_END_SCHEDULED.with(|c| c.set(every_end));
        let c = scenario::load(name, &Overrides::default()).unwrap();
        let mut sim = Simulator::new(c).unwrap();
        sim.run();
        super::fabric::port::EVERY_TX_END_SCHEDULED.with(|c| c.set(false));
        let mut r = serde_json::to_value(Report::collect(&sim)).unwrap();
        let events = r["events"].take().as_u64().unwrap();
        (r, events)
    };
    for name in [
        "four-bridge",
        "incast",
        "storm",
        "storm-pfcwd",
        "incast-dcqcn",
        "four-bridge-cn",
    ] {
        let (every, every_events) = run(name, true);
        let (owed, owed_events) = run(name, false);
        assert!(every == owed, "{name}: the reports differ beyond the event count");
        assert!(
            owed_events < every_events,
            "{name}: {owed_events} events with owed ends, {every_events} without"
        );
    }
}
