//! Wireshark as the oracle: every DCBX field (IEEE and CEE) and the basic/802.1/802.3 fields
//! we decode agree with tshark's dissection, on real captures and on PDUs we emit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lossless_wire::ethernet::{EtherType, EthernetAddress, EthernetRepr};
use lossless_wire::lldp::*;

/// Field name → values, in the order tshark reports occurrences.
type Fields = BTreeMap<String, Vec<String>>;

fn push(f: &mut Fields, name: &str, value: impl ToString) {
    f.entry(name.to_string()).or_default().push(value.to_string());
}

fn b(v: bool) -> u8 {
    u8::from(v)
}

fn ets_tables(f: &mut Fields, t: &EtsTables) {
    for i in 0..8 {
        push(f, &format!("lldp.dcbx.feature.pg.pgid_prio{i}"), t.priority_tc[i]);
        push(f, &format!("lldp.dcbx.feature.pg.per{i}"), t.tc_bandwidth[i]);
        push(f, &format!("lldp.dcbx.ieee.ets.tsa{i}"), u8::from(t.tsa[i]));
    }
}

fn cee_header(f: &mut Fields, h: &CeeFeatureHeader) {
    push(f, "lldp.dcbx.version", format!("0x{:02x}", h.oper_version));
    push(f, "lldp.dcbx.max_version", format!("0x{:02x}", h.max_version));
    push(f, "lldp.dcbx.feature.enabled", b(h.enabled));
    push(f, "lldp.dcbx.feature.willing", b(h.willing));
    push(f, "lldp.dcbx.feature.error", b(h.error));
    push(f, "lldp.dcbx.feature.subtype", format!("0x{:02x}", h.subtype));
}

/// The tshark fields our decode of `tlvs` predicts.
fn predicted(tlvs: &[Tlv]) -> Fields {
    let mut f = Fields::new();
    for t in tlvs {
        match t {
            Tlv::ChassisId(c) => {
                if let Some(m) = c.mac() {
                    push(&mut f, "lldp.chassis.id.mac", EthernetAddress(m));
                }
            }
            Tlv::Ttl(s) => push(&mut f, "lldp.time_to_live", s),
            Tlv::PortDescription(d) => push(&mut f, "lldp.port.desc", String::from_utf8_lossy(d)),
            Tlv::SystemName(d) => push(&mut f, "lldp.tlv.system.name", String::from_utf8_lossy(d)),
            Tlv::SystemCapabilities(c) => {
                push(&mut f, "lldp.tlv.system_cap", format!("0x{:04x}", c.capabilities));
                push(
                    &mut f,
                    "lldp.tlv.enable_system_cap",
                    format!("0x{:04x}", c.enabled),
                );
            }
            Tlv::ManagementAddress(m) => {
                push(&mut f, "lldp.mgn.address.subtype", m.address_subtype);
                push(&mut f, "lldp.mgn.interface.subtype", m.interface_subtype);
                push(&mut f, "lldp.mgn.interface.number", m.interface_number);
            }
            Tlv::Org(OrgTlv::Ieee8021(t)) => {
                push(
                    &mut f,
                    "lldp.ieee.802_1.subtype",
                    format!("0x{:02x}", t.subtype()),
                );
                ieee8021(&mut f, t);
            }
            Tlv::Org(OrgTlv::Ieee8023(t)) => {
                push(
                    &mut f,
                    "lldp.ieee.802_3.subtype",
                    format!("0x{:02x}", t.subtype()),
                );
                match t {
                    Ieee8023Tlv::MacPhyConfigStatus(m) => push(
                        &mut f,
                        "lldp.ieee.802_3.pmd_mau_type",
                        format!("0x{:04x}", m.mau_type),
                    ),
                    Ieee8023Tlv::MaximumFrameSize(m) => push(&mut f, "lldp.ieee.802_3.max_frame_size", m),
                    Ieee8023Tlv::LinkAggregation(l) => {
                        push(&mut f, "lldp.ieee.802_3.aggregated_port_id", l.port_id)
                    }
                    _ => {}
                }
            }
            Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(d))) => {
                push(&mut f, "lldp.dcbx.proto", "0x02");
                for s in &d.sub_tlvs {
                    cee_sub(&mut f, s);
                }
            }
            _ => {}
        }
    }
    f
}

