//! Scenario files (`lossless sim FILE`): any text loads or is refused with an error that
//! names the file and a line of the text (never a panic, a hang or an unbounded allocation);
//! a scenario that loads has only valid names, builds a simulator or says why, and a small
//! one runs its first microsecond.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_proto::units::{Duration, Instant};
use lossless_sim::scenario::{Overrides, is_valid_name, load_str};
use lossless_sim::{Report, Simulator};

/// Larger scenarios are loaded (and checked) but not built: the fuzzer looks for wrong
/// input, not for the cost of a large valid one.
const MAX_RUN_ELEMENTS: usize = 512;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match load_str(text, "fuzz.toml", None, &Overrides::default()) {
        Err(e) => {
            assert_eq!(e.file, "fuzz.toml");
            assert!(
                e.line <= text.lines().count() + 1,
                "line {} of a {}-line text: {e}",
                e.line,
                text.lines().count()
            );
            let _ = e.to_string();
        }
        Ok(c) => {
            assert!(is_valid_name(&c.name), "{:?}", c.name);
            let elements = c.nodes.len() + c.links.len() + c.flows.len() + c.signals.len();
            if elements > MAX_RUN_ELEMENTS {
                return;
            }
            match Simulator::new(c) {
                Ok(mut sim) => {
                    sim.run_until(Instant::ZERO + Duration::from_us(1));
                    let _ = Report::collect(&sim);
                }
                Err(e) => {
                    let _ = format!("{e:#}");
                }
            }
        }
    }
});
