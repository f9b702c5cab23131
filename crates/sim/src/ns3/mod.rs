//! Reading the inputs of the HPCC ns-3 simulator (`alibaba-edu/High-Precision-Congestion-
//! Control`, `simulation/`, run as `third <config>`): its `config.txt`, topology file and flow
//! file, and its `fct.txt` output; and turning a run's inputs into a [`SimConfig`](crate::config::SimConfig) with the
//! reference's modelling choices (`[model] preset = "hpcc-ns3"`, the `hpcc_ns3` engine presets
//! with the config's values laid over them). `/work/shared/corpus/hpcc-ns3/MODEL.md` says
//! what the reference does; [`Config`] lists which keys are used, which are accepted and
//! ignored (and why), and which values are refused because the simulator does not model them.
//!
//! Every error names the file, the line, the key or field, what was found and what is allowed.

mod config;
mod convert;
mod flows;
mod output;
mod parse;
pub mod run;
mod topology;

use std::path::{Path, PathBuf};

use lossless_proto::units::Rate;

pub use config::{Config, IgnoredKey, MAX_BUFFER_MIB, MAX_ECN_KB};
pub use convert::PairBdps;
pub use flows::{FctLine, Flow, MAX_FLOWS, parse_fct, parse_flows};
pub use output::{
    Ns3Observer, OutputKeys, PfcLine, QlenMonitor, QlenPart, Resolved, merge_pfc, resolve_input, write_fct,
    write_pfc,
};
pub use parse::ns_of_seconds;
pub use topology::{Link, MAX_LINKS, Topology};

/// A file that could not be used, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ns3Error {
    /// The file.
    pub file: String,
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// The key or field at fault.
    pub what: String,
    /// What was found and what is allowed.
    pub message: String,
}

impl std::fmt::Display for Ns3Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}: {}", self.file, self.line, self.what, self.message)
    }
}

impl std::error::Error for Ns3Error {}

/// A reference run's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The config.
    pub config: Config,
    /// The topology.
    pub topology: Topology,
    /// The flows, in file order.
    pub flows: Vec<Flow>,
}

fn read(path: &Path) -> Result<String, Ns3Error> {
    std::fs::read_to_string(path).map_err(|e| Ns3Error {
        file: path.display().to_string(),
        line: 0,
        what: "file".into(),
        message: format!("cannot read: {e}"),
    })
}

impl Run {
    /// Loads a config and the files it names, or the given `topology` and `flows` files
    /// instead (the reference's paths are relative to its `simulation/` folder; without an
    /// override a named file is looked up next to the config, by its path and then by its
    /// file name).
    pub fn load(config: &Path, topology: Option<&Path>, flows: Option<&Path>) -> Result<Run, Ns3Error> {
        let c = Config::parse(&read(config)?, &config.display().to_string())?;
        let dir = config.parent().unwrap_or(Path::new("."));
        let find = |named: &str, given: Option<&Path>| -> PathBuf {
            if let Some(g) = given {
                return g.to_path_buf();
            }
            let p = dir.join(named);
            if p.exists() {
                return p;
            }
            Path::new(named).file_name().map_or(p.clone(), |n| dir.join(n))
        };
        let tp = find(&c.topology_file, topology);
        let fp = find(&c.flow_file, flows);
        Run::from_parts(
            c,
            (&read(&tp)?, &tp.display().to_string()),
            (&read(&fp)?, &fp.display().to_string()),
        )
    }

    /// A run from its parsed config and the texts of its topology and flow files (each with
    /// the name errors give it); checks that every flow goes between two hosts.
    pub fn from_parts(c: Config, topology: (&str, &str), flows: (&str, &str)) -> Result<Run, Ns3Error> {
        let topology_name = topology.1;
        let topology = Topology::parse(topology.0, topology.1)?;
        let fp = flows.1;
        let flows = parse_flows(flows.0, fp)?;
        check_flow_hosts(&topology, topology_name, &flows, fp)?;
        let run = Run {
            config: c,
            topology,
            flows,
        };
        run.check(topology_name)?;
        Ok(run)
    }

    /// What the simulator would refuse to build (or the fork would assert), named at its
    /// file, line and config key: an ECN map without an entry for a switch port's rate, the
    /// DCQCN values against the senders' line rates, a buffer smaller than the headroom its
    /// ports reserve.
    fn check(&self, topology_name: &str) -> Result<(), Ns3Error> {
        if self.config.enable_qcn {
            self.check_ecn_maps(topology_name)?;
        }
        if self.config.cc_mode == 1 {
            self.check_dcqcn(topology_name)?;
        }
        if self.config.cc_mode == 8 {
            self.check_dctcp(topology_name)?;
        }
        if self.config.cc_mode == 3 {
            self.check_hpcc(topology_name)?;
        }
        if self.config.cc_mode == 7 {
            self.check_timely(topology_name)?;
        }
        if self.config.cc_mode == 10 {
            self.check_pint(topology_name)?;
        }
        self.check_headroom(topology_name)
    }

