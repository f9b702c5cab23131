//! pcapng Interface Description Blocks: the link type, snapshot length, `if_tsresol` and
//! `if_tsoffset` a packet needs, read as tshark reads them, and the packet's time from them.
//!
//! The option list is walked to the end of the block whether or not it ends with
//! `opt_endofopt`; options of any length, including zero, are stepped over. An option that
//! a packet's time depends on but that has the wrong length is ignored as tshark ignores it,
//! and every frame of the interface carries a note saying so.

use lossless_proto::units::Instant;

use super::pcapng::Fields;

const OPT_ENDOFOPT: u16 = 0;
const IF_TSRESOL: u16 = 9;
const IF_TSOFFSET: u16 = 14;
/// Bytes before the options in an IDB body: link type, reserved, snaplen.
const IDB_FIXED: usize = 8;

/// Per-interface facts a pcapng reader needs for the packets that refer to it.
#[derive(Debug, Clone)]
pub(super) struct Interface {
    pub(super) link_type: u32,
    /// Snapshot length (0: none).
    pub(super) snaplen: u32,
    /// if_tsresol: bit 7 clear = 10^-n seconds, set = 2^-n seconds.
    pub(super) tsresol: u8,
    /// if_tsoffset: seconds added to every timestamp (signed).
    pub(super) tsoffset: i64,
    /// What was odd about the interface's options, for every frame of it.
    pub(super) notes: Vec<String>,
}

/// The interface number `index` described by the Interface Description Block `body` (at
/// least [`IDB_FIXED`] bytes; the reserved field is not checked, as tshark does not).
pub(super) fn interface(body: &Fields<'_>, index: usize) -> Interface {
    let mut itf = Interface {
        link_type: u32::from(body.u16(0)),
        snaplen: body.u32(4),
        tsresol: 6,
        tsoffset: 0,
        notes: Vec::new(),
    };
    let (mut tsresol_seen, mut tsoffset_seen) = (false, false);
    let mut at = IDB_FIXED;
    while at < body.b.len() {
        if body.b.len() - at < 4 {
            itf.notes.push(format!(
                "interface {index}: {} stray bytes after its last option are ignored",
                body.b.len() - at
            ));
            break;
        }
        let (code, len) = (body.u16(at), usize::from(body.u16(at + 2)));
        let value = at + 4;
        let padded = len.div_ceil(4) * 4;
        if padded > body.b.len() - value {
            itf.notes.push(format!(
                "interface {index}: option {code} at byte {} of its block claims {len} bytes, more \
                 than the block holds; it and the options after it are ignored",
                at + 8
            ));
            break;
        }
        let v = &body.b[value..value + len];
        match code {
            OPT_ENDOFOPT => break,
            IF_TSRESOL | IF_TSOFFSET
                if (code == IF_TSRESOL && tsresol_seen) || (code == IF_TSOFFSET && tsoffset_seen) =>
            {
                itf.notes.push(format!(
                    "interface {index}: {} repeated; the first one is used",
                    name(code)
                ));
            }
            IF_TSRESOL if len == 1 => {
                itf.tsresol = v[0];
                tsresol_seen = true;
            }
            IF_TSOFFSET if len == 8 => {
                itf.tsoffset = body.u64(value) as i64;
                tsoffset_seen = true;
            }
            IF_TSRESOL => itf.notes.push(format!(
                "interface {index}: if_tsresol has {len} bytes, must be 1; ignored, timestamps \
                 count the default microseconds"
            )),
            IF_TSOFFSET => itf.notes.push(format!(
                "interface {index}: if_tsoffset has {len} bytes, must be 8; ignored, no offset is added"
            )),
            _ => {}
        }
        at = value + padded;
    }
    itf
}

fn name(code: u16) -> &'static str {
    if code == IF_TSRESOL {
        "if_tsresol"
    } else {
        "if_tsoffset"
    }
}

