//! CEE DCBX between two of our agents: the Control seq/ack handshake, Enable/Willing/Error
//! flags, PG/PFC/App negotiation, and lldpad's IEEE-to-CEE fallback in auto mode.

mod dcbx_support;

use dcbx_support::{Link, secs};
use lossless_proto::dcbx::{
    AppPriority, DcbxConfig, EtsParams, Event, Mode, ModeSetting, OperPfc, PfcConfig, Source, TsaName,
};
use lossless_wire::lldp::{CeeSubTlv, CeeTlv, LldpduRepr, OrgTlv, Tlv};

fn cfg(mode: ModeSetting, willing: bool, enable: &[u8]) -> DcbxConfig {
    DcbxConfig {
        mode,
        pfc: PfcConfig {
            willing,
            enable: enable.to_vec(),
            ..PfcConfig::default()
        },
        ..DcbxConfig::default()
    }
}

/// The CEE sub-TLVs of the last frame a side sent.
fn last_cee(sent: &[(lossless_proto::units::Instant, Vec<u8>)]) -> Vec<CeeSubTlv> {
    let f = &sent.last().expect("a frame").1;
    let d = LldpduRepr::parse(&f[14..]);
    assert!(d.error.is_none());
    d.tlvs
        .iter()
        .find_map(|t| match t {
            Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(d))) => Some(d.sub_tlvs.clone()),
            _ => None,
        })
        .expect("a CEE DCBX TLV")
}

fn has_ieee(sent: &[(lossless_proto::units::Instant, Vec<u8>)]) -> bool {
    let f = &sent.last().expect("a frame").1;
    LldpduRepr::parse(&f[14..])
        .tlvs
        .iter()
        .any(|t| matches!(t, Tlv::Org(OrgTlv::Ieee8021(_))))
}

#[test]
fn handshake_each_side_acknowledges_the_other_sequence_number() {
    let mut l = Link::new(
        1,
        cfg(ModeSetting::Cee, false, &[3]),
        2,
        cfg(ModeSetting::Cee, true, &[]),
    );
    l.run_for(secs(4));
    let (ha, hb) = (l.a.cee_handshake(), l.b.cee_handshake());
    assert_eq!(ha.ack, hb.seq);
    assert_eq!(hb.ack, ha.seq);
    assert!(ha.synced() && hb.synced());
    let CeeSubTlv::Control(c) = last_cee(&l.a_sent)[0] else {
        panic!("Control first")
    };
    assert_eq!((c.seq, c.ack), (ha.seq, hb.seq));
    assert!(l.b.operational().cee_synced);
}

#[test]
fn willing_cee_host_adopts_switch_pfc_and_priority_groups() {
    let mut sw = cfg(ModeSetting::Cee, false, &[3]);
    sw.ets.params = EtsParams {
        up2tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tcbw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [TsaName::Ets; 8],
    };
    let mut host = cfg(ModeSetting::Cee, true, &[]);
    host.ets.willing = true;
    let mut l = Link::new(1, sw, 2, host);
    l.run_for(secs(4));
    let o = l.b.operational();
    assert_eq!(o.mode, Mode::Cee);
    assert!(matches!(
        o.pfc,
        OperPfc::Operational {
            source: Source::Peer,
            ..
        }
    ));
    assert_eq!(o.pfc.enable(), 1 << 3);
    assert_eq!(o.ets.source, Source::Peer);
    assert_eq!(o.ets.params.up2tc, [0, 0, 0, 1, 0, 0, 0, 0]);
    assert_eq!(o.ets.params.tcbw[..2], [50, 50]);
    // Our PFC sub-TLV carries Enable and Willing as configured, no Error.
    let subs = last_cee(&l.b_sent);
    let pfc = subs
        .iter()
        .find_map(|s| if let CeeSubTlv::Pfc(p) = s { Some(*p) } else { None })
        .unwrap();
    assert!(pfc.header.enabled && pfc.header.willing && !pfc.header.error);
}

