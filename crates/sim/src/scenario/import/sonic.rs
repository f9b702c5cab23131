//! `lossless import sonic`: a SONiC `config_db.json` (nested `{"TABLE": {"key": {...}}}`, or
//! the flat `{"TABLE|key": {...}}` of a CONFIG_DB dump) → a scenario of one switch whose
//! imported ports each face a host, with the ports' PFC (`PORT_QOS_MAP.pfc_enable`), DSCP
//! classification (`dscp_to_tc_map` → `DSCP_TO_TC_MAP`), buffer (`BUFFER_PG` →
//! `BUFFER_PROFILE` → `BUFFER_POOL`), ECN (`QUEUE.wred_profile` → `WRED_PROFILE`), watchdog
//! (`PFC_WD`), speed, MTU and cable length (`PORT`, `CABLE_LENGTH`), and a RoCEv2 incast from
//! every host to the last one's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::{
    ImportError, Imported, MAX_IMPORT_PORTS, finish, header, node_name, prio_list, quoted, roce_dscp,
};
use crate::config::qos::{DEFAULT_DSCP_MAP, DscpMap};

/// The tables of a `config_db.json`: table → key → object.
struct Db<'a> {
    text: &'a str,
    file: &'a str,
    tables: BTreeMap<String, BTreeMap<String, &'a Value>>,
}

/// What one imported port has.
struct PortQos {
    name: String,
    speed_mbps: Option<u64>,
    mtu: Option<u64>,
    cable_m: Option<u64>,
    pfc: u8,
    map: Option<(String, DscpMap)>,
}

/// The buffer settings of a lossless PG's profile.
#[derive(Clone, Debug, PartialEq)]
struct Profile {
    name: String,
    xoff: Option<u64>,
    /// `Ok(dynamic_th)` or `Err(static_th)`.
    threshold: Option<Result<i64, u64>>,
    xon_offset: Option<u64>,
    pool_size: Option<u64>,
}

/// ECN marking of a WRED profile.
#[derive(Clone, Debug, PartialEq)]
struct Ecn {
    name: String,
    kmin: u64,
    kmax: u64,
    percent: u64,
}

/// pfcwd of a port: detection, restoration (ms), action.
type Wd = (u64, u64, String);

impl<'a> Db<'a> {
    fn parse(text: &'a str, file: &'a str) -> Result<(Db<'a>, Value), ImportError> {
        let v: Value = serde_json::from_str(text).map_err(|e| ImportError {
            file: file.to_string(),
            line: e.line(),
            path: "(JSON)".into(),
            message: format!("not JSON: {e}"),
        })?;
        Ok((
            Db {
                text,
                file,
                tables: BTreeMap::new(),
            },
            v,
        ))
    }

    fn fill(&mut self, v: &'a Value) -> Result<(), ImportError> {
        let Some(top) = v.as_object() else {
            return Err(self.err(
                &[],
                "found a JSON value that is not an object; expected the config_db.json object of tables",
            ));
        };
        for (k, t) in top {
            if let Some((table, key)) = k.split_once('|') {
                self.tables
                    .entry(table.to_string())
                    .or_default()
                    .insert(key.to_string(), t);
            } else if let Some(obj) = t.as_object() {
                let e = self.tables.entry(k.clone()).or_default();
                for (kk, vv) in obj {
                    e.insert(kk.clone(), vv);
                }
            }
        }
        Ok(())
    }

    /// The line of `path` in the text: each component found after the previous one (the
    /// flat form's `TABLE|key` first).
    fn line_of(&self, path: &[&str]) -> usize {
        let mut pos = 0;
        let mut rest = path;
        if path.len() >= 2
            && let Some(i) = self.text.find(&format!("\"{}|{}", path[0], path[1]))
        {
            pos = i;
            rest = &path[2..];
        }
        for c in rest {
            match self.text[pos..].find(&format!("\"{c}\"")) {
                Some(i) => pos += i,
                None => break,
            }
        }
        if pos == 0 && path.is_empty() {
            return 1;
        }
        self.text[..pos].bytes().filter(|&b| b == b'\n').count() + 1
    }

