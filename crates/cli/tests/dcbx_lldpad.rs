//! lldpad (openlldp) in the peer namespace decodes our LLDPDUs to the values we configured:
//! the IEEE ETS-CFG, ETS-REC, PFC and APP TLVs, and the CEE DCBX TLV.

mod dcbx_support;

use std::time::Duration;

use dcbx_support::{Pair, example, ready, spawn_agent};

/// Starts our agent with `config` in namespace a and lldpad (private /dev/shm, own config
/// file) in namespace b; returns the lldpad pid for nsenter.
fn start(p: &mut Pair, config: &str) -> u32 {
    let (a, b, ia) = (p.a.clone(), p.b.clone(), p.ia.clone());
    let cfg = example(config);
    let state = p.dir.join("agent.json");
    spawn_agent(p, &a, &ia, &cfg, &state, "agent.log");
    let conf = p.dir.join("lldpad.conf");
    let script = format!(
        "mount -t tmpfs none /dev/shm && exec lldpad -p -t -f {}",
        conf.display()
    );
    let i = p.spawn(&b, &["unshare", "-m", "sh", "-c", &script], "lldpad.log");
    p.pid(i)
}

/// Runs lldptool inside lldpad's namespaces.
fn lldptool(p: &Pair, lldpad: u32, args: &[&str]) -> String {
    let pid = lldpad.to_string();
    let mut full = vec!["nsenter", "-t", &pid, "-m", "-n", "lldptool"];
    full.extend_from_slice(args);
    let out = p.exec(&p.b, &full);
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Enables receive/transmit on lldpad's port (retrying until lldpad answers) and waits until
/// it shows a neighbour TLV containing `marker`.
fn neighbour(p: &Pair, lldpad: u32, marker: &str) -> String {
    let ib = p.ib.clone();
    p.wait_for(Duration::from_secs(15), "lldpad to accept adminStatus", || {
        lldptool(p, lldpad, &["-L", "-i", &ib, "adminStatus=rxtx"])
            .contains("adminStatus = rxtx")
            .then_some(())
    });
    p.wait_for(
        Duration::from_secs(15),
        &format!("lldpad to decode {marker:?}"),
        || {
            let s = lldptool(p, lldpad, &["-t", "-n", "-i", &ib]);
            s.contains(marker).then_some(s)
        },
    )
}

#[test]
fn lldpad_decodes_our_ieee_tlvs_to_the_configured_values() {
    let test = "lldpad_decodes_our_ieee_tlvs_to_the_configured_values";
    if !ready(test, &["ip", "lldpad", "lldptool", "nsenter", "unshare"]) {
        return;
    }
    let mut p = Pair::new("ad");
    let lldpad = start(&mut p, "switch-pfc3.toml");
    let all = neighbour(&p, lldpad, "IEEE 8021QAZ PFC TLV");
    assert!(
        all.contains("Ifname: dcb0") && all.contains("121") && all.contains("switch"),
        "{all}"
    );
    let ib = p.ib.clone();
    let v = |tlv: &str| lldptool(&p, lldpad, &["-t", "-n", "-i", &ib, "-V", tlv]);
    let ets = v("ETS-CFG");
    for want in [
        "Willing: no",
        "MAX_TCS: 8",
        "PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0",
        "TC Bandwidth: 50% 50% 0% 0% 0% 0% 0% 0%",
        "TSA_MAP: 0:ets 1:ets 2:strict 3:strict",
    ] {
        assert!(ets.contains(want), "ETS-CFG lacks {want:?}:\n{ets}");
    }
    let rec = v("ETS-REC");
    assert!(
        rec.contains("3:1") && rec.contains("TC Bandwidth: 50% 50% 0%"),
        "{rec}"
    );
    let pfc = v("PFC");
    for want in [
        "Willing: no",
        "MACsec Bypass Capable: no",
        "PFC capable traffic classes: 8",
        "PFC enabled: 3",
    ] {
        assert!(pfc.contains(want), "PFC lacks {want:?}:\n{pfc}");
    }
    let app = v("APP");
    assert!(
        app.contains("Prio 3") && app.contains("Sel 3") && app.contains("4791"),
        "{app}"
    );
}

#[test]
fn lldpad_decodes_our_cee_tlv_to_the_configured_values() {
    let test = "lldpad_decodes_our_cee_tlv_to_the_configured_values";
    if !ready(test, &["ip", "lldpad", "lldptool", "nsenter", "unshare"]) {
        return;
    }
    let mut p = Pair::new("ac");
    let lldpad = start(&mut p, "switch-cee.toml");
    let all = neighbour(&p, lldpad, "CEE DCBX TLV");
    for want in [
        "SeqNo: 1, AckNo: 0",
        "PGID Priorities:  0:[0,1,2,4,5,6,7] 1:[3]",
        "PGID Percentages: 0:60% 1:40% 2:0%",
        "PFC enabled priorities: 3",
        "Ethertype: 0x8906, Priority Map: 0x08",
    ] {
        assert!(all.contains(want), "lldptool lacks {want:?}:\n{all}");
    }
    // PG, PFC and App sub-TLVs: Enabled, Not Willing, No Error.
    assert_eq!(all.matches("Enabled, Not Willing, No Error").count(), 3, "{all}");
}
