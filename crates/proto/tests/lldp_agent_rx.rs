//! The 802.1AB receive side: neighbour table, TTL ageing, shutdown, too many neighbours,
//! statistics, and malformed LLDPDUs (the tcpdump corpus and fuzzed bytes) counted and dropped.

use lossless_proto::lldp_agent::{AgentConfig, LldpAgent, LldpEvent, RxOutcome, TooManyNeighbours};
use lossless_proto::units::{Duration, Instant};
use lossless_wire::lldp::{ChassisId, ChassisIdSubtype, LldpduRepr, OrgTlv, PortId, PortIdSubtype, Tlv};
use proptest::prelude::*;

fn at(s: u64) -> Instant {
    Instant::ZERO + Duration::from_secs(s)
}

/// An LLDPDU from a chassis numbered `n` with `ttl` and extra TLVs.
fn pdu(n: u8, ttl: u16, extra: Vec<Tlv>) -> Vec<u8> {
    let mut tlvs = vec![
        Tlv::ChassisId(ChassisId {
            subtype: ChassisIdSubtype::MacAddress,
            id: vec![2, 0, 0, 0, 9, n],
        }),
        Tlv::PortId(PortId {
            subtype: PortIdSubtype::InterfaceName,
            id: b"eth0".to_vec(),
        }),
        Tlv::Ttl(ttl),
    ];
    tlvs.extend(extra);
    tlvs.push(Tlv::End);
    LldpduRepr { tlvs }.to_vec().expect("test TLVs fit")
}

fn agent(max: usize, policy: TooManyNeighbours) -> LldpAgent {
    let mut cfg = AgentConfig::new([2, 0, 0, 0, 0, 1]);
    cfg.max_neighbours = max;
    cfg.too_many = policy;
    LldpAgent::new(cfg).unwrap()
}

fn events(a: &mut LldpAgent) -> Vec<LldpEvent> {
    std::iter::from_fn(|| a.poll_event()).collect()
}

#[test]
fn neighbour_is_stored_refreshed_and_changes_are_detected() {
    let mut a = agent(4, TooManyNeighbours::DiscardNew);
    let src = [2, 0, 0, 0, 9, 1];
    assert!(matches!(
        a.handle_lldpdu(at(0), src, &pdu(1, 120, vec![])),
        RxOutcome::Stored { changed: true, .. }
    ));
    assert!(matches!(
        a.handle_lldpdu(at(30), src, &pdu(1, 120, vec![])),
        RxOutcome::Stored { changed: false, .. }
    ));
    let named = pdu(1, 120, vec![Tlv::SystemName(b"sw".to_vec())]);
    assert!(matches!(
        a.handle_lldpdu(at(31), src, &named),
        RxOutcome::Stored { changed: true, .. }
    ));
    let ev = events(&mut a);
    assert!(matches!(ev[0], LldpEvent::NeighbourAdded(_)));
    assert!(matches!(ev[1], LldpEvent::NeighbourChanged(_)));
    assert_eq!(ev.len(), 2);
    assert_eq!(a.neighbours().len(), 1);
    assert_eq!(a.neighbours().iter().next().unwrap().expires, at(151));
}

#[test]
fn neighbour_ages_out_when_its_ttl_runs_out() {
    let mut a = agent(4, TooManyNeighbours::DiscardNew);
    a.handle_lldpdu(at(0), [2, 0, 0, 0, 9, 1], &pdu(1, 10, vec![]));
    events(&mut a);
    a.handle_timeout(at(9));
    assert_eq!(a.neighbours().len(), 1);
    assert!(a.poll_timeout().unwrap() <= at(10));
    a.handle_timeout(at(10));
    assert!(a.neighbours().is_empty());
    assert_eq!(a.statistics().ageouts_total, 1);
    assert!(matches!(events(&mut a)[..], [LldpEvent::NeighbourAgedOut(_)]));
}

#[test]
fn ttl_zero_removes_the_neighbour_at_once() {
    let mut a = agent(4, TooManyNeighbours::DiscardNew);
    a.handle_lldpdu(at(0), [2, 0, 0, 0, 9, 1], &pdu(1, 120, vec![]));
    events(&mut a);
    assert!(matches!(
        a.handle_lldpdu(at(1), [2, 0, 0, 0, 9, 1], &pdu(1, 0, vec![])),
        RxOutcome::Shutdown(_, true)
    ));
    assert!(a.neighbours().is_empty());
    assert_eq!(a.statistics().ageouts_total, 0);
    assert!(matches!(events(&mut a)[..], [LldpEvent::ShutdownReceived(_)]));
}

#[test]
fn too_many_neighbours_discards_the_new_one_by_default() {
    let mut a = agent(2, TooManyNeighbours::DiscardNew);
    for n in 1..=3 {
        a.handle_lldpdu(at(u64::from(n)), [2, 0, 0, 0, 9, n], &pdu(n, 120, vec![]));
    }
    assert_eq!(a.neighbours().len(), 2);
    assert_eq!(a.statistics().frames_discarded_total, 1);
    assert!(events(&mut a).contains(&LldpEvent::TooManyNeighbours { evicted: None }));
}

#[test]
fn too_many_neighbours_can_evict_the_one_expiring_first() {
    let mut a = agent(2, TooManyNeighbours::ReplaceEarliestExpiry);
    a.handle_lldpdu(at(0), [2, 0, 0, 0, 9, 1], &pdu(1, 120, vec![]));
    a.handle_lldpdu(at(0), [2, 0, 0, 0, 9, 2], &pdu(2, 20, vec![]));
    a.handle_lldpdu(at(1), [2, 0, 0, 0, 9, 3], &pdu(3, 120, vec![]));
    let ids: Vec<u8> = a.neighbours().iter().map(|n| n.msap.chassis.id[5]).collect();
    assert_eq!(ids, vec![1, 3], "chassis 2 expired first and was evicted");
    assert_eq!(a.statistics().frames_discarded_total, 0);
}

