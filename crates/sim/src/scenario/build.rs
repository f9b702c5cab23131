//! Resolving a read scenario: names to nodes, groups to members, text units to exact values,
//! link parameters to flow-control and ETS configurations; every check names file, line, key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lossless_proto::dcbx::DcbxConfig;
use lossless_proto::ets::EtsConfig;
use lossless_proto::flow_control::{FlowControlConfig, Mode};
use lossless_proto::units::{Duration, Instant, Rate};
use lossless_wire::lldp::Tsa;
use serde::Deserialize as _;
use toml::Spanned;

use super::qp::{RawQp, ecn_spec, qcn_spec, qp_spec};
use super::raw::{RawEnd, RawLinkParams, RawModel, RawScenario};
use super::{Overrides, ScenarioError, parse_duration};
use crate::buffer::Threshold;
use crate::config::{HostConfig, LinkConfig, NodeConfig, NodeKind, Signal, SimConfig, SwitchConfig};
use crate::frame::NodeId;
use crate::headroom::interface_delay_bit_times;
use crate::model::{Ecmp, Framing, IdealFct, ModelConfig, Pacing, ReplyQueue};
use crate::traffic::{FlowSpec, Pattern, SizeCdf, Workload};
use crate::transport::QpSpec;

pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
    pub(super) text: Option<&'a str>,
}

impl Ctx<'_> {
    pub(super) fn line_of(&self, offset: usize) -> usize {
        match self.text {
            Some(t) if offset <= t.len() => t[..offset].matches('\n').count() + 1,
            _ => 0,
        }
    }
    fn err<T>(&self, span: std::ops::Range<usize>, key: &str, message: String) -> Result<T, ScenarioError> {
        let line = if span == (0..0) {
            0
        } else {
            self.line_of(span.start)
        };
        Err(ScenarioError {
            file: self.file.to_string(),
            line,
            key: if key.is_empty() {
                String::new()
            } else {
                format!("key `{key}`: ")
            },
            message,
        })
    }
    fn rate(&self, v: &Spanned<String>, key: &str) -> Result<Rate, ScenarioError> {
        let r: Rate = match v.get_ref().parse() {
            Ok(r) => r,
            Err(e) => return self.err(v.span(), key, e.to_string()),
        };
        if !r.is_byte_exact() {
            return self.err(
                v.span(),
                key,
                format!(
                    "found {}: a byte must last whole picoseconds; allowed: IEEE rates (10M … 1.6T)",
                    v.get_ref()
                ),
            );
        }
        Ok(r)
    }
    fn flow_rate(&self, v: &Spanned<String>, key: &str) -> Result<Rate, ScenarioError> {
        v.get_ref()
            .parse()
            .or_else(|e: lossless_proto::units::ParseRateError| self.err(v.span(), key, e.to_string()))
    }
    fn duration(&self, v: &Spanned<String>, key: &str) -> Result<Duration, ScenarioError> {
        parse_duration(v.get_ref()).or_else(|m| self.err(v.span(), key, m))
    }
}

/// Turns the text of a toml error (from the `toml` crate) into our error with line and key.
fn link_fc(ctx: &Ctx<'_>, p: &RawLinkParams, rate: Rate) -> Result<FlowControlConfig, ScenarioError> {
    let mode = match &p.flow_control {
        None => Mode::Off,
        Some(s) => match s.get_ref().as_str() {
            "off" => Mode::Off,
            "pause" => Mode::Pause,
            "pfc" => Mode::Pfc,
            other => {
                return ctx.err(
                    s.span(),
                    "flow_control",
                    format!("found {other:?}, allowed \"off\", \"pause\" or \"pfc\""),
                );
            }
        },
    };
    let mut enabled = 0u8;
    for &q in p.pfc_priorities.as_deref().unwrap_or(&[]) {
        if q > 7 {
            return ctx.err(
                0..0,
                "pfc_priorities",
                format!("found priority {q}, allowed 0..=7"),
            );
        }
        enabled |= 1 << q;
    }
    let mut fc = match mode {
        Mode::Off => FlowControlConfig::off(rate, [0; 6]),
        Mode::Pause => FlowControlConfig::pause(rate, [0; 6]),
        Mode::Pfc => FlowControlConfig::pfc(rate, [0; 6], enabled),
    };
    for pc in fc.priorities.iter_mut() {
        if let Some(v) = p.pause_quanta {
            pc.pause_quanta = v;
        }
        if let Some(v) = p.refresh_quanta {
            pc.refresh_quanta = v;
        }
        if let Some(v) = p.xon_on_release {
            pc.xon_on_release = v;
        }
        if let Some(v) = p.hold_own_data {
            pc.hold_own_data = v;
        }
    }
    if let Some(q) = p.reaction_delay_quanta {
        fc.reaction_delay = rate.quanta_time(q);
    }
    if let Err(e) = fc.validate() {
        return ctx.err(0..0, "", format!("flow control: {e}"));
    }
    Ok(fc)
}

