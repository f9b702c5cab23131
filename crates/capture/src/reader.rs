//! Reading pcap and pcapng files (with pcap-file) frame by frame, as far as the file is sound.
//!
//! [`CaptureReader`] streams any [`Read`]: it reads one record (pcap) or one block (pcapng)
//! at a time, checks the length the record declares against a fixed cap before it reads the
//! bytes, and hands the record to pcap-file's parsers. Memory is therefore bounded by
//! [`MAX_RECORD_LEN`] whatever the file says. When the file's framing breaks (a record runs
//! past the end of the file, a length is absurd, a magic number is wrong) the reader yields one
//! [`ReadError`] that names the byte offset (and for pcapng the block number) and then ends.
//! A well-framed pcapng block whose body pcap-file refuses is reported and skipped, since the
//! next block can still be found.

use std::io::{self, Read};

use lossless_proto::units::Instant;
use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, TsResolution};

/// Largest captured frame accepted (bytes), as tcpdump's and Wireshark's maximum snapshot length.
pub const MAX_SNAPLEN: u32 = 262_144;
/// Largest pcap record or pcapng block accepted (bytes): a maximal frame plus room for options.
pub const MAX_RECORD_LEN: u32 = MAX_SNAPLEN + 65_536;

/// LINKTYPE_ETHERNET, the only link type whose frames are decoded; others are skipped.
pub const LINKTYPE_ETHERNET: u32 = 1;

/// Which container format a capture file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic libpcap format (microsecond or nanosecond timestamps, either byte order).
    Pcap,
    /// pcapng (sections, interfaces, enhanced/simple packet blocks).
    PcapNg,
}

/// One captured frame as the file stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Frame number, counting every packet record from 1 (as tshark and Wireshark number them).
    pub number: u64,
    /// Capture time since the Unix epoch; `None` for pcapng Simple Packet Blocks, which have none.
    pub timestamp: Option<Instant>,
    /// The link type (LINKTYPE_* number) of the interface the frame was captured on.
    pub link_type: u32,
    /// The captured bytes (at most the snapshot length).
    pub data: Vec<u8>,
    /// The frame's length on the wire, as the record states it.
    pub orig_len: u32,
    /// Byte offset of the frame's record (pcap) or block (pcapng) in the file.
    pub offset: u64,
    /// pcapng block number (counting from 0 at the file's first Section Header Block).
    pub block: Option<u64>,
    /// Oddities of the record that did not stop reading (e.g. captured length above the
    /// file's snapshot length), as sentences.
    pub notes: Vec<String>,
}

/// What went wrong while reading the capture file.
#[derive(Debug, thiserror::Error)]
pub enum ReadErrorKind {
    /// The operating system failed to read the file.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The file does not start with a pcap or pcapng magic number.
    #[error("not a pcap or pcapng file: magic number {found:#010x}")]
    BadMagic {
        /// The first four bytes, big-endian.
        found: u32,
    },
    /// The file ends inside a record or block.
    #[error("file truncated inside the {what}: needs {needed} bytes, {available} left")]
    Truncated {
        /// The structure being read ("pcap record header", "pcapng block", …).
        what: &'static str,
        /// Bytes the structure needs.
        needed: u64,
        /// Bytes the file still had.
        available: u64,
    },
    /// A length field is outside what is allowed.
    #[error("{field} is {found}, allowed {allowed}")]
    BadLength {
        /// The length field, as the format's specification names it.
        field: &'static str,
        /// The value found.
        found: u64,
        /// What is allowed, in words.
        allowed: String,
    },
    /// pcap-file refused the record or block.
    #[error("{0}")]
    Pcap(String),
}

/// A reading error with its position in the file.
#[derive(Debug, thiserror::Error)]
#[error("at byte {offset}{}: {kind}", block.map(|b| format!(" (pcapng block {b})")).unwrap_or_default())]
pub struct ReadError {
    /// Byte offset of the record or block where the problem is.
    pub offset: u64,
    /// pcapng block number, when the file is pcapng.
    pub block: Option<u64>,
    /// Whether reading stops here (the framing is lost) or continues with the next block.
    pub fatal: bool,
    /// What went wrong.
    #[source]
    pub kind: ReadErrorKind,
}

