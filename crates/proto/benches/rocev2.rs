//! Per-packet cost of the RoCEv2 transport: `poll_transmit` + `handle_data` + `handle_reply`
//! for one packet, go-back-N and IRN, back to back (every packet ACKed at once) and over a
//! channel with 2 µs of delay each way at 100 Gb/s (about 48 packets in flight) that loses
//! 1 % of data packets and 1 % of replies, timeouts included.

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

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("rocev2");
    g.throughput(Throughput::Elements(1));
    for (name, cfg) in configs() {
        g.bench_function(BenchmarkId::new("back_to_back", name), |b| {
            let mut req = Requester::new(cfg, ENDLESS).unwrap();
            let mut resp = Responder::new(cfg, ENDLESS).unwrap();
            let mut now = Instant::ZERO;
            b.iter(|| {
                now += Duration::from_ps(83_840);
                let p = req.poll_transmit(now).unwrap();
                let r = resp.handle_data(now, black_box(&p));
                req.handle_reply(now, r.reply.unwrap());
            })
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
