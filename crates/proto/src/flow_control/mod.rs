//! MAC flow control (802.3 Annex 31B PAUSE, 802.1Qbb PFC): one sans-IO engine per port.
//!
//! A [`FlowControl`] holds both halves of one MAC: the transmit side that turns a request
//! signal (document 002's `fc_rdy`, a buffer's XOFF threshold) into PAUSE/PFC frames, and the
//! receive side that obeys the peer's frames and answers "may priority p start a frame now?"
//! (document 002's `fc` to module B). It reads no clock: every call takes `now`
//! ([`Instant`], picoseconds), which must never go backwards. No call allocates.
//!
//! # How a driver uses it
//!
//! 1. Create: `FlowControl::new(FlowControlConfig::pfc(rate, my_mac, 0b0000_1000))?`
//!    (or `::pause(..)`, `::off(..)`; adjust `priorities[p]` registers and `reaction_delay`).
//! 2. Requests: when a buffer crosses its threshold call `set_request(now, p, true)`; when it
//!    drains, `set_request(now, p, false)`. (PAUSE mode: `p` is ignored, one link request.)
//! 3. Transmitting, **whenever the wire is idle** (at `now >= wire_free_at()`, i.e. between
//!    frames — never in the middle of one):
//!    - first `poll_transmit(now)`: a `Some(Transmit)` is a PAUSE/PFC frame that goes out
//!      *now*, ahead of any queued data; the engine has already recorded it as on the wire until
//!      `Transmit::free_at`;
//!    - otherwise pick a data frame of a priority p with `may_start_data(now, p)` (wire idle,
//!      no control frame due, `may_transmit(now, p)`, and not `hold_data(now)`) and report it
//!      with `on_tx_start(now, frame_bytes, p)` (FCS included, preamble and gap excluded). The
//!      engine needs every data frame start to know when the frame being sent ends (its last
//!      bit is where a received pause timer starts); it refuses a start that breaks a rule
//!      ([`TxError`]). The returned [`TxSlot`] says when the last bit leaves and when the wire
//!      is free again (after the 12-byte gap).
//! 4. Receiving: when the last bit of a MAC Control frame (EtherType 0x8808) has arrived at
//!    `now`, call `handle_control_frame(now, &ReceivedControl { dst, frame_len, body })`
//!    (from bytes: `ReceivedControl::decode(bytes, FcsMode::..)`; from the codec:
//!    `ReceivedControl::from_decoded`; in a simulator: `ReceivedControl::multicast(frame)`).
//!    The engine checks the address and length, counts, and updates the pause timers.
//! 5. Timers: after every call, ask `poll_timeout()`; at that instant call
//!    `handle_timeout(now)` and then go to 3 (a refresh may be due, a pause may have expired,
//!    so a paused priority may send again). `poll_timeout` also reports when a received pause
//!    takes effect (end of the reaction delay).
//! 6. Reports: `counters()` (serde, standard names), `paused_mask(now)`, `requested_mask()`,
//!    `pause_until(now, p)`, `refresh_at(p)`, `rx_pause_duration(now, p)`. Bytes of a sent
//!    frame: `Transmit::emit(FcsMode::.., &mut buf)`; `MacControlRepr::from(frame)`.
//! 7. Reconfiguring at run time (DCBX changed the PFC enable vector, an operator changed a
//!    register): `reconfigure(now, cfg)` keeps counters, the wire and the state of register
//!    sets still in use; see its doc for exactly what ends. Then go to 5.
//!
//! Times passed in must not go backwards; an earlier `now` is taken as the latest one seen
//! ([`FlowControl::now`]). Time arithmetic saturates: no input panics.
//!
//! # Timing rules (precisely)
//! - Transmit: a rising request makes an XOFF due at once; it goes out at the next poll on an
//!   idle wire, before any data. While raised it is re-sent when `now` reaches the start of the
//!   last XOFF + refresh interval (document 002's `counting`). Release before that instant
//!   (case 1) → XON if `xon_on_release`; release at or after it (case 2; a refresh that could
//!   not go out yet is dropped) → nothing, the peer resumes when the last pause runs out. An
//!   XON is sent only if an XOFF went out (a request raised and lowered before its XOFF could
//!   go sends nothing). A PFC frame carries every raised priority with its pause time (held
//!   ones are refreshed in the same frame and restart their interval, as verilog-ethernet's
//!   `mac_pause_ctrl_tx` does) plus those due an XON, with time 0.
//! - Receive: an XOFF received by `r` while this port transmits a frame ending (last bit) at
//!   `b > r` starts its timer at `b`, else at `r`. A priority not already paused stops starting
//!   frames from `r + reaction_delay` on; an already running pause just gets the new expiry.
//!   Time 0 releases at `r`. PFC: only priorities whose enable bit is set *and* which are
//!   enabled on this port are reloaded.
//! - Receive validity: destination 01-80-C2-00-00-01 or the own station address, length
//!   exactly 64 bytes with FCS (as vendor MACs require), opcode PAUSE or PFC; everything else
//!   is counted (`rx_wrong_destination`, `rx_wrong_length`, `UnsupportedOpcodesReceived`) and
//!   not obeyed. The PFC enable vector's reserved high byte is ignored.
//! - Modes: PAUSE and PFC never both — [`Mode`] is one of Off/Pause/Pfc. A port in PFC mode
//!   counts received PAUSE frames but does not obey them (802.1Qbb makes PFC replace PAUSE on a
//!   port; switch vendors make the two mutually exclusive), a PAUSE-mode port does not obey PFC,
//!   and an Off port obeys neither; all are counted in `rx_ignored_mode`.

