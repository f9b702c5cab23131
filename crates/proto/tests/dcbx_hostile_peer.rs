//! A peer that sends what our own configuration may not hold: each invalid DCBX TLV is refused,
//! counted and reported once, and Operational keeps its last valid state; a flood of new
//! chassis IDs does not lock the real peer out; a peer that switches from IEEE to CEE gets
//! CEE's negotiation, not what IEEE had adopted.

mod dcbx_support;

use lossless_proto::dcbx::{
    Agent, DcbxConfig, EtsParams, Event, Mode, ModeSetting, OperPfc, PeerTlv, PfcConfig, Source, TsaName,
};
use lossless_proto::lldp_agent::{AgentConfig, TooManyNeighbours};
use lossless_proto::units::{Duration, Instant};
use lossless_wire::lldp::{
    CeeControl, CeeDcbx, CeeFeatureHeader, CeePfc, CeePriorityGroups, CeeSubTlv, CeeTlv, ChassisId,
    ChassisIdSubtype, EtsConfiguration, EtsRecommendation, EtsTables, Ieee8021Tlv, LldpduRepr, OrgTlv,
    PfcConfiguration, PortId, PortIdSubtype, Tlv, Tsa,
};

const PEER: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const HOST: [u8; 6] = [0x02, 0, 0, 0, 0, 0x09];

fn at(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_ms(ms)
}

/// An LLDPDU from chassis `chassis` (port "eth0", TTL `ttl`) with `extra` TLVs.
fn lldpdu(chassis: [u8; 6], ttl: u16, extra: Vec<Tlv>) -> Vec<u8> {
    let mut tlvs = vec![
        Tlv::ChassisId(ChassisId {
            subtype: ChassisIdSubtype::MacAddress,
            id: chassis.to_vec(),
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

fn org(t: Ieee8021Tlv) -> Tlv {
    Tlv::Org(OrgTlv::Ieee8021(t))
}

/// The switch's tables: priority 3 in TC 1, 50/50 ETS on TC 0 and 1, the rest strict.
fn good_tables() -> EtsTables {
    let mut tsa = [Tsa::STRICT; 8];
    tsa[0] = Tsa::ETS;
    tsa[1] = Tsa::ETS;
    EtsTables {
        priority_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tc_bandwidth: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa,
    }
}

fn ets_cfg(tables: EtsTables) -> Tlv {
    org(Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
        willing: false,
        cbs: false,
        reserved: 0,
        max_tcs: 0,
        tables,
    }))
}

fn ets_rec(tables: EtsTables) -> Tlv {
    org(Ieee8021Tlv::EtsRecommendation(EtsRecommendation {
        reserved: 0,
        tables,
    }))
}

fn pfc_tlv(cap: u8, enabled: u8) -> Tlv {
    org(Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
        willing: false,
        mbc: false,
        reserved: 0,
        pfc_cap: cap,
        enabled,
    }))
}

/// A valid switch: ETS Configuration and Recommendation with `good_tables`, PFC on 3.
fn switch_tlvs() -> Vec<Tlv> {
    vec![ets_cfg(good_tables()), ets_rec(good_tables()), pfc_tlv(8, 1 << 3)]
}

fn willing_host(mode: ModeSetting) -> Agent {
    let mut c = DcbxConfig {
        mode,
        pfc: PfcConfig {
            willing: true,
            ..PfcConfig::default()
        },
        ..DcbxConfig::default()
    };
    c.ets.willing = true;
    Agent::new(AgentConfig::new(HOST), c).unwrap()
}

fn events(a: &mut Agent) -> Vec<Event> {
    std::iter::from_fn(|| a.poll_event()).collect()
}

fn adopted_pfc(a: &Agent) -> Option<Vec<u8>> {
    match &a.operational().pfc {
        OperPfc::Operational {
            params,
            source: Source::Peer,
        } => Some(params.priorities()),
        _ => None,
    }
}

