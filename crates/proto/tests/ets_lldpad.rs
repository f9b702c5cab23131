//! Peer test with lldpad: ETS configurations are turned into ETS Configuration and
//! Recommendation TLVs by `EtsConfig::to_tables` and lossless_wire, sent over a veth pair in
//! network namespaces to a real lldpad, and read back from `lldptool -t -n -V ETS-CFG|ETS-REC`
//! with this crate's own parsers (lldpad prints `PRIO_MAP` and `TSA_MAP` in `dcb`'s `k:v`
//! form). What lldpad decoded must be the configuration we sent. Needs root, lldpad,
//! lldptool, ip, unshare and python3 (skips loudly without them).

use std::process::Command;

use lossless_proto::ets::{BandwidthMap, EtsConfig, PrioTcMap, TsaMap};
use lossless_testkit::{require, require_root, temp_dir};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::lldp::{
    ChassisId, ChassisIdSubtype, EtsConfiguration, EtsRecommendation, Ieee8021Tlv, LldpduRepr, OrgTlv,
    PortId, PortIdSubtype, Tlv, lldp_frame,
};

/// Sets up namespaces A and B joined by a veth pair, runs lldpad in B with its own /dev/shm
/// and state directory, sends the frame (hex, $1) from A with a raw socket and prints
/// lldptool's view of the received ETS TLVs; cleans up.
const SCRIPT: &str = r#"#!/bin/sh
set -e
A=etsa$$; B=etsb$$; VA=ea$$; VB=eb$$
cleanup() { ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true; }
trap cleanup EXIT
ip netns add $A
ip netns add $B
ip link add $VA type veth peer name $VB
ip link set $VA netns $A
ip link set $VB netns $B
ip -n $A link set $VA up
ip -n $B link set $VB up
ip -n $B link set lo up
ip netns exec $B unshare -m sh -c '
  mount -t tmpfs none /dev/shm
  mkdir -p /var/lib/lldpad && mount -t tmpfs none /var/lib/lldpad
  lldpad -d -p -f /var/lib/lldpad/lldpad.conf
  for i in 1 2 3 4 5 6 7 8 9 10; do lldptool -L -i '$VB' adminStatus=rxtx >/dev/null 2>&1 && break; sleep 0.3; done
  ip netns exec '$A' python3 -c "
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
f = bytes.fromhex(sys.argv[2])
s.send(f + bytes(max(0, 60 - len(f))))
" '$VA' '"$1"'
  sleep 1
  echo ---ETS-CFG
  lldptool -t -n -i '$VB' -V ETS-CFG || true
  echo ---ETS-REC
  lldptool -t -n -i '$VB' -V ETS-REC || true
  for p in $(pidof lldpad); do
    [ "$(readlink /proc/$p/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ] && kill $p
  done
  true
'
"#;

fn frame(cfg: &EtsConfig) -> Vec<u8> {
    let mac = [0x02, 0, 0, 0, 0xe7, 0x51];
    let tables = cfg.to_tables();
    let pdu = LldpduRepr {
        tlvs: vec![
            Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: mac.to_vec(),
            }),
            Tlv::PortId(PortId {
                subtype: PortIdSubtype::MacAddress,
                id: mac.to_vec(),
            }),
            Tlv::Ttl(120),
            Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::EtsConfiguration(
                EtsConfiguration {
                    willing: true,
                    cbs: false,
                    reserved: 0,
                    max_tcs: cfg.max_tcs() & 7,
                    tables,
                },
            ))),
            Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::EtsRecommendation(
                EtsRecommendation { reserved: 0, tables },
            ))),
            Tlv::End,
        ],
    };
    lldp_frame(EthernetAddress(mac), &pdu.to_vec().expect("test TLVs fit"))
}

/// The configuration lldptool shows in one section of its output, read with our parsers.
fn read_back(section: &str, max_tcs: u8) -> EtsConfig {
    let field = |name: &str| -> String {
        section
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {section:?}"))
            .trim()
            .to_string()
    };
    let prio = PrioTcMap::from_dcb(&field("PRIO_MAP:")).unwrap();
    // lldpad's display names the shaper `cbshaper` (its input word is `cb_shaper`); `dcb`
    // says `cbs`
    let tsa = TsaMap::from_dcb(&field("TSA_MAP:").replace("cbshaper", "cbs")).unwrap();
    let bw = BandwidthMap::from_lldptool(
        &field("TC Bandwidth:")
            .replace('%', "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(","),
    )
    .unwrap();
    EtsConfig::new(max_tcs, prio.0, tsa.0, bw.0).unwrap()
}

#[test]
fn lldpad_decodes_our_ets_tlvs_as_the_configuration_we_sent() {
    const TEST: &str = "lldpad_decodes_our_ets_tlvs_as_the_configuration_we_sent";
    if !require_root(TEST) {
        return;
    }
    for tool in ["lldpad", "lldptool", "ip", "unshare", "python3"] {
        if require(tool, TEST).is_none() {
            return;
        }
    }
    let dir = temp_dir("ets_lldpad");
    let script = dir.join("peer.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let configs = [
        "tsa=0:ets,1:ets,2:ets,3:strict up2tc=0:0,1:1,2:2,3:2,4:2,5:2,6:3,7:3 tcbw=7,13,80 numtcs=8",
        "tsa=0:ets,1:ets,2:ets,3:ets,4:ets,5:ets,6:ets,7:ets up2tc=0:7,1:6,2:5,3:4,4:3,5:2,6:1,7:0 tcbw=1,2,3,4,10,20,25,35",
        "tsa=0:strict,1:cb_shaper,2:ets,3:ets up2tc=0:2,1:2,2:3,3:3,4:0,5:0,6:1,7:1 tcbw=0,0,40,60 numtcs=8",
    ];
    for args in configs {
        let cfg = EtsConfig::from_lldptool_args(args).unwrap();
        let hex: String = frame(&cfg).iter().map(|b| format!("{b:02x}")).collect();
        let out = Command::new("sh")
            .arg(&script)
            .arg(&hex)
            .output()
            .expect("run the peer script");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "peer script failed: {}\n{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        );
        let (_, after) = text.split_once("---ETS-CFG").expect("ETS-CFG section");
        let (cfg_text, rec_text) = after.split_once("---ETS-REC").expect("ETS-REC section");
        assert!(
            cfg_text.contains("ETS Configuration TLV"),
            "lldpad saw no ETS Configuration TLV: {cfg_text}"
        );
        let max_tcs: u8 = cfg_text
            .lines()
            .find_map(|l| l.trim().strip_prefix("MAX_TCS:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap();
        assert_eq!(max_tcs, cfg.max_tcs(), "{args}");
        assert_eq!(read_back(cfg_text, max_tcs), cfg, "ETS-CFG of {args}");
        assert_eq!(
            read_back(rec_text, 8),
            EtsConfig::from_tables(8, &cfg.to_tables()).unwrap(),
            "ETS-REC of {args}"
        );
    }
}
