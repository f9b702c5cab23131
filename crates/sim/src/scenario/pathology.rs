//! Issue 14's keys: `hop_limit`, a host's `rx_stall` and `pfc_prevention_tout`, `[pfcwd]`
//! and a switch's `pfcwd`, `[[route]]`, `[[event]]`, `[deadlock]`, `[victims]`; every error
//! names the file, line, key, what was found and what is allowed.

use std::collections::HashMap;

use lossless_proto::units::{Duration, Instant, MIN_TIMER_PERIOD};
use lossless_proto::watchdog::nic::{AUTO_TIMEOUT_MS, StallPrevention};
use lossless_proto::watchdog::pfcwd::{self, Action, Rule};
use toml::Spanned;

use super::ScenarioError;
use super::build::{Ctx, Names};
use super::raw::{RawPfcwd, RawScenario, RawSwitch};
use super::topology::MAX_SCENARIO_SIZE;
use crate::config::pathology::{
    DeadlockConfig, HostPathology, PathologyConfig, StaticRoute, TopologyAction, TopologyEvent, VictimConfig,
};
use crate::config::{LinkConfig, NodeConfig, NodeKind};
use crate::frame::NodeId;

/// A switch's inline `pfcwd = { ... }` (values without spans: errors name the switch).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainPfcwd {
    detection: Option<String>,
    restoration: Option<String>,
    poll: Option<String>,
    action: Option<String>,
    rule: Option<String>,
}

/// What the keys are checked against.
pub(super) struct Scope<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) names: &'a Names,
    pub(super) nodes: &'a [NodeConfig],
    pub(super) links: &'a [LinkConfig],
    pub(super) duration: Duration,
    /// `--duration` cut the run: later times are no mistake of the file.
    pub(super) duration_overridden: bool,
}

