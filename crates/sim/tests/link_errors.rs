//! Link bit errors (`ber` of a link): frames the link corrupts are discarded by the receiving
//! MAC's FCS check — data frames as drops with reason `fcs_error`, PAUSE/PFC frames before
//! the MAC acts on them — in the numbers the bit error rate predicts, deterministically per
//! seed, and a RoCEv2 QP still delivers every byte once.

use lossless_sim::config::SimConfig;
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};

fn config(text: &str) -> SimConfig {
    load_str(text, "inline.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn run(c: SimConfig) -> Report {
    let mut sim = Simulator::new(c).unwrap();
    sim.run();
    Report::collect(&sim)
}

/// Host `a` sends 1,500-byte frames at line rate through switch `s` to host `b`.
const LINE: &str = r#"
name = "line"
duration = "200us"
[defaults]
rate = "100G"
flow_control = "FC"
pfc_priorities = [3]
[[host]]
name = "a"
[[host]]
name = "b"
[[switch]]
name = "s"
buffer_bytes = 1_000_000
[[link]]
a = "a"
b = "s"
[[link]]
a = "s"
b = "b"
[[flow]]
name = "f"
src = "a"
dst = "b"
priority = 3
"#;

fn line(fc: &str) -> SimConfig {
    config(&LINE.replace("FC", fc))
}

#[test]
fn a_link_without_a_bit_error_rate_has_no_link_errors_section() {
    let r = run(line("off"));
    assert!(r.link_errors.is_none());
    assert!(!r.conservation.dropped_frames.contains_key("fcs_error"));
}

#[test]
fn corrupted_data_frames_are_dropped_as_fcs_errors_in_the_numbers_the_ber_predicts() {
    let mut c = line("off");
    // a 1,500-byte frame is 12,000 bits: it survives with probability (1 − 1e-6)^12000
    c.links[1].ber = 1e-6;
    let r = run(c);
    r.check().unwrap();
    let errors = r.link_errors.as_ref().expect("the section is present");
    // both ends of the link with errors, none of the other
    assert_eq!(errors.len(), 2);
    let at_b = errors.iter().find(|e| e.node == "b").unwrap();
    let dropped = r.conservation.dropped_frames["fcs_error"];
    assert_eq!(at_b.corrupted_data_frames, dropped);
    let arrived = r.flows[0].delivered_frames + dropped;
    let p = 1.0 - (1.0f64 - 1e-6).powi(12_000);
    let expected = p * arrived as f64;
    let sd = (expected * (1.0 - p)).sqrt();
    assert!(
        (dropped as f64 - expected).abs() < 4.0 * sd,
        "{dropped} corrupted of {arrived}, expected {expected:.1} ± {sd:.1}"
    );
    assert_eq!(r.flows[0].dropped_frames, dropped);
    assert!(at_b.first_ps.is_some());
}

#[test]
fn the_same_seed_corrupts_the_same_frames_and_another_seed_others() {
    let with = |seed: u64| {
        let mut c = line("off");
        c.seed = seed;
        c.links[1].ber = 1e-6;
        serde_json::to_string(&run(c)).unwrap()
    };
    assert_eq!(with(1), with(1));
    assert_ne!(with(1), with(2));
}

#[test]
fn a_data_frame_of_a_lossless_priority_lost_to_bit_errors_is_a_finding() {
    let mut c = line("pfc");
    c.links[1].ber = 1e-6;
    let r = run(c);
    assert!(r.lossless.dropped_frames > 0);
    let d = r.lossless.drops.iter().find(|d| d.reason == "fcs_error").unwrap();
    assert_eq!((d.node.as_str(), d.priority), ("b", 3));
}

/// [`LINE`] with PFC, where `b` drains at 10 Gb/s and sends PFC to `s`.
fn slow() -> SimConfig {
    config(
        &LINE
            .replace("FC", "pfc")
            .replace("200us", "400us")
            .replace("buffer_bytes = 1_000_000", "buffer_bytes = 4_000_000")
            .replace(
                "name = \"b\"\n",
                "name = \"b\"\nrx_rate = \"10G\"\nrx_buffer_bytes = 200_000\nrx_xoff_bytes = 60_000\nrx_xon_bytes = 30_000\n",
            ),
    )
}

#[test]
fn pfc_frames_lost_to_bit_errors_are_counted_and_never_acted_on() {
    let clean = run(slow());
    let mut c = slow();
    // a PFC frame is 512 bits: one in about 20 is lost
    c.links[1].ber = 1e-4;
    let r = run(c);
    let at_s = r
        .link_errors
        .as_ref()
        .unwrap()
        .iter()
        .find(|e| e.node == "s")
        .unwrap();
    assert!(at_s.corrupted_control_frames > 0, "{at_s:?}");
    // PFC frames (XOFF and XON) of priority 3 one end sent and the other's MAC received
    let pfc = |r: &Report, node: &str| {
        let port = r.ports.iter().find(|p| p.node == node).unwrap();
        let p = port.priorities.iter().find(|q| q.priority == 3).unwrap();
        (
            p.pfc_xoff_sent_frames + p.pfc_xon_sent_frames,
            p.pfc_xoff_received_frames + p.pfc_xon_received_frames,
        )
    };
    let s_received = |r: &Report| {
        let port = r.ports.iter().find(|p| p.node == "s" && p.peer == "b").unwrap();
        let p = port.priorities.iter().find(|q| q.priority == 3).unwrap();
        p.pfc_xoff_received_frames + p.pfc_xon_received_frames
    };
    let (b_sent, _) = pfc(&r, "b");
    assert!(b_sent > 0);
    // the switch's MAC received exactly the PFC frames that survived
    assert_eq!(s_received(&r) + at_s.corrupted_control_frames, b_sent);
    assert_eq!(s_received(&clean), pfc(&clean, "b").0);
}

/// Four RoCEv2 QPs of 200 kB each into one receiver, a link with bit errors on the way.
const ROCE: &str = r#"
name = "roce"
duration = "5ms"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
[qp]
cc = "dcqcn"
preset = "hpcc-ns3"
rocev2 = { preset = "perftest", rto = "100us" }
[ecn]
preset = "hpcc-ns3"
priorities = [3]
[[host]]
name = "sender"
count = 4
[[host]]
name = "receiver"
[[switch]]
name = "tor"
buffer_bytes = 12_000_000
[[link]]
a = "sender*"
b = "tor"
[[link]]
a = "tor"
b = "receiver"
[[flow]]
name = "qp"
src = "sender*"
dst = "receiver"
priority = 3
size_bytes = 200_000
transport = "rocev2"
"#;

#[test]
fn a_roce_qp_delivers_every_byte_once_over_a_link_with_bit_errors() {
    let mut c = config(ROCE);
    let last = c.links.len() - 1;
    c.links[last].ber = 1e-6;
    let r = run(c);
    r.check().unwrap();
    assert!(
        r.conservation
            .dropped_frames
            .get("fcs_error")
            .copied()
            .unwrap_or(0)
            > 0
    );
    for f in &r.flows {
        assert!(f.completion_ps.is_some(), "{} did not finish", f.name);
        assert!(f.qp.as_ref().unwrap().retransmitted_frames > 0 || f.dropped_frames == 0);
    }
}

#[test]
fn the_ber_key_of_a_link_or_of_defaults_sets_its_bit_error_rate() {
    let on_link = LINE
        .replace("FC", "off")
        .replace("a = \"s\"\nb = \"b\"", "a = \"s\"\nb = \"b\"\nber = 1e-9");
    let c = config(&on_link);
    assert_eq!((c.links[0].ber, c.links[1].ber), (0.0, 1e-9));
    let in_defaults = LINE
        .replace("FC", "off")
        .replace("[defaults]\n", "[defaults]\nber = 2e-12\n");
    let c = config(&in_defaults);
    assert_eq!((c.links[0].ber, c.links[1].ber), (2e-12, 2e-12));
}

#[test]
fn a_bit_error_rate_outside_0_to_1_is_refused_with_its_line() {
    for bad in ["1.0", "-1e-9", "nan"] {
        let text = LINE
            .replace("FC", "off")
            .replace("[defaults]\n", &format!("[defaults]\nber = {bad}\n"));
        let e = load_str(&text, "inline.toml", None, &Overrides::default()).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.starts_with("inline.toml:5: key `ber`")
                && shown.contains("allowed a bit error rate from 0 up to"),
            "{shown}"
        );
    }
}