fn ieee8021(f: &mut Fields, t: &Ieee8021Tlv) {
    match t {
        Ieee8021Tlv::PortVlanId(v) => push(f, "lldp.ieee.802_1.port_vlan.id", v),
        Ieee8021Tlv::PortProtocolVlanId(p) => push(f, "lldp.ieee.802_1.port_proto_vlan.id", p.ppvid),
        Ieee8021Tlv::VlanName(v) => {
            push(f, "lldp.ieee.802_1.vlan.id", v.vid);
            push(f, "lldp.ieee.802_1.vlan.name", String::from_utf8_lossy(&v.name));
        }
        Ieee8021Tlv::LinkAggregation(l) => push(f, "lldp.ieee.802_1.aggregated_port_id", l.port_id),
        Ieee8021Tlv::CongestionNotification(c) => {
            for i in 0..8 {
                push(f, &format!("lldp.ieee.802_1qau.cnpv.prio{i}"), (c.cnpv >> i) & 1);
                push(
                    f,
                    &format!("lldp.ieee.802_1qau.ready.prio{i}"),
                    (c.ready >> i) & 1,
                );
            }
        }
        Ieee8021Tlv::EtsConfiguration(e) => {
            push(f, "lldp.dcbx.ieee.willing", b(e.willing));
            push(f, "lldp.dcbx.ieee.ets.cbs", b(e.cbs));
            push(f, "lldp.dcbx.ieee.ets.maxtcs", e.max_tcs);
            ets_tables(f, &e.tables);
        }
        Ieee8021Tlv::EtsRecommendation(r) => ets_tables(f, &r.tables),
        Ieee8021Tlv::PfcConfiguration(p) => {
            push(f, "lldp.dcbx.ieee.willing", b(p.willing));
            push(f, "lldp.dcbx.ieee.pfc.mbc", b(p.mbc));
            push(f, "lldp.dcbx.ieee.pfc.numtcs", p.pfc_cap);
            for i in 0..8 {
                push(f, &format!("lldp.dcbx.feature.pfc.prio{i}"), b(p.is_enabled(i)));
            }
        }
        Ieee8021Tlv::ApplicationPriority(a) => {
            for e in a.entries() {
                push(f, "lldp.dcbx.ieee.app.prio", e.priority);
                push(f, "lldp.dcbx.iee.app.sf", e.selector);
                push(f, "lldp.dcbx.feature.app.proto", format!("0x{:04x}", e.protocol));
            }
        }
        _ => {}
    }
}

fn cee_sub(f: &mut Fields, s: &CeeSubTlv) {
    match s {
        CeeSubTlv::Control(c) => {
            push(f, "lldp.dcbx.version", format!("0x{:02x}", c.oper_version));
            push(f, "lldp.dcbx.max_version", format!("0x{:02x}", c.max_version));
            push(f, "lldp.dcbx.control.seq", c.seq);
            push(f, "lldp.dcbx.control.ack", c.ack);
        }
        CeeSubTlv::PriorityGroups(p) => {
            cee_header(f, &p.header);
            for i in 0..8 {
                push(f, &format!("lldp.dcbx.feature.pg.pgid_prio{i}"), p.pgid[i]);
                push(f, &format!("lldp.dcbx.feature.pg.per{i}"), p.pg_bandwidth[i]);
            }
            push(f, "lldp.dcbx.feature.pg.numtcs", format!("0x{:02x}", p.num_tcs));
        }
        CeeSubTlv::Pfc(p) => {
            cee_header(f, &p.header);
            for i in 0..8 {
                push(
                    f,
                    &format!("lldp.dcbx.feature.pfc.prio{i}"),
                    (p.admin_map >> i) & 1,
                );
            }
            push(f, "lldp.dcbx.feature.pfc.numtcs", format!("0x{:02x}", p.num_tcs));
        }
        CeeSubTlv::Application(a) => {
            cee_header(f, &a.header);
            for e in a.entries() {
                push(f, "lldp.dcbx.feature.app.proto", format!("0x{:04x}", e.protocol));
                push(f, "lldp.dcbx.feature.app.sf", e.selector);
                push(f, "lldp.dcbx.feature.app.oui", format!("0x{:06x}", e.oui));
                if let Some(p) = e.lowest_priority() {
                    push(f, "lldp.dcbx.feature.app.prio", p);
                }
            }
        }
        CeeSubTlv::Unknown { .. } => {}
    }
}

