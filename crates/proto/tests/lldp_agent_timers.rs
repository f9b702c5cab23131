//! The 802.1AB transmit machine: fast start, msgTxInterval, credit, TTL and shutdown.

use lossless_proto::lldp_agent::{AgentConfig, LldpAgent, Timers};
use lossless_proto::units::{Duration, Instant};
use lossless_wire::lldp::{LldpduRepr, Tlv};

fn at(s: u64) -> Instant {
    Instant::ZERO + Duration::from_secs(s)
}

/// Runs an agent alone until `end_s`, returning when each frame went out and the frame.
fn run_alone(agent: &mut LldpAgent, end_s: u64) -> Vec<(Instant, Vec<u8>)> {
    let mut out = Vec::new();
    let mut now = Instant::ZERO;
    let end = at(end_s);
    loop {
        while let Some(f) = agent.poll_transmit(now) {
            out.push((now, f));
        }
        match agent.poll_timeout() {
            Some(t) if t <= end => {
                now = now.max(t);
                agent.handle_timeout(now);
            }
            _ => return out,
        }
    }
}

fn ttl_of(frame: &[u8]) -> u16 {
    let d = LldpduRepr::parse(&frame[14..]);
    assert!(d.error.is_none(), "{:?}", d.error);
    d.tlvs
        .iter()
        .find_map(|t| if let Tlv::Ttl(t) = t { Some(*t) } else { None })
        .expect("TTL TLV")
}

#[test]
fn fast_start_sends_tx_fast_init_frames_msg_fast_tx_apart_then_every_msg_tx_interval() {
    let mut a = LldpAgent::new(AgentConfig::new([2, 0, 0, 0, 0, 1])).unwrap();
    let times: Vec<Instant> = run_alone(&mut a, 100).into_iter().map(|(t, _)| t).collect();
    assert_eq!(times, vec![at(0), at(1), at(2), at(3), at(33), at(63), at(93)]);
    assert_eq!(a.statistics().frames_out_total, 7);
}

#[test]
fn ttl_is_interval_times_hold_plus_one_capped_at_65535() {
    let mut a = LldpAgent::new(AgentConfig::new([2, 0, 0, 0, 0, 1])).unwrap();
    let frames = run_alone(&mut a, 0);
    assert_eq!(ttl_of(&frames[0].1), 121);
    let mut cfg = AgentConfig::new([2, 0, 0, 0, 0, 1]);
    cfg.timers = Timers {
        msg_tx_interval: Duration::from_secs(10),
        msg_tx_hold: 2,
        ..Timers::default()
    };
    assert_eq!(cfg.timers.ttl_secs(), 21);
    cfg.timers.msg_tx_interval = Duration::from_secs(20_000);
    cfg.timers.msg_tx_hold = 10;
    assert_eq!(cfg.timers.ttl_secs(), 65535);
}

#[test]
fn configured_timers_change_the_schedule() {
    let mut cfg = AgentConfig::new([2, 0, 0, 0, 0, 1]);
    cfg.timers = Timers {
        msg_tx_interval: Duration::from_secs(5),
        msg_fast_tx: Duration::from_ms(200),
        tx_fast_init: 2,
        ..Timers::default()
    };
    let mut a = LldpAgent::new(cfg).unwrap();
    let times: Vec<Instant> = run_alone(&mut a, 12).into_iter().map(|(t, _)| t).collect();
    let ms = |m: u64| Instant::ZERO + Duration::from_ms(m);
    assert_eq!(times, vec![ms(0), ms(200), ms(5200), ms(10200)]);
}