pub(super) fn merge(base: &RawLinkParams, over: &RawLinkParams) -> RawLinkParams {
    RawLinkParams {
        rate: over.rate.clone().or_else(|| base.rate.clone()),
        length_m: over.length_m.or(base.length_m),
        delay: over.delay.clone().or_else(|| base.delay.clone()),
        interface_delay: over
            .interface_delay
            .clone()
            .or_else(|| base.interface_delay.clone()),
        mtu: over.mtu.or(base.mtu),
        flow_control: over.flow_control.clone().or_else(|| base.flow_control.clone()),
        pfc_priorities: over
            .pfc_priorities
            .clone()
            .or_else(|| base.pfc_priorities.clone()),
        pause_quanta: over.pause_quanta.or(base.pause_quanta),
        refresh_quanta: over.refresh_quanta.or(base.refresh_quanta),
        xon_on_release: over.xon_on_release.or(base.xon_on_release),
        hold_own_data: over.hold_own_data.or(base.hold_own_data),
        reaction_delay_quanta: over.reaction_delay_quanta.or(base.reaction_delay_quanta),
        ets_tc_bandwidth: over
            .ets_tc_bandwidth
            .clone()
            .or_else(|| base.ets_tc_bandwidth.clone()),
        ets_prio_tc: over.ets_prio_tc.clone().or_else(|| base.ets_prio_tc.clone()),
        ets_tsa: over.ets_tsa.clone().or_else(|| base.ets_tsa.clone()),
        ets_idle_slope: over
            .ets_idle_slope
            .clone()
            .or_else(|| base.ets_idle_slope.clone()),
        dcbx: over.dcbx.or(base.dcbx),
    }
}

/// A DCBX table (`lossless_proto::dcbx::DcbxConfig`'s TOML shape: `mode`, `pfc = { willing,
/// mbc, cap, enable }`, `ets = { willing, cbs, max_tcs, up2tc, tcbw, tsa, recommendation }`,
/// `app`); ETS tables an `ets` table leaves out take their defaults.
fn dcbx_config(
    ctx: &Ctx<'_>,
    v: &toml::Value,
    span: std::ops::Range<usize>,
) -> Result<DcbxConfig, ScenarioError> {
    let c = DcbxConfig::deserialize(v.clone()).map_err(|e| ScenarioError {
        file: ctx.file.to_string(),
        line: ctx.line_of(span.start),
        key: "key `dcbx`: ".into(),
        message: e.message().trim().to_string(),
    })?;
    c.validate().map_err(|e| ScenarioError {
        file: ctx.file.to_string(),
        line: ctx.line_of(span.start),
        key: "key `dcbx`: ".into(),
        message: e.to_string(),
    })?;
    Ok(c)
}

/// idleSlope per TC of a link's credit-based shapers (`ets_idle_slope = { TC = "RATE" }`).
fn link_idle_slopes(ctx: &Ctx<'_>, p: &RawLinkParams) -> Result<[Option<Rate>; 8], ScenarioError> {
    let mut out = [None; 8];
    for (k, v) in p.ets_idle_slope.iter().flatten() {
        let tc = match k.parse::<u8>() {
            Ok(tc) if tc < 8 => tc,
            _ => {
                return ctx.err(
                    v.span(),
                    "ets_idle_slope",
                    format!("found traffic class {k:?}, allowed 0..=7"),
                );
            }
        };
        out[usize::from(tc)] = Some(ctx.rate(v, "ets_idle_slope")?);
    }
    Ok(out)
}

