//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)]

use lossless_proto::units::Duration;
use lossless_sim::config::{NodeKind, SimConfig};
use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};

/// Loads a built-in with `--set` style overrides and an optional duration.
pub fn load(name: &str, set: &[&str], duration: Option<Duration>) -> SimConfig {
    let ov = Overrides {
        set: set.iter().map(|s| s.to_string()).collect(),
        seed: None,
        duration,
    };
    scenario::load(name, &ov).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs a configuration to its end and returns the report (conservation checked).
pub fn run(config: SimConfig) -> Report {
    let mut sim = Simulator::new(config).expect("builds");
    sim.run();
    let r = Report::collect(&sim);
    r.check()
        .expect("no engine fault and every frame is accounted for");
    r
}

/// Sets the headroom of every switch.
pub fn set_headroom(config: &mut SimConfig, bytes: u64) {
    for n in &mut config.nodes {
        if let NodeKind::Switch(s) = &mut n.kind {
            s.headroom_bytes = Some(bytes);
        }
    }
}

/// Gives every switch the default headroom (drops its `headroom_bytes`).
pub fn clear_headroom(config: &mut SimConfig) {
    for n in &mut config.nodes {
        if let NodeKind::Switch(s) = &mut n.kind {
            s.headroom_bytes = None;
        }
    }
}

/// Frames of `priority` dropped anywhere, by any reason.
pub fn drops_of_priority(r: &Report, priority: u8) -> u64 {
    r.ports
        .iter()
        .flat_map(|p| &p.priorities)
        .filter(|q| q.priority == priority)
        .map(|q| q.drops_frames.values().sum::<u64>())
        .sum()
}

/// Hosts h1, h2 on s1; s1 – s2; h3 on s2; 10 Gb/s, PFC on priority 3: a scenario named "t" that
/// runs `$duration` (a string literal), for tests that splice keys into it.
#[macro_export]
macro_rules! two_switches {
    ($duration:literal) => {
        concat!(
            "name = \"t\"\nduration = \"",
            $duration,
            "\"\n",
            r#"[defaults]
rate = "10G"
flow_control = "pfc"
pfc_priorities = [3]
[[host]]
name = "h1"
[[host]]
name = "h2"
[[host]]
name = "h3"
[[switch]]
name = "s1"
buffer_bytes = 1_000_000
[[switch]]
name = "s2"
buffer_bytes = 1_000_000
[[link]]
a = "h1"
b = "s1"
[[link]]
a = "h2"
b = "s1"
[[link]]
a = "s1"
b = "s2"
[[link]]
a = "h3"
b = "s2"
"#
        )
    };
}

/// The points of every `<polyline>` in `svg` with its stroke colour, in pixels (y down).
pub fn polylines(svg: &str) -> Vec<(String, Vec<(f64, f64)>)> {
    svg.split("<polyline")
        .skip(1)
        .map(|tag| {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            let attr = |name: &str| {
                tag.split(&format!(" {name}=\""))
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .unwrap_or_default()
                    .to_string()
            };
            let pts = attr("points")
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            (attr("stroke").to_ascii_lowercase(), pts)
        })
        .collect()
}
