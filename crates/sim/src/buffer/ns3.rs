//! The HPCC ns-3 switch's MMU, as the fork's code has it (`SwitchMmu` in
//! `src/point-to-point/model/switch-mmu.cc`, driven by `SwitchNode::SendToDev` and
//! `SwitchNotifyDequeue`; corpus MODEL.md §5, docs/ns3.md "The switch and PFC").
//!
//! Accounting is per (ingress port, class); class 0 (the fork's PFC frames and CNPs) is never
//! accounted. Each (port, class) has `ingress` bytes (its reserve and its shared-pool use) and
//! `hdrm` bytes (its use of the port's headroom); the switch keeps `shared_used`, the shared
//! bytes of all ports. With `free = buffer − Σ headroom − ports × 4096` (the fork's
//! `ConfigNPort` takes one reserve per port, not per class):
//! - threshold of port i: `(free − shared_used) >> shift_i` (`GetPfcThreshold`);
//! - shared bytes of (i, c): `ingress − 4096` when above the reserve, else 0 (`GetSharedUsed`);
//! - admission of `len` bytes (`CheckIngressAdmission`): dropped only when
//!   `hdrm + len > headroom_i` **and** `shared + len > threshold_i`;
//! - charging (`UpdateIngressAdmission`): the first 4096 bytes into `ingress` (reserve); then,
//!   if `ingress + len − 4096 > threshold_i`, into `hdrm`; else into `ingress`, with
//!   `min(len, ingress + len − 4096)` more shared bytes;
//! - release (`RemoveFromIngressAdmission`), at dequeue: headroom bytes first, the rest from
//!   `ingress`, of which the part above the reserve leaves the shared pool;
//! - PAUSE (`CheckShouldPause`, after every admission): not paused and (`hdrm > 0` or
//!   `shared ≥ threshold_i`);
//! - RESUME (`CheckShouldResume`, after every release): paused, `hdrm == 0`, and `shared == 0`
//!   or `shared + 3072 ≤ threshold_i`.
//!
//! The fork counts in `uint32_t`; here in `u64` with the buffer's reserves checked to fit it
//! at build time, so no difference can wrap. A class that is not lossless on its port (the
//! fork has none: every class it admits pauses) never takes headroom: the frame that would is
//! tail-dropped.

use super::{Admission, BufferTooSmall};
use crate::frame::DropReason;

/// Bytes reserved per (ingress port, class) before the shared pool is used (the fork's
/// `SwitchMmu::reserve`).
pub const NS3_RESERVE_BYTES: u64 = 4096;
/// How far below the threshold a paused class's shared bytes must fall to resume (the fork's
/// `SwitchMmu::resume_offset`).
pub const NS3_RESUME_OFFSET_BYTES: u64 = 3072;

/// The MMU settings of one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns3Port {
    /// Headroom bytes per class of the port (the fork's 3 × rate × delay / 8).
    pub headroom: u64,
    /// The threshold's right shift (3 at the NICs' rate, one less per doubling above it).
    pub shift: u32,
}

/// One (port, class)'s bytes, with its port's settings and its pause state beside them: an
/// admission or a release reads and writes this one cache line of the port's (besides the
/// switch's totals), not a class line and a settings line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Class {
    ingress: u64,
    hdrm: u64,
    peak: u64,
    /// The port's headroom (the same in each of its classes).
    headroom: u64,
    /// The port's threshold shift (the same in each of its classes).
    shift: u32,
    /// Whether this class has paused the upstream.
    paused: bool,
}

/// One port's classes, a cache line each.
type PortState = [Class; 8];

/// The HPCC ns-3 MMU of one switch (see the module's documentation for the rules).
#[derive(Clone, Debug)]
pub struct Ns3Mmu {
    shared_used: u64,
    /// `buffer − Σ headroom − ports × reserve`: what the threshold divides.
    free: u64,
    resume_offset: u64,
    used: u64,
    peak_used: u64,
    size: u64,
    ports: Vec<PortState>,
}

