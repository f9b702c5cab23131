//! The kernel's pause counters: `ethtool -S` names of real drivers mapped to direction,
//! priority and kind (names from each driver's format strings in the Linux tree, and a recorded
//! E810 output from Intel's guide, `tests/data/ethtool-S/`); the ioctl path on a veth's real
//! reply (root only; skipped loudly otherwise); pfcwd on counters as SONiC runs it on an ASIC.

use std::process::Command;

use lossless_live::counters::{CounterSample, CounterWatch, Family, Kind, LINK_SLOT, SlotCounters, classify};
use lossless_live::ethtool_stats::{EthtoolStats, StatsError};
use lossless_live::link::Direction;
use lossless_live::netlink::ethtool::EthtoolNetlink;
use lossless_proto::units::Duration;
use lossless_proto::watchdog::pfcwd::{self, Rule, Verdict};

/// `ethtool -S` text (`name: value` lines, `#` comments) as (name, value) pairs.
fn parse_ethtool_text(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let (n, v) = l.trim().rsplit_once(": ")?;
            Some((n.trim().to_owned(), v.trim().parse().ok()?))
        })
        .collect()
}

fn rx(p: usize) -> (Option<Direction>, Option<usize>) {
    (Some(Direction::Rx), Some(p))
}
fn tx(p: usize) -> (Option<Direction>, Option<usize>) {
    (Some(Direction::Tx), Some(p))
}

fn check(name: &str, family: Family, (d, s): (Option<Direction>, Option<usize>), kind: Kind) {
    let k = classify(name).unwrap_or_else(|| panic!("{name} not recognised"));
    assert_eq!(
        (k.family, k.direction, k.slot, k.kind),
        (family, d, s, kind),
        "{name}"
    );
}

#[test]
fn mlx5_names_from_en_stats_c_map_to_direction_priority_and_kind() {
    // pport_per_prio_pfc_stats_desc: "rx_%s_pause", "rx_%s_pause_duration", "tx_%s_pause",
    // "tx_%s_pause_duration", "rx_%s_pause_transition", %s = "prio{p}" or "global"
    for p in 0..8 {
        let s = format!("prio{p}");
        check(&format!("rx_{s}_pause"), Family::Mlx5, rx(p), Kind::Frames);
        check(
            &format!("rx_{s}_pause_duration"),
            Family::Mlx5,
            rx(p),
            Kind::DurationUs,
        );
        check(&format!("tx_{s}_pause"), Family::Mlx5, tx(p), Kind::Frames);
        check(
            &format!("tx_{s}_pause_duration"),
            Family::Mlx5,
            tx(p),
            Kind::DurationUs,
        );
        check(
            &format!("rx_{s}_pause_transition"),
            Family::Mlx5,
            rx(p),
            Kind::Transitions,
        );
        // pport_per_prio_traffic_stats_desc
        check(&format!("rx_prio{p}_packets"), Family::Mlx5, rx(p), Kind::Packets);
        check(&format!("tx_prio{p}_packets"), Family::Mlx5, tx(p), Kind::Packets);
        assert_eq!(classify(&format!("rx_prio{p}_bytes")), None);
        assert_eq!(classify(&format!("rx_prio{p}_discards")), None);
    }
    check("rx_global_pause", Family::Mlx5, rx(LINK_SLOT), Kind::Frames);
    check(
        "tx_global_pause_duration",
        Family::Mlx5,
        tx(LINK_SLOT),
        Kind::DurationUs,
    );
    // pport_pfc_stall_stats_desc
    check(
        "tx_pause_storm_warning_events",
        Family::Mlx5,
        (None, None),
        Kind::StormWarning,
    );
    check(
        "tx_pause_storm_error_events",
        Family::Mlx5,
        (None, None),
        Kind::StormError,
    );
    // a ninth priority or a two-digit one is not a priority
    assert_eq!(classify("rx_prio8_pause"), None);
    assert_eq!(classify("rx_prio03_pause"), None);
}

