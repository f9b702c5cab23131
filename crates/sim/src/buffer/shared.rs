//! The shared packet buffer with per-ingress-port × priority accounting, static or
//! dynamic (alpha) thresholds, XOFF/XON decisions and a headroom reserve per lossless
//! priority of each port.
//!
//! Model (the one SONiC and merchant silicon document): the buffer is split into a headroom
//! pool — `headroom_bytes` reserved for every (port, lossless priority) — and a shared pool
//! holding the rest. A frame is first admitted into the shared pool if its (ingress port,
//! priority) stays within the threshold (static bytes, or `alpha × free shared bytes`). A frame
//! that does not fit goes, for a lossless priority, into that pair's headroom and raises XOFF;
//! if the headroom is full too it is dropped as a headroom overflow. A lossy priority that does
//! not fit is tail-dropped. XON is decided when the pair's usage falls to the threshold minus
//! `xon_offset_bytes`.

use super::Admission;
use crate::frame::DropReason;

/// How the per-(ingress port, priority) limit on shared-pool use is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// A fixed number of bytes.
    Static {
        /// The limit in bytes.
        bytes: u64,
    },
    /// `alpha × (shared pool size − shared bytes in use)`; alpha in 1/1024 units.
    Dynamic {
        /// Alpha × 1024 (1024 = alpha 1.0).
        alpha_1024: u64,
    },
}

/// The accounting of one (ingress port, priority) pair, with the reserves that bound it: all
/// a frame's admission and release touch besides the buffer's totals, in one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Pair {
    shared: u64,
    headroom: u64,
    peak: u64,
    /// Headroom reserve of the pair; 0 = not lossless on that port.
    reserve: u64,
    /// Link-level (PAUSE) headroom reserve of the pair's port, shared by all its priorities.
    link_reserve: u64,
    xoff: bool,
}

/// The shared buffer of one switch.
///
/// Laid out by hand (`repr(C)`): what every admission and release reads comes first, in the
/// order that keeps it within two cache lines where the simulator's switch places it.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct SharedBuffer {
    shared_size: u64,
    shared_used: u64,
    /// Per (local port, priority).
    pairs: Vec<[Pair; 8]>,
    threshold: Threshold,
    headroom_used: u64,
    peak_used: u64,
    xon_offset: u64,
    /// Bytes in each port's headroom (its pairs' `headroom`, summed).
    port_headroom: Vec<u64>,
    size: u64,
}

/// Error building a buffer whose headroom reserves exceed its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("headroom reserves total {reserved} bytes but the buffer holds only {size} bytes")]
pub struct BufferTooSmall {
    /// Sum of all headroom reserves.
    pub reserved: u64,
    /// Buffer size.
    pub size: u64,
}

impl SharedBuffer {
    /// A buffer of `size` bytes for a switch whose port `i` reserves `reserve[i][p]` bytes of
    /// headroom for priority `p` (0 for lossy priorities or ports without flow control).
    ///
    /// A port running link-level PAUSE instead reserves one headroom for all its priorities:
    /// give it `port_reserve[i]` > 0 (and zeros in `reserve[i]`); its lossless frames then
    /// share that headroom.
    pub fn new(
        size: u64,
        threshold: Threshold,
        xon_offset: u64,
        reserve: Vec<[u64; 8]>,
        port_reserve: Vec<u64>,
    ) -> Result<Self, BufferTooSmall> {
        let mut port_reserve = port_reserve;
        port_reserve.resize(reserve.len(), 0);
        let reserved: u64 = reserve.iter().flatten().sum::<u64>() + port_reserve.iter().sum::<u64>();
        if reserved > size {
            return Err(BufferTooSmall { reserved, size });
        }
        let pairs = reserve
            .iter()
            .zip(&port_reserve)
            .map(|(r, &link_reserve)| {
                r.map(|reserve| Pair {
                    reserve,
                    link_reserve,
                    ..Pair::default()
                })
            })
            .collect();
        Ok(SharedBuffer {
            size,
            shared_size: size - reserved,
            shared_used: 0,
            headroom_used: 0,
            peak_used: 0,
            threshold,
            xon_offset,
            port_headroom: vec![0; port_reserve.len()],
            pairs,
        })
    }