impl Scope<'_> {
    fn is_switch(&self, n: NodeId) -> bool {
        matches!(self.nodes[n as usize].kind, NodeKind::Switch(_))
    }
    fn linked(&self, a: NodeId, b: NodeId) -> bool {
        self.links
            .iter()
            .any(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
    }
    /// Exactly one node named by `v`.
    fn one(&self, v: &Spanned<String>, key: &str) -> Result<NodeId, ScenarioError> {
        let ids = self.names.resolve(self.ctx, v, key)?;
        match ids {
            [one] => Ok(*one),
            _ => self.ctx.err(
                v.span(),
                key,
                format!("found the group {:?}, allowed one node", v.get_ref()),
            ),
        }
    }
    fn instant(&self, v: &Spanned<String>, key: &str) -> Result<Instant, ScenarioError> {
        let d = self.ctx.duration(v, key)?;
        if d >= self.duration && !self.duration_overridden {
            return self.ctx.err(
                v.span(),
                key,
                format!(
                    "found {d}, allowed a time before the end of the run ({})",
                    self.duration
                ),
            );
        }
        Ok(Instant::ZERO + d)
    }

    /// Reads every key of issue 14.
    pub(super) fn build(&self, raw: &RawScenario) -> Result<PathologyConfig, ScenarioError> {
        let ctx = self.ctx;
        let mut pc = PathologyConfig::default();
        if let Some(h) = &raw.hop_limit {
            let v = *h.get_ref();
            if !(1..=255).contains(&v) {
                return ctx.err(
                    h.span(),
                    "hop_limit",
                    format!("found {v}, allowed 1..=255 switches"),
                );
            }
            pc.hop_limit = v as u8;
        }
        self.hosts(raw, &mut pc)?;
        self.pfcwd(raw, &mut pc)?;
        self.routes(raw, &mut pc)?;
        self.events(raw, &mut pc)?;
        if let Some(d) = &raw.deadlock {
            let r = d.get_ref();
            let mut dc = DeadlockConfig::default();
            if let Some(v) = &r.interval {
                dc.interval = ctx.duration(v, "interval")?;
                if dc.interval < MIN_TIMER_PERIOD {
                    // a scan per interval: a shorter one makes the run's events grow without bound
                    return ctx.err(
                        v.span(),
                        "interval",
                        format!(
                            "found {}, allowed at least {MIN_TIMER_PERIOD} (the wait-for graph is built \
                             once per interval)",
                            dc.interval
                        ),
                    );
                }
            }
            if let Some(v) = &r.threshold {
                dc.threshold = ctx.duration(v, "threshold")?;
            }
            if dc.threshold < dc.interval {
                return ctx.err(
                    r.threshold.as_ref().map_or(d.span(), Spanned::span),
                    "threshold",
                    format!(
                        "found {} below the scan interval {}, allowed at least one interval",
                        dc.threshold, dc.interval
                    ),
                );
            }
            if let Some(v) = &r.on_deadlock {
                dc.stop = match v.get_ref().as_str() {
                    "stop" => true,
                    "continue" => false,
                    other => {
                        return ctx.err(
                            v.span(),
                            "on_deadlock",
                            format!("found {other:?}, allowed \"stop\" or \"continue\""),
                        );
                    }
                };
            }
            pc.deadlock = Some(dc);
        }
        if let Some(v) = &raw.victims {
            let mut vc = VictimConfig::default();
            if let Some(r) = &v.get_ref().min_blocked_ratio {
                let x = *r.get_ref();
                if !(x > 0.0 && x <= 1.0) {
                    return ctx.err(
                        r.span(),
                        "min_blocked_ratio",
                        format!("found {x}, allowed 0 < ratio ≤ 1"),
                    );
                }
                vc.min_blocked_ratio = x;
            }
            pc.victims = Some(vc);
        }
        Ok(pc)
    }

    fn hosts(&self, raw: &RawScenario, pc: &mut PathologyConfig) -> Result<(), ScenarioError> {
        let ctx = self.ctx;
        for h in &raw.host {
            if h.rx_stall.is_none() && h.pfc_prevention_tout.is_none() {
                continue;
            }
            let mut spans: Vec<(Instant, Option<Instant>)> = Vec::new();
            for (from, until) in h.rx_stall.iter().flatten() {
                let a = self.instant(from, "rx_stall")?;
                let b = match until.get_ref().as_str() {
                    "forever" => None,
                    _ => {
                        let b = Instant::ZERO
                            + ctx.duration(until, "rx_stall").map_err(|mut e| {
                                e.message = format!("{}; or \"forever\"", e.message);
                                e
                            })?;
                        if b <= a {
                            return ctx.err(
                                until.span(),
                                "rx_stall",
                                format!(
                                    "found end {} ≤ start {}, allowed [start, end] with end later",
                                    b.since_epoch(),
                                    a.since_epoch()
                                ),
                            );
                        }
                        Some(b)
                    }
                };
                if let Some(&(_, last)) = spans.last() {
                    let free_from = last.unwrap_or(Instant::MAX);
                    if a < free_from {
                        return ctx.err(
                            from.span(),
                            "rx_stall",
                            format!(
                                "found a stall from {} that overlaps the one before (to {}); allowed stalls in time order, not overlapping",
                                a.since_epoch(),
                                last.map_or("forever".to_string(), |t| t.since_epoch().to_string())
                            ),
                        );
                    }
                }
                spans.push((a, b));
            }
            let prevention = match &h.pfc_prevention_tout {
                None => None,
                Some(v) => match v.get_ref().as_str() {
                    "off" => None,
                    "auto" => Some(Duration::from_ms(AUTO_TIMEOUT_MS)),
                    _ => {
                        let t = ctx.duration(v, "pfc_prevention_tout").map_err(|mut e| {
                            e.message = format!("{}; or \"auto\", \"off\"", e.message);
                            e
                        })?;
                        if let Err(e) = StallPrevention::new(t) {
                            return ctx.err(v.span(), "pfc_prevention_tout", e.to_string());
                        }
                        Some(t)
                    }
                },
            };
            let base = h.name.get_ref();
            let members: Vec<NodeId> = match h.count {
                Some(_) => self.names.groups.get(base).cloned().unwrap_or_default(),
                None => self.names.by_name.get(base).copied().into_iter().collect(),
            };
            // every member keeps its own copy of the spans: bound the product before copying
            let copies = (spans.len() as u64).saturating_mul(members.len() as u64);
            if copies > MAX_SCENARIO_SIZE {
                return ctx.err(
                    h.name.span(),
                    "rx_stall",
                    format!(
                        "{} stall spans × {} hosts = {copies} spans; allowed at most {MAX_SCENARIO_SIZE}",
                        spans.len(),
                        members.len()
                    ),
                );
            }
            for node in members {
                pc.hosts.push(HostPathology {
                    node,
                    rx_stall: spans.clone(),
                    pfc_prevention: prevention,
                });
            }
        }
        Ok(())
    }

    /// `[pfcwd]` and each switch's `pfcwd`: the watchdog of every switch that runs one, and
    /// the big red switch.
    fn pfcwd(&self, raw: &RawScenario, pc: &mut PathologyConfig) -> Result<(), ScenarioError> {
        let ctx = self.ctx;
        let base = raw.pfcwd.as_ref().map(|p| p.get_ref().clone());
        for s in &raw.switch {
            let Some(r) = self.switch_pfcwd(s, &base)? else {
                continue;
            };
            let node = self.names.by_name[s.name.get_ref()];
            self.refuse_dcbx_ports(raw, s, node)?;
            let cfg = self.pfcwd_config(s, &r)?;
            pc.pfcwd.push((node, cfg));
        }
        if let Some(p) = &raw.pfcwd
            && p.get_ref().big_red_switch == Some(true)
        {
            if pc.pfcwd.is_empty() {
                return ctx.err(
                    p.span(),
                    "big_red_switch",
                    "no switch runs pfcwd; allowed only with one".into(),
                );
            }
            pc.events.push(TopologyEvent {
                at: Instant::ZERO,
                action: TopologyAction::BigRedSwitch(true),
            });
        }
        Ok(())
    }

    /// The pfcwd keys of switch `s` (`None`: it runs none): `[pfcwd]` (`base`), unless its
    /// own `pfcwd` is false, true, or an inline table laid over `[pfcwd]`.
    fn switch_pfcwd(
        &self,
        s: &RawSwitch,
        base: &Option<RawPfcwd>,
    ) -> Result<Option<RawPfcwd>, ScenarioError> {
        let ctx = self.ctx;
        let Some(v) = &s.pfcwd else {
            return Ok(base.clone());
        };
        match v.get_ref() {
            toml::Value::Boolean(false) => Ok(None),
            toml::Value::Boolean(true) => Ok(Some(base.clone().unwrap_or_default())),
            t @ toml::Value::Table(_) => {
                let plain: PlainPfcwd = t.clone().try_into().map_err(|e: toml::de::Error| ScenarioError {
                    file: ctx.file.to_string(),
                    line: ctx.line_of(v.span().start),
                    key: "key `pfcwd`: ".into(),
                    message: format!(
                        "{}; allowed keys detection, restoration, poll, action, rule",
                        e.message().trim()
                    ),
                })?;
                let sp = |v: Option<String>| v.map(|v| Spanned::new(0..0, v));
                let over = RawPfcwd {
                    detection: sp(plain.detection),
                    restoration: sp(plain.restoration),
                    poll: sp(plain.poll),
                    action: sp(plain.action),
                    rule: sp(plain.rule),
                    big_red_switch: None,
                };
                let b = base.clone().unwrap_or_default();
                Ok(Some(RawPfcwd {
                    detection: over.detection.or(b.detection),
                    restoration: over.restoration.or(b.restoration),
                    poll: over.poll.or(b.poll),
                    action: over.action.or(b.action),
                    rule: over.rule.or(b.rule),
                    big_red_switch: b.big_red_switch,
                }))
            }
            other => ctx.err(
                v.span(),
                "pfcwd",
                format!("found {other}, allowed true, false or a table of pfcwd keys"),
            ),
        }
    }

    /// Refuses pfcwd on switch `s` (node `node`) when a port of it runs DCBX.
    fn refuse_dcbx_ports(&self, raw: &RawScenario, s: &RawSwitch, node: NodeId) -> Result<(), ScenarioError> {
        // pfcwd watches the priorities lossless when the run starts; DCBX changes them
        if !self
            .links
            .iter()
            .any(|l| (l.a == node && l.dcbx_a.is_some()) || (l.b == node && l.dcbx_b.is_some()))
        {
            return Ok(());
        }
        let span = match (&s.pfcwd, &raw.pfcwd) {
            (Some(v), _) => v.span(),
            (None, Some(p)) => p.span(),
            (None, None) => s.name.span(),
        };
        self.ctx.err(
            span,
            "pfcwd",
            format!(
                "switch {:?} has a port that runs DCBX; pfcwd watches the priorities lossless when \
                 the run starts, so allowed only on switches without DCBX ports (`pfcwd = false` on \
                 this switch)",
                s.name.get_ref()
            ),
        )
    }

    /// The watchdog of switch `s` from its keys `r`: times (with SONiC's defaults), action and
    /// rule, checked as SONiC checks them.
    fn pfcwd_config(&self, s: &RawSwitch, r: &RawPfcwd) -> Result<pfcwd::Config, ScenarioError> {
        let ctx = self.ctx;
        // where a value from the switch's inline `pfcwd = { ... }` was written (its own
        // span is lost in the inline table): the table, on the switch's `pfcwd` line
        let inline_span = s.pfcwd.as_ref().map_or(s.name.span(), Spanned::span);
        // a value from a switch's inline table has no span of its own: blame the table
        let at = |v: &Spanned<String>| {
            if v.span() == (0..0) {
                inline_span.clone()
            } else {
                v.span()
            }
        };
        let dur = |v: &Option<Spanned<String>>, key: &str| -> Result<Option<Duration>, ScenarioError> {
            match v {
                None => Ok(None),
                Some(v) => crate::scenario::parse_duration(v.get_ref())
                    .map(Some)
                    .or_else(|m| ctx.err(at(v), key, m.to_string())),
            }
        };
        let detection = dur(&r.detection, "detection")?.unwrap_or(Duration::from_ms(pfcwd::DEFAULT_MS));
        let restoration = dur(&r.restoration, "restoration")?.unwrap_or(if r.detection.is_some() {
            // `pfcwd start` without a restoration time: twice the detection time
            detection.saturating_mul(2)
        } else {
            Duration::from_ms(pfcwd::DEFAULT_MS)
        });
        let poll = dur(&r.poll, "poll")?.unwrap_or(
            Duration::from_ms(pfcwd::DEFAULT_MS)
                .min(detection)
                .min(restoration),
        );
        let action = match r.action.as_ref().map(|a| (a, a.get_ref().as_str())) {
            None | Some((_, "drop")) => Action::Drop,
            Some((_, "forward")) => Action::Forward,
            Some((_, "alert")) => Action::Alert,
            Some((a, other)) => {
                return ctx.err(
                    at(a),
                    "action",
                    format!("found {other:?}, allowed \"drop\", \"forward\" or \"alert\""),
                );
            }
        };
        let rule = match r.rule.as_ref().map(|a| (a, a.get_ref().as_str())) {
            None | Some((_, "mellanox")) => Rule::Mellanox,
            Some((_, "mellanox_legacy")) => Rule::MellanoxLegacy,
            Some((_, "broadcom")) => Rule::Broadcom,
            Some((a, other)) => {
                return ctx.err(
                    at(a),
                    "rule",
                    format!("found {other:?}, allowed \"mellanox\", \"mellanox_legacy\" or \"broadcom\""),
                );
            }
        };
        let cfg = pfcwd::Config {
            detection,
            restoration,
            poll,
            action,
            rule,
        };
        if let Err(e) = cfg.validate() {
            // blame the key whose value SONiC refuses, at its own line: the time out of its
            // range, or the poll longer than a time (the time when the poll is a default)
            use pfcwd::ConfigError as E;
            let key = match e {
                E::OutOfRange { what, .. } => what,
                E::PollTooLong { what, .. } if r.poll.is_none() => what,
                E::PollTooLong { .. } => "poll",
            };
            let value = match key {
                "detection" => r.detection.as_ref(),
                "restoration" => r.restoration.as_ref(),
                _ => r.poll.as_ref(),
            };
            let (span, table) = match value {
                Some(v) if v.span() != (0..0) => (v.span(), "[pfcwd]".to_string()),
                Some(_) => (inline_span.clone(), format!("{:?}'s pfcwd", s.name.get_ref())),
                None => (s.name.span(), format!("{:?}'s pfcwd", s.name.get_ref())),
            };
            return ctx.err_in(span, &table, key, e.to_string());
        }
        Ok(cfg)
    }

    fn routes(&self, raw: &RawScenario, pc: &mut PathologyConfig) -> Result<(), ScenarioError> {
        let ctx = self.ctx;
        // one static route per entry and destination host: counted before any is made
        let mut routes: u64 = 0;
        let mut seen: HashMap<(NodeId, NodeId, Option<Instant>), std::ops::Range<usize>> = HashMap::new();
        for r in &raw.route {
            let sw = self.one(&r.switch, "switch")?;
            if !self.is_switch(sw) {
                return ctx.err(
                    r.switch.span(),
                    "switch",
                    format!("found {:?}, a host; allowed a switch", r.switch.get_ref()),
                );
            }
            let dsts = self.names.resolve(ctx, &r.dst, "dst")?;
            if let Some(&s) = dsts.iter().find(|&&d| self.is_switch(d)) {
                return ctx.err(
                    r.dst.span(),
                    "dst",
                    format!(
                        "found {:?}, a switch; allowed a host or GROUP* (routes lead to hosts)",
                        self.nodes[s as usize].name
                    ),
                );
            }
            if r.via.get_ref().is_empty() {
                return ctx.err(
                    r.via.span(),
                    "via",
                    "found [], allowed one or more next-hop nodes".into(),
                );
            }
            let mut via = Vec::new();
            for v in r.via.get_ref() {
                let n = self.one(v, "via")?;
                if !self.linked(sw, n) {
                    return ctx.err(
                        v.span(),
                        "via",
                        format!(
                            "found {:?}, not linked to {:?}; allowed a neighbour of the switch",
                            v.get_ref(),
                            r.switch.get_ref()
                        ),
                    );
                }
                via.push(n);
            }
            // hosts do not forward: a host is a next hop only of the route to itself (else the
            // frames would be "delivered" to the wrong host)
            for (v, &n) in r.via.get_ref().iter().zip(&via) {
                if let Some(&d) = dsts.iter().find(|&&d| !self.is_switch(n) && d != n) {
                    return ctx.err(
                        v.span(),
                        "via",
                        format!(
                            "found the host {:?} as next hop towards {:?}; hosts do not forward, so \
                             allowed a switch, or the destination host itself",
                            v.get_ref(),
                            self.nodes[d as usize].name
                        ),
                    );
                }
            }
            let at = r.at.as_ref().map(|a| self.instant(a, "at")).transpose()?;
            routes = routes.saturating_add(dsts.len() as u64);
            if routes > MAX_SCENARIO_SIZE {
                return ctx.err(
                    r.dst.span(),
                    "dst",
                    format!(
                        "the [[route]] entries make {routes} static routes (one per destination host); \
                         allowed at most {MAX_SCENARIO_SIZE}"
                    ),
                );
            }
            for &dst in dsts {
                // one route per switch, destination and time: of two, which would win?
                if let Some(first) = seen.insert((sw, dst, at), r.switch.span()) {
                    let line = ctx.line_of(first.start);
                    let first = if line > 0 {
                        format!(" (the first at line {line})")
                    } else {
                        String::new()
                    };
                    return ctx.err(
                        r.dst.span(),
                        "dst",
                        format!(
                            "a second route at {:?} to {:?}{}{first}; allowed one route per switch, \
                             destination and time (list every next hop in one `via`)",
                            r.switch.get_ref(),
                            self.nodes[dst as usize].name,
                            at.map_or(String::new(), |t| format!(" from {}", t.since_epoch())),
                        ),
                    );
                }
                pc.routes.push(StaticRoute {
                    switch: sw,
                    dst,
                    via: via.clone(),
                    at,
                });
            }
        }
        Ok(())
    }

    fn events(&self, raw: &RawScenario, pc: &mut PathologyConfig) -> Result<(), ScenarioError> {
        let ctx = self.ctx;
        for e in &raw.event {
            let at = self.instant(&e.at, "at")?;
            let n = usize::from(e.link_down.is_some())
                + usize::from(e.link_up.is_some())
                + usize::from(e.big_red_switch.is_some());
            if n != 1 {
                return ctx.err(
                    e.at.span(),
                    "",
                    format!("an [[event]] with {n} actions; allowed exactly one of link_down, link_up, big_red_switch"),
                );
            }
            let reroute = e.reroute.unwrap_or(false);
            let link =
                |v: &Spanned<Vec<Spanned<String>>>, key: &str| -> Result<(NodeId, NodeId), ScenarioError> {
                    let ends = v.get_ref();
                    if ends.len() != 2 {
                        return ctx.err(
                            v.span(),
                            key,
                            format!(
                                "found {} names, allowed two: [\"a\", \"b\"], the ends of a link",
                                ends.len()
                            ),
                        );
                    }
                    let (a, b) = (self.one(&ends[0], key)?, self.one(&ends[1], key)?);
                    if !self.linked(a, b) {
                        return ctx.err(
                            v.span(),
                            key,
                            format!(
                                "found {:?} – {:?}, not linked; allowed the ends of a [[link]]",
                                ends[0].get_ref(),
                                ends[1].get_ref()
                            ),
                        );
                    }
                    Ok((a, b))
                };
            let action = if let Some(v) = &e.link_down {
                let (a, b) = link(v, "link_down")?;
                TopologyAction::LinkDown { a, b, reroute }
            } else if let Some(v) = &e.link_up {
                let (a, b) = link(v, "link_up")?;
                TopologyAction::LinkUp { a, b, reroute }
            } else if let Some(v) = &e.big_red_switch {
                if pc.pfcwd.is_empty() {
                    return ctx.err(
                        v.span(),
                        "big_red_switch",
                        "no switch runs pfcwd; allowed only with one".into(),
                    );
                }
                match v.get_ref().as_str() {
                    "on" => TopologyAction::BigRedSwitch(true),
                    "off" => TopologyAction::BigRedSwitch(false),
                    other => {
                        return ctx.err(
                            v.span(),
                            "big_red_switch",
                            format!("found {other:?}, allowed \"on\" or \"off\""),
                        );
                    }
                }
            } else {
                continue;
            };
            pc.events.push(TopologyEvent { at, action });
        }
        Ok(())
    }
}
