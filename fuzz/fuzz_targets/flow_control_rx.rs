//! The flow-control engine (PAUSE/PFC) driven by arbitrary sequences of received MAC Control
//! frames (parsed from the input with the wire codec), request changes, data frame starts,
//! polls and timeouts, with time moving forward. No call panics, and after every step:
//! counters never decrease, paused ⊆ enabled and requested ⊆ enabled, `may_transmit` agrees
//! with `paused_mask` and `pause_until`, `on_tx_start` succeeds exactly when
//! `may_start_data` says so, `poll_timeout` lies after the engine's latest time, an obeyed XON releases at
//! once, an obeyed XOFF of q quanta runs until max(arrival, end of own frame) + q quanta and,
//! with no reaction delay, blocks at once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_proto::flow_control::{
    ControlFrame, Counters, FlowControl, FlowControlConfig, MAC_CONTROL_MULTICAST, Mode, ReceivedBody,
    ReceivedControl, RxOutcome,
};
use lossless_proto::units::{Duration, IEEE_RATES, Instant};
use lossless_wire::mac_control::MacControlRepr;

/// Reads the input as a stream of small integers (zeros once it runs out).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }
}

/// Every counter, flattened, to check that none ever decreases.
fn flat(c: &Counters) -> Vec<u128> {
    let mut v: Vec<u128> = [
        c.mac_control_frames_transmitted,
        c.mac_control_frames_received,
        c.unsupported_opcodes_received,
        c.pause_mac_ctrl_frames_transmitted,
        c.pause_mac_ctrl_frames_received,
        c.pfc_frames_transmitted,
        c.pfc_frames_received,
        c.rx_wrong_destination,
        c.rx_wrong_length,
        c.rx_ignored_mode,
    ]
    .map(u128::from)
    .to_vec();
    for a in [
        &c.requests,
        &c.indications,
        &c.tx_prio_pause,
        &c.tx_prio_xon,
        &c.rx_prio_pause,
        &c.rx_prio_xon,
        &c.rx_prio_pause_transition,
    ] {
        v.extend(a.iter().map(|&x| u128::from(x)));
    }
    for a in [&c.tx_prio_pause_duration, &c.rx_prio_pause_duration] {
        v.extend(a.iter().map(|d| d.as_ps()));
    }
    v
}

fn config(b: &mut Bytes<'_>) -> FlowControlConfig {
    let mode = b.u8();
    let rate = IEEE_RATES[usize::from(b.u8()) % IEEE_RATES.len()];
    let station = [0x02, 0, 0, 0, 0, b.u8()];
    let mut cfg = match mode % 3 {
        0 => FlowControlConfig::off(rate, station),
        1 => FlowControlConfig::pause(rate, station),
        _ => FlowControlConfig::pfc(rate, station, b.u8()),
    };
    cfg.reaction_delay = match b.u8() % 3 {
        0 => Duration::ZERO,
        1 => cfg.reaction_delay,
        _ => rate.quanta_time(u64::from(b.u8())),
    };
    let regs = b.u8();
    for (p, pc) in cfg.priorities.iter_mut().enumerate() {
        if regs & (1 << p) != 0 {
            pc.pause_quanta = b.u16().max(1);
            pc.refresh_quanta = u32::from(b.u16()).max(1);
            let f = b.u8();
            pc.xon_on_release = f & 1 != 0;
            pc.hold_own_data = f & 2 != 0;
        }
    }
    cfg
}

fn slot(cfg: &FlowControlConfig, p: u8) -> u8 {
    if cfg.mode == Mode::Pfc { p & 7 } else { 0 }
}