mod config;
mod counters;
mod frame;
mod rx;
mod tx;
mod wire;

pub use config::{
    ConfigError, FlowControlConfig, Framing, Mode, NS3_PFC_FRAME_BYTES, PRIORITIES, PriorityConfig,
    Signalling, default_reaction_delay, reaction_delay_quanta,
};
pub use counters::Counters;
pub use frame::{
    CONTROL_FRAME_BYTES, ControlFrame, MAC_CONTROL_ETHERTYPE, MAC_CONTROL_MULTICAST, OPCODE_PAUSE,
    OPCODE_PFC, ReceivedBody, ReceivedControl, Transmit, TxSlot,
};

use crate::units::{Duration, IFG_BYTES, Instant, PREAMBLE_SFD_BYTES};
use rx::{Arrival, RxSide};
use tx::TxSide;

/// Why a request could not be applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The port's flow control is off.
    #[error("flow control is off on this port")]
    Off,
    /// PFC: the priority is out of range or not enabled on this port.
    #[error("priority {priority} is not PFC-enabled on this port (enabled mask {enabled:#010b})")]
    NotEnabled {
        /// The priority asked for.
        priority: u8,
        /// The port's enabled priorities, bit n = priority n.
        enabled: u8,
    },
}

/// Why the engine refused a reported data frame start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TxError {
    /// A frame (data or control) is still on the wire: frames start only at boundaries.
    #[error("wire busy until {free_at}: a frame must not start before the previous one ends")]
    WireBusy {
        /// When the wire is free.
        free_at: Instant,
    },
    /// The priority is paused by the peer (`may_transmit` is false).
    #[error("priority {priority} is paused by the peer")]
    Paused {
        /// The priority of the refused frame.
        priority: u8,
    },
    /// Own data is held while a request with `hold_own_data` is raised.
    #[error("own data is held while flow control is requested")]
    Held,
    /// A PAUSE/PFC frame is due: it goes out first (call `poll_transmit`).
    #[error("a control frame is due and goes out ahead of data")]
    ControlDue,
}

/// What became of a received MAC Control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxOutcome {
    /// Obeyed: the pause timers of the priorities in the mask (PAUSE: bit 0) were reloaded.
    Obeyed {
        /// Bit p set for every register set reloaded.
        priorities: u8,
    },
    /// Counted but not obeyed, for the reason given.
    Refused(Refusal),
}