/// Per-interface facts a pcapng reader needs for the packets that refer to it.
#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: u32,
    /// if_tsresol: bit 7 clear = 10^-n seconds, set = 2^-n seconds.
    tsresol: u8,
    /// if_tsoffset in seconds.
    tsoffset: u64,
}

enum State {
    Start,
    Pcap {
        parser: PcapParser,
        link_type: u32,
        nanos: bool,
        snaplen: u32,
    },
    PcapNg {
        parser: Option<PcapNgParser>,
        big_endian: bool,
        interfaces: Vec<Interface>,
    },
    Done,
}

/// A streaming reader of pcap and pcapng files: an iterator of frames, then at most one
/// fatal positioned error.
pub struct CaptureReader<R: Read> {
    input: R,
    state: State,
    offset: u64,
    frames: u64,
    blocks: u64,
    buf: Vec<u8>,
}

impl<R: Read> CaptureReader<R> {
    /// A reader of `input`; the format is detected from the first bytes.
    pub fn new(input: R) -> Self {
        CaptureReader {
            input,
            state: State::Start,
            offset: 0,
            frames: 0,
            blocks: 0,
            buf: Vec::new(),
        }
    }

    /// The container format, once the header has been read (`None` before the first frame
    /// or when the magic number was wrong).
    pub fn format(&self) -> Option<Format> {
        match self.state {
            State::Pcap { .. } => Some(Format::Pcap),
            State::PcapNg { .. } => Some(Format::PcapNg),
            _ => None,
        }
    }

    /// Bytes consumed so far (the offset of the next record).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads exactly `n` more bytes into `self.buf` (appending); on a short file returns how
    /// many bytes there were.
    fn fill(&mut self, n: usize) -> Result<(), ReadErrorKind> {
        let start = self.buf.len();
        self.buf.resize(start + n, 0);
        let mut got = 0;
        while got < n {
            match self.input.read(&mut self.buf[start + got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadErrorKind::Io(e)),
            }
        }
        self.buf.truncate(start + got);
        if got < n {
            return Err(ReadErrorKind::Truncated {
                what: "",
                needed: n as u64,
                available: got as u64,
            });
        }
        Ok(())
    }

    fn err(&self, fatal: bool, kind: ReadErrorKind) -> ReadError {
        let block = matches!(self.state, State::PcapNg { .. }).then_some(self.blocks);
        ReadError {
            offset: self.offset,
            block,
            fatal,
            kind,
        }
    }

    fn truncated(kind: ReadErrorKind, what: &'static str, had: usize) -> ReadErrorKind {
        match kind {
            ReadErrorKind::Truncated {
                needed, available, ..
            } => ReadErrorKind::Truncated {
                what,
                needed: needed + had as u64,
                available: available + had as u64,
            },
            other => other,
        }
    }

    fn start(&mut self) -> Result<(), ReadError> {
        self.buf.clear();
        if let Err(kind) = self.fill(4) {
            if matches!(kind, ReadErrorKind::Truncated { available: 0, .. }) {
                return Err(self.err(
                    true,
                    ReadErrorKind::Truncated {
                        what: "file header",
                        needed: 4,
                        available: 0,
                    },
                ));
            }
            return Err(self.err(true, Self::truncated(kind, "file header", 0)));
        }
        let magic = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        match magic {
            0xA1B2_C3D4 | 0xD4C3_B2A1 | 0xA1B2_3C4D | 0x4D3C_B2A1 => {
                self.fill(20)
                    .map_err(|k| self.err(true, Self::truncated(k, "pcap file header", 4)))?;
                let (_, parser) = PcapParser::new(&self.buf)
                    .map_err(|e| self.err(true, ReadErrorKind::Pcap(e.to_string())))?;
                let h = parser.header();
                self.state = State::Pcap {
                    link_type: u32::from(h.datalink),
                    nanos: h.ts_resolution == TsResolution::NanoSecond,
                    snaplen: h.snaplen,
                    parser,
                };
                self.offset = 24;
                Ok(())
            }
            0x0A0D_0D0A => {
                self.state = State::PcapNg {
                    parser: None,
                    big_endian: true,
                    interfaces: Vec::new(),
                };
                // The magic number stays in the buffer: it is the first block's type.
                Ok(())
            }
            found => Err(self.err(true, ReadErrorKind::BadMagic { found })),
        }
    }

