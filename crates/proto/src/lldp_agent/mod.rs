//! A sans-IO LLDP agent (IEEE 802.1AB-2009): the transmit state machine with msgTxInterval,
//! fast start and transmit credit, the shutdown LLDPDU, and the receive side with TTL ageing,
//! neighbour-change detection, a bounded neighbour table and the 802.1AB statistics.
//!
//! The driver feeds received LLDPDUs to [`LldpAgent::handle_lldpdu`], calls
//! [`LldpAgent::poll_transmit`] until it returns `None`, and calls
//! [`LldpAgent::handle_timeout`] at [`LldpAgent::poll_timeout`]. Nothing reads a clock.

pub mod config;
pub mod neighbours;
pub mod rx;
pub mod stats;

use std::collections::VecDeque;

use lossless_wire::Error;
use lossless_wire::ethernet::{EtherType, EthernetAddress};
use lossless_wire::lldp::{ChassisId, ChassisIdSubtype, PortId, PortIdSubtype, Tlv};

pub use config::{AgentConfig, ConfigError, Timers, TooManyNeighbours};
pub use neighbours::{Msap, Neighbour, NeighbourSummary, NeighbourTable, mac_text};
pub use stats::Statistics;

use crate::units::{Duration, Instant};

/// Smallest Ethernet frame without FCS; shorter LLDP frames are zero-padded to it.
const MIN_FRAME_NO_FCS: usize = 60;
/// How often one transmit credit comes back (802.1AB txTick).
const CREDIT_TICK: Duration = Duration::from_secs(1);

/// Something that happened to the agent's view of its neighbours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LldpEvent {
    /// A neighbour appeared.
    NeighbourAdded(Msap),
    /// A neighbour's TLVs changed.
    NeighbourChanged(Msap),
    /// A neighbour's TTL ran out (statsAgeoutsTotal counted it).
    NeighbourAgedOut(Msap),
    /// A neighbour sent a shutdown LLDPDU (TTL 0) and was removed.
    ShutdownReceived(Msap),
    /// A new neighbour did not fit; under `DiscardNew` its LLDPDU was discarded, under
    /// `ReplaceEarliestExpiry` the given neighbour was evicted.
    TooManyNeighbours {
        /// The neighbour that was evicted, if any.
        evicted: Option<Msap>,
    },
    /// An LLDPDU was discarded as malformed.
    Malformed(Error),
}

/// What [`LldpAgent::handle_lldpdu`] did with an LLDPDU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RxOutcome {
    /// Stored: a new neighbour, changed TLVs, or only a refreshed TTL.
    Stored {
        /// The neighbour.
        msap: Msap,
        /// Whether it is new or its TLVs changed.
        changed: bool,
    },
    /// A TTL-0 shutdown removed the neighbour (`true` when it was known).
    Shutdown(Msap, bool),
    /// Discarded: malformed, or no room for a new neighbour.
    Discarded,
}

/// Where the agent is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not started yet: the first call with a time starts it (link up).
    Initial,
    /// Transmitting and receiving.
    Running,
    /// Stopped at the given time; may start again after reinitDelay.
    Stopped(Instant),
    /// The link is down; starts again (fast) when it comes up.
    LinkDown,
}

/// One LLDP agent on one port. See the module docs.
#[derive(Debug, Clone)]
pub struct LldpAgent {
    config: AgentConfig,
    phase: Phase,
    /// Optional TLVs to send after the mandatory ones (DCBX adds its TLVs here).
    local_tlvs: Vec<Tlv>,
    tx_now: bool,
    tx_fast: u32,
    tx_credit: u32,
    next_tx: Instant,
    next_credit: Option<Instant>,
    shutdown_pending: bool,
    last_now: Instant,
    neighbours: NeighbourTable,
    /// The neighbour `ReplaceEarliestExpiry` never evicts (the DCBX peer).
    protected: Option<Msap>,
    stats: Statistics,
    events: VecDeque<LldpEvent>,
}

/// Appends one TLV to `buf`. Every TLV the agent sends has its length checked when it is
/// stored (`LldpAgent::new`, `LldpAgent::set_local_tlvs`), so emitting it cannot fail.
fn append_tlv<B: AsRef<[u8]>>(buf: &mut Vec<u8>, t: &Tlv<B>) {
    let start = buf.len();
    buf.resize(start + t.buffer_len(), 0);
    t.emit(&mut buf[start..])
        .expect("every TLV length is checked before it is stored");
}

