//! Whole RoCEv2 frames: Ethernet (+ 802.1Q tags) + IPv4 or IPv6 + UDP 4791 + BTH + extension
//! headers + payload + ICRC, padded to the Ethernet minimum, with or without FCS.
//!
//! [`RoceFrameRepr`] is what a sender chooses; [`RoceFrameRepr::emit`] computes the lengths,
//! the IPv4 header checksum, the UDP checksum if asked, the ICRC and the FCS.
//! [`parse`] reads a whole frame back and reports the ICRC, checksums and padding it found in a
//! [`RoceFrame`]; a frame whose checks all pass re-emits to the same bytes.

use crate::ethernet::{EtherType, EthernetAddress, EthernetRepr, VlanTag, VlanTags};
use crate::fcs::{self, FcsMode};
use crate::ip::{IpRepr, PROTOCOL_UDP};
use crate::roce::bth::{BTH_LEN, BthRepr};
use crate::roce::ext::{AethRepr, ExtHeaders};
use crate::roce::icrc::{ICRC_LEN, IcrcEngine};
use crate::roce::opcode::{Layout, Opcode};
use crate::udp::{self, ROCEV2_PORT, UdpRepr};
use crate::{Error, ErrorKind, Result};

const CTX: &str = "RoCEv2 packet";

/// The UDP checksum a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UdpChecksum {
    /// Zero: not computed (what RoCEv2 NICs send; allowed over IPv4 and by Annex A17 over IPv6).
    #[default]
    Zero,
    /// Computed over the pseudo-header and datagram.
    Valid,
    /// A non-zero value that is not the right checksum.
    Invalid(u16),
}

/// Ethernet, IP and UDP headers around a RoCEv2 packet: who sends it to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// The Ethernet header (its EtherType must match the IP version).
    pub ethernet: EthernetRepr,
    /// The IP header (its protocol must be UDP).
    pub ip: IpRepr,
    /// The UDP ports (destination 4791).
    pub udp: UdpRepr,
}

impl Envelope {
    /// From `src` to `dst`, with an 802.1Q tag when `vlan` is given, over `ip`, from UDP port
    /// `src_port` (the entropy NICs vary per QP) to 4791.
    pub const fn new(
        src: EthernetAddress,
        dst: EthernetAddress,
        vlan: Option<VlanTag>,
        ip: IpRepr,
        src_port: u16,
    ) -> Self {
        let tags = match vlan {
            Some(t) => VlanTags::Single(t),
            None => VlanTags::Untagged,
        };
        Envelope {
            ethernet: EthernetRepr {
                dst,
                src,
                tags,
                ethertype: ip.ethertype(),
            },
            ip,
            udp: UdpRepr {
                src_port,
                dst_port: ROCEV2_PORT,
            },
        }
    }
}

/// A whole RoCEv2 frame in owned form (the payload is given at emit time; zeros by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoceFrameRepr {
    /// The Ethernet header.
    pub ethernet: EthernetRepr,
    /// The IP header.
    pub ip: IpRepr,
    /// The UDP ports.
    pub udp: UdpRepr,
    /// The UDP checksum to send.
    pub udp_checksum: UdpChecksum,
    /// The BTH.
    pub bth: BthRepr,
    /// The extension headers the opcode defines.
    pub ext: ExtHeaders,
    /// Bytes of payload, pad bytes (BTH PadCnt) included.
    pub payload_len: usize,
}

impl RoceFrameRepr {
    /// A frame of `bth`'s opcode with the extension headers it defines zeroed (see
    /// [`ExtHeaders::zeroed`]) and `payload_len` bytes of payload. Errors when the opcode is
    /// reserved.
    pub fn new(envelope: Envelope, bth: BthRepr, payload_len: usize) -> Result<Self> {
        let layout = layout_of(bth.opcode)?;
        Ok(RoceFrameRepr {
            ethernet: envelope.ethernet,
            ip: envelope.ip,
            udp: envelope.udp,
            udp_checksum: UdpChecksum::Zero,
            bth,
            ext: ExtHeaders::zeroed(layout),
            payload_len,
        })
    }

