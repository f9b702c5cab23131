//! Traffic of a scenario: `[[flow]]`, `[[workload]]` and `[[signal]]` entries, checked against
//! the topology when the scenario loads (hosts at both ends, a path between them, times
//! inside the run, patterns that send), each error naming the entry and its line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lossless_proto::units::{Duration, Instant, Rate};
use toml::Spanned;

use super::ScenarioError;
use super::build::{Ctx, Names, instant_of};
use super::mtu::Mtus;
use super::qp::{RawQp, qp_spec};
use super::raw::{RawFlow, RawSignal, RawWorkload};
use super::topology::{Size, Topology};
use crate::config::model::ModelConfig;
use crate::config::qos::DscpMap;
use crate::config::traffic::{FlowSpec, Pattern, SizeCdf, Workload, frame_len};
use crate::config::transport::QpSpec;
use crate::config::{LinkConfig, NodeConfig, NodeKind, Signal};
use crate::frame::NodeId;

/// Largest `cdf_file` read (a flow-size CDF is a few hundred lines).
pub const MAX_CDF_FILE_BYTES: u64 = 1 << 20;

/// A scripted request span: rise, fall, and where its rise was written.
type RequestSpan = (Duration, Duration, std::ops::Range<usize>);

/// What flows are checked against.
pub(super) struct Traffic<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) names: &'a Names,
    pub(super) nodes: &'a [NodeConfig],
    pub(super) topo: &'a Topology,
    pub(super) mtu_default: u64,
    pub(super) duration: Duration,
    /// The duration is `--duration`'s, not the file's: a run cut short on purpose (to look at
    /// what happens before the traffic starts), so a later start is no mistake of the file.
    pub(super) duration_overridden: bool,
    pub(super) dir: Option<&'a Path>,
    /// The `[qp]` defaults of every QP.
    pub(super) qp: &'a RawQp,
    /// The MTUs frames meet.
    pub(super) mtus: &'a Mtus,
    /// The modelling choices (the framing sizes a QP's frames).
    pub(super) model: &'a ModelConfig,
    /// Per node: the DSCP map of a host whose port trusts DSCP.
    pub(super) host_dscp: Vec<Option<&'a DscpMap>>,
}

/// Per node, the DSCP map of a host whose NIC port trusts DSCP (`None`: trusts PCP, or a
/// switch).
pub(super) fn host_dscp_maps<'a>(nodes: &[NodeConfig], links: &'a [LinkConfig]) -> Vec<Option<&'a DscpMap>> {
    let mut out = vec![None; nodes.len()];
    for l in links {
        for (n, t) in [(l.a, &l.trust_a), (l.b, &l.trust_b)] {
            if matches!(nodes[n as usize].kind, NodeKind::Host(_)) {
                out[n as usize] = t.dscp_map();
            }
        }
    }
    out
}

