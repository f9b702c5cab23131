//! The responder, call by call: in-order delivery and ACK coalescing, one NAK per gap and the
//! re-NAK interval, duplicates ACKed again, malformed packets dropped, IRN's held packets,
//! SACKs and hole filling.

use lossless_proto::rocev2::{DataPacket, RcConfig, Recovery, Reply, Requester, Responder};
use lossless_proto::units::{Duration, Instant};

fn t(us: u64) -> Instant {
    Instant::ZERO + Duration::from_us(us)
}

/// The packets of a message as a requester cuts them (the responder checks the cut).
fn packets(cfg: &RcConfig, bytes: u64) -> Vec<DataPacket> {
    let mut r = Requester::new(
        RcConfig {
            recovery: Recovery::GoBackN,
            ..*cfg
        },
        bytes,
    )
    .unwrap();
    std::iter::from_fn(|| r.poll_transmit(Instant::ZERO)).collect()
}

fn ack(psn: u32, msn: u32) -> Option<Reply> {
    Some(Reply::Ack { psn, msn })
}

#[test]
fn in_order_packets_are_delivered_and_acked_every_ack_every_and_on_the_last() {
    let cfg = RcConfig {
        ack_every: 3,
        ..RcConfig::hpcc_ns3()
    };
    let ps = packets(&cfg, 6500);
    let mut r = Responder::new(cfg, 6500).unwrap();
    let replies: Vec<_> = ps.iter().map(|p| r.handle_data(t(0), p)).collect();
    let acks: Vec<_> = replies.iter().map(|x| x.reply).collect();
    assert_eq!(acks, [None, None, ack(2, 0), None, None, ack(5, 0), ack(6, 1)]);
    assert_eq!(replies.iter().map(|x| x.delivered_bytes).sum::<u64>(), 6500);
    assert!(r.is_complete());
    assert_eq!(r.msn().value(), 1);
    assert_eq!(r.counters().acks_sent, 3);
    assert_eq!(r.counters().delivered_packets, 7);
}

#[test]
fn ack_req_is_acked_at_once() {
    let cfg = RcConfig {
        ack_every: 100,
        ..RcConfig::hpcc_ns3()
    };
    let mut ps = packets(&cfg, 5000);
    ps[1].ack_req = true;
    let mut r = Responder::new(cfg, 5000).unwrap();
    assert_eq!(r.handle_data(t(0), &ps[0]).reply, None);
    assert_eq!(r.handle_data(t(0), &ps[1]).reply, ack(1, 0));
}

#[test]
fn a_gap_is_naked_once_then_dropped_until_the_interval_passes_or_the_expected_psn_moves() {
    let cfg = RcConfig {
        nak_min_interval: Duration::from_us(500),
        ..RcConfig::hpcc_ns3()
    };
    let ps = packets(&cfg, 10_000);
    let mut r = Responder::new(cfg, 10_000).unwrap();
    r.handle_data(t(0), &ps[0]);
    let nak = Some(Reply::Nak { psn: 1, msn: 0 });
    let x = r.handle_data(t(1), &ps[2]);
    assert_eq!((x.reply, x.delivered_bytes, x.duplicate), (nak, 0, false));
    assert_eq!(r.handle_data(t(2), &ps[3]).reply, None);
    assert_eq!(r.handle_data(t(500), &ps[4]).reply, None, "499 µs after the NAK");
    assert_eq!(r.handle_data(t(501), &ps[5]).reply, nak, "500 µs after the NAK");
    // the expected PSN moves: a new gap is NAKed at once
    assert_eq!(r.handle_data(t(502), &ps[1]).reply, ack(1, 0));
    assert_eq!(
        r.handle_data(t(503), &ps[3]).reply,
        Some(Reply::Nak { psn: 2, msn: 0 })
    );
    let c = r.counters();
    assert_eq!((c.out_of_sequence, c.naks_sent, c.naks_suppressed), (5, 3, 2));
    assert_eq!(r.delivered_bytes(), 2000);
}

#[test]
fn nak_interval_max_sends_one_nak_per_expected_psn() {
    let cfg = RcConfig {
        nak_min_interval: Duration::MAX,
        ..RcConfig::hpcc_ns3()
    };
    let ps = packets(&cfg, 4000);
    let mut r = Responder::new(cfg, 4000).unwrap();
    assert!(r.handle_data(t(0), &ps[1]).reply.is_some());
    assert_eq!(r.handle_data(t(1_000_000_000), &ps[2]).reply, None);
}

