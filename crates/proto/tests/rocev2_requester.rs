//! The requester, call by call: segmentation, AckReq, cumulative ACKs, NAK rewinds, stale and
//! impossible replies, the timer, the retry limit, and IRN's SACK-driven resends and BDP cap.

use lossless_proto::rocev2::{DataPacket, RcConfig, Recovery, Reply, Requester, RequesterState};
use lossless_proto::units::{Duration, Instant};

fn t(us: u64) -> Instant {
    Instant::ZERO + Duration::from_us(us)
}

fn gbn(rto_us: u64, max_retries: Option<u32>) -> RcConfig {
    RcConfig {
        rto: Duration::from_us(rto_us),
        max_retries,
        ..RcConfig::hpcc_ns3()
    }
}

fn irn(cap: u64) -> RcConfig {
    RcConfig {
        recovery: Recovery::Irn {
            bdp_cap_bytes: cap,
            rto_low: Duration::from_us(10),
            rto_high: Duration::from_us(50),
        },
        ..RcConfig::hpcc_ns3()
    }
}

fn send_all(r: &mut Requester, now: Instant) -> Vec<DataPacket> {
    std::iter::from_fn(|| r.poll_transmit(now)).collect()
}

fn psns(ps: &[DataPacket]) -> Vec<u32> {
    ps.iter().map(|p| p.psn).collect()
}

fn ack(psn: u32) -> Reply {
    Reply::Ack { psn, msn: 0 }
}

#[test]
fn message_is_cut_at_the_mtu_with_first_last_and_ack_req_on_the_last() {
    let mut r = Requester::new(
        RcConfig {
            psn_start: 0xFF_FFFE,
            ..RcConfig::hpcc_ns3()
        },
        2500,
    )
    .unwrap();
    assert_eq!(r.message_packets(), 3);
    let ps = send_all(&mut r, t(0));
    let shape: Vec<_> = ps
        .iter()
        .map(|p| (p.psn, p.offset, p.payload, p.first, p.last, p.ack_req))
        .collect();
    assert_eq!(
        shape,
        [
            (0xFF_FFFE, 0, 1000, true, false, false),
            (0xFF_FFFF, 1000, 1000, false, false, false),
            (0, 2000, 500, false, true, true), // the PSN wraps
        ]
    );
    assert!(ps.iter().all(|p| !p.retransmission));
    assert_eq!(r.counters().tx_bytes, 2500);
    assert_eq!(r.outstanding_bytes(), 2500);
}

#[test]
fn an_empty_message_is_one_empty_packet() {
    let mut r = Requester::new(RcConfig::hpcc_ns3(), 0).unwrap();
    let ps = send_all(&mut r, t(0));
    assert_eq!(ps.len(), 1);
    assert_eq!(
        (ps[0].payload, ps[0].first, ps[0].last, ps[0].ack_req),
        (0, true, true, true)
    );
    r.handle_reply(t(1), ack(0));
    assert!(r.is_complete());
}

#[test]
fn an_ack_acknowledges_every_packet_up_to_its_psn() {
    let mut r = Requester::new(RcConfig::hpcc_ns3(), 5000).unwrap();
    send_all(&mut r, t(0));
    r.handle_reply(t(1), ack(2));
    assert_eq!(r.counters().acked_bytes, 3000);
    assert_eq!(r.oldest_unacked_psn(), 3);
    assert!(!r.is_complete());
    r.handle_reply(t(2), ack(4));
    assert!(r.is_complete());
    assert_eq!(r.state(), RequesterState::Complete);
    assert_eq!(r.poll_transmit(t(3)), None);
}

