//! `lossless import mlnx-qos`: the text `mlnx_qos -i IF` prints (NVIDIA MLNX_OFED) → a
//! scenario of four hosts whose NICs have that port's trust state and `dscp2prio` map, PFC
//! and ETS, and cable length, sending RoCEv2 QPs through a switch that mirrors them into a
//! fifth host.

use std::fmt::Write as _;

use super::{ImportError, Imported, finish, header, prio_list, roce_dscp};
use crate::config::qos::{CNP_DSCP, DEFAULT_DSCP_MAP, DscpMap};

/// One traffic class of the ETS section.
#[derive(Clone, Debug, PartialEq)]
struct Tc {
    tsa: String,
    bw: Option<u8>,
    priorities: Vec<u8>,
}

/// What the text says.
#[derive(Debug, Default)]
struct Parsed {
    trust_dscp: Option<bool>,
    map: Option<DscpMap>,
    cable_m: Option<u64>,
    pfc: Option<u8>,
    tcs: Vec<(u8, Tc)>,
}

fn err(file: &str, line: usize, path: &str, message: String) -> ImportError {
    ImportError {
        file: file.to_string(),
        line,
        path: path.to_string(),
        message,
    }
}

/// Parses `text`, the output of `mlnx_qos -i IF` read from `file`.
fn parse(text: &str, file: &str, unmapped: &mut Vec<String>) -> Result<Parsed, ImportError> {
    let mut p = Parsed::default();
    let mut section = "";
    let mut pfc_prios: Option<Vec<u8>> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("priority trust") {
            let v = line.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
            p.trust_dscp = Some(match v {
                "dscp" => true,
                "pcp" => false,
                other => {
                    return Err(err(
                        file,
                        n,
                        "Priority trust state",
                        format!("found {other:?}; expected pcp or dscp"),
                    ));
                }
            });
            section = "";
        } else if lower.starts_with("dscp2prio mapping") {
            section = "dscp2prio";
            p.map.get_or_insert(DEFAULT_DSCP_MAP);
        } else if section == "dscp2prio" && lower.starts_with("prio:") {
            let (prio, dscps) = line["prio:".len()..].split_once("dscp:").ok_or_else(|| {
                err(
                    file,
                    n,
                    "dscp2prio mapping",
                    format!("found {line:?}; expected `prio:P dscp:D,D,...`"),
                )
            })?;
            let prio: u8 = match prio.trim().parse() {
                Ok(v) if v <= 7 => v,
                _ => {
                    return Err(err(
                        file,
                        n,
                        "dscp2prio mapping",
                        format!("found priority {:?}; expected 0..=7", prio.trim()),
                    ));
                }
            };
            let map = p.map.get_or_insert(DEFAULT_DSCP_MAP);
            for d in dscps.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                match d.parse::<u8>() {
                    Ok(d) if d <= 63 => map[usize::from(d)] = prio,
                    _ => {
                        return Err(err(
                            file,
                            n,
                            "dscp2prio mapping",
                            format!("found DSCP {d:?}; expected 0..=63"),
                        ));
                    }
                }
            }
        } else if lower.starts_with("cable len") {
            let v = line.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
            p.cable_m = Some(match v.parse::<u64>() {
                Ok(m) if m <= super::super::MAX_LENGTH_M => m,
                _ => {
                    return Err(err(
                        file,
                        n,
                        "Cable len",
                        format!("found {v:?}; expected metres, a whole number"),
                    ));
                }
            });
            section = "";
        } else if lower.starts_with("pfc configuration") {
            section = "pfc";
        } else if section == "pfc" && lower.starts_with("priority") {
            pfc_prios = Some(numbers(
                file,
                n,
                "PFC configuration",
                &line["priority".len()..],
                7,
            )?);
        } else if section == "pfc" && lower.starts_with("enabled") {
            let Some(prios) = &pfc_prios else {
                return Err(err(
                    file,
                    n,
                    "PFC configuration",
                    "an `enabled` row before the `priority` row".into(),
                ));
            };
            let flags = numbers(file, n, "PFC configuration", &line["enabled".len()..], 1)?;
            if flags.len() != prios.len() {
                return Err(err(
                    file,
                    n,
                    "PFC configuration",
                    format!(
                        "{} `enabled` values for {} priorities; expected one each",
                        flags.len(),
                        prios.len()
                    ),
                ));
            }
            p.pfc = Some(
                prios
                    .iter()
                    .zip(&flags)
                    .filter(|(_, f)| **f == 1)
                    .fold(0u8, |m, (p, _)| m | 1 << p),
            );
        } else if section == "pfc" && lower.starts_with("buffer") {
            unmapped.push(format!("line {n}: PFC priority → receive buffer assignment not mapped (the NIC model has one receive buffer)"));
        } else if lower.starts_with("tc:") {
            section = "tc";
            let (tc, rest) = tc_line(file, n, line)?;
            if p.tcs.iter().any(|(t, _)| *t == tc.0) {
                return Err(err(file, n, "tc", format!("TC {} listed twice", tc.0)));
            }
            if let Some(r) = rest {
                unmapped.push(format!(
                    "line {n}: TC {} ratelimit {r} not mapped (no per-TC rate limit in the simulator)",
                    tc.0
                ));
            }
            p.tcs.push((tc.0, tc.1));
        } else if section == "tc" && lower.starts_with("priority:") {
            let prios = numbers(file, n, "tc", &line["priority:".len()..], 7)?;
            if let Some((_, tc)) = p.tcs.last_mut() {
                tc.priorities.extend(prios);
            }
        } else {
            unmapped.push(format!("line {n}: {line:?} not mapped"));
            if !raw.starts_with([' ', '\t']) {
                section = "";
            }
        }
    }
    Ok(p)
}

