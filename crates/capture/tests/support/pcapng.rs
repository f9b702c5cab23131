//! A byte-level pcapng writer for tests: it writes what it is told, including what pcap-file's
//! writer cannot (options without `opt_endofopt`, zero-length options, negative
//! `if_tsoffset`, unknown block types, blocks of either byte order in one file).

#![allow(dead_code)]

/// A pcapng file being written.
pub struct Ng {
    big: bool,
    pub bytes: Vec<u8>,
}

/// One option: code, value, padded to four bytes.
pub fn opt(code: u16, value: &[u8], big: bool) -> Vec<u8> {
    let mut b = Vec::new();
    let w16 = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    b.extend_from_slice(&w16(code));
    b.extend_from_slice(&w16(value.len() as u16));
    b.extend_from_slice(value);
    b.resize(b.len().div_ceil(4) * 4, 0);
    b
}

/// `opt_endofopt`.
pub const END: [u8; 4] = [0; 4];

impl Ng {
    /// A file whose first section has the byte order `big` (big-endian) or little-endian.
    pub fn new(big: bool) -> Self {
        Ng {
            big,
            bytes: Vec::new(),
        }
    }

    pub fn u16(&self, v: u16) -> [u8; 2] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    pub fn u32(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    pub fn u64(&self, v: u64) -> [u8; 8] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    /// An option in this section's byte order.
    pub fn opt(&self, code: u16, value: &[u8]) -> Vec<u8> {
        opt(code, value, self.big)
    }

    /// A block of `block_type` whose body is `body` (padded to four bytes); returns its offset.
    pub fn block(&mut self, block_type: u32, body: &[u8]) -> usize {
        let at = self.bytes.len();
        let mut body = body.to_vec();
        body.resize(body.len().div_ceil(4) * 4, 0);
        let len = body.len() as u32 + 12;
        let (t, l) = (self.u32(block_type), self.u32(len));
        self.bytes.extend_from_slice(&t);
        self.bytes.extend_from_slice(&l);
        self.bytes.extend_from_slice(&body);
        self.bytes.extend_from_slice(&l);
        at
    }

    /// A Section Header Block, version 1.0, in byte order `big`, with `options` as given.
    pub fn shb(&mut self, big: bool, options: &[u8]) -> usize {
        self.big = big;
        let mut body = self.u32(0x1A2B_3C4D).to_vec();
        body.extend_from_slice(&self.u16(1));
        body.extend_from_slice(&self.u16(0));
        body.extend_from_slice(&self.u64(u64::MAX));
        body.extend_from_slice(options);
        self.block(0x0A0D_0D0A, &body)
    }

    /// An Interface Description Block with `options` as given (no end marker added).
    pub fn idb(&mut self, link_type: u16, snaplen: u32, options: &[u8]) -> usize {
        let mut body = self.u16(link_type).to_vec();
        body.extend_from_slice(&self.u16(0));
        body.extend_from_slice(&self.u32(snaplen));
        body.extend_from_slice(options);
        self.block(1, &body)
    }

    /// An Enhanced Packet Block of `data` (original length `orig_len`) at `ts` units.
    pub fn epb(&mut self, interface: u32, ts: u64, data: &[u8], orig_len: u32, options: &[u8]) -> usize {
        let mut body = self.u32(interface).to_vec();
        body.extend_from_slice(&self.u32((ts >> 32) as u32));
        body.extend_from_slice(&self.u32(ts as u32));
        body.extend_from_slice(&self.u32(data.len() as u32));
        body.extend_from_slice(&self.u32(orig_len));
        body.extend_from_slice(data);
        body.resize(body.len().div_ceil(4) * 4, 0);
        body.extend_from_slice(options);
        self.block(6, &body)
    }

    /// A Simple Packet Block of `data` with original length `orig_len`.
    pub fn spb(&mut self, orig_len: u32, data: &[u8]) -> usize {
        let mut body = self.u32(orig_len).to_vec();
        body.extend_from_slice(data);
        self.block(3, &body)
    }

    /// An obsolete Packet Block of `data` at `ts` units.
    pub fn pb(&mut self, interface: u16, ts: u64, data: &[u8], orig_len: u32) -> usize {
        let mut body = self.u16(interface).to_vec();
        body.extend_from_slice(&self.u16(0));
        body.extend_from_slice(&self.u32((ts >> 32) as u32));
        body.extend_from_slice(&self.u32(ts as u32));
        body.extend_from_slice(&self.u32(data.len() as u32));
        body.extend_from_slice(&self.u32(orig_len));
        body.extend_from_slice(data);
        self.block(2, &body)
    }
}
