//! IEEE 802.1Qaz negotiation between two of our agents: ETS asymmetric, PFC symmetric with the
//! MAC tie-break, App merge, unresolved disagreement, ageing and shutdown.

mod dcbx_support;

use dcbx_support::{Link, secs};
use lossless_proto::dcbx::{
    AppPriority, DcbxConfig, EtsParams, Event, Mode, ModeSetting, OperPfc, PfcConfig, Source, TsaName,
};

fn pfc(willing: bool, enable: &[u8]) -> DcbxConfig {
    DcbxConfig {
        mode: ModeSetting::Ieee,
        pfc: PfcConfig {
            willing,
            enable: enable.to_vec(),
            ..PfcConfig::default()
        },
        ..DcbxConfig::default()
    }
}

fn enabled(o: &OperPfc) -> Vec<u8> {
    match o {
        OperPfc::Operational { params, .. } => params.priorities(),
        OperPfc::NotOperational { .. } => panic!("PFC not operational: {o:?}"),
    }
}

#[test]
fn willing_host_adopts_unwilling_switch_pfc_priority_3() {
    let mut l = Link::new(1, pfc(false, &[3]), 2, pfc(true, &[]));
    l.run_for(secs(2));
    assert_eq!(enabled(&l.b.operational().pfc), vec![3]);
    assert!(matches!(
        l.b.operational().pfc,
        OperPfc::Operational {
            source: Source::Peer,
            ..
        }
    ));
    assert!(matches!(
        l.a.operational().pfc,
        OperPfc::Operational {
            source: Source::Local,
            ..
        }
    ));
    assert_eq!(l.b.operational().pfc.enable(), 0b1000);
    assert!(
        l.b_events
            .iter()
            .any(|e| matches!(e, Event::OperationalChanged(_)))
    );
    assert!(
        l.b_events
            .iter()
            .any(|e| matches!(e, Event::RemoteChanged(Some(_))))
    );
}

#[test]
fn pfc_every_willing_combination_and_mac_order() {
    for (a_w, b_w) in [(false, false), (false, true), (true, false), (true, true)] {
        for (a_mac, b_mac) in [(1, 2), (2, 1)] {
            let mut l = Link::new(a_mac, pfc(a_w, &[3]), b_mac, pfc(b_w, &[4]));
            l.run_for(secs(3));
            let (a, b) = (&l.a.operational().pfc, &l.b.operational().pfc);
            let case = format!("A willing {a_w} mac {a_mac}, B willing {b_w} mac {b_mac}: {a:?} / {b:?}");
            match (a_w, b_w) {
                (false, false) => {
                    assert!(!a.is_operational() && !b.is_operational(), "{case}");
                    assert_eq!((a.enable(), b.enable()), (0, 0), "never half-applied: {case}");
                }
                (true, false) => assert_eq!((enabled(a), enabled(b)), (vec![4], vec![4]), "{case}"),
                (false, true) => assert_eq!((enabled(a), enabled(b)), (vec![3], vec![3]), "{case}"),
                (true, true) => {
                    // The lower MAC adopts the other's configuration.
                    let want = if a_mac < b_mac { vec![4] } else { vec![3] };
                    assert_eq!((enabled(a), enabled(b)), (want.clone(), want), "{case}");
                }
            }
        }
    }
}

#[test]
fn unwilling_ends_with_equal_pfc_are_operational() {
    let mut l = Link::new(1, pfc(false, &[3, 4]), 2, pfc(false, &[4, 3]));
    l.run_for(secs(2));
    assert_eq!(enabled(&l.a.operational().pfc), vec![3, 4]);
    assert_eq!(enabled(&l.b.operational().pfc), vec![3, 4]);
}

#[test]
fn disagreement_is_reported_with_both_vectors() {
    let mut l = Link::new(1, pfc(false, &[3]), 2, pfc(false, &[5]));
    l.run_for(secs(2));
    let OperPfc::NotOperational { reason } = &l.a.operational().pfc else {
        panic!()
    };
    assert!(reason.contains("[3]") && reason.contains("[5]"), "{reason}");
    assert!(
        l.a_events
            .iter()
            .any(|e| matches!(e, Event::OperationalChanged(o) if !o.pfc.is_operational()))
    );
}

fn ets(willing: bool, up2tc: [u8; 8], tcbw: [u8; 8], rec: Option<EtsParams>) -> DcbxConfig {
    let mut c = pfc(false, &[]);
    c.ets.willing = willing;
    c.ets.params = EtsParams {
        up2tc,
        tcbw,
        tsa: [TsaName::Ets; 8],
    };
    c.ets.recommendation = rec;
    c
}