#[test]
fn bad_optional_tlv_is_discarded_and_unknown_ones_counted_but_the_lldpdu_is_kept() {
    let mut a = agent(4, TooManyNeighbours::DiscardNew);
    // An ETS Configuration TLV one byte short, a reserved TLV type and an unknown OUI.
    let bad_ets = Tlv::Org(OrgTlv::Other {
        oui: [0x00, 0x80, 0xc2],
        subtype: 9,
        info: vec![0; 20],
    });
    let reserved = Tlv::Unknown {
        ty: 42,
        value: vec![1, 2],
    };
    let other_oui = Tlv::Org(OrgTlv::Other {
        oui: [0xaa, 0xbb, 0xcc],
        subtype: 1,
        info: vec![],
    });
    let bytes = pdu(1, 120, vec![bad_ets, reserved, other_oui]);
    assert!(matches!(
        a.handle_lldpdu(at(0), [2, 0, 0, 0, 9, 1], &bytes),
        RxOutcome::Stored { .. }
    ));
    let s = a.statistics();
    assert_eq!((s.tlvs_discarded_total, s.tlvs_unrecognized_total), (1, 2));
    assert_eq!(a.neighbours().iter().next().unwrap().tlvs.len(), 2);
}

#[test]
fn lldpdu_without_mandatory_tlvs_first_is_an_error_and_dropped() {
    let mut a = agent(4, TooManyNeighbours::DiscardNew);
    let no_port = LldpduRepr {
        tlvs: vec![
            Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: vec![2, 0, 0, 0, 9, 1],
            }),
            Tlv::Ttl(120),
            Tlv::End,
        ],
    }
    .to_vec()
    .unwrap();
    assert_eq!(a.handle_lldpdu(at(0), [2; 6], &no_port), RxOutcome::Discarded);
    assert_eq!(
        a.handle_lldpdu(at(0), [2; 6], &[0xfe, 0xff, 1]),
        RxOutcome::Discarded
    );
    let s = a.statistics();
    assert_eq!(
        (
            s.frames_in_total,
            s.frames_discarded_total,
            s.frames_in_errors_total
        ),
        (2, 2, 2)
    );
    assert!(a.neighbours().is_empty());
    assert!(matches!(
        events(&mut a)[..],
        [LldpEvent::Malformed(_), LldpEvent::Malformed(_)]
    ));
}

/// Every Ethernet frame with EtherType 0x88CC in a classic little-endian pcap file.
fn lldp_payloads(path: &std::path::Path) -> Vec<([u8; 6], Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(
        b[..4],
        [0xd4, 0xc3, 0xb2, 0xa1],
        "{} is a little-endian pcap",
        path.display()
    );
    let mut out = Vec::new();
    let mut pos = 24;
    while pos + 16 <= b.len() {
        let incl = u32::from_le_bytes(b[pos + 8..pos + 12].try_into().unwrap()) as usize;
        let Some(data) = b.get(pos + 16..pos + 16 + incl) else {
            break;
        };
        pos += 16 + incl;
        if data.len() >= 14 && data[12..14] == [0x88, 0xcc] {
            out.push((data[6..12].try_into().unwrap(), data[14..].to_vec()));
        }
    }
    out
}

#[test]
fn corpus_lldpdus_are_stored_or_counted_and_dropped_and_the_agent_keeps_running() {
    let dir = lossless_testkit::corpus_dir().join("tcpdump");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    files.sort();
    let mut a = agent(64, TooManyNeighbours::ReplaceEarliestExpiry);
    let (mut total, mut bad) = (0u64, 0u64);
    for f in &files {
        for (src, payload) in lldp_payloads(f) {
            total += 1;
            if a.handle_lldpdu(at(1), src, &payload) == RxOutcome::Discarded {
                bad += 1;
            }
        }
    }
    let s = a.statistics();
    assert!(total >= 20, "corpus has LLDP frames: {total}");
    assert!(
        bad >= 1,
        "the corpus's malformed captures (lldp_asan, infinite-loop) are discarded"
    );
    assert_eq!(s.frames_in_total, total);
    assert_eq!(s.frames_in_errors_total, bad);
    assert!(a.is_running());
    assert!(
        a.poll_transmit(at(1)).is_some(),
        "still transmitting after the corpus"
    );
    eprintln!("corpus: {total} LLDPDUs, {bad} discarded, stats {s:?}");
}

proptest! {
    #[test]
    fn fuzzed_lldpdus_never_panic_and_every_frame_is_counted(
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..600), 1..40),
        valid_prefix in any::<bool>(),
    ) {
        let mut a = agent(8, TooManyNeighbours::DiscardNew);
        let mut n = 0u64;
        for (i, f) in frames.iter().enumerate() {
            let bytes = if valid_prefix {
                let mut p = pdu(i as u8, 120, vec![]);
                p.truncate(p.len() - 2);
                p.extend_from_slice(f);
                p
            } else {
                f.clone()
            };
            a.handle_lldpdu(at(i as u64), [2, 0, 0, 0, 9, i as u8], &bytes);
            n += 1;
            a.handle_timeout(at(i as u64));
            while a.poll_transmit(at(i as u64)).is_some() {}
        }
        let s = a.statistics();
        prop_assert_eq!(s.frames_in_total, n);
        prop_assert!(s.frames_discarded_total >= s.frames_in_errors_total);
        prop_assert!(a.neighbours().len() <= 8);
    }
}
