//! Decoding what follows the Ethernet header for congestion notification: the 802.1Qau
//! CN-TAG and CNM, IPv4/IPv6 with their ECN field, UDP and RoCEv2 (BTH, extension headers,
//! ICRC). A capture cut short by its snapshot length decodes as far as it goes.

use lossless_wire::ethernet::EtherType;
use lossless_wire::ip::{IpInfo, IpRepr, PROTOCOL_UDP};
use lossless_wire::qcn::{self, CnmRepr};
use lossless_wire::roce::{self, BthRepr, ExtHeaders, IcrcEngine, SyndromeKind};
use lossless_wire::udp::{self, ROCEV2_PORT, UdpRepr};
use lossless_wire::{Error, ErrorKind};

use crate::cn::model::{
    AethRecord, AtomicEthRecord, BthRecord, CnTagRecord, CnmRecord, DethRecord, IpRecord, RethRecord,
    RoceRecord, UdpRecord,
};
use crate::model::{FrameRecord, Protocol, hex, mac_text};

/// Which congestion-control field opens the payload of a capture's RoCEv2 data packets
/// (nothing in a packet says it: the capture's maker knows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CcFieldKind {
    /// HPCC's 42-byte INT field.
    Int,
    /// HPCC-PINT's code, of the width its log base gives (1 or 2 bytes).
    Pint(lossless_proto::hpcc_pint::PintCodec),
    /// TIMELY's 8-byte send timestamp.
    Timestamp,
}

/// Reads the field `kind` from the start of the payload of `rec`'s RoCEv2 packet (one whose
/// opcode carries a payload; `data` is the frame `rec` was decoded from) into its
/// `cc_field`; a payload too short for it is a warning.
pub fn decode_cc_field(data: &[u8], rec: &mut FrameRecord, kind: CcFieldKind) {
    use crate::cn::model::{CcFieldRecord, IntHopRecord};
    let Some(r) = rec.roce.as_mut() else { return };
    let (Some(at), Some(n)) = (r.payload_at, r.payload_bytes) else {
        return;
    };
    let payload = data.get(at..(at + n).min(data.len())).unwrap_or(&[]);
    let field = match kind {
        CcFieldKind::Int => lossless_wire::int::IntHeader::parse(payload).map(|h| CcFieldRecord::Int {
            nhop: h.nhop,
            hops: h.hops[..usize::from(h.nhop).min(h.hops.len())]
                .iter()
                .map(|hop| IntHopRecord {
                    line_rate_bps: hop.line_rate(),
                    time_ns: hop.time(),
                    bytes_units: hop.bytes_units(),
                    qlen_units: hop.qlen_units(),
                })
                .collect(),
        }),
        CcFieldKind::Pint(codec) => {
            lossless_wire::pint::PintField::parse(payload, codec.width()).map(|f| CcFieldRecord::Pint {
                code: f.0,
                bytes: codec.width().bytes() as u8,
                utilisation_ppm: (codec.decode_u(f.0) * 1e6).round() as u64,
            })
        }
        CcFieldKind::Timestamp => match payload.get(..8) {
            Some(b) => Ok(CcFieldRecord::Timestamp {
                send_time_ns: u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            }),
            None => Err(Error::truncated(
                0,
                "TIMELY timestamp",
                "send time",
                8,
                payload.len(),
            )),
        },
    };
    match field {
        Ok(f) => r.cc_field = Some(f),
        Err(e) => rec.warnings.push(format!("--cc-field: {}", e.at(at))),
    }
}

/// Decodes the payload at `body[at..]` (the frame without FCS) of EtherType `ethertype`:
/// a CN-TAG and what it carries, a CNM, IPv4 or IPv6. `truncated`: the capture kept only
/// part of the frame. Other EtherTypes leave `rec` as it is.
pub fn decode_network(body: &[u8], at: usize, ethertype: EtherType, truncated: bool, rec: &mut FrameRecord) {
    let (mut at, mut ethertype) = (at, ethertype);
    if ethertype == qcn::ETHERTYPE_CN_TAG {
        let Some(&[f0, f1, t0, t1]) = body.get(at..at + 4) else {
            let left = body.len().saturating_sub(at);
            fail(
                rec,
                truncated,
                Error::truncated(at, "CN-TAG", "Flow ID and EtherType", 4, left),
            );
            return;
        };
        let inner = u16::from_be_bytes([t0, t1]);
        rec.cn_tag = Some(CnTagRecord {
            flow_id: u16::from_be_bytes([f0, f1]),
            ethertype: inner,
        });
        if EtherType(inner).is_vlan_tpid() || EtherType(inner) == qcn::ETHERTYPE_CN_TAG {
            rec.errors.push(format!(
                "CN-TAG: EtherType at byte {}: {inner:#06x} after the CN-TAG; VLAN tags come before it and there is one CN-TAG",
                at + 2
            ));
            return;
        }
        at += 4;
        ethertype = EtherType(inner);
    }
    match ethertype {
        qcn::ETHERTYPE_CNM => decode_cnm(body, at, truncated, rec),
        EtherType::IPV4 | EtherType::IPV6 => decode_ip(body, at, ethertype, truncated, rec),
        _ => {}
    }
}

