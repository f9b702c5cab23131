//! A switch's packet buffer: how arriving frames are admitted, where they are charged, and
//! when the switch asks its upstream to pause and to resume. Two models, chosen by
//! [`crate::config::model::BufferModel`]: the shared buffer SONiC and merchant silicon document
//! ([`SharedBuffer`], the default) and the HPCC ns-3 switch's MMU ([`Ns3Mmu`]).

mod ns3;
mod shared;

pub use ns3::{NS3_RESERVE_BYTES, NS3_RESUME_OFFSET_BYTES, Ns3Mmu, Ns3Port};
pub use shared::{BufferTooSmall, SharedBuffer, Threshold};

use crate::frame::DropReason;

/// What the buffer decided about an arriving frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Stored; `xoff` is true when this arrival moved the pair into the XOFF state.
    Admitted {
        /// The pair just crossed into XOFF: the port must raise its flow-control request.
        xoff: bool,
    },
    /// Not stored.
    Dropped(DropReason),
}

/// The buffer of one switch, in the model the simulation uses.
#[derive(Clone, Debug)]
pub enum SwitchBuffer {
    /// The shared buffer with headroom per (port, lossless priority).
    Shared(SharedBuffer),
    /// The HPCC ns-3 switch's MMU.
    Ns3(Ns3Mmu),
}

impl SwitchBuffer {
    /// Decides about a frame of `len` bytes arriving on local port `port` at priority `prio`;
    /// `lossless` says whether the priority is lossless on that port.
    #[inline(always)]
    pub fn admit(&mut self, port: usize, prio: u8, len: u64, lossless: bool) -> Admission {
        match self {
            SwitchBuffer::Shared(b) => b.admit(port, prio, len, lossless),
            SwitchBuffer::Ns3(b) => b.admit(port, prio, len, lossless),
        }
    }

    /// Releases a departed frame of `len` bytes charged to (port, prio); true when the pair
    /// leaves XOFF (the port must release its flow-control request).
    #[inline(always)]
    pub fn release(&mut self, port: usize, prio: u8, len: u64) -> bool {
        match self {
            SwitchBuffer::Shared(b) => b.release(port, prio, len),
            SwitchBuffer::Ns3(b) => b.release(port, prio, len),
        }
    }

    /// Whether a frame leaves the buffer when it is dequeued (its transmission starts)
    /// rather than when its last bit has been sent.
    #[inline(always)]
    pub fn releases_at_dequeue(&self) -> bool {
        matches!(self, SwitchBuffer::Ns3(_))
    }

    /// Bytes charged to (port, prio) now.
    #[inline]
    pub fn occupancy(&self, port: usize, prio: u8) -> u64 {
        match self {
            SwitchBuffer::Shared(b) => b.occupancy(port, prio),
            SwitchBuffer::Ns3(b) => b.occupancy(port, prio),
        }
    }
    /// The largest number of bytes (port, prio) ever held.
    pub fn peak(&self, port: usize, prio: u8) -> u64 {
        match self {
            SwitchBuffer::Shared(b) => b.peak(port, prio),
            SwitchBuffer::Ns3(b) => b.peak(port, prio),
        }
    }
    /// The largest number of bytes the whole buffer ever held.
    pub fn peak_used(&self) -> u64 {
        match self {
            SwitchBuffer::Shared(b) => b.peak_used(),
            SwitchBuffer::Ns3(b) => b.peak_used(),
        }
    }
    /// Sets the peaks [`SwitchBuffer::peak`] and [`SwitchBuffer::peak_used`] report to those
    /// another process's copy of this switch reached (`peaks`: port by port, 8 priorities
    /// each; what does not fit is ignored): the merge of a run split over MPI ranks.
    pub fn set_peaks(&mut self, peaks: &[u64], used: u64) {
        match self {
            SwitchBuffer::Shared(b) => b.set_peaks(peaks, used),
            SwitchBuffer::Ns3(b) => b.set_peaks(peaks, used),
        }
    }
    /// Total size in bytes.
    pub fn size(&self) -> u64 {
        match self {
            SwitchBuffer::Shared(b) => b.size(),
            SwitchBuffer::Ns3(b) => b.size(),
        }
    }
    /// The headroom (port, prio) may use: its reserve, the port's under link PAUSE, or the
    /// port's under the HPCC ns-3 MMU; 0 when it has none.
    pub fn headroom_of(&self, port: usize, prio: u8) -> u64 {
        match self {
            SwitchBuffer::Shared(b) => b.headroom_of(port, prio),
            SwitchBuffer::Ns3(b) => b.headroom(port),
        }
    }
    /// Whether (port, prio) is in XOFF (has asked its upstream to pause).
    pub fn is_xoff(&self, port: usize, prio: u8) -> bool {
        match self {
            SwitchBuffer::Shared(b) => b.is_xoff(port, prio),
            SwitchBuffer::Ns3(b) => b.is_xoff(port, prio),
        }
    }
}
