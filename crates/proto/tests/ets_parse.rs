//! The ETS settings in lldptool's and `dcb ets`'s syntax, and every validation error with the
//! field and the rule it names.

use lossless_proto::ets::{
    Algorithm, BandwidthMap, CeeConfig, CeeConfigError, EtsConfig, EtsConfigError, ParseError, PortParams,
    PrioTcMap, Scheduler, SchedulerError, TsaMap,
};
use lossless_proto::units::{Instant, Rate};
use lossless_wire::lldp::Tsa;

const S: Tsa = Tsa::STRICT;
const C: Tsa = Tsa::CREDIT_BASED_SHAPER;
const E: Tsa = Tsa::ETS;
const V: Tsa = Tsa::VENDOR;

#[test]
fn lldptool_tsa_strings() {
    let table: &[(&str, [Tsa; 8])] = &[
        ("0:ets,1:ets,2:strict", [E, E, S, S, S, S, S, S]),
        ("7:ets", [S, S, S, S, S, S, S, E]),
        ("0:cb_shaper,3:vendor", [C, S, S, V, S, S, S, S]),
        ("none", [S; 8]),
        (" 0:ets , 1:strict ", [E, S, S, S, S, S, S, S]),
    ];
    for (s, want) in table {
        assert_eq!(TsaMap::from_lldptool(s).unwrap().0, *want, "{s:?}");
        assert_eq!(s.parse::<TsaMap>().unwrap().0, *want, "FromStr {s:?}");
    }
}

#[test]
fn dcb_tsa_strings() {
    let table: &[(&str, [Tsa; 8])] = &[
        ("0:ets 1:strict", [E, S, S, S, S, S, S, S]),
        ("all:ets 7:strict", [E, E, E, E, E, E, E, S]),
        ("2:cbs 5:vendor", [S, S, C, S, S, V, S, S]),
        ("", [S; 8]),
    ];
    for (s, want) in table {
        assert_eq!(TsaMap::from_dcb(s).unwrap().0, *want, "{s:?}");
    }
    assert_eq!(
        "0:ets 1:strict".parse::<TsaMap>().unwrap().0,
        [E, S, S, S, S, S, S, S]
    );
}

#[test]
fn priority_maps_in_both_syntaxes() {
    let want = [
        Some(0),
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        Some(5),
        Some(6),
        Some(7),
    ];
    assert_eq!(
        PrioTcMap::from_lldptool("0:0,1:1,2:2,3:3,4:4,5:5,6:6,7:7")
            .unwrap()
            .0,
        want
    );
    assert_eq!(
        PrioTcMap::from_dcb("0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7").unwrap().0,
        want
    );
    assert_eq!(
        PrioTcMap::from_dcb("all:0 7:1").unwrap().0,
        [
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(1)
        ]
    );
    assert_eq!(PrioTcMap::from_lldptool("none").unwrap().0, [Some(0); 8]);
    assert_eq!(
        PrioTcMap::from_lldptool("3:2").unwrap().0,
        [None, None, None, Some(2), None, None, None, None]
    );
    assert_eq!("0:1 1:0".parse::<PrioTcMap>().unwrap().0[..2], [Some(1), Some(0)]);
}

