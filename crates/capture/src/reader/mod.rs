//! Reading pcap and pcapng files frame by frame, as far as the file is sound.
//!
//! [`CaptureReader`] streams any [`Read`]: it reads one record (pcap) or one block (pcapng)
//! at a time, checks the length the record declares against a fixed cap before it reads the
//! bytes, and parses the record (pcap with pcap-file's parser; pcapng blocks by hand, as tshark
//! reads them, for the reasons given in the pcapng module's comment). Memory is therefore bounded by
//! [`MAX_RECORD_LEN`] whatever the file says. When the file's framing breaks (a record runs
//! past the end of the file, a length is absurd, a magic number is wrong) the reader yields one
//! [`ReadError`] that names the byte offset (and for pcapng the block number) and then ends.
//! A well-framed pcapng block whose body pcap-file refuses is reported and skipped, since the
//! next block can still be found.

use std::io::{self, Read};

use lossless_proto::units::Instant;
use pcap_file::pcap::PcapParser;
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
    /// The pcapng interface (its number in the section) the frame was captured on; 0 in pcap.
    /// A capture with one interface per direction (e.g. `mergecap` of two one-way captures)
    /// tells the directions apart by it.
    pub interface: u32,
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

mod options;
mod pcapng;
pub use pcapng::MAX_INTERFACES;
use pcapng::Section;

/// Where the reader is: before the header, inside a pcap or pcapng file, or finished.
enum State {
    Start,
    Pcap {
        parser: PcapParser,
        link_type: u32,
        nanos: bool,
        snaplen: u32,
    },
    PcapNg {
        /// Byte order of the current section.
        big_endian: bool,
        section: Section,
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

    /// Reads and discards `n` more bytes without holding them.
    fn skip(&mut self, n: u64) -> Result<(), ReadErrorKind> {
        let got = io::copy(&mut (&mut self.input).take(n), &mut io::sink())?;
        if got < n {
            return Err(ReadErrorKind::Truncated {
                what: "",
                needed: n,
                available: got,
            });
        }
        Ok(())
    }

    /// A short read of a pcapng block, `before` bytes into it and `after` bytes before its end.
    fn truncated_by(kind: ReadErrorKind, before: u64, after: u64) -> ReadErrorKind {
        match kind {
            ReadErrorKind::Truncated {
                needed, available, ..
            } => ReadErrorKind::Truncated {
                what: "pcapng block",
                needed: before + needed + after,
                available: before + available,
            },
            other => other,
        }
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
                    link_type: pcap_link_type(u32::from(h.datalink)),
                    nanos: h.ts_resolution == TsResolution::NanoSecond,
                    snaplen: h.snaplen,
                    parser,
                };
                self.offset = 24;
                Ok(())
            }
            0x0A0D_0D0A => {
                self.state = State::PcapNg {
                    big_endian: true,
                    section: Section::Missing,
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
            interface: 0,
            data: raw.data.into_owned(),
            orig_len,
            offset: self.offset,
            block: None,
            notes,
        };
        self.offset += 16 + u64::from(incl_len);
        Ok(Some(frame))
    }
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

/// The link type in a pcap header's LinkType field. Its upper bits may say how long the
/// frames' FCS is (bit 26 set, length in bits 28-31, as libpcap and tshark read them): the link
/// type is then the low 16 bits. A field with its reserved bits 16-25 set is kept whole, an
/// unknown link type whose frames are skipped and named.
fn pcap_link_type(field: u32) -> u32 {
    if field & 0x03FF_0000 == 0 {
        field & 0xFFFF
    } else {
        field
    }
}

/// A short name of a link type, for messages about skipped frames.
pub fn link_type_name(link_type: u32) -> String {
    match DataLink::from(link_type) {
        DataLink::Unknown(n) => format!("LINKTYPE {n}"),
        known => format!("LINKTYPE_{known:?} ({link_type})"),
    }
}