    fn next_pcap(&mut self) -> Result<Option<Frame>, ReadError> {
        let State::Pcap {
            link_type,
            nanos,
            snaplen,
            ..
        } = self.state
        else {
            return Ok(None);
        };
        self.buf.clear();
        match self.fill(16) {
            Ok(()) => {}
            Err(ReadErrorKind::Truncated { available: 0, .. }) => return Ok(None),
            Err(k) => return Err(self.err(true, Self::truncated(k, "pcap record header", 0))),
        }
        let big = matches!(&self.state, State::Pcap { parser, .. } if parser.header().endianness == Endianness::Big);
        let word = |b: &[u8], i: usize| {
            let w = [b[i], b[i + 1], b[i + 2], b[i + 3]];
            if big {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        let (ts_sec, ts_frac, incl_len, orig_len) = (
            word(&self.buf, 0),
            word(&self.buf, 4),
            word(&self.buf, 8),
            word(&self.buf, 12),
        );
        if incl_len > MAX_SNAPLEN {
            return Err(self.err(
                true,
                ReadErrorKind::BadLength {
                    field: "pcap record incl_len",
                    found: incl_len.into(),
                    allowed: format!("at most {MAX_SNAPLEN}"),
                },
            ));
        }
        self.fill(incl_len as usize)
            .map_err(|k| self.err(true, Self::truncated(k, "pcap record", 16)))?;
        let State::Pcap { parser, .. } = &self.state else {
            return Ok(None);
        };
        let raw = match parser.next_raw_packet(&self.buf) {
            Ok((_, raw)) => raw,
            Err(e) => return Err(self.err(true, ReadErrorKind::Pcap(e.to_string()))),
        };
        let mut notes = Vec::new();
        let frac_limit = if nanos { 1_000_000_000 } else { 1_000_000 };
        if ts_frac >= frac_limit {
            notes.push(format!("timestamp fraction {ts_frac} is not below {frac_limit}"));
        }
        if incl_len > snaplen {
            notes.push(format!(
                "captured length {incl_len} exceeds the file's snapshot length {snaplen}"
            ));
        }
        if incl_len > orig_len {
            notes.push(format!(
                "captured length {incl_len} exceeds the original length {orig_len}"
            ));
        }
        let unit: u128 = if nanos { 1_000 } else { 1_000_000 };
        let ps = u128::from(ts_sec) * 1_000_000_000_000 + u128::from(ts_frac) * unit;
        self.frames += 1;
        let frame = Frame {
            number: self.frames,
            timestamp: Some(Instant::from_ps(ps)),
            link_type,
            data: raw.data.into_owned(),
            orig_len,
            offset: self.offset,
            block: None,
            notes,
        };
        self.offset += 16 + u64::from(incl_len);
        Ok(Some(frame))
    }

    fn next_pcapng(&mut self) -> Result<Option<Frame>, ReadError> {
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

impl<R: Read> Iterator for CaptureReader<R> {
    type Item = Result<Frame, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let State::Start = self.state
            && let Err(e) = self.start()
        {
            self.state = State::Done;
            return Some(Err(e));
        }
        let result = match self.state {
            State::Pcap { .. } => self.next_pcap(),
            State::PcapNg { .. } => self.next_pcapng(),
            State::Start | State::Done => Ok(None),
        };
        match result {
            Ok(Some(f)) => Some(Ok(f)),
            Ok(None) => {
                self.state = State::Done;
                None
            }
            Err(e) => {
                if e.fatal {
                    self.state = State::Done;
                }
                Some(Err(e))
            }
        }
    }
}

/// A short name of a link type, for messages about skipped frames.
pub fn link_type_name(link_type: u32) -> String {
    match DataLink::from(link_type) {
        DataLink::Unknown(n) => format!("LINKTYPE {n}"),
        known => format!("LINKTYPE_{known:?} ({link_type})"),
    }
}
