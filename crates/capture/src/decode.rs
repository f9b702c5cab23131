//! Decoding one captured frame into a [`FrameRecord`] with the `lossless-wire` codecs.

use std::ops::Range;

use lossless_wire::ethernet::{EtherType, EthernetRepr, VlanTags};
use lossless_wire::fcs::{self, FcsMode};
use lossless_wire::mac_control::{self, MacControlRepr, Warnings};

use crate::model::{
    EthRecord, FrameRecord, MacControlRecord, PfcRecord, Protocol, VlanRecord, format_time, format_utc, hex,
    mac_text,
};
use crate::reader::{Frame, LINKTYPE_ETHERNET, link_type_name};

/// Whether `data` ends with a valid FCS: only when the frame was captured whole, is at least a
/// minimum frame with FCS, and its last four bytes are the CRC-32 of the rest.
pub fn has_fcs(data: &[u8], orig_len: u32) -> bool {
    data.len() == orig_len as usize
        && data.len() >= fcs::MIN_FRAME_LEN_WITH_FCS
        && fcs::verify(data).unwrap_or(false)
}

/// How a captured frame is read before any of its fields is decoded. [`decode_frame`] and
/// `analyze` both start from it, so they agree on which frames are Ethernet, where the FCS is,
/// which VLAN tags there are and where the payload begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// The link type is not Ethernet: not decoded.
    Skipped,
    /// Too short for an Ethernet header: why, with the byte offset.
    Malformed(String),
    /// An Ethernet frame.
    Ethernet {
        /// The header: addresses, up to two VLAN tags, the EtherType after them.
        eth: EthernetRepr,
        /// The bytes after the header, up to the FCS when the capture kept one.
        payload: Range<usize>,
        /// Whether the frame ends with its (valid) FCS.
        fcs: bool,
    },
}

/// Reads `frame`'s framing: link type, FCS, Ethernet header and tags. Allocates only for a
/// malformed frame's message.
pub fn framing(frame: &Frame) -> Framing {
    if frame.link_type != LINKTYPE_ETHERNET {
        return Framing::Skipped;
    }
    let fcs = has_fcs(&frame.data, frame.orig_len);
    let body = if fcs {
        &frame.data[..frame.data.len() - fcs::FCS_LEN]
    } else {
        &frame.data[..]
    };
    match EthernetRepr::parse_bytes(body) {
        Ok((eth, at)) => Framing::Ethernet {
            eth,
            payload: at..body.len(),
            fcs,
        },
        Err(e) => Framing::Malformed(e.to_string()),
    }
}

/// Decodes one frame. Never fails: problems become `errors` and `warnings` of the record.
pub fn decode_frame(frame: &Frame) -> FrameRecord {
    let mut rec = FrameRecord {
        frame: frame.number,
        time: frame.timestamp.map(format_time),
        utc: frame.timestamp.map(format_utc),
        link_type: frame.link_type,
        caplen: frame.data.len(),
        len: frame.orig_len,
        offset: frame.offset,
        protocol: Protocol::Skipped,
        eth: None,
        mac_control: None,
        lldp: None,
        cn_tag: None,
        ip: None,
        udp: None,
        roce: None,
        cnm: None,
        warnings: frame.notes.clone(),
        errors: Vec::new(),
    };
    let framing = framing(frame);
    if framing == Framing::Skipped {
        rec.warnings.push(format!(
            "skipped: link type {} is not decoded (only LINKTYPE_ETHERNET (1) is)",
            link_type_name(frame.link_type)
        ));
        return rec;
    }
    let truncated = frame.data.len() < frame.orig_len as usize;
    if truncated {
        rec.warnings.push(format!(
            "frame truncated by the capture: {} of {} bytes captured",
            frame.data.len(),
            frame.orig_len
        ));
    }
    let (eth, payload, fcs_present) = match framing {
        Framing::Ethernet { eth, payload, fcs } => (eth, payload, fcs),
        Framing::Skipped => return rec,
        Framing::Malformed(e) => {
            rec.protocol = Protocol::Malformed;
            rec.errors.push(e);
            return rec;
        }
    };
    let (body, at) = (&frame.data[..payload.end], payload.start);
    let fcs_value = fcs_present.then(|| {
        let n = frame.data.len();
        u32::from_be_bytes([
            frame.data[n - 4],
            frame.data[n - 3],
            frame.data[n - 2],
            frame.data[n - 1],
        ])
    });
    rec.eth = Some(eth_record(&eth, fcs_value));
    rec.protocol = Protocol::Other;
    if eth.ethertype == EtherType::MAC_CONTROL {
        rec.protocol = Protocol::MacControl;
        decode_mac_control(&frame.data, fcs_present, truncated, &mut rec);
    } else if eth.ethertype == EtherType::LLDP {
        rec.protocol = Protocol::Lldp;
        crate::lldp::decode::decode_lldp(body, at, &mut rec);
    } else {
        crate::cn::decode::decode_network(body, at, eth.ethertype, truncated, &mut rec);
    }
    rec
}

