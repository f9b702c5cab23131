//! The feature part of a partition's [`Digest`](super::exchange::Digest) (issue 22): what the
//! report reads of the pathology parts, QCN and link bit errors that the partition owns, and
//! how rank 0 takes it in ([`Simulator::absorb`]). It follows the digest's other parts behind
//! a tag and a version ([`FEATURES_TAG`], [`FEATURES_VERSION`]).
//!
//! - the hosts with a receiver stall or storm prevention: the figures of their report line;
//! - the switches' pfcwd queues: the watch's status and counts, drops, storms, missed runs;
//! - the deadlock detector's per-port `blocked_since` (the findings are every partition's);
//! - victims: the slots at its ports, the causes recorded at its ports, each of its ports'
//!   receive-pause clocks at the end (the open intervals of the settled view), and the blocked
//!   time whose cause another partition recorded with its own causes' history (`settle`);
//! - FCS checks of its receiving ports; QCN congestion points' sampled frames and CNMs sent;
//! - the cut links towards its ports: frames lost on them after a link went down;
//! - its DCBX ports: the flow-control mode and lossless priorities DCBX left in force, and the
//!   port's DCBX report (the agent's Operational and statistics, as `DcbxReport` reads them).

use lossless_proto::flow_control::Mode;
use lossless_proto::units::{Duration, Instant};

use crate::event::EventQueue;
use crate::frame::{NodeId, PortId};
use crate::observer::Observer;
use crate::sim::dcbx_report::DcbxReport;
use crate::sim::exchange::{Dec, DecodeError, Enc};
use crate::sim::features::pathology::victims::{CauseChange, Deferred, Slot};
use crate::sim::{Event, Node, Simulator};
use crate::stats::FcsErrors;

/// The byte that opens the feature part of a digest.
pub const FEATURES_TAG: u8 = 0xF5;
/// The version of its encoding.
pub const FEATURES_VERSION: u8 = 2;

/// The figures of a host's line in the report's `pathology.hosts`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct HostFigures {
    pub(crate) node: NodeId,
    pub(crate) rx_stalled_ps: u128,
    pub(crate) prevention_tout_ps: Option<u128>,
    pub(crate) storm_warnings: u64,
    pub(crate) storm_errors: u64,
    pub(crate) pause_stopped_at: Vec<Instant>,
    pub(crate) pause_requested_ps: u128,
}

/// One pfcwd queue's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WdFigures {
    pub(crate) stormed: bool,
    pub(crate) detected: u64,
    pub(crate) restored: u64,
    pub(crate) tx_dropped: u64,
    pub(crate) rx_dropped: u64,
    pub(crate) storms: Vec<(Instant, Option<Instant>, Option<Instant>)>,
    pub(crate) missed: u64,
}

/// Victim accounting's state at a partition's ports.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct VictimsPart {
    /// (slot index, slot) of the slots at its ports.
    pub(crate) slots: Vec<(u32, Slot)>,
    /// The cause recorded at each of its ports, per priority.
    pub(crate) cause: Vec<(PortId, [PortId; 8])>,
    /// Each of its ports' receive-pause clocks at the end, per priority.
    pub(crate) rx_paused: Vec<(PortId, [Duration; 8])>,
    /// Blocked time whose cause another partition recorded.
    pub(crate) deferred: Vec<Deferred>,
    /// The changes of the causes at its ports whose peers are another partition's.
    pub(crate) history: Vec<CauseChange>,
}

/// Frames lost on a cut link after it went down: its sending port, the frames still to
/// arrive lost, the frames and bytes lost per priority (from the receiver's copy).
pub(crate) type Lost = (PortId, u32, [(u64, u64); 8]);