    fn err(&self, path: &[&str], message: &str) -> ImportError {
        ImportError {
            file: self.file.to_string(),
            line: self.line_of(path),
            path: if path.is_empty() {
                "(top)".into()
            } else {
                path.join("/")
            },
            message: message.to_string(),
        }
    }

    fn table(&self, t: &str) -> Option<&BTreeMap<String, &'a Value>> {
        self.tables.get(t)
    }

    /// A string field of `table/key` (SONiC writes every value as a string; a number is
    /// taken too).
    fn field(&self, table: &str, key: &str, f: &str) -> Result<Option<String>, ImportError> {
        let Some(obj) = self.table(table).and_then(|t| t.get(key)) else {
            return Ok(None);
        };
        let Some(o) = obj.as_object() else {
            return Err(self.err(
                &[table, key],
                "found a value that is not an object; expected an object of fields",
            ));
        };
        match o.get(f) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(self.err(
                &[table, key, f],
                &format!("found {other}; expected a string such as \"3,4\" or \"18432\""),
            )),
        }
    }

    fn num(&self, path: &[&str], s: &str, max: u64) -> Result<u64, ImportError> {
        match s.trim().parse::<u64>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(self.err(path, &format!("found {s:?}; expected a whole number 0..={max}"))),
        }
    }

    /// Priorities `"3,4"` or a range `"3-4"` as a mask.
    fn prios(&self, path: &[&str], s: &str) -> Result<u8, ImportError> {
        let mut mask = 0u8;
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b) = (self.num(path, a, 7)?, self.num(path, b, 7)?);
            if a > b {
                return Err(self.err(path, &format!("found the range {part:?}; expected LOW-HIGH")));
            }
            for p in a..=b {
                mask |= 1 << p;
            }
        }
        Ok(mask)
    }

    /// Entries of `table` whose key names `port` (keys `PORT`, `A,B,C`, `PORTS|rest`, or
    /// `host|asic|PORT|rest`): (key, what follows the port).
    fn for_port(&self, table: &str, port: &str) -> Vec<(String, String)> {
        let Some(t) = self.table(table) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for k in t.keys() {
            let parts: Vec<&str> = k.split('|').collect();
            // the port list is the component before the last for QUEUE-like keys with a rest
            let (ports, rest) = match parts.len() {
                1 => (parts[0], ""),
                n => (parts[n - 2], parts[n - 1]),
            };
            if ports.split(',').any(|p| p.trim() == port) {
                out.push((k.clone(), rest.to_string()));
            }
        }
        out
    }
}

/// A reference `[TABLE|name]` or `name` → `name`.
fn reference(s: &str) -> &str {
    let s = s.trim().trim_start_matches('[').trim_end_matches(']');
    s.split_once('|').map_or(s, |(_, n)| n)
}

/// Ports named in `PORT_QOS_MAP` with `pfc_enable`, in their natural order.
fn pfc_ports(db: &Db<'_>) -> Result<Vec<String>, ImportError> {
    let mut out = Vec::new();
    if let Some(t) = db.table("PORT_QOS_MAP") {
        for k in t.keys() {
            if k == "global" {
                continue;
            }
            if let Some(p) = db.field("PORT_QOS_MAP", k, "pfc_enable")?
                && !p.trim().is_empty()
            {
                for port in k.split(',') {
                    out.push(port.trim().to_string());
                }
            }
        }
    }
    out.sort_by_key(|p| natural(p));
    out.dedup();
    Ok(out)
}

/// Sort key: the name without its trailing digits, then their value.
fn natural(p: &str) -> (String, u64) {
    let digits = p.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (a, b) = p.split_at(p.len() - digits);
    (a.to_string(), b.parse().unwrap_or(0))
}