/// Every field name `predicted` can produce, so tshark reports them all.
fn field_names() -> Vec<String> {
    let mut v: Vec<String> = [
        "lldp.chassis.id.mac",
        "lldp.time_to_live",
        "lldp.port.desc",
        "lldp.tlv.system.name",
        "lldp.tlv.system_cap",
        "lldp.tlv.enable_system_cap",
        "lldp.mgn.address.subtype",
        "lldp.mgn.interface.subtype",
        "lldp.mgn.interface.number",
        "lldp.ieee.802_1.subtype",
        "lldp.ieee.802_3.subtype",
        "lldp.ieee.802_3.pmd_mau_type",
        "lldp.ieee.802_3.max_frame_size",
        "lldp.ieee.802_3.aggregated_port_id",
        "lldp.ieee.802_1.port_vlan.id",
        "lldp.ieee.802_1.port_proto_vlan.id",
        "lldp.ieee.802_1.vlan.id",
        "lldp.ieee.802_1.vlan.name",
        "lldp.ieee.802_1.aggregated_port_id",
        "lldp.dcbx.ieee.willing",
        "lldp.dcbx.ieee.ets.cbs",
        "lldp.dcbx.ieee.ets.maxtcs",
        "lldp.dcbx.ieee.pfc.mbc",
        "lldp.dcbx.ieee.pfc.numtcs",
        "lldp.dcbx.ieee.app.prio",
        "lldp.dcbx.iee.app.sf",
        "lldp.dcbx.feature.app.proto",
        "lldp.dcbx.proto",
        "lldp.dcbx.version",
        "lldp.dcbx.max_version",
        "lldp.dcbx.control.seq",
        "lldp.dcbx.control.ack",
        "lldp.dcbx.feature.enabled",
        "lldp.dcbx.feature.willing",
        "lldp.dcbx.feature.error",
        "lldp.dcbx.feature.subtype",
        "lldp.dcbx.feature.pg.numtcs",
        "lldp.dcbx.feature.pfc.numtcs",
        "lldp.dcbx.feature.app.sf",
        "lldp.dcbx.feature.app.oui",
        "lldp.dcbx.feature.app.prio",
    ]
    .map(String::from)
    .to_vec();
    for i in 0..8 {
        for p in [
            "lldp.dcbx.feature.pg.pgid_prio",
            "lldp.dcbx.feature.pg.per",
            "lldp.dcbx.ieee.ets.tsa",
            "lldp.dcbx.feature.pfc.prio",
            "lldp.ieee.802_1qau.cnpv.prio",
            "lldp.ieee.802_1qau.ready.prio",
        ] {
            v.push(format!("{p}{i}"));
        }
    }
    v
}

/// tshark's values for every LLDP frame of `pcap`, as name → occurrences.
fn tshark(tshark: &Path, pcap: &Path) -> Vec<Fields> {
    let names = field_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let rows = lossless_testkit::tshark_fields(tshark, pcap, &refs, &["-Y", "lldp"]);
    rows.into_iter()
        .map(|row| {
            names
                .iter()
                .zip(row)
                .filter(|(_, v)| !v.is_empty())
                .map(|(n, v)| (n.clone(), v.split(',').map(String::from).collect()))
                .collect()
        })
        .collect()
}

/// The LLDP payloads of `pcap`, in frame order.
fn lldp_payloads(path: &Path) -> Vec<Vec<u8>> {
    let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.unwrap();
        if let Ok((eth, off)) = EthernetRepr::parse_bytes(&pkt.data)
            && eth.ethertype == EtherType::LLDP
        {
            out.push(pkt.data[off..].to_vec());
        }
    }
    out
}

