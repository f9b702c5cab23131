//! The reference's topology file: `nodes switches links`, the switch ids, then one link a
//! line.

use lossless_proto::units::{Duration, Rate};

use super::Ns3Error;
use super::parse::Tokens;

/// One link of a topology file.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// One end (node id).
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Its rate.
    pub rate: Rate,
    /// Its one-way delay.
    pub delay: Duration,
    /// Its line in the file.
    pub line: usize,
}

/// A topology file: `nodes switches links`, the switch ids, then `a b rate delay error_rate`
/// per link.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Number of nodes (ids 0..nodes).
    pub nodes: u32,
    /// Which nodes are switches.
    pub is_switch: Vec<bool>,
    /// The links, in file order (the order gives the reference's port numbers).
    pub links: Vec<Link>,
}

impl Topology {
    /// Parses the text of a topology file named `file`.
    pub fn parse(text: &str, file: &str) -> Result<Topology, Ns3Error> {
        let mut t = Tokens::new(file, text);
        let (nodes, switches, links) = read_counts(&mut t)?;
        let mut is_switch = vec![false; nodes as usize];
        for _ in 0..switches {
            let id: u32 = t.num("switch id", "a node id")?;
            if id >= nodes {
                return Err(t.err(t.line(), "switch id", format!("found {id}, allowed 0..{nodes}")));
            }
            is_switch[id as usize] = true;
        }
        let mut out = Vec::new();
        for _ in 0..links {
            out.push(read_link(&mut t, nodes)?);
        }
        if !t.done() {
            let (x, l) = t.next("end")?;
            return Err(t.err(
                l,
                "end",
                format!("found {x:?} after the {links} links the first line announces"),
            ));
        }
        let topology = Topology {
            nodes,
            is_switch,
            links: out,
        };
        topology.check_one_link_per_host(&t)?;
        Ok(topology)
    }

    /// A host has one NIC port: exactly one link (the simulator builds nothing else).
    fn check_one_link_per_host(&self, t: &Tokens<'_>) -> Result<(), Ns3Error> {
        let is_switch = &self.is_switch;
        let mut first: Vec<Option<usize>> = vec![None; self.nodes as usize];
        for l in &self.links {
            for x in [l.a, l.b] {
                if is_switch[x as usize] {
                    continue;
                }
                if let Some(at) = first[x as usize] {
                    return Err(t.err(
                        l.line,
                        "link end",
                        format!(
                            "host {x} (not in the switch list) has a second link (its first at line {at}); \
                             allowed one link per host"
                        ),
                    ));
                }
                first[x as usize] = Some(l.line);
            }
        }
        if let Some(h) = (0..self.nodes as usize).find(|&h| !is_switch[h] && first[h].is_none()) {
            return Err(t.err(
                1,
                "node count",
                format!("host {h} (not in the switch list) has no link; allowed hosts with one link each"),
            ));
        }
        Ok(())
    }
}

/// The first line: the counts of nodes, switches and links, within bounds.
fn read_counts(t: &mut Tokens<'_>) -> Result<(u32, u32, u32), Ns3Error> {
    let nodes: u32 = t.num("node count", "a whole number")?;
    let switches: u32 = t.num("switch count", "a whole number")?;
    let links: u32 = t.num("link count", "a whole number")?;
    if links > MAX_LINKS {
        return Err(t.err(
            1,
            "link count",
            format!("found {links}, allowed at most {MAX_LINKS}"),
        ));
    }
    const MAX_NODES: u32 = 1 << 16;
    if nodes > MAX_NODES || switches > nodes {
        return Err(t.err(
            1,
            "node count",
            format!("found {nodes} nodes and {switches} switches, allowed switches ≤ nodes ≤ {MAX_NODES}"),
        ));
    }
    Ok((nodes, switches, links))
}

/// One link, `a b rate delay error_rate`, between two of the `nodes` nodes.
fn read_link(t: &mut Tokens<'_>, nodes: u32) -> Result<Link, Ns3Error> {
    let a: u32 = t.num("link end", "a node id")?;
    let line = t.line();
    let b: u32 = t.num("link end", "a node id")?;
    for x in [a, b] {
        if x >= nodes {
            return Err(t.err(line, "link end", format!("found {x}, allowed 0..{nodes}")));
        }
    }
    if a == b {
        return Err(t.err(
            line,
            "link end",
            format!("found {a} twice, allowed two different nodes"),
        ));
    }
    let rate = t.rate("link rate")?;
    if !rate.is_byte_exact() {
        return Err(t.err(
            line,
            "link rate",
            format!("found {rate}: a byte must last whole picoseconds"),
        ));
    }
    if !(crate::scenario::MIN_LINK_RATE..=crate::scenario::MAX_LINK_RATE).contains(&rate) {
        return Err(t.err(
            line,
            "link rate",
            format!("found {rate}, allowed 10Mbps … 1.6Tbps (Ethernet's rates)"),
        ));
    }
    let delay = t.time("link delay")?;
    if delay > crate::scenario::MAX_LINK_DELAY {
        return Err(t.err(
            line,
            "link delay",
            format!(
                "found {delay}, allowed at most {} (200,000 km of cable)",
                crate::scenario::MAX_LINK_DELAY
            ),
        ));
    }
    let e: f64 = t.num("link error rate", "a probability")?;
    if e != 0.0 {
        return Err(t.err(
            line,
            "link error rate",
            format!("found {e}: random link errors are not modelled; allowed 0"),
        ));
    }
    Ok(Link {
        a,
        b,
        rate,
        delay,
        line,
    })
}

/// Most links a topology file may announce on its first line (as many as a scenario's
/// elements, `scenario::MAX_SCENARIO_SIZE`).
pub const MAX_LINKS: u32 = 200_000;
