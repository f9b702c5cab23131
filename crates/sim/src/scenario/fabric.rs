//! The `[fabric]` table: a generated topology (a fat tree or a leaf-spine), expanded into the
//! scenario's `[[host]]`, `[[switch]]` and `[[link]]` entries before anything is built, so
//! that every check, `[defaults]` and `[[workload]]` apply to it as to a written topology.
//!
//! Node order (and so node ids, and each switch's port order) follows the HPCC ns-3 fork's
//! topology files: hosts first, then edge (leaf), aggregation and core (spine) switches; links
//! host–edge in host order, then edge–aggregation, then aggregation–core. A fat tree of k = 4
//! is the fork's `topo_ftk4.txt` link for link.

use std::ops::Range;

use lossless_proto::units::Rate;
use serde::Deserialize;
use toml::Spanned;

use super::ScenarioError;
use super::build::Ctx;
use super::link::link_rate;
use super::raw::{RawHost, RawLink, RawScenario, RawSwitch};

/// The `[fabric]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFabric {
    /// "fat-tree" or "leaf-spine".
    kind: Spanned<String>,
    /// Fat tree: switch radix k (even): k pods of k/2 edge and k/2 aggregation switches,
    /// (k/2)² core switches.
    k: Option<Spanned<toml::Value>>,
    /// Fat tree: pods built (1..=k, default k); each aggregation switch still has k/2 cores.
    pods: Option<Spanned<toml::Value>>,
    /// Fat tree: hosts' bandwidth per edge over its uplinks' (default 1): hosts per edge =
    /// oversubscription × k/2 × fabric_rate / host_rate.
    oversubscription: Option<Spanned<toml::Value>>,
    /// Leaf-spine: leaf switches.
    leaves: Option<Spanned<toml::Value>>,
    /// Leaf-spine: spine switches (every leaf links to every spine).
    spines: Option<Spanned<toml::Value>>,
    /// Leaf-spine: hosts per leaf.
    hosts_per_leaf: Option<Spanned<toml::Value>>,
    /// Rate of host links.
    host_rate: Spanned<String>,
    /// Rate of switch-to-switch links (default: `host_rate`).
    fabric_rate: Option<Spanned<String>>,
    /// One-way delay of every link (default: `[defaults]`).
    delay: Option<Spanned<String>>,
    /// Name of the host group (default "h": hosts h1..hN, `h*` for all).
    hosts: Option<Spanned<String>>,
    /// Every switch's keys (those of `[[switch]]` but `name`).
    switch: RawFabricSwitch,
}

/// The `[[switch]]` keys every generated switch gets.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFabricSwitch {
    buffer_bytes: Spanned<u64>,
    threshold: Option<Spanned<String>>,
    alpha: Option<f64>,
    static_threshold_bytes: Option<u64>,
    xon_offset_bytes: Option<u64>,
    headroom_bytes: Option<u64>,
    mtu: Option<Spanned<u64>>,
    dcbx: Option<toml::Value>,
    ecn: Option<toml::Value>,
    qcn: Option<toml::Value>,
    pfcwd: Option<Spanned<toml::Value>>,
}

/// A whole number ≥ `min` (or "$name" of `[params]`) at `v`.
fn count(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    v: &Spanned<toml::Value>,
    key: &str,
    min: i64,
) -> Result<u64, ScenarioError> {
    let (found, n) = match v.get_ref() {
        toml::Value::Integer(n) => (n.to_string(), Some(*n)),
        toml::Value::String(s) => match s.strip_prefix('$').and_then(|k| raw.params.get(k)) {
            Some(&n) => (format!("{n} (from {s})"), Some(n)),
            None => (format!("{s:?}"), None),
        },
        other => (other.to_string(), None),
    };
    match n {
        Some(n) if n >= min => Ok(n as u64),
        _ => ctx.err(
            v.span(),
            key,
            format!("found {found}, allowed a whole number ≥ {min} or \"$name\" of [params]"),
        ),
    }
}

