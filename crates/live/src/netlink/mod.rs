//! Netlink, written by hand (design.md: "no crate implements … dcbnl: those we write"): message
//! building and parsing as pure functions over bytes ([`MessageBuilder`], [`parse_messages`],
//! [`attributes`]), used by [`dcbnl`] (RTM_GETDCB/RTM_SETDCB) and [`ethtool`] (ETHTOOL_MSG_PAUSE_GET
//! over generic netlink), and a thin socket ([`socket::NetlinkSocket`]) that sends one request
//! and collects its replies.
//!
//! Layouts from the kernel's `include/uapi/linux/netlink.h` (struct nlmsghdr, struct nlattr,
//! NLA_ALIGNTO = 4, NLA_F_NESTED = 1 << 15, NLMSG_ERROR = 2, NLMSG_DONE = 3) and
//! `include/uapi/linux/genetlink.h` (struct genlmsghdr, GENL_ID_CTRL = 16, CTRL_CMD_GETFAMILY = 3,
//! CTRL_ATTR_FAMILY_ID = 1, CTRL_ATTR_FAMILY_NAME = 2). All fields are host byte order
//! (little-endian on every Linux this runs on); parsing never panics, never reads past a length
//! and never allocates more than the reply it is given.

pub mod dcbnl;
pub mod ethtool;
pub mod socket;

/// Bytes of a `struct nlmsghdr`.
pub const NLMSG_HDRLEN: usize = 16;
/// Bytes of a `struct nlattr` header.
pub const NLA_HDRLEN: usize = 4;
/// `NLA_F_NESTED`: the attribute holds attributes.
pub const NLA_F_NESTED: u16 = 1 << 15;
/// `NLA_F_NET_BYTEORDER`.
pub const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
/// `NLM_F_REQUEST`.
pub const NLM_F_REQUEST: u16 = 0x1;
/// `NLM_F_MULTI`: one of several replies, ended by `NLMSG_DONE`.
pub const NLM_F_MULTI: u16 = 0x2;
/// `NLM_F_ACK`: ask for an acknowledgement (an `NLMSG_ERROR` with error 0).
pub const NLM_F_ACK: u16 = 0x4;
/// `NLMSG_ERROR`: an error or an acknowledgement.
pub const NLMSG_ERROR: u16 = 2;
/// `NLMSG_DONE`: the end of a multi-part reply.
pub const NLMSG_DONE: u16 = 3;

/// Rounds up to netlink's 4-byte alignment (`NLMSG_ALIGN`, `NLA_ALIGN`).
pub const fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// The C library's text of an errno without Rust's " (os error N)" suffix
/// ("Operation not supported").
pub fn errno_text(errno: i32) -> String {
    plain_io_text(&std::io::Error::from_raw_os_error(errno))
}

/// An I/O error's text without Rust's " (os error N)" suffix.
pub fn plain_io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.rfind(" (os error ") {
        Some(i) if t.ends_with(')') => t[..i].to_owned(),
        _ => t,
    }
}

/// Why a netlink reply could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetlinkError {
    /// A message header says a length that does not fit the bytes received.
    #[error(
        "netlink message at byte {offset}: length {len} does not fit the {available} bytes left (a message is at least 16)"
    )]
    BadMessageLength {
        /// Where the message starts in the reply.
        offset: usize,
        /// The length its header says.
        len: usize,
        /// Bytes left from there.
        available: usize,
    },
    /// An attribute header says a length that does not fit its message.
    #[error(
        "netlink attribute at byte {offset}: length {len} does not fit the {available} bytes left (an attribute is at least 4)"
    )]
    BadAttributeLength {
        /// Where the attribute starts in its container.
        offset: usize,
        /// The length its header says.
        len: usize,
        /// Bytes left from there.
        available: usize,
    },
    /// A fixed-size payload shorter than the structure it carries.
    #[error("{what}: {found} bytes, at least {needed} expected")]
    Short {
        /// The structure.
        what: &'static str,
        /// Bytes found.
        found: usize,
        /// Bytes it needs.
        needed: usize,
    },
    /// The kernel answered with an error number (`NLMSG_ERROR` with error < 0).
    #[error("{}", errno_text(*errno))]
    Kernel {
        /// The positive errno (e.g. `libc::EOPNOTSUPP`).
        errno: i32,
    },
    /// A reply that is not the one asked for.
    #[error("unexpected netlink reply: {0}")]
    Unexpected(String),
}