#[test]
fn bandwidth_maps_in_both_syntaxes() {
    assert_eq!(
        BandwidthMap::from_lldptool("12,13,75").unwrap().0,
        [12, 13, 75, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        BandwidthMap::from_lldptool("10,10,10,10,10,10,10,30").unwrap().0,
        [10, 10, 10, 10, 10, 10, 10, 30]
    );
    assert_eq!(
        BandwidthMap::from_dcb("0:10 1:90").unwrap().0,
        [10, 90, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        BandwidthMap::from_dcb("all:0 3:100").unwrap().0,
        [0, 0, 0, 100, 0, 0, 0, 0]
    );
    assert_eq!("0:10 1:90".parse::<BandwidthMap>().unwrap().0[..2], [10, 90]);
    assert_eq!("7,93".parse::<BandwidthMap>().unwrap().0[..2], [7, 93]);
}

#[test]
fn malformed_strings_name_the_field_and_the_item() {
    let cases: Vec<(Result<(), ParseError>, &str)> = vec![
        (
            TsaMap::from_lldptool("0:fast").map(drop),
            "tsa: item \"0:fast\" is not valid",
        ),
        (TsaMap::from_lldptool("0:cbs").map(drop), "tsa: item \"0:cbs\""),
        (
            TsaMap::from_dcb("0:cb_shaper").map(drop),
            "tc-tsa: item \"0:cb_shaper\"",
        ),
        (
            TsaMap::from_lldptool("8:ets").map(drop),
            "tsa: tc 8 in \"8:ets\" is out of range, allowed 0..=7",
        ),
        (
            TsaMap::from_lldptool("0:ets,0:strict").map(drop),
            "tsa: tc 0 is given twice",
        ),
        (
            TsaMap::from_dcb("ets").map(drop),
            "tc-tsa: item \"ets\" is not valid",
        ),
        (
            PrioTcMap::from_lldptool("0:0,0:1").map(drop),
            "up2tc: priority 0 is given twice",
        ),
        (PrioTcMap::from_lldptool("9:0").map(drop), "up2tc: priority 9"),
        (
            PrioTcMap::from_dcb("1:8").map(drop),
            "prio-tc: tc 8 in \"1:8\" is out of range",
        ),
        (PrioTcMap::from_dcb("-1:0").map(drop), "prio-tc: item \"-1:0\""),
        (
            BandwidthMap::from_lldptool("10,20,30,10,10,10,5,5,0").map(drop),
            "tcbw: 9 values given, at most 8",
        ),
        (BandwidthMap::from_lldptool("50,x").map(drop), "tcbw: item \"x\""),
        (
            BandwidthMap::from_lldptool("1000").map(drop),
            "tcbw: item \"1000\"",
        ),
        (
            BandwidthMap::from_dcb("0:50 0:50").map(drop),
            "tc-bw: tc 0 is given twice",
        ),
        (
            EtsConfig::from_lldptool_args("tsa=0:ets willing=1").map(drop),
            "unknown setting \"willing\"",
        ),
        (
            EtsConfig::from_lldptool_args("up2tc").map(drop),
            "unknown setting \"up2tc\"",
        ),
        (
            EtsConfig::from_dcb_args("tc-tsa 0:ets pg-bw 0:100").map(drop),
            "unknown setting \"pg-bw\"",
        ),
    ];
    for (r, want) in cases {
        let msg = r.expect_err(want).to_string();
        assert!(msg.contains(want), "{msg:?} should contain {want:?}");
    }
}

#[test]
fn whole_configurations_from_lldptool_and_dcb_agree() {
    let a = EtsConfig::from_lldptool_args(
        "tsa=0:ets,1:ets,2:ets,3:strict up2tc=0:0,1:1,2:2,3:2,4:2,5:2,6:3,7:3 tcbw=7,13,80",
    )
    .unwrap();
    let b = EtsConfig::from_dcb_args(
        "tc-tsa 0:ets 1:ets 2:ets 3:strict tc-bw 0:7 1:13 2:80 prio-tc all:2 0:0 1:1 6:3 7:3",
    )
    .unwrap();
    assert_eq!(a, b);
    assert_eq!(
        a.algorithm()[..4],
        [Algorithm::Ets, Algorithm::Ets, Algorithm::Ets, Algorithm::Strict]
    );
    assert_eq!(a.bandwidth(), [7, 13, 80, 0, 0, 0, 0, 0]);
    assert_eq!(a.prio_tc(), [0, 1, 2, 2, 2, 2, 3, 3]);
    assert_eq!(a.priorities_of(2), 0b0011_1100);
    assert_eq!(a.max_tcs(), 8);
    // keyword order does not matter in dcb
    let c = EtsConfig::from_dcb_args("prio-tc 0:0 1:1 2:2 3:2 4:2 5:2 6:3 7:3 tc-bw 0:7 1:13 2:80 tc-tsa all:ets 3:strict 4:strict 5:strict 6:strict 7:strict").unwrap();
    assert_eq!(a, c);
}

fn cfg(max: u8, up: [Option<u8>; 8], tsa: [Tsa; 8], bw: [u8; 8]) -> Result<EtsConfig, EtsConfigError> {
    EtsConfig::new(max, up, tsa, bw)
}

#[test]
fn every_ets_validation_error_names_its_field_and_rule() {
    let all0 = [Some(0); 8];
    let mut unmapped = all0;
    unmapped[5] = None;
    let mut to_tc3 = all0;
    to_tc3[6] = Some(3);
    let cases: Vec<(Result<EtsConfig, EtsConfigError>, EtsConfigError, &str)> = vec![
        (
            cfg(0, all0, [S; 8], [0; 8]),
            EtsConfigError::MaxTcs { found: 0 },
            "max_tcs: found 0, allowed 1..=8",
        ),
        (
            cfg(9, all0, [S; 8], [0; 8]),
            EtsConfigError::MaxTcs { found: 9 },
            "allowed 1..=8",
        ),
        (
            cfg(8, unmapped, [S; 8], [0; 8]),
            EtsConfigError::PriorityMappedNowhere { priority: 5 },
            "up2tc/prio-tc: priority 5 is mapped to no traffic class",
        ),
        (
            cfg(3, to_tc3, [S; 8], [0; 8]),
            EtsConfigError::PriorityTcBeyondMaxTcs {
                priority: 6,
                tc: 3,
                max_tcs: 3,
            },
            "priority 6 is mapped to TC 3, allowed 0..=2 (MaxTCs 3)",
        ),
        (
            cfg(2, all0, [E, E, E, S, S, S, S, S], [50, 40, 10, 0, 0, 0, 0, 0]),
            EtsConfigError::BandwidthBeyondMaxTcs {
                tc: 2,
                bandwidth: 10,
                max_tcs: 2,
            },
            "tcbw/tc-bw: TC 2 has 10% but only TCs 0..=1 exist (MaxTCs 2)",
        ),
        (
            cfg(8, all0, [E, V, S, S, S, S, S, S], [100, 0, 0, 0, 0, 0, 0, 0]),
            EtsConfigError::VendorTsa { tc: 1 },
            "tsa/tc-tsa: TC 1 uses the vendor-specific algorithm (255)",
        ),
        (
            cfg(8, all0, [E, Tsa(7), S, S, S, S, S, S], [100, 0, 0, 0, 0, 0, 0, 0]),
            EtsConfigError::ReservedTsa { tc: 1, value: 7 },
            "TC 1 has reserved algorithm number 7",
        ),
        (
            cfg(8, all0, [E; 8], [101, 0, 0, 0, 0, 0, 0, 0]),
            EtsConfigError::BandwidthOver100 { tc: 0, found: 101 },
            "TC 0 has 101%, allowed 0..=100",
        ),
        (
            cfg(8, all0, [E, S, S, S, S, S, S, S], [90, 10, 0, 0, 0, 0, 0, 0]),
            EtsConfigError::BandwidthOnNonEts {
                tc: 1,
                algorithm: "strict",
                bandwidth: 10,
            },
            "TC 1 uses strict and has 10%; bandwidth applies to ETS TCs only",
        ),
        (
            cfg(8, all0, [E, C, S, S, S, S, S, S], [90, 10, 0, 0, 0, 0, 0, 0]),
            EtsConfigError::BandwidthOnNonEts {
                tc: 1,
                algorithm: "cbs",
                bandwidth: 10,
            },
            "TC 1 uses cbs",
        ),
        (
            cfg(8, all0, [E, E, S, S, S, S, S, S], [12, 13, 0, 0, 0, 0, 0, 0]),
            EtsConfigError::BandwidthSum { found: 25 },
            "the bandwidths of the ETS TCs sum to 25%, they must sum to 100%",
        ),
    ];
    for (got, want, text) in cases {
        assert_eq!(got, Err(want));
        let msg = want.to_string();
        assert!(msg.contains(text), "{msg:?} should contain {text:?}");
    }
    // parse errors carry the validation error through
    let e = EtsConfig::from_lldptool_args("tsa=0:ets,1:ets up2tc=none tcbw=50,49").unwrap_err();
    assert_eq!(e, ParseError::Invalid(EtsConfigError::BandwidthSum { found: 99 }));
    let e = EtsConfig::from_dcb_args("tc-tsa 0:ets 1:vendor tc-bw 0:100 prio-tc all:0").unwrap_err();
    assert_eq!(e, ParseError::Invalid(EtsConfigError::VendorTsa { tc: 1 }));
    let e = EtsConfig::from_lldptool_args("up2tc=0:0,1:0,2:0").unwrap_err();
    assert_eq!(
        e,
        ParseError::Invalid(EtsConfigError::PriorityMappedNowhere { priority: 3 })
    );
    let e = EtsConfig::from_lldptool_args("up2tc=none,7:4 numtcs=4").unwrap_err();
    assert!(matches!(e, ParseError::Syntax { field: "up2tc", .. }), "{e:?}");
    let e = EtsConfig::from_lldptool_args("up2tc=0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:4 numtcs=4").unwrap_err();
    assert_eq!(
        e,
        ParseError::Invalid(EtsConfigError::PriorityTcBeyondMaxTcs {
            priority: 7,
            tc: 4,
            max_tcs: 4
        })
    );
}

#[test]
fn valid_edge_configurations() {
    let all0 = [Some(0); 8];
    // all strict: no bandwidth needed
    assert!(cfg(8, all0, [S; 8], [0; 8]).is_ok());
    // TSAs beyond MaxTCs are ignored
    let c = cfg(2, all0, [E, E, V, Tsa(9), E, E, E, E], [60, 40, 0, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!(c.algorithm()[2..], [Algorithm::Strict; 6]);
    // one ETS class at 100 % and an ETS class at 0 %
    assert!(cfg(8, all0, [E, E, S, S, S, S, S, S], [100, 0, 0, 0, 0, 0, 0, 0]).is_ok());
}

#[test]
fn every_cee_validation_error_names_its_field_and_rule() {
    let ok_pg = [100, 0, 0, 0, 0, 0, 0, 0];
    let cases: Vec<(Result<CeeConfig, CeeConfigError>, CeeConfigError, &str)> = vec![
        (
            CeeConfig::with_equal_priority_shares([0, 0, 0, 0, 0, 0, 0, 9], ok_pg, 8),
            CeeConfigError::Pgid {
                priority: 7,
                found: 9,
            },
            "pgid: priority 7 has PGID 9, allowed 0..=7 or 15 (strict)",
        ),
        (
            CeeConfig::with_equal_priority_shares([0; 8], [101, 0, 0, 0, 0, 0, 0, 0], 8),
            CeeConfigError::Over100 {
                field: "pgpct",
                index: 0,
                found: 101,
            },
            "pgpct: entry 0 is 101%",
        ),
        (
            CeeConfig::new([0; 8], ok_pg, [101, 0, 0, 0, 0, 0, 0, 0], 8),
            CeeConfigError::Over100 {
                field: "uppct",
                index: 0,
                found: 101,
            },
            "uppct: entry 0 is 101%",
        ),
        (
            CeeConfig::with_equal_priority_shares([0; 8], [50, 40, 0, 0, 0, 0, 0, 0], 8),
            CeeConfigError::PgSum { found: 90 },
            "pgpct: the PG bandwidths sum to 90%",
        ),
        (
            CeeConfig::new(
                [0, 0, 1, 1, 15, 15, 15, 15],
                [50, 50, 0, 0, 0, 0, 0, 0],
                [50, 50, 30, 30, 0, 0, 0, 0],
                8,
            ),
            CeeConfigError::PrioritySum { pg: 1, found: 60 },
            "uppct: the priorities of PG 1 have shares summing to 60%",
        ),
        (
            CeeConfig::with_equal_priority_shares([0, 1, 2, 3, 4, 4, 4, 4], [20, 20, 20, 20, 20, 0, 0, 0], 4),
            CeeConfigError::TooManyGroups { found: 5, num_tcs: 4 },
            "5 priority groups are in use but NumTCs is 4",
        ),
    ];
    for (got, want, text) in cases {
        assert_eq!(got, Err(want));
        let msg = want.to_string();
        assert!(msg.contains(text), "{msg:?} should contain {text:?}");
    }
    let c = CeeConfig::with_equal_priority_shares([0, 0, 0, 1, 1, 15, 15, 15], [60, 40, 0, 0, 0, 0, 0, 0], 8)
        .unwrap();
    assert_eq!(c.prio_bandwidth(), [34, 33, 33, 50, 50, 0, 0, 0]);
}

#[test]
fn scheduler_errors_name_field_and_rule() {
    let g100 = Rate::from_gbps(100);
    let cbs = EtsConfig::from_lldptool_args("tsa=0:ets,1:cb_shaper up2tc=none tcbw=100").unwrap();
    assert_eq!(
        Scheduler::ieee(&cbs, &PortParams::new(g100)).unwrap_err(),
        SchedulerError::MissingIdleSlope { tc: 1 }
    );
    let e = Scheduler::ieee(
        &cbs,
        &PortParams::new(g100).with_idle_slope(1, Rate::from_gbps(200)),
    )
    .unwrap_err();
    assert_eq!(
        e,
        SchedulerError::IdleSlopeAboveRate {
            tc: 1,
            idle_slope_bps: 200_000_000_000,
            rate_bps: 100_000_000_000
        }
    );
    assert!(e.to_string().contains("allowed up to the port rate"));
    let mut p = PortParams::new(g100);
    p.max_frame_bytes = 0;
    assert_eq!(Scheduler::ieee(&cbs, &p).unwrap_err(), SchedulerError::MaxFrame);

    let mut s = Scheduler::ieee(
        &cbs,
        &PortParams::new(g100).with_idle_slope(1, Rate::from_gbps(10)),
    )
    .unwrap();
    let t = Instant::ZERO;
    assert_eq!(s.enqueue(t, 8, 64), Err(SchedulerError::Priority { found: 8 }));
    assert_eq!(
        s.enqueue(t, 0, 0),
        Err(SchedulerError::FrameSize {
            priority: 0,
            found: 0,
            max: 9216
        })
    );
    assert_eq!(
        s.enqueue(t, 0, 9217),
        Err(SchedulerError::FrameSize {
            priority: 0,
            found: 9217,
            max: 9216
        })
    );
    assert!(s.enqueue(t, 0, 9216).is_ok());
    assert_eq!(
        s.on_transmitted(t, 1, 64),
        Err(SchedulerError::NotQueued {
            priority: 1,
            bytes: 64,
            queued: 0,
            frames: 0
        })
    );
    assert_eq!(
        s.on_transmitted(t, 0, 9300),
        Err(SchedulerError::NotQueued {
            priority: 0,
            bytes: 9300,
            queued: 9216,
            frames: 1
        })
    );
    assert!(s.on_transmitted(t, 0, 9216).is_ok());
    assert_eq!(s.select(t, 0), None);
}