/// The value of a required key of this kind, or an error at the `kind` key.
fn need<'a>(
    ctx: &Ctx<'_>,
    v: &'a Option<Spanned<toml::Value>>,
    key: &str,
    kind: &Spanned<String>,
) -> Result<&'a Spanned<toml::Value>, ScenarioError> {
    match v {
        Some(v) => Ok(v),
        None => ctx.err(
            kind.span(),
            key,
            format!("missing: a {:?} fabric needs it", kind.get_ref()),
        ),
    }
}

/// Refuses a key that belongs to the other kind.
fn stray(
    ctx: &Ctx<'_>,
    keys: &[(&str, &Option<Spanned<toml::Value>>)],
    kind: &Spanned<String>,
) -> Result<(), ScenarioError> {
    for (k, v) in keys {
        if let Some(v) = v {
            return ctx.err(v.span(), k, format!("not a key of a {:?} fabric", kind.get_ref()));
        }
    }
    Ok(())
}

/// The shape of a generated fabric: `pods` pods of `edges` edge (leaf) switches with
/// `hosts_per_edge` hosts each and `aggs` aggregation switches (0: no aggregation layer),
/// under `cores` core (spine) switches.
#[derive(Clone, Copy)]
struct Shape {
    hosts_per_edge: u64,
    edges: u64,
    aggs: u64,
    pods: u64,
    cores: u64,
}

/// Appends the nodes and links of `raw.fabric` to `raw`'s hosts, switches and links.
pub(super) fn expand(raw: &mut RawScenario, ctx: &Ctx<'_>) -> Result<(), ScenarioError> {
    let Some(f) = raw.fabric.take() else {
        return Ok(());
    };
    let kind = &f.kind;
    if let Some(h) = &f.hosts {
        super::build::check_name(ctx, h, "hosts")?;
    }
    let host_rate = link_rate(ctx, &f.host_rate, "host_rate")?;
    let fabric_rate = match &f.fabric_rate {
        Some(r) => link_rate(ctx, r, "fabric_rate")?,
        None => host_rate,
    };
    let shape = match kind.get_ref().as_str() {
        "fat-tree" => fat_tree(ctx, raw, &f, host_rate, fabric_rate)?,
        "leaf-spine" => leaf_spine(ctx, raw, &f)?,
        other => {
            return ctx.err(
                kind.span(),
                "kind",
                format!("found {other:?}, allowed \"fat-tree\" or \"leaf-spine\""),
            );
        }
    };
    // the scenario's size limits apply again when the entries are built; here the fabric's
    // whole size is computed from its parameters (checked: a product that does not fit in 64
    // bits is too large too) and refused before a single entry is made
    let size = FabricSize::of(
        shape.hosts_per_edge,
        shape.edges,
        shape.aggs,
        shape.pods,
        shape.cores,
    );
    if let Some(why) = size.refusal() {
        return ctx.err(kind.span(), "", why);
    }
    let Some(hosts) = size.hosts else {
        return ctx.err(
            kind.span(),
            "",
            "the fabric's host count does not fit in 64 bits".into(),
        );
    };
    let entries = Entries::new(&f);
    entries.push_nodes(raw, shape, hosts);
    entries.push_links(raw, shape, hosts);
    Ok(())
}

