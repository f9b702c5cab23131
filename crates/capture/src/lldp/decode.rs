//! Decoding an LLDPDU into an [`LldpRecord`] with `lossless_wire::lldp`, as far as it is sound.

use lossless_wire::lldp::basic::capability;
use lossless_wire::lldp::tlv::type_name;
use lossless_wire::lldp::{
    CeeSubTlv, CeeTlv, ChassisIdSubtype, Ieee8021Tlv, Ieee8023Tlv, Lldpdu, OrgTlv, PortIdSubtype, Tlv,
};

use crate::lldp::model::*;
use crate::model::{FrameRecord, hex, mac_text};

/// Decodes the LLDPDU `body[at..]` (`at` = its offset in the frame) into `rec.lldp`; the first
/// error (where decoding stopped) goes to `rec.errors`, order problems to `rec.warnings`, both
/// with offsets counted from the start of the frame.
pub fn decode_lldp(body: &[u8], at: usize, rec: &mut FrameRecord) {
    let pdu = Lldpdu::new(&body[at..]);
    let decoded = pdu.decode();
    let mut tlvs = Vec::with_capacity(decoded.tlvs.len());
    for (view, tlv) in pdu.raw_tlvs().zip(decoded.tlvs.iter()) {
        let Ok(view) = view else { break };
        tlvs.push(tlv_record(tlv, at + view.offset, view.value.len()));
    }
    for t in &tlvs {
        if let TlvBody::ApplicationPriority(a) = &t.body {
            let reserved = a
                .entries
                .iter()
                .filter(|e| !(1..=5).contains(&e.selector))
                .count();
            if reserved > 0 {
                rec.warnings.push(format!(
                    "LLDP: Application Priority TLV at byte {}: {reserved} of {} entries have a reserved selector (allowed 1..=5)",
                    t.offset,
                    a.entries.len()
                ));
            }
        }
    }
    for w in &decoded.warnings {
        rec.warnings.push(format!("LLDP: {}", w.at(at)));
    }
    if decoded.error.is_none() && !mandatory_tlvs_in_place(&tlvs) {
        let first: Vec<String> = tlvs.iter().take(3).map(|t| t.tlv_type.to_string()).collect();
        rec.errors.push(format!(
            "LLDP: invalid LLDPDU, a receiver discards it (802.1AB-2016 9.2.7.7): Chassis ID, Port ID \
             and Time To Live TLVs (types 1, 2, 3) must come first, once each; the first TLV types are [{}]",
            first.join(", ")
        ));
    }
    if let Some(e) = decoded.error {
        rec.errors.push(format!(
            "LLDP: {} (decoded {} TLVs before it)",
            e.at(at),
            tlvs.len()
        ));
    }
    rec.lldp = Some(LldpRecord { tlvs });
}

/// Whether the first three TLVs are Chassis ID, Port ID and Time To Live, and none recurs.
fn mandatory_tlvs_in_place(tlvs: &[TlvRecord]) -> bool {
    let types: Vec<u8> = tlvs.iter().map(|t| t.tlv_type).collect();
    types.len() >= 3 && types[..3] == [1, 2, 3] && !types[3..].iter().any(|t| (1..=3).contains(t))
}

fn text_or_hex(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) if !s.chars().any(|c| c.is_control()) => s.to_string(),
        _ => hex(b),
    }
}

fn network_address(b: &[u8]) -> String {
    match b.split_first() {
        Some((1, a)) if a.len() == 4 => std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string(),
        Some((2, a)) if a.len() == 16 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(a);
            std::net::Ipv6Addr::from(o).to_string()
        }
        Some((6, a)) if a.len() == 6 => mac_text(&[a[0], a[1], a[2], a[3], a[4], a[5]]),
        _ => hex(b),
    }
}

fn chassis_subtype_name(s: ChassisIdSubtype) -> &'static str {
    match s {
        ChassisIdSubtype::ChassisComponent => "Chassis component",
        ChassisIdSubtype::InterfaceAlias => "Interface alias",
        ChassisIdSubtype::PortComponent => "Port component",
        ChassisIdSubtype::MacAddress => "MAC address",
        ChassisIdSubtype::NetworkAddress => "Network address",
        ChassisIdSubtype::InterfaceName => "Interface name",
        ChassisIdSubtype::LocallyAssigned => "Locally assigned",
        ChassisIdSubtype::Reserved(_) => "Reserved",
    }
}

fn port_subtype_name(s: PortIdSubtype) -> &'static str {
    match s {
        PortIdSubtype::InterfaceAlias => "Interface alias",
        PortIdSubtype::PortComponent => "Port component",
        PortIdSubtype::MacAddress => "MAC address",
        PortIdSubtype::NetworkAddress => "Network address",
        PortIdSubtype::InterfaceName => "Interface name",
        PortIdSubtype::AgentCircuitId => "Agent circuit ID",
        PortIdSubtype::LocallyAssigned => "Locally assigned",
        PortIdSubtype::Reserved(_) => "Reserved",
    }
}