    /// An RC data packet (SEND First/Middle/Last/Only by `first` and `last`, no extension
    /// headers) to `dest_qp` with `psn`, AckReq as given and `payload_len` bytes of payload.
    pub fn rc_send(
        envelope: Envelope,
        dest_qp: u32,
        psn: u32,
        first: bool,
        last: bool,
        ack_req: bool,
        payload_len: usize,
    ) -> Self {
        let opcode = match (first, last) {
            (true, true) => Opcode::RC_SEND_ONLY,
            (true, false) => Opcode::RC_SEND_FIRST,
            (false, false) => Opcode::RC_SEND_MIDDLE,
            (false, true) => Opcode::RC_SEND_LAST,
        };
        let mut bth = BthRepr::new(opcode, dest_qp, psn);
        bth.ack_req = ack_req;
        RoceFrameRepr {
            ethernet: envelope.ethernet,
            ip: envelope.ip,
            udp: envelope.udp,
            udp_checksum: UdpChecksum::Zero,
            bth,
            ext: ExtHeaders::default(),
            payload_len,
        }
    }

    /// An RC Acknowledge (ACK, RNR NAK or NAK by `aeth.syndrome`) to `dest_qp` for `psn`.
    pub fn rc_ack(envelope: Envelope, dest_qp: u32, psn: u32, aeth: AethRepr) -> Self {
        RoceFrameRepr {
            ethernet: envelope.ethernet,
            ip: envelope.ip,
            udp: envelope.udp,
            udp_checksum: UdpChecksum::Zero,
            bth: BthRepr::new(Opcode::RC_ACKNOWLEDGE, dest_qp, psn),
            ext: ExtHeaders {
                aeth: Some(aeth),
                ..ExtHeaders::default()
            },
            payload_len: 0,
        }
    }

    /// A CNP to `dest_qp` (the QP at the reaction point): opcode 0x81, BECN set, P_Key 0xFFFF,
    /// PSN 0, 16 zero reserved bytes.
    pub fn cnp(envelope: Envelope, dest_qp: u32) -> Self {
        let mut bth = BthRepr::new(Opcode::CNP, dest_qp, 0);
        bth.becn = true;
        RoceFrameRepr {
            ethernet: envelope.ethernet,
            ip: envelope.ip,
            udp: envelope.udp,
            udp_checksum: UdpChecksum::Zero,
            bth,
            ext: ExtHeaders {
                cnp: Some([0; 16]),
                ..ExtHeaders::default()
            },
            payload_len: 0,
        }
    }

    /// Bytes from the BTH through the ICRC (the UDP payload).
    pub fn udp_payload_len(&self) -> usize {
        BTH_LEN + self.ext.buffer_len() + self.payload_len + ICRC_LEN
    }

    /// Bytes from the first byte of the Ethernet header through the ICRC, before padding.
    pub fn packet_end(&self) -> usize {
        self.ethernet.buffer_len() + self.ip.buffer_len() + udp::HEADER_LEN + self.udp_payload_len()
    }

    /// Length of the whole frame `emit` writes: padded to 60 bytes, plus 4 with an FCS.
    pub fn buffer_len(&self, fcs: FcsMode) -> usize {
        self.packet_end().max(fcs::MIN_FRAME_LEN_WITHOUT_FCS) + fcs.len()
    }

    /// Writes the whole frame with a zero payload; returns its length ([`Self::buffer_len`]).
    pub fn emit(&self, fcs: FcsMode, buf: &mut [u8]) -> Result<usize> {
        self.emit_with_payload(&[], fcs, buf)
    }