impl Ns3Mmu {
    /// The MMU of a switch with `size` bytes of buffer whose local port `i` has `ports[i]`,
    /// resuming `resume_offset` bytes below the threshold; refused when the headrooms and
    /// reserves do not fit the buffer (the fork's unsigned arithmetic would wrap).
    pub fn new(size: u64, ports: &[Ns3Port], resume_offset: u64) -> Result<Self, BufferTooSmall> {
        let reserved = ports
            .iter()
            .map(|p| p.headroom.saturating_add(NS3_RESERVE_BYTES))
            .fold(0u64, u64::saturating_add);
        if reserved > size {
            return Err(BufferTooSmall { reserved, size });
        }
        Ok(Ns3Mmu {
            shared_used: 0,
            free: size - reserved,
            resume_offset,
            used: 0,
            peak_used: 0,
            size,
            ports: ports
                .iter()
                .map(|p| {
                    [Class {
                        headroom: p.headroom,
                        shift: p.shift.min(63),
                        ..Class::default()
                    }; 8]
                })
                .collect(),
        })
    }

    /// The PFC threshold of local port `port` now.
    #[inline(always)]
    pub fn threshold(&self, port: usize) -> u64 {
        (self.free - self.shared_used) >> self.ports[port][0].shift
    }

    /// The shared-pool bytes of (port, class) now.
    #[inline(always)]
    fn shared_of(c: &Class) -> u64 {
        c.ingress.saturating_sub(NS3_RESERVE_BYTES)
    }

    /// Admits (or drops) `len` bytes arriving on local port `port` in class `class`; `xoff`
    /// when the class must now pause its upstream.
    #[inline]
    pub fn admit(&mut self, port: usize, class: u8, len: u64, lossless: bool) -> Admission {
        let q = usize::from(class & 7);
        if q == 0 {
            // the fork's class 0 skips the MMU
            return Admission::Admitted { xoff: false };
        }
        let c = &mut self.ports[port][q];
        let mut thr = (self.free - self.shared_used) >> c.shift;
        if c.hdrm + len > c.headroom && Self::shared_of(c) + len > thr {
            return Admission::Dropped(DropReason::HeadroomOverflow);
        }
        let new = c.ingress + len;
        // the class's shared-pool bytes after the charge, known in each branch (none within
        // the reserve, the most frequent) rather than computed again for the pause check
        let shared = if new <= NS3_RESERVE_BYTES {
            c.ingress = new;
            0
        } else if new - NS3_RESERVE_BYTES > thr {
            if !lossless {
                return Admission::Dropped(DropReason::TailDrop);
            }
            c.hdrm += len;
            Self::shared_of(c)
        } else {
            c.ingress = new;
            self.shared_used += len.min(new - NS3_RESERVE_BYTES);
            // the pool shrank: the threshold with it
            thr = (self.free - self.shared_used) >> c.shift;
            new - NS3_RESERVE_BYTES
        };
        let total = c.ingress + c.hdrm;
        if total > c.peak {
            c.peak = total;
        }
        self.used += len;
        if self.used > self.peak_used {
            self.peak_used = self.used;
        }
        let xoff = lossless && !c.paused && (c.hdrm > 0 || shared >= thr);
        if xoff {
            c.paused = true;
        }
        Admission::Admitted { xoff }
    }

    /// Releases `len` bytes of (port, class) at their dequeue; true when the class must now
    /// resume its upstream.
    // inlined into the transmitter (a call per frame cost a third of the body)
    #[inline(always)]
    pub fn release(&mut self, port: usize, class: u8, len: u64) -> bool {
        let q = usize::from(class & 7);
        if q == 0 {
            return false;
        }
        let c = &mut self.ports[port][q];
        let from_hdrm = c.hdrm.min(len);
        let rest = len - from_hdrm;
        let from_shared = rest.min(Self::shared_of(c));
        c.hdrm -= from_hdrm;
        c.ingress -= rest;
        self.shared_used -= from_shared;
        self.used -= len;
        if !c.paused || c.hdrm != 0 {
            return false;
        }
        let shared = Self::shared_of(c);
        if shared == 0 || shared + self.resume_offset <= (self.free - self.shared_used) >> c.shift {
            c.paused = false;
            return true;
        }
        false
    }