/// Why a received MAC Control frame was not obeyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// Destination neither 01-80-C2-00-00-01 nor this port's address.
    WrongDestination,
    /// Length other than 64 bytes (FCS included).
    WrongLength {
        /// The length found.
        found: u32,
    },
    /// An opcode other than PAUSE and PFC.
    UnsupportedOpcode {
        /// The opcode found.
        opcode: u16,
    },
    /// A valid PAUSE/PFC frame the port's mode does not obey (off, or the other mechanism).
    Mode,
}

/// Flow control of one port (MAC): transmit-side generation and receive-side obeying.
///
/// Laid out by hand (`repr(C)`) for a simulator that runs thousands of engines: what a data
/// frame's start reads is the clock and wire times (one cache line) and the receive side's
/// open-span mask, the active mask, mode, framing and the transmit side's busy mask (together
/// in the line where the receive side ends and the transmit side begins); the per-priority
/// states are read only while their set is open or busy. The counters (most of its memory)
/// are built at the first count: most ports of a large fabric never count one.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct FlowControl {
    now: Instant,
    tx_last_bit: Instant,
    wire_free_at: Instant,
    /// Exact durations at the port's rate, computed once (no division on the hot path).
    byte: Duration,
    /// Ends with its open-span mask.
    rx: RxSide,
    active: u8,
    /// `cfg.mode` and `cfg.framing`, beside the masks the data path reads.
    mode: Mode,
    framing: Framing,
    /// [`Framing::Ns3`]: the length of the last frame started and its transmission time in
    /// picoseconds (`ns3_tx_time`), reused while frames keep that length (most do); 0 when
    /// none is kept. In the padding before `tx`: the engine does not grow.
    ns3_len: u32,
    ns3_time: u64,
    /// The length and time that `ns3_len` and `ns3_time` held before (a port that sends
    /// data packets and their acknowledgements alternates two lengths); 0 when none is kept.
    ns3_len_prev: u32,
    ns3_time_prev: u64,
    /// Starts with its busy mask.
    tx: TxSide,
    quantum: Duration,
    refresh: [Duration; PRIORITIES],
    cfg: FlowControlConfig,
    counters: counters::LazyCounters,
}

impl FlowControl {
    /// An engine for one port, or why the configuration is unusable.
    pub fn new(cfg: FlowControlConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let (byte, quantum, refresh) = durations(&cfg);
        Ok(FlowControl {
            byte,
            quantum,
            refresh,
            active: cfg.active_mask(),
            mode: cfg.mode,
            framing: cfg.framing,
            ns3_len: 0,
            ns3_time: 0,
            ns3_len_prev: 0,
            ns3_time_prev: 0,
            cfg,
            tx: TxSide::default(),
            rx: RxSide::default(),
            counters: counters::LazyCounters::default(),
            now: Instant::ZERO,
            tx_last_bit: Instant::ZERO,
            wire_free_at: Instant::ZERO,
        })
    }