    /// The current shared-pool limit of one (port, priority) pair.
    pub fn limit(&self) -> u64 {
        match self.threshold {
            Threshold::Static { bytes } => bytes,
            Threshold::Dynamic { alpha_1024 } => {
                let free = self.shared_size - self.shared_used;
                ((free as u128 * alpha_1024 as u128) / 1024) as u64
            }
        }
    }

    /// Decides about a frame of `len` bytes arriving on local port `port` at priority `prio`.
    /// `lossless` says whether the priority is lossless on that port (flow control enabled).
    pub fn admit(&mut self, port: usize, prio: u8, len: u64, lossless: bool) -> Admission {
        // a priority is below 8 (as in the ns-3 MMU): the mask spares the bounds check
        let p = usize::from(prio & 7);
        let limit = self.limit();
        let pair = &mut self.pairs[port][p];
        let fits_shared = pair.shared + len <= limit && self.shared_used + len <= self.shared_size;
        let mut xoff = false;
        let (reserve, link_reserve) = (pair.reserve, pair.link_reserve);
        if fits_shared && pair.headroom == 0 {
            pair.shared += len;
            self.shared_used += len;
        } else if lossless && (reserve > 0 || link_reserve > 0) {
            let full = if link_reserve > 0 {
                self.port_headroom[port] + len > link_reserve
            } else {
                pair.headroom + len > reserve
            };
            if full {
                return Admission::Dropped(DropReason::HeadroomOverflow);
            }
            pair.headroom += len;
            self.port_headroom[port] += len;
            self.headroom_used += len;
            if !pair.xoff {
                pair.xoff = true;
                xoff = true;
            }
        } else if lossless {
            return Admission::Dropped(DropReason::BufferFull);
        } else {
            return Admission::Dropped(DropReason::TailDrop);
        }
        let total = pair.shared + pair.headroom;
        if total > pair.peak {
            pair.peak = total;
        }
        let used = self.used();
        if used > self.peak_used {
            self.peak_used = used;
        }
        Admission::Admitted { xoff }
    }

    /// Releases a departed frame of `len` bytes charged to (port, prio). Returns true when the
    /// pair leaves XOFF (the port must release its flow-control request).
    pub fn release(&mut self, port: usize, prio: u8, len: u64) -> bool {
        let p = usize::from(prio & 7);
        let pair = &mut self.pairs[port][p];
        let from_headroom = len.min(pair.headroom);
        if from_headroom > 0 {
            pair.headroom -= from_headroom;
            self.port_headroom[port] -= from_headroom;
            self.headroom_used -= from_headroom;
        }
        let from_shared = len - from_headroom;
        pair.shared -= from_shared;
        self.shared_used -= from_shared;
        self.check_xon(port, prio)
    }

    /// Re-evaluates XON for a pair (the dynamic limit moves as other pairs drain).
    pub fn check_xon(&mut self, port: usize, prio: u8) -> bool {
        let limit = self.limit();
        let pair = &mut self.pairs[port][usize::from(prio & 7)];
        if pair.xoff && pair.headroom == 0 && pair.shared <= limit.saturating_sub(self.xon_offset) {
            pair.xoff = false;
            return true;
        }
        false
    }

