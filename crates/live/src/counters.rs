//! The kernel's pause counters, sans-IO: which `ethtool -S` names of which driver count what
//! ([`classify`], names verified against each driver's source, table in docs/live-tools.md),
//! the per-direction, per-priority figures gathered from one reading ([`CounterSample`]), and
//! SONiC's pfcwd run on those counters as syncd runs it on an ASIC's ([`CounterWatch`]).
//!
//! Sources of the names (Linux kernel tree):
//! - mlx5: `drivers/net/ethernet/mellanox/mlx5/core/en_stats.c`, `pport_per_prio_pfc_stats_desc`
//!   (`rx_%s_pause`, `rx_%s_pause_duration`, `tx_%s_pause`, `tx_%s_pause_duration`,
//!   `rx_%s_pause_transition` with `%s` = `prio{p}` or `global`), `pport_pfc_stall_stats_desc`
//!   (`tx_pause_storm_warning_events`, `tx_pause_storm_error_events`),
//!   `pport_per_prio_traffic_stats_desc` (`rx_prio%d_packets`, `tx_prio%d_packets`). Durations
//!   in microseconds (Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst).
//! - bnxt_en: `drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c`, `bnxt_port_stats_arr`
//!   (`rx_pfc_ena_frames_pri{p}`, `tx_pfc_ena_frames_pri{p}`, `rx_pause_frames`,
//!   `tx_pause_frames`), `BNXT_RX_STATS_EXT_PFC_ENTRY` / `BNXT_TX_STATS_EXT_PFC_ENTRY`
//!   (`pfc_pri{p}_rx_duration_us`, `pfc_pri{p}_rx_transitions`, `pfc_pri{p}_tx_duration_us`,
//!   `pfc_pri{p}_tx_transitions`).
//! - ice: `drivers/net/ethernet/intel/ice/ice_ethtool.c` (`tx_priority_%u_xon.nic`,
//!   `tx_priority_%u_xoff.nic`, `rx_priority_%u_xon.nic`, `rx_priority_%u_xoff.nic`;
//!   `ice_gstrings_pf_stats`: `link_xon_rx.nic`, `link_xoff_rx.nic`, `link_xon_tx.nic`,
//!   `link_xoff_tx.nic`).
//! - i40e: `drivers/net/ethernet/intel/i40e/i40e_ethtool.c`, `i40e_gstrings_pfc_stats`
//!   (`port.tx_priority_%u_xon_tx`, `port.tx_priority_%u_xoff_tx`, `port.rx_priority_%u_xon_rx`,
//!   `port.rx_priority_%u_xoff_rx`, `port.rx_priority_%u_xon_2_xoff`; older kernels
//!   `port.tx_priority_%u_xon` etc. without the suffix), `i40e_gstrings_stats` (`port.link_xon_rx`,
//!   `port.link_xoff_rx`, `port.link_xon_tx`, `port.link_xoff_tx`).

use serde::Serialize;

use lossless_proto::units::Duration;
use lossless_proto::watchdog::pfcwd::{self, QueueSample, QueueWatch, Rule, Verdict};

use crate::link::{ASSUMED_OCCUPANCY_BYTES, Direction};

/// Slot of 802.3 link PAUSE (priorities are 0..=7), as the monitor numbers them.
pub const LINK_SLOT: usize = 8;

/// The driver family whose names a counter has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// NVIDIA/Mellanox ConnectX-4 and later (`mlx5_core`).
    Mlx5,
    /// Broadcom NetXtreme-C/E (`bnxt_en`).
    Bnxt,
    /// Intel E800 series (`ice`).
    Ice,
    /// Intel 700 series (`i40e`).
    I40e,
}

impl Family {
    /// The driver's name.
    pub fn driver(self) -> &'static str {
        match self {
            Family::Mlx5 => "mlx5_core",
            Family::Bnxt => "bnxt_en",
            Family::Ice => "ice",
            Family::I40e => "i40e",
        }
    }
}

