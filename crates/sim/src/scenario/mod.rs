//! Scenario files (TOML): topology, links, buffers and thresholds, flow control per link,
//! traffic, duration and seed, RoCEv2 QPs and congestion notification (`[qp]`, `[ecn]`,
//! `[qcn]`), modelling choices (`[model]`); and the built-in scenarios, embedded from
//! `examples/scenarios/*.toml` so that `lossless sim NAME` works anywhere.
//!
//! A wrong file gets an error naming the file, the line, the key, what was found and what is
//! allowed. See `examples/scenarios/four-bridge.toml` for a commented example of every
//! section.

use std::path::Path;

use lossless_proto::units::Duration;

use crate::config::SimConfig;

mod build;
mod buildable;
mod fabric;
mod flows;
pub mod import;
mod link;
mod mtu;
mod pathology;
mod qp;
mod raw;
mod set;
mod topology;

use build::{Ctx, build};
pub use build::{MAX_BUFFER_BYTES, MAX_MTU, MAX_NAME_LEN, is_valid_name};
pub use flows::MAX_CDF_FILE_BYTES;
pub use link::{MAX_LENGTH_M, MAX_LINK_DELAY, MAX_LINK_RATE, MIN_LINK_RATE};
use raw::RawScenario;
pub use set::{SetPaths, UnknownPath};
pub use topology::{MAX_FORWARDING_ENTRIES, MAX_SCENARIO_SIZE};

/// A built-in scenario: name, one-line summary, TOML text.
pub struct Builtin {
    /// Name to run it by.
    pub name: &'static str,
    /// One line about it.
    pub summary: &'static str,
    /// The scenario file.
    pub text: &'static str,
}

/// The built-in scenarios; the first is the default.
pub const BUILTINS: [Builtin; 15] = [
    Builtin {
        name: "four-bridge",
        summary: "document 003 §3.2: congestion spreading from an oversubscribed link back to three clients",
        text: include_str!("../../../../examples/scenarios/four-bridge.toml"),
    },
    Builtin {
        name: "two-chip",
        summary: "document 002: module A ← MAC0 ⇄ MAC1 ← module B, PAUSE release cases 1 and 2",
        text: include_str!("../../../../examples/scenarios/two-chip.toml"),
    },
    Builtin {
        name: "incast",
        summary: "N senders → one receiver through one switch at 100 Gb/s (params.senders)",
        text: include_str!("../../../../examples/scenarios/incast.toml"),
    },
    Builtin {
        name: "ets-7-13-80",
        summary: "802.1Qaz ETS at 100 Gb/s: a 20 Gb/s strict class, then ETS classes sharing the rest 7/13/80",
        text: include_str!("../../../../examples/scenarios/ets-7-13-80.toml"),
    },
    Builtin {
        name: "dcbx-adopt",
        summary: "DCBX: willing hosts adopt a non-willing switch's PFC on priority 3 before traffic starts",
        text: include_str!("../../../../examples/scenarios/dcbx-adopt.toml"),
    },
    Builtin {
        name: "dcbx-disagree",
        summary: "DCBX: both ends unwilling with different PFC vectors; PFC not operational, drops",
        text: include_str!("../../../../examples/scenarios/dcbx-disagree.toml"),
    },
    Builtin {
        name: "storm",
        summary: "a stalled NIC's endless XOFF spreads through a 2-spine, 4-leaf Clos to every host; no watchdog",
        text: include_str!("../../../../examples/scenarios/storm.toml"),
    },
    Builtin {
        name: "storm-nic",
        summary: "the storm with mlx5 NIC storm prevention (100 ms) on the stalled host: contained",
        text: include_str!("../../../../examples/scenarios/storm-nic.toml"),
    },
    Builtin {
        name: "storm-pfcwd",
        summary: "the storm with SONiC pfcwd (200 ms, drop) on every switch: contained",
        text: include_str!("../../../../examples/scenarios/storm-pfcwd.toml"),
    },
    Builtin {
        name: "deadlock-ring",
        summary: "three switches in a ring with routes that close the loop: a PFC deadlock, found as a cycle",
        text: include_str!("../../../../examples/scenarios/deadlock-ring.toml"),
    },
    Builtin {
        name: "deadlock-bounce",
        summary: "leaf-spine, one failed link, traffic bounced off a leaf that has not reconverged: a loop that deadlocks",
        text: include_str!("../../../../examples/scenarios/deadlock-bounce.toml"),
    },
    Builtin {
        name: "four-bridge-cn",
        summary: "document 003 §3.3: four-bridge with ECN and DCQCN, side by side with CN off (PFC falls, the victim recovers)",
        text: include_str!("../../../../examples/scenarios/four-bridge-cn.toml"),
    },
    Builtin {
        name: "incast-dcqcn",
        summary: "N RoCEv2 QPs → one receiver at 100 Gb/s; DCQCN converges to fair shares (params.senders)",
        text: include_str!("../../../../examples/scenarios/incast-dcqcn.toml"),
    },
    Builtin {
        name: "incast-cc",
        summary: "16 RoCEv2 QPs → one receiver, 1 MB each then 10 KB each, under the CC of qp.cc (half of cc-compare)",
        text: include_str!("../../../../examples/scenarios/incast-cc.toml"),
    },
    Builtin {
        name: "fat-tree-websearch",
        summary: "k = 4 fat tree, WebSearch at 30 % for 5 ms, every flow a RoCEv2 QP under the CC of qp.cc (half of cc-compare)",
        text: include_str!("../../../../examples/scenarios/fat-tree-websearch.toml"),
    },
];