/// One message of a reply: its header fields and payload (after the 16-byte header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// `nlmsg_type`.
    pub kind: u16,
    /// `nlmsg_flags`.
    pub flags: u16,
    /// `nlmsg_seq`.
    pub seq: u32,
    /// `nlmsg_pid`.
    pub pid: u32,
    /// The bytes after the header, up to `nlmsg_len`.
    pub payload: &'a [u8],
}

impl Message<'_> {
    /// For an `NLMSG_ERROR` message: `Ok(())` for an acknowledgement (error 0), the kernel's
    /// error otherwise; `None` for any other message.
    pub fn error(&self) -> Option<Result<(), NetlinkError>> {
        if self.kind != NLMSG_ERROR {
            return None;
        }
        Some(match read_i32(self.payload, 0) {
            Some(0) => Ok(()),
            Some(e) => Err(NetlinkError::Kernel {
                errno: e.checked_neg().unwrap_or(i32::MAX),
            }),
            None => Err(NetlinkError::Short {
                what: "struct nlmsgerr",
                found: self.payload.len(),
                needed: 4,
            }),
        })
    }
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|s| u16::from_ne_bytes([s[0], s[1]]))
}
fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}
fn read_i32(b: &[u8], at: usize) -> Option<i32> {
    read_u32(b, at).map(|v| v as i32)
}

/// Splits a datagram into its messages (checked: every length inside the datagram).
pub fn parse_messages(buf: &[u8]) -> Result<Vec<Message<'_>>, NetlinkError> {
    let mut out = Vec::new();
    let mut at = 0;
    while buf.len() - at >= NLMSG_HDRLEN {
        let len = read_u32(buf, at).unwrap_or(0) as usize;
        let available = buf.len() - at;
        if len < NLMSG_HDRLEN || len > available {
            return Err(NetlinkError::BadMessageLength {
                offset: at,
                len,
                available,
            });
        }
        out.push(Message {
            kind: read_u16(buf, at + 4).unwrap_or(0),
            flags: read_u16(buf, at + 6).unwrap_or(0),
            seq: read_u32(buf, at + 8).unwrap_or(0),
            pid: read_u32(buf, at + 12).unwrap_or(0),
            payload: &buf[at + NLMSG_HDRLEN..at + len],
        });
        at += align(len).min(available);
    }
    Ok(out)
}

/// One attribute: its type (flags taken off), whether it is nested, and its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// `nla_type` without `NLA_F_NESTED` and `NLA_F_NET_BYTEORDER`.
    pub kind: u16,
    /// Whether `NLA_F_NESTED` was set.
    pub nested: bool,
    /// The bytes after the 4-byte header, up to `nla_len`.
    pub payload: &'a [u8],
}

impl<'a> Attribute<'a> {
    /// The payload as a NUL-terminated string (lossy UTF-8, without the NUL).
    pub fn string(&self) -> String {
        let end = self
            .payload
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.payload.len());
        String::from_utf8_lossy(&self.payload[..end]).into_owned()
    }
    /// The payload as a u16, if it is at least 2 bytes.
    pub fn u16(&self) -> Option<u16> {
        read_u16(self.payload, 0)
    }
    /// The payload as a u32, if it is at least 4 bytes.
    pub fn u32(&self) -> Option<u32> {
        read_u32(self.payload, 0)
    }
    /// The payload as a u64, if it is at least 8 bytes.
    pub fn u64(&self) -> Option<u64> {
        self.payload.get(..8).map(|s| {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            u64::from_ne_bytes(b)
        })
    }
    /// The attributes inside this one.
    pub fn children(&self) -> Result<Vec<Attribute<'a>>, NetlinkError> {
        attributes(self.payload)
    }
}

/// Splits a buffer into its attributes (checked: every length inside the buffer).
pub fn attributes(buf: &[u8]) -> Result<Vec<Attribute<'_>>, NetlinkError> {
    let mut out = Vec::new();
    let mut at = 0;
    while buf.len() - at >= NLA_HDRLEN {
        let len = read_u16(buf, at).unwrap_or(0) as usize;
        let kind = read_u16(buf, at + 2).unwrap_or(0);
        let available = buf.len() - at;
        if len < NLA_HDRLEN || len > available {
            return Err(NetlinkError::BadAttributeLength {
                offset: at,
                len,
                available,
            });
        }
        out.push(Attribute {
            kind: kind & !(NLA_F_NESTED | NLA_F_NET_BYTEORDER),
            nested: kind & NLA_F_NESTED != 0,
            payload: &buf[at + NLA_HDRLEN..at + len],
        });
        at += align(len).min(available);
    }
    Ok(out)
}

