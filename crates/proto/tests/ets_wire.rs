//! From the DCBX TLVs on the wire (lossless_wire's reprs) to the scheduler's configurations:
//! IEEE ETS Configuration/Recommendation into `EtsConfig`, CEE Priority Groups into `CeeConfig`,
//! including the ETS TLVs of a real capture (tcpdump's dcb_ets.pcap).

use lossless_proto::ets::{
    Algorithm, CeeConfig, CeeConfigError, EtsConfig, EtsConfigError, PortParams, Scheduler,
};
use lossless_proto::units::{Instant, Rate};
use lossless_wire::lldp::{
    CeePriorityGroups, CeeSubTlv, CeeTlv, EtsConfiguration, EtsRecommendation, EtsTables, Ieee8021Tlv,
    Lldpdu, OrgTlv, Tlv, Tsa,
};

fn tables() -> EtsTables {
    EtsTables {
        priority_tc: [0, 1, 2, 2, 2, 2, 3, 3],
        tc_bandwidth: [7, 13, 80, 0, 0, 0, 0, 0],
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    }
}

#[test]
fn ets_configuration_tlv_becomes_a_config_and_back() {
    let tlv = EtsConfiguration {
        willing: true,
        cbs: false,
        reserved: 0,
        max_tcs: 4,
        tables: tables(),
    };
    let cfg = EtsConfig::from_configuration_tlv(&tlv).unwrap();
    assert_eq!(cfg.max_tcs(), 4);
    assert_eq!(
        cfg.algorithm()[..4],
        [Algorithm::Ets, Algorithm::Ets, Algorithm::Ets, Algorithm::Strict]
    );
    assert_eq!(cfg.to_tables(), tables());
    let same = EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets,2:ets,3:strict up2tc=0:0,1:1,2:2,3:2,4:2,5:2,6:3,7:3 tcbw=7,13,80 numtcs=4",
    )
    .unwrap();
    assert_eq!(cfg, same);
}

#[test]
fn max_tcs_zero_on_the_wire_means_eight() {
    let tlv = EtsConfiguration {
        max_tcs: 0,
        tables: tables(),
        ..Default::default()
    };
    assert_eq!(EtsConfig::from_configuration_tlv(&tlv).unwrap().max_tcs(), 8);
}

#[test]
fn max_tcs_from_the_tlv_is_honoured() {
    let tlv = EtsConfiguration {
        max_tcs: 3,
        tables: tables(),
        ..Default::default()
    };
    assert_eq!(
        EtsConfig::from_configuration_tlv(&tlv),
        Err(EtsConfigError::PriorityTcBeyondMaxTcs {
            priority: 6,
            tc: 3,
            max_tcs: 3
        })
    );
}

#[test]
fn ets_recommendation_tlv_becomes_a_config() {
    let rec = EtsRecommendation {
        reserved: 0,
        tables: tables(),
    };
    let cfg = EtsConfig::from_recommendation_tlv(&rec).unwrap();
    assert_eq!(cfg.bandwidth(), [7, 13, 80, 0, 0, 0, 0, 0]);
}

#[test]
fn vendor_tsa_on_the_wire_is_rejected_by_name() {
    let mut t = tables();
    t.tsa[3] = Tsa::VENDOR;
    let tlv = EtsConfiguration {
        tables: t,
        ..Default::default()
    };
    let e = EtsConfig::from_configuration_tlv(&tlv).unwrap_err();
    assert_eq!(e, EtsConfigError::VendorTsa { tc: 3 });
    assert!(e.to_string().contains("vendor-specific"));
}

