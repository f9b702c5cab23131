//! A partition file (`lossless sim --partition FILE`): the user's own split of a fabric over
//! threads (or MPI ranks × threads), for when the automatic tier-and-group partitioning
//! (`partition_model.rs`) is not the one wanted.
//!
//! One line per node or group of nodes, `NAME PARTITION`: `NAME` a node's name as the
//! scenario (or the ns-3 topology, whose nodes are named by their index) gives it, or a prefix
//! ending in `*` (`leaf3*` matches every name that starts with `leaf3`: `leaf3`, `leaf30`, …);
//! `PARTITION` a number from 0. `#` starts a comment. A node takes the
//! partition of the line naming it exactly, or else of the longest prefix that matches it;
//! every node must be matched, every line must match some node (a typo is refused, not
//! ignored), and no name may be given twice.
//! `lossless sim … --show-partition` prints the automatic partitioning in this form, to edit.

use std::collections::HashMap;

use crate::config::SimConfig;
use crate::experiments::partition_model::Partitioning;

/// Why a partition file was refused (line numbers from 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionFileError {
    /// A line that is not `NAME PARTITION`.
    #[error(
        "line {line}: found {found:?}, allowed `NAME PARTITION` (a node name or PREFIX*, then a partition number)"
    )]
    Syntax {
        /// The line.
        line: usize,
        /// What it holds.
        found: String,
    },
    /// A partition number out of range.
    #[error("line {line}: partition {found}; this run has {parts} partitions (0 to {})", parts - 1)]
    Range {
        /// The line.
        line: usize,
        /// The number given.
        found: u64,
        /// The partitions of the run.
        parts: u16,
    },
    /// A name (or prefix) given on two lines.
    #[error("line {line}: {name:?} is given again (first on line {first})")]
    Twice {
        /// The second line.
        line: usize,
        /// The first line.
        first: usize,
        /// The name.
        name: String,
    },
    /// A line that matches no node.
    #[error("line {line}: {name:?} names no node of the fabric")]
    NoSuchNode {
        /// The line.
        line: usize,
        /// The name.
        name: String,
    },
    /// A node no line matches.
    #[error("node {name:?} is in no partition: add a line for it (or a PREFIX* that matches it)")]
    Unplaced {
        /// The node's name.
        name: String,
    },
    /// A partition no node is in.
    #[error(
        "partition {part} has no node; this run has {parts} partitions (the largest number in the file plus one): give each at least one"
    )]
    Empty {
        /// The empty partition.
        part: u16,
        /// The partitions of the run.
        parts: u16,
    },
}