/// Compares our decode of every LLDP frame in `pcap` with tshark's; returns frames compared.
fn compare(tshark_path: &Path, pcap: &Path) -> usize {
    let ours: Vec<Fields> = lldp_payloads(pcap)
        .iter()
        .map(|p| {
            let d = LldpduRepr::parse(p);
            assert_eq!(d.error, None, "{}", pcap.display());
            predicted(&d.tlvs)
        })
        .collect();
    let theirs = tshark(tshark_path, pcap);
    assert_eq!(ours.len(), theirs.len(), "LLDP frame count of {}", pcap.display());
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(o, t, "{} frame {i}", pcap.display());
    }
    ours.len()
}

fn corpus_dir() -> PathBuf {
    let dir = lossless_testkit::corpus_dir();
    if dir.is_dir() {
        dir
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
    }
}

#[test]
fn dcbx_fields_of_corpus_captures_agree_with_tshark() {
    let Some(ts) = lossless_testkit::require("tshark", "dcbx_fields_of_corpus_captures_agree_with_tshark")
    else {
        return;
    };
    let dir = corpus_dir().join("tcpdump");
    for file in [
        "dcb_ets.pcap",
        "dcb_pfc.pcap",
        "dcb_qcn.pcap",
        "lldp-app-priority.pcap",
    ] {
        assert!(compare(&ts, &dir.join(file)) > 0, "{file} has LLDP frames");
    }
}

const MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];

fn org1(t: Ieee8021Tlv) -> Tlv {
    Tlv::Org(OrgTlv::Ieee8021(t))
}

/// A PDU with every basic TLV, 802.1 and 802.3 TLVs and the four IEEE DCBX TLVs.
fn full_ieee_pdu() -> LldpduRepr {
    let tables = EtsTables {
        priority_tc: [0, 1, 2, 3, 4, 5, 6, 7],
        tc_bandwidth: [10, 20, 30, 40, 0, 0, 0, 0],
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::CREDIT_BASED_SHAPER,
            Tsa::VENDOR,
            Tsa(7),
        ],
    };
    let apps = [
        AppEntry {
            priority: 3,
            reserved: 0,
            selector: 1,
            protocol: 0x8906,
        },
        AppEntry {
            priority: 4,
            reserved: 0,
            selector: 2,
            protocol: 3260,
        },
        AppEntry {
            priority: 5,
            reserved: 0,
            selector: 3,
            protocol: 4791,
        },
        AppEntry {
            priority: 6,
            reserved: 0,
            selector: 5,
            protocol: 46,
        },
    ];
    LldpduRepr {
        tlvs: vec![
            Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: MAC.to_vec(),
            }),
            Tlv::PortId(PortId {
                subtype: PortIdSubtype::InterfaceName,
                id: b"eth0".to_vec(),
            }),
            Tlv::Ttl(121),
            Tlv::PortDescription(b"uplink to spine-1".to_vec()),
            Tlv::SystemName(b"leaf-7".to_vec()),
            Tlv::SystemDescription(b"lossless test system".to_vec()),
            Tlv::SystemCapabilities(SystemCapabilities {
                capabilities: 0x0014,
                enabled: 0x0004,
            }),
            Tlv::ManagementAddress(ManagementAddress {
                address_subtype: 1,
                address: vec![192, 0, 2, 7],
                interface_subtype: 2,
                interface_number: 5,
                oid: vec![],
            }),
            org1(Ieee8021Tlv::PortVlanId(100)),
            org1(Ieee8021Tlv::PortProtocolVlanId(PortProtocolVlanId {
                flags: 6,
                ppvid: 200,
            })),
            org1(Ieee8021Tlv::VlanName(VlanName {
                vid: 100,
                name: b"storage".to_vec(),
            })),
            org1(Ieee8021Tlv::LinkAggregation(LinkAggregation {
                status: 3,
                port_id: 17,
            })),
            org1(Ieee8021Tlv::CongestionNotification(CongestionNotification {
                cnpv: 0x08,
                ready: 0x08,
            })),
            org1(Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
                willing: true,
                cbs: true,
                reserved: 0,
                max_tcs: 0,
                tables,
            })),
            org1(Ieee8021Tlv::EtsRecommendation(EtsRecommendation {
                reserved: 0,
                tables: EtsTables {
                    priority_tc: [7, 6, 5, 4, 3, 2, 1, 0],
                    ..tables
                },
            })),
            org1(Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
                willing: false,
                mbc: true,
                reserved: 0,
                pfc_cap: 8,
                enabled: 0x18,
            })),
            org1(Ieee8021Tlv::ApplicationPriority(ApplicationPriority::new(
                0, &apps,
            ))),
            Tlv::Org(OrgTlv::Ieee8023(Ieee8023Tlv::MacPhyConfigStatus(
                MacPhyConfigStatus {
                    autoneg: 3,
                    advertised: 0x6c01,
                    mau_type: 30,
                },
            ))),
            Tlv::Org(OrgTlv::Ieee8023(Ieee8023Tlv::MaximumFrameSize(9216))),
            Tlv::End,
        ],
    }
}