fn id_record(subtype: u8, name: &str, mac: Option<[u8; 6]>, network: bool, id: &[u8]) -> IdRecord {
    let text = match (mac, network) {
        (Some(m), _) => mac_text(&m),
        (None, true) => network_address(id),
        _ => text_or_hex(id),
    };
    IdRecord {
        subtype,
        subtype_name: name.to_string(),
        id: text,
    }
}

fn bits(v: u8) -> [bool; 8] {
    std::array::from_fn(|i| v & (1 << i) != 0)
}

fn oui_text(o: [u8; 3]) -> String {
    format!("{:02x}-{:02x}-{:02x}", o[0], o[1], o[2])
}

fn tlv_record(tlv: &Tlv<&[u8]>, offset: usize, length: usize) -> TlvRecord {
    let mut oui = None;
    let mut subtype = None;
    let (name, body): (&str, TlvBody) = match tlv {
        Tlv::End => (type_name(0), TlvBody::End {}),
        Tlv::ChassisId(c) => {
            let network = c.subtype == ChassisIdSubtype::NetworkAddress;
            let r = id_record(
                c.subtype.into(),
                chassis_subtype_name(c.subtype),
                c.mac(),
                network,
                c.id,
            );
            (type_name(1), TlvBody::ChassisId(r))
        }
        Tlv::PortId(p) => {
            let network = p.subtype == PortIdSubtype::NetworkAddress;
            let r = id_record(
                p.subtype.into(),
                port_subtype_name(p.subtype),
                p.mac(),
                network,
                p.id,
            );
            (type_name(2), TlvBody::PortId(r))
        }
        Tlv::Ttl(t) => (type_name(3), TlvBody::TimeToLive(*t)),
        Tlv::PortDescription(b) => (
            type_name(4),
            TlvBody::PortDescription(String::from_utf8_lossy(b).into()),
        ),
        Tlv::SystemName(b) => (
            type_name(5),
            TlvBody::SystemName(String::from_utf8_lossy(b).into()),
        ),
        Tlv::SystemDescription(b) => (
            type_name(6),
            TlvBody::SystemDescription(String::from_utf8_lossy(b).into()),
        ),
        Tlv::SystemCapabilities(c) => {
            let names = capability::NAMES
                .iter()
                .filter(|(bit, _)| c.capabilities & bit != 0)
                .map(|(_, n)| n.to_string())
                .collect();
            let r = CapabilitiesRecord {
                capabilities: c.capabilities,
                enabled: c.enabled,
                names,
            };
            (type_name(7), TlvBody::SystemCapabilities(r))
        }
        Tlv::ManagementAddress(m) => {
            let mut with_family = vec![m.address_subtype];
            with_family.extend_from_slice(m.address);
            let r = ManagementAddressRecord {
                address_subtype: m.address_subtype,
                address: network_address(&with_family),
                interface_subtype: m.interface_subtype,
                interface_number: m.interface_number,
                oid: hex(m.oid),
            };
            (type_name(8), TlvBody::ManagementAddress(r))
        }
        Tlv::Org(o) => {
            oui = Some(oui_text(o.oui()));
            subtype = Some(o.subtype());
            org(o)
        }
        Tlv::Unknown { ty, value } => (type_name(*ty), TlvBody::Unknown(hex(value))),
    };
    TlvRecord {
        tlv_type: tlv.ty(),
        name: name.to_string(),
        offset,
        oui,
        subtype,
        length,
        body,
    }
}

fn raw(o: &OrgTlv<&[u8]>, info: &[u8]) -> TlvBody {
    TlvBody::Organizational(OrgRecord {
        oui: oui_text(o.oui()),
        subtype: o.subtype(),
        info: hex(info),
    })
}

