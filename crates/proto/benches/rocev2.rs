//! Per-packet cost of the RoCEv2 transport: `poll_transmit` + `handle_data` + `handle_reply`
//! for one packet, go-back-N and IRN, back to back (every packet ACKed at once) and over a
//! channel with 2 µs of delay each way at 100 Gb/s (about 48 packets in flight) that loses
//! 1 % of data packets and 1 % of replies, timeouts included.
//!
//! After the criterion groups, each case also runs `ROCEV2_ON_CPU_N` packets (default 5 M)
//! timed by this thread's on-CPU time, which a loaded machine disturbs less than wall-clock
//! time; `ROCEV2_ON_CPU_FILTER` keeps only the cases whose name contains it.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::collections::VecDeque;

use criterion::{BenchmarkId, Criterion, Throughput, black_box, criterion_group, criterion_main};
use lossless_proto::rocev2::{DataPacket, RcConfig, Recovery, Reply, Requester, Responder};
use lossless_proto::units::{Duration, Instant};

/// A message long enough never to end during a benchmark (PSNs wrap many times).
const ENDLESS: u64 = 1 << 50;

fn configs() -> [(&'static str, RcConfig); 2] {
    let gbn = RcConfig {
        rto: Duration::from_us(100),
        ..RcConfig::hpcc_ns3()
    };
    let irn = RcConfig {
        recovery: Recovery::Irn {
            bdp_cap_bytes: 100_000,
            rto_low: Duration::from_us(100),
            rto_high: Duration::from_us(200),
        },
        ..RcConfig::hpcc_ns3()
    };
    [("go_back_n", gbn), ("irn", irn)]
}

/// A lossy channel with a fixed delay; `step` moves one packet time ahead.
struct Channel {
    req: Requester,
    resp: Responder,
    data: VecDeque<(Instant, DataPacket)>,
    replies: VecDeque<(Instant, Reply)>,
    now: Instant,
    rng: u64,
}

impl Channel {
    fn new(cfg: &RcConfig) -> Channel {
        Channel {
            req: Requester::new(*cfg, ENDLESS).unwrap(),
            resp: Responder::new(*cfg, ENDLESS).unwrap(),
            data: VecDeque::with_capacity(4096),
            replies: VecDeque::with_capacity(4096),
            now: Instant::ZERO,
            rng: 1,
        }
    }

    fn lost(&mut self) -> bool {
        // xorshift64: 1 in 100
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng.is_multiple_of(100)
    }

    /// One 1048-byte packet time at 100 Gb/s: send if allowed, deliver what arrived.
    fn step(&mut self) {
        const DELAY: Duration = Duration::from_us(2);
        self.now += Duration::from_ps(83_840);
        if let Some(p) = self.req.poll_transmit(self.now)
            && !self.lost()
        {
            self.data.push_back((self.now + DELAY, p));
        }
        while self.data.front().is_some_and(|e| e.0 <= self.now) {
            let (at, p) = self.data.pop_front().unwrap();
            if let Some(r) = self.resp.handle_data(at, &p).reply
                && !self.lost()
            {
                self.replies.push_back((at + DELAY, r));
            }
        }
        while self.replies.front().is_some_and(|e| e.0 <= self.now) {
            let (at, r) = self.replies.pop_front().unwrap();
            self.req.handle_reply(at, r);
        }
        if self.req.poll_timeout().is_some_and(|d| d <= self.now) {
            self.req.handle_timeout(self.now);
        }
    }
}

/// A back-to-back pair: one packet sent, received and acknowledged per `step`.
struct BackToBack {
    req: Requester,
    resp: Responder,
    now: Instant,
}

impl BackToBack {
    fn new(cfg: &RcConfig) -> BackToBack {
        BackToBack {
            req: Requester::new(*cfg, ENDLESS).unwrap(),
            resp: Responder::new(*cfg, ENDLESS).unwrap(),
            now: Instant::ZERO,
        }
    }

    fn step(&mut self) {
        self.now += Duration::from_ps(83_840);
        let p = self.req.poll_transmit(self.now).unwrap();
        let r = self.resp.handle_data(self.now, black_box(&p));
        self.req.handle_reply(self.now, r.reply.unwrap());
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux scheduler accounting).
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Prints the on-CPU time per `step` over `ROCEV2_ON_CPU_N` steps.
fn on_cpu(name: &str, mut step: impl FnMut()) {
    let env = |k: &str| std::env::var(k).ok();
    // `cargo test --all-targets` runs benches once, unoptimised, without `--bench`: skip there.
    if !std::env::args().any(|a| a == "--bench")
        || env("ROCEV2_ON_CPU_FILTER").is_some_and(|f| !name.contains(f.as_str()))
    {
        return;
    }
    let n: u64 = env("ROCEV2_ON_CPU_N")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000_000);
    let Some(cpu0) = thread_cpu_ns() else {
        return;
    };
    for _ in 0..n {
        step();
    }
    let cpu = thread_cpu_ns().unwrap_or(cpu0).saturating_sub(cpu0).max(1);
    eprintln!(
        "rocev2/{name}: {n} packets, {:.1} ns of on-CPU time each ({:.1} M/s)",
        cpu as f64 / n as f64,
        n as f64 * 1e3 / cpu as f64
    );
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("rocev2");
    g.throughput(Throughput::Elements(1));
    for (name, cfg) in configs() {
        g.bench_function(BenchmarkId::new("back_to_back", name), |b| {
            let mut pair = BackToBack::new(&cfg);
            b.iter(|| pair.step())
        });
        g.bench_function(BenchmarkId::new("lossy_1pct", name), |b| {
            let mut ch = Channel::new(&cfg);
            // reach the steady state (window full, losses being repaired) before timing
            for _ in 0..100_000 {
                ch.step();
            }
            b.iter(|| ch.step())
        });
    }
    g.finish();
    for (name, cfg) in configs() {
        let mut pair = BackToBack::new(&cfg);
        on_cpu(&format!("back_to_back/{name}"), || pair.step());
        let mut ch = Channel::new(&cfg);
        for _ in 0..100_000 {
            ch.step();
        }
        on_cpu(&format!("lossy_1pct/{name}"), || ch.step());
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
