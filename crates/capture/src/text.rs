//! Readable text for a [`FrameRecord`], in the manner of `tcpdump -v` and `tshark -V`: one
//! summary line per frame, then for MAC Control and LLDP frames one indented line per field,
//! with DCBX ETS and PFC settings as priority / TC / bandwidth / TSA tables; IP, UDP, RoCEv2,
//! CN-TAG and CNM lines come from [`crate::cn::text`].

use std::fmt::Write;

use crate::lldp::model::{
    AppEntryRecord, CeeFeatureRecord, CeeSubRecord, EtsRecord, IdRecord, LldpRecord, TlvBody, TlvRecord,
};
use crate::model::{FrameRecord, MacControlRecord};

/// The name of an EtherType, for the summary line.
pub fn ethertype_name(t: u16) -> &'static str {
    match t {
        0x0800 => "IPv4",
        0x0806 => "ARP",
        0x86DD => "IPv6",
        0x8808 => "MAC Control",
        0x88CC => "LLDP",
        0x8100 => "802.1Q",
        0x88A8 => "802.1ad",
        0x8906 => "FCoE",
        0x8914 => "FIP",
        0x22E7 => "CNM",
        0x22E9 => "CN-TAG",
        0x88F7 => "PTP",
        0x8847 => "MPLS",
        0x0000..=0x05DC => "802.3 length",
        _ => "unknown",
    }
}

/// The name of a 802.1Qaz TSA value.
pub fn tsa_name(tsa: u8) -> &'static str {
    match tsa {
        0 => "strict",
        1 => "CBS",
        2 => "ETS",
        255 => "vendor",
        _ => "reserved",
    }
}

/// The name of an 802.1Qaz Application Priority selector.
pub fn app_selector_name(sel: u8) -> &'static str {
    match sel {
        1 => "EtherType",
        2 => "TCP/SCTP port",
        3 => "UDP/DCCP port",
        4 => "TCP/SCTP/UDP/DCCP port",
        5 => "DSCP",
        _ => "reserved",
    }
}

/// Renders `rec` as text, ending with a newline.
pub fn render(rec: &FrameRecord) -> String {
    let mut s = String::new();
    summary_line(rec, &mut s);
    if let Some(m) = &rec.mac_control {
        mac_control(m, &mut s);
    }
    if let Some(l) = &rec.lldp {
        lldp(l, &mut s);
    }
    crate::cn::text::render(rec, &mut s);
    for w in &rec.warnings {
        let _ = writeln!(s, "    warning: frame {}: {w}", rec.frame);
    }
    for e in &rec.errors {
        let _ = writeln!(
            s,
            "    error: frame {} (record at file byte {}): {e}",
            rec.frame, rec.offset
        );
    }
    s
}

fn summary_line(rec: &FrameRecord, s: &mut String) {
    let _ = write!(s, "{} {}", rec.frame, rec.utc.as_deref().unwrap_or("-"));
    match &rec.eth {
        Some(eth) => {
            let _ = write!(s, " {} > {}", eth.src, eth.dst);
            for v in &eth.vlan {
                let _ = write!(
                    s,
                    ", vlan {} p {}{}",
                    v.vid,
                    v.pcp,
                    if v.dei { " DEI" } else { "" }
                );
            }
            let _ = write!(
                s,
                ", ethertype {} ({:#06x})",
                ethertype_name(eth.ethertype),
                eth.ethertype
            );
        }
        None => {
            let _ = write!(s, " link type {}", rec.link_type);
        }
    }
    let _ = write!(s, ", length {}", rec.len);
    if rec.caplen != rec.len as usize {
        let _ = write!(s, " ({} captured)", rec.caplen);
    }
    if let Some(fcs) = rec.eth.as_ref().and_then(|e| e.fcs) {
        let _ = write!(s, ", FCS {fcs:#010x}");
    }
    s.push('\n');
}