/// What a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// PAUSE/PFC frames (XOFF and XON together).
    Frames,
    /// XON frames (quanta 0).
    Xon,
    /// XOFF frames.
    Xoff,
    /// Time paused, microseconds.
    DurationUs,
    /// Running → paused transitions.
    Transitions,
    /// Data packets of the priority (what pfcwd calls "packets the queue sent").
    Packets,
    /// mlx5's stall prevention reached its warning watermark.
    StormWarning,
    /// mlx5's stall prevention reached its error (critical) watermark and stopped pausing.
    StormError,
}

/// What one `ethtool -S` name means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CounterKey {
    /// Whose name it is.
    pub family: Family,
    /// Rx (received from the peer) or tx (sent); `None` for the storm events.
    pub direction: Option<Direction>,
    /// Priority 0..=7, or [`LINK_SLOT`] for 802.3 PAUSE; `None` for the storm events.
    pub slot: Option<usize>,
    /// What it counts.
    pub kind: Kind,
}

fn prio(s: &str) -> Option<usize> {
    let p: usize = s.parse().ok()?;
    (p < 8 && s.len() == 1).then_some(p)
}

fn key(family: Family, d: Direction, slot: usize, kind: Kind) -> Option<CounterKey> {
    Some(CounterKey {
        family,
        direction: Some(d),
        slot: Some(slot),
        kind,
    })
}

fn dir(s: &str) -> Option<Direction> {
    match s {
        "rx" => Some(Direction::Rx),
        "tx" => Some(Direction::Tx),
        _ => None,
    }
}

/// What an `ethtool -S` counter name counts, for the drivers whose names are known (see the
/// module's sources); `None` for any other name.
pub fn classify(name: &str) -> Option<CounterKey> {
    use Family::*;
    use Kind::*;
    // mlx5 stall prevention
    match name {
        "tx_pause_storm_warning_events" | "tx_pause_storm_error_events" => {
            return Some(CounterKey {
                family: Mlx5,
                direction: None,
                slot: None,
                kind: if name.ends_with("warning_events") {
                    StormWarning
                } else {
                    StormError
                },
            });
        }
        // bnxt_en link PAUSE
        "rx_pause_frames" => return key(Bnxt, Direction::Rx, LINK_SLOT, Frames),
        "tx_pause_frames" => return key(Bnxt, Direction::Tx, LINK_SLOT, Frames),
        _ => {}
    }
    // i40e: port.{rx,tx}_priority_{p}_{xon,xoff}[_{rx,tx}], port.rx_priority_{p}_xon_2_xoff,
    // port.link_{xon,xoff}_{rx,tx}
    if let Some(rest) = name.strip_prefix("port.") {
        if let Some(l) = rest.strip_prefix("link_") {
            let (what, d) = l.split_once('_')?;
            let k = match what {
                "xon" => Xon,
                "xoff" => Xoff,
                _ => return None,
            };
            return key(I40e, dir(d)?, LINK_SLOT, k);
        }
        let (d, rest) = rest.split_once("_priority_")?;
        let d = dir(d)?;
        let (p, what) = rest.split_once('_')?;
        let p = prio(p)?;
        let suffix = match d {
            Direction::Rx => "_rx",
            Direction::Tx => "_tx",
        };
        let what = what.strip_suffix(suffix).unwrap_or(what);
        let k = match (what, d) {
            ("xon", _) => Xon,
            ("xoff", _) => Xoff,
            ("xon_2_xoff", Direction::Rx) => Transitions,
            _ => return None,
        };
        return key(I40e, d, p, k);
    }
    // ice: {rx,tx}_priority_{p}_{xon,xoff}.nic, link_{xon,xoff}_{rx,tx}.nic
    if let Some(rest) = name.strip_suffix(".nic") {
        if let Some(l) = rest.strip_prefix("link_") {
            let (what, d) = l.split_once('_')?;
            let k = match what {
                "xon" => Xon,
                "xoff" => Xoff,
                _ => return None,
            };
            return key(Ice, dir(d)?, LINK_SLOT, k);
        }
        let (d, rest) = rest.split_once("_priority_")?;
        let (p, what) = rest.split_once('_')?;
        let k = match what {
            "xon" => Xon,
            "xoff" => Xoff,
            _ => return None,
        };
        return key(Ice, dir(d)?, prio(p)?, k);
    }
    // bnxt_en: {rx,tx}_pfc_ena_frames_pri{p}, pfc_pri{p}_{rx,tx}_{duration_us,transitions}
    if let Some((d, p)) = name.split_once("_pfc_ena_frames_pri") {
        return key(Bnxt, dir(d)?, prio(p)?, Frames);
    }
    if let Some(rest) = name.strip_prefix("pfc_pri") {
        let (p, rest) = rest.split_once('_')?;
        let (d, what) = rest.split_once('_')?;
        let k = match what {
            "duration_us" => DurationUs,
            "transitions" => Transitions,
            _ => return None,
        };
        return key(Bnxt, dir(d)?, prio(p)?, k);
    }
    // mlx5: {rx,tx}_prio{p}_{pause,pause_duration,pause_transition,packets},
    // {rx,tx}_global_pause{,_duration,_transition}
    let (d, rest) = name.split_once('_')?;
    let d = dir(d)?;
    let (slot, what) = if let Some(r) = rest.strip_prefix("global_") {
        (LINK_SLOT, r)
    } else {
        let r = rest.strip_prefix("prio")?;
        let (p, what) = r.split_once('_')?;
        (prio(p)?, what)
    };
    let k = match (what, d) {
        ("pause", _) => Frames,
        ("pause_duration", _) => DurationUs,
        ("pause_transition", Direction::Rx) => Transitions,
        ("packets", _) if slot != LINK_SLOT => Packets,
        _ => return None,
    };
    key(Mlx5, d, slot, k)
}

