//! A PACKET_MMAP transmit ring (TPACKET_V2) on a [`RawSocket`]: frames are written into a ring
//! shared with the kernel, marked ready, and one `send()` hands the kernel all of them.
//!
//! Each slot carries a 10-byte virtio-net header (PACKET_VNET_HDR) before the frame whose
//! `hdr_len` covers the whole frame: the kernel then copies the frame into the skb's linear
//! area. Without it the kernel copies only the 14-byte Ethernet header and attaches the rest as
//! a page fragment of the ring, which a veth must copy again into a fresh page
//! (`skb_copy_ubufs`) — on a veth pair that made the ring slower than `sendmmsg`.

use std::io;
use std::mem::size_of;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

use crate::raw::{LiveError, RawSocket};

/// Bytes per ring slot (header + frame); frames longer than `SLOT - DATA_OFFSET` are refused.
const SLOT: usize = 2048;
/// Slots per ring block.
const SLOTS_PER_BLOCK: usize = 8;
/// Where a frame starts in its slot: TPACKET_ALIGN(sizeof(tpacket2_hdr)) (the kernel's
/// `tp_hdrlen - sizeof(sockaddr_ll)` for TPACKET_V2).
const DATA_OFFSET: usize = 32;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_WRONG_FORMAT: u32 = 4;
/// How long a slot may stay with the kernel before sending is declared stuck.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);
/// sizeof(struct virtio_net_hdr): flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
const VNET_HDR_LEN: usize = 10;

/// A TPACKET_V2 TX ring of `slots` frames mapped from `sock`.
#[derive(Debug)]
pub struct TxRing<'a> {
    sock: &'a RawSocket,
    map: NonNull<u8>,
    len: usize,
    slots: usize,
    next: usize,
    /// The frame (virtio-net header included) that the slots marked in `filled` hold: a
    /// constant frame is written into each slot once, later sends only flip the status word.
    content: Vec<u8>,
    filled: Vec<bool>,
}

fn io_err(sock: &RawSocket, op: &'static str, e: io::Error) -> LiveError {
    LiveError::Io {
        op,
        iface: sock.iface().to_owned(),
        source: e,
    }
}

fn setopt<T>(sock: &RawSocket, name: libc::c_int, val: &T, op: &'static str) -> Result<(), LiveError> {
    // SAFETY: `val` points to a live T of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_PACKET,
            name,
            (val as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io_err(sock, op, io::Error::last_os_error()))
    }
}

