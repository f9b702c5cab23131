//! tshark (the reference dissector) decodes our agent's LLDPDUs to the configured values, in
//! IEEE and CEE mode, and sees the TTL-0 shutdown LLDPDU.

use lossless_proto::dcbx::{Agent, AppPriority, DcbxConfig, EtsParams, ModeSetting, PfcConfig, TsaName};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::units::Instant;
use lossless_testkit::{require, temp_dir, tshark_fields, write_pcap};

fn switch(mode: ModeSetting) -> DcbxConfig {
    use TsaName::{Ets, Strict};
    DcbxConfig {
        mode,
        ets: lossless_proto::dcbx::EtsConfig {
            willing: false,
            cbs: true,
            max_tcs: 4,
            params: EtsParams {
                up2tc: [0, 0, 0, 1, 2, 0, 0, 0],
                tcbw: [30, 50, 20, 0, 0, 0, 0, 0],
                tsa: [Ets, Ets, Ets, Strict, Strict, Strict, Strict, Strict],
            },
            recommendation: Some(EtsParams {
                up2tc: [0, 0, 0, 1, 0, 0, 0, 0],
                tcbw: [40, 60, 0, 0, 0, 0, 0, 0],
                tsa: [Ets, Ets, Strict, Strict, Strict, Strict, Strict, Strict],
            }),
        },
        pfc: PfcConfig {
            willing: true,
            mbc: true,
            cap: 4,
            enable: vec![3, 5],
        },
        app: vec![
            AppPriority {
                selector: 3,
                protocol: 4791,
                priority: 3,
            },
            AppPriority {
                selector: 1,
                protocol: 0x8906,
                priority: 5,
            },
        ],
    }
}

/// The first frame and the shutdown frame of an agent with `cfg`.
fn frames(cfg: DcbxConfig) -> Vec<Vec<u8>> {
    let mut a = Agent::new(AgentConfig::new([0x02, 0x11, 0x22, 0x33, 0x44, 0x55]), cfg).unwrap();
    let first = a.poll_transmit(Instant::ZERO).expect("first LLDPDU");
    a.shutdown(Instant::ZERO);
    let last = a.poll_transmit(Instant::ZERO).expect("shutdown LLDPDU");
    vec![first, last]
}

fn fields(name: &str, frames: &[Vec<u8>], fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let tshark = require("tshark", name)?;
    let dir = temp_dir(name);
    let pcap = dir.join("agent.pcap");
    write_pcap(&pcap, frames);
    Some(tshark_fields(&tshark, &pcap, fields, &[]))
}

#[test]
fn tshark_decodes_our_ieee_tlvs_to_the_configured_values() {
    let f = [
        "lldp.time_to_live",
        "lldp.ieee.802_1.subtype",
        "lldp.dcbx.ieee.willing",
        "lldp.dcbx.ieee.ets.cbs",
        "lldp.dcbx.ieee.ets.maxtcs",
        "lldp.dcbx.feature.pg.pgid_prio3",
        "lldp.dcbx.feature.pg.pgid_prio4",
        "lldp.dcbx.feature.pg.per1",
        "lldp.dcbx.ieee.ets.tsa3",
        "lldp.dcbx.ieee.pfc.mbc",
        "lldp.dcbx.ieee.pfc.numtcs",
        "lldp.dcbx.feature.pfc.prio3",
        "lldp.dcbx.feature.pfc.prio4",
        "lldp.dcbx.feature.pfc.prio5",
        "lldp.dcbx.ieee.app.prio",
        "lldp.dcbx.iee.app.sf",
        "lldp.dcbx.feature.app.proto",
    ];
    let Some(rows) = fields(
        "tshark_decodes_our_ieee_tlvs_to_the_configured_values",
        &frames(switch(ModeSetting::Ieee)),
        &f,
    ) else {
        return;
    };
    let r = &rows[0];
    let get = |name: &str| r[f.iter().position(|x| *x == name).unwrap()].as_str();
    assert_eq!(get("lldp.time_to_live"), "121");
    assert_eq!(get("lldp.ieee.802_1.subtype"), "0x09,0x0a,0x0b,0x0c");
    // Willing of ETS-CFG (no) and PFC (yes), in TLV order.
    assert_eq!(get("lldp.dcbx.ieee.willing"), "0,1");
    assert_eq!(get("lldp.dcbx.ieee.ets.cbs"), "1");
    assert_eq!(get("lldp.dcbx.ieee.ets.maxtcs"), "4");
    // ETS-CFG then ETS-REC priority 3 → TC 1; priority 4 → TC 2 (config) and 0 (recommendation).
    assert_eq!(get("lldp.dcbx.feature.pg.pgid_prio3"), "1,1");
    assert_eq!(get("lldp.dcbx.feature.pg.pgid_prio4"), "2,0");
    assert_eq!(get("lldp.dcbx.feature.pg.per1"), "50,60");
    assert_eq!(get("lldp.dcbx.ieee.ets.tsa3"), "0,0", "TC3 strict");
    assert_eq!(get("lldp.dcbx.ieee.pfc.mbc"), "1");
    assert_eq!(get("lldp.dcbx.ieee.pfc.numtcs"), "4");
    assert_eq!(
        (
            get("lldp.dcbx.feature.pfc.prio3"),
            get("lldp.dcbx.feature.pfc.prio4"),
            get("lldp.dcbx.feature.pfc.prio5")
        ),
        ("1", "0", "1")
    );
    assert_eq!(get("lldp.dcbx.ieee.app.prio"), "3,5");
    assert_eq!(get("lldp.dcbx.iee.app.sf"), "3,1");
    assert_eq!(get("lldp.dcbx.feature.app.proto"), "0x12b7,0x8906");
    // The shutdown LLDPDU: TTL 0 and no DCBX TLVs.
    let s = &rows[1];
    assert_eq!(s[0], "0");
    assert_eq!(s[1], "");
}

