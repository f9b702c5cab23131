//! Runs a scenario without the CLI (for profiling and before/after comparisons): prints the
//! events handled and events per second, and with `--json FILE` writes the report.
//!
//! `cargo run --release -p lossless-sim --example simrun -- incast senders=64 [--json FILE]`

use std::time::Instant as WallClock;

use lossless_sim::scenario::{self, Overrides};
use lossless_sim::{Report, Simulator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "four-bridge".into());
    let mut set = Vec::new();
    let mut json = None;
    while let Some(a) = args.next() {
        if a == "--json" {
            json = args.next();
        } else {
            set.push(a);
        }
    }
    let ov = Overrides {
        set,
        ..Default::default()
    };
    let config = scenario::load(&name, &ov)?;
    let mut sim = Simulator::new(config)?;
    let t = WallClock::now();
    sim.run();
    let wall = t.elapsed().as_secs_f64();
    let report = Report::collect(&sim);
    report.check()?;
    println!(
        "{name}: {} events in {wall:.3} s: {:.2} M events/s",
        sim.events(),
        sim.events() as f64 / wall / 1e6
    );
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}