    /// Writes the whole frame, its payload starting with `payload` and zero after it; returns
    /// its length. Refuses what would not parse back to this repr: an EtherType that does not
    /// match the IP version, an IP protocol other than UDP, a reserved opcode, extension
    /// headers other than the opcode's, a payload for an opcode that carries none, a pad count
    /// larger than the payload, a payload prefix longer than the payload, an `Invalid` UDP
    /// checksum that is zero or right, and any header field out of its range.
    pub fn emit_with_payload(&self, payload: &[u8], fcs: FcsMode, buf: &mut [u8]) -> Result<usize> {
        let eth_len = self.ethernet.buffer_len();
        if self.ethernet.ethertype != self.ip.ethertype() {
            let kind = ErrorKind::BadValue {
                found: self.ethernet.ethertype.0.into(),
                allowed: "0x0800 for IPv4, 0x86dd for IPv6",
            };
            return Err(Error::new(eth_len - 2, "Ethernet II header", "EtherType", kind));
        }
        if self.ip.protocol() != PROTOCOL_UDP {
            let kind = ErrorKind::BadValue {
                found: self.ip.protocol().into(),
                allowed: "17 (UDP)",
            };
            return Err(Error::new(eth_len, "IP header", "protocol", kind));
        }
        let ip_len = self.ip.buffer_len();
        let bth_at = eth_len + ip_len + udp::HEADER_LEN;
        check_layout(&self.bth, &self.ext, self.payload_len).map_err(|e| e.at(bth_at))?;
        if payload.len() > self.payload_len {
            let kind = ErrorKind::BadLength {
                found: payload.len(),
                allowed: "at most payload_len bytes",
            };
            return Err(Error::new(
                bth_at + BTH_LEN + self.ext.buffer_len(),
                CTX,
                "payload",
                kind,
            ));
        }
        let total = self.buffer_len(fcs);
        if buf.len() < total {
            return Err(Error::truncated(0, CTX, "buffer", total, buf.len()));
        }
        let udp_len = self.udp_payload_len();
        self.ethernet.emit(buf)?;
        self.ip
            .emit(udp::HEADER_LEN + udp_len, &mut buf[eth_len..])
            .map_err(|e| e.at(eth_len))?;
        let mut at = bth_at;
        self.bth.emit(&mut buf[at..]).map_err(|e| e.at(at))?;
        at += BTH_LEN;
        at += self.ext.emit(&mut buf[at..]).map_err(|e| e.at(at))?;
        buf[at..at + payload.len()].copy_from_slice(payload);
        buf[at + payload.len()..at + self.payload_len].fill(0);
        at += self.payload_len;
        let udp_at = eth_len + ip_len;
        // The ICRC masks the UDP checksum, and the UDP checksum covers the ICRC: ICRC first.
        self.udp.emit(udp_len, 0, &mut buf[udp_at..])?;
        let icrc = IcrcEngine::new().compute(&buf[eth_len..at])?;
        buf[at..at + ICRC_LEN].copy_from_slice(&icrc.to_le_bytes());
        at += ICRC_LEN;
        if self.udp_checksum != UdpChecksum::Zero {
            let right = self.udp.checksum(&self.ip, &buf[bth_at..at])?;
            let checksum = match self.udp_checksum {
                UdpChecksum::Invalid(v) if v == 0 || v == right => {
                    let kind = ErrorKind::BadValue {
                        found: v.into(),
                        allowed: "a wrong non-zero checksum (use Zero or Valid)",
                    };
                    return Err(Error::new(udp_at + 6, "UDP header", "checksum", kind));
                }
                UdpChecksum::Invalid(v) => v,
                _ => right,
            };
            self.udp.emit(udp_len, checksum, &mut buf[udp_at..])?;
        }
        fcs::finish(buf, at, fcs)
    }
}

fn layout_of(opcode: Opcode) -> Result<Layout> {
    opcode.layout().ok_or_else(|| {
        let kind = ErrorKind::BadValue {
            found: opcode.0.into(),
            allowed: "a defined RC, UC, RD, UD or CNP opcode",
        };
        Error::new(0, "BTH", "opcode", kind)
    })
}

