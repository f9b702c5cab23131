//! No engine call allocates but an engine's first count, which builds its counters (once in
//! its life: most ports of a large fabric never count, and the counters are most of an
//! engine's memory): every public call of a busy PFC exchange (run-time reconfigurations
//! included) runs under a counting global allocator, and the count moves by one per engine.

use lossless_proto::flow_control::{FlowControl, FlowControlConfig, ReceivedBody, ReceivedControl};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn engine_calls_do_not_allocate() {
    let rate = Rate::from_gbps(100);
    let mut cfg = FlowControlConfig::pfc(rate, [2, 0, 0, 0, 0, 1], 0xFF);
    for pc in &mut cfg.priorities {
        pc.refresh_quanta = 50;
        pc.pause_quanta = 100;
        pc.hold_own_data = false;
    }
    let mut a = FlowControl::new(cfg).unwrap();
    let mut b = FlowControl::new(cfg).unwrap();
    // what `b` is switched between (as DCBX does): fewer priorities, off, PAUSE, another rate
    let mut half = cfg;
    for pc in &mut half.priorities[4..] {
        pc.enabled = false;
    }
    let mut slower = cfg;
    slower.rate = Rate::from_gbps(25);
    let mut invalid = cfg;
    invalid.priorities[0].pause_quanta = 0;
    let others = [
        cfg,
        half,
        FlowControlConfig::off(rate, [2, 0, 0, 0, 0, 1]),
        cfg,
        FlowControlConfig::pause(rate, [2, 0, 0, 0, 0, 1]),
        slower,
        invalid,
    ];
    let mut reconfigured = 0;
    let unknown = ReceivedControl {
        dst: [1, 0x80, 0xC2, 0, 0, 1],
        frame_len: 64,
        body: ReceivedBody::Unknown { opcode: 2 },
    };
    // Counted on the test's own thread only, so the harness's threads are not counted.
    let before = thread_allocations();
    // (reading the counters of an engine that counted nothing builds nothing)
    assert_eq!(a.counters().mac_control_frames_transmitted, 0);
    assert_eq!(b.counters().mac_control_frames_received, 0);
    assert_eq!(thread_allocations(), before, "reading zero counters allocated");
    let mut now = Instant::ZERO;
    let mut sent = 0;
    for i in 0..20_000u64 {
        let p = (i % 8) as u8;
        a.set_request(now, p, i % 3 != 0).unwrap();
        if let Some(tx) = a.poll_transmit(now) {
            sent += 1;
            b.handle_control_frame(tx.last_bit, &ReceivedControl::multicast(tx.frame));
        }
        if b.may_start_data(now.max(b.wire_free_at()), p) {
            let _ = b.on_tx_start(now.max(b.wire_free_at()), 64 + i % 9000, p);
        }
        b.handle_control_frame(now, &unknown);
        let _ = a.has_control_due(now);
        let _ = b.paused_mask(now);
        let _ = b.rx_pause_duration(now, p);
        let _ = a.tx_pause_duration(now, p);
        let _ = a.counters();
        if let Some(t) = b.poll_timeout() {
            b.handle_timeout(t);
        }
        if let Some(t) = a.poll_timeout() {
            a.handle_timeout(t);
        }
        if i % 97 == 0 {
            let c = others[(i / 97) as usize % others.len()];
            if b.reconfigure(now, c).is_ok() {
                reconfigured += 1;
            }
        }
        now = now.max(a.wire_free_at()) + Duration::from_ns(3);
    }
    let allocated = thread_allocations() - before;
    assert!(
        sent > 1000,
        "the loop exercised the transmit path ({sent} frames)"
    );
    assert!(b.counters().rx_prio_pause.iter().sum::<u64>() > 1000);
    assert!(reconfigured > 100, "the loop reconfigured ({reconfigured} times)");
    // `a` and `b` each built their counters at their first count, and nothing else allocated
    assert_eq!(
        allocated, 2,
        "engine calls allocated beyond the two engines' counters"
    );
}
