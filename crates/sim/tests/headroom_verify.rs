//! `lossless headroom --verify`'s worst case (issue 14's Proof): with 802.1Qbb Annex N's
//! headroom no lossless frame is dropped, with one byte less than the bisected headroom some
//! are, and the bisected value is exactly what the worst sender's pair used.

use lossless_proto::headroom::{InterfaceDelay, PeerDelay};
use lossless_proto::units::{Duration, Rate};
use lossless_sim::experiments::headroom::verify::{Setup, Verified, verify};
use lossless_sim::experiments::headroom::worst_case::{plan, run_once};

fn setup(gbps: u64, cable_m: u64, mtu: u64) -> Setup {
    let rate = Rate::from_gbps(gbps);
    Setup {
        rate,
        cable_m,
        mtu,
        lossless_mtu: mtu,
        interface_delay: InterfaceDelay::Ieee8023.duration(rate),
        peer_delay: PeerDelay::Ieee8023.duration(rate),
        priority: 3,
        senders: 8,
        reverse_traffic: false,
    }
}

const SETUPS: [(u64, u64, u64); 5] = [
    (10, 3, 9216),
    (25, 100, 1500),
    (100, 100, 9216),
    (100, 3, 1500),
    (400, 3, 9216),
];

fn verified(s: &Setup) -> Verified {
    let mut last = 0;
    let v = verify(s, &mut |p| {
        assert!(p.runs >= last, "progress never goes back");
        last = p.runs;
    })
    .expect("verifies");
    assert_eq!(last, v.runs_total, "the last progress report is the last run");
    v
}

#[test]
fn annex_n_headroom_drops_nothing_in_the_worst_case_and_one_byte_below_the_bisected_value_drops() {
    for (g, m, mtu) in SETUPS {
        let s = setup(g, m, mtu);
        let v = verified(&s);
        let fillers = plan(&s).unwrap();
        let annex = s.annex_n().headroom_bytes;
        assert!(
            v.headroom_bytes <= annex,
            "{g}G {m} m: needs {} > Annex N {annex}",
            v.headroom_bytes
        );
        assert_eq!(
            run_once(&s, &fillers, annex).unwrap().drops_total(),
            0,
            "{g}G {m} m at Annex N"
        );
        assert_eq!(run_once(&s, &fillers, v.headroom_bytes).unwrap().drops_total(), 0);
        let below = run_once(&s, &fillers, v.headroom_bytes - 1).unwrap();
        assert!(below.drops_total() > 0, "{g}G {m} m: no drop one byte below");
        assert_eq!(below.drops_total(), v.drops_below_total);
    }
}

#[test]
fn the_bisected_headroom_is_what_the_worst_senders_pair_used() {
    // two measures of one thing: the bisection's answer (drops or not) and the buffer's peak
    // charge less the one frame in the shared pool, with ample headroom
    for (g, m, mtu) in SETUPS {
        let v = verified(&setup(g, m, mtu));
        let most = v.phases.iter().map(|p| p.needed_bytes).max().unwrap();
        assert_eq!(v.headroom_bytes, most, "{g}G {m} m");
        assert_eq!(v.phases[0].needed_bytes, most, "worst phase listed first");
    }
}

#[test]
fn the_worst_phase_starts_a_full_frame_less_than_a_byte_time_before_the_pause_takes_effect() {
    for (g, m, mtu) in SETUPS {
        let s = setup(g, m, mtu);
        let v = verified(&s);
        let byte = s.rate.time_for_bytes(1).as_ps();
        let s0 = v.phases.iter().find(|p| p.sender == "s0").unwrap();
        assert!(
            s0.last_start_before_pause_ps <= byte,
            "{g}G {m} m: s0's last frame started {} ps before its pause",
            s0.last_start_before_pause_ps
        );
        // s0 aims at the worst phase: no other phase needs more
        assert_eq!(s0.needed_bytes, v.headroom_bytes, "{g}G {m} m");
        // and the phase matters: the spread over one frame time is most of a frame
        let least = v.phases.iter().map(|p| p.needed_bytes).min().unwrap();
        assert!(
            v.headroom_bytes - least > v.frame_bytes / 2,
            "{g}G {m} m: spread {}",
            v.headroom_bytes - least
        );
    }
}