#[test]
fn local_changes_are_rate_limited_by_tx_credit_max_and_refill_one_per_second() {
    let mut a = LldpAgent::new(AgentConfig::new([2, 0, 0, 0, 0, 1])).unwrap();
    let now = at(100);
    a.start(now);
    let mut sent = 0;
    for i in 0..10u8 {
        a.set_local_tlvs(now, vec![Tlv::SystemName(vec![b'a' + i])])
            .unwrap();
        while a.poll_transmit(now).is_some() {
            sent += 1;
        }
    }
    assert_eq!(sent, 5, "txCreditMax = 5 frames at one instant");
    assert_eq!(a.tx_credit(), 0);
    a.set_local_tlvs(now, vec![Tlv::SystemName(b"final".to_vec())])
        .unwrap();
    assert!(a.poll_transmit(now).is_none());
    assert_eq!(a.poll_timeout(), Some(at(101)), "next credit in one second");
    a.handle_timeout(at(101));
    assert!(a.poll_transmit(at(101)).is_some(), "one credit came back");
    assert!(a.poll_transmit(at(101)).is_none());
}

#[test]
fn shutdown_sends_one_ttl_zero_lldpdu_then_stays_silent_until_reinit_delay() {
    let mut cfg = AgentConfig::new([2, 0, 0, 0, 0, 1]);
    cfg.system_name = Some("sw1".into());
    let mut a = LldpAgent::new(cfg).unwrap();
    assert!(a.poll_transmit(at(0)).is_some());
    a.shutdown(at(5));
    let f = a.poll_transmit(at(5)).expect("shutdown LLDPDU");
    assert_eq!(ttl_of(&f), 0);
    let d = LldpduRepr::parse(&f[14..]);
    assert_eq!(
        d.tlvs.len(),
        4,
        "Chassis ID, Port ID, TTL 0, End only: {:?}",
        d.tlvs
    );
    assert!(a.poll_transmit(at(5)).is_none());
    assert!(
        a.poll_transmit(at(60)).is_none(),
        "stopped agents do not transmit"
    );
    assert!(!a.start(at(6)), "reinitDelay of 2 s not over");
    assert!(a.start(at(7)));
    assert_eq!(ttl_of(&a.poll_transmit(at(7)).unwrap()), 121);
}

#[test]
fn frames_are_padded_to_the_ethernet_minimum_and_addressed_to_the_nearest_bridge() {
    let mut a = LldpAgent::new(AgentConfig::new([2, 0, 0, 0, 0, 1])).unwrap();
    let f = a.poll_transmit(at(0)).unwrap();
    assert!(f.len() >= 60);
    assert_eq!(f[..6], [0x01, 0x80, 0xc2, 0, 0, 0x0e]);
    assert_eq!(f[6..12], [2, 0, 0, 0, 0, 1]);
    assert_eq!(f[12..14], [0x88, 0xcc]);
}

#[test]
fn zero_timers_and_empty_table_are_rejected() {
    let mut cfg = AgentConfig::new([2, 0, 0, 0, 0, 1]);
    cfg.timers.tx_credit_max = 0;
    let e = LldpAgent::new(cfg.clone()).unwrap_err();
    assert!(e.to_string().contains("txCreditMax"), "{e}");
    cfg.timers.tx_credit_max = 5;
    cfg.max_neighbours = 0;
    assert!(LldpAgent::new(cfg).is_err());
}

#[test]
fn link_down_stops_transmission_and_link_up_restarts_with_fast_start() {
    let mut a = LldpAgent::new(AgentConfig::new([2, 0, 0, 0, 0, 1])).unwrap();
    run_alone(&mut a, 40);
    a.link_down(at(41));
    assert!(
        a.poll_transmit(at(63)).is_none(),
        "no LLDPDU while the link is down"
    );
    a.link_up(at(70));
    let mut times = Vec::new();
    let mut now = at(70);
    while now <= at(75) {
        while a.poll_transmit(now).is_some() {
            times.push(now);
        }
        now = a.poll_timeout().unwrap();
        a.handle_timeout(now);
    }
    assert_eq!(
        times,
        vec![at(70), at(71), at(72), at(73)],
        "txFastInit frames after link-up"
    );
}
