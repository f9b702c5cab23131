//! Whole transfers over the test channel with chosen losses: how go-back-N and IRN recover
//! one lost packet, and what stalls without a timeout (as in the HPCC ns-3 reference, which
//! has none): a lost last packet, a lost final ACK.

mod rocev2_support;

use lossless_proto::rocev2::{RcConfig, Recovery};
use lossless_proto::units::{Duration, Rate};
use rocev2_support::{End, Link, Loss, run};

const LINK: Link = Link {
    rate: Rate::from_gbps(100),
    delay: Duration::from_us(1),
};

fn lose_data(i: usize) -> Loss {
    let mut data = vec![false; i + 1];
    data[i] = true;
    Loss {
        data,
        replies: vec![],
    }
}

#[test]
fn go_back_n_resends_from_the_naked_psn_without_a_timeout() {
    let o = run(&RcConfig::hpcc_ns3(), 10_000, LINK, &lose_data(3), 10_000);
    assert_eq!(o.end, End::Complete);
    assert!(o.violations.is_empty(), "{:?}", o.violations);
    let (rq, rs) = (o.requester.counters(), o.responder.counters());
    // all 10 were out before the NAK came back: 3..9 go again
    assert_eq!(rq.retransmitted_packets, 7);
    assert_eq!((rq.packet_seq_err, rs.naks_sent), (1, 1));
    assert_eq!(rs.out_of_sequence, 6, "4..9 dropped");
    assert_eq!(rs.naks_suppressed, 5, "one NAK per gap within 500 µs");
}

#[test]
fn irn_resends_only_the_lost_packet() {
    let cfg = RcConfig::irn_tlt();
    let o = run(&cfg, 10_000, LINK, &lose_data(3), 10_000);
    assert_eq!(o.end, End::Complete);
    assert!(o.violations.is_empty(), "{:?}", o.violations);
    let (rq, rs) = (o.requester.counters(), o.responder.counters());
    assert_eq!(rq.retransmitted_packets, 1);
    assert_eq!((rs.sacks_sent, rs.out_of_sequence), (6, 6));
    assert_eq!(
        o.sent
            .iter()
            .filter(|s| s.packet.retransmission)
            .map(|s| s.packet.psn)
            .collect::<Vec<_>>(),
        [3]
    );
}

#[test]
fn without_a_timeout_a_lost_last_packet_stalls_for_ever() {
    let o = run(&RcConfig::hpcc_ns3(), 10_000, LINK, &lose_data(9), 10_000);
    assert_eq!(o.end, End::Stalled);
    assert_eq!(o.delivered, 9_000);
    assert!(!o.requester.is_complete());
    assert_eq!(o.requester.poll_timeout(), None);
    assert_eq!(
        o.responder.counters().naks_sent,
        0,
        "nothing came after the lost packet"
    );
    // the same loss with a timeout: one timeout, one resend
    let cfg = RcConfig {
        rto: Duration::from_us(100),
        ..RcConfig::hpcc_ns3()
    };
    let o = run(&cfg, 10_000, LINK, &lose_data(9), 10_000);
    assert_eq!(o.end, End::Complete);
    let rq = o.requester.counters();
    assert_eq!((rq.local_ack_timeout_err, rq.retransmitted_packets), (1, 1));
}

#[test]
fn without_a_timeout_a_lost_final_ack_leaves_the_requester_waiting() {
    // ACK per packet: the 10th reply is the last packet's ACK
    let mut replies = vec![false; 10];
    replies[9] = true;
    let o = run(
        &RcConfig::hpcc_ns3(),
        10_000,
        LINK,
        &Loss {
            data: vec![],
            replies,
        },
        10_000,
    );
    assert_eq!(o.end, End::Stalled);
    assert!(o.responder.is_complete());
    assert!(!o.requester.is_complete());
    // with a timeout the requester resends the last packet, the responder ACKs the duplicate
    let cfg = RcConfig {
        rto: Duration::from_us(100),
        ..RcConfig::hpcc_ns3()
    };
    let mut replies = vec![false; 10];
    replies[9] = true;
    let o = run(
        &cfg,
        10_000,
        LINK,
        &Loss {
            data: vec![],
            replies,
        },
        10_000,
    );
    assert_eq!(o.end, End::Complete);
    assert_eq!(o.responder.counters().duplicate_request, 1);
}

#[test]
fn retry_limit_ends_a_transfer_whose_path_is_dead() {
    let cfg = RcConfig {
        rto: Duration::from_us(10),
        max_retries: Some(7),
        ..RcConfig::perftest(1024)
    };
    let o = run(
        &cfg,
        10_000,
        LINK,
        &Loss {
            data: vec![true; 1_000],
            replies: vec![],
        },
        100_000,
    );
    assert_eq!(o.end, End::Failed);
    let rq = o.requester.counters();
    assert_eq!(
        (rq.local_ack_timeout_err, rq.req_transport_retries_exceeded),
        (8, 1)
    );
    let irn = RcConfig {
        recovery: RcConfig::irn_tlt().recovery,
        max_retries: Some(3),
        ..RcConfig::hpcc_ns3()
    };
    assert!(matches!(irn.recovery, Recovery::Irn { .. }));
    let o = run(
        &irn,
        10_000,
        LINK,
        &Loss {
            data: vec![true; 1_000],
            replies: vec![],
        },
        100_000,
    );
    assert_eq!(o.end, End::Failed);
    assert_eq!(o.requester.counters().local_ack_timeout_err, 4);
}