/// Records `e`: as a warning when the capture cut the frame short and that is all that is
/// wrong (a header not captured), as an error otherwise.
fn fail(rec: &mut FrameRecord, truncated: bool, e: Error) {
    if truncated && matches!(e.kind, ErrorKind::Truncated { .. }) {
        rec.warnings.push(format!("not captured: {e}"));
    } else {
        rec.errors.push(e.to_string());
    }
}

fn decode_cnm(body: &[u8], at: usize, truncated: bool, rec: &mut FrameRecord) {
    rec.protocol = Protocol::Cnm;
    match CnmRepr::parse(&body[at..]) {
        Ok((c, _)) => {
            rec.cnm = Some(CnmRecord {
                version: 0,
                reserved_v: c.reserved_v,
                qntz_fb: c.qntz_fb,
                cpid: hex(&c.cpid),
                q_offset: c.q_offset,
                q_delta: c.q_delta,
                encapsulated_priority: c.encapsulated_priority,
                encapsulated_dst: mac_text(c.encapsulated_dst.as_bytes()),
                encapsulated_msdu_length: c.encapsulated.as_slice().len() as u16,
                encapsulated_msdu: hex(c.encapsulated.as_slice()),
            });
            if c.reserved_v != 0 || c.encapsulated_priority_reserved != 0 {
                rec.warnings
                    .push("CNM: reserved bits are not zero (they are transmitted as 0)".into());
            }
        }
        Err(e) => fail(rec, truncated, e.at(at)),
    }
}

fn ip_record(ip: &IpRepr, info: &IpInfo) -> IpRecord {
    let mut r = IpRecord {
        version: 4,
        src: String::new(),
        dst: String::new(),
        dscp: ip.dscp(),
        ecn: ip.ecn().bits(),
        ecn_name: ip.ecn().name().into(),
        ttl: 0,
        protocol: ip.protocol(),
        header_bytes: info.header_len,
        payload_bytes: info.payload_len,
        identification: None,
        dont_fragment: None,
        more_fragments: None,
        fragment_offset: None,
        checksum: None,
        checksum_ok: None,
        traffic_class: None,
        flow_label: None,
    };
    match ip {
        IpRepr::V4(v) => {
            r.src = core::net::Ipv4Addr::from(v.src).to_string();
            r.dst = core::net::Ipv4Addr::from(v.dst).to_string();
            r.ttl = v.ttl;
            r.identification = Some(v.identification);
            r.dont_fragment = Some(v.dont_fragment);
            r.more_fragments = Some(v.more_fragments);
            r.fragment_offset = Some(v.fragment_offset);
            r.checksum = Some(info.checksum);
            r.checksum_ok = Some(info.checksum_ok);
        }
        IpRepr::V6(v) => {
            r.version = 6;
            r.src = core::net::Ipv6Addr::from(v.src).to_string();
            r.dst = core::net::Ipv6Addr::from(v.dst).to_string();
            r.ttl = v.hop_limit;
            r.traffic_class = Some(v.traffic_class());
            r.flow_label = Some(v.flow_label);
        }
    }
    r
}