/// The four hostile TLVs of issue 12 item 15, each with what its refusal must name.
fn hostile_cases() -> Vec<(&'static str, Vec<Tlv>, PeerTlv, &'static str)> {
    let mut bw180 = good_tables();
    bw180.tc_bandwidth = [90, 90, 0, 0, 0, 0, 0, 0];
    let mut tc9 = good_tables();
    tc9.priority_tc[5] = 9;
    let mut tsa9 = good_tables();
    tsa9.tsa[2] = Tsa(9);
    vec![
        (
            "ETS Recommendation summing to 180%",
            vec![ets_cfg(good_tables()), ets_rec(bw180), pfc_tlv(8, 1 << 3)],
            PeerTlv::EtsRecommendation,
            "tcbw sums to 180%",
        ),
        (
            "TC 9 in the priority table",
            vec![ets_cfg(good_tables()), ets_rec(tc9), pfc_tlv(8, 1 << 3)],
            PeerTlv::EtsRecommendation,
            "up2tc[5] = 9",
        ),
        (
            "TSA 9",
            vec![ets_cfg(good_tables()), ets_rec(tsa9), pfc_tlv(8, 1 << 3)],
            PeerTlv::EtsRecommendation,
            "tsa[2] = 9 is reserved",
        ),
        (
            "PFC capability 0 with enable 0xFF",
            vec![ets_cfg(good_tables()), ets_rec(good_tables()), pfc_tlv(0, 0xff)],
            PeerTlv::PfcConfiguration,
            "more than the capability 0",
        ),
    ]
}