/// Checks the opcode, extension headers, pad count and payload length agree (offsets from the
/// BTH).
fn check_layout(bth: &BthRepr, ext: &ExtHeaders, payload_len: usize) -> Result<Layout> {
    let layout = layout_of(bth.opcode)?;
    if ext.layout()
        != (Layout {
            payload: false,
            ..layout
        })
    {
        let kind = ErrorKind::BadValue {
            found: bth.opcode.0.into(),
            allowed: "an opcode whose extension headers are the ones given (Opcode::layout)",
        };
        return Err(Error::new(0, "BTH", "opcode", kind));
    }
    let payload_at = BTH_LEN + ext.buffer_len();
    if !layout.payload && payload_len != 0 {
        let kind = ErrorKind::BadLength {
            found: payload_len,
            allowed: "0: this opcode carries no payload",
        };
        return Err(Error::new(payload_at, CTX, "payload", kind));
    }
    if usize::from(bth.pad_count) > payload_len {
        let kind = ErrorKind::BadValue {
            found: bth.pad_count.into(),
            allowed: "at most the payload length",
        };
        return Err(Error::new(1, "BTH", "PadCnt", kind));
    }
    Ok(layout)
}

/// A whole RoCEv2 frame decoded by [`parse`], with what was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrame<'a> {
    /// The frame in owned form.
    pub repr: RoceFrameRepr,
    /// The payload bytes, pad bytes included.
    pub payload: &'a [u8],
    /// The ICRC found: the CRC value (its little-endian bytes are on the wire).
    pub icrc: u32,
    /// The ICRC computed over the packet.
    pub icrc_computed: u32,
    /// Whether the IPv4 header checksum is right (true for IPv6).
    pub ip_checksum_ok: bool,
    /// The UDP checksum found (raw).
    pub udp_checksum: u16,
    /// Bytes after the ICRC (Ethernet padding, without the FCS).
    pub trailer: &'a [u8],
    /// With [`FcsMode::Present`]: whether the FCS is right.
    pub fcs_ok: Option<bool>,
}

impl RoceFrame<'_> {
    /// Whether the ICRC found is the one computed.
    pub fn icrc_ok(&self) -> bool {
        self.icrc == self.icrc_computed
    }
    /// Whether every check passed and the padding is what `emit` writes, so that the repr
    /// re-emits (with this payload) to the same bytes. (A frame whose ICRC is wrong may not
    /// re-emit as parsed: `emit` writes the right ICRC, for which an `Invalid` UDP checksum
    /// can happen to be right, and `emit` refuses that.)
    pub fn is_canonical(&self) -> bool {
        let pad_ok = self.trailer.iter().all(|&b| b == 0)
            && self.repr.packet_end() + self.trailer.len()
                == self.repr.packet_end().max(fcs::MIN_FRAME_LEN_WITHOUT_FCS);
        self.icrc_ok() && self.ip_checksum_ok && pad_ok && self.fcs_ok != Some(false)
    }
}

/// Decodes a whole RoCEv2 frame (`fcs` says whether it ends with its FCS). Errors: a header
/// truncated or malformed, an EtherType other than IPv4/IPv6, a protocol other than UDP, a
/// fragment, a UDP destination port other than 4791, UDP and IP lengths that disagree, a
/// reserved opcode, a UDP payload too short for the opcode's headers and the ICRC, or a payload
/// where the opcode allows none. A wrong ICRC, checksum or FCS is reported, not refused.
pub fn parse(frame: &[u8], fcs: FcsMode) -> Result<RoceFrame<'_>> {
    parse_with(frame, fcs, &IcrcEngine::new())
}