/// A fat tree's shape from `k`, `pods` and `oversubscription`.
fn fat_tree(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    f: &RawFabric,
    host_rate: Rate,
    fabric_rate: Rate,
) -> Result<Shape, ScenarioError> {
    let kind = &f.kind;
    stray(
        ctx,
        &[
            ("leaves", &f.leaves),
            ("spines", &f.spines),
            ("hosts_per_leaf", &f.hosts_per_leaf),
        ],
        kind,
    )?;
    let kv = need(ctx, &f.k, "k", kind)?;
    let k = count(ctx, raw, kv, "k", 2)?;
    if k % 2 != 0 || k > 128 {
        return ctx.err(
            kv.span(),
            "k",
            format!("found {k}, allowed an even number 2..=128"),
        );
    }
    let pods = match &f.pods {
        Some(v) => {
            let p = count(ctx, raw, v, "pods", 1)?;
            if p > k {
                return ctx.err(v.span(), "pods", format!("found {p}, allowed 1..={k} (k)"));
            }
            p
        }
        None => k,
    };
    let half = k / 2;
    let hosts_per_edge = match &f.oversubscription {
        None => per_edge(ctx, 1.0, half, host_rate, fabric_rate, kind.span())?,
        Some(v) => {
            let o = match v.get_ref() {
                toml::Value::Integer(n) => *n as f64,
                toml::Value::Float(x) => *x,
                other => {
                    return ctx.err(
                        v.span(),
                        "oversubscription",
                        format!("found {other}, allowed a ratio such as 1, 2 or 1.5"),
                    );
                }
            };
            per_edge(ctx, o, half, host_rate, fabric_rate, v.span())?
        }
    };
    Ok(Shape {
        hosts_per_edge,
        edges: half,
        aggs: half,
        pods,
        cores: half * half,
    })
}

/// A leaf-spine's shape from `leaves`, `spines` and `hosts_per_leaf`.
fn leaf_spine(ctx: &Ctx<'_>, raw: &RawScenario, f: &RawFabric) -> Result<Shape, ScenarioError> {
    let kind = &f.kind;
    stray(
        ctx,
        &[
            ("k", &f.k),
            ("pods", &f.pods),
            ("oversubscription", &f.oversubscription),
        ],
        kind,
    )?;
    let leaves = count(ctx, raw, need(ctx, &f.leaves, "leaves", kind)?, "leaves", 1)?;
    let spines = count(ctx, raw, need(ctx, &f.spines, "spines", kind)?, "spines", 1)?;
    let hpl = count(
        ctx,
        raw,
        need(ctx, &f.hosts_per_leaf, "hosts_per_leaf", kind)?,
        "hosts_per_leaf",
        1,
    )?;
    // one "pod" of leaves, no aggregation layer: every leaf links to every spine
    Ok(Shape {
        hosts_per_edge: hpl,
        edges: leaves,
        aggs: 0,
        pods: 1,
        cores: spines,
    })
}

/// Makes the entries of a fabric: every one is placed at the `kind` key (the fabric's line).
struct Entries<'a> {
    f: &'a RawFabric,
    span: Range<usize>,
    /// The host group's name.
    group: String,
    /// Names of the lower (edge or leaf) and upper (core or spine) switches.
    lower: &'static str,
    upper: &'static str,
    /// The rate of switch-to-switch links as written.
    fabric_rate_text: Spanned<String>,
}

impl<'a> Entries<'a> {
    fn new(f: &'a RawFabric) -> Self {
        let (lower, upper) = if f.kind.get_ref() == "fat-tree" {
            ("edge", "core")
        } else {
            ("leaf", "spine")
        };
        Entries {
            f,
            span: f.kind.span(),
            group: f
                .hosts
                .as_ref()
                .map_or_else(|| "h".to_string(), |h| h.get_ref().clone()),
            lower,
            upper,
            fabric_rate_text: f.fabric_rate.clone().unwrap_or_else(|| f.host_rate.clone()),
        }
    }

    fn text(&self, text: String) -> Spanned<String> {
        Spanned::new(self.span.clone(), text)
    }
    fn edge_name(&self, e: u64) -> String {
        format!("{}{}", self.lower, e + 1)
    }
    fn agg_name(&self, a: u64) -> String {
        format!("agg{}", a + 1)
    }
    fn core_name(&self, c: u64) -> String {
        format!("{}{}", self.upper, c + 1)
    }