/// Finds a built-in scenario by name.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// A scenario file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or built-in name).
    pub file: String,
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// The key at fault, formatted as "key `x`: " (empty when unknown).
    pub key: String,
    /// What was found and what is allowed.
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}{}", self.file, self.line, self.key, self.message)
        } else {
            write!(f, "{}: {}{}", self.file, self.key, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Everything that adjusts a scenario when it is loaded.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `path=value` assignments (TOML values; `senders=32` sets `params.senders`).
    pub set: Vec<String>,
    /// Replaces the seed.
    pub seed: Option<u64>,
    /// Replaces the duration.
    pub duration: Option<Duration>,
}

// ---------- units in text ----------

/// Parses a duration such as `10us`, `2.5ms`, `100ns`, `1s`, `672ps` (µs also accepted),
/// exactly to the picosecond.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let t = s.trim();
    let units: [(&str, u128); 6] = [
        ("ps", 1),
        ("ns", 1_000),
        ("us", 1_000_000),
        ("µs", 1_000_000),
        ("ms", 1_000_000_000),
        ("s", 1_000_000_000_000),
    ];
    let bad = || DurationError::NotADuration(s.to_string());
    let (num, mult) = units
        .iter()
        .find_map(|(u, m)| t.strip_suffix(u).map(|n| (n.trim(), *m)))
        .ok_or_else(bad)?;
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let mut ps: u128 = int
        .parse::<u128>()
        .map_err(|_| bad())?
        .checked_mul(mult)
        .ok_or_else(bad)?;
    let mut scale = mult;
    for c in frac.bytes() {
        if scale % 10 != 0 {
            return Err(DurationError::FinerThanPicosecond(s.to_string()));
        }
        scale /= 10;
        ps += (c - b'0') as u128 * scale;
    }
    Ok(Duration::from_ps(ps))
}

/// Why the text of a duration was refused ([`parse_duration`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Not a number with one of the units: the text found.
    NotADuration(String),
    /// A fraction finer than a picosecond: the text found.
    FinerThanPicosecond(String),
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DurationError::NotADuration(s) => write!(
                f,
                "found {s:?}, allowed a number with a unit ps, ns, us, ms or s (e.g. \"10us\", \"2.5ms\")"
            ),
            DurationError::FinerThanPicosecond(s) => write!(f, "found {s:?}: finer than a picosecond"),
        }
    }
}

impl std::error::Error for DurationError {}

fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
    let (line, key) = match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let line = text[..start].matches('\n').count() + 1;
            let line_text = text.lines().nth(line - 1).unwrap_or("").trim();
            // the table the error is in: the header on the error's line, or the last before it
            // (a header, without its comment; a line that is not a whole header names none)
            let header = |l: &str| {
                let h = l.split('#').next().unwrap_or("").trim();
                (h.starts_with('[') && h.ends_with(']') && h.len() > 2).then(|| h.to_string())
            };
            let table = header(line_text).or_else(|| {
                text.lines()
                    .take(line - 1)
                    .map(str::trim)
                    .filter_map(header)
                    .last()
            });
            let key = if line_text.starts_with('[') {
                String::new()
            } else {
                line_text
                    .split_once('=')
                    .map(|(k, _)| k.trim().to_string())
                    .unwrap_or_default()
            };
            let key = match (key.is_empty(), table) {
                (false, Some(t)) => format!("key `{key}` in {t}: "),
                (false, None) => format!("key `{key}`: "),
                (true, Some(t)) => format!("in {t}: "),
                (true, None) => String::new(),
            };
            (line, key)
        }
        None => (0, String::new()),
    };
    ScenarioError {
        file: file.to_string(),
        line,
        key,
        message: e.message().trim().to_string(),
    }
}