#[test]
fn a_duplicate_is_acked_again_with_the_newest_in_order_psn() {
    let cfg = RcConfig {
        ack_every: 8,
        psn_start: 0xFF_FFFF,
        ..RcConfig::hpcc_ns3()
    };
    let ps = packets(&cfg, 5000);
    let mut r = Responder::new(cfg, 5000).unwrap();
    r.handle_data(t(0), &ps[0]);
    r.handle_data(t(0), &ps[1]);
    r.handle_data(t(0), &ps[2]);
    let x = r.handle_data(t(1), &ps[0]);
    assert_eq!((x.reply, x.duplicate, x.delivered_bytes), (ack(1, 0), true, 0));
    assert_eq!(r.counters().duplicate_request, 1);
    assert_eq!(r.delivered_bytes(), 3000);
}

#[test]
fn packets_that_do_not_fit_the_message_are_dropped_unanswered() {
    let cfg = RcConfig::hpcc_ns3();
    let ps = packets(&cfg, 2500);
    let mut r = Responder::new(cfg, 2500).unwrap();
    let mut bad = vec![
        DataPacket { offset: 1, ..ps[0] },
        DataPacket {
            payload: 999,
            ..ps[0]
        },
        DataPacket {
            first: false,
            ..ps[0]
        },
        DataPacket { last: true, ..ps[1] },
        DataPacket {
            psn: 3,
            offset: 3000,
            ..ps[2]
        }, // beyond the message
        DataPacket {
            psn: 1 << 24,
            ..ps[0]
        }, // not 24 bits
        DataPacket {
            psn: 0xFF_FFFF,
            ..ps[0]
        }, // before the first PSN
    ];
    for p in bad.drain(..) {
        let x = r.handle_data(t(0), &p);
        assert_eq!((x.reply, x.delivered_bytes), (None, 0), "{p:?}");
    }
    assert_eq!(r.counters().malformed, 7);
    assert_eq!(r.delivered_bytes(), 0);
    assert_eq!(r.handle_data(t(0), &ps[0]).delivered_bytes, 1000);
}

fn irn(cap: u64) -> RcConfig {
    RcConfig {
        ack_every: 4,
        recovery: Recovery::Irn {
            bdp_cap_bytes: cap,
            rto_low: Duration::from_us(10),
            rto_high: Duration::from_us(50),
        },
        ..RcConfig::hpcc_ns3()
    }
}

#[test]
fn irn_holds_out_of_order_packets_sacks_each_and_delivers_when_the_hole_fills() {
    let cfg = irn(10_000);
    let ps = packets(&cfg, 6000);
    let mut r = Responder::new(cfg, 6000).unwrap();
    assert_eq!(r.handle_data(t(0), &ps[0]).reply, None, "coalesced");
    for i in [2, 3, 5] {
        let x = r.handle_data(t(0), &ps[i]);
        assert_eq!(
            x.reply,
            Some(Reply::Sack {
                cum_psn: 1,
                sack_psn: i as u32,
                msn: 0
            })
        );
        assert_eq!(x.delivered_bytes, 0);
    }
    assert_eq!(r.held_out_of_order(), 3);
    let again = r.handle_data(t(0), &ps[3]);
    assert!(again.duplicate);
    assert_eq!(
        again.reply,
        Some(Reply::Sack {
            cum_psn: 1,
            sack_psn: 3,
            msn: 0
        })
    );
    let fill = r.handle_data(t(1), &ps[1]);
    assert_eq!(
        (fill.delivered_bytes, fill.reply),
        (3000, ack(3, 0)),
        "1, 2, 3 delivered; ACKed at once"
    );
    assert_eq!(r.held_out_of_order(), 1);
    let fill = r.handle_data(t(2), &ps[4]);
    assert_eq!((fill.delivered_bytes, fill.reply), (2000, ack(5, 1)));
    assert!(r.is_complete());
    let c = r.counters();
    // the second 3 is both out of sequence and a duplicate
    assert_eq!(
        (
            c.out_of_sequence,
            c.duplicate_request,
            c.sacks_sent,
            c.delivered_bytes
        ),
        (4, 1, 4, 6000)
    );
}

#[test]
fn irn_drops_packets_beyond_the_window_a_requester_can_reach() {
    let cfg = irn(3000); // window: 3000 / 1000 + 1 = 4 packets
    let ps = packets(&cfg, 10_000);
    let mut r = Responder::new(cfg, 10_000).unwrap();
    assert!(r.handle_data(t(0), &ps[3]).reply.is_some());
    let x = r.handle_data(t(0), &ps[4]);
    assert_eq!(x.reply, None);
    assert_eq!(r.counters().out_of_window, 1);
    assert_eq!(r.held_out_of_order(), 1);
}