/// Builds one netlink request: header, a fixed family header, attributes (nests closed in
/// order). The length field is filled by [`MessageBuilder::finish`].
#[derive(Debug, Clone)]
pub struct MessageBuilder {
    buf: Vec<u8>,
    nests: Vec<usize>,
}

impl MessageBuilder {
    /// A request of `kind` with `flags`, sequence number `seq`, port id 0 (the kernel).
    pub fn new(kind: u16, flags: u16, seq: u32) -> Self {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(&kind.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes());
        MessageBuilder {
            buf,
            nests: Vec::new(),
        }
    }
    /// Appends raw bytes (a family header such as `struct dcbmsg`), padded to 4.
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(bytes);
        self.pad();
        self
    }
    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }
    /// Appends an attribute with `payload`, padded to 4.
    pub fn attr(&mut self, kind: u16, payload: &[u8]) -> &mut Self {
        let len = (NLA_HDRLEN + payload.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&kind.to_ne_bytes());
        self.buf.extend_from_slice(payload);
        self.pad();
        self
    }
    /// Appends a NUL-terminated string attribute.
    pub fn attr_str(&mut self, kind: u16, s: &str) -> &mut Self {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.attr(kind, &v)
    }
    /// Opens a nested attribute (`NLA_F_NESTED` set, as libmnl's `mnl_attr_nest_start`).
    pub fn nest(&mut self, kind: u16) -> &mut Self {
        self.nests.push(self.buf.len());
        self.buf.extend_from_slice(&0u16.to_ne_bytes());
        self.buf.extend_from_slice(&(kind | NLA_F_NESTED).to_ne_bytes());
        self
    }
    /// Closes the innermost open nest.
    pub fn end_nest(&mut self) -> &mut Self {
        if let Some(start) = self.nests.pop() {
            let len = (self.buf.len() - start) as u16;
            self.buf[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        }
        self
    }
    /// Closes open nests, writes the length and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        while !self.nests.is_empty() {
            self.end_nest();
        }
        let len = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_whose_length_runs_past_the_datagram_is_refused() {
        let mut m = MessageBuilder::new(78, NLM_F_REQUEST, 1).finish();
        m[0] = 200;
        assert_eq!(
            parse_messages(&m),
            Err(NetlinkError::BadMessageLength {
                offset: 0,
                len: 200,
                available: 16
            })
        );
    }

    #[test]
    fn an_attribute_shorter_than_its_header_is_refused() {
        assert!(matches!(
            attributes(&[2, 0, 1, 0, 0, 0]),
            Err(NetlinkError::BadAttributeLength { len: 2, .. })
        ));
    }

    #[test]
    fn nests_carry_the_nested_flag_and_their_whole_length() {
        let mut b = MessageBuilder::new(79, NLM_F_REQUEST | NLM_F_ACK, 7);
        b.nest(13).attr(1, &[1, 2, 3]).end_nest();
        let m = b.finish();
        let msgs = parse_messages(&m).unwrap();
        assert_eq!(msgs.len(), 1);
        let a = attributes(msgs[0].payload).unwrap();
        assert_eq!(a.len(), 1);
        assert!(a[0].nested);
        assert_eq!(a[0].kind, 13);
        let c = a[0].children().unwrap();
        assert_eq!(c[0].payload, &[1, 2, 3]);
    }

    #[test]
    fn an_error_message_gives_the_positive_errno() {
        let mut b = MessageBuilder::new(NLMSG_ERROR, 0, 1);
        b.raw(&(-libc::EOPNOTSUPP).to_ne_bytes());
        let m = b.finish();
        let msgs = parse_messages(&m).unwrap();
        assert_eq!(
            msgs[0].error(),
            Some(Err(NetlinkError::Kernel {
                errno: libc::EOPNOTSUPP
            }))
        );
    }

    #[test]
    fn truncated_garbage_never_panics() {
        for n in 0..64usize {
            let junk: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let _ = parse_messages(&junk);
            let _ = attributes(&junk);
        }
    }
}
