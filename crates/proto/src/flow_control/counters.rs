//! Counters of one port, named as the standards and the tools users know name them.
//!
//! Per-priority arrays use index 0 for link-level PAUSE. Serialized (serde) with the standard
//! names: 802.3 clause 30 `aMACControlFramesTransmitted` …, Linux `struct ieee_pfc`
//! `requests`/`indications`, NVIDIA mlx5 `tx_prio_pause`, `rx_prio_pause_duration`,
//! `rx_prio_pause_transition`.

use serde::{Deserialize, Serialize};

use super::config::PRIORITIES;
use crate::units::Duration;

/// Counters of one port's flow control.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// 802.3 30.3.4.2: MAC Control frames (PAUSE and PFC) this port transmitted.
    #[serde(rename = "MACControlFramesTransmitted")]
    pub mac_control_frames_transmitted: u64,
    /// 802.3 30.3.4.3: MAC Control frames received with a valid address and length.
    #[serde(rename = "MACControlFramesReceived")]
    pub mac_control_frames_received: u64,
    /// 802.3 30.3.4.4: MAC Control frames received with an opcode other than PAUSE/PFC.
    #[serde(rename = "UnsupportedOpcodesReceived")]
    pub unsupported_opcodes_received: u64,
    /// 802.3 30.3.4.2: PAUSE frames transmitted.
    #[serde(rename = "PAUSEMACCtrlFramesTransmitted")]
    pub pause_mac_ctrl_frames_transmitted: u64,
    /// 802.3 30.3.4.3: valid PAUSE frames received (obeyed or not, see `rx_ignored_mode`).
    #[serde(rename = "PAUSEMACCtrlFramesReceived")]
    pub pause_mac_ctrl_frames_received: u64,
    /// PFC frames transmitted.
    pub pfc_frames_transmitted: u64,
    /// Valid PFC frames received.
    pub pfc_frames_received: u64,
    /// Linux `ieee_pfc.requests[p]`: PFC frames sent with priority p's enable bit set.
    pub requests: [u64; PRIORITIES],
    /// Linux `ieee_pfc.indications[p]`: PFC frames received with priority p's enable bit set.
    pub indications: [u64; PRIORITIES],
    /// mlx5 `tx_prio<p>_pause`: XOFF (time ≠ 0) sent for priority p (PAUSE: index 0).
    pub tx_prio_pause: [u64; PRIORITIES],
    /// XON (time 0) sent for priority p (PAUSE: index 0).
    pub tx_prio_xon: [u64; PRIORITIES],
    /// mlx5 `rx_prio<p>_pause`: XOFF (time ≠ 0) obeyed for priority p (PAUSE: index 0).
    pub rx_prio_pause: [u64; PRIORITIES],
    /// XON (time 0) obeyed for priority p (PAUSE: index 0).
    pub rx_prio_xon: [u64; PRIORITIES],
    /// mlx5 `tx_prio<p>_pause_duration`: time priority p's request was raised (closed spans).
    pub tx_prio_pause_duration: [Duration; PRIORITIES],
    /// mlx5 `rx_prio<p>_pause_duration`: time priority p was paused (closed spans).
    pub rx_prio_pause_duration: [Duration; PRIORITIES],
    /// mlx5 `rx_prio<p>_pause_transition`: XOFF→XON transitions of priority p's paused state.
    pub rx_prio_pause_transition: [u64; PRIORITIES],
    /// Control frames refused: destination neither 01-80-C2-00-00-01 nor the own address.
    pub rx_wrong_destination: u64,
    /// Control frames refused: length (FCS included) other than 64 bytes.
    pub rx_wrong_length: u64,
    /// Valid PAUSE/PFC frames not obeyed because the port's mode does not obey them.
    pub rx_ignored_mode: u64,
}

/// The counters of an engine, built at its first count: most ports of a large fabric never
/// send, receive or obey a control frame, and the counters are most of an engine's memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct LazyCounters(Option<Box<Counters>>);

/// The counters of an engine that has counted nothing.
static NO_COUNTS: std::sync::LazyLock<Counters> = std::sync::LazyLock::new(Counters::default);

impl LazyCounters {
    /// The counters (all zero before the first count).
    pub(crate) fn get(&self) -> &Counters {
        self.0.as_deref().unwrap_or(&NO_COUNTS)
    }

    /// The counters, to count into: built at the first count, once in the engine's life.
    pub(crate) fn get_mut(&mut self) -> &mut Counters {
        self.0.get_or_insert_with(Box::default)
    }
}
