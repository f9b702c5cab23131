//! `--set PATH=VALUE` and `--sweep PATH=...`: which scenario key a path names. A path is
//! a top-level value (`seed`, `duration`, ...), a parameter of the scenario's `[params]`
//! (`senders`, `params.senders` or `incast.senders` for the scenario named `incast`), or a
//! `[defaults]` key (`defaults.rate`), a key of the congestion-notification and model tables
//! (`qp.preset`, `qp.dcqcn.rpg_ai_rate`, `ecn.kmin_bytes`, `qcn.qeq_bytes`, `model.preset`);
//! anything else is refused with the list of known paths.

use serde::Deserialize;
use serde::de::{self, Visitor};

use super::fabric::RawFabric;
use super::qp::{RawEcn, RawQcn, RawQp};
use super::raw::{RawLinkParams, RawModel, RawScenario};

/// The field names of a struct that serde derives `Deserialize` for (as it declares them).
fn struct_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Capture(Option<&'static [&'static str]>);
    impl<'de> de::Deserializer<'de> for &mut Capture {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(de::Error::custom("fields captured"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut c = Capture(None);
    let _ = T::deserialize(&mut c);
    c.0.unwrap_or(&[])
}

/// Top-level keys that hold tables or arrays of tables (not settable by a path).
const TABLES: [&str; 18] = [
    "params", "defaults", "host", "switch", "link", "flow", "workload", "signal", "pfcwd", "route", "event",
    "deadlock", "victims", "model", "qp", "ecn", "qcn", "fabric",
];

/// The tables of single keys a path may name a key of, with their keys.
fn key_tables() -> [(&'static str, &'static [&'static str]); 5] {
    [
        ("fabric", struct_fields::<RawFabric>()),
        ("model", struct_fields::<RawModel>()),
        ("qp", struct_fields::<RawQp>()),
        ("ecn", struct_fields::<RawEcn>()),
        ("qcn", struct_fields::<RawQcn>()),
    ]
}

/// Sub-tables of `[qp]` whose keys are the engines' own parameter names (the engine refuses
/// an unknown one when the scenario loads, naming the allowed ones).
const QP_ENGINE_TABLES: [&str; 7] = ["dcqcn", "qcn", "dctcp", "hpcc", "hpcc_pint", "timely", "rocev2"];

/// What `--set`/`--sweep` paths may name in one scenario (read from its TOML table).
pub struct SetPaths {
    /// The scenario's name (`NAME.param` names a parameter).
    name: String,
    /// The scenario's `[params]`.
    params: Vec<String>,
}

impl SetPaths {
    /// The settable paths of the scenario whose TOML table is `table`.
    pub fn of(table: &toml::Table) -> Self {
        let mut params: Vec<String> = table
            .get("params")
            .and_then(toml::Value::as_table)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        params.sort();
        SetPaths {
            name: table
                .get("name")
                .and_then(toml::Value::as_str)
                .unwrap_or("")
                .to_string(),
            params,
        }
    }

    fn top() -> impl Iterator<Item = &'static str> {
        struct_fields::<RawScenario>()
            .iter()
            .copied()
            .filter(|k| !TABLES.contains(k))
    }

    /// The canonical form of `path` (`params.senders`, `seed`, `defaults.rate`), or why it
    /// names nothing this scenario has, with the known paths.
    pub fn canonical(&self, path: &str) -> Result<Vec<String>, UnknownPath> {
        let parts: Vec<&str> = path.split('.').map(str::trim).collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(UnknownPath::EmptyPart {
                path: path.to_string(),
                known: self.known(),
            });
        }
        let param = |k: &str| self.params.iter().any(|p| p == k);
        let ok = |v: &[&str]| Ok(v.iter().map(|s| s.to_string()).collect());
        match parts[..] {
            [k] if Self::top().any(|t| t == k) => ok(&[k]),
            [k] if param(k) => ok(&["params", k]),
            ["params", k] if param(k) => ok(&["params", k]),
            [n, k] if n == self.name && !self.name.is_empty() && param(k) => ok(&["params", k]),
            ["defaults", k] if struct_fields::<RawLinkParams>().contains(&k) => ok(&["defaults", k]),
            ["defaults", "ets_idle_slope", tc] => ok(&["defaults", "ets_idle_slope", tc]),
            ["qp", t, k] if QP_ENGINE_TABLES.contains(&t) => ok(&["qp", t, k]),
            [t, k] if key_tables().iter().any(|(n, f)| *n == t && f.contains(&k)) => ok(&[t, k]),
            _ => Err(UnknownPath::NotAParameter {
                path: path.to_string(),
                known: self.known(),
            }),
        }
    }

    /// The paths this scenario knows, for error messages.
    fn known(&self) -> String {
        let params = if self.params.is_empty() {
            "none (the scenario has no [params])".to_string()
        } else {
            self.params.join(", ")
        };
        let tables: Vec<String> = key_tables()
            .iter()
            .map(|(n, f)| format!("{n}.KEY with KEY one of {}", f.join(", ")))
            .collect();
        format!(
            "allowed: [params] {params}; top-level {}; defaults.KEY with KEY one of {}; {}; qp.dcqcn.NAME, qp.qcn.NAME, qp.dctcp.NAME, qp.hpcc.NAME, qp.hpcc_pint.NAME, qp.timely.NAME, qp.rocev2.NAME (the engines' parameter names)",
            Self::top().collect::<Vec<_>>().join(", "),
            struct_fields::<RawLinkParams>().join(", "),
            tables.join("; ")
        )
    }
}

/// Why a `--set` or `--sweep` path names nothing of a scenario ([`SetPaths::canonical`]),
/// with the paths the scenario knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownPath {
    /// A path with an empty part (`a..b`, ``).
    EmptyPart {
        /// The path found.
        path: String,
        /// The paths allowed, as a sentence.
        known: String,
    },
    /// A path that is no parameter of the scenario.
    NotAParameter {
        /// The path found.
        path: String,
        /// The paths allowed, as a sentence.
        known: String,
    },
}

impl std::fmt::Display for UnknownPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnknownPath::EmptyPart { path, known } => {
                write!(f, "found the path {path:?}, which has an empty part; {known}")
            }
            UnknownPath::NotAParameter { path, known } => {
                write!(f, "{path:?} is not a parameter of this scenario; {known}")
            }
        }
    }
}