fn decode_ip(body: &[u8], at: usize, ethertype: EtherType, truncated: bool, rec: &mut FrameRecord) {
    rec.protocol = Protocol::Ip;
    let (ip, info) = match IpRepr::parse(ethertype, &body[at..]) {
        Ok(x) => x,
        Err(e) => return fail(rec, truncated, e.at(at)),
    };
    rec.ip = Some(ip_record(&ip, &info));
    if !info.checksum_ok {
        rec.warnings
            .push(format!("IPv4 header: checksum {:#06x} is wrong", info.checksum));
    }
    let start = at + info.header_len;
    let end = start + info.payload_len;
    let whole = end <= body.len();
    if !whole && !truncated {
        rec.errors.push(format!(
            "IP header: payload at byte {start}: truncated: the header announces {} bytes, {} left",
            info.payload_len,
            body.len() - start
        ));
    }
    let fragment = matches!(ip, IpRepr::V4(v) if v.more_fragments || v.fragment_offset != 0);
    if ip.protocol() != PROTOCOL_UDP || fragment {
        return;
    }
    let datagram = &body[start..end.min(body.len())];
    let (u, uinfo) = match UdpRepr::parse(datagram) {
        Ok(x) => x,
        Err(e) => return fail(rec, truncated && !whole, e.at(start)),
    };
    let checksum_ok = (whole && uinfo.checksum != 0 && uinfo.length == datagram.len()).then(|| {
        u.checksum(&ip, &datagram[udp::HEADER_LEN..])
            .is_ok_and(|c| c == uinfo.checksum)
    });
    rec.udp = Some(UdpRecord {
        src_port: u.src_port,
        dst_port: u.dst_port,
        length: uinfo.length,
        checksum: uinfo.checksum,
        checksum_ok,
    });
    if checksum_ok == Some(false) {
        rec.warnings
            .push(format!("UDP header: checksum {:#06x} is wrong", uinfo.checksum));
    }
    if whole && uinfo.length != info.payload_len {
        rec.errors.push(format!(
            "UDP header: length at byte {}: {} bytes, the IP payload is {}",
            start + 4,
            uinfo.length,
            info.payload_len
        ));
        return;
    }
    if u.dst_port == ROCEV2_PORT {
        decode_roce(body, at, start + udp::HEADER_LEN, end, truncated, rec);
    }
}

/// RoCEv2 from `bth_at` to `end` (the end of the IP packet, possibly past the captured bytes);
/// `ip_at` is where the IP header starts (the ICRC covers it).
fn decode_roce(body: &[u8], ip_at: usize, bth_at: usize, end: usize, truncated: bool, rec: &mut FrameRecord) {
    rec.protocol = Protocol::Roce;
    let captured = &body[bth_at..end.min(body.len())];
    let bth = match BthRepr::parse_bytes(captured) {
        Ok(b) => b,
        Err(e) => return fail(rec, truncated && end > body.len(), e.at(bth_at)),
    };
    if bth.opcode.is_cnp() {
        rec.protocol = Protocol::Cnp;
    }
    let mut r = RoceRecord {
        bth: BthRecord {
            opcode: bth.opcode.0,
            opcode_name: bth.opcode.to_string(),
            se: bth.solicited,
            m: bth.migreq,
            padcnt: bth.pad_count,
            tver: bth.tver,
            p_key: bth.p_key,
            fecn: bth.fecn,
            becn: bth.becn,
            resv6: bth.resv6,
            dest_qp: bth.dest_qp,
            ack_req: bth.ack_req,
            resv7: bth.resv7,
            psn: bth.psn,
        },
        aeth: None,
        reth: None,
        deth: None,
        rdeth_ee_context: None,
        immediate: None,
        invalidate_r_key: None,
        atomic_eth: None,
        atomic_ack_original: None,
        cnp_reserved_zero: None,
        payload_bytes: None,
        icrc: None,
        icrc_computed: None,
        icrc_ok: None,
        payload_at: None,
        cc_field: None,
    };
    let whole = end <= body.len();
    roce_rest(body, ip_at, bth_at, end, &bth, whole, &mut r, rec);
    rec.roce = Some(r);
}

