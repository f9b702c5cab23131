//! The bundled sample capture `examples/captures/sample.pcapng`, built from the
//! `lossless-wire` emitters so that it shows every kind of frame `lossless decode` explains:
//! PAUSE, PFC (several enable vectors, XOFF and XON, one with the warnings a strict receiver
//! raises), an LLDP PDU with IEEE 802.1Qaz DCBX (ETS Configuration and Recommendation, PFC,
//! Application Priority), one with CEE DCBX, and a RoCEv2 frame.
//!
//! The bytes are deterministic; a test rebuilds them and compares with the committed file.

use std::borrow::Cow;
use std::time::Duration;

use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::lldp::{
    AppEntry, ApplicationPriority, CeeAppEntry, CeeApplication, CeeControl, CeeDcbx, CeeFeatureHeader,
    CeePfc, CeePriorityGroups, CeeSubTlv, CeeTlv, ChassisId, ChassisIdSubtype, EtsConfiguration,
    EtsRecommendation, EtsTables, Ieee8021Tlv, LldpduRepr, OrgTlv, PfcConfiguration, PortId, PortIdSubtype,
    Tlv, Tsa, lldp_frame,
};
use lossless_wire::mac_control::{self, MacControlRepr};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
use pcap_file::{DataLink, Endianness};

/// Capture time of the first sample frame: 2026-01-01T00:00:00Z.
pub const SAMPLE_EPOCH_SECS: u64 = 1_767_225_600;

const SWITCH: EthernetAddress = EthernetAddress([0x02, 0x00, 0x5e, 0x00, 0x00, 0x01]);
const HOST: EthernetAddress = EthernetAddress([0x02, 0x00, 0x5e, 0x00, 0x00, 0x02]);

fn mac_control_frame(
    src: EthernetAddress,
    dst: EthernetAddress,
    control: MacControlRepr,
    fcs: FcsMode,
) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let n = mac_control::emit_frame(src, dst, &control, fcs, &mut buf)
        .expect("a 64-byte buffer holds any MAC Control frame");
    buf[..n].to_vec()
}

fn pfc(vector: u16, time: [u16; 8]) -> MacControlRepr {
    MacControlRepr::Pfc {
        priority_enable_vector: vector,
        time,
    }
}

fn ieee(t: Ieee8021Tlv) -> Tlv {
    Tlv::Org(OrgTlv::Ieee8021(t))
}

fn header_tlvs(chassis: EthernetAddress, port: &str, name: &str) -> Vec<Tlv> {
    vec![
        Tlv::ChassisId(ChassisId {
            subtype: ChassisIdSubtype::MacAddress,
            id: chassis.as_bytes().to_vec(),
        }),
        Tlv::PortId(PortId {
            subtype: PortIdSubtype::InterfaceName,
            id: port.as_bytes().to_vec(),
        }),
        Tlv::Ttl(121),
        Tlv::SystemName(name.as_bytes().to_vec()),
    ]
}

/// An LLDP PDU of a switch port with IEEE 802.1Qaz DCBX: RoCE on priority 3 (PFC, 50 % ETS).
fn ieee_dcbx_lldpdu() -> Vec<u8> {
    let tables = EtsTables {
        priority_tc: [0, 0, 0, 1, 0, 0, 2, 2],
        tc_bandwidth: [40, 50, 10, 0, 0, 0, 0, 0],
        // ETS for TCs 0..=2, strict priority for the rest (802.1Q Table 8-6: 2 ETS, 0 strict).
        tsa: [2, 2, 2, 0, 0, 0, 0, 0].map(Tsa::from),
    };
    let entries = [
        AppEntry {
            priority: 3,
            reserved: 0,
            selector: 3,
            protocol: 4791,
        },
        AppEntry {
            priority: 3,
            reserved: 0,
            selector: 5,
            protocol: 26,
        },
        AppEntry {
            priority: 4,
            reserved: 0,
            selector: 2,
            protocol: 3260,
        },
        AppEntry {
            priority: 3,
            reserved: 0,
            selector: 1,
            protocol: 0x8906,
        },
    ];
    let mut tlvs = header_tlvs(SWITCH, "Ethernet1/1", "leaf1");
    tlvs.extend([
        ieee(Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
            willing: false,
            cbs: false,
            reserved: 0,
            max_tcs: 0,
            tables,
        })),
        ieee(Ieee8021Tlv::EtsRecommendation(EtsRecommendation {
            reserved: 0,
            tables,
        })),
        ieee(Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
            willing: false,
            mbc: false,
            reserved: 0,
            pfc_cap: 8,
            enabled: 1 << 3,
        })),
        ieee(Ieee8021Tlv::ApplicationPriority(ApplicationPriority::new(
            0, &entries,
        ))),
        Tlv::End,
    ]);
    LldpduRepr { tlvs }
        .to_vec()
        .expect("the sample TLVs fit their length fields")
}

