//! Runs an HPCC ns-3 reference config (`lossless_sim::ns3`) and prints each flow's FCT in the
//! reference's `fct.txt` format: `cargo run --release -p lossless-sim --example ns3run --
//! CONFIG [TOPOLOGY FLOWS] [--seed N]`.

use std::path::Path;

use lossless_sim::{Report, Simulator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut seed = None;
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--seed" {
            seed = Some(it.next().ok_or("--seed needs a number")?.parse()?);
        } else {
            files.push(a.clone());
        }
    }
    let config = files
        .first()
        .ok_or("usage: ns3run CONFIG [TOPOLOGY FLOWS] [--seed N]")?;
    let run = lossless_sim::ns3::Run::load(
        Path::new(config),
        files.get(1).map(Path::new),
        files.get(2).map(Path::new),
    )?;
    let mut c = run.to_sim_config(config)?;
    if let Some(s) = seed {
        c.seed = s;
    }
    let mut sim = Simulator::new(c)?;
    let t = std::time::Instant::now();
    sim.run();
    let wall = t.elapsed().as_secs_f64();
    let r = Report::collect(&sim);
    r.check()?;
    let mut pair = std::collections::HashMap::new();
    for (f, fr) in run.flows.iter().zip(&r.flows) {
        let n = pair.entry((f.src, f.dst)).or_insert(0u16);
        let ip = lossless_sim::config::model::ns3_ip;
        println!(
            "{:08x} {:08x} {} {} {} {} {} {}",
            ip(f.src),
            ip(f.dst),
            10_000 + *n,
            f.dport,
            f.size,
            f.start.as_ps() / 1000,
            fr.completion_ps.map_or(0, |c| c / 1000),
            fr.fct_ideal_ps.map_or(0, |c| c / 1000)
        );
        *n += 1;
    }
    eprintln!(
        "{} events in {wall:.3} s ({:.2} M events/s)",
        r.events,
        r.events as f64 / wall / 1e6
    );
    Ok(())
}
