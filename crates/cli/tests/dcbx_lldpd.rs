//! lldpd in the peer namespace sends fixed IEEE DCBX TLVs (custom TLVs): it acts as a
//! non-willing switch, and our willing agent adopts its PFC and ETS configuration. lldpd also
//! shows our TLVs among its neighbour's.

mod dcbx_support;

use std::time::Duration;

use dcbx_support::{Pair, example, lossless, ready, spawn_agent};

#[test]
fn willing_agent_adopts_pfc_and_ets_from_an_lldpd_switch() {
    let test = "willing_agent_adopts_pfc_and_ets_from_an_lldpd_switch";
    if !ready(test, &["ip", "lldpd", "lldpcli"]) {
        return;
    }
    let mut p = Pair::new("pd");
    let (a, b, ia, ib) = (p.a.clone(), p.b.clone(), p.ia.clone(), p.ib.clone());
    let sock = p.dir.join("lldpd.sock");
    let sock = sock.to_str().unwrap().to_owned();
    p.spawn(&b, &["lldpd", "-d", "-u", &sock, "-I", &ib], "lldpd.log");
    let lldpcli = |p: &Pair, args: &[&str]| {
        let mut full = vec!["lldpcli", "-u", &sock];
        full.extend_from_slice(args);
        let out = p.exec(&b, &full);
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    p.wait_for(Duration::from_secs(10), "lldpd to answer lldpcli", || {
        let out = p.exec(
            &b,
            &["lldpcli", "-u", &sock, "configure", "lldp", "tx-interval", "1"],
        );
        out.status.success().then_some(())
    });
    // PFC: not willing, capability 8, priorities 3 and 4. ETS-CFG: not willing, 8 TCs,
    // priority 3 in TC 1, 50/50, ETS on TC 0 and 1. ETS-REC: the same tables.
    let tables = "00,01,00,00,32,32,00,00,00,00,00,00,02,02,00,00,00,00,00,00";
    for (subtype, info) in [
        ("11", "08,18".to_owned()),
        ("9", format!("00,{tables}")),
        ("10", format!("00,{tables}")),
    ] {
        let out = lldpcli(
            &p,
            &[
                "configure",
                "lldp",
                "custom-tlv",
                "add",
                "oui",
                "00,80,c2",
                "subtype",
                subtype,
                "oui-info",
                &info,
            ],
        );
        assert!(!out.contains("error"), "custom-tlv subtype {subtype}: {out}");
    }
    let host = example("host-willing.toml");
    let state = p.dir.join("host.json");
    spawn_agent(&mut p, &a, &ia, &host, &state, "host.log");
    let v: serde_json::Value = p.wait_for(
        Duration::from_secs(15),
        "our agent to adopt lldpd's PFC and ETS",
        || {
            let out = p.exec(
                &a,
                &[
                    lossless(),
                    "dcbx",
                    "show",
                    "--json",
                    "--iface",
                    &ia,
                    "--state",
                    state.to_str().unwrap(),
                ],
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
            let o = &v["operational"];
            (o["pfc"]["params"]["enable"] == 0x18 && o["ets"]["source"] == "peer").then_some(v)
        },
    );
    let o = &v["operational"];
    assert_eq!(o["pfc"]["source"], "peer");
    assert_eq!(
        o["ets"]["params"]["up2tc"],
        serde_json::json!([0, 0, 0, 1, 0, 0, 0, 0])
    );
    assert_eq!(
        o["ets"]["params"]["tcbw"],
        serde_json::json!([50, 50, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(v["remote"]["pfc"]["willing"], false);
    assert_eq!(v["remote"]["ets"]["willing"], false);
    // lldpd received our IEEE DCBX TLVs (it shows them raw: PFC subtype 11 = willing, cap 8).
    let shown = p.wait_for(Duration::from_secs(10), "lldpd to list our TLVs", || {
        let s = lldpcli(&p, &["show", "neighbors", "details"]);
        s.contains("SubType: 11").then_some(s)
    });
    assert!(shown.contains("SubType: 11, Len: 2 88,00"), "{shown}");
    assert!(
        shown.contains("SubType: 9") && shown.contains("SubType: 10") && shown.contains("SubType: 12"),
        "{shown}"
    );
}