/// The value of a `--set PATH=VALUE` (or of one `--sweep` value): one TOML value (`32`,
/// `"off"`, `[3, 4]`, `{ a = 1 }`), or a bare word, which becomes a string (`100G`, `2.5ms`).
/// Anything after the value (a second line, another key) is refused, never dropped.
pub fn parse_set_value(value: &str) -> Result<toml::Value, SetValueError> {
    match format!("v = {value}").parse::<toml::Table>() {
        Ok(mut t) => {
            let v = t
                .remove("v")
                .ok_or_else(|| SetValueError::NoValue(value.to_string()))?;
            if let Some(k) = t.keys().next() {
                return Err(SetValueError::TomlAfter {
                    value: value.to_string(),
                    key: k.clone(),
                });
            }
            Ok(v)
        }
        // a bare word is a string; text that looks like TOML but is not is an error
        Err(_) if is_bare_word(value) => Ok(toml::Value::String(value.to_string())),
        Err(e) => Err(SetValueError::NotOneValue {
            value: value.to_string(),
            reason: e.message().trim().to_string(),
        }),
    }
}

/// Why the value of a `--set` or `--sweep` was refused ([`parse_set_value`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetValueError {
    /// TOML that holds no value: the text found.
    NoValue(String),
    /// TOML after the value: the text found and the first key after the value.
    TomlAfter {
        /// The text found.
        value: String,
        /// The key after the value.
        key: String,
    },
    /// Neither one TOML value nor a bare word: the text found and TOML's reason.
    NotOneValue {
        /// The text found.
        value: String,
        /// TOML's message.
        reason: String,
    },
}

impl std::fmt::Display for SetValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetValueError::NoValue(value) => write!(f, "found {value:?}, allowed one TOML value"),
            SetValueError::TomlAfter { value, key } => write!(
                f,
                "found {value:?}: TOML after the value (key `{key}`); allowed one value (set each \
                 key with its own --set)"
            ),
            SetValueError::NotOneValue { value, reason } => write!(
                f,
                "found {value:?}, not one TOML value ({reason}); allowed a number, a \"string\", an array, \
                 a table or a bare word"
            ),
        }
    }
}

impl std::error::Error for SetValueError {}

/// Text `--set` takes as a string without quotes: one line, none of TOML's delimiters.
fn is_bare_word(s: &str) -> bool {
    !s.trim().is_empty() && s.chars().all(|c| !c.is_control() && !"\"'[]{}=#,".contains(c))
}

/// Sets the scenario value `path` names (see [`SetPaths`]) in `table` to the TOML value
/// `value` (a bare word becomes a string; see [`parse_set_value`]).
fn set_path(table: &mut toml::Table, path: &str, value: &str) -> Result<(), SetPathError> {
    let v = parse_set_value(value).map_err(SetPathError::Value)?;
    let parts = SetPaths::of(table).canonical(path).map_err(SetPathError::Path)?;
    let (last, dirs) = parts.split_last().ok_or(SetPathError::Empty)?;
    let mut cur = table;
    for d in dirs {
        let next = cur
            .entry(d.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match next {
            toml::Value::Table(t) => t,
            _ => return Err(SetPathError::NotATable(d.to_string())),
        };
    }
    cur.insert(last.to_string(), v);
    Ok(())
}

/// Why a `--set PATH=VALUE` could not be applied ([`set_path`]).
#[derive(Debug)]
enum SetPathError {
    /// The value.
    Value(SetValueError),
    /// The path names nothing of the scenario.
    Path(UnknownPath),
    /// The path has no part.
    Empty,
    /// A part of the path before the last names a value that is not a table.
    NotATable(String),
}

impl std::fmt::Display for SetPathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetPathError::Value(e) => std::fmt::Display::fmt(e, f),
            SetPathError::Path(e) => std::fmt::Display::fmt(e, f),
            SetPathError::Empty => f.write_str("empty path"),
            SetPathError::NotATable(d) => write!(f, "`{d}` is not a table"),
        }
    }
}