#[test]
fn bnxt_en_names_from_bnxt_ethtool_c_map_to_direction_priority_and_kind() {
    for p in 0..8 {
        check(
            &format!("rx_pfc_ena_frames_pri{p}"),
            Family::Bnxt,
            rx(p),
            Kind::Frames,
        );
        check(
            &format!("tx_pfc_ena_frames_pri{p}"),
            Family::Bnxt,
            tx(p),
            Kind::Frames,
        );
        // BNXT_RX_STATS_EXT_PFC_ENTRY / BNXT_TX_STATS_EXT_PFC_ENTRY
        check(
            &format!("pfc_pri{p}_rx_duration_us"),
            Family::Bnxt,
            rx(p),
            Kind::DurationUs,
        );
        check(
            &format!("pfc_pri{p}_rx_transitions"),
            Family::Bnxt,
            rx(p),
            Kind::Transitions,
        );
        check(
            &format!("pfc_pri{p}_tx_duration_us"),
            Family::Bnxt,
            tx(p),
            Kind::DurationUs,
        );
        check(
            &format!("pfc_pri{p}_tx_transitions"),
            Family::Bnxt,
            tx(p),
            Kind::Transitions,
        );
    }
    check("rx_pause_frames", Family::Bnxt, rx(LINK_SLOT), Kind::Frames);
    check("tx_pause_frames", Family::Bnxt, tx(LINK_SLOT), Kind::Frames);
    assert_eq!(
        classify("rx_pfc_frames"),
        None,
        "all priorities together: not one slot"
    );
}

#[test]
fn ice_and_i40e_names_map_to_xon_and_xoff_per_priority() {
    for p in 0..8 {
        check(&format!("tx_priority_{p}_xon.nic"), Family::Ice, tx(p), Kind::Xon);
        check(
            &format!("tx_priority_{p}_xoff.nic"),
            Family::Ice,
            tx(p),
            Kind::Xoff,
        );
        check(&format!("rx_priority_{p}_xon.nic"), Family::Ice, rx(p), Kind::Xon);
        check(
            &format!("rx_priority_{p}_xoff.nic"),
            Family::Ice,
            rx(p),
            Kind::Xoff,
        );
        // i40e_gstrings_pfc_stats (current kernels) and the older names without the suffix
        check(
            &format!("port.tx_priority_{p}_xon_tx"),
            Family::I40e,
            tx(p),
            Kind::Xon,
        );
        check(
            &format!("port.tx_priority_{p}_xoff_tx"),
            Family::I40e,
            tx(p),
            Kind::Xoff,
        );
        check(
            &format!("port.rx_priority_{p}_xon_rx"),
            Family::I40e,
            rx(p),
            Kind::Xon,
        );
        check(
            &format!("port.rx_priority_{p}_xoff_rx"),
            Family::I40e,
            rx(p),
            Kind::Xoff,
        );
        check(
            &format!("port.rx_priority_{p}_xon_2_xoff"),
            Family::I40e,
            rx(p),
            Kind::Transitions,
        );
        check(
            &format!("port.tx_priority_{p}_xoff"),
            Family::I40e,
            tx(p),
            Kind::Xoff,
        );
        check(
            &format!("port.rx_priority_{p}_xon"),
            Family::I40e,
            rx(p),
            Kind::Xon,
        );
    }
    check("link_xoff_rx.nic", Family::Ice, rx(LINK_SLOT), Kind::Xoff);
    check("link_xon_tx.nic", Family::Ice, tx(LINK_SLOT), Kind::Xon);
    check("port.link_xoff_tx", Family::I40e, tx(LINK_SLOT), Kind::Xoff);
    check("port.link_xon_rx", Family::I40e, rx(LINK_SLOT), Kind::Xon);
    assert_eq!(
        classify("port.tx_priority_3_xon_rx"),
        None,
        "direction suffix must agree"
    );
}

#[test]
fn veth_and_other_names_are_not_pause_counters() {
    for n in [
        "peer_ifindex",
        "rx_queue_0_xdp_packets",
        "rx_packets",
        "tx_bytes",
        "rx_pause_ctrl_phy",
        "rx_priority_pause_frames",
    ] {
        assert_eq!(classify(n), None, "{n}");
    }
}