#[allow(clippy::too_many_arguments)]
fn roce_rest(
    body: &[u8],
    ip_at: usize,
    bth_at: usize,
    end: usize,
    bth: &BthRepr,
    whole: bool,
    r: &mut RoceRecord,
    rec: &mut FrameRecord,
) {
    let Some(layout) = bth.opcode.layout() else {
        rec.errors.push(format!(
            "BTH: opcode at byte {bth_at}: value {:#04x}, allowed a defined RC, UC, RD, UD or CNP opcode",
            bth.opcode.0
        ));
        return;
    };
    let ext_at = bth_at + roce::BTH_LEN;
    let packet_len = end - bth_at;
    let fixed = roce::BTH_LEN + layout.ext_len() + roce::ICRC_LEN;
    if packet_len < fixed {
        rec.errors.push(format!(
            "RoCEv2 packet: length at byte {bth_at}: {packet_len} bytes after UDP, {} opcode {:#04x} needs at least {fixed} (BTH, its headers, ICRC)",
            bth.opcode, bth.opcode.0
        ));
        return;
    }
    let ext = match ExtHeaders::parse(layout, body.get(ext_at..).unwrap_or(&[])) {
        Ok(x) => x,
        Err(e) => {
            // Only a capture cut short gets here (the length was checked above).
            rec.warnings.push(format!("not captured: {}", e.at(ext_at)));
            return;
        }
    };
    ext_records(&ext, r);
    if r.cnp_reserved_zero == Some(false) {
        rec.warnings
            .push("CNP: the 16 reserved bytes are not zero".into());
    }
    let payload = packet_len - fixed;
    r.payload_bytes = Some(payload);
    if layout.payload && payload > 0 {
        r.payload_at = Some(ext_at + layout.ext_len());
    }
    if !layout.payload && payload != 0 {
        rec.errors.push(format!(
            "RoCEv2 packet: payload at byte {}: {payload} bytes, allowed 0 for opcode {}",
            ext_at + layout.ext_len(),
            bth.opcode
        ));
    }
    if usize::from(bth.pad_count) > payload {
        rec.errors.push(format!(
            "BTH: PadCnt at byte {}: {} pad bytes in a {payload}-byte payload",
            bth_at + 1,
            bth.pad_count
        ));
    }
    if bth.resv6 != 0 || bth.resv7 != 0 || bth.tver != 0 {
        rec.warnings
            .push("BTH: TVer or reserved bits are not zero".into());
    }
    if !whole {
        return;
    }
    let icrc_at = end - roce::ICRC_LEN;
    let found = u32::from_be_bytes([
        body[icrc_at],
        body[icrc_at + 1],
        body[icrc_at + 2],
        body[icrc_at + 3],
    ]);
    match IcrcEngine::new().compute(&body[ip_at..icrc_at]) {
        Ok(crc) => {
            let computed = u32::from_be_bytes(crc.to_le_bytes());
            r.icrc = Some(found);
            r.icrc_computed = Some(computed);
            r.icrc_ok = Some(found == computed);
            if found != computed {
                rec.warnings.push(format!(
                    "RoCEv2 ICRC {found:#010x} is wrong, the packet's is {computed:#010x}"
                ));
            }
        }
        Err(e) => rec.errors.push(e.at(ip_at).to_string()),
    }
}

fn ext_records(ext: &ExtHeaders, r: &mut RoceRecord) {
    r.aeth = ext.aeth.map(|a| {
        let mut rec = AethRecord {
            syndrome: a.syndrome.0,
            kind_code: a.syndrome.kind_bits(),
            kind: String::new(),
            credit_count: None,
            timer: None,
            nak_code: None,
            nak: None,
            msn: a.msn,
        };
        rec.kind = match a.syndrome.kind() {
            SyndromeKind::Ack { credit_count } => {
                rec.credit_count = Some(credit_count);
                "ack"
            }
            SyndromeKind::RnrNak { timer } => {
                rec.timer = Some(timer);
                "rnr_nak"
            }
            SyndromeKind::Nak(code) => {
                rec.nak_code = Some(code.bits());
                rec.nak = Some(code.name().into());
                "nak"
            }
            SyndromeKind::Reserved(_) => "reserved",
        }
        .into();
        rec
    });
    r.reth = ext.reth.map(|x| RethRecord {
        va: x.va,
        r_key: x.r_key,
        dma_len: x.dma_len,
    });
    r.deth = ext.deth.map(|x| DethRecord {
        q_key: x.q_key,
        src_qp: x.src_qp,
    });
    r.rdeth_ee_context = ext.rdeth.map(|(_, ee)| ee);
    r.immediate = ext.immdt;
    r.invalidate_r_key = ext.ieth;
    r.atomic_eth = ext.atomic_eth.map(|x| AtomicEthRecord {
        va: x.va,
        r_key: x.r_key,
        swap: x.swap,
        compare: x.compare,
    });
    r.atomic_ack_original = ext.atomic_ack_eth;
    r.cnp_reserved_zero = ext.cnp.map(|b| b.iter().all(|&x| x == 0));
}