/// The partitioning of `config` into `parts` partitions that the partition file `text` gives.
pub fn parse(config: &SimConfig, text: &str, parts: u16) -> Result<Partitioning, PartitionFileError> {
    let mut exact: HashMap<&str, (u16, usize)> = HashMap::new();
    let mut prefixes: Vec<(&str, u16, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let mut words = body.split_whitespace();
        let (Some(name), Some(num), None) = (words.next(), words.next(), words.next()) else {
            return Err(PartitionFileError::Syntax {
                line,
                found: body.to_string(),
            });
        };
        let found: u64 = num.parse().map_err(|_| PartitionFileError::Syntax {
            line,
            found: body.to_string(),
        })?;
        let part = u16::try_from(found)
            .ok()
            .filter(|&p| p < parts)
            .ok_or(PartitionFileError::Range { line, found, parts })?;
        let twice = |first: usize| PartitionFileError::Twice {
            line,
            first,
            name: name.to_string(),
        };
        if let Some(prefix) = name.strip_suffix('*') {
            if let Some(&(_, _, first)) = prefixes.iter().find(|p| p.0 == prefix) {
                return Err(twice(first));
            }
            prefixes.push((prefix, part, line));
        } else if let Some(&(_, first)) = exact.get(name) {
            return Err(twice(first));
        } else {
            exact.insert(name, (part, line));
        }
    }
    // longest prefix first
    prefixes.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
    let mut used = vec![false; text.lines().count() + 1];
    let mut of_node = Vec::with_capacity(config.nodes.len());
    for n in &config.nodes {
        let name = n.name.as_str();
        let (part, line) = match exact.get(name) {
            Some(&p) => p,
            None => match prefixes.iter().find(|p| name.starts_with(p.0)) {
                Some(&(_, part, line)) => (part, line),
                None => {
                    return Err(PartitionFileError::Unplaced {
                        name: name.to_string(),
                    });
                }
            },
        };
        // (a line counts as matching a node even where a closer one wins: only a line that
        // names nothing is a mistake)
        used[line] = true;
        for &(prefix, _, l) in &prefixes {
            if name.starts_with(prefix) {
                used[l] = true;
            }
        }
        of_node.push(part);
    }
    let unused = exact
        .iter()
        .map(|(name, &(_, line))| (line, name.to_string()))
        .chain(prefixes.iter().map(|&(p, _, line)| (line, format!("{p}*"))))
        .filter(|&(line, _)| !used[line])
        .min();
    if let Some((line, name)) = unused {
        return Err(PartitionFileError::NoSuchNode { line, name });
    }
    if let Some(part) = (0..parts).find(|p| !of_node.contains(p)) {
        return Err(PartitionFileError::Empty { part, parts });
    }
    let groups = of_node.len() as u32;
    Ok(Partitioning {
        group_of_node: (0..groups).collect(),
        groups,
        of_node,
        parts,
    })
}