    /// The host group, then the edge, aggregation and core switches.
    fn push_nodes(&self, raw: &mut RawScenario, shape: Shape, hosts: u64) {
        raw.host.push(RawHost {
            name: self.text(self.group.clone()),
            count: Some(Spanned::new(
                self.span.clone(),
                toml::Value::Integer(hosts as i64),
            )),
            rx_rate: None,
            rx_buffer_bytes: None,
            rx_xoff_bytes: None,
            rx_xon_bytes: None,
            nic_queue_frames: None,
            dcbx: None,
            rx_stall: None,
            pfc_prevention_tout: None,
        });
        for e in 0..shape.pods * shape.edges {
            raw.switch.push(self.switch(self.edge_name(e)));
        }
        for a in 0..shape.pods * shape.aggs {
            raw.switch.push(self.switch(self.agg_name(a)));
        }
        for c in 0..shape.cores {
            raw.switch.push(self.switch(self.core_name(c)));
        }
    }

    /// Host–edge links in host order, then edge–aggregation, then aggregation–core (or
    /// every leaf to every spine).
    fn push_links(&self, raw: &mut RawScenario, shape: Shape, hosts: u64) {
        let Shape {
            hosts_per_edge: hpe,
            edges,
            aggs,
            pods,
            cores,
        } = shape;
        let rate = &self.fabric_rate_text;
        for h in 0..hosts {
            raw.link.push(self.link(
                format!("{}{}", self.group, h + 1),
                self.edge_name(h / hpe),
                &self.f.host_rate,
            ));
        }
        if aggs == 0 {
            for e in 0..edges {
                for c in 0..cores {
                    raw.link
                        .push(self.link(self.edge_name(e), self.core_name(c), rate));
                }
            }
            return;
        }
        for p in 0..pods {
            for e in 0..edges {
                for j in 0..aggs {
                    raw.link.push(self.link(
                        self.edge_name(p * edges + e),
                        self.agg_name(p * aggs + j),
                        rate,
                    ));
                }
            }
        }
        let per_agg = cores / aggs;
        for p in 0..pods {
            for j in 0..aggs {
                for c in 0..per_agg {
                    raw.link.push(self.link(
                        self.agg_name(p * aggs + j),
                        self.core_name(j * per_agg + c),
                        rate,
                    ));
                }
            }
        }
    }

    /// A switch with the fabric's `[fabric.switch]` keys.
    fn switch(&self, name: String) -> RawSwitch {
        let sw = &self.f.switch;
        RawSwitch {
            name: self.text(name),
            buffer_bytes: sw.buffer_bytes.clone(),
            threshold: sw
                .threshold
                .clone()
                .unwrap_or_else(|| Spanned::new(self.span.clone(), "dynamic".into())),
            alpha: sw.alpha,
            static_threshold_bytes: sw.static_threshold_bytes,
            xon_offset_bytes: sw.xon_offset_bytes,
            headroom_bytes: sw.headroom_bytes,
            mtu: sw.mtu.clone(),
            dcbx: sw.dcbx.clone(),
            ecn: sw.ecn.clone(),
            qcn: sw.qcn.clone(),
            pfcwd: sw.pfcwd.clone(),
        }
    }

    /// A link from `a` to `b` at `rate` with the fabric's delay.
    fn link(&self, a: String, b: String, rate: &Spanned<String>) -> RawLink {
        RawLink {
            a: self.text(a),
            b: self.text(b),
            rate: Some(rate.clone()),
            length_m: None,
            delay: self.f.delay.clone(),
            interface_delay: None,
            ber: None,
            mtu: None,
            flow_control: None,
            pfc_priorities: None,
            pause_quanta: None,
            refresh_quanta: None,
            xon_on_release: None,
            hold_own_data: None,
            reaction_delay_quanta: None,
            ets_tc_bandwidth: None,
            ets_prio_tc: None,
            ets_tsa: None,
            ets_idle_slope: None,
            dcbx: None,
            trust: None,
            dscp2prio: None,
            a_end: None,
            b_end: None,
        }
    }
}

