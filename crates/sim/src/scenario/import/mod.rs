//! Operators' configurations as scenarios: a SONiC `config_db.json` ([`sonic`]) and the text
//! `mlnx_qos -i IF` prints ([`mlnx_qos`]) become a scenario file that reproduces the ports'
//! PFC, trust and DSCP map, buffer and ECN settings around a small RoCEv2 incast, with a list
//! of what could not be mapped. The scenario is checked by loading it before it is returned,
//! so what an import writes runs with `lossless sim`.

pub mod mlnx_qos;
pub mod sonic;

use std::fmt::Write as _;

use super::{Overrides, load_str};
use crate::config::qos::{DEFAULT_DSCP_MAP, DscpMap, ROCE_DSCP};

/// Largest input an import reads (a whole switch's `config_db.json` is a few MB).
pub const MAX_IMPORT_BYTES: u64 = 64 << 20;

/// Most ports one import turns into hosts.
pub const MAX_IMPORT_PORTS: usize = 256;

/// A scenario written from an operator's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The scenario file's text (TOML, with a header saying where it came from).
    pub toml: String,
    /// What could not be mapped, one sentence each (also in the header).
    pub unmapped: Vec<String>,
}

/// Input an import could not read: where (file, line, the JSON path or the section) and
/// what was found against what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {path}: {message}", if *.line > 0 { format!(":{}", .line) } else { String::new() })]
pub struct ImportError {
    /// The input's name.
    pub file: String,
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// Where in the input (a JSON path such as `BUFFER_PROFILE/pg_lossless/xoff`, or a
    /// section of the text).
    pub path: String,
    /// What was found and what is allowed.
    pub message: String,
}

/// The priority the traffic of an import runs on and the DSCP that reaches it: DSCP 26
/// (NVIDIA's RoCE default) when its priority is lossless, else the smallest DSCP mapping to
/// the lowest lossless priority; `None` without a lossless priority.
fn roce_dscp(map: &DscpMap, lossless: u8) -> Option<(u8, u8)> {
    if lossless == 0 {
        return None;
    }
    let p26 = map[usize::from(ROCE_DSCP)];
    if lossless & (1 << p26) != 0 {
        return Some((ROCE_DSCP, p26));
    }
    let lowest = lossless.trailing_zeros() as u8;
    (0..64u8)
        .find(|&d| map[usize::from(d)] == lowest)
        .map(|d| (d, lowest))
}

/// `dscp2prio = { ... }` entries that differ from the default map (DSCP / 8).
fn dscp2prio_toml(map: &DscpMap) -> String {
    let entries: Vec<String> = (0..64)
        .filter(|&d| map[d] != DEFAULT_DSCP_MAP[d])
        .map(|d| format!("{d} = {}", map[d]))
        .collect();
    format!("{{ {} }}", entries.join(", "))
}

/// Priorities of a mask as a TOML list.
fn prio_list(mask: u8) -> String {
    let v: Vec<String> = (0..8)
        .filter(|p| mask & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect();
    format!("[{}]", v.join(", "))
}

/// A TOML string literal.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The header comment: source, then every unmapped item.
fn header(what: &str, unmapped: &[String]) -> String {
    let mut h = String::new();
    for line in what.lines() {
        let _ = writeln!(h, "# {line}");
    }
    if unmapped.is_empty() {
        h.push_str("# Everything read was mapped.\n");
    } else {
        h.push_str("# Not mapped (the simulator has no such setting, or has it once per switch):\n");
        for u in unmapped {
            let _ = writeln!(h, "#   - {}", u.replace('\n', " "));
        }
    }
    h.push('\n');
    h
}

/// The finished scenario, checked by loading it (an import that writes what does not load
/// is refused with the loader's reason).
fn finish(file: &str, toml: String, unmapped: Vec<String>) -> Result<Imported, ImportError> {
    if let Err(e) = load_str(&toml, "imported.toml", None, &Overrides::default()) {
        return Err(ImportError {
            file: file.to_string(),
            line: 0,
            path: "(the scenario written from it)".into(),
            message: format!("does not load: {e}"),
        });
    }
    Ok(Imported { toml, unmapped })
}

/// A node name made from an interface name: its letters, digits, `-` and `_`, others as `_`.
fn node_name(prefix: &str, port: &str) -> String {
    let clean: String = port
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut n = format!("{prefix}{clean}");
    n.truncate(super::MAX_NAME_LEN);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_keeps_dscp_26_when_its_priority_is_lossless_and_else_takes_the_first_lossless_one() {
        assert_eq!(roce_dscp(&DEFAULT_DSCP_MAP, 1 << 3), Some((26, 3)));
        assert_eq!(roce_dscp(&DEFAULT_DSCP_MAP, (1 << 4) | (1 << 5)), Some((32, 4)));
        let mut m = [1u8; 64];
        m[3] = 3;
        assert_eq!(roce_dscp(&m, 1 << 3), Some((3, 3)));
        assert_eq!(roce_dscp(&m, 0), None);
        assert_eq!(roce_dscp(&m, 1 << 7), None);
    }

    #[test]
    fn names_made_from_interfaces_are_valid_scenario_names() {
        assert_eq!(node_name("h-", "Ethernet0"), "h-Ethernet0");
        assert_eq!(node_name("h-", "Eth1/1.5"), "h-Eth1_1_5");
        assert!(super::super::is_valid_name(&node_name("h-", &"x".repeat(200))));
    }
}
