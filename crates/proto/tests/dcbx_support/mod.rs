//! A zero-delay point-to-point link between two DCBX agents, stepped in simulated time.
#![allow(dead_code)]

use lossless_proto::dcbx::{Agent, DcbxConfig, Event};
use lossless_proto::lldp_agent::AgentConfig;
use lossless_proto::units::{Duration, Instant};

/// The MAC of side `n` (1 is lower than 2).
pub fn mac(n: u8) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, n]
}

/// Two agents, A and B, joined by a wire that can be cut in either direction.
pub struct Link {
    pub a: Agent,
    pub b: Agent,
    pub now: Instant,
    pub a_to_b: bool,
    pub b_to_a: bool,
    pub a_sent: Vec<(Instant, Vec<u8>)>,
    pub b_sent: Vec<(Instant, Vec<u8>)>,
    pub a_events: Vec<Event>,
    pub b_events: Vec<Event>,
}

impl Link {
    /// A link between an agent with MAC `mac(a_mac)` and one with `mac(b_mac)`.
    pub fn new(a_mac: u8, a: DcbxConfig, b_mac: u8, b: DcbxConfig) -> Self {
        Link {
            a: Agent::new(AgentConfig::new(mac(a_mac)), a).expect("config A"),
            b: Agent::new(AgentConfig::new(mac(b_mac)), b).expect("config B"),
            now: Instant::ZERO,
            a_to_b: true,
            b_to_a: true,
            a_sent: Vec::new(),
            b_sent: Vec::new(),
            a_events: Vec::new(),
            b_events: Vec::new(),
        }
    }

    fn exchange(&mut self) {
        for _ in 0..64 {
            let mut moved = false;
            while let Some(f) = self.a.poll_transmit(self.now) {
                moved = true;
                if self.a_to_b {
                    assert!(self.b.handle_ethernet(self.now, &f), "A's frame is LLDP");
                }
                self.a_sent.push((self.now, f));
            }
            while let Some(f) = self.b.poll_transmit(self.now) {
                moved = true;
                if self.b_to_a {
                    assert!(self.a.handle_ethernet(self.now, &f), "B's frame is LLDP");
                }
                self.b_sent.push((self.now, f));
            }
            while let Some(e) = self.a.poll_event() {
                self.a_events.push(e);
            }
            while let Some(e) = self.b.poll_event() {
                self.b_events.push(e);
            }
            if !moved {
                return;
            }
        }
        panic!("agents kept transmitting at one instant");
    }

    /// Runs until `now + d`, handling every timeout on the way.
    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        for _ in 0..1_000_000 {
            self.exchange();
            let next = [self.a.poll_timeout(), self.b.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    self.a.handle_timeout(self.now);
                    self.b.handle_timeout(self.now);
                }
                _ => {
                    self.now = end;
                    self.a.handle_timeout(end);
                    self.b.handle_timeout(end);
                    self.exchange();
                    return;
                }
            }
        }
        panic!("simulation did not reach its end time");
    }
}

/// Seconds as a Duration.
pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}