impl Interface {
    /// The time of a packet stamped `units` (in `if_tsresol` units) on this interface, plus
    /// `if_tsoffset`. A time before the Unix epoch is given as the epoch, with a note.
    pub(super) fn timestamp(&self, units: u64, notes: &mut Vec<String>) -> Instant {
        let ps = to_ps(units, self.tsresol, self.tsoffset);
        match u128::try_from(ps) {
            Ok(ps) => Instant::from_ps(ps),
            Err(_) => {
                notes.push(format!(
                    "timestamp is {} s before the Unix epoch (if_tsoffset {} s); given as the epoch",
                    seconds(-ps),
                    self.tsoffset
                ));
                Instant::ZERO
            }
        }
    }
}

/// `ps` picoseconds as seconds with nine decimals.
fn seconds(ps: i128) -> String {
    const PS: i128 = 1_000_000_000_000;
    format!("{}.{:09}", ps / PS, ps % PS / 1_000)
}

/// A pcapng timestamp of `units` in `if_tsresol` units plus `if_tsoffset` seconds, in
/// picoseconds since the Unix epoch; negative before it. Exact to the picosecond (rounded
/// down) for every `if_tsresol`: no product can overflow (|result| < 2^106).
pub(super) fn to_ps(units: u64, tsresol: u8, tsoffset: i64) -> i128 {
    const PS: i128 = 1_000_000_000_000;
    let units = i128::from(units);
    let n = u32::from(tsresol & 0x7F);
    let ps = if tsresol & 0x80 == 0 {
        if n <= 12 {
            units * 10i128.pow(12 - n)
        } else {
            // 10^39 and above do not fit: such a unit is below a picosecond for any count.
            10i128.checked_pow(n - 12).map_or(0, |d| units / d)
        }
    } else {
        (units * PS) >> n
    };
    ps + i128::from(tsoffset) * PS
}

#[cfg(test)]
mod tests {
    use super::to_ps;

    #[test]
    fn timestamps_follow_if_tsresol_and_a_signed_if_tsoffset() {
        assert_eq!(to_ps(1, 6, 0), 1_000_000, "default: microseconds");
        assert_eq!(to_ps(1, 9, 0), 1_000, "nanoseconds");
        assert_eq!(to_ps(1, 12, 0), 1, "picoseconds");
        assert_eq!(to_ps(1_000, 15, 0), 1, "femtoseconds round down to picoseconds");
        assert_eq!(to_ps(5, 0, 0), 5_000_000_000_000, "seconds");
        assert_eq!(to_ps(u64::MAX, 127, 0), 0, "10^-127 s");
        assert_eq!(to_ps(1, 0x80 | 1, 0), 500_000_000_000, "2^-1 s");
        assert_eq!(to_ps(3, 0x80 | 10, 0), 3 * 1_000_000_000_000 / 1024, "2^-10 s");
        assert_eq!(to_ps(u64::MAX, 0x80 | 127, 0), 0, "2^-127 s");
        assert_eq!(
            to_ps(1, 6, 2),
            2_000_000_000_000 + 1_000_000,
            "if_tsoffset adds seconds"
        );
        assert_eq!(
            to_ps(5_000_000_000, 6, -1000),
            4_000_000_000_000_000,
            "a negative if_tsoffset subtracts (issue 12: 5000 s - 1000 s)"
        );
        assert_eq!(to_ps(5_000_000_000, 6, -10_000), -5_000_000_000_000_000);
        assert_eq!(to_ps(5000 * 1024 + 512, 0x80 | 10, -1000), 4_000_500_000_000_000);
        assert_eq!(
            to_ps(u64::MAX, 0, i64::MAX),
            (i128::from(u64::MAX) + i128::from(i64::MAX)) * 1_000_000_000_000,
            "the extremes do not overflow"
        );
        assert_eq!(to_ps(0, 0, i64::MIN), i128::from(i64::MIN) * 1_000_000_000_000);
    }
}