/// Imports `text`, a `config_db.json` named `file`, for `ports` (none: every port with
/// `pfc_enable`).
pub fn import(text: &str, file: &str, ports: &[String]) -> Result<Imported, ImportError> {
    let (mut db, v) = Db::parse(text, file)?;
    db.fill(&v)?;
    let ports: Vec<String> = if ports.is_empty() {
        pfc_ports(&db)?
    } else {
        ports.to_vec()
    };
    if ports.len() < 2 {
        return Err(db.err(
            &["PORT_QOS_MAP"],
            &format!(
                "{} port(s) to import ({}); expected at least two (each port faces a host, and the \
                 traffic is an incast into the last): name them with --port, or give them pfc_enable",
                ports.len(),
                ports.join(", ")
            ),
        ));
    }
    if ports.len() > MAX_IMPORT_PORTS {
        return Err(db.err(
            &["PORT"],
            &format!(
                "{} ports to import; at most {MAX_IMPORT_PORTS} (name fewer with --port)",
                ports.len()
            ),
        ));
    }
    let mut unmapped = Vec::new();
    let mut qos = Vec::new();
    for p in &ports {
        qos.push(port_qos(&db, p, &mut unmapped)?);
    }
    let profiles = buffer_profiles(&db, &qos, &mut unmapped)?;
    let ecn = ecn_profiles(&db, &qos, &mut unmapped)?;
    let wd = watchdogs(&db, &qos, &mut unmapped)?;
    for t in [
        "BUFFER_QUEUE",
        "SCHEDULER",
        "TC_TO_QUEUE_MAP",
        "BUFFER_PORT_INGRESS_PROFILE_LIST",
        "BUFFER_PORT_EGRESS_PROFILE_LIST",
    ] {
        if db.table(t).is_some_and(|t| !t.is_empty()) {
            unmapped.push(format!(
                "{t}: not read (egress buffers, schedulers and queue maps; the simulator's queue is the priority, its egress buffer the shared one)"
            ));
        }
    }
    let toml = write_toml(&db, &qos, &profiles, &ecn, &wd, &mut unmapped);
    finish(file, toml, unmapped)
}

fn port_qos(db: &Db<'_>, p: &str, unmapped: &mut Vec<String>) -> Result<PortQos, ImportError> {
    let in_port = db.table("PORT").is_some_and(|t| t.contains_key(p));
    let qmaps = db.for_port("PORT_QOS_MAP", p);
    if !in_port && qmaps.is_empty() {
        let known: Vec<&String> = db
            .table("PORT")
            .map(|t| t.keys().take(12).collect())
            .unwrap_or_default();
        return Err(db.err(
            &["PORT"],
            &format!("port {p:?} is in neither PORT nor PORT_QOS_MAP; ports in PORT: {known:?}"),
        ));
    }
    let speed_mbps = match db.field("PORT", p, "speed")? {
        Some(s) => Some(db.num(&["PORT", p, "speed"], &s, 1_600_000)?),
        None => {
            unmapped.push(format!("PORT|{p}: no speed; 100G assumed"));
            None
        }
    };
    let mtu = match db.field("PORT", p, "mtu")? {
        Some(s) => {
            let m = db.num(&["PORT", p, "mtu"], &s, u64::MAX)?;
            if m > super::super::MAX_MTU {
                unmapped.push(format!("PORT|{p}: mtu {m} above the simulator's 9216; 9216 used"));
            }
            Some(m.clamp(1, super::super::MAX_MTU))
        }
        None => None,
    };
    let mut cable_m = None;
    if let Some(t) = db.table("CABLE_LENGTH") {
        for (k, v) in t {
            if let Some(Value::String(len)) = v.get(p) {
                let path = ["CABLE_LENGTH", k.as_str(), p];
                let Some(m) = len.trim().strip_suffix('m') else {
                    return Err(db.err(&path, &format!("found {len:?}; expected metres such as \"5m\"")));
                };
                cable_m = Some(db.num(&path, m, super::super::MAX_LENGTH_M)?);
            }
        }
    }
    if cable_m.is_none() {
        unmapped.push(format!("CABLE_LENGTH: none for {p}; 5 m assumed"));
    }
    let mut pfc = 0u8;
    let mut map_name = None;
    for (k, _) in &qmaps {
        if let Some(s) = db.field("PORT_QOS_MAP", k, "pfc_enable")? {
            pfc |= db.prios(&["PORT_QOS_MAP", k, "pfc_enable"], &s)?;
        }
        if let Some(m) = db.field("PORT_QOS_MAP", k, "dscp_to_tc_map")? {
            map_name = Some((k.clone(), reference(&m).to_string()));
        }
        if let Some(m) = db.field("PORT_QOS_MAP", k, "tc_to_pg_map")? {
            tc_to_pg_note(db, p, reference(&m), pfc, unmapped)?;
        }
        if db.field("PORT_QOS_MAP", k, "dot1p_to_tc_map")?.is_some() {
            unmapped.push(format!(
                "PORT_QOS_MAP|{k}: dot1p_to_tc_map not read (under PCP trust the simulator's TC is the PCP)"
            ));
        }
    }
    if map_name.is_none()
        && let Some(m) = db.field("PORT_QOS_MAP", "global", "dscp_to_tc_map")?
    {
        map_name = Some(("global".into(), reference(&m).to_string()));
    }
    let map = match map_name {
        None => None,
        Some((k, name)) => {
            let Some(entries) = db.table("DSCP_TO_TC_MAP").and_then(|t| t.get(&name)) else {
                return Err(db.err(
                    &["PORT_QOS_MAP", &k, "dscp_to_tc_map"],
                    &format!("names DSCP_TO_TC_MAP {name:?}, which the file does not have"),
                ));
            };
            let Some(obj) = entries.as_object() else {
                return Err(db.err(
                    &["DSCP_TO_TC_MAP", &name],
                    "found a value that is not an object; expected DSCP → TC entries",
                ));
            };
            // SONiC leaves an unlisted DSCP in TC 0
            let mut m = [0u8; 64];
            for (d, tc) in obj {
                let path = ["DSCP_TO_TC_MAP", name.as_str(), d.as_str()];
                let d = db.num(&path, d, 63)? as usize;
                let tc = match tc {
                    Value::String(s) => db.num(&path, s, 7)?,
                    other => return Err(db.err(&path, &format!("found {other}; expected a TC \"0\"..\"7\""))),
                };
                m[d] = tc as u8;
            }
            Some((name, m))
        }
    };
    Ok(PortQos {
        name: p.to_string(),
        speed_mbps,
        mtu,
        cable_m,
        pfc,
        map,
    })
}