/// What the report reads of the feature state a partition owns (see the module's
/// documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Features {
    pub(crate) hosts: Vec<HostFigures>,
    /// (index among the pfcwd switches, its node, its queues).
    pub(crate) pfcwd: Vec<(u32, NodeId, Vec<WdFigures>)>,
    pub(crate) blocked_since: Vec<(PortId, [Instant; 8])>,
    pub(crate) victims: Option<VictimsPart>,
    pub(crate) fcs: Vec<(PortId, FcsErrors)>,
    /// (port, congestion points' sampled frames, CNMs sent), per priority.
    pub(crate) cn: Vec<(PortId, [u64; 8], [u64; 8])>,
    /// (sending port of a cut link towards this partition, frames still to arrive lost,
    /// frames and bytes lost per priority).
    pub(crate) lost: Vec<Lost>,
    /// Its DCBX ports.
    pub(crate) dcbx: Vec<DcbxPart>,
}

/// A DCBX port as the report reads it: what DCBX left in force, and its DCBX report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DcbxPart {
    pub(crate) port: PortId,
    /// The flow-control engine's mode at the end.
    pub(crate) mode: Mode,
    /// The port's lossless priorities at the end.
    pub(crate) lossless: u8,
    pub(crate) report: DcbxReport,
}

/// The names a [`DcbxReport`] shows (its mode, sources and algorithms), by their number in
/// the encoding.
const DCBX_NAMES: [&str; 9] = [
    "ieee", "cee", "no_peer", "local", "peer", "strict", "cbs", "ets", "vendor",
];

fn name(e: &mut Enc<'_>, s: &str) {
    // (a name the table lacks encodes as one no decoder accepts)
    e.u8(DCBX_NAMES
        .iter()
        .position(|&n| n == s)
        .map_or(u8::MAX, |i| i as u8));
}

