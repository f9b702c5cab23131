//! Fuzzed DCBX frames (valid IEEE and CEE LLDPDUs with bytes changed, cut or appended) never
//! panic the agent; every frame is counted, and the agent keeps transmitting.

use lossless_proto::dcbx::{Agent, DcbxConfig, ModeSetting, PfcConfig};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::units::{Duration, Instant};
use proptest::prelude::*;

fn seed_frames() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for mode in [ModeSetting::Ieee, ModeSetting::Cee] {
        let cfg = DcbxConfig {
            mode,
            pfc: PfcConfig {
                enable: vec![3],
                ..PfcConfig::default()
            },
            app: vec![lossless_proto::dcbx::AppPriority {
                selector: 1,
                protocol: 0x8906,
                priority: 3,
            }],
            ..DcbxConfig::default()
        };
        let mut a = Agent::new(AgentConfig::new([2, 0, 0, 0, 0, 7]), cfg).unwrap();
        out.push(a.poll_transmit(Instant::ZERO).unwrap());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
    #[test]
    fn mutated_dcbx_frames_are_counted_and_never_panic(
        which in 0usize..2,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
        tail in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut frame = seed_frames()[which].clone();
        for (i, b) in &edits {
            let at = 14 + i.index(frame.len() - 14);
            frame[at] = *b;
        }
        let keep = 14 + cut.index(frame.len() - 13);
        frame.truncate(keep);
        frame.extend_from_slice(&tail);
        let mut host = Agent::new(AgentConfig::new([2, 0, 0, 0, 0, 1]), DcbxConfig::default()).unwrap();
        let mut t = Instant::ZERO;
        for _ in 0..3 {
            prop_assert!(host.handle_ethernet(t, &frame));
            host.handle_timeout(t);
            while host.poll_transmit(t).is_some() {}
            while host.poll_event().is_some() {}
            t += Duration::from_secs(1);
        }
        let s = host.statistics();
        prop_assert_eq!(s.frames_in_total, 3);
        prop_assert!(s.frames_in_errors_total == 0 || s.frames_in_errors_total == 3);
        prop_assert!(host.lldp().is_running());
    }
}