    /// Switches the running engine to `cfg` at `now` (a DCBX or dcbnl change at run time),
    /// keeping what a NIC keeps; on error (`cfg` fails [`FlowControlConfig::validate`])
    /// nothing changes.
    ///
    /// Exactly, after `advance(now)` (pauses that ran out by `now` are accounted as usual):
    /// - Counters are kept and never decrease; the wire (frame in progress, `wire_free_at`,
    ///   the last bit a received pause timer would start at) is kept.
    /// - Same mode and rate: a register set still in use under `cfg` (PAUSE: set 0; PFC: a
    ///   priority enabled before and after) keeps its received pause, which runs to its end
    ///   (its start and reaction-delay instant as computed at reception), its raised request,
    ///   its pending XOFF or XON and its refresh deadline (the interval already started keeps
    ///   its length; new `pause_quanta`/`refresh_quanta` apply from the next XOFF;
    ///   `xon_on_release` and `hold_own_data` from now on).
    /// - A PFC priority no longer enabled: its received pause ends at `now` (paused time
    ///   accounted up to `now`, counted as a transition if it was in effect, as an expiry
    ///   would be); its request, pending XOFF/XON and refresh deadline are dropped and *no
    ///   XON is sent* (a raised request's time is accounted up to `now`). Reason: DCBX PFC
    ///   is a symmetric attribute (802.1Qaz; lldptool-pfc(8): "the Symmetric attribute
    ///   passing state machine"): both ends run the same operational enable vector, so the
    ///   peer stops honouring that priority under the same agreement, and NIC drivers set
    ///   PFC send and obey from one vector (Linux mlx4 `mlx4_en_dcbnl_ieee_setpfc`:
    ///   `rx_ppp = tx_ppp = pfc_en`), with no XON step for a priority leaving it. Until the
    ///   peer adopts the change, the pause it obeys lasts at most its pause time.
    /// - A newly enabled priority starts clean (no pause, no request).
    /// - Another mode (off/PAUSE/PFC) or another rate: every received pause ends at `now`
    ///   and every request is dropped as above (no XON; quanta of the old rate mean nothing
    ///   at the new one, and a rate change is a link renegotiation, which ends pauses);
    ///   counters and the wire are kept.
    /// - Rate-derived durations (byte time, quantum, refresh intervals) are recomputed.
    /// - `cfg` equal to the configuration in force: nothing changes (not even the clock).
    ///
    /// The driver re-raises requests it still holds on priorities that were not enabled
    /// before (or after a mode change), and then asks `poll_timeout` again.
    pub fn reconfigure(&mut self, now: Instant, cfg: FlowControlConfig) -> Result<(), ConfigError> {
        cfg.validate()?;
        if cfg == self.cfg {
            return Ok(());
        }
        self.advance(now);
        let now = self.now;
        let active = cfg.active_mask();
        let ended = if cfg.mode != self.cfg.mode || cfg.rate != self.cfg.rate {
            0xFF
        } else {
            self.active & !active
        };
        for p in (0..PRIORITIES).filter(|p| ended & (1 << p) != 0) {
            self.rx.end_at(now, p, &mut self.counters);
            self.tx.drop_set(now, p, &mut self.counters);
        }
        (self.byte, self.quantum, self.refresh) = durations(&cfg);
        self.active = active;
        self.mode = cfg.mode;
        self.framing = cfg.framing;
        (self.ns3_len, self.ns3_time) = (0, 0);
        (self.ns3_len_prev, self.ns3_time_prev) = (0, 0);
        self.cfg = cfg;
        Ok(())
    }

    /// The latest time the engine has been given (queries about earlier times answer for it).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The configuration the engine runs.
    pub fn config(&self) -> &FlowControlConfig {
        &self.cfg
    }

    /// Counters so far (pause durations include only spans that have ended; see
    /// [`FlowControl::rx_pause_duration`] for a running total).
    pub fn counters(&self) -> &Counters {
        self.counters.get()
    }

    fn advance(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
        self.rx.settle(self.now, &mut self.counters);
    }

    /// Register set used for priority `p`: PAUSE mode uses 0 for every priority.
    fn slot(&self, p: u8) -> usize {
        match self.mode {
            config::Mode::Pfc => usize::from(p & 7),
            _ => 0,
        }
    }

    /// Raises (`asserted`) or lowers the flow-control request of priority `p` (PAUSE: any p).
    pub fn set_request(&mut self, now: Instant, p: u8, asserted: bool) -> Result<(), RequestError> {
        self.advance(now);
        let slot = match self.cfg.mode {
            Mode::Off => return Err(RequestError::Off),
            Mode::Pause => 0,
            Mode::Pfc => {
                if p >= 8 || self.active & (1 << p) == 0 {
                    return Err(RequestError::NotEnabled {
                        priority: p,
                        enabled: self.active,
                    });
                }
                usize::from(p)
            }
        };
        self.tx
            .set_request(self.now, slot, asserted, &self.cfg, &mut self.counters);
        Ok(())
    }