/// Upper bound of queued events; older ones are dropped first when the driver never polls.
const MAX_EVENTS: usize = 256;

impl LldpAgent {
    /// An agent for `config`; it starts (link up, fast transmission) at the first call that
    /// passes a time.
    pub fn new(config: AgentConfig) -> Result<Self, ConfigError> {
        config.timers.validate()?;
        if config.max_neighbours == 0 {
            return Err(ConfigError::NoNeighbours);
        }
        if let Some(name) = &config.port_name
            && !(1..=255).contains(&name.len())
        {
            return Err(ConfigError::PortName(name.len()));
        }
        if let Some(name) = &config.system_name
            && name.len() > 255
        {
            return Err(ConfigError::SystemName(name.len()));
        }
        Ok(LldpAgent {
            neighbours: NeighbourTable::new(config.max_neighbours),
            tx_credit: config.timers.tx_credit_max,
            config,
            phase: Phase::Initial,
            local_tlvs: Vec::new(),
            tx_now: false,
            tx_fast: 0,
            next_tx: Instant::ZERO,
            next_credit: None,
            shutdown_pending: false,
            last_now: Instant::ZERO,
            protected: None,
            stats: Statistics::default(),
            events: VecDeque::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Whether the agent is transmitting and receiving.
    pub fn is_running(&self) -> bool {
        self.phase == Phase::Running
    }

    /// Starts the agent at `now` if it has not started, or if it stopped at least
    /// reinitDelay ago; returns whether it is running.
    pub fn start(&mut self, now: Instant) -> bool {
        self.last_now = self.last_now.max(now);
        match self.phase {
            Phase::Running => return true,
            Phase::Stopped(at) if now < at.saturating_add(self.config.timers.reinit_delay) => return false,
            _ => {}
        }
        self.phase = Phase::Running;
        self.tx_credit = self.config.timers.tx_credit_max;
        self.next_credit = None;
        self.tx_fast = self.config.timers.tx_fast_init;
        self.tx_now = true;
        self.next_tx = now;
        true
    }

    /// Replaces the optional TLVs sent after Chassis ID, Port ID and TTL (and before End).
    /// A change is a local change: an LLDPDU goes out as soon as credit allows, then
    /// txFastInit more at msgFastTx. A TLV longer than its 9-bit length field can say
    /// (511 bytes) is refused with its error and the TLVs sent stay as they were.
    pub fn set_local_tlvs(&mut self, now: Instant, tlvs: Vec<Tlv>) -> Result<(), Error> {
        for t in &tlvs {
            t.check_len()?;
        }
        if tlvs == self.local_tlvs {
            return Ok(());
        }
        self.local_tlvs = tlvs;
        self.something_changed_local(now);
        Ok(())
    }

    /// Marks the neighbour a full table must never evict to make room for a new one (under
    /// [`TooManyNeighbours::ReplaceEarliestExpiry`]); `None` protects none. The DCBX agent
    /// protects its peer this way.
    pub fn set_protected(&mut self, msap: Option<Msap>) {
        self.protected = msap;
    }

    /// The optional TLVs the agent sends.
    pub fn local_tlvs(&self) -> &[Tlv] {
        &self.local_tlvs
    }

    fn something_changed_local(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        if self.phase == Phase::Running {
            self.tx_now = true;
            self.tx_fast = self.config.timers.tx_fast_init;
        }
    }

    /// Stops the agent: the next [`LldpAgent::poll_transmit`] returns the shutdown LLDPDU
    /// (TTL 0) and the neighbour table is cleared. Restart with [`LldpAgent::start`].
    pub fn shutdown(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        if self.phase == Phase::Running {
            self.shutdown_pending = true;
        }
        self.phase = Phase::Stopped(now);
        self.tx_now = false;
        self.neighbours.clear();
    }

    /// The port went down (802.1AB portEnabled false): nothing is sent, and the neighbours'
    /// information is deleted (each reported as [`LldpEvent::NeighbourAgedOut`] without
    /// counting an ageout).
    pub fn link_down(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        if self.phase == Phase::Running {
            self.phase = Phase::LinkDown;
            self.tx_now = false;
            for n in std::mem::take(&mut self.neighbours).expire(Instant::MAX) {
                self.push_event(LldpEvent::NeighbourAgedOut(n.msap));
            }
            self.neighbours = NeighbourTable::new(self.config.max_neighbours);
        }
    }

    /// The port came back up: transmission restarts with fast start (txFastInit frames).
    pub fn link_up(&mut self, now: Instant) {
        if self.phase == Phase::LinkDown {
            self.phase = Phase::Initial;
            self.start(now);
        }
    }

    /// The TTL the agent advertises, seconds.
    pub fn ttl_secs(&self) -> u16 {
        self.config.timers.ttl_secs()
    }

    /// The LLDPDU (Ethernet payload) the agent sends now, with the given TTL.
    pub fn lldpdu(&self, ttl: u16) -> Vec<u8> {
        let mut v = Vec::new();
        self.append_lldpdu(ttl, &mut v);
        v
    }

    /// Appends the LLDPDU with the given TTL to `buf`, allocating only when `buf` must grow.
    fn append_lldpdu(&self, ttl: u16, buf: &mut Vec<u8>) {
        let mac = &self.config.mac[..];
        append_tlv(
            buf,
            &Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: mac,
            }),
        );
        append_tlv(
            buf,
            &Tlv::PortId(match &self.config.port_name {
                Some(name) => PortId {
                    subtype: PortIdSubtype::InterfaceName,
                    id: name.as_bytes(),
                },
                None => PortId {
                    subtype: PortIdSubtype::MacAddress,
                    id: mac,
                },
            }),
        );
        append_tlv(buf, &Tlv::<&[u8]>::Ttl(ttl));
        if ttl != 0 {
            if let Some(name) = &self.config.system_name {
                append_tlv(buf, &Tlv::SystemName(name.as_bytes()));
            }
            for t in &self.local_tlvs {
                append_tlv(buf, t);
            }
        }
        append_tlv(buf, &Tlv::<&[u8]>::End);
    }

    /// Replaces the contents of `buf` with the Ethernet frame (no FCS, padded to 60 bytes)
    /// carrying the LLDPDU with the given TTL.
    fn write_frame(&self, ttl: u16, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(EthernetAddress::LLDP_NEAREST_BRIDGE.as_bytes());
        buf.extend_from_slice(&self.config.mac);
        buf.extend_from_slice(&EtherType::LLDP.0.to_be_bytes());
        self.append_lldpdu(ttl, buf);
        if buf.len() < MIN_FRAME_NO_FCS {
            buf.resize(MIN_FRAME_NO_FCS, 0);
        }
    }

    /// The next frame to send at `now` (a whole Ethernet frame without FCS), if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        let mut frame = Vec::new();
        self.poll_transmit_into(now, &mut frame).then_some(frame)
    }

