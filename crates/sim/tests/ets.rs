//! 802.1Qaz transmission selection in the simulator: the `ets-7-13-80` built-in against the
//! analytic shares, jumbo frames through an ETS port (the 9216-MTU stall), and a
//! credit-based-shaper class held to its idleSlope.

mod common;

use common::{load, run};
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{BuildError, Report, Simulator};

/// Measured frame-byte rate of flow `name` in Gb/s.
fn gbps(r: &Report, name: &str) -> f64 {
    r.flow(name)
        .unwrap_or_else(|| panic!("flow {name}"))
        .throughput_bps as f64
        / 1e9
}

fn assert_within(name: &str, got: f64, want: f64, tolerance: f64) {
    let err = (got - want).abs() / want;
    assert!(
        err <= tolerance,
        "{name}: measured {got:.4} Gb/s, analytic {want:.4} Gb/s, off by {:.3} % (allowed {:.1} %)",
        err * 100.0,
        tolerance * 100.0
    );
}

#[test]
fn ets_7_13_80_gives_each_class_its_analytic_share_within_one_percent() {
    let r = run(load("ets-7-13-80", &[], None));
    // link time: strict 20 %, then 7/13/80 % of the remaining 80 %; frames are 1522 bytes
    // and 1542 on the wire, so frame bytes arrive at share × 100 G × 1522 / 1542
    let frame = 1522.0 / 1542.0;
    let want = [
        ("strict", 0.20),
        ("ets7", 0.80 * 0.07),
        ("ets13", 0.80 * 0.13),
        ("ets80", 0.80 * 0.80),
    ];
    for (name, share) in want {
        assert_within(name, gbps(&r, name), share * 100.0 * frame, 0.01);
    }
    assert_eq!(r.lossless_drops(), 0);
}

#[test]
fn jumbo_frames_of_a_9216_byte_mtu_pass_an_ets_port() {
    // 9238-byte frames: more than the scheduler's default 9216-byte maximum, which used to
    // refuse every frame silently and deliver nothing
    let r = run(load("ets-7-13-80", &["defaults.mtu=9216"], None));
    assert_eq!(r.engine_fault, None);
    let frame = 9238.0 / 9258.0;
    // a millisecond holds only ~1350 jumbo frames: the deficit counters' granularity of about
    // two maximum frames per class allows a wider band than with 1522-byte frames
    for (name, share) in [("strict", 0.20), ("ets13", 0.104), ("ets80", 0.64)] {
        assert_within(name, gbps(&r, name), share * 100.0 * frame, 0.03);
    }
    assert!(gbps(&r, "ets7") > 4.0, "ets7 {}", gbps(&r, "ets7"));
}

#[test]
fn a_flow_whose_frames_no_port_can_be_built_for_is_a_build_error() {
    let mut c = load("ets-7-13-80", &[], None);
    c.flows[0].mtu = u64::from(u32::MAX);
    let e = Simulator::new(c).err().expect("refused");
    assert!(matches!(e, BuildError::FrameTooLarge { .. }), "{e}");
}

const CBS: &str = r#"
name = "cbs"
duration = "1ms"
[defaults]
rate = "100G"
flow_control = "off"
ets_tsa = ["ets", "ets", "ets", "ets", "cbs", "strict", "strict", "strict"]
ets_prio_tc = [0, 1, 2, 3, 4, 5, 6, 7]
ets_tc_bandwidth = [25, 25, 25, 25, 0, 0, 0, 0]
ets_idle_slope = { 4 = "10G" }
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
a = "a"
b = "b"
[[flow]]
name = "shaped"
src = "a"
dst = "b"
priority = 4
[[flow]]
name = "bulk"
src = "a"
dst = "b"
priority = 0
"#;

#[test]
fn a_credit_based_shaper_class_never_exceeds_its_idle_slope() {
    let c = load_str(CBS, "cbs.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let r = run(c);
    let shaped = r.flow("shaped").unwrap();
    // on the wire (20 bytes of preamble, SFD and IFG per frame) within one frame of 10 Gb/s
    let wire_bits = (shaped.delivered_bytes + 20 * shaped.delivered_frames) * 8;
    let limit_bits = 10e9 * 1e-3 + 1542.0 * 8.0;
    assert!(
        (wire_bits as f64) <= limit_bits,
        "shaped class sent {wire_bits} bits in 1 ms, idleSlope allows {limit_bits}"
    );
    assert!(
        wire_bits as f64 > 0.95 * 10e6,
        "shaped class starved: {wire_bits} bits"
    );
    // the rest of the link goes to the ETS class
    assert!(gbps(&r, "bulk") > 85.0, "bulk {}", gbps(&r, "bulk"));
}

#[test]
fn an_idle_slope_on_a_traffic_class_beyond_seven_names_the_key() {
    let text = CBS.replace("{ 4 = \"10G\" }", "{ 9 = \"10G\" }");
    let e = load_str(&text, "cbs.toml", None, &Overrides::default()).unwrap_err();
    assert!(
        e.to_string().contains("ets_idle_slope") && e.to_string().contains("0..=7"),
        "{e}"
    );
}

#[test]
fn a_cbs_class_without_an_idle_slope_is_refused_at_load_and_at_build() {
    let text = CBS.replace("ets_idle_slope = { 4 = \"10G\" }\n", "");
    let e = load_str(&text, "cbs.toml", None, &Overrides::default()).unwrap_err();
    assert!(
        e.line > 0 && e.to_string().contains("ets_tsa") && e.to_string().contains("idleSlope"),
        "{e}"
    );
    // a configuration made in code is refused by the build, the reason once in the chain
    let mut c = load_str(CBS, "cbs.toml", None, &Overrides::default()).unwrap();
    for l in &mut c.links {
        l.ets_idle_slope = [None; 8];
    }
    let e = Simulator::new(c).err().expect("refused");
    let source = std::error::Error::source(&e)
        .map(|s| s.to_string())
        .unwrap_or_default();
    assert!(source.contains("idle"), "{e}: {source}");
    assert!(!e.to_string().contains("idle"), "the reason is not repeated: {e}");
}