fn check(fc: &FlowControl, now: Instant, before: &[u128], rx_total: &mut [Duration; 8]) {
    let cfg = fc.config();
    let active = cfg.active_mask();
    let after = flat(fc.counters());
    assert!(
        before.iter().zip(&after).all(|(a, b)| a <= b),
        "a counter decreased"
    );
    let paused = fc.paused_mask(now);
    assert_eq!(
        paused & !active,
        0,
        "paused {paused:#x} outside enabled {active:#x}"
    );
    let requested = fc.requested_mask();
    assert_eq!(
        requested & !active,
        0,
        "requested {requested:#x} outside enabled {active:#x}"
    );
    if let Some(t) = fc.poll_timeout() {
        assert!(
            t > fc.now(),
            "poll_timeout {t} not after the engine's now {}",
            fc.now()
        );
    }
    for p in 0..8u8 {
        let s = slot(cfg, p);
        let blocked = !fc.may_transmit(now, p);
        assert_eq!(
            blocked,
            paused & (1 << s) != 0,
            "may_transmit/paused_mask disagree for {p}"
        );
        if blocked {
            let until = fc
                .pause_until(now, p)
                .expect("a paused priority has a pause running");
            assert!(until > now);
        }
        let total = fc.rx_pause_duration(now, p);
        assert!(total >= rx_total[usize::from(p)], "rx pause duration decreased");
        assert!(total <= now.since_epoch());
        rx_total[usize::from(p)] = total;
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let cfg = config(&mut b);
    let Ok(mut fc) = FlowControl::new(cfg) else { return };
    let rate = cfg.rate;
    let mut now = Instant::ZERO;
    let mut last_bit = Instant::ZERO;
    let mut rx_total = [Duration::ZERO; 8];
    for _ in 0..512 {
        if b.0.is_empty() {
            break;
        }
        let before = flat(fc.counters());
        let op = b.u8();
        match op % 6 {
            0 => {
                let unit: u128 = [1, 1_000, 1_000_000][usize::from(op >> 3) % 3];
                now = Instant::from_ps(now.as_ps() + u128::from(b.u32()) * unit);
            }
            1 => {
                let p = b.u8();
                let _ = fc.set_request(now, p & 15, p & 0x80 != 0);
            }
            2 => {
                let due = fc.has_control_due(now) && now >= fc.wire_free_at();
                let t = fc.poll_transmit(now);
                assert_eq!(t.is_some(), due, "poll_transmit disagrees with has_control_due");
                if let Some(t) = t {
                    assert_eq!(t.start, now);
                    assert!(t.start < t.last_bit && t.last_bit < t.free_at);
                    assert_eq!(t.dst, MAC_CONTROL_MULTICAST);
                    match (cfg.mode, t.frame) {
                        (Mode::Pause, ControlFrame::Pause { .. }) => {}
                        (Mode::Pfc, ControlFrame::Pfc { enable_vector, time }) => {
                            assert_eq!(enable_vector & !cfg.active_mask(), 0);
                            for (p, &q) in time.iter().enumerate() {
                                assert!(enable_vector & (1 << p) != 0 || q == 0);
                            }
                        }
                        other => panic!("{other:?} sent by a port in that mode"),
                    }
                    last_bit = t.last_bit;
                }
            }
            3 => {
                let (len, p) = (u64::from(b.u16()), b.u8() & 7);
                let may = fc.may_start_data(now, p);
                let r = fc.on_tx_start(now, len, p);
                assert_eq!(r.is_ok(), may, "on_tx_start {r:?} but may_start_data {may}");
                if let Ok(s) = r {
                    assert_eq!(s.start, now);
                    last_bit = s.last_bit;
                }
            }
            4 => {
                let sel = b.u8();
                let dst = match sel & 3 {
                    0 | 1 => MAC_CONTROL_MULTICAST,
                    2 => cfg.station_address,
                    _ => [0x01, 0x80, 0xC2, 0, 0, 0x0E],
                };
                let frame_len = if sel & 4 == 0 { 64 } else { u32::from(b.u8()) };
                let Ok(repr) = MacControlRepr::parse_bytes(b.take(20)) else {
                    continue;
                };
                let body = match repr {
                    MacControlRepr::Pause { pause_time } => {
                        ReceivedBody::Known(ControlFrame::Pause { quanta: pause_time })
                    }
                    MacControlRepr::Pfc {
                        priority_enable_vector,
                        time,
                    } => ReceivedBody::Known(ControlFrame::Pfc {
                        enable_vector: priority_enable_vector as u8,
                        time,
                    }),
                    MacControlRepr::Unknown { opcode, .. } => ReceivedBody::Unknown { opcode },
                };
                let out = fc.handle_control_frame(now, &ReceivedControl { dst, frame_len, body });
                if let RxOutcome::Obeyed { priorities } = out {
                    assert_eq!(priorities & !cfg.active_mask(), 0);
                    let start = now.max(last_bit);
                    for p in (0..8u8).filter(|p| priorities & (1 << p) != 0) {
                        let q = match body {
                            ReceivedBody::Known(ControlFrame::Pause { quanta }) => quanta,
                            ReceivedBody::Known(ControlFrame::Pfc { time, .. }) => time[usize::from(p)],
                            ReceivedBody::Unknown { .. } => panic!("unknown opcode obeyed"),
                        };
                        if q == 0 {
                            assert!(fc.may_transmit(now, p), "XON obeyed but {p} still paused");
                            assert_eq!(fc.pause_until(now, p), None);
                        } else {
                            let until = start + rate.quanta_time(u64::from(q));
                            assert_eq!(fc.pause_until(now, p), Some(until), "pause of {q} quanta for {p}");
                            if cfg.reaction_delay == Duration::ZERO {
                                assert!(
                                    !fc.may_transmit(now, p),
                                    "XOFF obeyed but {p} not paused at {now}"
                                );
                            }
                        }
                    }
                }
            }
            _ => {
                if let Some(t) = fc.poll_timeout() {
                    now = now.max(t);
                    fc.handle_timeout(now);
                }
            }
        }
        check(&fc, now, &before, &mut rx_total);
    }
});