/// [`parse`] with a reusable ICRC engine (skips the CPU-feature detection per frame).
pub fn parse_with<'a>(frame: &'a [u8], fcs: FcsMode, engine: &IcrcEngine) -> Result<RoceFrame<'a>> {
    let (body, fcs_ok) = match fcs {
        FcsMode::Present => (fcs::split(frame)?.0, Some(fcs::verify(frame)?)),
        FcsMode::Absent => (frame, None),
    };
    let (ethernet, ip_at) = EthernetRepr::parse_bytes(body)?;
    let (ip, ip_info) = IpRepr::parse(ethernet.ethertype, &body[ip_at..]).map_err(|e| {
        if e.context == "IP header" {
            Error::new(ip_at - 2, "Ethernet II header", e.field, e.kind)
        } else {
            e.at(ip_at)
        }
    })?;
    if ip.protocol() != PROTOCOL_UDP {
        let kind = ErrorKind::BadValue {
            found: ip.protocol().into(),
            allowed: "17 (UDP)",
        };
        let at = if ip.ethertype() == EtherType::IPV4 { 9 } else { 6 };
        return Err(Error::new(ip_at + at, "IP header", "protocol", kind));
    }
    if let IpRepr::V4(v4) = &ip
        && (v4.more_fragments || v4.fragment_offset != 0)
    {
        let kind = ErrorKind::BadValue {
            found: v4.fragment_offset.into(),
            allowed: "an unfragmented packet (MF clear, fragment offset 0)",
        };
        return Err(Error::new(ip_at + 6, "IPv4 header", "fragment offset", kind));
    }
    let udp_at = ip_at + ip_info.header_len;
    let ip_end = udp_at + ip_info.payload_len;
    if ip_end > body.len() {
        return Err(Error::truncated(
            udp_at,
            "IP header",
            "payload",
            ip_info.payload_len,
            body.len() - udp_at,
        ));
    }
    let (udp, udp_info) = UdpRepr::parse(&body[udp_at..ip_end]).map_err(|e| e.at(udp_at))?;
    if udp.dst_port != ROCEV2_PORT {
        let kind = ErrorKind::BadValue {
            found: udp.dst_port.into(),
            allowed: "4791 (RoCEv2)",
        };
        return Err(Error::new(udp_at + 2, "UDP header", "destination port", kind));
    }
    if udp_info.length != ip_info.payload_len {
        let kind = ErrorKind::BadLength {
            found: udp_info.length,
            allowed: "the IP payload length",
        };
        return Err(Error::new(udp_at + 4, "UDP header", "length", kind));
    }
    let bth_at = udp_at + udp::HEADER_LEN;
    let packet = &body[bth_at..ip_end];
    let bth = BthRepr::parse_bytes(packet).map_err(|e| e.at(bth_at))?;
    let layout = layout_of(bth.opcode).map_err(|e| e.at(bth_at))?;
    let ext_at = BTH_LEN;
    let need = ext_at + layout.ext_len() + ICRC_LEN;
    if packet.len() < need {
        let kind = ErrorKind::BadLength {
            found: udp_info.length,
            allowed: "room for the BTH, the opcode's extension headers and the ICRC",
        };
        return Err(Error::new(udp_at + 4, "UDP header", "length", kind));
    }
    let ext = ExtHeaders::parse(layout, &packet[ext_at..]).map_err(|e| e.at(bth_at + ext_at))?;
    let payload_at = ext_at + layout.ext_len();
    let icrc_at = packet.len() - ICRC_LEN;
    let payload = &packet[payload_at..icrc_at];
    check_layout(&bth, &ext, payload.len()).map_err(|e| e.at(bth_at))?;
    let icrc_bytes = &packet[icrc_at..];
    let icrc = u32::from_le_bytes([icrc_bytes[0], icrc_bytes[1], icrc_bytes[2], icrc_bytes[3]]);
    let icrc_computed = engine.compute(&body[ip_at..bth_at + icrc_at])?;
    let udp_checksum = match udp_info.checksum {
        0 => UdpChecksum::Zero,
        v if udp.checksum(&ip, packet).is_ok_and(|right| right == v) => UdpChecksum::Valid,
        v => UdpChecksum::Invalid(v),
    };
    Ok(RoceFrame {
        repr: RoceFrameRepr {
            ethernet,
            ip,
            udp,
            udp_checksum,
            bth,
            ext,
            payload_len: payload.len(),
        },
        payload,
        icrc,
        icrc_computed,
        ip_checksum_ok: ip_info.checksum_ok,
        udp_checksum: udp_info.checksum,
        trailer: &body[ip_end..],
        fcs_ok,
    })
}