/// Whitespace- or comma-separated numbers, each at most `max`.
fn numbers(file: &str, n: usize, path: &str, s: &str, max: u8) -> Result<Vec<u8>, ImportError> {
    s.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(|t| match t.parse::<u8>() {
            Ok(v) if v <= max => Ok(v),
            _ => Err(err(
                file,
                n,
                path,
                format!("found {t:?}; expected a number 0..={max}"),
            )),
        })
        .collect()
}

/// `tc: N ratelimit: R, tsa: T[, bw: B%]` → (TC, its settings), and the rate limit when not
/// `unlimited`.
fn tc_line(file: &str, n: usize, line: &str) -> Result<((u8, Tc), Option<String>), ImportError> {
    let bad = |what: &str| {
        err(
            file,
            n,
            "tc",
            format!("found {line:?}: {what}; expected `tc: N ratelimit: R, tsa: T, bw: B%`"),
        )
    };
    let rest = &line["tc:".len()..];
    let (num, rest) = rest
        .trim_start()
        .split_once(char::is_whitespace)
        .unwrap_or((rest.trim(), ""));
    let tc: u8 = num
        .parse()
        .ok()
        .filter(|t| *t <= 7)
        .ok_or_else(|| bad("TC is not 0..=7"))?;
    let mut tsa = None;
    let mut bw = None;
    let mut limit = None;
    for part in rest.split(',') {
        let Some((k, v)) = part.split_once(':') else {
            continue;
        };
        match k.trim() {
            "ratelimit" if v.trim() != "unlimited" => limit = Some(v.trim().to_string()),
            "tsa" => tsa = Some(v.trim().to_string()),
            "bw" => {
                let b = v.trim().trim_end_matches('%');
                bw = Some(
                    b.parse::<u8>()
                        .ok()
                        .filter(|b| *b <= 100)
                        .ok_or_else(|| bad("bw is not 0..=100 %"))?,
                );
            }
            _ => {}
        }
    }
    let tsa = tsa.ok_or_else(|| bad("no tsa"))?;
    Ok((
        (
            tc,
            Tc {
                tsa,
                bw,
                priorities: Vec::new(),
            },
        ),
        limit,
    ))
}