/// The ETS configuration of a link (`ets_*` keys), `None` when it has none (strict priority).
fn link_ets(ctx: &Ctx<'_>, p: &RawLinkParams, line_of: usize) -> Result<Option<EtsConfig>, ScenarioError> {
    if p.ets_tc_bandwidth.is_none()
        && p.ets_prio_tc.is_none()
        && p.ets_tsa.is_none()
        && p.ets_idle_slope.is_none()
    {
        return Ok(None);
    }
    let err = |key: &str, message: String| ScenarioError {
        file: ctx.file.to_string(),
        line: line_of,
        key: format!("key `{key}`: "),
        message,
    };
    let eight = |key: &str, v: &Option<Vec<u8>>, default: [u8; 8]| -> Result<[u8; 8], ScenarioError> {
        match v {
            None => Ok(default),
            Some(v) => <[u8; 8]>::try_from(v.as_slice()).map_err(|_| {
                err(
                    key,
                    format!(
                        "found {} values, allowed exactly 8 (one per traffic class or priority)",
                        v.len()
                    ),
                )
            }),
        }
    };
    let bw = eight("ets_tc_bandwidth", &p.ets_tc_bandwidth, [0; 8])?;
    let prio_tc = eight("ets_prio_tc", &p.ets_prio_tc, [0, 1, 2, 3, 4, 5, 6, 7])?;
    let mut tsa = [Tsa::STRICT; 8];
    match &p.ets_tsa {
        None => {
            for (t, &b) in tsa.iter_mut().zip(&bw) {
                if b > 0 {
                    *t = Tsa::ETS;
                }
            }
        }
        Some(v) if v.len() == 8 => {
            for (t, name) in tsa.iter_mut().zip(v) {
                *t = match name.as_str() {
                    "strict" => Tsa::STRICT,
                    "ets" => Tsa::ETS,
                    "cbs" => Tsa::CREDIT_BASED_SHAPER,
                    other => {
                        return Err(err(
                            "ets_tsa",
                            format!("found {other:?}, allowed \"strict\", \"cbs\" or \"ets\""),
                        ));
                    }
                };
            }
        }
        Some(v) => {
            return Err(err(
                "ets_tsa",
                format!("found {} values, allowed exactly 8", v.len()),
            ));
        }
    }
    EtsConfig::new(8, prio_tc.map(Some), tsa, bw)
        .map(Some)
        .map_err(|e| err("ets_tc_bandwidth", e.to_string()))
}

/// Largest payload: a 9216-byte jumbo MTU (the usual switch and Linux maximum), whose frames
/// are 9238 bytes with header, 802.1Q tag and FCS.
pub const MAX_MTU: u64 = 9216;

/// Most members a group (`count`) may have.
pub const MAX_GROUP: u64 = 4096;

