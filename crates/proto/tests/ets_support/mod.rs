//! A port driven in virtual time for the ETS tests: per-priority FIFOs of frame lengths,
//! traffic sources, a PFC pause mask, and a log of what was sent.
#![allow(dead_code)]

use std::collections::VecDeque;

use lossless_proto::ets::{Scheduler, Selection};
use lossless_proto::units::{Duration, Instant};

/// Deterministic 64-bit generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A frame length uniformly in 64..=9216.
    pub fn frame(&mut self) -> u32 {
        64 + (self.next_u64() % (9216 - 64 + 1)) as u32
    }
}

/// How a priority's queue is fed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// No traffic.
    Off,
    /// Always at least two frames queued.
    Saturated,
    /// One frame of the given length every period.
    Paced { period: Duration, len: u32 },
}

/// One transmission.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    /// When it started.
    pub at: Instant,
    /// What the scheduler chose.
    pub sel: Selection,
    /// Frame length.
    pub len: u32,
}

/// A simulated port around a scheduler.
pub struct Port {
    pub s: Scheduler,
    pub now: Instant,
    pub queues: [VecDeque<u32>; 8],
    pub sources: [Source; 8],
    next_paced: [Instant; 8],
    pub paused: u8,
    pub rng: Rng,
    pub log: Vec<Sent>,
}

impl Port {
    /// A port with no traffic.
    pub fn new(s: Scheduler, seed: u64) -> Self {
        Port {
            s,
            now: Instant::ZERO,
            queues: Default::default(),
            sources: [Source::Off; 8],
            next_paced: [Instant::ZERO; 8],
            paused: 0,
            rng: Rng(seed),
            log: Vec::new(),
        }
    }

    fn push(&mut self, p: usize, len: u32) {
        self.s.enqueue(self.now, p as u8, len).unwrap();
        self.queues[p].push_back(len);
    }

    /// Feeds every source up to `now`.
    pub fn feed(&mut self) {
        for p in 0..8 {
            match self.sources[p] {
                Source::Off => {}
                Source::Saturated => {
                    while self.queues[p].len() < 2 {
                        let len = self.rng.frame();
                        self.push(p, len);
                    }
                }
                Source::Paced { period, len } => {
                    while self.next_paced[p] <= self.now {
                        self.push(p, len);
                        self.next_paced[p] += period;
                    }
                }
            }
        }
    }

    /// Changes the pause mask now.
    pub fn pause(&mut self, mask: u8) {
        self.paused = mask;
        self.s.set_paused(self.now, mask);
    }

    /// Earliest time a paced source delivers.
    fn next_arrival(&self) -> Option<Instant> {
        (0..8)
            .filter(|&p| matches!(self.sources[p], Source::Paced { .. }))
            .map(|p| self.next_paced[p])
            .min()
    }

    /// One decision: sends a frame (returns it) or advances time to the next event.
    pub fn step(&mut self) -> Option<Sent> {
        self.feed();
        match self.s.select(self.now, self.paused) {
            Some(sel) => {
                let p = usize::from(sel.priority);
                assert!(self.paused & (1 << p) == 0, "selected paused priority {p}");
                let len = self.queues[p].pop_front().expect("selected an empty priority");
                self.s.on_transmitted(self.now, sel.priority, len).unwrap();
                let sent = Sent {
                    at: self.now,
                    sel,
                    len,
                };
                self.now += self
                    .s
                    .rate()
                    .time_for_bytes(u64::from(len) + u64::from(self.s.overhead_bytes()));
                self.log.push(sent);
                Some(sent)
            }
            None => {
                let wake = [self.s.next_eligible(self.now), self.next_arrival()]
                    .into_iter()
                    .flatten()
                    .filter(|&t| t > self.now)
                    .min()
                    // everything paused: wait a microsecond for the pause to change
                    .unwrap_or(self.now + Duration::from_us(1));
                self.now = wake;
                None
            }
        }
    }

    /// Runs until `n` frames were sent.
    pub fn run_frames(&mut self, n: usize) {
        let target = self.log.len() + n;
        while self.log.len() < target {
            self.step();
        }
    }
}

/// Bytes of one window: 1,000 maximum frames with their per-frame overhead.
pub const WINDOW: u64 = 1_000 * (9216 + 20);

/// Largest deviation, in percentage points, of each key's share of the bytes in any window of
/// `WINDOW` bytes (sliding frame by frame over `log`, counting only frames whose key is in
/// `expected`) from its expected percentage. Returns (worst deviation, windows checked).
pub fn worst_window_deviation(
    log: &[Sent],
    key: impl Fn(&Sent) -> u8,
    expected: &[(u8, f64)],
    overhead: u64,
) -> (f64, usize) {
    let classes = expected;
    let frames: Vec<(u8, u64)> = log
        .iter()
        .filter(|s| classes.iter().any(|c| c.0 == key(s)))
        .map(|s| (key(s), u64::from(s.len) + overhead))
        .collect();
    let mut worst: f64 = 0.0;
    let mut windows = 0;
    let mut per = vec![0u64; 256];
    let mut total = 0u64;
    let mut j = 0;
    for i in 0..frames.len() {
        while j < frames.len() && total < WINDOW {
            per[usize::from(frames[j].0)] += frames[j].1;
            total += frames[j].1;
            j += 1;
        }
        if total < WINDOW {
            break;
        }
        windows += 1;
        for &(c, pct) in classes {
            let share = per[usize::from(c)] as f64 * 100.0 / total as f64;
            worst = worst.max((share - pct).abs());
        }
        per[usize::from(frames[i].0)] -= frames[i].1;
        total -= frames[i].1;
    }
    (worst, windows)
}
