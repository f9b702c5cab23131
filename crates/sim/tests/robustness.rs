//! Input never panics: any single value of a shipped scenario replaced by an odd one either
//! loads (and then runs) or is refused with an error naming the file.

use lossless_proto::units::Duration;
use lossless_sim::Simulator;
use lossless_sim::scenario::{BUILTINS, Overrides, load_str};
use proptest::prelude::*;

const ODD: [&str; 14] = [
    "-1",
    "0",
    "1",
    "\"\"",
    "18446744073709551615",
    "99999999999999999999999",
    "\"0G\"",
    "[]",
    "1.5",
    "\"1e9us\"",
    "true",
    "\"x*\"",
    "[9, 9]",
    "{}",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn one_odd_value_never_panics(which in 0usize..BUILTINS.len(), line in 0usize..200, odd in 0usize..ODD.len()) {
        let b = &BUILTINS[which];
        let lines: Vec<&str> = b.text.lines().collect();
        let idx = line % lines.len();
        let mut text = String::new();
        for (i, l) in lines.iter().enumerate() {
            match l.split_once('=') {
                Some((k, _)) if i == idx && !l.trim_start().starts_with('#') => {
                    text.push_str(&format!("{k}= {}\n", ODD[odd]));
                }
                _ => {
                    text.push_str(l);
                    text.push('\n');
                }
            }
        }
        let ov = Overrides { duration: Some(Duration::from_us(3)), ..Default::default() };
        match load_str(&text, "odd.toml", None, &ov) {
            Err(e) => prop_assert!(e.to_string().starts_with("odd.toml"), "{e}"),
            Ok(c) => {
                if let Ok(mut sim) = Simulator::new(c) {
                    sim.run();
                }
            }
        }
    }
}
