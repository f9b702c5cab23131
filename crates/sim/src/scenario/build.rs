//! Resolving a read scenario: names to nodes, groups to members, text units to exact values,
//! link parameters to flow-control and ETS configurations; every check names file, line, key.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use lossless_proto::dcbx::DcbxConfig;
use lossless_proto::units::{Duration, Instant, Rate};
use toml::Spanned;

use super::link::{
    MAX_LENGTH_M, MAX_LINK_DELAY, dcbx_config, link_ets, link_fc, link_idle_slopes, link_rate, link_trust,
    merge,
};
use super::qp::{ecn_spec, qcn_spec};
use super::raw::{RawEnd, RawHost, RawLink, RawLinkParams, RawModel, RawScenario, RawSwitch};
use super::topology::{Size, Topology};
use super::{Overrides, ScenarioError, parse_duration};
use crate::buffer::Threshold;
use crate::config::headroom::interface_delay_bit_times;
use crate::config::model::{
    BufferModel, Ecmp, Framing, IdealFct, ModelConfig, Pacing, ReplyQueue, Signalling,
};
use crate::config::{HostConfig, LinkConfig, NodeConfig, NodeKind, SimConfig, SwitchConfig};
use crate::frame::NodeId;

/// Where a scenario came from, for errors: the file's name and, when the lines are those of
/// the file, its text.
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
    /// An error at `span` (0..0: no line) about `key` (empty: none).
    pub(super) fn err<T>(&self, span: Range<usize>, key: &str, message: String) -> Result<T, ScenarioError> {
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
    /// [`Self::err`] about `key` of the table `table` (e.g. `[pfcwd]`).
    pub(super) fn err_in<T>(
        &self,
        span: Range<usize>,
        table: &str,
        key: &str,
        message: String,
    ) -> Result<T, ScenarioError> {
        self.err(span, key, message).map_err(|mut e| {
            e.key = format!("key `{key}` in {table}: ");
            e
        })
    }
    /// The line of the table header `header` (e.g. `[qp]`), 0 when there is none or the lines
    /// are not the file's.
    pub(super) fn header_line(&self, header: &str) -> usize {
        self.text.map_or(0, |t| {
            t.lines()
                .position(|l| l.split('#').next().unwrap_or("").trim() == header)
                .map_or(0, |i| i + 1)
        })
    }
    /// `e`, an error about a value that came from the table `header` (a default table such as
    /// `[ecn]`) rather than from the entry `entry` it was raised for: it names that table and
    /// its line.
    pub(super) fn in_table(&self, mut e: ScenarioError, header: &str, entry: &str) -> ScenarioError {
        let key = e
            .key
            .strip_prefix("key `")
            .and_then(|k| k.split('`').next())
            .unwrap_or("")
            .to_string();
        e.line = self.header_line(header);
        e.key = if key.is_empty() {
            format!("in {header} (for {entry}): ")
        } else {
            format!("key `{key}` in {header} (for {entry}): ")
        };
        e
    }
    pub(super) fn duration(&self, v: &Spanned<String>, key: &str) -> Result<Duration, ScenarioError> {
        parse_duration(v.get_ref()).or_else(|m| self.err(v.span(), key, m.to_string()))
    }
}

/// Largest payload: a 9216-byte jumbo MTU (the usual switch and Linux maximum), whose frames
/// are 9238 bytes with header, 802.1Q tag and FCS.
pub const MAX_MTU: u64 = 9216;

/// Longest name of a scenario, node, host group, flow or workload, bytes.
pub const MAX_NAME_LEN: usize = 64;

