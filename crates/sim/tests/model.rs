//! The `[model]` choices and the link `delay` key: 802.3-exact by default, the HPCC ns-3
//! reference's framing, ideal FCT and ECMP on request; every wrong value named.

mod common;

use lossless_proto::units::Duration;
use lossless_sim::config::model::{Ecmp, Framing, IdealFct, ModelConfig, ReplyQueue};
use lossless_sim::scenario::{Overrides, load_str};

/// 100 Gb/s, one flow of ten 1000-byte payloads from `a` to `b` over one link.
const ONE_FLOW: &str = r#"
name = "one-flow"
duration = "100us"
[defaults]
rate = "100G"
[[host]]
name = "a"
[[host]]
name = "b"
[[flow]]
name = "f"
src = "a"
dst = "b"
priority = 3
size_bytes = 10000
mtu = 1000
"#;

fn load(text: &str) -> Result<lossless_sim::config::SimConfig, String> {
    load_str(text, "test.toml", None, &Overrides::default()).map_err(|e| e.to_string())
}

#[test]
fn a_link_delay_replaces_the_cable_propagation() {
    let cable = common::run(
        load(&format!(
            "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\nlength_m = 2\n"
        ))
        .unwrap(),
    );
    let delay = common::run(
        load(&format!(
            "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ndelay = \"1us\"\n"
        ))
        .unwrap(),
    );
    let (c, d) = (
        cable.flow("f").unwrap().completion_ps.unwrap(),
        delay.flow("f").unwrap().completion_ps.unwrap(),
    );
    // 2 m of cable is 10 ns; the delay 1 µs
    assert_eq!(d - c, 1_000_000 - 10_000);
}

#[test]
fn a_default_delay_yields_to_a_links_own_length() {
    let text = ONE_FLOW.replace("rate = \"100G\"\n", "rate = \"100G\"\ndelay = \"1us\"\n")
        + "[[link]]\na = \"a\"\nb = \"b\"\nlength_m = 2\n";
    let c = load(&text).unwrap();
    assert_eq!(c.links[0].propagation(), Duration::from_ns(10));
    let text = ONE_FLOW.replace("rate = \"100G\"\n", "rate = \"100G\"\ndelay = \"1us\"\n")
        + "[[link]]\na = \"a\"\nb = \"b\"\n";
    assert_eq!(load(&text).unwrap().links[0].propagation(), Duration::from_us(1));
}

#[test]
fn both_length_and_delay_in_one_table_are_refused() {
    let e = load(&format!(
        "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\nlength_m = 2\ndelay = \"1us\"\n"
    ))
    .unwrap_err();
    assert!(e.contains("delay") && e.contains("length_m"), "{e}");
    let e = load(&format!(
        "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ndelay = \"soon\"\n"
    ))
    .unwrap_err();
    assert!(
        e.contains("delay") && e.contains("soon") && e.contains("us"),
        "{e}"
    );
}

#[test]
fn the_model_table_takes_a_preset_and_overrides_each_choice() {
    let link = "[[link]]\na = \"a\"\nb = \"b\"\n";
    let c = load(&format!("{ONE_FLOW}{link}")).unwrap();
    assert_eq!(c.model, ModelConfig::default());
    let c = load(&format!("{ONE_FLOW}{link}[model]\npreset = \"hpcc-ns3\"\n")).unwrap();
    assert_eq!(c.model, ModelConfig::HPCC_NS3);
    assert_eq!(
        (c.model.framing, c.model.ideal_fct, c.model.replies, c.model.ecmp),
        (Framing::Ns3, IdealFct::Ns3, ReplyQueue::First, Ecmp::Ns3)
    );
    let c = load(&format!(
        "{ONE_FLOW}{link}[model]\npreset = \"hpcc-ns3\"\nframing = \"ieee\"\n"
    ))
    .unwrap();
    assert_eq!(c.model.framing, Framing::Ieee8023);
    assert_eq!(c.model.ecmp, Ecmp::Ns3);
}

#[test]
fn a_wrong_model_value_names_the_key_and_the_allowed_values() {
    let link = "[[link]]\na = \"a\"\nb = \"b\"\n";
    for (text, key, allowed) in [
        ("preset = \"ns2\"", "preset", "hpcc-ns3"),
        ("framing = \"ppp\"", "framing", "\"ns3\""),
        ("ideal_fct = \"best\"", "ideal_fct", "\"wire\""),
        ("replies = \"last\"", "replies", "\"first\""),
        ("ecmp = \"random\"", "ecmp", "\"flow\""),
    ] {
        let e = load(&format!("{ONE_FLOW}{link}[model]\n{text}\n")).unwrap_err();
        assert!(e.contains(key) && e.contains(allowed), "{e}");
        assert!(e.contains("test.toml:"), "the line is named: {e}");
    }
    let e = load(&format!("{ONE_FLOW}{link}[model]\nframe = \"ns3\"\n")).unwrap_err();
    assert!(e.contains("frame") && e.contains("framing"), "{e}");
}

#[test]
fn ns3_framing_sends_a_plain_flow_back_to_back_in_whole_nanoseconds() {
    // 1022-byte frames (1000 + 22) at 100 Gb/s take 81.76 ns → 81 ns each, no gap; the
    // last one arrives 1 µs after it leaves
    let c = load(&format!(
        "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ndelay = \"1us\"\n[model]\nframing = \"ns3\"\n"
    ))
    .unwrap();
    let r = common::run(c);
    assert_eq!(
        r.flow("f").unwrap().completion_ps,
        Some((10 * 81 + 1_000) * 1_000)
    );
}

#[test]
fn the_ns3_ideal_fct_is_the_references_standalone_fct() {
    // one link of 1 µs: base RTT 2 µs + 80 ns, 10,000 B + 10 × 48 at 100 Gb/s = 838.4 → 838 ns
    let c = load(&format!(
        "{ONE_FLOW}[[link]]\na = \"a\"\nb = \"b\"\ndelay = \"1us\"\n[model]\nideal_fct = \"ns3\"\n"
    ))
    .unwrap();
    let r = common::run(c);
    assert_eq!(
        r.flow("f").unwrap().fct_ideal_ps,
        Some((2_000 + 80 + 838) * 1_000)
    );
}