/// Imports `text`, the output of `mlnx_qos -i IF` read from `file`, for links at `rate`
/// (mlnx_qos does not print the port's speed).
pub fn import(text: &str, file: &str, rate: &str) -> Result<Imported, ImportError> {
    let mut unmapped = Vec::new();
    let p = parse(text, file, &mut unmapped)?;
    let Some(pfc) = p.pfc else {
        return Err(err(
            file,
            0,
            "PFC configuration",
            "missing; expected the `PFC configuration:` section with its `priority` and `enabled` rows"
                .into(),
        ));
    };
    let trust_dscp = match p.trust_dscp {
        Some(t) => t,
        None => {
            unmapped.push("no `Priority trust state` line (MLNX_OFED before 4.x): PCP trust assumed".into());
            false
        }
    };
    let map = p.map.unwrap_or(DEFAULT_DSCP_MAP);
    let mut defaults = format!("[defaults]\nrate = {}\n", super::quoted(rate));
    match p.cable_m {
        Some(m) => {
            let _ = writeln!(defaults, "length_m = {m}   # Cable len");
        }
        None => unmapped.push("no `Cable len` line: 5 m assumed".into()),
    }
    if pfc != 0 {
        let _ = writeln!(
            defaults,
            "flow_control = \"pfc\"\npfc_priorities = {}   # PFC enabled",
            prio_list(pfc)
        );
    } else {
        defaults.push_str("flow_control = \"off\"   # no PFC-enabled priority\n");
    }
    if trust_dscp {
        defaults.push_str("trust = \"dscp\"\n");
        if map != DEFAULT_DSCP_MAP {
            let _ = writeln!(defaults, "dscp2prio = {}", super::dscp2prio_toml(&map));
        }
    }
    // ETS: priority → TC, bandwidth, algorithm
    if !p.tcs.is_empty() {
        let mut prio_tc = [0u8; 8];
        let mut bw = [0u8; 8];
        let mut tsa = ["strict"; 8];
        let mut any_ets = false;
        for (tc, t) in &p.tcs {
            for &pr in &t.priorities {
                prio_tc[usize::from(pr)] = *tc;
            }
            match t.tsa.as_str() {
                "ets" => {
                    tsa[usize::from(*tc)] = "ets";
                    bw[usize::from(*tc)] = t.bw.unwrap_or(0);
                    any_ets = true;
                }
                "strict" => {}
                other => unmapped.push(format!("TC {tc}: tsa {other:?} not mapped; strict priority used")),
            }
        }
        if any_ets {
            let list = |v: &[u8]| v.iter().map(u8::to_string).collect::<Vec<_>>().join(", ");
            let _ = writeln!(defaults, "ets_prio_tc = [{}]", list(&prio_tc));
            let _ = writeln!(defaults, "ets_tc_bandwidth = [{}]", list(&bw));
            let t: Vec<String> = tsa.iter().map(|s| format!("\"{s}\"")).collect();
            let _ = writeln!(defaults, "ets_tsa = [{}]", t.join(", "));
        }
    }
    let (dscp, prio) = if trust_dscp {
        match roce_dscp(&map, pfc) {
            Some((d, p)) => (Some(d), p),
            None => (None, map[usize::from(crate::config::qos::ROCE_DSCP)]),
        }
    } else {
        (None, if pfc == 0 { 0 } else { pfc.trailing_zeros() as u8 })
    };
    let mut qp = String::from("[qp]\ncc = \"dcqcn\"\npreset = \"connectx\"\n");
    if trust_dscp {
        let d = dscp.unwrap_or(crate::config::qos::ROCE_DSCP);
        let why = if d == crate::config::qos::ROCE_DSCP {
            format!("NVIDIA's RoCE DSCP, priority {prio} by the dscp2prio map")
        } else {
            format!(
                "priority {prio} by the dscp2prio map (DSCP 26, NVIDIA's RoCE default, maps to priority {}, where PFC is off)",
                map[usize::from(crate::config::qos::ROCE_DSCP)]
            )
        };
        let _ = writeln!(qp, "dscp = {d}   # {why}");
        let _ = writeln!(
            qp,
            "cnp_priority = {}   # CNPs carry DSCP {CNP_DSCP}, which the map sends there",
            map[usize::from(CNP_DSCP)]
        );
    }
    let what = format!(
        "Written by `lossless import mlnx-qos {file}`: four hosts with that NIC port's settings send RoCEv2\n\
         QPs (1 MB each) through a switch whose ports mirror them into a fifth. Keys:\n\
         examples/scenarios/README.md; what maps: docs/import.md."
    );
    let mut out = header(&what, &unmapped);
    let _ = writeln!(
        out,
        "name = \"mlnx-qos-import\"\ndescription = {}\nseed = 1\nduration = \"2ms\"\n",
        super::quoted(&format!(
            "mlnx_qos output {file} on every NIC and switch port, a 4-to-1 RoCEv2 incast"
        ))
    );
    out.push_str(&defaults);
    out.push('\n');
    out.push_str(&qp);
    let _ = write!(
        out,
        "\n[[host]]\nname = \"h\"\ncount = 4\n\n[[host]]\nname = \"r\"\n\n[[switch]]\nname = \"tor\"\nbuffer_bytes = 12_000_000\n\n\
         [[link]]\na = \"h*\"\nb = \"tor\"\n\n[[link]]\na = \"tor\"\nb = \"r\"\n\n\
         [[flow]]\nname = \"qp\"\nsrc = \"h*\"\ndst = \"r\"\npriority = {prio}\nsize_bytes = 1_000_000\ntransport = \"rocev2\"\n"
    );
    finish(file, out, unmapped)
}