/// A TC → PG map that is not the identity on the lossless TCs: the simulator's PG is the TC.
fn tc_to_pg_note(
    db: &Db<'_>,
    p: &str,
    name: &str,
    pfc: u8,
    unmapped: &mut Vec<String>,
) -> Result<(), ImportError> {
    let Some(obj) = db
        .table("TC_TO_PRIORITY_GROUP_MAP")
        .and_then(|t| t.get(name))
        .and_then(|v| v.as_object())
    else {
        return Ok(());
    };
    for (tc, pg) in obj {
        let (Ok(tc), Some(pg)) = (tc.parse::<u8>(), pg.as_str().and_then(|s| s.parse::<u8>().ok())) else {
            continue;
        };
        if tc < 8 && pfc & (1 << tc) != 0 && tc != pg {
            unmapped.push(format!(
                "TC_TO_PRIORITY_GROUP_MAP {name}: lossless TC {tc} → PG {pg} on {p}; the simulator buffers a TC in its own PG"
            ));
        }
    }
    Ok(())
}

/// The profile of each port's lossless PGs (in port order; `None`: no `BUFFER_PG` for them).
fn buffer_profiles(
    db: &Db<'_>,
    qos: &[PortQos],
    unmapped: &mut Vec<String>,
) -> Result<Vec<Option<Profile>>, ImportError> {
    let mut out = Vec::new();
    for q in qos {
        let mut found = None;
        for (k, rest) in db.for_port("BUFFER_PG", &q.name) {
            let mask = db.prios(&["BUFFER_PG", &k], &rest)?;
            if mask & q.pfc == 0 {
                continue;
            }
            let Some(prof) = db.field("BUFFER_PG", &k, "profile")? else {
                continue;
            };
            let name = reference(&prof).to_string();
            if name == "NULL" {
                unmapped.push(format!(
                    "BUFFER_PG|{k}: profile NULL (dynamic buffer model, headroom computed by the switch); the simulator's default headroom is used"
                ));
                continue;
            }
            if !db.table("BUFFER_PROFILE").is_some_and(|t| t.contains_key(&name)) {
                return Err(db.err(
                    &["BUFFER_PG", &k, "profile"],
                    &format!("names BUFFER_PROFILE {name:?}, which the file does not have"),
                ));
            }
            let f = |field: &str| db.field("BUFFER_PROFILE", &name, field);
            let path = |field: &'static str| ["BUFFER_PROFILE", name.as_str(), field];
            let xoff = f("xoff")?
                .map(|s| db.num(&path("xoff"), &s, u64::MAX))
                .transpose()?;
            let threshold = match (f("dynamic_th")?, f("static_th")?) {
                (Some(d), _) => Some(Ok(d.trim().parse::<i64>().map_err(|_| {
                    db.err(
                        &path("dynamic_th"),
                        &format!("found {d:?}; expected an integer (alpha = 2^dynamic_th)"),
                    )
                })?)),
                (None, Some(s)) => Some(Err(db.num(&path("static_th"), &s, u64::MAX)?)),
                (None, None) => None,
            };
            let xon_offset = f("xon_offset")?
                .map(|s| db.num(&path("xon_offset"), &s, u64::MAX))
                .transpose()?;
            if f("xon")?.is_some() && xon_offset.is_none() {
                unmapped.push(format!("BUFFER_PROFILE|{name}: xon (an absolute XON threshold) not mapped; the simulator's XON is xon_offset_bytes below the XOFF threshold"));
            }
            if let Some(size) = f("size")?
                && size.trim() != "0"
            {
                unmapped.push(format!("BUFFER_PROFILE|{name}: size {size} (the PG's reserved bytes) not mapped; the shared buffer reserves only headroom"));
            }
            let pool_size = match f("pool")? {
                None => None,
                Some(pool) => {
                    let pool = reference(&pool).to_string();
                    if db.field("BUFFER_POOL", &pool, "xoff")?.is_some() {
                        unmapped.push(format!("BUFFER_POOL|{pool}: xoff (a shared headroom pool) not mapped; headroom is reserved per port and priority"));
                    }
                    db.field("BUFFER_POOL", &pool, "size")?
                        .map(|s| {
                            db.num(
                                &["BUFFER_POOL", &pool, "size"],
                                &s,
                                crate::scenario::MAX_BUFFER_BYTES,
                            )
                        })
                        .transpose()?
                }
            };
            let p = Profile {
                name,
                xoff,
                threshold,
                xon_offset,
                pool_size,
            };
            if found.as_ref().is_some_and(|f: &Profile| *f != p) {
                unmapped.push(format!(
                    "BUFFER_PG: {} has more than one lossless profile; the first is used",
                    q.name
                ));
            } else if found.is_none() {
                found = Some(p);
            }
        }
        out.push(found);
    }
    unmapped.sort();
    unmapped.dedup();
    Ok(out)
}