#[test]
fn tshark_decodes_our_cee_tlv_to_the_configured_values() {
    let f = [
        "lldp.dcbx.proto",
        "lldp.dcbx.control.seq",
        "lldp.dcbx.control.ack",
        "lldp.dcbx.type",
        "lldp.dcbx.feature.enabled",
        "lldp.dcbx.feature.willing",
        "lldp.dcbx.feature.error",
        "lldp.dcbx.feature.pg.pgid_prio3",
        "lldp.dcbx.feature.pg.pgid_prio5",
        "lldp.dcbx.feature.pg.per0",
        "lldp.dcbx.feature.pg.per1",
        "lldp.dcbx.feature.pfc.prio3",
        "lldp.dcbx.feature.pfc.prio5",
        "lldp.dcbx.feature.pfc.numtcs",
        "lldp.dcbx.feature.app.proto",
        "lldp.dcbx.feature.app.prio",
        "lldp.dcbx.feature.app.sf",
    ];
    let Some(rows) = fields(
        "tshark_decodes_our_cee_tlv_to_the_configured_values",
        &frames(switch(ModeSetting::Cee)),
        &f,
    ) else {
        return;
    };
    let r = &rows[0];
    let get = |name: &str| r[f.iter().position(|x| *x == name).unwrap()].as_str();
    assert_eq!(get("lldp.dcbx.proto"), "0x02", "CEE subtype 2");
    assert_eq!(
        (get("lldp.dcbx.control.seq"), get("lldp.dcbx.control.ack")),
        ("1", "0")
    );
    assert_eq!(get("lldp.dcbx.type"), "1,2,3,4", "Control, PG, PFC, App");
    // PG not willing, PFC willing, App not willing; all enabled, no error.
    assert_eq!(get("lldp.dcbx.feature.enabled"), "1,1,1");
    assert_eq!(get("lldp.dcbx.feature.willing"), "0,1,0");
    assert_eq!(get("lldp.dcbx.feature.error"), "0,0,0");
    assert_eq!(get("lldp.dcbx.feature.pg.pgid_prio3"), "1");
    assert_eq!(get("lldp.dcbx.feature.pg.pgid_prio5"), "0");
    assert_eq!(
        (get("lldp.dcbx.feature.pg.per0"), get("lldp.dcbx.feature.pg.per1")),
        ("30", "50")
    );
    assert_eq!(
        (
            get("lldp.dcbx.feature.pfc.prio3"),
            get("lldp.dcbx.feature.pfc.prio5")
        ),
        ("1", "1")
    );
    assert_eq!(get("lldp.dcbx.feature.pfc.numtcs"), "0x04");
    assert_eq!(get("lldp.dcbx.feature.app.proto"), "0x12b7,0x8906");
    // Wireshark shows the priority whose bit is set in the map (we send 1<<3 and 1<<5).
    assert_eq!(get("lldp.dcbx.feature.app.prio"), "3,5");
    assert_eq!(
        get("lldp.dcbx.feature.app.sf"),
        "1,0",
        "CEE selectors: socket number, EtherType"
    );
}
