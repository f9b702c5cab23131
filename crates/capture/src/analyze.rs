//! Offline analysis of a capture (`lossless analyze`): the same per-priority counters, paused
//! time and PFC storms as `lossless watch` (the same [`Monitor`]), timed by the capture's
//! timestamps; a paused-time timeline; top talkers; and, from the LLDP frames, whether the two
//! ends of the captured link agree on PFC and ETS (each side's operational view, computed by
//! the DCBX negotiation rules from what each side sent).

use std::collections::BTreeMap;
use std::io::Read;

use lossless_proto::dcbx::negotiate::{self, PeerValue, Resolution};
use lossless_proto::dcbx::{EtsParams, OperPfc, Remote};
use lossless_proto::monitor::{Monitor, Snapshot, slot_name};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_proto::watchdog::{SLOTS, StormKind, Watchdog};
use lossless_wire::ethernet::EtherType;
use lossless_wire::fcs::FcsMode;
use lossless_wire::lldp::LldpduRepr;
use serde::Serialize;

use crate::decode::{Framing, framing};
use crate::headroom::{HeadroomNeeds, Tracker};
use crate::model::mac_text;
use crate::reader::CaptureReader;

/// Timeline buckets kept at most (a longer capture keeps the first ones and says so).
pub const MAX_BUCKETS: usize = 100_000;
/// Reading errors kept word for word at most (all are counted).
pub const MAX_READ_ERRORS: usize = 10;
/// LLDP sources remembered at most.
pub const MAX_LLDP_SOURCES: usize = 64;

/// How to analyze.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Link speed for the paused-time estimate.
    pub speed: Rate,
    /// Storm detection time.
    pub detection: Duration,
    /// Storm restoration time.
    pub restoration: Duration,
    /// Width of a timeline bucket.
    pub bucket: Duration,
}

/// Paused time per slot in one timeline bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    /// Bucket start, seconds from the first frame.
    pub start_s: f64,
    /// Seconds paused in this bucket, per slot p0..p7, pause.
    pub paused_s: [f64; SLOTS],
}

/// One storm: detected, and restored unless the capture ended first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Storm {
    /// `p0`..`p7` or `pause`.
    pub slot: String,
    /// When the pause that became a storm began, seconds from the first frame.
    pub pause_start_s: f64,
    /// When the storm was detected (pause start + detection time).
    pub detected_s: f64,
    /// When it was restored (pause end + restoration time); `None` if still stormed at the end.
    pub restored_s: Option<f64>,
}

/// What two ends of a link agree on, from the DCBX TLVs each sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// One end's MAC (the lower).
    pub a: String,
    /// The other end's MAC.
    pub b: String,
    /// `ieee` or `cee`: which DCBX TLVs were compared.
    pub mode: &'static str,
    /// PFC enable bitmap operational at `a` (0 when not operational).
    pub pfc_a: u8,
    /// PFC enable bitmap operational at `b`.
    pub pfc_b: u8,
    /// Both operational with the same bitmap.
    pub pfc_agree: bool,
    /// Why PFC is not operational, when it is not.
    pub pfc_reason: Option<String>,
    /// ETS tables operational at `a`, if it sent ETS.
    pub ets_a: Option<EtsParams>,
    /// ETS tables operational at `b`.
    pub ets_b: Option<EtsParams>,
    /// Whether the operational ETS tables are equal: `None` (JSON `null`) when they were not
    /// compared because an end sent no ETS (or no enabled CEE Priority Groups).
    pub ets_agree: Option<bool>,
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// Frames in the file.
    pub frames: u64,
    /// MAC Control (0x8808) frames, VLAN-tagged or not.
    pub mac_control_frames: u64,
    /// LLDP (0x88cc) frames, VLAN-tagged or not.
    pub lldp_frames: u64,
    /// Frames not of link type Ethernet (not analyzed).
    pub skipped_frames: u64,
    /// Frames without a timestamp (counted at the last time seen).
    pub untimed_frames: u64,
    /// Seconds from the first to the last frame.
    pub span_s: f64,
    /// Where reading stopped early, if it did (the file's framing was lost there).
    pub read_error: Option<String>,
    /// Blocks that could not be read and were skipped, reading going on after them.
    pub read_errors_total: u64,
    /// The first [`MAX_READ_ERRORS`] of those, with their byte offsets.
    pub read_errors: Vec<String>,
    /// Counters, paused time and top talkers at the end of the capture.
    pub totals: Snapshot,
    /// Storms, in order of detection.
    pub storms: Vec<Storm>,
    /// Bucket width, seconds.
    pub bucket_s: f64,
    /// Paused time per bucket.
    pub timeline: Vec<Bucket>,
    /// Whether the timeline was cut at [`MAX_BUCKETS`].
    pub timeline_truncated: bool,
    /// PFC/ETS agreement of each pair of LLDP senders that sent DCBX TLVs.
    pub lldp_agreement: Vec<Agreement>,
    /// Per priority, the bytes that kept arriving after each XOFF ([`crate::headroom`]).
    pub headroom: HeadroomNeeds,
}

