//! Counters the simulator keeps: plain integers, updated on the hot path.

use lossless_proto::flow_control::ControlFrame;
use lossless_proto::units::Instant;

use crate::frame::DropReason;

/// Counters of one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrioStats {
    /// Data frames transmitted.
    pub tx_frames: u64,
    /// Data bytes transmitted (frame bytes, FCS included).
    pub tx_bytes: u64,
    /// Data frames received.
    pub rx_frames: u64,
    /// Data bytes received.
    pub rx_bytes: u64,
    /// Frames received on this port and dropped, by [`DropReason::index`].
    pub drops: [u64; DropReason::ALL.len()],
    /// Largest egress queue in bytes.
    pub peak_queue_bytes: u64,
    /// PFC frames sent with this priority's enable bit set and a non-zero time (XOFF).
    pub pfc_xoff_tx: u64,
    /// PFC frames sent with this priority's enable bit set and time 0 (XON).
    pub pfc_xon_tx: u64,
    /// PFC frames received with this priority's enable bit set and a non-zero time.
    pub pfc_xoff_rx: u64,
    /// PFC frames received with this priority's enable bit set and time 0.
    pub pfc_xon_rx: u64,
}

/// Counters of one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Per priority.
    pub prio: [PrioStats; 8],
    /// PAUSE frames sent with a non-zero time.
    pub pause_xoff_tx: u64,
    /// PAUSE frames sent with time 0.
    pub pause_xon_tx: u64,
    /// PAUSE frames received with a non-zero time.
    pub pause_xoff_rx: u64,
    /// PAUSE frames received with time 0.
    pub pause_xon_rx: u64,
    /// LLDP frames received and dropped: no DCBX agent on the port, or not one it accepts.
    pub lldp_rx_ignored: u64,
}

impl PortStats {
    /// Counts a control frame this port sent.
    pub fn count_control_tx(&mut self, f: &ControlFrame) {
        match *f {
            ControlFrame::Pause { quanta } => {
                if quanta == 0 {
                    self.pause_xon_tx += 1
                } else {
                    self.pause_xoff_tx += 1
                }
            }
            ControlFrame::Pfc { enable_vector, time } => {
                for (p, &t) in time.iter().enumerate() {
                    if enable_vector & (1 << p) != 0 {
                        if t == 0 {
                            self.prio[p].pfc_xon_tx += 1
                        } else {
                            self.prio[p].pfc_xoff_tx += 1
                        }
                    }
                }
            }
        }
    }
    /// Counts a control frame this port received.
    pub fn count_control_rx(&mut self, f: &ControlFrame) {
        match *f {
            ControlFrame::Pause { quanta } => {
                if quanta == 0 {
                    self.pause_xon_rx += 1
                } else {
                    self.pause_xoff_rx += 1
                }
            }
            ControlFrame::Pfc { enable_vector, time } => {
                for (p, &t) in time.iter().enumerate() {
                    if enable_vector & (1 << p) != 0 {
                        if t == 0 {
                            self.prio[p].pfc_xon_rx += 1
                        } else {
                            self.prio[p].pfc_xoff_rx += 1
                        }
                    }
                }
            }
        }
    }
}

/// Counters of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Frames injected into the source NIC.
    pub sent_frames: u64,
    /// Bytes injected (frame bytes).
    pub sent_bytes: u64,
    /// Frames delivered to the destination's application.
    pub delivered_frames: u64,
    /// Bytes delivered (frame bytes).
    pub delivered_bytes: u64,
    /// Frames dropped on the way.
    pub dropped_frames: u64,
    /// When the first frame was injected.
    pub first_sent: Option<Instant>,
    /// When the last frame so far was delivered.
    pub last_delivery: Option<Instant>,
    /// When a finite flow's last frame was delivered (all frames delivered).
    pub completed: Option<Instant>,
}

/// Whole-run frame accounting for the conservation check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Frames injected by sources.
    pub injected: u64,
    /// Frames delivered to destinations.
    pub delivered: u64,
    /// Frames dropped, by [`DropReason::index`].
    pub dropped: [u64; DropReason::ALL.len()],
}