fn eth_record(eth: &EthernetRepr, fcs: Option<u32>) -> EthRecord {
    let tags = match eth.tags {
        VlanTags::Untagged => vec![],
        VlanTags::Single(a) => vec![a],
        VlanTags::Double(a, b) => vec![a, b],
    };
    EthRecord {
        dst: mac_text(eth.dst.as_bytes()),
        src: mac_text(eth.src.as_bytes()),
        vlan: tags
            .iter()
            .map(|t| VlanRecord {
                tpid: t.tpid.0,
                pcp: t.pcp,
                dei: t.dei,
                vid: t.vid,
            })
            .collect(),
        ethertype: eth.ethertype.0,
        fcs,
    }
}

fn decode_mac_control(data: &[u8], fcs_present: bool, truncated: bool, rec: &mut FrameRecord) {
    let decoded = match mac_control::decode_frame(data, FcsMode::from_present(fcs_present), None) {
        Ok(d) => d,
        Err(e) => {
            rec.errors.push(format!("MAC Control: {e}"));
            return;
        }
    };
    let w = decoded.warnings;
    let mut r = MacControlRecord {
        opcode: decoded.control.opcode(),
        pause_time: None,
        pfc: None,
        params: None,
        dst_address_invalid: w.contains(Warnings::DESTINATION),
        enbv_not_zero: w.contains(Warnings::ENABLE_VECTOR_HIGH_BYTE),
        // A frame cut short by the capture's snapshot length says nothing about its real size.
        length_invalid: w.contains(Warnings::LENGTH) && !truncated,
        fcs_bad: w.contains(Warnings::BAD_FCS),
        padding_not_zero: w.contains(Warnings::NONZERO_PADDING),
        vlan_tagged: w.contains(Warnings::VLAN_TAGGED),
    };
    match decoded.control {
        MacControlRepr::Pause { pause_time } => {
            rec.protocol = Protocol::Pause;
            r.pause_time = Some(pause_time);
        }
        MacControlRepr::Pfc {
            priority_enable_vector,
            time,
        } => {
            rec.protocol = Protocol::Pfc;
            let mut enabled = [false; 8];
            for (p, e) in enabled.iter_mut().enumerate() {
                *e = priority_enable_vector & (1 << p) != 0;
            }
            r.pfc = Some(PfcRecord {
                priority_enable_vector,
                enabled,
                time,
            });
        }
        MacControlRepr::Unknown { opcode, params } => {
            r.params = Some(hex(params.as_slice()));
            rec.warnings.push(format!(
                "macc.opcode.unknown: opcode {opcode:#06x} is neither PAUSE nor PFC"
            ));
        }
    }
    if r.dst_address_invalid {
        rec.warnings
            .push("macc.dst_address_invalid: destination address must be 01-80-C2-00-00-01".into());
    }
    if r.enbv_not_zero {
        rec.warnings
            .push("macc.cbfc.enbv.not_zero: the 8 high bits of priority_enable_vector must be 0".into());
    }
    if r.length_invalid {
        rec.warnings.push(format!(
            "MAC Control frame is {} bytes, must be exactly 64 with FCS (60 without)",
            data.len()
        ));
    }
    if r.fcs_bad {
        rec.warnings.push("FCS does not match the frame".into());
    }
    if r.padding_not_zero {
        rec.warnings
            .push("padding after the MAC Control fields is not all zero".into());
    }
    if r.vlan_tagged {
        rec.warnings
            .push("MAC Control frame carries a VLAN tag (it must be sent untagged)".into());
    }
    rec.mac_control = Some(r);
}
