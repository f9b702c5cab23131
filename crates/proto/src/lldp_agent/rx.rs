//! Validation of a received LLDPDU (802.1AB-2009 9.2.7.7 rxProcessFrame): the mandatory TLVs,
//! TLVs that are discarded or unrecognised, and the owned TLVs a neighbour entry keeps.

use lossless_wire::lldp::{CeeTlv, ChassisId, Ieee8021Tlv, Lldpdu, OrgTlv, PortId, Tlv, tlv};
use lossless_wire::{Error, ErrorKind};

/// Largest LLDPDU accepted: a jumbo frame's payload. Longer input is an error, never stored.
pub const MAX_LLDPDU_LEN: usize = 9216;

/// A validated LLDPDU, its TLVs owned, with the counts the statistics need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// The Chassis ID.
    pub chassis: ChassisId,
    /// The Port ID.
    pub port: PortId,
    /// The TTL in seconds (0 = shutdown).
    pub ttl: u16,
    /// The optional TLVs that decoded, in order, without End.
    pub tlvs: Vec<Tlv>,
    /// Optional TLVs that failed to decode and were dropped.
    pub discarded: u64,
    /// TLVs of a reserved type or an unknown OUI/subtype (kept).
    pub unrecognized: u64,
}

/// Checks an LLDPDU the way 802.1AB rxProcessFrame does. An error means the whole LLDPDU is
/// discarded; a bad optional TLV is only dropped and counted.
pub fn validate(lldpdu: &[u8]) -> Result<Validated, Error> {
    if lldpdu.len() > MAX_LLDPDU_LEN {
        let kind = ErrorKind::BadLength {
            found: lldpdu.len(),
            allowed: "at most 9216 bytes",
        };
        return Err(Error::new(0, "LLDPDU", "length", kind));
    }
    let mut chassis = None;
    let mut port = None;
    let mut ttl = None;
    let mut tlvs = Vec::new();
    let (mut discarded, mut unrecognized) = (0u64, 0u64);
    for (index, view) in Lldpdu::new(lldpdu).raw_tlvs().enumerate() {
        let view = view?;
        let parsed = Tlv::parse(&view);
        if index < 3 {
            // The three mandatory TLVs, in order; any fault discards the LLDPDU.
            let t = parsed?;
            match (index, t) {
                (0, Tlv::ChassisId(c)) => chassis = Some(c.to_owned()),
                (1, Tlv::PortId(p)) => port = Some(p.to_owned()),
                (2, Tlv::Ttl(t)) => ttl = Some(t),
                (_, t) => {
                    let expected = [
                        "Chassis ID TLV first",
                        "Port ID TLV second",
                        "Time To Live TLV third",
                    ][index];
                    // the PDU ending before a mandatory TLV lacks it; another TLV in its place
                    // is out of order
                    let kind = if matches!(t, Tlv::End) {
                        ErrorKind::Missing { expected }
                    } else {
                        ErrorKind::Order { expected }
                    };
                    return Err(Error::new(view.offset, "LLDPDU", tlv::type_name(view.ty), kind));
                }
            }
            continue;
        }
        match parsed {
            Ok(Tlv::End) => break,
            Ok(Tlv::ChassisId(_) | Tlv::PortId(_) | Tlv::Ttl(_)) => {
                // A second mandatory TLV makes the LLDPDU ambiguous: discard it (9.2.7.7.1).
                return Err(Error::new(
                    view.offset,
                    "LLDPDU",
                    tlv::type_name(view.ty),
                    ErrorKind::Order {
                        expected: "Chassis ID, Port ID and Time To Live TLVs only once",
                    },
                ));
            }
            Ok(t) => {
                if is_unrecognized(&t) {
                    unrecognized += 1;
                }
                tlvs.push(t.to_owned());
            }
            Err(_) => discarded += 1,
        }
    }
    match (chassis, port, ttl) {
        (Some(chassis), Some(port), Some(ttl)) => Ok(Validated {
            chassis,
            port,
            ttl,
            tlvs,
            discarded,
            unrecognized,
        }),
        _ => Err(Error::new(
            lldpdu.len(),
            "LLDPDU",
            "mandatory TLVs",
            ErrorKind::Missing {
                expected: "Chassis ID, Port ID and Time To Live TLVs",
            },
        )),
    }
}

/// A TLV of a reserved type, or an organizationally specific TLV whose OUI or subtype this
/// agent does not know (802.1AB 9.2.7.7.2: counted in statsTLVsUnrecognizedTotal).
fn is_unrecognized(t: &Tlv<&[u8]>) -> bool {
    matches!(
        t,
        Tlv::Unknown { .. }
            | Tlv::Org(OrgTlv::Other { .. })
            | Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::Unknown { .. }))
            | Tlv::Org(OrgTlv::Cee(CeeTlv::Unknown { .. }))
    )
}