impl std::error::Error for UnknownPath {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_of_the_scenario_structs_are_those_serde_reads() {
        assert!(struct_fields::<RawLinkParams>().contains(&"pfc_priorities"));
        assert_eq!(
            SetPaths::top().collect::<Vec<_>>(),
            ["name", "description", "seed", "duration", "hop_limit"]
        );
    }

    #[test]
    fn paths_resolve_to_params_top_level_and_defaults_and_nothing_else() {
        let t: toml::Table = "name = \"incast\"\n[params]\nsenders = 4\n".parse().unwrap();
        let s = SetPaths::of(&t);
        for p in ["senders", "params.senders", "incast.senders"] {
            assert_eq!(s.canonical(p).unwrap(), ["params", "senders"], "{p}");
        }
        assert_eq!(s.canonical("seed").unwrap(), ["seed"]);
        assert_eq!(s.canonical("defaults.rate").unwrap(), ["defaults", "rate"]);
        assert_eq!(s.canonical("qp.preset").unwrap(), ["qp", "preset"]);
        assert_eq!(
            s.canonical("qp.dcqcn.rpg_ai_rate").unwrap(),
            ["qp", "dcqcn", "rpg_ai_rate"]
        );
        assert_eq!(s.canonical("ecn.kmin_bytes").unwrap(), ["ecn", "kmin_bytes"]);
        assert_eq!(s.canonical("model.preset").unwrap(), ["model", "preset"]);
        assert_eq!(s.canonical("fabric.k").unwrap(), ["fabric", "k"]);
        for bad in ["qp.presett", "ecn.kmin", "model", "qp.foo.x"] {
            let e = s.canonical(bad).unwrap_err().to_string();
            assert!(e.contains("qp.KEY") && e.contains("preset"), "{bad}: {e}");
        }
        for bad in [
            "sendrs",
            "",
            "params.x",
            "defaults.bogus",
            "four-bridge.senders",
            "host.name",
            "a..b",
        ] {
            let e = s.canonical(bad).unwrap_err().to_string();
            assert!(e.contains("senders") && e.contains("defaults.KEY"), "{bad}: {e}");
        }
    }
}