#[test]
fn annex_n_exceeds_the_worst_case_only_by_bytes_a_buffer_never_stores() {
    // Annex N adds wire time; the buffer stores frame bytes. With k frames in headroom (the
    // trigger and k − 1 the peer started after it) the difference is their preamble and IFG
    // (20 bytes each), the 12-byte IFGs of the PFC frame (the peer's delay runs from its last
    // bit) and of the trigger (no frame starts during it), and the worst phase's slack of less
    // than one byte: 20·k + 24 bytes and a fraction, nothing else.
    for (g, m, mtu) in SETUPS {
        let s = setup(g, m, mtu);
        let v = verified(&s);
        let k = v.phases[0].frames_in_headroom;
        let over = s.annex_n().headroom_bytes - v.headroom_bytes;
        assert!(
            (20 * k + 24..=20 * k + 25).contains(&over),
            "{g}G {m} m: Annex N {} over the need {} by {over}, k = {k}",
            s.annex_n().headroom_bytes,
            v.headroom_bytes
        );
    }
}

#[test]
fn the_pause_takes_effect_after_the_pfc_frame_the_round_trip_and_the_peer_delay() {
    // decision → pause: the PFC frame to its last bit (72 bytes), one way back (cable and PHY),
    // and the peer's reaction delay; nothing else delays it in the worst case
    for (g, m, mtu) in SETUPS {
        let s = setup(g, m, mtu);
        let v = verified(&s);
        let expected = s.rate.time_for_bytes(72)
            + lossless_proto::headroom::propagation(m)
            + s.interface_delay
            + s.peer_delay;
        for p in &v.phases {
            assert_eq!(
                p.decision_to_pause_ps,
                expected.as_ps(),
                "{g}G {m} m {}",
                p.sender
            );
        }
    }
}

#[test]
fn each_delay_adds_its_own_bytes_to_the_need() {
    // no interface delay: the need falls by the two directions' PHY bytes, to within one
    // frame's phase (the phase is re-aimed, so within the frames' 20-byte overheads)
    let s = setup(100, 100, 9216);
    let mut none = s;
    none.interface_delay = Duration::ZERO;
    let (a, b) = (verified(&s), verified(&none));
    let phy = 2 * 122_880 / 8;
    let k = a.phases[0].frames_in_headroom - b.phases[0].frames_in_headroom;
    let fall = a.headroom_bytes - b.headroom_bytes;
    assert_eq!(fall + 20 * k, phy, "fell by {fall} with {k} frames fewer");
}

#[test]
fn bad_setups_are_refused_with_the_allowed_range() {
    let mut s = setup(100, 3, 1500);
    s.senders = 0;
    let e = verify(&s, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("senders") && e.contains("1..=64"), "{e}");
    let mut s = setup(100, 3, 1500);
    s.rate = Rate::from_bps(3_000_000_000).unwrap();
    let e = verify(&s, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("rate") && e.contains("IEEE"), "{e}");
    let mut s = setup(100, 3, 1500);
    s.lossless_mtu = 20;
    assert!(
        verify(&s, &mut |_| {})
            .unwrap_err()
            .to_string()
            .contains("42..=65535")
    );
}