pub(super) fn build(
    raw: RawScenario,
    ctx: &Ctx<'_>,
    dir: Option<&Path>,
    ov: &Overrides,
) -> Result<SimConfig, ScenarioError> {
    let duration = match ov.duration {
        Some(d) => d,
        None => ctx.duration(&raw.duration, "duration")?,
    };
    if duration == Duration::ZERO {
        return ctx.err(
            raw.duration.span(),
            "duration",
            "found 0, allowed a positive duration".into(),
        );
    }
    let mtu_default = raw.defaults.mtu.unwrap_or(1500);
    // every mtu in the file: 1..=9216 (a 9216-byte jumbo MTU; 9238-byte frames)
    let mtus = std::iter::once(raw.defaults.mtu)
        .chain(raw.link.iter().map(|l| l.mtu))
        .chain(raw.switch.iter().map(|s| s.mtu))
        .chain(raw.flow.iter().map(|f| f.mtu))
        .chain(raw.workload.iter().map(|w| w.mtu));
    for m in mtus.flatten() {
        if !(1..=MAX_MTU).contains(&m) {
            return ctx.err(
                0..0,
                "mtu",
                format!("found {m}, allowed 1..={MAX_MTU} bytes of payload"),
            );
        }
    }
    let mut nodes: Vec<NodeConfig> = Vec::new();
    let mut by_name: HashMap<String, NodeId> = HashMap::new();
    let mut groups: HashMap<String, Vec<NodeId>> = HashMap::new();
    let mut add = |ctx: &Ctx<'_>, name: &Spanned<String>, n: NodeConfig, nodes: &mut Vec<NodeConfig>| {
        if by_name.contains_key(&n.name) {
            return ctx.err(
                name.span(),
                "name",
                format!("found {:?} a second time, allowed a unique node name", n.name),
            );
        }
        let id = nodes.len() as NodeId;
        by_name.insert(n.name.clone(), id);
        nodes.push(n);
        Ok(id)
    };
    for h in &raw.host {
        let count = match &h.count {
            None => None,
            Some(toml::Value::Integer(n)) if *n >= 0 => Some(*n as u64),
            Some(v) => {
                let param = v
                    .as_str()
                    .and_then(|s| s.strip_prefix('$'))
                    .and_then(|k| raw.params.get(k));
                match param {
                    Some(&n) if n >= 0 => Some(n as u64),
                    _ => {
                        let mut known: Vec<&String> = raw.params.keys().collect();
                        known.sort();
                        return ctx.err(
                            h.name.span(),
                            "count",
                            format!("found {v}, allowed a whole number or \"$name\" naming one of [params] {known:?}"),
                        );
                    }
                }
            }
        };
        if let Some(c) = count
            && (c == 0 || c > MAX_GROUP)
        {
            return ctx.err(
                h.name.span(),
                "count",
                format!("found {c}, allowed 1..={MAX_GROUP}"),
            );
        }
        let mut hc = HostConfig::default();
        if let Some(r) = &h.rx_rate {
            hc.rx_rate = Some(ctx.rate(r, "rx_rate")?);
        }
        if let Some(v) = h.rx_buffer_bytes {
            hc.rx_buffer_bytes = v;
        }
        if let Some(v) = h.rx_xoff_bytes {
            hc.rx_xoff_bytes = v;
        }
        if let Some(v) = h.rx_xon_bytes {
            hc.rx_xon_bytes = v;
        }
        if let Some(v) = h.nic_queue_frames {
            hc.nic_queue_frames = v;
        }
        if hc.rx_xon_bytes > hc.rx_xoff_bytes || hc.rx_xoff_bytes > hc.rx_buffer_bytes {
            return ctx.err(
                h.name.span(),
                "rx_xon_bytes",
                format!(
                    "found xon {} / xoff {} / buffer {}, allowed xon ≤ xoff ≤ buffer",
                    hc.rx_xon_bytes, hc.rx_xoff_bytes, hc.rx_buffer_bytes
                ),
            );
        }
        let base = h.name.get_ref();
        match count {
            None => {
                add(
                    ctx,
                    &h.name,
                    NodeConfig {
                        name: base.clone(),
                        kind: NodeKind::Host(hc),
                        dcbx: h
                            .dcbx
                            .as_ref()
                            .map(|v| dcbx_config(ctx, v, h.name.span()))
                            .transpose()?,
                    },
                    &mut nodes,
                )?;
            }
            Some(c) => {
                let mut members = Vec::new();
                for i in 1..=c {
                    let n = NodeConfig {
                        name: format!("{base}{i}"),
                        kind: NodeKind::Host(hc.clone()),
                        dcbx: h
                            .dcbx
                            .as_ref()
                            .map(|v| dcbx_config(ctx, v, h.name.span()))
                            .transpose()?,
                    };
                    members.push(add(ctx, &h.name, n, &mut nodes)?);
                }
                groups.insert(base.clone(), members);
            }
        }
    }
    for s in &raw.switch {
        let threshold = match s.threshold.get_ref().as_str() {
            "dynamic" => {
                let alpha = s.alpha.unwrap_or(1.0);
                if !(alpha > 0.0 && alpha <= 64.0) {
                    return ctx.err(
                        s.name.span(),
                        "alpha",
                        format!("found {alpha}, allowed 0 < alpha ≤ 64"),
                    );
                }
                Threshold::Dynamic {
                    alpha_1024: ((alpha * 1024.0).round() as u64).max(1),
                }
            }
            "static" => match s.static_threshold_bytes {
                Some(bytes) => Threshold::Static { bytes },
                None => {
                    return ctx.err(
                        s.threshold.span(),
                        "static_threshold_bytes",
                        "missing; required with threshold = \"static\"".into(),
                    );
                }
            },
            other => {
                return ctx.err(
                    s.threshold.span(),
                    "threshold",
                    format!("found {other:?}, allowed \"dynamic\" or \"static\""),
                );
            }
        };
        let mtu = s.mtu.unwrap_or(mtu_default);
        let sc = SwitchConfig {
            buffer_bytes: s.buffer_bytes,
            threshold,
            xon_offset_bytes: s.xon_offset_bytes.unwrap_or(2 * (mtu + 22)),
            headroom_bytes: s.headroom_bytes,
            mtu,
            ecn: ecn_spec(
                ctx,
                s.ecn.as_ref(),
                raw.ecn.as_ref(),
                ctx.line_of(s.name.span().start),
            )?,
            qcn: qcn_spec(
                ctx,
                s.qcn.as_ref(),
                raw.qcn.as_ref(),
                ctx.line_of(s.name.span().start),
            )?,
        };
        add(
            ctx,
            &s.name,
            NodeConfig {
                name: s.name.get_ref().clone(),
                kind: NodeKind::Switch(sc),
                dcbx: s
                    .dcbx
                    .as_ref()
                    .map(|v| dcbx_config(ctx, v, s.name.span()))
                    .transpose()?,
            },
            &mut nodes,
        )?;
    }
    let resolve = |v: &Spanned<String>, key: &str| -> Result<Vec<NodeId>, ScenarioError> {
        let n = v.get_ref();
        if let Some(m) = n.strip_suffix('*').and_then(|g| groups.get(g)) {
            return Ok(m.clone());
        }
        match by_name.get(n) {
            Some(&id) => Ok(vec![id]),
            None => {
                let mut known: Vec<&str> = by_name.keys().map(String::as_str).collect();
                known.sort();
                known.truncate(12);
                ctx.err(
                    v.span(),
                    key,
                    format!(
                        "found {n:?}, allowed a node name (e.g. {}) or GROUP* for a host group",
                        known.join(", ")
                    ),
                )
            }
        }
    };
    let mut links = Vec::new();
    for l in &raw.link {
        let p = merge(&raw.defaults, &l.params());
        let rate = match &p.rate {
            Some(r) => ctx.rate(r, "rate")?,
            None => {
                return ctx.err(
                    l.a.span(),
                    "rate",
                    "missing: set it on the link or in [defaults]".into(),
                );
            }
        };
        let end_fc = |end: &Option<RawEnd>| {
            let q = end.as_ref().map_or_else(|| p.clone(), |e| e.over(&p));
            link_fc(ctx, &q, rate).map_err(|mut e| {
                if e.line == 0 {
                    e.line = ctx.line_of(l.a.span().start);
                }
                e
            })
        };
        if l.length_m.is_some() && l.delay.is_some()
            || raw.defaults.length_m.is_some() && raw.defaults.delay.is_some()
        {
            return ctx.err(
                l.a.span(),
                "delay",
                "found both `length_m` and `delay` in one table; allowed one of them (`delay` is the one-way propagation time, `length_m` the cable at 5 ns/m)".into(),
            );
        }
        // the more specific table wins: a link's `length_m` over a default `delay`
        let delay = match (&l.length_m, &p.delay) {
            (Some(_), _) if l.delay.is_none() => None,
            (_, Some(d)) => Some(ctx.duration(d, "delay")?),
            (_, None) => None,
        };
        let fc_a = end_fc(&l.a_end)?;
        let fc_b = end_fc(&l.b_end)?;
        let ets = link_ets(ctx, &p, ctx.line_of(l.a.span().start))?;
        let ets_idle_slope = link_idle_slopes(ctx, &p)?;
        let a = resolve(&l.a, "a")?;
        let b = resolve(&l.b, "b")?;
        if a.len() > 1 && b.len() > 1 {
            return ctx.err(
                l.a.span(),
                "a",
                "both ends are groups; allowed: at most one GROUP* end".into(),
            );
        }
        for &x in &a {
            for &y in &b {
                if x == y {
                    return ctx.err(l.b.span(), "b", "a link's two ends are the same node".into());
                }
                // an end's `dcbx = false` runs no agent there (a peer without DCBX)
                let dcbx_of = |node: NodeId, end: &Option<RawEnd>| {
                    let end = end.as_ref().and_then(|e| e.dcbx.as_ref());
                    if !p.dcbx.unwrap_or(false) || end.is_some_and(|v| v.as_bool() == Some(false)) {
                        return Ok(None);
                    }
                    match end {
                        Some(v) if v.is_table() => dcbx_config(ctx, v, l.a.span()).map(Some),
                        Some(v) if v.as_bool() != Some(true) => ctx.err(
                            l.a.span(),
                            "dcbx",
                            format!("found {v} in a_end/b_end, allowed a DCBX table, true or false"),
                        ),
                        _ => Ok(Some(nodes[node as usize].dcbx.clone().unwrap_or_default())),
                    }
                };
                let (dcbx_a, dcbx_b) = (dcbx_of(x, &l.a_end)?, dcbx_of(y, &l.b_end)?);
                let interface_delay = match &p.interface_delay {
                    None => Duration::ZERO,
                    Some(v) => match v.get_ref().as_str() {
                        "none" => Duration::ZERO,
                        // the 802.3 upper bound Annex N headroom counts, per direction
                        "802.3" => rate.time_for_bits(interface_delay_bit_times(rate)),
                        _ => ctx.duration(v, "interface_delay").map_err(|mut e| {
                            e.message = format!("{}; or \"none\", \"802.3\"", e.message);
                            e
                        })?,
                    },
                };
                links.push(LinkConfig {
                    a: x,
                    b: y,
                    rate,
                    length_m: p.length_m.unwrap_or(1),
                    delay,
                    interface_delay,
                    fc_a,
                    fc_b,
                    ets,
                    ets_idle_slope,
                    dcbx_a,
                    dcbx_b,
                });
            }
        }
    }
    let span_of =
        |d: &Option<Spanned<String>>, key: &str, default: Instant| -> Result<Instant, ScenarioError> {
            match d {
                Some(s) => Ok(Instant::ZERO + ctx.duration(s, key)?),
                None => Ok(default),
            }
        };
    // a host's line rate (its one link), for checking QP parameters against it
    let line_of_host = |n: NodeId| {
        links
            .iter()
            .find(|l: &&LinkConfig| l.a == n || l.b == n)
            .map(|l| l.rate)
    };
    let transport = |t: &Option<Spanned<String>>,
                     keys: RawQp,
                     stray: Option<&'static str>,
                     priority: u8,
                     srcs: &[NodeId],
                     span: std::ops::Range<usize>|
     -> Result<Option<Box<QpSpec>>, ScenarioError> {
        match t {
            None => match stray {
                None => Ok(None),
                Some(k) => ctx.err(
                    span,
                    k,
                    "a QP key without `transport = \"rocev2\"` (the flow would be plain frames)".into(),
                ),
            },
            Some(t) if t.get_ref() == "rocev2" => {
                let lines: Vec<Rate> = srcs.iter().filter_map(|&n| line_of_host(n)).collect();
                let q = keys.over(&raw.qp);
                qp_spec(ctx, &q, priority, &lines, ctx.line_of(span.start)).map(|q| Some(Box::new(q)))
            }
            Some(t) => ctx.err(
                t.span(),
                "transport",
                format!(
                    "found {:?}, allowed \"rocev2\" (or no key: plain frames)",
                    t.get_ref()
                ),
            ),
        }
    };
    let mut flows = Vec::new();
    for f in &raw.flow {
        if f.priority > 7 {
            return ctx.err(
                f.src.span(),
                "priority",
                format!("found {}, allowed 0..=7", f.priority),
            );
        }
        let pattern = match f.pattern.get_ref().as_str() {
            "line" => Pattern::Line,
            "cbr" | "on_off" => {
                let rate = match &f.rate {
                    Some(r) => ctx.flow_rate(r, "rate")?,
                    None => {
                        return ctx.err(
                            f.pattern.span(),
                            "rate",
                            "missing; required by pattern cbr and on_off".into(),
                        );
                    }
                };
                if f.pattern.get_ref() == "cbr" {
                    Pattern::Cbr { rate }
                } else {
                    let (Some(on), Some(off)) = (&f.on, &f.off) else {
                        return ctx.err(
                            f.pattern.span(),
                            "on",
                            "`on` and `off` durations are required by pattern on_off".into(),
                        );
                    };
                    Pattern::OnOff {
                        rate,
                        on: ctx.duration(on, "on")?,
                        off: ctx.duration(off, "off")?,
                    }
                }
            }
            other => {
                return ctx.err(
                    f.pattern.span(),
                    "pattern",
                    format!("found {other:?}, allowed \"line\", \"cbr\" or \"on_off\""),
                );
            }
        };
        if f.size_bytes == Some(0) {
            return ctx.err(
                f.src.span(),
                "size_bytes",
                "found 0, allowed at least 1 byte (omit it for an endless flow)".into(),
            );
        }
        let start = span_of(&f.start, "start", Instant::ZERO)?;
        let stop = span_of(&f.stop, "stop", Instant::MAX)?;
        let srcs = resolve(&f.src, "src")?;
        let dsts = resolve(&f.dst, "dst")?;
        let qp = transport(
            &f.transport,
            f.qp_keys(),
            f.stray_qp_key(),
            f.priority,
            &srcs,
            f.src.span(),
        )?;
        for &s in &srcs {
            for &d in &dsts {
                let name = if srcs.len() * dsts.len() > 1 {
                    format!(
                        "{}:{}",
                        f.name,
                        if srcs.len() > 1 {
                            &nodes[s as usize].name
                        } else {
                            &nodes[d as usize].name
                        }
                    )
                } else {
                    f.name.clone()
                };
                flows.push(FlowSpec {
                    name,
                    src: s,
                    dst: d,
                    priority: f.priority,
                    mtu: f.mtu.unwrap_or(mtu_default),
                    pattern,
                    start,
                    stop,
                    size: f.size_bytes,
                    transport: qp.clone(),
                });
            }
        }
    }
    let mut workloads = Vec::new();
    for w in &raw.workload {
        let path = PathBuf::from(w.cdf_file.get_ref());
        let path = match (path.is_relative(), dir) {
            (true, Some(d)) => d.join(path),
            _ => path,
        };
        let text = std::fs::read_to_string(&path).or_else(|e| {
            ctx.err(
                w.cdf_file.span(),
                "cdf_file",
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        let cdf = SizeCdf::parse(&text).or_else(|e| {
            ctx.err(
                w.cdf_file.span(),
                "cdf_file",
                format!("{}:{}: {}", path.display(), e.line, e.problem),
            )
        })?;
        if !(w.load > 0.0 && w.load <= 1.0) {
            return ctx.err(
                w.cdf_file.span(),
                "load",
                format!("found {}, allowed 0 < load ≤ 1", w.load),
            );
        }
        let mut src = Vec::new();
        for s in &w.src {
            src.extend(resolve(s, "src")?);
        }
        let mut dst = Vec::new();
        for d in &w.dst {
            dst.extend(resolve(d, "dst")?);
        }
        if src.is_empty() || dst.is_empty() {
            return ctx.err(
                w.cdf_file.span(),
                "src",
                "src and dst must name at least one host each".into(),
            );
        }
        let line = raw
            .defaults
            .rate
            .as_ref()
            .map(|r| ctx.rate(r, "rate"))
            .transpose()?
            .unwrap_or(Rate::from_gbps(100));
        let qp = transport(
            &w.transport,
            w.qp_keys(),
            w.stray_qp_key(),
            w.priority,
            &src,
            w.cdf_file.span(),
        )?;
        workloads.push(Workload {
            name: w.name.clone(),
            mean_interarrival: Workload::interarrival_for(&cdf, w.load, line, src.len()),
            src,
            dst,
            priority: w.priority,
            mtu: w.mtu.unwrap_or(mtu_default),
            cdf,
            start: span_of(&w.start, "start", Instant::ZERO)?,
            stop: span_of(&w.stop, "stop", Instant::MAX)?,
            transport: qp,
        });
    }
    let mut signals = Vec::new();
    for s in &raw.signal {
        if s.priority > 7 {
            return ctx.err(
                s.host.span(),
                "priority",
                format!("found {}, allowed 0..=7", s.priority),
            );
        }
        let ids = resolve(&s.host, "host")?;
        for &node in &ids {
            for (rise, fall) in &s.fc_rdy {
                let r = ctx.duration(rise, "fc_rdy")?;
                let f = ctx.duration(fall, "fc_rdy")?;
                if f <= r {
                    return ctx.err(
                        fall.span(),
                        "fc_rdy",
                        format!(
                            "found fall {} ≤ rise {}, allowed [rise, fall] with fall later",
                            f, r
                        ),
                    );
                }
                signals.push(Signal {
                    node,
                    prio: s.priority,
                    at: Instant::ZERO + r,
                    on: true,
                });
                signals.push(Signal {
                    node,
                    prio: s.priority,
                    at: Instant::ZERO + f,
                    on: false,
                });
            }
        }
    }
    let model = model_config(ctx, &raw.model)?;
    Ok(SimConfig {
        model,
        name: raw.name,
        description: raw.description,
        seed: ov.seed.unwrap_or(raw.seed),
        duration,
        nodes,
        links,
        flows,
        workloads,
        signals,
    })
}

/// The `[model]` table: a preset, then each choice it names overriding it.
fn model_config(ctx: &Ctx<'_>, m: &RawModel) -> Result<ModelConfig, ScenarioError> {
    let mut c = match &m.preset {
        None => ModelConfig::default(),
        Some(p) => match ModelConfig::preset(p.get_ref()) {
            Some(c) => c,
            None => {
                return ctx.err(
                    p.span(),
                    "preset",
                    format!("found {:?}, allowed \"exact\" or \"hpcc-ns3\"", p.get_ref()),
                );
            }
        },
    };
    fn pick<T: Copy>(
        ctx: &Ctx<'_>,
        v: &Option<Spanned<String>>,
        key: &str,
        choices: &[(&str, T)],
        out: &mut T,
    ) -> Result<(), ScenarioError> {
        let Some(v) = v else {
            return Ok(());
        };
        match choices.iter().find(|(n, _)| *n == v.get_ref()) {
            Some((_, x)) => {
                *out = *x;
                Ok(())
            }
            None => {
                let names: Vec<String> = choices.iter().map(|(n, _)| format!("{n:?}")).collect();
                ctx.err(
                    v.span(),
                    key,
                    format!("found {:?}, allowed {}", v.get_ref(), names.join(", ")),
                )
            }
        }
    }
    pick(
        ctx,
        &m.framing,
        "framing",
        &[("ieee", Framing::Ieee8023), ("ns3", Framing::Ns3)],
        &mut c.framing,
    )?;
    pick(
        ctx,
        &m.ideal_fct,
        "ideal_fct",
        &[("wire", IdealFct::Wire), ("ns3", IdealFct::Ns3)],
        &mut c.ideal_fct,
    )?;
    pick(
        ctx,
        &m.replies,
        "replies",
        &[("queued", ReplyQueue::Queued), ("first", ReplyQueue::First)],
        &mut c.replies,
    )?;
    pick(
        ctx,
        &m.ecmp,
        "ecmp",
        &[("flow", Ecmp::FlowHash), ("ns3", Ecmp::Ns3)],
        &mut c.ecmp,
    )?;
    pick(
        ctx,
        &m.pacing,
        "pacing",
        &[
            ("reschedule", Pacing::Reschedule),
            ("next_packet", Pacing::NextPacket),
        ],
        &mut c.pacing,
    )?;
    Ok(c)
}
