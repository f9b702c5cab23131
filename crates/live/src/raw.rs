//! A raw AF_PACKET socket bound to one interface and one EtherType: open, join a multicast
//! address, send and receive whole Ethernet frames (no FCS). Needs CAP_NET_RAW only.

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::AsRawFd;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

/// Why a live operation failed; every variant names the interface.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The process lacks CAP_NET_RAW.
    #[error(
        "{op} on {iface}: permission denied: AF_PACKET sockets need the CAP_NET_RAW capability \
         (run as root, or `setcap cap_net_raw+ep` on the binary)"
    )]
    NeedCapNetRaw {
        /// What was being done.
        op: &'static str,
        /// The interface.
        iface: String,
    },
    /// No interface of that name in this network namespace.
    #[error("interface {iface:?} does not exist (see `ip link`)")]
    NoSuchInterface {
        /// The interface.
        iface: String,
    },
    /// The interface exists but is administratively down.
    #[error("interface {iface} is down (bring it up: `ip link set {iface} up`)")]
    InterfaceDown {
        /// The interface.
        iface: String,
    },
    /// The interface was up when opened and went down while in use.
    #[error("interface {iface} went down ({op})")]
    WentDown {
        /// What was being done.
        op: &'static str,
        /// The interface.
        iface: String,
    },
    /// The interface was deleted while in use.
    #[error("interface {iface} was deleted ({op})")]
    Deleted {
        /// What was being done.
        op: &'static str,
        /// The interface.
        iface: String,
    },
    /// The interface name cannot be one (empty, too long, or contains NUL).
    #[error("{iface:?} is not a valid interface name (1..=15 bytes, no NUL)")]
    BadName {
        /// The name given.
        iface: String,
    },
    /// Any other system call failure.
    #[error("{op} on {iface}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The interface.
        iface: String,
        /// The OS error.
        source: io::Error,
    },
}

impl LiveError {
    fn io(op: &'static str, iface: &str, source: io::Error) -> Self {
        if matches!(source.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) {
            LiveError::NeedCapNetRaw {
                op,
                iface: iface.to_owned(),
            }
        } else if source.raw_os_error() == Some(libc::ENETDOWN) {
            LiveError::InterfaceDown {
                iface: iface.to_owned(),
            }
        } else if source.raw_os_error() == Some(libc::ENODEV) || source.raw_os_error() == Some(libc::ENXIO) {
            LiveError::NoSuchInterface {
                iface: iface.to_owned(),
            }
        } else {
            LiveError::Io {
                op,
                iface: iface.to_owned(),
                source,
            }
        }
    }
}

/// A received frame's length and whether the kernel says it was addressed to us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes of the frame in the buffer (truncated to the buffer when longer).
    pub len: usize,
    /// The kernel's packet type (PACKET_HOST, PACKET_MULTICAST, ...).
    pub pkttype: u8,
}

/// How long an interface that went down is watched for its deletion (which takes it down
/// first) before [`RawSocket::in_use_error`] says it went down.
pub const DELETION_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// A raw AF_PACKET socket on one interface for one EtherType.
#[derive(Debug)]
pub struct RawSocket {
    sock: Socket,
    iface: String,
    ifindex: i32,
    mac: [u8; 6],
    ethertype: u16,
}

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_AUXDATA: libc::c_int = 8;
/// The kernel's packet type of a frame this host sent.
pub const PACKET_OUTGOING: u8 = 4;
const ETH_P_ALL: u16 = 0x0003;

/// A frame from a tap socket ([`RawSocket::recv_tapped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tapped {
    /// Bytes of the frame in the buffer (the filter may have cut it short).
    pub len: usize,
    /// Whether this host sent it.
    pub outgoing: bool,
    /// The 802.1Q tag the device took off (or will put on), from the kernel's auxiliary data;
    /// a tag still in the frame is in the buffer.
    pub vlan_tci: Option<u16>,
    /// The kernel's timestamp (wall clock), with [`RawSocket::enable_timestamps`].
    pub stamp: Option<std::time::SystemTime>,
}

/// An `ifreq` carrying `name`.
fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut r: libc::ifreq = unsafe { zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(name.as_bytes()) {
        *d = *s as libc::c_char;
    }
    r
}