#[test]
fn willing_host_refuses_each_invalid_peer_tlv_keeps_the_last_valid_state_and_says_why() {
    let mut host = willing_host(ModeSetting::Ieee);
    host.handle_frame(at(0), PEER, &lldpdu(PEER, 120, switch_tlvs()));
    assert_eq!(adopted_pfc(&host), Some(vec![3]));
    let valid = host.operational().clone();
    assert_eq!(valid.ets.source, Source::Peer);
    assert_eq!(valid.ets.params.tcbw, [50, 50, 0, 0, 0, 0, 0, 0]);
    let _ = events(&mut host);
    let mut t = 1000;
    for (case, tlvs, tlv, why) in hostile_cases() {
        let before = host.statistics().dcbx_tlvs_rejected_total;
        let frame = lldpdu(PEER, 120, tlvs);
        host.handle_frame(at(t), PEER, &frame);
        assert_eq!(host.operational(), &valid, "{case}: operational unchanged");
        let r = host.remote().expect("the peer is still there").clone();
        assert_eq!(r.rejected.len(), 1, "{case}: {:?}", r.rejected);
        assert_eq!(r.rejected[0].tlv, tlv, "{case}");
        assert!(
            r.rejected[0].reason.to_string().contains(why),
            "{case}: {}",
            r.rejected[0].reason
        );
        match tlv {
            PeerTlv::EtsRecommendation => assert!(r.ets_recommendation.is_none(), "{case}: not shown"),
            _ => assert!(r.pfc.is_none(), "{case}: not shown"),
        }
        assert_eq!(host.statistics().dcbx_tlvs_rejected_total, before + 1, "{case}");
        let ev = events(&mut host);
        let reported: Vec<_> = ev
            .iter()
            .filter_map(|e| match e {
                Event::PeerTlvRejected(x) => Some(x.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(reported, r.rejected, "{case}: reported once: {ev:?}");
        // The same LLDPDU again: counted again, reported no more.
        host.handle_frame(at(t + 500), PEER, &frame);
        assert_eq!(host.statistics().dcbx_tlvs_rejected_total, before + 2, "{case}");
        assert!(
            !events(&mut host)
                .iter()
                .any(|e| matches!(e, Event::PeerTlvRejected(_))),
            "{case}"
        );
        t += 1000;
    }
    // A valid LLDPDU again clears the refusals.
    host.handle_frame(at(t), PEER, &lldpdu(PEER, 120, switch_tlvs()));
    assert!(host.remote().unwrap().rejected.is_empty());
    assert_eq!(host.operational(), &valid);
}

#[test]
fn from_a_clean_state_a_refused_tlv_counts_as_not_sent() {
    for (case, tlvs, tlv, _) in hostile_cases() {
        let mut host = willing_host(ModeSetting::Ieee);
        host.handle_frame(at(0), PEER, &lldpdu(PEER, 120, tlvs));
        let o = host.operational();
        match tlv {
            PeerTlv::EtsRecommendation => {
                assert_eq!(o.ets.source, Source::Local, "{case}");
                assert_eq!(o.ets.params, DcbxConfig::default().ets.params, "{case}");
                assert_eq!(
                    adopted_pfc(&host),
                    Some(vec![3]),
                    "{case}: the valid PFC is adopted"
                );
            }
            _ => {
                assert_eq!(o.pfc.enable(), 0, "{case}: nothing adopted");
                assert_eq!(o.ets.source, Source::Peer, "{case}: the valid ETS is adopted");
            }
        }
    }
}

#[test]
fn our_own_configuration_is_refused_for_the_same_values() {
    let host = |f: &dyn Fn(&mut DcbxConfig)| {
        let mut c = DcbxConfig::default();
        f(&mut c);
        Agent::new(AgentConfig::new(HOST), c).err().map(|e| e.to_string())
    };
    let rec = |tcbw: [u8; 8], up2tc: [u8; 8]| EtsParams {
        up2tc,
        tcbw,
        tsa: [TsaName::Ets; 8],
    };
    let e = host(&|c| c.ets.recommendation = Some(rec([90, 90, 0, 0, 0, 0, 0, 0], [0; 8]))).unwrap();
    assert!(e.contains("tcbw sums to 180%"), "{e}");
    let e = host(&|c| c.ets.recommendation = Some(rec([100, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 9, 0, 0])))
        .unwrap();
    assert!(e.contains("up2tc[5] = 9"), "{e}");
    let e = host(&|c| {
        c.pfc.cap = 0;
        c.pfc.enable = (0..8).collect();
    })
    .unwrap();
    assert!(
        e.contains("pfc.cap") && e.contains("more than the capability 0"),
        "{e}"
    );
    // Two priorities in one traffic class need a capability of one, not two.
    assert_eq!(
        host(&|c| {
            c.pfc.cap = 1;
            c.pfc.enable = vec![3, 4];
        }),
        None
    );
    // (A TSA of 9 cannot even be written in a configuration: `tsa` takes names.)
}

#[test]
fn a_peer_tlv_is_judged_against_the_peer_priority_table() {
    // PFC capability 1 with priorities 3 and 4: valid when the peer maps both to one TC.
    let mut one_tc = good_tables();
    one_tc.priority_tc = [0, 0, 0, 1, 1, 0, 0, 0];
    let mut host = willing_host(ModeSetting::Ieee);
    host.handle_frame(
        at(0),
        PEER,
        &lldpdu(PEER, 120, vec![ets_cfg(one_tc), pfc_tlv(1, 0b1_1000)]),
    );
    assert_eq!(adopted_pfc(&host), Some(vec![3, 4]));
    // The same PFC TLV from a peer that puts them in two TCs is refused.
    let mut host = willing_host(ModeSetting::Ieee);
    host.handle_frame(
        at(0),
        PEER,
        &lldpdu(PEER, 120, vec![ets_cfg(good_tables()), pfc_tlv(1, 0b1_1000)]),
    );
    let r = host.remote().unwrap();
    assert_eq!(r.rejected[0].tlv, PeerTlv::PfcConfiguration);
    assert!(
        r.rejected[0].reason.to_string().contains("2 traffic class"),
        "{:?}",
        r.rejected
    );
}

fn header(willing: bool) -> CeeFeatureHeader {
    CeeFeatureHeader {
        oper_version: 0,
        max_version: 0,
        enabled: true,
        willing,
        error: false,
        reserved: 0,
        subtype: 0,
    }
}

/// A CEE-only LLDPDU: Control (seq, ack), Priority Groups (`pgid`, `bw`), PFC.
fn cee(seq: u32, ack: u32, pgid: [u8; 8], bw: [u8; 8], pfc_tcs: u8, admin: u8) -> Vec<u8> {
    lldpdu(
        PEER,
        120,
        vec![Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(CeeDcbx {
            sub_tlvs: vec![
                CeeSubTlv::Control(CeeControl {
                    oper_version: 0,
                    max_version: 0,
                    seq,
                    ack,
                }),
                CeeSubTlv::PriorityGroups(CeePriorityGroups {
                    header: header(false),
                    pgid,
                    pg_bandwidth: bw,
                    num_tcs: 8,
                }),
                CeeSubTlv::Pfc(CeePfc {
                    header: header(false),
                    admin_map: admin,
                    num_tcs: pfc_tcs,
                }),
            ],
        })))],
    )
}

/// The feature flags of the CEE TLV the host sends now.
fn sent_cee_errors(host: &mut Agent, now: Instant) -> (bool, bool) {
    let mut last = None;
    while let Some(f) = host.poll_transmit(now) {
        last = Some(f);
    }
    let f = last.expect("the host sends");
    let d = LldpduRepr::parse(&f[14..]);
    let subs = d
        .tlvs
        .iter()
        .find_map(|t| match t {
            Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(d))) => Some(d.sub_tlvs.clone()),
            _ => None,
        })
        .expect("a CEE TLV");
    let pg = subs.iter().find_map(|s| match s {
        CeeSubTlv::PriorityGroups(p) => Some(p.header.error),
        _ => None,
    });
    let pfc = subs.iter().find_map(|s| match s {
        CeeSubTlv::Pfc(p) => Some(p.header.error),
        _ => None,
    });
    (pg.unwrap(), pfc.unwrap())
}

