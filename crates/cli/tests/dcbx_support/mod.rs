//! What the live `lossless` tests share: the binary under test, the example configurations,
//! and the network-namespace pair from the test kit.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub use lossless_testkit::netns::{Pair, ready};

/// The `lossless` binary under test (`LOSSLESS_TEST_BIN` points the tests at another build,
/// to show a test fails without a fix).
pub fn lossless() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("LOSSLESS_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_lossless").to_string())
    })
}

/// An example agent configuration.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/dcbx")
        .join(name)
}

/// Runs `lossless gen -i <ia> <args>` in namespace `a` and asserts that it succeeded.
pub fn gen_in(p: &Pair, args: &[&str]) {
    let mut all = vec![lossless(), "gen", "-i", &p.ia];
    all.extend_from_slice(args);
    let out = p.exec(&p.a, &all);
    assert!(
        out.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts `lossless dcbx run --iface <iface> --config <config> --state <state>` in namespace
/// `ns` with its output in `log`; returns its index in the pair.
pub fn spawn_agent(p: &mut Pair, ns: &str, iface: &str, config: &Path, state: &Path, log: &str) -> usize {
    let (config, state) = (config.to_str().unwrap(), state.to_str().unwrap());
    p.spawn(
        ns,
        &[
            lossless(),
            "dcbx",
            "run",
            "--iface",
            iface,
            "--config",
            config,
            "--state",
            state,
        ],
        log,
    )
}