fn setsockopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, val: &T) -> io::Result<()> {
    // SAFETY: `val` points to a live T of the given size for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl RawSocket {
    /// Opens a socket on interface `iface` receiving only frames of `ethertype`. Fails with
    /// [`LiveError::NeedCapNetRaw`] without the capability, [`LiveError::NoSuchInterface`]
    /// or [`LiveError::InterfaceDown`] when the interface is missing or down.
    pub fn open(iface: &str, ethertype: u16) -> Result<Self, LiveError> {
        Self::open_with(iface, ethertype, false)
    }

    /// Opens a socket on `iface` that sees every frame the interface receives and every frame
    /// this host sends through it (ETH_P_ALL, outgoing kept: what tcpdump sees); attach a
    /// filter ([`RawSocket::attach_filter`]) to keep the rest out. Frames sent with
    /// PACKET_QDISC_BYPASS (`lossless gen`'s default) skip the taps and are not seen.
    pub fn open_tap(iface: &str) -> Result<Self, LiveError> {
        Self::open_with(iface, ETH_P_ALL, true)
    }

    fn open_with(iface: &str, ethertype: u16, outgoing: bool) -> Result<Self, LiveError> {
        let cname = CString::new(iface).map_err(|_| LiveError::BadName {
            iface: iface.to_owned(),
        })?;
        if iface.is_empty() || iface.len() >= libc::IFNAMSIZ {
            return Err(LiveError::BadName {
                iface: iface.to_owned(),
            });
        }
        // SAFETY: cname is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(LiveError::NoSuchInterface {
                iface: iface.to_owned(),
            });
        }
        // Protocol 0 receives nothing until bind() names the interface and EtherType, so no
        // frame from another interface slips in between.
        let sock = Socket::new(Domain::PACKET, Type::RAW, Some(Protocol::from(0)))
            .map_err(|e| LiveError::io("opening AF_PACKET socket", iface, e))?;
        let fd = sock.as_raw_fd();
        let mut req = ifreq(iface);
        // SAFETY: SIOCGIFFLAGS reads a name from and writes flags into a valid ifreq.
        if unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) } != 0 {
            return Err(LiveError::io(
                "reading interface flags",
                iface,
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: the kernel filled ifru_flags.
        let flags = unsafe { req.ifr_ifru.ifru_flags } as libc::c_int;
        if flags & libc::IFF_UP == 0 {
            return Err(LiveError::InterfaceDown {
                iface: iface.to_owned(),
            });
        }
        let mut req = ifreq(iface);
        // SAFETY: as above, for the hardware address.
        if unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR, &mut req) } != 0 {
            return Err(LiveError::io(
                "reading interface MAC",
                iface,
                io::Error::last_os_error(),
            ));
        }
        let mut mac = [0u8; 6];
        // SAFETY: the kernel filled ifru_hwaddr.
        let hw = unsafe { req.ifr_ifru.ifru_hwaddr };
        for (d, s) in mac.iter_mut().zip(hw.sa_data.iter()) {
            *d = *s as u8;
        }
        // SAFETY: sockaddr_ll is plain old data.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ethertype.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: sll is a valid sockaddr_ll of the size passed.
        let rc = unsafe {
            libc::bind(
                fd,
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(LiveError::io(
                "binding AF_PACKET socket",
                iface,
                io::Error::last_os_error(),
            ));
        }
        if !outgoing {
            // Frames this host sends are not looped back to us (Linux 4.20+; checked on receive
            // too).
            let _ = setsockopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1 as &libc::c_int);
        }
        sock.set_nonblocking(true)
            .map_err(|e| LiveError::io("setting non-blocking", iface, e))?;
        Ok(RawSocket {
            sock,
            iface: iface.to_owned(),
            ifindex,
            mac,
            ethertype,
        })
    }

    /// Receives frames sent to the multicast MAC `addr` (PACKET_ADD_MEMBERSHIP).
    pub fn join_multicast(&self, addr: [u8; 6]) -> Result<(), LiveError> {
        // SAFETY: packet_mreq is plain old data.
        let mut mreq: libc::packet_mreq = unsafe { zeroed() };
        mreq.mr_ifindex = self.ifindex;
        mreq.mr_type = libc::PACKET_MR_MULTICAST as u16;
        mreq.mr_alen = 6;
        mreq.mr_address[..6].copy_from_slice(&addr);
        setsockopt(
            self.sock.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq,
        )
        .map_err(|e| LiveError::io("joining multicast group", &self.iface, e))
    }

    /// Sends one whole Ethernet frame (destination, source, EtherType, payload; no FCS).
    pub fn send(&self, frame: &[u8]) -> Result<(), LiveError> {
        // SAFETY: frame is a valid buffer of the given length.
        let n = unsafe { libc::send(self.sock.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            return Err(LiveError::io(
                "sending frame",
                &self.iface,
                io::Error::last_os_error(),
            ));
        }
        Ok(())
    }

    /// Waits up to `timeout` for one frame from the wire (frames this host sent are skipped);
    /// `None` when none came.
    pub fn recv(&self, buf: &mut [u8], timeout: Duration) -> Result<Option<Received>, LiveError> {
        let fd = self.sock.as_raw_fd();
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: pfd is one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(None);
            }
            return Err(LiveError::io("waiting for frames", &self.iface, e));
        }
        if rc == 0 {
            return Ok(None);
        }
        // SAFETY: sockaddr_ll is plain old data.
        let mut from: libc::sockaddr_ll = unsafe { zeroed() };
        let mut fromlen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: buf and from are valid for the sizes passed.
        let n = unsafe {
            libc::recvfrom(
                fd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
                (&mut from as *mut libc::sockaddr_ll).cast(),
                &mut fromlen,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) {
                return Ok(None);
            }
            return Err(LiveError::io("receiving frame", &self.iface, e));
        }
        if from.sll_pkttype == PACKET_OUTGOING {
            return Ok(None);
        }
        Ok(Some(Received {
            len: (n as usize).min(buf.len()),
            pkttype: from.sll_pkttype,
        }))
    }

    /// The error `e`, met while the socket was in use, told more exactly: the interface was
    /// up when the socket opened, so "down" means it went down, and an interface whose index
    /// is no longer this socket's was deleted (the kernel says ENETDOWN for both). A deletion
    /// takes the interface down first, so one that is still there is watched for up to
    /// [`DELETION_GRACE`] before it is said to have gone down.
    pub fn in_use_error(&self, op: &'static str, e: LiveError) -> LiveError {
        let gone = |iface: String| {
            let index = || {
                CString::new(iface.as_str())
                    // SAFETY: a valid NUL-terminated string.
                    .map(|c| unsafe { libc::if_nametoindex(c.as_ptr()) } as i32)
                    .unwrap_or(0)
            };
            let until = std::time::Instant::now() + DELETION_GRACE;
            while index() == self.ifindex {
                if std::time::Instant::now() >= until {
                    return LiveError::WentDown { op, iface };
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            LiveError::Deleted { op, iface }
        };
        match e {
            LiveError::InterfaceDown { iface } | LiveError::NoSuchInterface { iface } => gone(iface),
            LiveError::Io { iface, source, .. }
                if matches!(
                    source.raw_os_error(),
                    Some(libc::ENETDOWN) | Some(libc::ENODEV) | Some(libc::ENXIO)
                ) =>
            {
                gone(iface)
            }
            e => e,
        }
    }

    /// Asks for a receive buffer of `bytes` (SO_RCVBUFFORCE when privileged, else SO_RCVBUF,
    /// which the kernel caps at net.core.rmem_max), so bursts wait instead of being dropped.
    pub fn set_recv_buffer(&self, bytes: usize) -> Result<(), LiveError> {
        let n = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        let fd = self.sock.as_raw_fd();
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &n)
            .or_else(|_| setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &n))
            .map_err(|e| LiveError::io("setting the receive buffer size", &self.iface, e))
    }

    /// Asks the kernel to stamp every received frame with its arrival time (SO_TIMESTAMPNS),
    /// which [`RawSocket::recv_timed`] returns.
    pub fn enable_timestamps(&self) -> Result<(), LiveError> {
        setsockopt(
            self.sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &(1 as libc::c_int),
        )
        .map_err(|e| LiveError::io("enabling SO_TIMESTAMPNS", &self.iface, e))
    }

    /// As [`RawSocket::recv`], also returning the kernel's arrival time (wall clock) when
    /// [`RawSocket::enable_timestamps`] was called.
    pub fn recv_timed(
        &self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> Result<Option<(Received, Option<std::time::SystemTime>)>, LiveError> {
        Ok(self
            .recv_msg(buf, timeout)?
            .and_then(|(t, pkttype)| (!t.outgoing).then_some((Received { len: t.len, pkttype }, t.stamp))))
    }

    /// Waits up to `timeout` for one frame of a tap socket ([`RawSocket::open_tap`]), sent or
    /// received, with its direction, VLAN tag (after [`RawSocket::enable_auxdata`]) and
    /// timestamp; `None` when none came.
    pub fn recv_tapped(&self, buf: &mut [u8], timeout: Duration) -> Result<Option<Tapped>, LiveError> {
        Ok(self.recv_msg(buf, timeout)?.map(|(t, _)| t))
    }

    /// Asks for each frame's auxiliary data (PACKET_AUXDATA): the VLAN tag a device offload
    /// took out of the frame, which [`RawSocket::recv_tapped`] returns.
    pub fn enable_auxdata(&self) -> Result<(), LiveError> {
        setsockopt(
            self.sock.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_AUXDATA,
            &(1 as libc::c_int),
        )
        .map_err(|e| LiveError::io("enabling PACKET_AUXDATA", &self.iface, e))
    }

    fn recv_msg(&self, buf: &mut [u8], timeout: Duration) -> Result<Option<(Tapped, u8)>, LiveError> {
        let fd = self.sock.as_raw_fd();
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: pfd is one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc <= 0 {
            let e = io::Error::last_os_error();
            if rc == 0 || e.kind() == io::ErrorKind::Interrupted {
                return Ok(None);
            }
            return Err(LiveError::io("waiting for frames", &self.iface, e));
        }
        // SAFETY: sockaddr_ll and msghdr are plain old data.
        let mut from: libc::sockaddr_ll = unsafe { zeroed() };
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let mut control = [0u64; 16];
        // SAFETY: as above.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_name = (&mut from as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = size_of::<[u64; 16]>();
        // SAFETY: msg points to live buffers of the sizes it names.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) {
                return Ok(None);
            }
            return Err(LiveError::io("receiving frame", &self.iface, e));
        }
        let mut stamp = None;
        let mut vlan_tci = None;
        // SAFETY: the CMSG macros walk the control buffer the kernel filled, within
        // msg_controllen; SCM_TIMESTAMPNS data is one timespec and PACKET_AUXDATA one
        // tpacket_auxdata (both read unaligned).
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    if ts.tv_sec >= 0 && (0..1_000_000_000).contains(&ts.tv_nsec) {
                        stamp =
                            Some(std::time::UNIX_EPOCH + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32));
                    }
                } else if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
                    let aux: libc::tpacket_auxdata = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                        vlan_tci = Some(aux.tp_vlan_tci);
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        Ok(Some((
            Tapped {
                len: (n as usize).min(buf.len()),
                outgoing: from.sll_pkttype == PACKET_OUTGOING,
                vlan_tci,
                stamp,
            },
            from.sll_pkttype,
        )))
    }

    /// Whether the interface is up with carrier (IFF_UP and IFF_RUNNING).
    pub fn is_up(&self) -> Result<bool, LiveError> {
        let mut req = ifreq(&self.iface);
        // SAFETY: SIOCGIFFLAGS reads a name from and writes flags into a valid ifreq.
        if unsafe { libc::ioctl(self.sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } != 0 {
            return Err(LiveError::io(
                "reading interface flags",
                &self.iface,
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: the kernel filled ifru_flags.
        let flags = unsafe { req.ifr_ifru.ifru_flags } as libc::c_int;
        Ok(flags & libc::IFF_UP != 0 && flags & libc::IFF_RUNNING != 0)
    }

    /// Sends the frames of `frames` with one `sendmmsg` call per batch, retrying briefly when
    /// the device queue is full; returns how many were sent (all of them unless interrupted).
    pub fn send_batch(&self, frames: &[&[u8]]) -> Result<usize, LiveError> {
        let mut iov: Vec<libc::iovec> = frames
            .iter()
            .map(|f| libc::iovec {
                iov_base: f.as_ptr() as *mut libc::c_void,
                iov_len: f.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain old data; all-zero is a valid value.
        let mut msgs: Vec<libc::mmsghdr> = (0..frames.len()).map(|_| unsafe { zeroed() }).collect();
        for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        let mut done = 0usize;
        let mut busy_retries = 0u32;
        while done < msgs.len() {
            let left = (msgs.len() - done).min(u32::MAX as usize) as libc::c_uint;
            // SAFETY: msgs[done..] are valid mmsghdrs whose iovecs point into `frames`, which
            // outlive the call.
            let n = unsafe { libc::sendmmsg(self.sock.as_raw_fd(), msgs[done..].as_mut_ptr(), left, 0) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => return Ok(done),
                    Some(libc::EAGAIN) | Some(libc::ENOBUFS) if busy_retries < 10_000 => {
                        busy_retries += 1;
                        self.wait_writable(Duration::from_millis(1));
                        continue;
                    }
                    _ => return Err(LiveError::io("sending frames", &self.iface, e)),
                }
            }
            done += n as usize;
        }
        Ok(done)
    }

    /// Waits up to `timeout` for room in the socket's send buffer (with a TX ring: for the
    /// ring's next slot to come back).
    pub(crate) fn wait_writable(&self, timeout: Duration) {
        let mut pfd = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: pfd is one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, timeout.as_millis().min(1000) as libc::c_int) };
    }

    /// Sends straight to the device driver, skipping the qdisc layer (PACKET_QDISC_BYPASS):
    /// faster, but frames are dropped rather than queued when the device is busy.
    pub fn set_qdisc_bypass(&self, on: bool) -> Result<(), LiveError> {
        setsockopt(
            self.sock.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_QDISC_BYPASS,
            &libc::c_int::from(on),
        )
        .map_err(|e| LiveError::io("setting PACKET_QDISC_BYPASS", &self.iface, e))
    }

    /// Attaches a classic BPF program that accepts only untagged frames of EtherType
    /// `ethertype` (the kernel drops the rest before they are queued to this socket).
    pub fn attach_ethertype_filter(&self, ethertype: u16) -> Result<(), LiveError> {
        self.attach_filter(&ethertype_filter(ethertype))
    }

    /// Attaches the classic BPF program `prog` (e.g. [`watch_filter`]).
    pub fn attach_filter(&self, prog: &[libc::sock_filter]) -> Result<(), LiveError> {
        let mut prog = prog.to_vec();
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_mut_ptr(),
        };
        setsockopt(
            self.sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            &fprog,
        )
        .map_err(|e| LiveError::io("attaching the EtherType BPF filter", &self.iface, e))
    }

    /// Frames the kernel dropped for this socket since the last call (PACKET_STATISTICS).
    pub fn take_drops(&self) -> Result<u32, LiveError> {
        // SAFETY: tpacket_stats is plain old data.
        let mut st: libc::tpacket_stats = unsafe { zeroed() };
        let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: st and len are valid for the sizes passed.
        let rc = unsafe {
            libc::getsockopt(
                self.sock.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(LiveError::io(
                "reading PACKET_STATISTICS",
                &self.iface,
                io::Error::last_os_error(),
            ));
        }
        Ok(st.tp_drops)
    }

    /// The interface's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }
    /// The interface name.
    pub fn iface(&self) -> &str {
        &self.iface
    }
    /// The interface index.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }
    /// The EtherType the socket receives.
    pub fn ethertype(&self) -> u16 {
        self.ethertype
    }
}

/// Classic BPF: `ldh [12]; jeq #ethertype, accept, drop; accept: ret #0x40000; drop: ret #0`.
pub fn ethertype_filter(ethertype: u16) -> [libc::sock_filter; 4] {
    let op = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    [
        op(libc::BPF_LD | libc::BPF_H | libc::BPF_ABS, 0, 0, 12),
        op(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            0,
            1,
            ethertype.into(),
        ),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, 0x40000),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, 0),
    ]
}