/// A PDU with a CEE DCBX TLV: Control, Priority Groups, PFC and Application sub-TLVs.
fn cee_pdu() -> LldpduRepr {
    let h = |enabled, willing, error| CeeFeatureHeader {
        oper_version: 0,
        max_version: 0,
        enabled,
        willing,
        error,
        reserved: 0,
        subtype: 0,
    };
    let app = CeeApplication::new(
        h(true, true, false),
        &[
            CeeAppEntry {
                protocol: 0x8906,
                selector: 0,
                oui: 0x001b21,
                priority_map: 0x08,
            },
            CeeAppEntry {
                protocol: 3260,
                selector: 1,
                oui: 0x001b21,
                priority_map: 0x10,
            },
        ],
    );
    let dcbx = CeeDcbx {
        sub_tlvs: vec![
            CeeSubTlv::Control(CeeControl {
                oper_version: 0,
                max_version: 0,
                seq: 7,
                ack: 6,
            }),
            CeeSubTlv::PriorityGroups(CeePriorityGroups {
                header: h(true, false, true),
                pgid: [0, 0, 1, 1, 2, 2, 3, 15],
                pg_bandwidth: [25, 25, 25, 25, 0, 0, 0, 0],
                num_tcs: 8,
            }),
            CeeSubTlv::Pfc(CeePfc {
                header: h(true, true, false),
                admin_map: 0x08,
                num_tcs: 4,
            }),
            CeeSubTlv::Application(app),
        ],
    };
    LldpduRepr {
        tlvs: vec![
            Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: MAC.to_vec(),
            }),
            Tlv::PortId(PortId {
                subtype: PortIdSubtype::MacAddress,
                id: MAC.to_vec(),
            }),
            Tlv::Ttl(120),
            Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(dcbx))),
            Tlv::End,
        ],
    }
}

#[test]
fn emitted_pdus_agree_with_tshark_field_by_field() {
    let Some(ts) = lossless_testkit::require("tshark", "emitted_pdus_agree_with_tshark_field_by_field")
    else {
        return;
    };
    let pdus = [full_ieee_pdu(), cee_pdu()];
    let frames: Vec<Vec<u8>> = pdus
        .iter()
        .map(|p| lldp_frame(EthernetAddress(MAC), &p.to_vec().expect("sample PDUs fit")))
        .collect();
    let dir = lossless_testkit::temp_dir("lldp-tshark");
    let pcap = dir.join("emitted.pcap");
    lossless_testkit::write_pcap(&pcap, &frames);
    assert_eq!(compare(&ts, &pcap), 2);
    // Our decode of what we emitted is what we emitted.
    for (p, frame) in pdus.iter().zip(&frames) {
        assert_eq!(&LldpduRepr::parse(&frame[14..]).tlvs, &p.tlvs);
    }
    // tshark finds nothing malformed and no expert warnings in them.
    let rows = lossless_testkit::tshark_fields(&ts, &pcap, &["_ws.malformed", "_ws.expert.message"], &[]);
    for row in rows {
        assert!(row.iter().all(String::is_empty), "tshark complains: {row:?}");
    }
}