impl std::error::Error for SetPathError {}

/// An error about a `--set` (or `--sweep`) option.
fn option_error(option: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: option.into(),
        line: 0,
        key: String::new(),
        message,
    }
}

/// Loads a scenario from TOML text. `file` names it in errors; `dir` resolves relative
/// paths (CDF files).
pub fn load_str(
    text: &str,
    file: &str,
    dir: Option<&Path>,
    ov: &Overrides,
) -> Result<SimConfig, ScenarioError> {
    if ov.set.is_empty() {
        let raw: RawScenario = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
        return build(
            raw,
            &Ctx {
                file,
                text: Some(text),
            },
            dir,
            ov,
        );
    }
    let mut table: toml::Table = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    for s in &ov.set {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            option_error(
                "--set",
                format!("found {s:?}, allowed PATH=VALUE (e.g. senders=32, defaults.flow_control=\"off\")"),
            )
        })?;
        set_path(&mut table, k.trim(), v.trim())
            .map_err(|m| option_error("--set", format!("{}={}: {m}", k.trim(), v.trim())))?;
    }
    // re-read the edited document as text so that values keep their spans; lines then refer
    // to the edited document, so errors name the key but no line
    let edited = toml::to_string(&table).map_err(|e| ScenarioError {
        file: "--set".into(),
        line: 0,
        key: String::new(),
        message: e.to_string(),
    })?;
    let with_set = format!("{file} (with --set)");
    let raw: RawScenario = toml::from_str(&edited).map_err(|e| {
        let mut err = toml_error(&with_set, &edited, &e);
        err.line = 0;
        err
    })?;
    let ctx = Ctx {
        file: &with_set,
        text: None,
    };
    build(raw, &ctx, dir, ov)
}

/// The text of a scenario file.
fn read_file_text(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.display().to_string(),
        line: 0,
        key: String::new(),
        message: format!("cannot read: {e}"),
    })
}

/// Loads a scenario file.
pub fn load_file(path: &Path, ov: &Overrides) -> Result<SimConfig, ScenarioError> {
    let text = read_file_text(path)?;
    load_str(&text, &path.display().to_string(), path.parent(), ov)
}

/// The text of a built-in scenario by name, or of the file `name_or_path`, and its name for
/// errors.
fn scenario_text(name_or_path: &str) -> Result<(std::borrow::Cow<'static, str>, String), ScenarioError> {
    match builtin(name_or_path) {
        Some(b) => Ok((b.text.into(), format!("{} (built-in)", b.name))),
        None => {
            let path = Path::new(name_or_path);
            read_file_text(path)
                .map(|t| (t.into(), path.display().to_string()))
                .map_err(|mut e| {
                    if !name_or_path.ends_with(".toml") {
                        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
                        e.message = format!(
                            "not a built-in scenario (allowed: {}) and {}",
                            names.join(", "),
                            e.message
                        );
                    }
                    e
                })
        }
    }
}

/// Loads a built-in scenario by name, or a file if `name_or_path` is not a built-in name.
pub fn load(name_or_path: &str, ov: &Overrides) -> Result<SimConfig, ScenarioError> {
    let (text, file) = scenario_text(name_or_path)?;
    let dir = builtin(name_or_path)
        .is_none()
        .then(|| Path::new(name_or_path).parent())
        .flatten();
    load_str(&text, &file, dir, ov)
}

/// Checks the paths a sweep varies (`--sweep PATH=...`, in order) against the scenario
/// `name_or_path` and the other options: each names a value of the scenario (as `--set`
/// paths do), and no value is swept twice, also set by `--set`, or replaced by `--seed` or
/// `--duration` (every point would then be the same).
pub fn check_sweep(name_or_path: &str, ov: &Overrides, paths: &[&str]) -> Result<(), ScenarioError> {
    let (text, file) = scenario_text(name_or_path)?;
    check_sweep_str(&text, &file, ov, paths)
}