#[test]
fn cee_peer_with_invalid_groups_or_pfc_is_refused_and_our_error_flags_say_so() {
    let pgid = [0, 0, 0, 1, 0, 0, 0, 0];
    let bw = [60, 40, 0, 0, 0, 0, 0, 0];
    let mut host = willing_host(ModeSetting::Cee);
    let seq = host.cee_handshake().seq;
    host.handle_frame(at(0), PEER, &cee(1, seq, pgid, bw, 8, 1 << 3));
    assert_eq!(adopted_pfc(&host), Some(vec![3]));
    let valid = host.operational().clone();
    assert_eq!(valid.ets.params.tcbw[..2], [60, 40]);
    assert_eq!(sent_cee_errors(&mut host, at(0)), (false, false));
    let cases = [
        (
            [0, 0, 0, 9, 0, 0, 0, 0],
            bw,
            8,
            1 << 3,
            PeerTlv::CeePriorityGroups,
            "pgid[3] = 9",
        ),
        (
            pgid,
            [90, 90, 0, 0, 0, 0, 0, 0],
            8,
            1 << 3,
            PeerTlv::CeePriorityGroups,
            "sum to 180%",
        ),
        (pgid, bw, 0, 0xff, PeerTlv::CeePfc, "more than the capability 0"),
    ];
    let mut t = 1000;
    for (pg, b, tcs, admin, tlv, why) in cases {
        host.handle_frame(at(t), PEER, &cee(1, host.cee_handshake().seq, pg, b, tcs, admin));
        let r = host.remote().unwrap();
        assert_eq!(r.rejected.len(), 1, "{:?}", r.rejected);
        assert_eq!(r.rejected[0].tlv, tlv);
        assert!(
            r.rejected[0].reason.to_string().contains(why),
            "{}",
            r.rejected[0].reason
        );
        let o = host.operational();
        assert_eq!(
            (o.ets, &o.pfc),
            (valid.ets, &valid.pfc),
            "{tlv:?}: last valid kept"
        );
        let errors = sent_cee_errors(&mut host, at(t));
        assert_eq!(
            errors,
            (tlv == PeerTlv::CeePriorityGroups, tlv == PeerTlv::CeePfc)
        );
        t += 1000;
    }
}