fn read_name(d: &mut Dec<'_>) -> Result<&'static str, DecodeError> {
    let i = d.u8()?;
    DCBX_NAMES
        .get(i as usize)
        .copied()
        .ok_or_else(|| d.err("an unknown name in a DCBX report"))
}

fn opt_string(e: &mut Enc<'_>, s: &Option<String>) {
    match s {
        Some(s) => {
            e.u8(1);
            e.len(s.len());
            e.0.extend_from_slice(s.as_bytes());
        }
        None => e.u8(0),
    }
}

fn read_opt_string(d: &mut Dec<'_>) -> Result<Option<String>, DecodeError> {
    if !d.bool()? {
        return Ok(None);
    }
    let n = d.len(1)?;
    let b = d.bytes(n)?;
    String::from_utf8(b.to_vec())
        .map(Some)
        .map_err(|_| d.err("a DCBX report's text that is not UTF-8"))
}

fn mask(priorities: &[u8]) -> u8 {
    priorities.iter().fold(0, |m, &q| m | 1 << (q & 7))
}

fn priorities(mask: u8) -> Vec<u8> {
    (0..8).filter(|q| mask & (1 << q) != 0).collect()
}

fn mode_byte(m: Mode) -> u8 {
    match m {
        Mode::Off => 0,
        Mode::Pause => 1,
        Mode::Pfc => 2,
    }
}

fn read_mode(d: &mut Dec<'_>) -> Result<Mode, DecodeError> {
    Ok(match d.u8()? {
        0 => Mode::Off,
        1 => Mode::Pause,
        2 => Mode::Pfc,
        _ => return Err(d.err("an unknown flow-control mode")),
    })
}

impl DcbxPart {
    fn encode(&self, e: &mut Enc<'_>) {
        let r = &self.report;
        e.u32(self.port);
        e.u8(mode_byte(self.mode));
        e.u8(self.lossless);
        name(e, r.mode);
        e.u8(u8::from(r.peer)
            | u8::from(r.pfc_willing) << 1
            | u8::from(r.ets_willing) << 2
            | u8::from(r.pfc_operational) << 3);
        e.u8(mask(&r.local_pfc_priorities));
        match r.pfc_source {
            Some(s) => {
                e.u8(1);
                name(e, s);
            }
            None => e.u8(0),
        }
        opt_string(e, &r.pfc_not_operational_reason);
        e.u8(mask(&r.operational_pfc_priorities));
        e.0.extend_from_slice(&r.operational_ets_up2tc);
        e.0.extend_from_slice(&r.operational_ets_tcbw_percent);
        e.len(r.operational_ets_tsa.len());
        for t in &r.operational_ets_tsa {
            name(e, t);
        }
        name(e, r.ets_source);
        opt_string(e, &r.ets_error);
        opt_u128(e, r.operational_at_ps);
        opt_u128(e, r.last_reconfigured_at_ps);
        e.u32(r.reconfigurations);
        e.u64(r.lldp_sent_frames);
        e.u64(r.local_pfc_not_operational_drops_frames);
        let l = &r.lldp;
        for x in [
            l.frames_out_total,
            l.frames_in_total,
            l.frames_discarded_total,
            l.frames_in_errors_total,
            l.tlvs_discarded_total,
            l.tlvs_unrecognized_total,
            l.ageouts_total,
            l.dcbx_tlvs_rejected_total,
        ] {
            e.u64(x);
        }
    }

    fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        let port = d.u32()?;
        let mode = read_mode(d)?;
        let lossless = d.u8()?;
        let dcbx_mode = read_name(d)?;
        let flags = d.u8()?;
        if flags > 15 {
            return Err(d.err("unknown flags of a DCBX report"));
        }
        let local = d.u8()?;
        let pfc_source = if d.bool()? { Some(read_name(d)?) } else { None };
        let pfc_not_operational_reason = read_opt_string(d)?;
        let operational = d.u8()?;
        let up2tc = read_array(d, |d| d.u8())?;
        let tcbw = read_array(d, |d| d.u8())?;
        let tsa = read_vec(d, 1, read_name)?;
        let ets_source = read_name(d)?;
        let ets_error = read_opt_string(d)?;
        let operational_at_ps = read_opt_u128(d)?;
        let last_reconfigured_at_ps = read_opt_u128(d)?;
        let reconfigurations = d.u32()?;
        let lldp_sent_frames = d.u64()?;
        let drops = d.u64()?;
        let lldp = lossless_proto::lldp_agent::Statistics {
            frames_out_total: d.u64()?,
            frames_in_total: d.u64()?,
            frames_discarded_total: d.u64()?,
            frames_in_errors_total: d.u64()?,
            tlvs_discarded_total: d.u64()?,
            tlvs_unrecognized_total: d.u64()?,
            ageouts_total: d.u64()?,
            dcbx_tlvs_rejected_total: d.u64()?,
        };
        Ok(DcbxPart {
            port,
            mode,
            lossless,
            report: DcbxReport {
                mode: dcbx_mode,
                peer: flags & 1 != 0,
                pfc_willing: flags & 2 != 0,
                ets_willing: flags & 4 != 0,
                local_pfc_priorities: priorities(local),
                pfc_operational: flags & 8 != 0,
                pfc_source,
                pfc_not_operational_reason,
                operational_pfc_priorities: priorities(operational),
                operational_ets_up2tc: up2tc,
                operational_ets_tcbw_percent: tcbw,
                operational_ets_tsa: tsa,
                ets_source,
                ets_error,
                operational_at_ps,
                last_reconfigured_at_ps,
                reconfigurations,
                lldp_sent_frames,
                local_pfc_not_operational_drops_frames: drops,
                lldp,
            },
        })
    }
}

fn instant(e: &mut Enc<'_>, t: Instant) {
    e.u128(t.as_ps());
}

fn read_instant(d: &mut Dec<'_>) -> Result<Instant, DecodeError> {
    Ok(Instant::from_ps(d.u128()?))
}

fn tie(e: &mut Enc<'_>, (t, k): (Instant, u64)) {
    instant(e, t);
    e.u64(k);
}

fn read_tie(d: &mut Dec<'_>) -> Result<(Instant, u64), DecodeError> {
    Ok((read_instant(d)?, d.u64()?))
}

fn opt_u128(e: &mut Enc<'_>, v: Option<u128>) {
    match v {
        Some(x) => {
            e.u8(1);
            e.u128(x);
        }
        None => e.u8(0),
    }
}

fn read_opt_u128(d: &mut Dec<'_>) -> Result<Option<u128>, DecodeError> {
    Ok(if d.bool()? { Some(d.u128()?) } else { None })
}