/// `part` as a partition file for `config`: a line per node, in node order, with a header
/// that says how to use it.
pub fn render(config: &SimConfig, part: &Partitioning) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "# {} split into {} partitions (lossless sim --partition FILE; docs/parallel.md)\n\
         # NAME PARTITION, or PREFIX* PARTITION for every node whose name starts with PREFIX\n",
        config.name, part.parts
    );
    // what each partition weighs, as the automatic partitioner weighs it
    let (weights, what) = match crate::experiments::expected_load::expected_load(config) {
        Some(load) => (
            load.frames,
            "frames expected (the run's flows on the paths it routes them)",
        ),
        None => (
            crate::experiments::expected_load::link_weights(config)
                .into_iter()
                .map(|l| l as f64)
                .collect(),
            "links (no traffic known before the run)",
        ),
    };
    let parts = usize::from(part.parts);
    let (mut nodes, mut weight) = (vec![0usize; parts], vec![0.0f64; parts]);
    for (n, &p) in part.of_node.iter().enumerate() {
        if let Some(i) = nodes.get_mut(usize::from(p)) {
            *i += 1;
            weight[usize::from(p)] += weights.get(n).copied().unwrap_or(0.0);
        }
    }
    let total: f64 = weight.iter().sum();
    let _ = writeln!(s, "# each partition's {what}:");
    for p in 0..parts {
        let share = if total > 0.0 {
            100.0 * weight[p] / total
        } else {
            0.0
        };
        let _ = writeln!(s, "#   {p}: {} nodes, {:.0} ({share:.1} %)", nodes[p], weight[p]);
    }
    for (n, p) in config.nodes.iter().zip(&part.of_node) {
        let _ = writeln!(s, "{} {p}", n.name);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{self, Overrides};

    fn four_bridge() -> SimConfig {
        scenario::load("four-bridge", &Overrides::default()).expect("loads")
    }

    #[test]
    fn the_automatic_partitioning_rendered_reads_back_as_itself() {
        let cfg = four_bridge();
        let auto = Partitioning::by_tier(&cfg, 3);
        let back = parse(&cfg, &render(&cfg, &auto), 3).expect("reads");
        assert_eq!(back.of_node, auto.of_node);
    }

    #[test]
    fn the_rendering_says_what_each_partition_weighs() {
        let cfg = four_bridge();
        let auto = Partitioning::by_tier(&cfg, 2);
        let text = render(&cfg, &auto);
        let load = crate::experiments::expected_load::expected_load(&cfg).expect("four-bridge has flows");
        assert!(text.contains("# each partition's frames expected"), "{text}");
        // one line per partition, their frames adding up to the run's
        let mut sum = 0.0;
        for p in 0..2 {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("#   {p}: ")))
                .unwrap_or_else(|| panic!("partition {p}: {text}"));
            let frames: f64 = line
                .split(", ")
                .nth(1)
                .and_then(|x| x.split(' ').next())
                .expect("frames")
                .parse()
                .expect("a number");
            let nodes = auto.of_node.iter().filter(|&&x| x == p).count();
            assert!(line.contains(&format!("{nodes} nodes")), "{line}");
            sum += frames;
        }
        let want: f64 = load.frames.iter().sum();
        assert!((sum - want).abs() <= 2.0, "{sum} against {want}");
    }

    #[test]
    fn an_exact_name_beats_a_prefix_and_a_longer_prefix_a_shorter_one() {
        let cfg = four_bridge();
        let names: Vec<&str> = cfg.nodes.iter().map(|n| n.name.as_str()).collect();
        // every node by a one-letter prefix, then the first node exactly
        let mut text = String::new();
        let mut firsts: Vec<char> = names.iter().filter_map(|n| n.chars().next()).collect();
        firsts.sort();
        firsts.dedup();
        for c in &firsts {
            text.push_str(&format!("{c}* 0\n"));
        }
        let longer = &names[1][..2.min(names[1].len())];
        text.push_str(&format!("{longer}* 1 # a longer prefix\n{} 2\n", names[0]));
        let p = parse(&cfg, &text, 3).expect("reads");
        assert_eq!(p.of_node[0], 2);
        for (i, n) in names.iter().enumerate().skip(1) {
            let want = if n.starts_with(longer) { 1 } else { 0 };
            assert_eq!(p.of_node[i], want, "{n}");
        }
    }

    #[test]
    fn every_mistake_is_refused_with_its_line() {
        let cfg = four_bridge();
        let all = render(&cfg, &Partitioning::by_tier(&cfg, 2));
        let first = cfg.nodes[0].name.clone();
        let lines = all.lines().count();
        // (after the header's comments)
        let first_line = 1 + all
            .lines()
            .position(|l| l.starts_with(&format!("{first} ")))
            .expect("the first node's line");
        let cases: Vec<(String, u16, PartitionFileError)> = vec![
            (
                format!("{all}{first}\n"),
                2,
                PartitionFileError::Syntax {
                    line: lines + 1,
                    found: first.clone(),
                },
            ),
            (
                format!("{all}{first} x\n"),
                2,
                PartitionFileError::Syntax {
                    line: lines + 1,
                    found: format!("{first} x"),
                },
            ),
            (
                all.replacen(&format!("\n{first} "), &format!("\n{first} 7 # "), 1),
                2,
                PartitionFileError::Range {
                    line: first_line,
                    found: 7,
                    parts: 2,
                },
            ),
            (
                format!("{all}{first} 1\n"),
                2,
                PartitionFileError::Twice {
                    line: lines + 1,
                    first: first_line,
                    name: first.clone(),
                },
            ),
            (
                format!("{all}nosuch 1\n"),
                2,
                PartitionFileError::NoSuchNode {
                    line: lines + 1,
                    name: "nosuch".into(),
                },
            ),
            (
                all.replacen(&format!("\n{first} "), "\n# ", 1),
                2,
                PartitionFileError::Unplaced { name: first.clone() },
            ),
            (all.clone(), 3, PartitionFileError::Empty { part: 2, parts: 3 }),
        ];
        for (text, parts, want) in cases {
            assert_eq!(parse(&cfg, &text, parts).err(), Some(want.clone()), "{text}");
            assert!(!want.to_string().is_empty());
        }
    }
}