/// Whether `name` may name a scenario, node, host group, flow or workload: 1 to
/// [`MAX_NAME_LEN`] ASCII letters, digits, `_` and `-`. Names become parts of file names
/// (`--pcap`), VCD scopes and lines of the summary, so they hold no `/`, `.`, space or
/// control character.
pub fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Refuses a `key` at `v` that is not a valid name ([`is_valid_name`]), saying what was found
/// and what is allowed.
pub(super) fn check_name(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<(), ScenarioError> {
    let n = v.get_ref();
    if is_valid_name(n) {
        return Ok(());
    }
    let shown: String = if n.len() > 80 {
        format!(
            "{:?}… ({} bytes)",
            n.chars().take(40).collect::<String>(),
            n.len()
        )
    } else {
        format!("{n:?}")
    };
    ctx.err(
        v.span(),
        key,
        format!(
            "found {shown}, allowed a name of 1 to {MAX_NAME_LEN} ASCII letters, digits, `_` and `-` \
             (names become parts of file names, VCD scopes and summary lines)"
        ),
    )
}

/// Largest switch buffer, bytes: 1 TiB (switch buffers are tens of MB; sums of a switch's
/// reserves over its ports and priorities stay within 64 bits).
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;

/// Nodes by name and host groups by name, as the scenario defines them.
pub(super) struct Names {
    pub(super) by_name: HashMap<String, NodeId>,
    pub(super) groups: HashMap<String, Vec<NodeId>>,
}

impl Names {
    /// The nodes `v` names: one node, or every member of `GROUP*`.
    pub(super) fn resolve(
        &self,
        ctx: &Ctx<'_>,
        v: &Spanned<String>,
        key: &str,
    ) -> Result<&[NodeId], ScenarioError> {
        let n = v.get_ref();
        if let Some(m) = n.strip_suffix('*').and_then(|g| self.groups.get(g)) {
            return Ok(m);
        }
        match self.by_name.get_key_value(n) {
            Some((_, id)) => Ok(std::slice::from_ref(id)),
            None => {
                let mut known: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
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
    }
}

/// Builds the configuration of a read scenario in the order its file is read: the header
/// (name, description, a `[fabric]` expanded into entries, duration, MTUs), the hosts, the
/// switches, the links, the model, the traffic, the pathologies, and last the checks that the
/// simulator can build what the file describes.
pub(super) fn build(
    mut raw: RawScenario,
    ctx: &Ctx<'_>,
    dir: Option<&Path>,
    ov: &Overrides,
) -> Result<SimConfig, ScenarioError> {
    check_header(&raw, ctx)?;
    super::fabric::expand(&mut raw, ctx)?;
    let duration = run_duration(&raw, ctx, ov)?;
    let mtu_default = check_mtus(&raw, ctx)?;
    let mut size = Size::default();
    let mut table = NodeTable {
        nodes: Vec::new(),
        names: Names {
            by_name: HashMap::new(),
            groups: HashMap::new(),
        },
        spans: Vec::new(),
    };
    for h in &raw.host {
        table.add_host(ctx, &raw, h, &mut size)?;
    }
    for s in &raw.switch {
        table.add_switch(ctx, &raw, s, &mut size, mtu_default)?;
    }
    if let Some(last) = raw.switch.last() {
        size.forwarding(
            ctx,
            last.name.span(),
            raw.switch.len() as u64,
            table.nodes.len() as u64,
        )?;
    }
    let mut made = LinkTable {
        links: Vec::new(),
        spans: Vec::new(),
        mtus: Vec::new(),
    };
    for l in &raw.link {
        made.add_link(ctx, &raw, l, &table, &mut size, mtu_default)?;
    }
    let NodeTable {
        nodes,
        names,
        spans: node_spans,
    } = table;
    let LinkTable {
        links,
        spans: link_spans,
        mtus: link_mtus,
    } = made;
    let topo = Topology::new(ctx, &nodes, &node_spans, &links, &link_spans)?;
    let model = model_config(ctx, &raw.model)?;
    let mtus = super::mtu::Mtus::new(&nodes, &links, &link_mtus);
    let traffic = super::flows::Traffic {
        mtus: &mtus,
        model: &model,
        ctx,
        names: &names,
        nodes: &nodes,
        topo: &topo,
        mtu_default,
        duration,
        duration_overridden: ov.duration.is_some(),
        dir,
        qp: &raw.qp,
        host_dscp: super::flows::host_dscp_maps(&nodes, &links),
    };
    traffic.unique_names(&raw.flow, &raw.workload)?;
    let flows = traffic.flows(&raw.flow, &mut size)?;
    let workloads = traffic.workloads(&raw.workload, &mut size)?;
    let signals = traffic.signals(&raw.signal, &mut size)?;
    let pathology = super::pathology::Scope {
        ctx,
        names: &names,
        nodes: &nodes,
        links: &links,
        duration,
        duration_overridden: ov.duration.is_some(),
    }
    .build(&raw)?;
    super::buildable::Buildable {
        ctx,
        names: &names,
        nodes: &nodes,
        links: &links,
        buffer_model: model.buffer,
    }
    .check(&raw)?;
    Ok(SimConfig {
        model,
        name: raw.name.into_inner(),
        description: raw.description.into_inner(),
        seed: ov.seed.unwrap_or(raw.seed),
        duration,
        nodes,
        links,
        flows,
        workloads,
        signals,
        pathology,
    })
}

/// The scenario's `name` and `description`.
fn check_header(raw: &RawScenario, ctx: &Ctx<'_>) -> Result<(), ScenarioError> {
    check_name(ctx, &raw.name, "name")?;
    if let Some(c) = raw.description.get_ref().chars().find(|c| c.is_control()) {
        return ctx.err(
            raw.description.span(),
            "description",
            format!(
                "found the control character {c:?}, allowed one line of text (the description is \
                 printed in the summary)"
            ),
        );
    }
    Ok(())
}

/// How long the run lasts: `--duration` if given, else the file's `duration`; positive.
fn run_duration(raw: &RawScenario, ctx: &Ctx<'_>, ov: &Overrides) -> Result<Duration, ScenarioError> {
    let duration = match ov.duration {
        // an option is checked where it is parsed (the CLI names it); a zero from a library
        // caller is named here without blaming the file
        Some(d) if d == Duration::ZERO => {
            return Err(ScenarioError {
                file: "--duration".into(),
                line: 0,
                key: String::new(),
                message: "found 0, allowed a positive duration".into(),
            });
        }
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
    Ok(duration)
}

/// Checks every `mtu` in the file and gives the default one (`[defaults]`' or 1500).
fn check_mtus(raw: &RawScenario, ctx: &Ctx<'_>) -> Result<u64, ScenarioError> {
    let mtu_default = raw.defaults.mtu.as_ref().map_or(1500, |m| *m.get_ref());
    // every mtu in the file: 1..=9216 (a 9216-byte jumbo MTU; 9238-byte frames)
    let mtus = std::iter::once(&raw.defaults.mtu)
        .chain(raw.link.iter().map(|l| &l.mtu))
        .chain(raw.switch.iter().map(|s| &s.mtu))
        .chain(raw.flow.iter().map(|f| &f.mtu))
        .chain(raw.workload.iter().map(|w| &w.mtu));
    for m in mtus.flatten() {
        if !(1..=MAX_MTU).contains(m.get_ref()) {
            return ctx.err(
                m.span(),
                "mtu",
                format!("found {}, allowed 1..={MAX_MTU} bytes of payload", m.get_ref()),
            );
        }
    }
    Ok(mtu_default)
}

/// The nodes made so far, by name and group, with where each was defined.
struct NodeTable {
    nodes: Vec<NodeConfig>,
    names: Names,
    /// Where each node was defined, for errors about it.
    spans: Vec<Range<usize>>,
}

impl NodeTable {
    /// Adds node `n`, defined by the `name` at its span; its name must be new.
    fn add(&mut self, ctx: &Ctx<'_>, name: &Spanned<String>, n: NodeConfig) -> Result<NodeId, ScenarioError> {
        if self.names.by_name.contains_key(&n.name) {
            return ctx.err(
                name.span(),
                "name",
                format!("found {:?} a second time, allowed a unique node name", n.name),
            );
        }
        let id = self.nodes.len() as NodeId;
        self.names.by_name.insert(n.name.clone(), id);
        self.nodes.push(n);
        self.spans.push(name.span());
        Ok(id)
    }

    /// A `[[host]]`: one host, or a group of `count` hosts named by its name and a number.
    fn add_host(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawScenario,
        h: &RawHost,
        size: &mut Size,
    ) -> Result<(), ScenarioError> {
        // a group's members are its name and a number
        check_name(ctx, &h.name, "name")?;
        let count = host_count(ctx, raw, h)?;
        size.add(
            ctx,
            h.count.as_ref().map_or(h.name.span(), Spanned::span),
            "hosts",
            count.unwrap_or(1),
        )?;
        let hc = host_config(ctx, h)?;
        let dcbx = h
            .dcbx
            .as_ref()
            .map(|v| dcbx_config(ctx, v, h.name.span()))
            .transpose()?;
        let base = h.name.get_ref();
        match count {
            None => {
                let n = NodeConfig {
                    name: base.clone(),
                    kind: NodeKind::Host(hc),
                    dcbx,
                };
                self.add(ctx, &h.name, n)?;
            }
            Some(c) => {
                let mut members = Vec::new();
                for i in 1..=c {
                    let n = NodeConfig {
                        name: format!("{base}{i}"),
                        kind: NodeKind::Host(hc.clone()),
                        dcbx: dcbx.clone(),
                    };
                    members.push(self.add(ctx, &h.name, n)?);
                }
                self.names.groups.insert(base.clone(), members);
            }
        }
        Ok(())
    }

    /// A `[[switch]]`.
    fn add_switch(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawScenario,
        s: &RawSwitch,
        size: &mut Size,
        mtu_default: u64,
    ) -> Result<(), ScenarioError> {
        check_name(ctx, &s.name, "name")?;
        size.add(ctx, s.name.span(), "switches", 1)?;
        let sc = switch_config(ctx, raw, s, mtu_default)?;
        let n = NodeConfig {
            name: s.name.get_ref().clone(),
            kind: NodeKind::Switch(sc),
            dcbx: s
                .dcbx
                .as_ref()
                .map(|v| dcbx_config(ctx, v, s.name.span()))
                .transpose()?,
        };
        self.add(ctx, &s.name, n)?;
        Ok(())
    }
}

/// A host's `count`: `None` for one host, else the members of its group (a whole number or
/// `"$name"` of `[params]`, at least 1).
fn host_count(ctx: &Ctx<'_>, raw: &RawScenario, h: &RawHost) -> Result<Option<u64>, ScenarioError> {
    let Some(v) = &h.count else {
        return Ok(None);
    };
    let (found, n) = match v.get_ref() {
        toml::Value::Integer(n) => (n.to_string(), Some(*n)),
        toml::Value::String(s) => match s.strip_prefix('$').and_then(|k| raw.params.get(k)) {
            // say what the parameter holds, not its name
            Some(&n) => (format!("{n} (from {s})"), Some(n)),
            None => (format!("{s:?}"), None),
        },
        other => (other.to_string(), None),
    };
    match n {
        Some(n) if n >= 1 => Ok(Some(n as u64)),
        Some(_) => ctx.err(
            v.span(),
            "count",
            format!("found {found}, allowed 1 or more members"),
        ),
        None => {
            let mut known: Vec<&String> = raw.params.keys().collect();
            known.sort();
            ctx.err(
                v.span(),
                "count",
                format!(
                    "found {found}, allowed a whole number or \"$name\" naming one of [params] {known:?}"
                ),
            )
        }
    }
}

/// A host's receive side: its rate, buffer and pause thresholds (xon ≤ xoff ≤ buffer), NIC
/// queue.
fn host_config(ctx: &Ctx<'_>, h: &RawHost) -> Result<HostConfig, ScenarioError> {
    let mut hc = HostConfig::default();
    if let Some(r) = &h.rx_rate {
        hc.rx_rate = Some(link_rate(ctx, r, "rx_rate")?);
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
            // the key given that breaks the order
            if hc.rx_xon_bytes > hc.rx_xoff_bytes && h.rx_xon_bytes.is_some() {
                "rx_xon_bytes"
            } else if h.rx_xoff_bytes.is_some() {
                "rx_xoff_bytes"
            } else {
                "rx_buffer_bytes"
            },
            format!(
                "found xon {} / xoff {} / buffer {}, allowed xon ≤ xoff ≤ buffer",
                hc.rx_xon_bytes, hc.rx_xoff_bytes, hc.rx_buffer_bytes
            ),
        );
    }
    Ok(hc)
}

/// A switch's buffer (threshold, size, headroom), MTU and ECN/QCN marking.
fn switch_config(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    s: &RawSwitch,
    mtu_default: u64,
) -> Result<SwitchConfig, ScenarioError> {
    let threshold = switch_threshold(ctx, s)?;
    // the buffer's reserves are added up over ports and priorities: bounded so that
    // every sum fits in 64 bits
    let buffer = *s.buffer_bytes.get_ref();
    if buffer > MAX_BUFFER_BYTES {
        return ctx.err(
            s.buffer_bytes.span(),
            "buffer_bytes",
            format!("found {buffer}, allowed at most {MAX_BUFFER_BYTES} (1 TiB)"),
        );
    }
    if let Some(h) = s.headroom_bytes
        && h > buffer
    {
        return ctx.err(
            s.name.span(),
            "headroom_bytes",
            format!("found {h}, allowed at most the switch's buffer_bytes {buffer}"),
        );
    }
    let mtu = s.mtu.as_ref().map_or(mtu_default, |m| *m.get_ref());
    Ok(SwitchConfig {
        buffer_bytes: *s.buffer_bytes.get_ref(),
        threshold,
        xon_offset_bytes: s.xon_offset_bytes.unwrap_or(2 * (mtu + 22)),
        headroom_bytes: s.headroom_bytes,
        mtu,
        // a value the switch took from [ecn] / [qcn] (no table of its own) is named there
        ecn: ecn_spec(
            ctx,
            s.ecn.as_ref(),
            raw.ecn.as_ref(),
            ctx.line_of(s.name.span().start),
        )
        .map_err(|e| match s.ecn {
            None | Some(toml::Value::Boolean(true)) => {
                ctx.in_table(e, "[ecn]", &format!("switch {:?}", s.name.get_ref()))
            }
            _ => e,
        })?,
        qcn: qcn_spec(
            ctx,
            s.qcn.as_ref(),
            raw.qcn.as_ref(),
            ctx.line_of(s.name.span().start),
        )
        .map_err(|e| match s.qcn {
            None | Some(toml::Value::Boolean(true)) => {
                ctx.in_table(e, "[qcn]", &format!("switch {:?}", s.name.get_ref()))
            }
            _ => e,
        })?,
    })
}

/// A switch's buffer threshold: `dynamic` with its `alpha`, or `static` with its bytes.
fn switch_threshold(ctx: &Ctx<'_>, s: &RawSwitch) -> Result<Threshold, ScenarioError> {
    match s.threshold.get_ref().as_str() {
        "dynamic" => {
            let alpha = s.alpha.unwrap_or(1.0);
            // the buffer keeps alpha in 1/1024: any other value would be silently rounded
            // (1e-300 to 1/1024, 0.3 to 307/1024)
            let k = alpha * 1024.0;
            if !(alpha > 0.0 && alpha <= 64.0 && k >= 1.0 && k.fract() == 0.0) {
                return ctx.err(
                    s.name.span(),
                    "alpha",
                    format!(
                        "found {alpha}, allowed a multiple of 1/1024 from 1/1024 (0.0009765625) to 64 \
                         (the buffer keeps alpha in 1/1024, e.g. 0.0625, 0.125, 0.5, 2)"
                    ),
                );
            }
            Ok(Threshold::Dynamic { alpha_1024: k as u64 })
        }
        "static" => match s.static_threshold_bytes {
            Some(bytes) => Ok(Threshold::Static { bytes }),
            None => ctx.err(
                s.threshold.span(),
                "static_threshold_bytes",
                "missing; required with threshold = \"static\"".into(),
            ),
        },
        other => ctx.err(
            s.threshold.span(),
            "threshold",
            format!("found {other:?}, allowed \"dynamic\" or \"static\""),
        ),
    }
}

/// The links made so far, each with the `a` of the `[[link]]` that made it (for errors about
/// it) and its MTU (its own, `[defaults]`', or the default 1500; mtu.rs).
struct LinkTable {
    links: Vec<LinkConfig>,
    spans: Vec<Range<usize>>,
    mtus: Vec<u64>,
}

impl LinkTable {
    /// A `[[link]]` over `[defaults]`: one link, or one per member of its `GROUP*` end.
    fn add_link(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawScenario,
        l: &RawLink,
        table: &NodeTable,
        size: &mut Size,
        mtu_default: u64,
    ) -> Result<(), ScenarioError> {
        let p = merge(&raw.defaults, &l.params());
        let rate = match &p.rate {
            Some(r) => link_rate(ctx, r, "rate")?,
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
        let delay = link_propagation(ctx, raw, l, &p)?;
        let fc_a = end_fc(&l.a_end)?;
        let fc_b = end_fc(&l.b_end)?;
        let end_trust = |end: &Option<RawEnd>| {
            let q = end.as_ref().map_or_else(|| p.clone(), |e| e.over(&p));
            link_trust(ctx, &q)
        };
        let trust_a = end_trust(&l.a_end)?;
        let trust_b = end_trust(&l.b_end)?;
        let ets_idle_slope = link_idle_slopes(ctx, &p, rate)?;
        let ets = link_ets(ctx, &p, &ets_idle_slope, l.a.span())?;
        let a = table.names.resolve(ctx, &l.a, "a")?;
        let b = table.names.resolve(ctx, &l.b, "b")?;
        if a.len() > 1 && b.len() > 1 {
            return ctx.err(
                l.a.span(),
                "a",
                "both ends are groups; allowed: at most one GROUP* end".into(),
            );
        }
        size.add(ctx, l.a.span(), "links", (a.len() * b.len()) as u64)?;
        let interface_delay = link_interface_delay(ctx, &p, rate)?;
        let ber = link_ber(ctx, &p)?;
        for &x in a {
            for &y in b {
                if x == y {
                    return ctx.err(
                        l.b.span(),
                        "b",
                        format!(
                            "found {:?} at both ends; allowed: a link between two different nodes",
                            table.nodes[x as usize].name
                        ),
                    );
                }
                let dcbx_a = end_dcbx(ctx, l, &p, &table.nodes[x as usize], &l.a_end)?;
                let dcbx_b = end_dcbx(ctx, l, &p, &table.nodes[y as usize], &l.b_end)?;
                self.links.push(LinkConfig {
                    a: x,
                    b: y,
                    rate,
                    length_m: p.length_m.as_ref().map_or(1, |v| *v.get_ref()),
                    delay,
                    interface_delay,
                    fc_a,
                    fc_b,
                    ets,
                    ets_idle_slope,
                    dcbx_a,
                    dcbx_b,
                    ber,
                    trust_a: trust_a.clone(),
                    trust_b: trust_b.clone(),
                });
                self.spans.push(l.a.span());
                self.mtus
                    .push(p.mtu.as_ref().map_or(mtu_default, |m| *m.get_ref()));
            }
        }
        Ok(())
    }
}

/// A link's `delay` (`None`: from its `length_m`, which is checked here), one of the two per
/// table.
fn link_propagation(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    l: &RawLink,
    p: &RawLinkParams,
) -> Result<Option<Duration>, ScenarioError> {
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
        (_, Some(d)) => Some(link_delay(ctx, d, "delay")?),
        (_, None) => None,
    };
    if let Some(m) = &p.length_m
        && *m.get_ref() > MAX_LENGTH_M
    {
        return ctx.err(
            m.span(),
            "length_m",
            format!(
                "found {}, allowed at most {MAX_LENGTH_M} m ({MAX_LINK_DELAY} at 5 ns/m)",
                m.get_ref()
            ),
        );
    }
    Ok(delay)
}

/// A link's `interface_delay`: none, 802.3's upper bound, or a duration.
fn link_interface_delay(ctx: &Ctx<'_>, p: &RawLinkParams, rate: Rate) -> Result<Duration, ScenarioError> {
    Ok(match &p.interface_delay {
        None => Duration::ZERO,
        Some(v) => match v.get_ref().as_str() {
            "none" => Duration::ZERO,
            // the 802.3 upper bound Annex N headroom counts, per direction
            "802.3" => rate.time_for_bits(interface_delay_bit_times(rate)),
            _ => link_delay(ctx, v, "interface_delay").map_err(|mut e| {
                e.message = format!("{}; or \"none\", \"802.3\"", e.message);
                e
            })?,
        },
    })
}

/// A link's bit error rate (`ber`): 0 when not set.
fn link_ber(ctx: &Ctx<'_>, p: &RawLinkParams) -> Result<f64, ScenarioError> {
    let Some(v) = &p.ber else {
        return Ok(0.0);
    };
    let ber = *v.get_ref();
    if !(0.0..1.0).contains(&ber) {
        return ctx.err(
            v.span(),
            "ber",
            format!("found {ber}, allowed a bit error rate from 0 up to (not including) 1, e.g. 1e-12"),
        );
    }
    Ok(ber)
}

/// The DCBX agent at the end of link `l` on `node` (`end` its `a_end`/`b_end`): none unless
/// the link runs DCBX; an end's `dcbx = false` runs no agent there (a peer without DCBX).
fn end_dcbx(
    ctx: &Ctx<'_>,
    l: &RawLink,
    p: &RawLinkParams,
    node: &NodeConfig,
    end: &Option<RawEnd>,
) -> Result<Option<DcbxConfig>, ScenarioError> {
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
        _ => Ok(Some(node.dcbx.clone().unwrap_or_default())),
    }
}

/// A link's delay `key` at `v`: a duration of at most [`MAX_LINK_DELAY`].
fn link_delay(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<Duration, ScenarioError> {
    let d = ctx.duration(v, key)?;
    if d > MAX_LINK_DELAY {
        return ctx.err(
            v.span(),
            key,
            format!("found {d}, allowed at most {MAX_LINK_DELAY} (200,000 km of cable)"),
        );
    }
    Ok(d)
}

/// `start`/`stop` of a flow or workload: a duration after time zero, or `default`.
pub(super) fn instant_of(
    ctx: &Ctx<'_>,
    d: &Option<Spanned<String>>,
    key: &str,
    default: Instant,
) -> Result<Instant, ScenarioError> {
    match d {
        Some(s) => Ok(Instant::ZERO + ctx.duration(s, key)?),
        None => Ok(default),
    }
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
        &[
            ("alone", IdealFct::Alone),
            ("wire", IdealFct::Wire),
            ("ns3", IdealFct::Ns3),
        ],
        &mut c.ideal_fct,
    )?;
    pick(
        ctx,
        &m.replies,
        "replies",
        &[
            ("queued", ReplyQueue::Queued),
            ("first", ReplyQueue::First),
            ("first_paused", ReplyQueue::FirstPaused),
        ],
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
    pick(
        ctx,
        &m.buffer,
        "buffer",
        &[("shared", BufferModel::Shared), ("ns3", BufferModel::Ns3)],
        &mut c.buffer,
    )?;
    pick(
        ctx,
        &m.pfc,
        "pfc",
        &[("ieee", Signalling::Ieee), ("ns3", Signalling::Ns3)],
        &mut c.pfc,
    )?;
    Ok(c)
}
