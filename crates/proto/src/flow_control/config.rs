//! Configuration of one port's flow control: the mode and the per-priority registers.

use serde::{Deserialize, Serialize};

use crate::units::{Duration, Rate};

/// Number of 802.1p priorities (and PFC time fields).
pub const PRIORITIES: usize = 8;

/// Which flow control a port runs; PAUSE and PFC are never both active on one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// No flow control: nothing is sent, received control frames are counted but not obeyed.
    Off,
    /// Link-level PAUSE (802.3 Annex 31B); register set 0 is used for the whole link.
    Pause,
    /// Priority-based Flow Control (802.1Qbb); priorities with `enabled` set take part.
    Pfc,
}

/// The registers of one priority (or of the link, for PAUSE: set 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PriorityConfig {
    /// PFC: whether this priority is lossless (sends and obeys PFC). Ignored in PAUSE mode.
    pub enabled: bool,
    /// Pause time carried in XOFF frames, in quanta of 512 bit times (1..=0xFFFF).
    pub pause_quanta: u16,
    /// Refresh interval (the document's `counting` register), in quanta; must be at least 1.
    pub refresh_quanta: u32,
    /// Send a time-0 frame (XON) when the request falls before the interval ends (default on).
    pub xon_on_release: bool,
    /// Send no own data frames while this request is raised (document 002 step 4; default off).
    pub hold_own_data: bool,
}

impl Default for PriorityConfig {
    fn default() -> Self {
        PriorityConfig {
            enabled: false,
            pause_quanta: 0xFFFF,
            refresh_quanta: 0x7FFF,
            xon_on_release: true,
            hold_own_data: false,
        }
    }
}

/// How a frame occupies the wire: what the engine counts for the last bit of a frame and
/// for when the wire is free again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    /// IEEE 802.3: 8 bytes of preamble and SFD before every frame and a 12-byte inter-frame
    /// gap after it, timed exactly to the picosecond; PAUSE/PFC frames are 64 bytes.
    #[default]
    Ieee8023,
    /// The HPCC ns-3 simulator's (`QbbNetDevice::TransmitStart`): the frame alone, with no
    /// preamble, SFD or gap, its transmission time rounded down to a whole nanosecond; a
    /// PAUSE/PFC frame takes the time of that simulator's 43-byte PFC packet. Only wire
    /// times change: received frames are still checked as 64-byte MAC Control frames.
    Ns3,
}

/// How requests become control frames and how a received frame pauses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signalling {
    /// IEEE 802.3 Annex 31B / 802.1Qbb: a raised request sends an XOFF carrying its pause
    /// time and refreshes it while raised; an early release sends an XON; one frame carries
    /// every priority due; a received pause lasts its pause time unless an XON ends it.
    #[default]
    Ieee,
    /// The HPCC ns-3 simulator's (`SwitchNode::CheckAndSendPfc`/`CheckAndSendResume`,
    /// `QbbNetDevice::SendPfc`/`Receive`): every rise of a request sends one PAUSE frame for
    /// that priority alone and every fall one RESUME (time 0), in the order they happened,
    /// each a frame of its own; nothing is refreshed; a received PAUSE holds the priority
    /// until a RESUME arrives, with no timer (its time only needs to be above 0).
    Ns3,
}

/// Bytes of the HPCC ns-3 simulator's PFC packet (14 + 20 + 9: PPP, IPv4, pause header).
pub const NS3_PFC_FRAME_BYTES: u64 = 43;

/// Everything one port's flow-control engine needs to know at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowControlConfig {
    /// Off, PAUSE or PFC.
    pub mode: Mode,
    /// Link rate: converts quanta to time and frame lengths to wire time.
    pub rate: Rate,
    /// This port's own unicast station address (accepted as a control frame destination).
    pub station_address: [u8; 6],
    /// How long after the end of a PAUSE/PFC reception a frame of a paused priority may still
    /// start (the receiver's reaction delay); default [`default_reaction_delay`].
    pub reaction_delay: Duration,
    /// Registers per priority; PAUSE mode uses index 0 only.
    pub priorities: [PriorityConfig; PRIORITIES],
    /// How frames occupy the wire (802.3 unless a simulator reproduces another model).
    #[serde(default)]
    pub framing: Framing,
    /// How requests become frames and received frames pause (802.3/802.1Qbb unless a
    /// simulator reproduces another model).
    #[serde(default)]
    pub signalling: Signalling,
}