#[test]
fn ets_is_asymmetric_willing_side_adopts_the_peer_recommendation() {
    let rec = EtsParams {
        up2tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tcbw: [40, 60, 0, 0, 0, 0, 0, 0],
        tsa: [
            TsaName::Ets,
            TsaName::Ets,
            TsaName::Strict,
            TsaName::Strict,
            TsaName::Strict,
            TsaName::Strict,
            TsaName::Strict,
            TsaName::Strict,
        ],
    };
    let switch = ets(false, [0; 8], [100, 0, 0, 0, 0, 0, 0, 0], Some(rec));
    let host = ets(true, [0, 1, 0, 0, 0, 0, 0, 0], [50, 50, 0, 0, 0, 0, 0, 0], None);
    let mut l = Link::new(1, switch, 2, host);
    l.run_for(secs(2));
    assert_eq!(
        l.b.operational().ets.params,
        rec,
        "host uses the switch's recommendation"
    );
    assert_eq!(l.b.operational().ets.source, Source::Peer);
    // The switch is not willing: it keeps its own configuration, not the host's.
    assert_eq!(l.a.operational().ets.params.tcbw, [100, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(l.a.operational().ets.source, Source::Local);
    // The remote view holds what the peer sent.
    let r = l.b.remote().unwrap();
    assert_eq!(r.ets_recommendation, Some(rec));
    assert!(!r.ets.unwrap().willing);
}

#[test]
fn app_tables_merge_unless_local_has_the_selector_and_protocol() {
    let fcoe_local = AppPriority {
        selector: 1,
        protocol: 0x8906,
        priority: 3,
    };
    let fcoe_peer = AppPriority {
        selector: 1,
        protocol: 0x8906,
        priority: 5,
    };
    let roce = AppPriority {
        selector: 3,
        protocol: 4791,
        priority: 4,
    };
    let mut a = pfc(false, &[]);
    a.app = vec![fcoe_local];
    let mut b = pfc(false, &[]);
    b.app = vec![fcoe_peer, roce];
    let mut l = Link::new(1, a, 2, b);
    l.run_for(secs(2));
    assert_eq!(l.a.operational().app, vec![fcoe_local, roce]);
    assert_eq!(l.b.operational().app, vec![fcoe_peer, roce]);
}

#[test]
fn silent_peer_ages_out_after_its_ttl_and_operational_returns_to_local() {
    let mut l = Link::new(1, pfc(false, &[3]), 2, pfc(true, &[]));
    l.run_for(secs(2));
    assert_eq!(enabled(&l.b.operational().pfc), vec![3]);
    l.a_to_b = false;
    let cut = l.now;
    l.run_for(secs(119));
    assert!(l.b.remote().is_some(), "TTL 121 s not over yet");
    l.run_for(secs(3));
    assert!(l.b.remote().is_none());
    assert!(l.b.operational().pfc.enable() == 0);
    assert!(matches!(
        l.b.operational().pfc,
        OperPfc::Operational {
            source: Source::NoPeer,
            ..
        }
    ));
    assert_eq!(l.b.statistics().ageouts_total, 1);
    assert!(l.b_events.iter().any(|e| matches!(e, Event::NeighbourAgedOut(_))));
    assert!(l.now > cut);
}

#[test]
fn shutdown_lldpdu_removes_the_peer_at_once() {
    let mut l = Link::new(1, pfc(false, &[3]), 2, pfc(true, &[]));
    l.run_for(secs(2));
    let now = l.now;
    l.a.shutdown(now);
    l.run_for(secs(0));
    assert!(l.b.remote().is_none());
    assert!(l.b_events.iter().any(|e| matches!(e, Event::ShutdownReceived(_))));
    assert_eq!(l.b.statistics().ageouts_total, 0);
}

#[test]
fn ieee_agents_stay_in_ieee_mode_in_auto() {
    let mut a = pfc(false, &[3]);
    a.mode = ModeSetting::Auto;
    let mut b = pfc(true, &[]);
    b.mode = ModeSetting::Auto;
    let mut l = Link::new(1, a, 2, b);
    l.run_for(secs(5));
    assert_eq!((l.a.mode(), l.b.mode()), (Mode::Ieee, Mode::Ieee));
    assert_eq!(enabled(&l.b.operational().pfc), vec![3]);
}

#[test]
fn invalid_configuration_is_rejected_with_the_field_named() {
    let mut c = pfc(false, &[9]);
    let e = lossless_proto::dcbx::Agent::new(lossless_proto::lldp_agent::AgentConfig::new([2; 6]), c.clone())
        .unwrap_err();
    assert!(e.to_string().contains("pfc.enable"), "{e}");
    c.pfc.enable = vec![];
    c.ets.params.tcbw = [50, 0, 0, 0, 0, 0, 0, 0];
    let e = lossless_proto::dcbx::Agent::new(lossless_proto::lldp_agent::AgentConfig::new([2; 6]), c)
        .unwrap_err();
    assert!(e.to_string().contains("100"), "{e}");
}

#[test]
fn a_second_neighbour_neither_replaces_the_established_peer_nor_switches_dcbx_off() {
    use lossless_proto::dcbx::Agent;
    use lossless_proto::lldp_agent::AgentConfig;
    use lossless_proto::units::Instant;
    let mut host = Agent::new(AgentConfig::new(dcbx_support::mac(9)), pfc(true, &[])).unwrap();
    let mut s1 = Agent::new(AgentConfig::new(dcbx_support::mac(1)), pfc(false, &[3])).unwrap();
    let mut s2 = Agent::new(AgentConfig::new(dcbx_support::mac(2)), pfc(false, &[4])).unwrap();
    let t = Instant::ZERO;
    let f1 = s1.poll_transmit(t).unwrap();
    assert!(host.handle_ethernet(t, &f1));
    assert_eq!(host.operational().pfc.enable(), 1 << 3, "one peer: adopted");
    let peer = host.peer().cloned().expect("the only neighbour is the peer");
    let f2 = s2.poll_transmit(t).unwrap();
    assert!(host.handle_ethernet(t, &f2));
    assert_eq!(host.neighbours().len(), 2);
    assert_eq!(host.peer(), Some(&peer), "the established peer is kept");
    assert_eq!(host.remote().unwrap().src_mac, dcbx_support::mac(1));
    assert_eq!(host.operational().pfc.enable(), 1 << 3);
    let events: Vec<Event> = std::iter::from_fn(|| host.poll_event()).collect();
    assert!(
        events.contains(&Event::MultiplePeers {
            neighbours: 2,
            kept: Some(peer)
        }),
        "{events:?}"
    );
    // The second neighbour's frames change nothing; the peer's do.
    let t = t + secs(1);
    s2.set_config(t, pfc(false, &[6])).unwrap();
    while let Some(f) = s2.poll_transmit(t) {
        host.handle_ethernet(t, &f);
    }
    assert_eq!(host.operational().pfc.enable(), 1 << 3);
    s1.set_config(t, pfc(false, &[5])).unwrap();
    while let Some(f) = s1.poll_transmit(t) {
        host.handle_ethernet(t, &f);
    }
    assert_eq!(host.operational().pfc.enable(), 1 << 5, "the peer is followed");
}

#[test]
fn without_an_established_peer_several_neighbours_mean_no_peer_until_one_is_left() {
    use lossless_proto::dcbx::Agent;
    use lossless_proto::lldp_agent::AgentConfig;
    use lossless_proto::units::Instant;
    let mut host = Agent::new(AgentConfig::new(dcbx_support::mac(9)), pfc(true, &[])).unwrap();
    let mut s =
        [1, 2, 3].map(|n| Agent::new(AgentConfig::new(dcbx_support::mac(n)), pfc(false, &[n + 2])).unwrap());
    let t = Instant::ZERO;
    for a in &mut s {
        let f = a.poll_transmit(t).unwrap();
        assert!(host.handle_ethernet(t, &f));
    }
    assert_eq!(
        host.operational().pfc.enable(),
        1 << 3,
        "the first one is the peer"
    );
    // The peer leaves: two neighbours are left, neither is established.
    s[0].shutdown(t);
    let f = s[0].poll_transmit(t).unwrap();
    host.handle_ethernet(t, &f);
    let _ = std::iter::from_fn(|| host.poll_event()).count();
    assert_eq!(host.neighbours().len(), 2);
    assert!(host.peer().is_none() && host.remote().is_none());
    assert!(matches!(
        host.operational().pfc,
        OperPfc::Operational {
            source: Source::NoPeer,
            ..
        }
    ));
    assert_eq!(host.operational().pfc.enable(), 0);
    // One more leaves: the last one is the peer.
    s[1].shutdown(t);
    let f = s[1].poll_transmit(t).unwrap();
    host.handle_ethernet(t, &f);
    assert_eq!(host.remote().unwrap().src_mac, dcbx_support::mac(3));
    assert_eq!(host.operational().pfc.enable(), 1 << 5);
}

#[test]
fn link_down_deletes_the_peer_and_link_up_renegotiates() {
    let mut l = Link::new(1, pfc(false, &[3]), 2, pfc(true, &[]));
    l.run_for(secs(2));
    // The cable goes: both ends see the link down.
    let now = l.now;
    l.a.link_down(now);
    l.b.link_down(now);
    assert!(l.b.remote().is_none());
    assert_eq!(l.b.operational().pfc.enable(), 0);
    l.run_for(secs(1));
    let now = l.now;
    l.a.link_up(now);
    l.b.link_up(now);
    l.run_for(secs(2));
    assert_eq!(
        l.b.operational().pfc.enable(),
        1 << 3,
        "adopted again after link-up"
    );
}