    /// The control frame to start now, if one is due and the wire is idle; it is recorded as
    /// transmitted (the driver must put it on the wire at `now`).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.advance(now);
        if self.now < self.wire_free_at {
            return None;
        }
        let frame = self.tx.take_frame(
            self.now,
            &self.cfg,
            self.active,
            &self.refresh,
            &mut self.counters,
        )?;
        let bytes = match self.cfg.framing {
            Framing::Ieee8023 => CONTROL_FRAME_BYTES,
            Framing::Ns3 => NS3_PFC_FRAME_BYTES,
        };
        let slot = self.occupy(bytes);
        Some(Transmit {
            frame,
            dst: MAC_CONTROL_MULTICAST,
            src: self.cfg.station_address,
            start: slot.start,
            last_bit: slot.last_bit,
            free_at: slot.free_at,
        })
    }

    /// Whether a control frame is due (it goes out at the next idle-wire `poll_transmit`).
    #[inline]
    pub fn has_control_due(&self, now: Instant) -> bool {
        let (xoff, xon) = self.tx.due(now.max(self.now), self.active);
        xoff | xon != 0
    }

    #[inline(always)]
    fn occupy(&mut self, frame_bytes: u64) -> TxSlot {
        let start = self.now;
        let (last_bit, free_at) = match self.framing {
            Framing::Ieee8023 => (
                start.saturating_add(
                    self.byte
                        .saturating_mul(frame_bytes.saturating_add(PREAMBLE_SFD_BYTES)),
                ),
                start.saturating_add(
                    self.byte
                        .saturating_mul(frame_bytes.saturating_add(PREAMBLE_SFD_BYTES + IFG_BYTES)),
                ),
            ),
            Framing::Ns3 => {
                let t = if frame_bytes == u64::from(self.ns3_len) {
                    Duration::from_ps(u128::from(self.ns3_time))
                } else {
                    self.ns3_tx_time_of_new_length(frame_bytes)
                };
                let end = start.saturating_add(t);
                (end, end)
            }
        };
        self.tx_last_bit = last_bit;
        self.wire_free_at = free_at;
        TxSlot {
            start,
            last_bit,
            free_at,
        }
    }

    /// [`ns3_tx_time`] of `frame_bytes` at the port's rate, for a frame whose length differs
    /// from the last one's (`occupy` reuses that one's time otherwise): the one before's if
    /// it had that length (the two swap), else computed and kept, the last one's moved back.
    #[inline(never)]
    fn ns3_tx_time_of_new_length(&mut self, frame_bytes: u64) -> Duration {
        if frame_bytes == u64::from(self.ns3_len_prev) && self.ns3_len_prev != 0 {
            let ps = self.ns3_time_prev;
            (self.ns3_len_prev, self.ns3_time_prev) = (self.ns3_len, self.ns3_time);
            (self.ns3_len, self.ns3_time) = (frame_bytes as u32, ps);
            return Duration::from_ps(u128::from(ps));
        }
        let t = ns3_tx_time(self.byte, frame_bytes);
        // kept when both fit (a frame's time does, below 213 days)
        if let (Ok(len), Ok(ps)) = (u32::try_from(frame_bytes), u64::try_from(t.as_ps()))
            && len != 0
        {
            (self.ns3_len_prev, self.ns3_time_prev) = (self.ns3_len, self.ns3_time);
            self.ns3_len = len;
            self.ns3_time = ps;
        }
        t
    }

    /// Records that a data frame of `frame_bytes` (FCS included) and priority `p` starts now;
    /// refused if the wire is busy, `p` is paused, own data is held or a control frame is due.
    #[inline]
    pub fn on_tx_start(&mut self, now: Instant, frame_bytes: u64, p: u8) -> Result<TxSlot, TxError> {
        self.advance(now);
        if self.now < self.wire_free_at {
            return Err(TxError::WireBusy {
                free_at: self.wire_free_at,
            });
        }
        if !self.rx.may_transmit(self.now, self.slot(p)) {
            return Err(TxError::Paused { priority: p });
        }
        if self.tx.holds_data(&self.cfg, self.active) {
            return Err(TxError::Held);
        }
        if self.has_control_due(self.now) {
            return Err(TxError::ControlDue);
        }
        Ok(self.occupy(frame_bytes))
    }

    /// [`FlowControl::on_tx_start`] for a driver that found [`FlowControl::may_start_data`]
    /// true for `p` at `now` (or its parts: wire idle, no control frame due, `p` not paused,
    /// no own data held) and has given the engine nothing since: the same slot, without
    /// asking again (checked in debug builds).
    #[inline]
    pub fn on_tx_start_allowed(&mut self, now: Instant, frame_bytes: u64, p: u8) -> TxSlot {
        debug_assert!(self.may_start_data(now, p), "on_tx_start_allowed while refused");
        self.advance(now);
        self.occupy(frame_bytes)
    }

    /// Handles a MAC Control frame whose last bit arrived at `now`.
    pub fn handle_control_frame(&mut self, now: Instant, rx: &ReceivedControl) -> RxOutcome {
        self.advance(now);
        if rx.dst != MAC_CONTROL_MULTICAST && rx.dst != self.cfg.station_address {
            self.counters.get_mut().rx_wrong_destination += 1;
            return RxOutcome::Refused(Refusal::WrongDestination);
        }
        if u64::from(rx.frame_len) != CONTROL_FRAME_BYTES {
            self.counters.get_mut().rx_wrong_length += 1;
            return RxOutcome::Refused(Refusal::WrongLength { found: rx.frame_len });
        }
        self.counters.get_mut().mac_control_frames_received += 1;
        let frame = match rx.body {
            ReceivedBody::Unknown { opcode } => {
                self.counters.get_mut().unsupported_opcodes_received += 1;
                return RxOutcome::Refused(Refusal::UnsupportedOpcode { opcode });
            }
            ReceivedBody::Known(f) => f,
        };
        let r = self.now;
        let at = Arrival {
            received: r,
            timer_start: if self.tx_last_bit > r { self.tx_last_bit } else { r },
        };
        let (quantum, delay) = (self.quantum, self.cfg.reaction_delay);
        let timer = self.cfg.signalling == Signalling::Ieee;
        match frame {
            ControlFrame::Pause { quanta } => {
                self.counters.get_mut().pause_mac_ctrl_frames_received += 1;
                if self.cfg.mode != Mode::Pause {
                    self.counters.get_mut().rx_ignored_mode += 1;
                    return RxOutcome::Refused(Refusal::Mode);
                }
                self.rx
                    .apply(0, quanta, at, quantum, delay, timer, &mut self.counters);
                RxOutcome::Obeyed { priorities: 1 }
            }
            ControlFrame::Pfc { enable_vector, time } => {
                self.counters.get_mut().pfc_frames_received += 1;
                for (p, ind) in self.counters.get_mut().indications.iter_mut().enumerate() {
                    if enable_vector & (1 << p) != 0 {
                        *ind += 1;
                    }
                }
                if self.cfg.mode != Mode::Pfc {
                    self.counters.get_mut().rx_ignored_mode += 1;
                    return RxOutcome::Refused(Refusal::Mode);
                }
                let obey = enable_vector & self.active;
                for (p, &q) in time.iter().enumerate() {
                    if obey & (1 << p) != 0 {
                        self.rx.apply(p, q, at, quantum, delay, timer, &mut self.counters);
                    }
                }
                RxOutcome::Obeyed { priorities: obey }
            }
        }
    }

    /// Whether a data frame of priority `p` may start at `now` as far as the peer's pauses go
    /// (document 002's `fc`, inverted). Priorities are taken modulo 8 (3 PCP bits).
    #[inline]
    pub fn may_transmit(&self, now: Instant, p: u8) -> bool {
        if self.mode == Mode::Off {
            return true;
        }
        let slot = self.slot(p);
        if self.active & (1 << slot) == 0 {
            return true;
        }
        self.rx.may_transmit(now.max(self.now), slot)
    }

    /// Whether own data must be held now (a raised request with `hold_own_data`).
    #[inline]
    pub fn hold_data(&self, _now: Instant) -> bool {
        self.tx.holds_data(&self.cfg, self.active)
    }

    /// Whether a data frame of `p` may start now: wire idle, no control frame due, not
    /// paused, not held.
    #[inline]
    pub fn may_start_data(&self, now: Instant, p: u8) -> bool {
        now >= self.wire_free_at
            && !self.has_control_due(now)
            && self.may_transmit(now, p)
            && !self.hold_data(now)
    }

    /// When the wire is free for the next frame (end of the last frame's inter-frame gap).
    #[inline]
    pub fn wire_free_at(&self) -> Instant {
        self.wire_free_at
    }

    /// The next instant at which the engine needs `handle_timeout` (a refresh falls due, a
    /// received pause takes effect or expires), or `None` if nothing is scheduled.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let now = self.now;
        let refresh = self.tx.next_refresh(now, self.active);
        let due_after_busy =
            (self.has_control_due(now) && self.wire_free_at > now).then_some(self.wire_free_at);
        let rx = self.rx.next_change(now);
        [refresh, due_after_busy, rx].into_iter().flatten().min()
    }

    /// Advances the engine's timers to `now` (accounts expired pauses).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    /// Bit p set while priority p is paused at `now` (PAUSE: bit 0 for the link).
    pub fn paused_mask(&self, now: Instant) -> u8 {
        (0..PRIORITIES)
            .filter(|&p| self.active & (1 << p) != 0 && !self.rx.may_transmit(now.max(self.now), p))
            .fold(0, |m, p| m | (1 << p))
    }

    /// Bit p set while request p is raised (PAUSE: bit 0).
    pub fn requested_mask(&self) -> u8 {
        self.tx.requested_mask()
    }

    /// When priority p's running pause expires (PAUSE: any p), if one runs at `now`.
    pub fn pause_until(&self, now: Instant, p: u8) -> Option<Instant> {
        self.rx.pause_until(now.max(self.now), self.slot(p))
    }

    /// End of the current refresh interval of request p, if an XOFF for it is outstanding.
    pub fn refresh_at(&self, p: u8) -> Option<Instant> {
        self.tx.refresh_at(self.slot(p))
    }

    /// Total time priority p has been paused up to `now`, the running span included.
    pub fn rx_pause_duration(&self, now: Instant, p: u8) -> Duration {
        let slot = self.slot(p);
        self.counters.get().rx_prio_pause_duration[slot] + self.rx.running_pause(now.max(self.now), slot)
    }

    /// Total time request p has been raised up to `now`, the running span included.
    pub fn tx_pause_duration(&self, now: Instant, p: u8) -> Duration {
        let slot = self.slot(p);
        self.counters.get().tx_prio_pause_duration[slot] + self.tx.running_request(now.max(self.now), slot)
    }
}

