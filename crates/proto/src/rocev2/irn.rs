//! IRN's sender scoreboard: which outstanding packets the responder holds (SACKed), which are
//! known lost, and the order of transmissions, from which losses are inferred.

use super::Segmentation;
use super::config::IRN_RTO_LOW_MAX_PACKETS;
use super::window::{SlotBits, TxRing};
use crate::units::Duration;

/// Bookkeeping over the window of outstanding packets, allocated once at creation.
#[derive(Clone, Debug)]
pub(crate) struct Scoreboard {
    bdp_cap_bytes: u64,
    /// Most packets outstanding: `bdp_cap_bytes / mtu + 1` (the last packet may be short).
    window: u64,
    rto_low: Duration,
    rto_high: Duration,
    /// Packets the responder reported holding out of order.
    sacked: SlotBits,
    /// Packets known lost and not yet resent.
    lost: SlotBits,
    lost_count: u64,
    /// Number of the latest transmission of each outstanding packet (index masked by
    /// `slot_mask`: the length is the power of two at or above `window`).
    sent_seq: Vec<u64>,
    slot_mask: u64,
    /// Transmissions neither proven received nor found lost yet, in the order they were sent.
    in_flight: TxRing,
    /// Transmissions numbered from 1.
    tx_seq: u64,
    /// Every transmission numbered up to this one has arrived or been lost.
    proven: u64,
}

impl Scoreboard {
    pub(crate) fn new(bdp_cap_bytes: u64, mtu: u32, rto_low: Duration, rto_high: Duration) -> Scoreboard {
        let window = bdp_cap_bytes / u64::from(mtu) + 1;
        let slots = window.next_power_of_two();
        Scoreboard {
            bdp_cap_bytes,
            window,
            rto_low,
            rto_high,
            sacked: SlotBits::new(window),
            lost: SlotBits::new(window),
            lost_count: 0,
            sent_seq: vec![0; slots as usize],
            slot_mask: slots - 1,
            in_flight: TxRing::new(window),
            tx_seq: 0,
            proven: 0,
        }
    }

    fn slot(&self, i: u64) -> usize {
        (i & self.slot_mask) as usize
    }

    /// Whether a packet is known lost and waits to be resent.
    pub(crate) fn has_lost(&self) -> bool {
        self.lost_count > 0
    }

    /// Whether some transmission is still expected to be answered.
    pub(crate) fn awaits_reply(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// May the new packet `max` go out with `una` the oldest unacknowledged one?
    pub(crate) fn may_send_new(&self, seg: &Segmentation, una: u64, max: u64) -> bool {
        max < seg.packets && max - una < self.window && seg.end(max) - seg.start(una) <= self.bdp_cap_bytes
    }

    /// IRN's timeout for `outstanding` packets: RTO_low for a few, RTO_high for more.
    pub(crate) fn rto(&self, outstanding: u64) -> Duration {
        if outstanding <= IRN_RTO_LOW_MAX_PACKETS {
            self.rto_low
        } else {
            self.rto_high
        }
    }

    /// Takes the lowest packet in `una..max` known lost (it is about to be resent).
    pub(crate) fn take_lost(&mut self, una: u64, max: u64) -> Option<u64> {
        if self.lost_count == 0 {
            return None;
        }
        let found = self.lost.first_set(una, max);
        debug_assert!(found.is_some(), "lost_count {} but no lost bit", self.lost_count);
        match found {
            Some(i) => {
                self.lost.clear(i);
                self.lost_count -= 1;
            }
            None => self.lost_count = 0,
        }
        found
    }

    /// Records a transmission of packet `i`.
    pub(crate) fn sent(&mut self, i: u64) {
        self.tx_seq += 1;
        let slot = self.slot(i);
        self.sent_seq[slot] = self.tx_seq;
        // At most one entry per outstanding packet is in flight: a packet is resent only once
        // its entry has left (found lost) or the ring was cleared (timeout).
        let stored = self.in_flight.push((i, self.tx_seq));
        debug_assert!(stored, "IRN in-flight ring overflow");
    }

    /// Packet `i` is cumulatively acknowledged; returns the number of its latest transmission.
    pub(crate) fn acknowledged(&mut self, i: u64) -> u64 {
        self.sacked.clear(i);
        if self.lost.clear(i) {
            self.lost_count -= 1;
        }
        self.sent_seq[self.slot(i)]
    }

    /// Packet `i` is SACKed; returns the number of its latest transmission if that is news.
    pub(crate) fn sacked(&mut self, i: u64) -> Option<u64> {
        if !self.sacked.set(i) {
            return None;
        }
        if self.lost.clear(i) {
            self.lost_count -= 1;
        }
        Some(self.sent_seq[self.slot(i)])
    }

    /// Transmission `proven` (and so, on a channel that keeps order, every earlier one) has
    /// arrived: every earlier transmission of a packet at or after `una` neither acknowledged
    /// nor SACKed was lost.
    pub(crate) fn infer_losses(&mut self, una: u64, proven: u64) {
        self.proven = self.proven.max(proven);
        while let Some((i, seq)) = self.in_flight.front() {
            if seq > self.proven {
                break;
            }
            self.in_flight.pop();
            if i < una || self.sacked.get(i) || self.lost.get(i) || self.sent_seq[self.slot(i)] != seq {
                continue;
            }
            self.lost.set(i);
            self.lost_count += 1;
        }
    }

    /// Timeout: every packet in `una..max` not SACKed is lost.
    pub(crate) fn all_lost(&mut self, una: u64, max: u64) {
        self.in_flight.clear();
        for i in una..max {
            if !self.sacked.get(i) && self.lost.set(i) {
                self.lost_count += 1;
            }
        }
    }
}