/// One (direction, slot)'s figures from one reading; `None` where the driver has no counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SlotCounters {
    /// PAUSE/PFC frames (XON + XOFF when the driver counts them apart).
    pub frames: Option<u64>,
    /// XOFF frames, where counted apart.
    pub xoff: Option<u64>,
    /// XON frames, where counted apart.
    pub xon: Option<u64>,
    /// Time paused, µs.
    pub duration_us: Option<u64>,
    /// Running → paused transitions.
    pub transitions: Option<u64>,
    /// Data packets of the priority.
    pub packets: Option<u64>,
}

/// The pause figures of one reading of an interface's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CounterSample {
    /// The family whose names were found (the first one recognised).
    pub family: Option<Family>,
    /// Per direction (rx, tx), per slot (p0..p7, link PAUSE).
    pub slots: [[SlotCounters; 9]; 2],
    /// mlx5 `tx_pause_storm_warning_events`.
    pub storm_warning_events: Option<u64>,
    /// mlx5 `tx_pause_storm_error_events`.
    pub storm_error_events: Option<u64>,
    /// The `ethtool -S` names used (for the report: which figure came from where).
    pub names: Vec<String>,
}

fn didx(d: Direction) -> usize {
    match d {
        Direction::Rx => 0,
        Direction::Tx => 1,
    }
}

