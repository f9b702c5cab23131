//! A minimal two-port test driver: two flow-control engines back to back over one full-duplex
//! link with a rate and a propagation delay, per-priority data queues, and scripted requests.
//!
//! Order of work at one instant: receptions, scripted events, timers, then transmissions
//! (port 0 before port 1). Data frames are strict priority (highest first) among the ones the
//! engine allows. Everything that happens is logged with its exact time.

#![allow(dead_code)]

use std::collections::VecDeque;

use lossless_proto::flow_control::{
    ControlFrame, FlowControl, FlowControlConfig, ReceivedControl, RxOutcome, Transmit,
};
use lossless_proto::units::{Duration, Instant};

/// A scripted event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// Raise or lower request `p` of `port`.
    Request { port: usize, p: u8, asserted: bool },
    /// Queue a data frame of `bytes` (FCS included) at `port` for priority `p`.
    Enqueue { port: usize, p: u8, bytes: u64 },
}

/// Something that happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// A control frame started on the wire.
    ControlStart(Transmit),
    /// A data frame started on the wire.
    DataStart {
        p: u8,
        bytes: u64,
        last_bit: Instant,
        free_at: Instant,
    },
    /// A control frame's last bit arrived and the engine decided.
    ControlReceived { frame: ControlFrame, outcome: RxOutcome },
    /// A scripted request change.
    Request { p: u8, asserted: bool },
    /// The engine's `may_transmit` for priority p changed (observed at step instants).
    MayTransmit { p: u8, may: bool },
    /// The wire was idle, data was queued, and nothing was sent: `queued` priorities had
    /// frames waiting, `held` says own data was held.
    Idle { queued: u8, held: bool },
}

/// One log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// When.
    pub t: Instant,
    /// Which port.
    pub port: usize,
    /// What.
    pub what: What,
}

/// One port of the driver.
pub struct Port {
    /// The engine under test.
    pub fc: FlowControl,
    /// Data waiting per priority (frame sizes).
    pub queues: [VecDeque<u64>; 8],
    may: [bool; 8],
}

/// Two ports back to back.
pub struct BackToBack {
    /// The two ports.
    pub ports: [Port; 2],
    /// One-way propagation delay.
    pub delay: Duration,
    /// Control frames in flight: (arrival of last bit, receiving port, frame).
    in_flight: VecDeque<(Instant, usize, ControlFrame)>,
    script: Vec<(Instant, Script)>,
    next_script: usize,
    /// Everything that happened, in order.
    pub log: Vec<Record>,
    /// Current time.
    pub now: Instant,
}

impl BackToBack {
    /// Two engines from two configurations, a propagation delay and a script (any order).
    pub fn new(cfg: [FlowControlConfig; 2], delay: Duration, mut script: Vec<(Instant, Script)>) -> Self {
        script.sort_by_key(|(t, _)| *t);
        let port = |c: FlowControlConfig| Port {
            fc: FlowControl::new(c).expect("valid config"),
            queues: Default::default(),
            may: [true; 8],
        };
        BackToBack {
            ports: [port(cfg[0]), port(cfg[1])],
            delay,
            in_flight: VecDeque::new(),
            script,
            next_script: 0,
            log: Vec::new(),
            now: Instant::ZERO,
        }
    }

    /// The next instant strictly after `now` at which something can happen.
    fn next_time(&self) -> Option<Instant> {
        let now = self.now;
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| {
            if t > now && next.is_none_or(|n| t < n) {
                next = Some(t);
            }
        };
        if let Some((t, _)) = self.script.get(self.next_script) {
            consider(*t);
        }
        if let Some((t, _, _)) = self.in_flight.front() {
            consider(*t);
        }
        for port in &self.ports {
            if let Some(t) = port.fc.poll_timeout() {
                consider(t);
            }
            let wants = port.fc.has_control_due(now) || port.queues.iter().any(|q| !q.is_empty());
            if wants {
                consider(port.fc.wire_free_at());
            }
        }
        next
    }