    /// An error about the config's `key`, at the line it was last given on.
    fn config_error(&self, key: &str, message: String) -> Ns3Error {
        let c = &self.config;
        Ns3Error {
            file: c.file.clone(),
            line: c.line_of(key),
            what: key.into(),
            message,
        }
    }

    /// Every ECN map has an entry for the rate of every switch port (the fork asserts one).
    fn check_ecn_maps(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        for l in t
            .links
            .iter()
            .filter(|l| t.is_switch[l.a as usize] || t.is_switch[l.b as usize])
        {
            let has = [
                ("KMIN_MAP", c.kmin_kb.iter().any(|(r, _)| *r == l.rate)),
                ("KMAX_MAP", c.kmax_kb.iter().any(|(r, _)| *r == l.rate)),
                ("PMAX_MAP", c.pmax.iter().any(|(r, _)| *r == l.rate)),
            ];
            if let Some((key, _)) = has.into_iter().find(|(_, has)| !has) {
                let missing = if c.line_of(key) == 0 {
                    " (the key is missing)"
                } else {
                    ""
                };
                return Err(self.config_error(
                    key,
                    format!(
                        "no entry for {}, the rate of the link at {topology_name}:{}{missing}; allowed a \
                         map with an entry for every switch port's rate (the fork asserts one; ENABLE_QCN 0 \
                         marks nothing)",
                        l.rate, l.line
                    ),
                ));
            }
        }
        Ok(())
    }

    /// DCQCN's reaction point accepts the config's values at every sender's line rate.
    fn check_dcqcn(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        let rp = self.rp_params();
        // each host's one link
        let mut link_of: Vec<Option<&Link>> = vec![None; t.nodes as usize];
        for l in &t.links {
            link_of[l.a as usize].get_or_insert(l);
            link_of[l.b as usize].get_or_insert(l);
        }
        let mut checked: Vec<Rate> = Vec::new();
        for f in &self.flows {
            let Some(l) = link_of[f.src as usize] else {
                continue;
            };
            if checked.contains(&l.rate) {
                continue;
            }
            checked.push(l.rate);
            if let Err(e) = rp.validate(l.rate) {
                // the config's key and its own value, not the reaction point's field
                let (key, message) = match e.field {
                    "rpg_min_rate" | "rate_to_set_on_first_cnp" => (
                        "MIN_RATE",
                        format!(
                            "found {}, above the line rate {} of host {} (its link at {topology_name}:{}); \
                             allowed up to the slowest sender's line rate",
                            c.min_rate, l.rate, f.src, l.line
                        ),
                    ),
                    "rpg_time_reset" => (
                        "RP_TIMER",
                        "found 0 µs: the rate would never rise again after a cut; allowed a period above 0"
                            .into(),
                    ),
                    "dce_tcp_rtt" => (
                        "ALPHA_RESUME_INTERVAL",
                        "found 0 µs, allowed a period above 0".into(),
                    ),
                    "rate_reduce_monitor_period" => (
                        "RATE_DECREASE_INTERVAL",
                        "found 0 µs, allowed a period above 0".into(),
                    ),
                    "dce_tcp_g" => ("EWMA_GAIN", format!("found {}, allowed 0..=1", e.found)),
                    "rpg_threshold" => (
                        "FAST_RECOVERY_TIMES",
                        format!("found {}, allowed {}", e.found, e.allowed),
                    ),
                    "rpg_ai_rate" => ("RATE_AI", format!("found {}, allowed {}", e.found, e.allowed)),
                    "rpg_hai_rate" => ("RATE_HAI", format!("found {}, allowed {}", e.found, e.allowed)),
                    "clamp_tgt_rate" => (
                        "CLAMP_TARGET_RATE",
                        format!("found {}, allowed {}", e.found, e.allowed),
                    ),
                    other => (
                        "CC_MODE",
                        format!(
                            "DCQCN (CC_MODE 1) cannot run with these values: {other}: found {}, allowed {}",
                            e.found, e.allowed
                        ),
                    ),
                };
                return Err(self.config_error(key, message));
            }
        }
        Ok(())
    }

