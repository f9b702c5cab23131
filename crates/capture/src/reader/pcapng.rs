//! The pcapng half of [`CaptureReader`]: block framing, sections (byte order, version) and
//! the packet blocks (Enhanced, Simple and the obsolete Packet Block).
//!
//! The block bodies are read here rather than by pcap-file's `PcapNgParser`, which refuses
//! blocks that tshark and the pcapng specification accept and so loses their packets: an option
//! list without `opt_endofopt` (readers "SHOULD treat" it as if it had one), options of zero
//! length, an `if_tsresol` of the wrong length (tshark ignores it), an `if_tzone` of four bytes,
//! a comment that is not UTF-8, a non-zero reserved field; it also keeps `if_tsoffset`
//! unsigned and gives a Simple Packet Block its padding as data. Options a frame does not need
//! are not read at all; the interface options are in [`options`](super::options).

use std::io::Read;

use super::options::{Interface, interface};
use super::{CaptureReader, Frame, MAX_RECORD_LEN, ReadError, ReadErrorKind, State};

/// Block types (pcapng specification, section 11.1).
const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 1;
const PB: u32 = 2;
const SPB: u32 = 3;
const EPB: u32 = 6;
/// Most interfaces one section may describe (each is kept, for its packets, until the next
/// Section Header Block): 65,536, the Packet Block's 16-bit interface ids. A further
/// Interface Description Block is an error of its own; the reading goes on.
pub const MAX_INTERFACES: usize = 1 << 16;
/// Blocks tshark numbers as records although they hold no packet: systemd Journal Export and
/// the two Custom Blocks. Counted so that frame numbers stay tshark's.
const NUMBERED: [u32; 3] = [0x0000_0009, 0x0000_0BAD, 0x4000_0BAD];

/// The current section of a pcapng file.
#[derive(Debug)]
pub(super) enum Section {
    /// No usable Section Header Block yet.
    Missing,
    /// A section of a version this reader does not know: its blocks are skipped (reported once).
    Skipped,
    /// A section being read, with the interfaces described so far.
    Open(Vec<Interface>),
}

/// Fixed-width fields of a block body in the section's byte order.
pub(super) struct Fields<'a> {
    pub(super) b: &'a [u8],
    pub(super) big: bool,
}

impl Fields<'_> {
    pub(super) fn u16(&self, at: usize) -> u16 {
        let w = [self.b[at], self.b[at + 1]];
        if self.big {
            u16::from_be_bytes(w)
        } else {
            u16::from_le_bytes(w)
        }
    }
    pub(super) fn u32(&self, at: usize) -> u32 {
        let w = [self.b[at], self.b[at + 1], self.b[at + 2], self.b[at + 3]];
        if self.big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    }
    pub(super) fn u64(&self, at: usize) -> u64 {
        let mut w = [0; 8];
        w.copy_from_slice(&self.b[at..at + 8]);
        if self.big {
            u64::from_be_bytes(w)
        } else {
            u64::from_le_bytes(w)
        }
    }
}

fn too_short(block: &'static str, body: usize, needed: usize) -> ReadErrorKind {
    ReadErrorKind::BadLength {
        field: block,
        found: body as u64,
        allowed: format!("a body of at least {needed} bytes"),
    }
}

