//! Property tests: a requester and a responder over a lossy, reordering-free channel
//! (`rocev2_support`), random messages, MTUs, ACK coalescing, NAK intervals, timeouts, link
//! rates and delays, PSN starts and loss patterns of data packets and of replies. The oracle
//! reads only what crosses the wire and what the responder reports delivered.
//!
//! Each property was checked against a deliberately broken engine: the break applied by hand
//! to `crates/proto/src/rocev2/`, the properties run and seen failing as listed, the break
//! reverted (none is committed):
//! - go-back-N responder delivering an out-of-order packet as if the gap were not there: the
//!   four go-back-N and wrap properties fail ("delivered 1 bytes on the packet at offset 256
//!   while 0 were in order").
//! - IRN responder leaving a held packet's bit set when it delivers it: the four IRN and wrap
//!   properties fail ("delivered packet 65, which never arrived").
//! - requester taking an ACK of PSN p as acknowledging p + 1 too: all seven fail (bytes never
//!   delivered, stalls, and the BDP oracle sees the requester run ahead of the replies).
//! - NAK rewinding to the PSN after the one it carries: the three go-back-N properties fail
//!   (livelock: `StepLimit` after 25 000 retransmissions).
//! - IRN requester ignoring the SACKed PSN: `irn_resends_exactly_the_lost_transmissions*`
//!   fails (timeouts resend packets that had arrived).
//! - IRN cap check allowing one packet more: the three IRN properties fail ("342 bytes
//!   outstanding over the cap of 341").
//! - `Psn::distance_from` without the wrap (plain subtraction): `psn_wrap_keeps_delivery_exact`
//!   fails.

mod rocev2_support;

use lossless_proto::rocev2::{PSN_MASK, RcConfig, Recovery};
use lossless_proto::units::{Duration, Rate};
use proptest::prelude::*;
use rocev2_support::{End, Link, Loss, Outcome, run};

/// Far above what any case here needs (a few thousand events); a livelock ends here.
const STEPS: u64 = 100_000;

fn mtu() -> impl Strategy<Value = u32> {
    prop_oneof![Just(256u32), Just(1000), Just(1024), Just(4096)]
}

fn psn_start() -> impl Strategy<Value = u32> {
    prop_oneof![0..=PSN_MASK, (PSN_MASK - 100)..=PSN_MASK]
}

fn link() -> impl Strategy<Value = Link> {
    (prop_oneof![Just(10u64), Just(25), Just(100)], 0u64..5_000).prop_map(|(g, ns)| Link {
        rate: Rate::from_gbps(g),
        delay: Duration::from_ns(ns),
    })
}

fn nak_interval() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::from_us(1)),
        Just(Duration::from_us(20)),
        Just(Duration::from_us(500)),
        Just(Duration::MAX),
    ]
}

/// A loss pattern of up to `len` transmissions, each lost with a probability up to `max_p`.
fn pattern(max_p: f64, len: usize) -> impl Strategy<Value = Vec<bool>> {
    (0.0..max_p).prop_flat_map(move |p| prop::collection::vec(prop::bool::weighted(p), 0..len))
}

fn gbn_config() -> impl Strategy<Value = RcConfig> {
    (mtu(), 1u32..8, 20u64..2_000, nak_interval(), psn_start()).prop_map(
        |(mtu, ack_every, rto_us, nak, psn)| RcConfig {
            mtu,
            ack_every,
            recovery: Recovery::GoBackN,
            rto: Duration::from_us(rto_us),
            max_retries: None,
            nak_min_interval: nak,
            psn_start: psn,
        },
    )
}

fn irn_config() -> impl Strategy<Value = RcConfig> {
    (mtu(), 1u32..8, 1u64..40, 20u64..500, 0u64..1_500, psn_start()).prop_map(
        |(mtu, ack_every, cap_packets, low_us, extra_us, psn)| RcConfig {
            mtu,
            ack_every,
            recovery: Recovery::Irn {
                bdp_cap_bytes: cap_packets * u64::from(mtu) + u64::from(mtu) / 3,
                rto_low: Duration::from_us(low_us),
                rto_high: Duration::from_us(low_us + extra_us),
            },
            rto: Duration::ZERO,
            max_retries: None,
            nak_min_interval: Duration::from_us(500),
            psn_start: psn,
        },
    )
}