/// Why a configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A register set in use has `pause_quanta` 0 (that would be an XON, not an XOFF).
    #[error("priority {priority}: pause_quanta is 0, allowed 1..=65535")]
    ZeroPauseQuanta {
        /// The priority (register set) at fault.
        priority: u8,
    },
    /// A register set in use has `refresh_quanta` 0 (it would re-send without end).
    #[error("priority {priority}: refresh_quanta is 0, allowed 1..=4294967295")]
    ZeroRefresh {
        /// The priority (register set) at fault.
        priority: u8,
    },
    /// The rate does not give whole picoseconds per byte (not an IEEE rate).
    #[error("rate {bps} b/s: a byte is not a whole number of picoseconds; allowed: IEEE 802.3 rates")]
    InexactRate {
        /// The rate given, in bits per second.
        bps: u64,
    },
}

impl FlowControlConfig {
    /// A port with flow control off.
    pub fn off(rate: Rate, station_address: [u8; 6]) -> Self {
        Self::with_mode(Mode::Off, rate, station_address)
    }

    /// A link-PAUSE port with default registers (0xFFFF quanta, refresh 0x7FFF quanta, XON on).
    pub fn pause(rate: Rate, station_address: [u8; 6]) -> Self {
        Self::with_mode(Mode::Pause, rate, station_address)
    }

    /// A PFC port whose lossless priorities are the set bits of `enabled` (bit n = priority n).
    pub fn pfc(rate: Rate, station_address: [u8; 6], enabled: u8) -> Self {
        let mut c = Self::with_mode(Mode::Pfc, rate, station_address);
        for (p, pc) in c.priorities.iter_mut().enumerate() {
            pc.enabled = enabled & (1 << p) != 0;
        }
        c
    }

    fn with_mode(mode: Mode, rate: Rate, station_address: [u8; 6]) -> Self {
        FlowControlConfig {
            mode,
            rate,
            station_address,
            reaction_delay: default_reaction_delay(rate),
            priorities: [PriorityConfig::default(); PRIORITIES],
            framing: Framing::Ieee8023,
            signalling: Signalling::Ieee,
        }
    }

    /// Bit n set when priority n's registers are in use (PAUSE: bit 0; PFC: enabled ones).
    pub fn active_mask(&self) -> u8 {
        match self.mode {
            Mode::Off => 0,
            Mode::Pause => 1,
            Mode::Pfc => self
                .priorities
                .iter()
                .enumerate()
                .filter(|(_, pc)| pc.enabled)
                .fold(0, |m, (p, _)| m | (1 << p)),
        }
    }

    /// Checks the registers in use and the rate.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.rate.is_byte_exact() {
            return Err(ConfigError::InexactRate { bps: self.rate.bps() });
        }
        let mask = self.active_mask();
        for (p, pc) in self.priorities.iter().enumerate() {
            if mask & (1 << p) == 0 {
                continue;
            }
            if pc.pause_quanta == 0 {
                return Err(ConfigError::ZeroPauseQuanta { priority: p as u8 });
            }
            if pc.refresh_quanta == 0 {
                return Err(ConfigError::ZeroRefresh { priority: p as u8 });
            }
        }
        Ok(())
    }
}

/// The 802.3 (31B.3.7) maximum reaction delay at `rate`, in pause quanta.
///
/// Table of standards.md: ≤100 Mb/s 1, 1G 2, 10G 60, 25G 80, 40G 118, 50G 147, 100G 394,
/// 200G 453, 400G/800G 905. Rates between rows take the next higher row (2.5G and 5G: 60);
/// rates above 800G take the 800G row (905), the highest limit tabulated.
pub fn reaction_delay_quanta(rate: Rate) -> u64 {
    const ROWS: [(u64, u64); 9] = [
        (100_000_000, 1),
        (1_000_000_000, 2),
        (10_000_000_000, 60),
        (25_000_000_000, 80),
        (40_000_000_000, 118),
        (50_000_000_000, 147),
        (100_000_000_000, 394),
        (200_000_000_000, 453),
        (800_000_000_000, 905),
    ];
    let bps = rate.bps();
    ROWS.iter().find(|(max, _)| bps <= *max).map_or(905, |(_, q)| *q)
}

/// The 802.3 maximum reaction delay at `rate` as a duration.
pub fn default_reaction_delay(rate: Rate) -> Duration {
    rate.quanta_time(reaction_delay_quanta(rate))
}