#[test]
fn unwilling_cee_peers_that_disagree_set_the_error_flag_and_pfc_is_not_operational() {
    let mut l = Link::new(
        1,
        cfg(ModeSetting::Cee, false, &[3]),
        2,
        cfg(ModeSetting::Cee, false, &[4]),
    );
    l.run_for(secs(6));
    assert!(!l.a.operational().pfc.is_operational());
    assert!(!l.b.operational().pfc.is_operational());
    let remote = l.a.remote().unwrap().cee.as_ref().unwrap();
    assert!(remote.pfc.as_ref().unwrap().error, "peer reports its Error flag");
    assert!(
        l.a.cee_handshake().synced(),
        "the error flag change was acknowledged"
    );
}

#[test]
fn cee_willing_combinations_follow_the_same_rules_as_ieee_pfc() {
    for (a_w, b_w, want_a, want_b) in [
        (true, false, Some(4u8), Some(4u8)),
        (false, true, Some(3), Some(3)),
        (true, true, Some(4), Some(4)),
        (false, false, None, None),
    ] {
        let mut l = Link::new(
            1,
            cfg(ModeSetting::Cee, a_w, &[3]),
            2,
            cfg(ModeSetting::Cee, b_w, &[4]),
        );
        l.run_for(secs(6));
        let got = |o: &OperPfc| o.is_operational().then(|| o.enable().trailing_zeros() as u8);
        assert_eq!(
            got(&l.a.operational().pfc),
            want_a,
            "A willing {a_w} B willing {b_w}"
        );
        assert_eq!(
            got(&l.b.operational().pfc),
            want_b,
            "A willing {a_w} B willing {b_w}"
        );
    }
}

#[test]
fn auto_mode_falls_back_to_cee_when_the_peer_speaks_only_cee() {
    let mut l = Link::new(
        1,
        cfg(ModeSetting::Cee, false, &[3]),
        2,
        cfg(ModeSetting::Auto, true, &[]),
    );
    l.a_to_b = false;
    l.run_for(secs(0));
    assert!(has_ieee(&l.b_sent[..1]), "auto starts in IEEE mode");
    assert_eq!(l.b.mode(), Mode::Ieee);
    l.a_to_b = true;
    l.run_for(secs(4));
    assert_eq!(l.b.mode(), Mode::Cee);
    assert!(l.b_events.contains(&Event::ModeChanged(Mode::Cee)));
    assert!(
        !has_ieee(&l.b_sent) && !last_cee(&l.b_sent).is_empty(),
        "now sends CEE only"
    );
    assert_eq!(l.b.operational().pfc.enable(), 1 << 3);
}

#[test]
fn cee_app_entries_merge_and_convert_selectors() {
    let mut a = cfg(ModeSetting::Cee, false, &[]);
    a.app = vec![AppPriority {
        selector: 1,
        protocol: 0x8906,
        priority: 3,
    }];
    let mut b = cfg(ModeSetting::Cee, false, &[]);
    b.app = vec![AppPriority {
        selector: 2,
        protocol: 3260,
        priority: 4,
    }];
    let mut l = Link::new(1, a, 2, b);
    l.run_for(secs(4));
    assert_eq!(
        l.a.operational().app,
        vec![
            AppPriority {
                selector: 1,
                protocol: 0x8906,
                priority: 3
            },
            // A CEE TCP/UDP port entry reads back as 802.1Qaz selector 4 (any port).
            AppPriority {
                selector: 4,
                protocol: 3260,
                priority: 4
            },
        ]
    );
}

#[test]
fn strict_traffic_classes_travel_as_pgid_15_and_come_back_strict() {
    use lossless_proto::dcbx::cee::{ets_to_pg, pg_to_ets};
    use lossless_wire::lldp::CeePriorityGroups;
    let e = EtsParams {
        up2tc: [0, 0, 0, 1, 0, 7, 0, 0],
        tcbw: [70, 30, 0, 0, 0, 0, 0, 0],
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
    let (pgid, bw) = ets_to_pg(&e);
    assert_eq!(pgid, [0, 0, 0, 1, 0, 15, 0, 0]);
    assert_eq!(bw, [70, 30, 0, 0, 0, 0, 0, 0]);
    let back = pg_to_ets(&CeePriorityGroups {
        pgid,
        pg_bandwidth: bw,
        num_tcs: 8,
        ..Default::default()
    });
    assert_eq!(back.up2tc, e.up2tc);
    assert_eq!(back.tsa[7], TsaName::Strict);
    assert_eq!(back.tcbw, e.tcbw);
}