impl<R: Read> CaptureReader<R> {
    pub(super) fn next_pcapng(&mut self) -> Result<Option<Frame>, ReadError> {
        loop {
            let State::PcapNg { big_endian, .. } = self.state else {
                return Ok(None);
            };
            if self.offset != 0 {
                self.buf.clear();
                match self.fill(8) {
                    Ok(()) => {}
                    Err(ReadErrorKind::Truncated { available: 0, .. }) => return Ok(None),
                    Err(k) => return Err(self.err(true, Self::truncated(k, "pcapng block header", 0))),
                }
            } else {
                // The magic number (4 bytes) is in the buffer already.
                self.fill(4)
                    .map_err(|k| self.err(true, Self::truncated(k, "pcapng block header", 4)))?;
            }
            let mut big = big_endian;
            if self.buf[..4] == SHB.to_be_bytes() {
                // A Section Header Block (its type reads the same in both byte orders): its
                // byte-order magic decides the byte order of its length and of the section.
                self.fill(4)
                    .map_err(|k| self.err(true, Self::truncated(k, "pcapng section header", 8)))?;
                big = match self.buf[8..12] {
                    [0x1A, 0x2B, 0x3C, 0x4D] => true,
                    [0x4D, 0x3C, 0x2B, 0x1A] => false,
                    _ => {
                        let m = &self.buf[8..12];
                        return Err(self.err(
                            true,
                            ReadErrorKind::BadLength {
                                field: "pcapng byte-order magic",
                                found: u32::from_be_bytes([m[0], m[1], m[2], m[3]]).into(),
                                allowed: "0x1a2b3c4d in either byte order".into(),
                            },
                        ));
                    }
                };
            }
            let head = Fields { b: &self.buf, big };
            let (block_type, len) = (head.u32(0), head.u32(4));
            // Blocks that are read are held in memory, so their length is capped; the others
            // (statistics, name resolution, custom, unknown) are stepped over whatever their size.
            let held = matches!(block_type, SHB | IDB | EPB | PB | SPB);
            if len < 12 || len % 4 != 0 || (held && len > MAX_RECORD_LEN) {
                let allowed = if held {
                    format!("a multiple of 4 from 12 to {MAX_RECORD_LEN}")
                } else {
                    "a multiple of 4, at least 12".into()
                };
                return Err(self.err(
                    true,
                    ReadErrorKind::BadLength {
                        field: "pcapng block total length",
                        found: len.into(),
                        allowed,
                    },
                ));
            }
            let have = self.buf.len();
            if held {
                self.fill(len as usize - have)
                    .map_err(|k| self.err(true, Self::truncated(k, "pcapng block", have)))?;
            } else {
                // Only the header and the trailer stay in the buffer.
                let (have, body) = (have as u64, u64::from(len) - have as u64 - 4);
                self.skip(body)
                    .map_err(|k| self.err(true, Self::truncated_by(k, have, 4)))?;
                self.fill(4)
                    .map_err(|k| self.err(true, Self::truncated_by(k, have + body, 0)))?;
            }
            let trailer = Fields { b: &self.buf, big }.u32(self.buf.len() - 4);
            let result = if trailer != len {
                // A refused packet keeps its number, as everywhere else.
                if matches!(block_type, EPB | PB | SPB) {
                    self.frames += 1;
                }
                Err(ReadErrorKind::BadLength {
                    field: "pcapng trailing block total length",
                    found: trailer.into(),
                    allowed: format!("{len}, the block's leading total length"),
                })
            } else {
                self.parse_block(block_type, big)
            };
            let block_offset = self.offset;
            let block_number = self.blocks;
            self.offset += u64::from(len);
            self.blocks += 1;
            match result {
                Ok(Some(mut frame)) => {
                    frame.offset = block_offset;
                    frame.block = Some(block_number);
                    return Ok(Some(frame));
                }
                Ok(None) => {}
                Err(kind) => {
                    return Err(ReadError {
                        offset: block_offset,
                        block: Some(block_number),
                        fatal: false,
                        kind,
                    });
                }
            }
        }
    }

