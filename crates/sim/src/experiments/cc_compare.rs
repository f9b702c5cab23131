//! `lossless sim cc-compare`: two built-in fabrics, an incast (`incast-cc`) and a fat tree
//! with WebSearch traffic (`fat-tree-websearch`), each run under every congestion control of
//! the HPCC ns-3 reference (DCQCN, HPCC, TIMELY, DCTCP, HPCC-PINT) and without one, with the
//! reference's parameters; each run is a scenario load with `--set` overrides, so anything
//! `--set` reaches scales or changes the comparison.
//!
//! - [`FABRICS`], [`CCS`]: what is run, and each CC's overrides per fabric;
//! - [`Plan`]: the runs (fabric × CC) with the user's overrides laid over them, checked before
//!   any runs;
//! - [`Plan::run`]: one run to its end (or until a stop request), its figures as
//!   [`CcRun`].

use std::time::Instant as WallClock;

use super::slicer::Slicer;
use crate::config::SimConfig;
use crate::report::Report;
use crate::report::cc_compare::CcRun;
use crate::scenario::{self, Overrides, ScenarioError};
use crate::sim::Simulator;

/// A fabric of the comparison: a built-in scenario whose QPs take the CC of `qp.cc`, and the
/// base RTT and BDP of its longest path (what HPCC and HPCC-PINT are given, as the reference
/// gives them its `maxRtt` and `maxBdp`).
#[derive(Clone, Copy, Debug)]
pub struct Fabric {
    /// The built-in scenario.
    pub builtin: &'static str,
    /// Base RTT of the longest path, e.g. "12480ns".
    pub base_rtt: &'static str,
    /// The BDP of that path at the host rate, bytes.
    pub bdp: u64,
}

/// The fabrics compared, in table order.
pub const FABRICS: [Fabric; 2] = [
    Fabric {
        builtin: "incast-cc",
        base_rtt: "4160ns",
        bdp: 52_000,
    },
    Fabric {
        builtin: "fat-tree-websearch",
        base_rtt: "12480ns",
        bdp: 156_000,
    },
];

/// A congestion control of the comparison.
#[derive(Clone, Copy, Debug)]
pub struct Cc {
    /// Its `qp.cc` value.
    pub name: &'static str,
    /// The `[qp]` sub-table of its parameters (`qp.NAME.KEY`), if it has one.
    pub table: Option<&'static str>,
}

/// The congestion controls compared, in table order: none (PFC alone) first, the reference.
pub const CCS: [Cc; 6] = [
    Cc {
        name: "none",
        table: None,
    },
    Cc {
        name: "dcqcn",
        table: Some("dcqcn"),
    },
    Cc {
        name: "hpcc",
        table: Some("hpcc"),
    },
    Cc {
        name: "timely",
        table: Some("timely"),
    },
    Cc {
        name: "dctcp",
        table: Some("dctcp"),
    },
    Cc {
        name: "hpcc-pint",
        table: Some("hpcc_pint"),
    },
];

impl Cc {
    /// The overrides that run `fabric` under this CC with the reference's parameters: `qp.cc`,
    /// HPCC's and HPCC-PINT's base RTT and BDP, and DCTCP's step marking (Kmin = Kmax =
    /// 300 KB, Pmax 1 at 100 Gb/s, run.py's `dctcp` profile).
    pub fn sets(&self, fabric: &Fabric) -> Vec<String> {
        let mut v = vec![format!("qp.cc=\"{}\"", self.name)];
        match self.name {
            "hpcc" | "hpcc-pint" => {
                let t = self.table.unwrap_or("hpcc");
                v.push(format!("qp.{t}.base_rtt=\"{}\"", fabric.base_rtt));
                v.push(format!("qp.{t}.bdp={}", fabric.bdp));
            }
            "dctcp" => {
                v.push("ecn.kmin_bytes=300000".into());
                v.push("ecn.kmax_bytes=300000".into());
                v.push("ecn.pmax=1.0".into());
            }
            _ => {}
        }
        v
    }
}