/// The ECN marking of each port (its lossless queues' WRED profile) and its queues.
fn ecn_profiles(
    db: &Db<'_>,
    qos: &[PortQos],
    unmapped: &mut Vec<String>,
) -> Result<Vec<Option<(Ecn, u8)>>, ImportError> {
    let mut out = Vec::new();
    for q in qos {
        let mut found: Option<(Ecn, u8)> = None;
        for (k, rest) in db.for_port("QUEUE", &q.name) {
            let Some(w) = db.field("QUEUE", &k, "wred_profile")? else {
                continue;
            };
            let mask = db.prios(&["QUEUE", &k], &rest)?;
            let name = reference(&w).to_string();
            if !db.table("WRED_PROFILE").is_some_and(|t| t.contains_key(&name)) {
                return Err(db.err(
                    &["QUEUE", &k, "wred_profile"],
                    &format!("names WRED_PROFILE {name:?}, which the file does not have"),
                ));
            }
            let f = |field: &str| db.field("WRED_PROFILE", &name, field);
            let mode = f("ecn")?.unwrap_or_else(|| "ecn_none".into());
            if mode == "ecn_none" || f("wred_green_enable")?.as_deref() != Some("true") {
                unmapped.push(format!(
                    "WRED_PROFILE|{name}: WRED without green ECN marking (ecn {mode:?}); the simulator does not drop early"
                ));
                continue;
            }
            let path = |field: &'static str| ["WRED_PROFILE", name.as_str(), field];
            let get = |field: &'static str, max: u64| -> Result<u64, ImportError> {
                match f(field)? {
                    Some(s) => db.num(&path(field), &s, max),
                    None => Err(db.err(&path(field), "missing; expected it with ecn marking")),
                }
            };
            let e = Ecn {
                kmin: get("green_min_threshold", u64::MAX)?,
                kmax: get("green_max_threshold", u64::MAX)?,
                percent: get("green_drop_probability", 100)?,
                name,
            };
            if e.kmin >= e.kmax || e.percent == 0 {
                unmapped.push(format!(
                    "WRED_PROFILE|{}: green thresholds {} ≥ {} or probability 0; no marking",
                    e.name, e.kmin, e.kmax
                ));
                continue;
            }
            match &mut found {
                None => found = Some((e, mask)),
                Some((f, m)) if *f == e => *m |= mask,
                Some(_) => unmapped.push(format!(
                    "QUEUE: {} has more than one WRED profile; the first is used",
                    q.name
                )),
            }
        }
        out.push(found);
    }
    Ok(out)
}