#[test]
fn stale_and_impossible_replies_are_counted_and_change_nothing() {
    let mut r = Requester::new(RcConfig::hpcc_ns3(), 5000).unwrap();
    send_all(&mut r, t(0));
    r.handle_reply(t(1), ack(2));
    r.handle_reply(t(2), ack(2)); // duplicate
    r.handle_reply(t(2), ack(1)); // older
    r.handle_reply(t(2), Reply::Nak { psn: 1, msn: 0 }); // NAK for an acknowledged PSN
    assert_eq!(r.counters().stale_replies, 3);
    r.handle_reply(t(3), ack(7)); // never sent
    r.handle_reply(t(3), Reply::Nak { psn: 6, msn: 0 }); // expects a PSN beyond the next to send
    r.handle_reply(t(3), Reply::Ack { psn: 1 << 24, msn: 0 }); // not 24 bits
    r.handle_reply(
        t(3),
        Reply::Sack {
            cum_psn: 3,
            sack_psn: 4,
            msn: 0,
        },
    ); // SACK to go-back-N
    assert_eq!(r.counters().invalid_replies, 4);
    assert_eq!(r.oldest_unacked_psn(), 3);
    assert_eq!(r.counters().acked_bytes, 3000);
    assert_eq!(r.counters().packet_seq_err, 0);
    assert_eq!(r.poll_transmit(t(4)), None, "nothing was rewound");
}

#[test]
fn a_nak_acknowledges_what_precedes_it_and_rewinds_to_its_psn() {
    let mut r = Requester::new(RcConfig::hpcc_ns3(), 7000).unwrap();
    let first = send_all(&mut r, t(0));
    assert_eq!(psns(&first[..5]), [0, 1, 2, 3, 4]);
    let mut r2 = Requester::new(RcConfig::hpcc_ns3(), 7000).unwrap();
    for _ in 0..5 {
        r2.poll_transmit(t(0));
    }
    r2.handle_reply(t(1), Reply::Nak { psn: 2, msn: 0 });
    assert_eq!(r2.counters().acked_bytes, 2000);
    assert_eq!(r2.counters().packet_seq_err, 1);
    let again = send_all(&mut r2, t(2));
    assert_eq!(psns(&again), [2, 3, 4, 5, 6]);
    let retx: Vec<bool> = again.iter().map(|p| p.retransmission).collect();
    assert_eq!(retx, [true, true, true, false, false]);
    assert_eq!(r2.counters().retransmitted_packets, 3);
    assert_eq!(r2.counters().retransmitted_bytes, 3000);
}

#[test]
fn a_nak_beyond_a_rewound_next_psn_skips_what_the_responder_has() {
    let mut r = Requester::new(gbn(10, None), 6000).unwrap();
    send_all(&mut r, t(0));
    r.handle_timeout(t(10)); // rewinds to 0
    r.handle_reply(t(11), Reply::Nak { psn: 4, msn: 0 });
    assert_eq!(psns(&send_all(&mut r, t(11))), [4, 5]);
}

#[test]
fn timer_runs_from_the_first_transmission_and_restarts_on_each_ack() {
    let mut r = Requester::new(gbn(10, None), 3000).unwrap();
    assert_eq!(r.poll_timeout(), None);
    r.poll_transmit(t(0));
    r.poll_transmit(t(1));
    r.poll_transmit(t(2));
    assert_eq!(
        r.poll_timeout(),
        Some(t(10)),
        "not restarted by later transmissions"
    );
    r.handle_reply(t(5), ack(0));
    assert_eq!(r.poll_timeout(), Some(t(15)));
    r.handle_timeout(t(14));
    assert_eq!(r.counters().local_ack_timeout_err, 0, "too early");
    r.handle_timeout(t(15));
    assert_eq!(r.counters().local_ack_timeout_err, 1);
    assert_eq!(r.poll_timeout(), None, "re-armed by the next transmission");
    let p = r.poll_transmit(t(16)).unwrap();
    assert_eq!((p.psn, p.retransmission), (1, true));
    assert_eq!(r.poll_timeout(), Some(t(26)));
    r.handle_reply(t(17), ack(2));
    assert_eq!(r.poll_timeout(), None, "complete");
}

#[test]
fn rto_zero_never_arms_a_timer() {
    let mut r = Requester::new(RcConfig::hpcc_ns3(), 3000).unwrap();
    send_all(&mut r, t(0));
    assert_eq!(r.poll_timeout(), None);
    r.handle_timeout(t(1_000_000));
    assert_eq!(r.counters().local_ack_timeout_err, 0);
    assert_eq!(
        r.poll_transmit(t(1_000_000)),
        None,
        "stalls: the reference has no timeout either"
    );
}