#[test]
fn the_recorded_e810_output_gives_per_priority_xoff_and_xon_sent() {
    let text = include_str!("data/ethtool-S/ice-e810-intel-635330.txt");
    let stats = parse_ethtool_text(text);
    assert_eq!(stats.len(), 32);
    let s = CounterSample::from_stats(stats.iter().map(|(n, v)| (n.as_str(), *v)));
    assert_eq!(s.family, Some(Family::Ice));
    assert_eq!(s.names.len(), 32);
    let p2 = s.slot(Direction::Tx, 2);
    assert_eq!((p2.xon, p2.xoff, p2.frames), (Some(2), Some(14864), Some(14866)));
    assert_eq!(s.slot(Direction::Tx, 4).frames, Some(0));
    for p in 0..8 {
        assert_eq!(s.slot(Direction::Rx, p).frames, Some(0), "rx p{p}");
        assert_eq!(s.slot(Direction::Rx, p).duration_us, None);
    }
    // ice counts frames only: pfcwd's Mellanox rule cannot be run on it, and says why
    let gap = s.pfcwd_gap(Rule::Mellanox).unwrap();
    assert!(gap.contains("ice") && gap.contains("duration"), "{gap}");
}

fn mlx5_sample(rx3_pause: u64, rx3_duration_us: u64, tx3_packets: u64) -> CounterSample {
    let stats = [
        ("rx_prio3_pause", rx3_pause),
        ("rx_prio3_pause_duration", rx3_duration_us),
        ("rx_prio3_pause_transition", 1),
        ("tx_prio3_pause", 0),
        ("tx_prio3_pause_duration", 0),
        ("tx_prio3_packets", tx3_packets),
        ("rx_prio3_packets", 0),
    ];
    CounterSample::from_stats(stats)
}

#[test]
fn pfcwd_on_mlx5_counters_declares_a_storm_after_the_detection_time_of_full_pause() {
    let cfg = pfcwd::Config {
        detection: Duration::from_ms(200),
        restoration: Duration::from_ms(200),
        poll: Duration::from_ms(100),
        action: pfcwd::Action::Drop,
        rule: Rule::Mellanox,
    };
    let mut w = CounterWatch::new(cfg);
    let poll = Duration::from_ms(100);
    // first sample: baseline
    assert!(w.poll(poll, &mlx5_sample(10, 0, 500)).is_empty());
    // paused the whole interval (100 000 µs), PFC received, nothing sent: charges 100 ms
    assert!(w.poll(poll, &mlx5_sample(60, 100_000, 500)).is_empty());
    let v = w.poll(poll, &mlx5_sample(110, 200_000, 500));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(
        (v[0].direction, v[0].slot, v[0].verdict),
        (Direction::Rx, 3, Verdict::Storm)
    );
    assert_eq!(w.queue(Direction::Rx, 3).detected(), 1);
    // pfc_restore: polls without PFC frames for the restoration time restore it
    let mut restored = None;
    for i in 0..4 {
        if let Some(r) = w.poll(poll, &mlx5_sample(110, 200_000, 500)).first() {
            restored = Some((i, r.verdict));
        }
    }
    assert_eq!(restored.map(|r| r.1), Some(Verdict::Restore));
}

#[test]
fn pfcwd_on_counters_sees_no_storm_when_the_paused_queue_still_sends() {
    let cfg = pfcwd::Config {
        detection: Duration::from_ms(200),
        restoration: Duration::from_ms(200),
        poll: Duration::from_ms(100),
        action: pfcwd::Action::Drop,
        rule: Rule::Mellanox,
    };
    let mut w = CounterWatch::new(cfg);
    let poll = Duration::from_ms(100);
    let mut sent = 0;
    for i in 0..10u64 {
        sent += 1000;
        assert!(
            w.poll(poll, &mlx5_sample(50 * i, 100_000 * i, sent)).is_empty(),
            "poll {i}"
        );
    }
}

#[test]
fn a_sample_without_duration_counters_leaves_duration_empty() {
    let s = CounterSample::from_stats([("rx_pfc_ena_frames_pri3", 5)]);
    assert_eq!(
        s.slot(Direction::Rx, 3),
        SlotCounters {
            frames: Some(5),
            ..Default::default()
        }
    );
    assert!(s.pfcwd_gap(Rule::Mellanox).is_some());
    assert!(s.pfcwd_gap(Rule::Broadcom).is_some());
}

/// A veth pair in this namespace, deleted on drop.
struct Veth(String);
impl Veth {
    fn new(tag: &str) -> Veth {
        let a = format!("lk{tag}{}a", std::process::id());
        let b = format!("lk{tag}{}b", std::process::id());
        let st = Command::new("ip")
            .args(["link", "add", &a, "type", "veth", "peer", "name", &b])
            .status()
            .expect("run ip");
        assert!(st.success());
        Veth(a)
    }
}
impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).status();
    }
}

