//! Readable text for the CN-TAG, CNM, IP, UDP and RoCEv2 parts of a [`FrameRecord`]: one
//! indented line per header, then one per group of fields, as `text` does for PFC and LLDP.

use std::fmt::Write;

use crate::cn::model::{CcFieldRecord, CnmRecord, IpRecord, RoceRecord, UdpRecord};
use crate::model::FrameRecord;
use crate::text::ethertype_name;

/// Appends the CN-TAG, CNM, IP, UDP and RoCEv2 lines of `rec` to `s`.
pub fn render(rec: &FrameRecord, s: &mut String) {
    if let Some(t) = &rec.cn_tag {
        let _ = writeln!(
            s,
            "    CN-TAG, flow ID {} ({:#06x}), ethertype {} ({:#06x})",
            t.flow_id,
            t.flow_id,
            ethertype_name(t.ethertype),
            t.ethertype
        );
    }
    if let Some(c) = &rec.cnm {
        cnm(c, s);
    }
    if let Some(ip) = &rec.ip {
        ip_line(ip, s);
    }
    if let Some(u) = &rec.udp {
        udp_line(u, s);
    }
    if let Some(r) = &rec.roce {
        roce(r, s);
    }
}

fn protocol_name(p: u8) -> &'static str {
    match p {
        1 => "ICMP",
        6 => "TCP",
        17 => "UDP",
        58 => "ICMPv6",
        _ => "",
    }
}

fn ip_line(ip: &IpRecord, s: &mut String) {
    let proto = match protocol_name(ip.protocol) {
        "" => ip.protocol.to_string(),
        n => format!("{n} ({})", ip.protocol),
    };
    if ip.version == 4 {
        let _ = write!(
            s,
            "    IPv4 {} > {}, DSCP {}, ECN {} ({}), TTL {}, id {:#06x}",
            ip.src,
            ip.dst,
            ip.dscp,
            ip.ecn_name,
            ip.ecn,
            ip.ttl,
            ip.identification.unwrap_or(0)
        );
        if ip.dont_fragment == Some(true) {
            s.push_str(", DF");
        }
        if ip.more_fragments == Some(true) || ip.fragment_offset.is_some_and(|o| o != 0) {
            let _ = write!(s, ", fragment offset {}", ip.fragment_offset.unwrap_or(0));
            if ip.more_fragments == Some(true) {
                s.push_str(" MF");
            }
        }
        let _ = write!(s, ", protocol {proto}, payload {} bytes", ip.payload_bytes);
        if ip.checksum_ok == Some(false) {
            s.push_str(", bad header checksum");
        }
        s.push('\n');
    } else {
        let _ = writeln!(
            s,
            "    IPv6 {} > {}, DSCP {}, ECN {} ({}), flow label {:#07x}, hop limit {}, next header {proto}, payload {} bytes",
            ip.src,
            ip.dst,
            ip.dscp,
            ip.ecn_name,
            ip.ecn,
            ip.flow_label.unwrap_or(0),
            ip.ttl,
            ip.payload_bytes
        );
    }
}

fn udp_line(u: &UdpRecord, s: &mut String) {
    let checksum = match (u.checksum, u.checksum_ok) {
        (0, _) => "none".to_string(),
        (c, Some(true)) => format!("{c:#06x} (good)"),
        (c, Some(false)) => format!("{c:#06x} (bad)"),
        (c, None) => format!("{c:#06x} (unverified)"),
    };
    let roce = if u.dst_port == 4791 { " (RoCEv2)" } else { "" };
    let _ = writeln!(
        s,
        "    UDP {} > {}{roce}, length {}, checksum {checksum}",
        u.src_port, u.dst_port, u.length
    );
}

fn bit(b: bool) -> u8 {
    u8::from(b)
}