fn mac_control(m: &MacControlRecord, s: &mut String) {
    let name = match (m.pause_time, &m.pfc) {
        (Some(_), _) => "PAUSE",
        (_, Some(_)) => "PFC",
        _ => "unknown",
    };
    let _ = writeln!(s, "    MAC Control, opcode {name} ({:#06x})", m.opcode);
    if let Some(t) = m.pause_time {
        let _ = writeln!(
            s,
            "      pause_time: {t} quanta{}",
            if t == 0 { " (XON)" } else { "" }
        );
    }
    if let Some(p) = &m.pfc {
        let _ = writeln!(
            s,
            "      priority_enable_vector: {:#06x}",
            p.priority_enable_vector
        );
        let _ = writeln!(s, "      priority  enabled  time (quanta)");
        for prio in 0..8 {
            let t = p.time[prio];
            let note = match (p.enabled[prio], t) {
                (true, 0) => "  XON",
                (true, _) => "  XOFF",
                _ => "",
            };
            let en = if p.enabled[prio] { "yes" } else { "no" };
            let _ = writeln!(s, "      {prio:>8}  {en:<7}  {t:>5}{note}");
        }
    }
    if let Some(params) = &m.params {
        let _ = writeln!(s, "      parameters: {params}");
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn row<T: std::fmt::Display>(s: &mut String, label: &str, cells: impl IntoIterator<Item = T>) {
    let _ = write!(s, "        {label:<12}");
    for c in cells {
        let _ = write!(s, " {c:>6}");
    }
    s.push('\n');
}

fn id_text(r: &IdRecord) -> String {
    format!("{} ({}) {}", r.subtype_name, r.subtype, r.id)
}

fn lldp(l: &LldpRecord, s: &mut String) {
    let _ = writeln!(s, "    LLDP, {} TLVs", l.tlvs.len());
    for t in &l.tlvs {
        tlv(t, s);
    }
}

fn tlv(t: &TlvRecord, s: &mut String) {
    let _ = write!(s, "      {} (type {}", t.name, t.tlv_type);
    if let (Some(oui), Some(sub)) = (&t.oui, t.subtype) {
        let _ = write!(s, ", OUI {oui} subtype {sub}");
    }
    let _ = write!(s, ", length {})", t.length);
    match &t.body {
        TlvBody::End {} => s.push('\n'),
        TlvBody::ChassisId(r) | TlvBody::PortId(r) => {
            let _ = writeln!(s, ": {}", id_text(r));
        }
        TlvBody::TimeToLive(ttl) => {
            let _ = writeln!(s, ": {ttl} s");
        }
        TlvBody::PortDescription(x) | TlvBody::SystemName(x) | TlvBody::SystemDescription(x) => {
            let _ = writeln!(s, ": {x:?}");
        }
        TlvBody::SystemCapabilities(c) => {
            let _ = writeln!(
                s,
                ": capabilities {:#06x}, enabled {:#06x} [{}]",
                c.capabilities,
                c.enabled,
                c.names.join(", ")
            );
        }
        TlvBody::ManagementAddress(m) => {
            let _ = writeln!(
                s,
                ": address subtype {} {}, interface subtype {} number {}, OID {}",
                m.address_subtype,
                m.address,
                m.interface_subtype,
                m.interface_number,
                if m.oid.is_empty() { "-" } else { &m.oid }
            );
        }
        TlvBody::PortVlanId(v) => {
            let _ = writeln!(s, ": PVID {v}");
        }
        TlvBody::PortAndProtocolVlanId(p) => {
            let _ = writeln!(
                s,
                ": supported {}, enabled {}, PPVID {}",
                yes(p.supported),
                yes(p.enabled),
                p.ppvid
            );
        }
        TlvBody::VlanName(v) => {
            let _ = writeln!(s, ": VID {} {:?}", v.vid, v.name);
        }
        TlvBody::ProtocolIdentity(h) => {
            let _ = writeln!(s, ": {h}");
        }
        TlvBody::LinkAggregation(a) => {
            let _ = writeln!(s, ": status {:#04x}, aggregated port ID {}", a.status, a.port_id);
        }
        TlvBody::MacPhy(m) => {
            let _ = writeln!(
                s,
                ": autonegotiation {:#04x}, advertised {:#06x}, MAU type {}",
                m.autoneg_status, m.advertised, m.mau_type
            );
        }
        TlvBody::MaximumFrameSize(n) => {
            let _ = writeln!(s, ": {n} bytes");
        }
        TlvBody::CongestionNotification(c) => {
            s.push('\n');
            row(s, "priority", 0..8);
            row(s, "CNPV", c.cnpv.iter().map(|b| yes(*b)));
            row(s, "ready", c.ready.iter().map(|b| yes(*b)));
        }
        TlvBody::EtsConfiguration(e) | TlvBody::EtsRecommendation(e) => ets(e, s),
        TlvBody::PfcConfiguration(p) => {
            let _ = writeln!(
                s,
                "\n        willing: {}, MBC: {}, PFC cap: {}, pfc_enable: {:#04x}",
                yes(p.willing),
                yes(p.mbc),
                p.pfc_cap,
                p.pfc_enable
            );
            row(s, "priority", 0..8);
            row(s, "PFC", p.enabled.iter().map(|b| yes(*b)));
        }
        TlvBody::ApplicationPriority(a) => {
            let _ = writeln!(s, ": {} entries", a.entries.len());
            app_entries(&a.entries, s);
        }
        TlvBody::CeeDcbx(c) => {
            s.push('\n');
            for sub in &c.sub_tlvs {
                cee_sub(sub, s);
            }
        }
        TlvBody::Organizational(o) => {
            let _ = writeln!(s, ": {}", if o.info.is_empty() { "-" } else { &o.info });
        }
        TlvBody::Unknown(h) => {
            let _ = writeln!(s, ": {h}");
        }
    }
}

fn ets(e: &EtsRecord, s: &mut String) {
    s.push('\n');
    if let (Some(w), Some(c), Some(m)) = (e.willing, e.cbs, e.max_tcs) {
        let shown = if m == 0 { 8 } else { m };
        let _ = writeln!(
            s,
            "        willing: {}, CBS: {}, max TCs: {shown} (field {m})",
            yes(w),
            yes(c)
        );
    }
    row(s, "priority", 0..8);
    row(s, "mapped TC", e.priority_tc);
    row(s, "TC", 0..8);
    row(s, "bandwidth %", e.tc_bandwidth);
    row(s, "TSA", e.tsa.iter().map(|t| tsa_name(*t)));
}

fn app_entries(entries: &[AppEntryRecord], s: &mut String) {
    for e in entries {
        let _ = writeln!(
            s,
            "        priority {} selector {} ({}) protocol {:#06x} ({})",
            e.priority,
            e.selector,
            app_selector_name(e.selector),
            e.protocol,
            e.protocol
        );
    }
}

fn feature(f: &CeeFeatureRecord) -> String {
    format!(
        "version {}/{}, enable {}, willing {}, error {}, subtype {}",
        f.oper_version,
        f.max_version,
        yes(f.enable),
        yes(f.willing),
        yes(f.error),
        f.subtype
    )
}

fn cee_sub(sub: &CeeSubRecord, s: &mut String) {
    match sub {
        CeeSubRecord::Control {
            oper_version,
            max_version,
            seq,
            ack,
        } => {
            let _ = writeln!(
                s,
                "        Control: version {oper_version}/{max_version}, seq {seq}, ack {ack}"
            );
        }
        CeeSubRecord::PriorityGroups {
            feature: f,
            pgid,
            pg_bandwidth,
            num_tcs,
        } => {
            let _ = writeln!(
                s,
                "        Priority Groups: {}, TCs supported {num_tcs}",
                feature(f)
            );
            row(s, "priority", 0..8);
            row(
                s,
                "PGID",
                pgid.iter().map(|p| {
                    if *p == 15 {
                        "strict".to_string()
                    } else {
                        p.to_string()
                    }
                }),
            );
            row(s, "PG", 0..8);
            row(s, "bandwidth %", pg_bandwidth);
        }
        CeeSubRecord::Pfc {
            feature: f,
            enabled,
            num_tcs,
        } => {
            let _ = writeln!(s, "        PFC: {}, TCs supported {num_tcs}", feature(f));
            row(s, "priority", 0..8);
            row(s, "PFC", enabled.iter().map(|b| yes(*b)));
        }
        CeeSubRecord::Application { feature: f, entries } => {
            let _ = writeln!(s, "        Application: {}", feature(f));
            for e in entries {
                let prios: Vec<String> = (0..8)
                    .filter(|p| e.priority_map & (1 << p) != 0)
                    .map(|p| p.to_string())
                    .collect();
                let sel = match e.selector {
                    0 => "EtherType",
                    1 => "socket number",
                    _ => "reserved",
                };
                let _ = writeln!(
                    s,
                    "          protocol {:#06x} selector {} ({sel}) OUI {:#08x} priority map {:#04x} (priorities {})",
                    e.protocol,
                    e.selector,
                    e.oui,
                    e.priority_map,
                    if prios.is_empty() {
                        "none".to_string()
                    } else {
                        prios.join(", ")
                    }
                );
            }
        }
        CeeSubRecord::Other { sub_type, value } => {
            let _ = writeln!(s, "        sub-TLV type {sub_type}: {value}");
        }
    }
}