/// An LLDP PDU of a host NIC speaking CEE DCBX: willing, FCoE on priority 3.
fn cee_dcbx_lldpdu() -> Vec<u8> {
    let feature = |subtype| CeeFeatureHeader {
        oper_version: 0,
        max_version: 0,
        enabled: true,
        willing: true,
        error: false,
        reserved: 0,
        subtype,
    };
    let app = [CeeAppEntry {
        protocol: 0x8906,
        selector: 0,
        oui: 0x001b21,
        priority_map: 1 << 3,
    }];
    let cee = CeeDcbx {
        sub_tlvs: vec![
            CeeSubTlv::Control(CeeControl {
                oper_version: 0,
                max_version: 0,
                seq: 7,
                ack: 6,
            }),
            CeeSubTlv::PriorityGroups(CeePriorityGroups {
                header: feature(0),
                pgid: [0, 0, 0, 1, 0, 0, 15, 0],
                pg_bandwidth: [50, 50, 0, 0, 0, 0, 0, 0],
                num_tcs: 8,
            }),
            CeeSubTlv::Pfc(CeePfc {
                header: feature(0),
                admin_map: 1 << 3,
                num_tcs: 8,
            }),
            CeeSubTlv::Application(CeeApplication::new(feature(0), &app)),
        ],
    };
    let mut tlvs = header_tlvs(HOST, "eth2", "host7");
    tlvs.push(Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(cee))));
    tlvs.push(Tlv::End);
    LldpduRepr { tlvs }
        .to_vec()
        .expect("the sample TLVs fit their length fields")
}

/// A RoCEv2 RC SEND Only (IPv4, DSCP 26, ECT(0), UDP 49152 → 4791) from `HOST` to `SWITCH`,
/// its payload padded to four bytes (PadCnt 1), built by the wire emitter with its ICRC.
fn roce_frame() -> Vec<u8> {
    use lossless_wire::ip::{Ecn, IpRepr, Ipv4Repr};
    use lossless_wire::roce::{Envelope, RoceFrameRepr};
    let payload = b"lossless sample payload";
    let mut ip = Ipv4Repr::udp([192, 0, 2, 2], [192, 0, 2, 1]);
    (ip.dscp, ip.ecn, ip.identification) = (26, Ecn::Ect0, 0x1234);
    let env = Envelope::new(HOST, SWITCH, None, IpRepr::V4(ip), 49152);
    let mut f = RoceFrameRepr::rc_send(env, 0x11, 1, true, true, true, payload.len() + 1);
    f.bth.pad_count = 1;
    let mut buf = vec![0u8; f.buffer_len(FcsMode::Absent)];
    let n = f
        .emit_with_payload(payload, FcsMode::Absent, &mut buf)
        .expect("a valid RoCEv2 frame");
    buf.truncate(n);
    buf
}

/// The sample frames with their capture times, in order.
pub fn sample_frames() -> Vec<(Duration, Vec<u8>)> {
    let ctl = EthernetAddress::MAC_CONTROL;
    let xoff = 0xffff;
    let frames = vec![
        roce_frame(),
        lldp_frame(SWITCH, &ieee_dcbx_lldpdu()),
        lldp_frame(HOST, &cee_dcbx_lldpdu()),
        mac_control_frame(
            HOST,
            ctl,
            MacControlRepr::Pause { pause_time: xoff },
            FcsMode::Absent,
        ),
        mac_control_frame(
            HOST,
            ctl,
            MacControlRepr::Pause { pause_time: 0 },
            FcsMode::Absent,
        ),
        // XOFF on priority 3 only.
        mac_control_frame(
            SWITCH,
            ctl,
            pfc(1 << 3, [0, 0, 0, xoff, 0, 0, 0, 0]),
            FcsMode::Absent,
        ),
        // XOFF on 3 and 4 with different quanta, captured with its FCS.
        mac_control_frame(
            SWITCH,
            ctl,
            pfc(0x18, [0, 0, 0, 0x1000, 0x0800, 0, 0, 0]),
            FcsMode::Present,
        ),
        // Every priority: 0..=2 XOFF, the rest XON (time 0).
        mac_control_frame(
            SWITCH,
            ctl,
            pfc(0xff, [xoff, xoff, xoff, 0, 0, 0, 0, 0]),
            FcsMode::Absent,
        ),
        // XON for priority 3.
        mac_control_frame(SWITCH, ctl, pfc(1 << 3, [0; 8]), FcsMode::Absent),
        // What a strict receiver rejects: unicast destination and a non-zero high vector byte.
        mac_control_frame(
            SWITCH,
            HOST,
            pfc(0x0108, [0, 0, 0, 100, 0, 0, 0, 0]),
            FcsMode::Absent,
        ),
    ];
    frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            (
                Duration::new(SAMPLE_EPOCH_SECS, 0) + Duration::from_micros(250 * i as u64),
                f,
            )
        })
        .collect()
}

/// Writes `frames` as a little-endian pcapng file with one Ethernet interface whose
/// timestamps are in nanoseconds (`if_tsresol` = 9).
pub fn write_pcapng(frames: &[(Duration, Vec<u8>)]) -> Vec<u8> {
    let shb = SectionHeaderBlock {
        endianness: Endianness::Little,
        ..Default::default()
    };
    let mut w = PcapNgWriter::with_section_header(Vec::new(), shb).expect("writing to a Vec cannot fail");
    let idb = InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 65535,
        options: vec![InterfaceDescriptionOption::IfTsResol(9)],
    };
    w.write_pcapng_block(idb).expect("writing to a Vec cannot fail");
    for (t, data) in frames {
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: *t,
            original_len: data.len() as u32,
            data: Cow::Borrowed(data),
            options: vec![],
        };
        w.write_pcapng_block(epb).expect("writing to a Vec cannot fail");
    }
    w.into_inner()
}

/// The bytes of `examples/captures/sample.pcapng`.
pub fn sample_pcapng() -> Vec<u8> {
    write_pcapng(&sample_frames())
}