    /// Bytes charged to (port, class) now.
    #[inline]
    pub fn occupancy(&self, port: usize, class: u8) -> u64 {
        let c = &self.ports[port][usize::from(class & 7)];
        c.ingress + c.hdrm
    }
    /// Headroom bytes of (port, class) now.
    pub fn headroom_used(&self, port: usize, class: u8) -> u64 {
        self.ports[port][usize::from(class & 7)].hdrm
    }
    /// The headroom of local port `port` (per class).
    pub fn headroom(&self, port: usize) -> u64 {
        self.ports[port][0].headroom
    }
    /// The largest number of bytes (port, class) ever held.
    pub fn peak(&self, port: usize, class: u8) -> u64 {
        self.ports[port][usize::from(class & 7)].peak
    }
    /// The largest number of bytes the whole buffer ever held.
    pub fn peak_used(&self) -> u64 {
        self.peak_used
    }
    /// Sets the per-(port, class) peaks (port by port, 8 classes each) and the whole buffer's.
    pub fn set_peaks(&mut self, peaks: &[u64], used: u64) {
        for (class, &p) in self.ports.iter_mut().flat_map(|s| s.iter_mut()).zip(peaks) {
            class.peak = p;
        }
        self.peak_used = used;
    }
    /// Total size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// Whether (port, class) has paused its upstream.
    pub fn is_xoff(&self, port: usize, class: u8) -> bool {
        self.ports[port][usize::from(class & 7)].paused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 17 ports of 100 Gb/s with 1 µs links and 32 MiB: the switch of `incast-16-4MB-nocc`.
    fn incast_switch() -> Ns3Mmu {
        let port = Ns3Port {
            headroom: 37_500,
            shift: 3,
        };
        Ns3Mmu::new(32 << 20, &[port; 17], NS3_RESUME_OFFSET_BYTES).unwrap()
    }

    #[test]
    fn the_threshold_is_the_free_buffer_shifted_and_shrinks_with_shared_use() {
        let mut m = incast_switch();
        // free = 33,554,432 − 17 × 37,500 − 17 × 4096 = 32,847,300 (corpus README)
        assert_eq!(m.threshold(0), 32_847_300 >> 3);
        for _ in 0..10 {
            m.admit(0, 3, 1048, true);
        }
        // 10,480 bytes in, 4096 reserved: 6384 shared
        assert_eq!(m.threshold(0), (32_847_300 - 6_384) >> 3);
        assert_eq!(m.occupancy(0, 3), 10_480);
    }

    #[test]
    fn the_first_4096_bytes_of_a_class_are_its_reserve() {
        let mut m = incast_switch();
        m.admit(1, 3, 4000, true);
        assert_eq!(m.threshold(1), 32_847_300 >> 3, "within the reserve");
        m.admit(1, 3, 1000, true);
        // 5000 in: the 904 bytes above the reserve are shared, not the whole packet
        assert_eq!(m.threshold(1), (32_847_300 - 904) >> 3);
        assert!(!m.release(1, 3, 1000));
        assert_eq!(m.threshold(1), 32_847_300 >> 3);
    }

    #[test]
    fn each_of_16_equal_ingress_ports_pauses_at_about_free_over_24() {
        // the corpus's incast-16-4MB-nocc: 16 senders fill equally, each pauses at ~1.37 MB
        let mut m = incast_switch();
        let mut paused_at = [0u64; 16];
        'fill: loop {
            for (i, at) in paused_at.iter_mut().enumerate() {
                if *at != 0 {
                    continue;
                }
                if let Admission::Admitted { xoff: true } = m.admit(i, 3, 1048, true) {
                    *at = m.occupancy(i, 3);
                }
            }
            if paused_at.iter().all(|&a| a != 0) {
                break 'fill;
            }
        }
        for a in paused_at {
            // 32,847,300 / 24 = 1,368,638 bytes of shared, plus the 4096 reserved
            assert!((1_368_000..=1_374_000).contains(&a), "paused at {a}");
        }
    }