/// Each port's pfcwd, with the global poll interval.
fn watchdogs(
    db: &Db<'_>,
    qos: &[PortQos],
    unmapped: &mut Vec<String>,
) -> Result<(Vec<Option<Wd>>, Option<u64>), ImportError> {
    let poll = db
        .field("PFC_WD", "GLOBAL", "POLL_INTERVAL")?
        .map(|s| db.num(&["PFC_WD", "GLOBAL", "POLL_INTERVAL"], &s, u64::MAX))
        .transpose()?;
    let mut out = Vec::new();
    for q in qos {
        let p = q.name.as_str();
        let f = |field: &str| db.field("PFC_WD", p, field);
        let (Some(d), Some(r)) = (f("detection_time")?, f("restoration_time")?) else {
            out.push(None);
            continue;
        };
        let d = db.num(&["PFC_WD", p, "detection_time"], &d, u64::MAX)?;
        let r = db.num(&["PFC_WD", p, "restoration_time"], &r, u64::MAX)?;
        let action = f("action")?.unwrap_or_else(|| "drop".into());
        if !["drop", "forward", "alert"].contains(&action.as_str()) {
            return Err(db.err(
                &["PFC_WD", p, "action"],
                &format!("found {action:?}; expected drop, forward or alert"),
            ));
        }
        if !(100..=5000).contains(&d) || !(100..=60_000).contains(&r) {
            unmapped.push(format!(
                "PFC_WD|{p}: detection {d} ms / restoration {r} ms outside the simulator's 100 ms … 5 s / 100 ms … 60 s; no watchdog"
            ));
            out.push(None);
            continue;
        }
        out.push(Some((d, r, action)));
    }
    Ok((out, poll))
}

/// Rate text of a speed in Mb/s.
fn rate(mbps: u64) -> String {
    if mbps.is_multiple_of(1000) {
        format!("{}G", mbps / 1000)
    } else {
        format!("{mbps}M")
    }
}

/// Alpha `2^dynamic_th` as TOML, when the simulator has it (1/1024 … 64).
fn alpha(dth: i64) -> Option<String> {
    match dth {
        0..=6 => Some(format!("{}.0", 1u64 << dth)),
        -10..=-1 => Some(format!("{}", 1.0 / f64::from(1u32 << (-dth)))),
        _ => None,
    }
}