struct Run {
    opts: Options,
    m: Monitor,
    origin: Option<Instant>,
    last: Instant,
    next_edge: Instant,
    prev_paused: [Duration; SLOTS],
    timeline: Vec<Bucket>,
    truncated: bool,
}

impl Run {
    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin.unwrap_or(t))
            .as_secs_f64()
    }
    /// Closes every bucket that ends at or before `t`.
    fn advance(&mut self, t: Instant) {
        while self.origin.is_some() && self.next_edge <= t {
            let edge = self.next_edge;
            self.m.tick(edge);
            let mut b = Bucket {
                start_s: self.secs(edge) - self.opts.bucket.as_secs_f64(),
                paused_s: [0.0; SLOTS],
            };
            for (i, p) in b.paused_s.iter_mut().enumerate() {
                let now = self.m.paused_time(i, edge);
                *p = now.saturating_sub(self.prev_paused[i]).as_secs_f64();
                self.prev_paused[i] = now;
            }
            if self.timeline.len() < MAX_BUCKETS {
                self.timeline.push(b);
            } else {
                self.truncated = true;
                // Skip the remaining empty span in one step.
                self.next_edge = t + self.opts.bucket;
                return;
            }
            self.next_edge = edge + self.opts.bucket;
        }
    }
}

/// Analyzes every frame `reader` yields.
pub fn analyze<R: Read>(reader: CaptureReader<R>, opts: Options) -> Analysis {
    let opts = Options {
        bucket: opts.bucket.max(Duration::from_us(1)),
        ..opts
    };
    let mut run = Run {
        opts,
        m: Monitor::new(opts.speed, Watchdog::new(opts.detection, opts.restoration)),
        origin: None,
        last: Instant::default(),
        next_edge: Instant::default(),
        prev_paused: [Duration::ZERO; SLOTS],
        timeline: Vec::new(),
        truncated: false,
    };
    let (mut frames, mut macc, mut lldp, mut skipped, mut untimed) = (0, 0, 0, 0, 0);
    let mut read_error = None;
    let mut read_errors = Vec::new();
    let mut read_errors_total = 0;
    let mut remotes: BTreeMap<[u8; 6], Remote> = BTreeMap::new();
    let mut needs = Tracker::new(opts.speed);
    // Read to the end as `decode` does: the reader skips a bad block and goes on, and ends
    // by itself after an error that loses the file's framing.
    for f in reader {
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                if e.fatal {
                    read_error = Some(e.to_string());
                } else {
                    read_errors_total += 1;
                    if read_errors.len() < MAX_READ_ERRORS {
                        read_errors.push(e.to_string());
                    }
                }
                continue;
            }
        };
        frames += 1;
        let framing = framing(&f);
        if framing == Framing::Skipped {
            skipped += 1;
            continue;
        }
        let t = match f.timestamp {
            Some(t) => t.max(run.last),
            None => {
                untimed += 1;
                run.last
            }
        };
        if run.origin.is_none() && f.timestamp.is_some() {
            run.origin = Some(t);
            run.next_edge = t + opts.bucket;
        }
        run.advance(t);
        run.last = t;
        let Framing::Ethernet { eth, payload, fcs } = framing else {
            continue;
        };
        if eth.ethertype == EtherType::MAC_CONTROL {
            macc += 1;
            run.m.on_frame(t, &f.data, FcsMode::from_present(fcs));
            needs.on_control(t, f.interface, &f.data[payload]);
        } else if eth.ethertype == EtherType::LLDP {
            lldp += 1;
            let src = eth.src.0;
            let tlvs = LldpduRepr::parse(&f.data[payload]).tlvs;
            let r = Remote::from_tlvs(src, &tlvs);
            if remotes.len() < MAX_LLDP_SOURCES || remotes.contains_key(&src) {
                remotes.insert(src, r);
            }
        } else {
            // a data frame: its priority from the outer tag (untagged: 0), its length with FCS
            let prio = eth.tags.outer().map_or(0, |tag| tag.pcp);
            let bytes = u64::from(f.orig_len) + if fcs { 0 } else { 4 };
            needs.on_data(t, f.interface, prio, bytes);
        }
    }
    let end = run.last;
    run.m.tick(end);
    // The last, partial bucket (none when the capture ends on a bucket edge).
    if run.origin.is_some() && run.timeline.len() < MAX_BUCKETS && end + opts.bucket > run.next_edge {
        let mut b = Bucket {
            start_s: run.secs(run.next_edge) - opts.bucket.as_secs_f64(),
            paused_s: [0.0; SLOTS],
        };
        for (i, p) in b.paused_s.iter_mut().enumerate() {
            *p = run
                .m
                .paused_time(i, end)
                .saturating_sub(run.prev_paused[i])
                .as_secs_f64();
        }
        run.timeline.push(b);
    }
    let events = run.m.take_events();
    let mut storms: Vec<Storm> = Vec::new();
    for e in events {
        match e.kind {
            StormKind::Detected => storms.push(Storm {
                slot: slot_name(e.slot),
                pause_start_s: run.secs(e.at) - opts.detection.as_secs_f64(),
                detected_s: run.secs(e.at),
                restored_s: None,
            }),
            StormKind::Restored => {
                let name = slot_name(e.slot);
                if let Some(s) = storms
                    .iter_mut()
                    .rev()
                    .find(|s| s.slot == name && s.restored_s.is_none())
                {
                    s.restored_s = Some(run.secs(e.at));
                }
            }
        }
    }
    let mut totals = run.m.snapshot(end);
    totals.time_s = run.secs(end);
    Analysis {
        frames,
        mac_control_frames: macc,
        lldp_frames: lldp,
        skipped_frames: skipped,
        untimed_frames: untimed,
        span_s: run.secs(end),
        read_error,
        read_errors_total,
        read_errors,
        totals,
        storms,
        bucket_s: opts.bucket.as_secs_f64(),
        timeline: run.timeline,
        timeline_truncated: run.truncated,
        lldp_agreement: agreements(&remotes),
        headroom: needs.finish(run.origin.unwrap_or(end), end),
    }
}