/// The HPCC ns-3 simulator's time to send `frame_bytes` whose byte lasts `byte`: one
/// nanosecond less than the exact time rounded up, `ceil(exact) − 1 ns` (ns-3's
/// `Seconds(DataRate::CalculateTxTime(..))` lands just below a whole nanosecond and its
/// `Time` keeps the integer part: the floor when the exact time is not whole, one less when
/// it is; corpus MODEL.md §9.4). Zero bytes take no time.
pub fn ns3_tx_time(byte: Duration, frame_bytes: u64) -> Duration {
    let ps = byte.saturating_mul(frame_bytes).as_ps();
    // every real frame time fits 64 bits: round there (a 128-bit division is a library call)
    let ns = match u64::try_from(ps) {
        // one division by a constant (a multiply and a shift)
        Ok(small) => u128::from(small.div_ceil(1_000)),
        Err(_) => ps.div_ceil(1_000),
    };
    Duration::from_ps(ns.saturating_sub(1) * 1_000)
}

/// Exact durations at `cfg`'s rate: a byte, a pause quantum, each set's refresh interval.
fn durations(cfg: &FlowControlConfig) -> (Duration, Duration, [Duration; PRIORITIES]) {
    let quantum = cfg.rate.quanta_time(1);
    let refresh = cfg
        .priorities
        .map(|pc| quantum.saturating_mul(u64::from(pc.refresh_quanta)));
    (cfg.rate.time_for_bytes(1), quantum, refresh)
}
