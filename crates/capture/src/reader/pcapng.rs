//! The pcapng half of [`CaptureReader`]: sections, interfaces (link type, `if_tsresol`,
//! `if_tsoffset`) and the Enhanced, Simple and obsolete Packet Blocks.

use std::io::Read;

use lossless_proto::units::Instant;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgParser};

use super::{CaptureReader, Frame, MAX_RECORD_LEN, ReadError, ReadErrorKind, State};

/// Per-interface facts a pcapng reader needs for the packets that refer to it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Interface {
    pub(super) link_type: u32,
    /// if_tsresol: bit 7 clear = 10^-n seconds, set = 2^-n seconds.
    pub(super) tsresol: u8,
    /// if_tsoffset in seconds.
    pub(super) tsoffset: u64,
}

impl<R: Read> CaptureReader<R> {
    pub(super) fn next_pcapng(&mut self) -> Result<Option<Frame>, ReadError> {
        loop {
            let State::PcapNg { big_endian, .. } = self.state else {
                return Ok(None);
            };
            let first = self.offset == 0;
            if !first {
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
            let b = &self.buf;
            let block_type = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            let mut big = big_endian;
            if block_type == 0x0A0D_0D0A {
                // A Section Header Block: its byte-order magic decides the byte order.
                self.fill(4)
                    .map_err(|k| self.err(true, Self::truncated(k, "pcapng section header", 8)))?;
                let b = &self.buf;
                big = match [b[8], b[9], b[10], b[11]] {
                    [0x1A, 0x2B, 0x3C, 0x4D] => true,
                    [0x4D, 0x3C, 0x2B, 0x1A] => false,
                    m => {
                        return Err(self.err(
                            true,
                            ReadErrorKind::BadLength {
                                field: "pcapng byte-order magic",
                                found: u32::from_be_bytes(m).into(),
                                allowed: "0x1a2b3c4d in either byte order".into(),
                            },
                        ));
                    }
                };
            }
            let b = &self.buf;
            let len_bytes = [b[4], b[5], b[6], b[7]];
            let len = if big {
                u32::from_be_bytes(len_bytes)
            } else {
                u32::from_le_bytes(len_bytes)
            };
            if len < 12 || len % 4 != 0 || len > MAX_RECORD_LEN {
                return Err(self.err(
                    true,
                    ReadErrorKind::BadLength {
                        field: "pcapng block total length",
                        found: len.into(),
                        allowed: format!("a multiple of 4 from 12 to {MAX_RECORD_LEN}"),
                    },
                ));
            }
            let have = self.buf.len();
            let rest = (len as usize).saturating_sub(have);
            self.fill(rest)
                .map_err(|k| self.err(true, Self::truncated(k, "pcapng block", have)))?;
            let result = self.parse_block(block_type, big);
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

    /// Parses the whole block in `self.buf`; a packet block becomes a frame.
    fn parse_block(&mut self, block_type: u32, big: bool) -> Result<Option<Frame>, ReadErrorKind> {
        let State::PcapNg {
            parser,
            big_endian,
            interfaces,
        } = &mut self.state
        else {
            return Ok(None);
        };
        let pcap = |e: pcap_file::PcapError| ReadErrorKind::Pcap(e.to_string());
        if block_type == 0x0A0D_0D0A {
            let (_, p) = PcapNgParser::new(&self.buf).map_err(pcap)?;
            *parser = Some(p);
            *big_endian = big;
            interfaces.clear();
            return Ok(None);
        }
        let Some(p) = parser.as_mut() else {
            return Err(ReadErrorKind::Pcap(
                "block before the first Section Header Block".into(),
            ));
        };
        let (_, block) = p.next_block(&self.buf).map_err(pcap)?;
        let (interface_id, raw_ts, orig_len, data) = match block {
            Block::InterfaceDescription(idb) => {
                let mut itf = Interface {
                    link_type: u32::from(idb.linktype),
                    tsresol: 6,
                    tsoffset: 0,
                };
                for o in &idb.options {
                    match o {
                        InterfaceDescriptionOption::IfTsResol(r) => itf.tsresol = *r,
                        InterfaceDescriptionOption::IfTsOffset(s) => itf.tsoffset = *s,
                        _ => {}
                    }
                }
                interfaces.push(itf);
                return Ok(None);
            }
            // pcap-file stores the raw timestamp units in `as_nanos()`.
            Block::EnhancedPacket(epb) => (
                epb.interface_id,
                Some(epb.timestamp.as_nanos()),
                epb.original_len,
                epb.data.into_owned(),
            ),
            Block::SimplePacket(spb) => (0, None, spb.original_len, spb.data.into_owned()),
            Block::Packet(pb) => (
                u32::from(pb.interface_id),
                Some(u128::from(pb.timestamp)),
                pb.original_len,
                pb.data.into_owned(),
            ),
            _ => return Ok(None),
        };
        self.frames += 1;
        let Some(itf) = interfaces.get(interface_id as usize).copied() else {
            return Err(ReadErrorKind::BadLength {
                field: "packet interface_id",
                found: interface_id.into(),
                allowed: format!(
                    "an interface described earlier in the section ({} described)",
                    interfaces.len()
                ),
            });
        };
        let mut notes = Vec::new();
        if data.len() as u64 > u64::from(orig_len) {
            notes.push(format!(
                "captured length {} exceeds the original length {orig_len}",
                data.len()
            ));
        }
        Ok(Some(Frame {
            number: self.frames,
            timestamp: raw_ts.map(|t| Instant::from_ps(to_ps(t, itf.tsresol, itf.tsoffset))),
            link_type: itf.link_type,
            data,
            orig_len,
            offset: 0,
            block: None,
            notes,
        }))
    }
}

/// Converts a pcapng timestamp in `if_tsresol` units plus `if_tsoffset` seconds to picoseconds,
/// saturating on absurd values.
fn to_ps(units: u128, tsresol: u8, tsoffset: u64) -> u128 {
    const PS: u128 = 1_000_000_000_000;
    let n = u32::from(tsresol & 0x7F);
    let ps = if tsresol & 0x80 == 0 {
        if n <= 12 {
            units.saturating_mul(10u128.pow(12 - n))
        } else {
            units / 10u128.checked_pow(n - 12).unwrap_or(u128::MAX)
        }
    } else if n < 128 {
        units.saturating_mul(PS) >> n
    } else {
        0
    };
    ps.saturating_add(u128::from(tsoffset).saturating_mul(PS))
}

#[cfg(test)]
mod tests {
    use super::to_ps;

    #[test]
    fn timestamps_follow_if_tsresol_and_if_tsoffset() {
        assert_eq!(to_ps(1, 6, 0), 1_000_000, "default: microseconds");
        assert_eq!(to_ps(1, 9, 0), 1_000, "nanoseconds");
        assert_eq!(to_ps(1, 12, 0), 1, "picoseconds");
        assert_eq!(to_ps(1_000, 15, 0), 1, "femtoseconds round down to picoseconds");
        assert_eq!(to_ps(1, 0x80 | 1, 0), 500_000_000_000, "2^-1 s");
        assert_eq!(to_ps(3, 0x80 | 10, 0), 3 * 1_000_000_000_000 / 1024, "2^-10 s");
        assert_eq!(
            to_ps(1, 6, 2),
            2_000_000_000_000 + 1_000_000,
            "if_tsoffset adds seconds"
        );
        assert_eq!(
            to_ps(u128::from(u64::MAX), 0, u64::MAX),
            u128::from(u64::MAX) * 1_000_000_000_000 * 2
        );
    }
}
