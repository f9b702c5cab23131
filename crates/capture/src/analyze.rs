//! Offline analysis of a capture (`lossless analyze`): the same per-priority counters, paused
//! time and PFC storms as `lossless watch` (the same [`Monitor`]), timed by the capture's
//! timestamps; a paused-time timeline; top talkers; and, from the LLDP frames, whether the two
//! ends of the captured link agree on PFC and ETS (each side's operational view, computed by
//! the DCBX negotiation rules from what each side sent).

use std::collections::BTreeMap;
use std::io::Read;

use lossless_proto::dcbx::negotiate::{self, PeerValue, Resolution};
use lossless_proto::dcbx::{EtsParams, OperPfc, PeerTlv, Remote};
use lossless_proto::monitor::{Monitor, Snapshot, slot_name};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_proto::watchdog::{SLOTS, StormKind, Watchdog};
use lossless_wire::ethernet::EtherType;
use lossless_wire::fcs::FcsMode;
use lossless_wire::lldp::LldpduRepr;
use serde::Serialize;

use crate::cn::traffic::{self, RoceTraffic};
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
    /// `--trust dscp`: data frames with an IPv4/IPv6 header count on the priority this
    /// DSCP → priority map gives their DSCP (`None`, PCP trust: on their outer tag's PCP,
    /// untagged 0).
    pub dscp_map: Option<[u8; 64]>,
}

/// Data frames per priority as classified under `--trust dscp` (present only then).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrustCounts {
    /// Always `dscp`.
    pub trust: &'static str,
    /// Data frames (not MAC Control or LLDP) per priority 0..=7.
    pub data_frames_by_priority: [u64; 8],
    /// Their bytes (FCS included) per priority.
    pub data_bytes_by_priority: [u64; 8],
    /// Of the data frames, those classified by their DSCP (an IP header).
    pub classified_by_dscp_frames: u64,
    /// Of those, the ones without an 802.1Q tag (what PCP trust counts on priority 0).
    pub untagged_ip_frames: u64,
    /// Of those, the ones whose outer PCP differs from the DSCP's priority.
    pub pcp_disagrees_frames: u64,
}

