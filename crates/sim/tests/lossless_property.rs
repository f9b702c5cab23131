//! A lossless class never drops a frame when its headroom is what the worst case needs: for
//! random small fabrics (one switch, or two in a line), link rates from 10G to 800G, cables
//! of 1 to 500 m and MTUs of 1500 to 9000 bytes, with an incast at line rate on the lossless
//! priority and line-rate traffic back the other way (so every switch transmitter is busy
//! when it decides XOFF), no frame of the lossless priority is dropped:
//! - in the 802.3/802.1Qbb-exact model with the default headroom (Annex N plus the frame a
//!   busy transmitter makes the PFC frame wait for, `headroom::default_headroom_bytes`);
//! - under the HPCC ns-3 preset (its MMU, its PFC without pause timers, its framing) with that
//!   same headroom given to its switches;
//! - and with Annex N's own figure when no traffic flows back (`lossless headroom`'s first
//!   line: it leaves out the busy transmitter, docs/headroom.md).
//!
//! A drop would be a finding in the report's `lossless` verdict; these runs must have none.

use lossless_proto::headroom::{AnnexNInput, InterfaceDelay, PeerDelay, frame_bytes};
use lossless_sim::config::headroom::default_headroom_bytes;
use lossless_sim::config::model::ModelConfig;
use lossless_sim::config::{NodeKind, SimConfig};
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};
use proptest::prelude::*;

const RATES: [&str; 7] = ["10G", "25G", "40G", "100G", "200G", "400G", "800G"];
const MTUS: [u64; 4] = [1500, 4096, 8000, 9000];

/// The scenario: `hosts` senders and one receiver on switch s0 (with two switches, the
/// receiver hangs off s1), an incast to the receiver on priority 3 and, with `back`, the
/// receiver sending to the first sender at line rate on the same priority.
fn scenario(rate: &str, length_m: u64, mtu: u64, hosts: usize, two_switches: bool, back: bool) -> String {
    let mut t = format!(
        "name = \"p\"\nduration = \"100us\"\n[defaults]\nrate = \"{rate}\"\nlength_m = {length_m}\nmtu = {mtu}\n\
         flow_control = \"pfc\"\npfc_priorities = [3]\n"
    );
    for i in 0..=hosts {
        t += &format!("[[host]]\nname = \"h{i}\"\n");
    }
    let switches: &[&str] = if two_switches { &["s0", "s1"] } else { &["s0"] };
    for s in switches {
        // a small static threshold, so that PFC fires within the run
        t += &format!(
            "[[switch]]\nname = \"{s}\"\nbuffer_bytes = 8_000_000\nthreshold = \"static\"\nstatic_threshold_bytes = {}\nmtu = {mtu}\n",
            2 * (mtu + 22)
        );
    }
    let last = if two_switches { "s1" } else { "s0" };
    for i in 1..=hosts {
        t += &format!("[[link]]\na = \"h{i}\"\nb = \"s0\"\n");
    }
    t += &format!("[[link]]\na = \"h0\"\nb = \"{last}\"\n");
    if two_switches {
        t += "[[link]]\na = \"s0\"\nb = \"s1\"\n";
    }
    for i in 1..=hosts {
        t += &format!(
            "[[flow]]\nname = \"in{i}\"\nsrc = \"h{i}\"\ndst = \"h0\"\npriority = 3\nmtu = {mtu}\nstop = \"90us\"\n"
        );
    }
    if back {
        t += &format!(
            "[[flow]]\nname = \"back\"\nsrc = \"h0\"\ndst = \"h1\"\npriority = 3\nmtu = {mtu}\nstop = \"90us\"\n"
        );
    }
    t
}

/// PFC XOFF frames sent anywhere (the mechanism under test really fired).
fn xoff_sent(r: &Report) -> u64 {
    r.ports
        .iter()
        .flat_map(|p| &p.priorities)
        .map(|q| q.pfc_xoff_sent_frames)
        .sum()
}

fn run(c: SimConfig) -> Report {
    let mut sim = Simulator::new(c).expect("builds");
    sim.run();
    let r = Report::collect(&sim);
    r.check().expect("sound run");
    r
}