    /// Reads the whole block in `self.buf` (header, body, trailer); a packet block becomes a
    /// frame.
    fn parse_block(&mut self, block_type: u32, big: bool) -> Result<Option<Frame>, ReadErrorKind> {
        let State::PcapNg { big_endian, section } = &mut self.state else {
            return Ok(None);
        };
        let body = Fields {
            b: &self.buf[8..self.buf.len() - 4],
            big,
        };
        if block_type == SHB {
            *big_endian = big;
            if body.b.len() < 16 {
                *section = Section::Skipped;
                return Err(too_short(
                    "pcapng Section Header Block (the section is skipped)",
                    body.b.len(),
                    16,
                ));
            }
            let (major, minor) = (body.u16(4), body.u16(6));
            if major != 1 {
                *section = Section::Skipped;
                return Err(ReadErrorKind::BadLength {
                    field: "pcapng section major version",
                    found: major.into(),
                    allowed: format!("1 (version {major}.{minor} is not known; the section is skipped)"),
                });
            }
            *section = Section::Open(Vec::new());
            return Ok(None);
        }
        let interfaces = match section {
            Section::Open(interfaces) => interfaces,
            Section::Skipped => return Ok(None),
            Section::Missing => {
                return Err(ReadErrorKind::Pcap(
                    "block outside a section: no valid Section Header Block before it".into(),
                ));
            }
        };
        let (interface_id, raw_ts, caplen, orig_len, data_at) = match block_type {
            IDB => {
                if body.b.len() < 8 {
                    return Err(too_short("pcapng Interface Description Block", body.b.len(), 8));
                }
                if interfaces.len() >= MAX_INTERFACES {
                    // each kept interface costs memory for the rest of the section
                    return Err(ReadErrorKind::BadLength {
                        field: "pcapng Interface Description Blocks in one section",
                        found: interfaces.len() as u64 + 1,
                        allowed: format!(
                            "at most {MAX_INTERFACES} (this one is skipped, its packets refused)"
                        ),
                    });
                }
                interfaces.push(interface(&body, interfaces.len()));
                return Ok(None);
            }
            EPB => {
                if body.b.len() < 20 {
                    return Err(too_short("pcapng Enhanced Packet Block", body.b.len(), 20));
                }
                let ts = u64::from(body.u32(4)) << 32 | u64::from(body.u32(8));
                (body.u32(0), Some(ts), body.u32(12), body.u32(16), 20)
            }
            PB => {
                if body.b.len() < 20 {
                    return Err(too_short("pcapng Packet Block", body.b.len(), 20));
                }
                let ts = u64::from(body.u32(4)) << 32 | u64::from(body.u32(8));
                (u32::from(body.u16(0)), Some(ts), body.u32(12), body.u32(16), 20)
            }
            SPB => {
                if body.b.len() < 4 {
                    return Err(too_short("pcapng Simple Packet Block", body.b.len(), 4));
                }
                let orig_len = body.u32(0);
                // No captured length: the original length cut at interface 0's snapshot
                // length, and at what the block holds (the rest is padding).
                let snaplen = interfaces.first().map_or(0, |i| i.snaplen);
                let mut caplen = orig_len.min(body.b.len() as u32 - 4);
                if snaplen != 0 {
                    caplen = caplen.min(snaplen);
                }
                (0, None, caplen, orig_len, 4)
            }
            t if NUMBERED.contains(&t) => {
                self.frames += 1;
                return Ok(None);
            }
            // Statistics, name resolution, secrets, local and unknown blocks: nothing to read.
            _ => return Ok(None),
        };
        self.frames += 1;
        if caplen as usize > body.b.len() - data_at {
            return Err(ReadErrorKind::BadLength {
                field: "packet captured length",
                found: caplen.into(),
                allowed: format!(
                    "at most the {} bytes the block holds after its fields",
                    body.b.len() - data_at
                ),
            });
        }
        let Some(itf) = interfaces.get_mut(interface_id as usize) else {
            return Err(ReadErrorKind::BadLength {
                field: "packet interface_id",
                found: interface_id.into(),
                allowed: format!(
                    "an interface described earlier in the section ({} described)",
                    interfaces.len()
                ),
            });
        };
        let data = body.b[data_at..data_at + caplen as usize].to_vec();
        // the interface's own notes go with its first frame only
        let mut notes = itf.take_notes();
        if caplen > orig_len {
            notes.push(format!(
                "captured length {caplen} exceeds the original length {orig_len}"
            ));
        }
        if itf.snaplen != 0 && caplen > itf.snaplen {
            notes.push(format!(
                "captured length {caplen} exceeds the interface's snapshot length {}",
                itf.snaplen
            ));
        }
        let timestamp = raw_ts.map(|units| itf.timestamp(units, &mut notes));
        Ok(Some(Frame {
            number: self.frames,
            timestamp,
            link_type: itf.link_type,
            interface: interface_id,
            data,
            orig_len,
            offset: 0,
            block: None,
            notes,
        }))
    }
}