/// The DSCP of an IPv4 or IPv6 header at the start of `payload` (`ethertype` says which).
pub fn ip_dscp(ethertype: EtherType, payload: &[u8]) -> Option<u8> {
    match ethertype {
        EtherType::IPV4 if payload.len() >= 2 && payload[0] >> 4 == 4 => Some(payload[1] >> 2),
        EtherType::IPV6 if payload.len() >= 2 && payload[0] >> 4 == 6 => {
            Some(((payload[0] & 0x0F) << 2) | (payload[1] >> 6))
        }
        _ => None,
    }
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

/// What two ends of a link agree on, from the DCBX TLVs each sent. IEEE TLVs are compared
/// with IEEE TLVs and CEE with CEE; an end that sent only IEEE DCBX and one that sent only CEE
/// share no version and are not compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// One end's MAC (the lower).
    pub a: String,
    /// The other end's MAC.
    pub b: String,
    /// `ieee` or `cee`: which DCBX TLVs were compared; `ieee/cee` when `a` sent only IEEE
    /// DCBX and `b` only CEE (or the reverse: `cee/ieee`), which were not compared.
    pub mode: &'static str,
    /// PFC enable bitmap operational at `a` (0 when not operational); for ends that were not
    /// compared, the bitmap `a` sent.
    pub pfc_a: u8,
    /// PFC enable bitmap operational at `b` (as `pfc_a`).
    pub pfc_b: u8,
    /// Both operational with the same bitmap: `None` (JSON `null`) when not compared (neither
    /// end sent PFC, or the ends share no DCBX version).
    pub pfc_agree: Option<bool>,
    /// Why PFC is not operational or was not compared, when it is not agreed.
    pub pfc_reason: Option<String>,
    /// ETS tables operational at `a`, if it sent ETS.
    pub ets_a: Option<EtsParams>,
    /// ETS tables operational at `b`.
    pub ets_b: Option<EtsParams>,
    /// Whether the operational ETS tables are equal: `None` (JSON `null`) when they were not
    /// compared because an end sent no ETS (or no enabled CEE Priority Groups), or sent one
    /// that was refused.
    pub ets_agree: Option<bool>,
    /// Why ETS was not compared, when it was not.
    pub ets_reason: Option<String>,
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
    /// RoCEv2 per queue pair: data frames, their ECN CE marks, CNPs and their rate.
    pub roce: RoceTraffic,
    /// Under `--trust dscp`: data frames per priority as classified by DSCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<TrustCounts>,
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
    let mut roce = traffic::Tracker::default();
    let mut trust = opts.dscp_map.map(|_| TrustCounts {
        trust: "dscp",
        ..TrustCounts::default()
    });
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
            let pcp = eth.tags.outer().map_or(0, |tag| tag.pcp);
            let bytes = u64::from(f.orig_len) + if fcs { 0 } else { 4 };
            let mut prio = pcp;
            if let (Some(map), Some(tc)) = (&opts.dscp_map, trust.as_mut()) {
                if let Some(d) = ip_dscp(eth.ethertype, &f.data[payload.clone()]) {
                    prio = map[usize::from(d)];
                    tc.classified_by_dscp_frames += 1;
                    tc.untagged_ip_frames += u64::from(eth.tags.outer().is_none());
                    tc.pcp_disagrees_frames += u64::from(eth.tags.outer().is_some() && pcp != prio);
                }
                tc.data_frames_by_priority[usize::from(prio)] += 1;
                tc.data_bytes_by_priority[usize::from(prio)] += bytes;
            }
            needs.on_data(t, f.interface, prio, bytes);
            roce.on_frame(t, &f.data, FcsMode::from_present(fcs), bytes);
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
        roce: roce.finish(run.origin.unwrap_or(end), end),
        trust,
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

/// What an end sent of a feature: nothing, a TLV that was refused, or a value.
enum Sent<T> {
    Nothing,
    Refused(String),
    /// A CEE feature sub-TLV with its Enable flag off.
    Disabled,
    Value(T),
}

/// What `r` sent of the TLV `tlv`, whose accepted value is `value`.
fn sent<T>(r: &Remote, tlv: PeerTlv, value: Option<T>) -> Sent<T> {
    match value {
        Some(v) => Sent::Value(v),
        None => match r.rejected.iter().find(|x| x.tlv == tlv) {
            Some(x) => Sent::Refused(x.reason.to_string()),
            None => Sent::Nothing,
        },
    }
}

/// Why a feature two ends sent was not compared, or `None` when both sent a usable value:
/// neither sent it, one did not, or one sent a TLV that was refused.
fn not_compared<A, B>(
    what: &str,
    a: &Sent<A>,
    b: &Sent<B>,
    a_mac: [u8; 6],
    b_mac: [u8; 6],
) -> Option<String> {
    if matches!((a, b), (Sent::Nothing, Sent::Nothing)) {
        return Some("not sent by either end".into());
    }
    let an = if what.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    if let (Sent::Refused(x), Sent::Refused(y)) = (a, b)
        && x == y
    {
        return Some(format!("both ends sent {an} {what} that was refused: {x}"));
    }
    let why = |(nothing, refused, disabled): (bool, Option<&String>, bool), mac: &[u8; 6]| {
        let mac = mac_text(mac);
        match (refused, nothing, disabled) {
            (Some(r), _, _) => Some(format!("{mac} sent {an} {what} that was refused: {r}")),
            (None, true, _) => Some(format!("{mac} sent no {what}")),
            (None, _, true) => Some(format!("{mac} sent {an} {what} with its Enable flag off")),
            _ => None,
        }
    };
    why(shape(a), &a_mac).or_else(|| why(shape(b), &b_mac))
}

/// Whether nothing was sent, the reason a TLV was refused, whether it was disabled.
fn shape<T>(s: &Sent<T>) -> (bool, Option<&String>, bool) {
    match s {
        Sent::Nothing => (true, None, false),
        Sent::Refused(r) => (false, Some(r), false),
        Sent::Disabled => (false, None, true),
        Sent::Value(_) => (false, None, false),
    }
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

/// What ends `a` and `b` run, each negotiating with the other's TLVs of the same DCBX version.
pub fn agreement(a: &Remote, b: &Remote) -> Agreement {
    let ieee = a.has_ieee() && b.has_ieee();
    let cee = a.cee.is_some() && b.cee.is_some();
    if !ieee && !cee {
        return mixed(a, b);
    }
    let (pfc_a, pfc_b, ets_a, ets_b, pfc_why, ets_why);
    if ieee {
        let (sa, sb) = (
            sent(
                a,
                PeerTlv::PfcConfiguration,
                a.pfc.as_ref().map(|f| (f.willing, f.value)),
            ),
            sent(
                b,
                PeerTlv::PfcConfiguration,
                b.pfc.as_ref().map(|f| (f.willing, f.value)),
            ),
        );
        pfc_why = not_compared("PFC Configuration TLV", &sa, &sb, a.src_mac, b.src_mac);
        let (pa, pb) = (value(sa), value(sb));
        pfc_a = pfc_view(pa, pb, a.src_mac, b.src_mac);
        pfc_b = pfc_view(pb, pa, b.src_mac, a.src_mac);
        ets_a = a
            .ets
            .map(|e| negotiate::ets_ieee(e.params, e.willing, b.ets_recommendation, true).params);
        ets_b = b
            .ets
            .map(|e| negotiate::ets_ieee(e.params, e.willing, a.ets_recommendation, true).params);
        ets_why = not_compared(
            "ETS Configuration TLV",
            &sent(a, PeerTlv::EtsConfiguration, a.ets),
            &sent(b, PeerTlv::EtsConfiguration, b.ets),
            a.src_mac,
            b.src_mac,
        );
    } else {
        // CEE: PFC and Priority Groups are both symmetric; a disabled feature is not operational.
        let feat = |r: &Remote| r.cee.as_ref().and_then(|c| c.pfc.clone());
        let enabled = |r: &Remote| match feat(r) {
            Some(f) if f.enabled => Sent::Value((f.willing, f.value)),
            Some(_) => Sent::Disabled,
            None => sent(r, PeerTlv::CeePfc, None),
        };
        let (sa, sb) = (enabled(a), enabled(b));
        pfc_why = not_compared("CEE PFC sub-TLV", &sa, &sb, a.src_mac, b.src_mac);
        let (pa, pb) = (value(sa), value(sb));
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
        let pg_sent = |r: &Remote| match r.cee.as_ref().and_then(|c| c.pg.as_ref()) {
            Some(f) if f.enabled => Sent::Value(()),
            Some(_) => Sent::Disabled,
            None => sent(r, PeerTlv::CeePriorityGroups, None),
        };
        ets_why = not_compared(
            "CEE Priority Groups sub-TLV",
            &pg_sent(a),
            &pg_sent(b),
            a.src_mac,
            b.src_mac,
        );
        ets_a = cee_pg(&ga, &gb, a.src_mac, b.src_mac);
        ets_b = cee_pg(&gb, &ga, b.src_mac, a.src_mac);
    }
    let reason = pfc_why.clone().or_else(|| {
        [&pfc_a, &pfc_b].iter().find_map(|p| match p {
            OperPfc::NotOperational { reason } => Some(reason.clone()),
            OperPfc::Operational { .. } => None,
        })
    });
    // neither end sent PFC: nothing to agree or disagree on
    let neither = pfc_why.as_deref() == Some("not sent by either end");
    Agreement {
        a: mac_text(&a.src_mac),
        b: mac_text(&b.src_mac),
        mode: if ieee { "ieee" } else { "cee" },
        pfc_a: pfc_a.enable(),
        pfc_b: pfc_b.enable(),
        pfc_agree: (!neither)
            .then(|| pfc_a.is_operational() && pfc_b.is_operational() && pfc_a.enable() == pfc_b.enable()),
        pfc_reason: reason,
        // a pair is compared only when both ends sent usable ETS; a CEE disagreement leaves
        // no operational table at either end, which is no agreement
        ets_agree: ets_why.is_none().then(|| ets_a.is_some() && ets_a == ets_b),
        ets_reason: ets_why,
        ets_a,
        ets_b,
    }
}

/// The value an end sent, if usable.
fn value<T>(s: Sent<T>) -> Option<T> {
    match s {
        Sent::Value(v) => Some(v),
        _ => None,
    }
}

/// Two ends that share no DCBX version: one sent only IEEE TLVs, the other only CEE. Each
/// reads only its own version, so neither sees the other's PFC or ETS: not compared.
fn mixed(a: &Remote, b: &Remote) -> Agreement {
    let version = |r: &Remote| if r.has_ieee() { "IEEE" } else { "CEE" };
    let own_pfc = |r: &Remote| {
        if r.has_ieee() {
            r.pfc.as_ref().map_or(0, |f| f.value.enable)
        } else {
            r.cee
                .as_ref()
                .and_then(|c| c.pfc.as_ref())
                .filter(|f| f.enabled)
                .map_or(0, |f| f.value.enable)
        }
    };
    let why = format!(
        "{} sent only {} DCBX and {} only {}, which do not read each other's TLVs",
        mac_text(&a.src_mac),
        version(a),
        mac_text(&b.src_mac),
        version(b)
    );
    Agreement {
        a: mac_text(&a.src_mac),
        b: mac_text(&b.src_mac),
        mode: if a.has_ieee() { "ieee/cee" } else { "cee/ieee" },
        pfc_a: own_pfc(a),
        pfc_b: own_pfc(b),
        pfc_agree: None,
        pfc_reason: Some(why.clone()),
        ets_a: None,
        ets_b: None,
        ets_agree: None,
        ets_reason: Some(why),
    }
}