#[test]
fn after_an_ieee_peer_switches_to_cee_operational_follows_the_cee_negotiation() {
    // Issue 12 item 16: IEEE PFC [3] adopted, then the same peer sends CEE only, PFC [5],
    // not yet acknowledging our sequence number.
    let unsynced = cee(1, 0, [0; 8], [100, 0, 0, 0, 0, 0, 0, 0], 8, 1 << 5);
    let mut host = willing_host(ModeSetting::Auto);
    host.handle_frame(at(0), PEER, &lldpdu(PEER, 120, switch_tlvs()));
    assert_eq!(adopted_pfc(&host), Some(vec![3]));
    host.handle_frame(at(1000), PEER, &unsynced);
    assert_eq!(host.mode(), Mode::Cee);
    let remote_pfc = host.remote().unwrap().cee.as_ref().unwrap().pfc.as_ref().unwrap();
    assert_eq!(remote_pfc.value.priorities(), vec![5]);
    assert_ne!(adopted_pfc(&host), Some(vec![3]), "IEEE's adoption is not CEE's");
    let mut clean = willing_host(ModeSetting::Auto);
    clean.handle_frame(at(1000), PEER, &unsynced);
    assert_eq!(
        host.operational(),
        clean.operational(),
        "the same as the same frame from a clean state"
    );
    assert_eq!(host.operational().mode, Mode::Cee);
    // Once the peer acknowledges our sequence number, CEE's negotiation adopts PFC [5].
    let seq = host.cee_handshake().seq;
    host.handle_frame(
        at(2000),
        PEER,
        &cee(1, seq, [0; 8], [100, 0, 0, 0, 0, 0, 0, 0], 8, 1 << 5),
    );
    assert_eq!(adopted_pfc(&host), Some(vec![5]));
    assert!(host.operational().cee_synced);
}

fn flood_host(policy: TooManyNeighbours) -> Agent {
    let mut lldp = AgentConfig::new(HOST);
    lldp.too_many = policy;
    let mut c = DcbxConfig {
        mode: ModeSetting::Ieee,
        ..DcbxConfig::default()
    };
    c.pfc.willing = true;
    Agent::new(lldp, c).unwrap()
}

#[test]
fn a_flood_of_new_chassis_ids_does_not_lock_the_real_peer_out() {
    for policy in [
        TooManyNeighbours::DiscardNew,
        TooManyNeighbours::ReplaceEarliestExpiry,
    ] {
        let mut host = flood_host(policy);
        // The real peer's TTL is the shortest, so it would be the first evicted.
        host.handle_frame(at(0), PEER, &lldpdu(PEER, 30, vec![pfc_tlv(8, 1 << 3)]));
        assert_eq!(adopted_pfc(&host), Some(vec![3]), "{policy:?}");
        let mut peak = 0;
        for i in 0..10_000u32 {
            let b = i.to_be_bytes();
            let rogue = [0x06, 0x66, b[0], b[1], b[2], b[3]];
            host.handle_frame(
                at(1 + u64::from(i)),
                rogue,
                &lldpdu(rogue, 65535, vec![pfc_tlv(8, 1 << 6)]),
            );
            peak = peak.max(host.neighbours().len());
            let _ = events(&mut host);
        }
        assert_eq!(peak, 4, "{policy:?}: the table stays bounded");
        assert_eq!(host.remote().unwrap().src_mac, PEER, "{policy:?}");
        assert_eq!(adopted_pfc(&host), Some(vec![3]), "{policy:?}");
        // The real peer changes its configuration during the flood: it is followed at once.
        host.handle_frame(at(20_000), PEER, &lldpdu(PEER, 30, vec![pfc_tlv(8, 1 << 4)]));
        assert_eq!(adopted_pfc(&host), Some(vec![4]), "{policy:?}: not locked out");
    }
}