/// The LLDP payloads (after the 14-byte Ethernet header) of a little-endian or big-endian
/// classic pcap with Ethernet link type.
fn lldp_payloads(pcap: &[u8]) -> Vec<Vec<u8>> {
    assert!(pcap.len() >= 24, "pcap too short");
    let le = match pcap[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => panic!("not a classic pcap"),
    };
    let u32_at = |b: &[u8], o: usize| {
        let w = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= pcap.len() {
        let incl = u32_at(pcap, off + 8) as usize;
        let data = &pcap[off + 16..(off + 16 + incl).min(pcap.len())];
        if data.len() > 14 && data[12..14] == [0x88, 0xcc] {
            out.push(data[14..].to_vec());
        }
        off += 16 + incl;
    }
    out
}

#[test]
fn real_capture_ets_tlvs_with_tc_15_are_rejected_naming_the_priority() {
    let path = lossless_testkit::corpus_dir().join("tcpdump/dcb_ets.pcap");
    let pcap = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut seen = 0;
    let mut shown = 0;
    for payload in lldp_payloads(&pcap) {
        for tlv in Lldpdu::new(&payload).tlvs().flatten() {
            let result = match tlv {
                Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::EtsConfiguration(c))) => {
                    // tcpdump shows e.g. priorities 15 4 1 1 15 4 1 4, TC1 and TC4 ETS 50 % each
                    if c.tables.priority_tc == [15, 4, 1, 1, 15, 4, 1, 4] {
                        shown += 1;
                    }
                    EtsConfig::from_configuration_tlv(&c)
                }
                Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::EtsRecommendation(r))) => {
                    EtsConfig::from_recommendation_tlv(&r)
                }
                _ => continue,
            };
            seen += 1;
            assert_eq!(
                result,
                Err(EtsConfigError::PriorityTcBeyondMaxTcs {
                    priority: 0,
                    tc: 15,
                    max_tcs: 8
                })
            );
        }
    }
    assert!(
        seen >= 2,
        "the capture holds ETS Configuration and Recommendation TLVs; saw {seen}"
    );
    assert!(shown >= 1, "the table tcpdump prints is among them");
    // with its priority table repaired the same bandwidth tables run: TC1 and TC4 share 50/50
    let tables = EtsTables {
        priority_tc: [0, 4, 1, 1, 0, 4, 1, 4],
        tc_bandwidth: [0, 50, 0, 0, 50, 0, 0, 0],
        tsa: [
            Tsa::STRICT,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    };
    let cfg = EtsConfig::from_tables(8, &tables).unwrap();
    let mut s = Scheduler::ieee(&cfg, &PortParams::new(Rate::from_gbps(10))).unwrap();
    s.enqueue(Instant::ZERO, 2, 64).unwrap();
    s.enqueue(Instant::ZERO, 7, 64).unwrap();
    let sel = s.select(Instant::ZERO, 0).unwrap();
    assert_eq!(
        (sel.priority, sel.class),
        (7, 4),
        "TC4 and TC1 tie; the higher TC goes first"
    );
}

#[test]
fn cee_priority_groups_tlv_becomes_a_config_with_equal_priority_shares() {
    let pg = CeePriorityGroups {
        pgid: [0, 0, 0, 1, 1, 2, 15, 15],
        pg_bandwidth: [30, 50, 20, 0, 0, 0, 0, 0],
        num_tcs: 8,
        ..Default::default()
    };
    let cfg = CeeConfig::from_tlv(&pg).unwrap();
    assert_eq!(cfg.pgid(), pg.pgid);
    assert_eq!(cfg.pg_bandwidth(), pg.pg_bandwidth);
    assert_eq!(cfg.prio_bandwidth(), [34, 33, 33, 50, 50, 100, 0, 0]);
    let s = Scheduler::cee(&cfg, &PortParams::new(Rate::from_gbps(25))).unwrap();
    assert_eq!(
        (0..8).map(|p| s.class_of(p)).collect::<Vec<_>>(),
        vec![0, 0, 0, 1, 1, 2, 15, 15]
    );
}

#[test]
fn cee_tlv_errors_name_the_field() {
    let pg = CeePriorityGroups {
        pgid: [0, 0, 0, 1, 1, 2, 15, 12],
        pg_bandwidth: [30, 50, 20, 0, 0, 0, 0, 0],
        num_tcs: 8,
        ..Default::default()
    };
    assert_eq!(
        CeeConfig::from_tlv(&pg),
        Err(CeeConfigError::Pgid {
            priority: 7,
            found: 12
        })
    );
    let pg = CeePriorityGroups {
        pgid: [0; 8],
        pg_bandwidth: [30, 50, 0, 0, 0, 0, 0, 0],
        num_tcs: 8,
        ..Default::default()
    };
    assert_eq!(CeeConfig::from_tlv(&pg), Err(CeeConfigError::PgSum { found: 80 }));
}

#[test]
fn cee_sub_tlv_from_an_emitted_lldpdu_round_trips_into_the_config() {
    // find a CEE PG sub-TLV in the sample capture shipped with the project, if it has one
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures/sample.pcapng");
    let Ok(bytes) = std::fs::read(&path) else {
        panic!("{} is missing", path.display());
    };
    // pcapng: scan for LLDP frames by EtherType inside Enhanced Packet Blocks
    let mut found = 0;
    let mut i = 0;
    while i + 12 <= bytes.len() {
        let ty = u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let len = u32::from_le_bytes(bytes[i + 4..i + 8].try_into().unwrap()) as usize;
        if len < 12 || i + len > bytes.len() {
            break;
        }
        if ty == 6 {
            let cap = u32::from_le_bytes(bytes[i + 20..i + 24].try_into().unwrap()) as usize;
            let data = &bytes[i + 28..(i + 28 + cap).min(i + len)];
            if data.len() > 14 && data[12..14] == [0x88, 0xcc] {
                for tlv in Lldpdu::new(&data[14..]).tlvs().flatten() {
                    if let Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(d))) = tlv {
                        for sub in &d.sub_tlvs {
                            if let CeeSubTlv::PriorityGroups(pg) = sub {
                                found += 1;
                                if let Ok(cfg) = CeeConfig::from_tlv(pg) {
                                    assert_eq!(cfg.pgid(), pg.pgid);
                                    Scheduler::cee(&cfg, &PortParams::new(Rate::from_gbps(10))).unwrap();
                                }
                            }
                        }
                    }
                }
            }
        }
        i += len;
    }
    assert!(found > 0, "sample.pcapng has a CEE Priority Groups sub-TLV");
}