    #[test]
    fn past_the_threshold_a_class_fills_its_headroom_then_drops() {
        let port = Ns3Port {
            headroom: 3_000,
            shift: 3,
        };
        // free = 100,000 − 2 × 7096 = 85,808; threshold 10,726
        let mut m = Ns3Mmu::new(100_000, &[port; 2], NS3_RESUME_OFFSET_BYTES).unwrap();
        let mut pauses = 0;
        let mut admitted = 0u64;
        loop {
            match m.admit(0, 3, 1000, true) {
                Admission::Admitted { xoff } => {
                    pauses += u32::from(xoff);
                    admitted += 1000;
                }
                Admission::Dropped(r) => {
                    assert_eq!(r, DropReason::HeadroomOverflow);
                    break;
                }
            }
        }
        assert_eq!(pauses, 1, "one PAUSE however many frames follow");
        assert_eq!(m.headroom_used(0, 3), 3_000);
        assert_eq!(m.occupancy(0, 3), admitted);
        // shared use reached the threshold: 4096 + shared ≤ 4096 + threshold
        let shared = admitted - 3_000 - NS3_RESERVE_BYTES;
        assert!(shared <= m.threshold(0) + 1000, "shared {shared}");
    }

    #[test]
    fn resume_waits_for_the_headroom_to_drain_and_3072_bytes_below_the_threshold() {
        let port = Ns3Port {
            headroom: 10_000,
            shift: 3,
        };
        let mut m = Ns3Mmu::new(100_000, &[port; 2], NS3_RESUME_OFFSET_BYTES).unwrap();
        // free = 100,000 − 2 × 14,096 = 71,808
        let mut n = 0;
        while !matches!(m.admit(0, 3, 1000, true), Admission::Admitted { xoff: true }) {
            n += 1;
        }
        for _ in 0..3 {
            m.admit(0, 3, 1000, true);
        }
        assert!(m.headroom_used(0, 3) > 0);
        let mut resumed_at = None;
        for i in 0..(n + 4) {
            if m.release(0, 3, 1000) {
                resumed_at = Some(i);
                break;
            }
        }
        let i = resumed_at.expect("resumes before empty");
        assert_eq!(m.headroom_used(0, 3), 0);
        let shared = m.occupancy(0, 3).saturating_sub(NS3_RESERVE_BYTES);
        assert!(
            shared == 0 || shared + NS3_RESUME_OFFSET_BYTES <= m.threshold(0),
            "at release {i}"
        );
        // and not one release earlier: shared + 3072 was above the threshold then
        let before = shared + 1000;
        assert!(before + NS3_RESUME_OFFSET_BYTES > m.threshold(0) || i < 4);
    }

    #[test]
    fn a_faster_port_with_a_smaller_shift_pauses_later() {
        let ports = [
            Ns3Port {
                headroom: 37_500,
                shift: 3,
            },
            Ns3Port {
                headroom: 150_000,
                shift: 1,
            },
        ];
        let m = Ns3Mmu::new(32 << 20, &ports, NS3_RESUME_OFFSET_BYTES).unwrap();
        // mixed-rate-incast's ToR B: free = 33,554,432 − 37,500 − 150,000 − 2 × 4096
        assert_eq!(m.threshold(1), 33_358_740 >> 1);
        assert_eq!(m.threshold(0), 33_358_740 >> 3);
    }

    #[test]
    fn class_0_skips_the_mmu() {
        let mut m = incast_switch();
        assert_eq!(m.admit(2, 0, 43, true), Admission::Admitted { xoff: false });
        assert_eq!(m.occupancy(2, 0), 0);
        assert!(!m.release(2, 0, 43));
    }

    #[test]
    fn headrooms_and_reserves_larger_than_the_buffer_are_refused() {
        let port = Ns3Port {
            headroom: 37_500,
            shift: 3,
        };
        let err = Ns3Mmu::new(1 << 19, &[port; 17], NS3_RESUME_OFFSET_BYTES).unwrap_err();
        assert_eq!(err.reserved, 17 * (37_500 + 4096));
    }
}