#[test]
fn a_veths_real_gstats_reply_is_read_and_has_no_pause_counter() {
    if !lossless_testkit::require_root("a_veths_real_gstats_reply_is_read_and_has_no_pause_counter") {
        return;
    }
    let v = Veth::new("s");
    let s = EthtoolStats::open(&v.0).expect("veth answers ETHTOOL_GSSET_INFO");
    // veth_get_strings: "peer_ifindex" first, then per-queue counters
    assert_eq!(s.names().first().map(String::as_str), Some("peer_ifindex"));
    let stats = s.read().unwrap();
    assert_eq!(stats.len(), s.names().len());
    let peer = stats[0].1;
    let want: u64 = std::fs::read_to_string(format!("/sys/class/net/lks{}b/ifindex", std::process::id()))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(peer, want, "peer_ifindex is the peer's ifindex");
    let sample = CounterSample::from_stats(stats.iter().map(|(n, v)| (n.as_str(), *v)));
    assert!(sample.is_empty(), "{:?}", sample.names);
}

#[test]
fn a_veth_has_no_pause_settings_and_netlink_says_so() {
    if !lossless_testkit::require_root("a_veth_has_no_pause_settings_and_netlink_says_so") {
        return;
    }
    let v = Veth::new("p");
    let mut nl = EthtoolNetlink::open().expect("the ethtool genetlink family exists");
    let e = nl.pause(&v.0).unwrap_err();
    assert_eq!(e.errno(), Some(libc::EOPNOTSUPP), "{e}");
}

#[test]
fn a_missing_interface_is_an_error_not_a_panic() {
    let e = EthtoolStats::open("nosuchif0").unwrap_err();
    assert!(
        matches!(e, StatsError::NotSupported { .. } | StatsError::Io { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("nosuchif0"), "{e}");
    assert!(matches!(
        EthtoolStats::open("a-name-longer-than-15"),
        Err(StatsError::BadIfname(_))
    ));
}

#[test]
fn prometheus_names_kernel_figures_apart_from_frames() {
    use lossless_live::kernel::{CountersReport, SlotReport};
    use lossless_live::prometheus::render_kernel;
    use lossless_proto::watchdog::pfcwd::Status;
    let r = CountersReport {
        driver: Some("mlx5_core".into()),
        ethtool_stats: "40 pause counters".into(),
        pause_stats: "tx_pause_frames, rx_pause_frames".into(),
        pfcwd: "runs (mellanox rule) on the counters every poll".into(),
        storm_warning_events: Some(1),
        storm_error_events: Some(0),
        slots: vec![SlotReport {
            slot: "p3".into(),
            direction: Direction::Rx,
            frames: Some(120),
            xoff: None,
            paused_s: Some(0.25),
            transitions: Some(2),
            from: vec!["rx_prio3_pause".into(), "rx_prio3_pause_duration".into()],
            pfc_wd_status: Status::Stormed,
            pfc_wd_queue_stats_deadlock_detected: 1,
            pfc_wd_queue_stats_deadlock_restored: 0,
        }],
        only_frames_seen: false,
    };
    let t = render_kernel(&r, "eth1");
    for line in [
        "lossless_kernel_counters_available{iface=\"eth1\"} 1",
        "lossless_kernel_pause_frames_total{iface=\"eth1\",direction=\"rx\",slot=\"p3\"} 120",
        "lossless_kernel_paused_seconds_total{iface=\"eth1\",direction=\"rx\",slot=\"p3\"} 0.25",
        "lossless_kernel_pfc_wd_status{iface=\"eth1\",direction=\"rx\",slot=\"p3\"} 1",
        "lossless_kernel_tx_pause_storm_warning_events_total{iface=\"eth1\"} 1",
    ] {
        assert!(t.lines().any(|l| l == line), "{line} missing from:\n{t}");
    }
    assert!(!t.contains("xoff_frames_total"), "no row, no metric:\n{t}");
    let veth = CountersReport {
        slots: vec![],
        only_frames_seen: true,
        pfcwd: "not run on counters: no pause counter of a known driver".into(),
        storm_warning_events: None,
        storm_error_events: None,
        ..r
    };
    assert_eq!(
        render_kernel(&veth, "veth0").lines().last(),
        Some("lossless_kernel_counters_available{iface=\"veth0\"} 0")
    );
}