fn write_toml(
    db: &Db<'_>,
    qos: &[PortQos],
    profiles: &[Option<Profile>],
    ecn: &[Option<(Ecn, u8)>],
    wd: &(Vec<Option<Wd>>, Option<u64>),
    unmapped: &mut Vec<String>,
) -> String {
    let names: Vec<String> = qos.iter().map(|q| q.name.clone()).collect();
    let sw = "sonic";
    let mut body = String::new();
    // the switch's one-per-switch settings: from the first port that has them
    let first_profile = profiles.iter().flatten().next();
    let largest = profiles
        .iter()
        .flatten()
        .filter(|p| p.xoff.is_some())
        .max_by_key(|p| p.xoff);
    let headroom = largest.and_then(|p| p.xoff);
    if profiles
        .iter()
        .flatten()
        .filter_map(|p| p.xoff)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1
    {
        unmapped.push(format!(
            "BUFFER_PROFILE xoff differs between the ports; the switch has one headroom_bytes per (port, priority): the largest, {} bytes",
            headroom.unwrap_or(0)
        ));
    }
    let pairs: u64 = qos.iter().map(|q| u64::from(q.pfc.count_ones())).sum();
    let pool = first_profile.and_then(|p| p.pool_size);
    let buffer = match (pool, headroom) {
        (Some(pool), Some(h)) => pool.saturating_add(h.saturating_mul(pairs)),
        (Some(pool), None) => pool,
        (None, _) => {
            unmapped.push("BUFFER_POOL: no pool size for the lossless PGs; a 32 MiB buffer assumed".into());
            32 << 20
        }
    };
    let _ = writeln!(body, "[[switch]]\nname = {}", quoted(sw));
    let _ = writeln!(
        body,
        "buffer_bytes = {buffer}   # the lossless pool{} plus headroom_bytes for each of the {pairs} lossless (port, priority) pairs",
        pool.map_or(String::new(), |p| format!(" ({p} B)"))
    );
    if let Some(h) = headroom {
        let _ = writeln!(
            body,
            "headroom_bytes = {h}   # BUFFER_PROFILE {} xoff",
            largest.map_or("", |p| &p.name)
        );
    }
    match first_profile.and_then(|p| p.threshold) {
        Some(Ok(d)) => match alpha(d) {
            Some(a) => {
                let _ = writeln!(
                    body,
                    "threshold = \"dynamic\"\nalpha = {a}   # 2^dynamic_th, dynamic_th = {d}"
                );
            }
            None => unmapped.push(format!(
                "BUFFER_PROFILE dynamic_th {d}: alpha 2^{d} outside the simulator's 1/1024 … 64; alpha 1 used"
            )),
        },
        Some(Err(s)) => {
            let _ = writeln!(
                body,
                "threshold = \"static\"\nstatic_threshold_bytes = {s}   # static_th"
            );
        }
        None => {}
    }
    if let Some(x) = first_profile.and_then(|p| p.xon_offset) {
        let _ = writeln!(body, "xon_offset_bytes = {x}");
    }
    if let Some(m) = qos.iter().filter_map(|q| q.mtu).max() {
        let _ = writeln!(body, "mtu = {m}");
    }
    let (wds, poll) = wd;
    if let Some((d, r, a)) = wds.iter().flatten().next() {
        let mut t = format!("pfcwd = {{ detection = \"{d}ms\", restoration = \"{r}ms\", action = \"{a}\"");
        if let Some(p) = poll {
            if (1..=1000).contains(p) && *p <= *d && *p <= *r {
                let _ = write!(t, ", poll = \"{p}ms\"");
            } else {
                unmapped.push(format!("PFC_WD GLOBAL POLL_INTERVAL {p} ms: not mapped (the simulator polls at most every 1 s and not slower than detection)"));
            }
        }
        t.push_str(" }");
        let _ = writeln!(body, "{t}");
        if wds.iter().any(|w| w.as_ref() != wds.iter().flatten().next()) {
            unmapped.push("PFC_WD differs between the ports (or is missing on some); the simulator's pfcwd covers every lossless queue of the switch: the first port's is used".into());
        }
    }
    if let Some((e, _)) = ecn.iter().flatten().next() {
        let prios: u8 = ecn.iter().flatten().map(|(_, m)| *m).fold(0, |a, m| a | m);
        let _ = writeln!(
            body,
            "ecn = {{ kmin_bytes = {}, kmax_bytes = {}, pmax = {}, priorities = {} }}   # WRED_PROFILE {} (green)",
            e.kmin,
            e.kmax,
            e.percent as f64 / 100.0,
            prio_list(prios),
            e.name
        );
        if ecn.iter().any(|x| x.as_ref().map(|(e2, _)| e2) != Some(e)) {
            unmapped.push("WRED_PROFILE differs between the ports (or is missing on some); the switch marks every port alike: the first port's is used".into());
        }
    }
    body.push('\n');
    for q in qos {
        let h = node_name("h-", &q.name);
        let _ = writeln!(body, "[[host]]\nname = {}   # faces {}\n", quoted(&h), q.name);
    }
    for q in qos {
        let h = node_name("h-", &q.name);
        let _ = writeln!(body, "[[link]]\na = {}\nb = {}", quoted(&h), quoted(sw));
        let _ = writeln!(body, "rate = \"{}\"", rate(q.speed_mbps.unwrap_or(100_000)));
        let _ = writeln!(body, "length_m = {}", q.cable_m.unwrap_or(5));
        if let Some(m) = q.mtu {
            let _ = writeln!(body, "mtu = {m}");
        }
        if q.pfc != 0 {
            let _ = writeln!(
                body,
                "flow_control = \"pfc\"\npfc_priorities = {}   # pfc_enable",
                prio_list(q.pfc)
            );
        } else {
            let _ = writeln!(body, "flow_control = \"off\"   # no pfc_enable");
        }
        if let Some((name, m)) = &q.map {
            let _ = writeln!(
                body,
                "b_end = {{ trust = \"dscp\", dscp2prio = {} }}   # DSCP_TO_TC_MAP {name}",
                super::dscp2prio_toml(m)
            );
        }
        body.push('\n');
    }
    // the traffic: every host's QP into the last port's host
    let dst = qos.last().map(|q| node_name("h-", &q.name)).unwrap_or_default();
    let first = &qos[0];
    let map = first.map.as_ref().map_or(DEFAULT_DSCP_MAP, |(_, m)| *m);
    let (dscp, prio, why) = match (first.map.is_some(), roce_dscp(&map, first.pfc)) {
        (true, Some((d, p))) => (
            Some(d),
            p,
            format!("DSCP {d} → TC {p}, a PFC-enabled TC of {}", first.name),
        ),
        (false, _) => {
            let p = if first.pfc == 0 {
                0
            } else {
                first.pfc.trailing_zeros() as u8
            };
            (None, p, format!("PCP trust on {}: priority {p}", first.name))
        }
        (true, None) => (
            None,
            0,
            format!("no PFC-enabled TC on {}: priority 0, lossy", first.name),
        ),
    };
    let mut traffic = String::from("[qp]\ncc = \"dcqcn\"\npreset = \"connectx\"\n");
    if let Some(d) = dscp {
        let _ = writeln!(traffic, "dscp = {d}   # {why}");
    }
    traffic.push('\n');
    for q in &qos[..qos.len() - 1] {
        let h = node_name("h-", &q.name);
        let _ = writeln!(
            traffic,
            "[[flow]]\nname = {}\nsrc = {}\ndst = {}\npriority = {prio}   # {why}\nsize_bytes = 1_000_000\ntransport = \"rocev2\"\n",
            quoted(&node_name("qp-", &q.name)),
            quoted(&h),
            quoted(&dst)
        );
    }
    let what = format!(
        "Written by `lossless import sonic {}` for {}: each port faces a host, every other host sends\n\
         a RoCEv2 QP (1 MB) to {dst}. Keys: examples/scenarios/README.md; what maps: docs/import.md.",
        db.file,
        names.join(", ")
    );
    let mut out = header(&what, unmapped);
    let _ = writeln!(
        out,
        "name = \"sonic-import\"\ndescription = {}\nseed = 1\nduration = \"2ms\"\n",
        quoted(&format!(
            "SONiC config_db.json ports {} as one switch with a RoCEv2 incast",
            names.join(", ")
        ))
    );
    out.push_str(&traffic);
    out.push_str(&body);
    out
}