    /// DCTCP accepts the config's values at every sender's line rate.
    fn check_dctcp(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        let p = self.dctcp_params();
        // each host's one link
        let mut link_of: Vec<Option<&Link>> = vec![None; t.nodes as usize];
        for l in &t.links {
            link_of[l.a as usize].get_or_insert(l);
            link_of[l.b as usize].get_or_insert(l);
        }
        for f in &self.flows {
            let Some(l) = link_of[f.src as usize] else {
                continue;
            };
            if let Err(e) = p.validate(l.rate) {
                let (key, message) = match e.field {
                    "min_rate" => (
                        "MIN_RATE",
                        format!(
                            "found {}, above the line rate {} of host {} (its link at {topology_name}:{}); \
                             allowed up to the slowest sender's line rate",
                            c.min_rate, l.rate, f.src, l.line
                        ),
                    ),
                    "g" => ("EWMA_GAIN", format!("found {}, allowed {}", e.found, e.allowed)),
                    other => (
                        "CC_MODE",
                        format!(
                            "DCTCP (CC_MODE 8) cannot run with these values: {other}: found {}, allowed {}",
                            e.found, e.allowed
                        ),
                    ),
                };
                return Err(self.config_error(key, message));
            }
        }
        Ok(())
    }

    /// HPCC accepts the config's values at every sender's line rate.
    fn check_hpcc(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let p = self.hpcc_params();
        let key = |field: &str| match field {
            "min_rate" => "MIN_RATE",
            "rate_ai" => "RATE_AI",
            "eta" => "U_TARGET",
            "int_multi" => "INT_MULTI",
            _ => "CC_MODE",
        };
        self.check_at_line_rates(topology_name, "HPCC (CC_MODE 3)", &|r| p.validate(r), &key)
    }

    /// HPCC-PINT accepts the config's values at every sender's line rate.
    fn check_pint(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let p = self.pint_params();
        let key = |field: &str| match field {
            "min_rate" => "MIN_RATE",
            "rate_ai" => "RATE_AI",
            "eta" => "U_TARGET",
            "log_base" => "PINT_LOG_BASE",
            "prob" => "PINT_PROB",
            _ => "CC_MODE",
        };
        self.check_at_line_rates(topology_name, "HPCC-PINT (CC_MODE 10)", &|r| p.validate(r), &key)
    }

    /// TIMELY accepts the config's values at every sender's line rate.
    fn check_timely(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let p = self.timely_params();
        let key = |field: &str| {
            if field == "min_rate" {
                "MIN_RATE"
            } else {
                "CC_MODE"
            }
        };
        self.check_at_line_rates(topology_name, "TIMELY (CC_MODE 7)", &|r| p.validate(r), &key)
    }

    /// `validate` accepts every sender's line rate; a refusal names the config key `key` gives
    /// for the parameter and the sender's link.
    fn check_at_line_rates(
        &self,
        topology_name: &str,
        cc: &str,
        validate: &dyn Fn(lossless_proto::units::Rate) -> Result<(), lossless_proto::dcqcn::ParamError>,
        key: &dyn Fn(&str) -> &'static str,
    ) -> Result<(), Ns3Error> {
        let t = &self.topology;
        let mut link_of: Vec<Option<&Link>> = vec![None; t.nodes as usize];
        for l in &t.links {
            link_of[l.a as usize].get_or_insert(l);
            link_of[l.b as usize].get_or_insert(l);
        }
        for f in &self.flows {
            let Some(l) = link_of[f.src as usize] else {
                continue;
            };
            if let Err(e) = validate(l.rate) {
                let message = format!(
                    "{cc} at host {}'s line rate {} (its link at {topology_name}:{}): found {}, allowed {}",
                    f.src, l.rate, l.line, e.found, e.allowed
                );
                return Err(self.config_error(key(e.field), message));
            }
        }
        Ok(())
    }