    /// Writes the next frame to send at `now` (a whole Ethernet frame without FCS) into
    /// `buf`, replacing its contents, and returns whether there was one (`buf` is left as it
    /// was when not). Reusing `buf` makes sending allocation-free once it has grown to the
    /// frame's size.
    pub fn poll_transmit_into(&mut self, now: Instant, buf: &mut Vec<u8>) -> bool {
        self.last_now = self.last_now.max(now);
        if self.shutdown_pending {
            self.shutdown_pending = false;
            self.stats.frames_out_total += 1;
            self.write_frame(0, buf);
            return true;
        }
        if self.phase == Phase::Initial {
            self.start(now);
        }
        if self.phase != Phase::Running {
            return false;
        }
        self.refill_credit(now);
        let due = self.tx_now || now >= self.next_tx;
        if !due || self.tx_credit == 0 {
            return false;
        }
        self.tx_credit -= 1;
        if self.next_credit.is_none() {
            self.next_credit = Some(now + CREDIT_TICK);
        }
        self.tx_now = false;
        self.tx_fast = self.tx_fast.saturating_sub(1);
        let t = &self.config.timers;
        self.next_tx = now
            + if self.tx_fast > 0 {
                t.msg_fast_tx
            } else {
                t.msg_tx_interval
            };
        self.stats.frames_out_total += 1;
        self.write_frame(self.ttl_secs(), buf);
        true
    }

    fn refill_credit(&mut self, now: Instant) {
        while let Some(at) = self.next_credit {
            if at > now {
                break;
            }
            self.tx_credit = (self.tx_credit + 1).min(self.config.timers.tx_credit_max);
            self.next_credit = (self.tx_credit < self.config.timers.tx_credit_max).then(|| at + CREDIT_TICK);
        }
    }