    /// Bytes stored in the whole buffer.
    pub fn used(&self) -> u64 {
        self.shared_used + self.headroom_used
    }
    /// Bytes charged to (port, prio) now.
    pub fn occupancy(&self, port: usize, prio: u8) -> u64 {
        let pair = &self.pairs[port][prio as usize];
        pair.shared + pair.headroom
    }
    /// The largest number of bytes (port, prio) ever held.
    pub fn peak(&self, port: usize, prio: u8) -> u64 {
        self.pairs[port][prio as usize].peak
    }
    /// The largest number of bytes the whole buffer ever held.
    pub fn peak_used(&self) -> u64 {
        self.peak_used
    }
    /// Sets the per-pair peaks (port by port, 8 priorities each) and the whole buffer's.
    pub fn set_peaks(&mut self, peaks: &[u64], used: u64) {
        for (pair, &p) in self.pairs.iter_mut().flatten().zip(peaks) {
            pair.peak = p;
        }
        self.peak_used = used;
    }
    /// Total size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// The headroom (port, prio) may use: its own reserve, or its port's under link PAUSE.
    pub fn headroom_of(&self, port: usize, prio: u8) -> u64 {
        let pair = &self.pairs[port][prio as usize];
        pair.reserve.max(pair.link_reserve)
    }
    /// Whether (port, prio) is in XOFF.
    pub fn is_xoff(&self, port: usize, prio: u8) -> bool {
        self.pairs[port][prio as usize].xoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(threshold: Threshold, reserve: u64) -> SharedBuffer {
        let mut r = [0u64; 8];
        r[3] = reserve;
        SharedBuffer::new(100_000, threshold, 3_000, vec![r, r], vec![]).unwrap()
    }

    #[test]
    fn lossless_frame_past_threshold_goes_to_headroom_and_raises_xoff_once() {
        let mut b = buf(Threshold::Static { bytes: 3_000 }, 4_000);
        assert_eq!(b.admit(0, 3, 1_500, true), Admission::Admitted { xoff: false });
        assert_eq!(b.admit(0, 3, 1_500, true), Admission::Admitted { xoff: false });
        assert_eq!(b.admit(0, 3, 1_500, true), Admission::Admitted { xoff: true });
        assert_eq!(b.admit(0, 3, 1_500, true), Admission::Admitted { xoff: false });
        assert_eq!(
            b.admit(0, 3, 1_500, true),
            Admission::Dropped(DropReason::HeadroomOverflow)
        );
        assert_eq!(b.occupancy(0, 3), 6_000);
    }

    #[test]
    fn xon_when_usage_falls_to_threshold_minus_offset() {
        let mut b = buf(Threshold::Static { bytes: 6_000 }, 10_000);
        for _ in 0..5 {
            b.admit(0, 3, 1_500, true);
        }
        assert!(b.is_xoff(0, 3));
        assert!(!b.release(0, 3, 1_500)); // headroom drains first
        assert!(!b.release(0, 3, 1_500)); // 3000 shared left
        assert!(b.release(0, 3, 1_500)); // 1500 <= 6000 - 3000
        assert!(!b.is_xoff(0, 3));
    }

    #[test]
    fn lossy_priority_is_tail_dropped_at_threshold() {
        let mut b = buf(Threshold::Static { bytes: 3_000 }, 4_000);
        assert!(matches!(b.admit(1, 0, 3_000, false), Admission::Admitted { .. }));
        assert_eq!(b.admit(1, 0, 64, false), Admission::Dropped(DropReason::TailDrop));
    }

    #[test]
    fn dynamic_threshold_shrinks_as_the_shared_pool_fills() {
        let mut b = buf(Threshold::Dynamic { alpha_1024: 1024 }, 0);
        let shared = 100_000;
        assert_eq!(b.limit(), shared);
        b.admit(0, 0, 40_000, false);
        assert_eq!(b.limit(), shared - 40_000);
        // pair (1,0) may take alpha × free = 60_000 but no more than half of it stays free
        assert!(matches!(b.admit(1, 0, 30_000, false), Admission::Admitted { .. }));
        assert_eq!(
            b.admit(1, 0, 30_000, false),
            Admission::Dropped(DropReason::TailDrop)
        );
    }

    #[test]
    fn a_pause_port_shares_one_headroom_among_its_priorities() {
        let mut b = SharedBuffer::new(
            100_000,
            Threshold::Static { bytes: 0 },
            0,
            vec![[0; 8]],
            vec![3_000],
        )
        .unwrap();
        assert_eq!(b.admit(0, 0, 1_500, true), Admission::Admitted { xoff: true });
        assert_eq!(b.admit(0, 5, 1_500, true), Admission::Admitted { xoff: true });
        assert_eq!(
            b.admit(0, 7, 64, true),
            Admission::Dropped(DropReason::HeadroomOverflow)
        );
        b.release(0, 0, 1_500);
        assert_eq!(b.admit(0, 7, 64, true), Admission::Admitted { xoff: true });
    }

    #[test]
    fn reserves_larger_than_the_buffer_are_rejected() {
        let err = SharedBuffer::new(1_000, Threshold::Static { bytes: 1 }, 0, vec![[200; 8]], vec![]);
        assert_eq!(
            err.unwrap_err(),
            BufferTooSmall {
                reserved: 1_600,
                size: 1_000
            }
        );
    }
}
