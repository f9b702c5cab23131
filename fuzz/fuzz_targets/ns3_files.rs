//! The HPCC ns-3 fork's input files (`lossless sim --ns3`): the input is the config, the
//! topology and the flow file separated by NUL bytes. Any text is read or refused with an
//! error that names its file and a line of it (never a panic, a hang or an unbounded
//! allocation); a run that reads becomes a simulator configuration or says why, and a small
//! one builds and runs its first microsecond. `fct.txt`'s reader gets the flow text too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_proto::units::{Duration, Instant};
use lossless_sim::ns3::{Config, Ns3Error, Run, parse_fct};
use lossless_sim::{Report, Simulator};

const MAX_RUN_ELEMENTS: usize = 512;

/// The error names one of the three files and a line within it (0: the whole file).
fn check(e: &Ns3Error, files: &[(&str, &str)]) {
    let Some((_, text)) = files.iter().find(|(name, _)| *name == e.file) else {
        panic!("error names an unknown file: {e}");
    };
    assert!(
        e.line <= text.lines().count() + 1,
        "line {} of a {}-line file: {e}",
        e.line,
        text.lines().count()
    );
    let _ = e.to_string();
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(3, '\0');
    let (config, topology, flows) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let files = [
        ("config.txt", config),
        ("topology.txt", topology),
        ("flow.txt", flows),
    ];
    if let Err(e) = parse_fct(flows, "flow.txt") {
        check(&e, &files);
    }
    let c = match Config::parse(config, "config.txt") {
        Ok(c) => c,
        Err(e) => return check(&e, &files),
    };
    let run = match Run::from_parts(c, (topology, "topology.txt"), (flows, "flow.txt")) {
        Ok(r) => r,
        Err(e) => return check(&e, &files),
    };
    let sim_config = match run.to_sim_config("config.txt") {
        Ok(c) => c,
        Err(e) => {
            // the conversion names the config for what may be in any of the three files (a
            // message issue of its own): its line is one of the three files' lines
            let longest = files.iter().map(|(_, t)| t.lines().count()).max().unwrap_or(0);
            assert!(e.line <= longest + 1, "line {} past every file: {e}", e.line);
            let _ = e.to_string();
            return;
        }
    };
    let elements = sim_config.nodes.len() + sim_config.links.len() + sim_config.flows.len();
    if elements > MAX_RUN_ELEMENTS {
        return;
    }
    match Simulator::new(sim_config) {
        Ok(mut sim) => {
            sim.run_until(Instant::ZERO + Duration::from_us(1));
            let _ = Report::collect(&sim);
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