fn roce(r: &RoceRecord, s: &mut String) {
    let b = &r.bth;
    let _ = writeln!(
        s,
        "    BTH, opcode {} ({:#04x}), dest QP {:#08x}, PSN {}, P_Key {:#06x}",
        b.opcode_name, b.opcode, b.dest_qp, b.psn, b.p_key
    );
    let _ = writeln!(
        s,
        "      SE {}, M {}, PadCnt {}, TVer {}, FECN {}, BECN {}, AckReq {}",
        bit(b.se),
        bit(b.m),
        b.padcnt,
        b.tver,
        bit(b.fecn),
        bit(b.becn),
        bit(b.ack_req)
    );
    if let Some(ee) = r.rdeth_ee_context {
        let _ = writeln!(s, "      RDETH: EE context {ee:#08x}");
    }
    if let Some(d) = &r.deth {
        let _ = writeln!(
            s,
            "      DETH: Q_Key {:#010x}, source QP {:#08x}",
            d.q_key, d.src_qp
        );
    }
    if let Some(x) = &r.reth {
        let _ = writeln!(
            s,
            "      RETH: VA {:#018x}, R_Key {:#010x}, DMA length {}",
            x.va, x.r_key, x.dma_len
        );
    }
    if let Some(x) = &r.atomic_eth {
        let _ = writeln!(
            s,
            "      AtomicETH: VA {:#018x}, R_Key {:#010x}, swap {:#x}, compare {:#x}",
            x.va, x.r_key, x.swap, x.compare
        );
    }
    if let Some(a) = &r.aeth {
        let what = match (a.credit_count, a.timer, &a.nak) {
            (Some(c), _, _) => format!("ACK, credit count {c}{}", if c == 31 { " (invalid)" } else { "" }),
            (_, Some(t), _) => format!("RNR NAK, timer {t}"),
            (_, _, Some(n)) => format!("NAK, {n} ({})", a.nak_code.unwrap_or(0)),
            _ => "reserved".to_string(),
        };
        let _ = writeln!(
            s,
            "      AETH: syndrome {:#04x} {what}, MSN {}",
            a.syndrome, a.msn
        );
    }
    if let Some(v) = r.atomic_ack_original {
        let _ = writeln!(s, "      AtomicAckETH: original remote data {v:#x}");
    }
    if let Some(v) = r.immediate {
        let _ = writeln!(s, "      immediate data {v:#010x}");
    }
    if let Some(v) = r.invalidate_r_key {
        let _ = writeln!(s, "      IETH: R_Key {v:#010x}");
    }
    if let Some(z) = r.cnp_reserved_zero {
        let _ = writeln!(
            s,
            "      CNP: 16 reserved bytes{}",
            if z { ", zero" } else { ", NOT zero" }
        );
    }
    match &r.cc_field {
        Some(CcFieldRecord::Int { nhop, hops }) => {
            let _ = writeln!(s, "      INT: {nhop} hops");
            for (i, h) in hops.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "        hop {i}: rate {} Gb/s, time {} ns (mod 2^24), bytes {} units, qlen {} units",
                    h.line_rate_bps / 1_000_000_000,
                    h.time_ns,
                    h.bytes_units,
                    h.qlen_units
                );
            }
        }
        Some(CcFieldRecord::Pint {
            code,
            bytes,
            utilisation_ppm,
        }) => {
            let _ = writeln!(
                s,
                "      PINT: code {code} ({bytes} bytes), utilisation {:.3}",
                *utilisation_ppm as f64 / 1e6
            );
        }
        Some(CcFieldRecord::Timestamp { send_time_ns }) => {
            let _ = writeln!(s, "      TIMELY: sent at {send_time_ns} ns");
        }
        None => {}
    }
    if let Some(n) = r.payload_bytes {
        let _ = write!(s, "      payload {n} bytes");
        match (r.icrc, r.icrc_ok) {
            (Some(i), Some(true)) => {
                let _ = writeln!(s, ", ICRC {i:#010x} (good)");
            }
            (Some(i), _) => {
                let _ = writeln!(
                    s,
                    ", ICRC {i:#010x} (bad, should be {:#010x})",
                    r.icrc_computed.unwrap_or(0)
                );
            }
            (None, _) => s.push_str(", ICRC not captured\n"),
        }
    }
}

fn cnm(c: &CnmRecord, s: &mut String) {
    let _ = writeln!(
        s,
        "    CNM, version {}, QntzFb {}, CPID {}, cnmQOffset {}, cnmQDelta {}",
        c.version, c.qntz_fb, c.cpid, c.q_offset, c.q_delta
    );
    let _ = writeln!(
        s,
        "      sampled frame: priority {}, destination {}, {} bytes encapsulated{}{}",
        c.encapsulated_priority,
        c.encapsulated_dst,
        c.encapsulated_msdu_length,
        if c.encapsulated_msdu.is_empty() { "" } else { ": " },
        c.encapsulated_msdu
    );
}