fn org(o: &OrgTlv<&[u8]>) -> (&'static str, TlvBody) {
    match o {
        OrgTlv::Ieee8021(t) => match t {
            Ieee8021Tlv::PortVlanId(v) => ("Port VLAN ID TLV", TlvBody::PortVlanId(*v)),
            Ieee8021Tlv::PortProtocolVlanId(p) => (
                "Port And Protocol VLAN ID TLV",
                TlvBody::PortAndProtocolVlanId(PpvidRecord {
                    supported: p.flags & lossless_wire::lldp::PortProtocolVlanId::SUPPORTED != 0,
                    enabled: p.flags & lossless_wire::lldp::PortProtocolVlanId::ENABLED != 0,
                    ppvid: p.ppvid,
                }),
            ),
            Ieee8021Tlv::VlanName(v) => (
                "VLAN Name TLV",
                TlvBody::VlanName(VlanNameRecord {
                    vid: v.vid,
                    name: String::from_utf8_lossy(v.name).into(),
                }),
            ),
            Ieee8021Tlv::ProtocolIdentity(b) => ("Protocol Identity TLV", TlvBody::ProtocolIdentity(hex(b))),
            Ieee8021Tlv::LinkAggregation(l) => (
                "Link Aggregation TLV",
                TlvBody::LinkAggregation(LinkAggregationRecord {
                    status: l.status,
                    port_id: l.port_id,
                }),
            ),
            Ieee8021Tlv::CongestionNotification(c) => (
                "Congestion Notification TLV",
                TlvBody::CongestionNotification(CnRecord {
                    cnpv: bits(c.cnpv),
                    ready: bits(c.ready),
                }),
            ),
            Ieee8021Tlv::EtsConfiguration(e) => (
                "ETS Configuration TLV",
                TlvBody::EtsConfiguration(EtsRecord {
                    willing: Some(e.willing),
                    cbs: Some(e.cbs),
                    max_tcs: Some(e.max_tcs),
                    priority_tc: e.tables.priority_tc,
                    tc_bandwidth: e.tables.tc_bandwidth,
                    tsa: e.tables.tsa.map(u8::from),
                }),
            ),
            Ieee8021Tlv::EtsRecommendation(e) => (
                "ETS Recommendation TLV",
                TlvBody::EtsRecommendation(EtsRecord {
                    willing: None,
                    cbs: None,
                    max_tcs: None,
                    priority_tc: e.tables.priority_tc,
                    tc_bandwidth: e.tables.tc_bandwidth,
                    tsa: e.tables.tsa.map(u8::from),
                }),
            ),
            Ieee8021Tlv::PfcConfiguration(p) => (
                "PFC Configuration TLV",
                TlvBody::PfcConfiguration(PfcConfigRecord {
                    willing: p.willing,
                    mbc: p.mbc,
                    pfc_cap: p.pfc_cap,
                    pfc_enable: p.enabled,
                    enabled: bits(p.enabled),
                }),
            ),
            Ieee8021Tlv::ApplicationPriority(a) => (
                "Application Priority TLV",
                TlvBody::ApplicationPriority(AppPriorityRecord {
                    entries: a
                        .entries()
                        .map(|e| AppEntryRecord {
                            priority: e.priority,
                            selector: e.selector,
                            protocol: e.protocol,
                        })
                        .collect(),
                }),
            ),
            Ieee8021Tlv::Unknown { info, .. } => ("IEEE 802.1 TLV", raw(o, info)),
        },
        OrgTlv::Ieee8023(t) => match t {
            Ieee8023Tlv::MacPhyConfigStatus(m) => (
                "MAC/PHY Configuration/Status TLV",
                TlvBody::MacPhy(MacPhyRecord {
                    autoneg_status: m.autoneg,
                    advertised: m.advertised,
                    mau_type: m.mau_type,
                }),
            ),
            Ieee8023Tlv::PowerViaMdi(b) => ("Power Via MDI TLV", raw(o, b)),
            Ieee8023Tlv::LinkAggregation(l) => (
                "Link Aggregation TLV (802.3)",
                TlvBody::LinkAggregation(LinkAggregationRecord {
                    status: l.status,
                    port_id: l.port_id,
                }),
            ),
            Ieee8023Tlv::MaximumFrameSize(n) => ("Maximum Frame Size TLV", TlvBody::MaximumFrameSize(*n)),
            Ieee8023Tlv::Unknown { info, .. } => ("IEEE 802.3 TLV", raw(o, info)),
        },
        OrgTlv::Cee(t) => match t {
            CeeTlv::Dcbx(d) => (
                "CEE DCBX TLV",
                TlvBody::CeeDcbx(CeeRecord {
                    sub_tlvs: d.sub_tlvs.iter().map(cee_sub).collect(),
                }),
            ),
            CeeTlv::Cin(b) => ("CIN DCBX TLV", raw(o, b)),
            CeeTlv::Unknown { info, .. } => ("DCBX TLV", raw(o, info)),
        },
        OrgTlv::Other { info, .. } => ("Organizationally Specific TLV", raw(o, info)),
    }
}

fn feature(h: &lossless_wire::lldp::CeeFeatureHeader) -> CeeFeatureRecord {
    CeeFeatureRecord {
        oper_version: h.oper_version,
        max_version: h.max_version,
        enable: h.enabled,
        willing: h.willing,
        error: h.error,
        subtype: h.subtype,
    }
}

fn cee_sub(s: &CeeSubTlv<&[u8]>) -> CeeSubRecord {
    match s {
        CeeSubTlv::Control(c) => CeeSubRecord::Control {
            oper_version: c.oper_version,
            max_version: c.max_version,
            seq: c.seq,
            ack: c.ack,
        },
        CeeSubTlv::PriorityGroups(p) => CeeSubRecord::PriorityGroups {
            feature: feature(&p.header),
            pgid: p.pgid,
            pg_bandwidth: p.pg_bandwidth,
            num_tcs: p.num_tcs,
        },
        CeeSubTlv::Pfc(p) => CeeSubRecord::Pfc {
            feature: feature(&p.header),
            enabled: bits(p.admin_map),
            num_tcs: p.num_tcs,
        },
        CeeSubTlv::Application(a) => CeeSubRecord::Application {
            feature: feature(&a.header),
            entries: a
                .entries()
                .map(|e| CeeAppRecord {
                    protocol: e.protocol,
                    selector: e.selector,
                    oui: e.oui,
                    priority_map: e.priority_map,
                })
                .collect(),
        },
        CeeSubTlv::Unknown { ty, value } => CeeSubRecord::Other {
            sub_type: *ty,
            value: hex(value),
        },
    }
}