#[test]
fn retry_limit_fails_the_requester_after_that_many_retries_without_progress() {
    let mut r = Requester::new(gbn(10, Some(2)), 3000).unwrap();
    r.poll_transmit(t(0));
    r.handle_timeout(t(10));
    r.poll_transmit(t(10));
    r.handle_timeout(t(20));
    assert_eq!(r.state(), RequesterState::Active);
    r.poll_transmit(t(20));
    r.handle_timeout(t(30));
    assert!(r.is_failed());
    let c = r.counters();
    assert_eq!(
        (c.local_ack_timeout_err, c.req_transport_retries_exceeded),
        (3, 1)
    );
    assert_eq!(r.poll_transmit(t(31)), None);
    assert_eq!(r.poll_timeout(), None);
    r.handle_reply(t(32), ack(2));
    assert!(r.is_failed(), "a failed QP stays failed");
}

#[test]
fn an_ack_with_news_gives_the_retries_back_and_a_nak_uses_one() {
    let mut r = Requester::new(gbn(10, Some(2)), 4000).unwrap();
    r.poll_transmit(t(0));
    r.poll_transmit(t(0));
    r.handle_timeout(t(10));
    r.handle_reply(t(11), Reply::Nak { psn: 0, msn: 0 });
    r.handle_reply(t(12), ack(0));
    r.handle_reply(t(13), Reply::Nak { psn: 1, msn: 0 });
    r.poll_transmit(t(13));
    r.handle_timeout(t(23));
    assert_eq!(r.state(), RequesterState::Active);
    r.poll_transmit(t(23));
    r.handle_timeout(t(33));
    assert!(r.is_failed());
    assert_eq!(r.counters().packet_seq_err, 2);

    let mut strict = Requester::new(gbn(10, Some(0)), 4000).unwrap();
    strict.poll_transmit(t(0));
    strict.poll_transmit(t(0));
    strict.handle_reply(t(1), Reply::Nak { psn: 1, msn: 0 });
    assert!(strict.is_failed(), "retry_cnt 0: the first NAK is fatal");
    assert_eq!(
        strict.counters().acked_bytes,
        1000,
        "the NAK's implied ACK still counts"
    );
}

#[test]
fn irn_stops_at_the_bdp_cap_and_asks_for_an_ack_on_the_last_packet_it_may_send() {
    let mut r = Requester::new(irn(3500), 10_000).unwrap();
    let ps = send_all(&mut r, t(0));
    assert_eq!(psns(&ps), [0, 1, 2]);
    assert_eq!(
        ps.iter().map(|p| p.ack_req).collect::<Vec<_>>(),
        [false, false, true]
    );
    assert_eq!(r.outstanding_bytes(), 3000);
    r.handle_reply(t(1), ack(0));
    assert_eq!(psns(&send_all(&mut r, t(1))), [3]);
}

#[test]
fn irn_short_last_packet_fits_where_a_full_one_would_not() {
    // 3 full packets (3000) + a 400-byte last one = 3400 <= 3500
    let mut r = Requester::new(irn(3500), 3400).unwrap();
    assert_eq!(send_all(&mut r, t(0)).len(), 4);
    assert_eq!(r.outstanding_bytes(), 3400);
}

#[test]
fn irn_sack_resends_exactly_the_packets_sent_before_the_sacked_one() {
    let mut r = Requester::new(irn(100_000), 8000).unwrap();
    assert_eq!(send_all(&mut r, t(0)).len(), 8);
    // 0 in order; 1 and 2 lost; 3 arrives out of order
    r.handle_reply(
        t(1),
        Reply::Sack {
            cum_psn: 1,
            sack_psn: 3,
            msn: 0,
        },
    );
    assert_eq!(r.counters().acked_bytes, 1000);
    let resent = send_all(&mut r, t(1));
    assert_eq!(psns(&resent), [1, 2]);
    assert!(resent.iter().all(|p| p.retransmission));
    // 4 arrives: nothing more is lost
    r.handle_reply(
        t(2),
        Reply::Sack {
            cum_psn: 1,
            sack_psn: 4,
            msn: 0,
        },
    );
    assert_eq!(send_all(&mut r, t(2)), []);
    // in channel order: 5, 6, 7 arrive (SACKed), the resent 1 arrives (the hole up to 1
    // fills: ACK 1), the resent 2 is lost. Nothing sent after it arrives, so only the timer
    // can find it.
    for s in 5..8 {
        r.handle_reply(
            t(3),
            Reply::Sack {
                cum_psn: 1,
                sack_psn: s,
                msn: 0,
            },
        );
    }
    r.handle_reply(t(3), ack(1));
    assert_eq!(send_all(&mut r, t(3)), []);
    assert_eq!(r.poll_timeout(), Some(t(3 + 50)));
    r.handle_timeout(t(53));
    assert_eq!(psns(&send_all(&mut r, t(53))), [2]);
    assert_eq!(r.counters().sacks_received, 5);
}