/// The agreement of every pair of senders that sent DCBX TLVs (at most the first 16 pairs).
pub fn agreements(remotes: &BTreeMap<[u8; 6], Remote>) -> Vec<Agreement> {
    let dcbx: Vec<&Remote> = remotes
        .values()
        .filter(|r| r.has_ieee() || r.cee.is_some())
        .collect();
    let mut out = Vec::new();
    for (i, a) in dcbx.iter().enumerate() {
        for b in &dcbx[i + 1..] {
            if out.len() < 16 {
                out.push(agreement(a, b));
            }
        }
    }
    out
}

fn pfc_view(
    a: Option<(bool, lossless_proto::dcbx::PfcParams)>,
    b: Option<(bool, lossless_proto::dcbx::PfcParams)>,
    a_mac: [u8; 6],
    b_mac: [u8; 6],
) -> OperPfc {
    match a {
        None => OperPfc::NotOperational {
            reason: format!("{} sent no PFC TLV", mac_text(&a_mac)),
        },
        Some((w, v)) => negotiate::pfc(
            v,
            w,
            a_mac,
            b.map(|(willing, value)| PeerValue { value, willing }),
            b_mac,
        ),
    }
}

/// What ends `a` and `b` run, each negotiating with the other's TLVs.
pub fn agreement(a: &Remote, b: &Remote) -> Agreement {
    let ieee = a.has_ieee() && b.has_ieee();
    let (pfc_a, pfc_b, ets_a, ets_b, ets_sent);
    if ieee {
        let pa = a.pfc.as_ref().map(|f| (f.willing, f.value));
        let pb = b.pfc.as_ref().map(|f| (f.willing, f.value));
        pfc_a = pfc_view(pa, pb, a.src_mac, b.src_mac);
        pfc_b = pfc_view(pb, pa, b.src_mac, a.src_mac);
        ets_a = a
            .ets
            .map(|e| negotiate::ets_ieee(e.params, e.willing, b.ets_recommendation, true).params);
        ets_b = b
            .ets
            .map(|e| negotiate::ets_ieee(e.params, e.willing, a.ets_recommendation, true).params);
        ets_sent = a.ets.is_some() && b.ets.is_some();
    } else {
        // CEE: PFC and Priority Groups are both symmetric; a disabled feature is not operational.
        let feat = |r: &Remote| r.cee.as_ref().and_then(|c| c.pfc.clone()).filter(|f| f.enabled);
        let pa = feat(a).map(|f| (f.willing, f.value));
        let pb = feat(b).map(|f| (f.willing, f.value));
        pfc_a = pfc_view(pa, pb, a.src_mac, b.src_mac);
        pfc_b = pfc_view(pb, pa, b.src_mac, a.src_mac);
        let pg = |r: &Remote| r.cee.as_ref().and_then(|c| c.pg.clone()).filter(|f| f.enabled);
        let cee_pg = |x: &Option<lossless_proto::dcbx::RemoteFeature<EtsParams>>,
                      y: &Option<lossless_proto::dcbx::RemoteFeature<EtsParams>>,
                      xm: [u8; 6],
                      ym: [u8; 6]| {
            let x = x.as_ref()?;
            let peer = y.as_ref().map(|f| PeerValue {
                value: f.value,
                willing: f.willing,
            });
            match negotiate::symmetric(x.value, x.willing, xm, peer, ym, |p, q| p == q) {
                Resolution::Adopt(v) => Some(v),
                Resolution::NoPeer | Resolution::Local => Some(x.value),
                Resolution::Disagree(_) => None,
            }
        };
        let (ga, gb) = (pg(a), pg(b));
        ets_sent = ga.is_some() && gb.is_some();
        ets_a = cee_pg(&ga, &gb, a.src_mac, b.src_mac);
        ets_b = cee_pg(&gb, &ga, b.src_mac, a.src_mac);
    }
    let reason = [&pfc_a, &pfc_b].iter().find_map(|p| match p {
        OperPfc::NotOperational { reason } => Some(reason.clone()),
        OperPfc::Operational { .. } => None,
    });
    Agreement {
        a: mac_text(&a.src_mac),
        b: mac_text(&b.src_mac),
        mode: if ieee { "ieee" } else { "cee" },
        pfc_a: pfc_a.enable(),
        pfc_b: pfc_b.enable(),
        pfc_agree: pfc_a.is_operational() && pfc_b.is_operational() && pfc_a.enable() == pfc_b.enable(),
        pfc_reason: reason,
        // a pair is compared only when both ends sent ETS; a CEE disagreement leaves no
        // operational table at either end, which is no agreement
        ets_agree: ets_sent.then(|| ets_a.is_some() && ets_a == ets_b),
        ets_a,
        ets_b,
    }
}