    /// When the agent next needs [`LldpAgent::handle_timeout`] or
    /// [`LldpAgent::poll_transmit`]; `None` when it has nothing scheduled.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.neighbours.next_expiry();
        let mut add = |x: Instant| t = Some(t.map_or(x, |t: Instant| t.min(x)));
        if self.shutdown_pending || self.phase == Phase::Initial {
            add(self.last_now);
        }
        if self.phase == Phase::Running {
            if self.tx_credit > 0 {
                add(if self.tx_now { self.last_now } else { self.next_tx });
            }
            if let Some(c) = self.next_credit {
                add(c);
            }
        }
        t
    }

    /// Advances timers to `now`: credit refill and neighbour ageing.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        if self.phase == Phase::Initial {
            self.start(now);
        }
        self.refill_credit(now);
        for n in self.neighbours.expire(now) {
            self.stats.ageouts_total += 1;
            self.push_event(LldpEvent::NeighbourAgedOut(n.msap));
        }
    }

    /// Handles a received LLDPDU (the Ethernet payload) from `src_mac` at `now`.
    pub fn handle_lldpdu(&mut self, now: Instant, src_mac: [u8; 6], lldpdu: &[u8]) -> RxOutcome {
        self.last_now = self.last_now.max(now);
        if self.phase == Phase::Initial {
            self.start(now);
        }
        self.stats.frames_in_total += 1;
        if self.phase != Phase::Running {
            self.stats.frames_discarded_total += 1;
            return RxOutcome::Discarded;
        }
        let v = match rx::validate(lldpdu) {
            Ok(v) => v,
            Err(e) => {
                self.stats.frames_discarded_total += 1;
                self.stats.frames_in_errors_total += 1;
                self.push_event(LldpEvent::Malformed(e));
                return RxOutcome::Discarded;
            }
        };
        self.stats.tlvs_discarded_total += v.discarded;
        self.stats.tlvs_unrecognized_total += v.unrecognized;
        let msap = Msap {
            chassis: v.chassis,
            port: v.port,
        };
        if v.ttl == 0 {
            let known = self.neighbours.remove(&msap).is_some();
            if known {
                self.push_event(LldpEvent::ShutdownReceived(msap.clone()));
            }
            return RxOutcome::Shutdown(msap, known);
        }
        let expires = now + Duration::from_secs(u64::from(v.ttl));
        if let Some(n) = self.neighbours.get_mut(&msap) {
            let changed = n.tlvs != v.tlvs || n.src_mac != src_mac;
            n.ttl = v.ttl;
            n.expires = expires;
            n.src_mac = src_mac;
            n.tlvs = v.tlvs;
            if changed {
                self.push_event(LldpEvent::NeighbourChanged(msap.clone()));
            }
            return RxOutcome::Stored { msap, changed };
        }
        if self.neighbours.is_full() {
            match self.config.too_many {
                TooManyNeighbours::DiscardNew => {
                    self.stats.frames_discarded_total += 1;
                    self.push_event(LldpEvent::TooManyNeighbours { evicted: None });
                    return RxOutcome::Discarded;
                }
                TooManyNeighbours::ReplaceEarliestExpiry => {
                    let evicted = self
                        .neighbours
                        .remove_earliest_expiry_except(self.protected.as_ref())
                        .map(|n| n.msap);
                    self.push_event(LldpEvent::TooManyNeighbours {
                        evicted: evicted.clone(),
                    });
                    if evicted.is_none() {
                        // Only the protected neighbour is left: the new one is discarded.
                        self.stats.frames_discarded_total += 1;
                        return RxOutcome::Discarded;
                    }
                }
            }
        }
        self.neighbours.insert(Neighbour {
            msap: msap.clone(),
            src_mac,
            ttl: v.ttl,
            expires,
            tlvs: v.tlvs,
        });
        // A new neighbour starts fast transmission (802.1AB-2009 9.2.7.7.1 newNeighbor).
        self.tx_fast = self.config.timers.tx_fast_init;
        self.tx_now = true;
        self.push_event(LldpEvent::NeighbourAdded(msap.clone()));
        RxOutcome::Stored { msap, changed: true }
    }

    fn push_event(&mut self, e: LldpEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(e);
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<LldpEvent> {
        self.events.pop_front()
    }

    /// The neighbour table.
    pub fn neighbours(&self) -> &NeighbourTable {
        &self.neighbours
    }

    /// The 802.1AB statistics.
    pub fn statistics(&self) -> Statistics {
        self.stats
    }

    /// Transmit credit left (txCredit).
    pub fn tx_credit(&self) -> u32 {
        self.tx_credit
    }
}