#[test]
fn irn_lost_resend_is_found_when_a_later_transmission_is_acknowledged() {
    let mut r = Requester::new(irn(100_000), 4000).unwrap();
    send_all(&mut r, t(0)); // 0 1 2 3
    r.handle_reply(
        t(1),
        Reply::Sack {
            cum_psn: 0,
            sack_psn: 2,
            msn: 0,
        },
    ); // 0 and 1 lost
    assert_eq!(psns(&send_all(&mut r, t(1))), [0, 1]);
    r.handle_reply(
        t(1),
        Reply::Sack {
            cum_psn: 0,
            sack_psn: 3,
            msn: 0,
        },
    );
    // resent 0 lost again, resent 1 arrives: SACKed, which proves the resent 0 lost
    r.handle_reply(
        t(2),
        Reply::Sack {
            cum_psn: 0,
            sack_psn: 1,
            msn: 0,
        },
    );
    let again = send_all(&mut r, t(2));
    assert_eq!(psns(&again), [0]);
    r.handle_reply(t(3), ack(3));
    assert!(r.is_complete());
    assert_eq!(r.counters().retransmitted_packets, 3);
}

#[test]
fn irn_timeout_uses_rto_low_for_few_packets_and_resends_all_not_sacked() {
    let mut r = Requester::new(irn(100_000), 6000).unwrap();
    r.poll_transmit(t(0));
    r.poll_transmit(t(0));
    assert_eq!(r.poll_timeout(), Some(t(10)), "2 outstanding: rto_low");
    send_all(&mut r, t(1));
    assert_eq!(r.poll_timeout(), Some(t(51)), "6 outstanding: rto_high");
    r.handle_reply(
        t(2),
        Reply::Sack {
            cum_psn: 0,
            sack_psn: 5,
            msn: 0,
        },
    );
    // 0..4 are now known lost; resend two of them, then let the timer fire
    assert_eq!(r.poll_transmit(t(3)).map(|p| p.psn), Some(0));
    assert_eq!(r.poll_transmit(t(3)).map(|p| p.psn), Some(1));
    r.handle_timeout(t(53));
    assert_eq!(r.counters().local_ack_timeout_err, 1);
    assert_eq!(psns(&send_all(&mut r, t(53))), [0, 1, 2, 3, 4], "5 was SACKed");
}

#[test]
fn irn_ignores_a_nak_and_counts_it_invalid() {
    let mut r = Requester::new(irn(100_000), 3000).unwrap();
    send_all(&mut r, t(0));
    r.handle_reply(t(1), Reply::Nak { psn: 1, msn: 0 });
    assert_eq!(r.counters().invalid_replies, 1);
    assert_eq!(r.counters().acked_bytes, 0);
}

#[test]
fn newest_msn_is_kept() {
    let mut r = Requester::new(RcConfig::hpcc_ns3(), 2000).unwrap();
    send_all(&mut r, t(0));
    r.handle_reply(t(1), Reply::Ack { psn: 0, msn: 0 });
    r.handle_reply(t(2), Reply::Ack { psn: 1, msn: 1 });
    assert_eq!(r.msn().value(), 1);
}

#[test]
fn time_going_backwards_is_taken_as_the_latest_seen() {
    let mut r = Requester::new(gbn(10, None), 2000).unwrap();
    r.poll_transmit(t(100));
    r.poll_transmit(t(5));
    assert_eq!(r.now(), t(100));
    assert_eq!(r.poll_timeout(), Some(t(110)));
}