/// Bytes of a data frame a tap socket keeps: the Ethernet header and one 802.1Q tag.
pub const DATA_SNAP: u32 = 18;

/// Classic BPF for `lossless watch`'s tap: untagged MAC Control frames (EtherType 0x8808)
/// whole; with `data`, also the first [`DATA_SNAP`] bytes of VLAN-tagged frames (tag taken
/// off by the device, or 0x8100/0x88a8 in the frame), so their priority can be counted.
pub fn watch_filter(data: bool) -> Vec<libc::sock_filter> {
    let op = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let ld_h12 = op(libc::BPF_LD | libc::BPF_H | libc::BPF_ABS, 0, 0, 12);
    let ret = |k: u32| op(libc::BPF_RET | libc::BPF_K, 0, 0, k);
    let jeq = |k: u32, jt: u8, jf: u8| op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, jt, jf, k);
    if !data {
        return ethertype_filter(0x8808).to_vec();
    }
    let vlan_present = (libc::SKF_AD_OFF + libc::SKF_AD_VLAN_TAG_PRESENT) as u32;
    // jump offsets count from the next instruction: CTRL is 7, DATA 8, DROP 6
    vec![
        /* 0 */ ld_h12,
        /* 1 */ jeq(0x8808, 5, 0),
        /* 2 */ jeq(0x8100, 5, 0),
        /* 3 */ jeq(0x88a8, 4, 0),
        /* 4 */ op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, vlan_present),
        /* 5 */ jeq(0, 0, 2),
        /* 6 DROP */ ret(0),
        /* 7 CTRL */ ret(0x40000),
        /* 8 DATA */ ret(DATA_SNAP),
    ]
}

impl AsRawFd for RawSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.sock.as_raw_fd()
    }
}