    /// Runs until nothing is left to do or the next instant is after `end`; returns the time
    /// reached.
    pub fn run_until(&mut self, end: Instant) -> Instant {
        self.step();
        while let Some(t) = self.next_time() {
            if t > end {
                break;
            }
            self.now = t;
            self.step();
        }
        self.now
    }

    /// Does all the work of the current instant; returns whether anything happened.
    fn step(&mut self) -> bool {
        let t = self.now;
        let mut did = false;
        // 1. receptions
        while self.in_flight.front().is_some_and(|(at, _, _)| *at <= t) {
            let (at, to, frame) = self.in_flight.pop_front().expect("checked");
            let outcome = self.ports[to]
                .fc
                .handle_control_frame(at, &ReceivedControl::multicast(frame));
            self.log.push(Record {
                t: at,
                port: to,
                what: What::ControlReceived { frame, outcome },
            });
            did = true;
        }
        // 2. script
        while let Some(&(st, ev)) = self.script.get(self.next_script) {
            if st > t {
                break;
            }
            self.next_script += 1;
            did = true;
            match ev {
                Script::Request { port, p, asserted } => {
                    self.ports[port]
                        .fc
                        .set_request(t, p, asserted)
                        .expect("request accepted");
                    self.log.push(Record {
                        t,
                        port,
                        what: What::Request { p, asserted },
                    });
                }
                Script::Enqueue { port, p, bytes } => self.ports[port].queues[p as usize].push_back(bytes),
            }
        }
        // 3. timers
        for port in &mut self.ports {
            port.fc.handle_timeout(t);
        }
        self.observe(t);
        // 4. transmissions
        for i in 0..2 {
            did |= self.transmit(i, t);
        }
        self.observe(t);
        for port in &self.ports {
            if let Some(n) = port.fc.poll_timeout() {
                assert!(n > t, "poll_timeout {n} not after the instant just handled {t}");
            }
        }
        did
    }

    fn observe(&mut self, t: Instant) {
        for (i, port) in self.ports.iter_mut().enumerate() {
            for p in 0..8u8 {
                let may = port.fc.may_transmit(t, p);
                if may != port.may[p as usize] {
                    port.may[p as usize] = may;
                    self.log.push(Record {
                        t,
                        port: i,
                        what: What::MayTransmit { p, may },
                    });
                }
            }
        }
    }

    fn transmit(&mut self, i: usize, t: Instant) -> bool {
        let port = &mut self.ports[i];
        if t < port.fc.wire_free_at() {
            return false;
        }
        if let Some(tx) = port.fc.poll_transmit(t) {
            self.log.push(Record {
                t,
                port: i,
                what: What::ControlStart(tx),
            });
            let arrive = tx.last_bit + self.delay;
            // keep in-flight frames ordered by arrival
            let pos = self.in_flight.partition_point(|(a, _, _)| *a <= arrive);
            self.in_flight.insert(pos, (arrive, 1 - i, tx.frame));
            return true;
        }
        for p in (0..8u8).rev() {
            let Some(&bytes) = port.queues[p as usize].front() else {
                continue;
            };
            if !port.fc.may_start_data(t, p) {
                continue;
            }
            let slot = port
                .fc
                .on_tx_start(t, bytes, p)
                .expect("engine accepts what it allowed");
            port.queues[p as usize].pop_front();
            self.log.push(Record {
                t,
                port: i,
                what: What::DataStart {
                    p,
                    bytes,
                    last_bit: slot.last_bit,
                    free_at: slot.free_at,
                },
            });
            return true;
        }
        let queued = (0..8u8)
            .filter(|&p| !port.queues[p as usize].is_empty())
            .fold(0u8, |m, p| m | (1 << p));
        if queued != 0 {
            let held = port.fc.hold_data(t);
            self.log.push(Record {
                t,
                port: i,
                what: What::Idle { queued, held },
            });
        }
        false
    }

    /// Log entries of one port, in order.
    pub fn port_log(&self, port: usize) -> impl Iterator<Item = &Record> {
        self.log.iter().filter(move |r| r.port == port)
    }
}
