//! Properties of runs with QPs, over random small incasts (senders, sizes, buffer thresholds,
//! lossy or PFC, go-back-N or IRN, DCQCN or none, stopping times): frames are conserved with
//! replies, CNPs and retransmissions counted (injected = delivered + queued + in flight +
//! dropped), every finished QP's responder delivered exactly its message, and a lossless class
//! drops nothing.

use lossless_proto::units::Duration;
use lossless_sim::scenario::{Overrides, load_str};
use lossless_sim::{Report, Simulator};
use proptest::prelude::*;

fn scenario(senders: u8, size: u64, threshold: u64, pfc: bool, irn: bool, dcqcn: bool) -> String {
    format!(
        r#"
name = "prop"
duration = "3ms"
[defaults]
rate = "100G"
length_m = 5
flow_control = "{fc}"
pfc_priorities = [3]
[qp]
cc = "{cc}"
rocev2 = {{ preset = "{rc}", mtu = 1024, rto = "50us" }}
[ecn]
kmin_bytes = 20_000
kmax_bytes = 80_000
pmax = 0.2
priorities = [3]
[[host]]
name = "s"
count = {senders}
[[host]]
name = "r"
[[switch]]
name = "tor"
buffer_bytes = 2_000_000
threshold = "static"
static_threshold_bytes = {threshold}
[[link]]
a = "s*"
b = "tor"
[[link]]
a = "tor"
b = "r"
[[flow]]
name = "f"
src = "s*"
dst = "r"
priority = 3
size_bytes = {size}
transport = "rocev2"
"#,
        fc = if pfc { "pfc" } else { "off" },
        cc = if dcqcn { "dcqcn" } else { "none" },
        rc = if irn { "irn-tlt" } else { "perftest" },
    )
    // IRN has its own timeouts
    .replace(if irn { ", rto = \"50us\"" } else { "\u{0}" }, "")
}

fn run(text: &str, stop_us: u64) -> Report {
    let ov = Overrides {
        duration: Some(Duration::from_us(stop_us)),
        ..Default::default()
    };
    let c = load_str(text, "prop.toml", None, &ov).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(c).unwrap();
    sim.run();
    Report::collect(&sim)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn qp_runs_conserve_frames_and_deliver_each_byte_once(
        senders in 1u8..=4,
        size in 1u64..300_000,
        threshold in 20_000u64..200_000,
        pfc in any::<bool>(),
        irn in any::<bool>(),
        dcqcn in any::<bool>(),
        stop_us in 20u64..3_000,
    ) {
        let text = scenario(senders, size, threshold, pfc, irn, dcqcn);
        let r = run(&text, stop_us);
        prop_assert!(r.check().is_ok(), "{:?}\n{}", r.check(), r.summary());
        let c = &r.conservation;
        prop_assert!(c.balanced);
        for f in &r.flows {
            let q = f.qp.as_ref().unwrap();
            if f.completion_ps.is_some() {
                prop_assert_eq!(q.transport_delivered_bytes, size, "{}", f.name);
            } else {
                prop_assert!(q.transport_delivered_bytes <= size);
            }
        }
        if pfc {
            prop_assert_eq!(r.lossless_drops(), 0);
        }
    }
}