fn read_vec<T>(
    d: &mut Dec<'_>,
    min_bytes: usize,
    mut one: impl FnMut(&mut Dec<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let n = d.len(min_bytes)?;
    (0..n).map(|_| one(d)).collect()
}

fn read_array<T: Copy + Default, const N: usize>(
    d: &mut Dec<'_>,
    mut one: impl FnMut(&mut Dec<'_>) -> Result<T, DecodeError>,
) -> Result<[T; N], DecodeError> {
    let mut a = [T::default(); N];
    for x in &mut a {
        *x = one(d)?;
    }
    Ok(a)
}

impl Features {
    /// Appends the feature part (its counterpart is [`Features::decode`]).
    pub(crate) fn encode(&self, e: &mut Enc<'_>) {
        e.u8(FEATURES_TAG);
        e.u8(FEATURES_VERSION);
        e.len(self.hosts.len());
        for h in &self.hosts {
            e.u32(h.node);
            e.u128(h.rx_stalled_ps);
            opt_u128(e, h.prevention_tout_ps);
            e.u64(h.storm_warnings);
            e.u64(h.storm_errors);
            e.len(h.pause_stopped_at.len());
            for &t in &h.pause_stopped_at {
                instant(e, t);
            }
            e.u128(h.pause_requested_ps);
        }
        e.len(self.pfcwd.len());
        for (i, node, queues) in &self.pfcwd {
            e.u32(*i);
            e.u32(*node);
            e.len(queues.len());
            for q in queues {
                e.u8(u8::from(q.stormed));
                e.u64(q.detected);
                e.u64(q.restored);
                e.u64(q.tx_dropped);
                e.u64(q.rx_dropped);
                e.len(q.storms.len());
                for &(det, res, truth) in &q.storms {
                    instant(e, det);
                    e.opt_instant(res);
                    e.opt_instant(truth);
                }
                e.u64(q.missed);
            }
        }
        e.len(self.blocked_since.len());
        for (p, since) in &self.blocked_since {
            e.u32(*p);
            for &t in since {
                instant(e, t);
            }
        }
        match &self.victims {
            None => e.u8(0),
            Some(v) => {
                e.u8(1);
                e.len(v.slots.len());
                for (i, s) in &v.slots {
                    e.u32(*i);
                    e.u32(s.port);
                    e.u32(s.present);
                    e.u128(s.clock_at.as_ps());
                    e.u128(s.blocked.as_ps());
                    e.u128(s.off_path.as_ps());
                    e.u32(s.off_cause);
                }
                e.len(v.cause.len());
                for (p, c) in &v.cause {
                    e.u32(*p);
                    for &x in c {
                        e.u32(x);
                    }
                }
                e.len(v.rx_paused.len());
                for (p, c) in &v.rx_paused {
                    e.u32(*p);
                    for x in c {
                        e.u128(x.as_ps());
                    }
                }
                e.len(v.deferred.len());
                for x in &v.deferred {
                    tie(e, x.at);
                    e.u32(x.slot);
                    e.u32(x.pauser);
                    e.u32(x.flow);
                    e.u8(x.prio);
                    e.u128(x.delta.as_ps());
                }
                e.len(v.history.len());
                for c in &v.history {
                    tie(e, c.at);
                    e.u32(c.port);
                    e.u8(c.prio);
                    e.u32(c.cause);
                }
            }
        }
        e.len(self.fcs.len());
        for (p, f) in &self.fcs {
            e.u32(*p);
            e.u64(f.data_frames);
            e.u64(f.control_frames);
            e.u64(f.lldp_frames);
            e.opt_instant(f.first);
        }
        e.len(self.cn.len());
        for (p, sampled, cnms) in &self.cn {
            e.u32(*p);
            for x in sampled.iter().chain(cnms) {
                e.u64(*x);
            }
        }
        e.len(self.lost.len());
        for (p, lost, counts) in &self.lost {
            e.u32(*p);
            e.u32(*lost);
            for (frames, bytes) in counts {
                e.u64(*frames);
                e.u64(*bytes);
            }
        }
        e.len(self.dcbx.len());
        for x in &self.dcbx {
            x.encode(e);
        }
    }

    /// The feature part [`Features::encode`] wrote at the start of `d`.
    pub(crate) fn decode(d: &mut Dec<'_>) -> Result<Features, DecodeError> {
        if d.u8()? != FEATURES_TAG {
            return Err(d.err("a digest's feature part without its tag"));
        }
        if d.u8()? != FEATURES_VERSION {
            return Err(d.err("a digest's feature part of another version"));
        }
        let hosts = read_vec(d, 4 + 16 + 1 + 16 + 8 + 16, |d| {
            Ok(HostFigures {
                node: d.u32()?,
                rx_stalled_ps: d.u128()?,
                prevention_tout_ps: read_opt_u128(d)?,
                storm_warnings: d.u64()?,
                storm_errors: d.u64()?,
                pause_stopped_at: read_vec(d, 16, read_instant)?,
                pause_requested_ps: d.u128()?,
            })
        })?;
        let pfcwd = read_vec(d, 16, |d| {
            let i = d.u32()?;
            let node = d.u32()?;
            let queues = read_vec(d, 1 + 4 * 8 + 8 + 8, |d| {
                Ok(WdFigures {
                    stormed: d.bool()?,
                    detected: d.u64()?,
                    restored: d.u64()?,
                    tx_dropped: d.u64()?,
                    rx_dropped: d.u64()?,
                    storms: read_vec(d, 18, |d| {
                        Ok((read_instant(d)?, d.opt_instant()?, d.opt_instant()?))
                    })?,
                    missed: d.u64()?,
                })
            })?;
            Ok((i, node, queues))
        })?;
        let blocked_since = read_vec(d, 4 + 8 * 16, |d| Ok((d.u32()?, read_array(d, read_instant)?)))?;
        let victims = if d.bool()? {
            Some(VictimsPart {
                slots: read_vec(d, 4 * 4 + 3 * 16, |d| {
                    Ok((
                        d.u32()?,
                        Slot {
                            port: d.u32()?,
                            present: d.u32()?,
                            clock_at: Duration::from_ps(d.u128()?),
                            blocked: Duration::from_ps(d.u128()?),
                            off_path: Duration::from_ps(d.u128()?),
                            off_cause: d.u32()?,
                        },
                    ))
                })?,
                cause: read_vec(d, 4 * 9, |d| Ok((d.u32()?, read_array(d, |d| d.u32())?)))?,
                rx_paused: read_vec(d, 4 + 8 * 16, |d| {
                    Ok((d.u32()?, read_array(d, |d| Ok(Duration::from_ps(d.u128()?)))?))
                })?,
                deferred: read_vec(d, 24 + 12 + 1 + 16, |d| {
                    Ok(Deferred {
                        at: read_tie(d)?,
                        slot: d.u32()?,
                        pauser: d.u32()?,
                        flow: d.u32()?,
                        prio: d.u8()?,
                        delta: Duration::from_ps(d.u128()?),
                    })
                })?,
                history: read_vec(d, 24 + 9, |d| {
                    Ok(CauseChange {
                        at: read_tie(d)?,
                        port: d.u32()?,
                        prio: d.u8()?,
                        cause: d.u32()?,
                    })
                })?,
            })
        } else {
            None
        };
        let fcs = read_vec(d, 4 + 24 + 1, |d| {
            Ok((
                d.u32()?,
                FcsErrors {
                    data_frames: d.u64()?,
                    control_frames: d.u64()?,
                    lldp_frames: d.u64()?,
                    first: d.opt_instant()?,
                },
            ))
        })?;
        let cn = read_vec(d, 4 + 16 * 8, |d| {
            Ok((d.u32()?, read_array(d, |d| d.u64())?, read_array(d, |d| d.u64())?))
        })?;
        let lost = read_vec(d, 8 + 16 * 8, |d| {
            Ok((d.u32()?, d.u32()?, read_array(d, |d| Ok((d.u64()?, d.u64()?)))?))
        })?;
        let dcbx = read_vec(
            d,
            4 + 3 + 1 + 2 + 1 + 1 + 16 + 8 + 1 + 1 + 2 + 4 + 24 + 64,
            DcbxPart::decode,
        )?;
        Ok(Features {
            hosts,
            pfcwd,
            blocked_since,
            victims,
            fcs,
            cn,
            lost,
            dcbx,
        })
    }
}

impl<O: Observer, Q: EventQueue<Event>> Simulator<O, Q> {
    /// The figures of host `n`'s line in the report's `pathology.hosts`, if it has a stall
    /// or storm prevention: what the process that ran it said, or its state here.
    pub(crate) fn host_figures(&self, n: NodeId) -> Option<HostFigures> {
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some(h)) = a.hosts.get(n as usize)
        {
            return Some(h.clone());
        }
        let Node::Host(h) = &self.nodes[n as usize] else {
            return None;
        };
        let s = h.stall.as_deref()?;
        let port = &self.ports[h.port as usize];
        let c = s.prevention.as_ref().map(|p| p.counters()).unwrap_or_default();
        let requested = match port.mac.config().mode {
            lossless_proto::flow_control::Mode::Off => 0,
            _ => (0..8u8)
                .map(|q| port.mac.tx_pause_duration(self.now, q).as_ps())
                .max()
                .unwrap_or(0),
        };
        Some(HostFigures {
            node: n,
            rx_stalled_ps: s.stalled_until(self.now).as_ps(),
            prevention_tout_ps: s.prevention.as_ref().map(|p| p.critical().as_ps()),
            storm_warnings: c.tx_pause_storm_warning_events,
            storm_errors: c.tx_pause_storm_error_events,
            pause_stopped_at: s.pause_stopped_at.clone(),
            pause_requested_ps: requested,
        })
    }

    /// Frames the congestion point of port `pi`, priority `q` sampled: what its engine
    /// says, or what the process that ran it said.
    pub(crate) fn cp_sampled(&self, pi: PortId, q: u8) -> Option<u64> {
        let cn = self.ports[pi as usize].cn.as_deref()?;
        let cp = cn.cps[q as usize & 7].as_ref()?;
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some(s)) = a.cp_sampled.get(pi as usize)
        {
            return Some(s[q as usize & 7]);
        }
        Some(cp.counters().sampled_frames)
    }

    /// Port `p`'s receive-pause clock of priority `q` now: what its engine says, or what the
    /// process that ran it said at the end.
    pub(crate) fn rx_paused(&self, p: PortId, q: u8) -> Duration {
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some(c)) = a.rx_paused.get(p as usize)
        {
            return c[q as usize & 7];
        }
        self.ports[p as usize].mac.rx_pause_duration(self.now, q)
    }

    /// The feature part of the digest of partition `me` (split by `of_node`).
    pub(super) fn features_of(&self, me: u16, of_node: &[u16]) -> Features {
        let owner = |p: usize| of_node[self.ports[p].node as usize];
        let owned: Vec<PortId> = (0..self.ports.len())
            .filter(|&p| owner(p) == me)
            .map(|p| p as PortId)
            .collect();
        let hosts = (0..self.nodes.len() as NodeId)
            .filter(|&n| of_node[n as usize] == me)
            .filter_map(|n| self.host_figures(n))
            .collect();
        let pfcwd = self
            .patho
            .pfcwd
            .iter()
            .enumerate()
            .filter(|(_, wd)| of_node[wd.node as usize] == me)
            .map(|(i, wd)| {
                let queues = wd
                    .queues
                    .iter()
                    .map(|q| WdFigures {
                        stormed: q.stormed(),
                        detected: q.detected(),
                        restored: q.restored(),
                        tx_dropped: q.tx_dropped,
                        rx_dropped: q.rx_dropped,
                        storms: q.storms.clone(),
                        missed: q.missed,
                    })
                    .collect();
                (i as u32, wd.node, queues)
            })
            .collect();
        let blocked_since = self.patho.detector.as_deref().map_or_else(Vec::new, |det| {
            owned
                .iter()
                .map(|&p| (p, det.blocked_since[p as usize]))
                .collect()
        });
        let victims = self.patho.victims.as_deref().map(|v| VictimsPart {
            slots: v
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| owner(s.port as usize) == me)
                .map(|(i, s)| (i as u32, *s))
                .collect(),
            cause: owned.iter().map(|&p| (p, v.cause[p as usize])).collect(),
            rx_paused: owned
                .iter()
                .map(|&p| (p, std::array::from_fn(|q| self.rx_paused(p, q as u8))))
                .collect(),
            deferred: v.deferred.clone(),
            history: v.history.clone(),
        });
        let fcs = owned
            .iter()
            .filter_map(|&p| Some((p, self.fcs_errors(p)?.1)))
            .collect();
        let cn = owned
            .iter()
            .filter_map(|&p| {
                let c = self.ports[p as usize].cn.as_deref()?;
                let sampled = std::array::from_fn(|q| self.cp_sampled(p, q as u8).unwrap_or(0));
                Some((p, sampled, c.cnms_sent))
            })
            .collect();
        let lost = (0..self.ports.len())
            .filter(|&p| owner(p) != me && owner(self.ports[p].peer as usize) == me)
            .filter_map(|p| {
                let port = &self.ports[p];
                let counts: [(u64, u64); 8] = std::array::from_fn(|q| {
                    let st = &port.counts().prio[q];
                    (st.wire_lost_frames, st.wire_lost_bytes)
                });
                (port.wire_lost > 0 || counts.iter().any(|&c| c != (0, 0))).then_some((
                    p as PortId,
                    port.wire_lost,
                    counts,
                ))
            })
            .collect();
        let dcbx = owned
            .iter()
            .filter_map(|&p| {
                let port = &self.ports[p as usize];
                Some(DcbxPart {
                    port: p,
                    mode: port.mac.config().mode,
                    lossless: port.lossless,
                    report: self.dcbx_report(p)?,
                })
            })
            .collect();
        Features {
            hosts,
            pfcwd,
            blocked_since,
            victims,
            fcs,
            cn,
            lost,
            dcbx,
        }
    }

    /// Port `p`'s DCBX report, if it runs DCBX: what its agent here says, or what the process
    /// that ran it said.
    pub(crate) fn dcbx_report(&self, p: PortId) -> Option<DcbxReport> {
        let port = &self.ports[p as usize];
        let d = port.dcbx.as_deref()?;
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some((_, r))) = a.dcbx.get(p as usize)
        {
            return Some(r.clone());
        }
        Some(DcbxReport::of(d, port.counts()))
    }

    /// Port `p`'s flow-control mode at the end (DCBX turns PFC on and off): what its engine
    /// here says, or what the process that ran it said.
    pub(crate) fn flow_control_mode(&self, p: PortId) -> Mode {
        if let Some(a) = self.absorbed.as_deref()
            && let Some(Some((m, _))) = a.dcbx.get(p as usize)
        {
            return *m;
        }
        self.ports[p as usize].mac.config().mode
    }

    /// The frames lost on the cut links towards partition 0's ports (split by `of_node`),
    /// from its own copies of their senders: taken before the senders' owners' counters
    /// replace those copies.
    pub(super) fn own_lost(&self, of_node: &[u16]) -> Vec<Lost> {
        let owner = |p: usize| of_node[self.ports[p].node as usize];
        (0..self.ports.len())
            .filter(|&p| owner(p) != 0 && owner(self.ports[p].peer as usize) == 0)
            .map(|p| {
                let port = &self.ports[p];
                (
                    p as PortId,
                    port.wire_lost,
                    std::array::from_fn(|q| {
                        let st = &port.counts().prio[q];
                        (st.wire_lost_frames, st.wire_lost_bytes)
                    }),
                )
            })
            .collect()
    }

    /// Takes in the feature parts of the other partitions' digests (`parts`, in partition
    /// order; `self` is partition 0, `own_lost` its [`Simulator::own_lost`]) as [`Simulator::merge`] takes their
    /// simulators' state; the overrides the report reads go to `a`.
    pub(super) fn absorb_features(
        &mut self,
        parts: &[(u16, &Features)],
        own_lost: Vec<Lost>,
        a: &mut super::exchange::Absorbed,
    ) -> Result<(), String> {
        let nports = self.ports.len();
        let bad = |part: u16, what: &str, i: usize| {
            format!("the digest of partition {part}: {what} {i} does not exist here")
        };
        let mut lost = own_lost;
        // victims' deferred time: partition 0's own first, then the others' in order
        let mut deferred = Vec::new();
        if let Some(v) = self.patho.victims.as_deref_mut() {
            deferred.push((std::mem::take(&mut v.deferred), std::mem::take(&mut v.history)));
        }
        for &(part, f) in parts {
            for h in &f.hosts {
                let slot = a
                    .hosts
                    .get_mut(h.node as usize)
                    .filter(|_| matches!(self.nodes.get(h.node as usize), Some(Node::Host(_))))
                    .ok_or_else(|| bad(part, "host", h.node as usize))?;
                *slot = Some(h.clone());
            }
            for (i, node, queues) in &f.pfcwd {
                let wd = self
                    .patho
                    .pfcwd
                    .get_mut(*i as usize)
                    .filter(|wd| wd.node == *node && wd.queues.len() == queues.len())
                    .ok_or_else(|| bad(part, "pfcwd switch", *i as usize))?;
                for (q, x) in wd.queues.iter_mut().zip(queues) {
                    q.shown = Some((x.stormed, x.detected, x.restored));
                    q.tx_dropped = x.tx_dropped;
                    q.rx_dropped = x.rx_dropped;
                    q.storms.clone_from(&x.storms);
                    q.missed = x.missed;
                }
            }
            if let Some(det) = self.patho.detector.as_deref_mut() {
                for (p, since) in &f.blocked_since {
                    *det.blocked_since
                        .get_mut(*p as usize)
                        .ok_or_else(|| bad(part, "port", *p as usize))? = *since;
                }
            }
            match (self.patho.victims.as_deref_mut(), &f.victims) {
                (Some(v), Some(x)) => {
                    for (i, s) in &x.slots {
                        *v.slots
                            .get_mut(*i as usize)
                            .ok_or_else(|| bad(part, "victims slot", *i as usize))? = *s;
                    }
                    for (p, c) in &x.cause {
                        *v.cause
                            .get_mut(*p as usize)
                            .ok_or_else(|| bad(part, "port", *p as usize))? = *c;
                    }
                    for (p, c) in &x.rx_paused {
                        *a.rx_paused
                            .get_mut(*p as usize)
                            .ok_or_else(|| bad(part, "port", *p as usize))? = Some(*c);
                    }
                    deferred.push((x.deferred.clone(), x.history.clone()));
                }
                (None, None) => {}
                _ => {
                    return Err(format!(
                        "the digest of partition {part}: victim accounting differs"
                    ));
                }
            }
            for (p, e) in &f.fcs {
                if !self.link_errors.set_corrupted(*p, *e) {
                    return Err(bad(part, "port with bit errors", *p as usize));
                }
            }
            for (p, sampled, cnms) in &f.cn {
                let cn = self
                    .ports
                    .get_mut(*p as usize)
                    .and_then(|port| port.cn.as_deref_mut())
                    .ok_or_else(|| bad(part, "port with congestion notification", *p as usize))?;
                cn.cnms_sent = *cnms;
                a.cp_sampled[*p as usize] = Some(*sampled);
            }
            for l in &f.lost {
                if l.0 as usize >= nports {
                    return Err(bad(part, "port", l.0 as usize));
                }
                lost.push(*l);
            }
            for x in &f.dcbx {
                let port = self
                    .ports
                    .get_mut(x.port as usize)
                    .filter(|port| port.dcbx.is_some())
                    .ok_or_else(|| bad(part, "DCBX port", x.port as usize))?;
                port.lossless = x.lossless;
                a.dcbx[x.port as usize] = Some((x.mode, x.report.clone()));
            }
        }
        if let Some(v) = self.patho.victims.as_deref_mut() {
            v.settle(&deferred);
        }
        // the frames lost on a cut link: counted by its receiver's copy, added to the
        // sender's own counters (which the digests put in place above)
        for (p, n, counts) in lost {
            let port = &mut self.ports[p as usize];
            port.wire_lost = n;
            for (st, (frames, bytes)) in port.counts_mut().prio.iter_mut().zip(counts) {
                st.wire_lost_frames += frames;
                st.wire_lost_bytes += bytes;
            }
        }
        Ok(())
    }
}