/// The size of a generated fabric, computed from its shape before anything is built; `None`
/// where a count does not fit in 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FabricSize {
    hosts: Option<u64>,
    switches: Option<u64>,
    links: Option<u64>,
    /// Two per link.
    ports: Option<u64>,
    /// Switches × nodes.
    forwarding: Option<u64>,
}

impl FabricSize {
    /// The size of `pods` pods of `edges` edge (leaf) switches with `hpe` hosts each and `aggs`
    /// aggregation switches, under `cores` core (spine) switches; with no aggregation layer
    /// every edge links to every core.
    fn of(hpe: u64, edges: u64, aggs: u64, pods: u64, cores: u64) -> FabricSize {
        let edge_switches = pods.checked_mul(edges);
        let hosts = edge_switches.and_then(|e| e.checked_mul(hpe));
        let switches = pods
            .checked_mul(edges.saturating_add(aggs))
            .and_then(|s| s.checked_add(cores));
        let fabric_links = match cores.checked_div(aggs) {
            None => edges.checked_mul(cores),
            Some(per_agg) => {
                // edge–aggregation in each pod, then each aggregation switch to its cores
                let up = edge_switches.and_then(|e| e.checked_mul(aggs));
                let down = pods.checked_mul(aggs).and_then(|a| a.checked_mul(per_agg));
                up.zip(down).and_then(|(u, d)| u.checked_add(d))
            }
        };
        let links = hosts.zip(fabric_links).and_then(|(h, l)| h.checked_add(l));
        let nodes = hosts.zip(switches).and_then(|(h, s)| h.checked_add(s));
        FabricSize {
            hosts,
            switches,
            links,
            ports: links.and_then(|l| l.checked_mul(2)),
            forwarding: switches.zip(nodes).and_then(|(s, n)| s.checked_mul(n)),
        }
    }

    /// Why the scenario's limits refuse this fabric, if they do.
    fn refusal(&self) -> Option<String> {
        let shown = |n: Option<u64>| n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
        let hosts = self.hosts;
        let elements = hosts
            .zip(self.switches)
            .zip(self.links)
            .and_then(|((h, s), l)| h.checked_add(s)?.checked_add(l));
        let what = format!(
            "the fabric has {} hosts, {} switches and {} links ({} ports)",
            shown(hosts),
            shown(self.switches),
            shown(self.links),
            shown(self.ports)
        );
        let max = super::MAX_SCENARIO_SIZE;
        if elements.is_none_or(|e| e > max) {
            return Some(format!(
                "{what}, {} elements in all; allowed at most {max} (hosts, switches, links, flows, \
                 signals and workload arrivals together)",
                shown(elements)
            ));
        }
        let max = super::MAX_FORWARDING_ENTRIES;
        if self.forwarding.is_none_or(|f| f > max) {
            return Some(format!(
                "{what}: {} switches × {} nodes = {} forwarding entries; allowed at most {max} \
                 (e.g. a fat tree of k = 32)",
                shown(self.switches),
                shown(hosts.zip(self.switches).and_then(|(h, s)| h.checked_add(s))),
                shown(self.forwarding)
            ));
        }
        None
    }
}

/// Hosts per edge switch for `oversubscription` with k/2 = `half` uplinks: a whole number ≥ 1.
fn per_edge(
    ctx: &Ctx<'_>,
    oversubscription: f64,
    half: u64,
    host: Rate,
    fabric: Rate,
    span: Range<usize>,
) -> Result<u64, ScenarioError> {
    let x = oversubscription * half as f64 * fabric.bps() as f64 / host.bps() as f64;
    if !((1.0..=1e6).contains(&x) && (x - x.round()).abs() < 1e-9) {
        return ctx.err(
            span,
            "oversubscription",
            format!(
                "found {oversubscription}: hosts per edge switch = oversubscription × k/2 × fabric_rate / host_rate = {x}; allowed a value that makes it a whole number ≥ 1"
            ),
        );
    }
    Ok(x.round() as u64)
}