/// Every switch's headroom set to the largest default headroom among its ports.
fn with_default_headroom_given(mut c: SimConfig) -> SimConfig {
    let links = c.links.clone();
    for (id, n) in c.nodes.iter_mut().enumerate() {
        if let NodeKind::Switch(s) = &mut n.kind {
            let h = links
                .iter()
                .flat_map(|l| [(l.a, true), (l.b, false)].map(|(end, at_a)| (end, at_a, l)))
                .filter(|(end, _, _)| *end as usize == id)
                .map(|(_, at_a, l)| default_headroom_bytes(l, at_a, s.mtu))
                .max()
                .unwrap_or(0);
            s.headroom_bytes = Some(h);
        }
    }
    c
}

/// Every switch's headroom set to Annex N's figure for its ports' worst link.
fn with_annex_n(mut c: SimConfig) -> SimConfig {
    let links = c.links.clone();
    for (id, n) in c.nodes.iter_mut().enumerate() {
        if let NodeKind::Switch(s) = &mut n.kind {
            let h = links
                .iter()
                .filter(|l| l.a as usize == id || l.b as usize == id)
                .map(|l| {
                    AnnexNInput {
                        rate: l.rate,
                        cable_m: l.length_m,
                        max_frame_bytes: frame_bytes(s.mtu),
                        lossless_frame_bytes: frame_bytes(s.mtu),
                        interface_delay: InterfaceDelay::Ieee8023,
                        peer_delay: PeerDelay::Ieee8023,
                    }
                    .compute()
                    .headroom_bytes
                })
                .max()
                .unwrap_or(0);
            s.headroom_bytes = Some(h);
        }
    }
    c
}

/// Under the HPCC ns-3 MMU the threshold is the free buffer over 8: a buffer of its ports'
/// headroom and reserves plus 8 largest frames makes PFC fire within the run.
fn shrink_for_ns3(c: &mut SimConfig) {
    let links = c.links.clone();
    for (id, n) in c.nodes.iter_mut().enumerate() {
        if let NodeKind::Switch(s) = &mut n.kind {
            let ports = links
                .iter()
                .filter(|l| l.a as usize == id || l.b as usize == id)
                .count() as u64;
            s.buffer_bytes = ports * (s.headroom_bytes.unwrap_or(0) + 4096) + 8 * (s.mtu + 22);
        }
    }
}

fn load(text: &str) -> SimConfig {
    load_str(text, "p.toml", None, &Overrides::default()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_worst_case_headroom_drops_no_lossless_frame_in_either_model(
        rate in 0..RATES.len(),
        length_m in 1u64..=500,
        mtu in 0..MTUS.len(),
        hosts in 2usize..=5,
        two_switches in any::<bool>(),
    ) {
        let text = scenario(RATES[rate], length_m, MTUS[mtu], hosts, two_switches, true);
        let exact = run(load(&text));
        prop_assert_eq!(exact.lossless.dropped_frames, 0, "exact model:\n{}", exact.lossless.text(5));
        // the incast paused somebody: PFC really fired
        prop_assert!(xoff_sent(&exact) > 0, "no XOFF in\n{text}");
        let mut ns3 = with_default_headroom_given(load(&text));
        ns3.model = ModelConfig::HPCC_NS3;
        shrink_for_ns3(&mut ns3);
        let r = run(ns3);
        prop_assert_eq!(r.lossless.dropped_frames, 0, "hpcc-ns3 preset:\n{}", r.lossless.text(5));
        prop_assert!(xoff_sent(&r) > 0, "no PAUSE under the hpcc-ns3 preset in\n{text}");
    }

    #[test]
    fn annex_n_drops_no_lossless_frame_when_nothing_flows_back(
        rate in 0..RATES.len(),
        length_m in 1u64..=500,
        mtu in 0..MTUS.len(),
        hosts in 2usize..=5,
        two_switches in any::<bool>(),
    ) {
        let text = scenario(RATES[rate], length_m, MTUS[mtu], hosts, two_switches, false);
        let r = run(with_annex_n(load(&text)));
        prop_assert_eq!(r.lossless.dropped_frames, 0, "{}", r.lossless.text(5));
        prop_assert!(xoff_sent(&r) > 0, "no XOFF in\n{text}");
    }
}