impl CounterSample {
    /// Gathers the pause figures from `ethtool -S` pairs (name, value); names of other
    /// drivers than the first recognised are ignored.
    pub fn from_stats<'a, I: IntoIterator<Item = (&'a str, u64)>>(stats: I) -> Self {
        let mut s = CounterSample::default();
        for (name, v) in stats {
            let Some(k) = classify(name) else { continue };
            if *s.family.get_or_insert(k.family) != k.family {
                continue;
            }
            s.names.push(name.to_owned());
            match (k.direction, k.slot) {
                (Some(d), Some(slot)) => {
                    let c = &mut s.slots[didx(d)][slot];
                    match k.kind {
                        Kind::Frames => c.frames = Some(v),
                        Kind::Xon => c.xon = Some(v),
                        Kind::Xoff => c.xoff = Some(v),
                        Kind::DurationUs => c.duration_us = Some(v),
                        Kind::Transitions => c.transitions = Some(v),
                        Kind::Packets => c.packets = Some(v),
                        Kind::StormWarning | Kind::StormError => {}
                    }
                }
                _ => match k.kind {
                    Kind::StormWarning => s.storm_warning_events = Some(v),
                    Kind::StormError => s.storm_error_events = Some(v),
                    _ => {}
                },
            }
        }
        for d in &mut s.slots {
            for c in d.iter_mut() {
                if c.frames.is_none()
                    && let (Some(a), Some(b)) = (c.xon, c.xoff)
                {
                    c.frames = Some(a.wrapping_add(b));
                }
            }
        }
        s
    }

    /// The figures of one direction and slot.
    pub fn slot(&self, d: Direction, slot: usize) -> SlotCounters {
        self.slots[didx(d)].get(slot).copied().unwrap_or_default()
    }

    /// Whether any pause counter was recognised.
    pub fn is_empty(&self) -> bool {
        self.family.is_none()
    }

    /// Why pfcwd's `rule` cannot be run on these counters, if it cannot: the Mellanox rules
    /// need a pause duration (mlx5, bnxt_en have one; ice, i40e count frames only), the
    /// Broadcom rule needs the queue's pause status, which no driver exports.
    pub fn pfcwd_gap(&self, rule: Rule) -> Option<String> {
        let fam = match self.family {
            None => return Some("no pause counter of a known driver".into()),
            Some(f) => f,
        };
        match rule {
            Rule::Broadcom => Some(
                "the broadcom rule needs the queue's pause status (SAI_QUEUE_ATTR_PAUSE_STATUS), \
                 which no NIC driver exports"
                    .into(),
            ),
            Rule::Mellanox | Rule::MellanoxLegacy => {
                let has_duration = self.slots[0].iter().any(|c| c.duration_us.is_some());
                (!has_duration).then(|| {
                    format!(
                        "{} reports no pause duration, which the {} rule needs",
                        fam.driver(),
                        if rule == Rule::Mellanox {
                            "mellanox"
                        } else {
                            "mellanox-legacy"
                        }
                    )
                })
            }
        }
    }
}

/// What pfcwd on counters decided at one poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CounterVerdict {
    /// The direction judged.
    pub direction: Direction,
    /// The slot.
    pub slot: usize,
    /// Storm or restore.
    pub verdict: Verdict,
}

/// SONiC's pfcwd on the NIC's counters: per direction and slot a [`QueueWatch`] handed, at
/// each poll, what syncd samples on a switch — PFC frames received (`rx_prio{p}_pause` for rx;
/// for tx, the frames this port sent: what the peer's pfcwd counts), pause duration, on→off
/// transitions, and the data packets the paused queue sent (the other direction's
/// `*_prio{p}_packets` where the driver counts them). Occupancy is not exported by any NIC
/// and is taken as non-zero ([`ASSUMED_OCCUPANCY_BYTES`]), as for frames.
#[derive(Debug, Clone)]
pub struct CounterWatch {
    cfg: pfcwd::Config,
    queues: [[QueueWatch; 9]; 2],
}

impl CounterWatch {
    /// A watch with pfcwd's settings.
    pub fn new(cfg: pfcwd::Config) -> Self {
        CounterWatch {
            cfg,
            queues: Default::default(),
        }
    }

    /// The queue watch of a direction and slot (its status and counts).
    pub fn queue(&self, d: Direction, slot: usize) -> &QueueWatch {
        &self.queues[didx(d)][slot.min(LINK_SLOT)]
    }

    /// One poll: `sample` read now, `elapsed` since the previous poll.
    pub fn poll(&mut self, elapsed: Duration, sample: &CounterSample) -> Vec<CounterVerdict> {
        let mut out = Vec::new();
        for d in [Direction::Rx, Direction::Tx] {
            for slot in 0..=LINK_SLOT {
                let c = sample.slot(d, slot);
                let Some(frames) = c.frames else { continue };
                let sent = sample.slot(d.opposite(), slot).packets.unwrap_or(0);
                let q = QueueSample {
                    occupancy_bytes: ASSUMED_OCCUPANCY_BYTES,
                    tx_packets: sent,
                    pfc_rx_packets: frames,
                    pfc_on2off: c.transitions.unwrap_or(0),
                    pause_duration: Duration::from_us(c.duration_us.unwrap_or(0)),
                    paused: false,
                };
                if let Some(v) = self.queues[didx(d)][slot].poll(&self.cfg, elapsed, q) {
                    out.push(CounterVerdict {
                        direction: d,
                        slot,
                        verdict: v,
                    });
                }
            }
        }
        out
    }
}
