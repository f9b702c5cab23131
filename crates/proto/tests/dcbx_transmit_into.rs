//! `Agent::poll_transmit_into` sends the same frames as `poll_transmit` into the caller's
//! buffer, and allocates nothing once that buffer has grown to a frame's size.

use lossless_proto::dcbx::config::AppPriority;
use lossless_proto::dcbx::{Agent, DcbxConfig};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::units::{Duration, Instant};
use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations as allocs};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn agent() -> Agent {
    let mut lldp = AgentConfig::new([0x02, 0, 0, 0, 0, 7]);
    lldp.port_name = Some("eth7".into());
    lldp.system_name = Some("host-7".into());
    let dcbx = DcbxConfig {
        app: vec![AppPriority {
            selector: 1,
            protocol: 0x8906,
            priority: 3,
        }],
        ..DcbxConfig::default()
    };
    Agent::new(lldp, dcbx).unwrap()
}

/// Every frame the agent sends over `secs` seconds of timers and then a shutdown, drained
/// with `drain`.
fn run(mut drain: impl FnMut(&mut Agent, Instant) -> Vec<Vec<u8>>, secs: u64) -> Vec<(Instant, Vec<u8>)> {
    let mut a = agent();
    let mut out = Vec::new();
    let mut now = Instant::ZERO;
    a.handle_timeout(now);
    let end = Instant::ZERO + Duration::from_secs(secs);
    loop {
        out.extend(drain(&mut a, now).into_iter().map(|f| (now, f)));
        match a.poll_timeout() {
            Some(t) if t <= end => {
                now = now.max(t);
                a.handle_timeout(now);
            }
            _ => break,
        }
    }
    a.shutdown(now);
    out.extend(drain(&mut a, now).into_iter().map(|f| (now, f)));
    out
}

#[test]
fn poll_transmit_into_sends_the_same_frames_as_poll_transmit() {
    let by_value = run(
        |a, now| std::iter::from_fn(|| a.poll_transmit(now)).collect(),
        120,
    );
    let mut buf = Vec::new();
    let into = run(
        |a, now| {
            let mut v = Vec::new();
            while a.poll_transmit_into(now, &mut buf) {
                v.push(buf.clone());
            }
            v
        },
        120,
    );
    assert!(
        by_value.len() > 5,
        "fast start, periodic and shutdown frames: {}",
        by_value.len()
    );
    assert_eq!(into, by_value);
    // The shutdown LLDPDU carries TTL 0 and is the last frame.
    let last = &into.last().unwrap().1;
    let d = lossless_wire::lldp::LldpduRepr::parse(&last[14..]);
    assert!(d.tlvs.contains(&lossless_wire::lldp::Tlv::Ttl(0)), "{:?}", d.tlvs);
}

#[test]
fn poll_transmit_into_leaves_the_buffer_alone_when_nothing_is_due() {
    let mut a = agent();
    a.handle_timeout(Instant::ZERO);
    let mut buf = Vec::new();
    while a.poll_transmit_into(Instant::ZERO, &mut buf) {}
    let kept = buf.clone();
    assert!(!kept.is_empty());
    assert!(!a.poll_transmit_into(Instant::ZERO, &mut buf));
    assert_eq!(buf, kept);
}

#[test]
fn poll_transmit_into_a_reused_buffer_allocates_nothing() {
    let mut a = agent();
    let mut now = Instant::ZERO;
    a.handle_timeout(now);
    let mut buf = Vec::with_capacity(1518);
    let mut sent = 0;
    let mut in_transmit = 0;
    while now < Instant::ZERO + Duration::from_secs(300) {
        let before = allocs();
        while a.poll_transmit_into(now, &mut buf) {
            sent += 1;
        }
        in_transmit += allocs() - before;
        let Some(t) = a.poll_timeout() else { break };
        now = t;
        a.handle_timeout(now);
    }
    assert!(sent > 10, "{sent} frames");
    assert_eq!(in_transmit, 0, "allocations while sending {sent} frames");
    let control = allocs();
    let _frame = a.poll_transmit(now + Duration::from_secs(30));
    assert!(allocs() > control, "the counter sees poll_transmit's allocation");
}