impl Traffic<'_> {
    /// A QP's priorities agree with the DSCP maps of the NICs that send its packets: its
    /// sources' (data, `priority`) and its destinations' (replies and CNPs, `ack_priority` and
    /// `cnp_priority`), where those ports trust DSCP (their NIC then classifies by the map,
    /// as mlx5 does, and a priority key that says otherwise would be ignored).
    fn check_trust(
        &self,
        what: &str,
        span: std::ops::Range<usize>,
        qp: Option<&QpSpec>,
        priority: u8,
        srcs: &[NodeId],
        dsts: &[NodeId],
    ) -> Result<(), ScenarioError> {
        let Some(qp) = qp else { return Ok(()) };
        let mut wants: Vec<(NodeId, &str, &str, u8, u8)> = Vec::new();
        for &s in srcs {
            wants.push((s, "priority", "data packets", qp.dscp, priority));
        }
        for &d in dsts {
            wants.push((d, "ack_priority", "ACK/NAK replies", qp.dscp, qp.ack_priority));
            if let (Some(cd), Some(cp)) = (qp.cc.cnp_dscp(), qp.cc.cnp_priority()) {
                wants.push((d, "cnp_priority", "CNPs", cd, cp));
            }
        }
        for (h, key, packets, dscp, found) in wants {
            if let Some(map) = self.host_dscp[h as usize] {
                let p = map[usize::from(dscp)];
                if p != found {
                    return self.ctx.err(
                        span,
                        key,
                        format!(
                            "{what}: host {:?} trusts DSCP and its map sends the {packets} (DSCP {dscp}) on \
                             priority {p}, found {key} {found}; allowed {key} = {p} (or another `dscp` or \
                             `dscp2prio`)",
                            self.name(h)
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn name(&self, n: NodeId) -> &str {
        &self.nodes[n as usize].name
    }

    /// Refuses `what`, whose payload MTU is `mtu` (`span`: its `mtu` key, if given) or which is
    /// the QP `qp`, when its frames would meet a smaller MTU at the hosts `ends` or their
    /// fabric.
    fn check_mtu(
        &self,
        what: &str,
        mtu: u64,
        given: Option<&Spanned<u64>>,
        entry: std::ops::Range<usize>,
        qp: Option<&QpSpec>,
        ends: &[NodeId],
    ) -> Result<(), ScenarioError> {
        let (frame, how, span, key) = match qp {
            Some(q) => (
                self.model.roce_data_len(u64::from(q.rc.mtu), q.cc.cn_tag()),
                format!("a RoCEv2 mtu of {} payload bytes with its headers", q.rc.mtu),
                entry,
                "rocev2",
            ),
            None => (
                frame_len(mtu),
                format!("mtu {mtu} + 22"),
                given.map_or(entry, Spanned::span),
                "mtu",
            ),
        };
        for &h in ends {
            self.mtus
                .check(self.ctx, self.nodes, span.clone(), key, what, &how, frame, h)?;
        }
        Ok(())
    }

    /// The rate of host `h`'s link.
    fn line_rate(&self, h: NodeId) -> Rate {
        self.topo.line_rate(h)
    }

    /// The hosts `v` names (`key` is `src`, `dst` or `host`), refusing a switch.
    fn hosts(&self, v: &Spanned<String>, key: &str) -> Result<&[NodeId], ScenarioError> {
        let ids = self.names.resolve(self.ctx, v, key)?;
        if let Some(&s) = ids.iter().find(|&&x| !self.topo.is_host(x)) {
            return self.ctx.err(
                v.span(),
                key,
                format!(
                    "found {:?}, a switch; allowed a host (only hosts send and receive)",
                    self.name(s)
                ),
            );
        }
        Ok(ids)
    }

    /// `start` and `stop` of an entry: `stop` after `start`, `start` before the end of the run.
    fn times(
        &self,
        what: &str,
        start: &Option<Spanned<String>>,
        stop: &Option<Spanned<String>>,
        at: std::ops::Range<usize>,
    ) -> Result<(Instant, Instant), ScenarioError> {
        let ctx = self.ctx;
        let t0 = instant_of(ctx, start, "start", Instant::ZERO)?;
        let t1 = instant_of(ctx, stop, "stop", Instant::MAX)?;
        let end = Instant::ZERO + self.duration;
        if t0 >= end && !self.duration_overridden {
            return ctx.err(
                start.as_ref().map_or(at, Spanned::span),
                "start",
                format!(
                    "{what} starts at {}, at or after the end of the run ({}); allowed a start before the duration",
                    t0.since_epoch(),
                    self.duration
                ),
            );
        }
        if t1 <= t0 {
            return ctx.err(
                stop.as_ref().map_or(at, Spanned::span),
                "stop",
                format!(
                    "{what} stops at {}, not after its start {}; allowed stop > start",
                    t1.since_epoch(),
                    t0.since_epoch()
                ),
            );
        }
        Ok((t0, t1))
    }

    fn pattern(&self, f: &RawFlow, src: NodeId) -> Result<Pattern, ScenarioError> {
        let ctx = self.ctx;
        let kind = f.pattern.get_ref().as_str();
        if kind == "line" {
            return Ok(Pattern::Line);
        }
        if kind != "cbr" && kind != "on_off" {
            return ctx.err(
                f.pattern.span(),
                "pattern",
                format!("found {kind:?}, allowed \"line\", \"cbr\" or \"on_off\""),
            );
        }
        let Some(r) = &f.rate else {
            return ctx.err(
                f.pattern.span(),
                "rate",
                "missing; required by pattern cbr and on_off".into(),
            );
        };
        let rate: Rate = r
            .get_ref()
            .parse()
            .or_else(|e: lossless_proto::units::ParseRateError| ctx.err(r.span(), "rate", e.to_string()))?;
        // a source cannot offer more than its NIC sends: a higher rate is a typo (10G for 100G)
        let line = self.line_rate(src);
        if rate > line {
            return ctx.err(
                r.span(),
                "rate",
                format!(
                    "found {}, above the line rate {line} of the source {}; allowed up to {line} \
                     (pattern \"line\" sends at line rate)",
                    r.get_ref(),
                    self.name(src)
                ),
            );
        }
        if kind == "cbr" {
            return Ok(Pattern::Cbr { rate });
        }
        let (Some(on), Some(off)) = (&f.on, &f.off) else {
            return ctx.err(
                f.pattern.span(),
                "on",
                "`on` and `off` durations are required by pattern on_off".into(),
            );
        };
        let (on_d, off_d) = (ctx.duration(on, "on")?, ctx.duration(off, "off")?);
        if on_d == Duration::ZERO {
            return ctx.err(
                on.span(),
                "on",
                "found 0: the flow would never send; allowed a positive duration".into(),
            );
        }
        if off_d == Duration::ZERO {
            return ctx.err(
                off.span(),
                "off",
                "found 0: never off; allowed a positive duration (pattern \"cbr\" sends without pause)"
                    .into(),
            );
        }
        Ok(Pattern::OnOff {
            rate,
            on: on_d,
            off: off_d,
        })
    }

    /// The QP a flow or workload of `priority` from `srcs` is, if its `transport` says so
    /// (`keys` its own QP keys, `stray` one set without `transport`).
    fn transport(
        &self,
        t: &Option<Spanned<String>>,
        keys: RawQp,
        stray: Option<&'static str>,
        priority: u8,
        srcs: &[NodeId],
        span: std::ops::Range<usize>,
    ) -> Result<Option<Box<QpSpec>>, ScenarioError> {
        let ctx = self.ctx;
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
                let lines: Vec<Rate> = srcs.iter().map(|&n| self.line_rate(n)).collect();
                let q = keys.over(self.qp);
                qp_spec(ctx, &q, priority, &lines, ctx.line_of(span.start))
                    .map(|q| Some(Box::new(q)))
                    .map_err(|e| {
                        // a key the entry did not set came from [qp]: named there
                        let key = e.key.strip_prefix("key `").and_then(|k| k.split('`').next());
                        let own = match key {
                            Some("cc") => keys.cc.is_some(),
                            Some("preset") => keys.preset.is_some(),
                            Some("ack_priority") => keys.ack_priority.is_some(),
                            Some("cnp_priority") => keys.cnp_priority.is_some(),
                            Some("udp_dport") => keys.udp_dport.is_some(),
                            Some("dscp") => keys.dscp.is_some(),
                            Some("dcqcn") => keys.dcqcn.is_some(),
                            Some("qcn") => keys.qcn.is_some(),
                            Some("dctcp") => keys.dctcp.is_some(),
                            Some("hpcc") => keys.hpcc.is_some(),
                            Some("hpcc_pint") => keys.hpcc_pint.is_some(),
                            Some("timely") => keys.timely.is_some(),
                            Some("rocev2") => keys.rocev2.is_some(),
                            _ => true,
                        };
                        if own {
                            e
                        } else {
                            let entry = ctx
                                .text
                                .and_then(|t| t.get(span.clone()))
                                .map_or("the QP".to_string(), |n| format!("QP {n}"));
                            ctx.in_table(e, "[qp]", &entry)
                        }
                    })
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
    }

    /// Every `[[flow]]` and `[[workload]]` name once: the report, the summary and the victims
    /// name flows by them, so two alike would be told apart by nothing.
    pub(super) fn unique_names(
        &self,
        flows: &[RawFlow],
        workloads: &[RawWorkload],
    ) -> Result<(), ScenarioError> {
        let ctx = self.ctx;
        let mut seen: HashMap<&str, (&str, usize)> = HashMap::new();
        let entries = flows
            .iter()
            .map(|f| ("[[flow]]", &f.name))
            .chain(workloads.iter().map(|w| ("[[workload]]", &w.name)));
        for (what, name) in entries {
            let line = ctx.line_of(name.span().start);
            if let Some((first, at)) = seen.insert(name.get_ref(), (what, line)) {
                let at = if at > 0 && line > 0 {
                    format!(" (the first, a {first}, at line {at})")
                } else {
                    format!(" (the first is a {first})")
                };
                return ctx.err(
                    name.span(),
                    "name",
                    format!(
                        "found {:?} a second time{at}; allowed a name no other flow or workload has",
                        name.get_ref()
                    ),
                );
            }
        }
        Ok(())
    }

    /// The `[[flow]]` entries: one flow per (src, dst) member pair.
    pub(super) fn flows(&self, raw: &[RawFlow], size: &mut Size) -> Result<Vec<FlowSpec>, ScenarioError> {
        let ctx = self.ctx;
        let mut flows = Vec::new();
        // the names given and generated ("NAME:member" of a group), each once
        let mut names: HashMap<String, usize> = HashMap::new();
        for f in raw {
            super::build::check_name(ctx, &f.name, "name")?;
            let what = format!("flow {:?}", f.name.get_ref());
            if *f.priority.get_ref() > 7 {
                return ctx.err(
                    f.priority.span(),
                    "priority",
                    format!("found {}, allowed 0..=7", f.priority.get_ref()),
                );
            }
            if let Some(s) = &f.size_bytes
                && *s.get_ref() == 0
            {
                return ctx.err(
                    s.span(),
                    "size_bytes",
                    "found 0, allowed at least 1 byte (omit it for an endless flow)".into(),
                );
            }
            let (start, stop) = self.times(&what, &f.start, &f.stop, f.name.span())?;
            let srcs = self.hosts(&f.src, "src")?;
            let dsts = self.hosts(&f.dst, "dst")?;
            size.add(ctx, f.name.span(), "flows", (srcs.len() * dsts.len()) as u64)?;
            let qp = self.transport(
                &f.transport,
                f.qp_keys(),
                f.stray_qp_key(),
                *f.priority.get_ref(),
                srcs,
                f.name.span(),
            )?;
            self.check_trust(
                &what,
                f.name.span(),
                qp.as_deref(),
                *f.priority.get_ref(),
                srcs,
                dsts,
            )?;
            let mtu = f.mtu.as_ref().map_or(self.mtu_default, |m| *m.get_ref());
            for ends in [srcs, dsts] {
                self.check_mtu(&what, mtu, f.mtu.as_ref(), f.name.span(), qp.as_deref(), ends)?;
            }
            for &s in srcs {
                let pattern = self.pattern(f, s)?;
                for &d in dsts {
                    if s == d {
                        return ctx.err(
                            f.dst.span(),
                            "dst",
                            format!(
                                "{what}: source and destination are the same host {:?}; allowed another host",
                                self.name(s)
                            ),
                        );
                    }
                    if !self.topo.reaches(s, d) {
                        return ctx.err(
                            f.dst.span(),
                            "dst",
                            format!(
                                "{what}: no path from {} to {} (their switches are not linked, and hosts \
                                 do not forward); allowed a destination the source can reach",
                                self.name(s),
                                self.name(d)
                            ),
                        );
                    }
                    let name = if srcs.len() * dsts.len() > 1 {
                        let member = if srcs.len() > 1 { s } else { d };
                        format!("{}:{}", f.name.get_ref(), self.name(member))
                    } else {
                        f.name.get_ref().clone()
                    };
                    let line = ctx.line_of(f.name.span().start);
                    if let Some(first) = names.insert(name.clone(), line) {
                        return ctx.err(
                            f.name.span(),
                            "name",
                            format!(
                                "{what} makes a flow named {name:?}, which the flow of line {first} already \
                                 has; allowed names that stay unique (a group's flows are NAME:member)"
                            ),
                        );
                    }
                    flows.push(FlowSpec {
                        name,
                        src: s,
                        dst: d,
                        priority: *f.priority.get_ref(),
                        mtu: f.mtu.as_ref().map_or(self.mtu_default, |m| *m.get_ref()),
                        pattern,
                        start,
                        stop,
                        size: f.size_bytes.as_ref().map(|s| *s.get_ref()),
                        transport: qp.clone(),
                    });
                }
            }
        }
        Ok(flows)
    }

    /// Reads and checks a workload's `cdf_file` (a regular file of at most
    /// [`MAX_CDF_FILE_BYTES`], relative to the scenario's directory) or its inline `cdf`
    /// (the same lines in a string): exactly one of them.
    fn cdf(&self, w: &RawWorkload) -> Result<SizeCdf, ScenarioError> {
        let ctx = self.ctx;
        let file = match (&w.cdf_file, &w.cdf) {
            (Some(f), None) => f,
            (None, Some(text)) => {
                if text.get_ref().len() as u64 > MAX_CDF_FILE_BYTES {
                    return ctx.err(
                        text.span(),
                        "cdf",
                        format!(
                            "{} bytes, allowed at most {MAX_CDF_FILE_BYTES}",
                            text.get_ref().len()
                        ),
                    );
                }
                return SizeCdf::parse(text.get_ref()).or_else(|e| {
                    ctx.err(
                        text.span(),
                        "cdf",
                        format!("line {} of the CDF: {}", e.line, e.problem),
                    )
                });
            }
            (Some(_), Some(text)) => {
                return ctx.err(
                    text.span(),
                    "cdf",
                    "given with cdf_file; allowed one of them (a file, or its lines inline)".into(),
                );
            }
            (None, None) => {
                return ctx.err(
                    w.name.span(),
                    "cdf_file",
                    format!(
                        "workload {:?} has no flow sizes: give cdf_file (a `size cdf` file) or cdf (its lines in a string)",
                        w.name.get_ref()
                    ),
                );
            }
        };
        let path = PathBuf::from(file.get_ref());
        let path = match (path.is_relative(), self.dir) {
            (true, Some(d)) => d.join(path),
            _ => path,
        };
        let text = lossless_files::read_input_text(&path, "file", MAX_CDF_FILE_BYTES)
            .or_else(|e| ctx.err(file.span(), "cdf_file", e.to_string()))?;
        SizeCdf::parse(&text).or_else(|e| {
            ctx.err(
                file.span(),
                "cdf_file",
                format!("{}:{}: {}", path.display(), e.line, e.problem),
            )
        })
    }

    /// The `[[workload]]` entries.
    pub(super) fn workloads(
        &self,
        raw: &[RawWorkload],
        size: &mut Size,
    ) -> Result<Vec<Workload>, ScenarioError> {
        let ctx = self.ctx;
        let mut out = Vec::new();
        for w in raw {
            super::build::check_name(ctx, &w.name, "name")?;
            let what = format!("workload {:?}", w.name.get_ref());
            if *w.priority.get_ref() > 7 {
                return ctx.err(
                    w.priority.span(),
                    "priority",
                    format!("found {}, allowed 0..=7", w.priority.get_ref()),
                );
            }
            let load = *w.load.get_ref();
            if !(load > 0.0 && load <= 1.0) {
                return ctx.err(
                    w.load.span(),
                    "load",
                    format!("found {load}, allowed 0 < load ≤ 1"),
                );
            }
            let (start, stop) = self.times(&what, &w.start, &w.stop, w.name.span())?;
            // a host listed twice would silently send (or receive) twice its share
            let list = |entries: &[Spanned<String>], key: &str| -> Result<Vec<NodeId>, ScenarioError> {
                let mut out: Vec<NodeId> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for e in entries {
                    for &h in self.hosts(e, key)? {
                        if !seen.insert(h) {
                            return ctx.err(
                                e.span(),
                                key,
                                format!(
                                    "{what}: host {:?} is in the list twice; allowed each host once",
                                    self.name(h)
                                ),
                            );
                        }
                        out.push(h);
                    }
                }
                Ok(out)
            };
            let src = list(&w.src, "src")?;
            let dst = list(&w.dst, "dst")?;
            if src.is_empty() || dst.is_empty() {
                return ctx.err(
                    w.name.span(),
                    "src",
                    format!("{what}: src and dst must name at least one host each"),
                );
            }
            self.workload_paths(&what, w, &src, &dst)?;
            let cdf = self.cdf(w)?;
            let qp = self.transport(
                &w.transport,
                w.qp_keys(),
                w.stray_qp_key(),
                *w.priority.get_ref(),
                &src,
                w.name.span(),
            )?;
            self.check_trust(
                &what,
                w.name.span(),
                qp.as_deref(),
                *w.priority.get_ref(),
                &src,
                &dst,
            )?;
            let mtu = w.mtu.as_ref().map_or(self.mtu_default, |m| *m.get_ref());
            for ends in [&src, &dst] {
                self.check_mtu(&what, mtu, w.mtu.as_ref(), w.name.span(), qp.as_deref(), ends)?;
            }
            let total_bps: u128 = src.iter().map(|&s| u128::from(self.line_rate(s).bps())).sum();
            let mean_interarrival = Workload::interarrival_for_bps(&cdf, load, total_bps);
            // the arrivals expected over the run count towards the scenario's size
            let end = stop.min(Instant::ZERO + self.duration);
            let expected = end.saturating_duration_since(start).as_ps() / mean_interarrival.as_ps().max(1);
            size.add(
                ctx,
                w.load.span(),
                "workload arrivals",
                u64::try_from(expected).unwrap_or(u64::MAX),
            )?;
            out.push(Workload {
                name: w.name.get_ref().clone(),
                mean_interarrival,
                src,
                dst,
                priority: *w.priority.get_ref(),
                mtu: w.mtu.as_ref().map_or(self.mtu_default, |m| *m.get_ref()),
                cdf,
                start,
                stop,
                transport: qp,
            });
        }
        Ok(out)
    }

    /// Every source has a destination other than itself, and reaches every destination.
    fn workload_paths(
        &self,
        what: &str,
        w: &RawWorkload,
        src: &[NodeId],
        dst: &[NodeId],
    ) -> Result<(), ScenarioError> {
        let ctx = self.ctx;
        let span = w.dst.first().map_or(w.name.span(), Spanned::span);
        if let Some(&s) = src.iter().find(|&&s| dst.iter().all(|&d| d == s)) {
            return ctx.err(
                span,
                "dst",
                format!(
                    "{what}: source {} has no destination but itself; allowed a dst list with another host",
                    self.name(s)
                ),
            );
        }
        // distinct hosts reach each other exactly when their labels are equal
        let label = self.topo.reach_label(src[0]);
        let pair = match dst.iter().find(|&&d| self.topo.reach_label(d) != label) {
            Some(&d) => Some((src[0], d)),
            None => src
                .iter()
                .find(|&&s| self.topo.reach_label(s) != label)
                .map(|&s| (s, dst[0])),
        };
        if let Some((s, d)) = pair {
            return ctx.err(
                span,
                "dst",
                format!(
                    "{what}: no path from {} to {} (their switches are not linked, and hosts do not \
                     forward); allowed sources and destinations that reach each other",
                    self.name(s),
                    self.name(d)
                ),
            );
        }
        Ok(())
    }

    /// The `[[signal]]` entries: scripted `fc_rdy` of hosts.
    pub(super) fn signals(&self, raw: &[RawSignal], size: &mut Size) -> Result<Vec<Signal>, ScenarioError> {
        let ctx = self.ctx;
        let mut signals = Vec::new();
        // every request span of each (host, priority), with where it was written: spans of one
        // host and priority must not overlap or touch (the order of a fall and a rise at one
        // instant would depend on the order of the entries)
        let mut spans: HashMap<(NodeId, u8), Vec<RequestSpan>> = HashMap::new();
        let end = self.duration;
        for s in raw {
            if s.priority > 7 {
                return ctx.err(
                    s.host.span(),
                    "priority",
                    format!("found {}, allowed 0..=7", s.priority),
                );
            }
            let ids = self.hosts(&s.host, "host")?;
            size.add(
                ctx,
                s.host.span(),
                "signals",
                (2 * ids.len() * s.fc_rdy.len()) as u64,
            )?;
            for &node in ids {
                for (rise, fall) in &s.fc_rdy {
                    let r = ctx.duration(rise, "fc_rdy")?;
                    let f = ctx.duration(fall, "fc_rdy")?;
                    if f <= r {
                        return ctx.err(
                            fall.span(),
                            "fc_rdy",
                            format!("found fall {f} ≤ rise {r}, allowed [rise, fall] with fall later"),
                        );
                    }
                    if r >= end && !self.duration_overridden {
                        return ctx.err(
                            rise.span(),
                            "fc_rdy",
                            format!(
                                "found a rise at {r}, at or after the end of the run ({end}): it would never \
                                 happen; allowed a rise before the duration"
                            ),
                        );
                    }
                    spans
                        .entry((node, s.priority))
                        .or_default()
                        .push((r, f, rise.span()));
                    for (at, on) in [(r, true), (f, false)] {
                        signals.push(Signal {
                            node,
                            prio: s.priority,
                            at: Instant::ZERO + at,
                            on,
                        });
                    }
                }
            }
        }
        let mut keys: Vec<&(NodeId, u8)> = spans.keys().collect();
        keys.sort();
        for key in keys {
            let mut v = spans[key].clone();
            v.sort_by_key(|x| x.0);
            for w in v.windows(2) {
                let ((r0, f0, first), (r, f, span)) = (&w[0], &w[1]);
                if r <= f0 {
                    let at = ctx.line_of(first.start);
                    let at = if at > 0 {
                        format!(" (line {at})")
                    } else {
                        String::new()
                    };
                    return ctx.err(
                        span.clone(),
                        "fc_rdy",
                        format!(
                            "found [{r}, {f}] for host {:?} priority {}, which overlaps or touches \
                             [{r0}, {f0}]{at}; allowed spans of one host and priority with a gap \
                             between them (merge them into one)",
                            self.name(key.0),
                            key.1
                        ),
                    );
                }
            }
        }
        Ok(signals)
    }
}