#[test]
fn a_busy_reverse_transmitter_costs_one_frame_more_than_annex_n_counts() {
    // The switch has just started a maximum frame towards the sender when it decides: its PFC
    // frame waits for that frame (its wire time less one byte). The trigger frame, decided at
    // its last bit, is in headroom as well, so the need exceeds Annex N, which counts one of
    // the two: by one frame less Annex N's margin (the frame's wire bytes, less one byte of
    // phase, less the 20 bytes of preamble and IFG a buffer does not store).
    for (g, m, mtu) in SETUPS {
        let idle = setup(g, m, mtu);
        let busy = Setup {
            reverse_traffic: true,
            ..idle
        };
        let (a, b) = (verified(&idle), verified(&busy));
        assert_eq!(
            b.headroom_bytes - a.headroom_bytes,
            a.frame_bytes - 1,
            "{g}G {m} m"
        );
        let annex = busy.annex_n().headroom_bytes;
        assert!(
            b.headroom_bytes > annex,
            "{g}G {m} m: {} ≤ Annex N {annex}",
            b.headroom_bytes
        );
        let fill = plan(&busy).unwrap();
        assert!(
            run_once(&busy, &fill, annex).unwrap().drops_total() > 0,
            "{g}G {m} m"
        );
        // the PFC frame waited for the reverse frame: the decision-to-pause time grew by it
        let wait = a.phases[0]
            .decision_to_pause_ps
            .abs_diff(b.phases[0].decision_to_pause_ps);
        let frame = idle.rate.wire_time(a.frame_bytes).as_ps() - idle.rate.time_for_bytes(1).as_ps();
        assert_eq!(wait, frame, "{g}G {m} m");
    }
}

#[test]
fn reverse_traffic_verifies_when_the_lossless_mtu_is_below_the_mtu() {
    // the reverse frames (of the larger mtu, a lossy priority) must fit the threshold that
    // every pair shares: it was two lossless frames, so none of them was ever forwarded and
    // the worst case failed ("no decision or reverse frame"), also for docs/headroom.md's SONiC
    // example (400G, 300 m, MTU 9100, lossless MTU 1024)
    for (g, m, mtu, lossless) in [(100, 100, 9216, 1500), (400, 300, 9100, 1024), (25, 3, 1500, 512)] {
        let mut idle = setup(g, m, mtu);
        idle.lossless_mtu = lossless;
        idle.senders = 2;
        let busy = Setup {
            reverse_traffic: true,
            ..idle
        };
        let (a, b) = (verified(&idle), verified(&busy));
        let reverse = lossless_proto::headroom::frame_bytes(mtu);
        // the PFC frame waited for a reverse frame of the larger mtu: its wire time less a
        // byte, filled with lossless frames whose preamble and IFG no buffer stores
        let (diff, k) = (
            b.headroom_bytes - a.headroom_bytes,
            b.phases[0].frames_in_headroom - a.phases[0].frames_in_headroom,
        );
        assert!(
            diff < reverse && diff + 20 * k >= reverse - 1,
            "{g}G {m} m {mtu}/{lossless}: {diff} more with {k} more frames, the reverse frame {reverse}"
        );
        let fill = plan(&busy).unwrap();
        assert_eq!(run_once(&busy, &fill, b.headroom_bytes).unwrap().drops_total(), 0);
        assert!(
            run_once(&busy, &fill, b.headroom_bytes - 1)
                .unwrap()
                .drops_total()
                > 0
        );
    }
}

#[test]
fn the_default_headroom_covers_the_verified_worst_case_with_a_busy_transmitter() {
    // the simulator's default for a switch port is the worst case with reverse traffic (the
    // PFC frame waiting for a maximum frame), in closed form: Annex N plus one frame. Annex N
    // alone under-provisions by nearly a frame (docs/headroom.md)
    for (g, m, mtu) in SETUPS {
        let mut busy = setup(g, m, mtu);
        busy.reverse_traffic = true;
        busy.senders = 2;
        let v = verified(&busy);
        let sim = lossless_sim::experiments::headroom::worst_case::config(&busy, &v.plan, v.headroom_bytes);
        // link 0 is sender 0's, its end b the switch's port
        let d = lossless_sim::config::headroom::default_headroom_bytes(&sim.links[0], false, mtu);
        let annex = busy.annex_n().headroom_bytes;
        assert!(
            annex < v.headroom_bytes,
            "{g}G {m} m: Annex N {annex} covers {}",
            v.headroom_bytes
        );
        assert!(
            d >= v.headroom_bytes && d - v.headroom_bytes < 20 * v.phases[0].frames_in_headroom + 64,
            "{g}G {m} m: default {d}, verified {}",
            v.headroom_bytes
        );
        let fill = plan(&busy).unwrap();
        assert_eq!(run_once(&busy, &fill, d).unwrap().drops_total(), 0, "{g}G {m} m");
    }
}
