//! The thin I/O half of netlink: an `AF_NETLINK` socket that sends one request and returns
//! the payloads of the replies that answer it (same sequence number), ending at the
//! acknowledgement, `NLMSG_DONE`, or the single non-multipart reply.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::{NLM_F_MULTI, NLMSG_DONE, NetlinkError, parse_messages};

/// `NETLINK_ROUTE` (rtnetlink, dcbnl).
pub const NETLINK_ROUTE: i32 = libc::NETLINK_ROUTE;
/// `NETLINK_GENERIC` (generic netlink, ethtool).
pub const NETLINK_GENERIC: i32 = libc::NETLINK_GENERIC;

/// Largest datagram read: 64 KiB (the kernel's replies here are at most a few KiB).
pub const RECV_MAX: usize = 64 * 1024;
/// Most datagrams one request may answer with before it is called malformed.
pub const MAX_DATAGRAMS: usize = 64;

/// Why a netlink exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// The socket could not be made, or send/recv failed.
    #[error("netlink socket: {what}: {}", super::plain_io_text(source))]
    Io {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kernel's reply was malformed or an error.
    #[error(transparent)]
    Netlink(#[from] NetlinkError),
}

impl SocketError {
    /// The kernel's errno, when the kernel refused the request.
    pub fn errno(&self) -> Option<i32> {
        match self {
            SocketError::Netlink(NetlinkError::Kernel { errno }) => Some(*errno),
            _ => None,
        }
    }
}

/// An `AF_NETLINK` socket of one protocol, talking to the kernel.
#[derive(Debug)]
pub struct NetlinkSocket {
    fd: OwnedFd,
    seq: u32,
}

impl NetlinkSocket {
    /// Opens a socket of `protocol` (`NETLINK_ROUTE`, `NETLINK_GENERIC`) with a 2 s receive
    /// timeout (the kernel answers at once; a missing answer must not hang a tool).
    pub fn open(protocol: i32) -> Result<Self, SocketError> {
        // SAFETY: plain socket(2); the fd is owned at once.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, protocol) };
        if fd < 0 {
            return Err(SocketError::Io {
                what: "socket(AF_NETLINK)",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: fd is a fresh, valid descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let tv = libc::timeval {
            tv_sec: 2,
            tv_usec: 0,
        };
        // SAFETY: valid fd, pointer to a live timeval of the right size.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(SocketError::Io {
                what: "setsockopt(SO_RCVTIMEO)",
                source: std::io::Error::last_os_error(),
            });
        }
        let seq = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_secs() as u32;
        Ok(NetlinkSocket { fd, seq })
    }

    /// The next sequence number to put in a request.
    pub fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Sends `request` (whose sequence number is `seq`) and returns each reply's type,
    /// flags and payload, until the acknowledgement, `NLMSG_DONE` or a single reply; a kernel
    /// error ends it with [`NetlinkError::Kernel`].
    pub fn request(&self, request: &[u8], seq: u32) -> Result<Vec<(u16, Vec<u8>)>, SocketError> {
        // SAFETY: zeroed sockaddr_nl is valid; nl_family set below.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: valid fd, buffer and address of the right sizes.
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                request.as_ptr().cast(),
                request.len(),
                0,
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(SocketError::Io {
                what: "sendto",
                source: std::io::Error::last_os_error(),
            });
        }
        let mut out = Vec::new();
        let mut buf = vec![0u8; RECV_MAX];
        for _ in 0..MAX_DATAGRAMS {
            // SAFETY: valid fd and buffer.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return Err(SocketError::Io {
                    what: "recv",
                    source: std::io::Error::last_os_error(),
                });
            }
            let got = &buf[..n as usize];
            let mut done = false;
            for m in parse_messages(got)? {
                if m.seq != seq {
                    continue;
                }
                if let Some(r) = m.error() {
                    r?;
                    done = true;
                    continue;
                }
                if m.kind == NLMSG_DONE {
                    done = true;
                    continue;
                }
                if m.flags & NLM_F_MULTI == 0 {
                    done = true;
                }
                out.push((m.kind, m.payload.to_vec()));
            }
            if done {
                return Ok(out);
            }
        }
        Err(NetlinkError::Unexpected(format!("no end after {MAX_DATAGRAMS} datagrams")).into())
    }
}