fn loss(data_p: f64, reply_p: f64) -> impl Strategy<Value = Loss> {
    (pattern(data_p, 400), pattern(reply_p, 400)).prop_map(|(data, replies)| Loss { data, replies })
}

fn describe(o: &Outcome) -> String {
    format!(
        "end {:?}, delivered {}, violations {:?}, requester {:?}, responder {:?}",
        o.end,
        o.delivered,
        o.violations.iter().take(3).collect::<Vec<_>>(),
        o.requester.counters(),
        o.responder.counters()
    )
}

/// The checks every completed run passes.
fn assert_complete_exactly_once(o: &Outcome, bytes: u64) -> Result<(), TestCaseError> {
    prop_assert_eq!(o.end, End::Complete, "{}", describe(o));
    prop_assert!(o.violations.is_empty(), "{}", describe(o));
    prop_assert_eq!(o.delivered, bytes);
    let (rq, rs) = (o.requester.counters(), o.responder.counters());
    prop_assert_eq!(rs.delivered_bytes, bytes);
    prop_assert_eq!(rq.acked_bytes, bytes);
    prop_assert!(o.responder.is_complete());
    // every packet went out at least once; every further transmission is counted as one
    prop_assert_eq!(rq.tx_packets, o.packets + rq.retransmitted_packets);
    prop_assert_eq!(rq.tx_packets, o.sent.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Go-back-N with a timeout: whatever is lost (data or replies), the transfer completes and
    /// every byte is delivered once, in order.
    #[test]
    fn go_back_n_with_a_timeout_delivers_every_byte_exactly_once_in_order(
        cfg in gbn_config(), bytes in 0u64..120_000, link in link(), loss in loss(0.4, 0.4),
    ) {
        let o = run(&cfg, bytes, link, &loss, STEPS);
        assert_complete_exactly_once(&o, bytes)?;
    }

    /// IRN: the same, with selective repeat.
    #[test]
    fn irn_delivers_every_byte_exactly_once_in_order(
        cfg in irn_config(), bytes in 0u64..120_000, link in link(), loss in loss(0.4, 0.4),
    ) {
        let o = run(&cfg, bytes, link, &loss, STEPS);
        assert_complete_exactly_once(&o, bytes)?;
    }

    /// Starting a few PSNs below 2^24, the PSNs wrap to 0 during the transfer and nothing breaks.
    #[test]
    fn psn_wrap_keeps_delivery_exact(
        gbn in gbn_config(), irn in irn_config(), use_irn in any::<bool>(), below in 1u32..60,
        link in link(), loss in loss(0.3, 0.3),
    ) {
        let mut cfg = if use_irn { irn } else { gbn };
        cfg.psn_start = PSN_MASK + 1 - below;
        cfg.mtu = 256;
        let bytes = 256 * 100;
        let o = run(&cfg, bytes, link, &loss, STEPS);
        assert_complete_exactly_once(&o, bytes)?;
        prop_assert!(o.sent.iter().any(|s| s.packet.psn == PSN_MASK));
        prop_assert!(o.sent.iter().any(|s| s.packet.psn == 0));
    }

    /// Go-back-N never delivers a byte out of order or twice, even when, without a timeout,
    /// the transfer stalls; and it stalls only after sending every packet at least once.
    #[test]
    fn go_back_n_never_delivers_out_of_order_even_without_a_timeout(
        cfg in gbn_config(), bytes in 1u64..60_000, link in link(), loss in loss(0.4, 0.4),
    ) {
        let cfg = RcConfig { rto: Duration::ZERO, ..cfg };
        let o = run(&cfg, bytes, link, &loss, STEPS);
        prop_assert!(o.violations.is_empty(), "{}", describe(&o));
        prop_assert!(matches!(o.end, End::Complete | End::Stalled), "{}", describe(&o));
        if o.end == End::Stalled {
            let mut seen = vec![false; o.packets as usize];
            for s in &o.sent {
                seen[s.index as usize] = true;
            }
            prop_assert!(seen.iter().all(|&x| x), "stalled before sending everything once");
        }
    }

    /// Without a timeout (HPCC ns-3), with a NAK for every out-of-order packet and no reply
    /// lost, go-back-N completes unless its last transmission is lost: that is its only stall.
    #[test]
    fn go_back_n_without_a_timeout_stalls_only_on_a_lost_last_transmission(
        cfg in gbn_config(), bytes in 1u64..60_000, link in link(), data in pattern(0.4, 400),
    ) {
        let cfg = RcConfig { rto: Duration::ZERO, nak_min_interval: Duration::ZERO, ..cfg };
        let o = run(&cfg, bytes, link, &Loss { data, replies: vec![] }, STEPS);
        prop_assert!(o.violations.is_empty(), "{}", describe(&o));
        match o.end {
            End::Complete => assert_complete_exactly_once(&o, bytes)?,
            End::Stalled => {
                let last = o.sent.last().expect("something was sent");
                prop_assert!(last.lost, "stalled although the last transmission arrived: {}", describe(&o));
                prop_assert_eq!(last.index + 1, o.packets, "the last transmission is the last packet");
            }
            other => prop_assert!(false, "{other:?}: {}", describe(&o)),
        }
    }

    /// IRN with an ACK per packet and no reply lost resends exactly the lost transmissions:
    /// each packet goes out once plus once per loss of it.
    #[test]
    fn irn_resends_exactly_the_lost_transmissions_when_no_reply_is_lost(
        cfg in irn_config(), bytes in 0u64..120_000, link in link(), data in pattern(0.4, 400),
    ) {
        // timeouts far above the round trip (< 15 µs here): a timeout finds only real losses
        let cfg = RcConfig {
            ack_every: 1,
            recovery: match cfg.recovery {
                Recovery::Irn { bdp_cap_bytes, .. } => Recovery::Irn {
                    bdp_cap_bytes,
                    rto_low: Duration::from_us(200),
                    rto_high: Duration::from_us(300),
                },
                r => r,
            },
            ..cfg
        };
        let o = run(&cfg, bytes, link, &Loss { data, replies: vec![] }, STEPS);
        assert_complete_exactly_once(&o, bytes)?;
        let (tx, lost) = (o.transmissions(), o.losses());
        for i in 0..o.packets as usize {
            prop_assert_eq!(tx[i], 1 + lost[i], "packet {}: {}", i, describe(&o));
        }
    }

    /// IRN never has more than `bdp_cap_bytes` outstanding, counted from what the replies it
    /// received acknowledged.
    #[test]
    fn irn_bdp_cap_is_never_exceeded(
        cfg in irn_config(), bytes in 0u64..120_000, link in link(), loss in loss(0.3, 0.3),
    ) {
        let o = run(&cfg, bytes, link, &loss, STEPS);
        prop_assert!(o.violations.is_empty(), "{}", describe(&o));
        prop_assert_eq!(o.end, End::Complete);
        if let Recovery::Irn { bdp_cap_bytes, .. } = cfg.recovery {
            prop_assert!(o.max_outstanding <= bdp_cap_bytes);
            // and the cap binds: when the first reply cannot come back before a cap's worth
            // is sent, the requester fills the cap to within one packet
            let round_trip_bytes = link.rate.bytes_in(link.delay + link.delay) as u64;
            if bytes >= bdp_cap_bytes && round_trip_bytes >= bdp_cap_bytes + u64::from(cfg.mtu) {
                prop_assert!(o.max_outstanding + u64::from(cfg.mtu) > bdp_cap_bytes, "{}", o.max_outstanding);
            }
        }
    }
}