/// A `--set` that `cc-compare` cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// `qp.cc` is what the comparison varies.
    #[error(
        "--set {0}: cc-compare runs every congestion control itself; to run one, use its fabric: `lossless sim incast-cc --set qp.cc=hpcc` (or fat-tree-websearch)"
    )]
    SetsCc(String),
    /// A `--set` that is not PATH=VALUE.
    #[error("--set {0:?}: allowed PATH=VALUE (e.g. senders=32, fabric.k=8, qp.hpcc.eta=0.9)")]
    NotASet(String),
    /// A `--set` that names nothing of either fabric.
    #[error(
        "--set {set}: names a value of neither fabric (incast-cc: {incast}; fat-tree-websearch: {fat_tree})"
    )]
    Unknown {
        /// The `--set`.
        set: String,
        /// Why incast-cc refused it.
        incast: String,
        /// Why fat-tree-websearch refused it.
        fat_tree: String,
    },
    /// A run that does not load.
    #[error("{fabric} under {cc}: {error}")]
    Load {
        /// The fabric.
        fabric: &'static str,
        /// The CC.
        cc: &'static str,
        /// Why.
        error: ScenarioError,
    },
}

/// One run of the comparison: a fabric under a CC, with its overrides.
#[derive(Clone, Debug)]
pub struct Point {
    /// The fabric.
    pub fabric: Fabric,
    /// The CC.
    pub cc: Cc,
    /// Everything it is loaded with: the user's `--set`s that apply to it, then the CC's, then
    /// the user's `--set`s of that CC's own table (which win).
    pub overrides: Overrides,
}

/// The runs of a comparison, fabric by fabric, each fabric under every CC.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The runs, in table order.
    pub points: Vec<Point>,
}

/// The `[qp]` sub-table a `--set` path names (`qp.hpcc.eta` → `hpcc`), if any of a CC's.
fn cc_table(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("qp.")?;
    let (t, _) = rest.split_once('.')?;
    CCS.iter().filter_map(|c| c.table).find(|&x| x == t)
}

impl Plan {
    /// The runs with the user's overrides `user` (`--set`, `--seed`, `--duration`) laid over
    /// each: a `--set` of a CC's table (`qp.hpcc.eta=0.9`) goes to that CC's runs only;
    /// `incast-cc.PATH=V` or `fat-tree-websearch.PATH=V` to that fabric only; any other to
    /// every fabric that has the value (`senders` is the incast's, `fabric.k` the fat tree's,
    /// `defaults.delay` both's) and is refused when neither has it. Every run is loaded once
    /// here, so that a bad value fails before anything runs.
    pub fn new(user: &Overrides) -> Result<Plan, PlanError> {
        let mut common: Vec<Vec<String>> = vec![Vec::new(); FABRICS.len()];
        let mut own: Vec<(String, String)> = Vec::new();
        for s in &user.set {
            let Some((k, _)) = s.split_once('=') else {
                return Err(PlanError::NotASet(s.clone()));
            };
            let k = k.trim();
            if k == "qp.cc" {
                return Err(PlanError::SetsCc(s.clone()));
            }
            if let Some(t) = cc_table(k) {
                own.push((t.to_string(), s.clone()));
                continue;
            }
            if let Some(i) = FABRICS
                .iter()
                .position(|f| k.starts_with(f.builtin) && k[f.builtin.len()..].starts_with('.'))
            {
                let rest = &s.trim_start()[FABRICS[i].builtin.len() + 1..];
                common[i].push(rest.to_string());
                continue;
            }
            let mut why = Vec::new();
            for (i, f) in FABRICS.iter().enumerate() {
                match applies(f, s) {
                    Ok(()) => common[i].push(s.clone()),
                    Err(e) => why.push(e),
                }
            }
            if why.len() == FABRICS.len() {
                return Err(PlanError::Unknown {
                    set: s.clone(),
                    incast: why[0].clone(),
                    fat_tree: why[1].clone(),
                });
            }
        }
        let mut points = Vec::new();
        for (i, fabric) in FABRICS.iter().enumerate() {
            for cc in CCS {
                let mut set = common[i].clone();
                set.extend(cc.sets(fabric));
                set.extend(
                    own.iter()
                        .filter(|(t, _)| Some(t.as_str()) == cc.table)
                        .map(|(_, s)| s.clone()),
                );
                let p = Point {
                    fabric: *fabric,
                    cc,
                    overrides: Overrides {
                        set,
                        seed: user.seed,
                        duration: user.duration,
                    },
                };
                p.load().map_err(|error| PlanError::Load {
                    fabric: fabric.builtin,
                    cc: cc.name,
                    error,
                })?;
                points.push(p);
            }
        }
        Ok(Plan { points })
    }