    /// Every switch's buffer holds the headroom its ports reserve.
    fn check_headroom(&self, topology_name: &str) -> Result<(), Ns3Error> {
        let c = &self.config;
        let t = &self.topology;
        // every switch's buffer holds the headroom its ports reserve (3 × rate × delay of its
        // fastest port, per lossless priority, as convert.rs sets it)
        let mut lossless = 0u8;
        for f in &self.flows {
            lossless |= 1 << f.pg;
        }
        let no_ecn =
            |_: &[&Link]| -> Result<Option<crate::config::transport::EcnSpec>, std::convert::Infallible> {
                Ok(None)
            };
        let Ok(sim) = t.sim_config(
            &c.file,
            c.buffer_mib * 1024 * 1024,
            lossless,
            u64::from(c.packet_payload_size),
            no_ecn,
        );
        for (id, node) in sim.nodes.iter().enumerate() {
            let crate::config::NodeKind::Switch(sw) = &node.kind else {
                continue;
            };
            let (ports, total) = crate::config::headroom::switch_reserves(&sim, id as u32, sw);
            if total <= u128::from(sw.buffer_bytes) {
                continue;
            }
            let widest = t
                .links
                .iter()
                .filter(|l| l.a == id as u32 || l.b == id as u32)
                .max_by_key(|l| u128::from(l.rate.bps()) * l.delay.as_ps())
                .map_or(0, |l| l.line);
            let need_mib = total.div_ceil(1 << 20);
            let allowed = if need_mib < u128::from(MAX_BUFFER_MIB) {
                format!(
                    "a BUFFER_SIZE above {need_mib} MiB (room to share besides the headroom), or shorter link delays"
                )
            } else {
                format!("shorter link delays (BUFFER_SIZE holds at most {MAX_BUFFER_MIB} MiB)")
            };
            return Err(self.config_error(
                "BUFFER_SIZE",
                format!(
                    "found {} MiB, but switch {id}'s {} ports reserve {total} bytes: each its headroom of 3 × rate \
                     × delay (the longest at {topology_name}:{widest}) and 4096 bytes, as the fork's MMU takes them \
                     out of the buffer; allowed {allowed}",
                    c.buffer_mib,
                    ports.len(),
                ),
            ));
        }
        Ok(())
    }
}

/// Every flow (of the flow file `fp`) goes between two different hosts of the topology
/// (named `topology_name`) that reach each other.
fn check_flow_hosts(
    topology: &Topology,
    topology_name: &str,
    flows: &[Flow],
    fp: &str,
) -> Result<(), Ns3Error> {
    for f in flows {
        if f.src == f.dst {
            return Err(Ns3Error {
                file: fp.to_string(),
                line: f.line,
                what: "dst".into(),
                message: format!("found node {} as both source and destination", f.src),
            });
        }
        for (x, what) in [(f.src, "src"), (f.dst, "dst")] {
            if x >= topology.nodes || topology.is_switch[x as usize] {
                return Err(Ns3Error {
                    file: fp.to_string(),
                    line: f.line,
                    what: what.into(),
                    message: format!("found node {x}, allowed a host of the topology"),
                });
            }
        }
    }
    // hosts do not forward: a flow's two hosts reach each other through linked switches
    // (or one link between them)
    let mut parent: Vec<u32> = (0..topology.nodes).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for l in &topology.links {
        if topology.is_switch[l.a as usize] || topology.is_switch[l.b as usize] {
            let (ra, rb) = (find(&mut parent, l.a), find(&mut parent, l.b));
            parent[ra as usize] = rb;
        }
    }
    let direct = |a: u32, b: u32| {
        topology
            .links
            .iter()
            .any(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
    };
    for f in flows {
        let (ra, rb) = (find(&mut parent, f.src), find(&mut parent, f.dst));
        if ra != rb && !direct(f.src, f.dst) {
            return Err(Ns3Error {
                file: fp.to_string(),
                line: f.line,
                what: "dst".into(),
                message: format!(
                    "no path from host {} to host {} in {} (their switches are not linked, and hosts \
                     do not forward); allowed hosts that reach each other",
                    f.src, f.dst, topology_name
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_proto::units::Instant;

    #[test]
    fn topology_and_flow_errors_name_the_line() {
        let e = Topology::parse("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 7 100Gbps 1us 0\n", "t.txt").unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (4, "link end"));
        assert!(e.message.contains("0..3"), "{e}");
        let e = Topology::parse("3 1 1\n2\n0 2 fast 1000ns 0\n", "t.txt").unwrap_err();
        assert!(e.message.contains("fast") && e.message.contains("Gbps"), "{e}");
        let e = Topology::parse("3 1 1\n2\n0 2 100Gbps 1000ns 0.01\n", "t.txt").unwrap_err();
        assert!(e.message.contains("not modelled"), "{e}");
        let e = parse_flows("2\n0 1 3 100 1000 0\n", "f.txt").unwrap_err();
        assert_eq!(e.what, "src");
        assert!(e.message.contains("missing"), "{e}");
        let e = parse_flows("1\n0 1 9 100 1000 0\n", "f.txt").unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (2, "pg"));
        let f = parse_flows("1\n0 1 3 100 1000 2.000013122\n", "f.txt").unwrap();
        assert_eq!(f[0].start, Instant::from_ps(2_000_013_121_000));
    }
}
