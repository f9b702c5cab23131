//! pcapng Interface Description Blocks: the link type, snapshot length, `if_tsresol` and
//! `if_tsoffset` a packet needs, read as tshark reads them, and the packet's time from them.
//!
//! The option list is walked to the end of the block whether or not it ends with
//! `opt_endofopt`; options of any length, including zero, are stepped over. An option that
//! a packet's time depends on but that has the wrong length is ignored as tshark ignores it,
//! and the first frame of the interface carries a note saying so (once per block, however
//! many frames refer to it). What one block may contribute is bounded: its problems are
//! counted, not listed (an option repeated 40,000 times is one note that says 40,000 times),
//! and an [`Interface`] holds no heap memory.

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
    /// Its number in the section.
    index: u32,
    /// What was odd about the interface's options, counted.
    issues: Issues,
    /// Whether a frame has carried the notes already.
    noted: bool,
}

/// What was odd about an interface's options: a fixed size, whatever the block holds.
#[derive(Debug, Clone, Copy, Default)]
struct Issues {
    /// if_tsresol options of a length other than 1: how many, and the first one's length.
    tsresol_bad: (u32, u16),
    /// if_tsoffset options of a length other than 8: how many, and the first one's length.
    tsoffset_bad: (u32, u16),
    /// if_tsresol options after the first valid one (ignored).
    tsresol_repeated: u32,
    /// if_tsoffset options after the first valid one (ignored).
    tsoffset_repeated: u32,
    /// Bytes after the last option too few for an option header.
    stray_bytes: Option<u32>,
    /// An option claiming more bytes than the block holds: its code, byte, length.
    overlong: Option<(u16, u32, u16)>,
}

/// A count, and "N times" when more than one.
fn times(n: u32) -> String {
    if n > 1 {
        format!(" {n} times")
    } else {
        String::new()
    }
}

impl Interface {
    /// The notes every frame of this interface would share, the first time they are asked
    /// for (empty afterwards: a block's problems are said once).
    pub(super) fn take_notes(&mut self) -> Vec<String> {
        if self.noted {
            return Vec::new();
        }
        self.noted = true;
        let (i, x) = (self.index, self.issues);
        let mut notes = Vec::new();
        let also = |n: u32| {
            if n > 1 {
                format!(" ({n} such options)")
            } else {
                String::new()
            }
        };
        if x.tsresol_bad.0 > 0 {
            notes.push(format!(
                "interface {i}: if_tsresol has {} bytes, must be 1; ignored, timestamps count the \
                 default microseconds{}",
                x.tsresol_bad.1,
                also(x.tsresol_bad.0)
            ));
        }
        if x.tsoffset_bad.0 > 0 {
            notes.push(format!(
                "interface {i}: if_tsoffset has {} bytes, must be 8; ignored, no offset is added{}",
                x.tsoffset_bad.1,
                also(x.tsoffset_bad.0)
            ));
        }
        for (code, n) in [
            (IF_TSRESOL, x.tsresol_repeated),
            (IF_TSOFFSET, x.tsoffset_repeated),
        ] {
            if n > 0 {
                notes.push(format!(
                    "interface {i}: {} repeated{}; the first one is used",
                    name(code),
                    times(n)
                ));
            }
        }
        if let Some(n) = x.stray_bytes {
            notes.push(format!(
                "interface {i}: {n} stray bytes after its last option are ignored"
            ));
        }
        if let Some((code, at, len)) = x.overlong {
            notes.push(format!(
                "interface {i}: option {code} at byte {at} of its block claims {len} bytes, more \
                 than the block holds; it and the options after it are ignored"
            ));
        }
        notes
    }
}

/// The interface number `index` described by the Interface Description Block `body` (at
/// least [`IDB_FIXED`] bytes; the reserved field is not checked, as tshark does not).
pub(super) fn interface(body: &Fields<'_>, index: usize) -> Interface {
    let mut itf = Interface {
        link_type: u32::from(body.u16(0)),
        snaplen: body.u32(4),
        tsresol: 6,
        tsoffset: 0,
        index: u32::try_from(index).unwrap_or(u32::MAX),
        issues: Issues::default(),
        noted: false,
    };
    let (mut tsresol_seen, mut tsoffset_seen) = (false, false);
    let mut at = IDB_FIXED;
    let x = &mut itf.issues;
    while at < body.b.len() {
        if body.b.len() - at < 4 {
            x.stray_bytes = Some((body.b.len() - at) as u32);
            break;
        }
        let (code, len) = (body.u16(at), usize::from(body.u16(at + 2)));
        let value = at + 4;
        let padded = len.div_ceil(4) * 4;
        if padded > body.b.len() - value {
            x.overlong = Some((code, (at + 8) as u32, len as u16));
            break;
        }
        let v = &body.b[value..value + len];
        let count = |n: &mut u32| *n = n.saturating_add(1);
        match code {
            OPT_ENDOFOPT => break,
            IF_TSRESOL if tsresol_seen => count(&mut x.tsresol_repeated),
            IF_TSOFFSET if tsoffset_seen => count(&mut x.tsoffset_repeated),
            IF_TSRESOL if len == 1 => {
                itf.tsresol = v[0];
                tsresol_seen = true;
            }
            IF_TSOFFSET if len == 8 => {
                itf.tsoffset = body.u64(value) as i64;
                tsoffset_seen = true;
            }
            IF_TSRESOL => {
                if x.tsresol_bad.0 == 0 {
                    x.tsresol_bad.1 = len as u16;
                }
                count(&mut x.tsresol_bad.0);
            }
            IF_TSOFFSET => {
                if x.tsoffset_bad.0 == 0 {
                    x.tsoffset_bad.1 = len as u16;
                }
                count(&mut x.tsoffset_bad.0);
            }
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