/// [`check_sweep`] for a scenario's text already read (`file` names it in errors).
pub fn check_sweep_str(text: &str, file: &str, ov: &Overrides, paths: &[&str]) -> Result<(), ScenarioError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    let known = SetPaths::of(&table);
    let canonical = |p: &str, option: &str| {
        known
            .canonical(p)
            .map(|c| c.join("."))
            .map_err(|m| option_error(option, m.to_string()))
    };
    let mut seen: Vec<(String, &str)> = Vec::new();
    for set in &ov.set {
        if let Some((k, _)) = set.split_once('=') {
            seen.push((canonical(k.trim(), "--set")?, "--set"));
        }
    }
    if ov.seed.is_some() {
        seen.push(("seed".into(), "--seed"));
    }
    if ov.duration.is_some() {
        seen.push(("duration".into(), "--duration"));
    }
    let n_options = seen.len();
    for (i, p) in paths.iter().enumerate() {
        let c = canonical(p, "--sweep")?;
        if let Some(k) = seen.iter().position(|(s, _)| *s == c) {
            let by = if k < n_options {
                format!("{} also sets it", seen[k].1)
            } else {
                format!("--sweep {} already sweeps it", paths[k - n_options])
            };
            return Err(option_error(
                "--sweep",
                format!(
                    "{p} (axis {}): {by}, so points would repeat; allowed one --sweep per value, \
                     with all its values in it (e.g. seed=1..=5 or senders=2,4,8)",
                    i + 1
                ),
            ));
        }
        seen.push((c, "--sweep"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NodeKind;

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration("10us").unwrap(), Duration::from_us(10));
        assert_eq!(parse_duration("2.5ms").unwrap(), Duration::from_us(2_500));
        assert_eq!(parse_duration("20.24us").unwrap(), Duration::from_ns(20_240));
        assert_eq!(parse_duration("672ps").unwrap(), Duration::from_ps(672));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("1.5ps").is_err());
        assert!(parse_duration("-1us").is_err());
    }

    #[test]
    fn every_builtin_loads() {
        for b in BUILTINS {
            let c = load(b.name, &Overrides::default()).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert_eq!(c.name, b.name);
        }
    }

    #[test]
    fn a_wrong_value_names_file_line_key_found_and_allowed() {
        let text = "name = \"x\"\nduration = \"1us\"\n[[host]]\nname = \"h\"\n[[link]]\na = \"h\"\nb = \"nope\"\nrate = \"100G\"\n";
        let e = load_str(text, "bad.toml", None, &Overrides::default()).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("bad.toml", 7));
        assert!(e.key.contains("`b`"), "{e}");
        assert!(
            e.message.contains("\"nope\"") && e.message.contains("allowed"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_key_is_reported_with_its_line_and_the_allowed_keys() {
        let text =
            "name = \"x\"\nduration = \"1us\"\n[[switch]]\nname = \"s\"\nbuffer_bytes = 10\nbufer = 3\n";
        let e = load_str(text, "bad.toml", None, &Overrides::default()).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        assert!(
            e.to_string().contains("bufer") && e.to_string().contains("buffer_bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_rate_says_what_is_allowed() {
        let text = "name = \"x\"\nduration = \"1us\"\n[defaults]\nrate = \"fast\"\n[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\n";
        let e = load_str(text, "r.toml", None, &Overrides::default()).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("100G"), "{e}");
    }

    #[test]
    fn an_mtu_beyond_jumbo_frames_is_refused() {
        let text = "name = \"x\"\nduration = \"1us\"\n[defaults]\nmtu = 100000\n";
        let e = load_str(text, "m.toml", None, &Overrides::default()).unwrap_err();
        assert!(
            e.to_string().contains("mtu") && e.to_string().contains("9216"),
            "{e}"
        );
    }

    #[test]
    fn set_overrides_params_by_short_name() {
        let ov = Overrides {
            set: vec!["senders=5".into()],
            ..Default::default()
        };
        let c = load("incast", &ov).unwrap();
        let hosts = c
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Host(_)))
            .count();
        assert_eq!(hosts, 6);
    }

    #[test]
    fn trailing_toml_after_a_set_value_is_refused_not_dropped() {
        for value in ["5\nbogus = 1", "5\n[params]\nx = 2", "\"off\"\nseed = 3"] {
            let ov = Overrides {
                set: vec![format!("senders={value}")],
                ..Default::default()
            };
            let e = load("incast", &ov).unwrap_err();
            assert_eq!(e.file, "--set", "{e}");
            assert!(e.message.contains("TOML after the value"), "{value:?}: {e}");
        }
        // one value, a comment, a bare word: as before
        assert_eq!(parse_set_value("32 # senders").unwrap(), toml::Value::Integer(32));
        assert_eq!(
            parse_set_value("100G").unwrap(),
            toml::Value::String("100G".into())
        );
        assert!(
            parse_set_value("[3, 4")
                .unwrap_err()
                .to_string()
                .contains("not one TOML value")
        );
    }
}