    /// Runs point `k` to its end, or until `stop()` (`None`); its report and figures.
    pub fn run(&self, k: usize, stop: &dyn Fn() -> bool) -> Option<Result<(Report, CcRun), String>> {
        let p = &self.points[k];
        let config = match p.load() {
            Ok(c) => c,
            Err(e) => return Some(Err(format!("{} under {}: {e}", p.fabric.builtin, p.cc.name))),
        };
        let wall = WallClock::now();
        let mut sim = match Simulator::new(config) {
            Ok(s) => s,
            Err(e) => {
                return Some(Err(format!(
                    "{} under {}: loads but cannot be built: {}",
                    p.fabric.builtin,
                    p.cc.name,
                    super::sweep::with_causes(&e)
                )));
            }
        };
        // in slices, so that a stop request stops a long run too
        if !Slicer::run(&mut sim, &stop) {
            return None;
        }
        let report = Report::collect(&sim);
        let wall = wall.elapsed().as_secs_f64();
        let run = CcRun::of(p.fabric.builtin, p.cc.name, &report, wall);
        Some(Ok((report, run)))
    }
}

impl Point {
    /// Its scenario with its overrides.
    pub fn load(&self) -> Result<SimConfig, ScenarioError> {
        scenario::load(self.fabric.builtin, &self.overrides)
    }
}

/// Whether the `--set` `s` names a value of `fabric` (`Err`: why not). A `fabric.KEY` applies
/// only to a scenario with a `[fabric]` table.
fn applies(fabric: &Fabric, s: &str) -> Result<(), String> {
    let k = s.split_once('=').map_or(s, |(k, _)| k).trim();
    let has_fabric = scenario::builtin(fabric.builtin)
        .and_then(|b| b.text.parse::<toml::Table>().ok())
        .is_some_and(|t| t.contains_key("fabric"));
    if k.starts_with("fabric.") && !has_fabric {
        return Err("no [fabric] table".into());
    }
    let ov = Overrides {
        set: vec![s.to_string()],
        ..Overrides::default()
    };
    scenario::check_sweep(fabric.builtin, &ov, &[]).map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ov(set: &[&str]) -> Overrides {
        Overrides {
            set: set.iter().map(|s| s.to_string()).collect(),
            ..Overrides::default()
        }
    }

    #[test]
    fn every_fabric_loads_under_every_cc() {
        let plan = Plan::new(&Overrides::default()).unwrap();
        assert_eq!(plan.points.len(), FABRICS.len() * CCS.len());
    }

    #[test]
    fn a_set_goes_to_the_fabrics_and_ccs_it_names() {
        let plan = Plan::new(&ov(&[
            "senders=4",
            "qp.hpcc.eta=0.9",
            "fat-tree-websearch.seed=7",
        ]))
        .unwrap();
        for p in &plan.points {
            let s = &p.overrides.set;
            assert_eq!(
                s.contains(&"senders=4".to_string()),
                p.fabric.builtin == "incast-cc",
                "{s:?}"
            );
            assert_eq!(
                s.contains(&"seed=7".to_string()),
                p.fabric.builtin == "fat-tree-websearch"
            );
            assert_eq!(s.contains(&"qp.hpcc.eta=0.9".to_string()), p.cc.name == "hpcc");
            // the user's table keys come after the CC's, so they win
            if p.cc.name == "hpcc" {
                assert_eq!(s.last().unwrap(), "qp.hpcc.eta=0.9");
            }
        }
    }

    #[test]
    fn a_set_of_qp_cc_or_of_nothing_is_refused() {
        assert!(matches!(
            Plan::new(&ov(&["qp.cc=hpcc"])),
            Err(PlanError::SetsCc(_))
        ));
        let e = Plan::new(&ov(&["sendrs=4"])).unwrap_err();
        assert!(matches!(e, PlanError::Unknown { .. }), "{e}");
        assert!(e.to_string().contains("senders"), "{e}");
        assert!(matches!(
            Plan::new(&ov(&["senders=0"])),
            Err(PlanError::Load {
                fabric: "incast-cc",
                ..
            })
        ));
    }
}