impl<'a> TxRing<'a> {
    /// Sets TPACKET_V2 and maps a TX ring of `slots` (rounded up to a multiple of 8) on `sock`.
    /// The socket must not have a ring yet.
    pub fn new(sock: &'a RawSocket, slots: usize) -> Result<Self, LiveError> {
        let blocks = slots.div_ceil(SLOTS_PER_BLOCK).clamp(1, 4096);
        let slots = blocks * SLOTS_PER_BLOCK;
        setopt(
            sock,
            libc::PACKET_VNET_HDR,
            &(1 as libc::c_int),
            "enabling PACKET_VNET_HDR",
        )?;
        setopt(
            sock,
            libc::PACKET_VERSION,
            &(libc::tpacket_versions::TPACKET_V2 as libc::c_int),
            "setting TPACKET_V2",
        )?;
        let req = libc::tpacket_req {
            tp_block_size: (SLOT * SLOTS_PER_BLOCK) as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: SLOT as u32,
            tp_frame_nr: slots as u32,
        };
        setopt(sock, libc::PACKET_TX_RING, &req, "creating the PACKET_TX_RING")?;
        let len = SLOT * slots;
        // SAFETY: maps the ring the kernel just allocated for this socket; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                sock.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io_err(sock, "mapping the TX ring", io::Error::last_os_error()));
        }
        let map = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io_err(sock, "mapping the TX ring", io::Error::other("null mapping")))?;
        Ok(TxRing {
            sock,
            map,
            len,
            slots,
            next: 0,
            content: Vec::new(),
            filled: vec![false; slots],
        })
    }

    /// Slots in the ring.
    pub fn slots(&self) -> usize {
        self.slots
    }

    fn hdr(&self, i: usize) -> *mut libc::tpacket2_hdr {
        // SAFETY: slot i < slots lies inside the mapping; slots are 2048-byte aligned.
        unsafe { self.map.as_ptr().add(i * SLOT).cast() }
    }

    fn status(&self, i: usize) -> u32 {
        // SAFETY: the header is inside the mapping; the kernel writes it concurrently, hence volatile.
        unsafe { std::ptr::read_volatile(&raw const (*self.hdr(i)).tp_status) }
    }

    /// Hands the marked frames to the kernel and returns as soon as they are queued (no wait
    /// for them to leave), so the next batch is written while the receiver still works through
    /// this one. A frame the device refused (ENOBUFS: e.g. a veth whose peer's ring is full)
    /// stays marked and goes out with the next flush.
    fn flush(&self) -> Result<(), LiveError> {
        // SAFETY: a zero-length send on a socket with a TX ring transmits the ring's frames.
        let n = unsafe { libc::send(self.sock.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if !matches!(
                e.raw_os_error(),
                Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::ENOBUFS)
            ) {
                return Err(io_err(self.sock, "sending the TX ring", e));
            }
        }
        Ok(())
    }

    /// Waits for slot `i` to come back from the kernel, flushing meanwhile; gives up after
    /// `DRAIN_LIMIT` without progress.
    fn wait_slot(&self, i: usize) -> Result<(), LiveError> {
        let mut spins = 0u32;
        let mut since: Option<Instant> = None;
        loop {
            match self.status(i) {
                TP_STATUS_AVAILABLE => return Ok(()),
                TP_STATUS_WRONG_FORMAT => return Err(self.refused()),
                _ => {}
            }
            self.flush()?;
            spins += 1;
            if spins > 64 {
                // Busy for a while: sleep until the kernel frees a slot (or 1 ms).
                let t0 = *since.get_or_insert_with(Instant::now);
                if t0.elapsed() > DRAIN_LIMIT {
                    return Err(io_err(
                        self.sock,
                        "sending the TX ring",
                        io::Error::other("ring slots never came back"),
                    ));
                }
                self.sock.wait_writable(Duration::from_millis(1));
            }
        }
    }

    /// Waits until the kernel has sent every frame queued so far (re-sending the ones a busy
    /// device refused); fails after `DRAIN_LIMIT` without the ring emptying.
    pub fn drain(&self) -> Result<(), LiveError> {
        for k in 0..self.slots {
            self.wait_slot((self.next + k) % self.slots)?;
        }
        Ok(())
    }

    fn refused(&self) -> LiveError {
        io_err(
            self.sock,
            "sending the TX ring",
            io::Error::other("the kernel refused a frame's format"),
        )
    }

    /// Queues `count` copies of `frame` and hands them to the kernel without waiting for them
    /// to leave ([`TxRing::drain`] waits); returns how many were queued.
    pub fn send_copies(&mut self, frame: &[u8], count: usize) -> Result<usize, LiveError> {
        if frame.len() > SLOT - DATA_OFFSET - VNET_HDR_LEN {
            return Err(io_err(
                self.sock,
                "queueing a frame",
                io::Error::other("frame longer than a ring slot"),
            ));
        }
        // virtio_net_hdr: no checksum offload, no GSO, hdr_len = the whole frame (legacy
        // virtio byte order, which the kernel's packet socket takes as the host's).
        let mut vnet = [0u8; VNET_HDR_LEN];
        vnet[2..4].copy_from_slice(&(frame.len() as u16).to_ne_bytes());
        if self.content.len() != VNET_HDR_LEN + frame.len()
            || self.content[..VNET_HDR_LEN] != vnet
            || self.content[VNET_HDR_LEN..] != *frame
        {
            self.content.clear();
            self.content.extend_from_slice(&vnet);
            self.content.extend_from_slice(frame);
            self.filled.fill(false);
        }
        let mut queued = 0;
        while queued < count {
            let i = self.next;
            if self.status(i) != TP_STATUS_AVAILABLE {
                // The ring is full of frames still being sent.
                self.wait_slot(i)?;
            }
            let h = self.hdr(i);
            // SAFETY: the slot is AVAILABLE, so the kernel does not touch it until we set
            // SEND_REQUEST; header and frame lie within the slot (length checked above).
            unsafe {
                if !self.filled[i] {
                    let data = self.map.as_ptr().add(i * SLOT + DATA_OFFSET);
                    std::ptr::copy_nonoverlapping(self.content.as_ptr(), data, self.content.len());
                    self.filled[i] = true;
                }
                (*h).tp_len = self.content.len() as u32;
                fence(Ordering::Release);
                std::ptr::write_volatile(&raw mut (*h).tp_status, TP_STATUS_SEND_REQUEST);
            }
            self.next = (i + 1) % self.slots;
            queued += 1;
        }
        self.flush()?;
        Ok(queued)
    }
}

impl Drop for TxRing<'_> {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.len) };
    }
}
