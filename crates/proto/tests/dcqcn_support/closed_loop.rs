//! A small closed DCQCN loop, time-stepped event by event in integer picoseconds: N paced
//! senders (one reaction point each) → one bottleneck egress queue (ECN marker) → receiver
//! (one notification point per flow) → CNPs back to the senders. No simulator: a handful of
//! event sources scanned for the earliest one.

use std::collections::VecDeque;

use lossless_proto::dcqcn::{Np, NpParams, Rp, RpParams};
use lossless_proto::ecn::{EcnConfig, EcnMarker, MarkPoint};
use lossless_proto::units::{Duration, Instant, Rate};

/// One experiment.
#[derive(Clone, Debug)]
pub struct LoopConfig {
    /// Start instant of each flow (one flow per entry); a flow sends without end.
    pub starts: Vec<Instant>,
    /// Sender NIC rate (the reaction point's line rate).
    pub line: Rate,
    /// Bottleneck egress rate.
    pub bottleneck: Rate,
    /// Bytes per packet on the wire.
    pub packet_bytes: u64,
    /// Sender → bottleneck queue.
    pub delay_to_switch: Duration,
    /// Bottleneck (after the packet's last bit) → receiver.
    pub delay_to_receiver: Duration,
    /// Receiver → sender, for the CNP.
    pub delay_back: Duration,
    pub ecn: EcnConfig,
    pub rp: RpParams,
    pub np: NpParams,
    pub seed: u64,
}

/// What was seen every `sample_every`.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub at: Instant,
    /// Each reaction point's rate, b/s.
    pub rates: Vec<u64>,
    /// Bytes each flow delivered since the previous sample.
    pub delivered: Vec<u64>,
    /// Bottleneck queue, bytes.
    pub queue: u64,
    pub alphas: Vec<f64>,
}

/// The time series of one run plus a few totals.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub samples: Vec<Sample>,
    /// Time-weighted mean queue (bytes) from `stats_from` on.
    pub mean_queue: f64,
    /// Per flow, time-weighted mean alpha from `stats_from` on.
    pub mean_alpha: Vec<f64>,
    /// Per flow, bytes delivered from `stats_from` on.
    pub delivered_since: Vec<u64>,
    pub cnps: u64,
    pub marked: u64,
}

struct Flow {
    rp: Rp,
    np: Np,
    next_send: Option<Instant>,
    last_send: Option<Instant>,
    delivered: u64,
}

impl Flow {
    /// The rate limiter: the next packet leaves one packet time (at the current rate, never
    /// above the line rate) after the last one; a rate change moves the pending departure.
    fn repace(&mut self, cfg: &LoopConfig, now: Instant) {
        if let Some(last) = self.last_send {
            let gap = self
                .rp
                .rate()
                .time_for_bytes(cfg.packet_bytes)
                .max(cfg.line.time_for_bytes(cfg.packet_bytes));
            self.next_send = Some((last + gap).max(now));
        }
    }
}

/// Runs until `until`; samples every `sample_every`; averages from `stats_from`.
pub fn run(cfg: &LoopConfig, until: Instant, sample_every: Duration, stats_from: Instant) -> Trace {
    let mut flows: Vec<Flow> = cfg
        .starts
        .iter()
        .map(|&s| Flow {
            rp: Rp::new(cfg.rp, cfg.line).unwrap(),
            np: Np::new(cfg.np),
            next_send: Some(s),
            last_send: None,
            delivered: 0,
        })
        .collect();
    let mut marker = EcnMarker::new(cfg.ecn, cfg.seed).unwrap();
    let mut to_switch: VecDeque<(Instant, usize)> = VecDeque::new();
    let mut queue: VecDeque<(usize, bool)> = VecDeque::new();
    let mut queue_bytes = 0u64;
    let mut departing: Option<(Instant, usize, bool)> = None;
    let mut to_receiver: VecDeque<(Instant, usize, bool)> = VecDeque::new();
    let mut cnps_back: VecDeque<(Instant, usize)> = VecDeque::new();
    let tx_time = cfg.bottleneck.time_for_bytes(cfg.packet_bytes);
    let n = flows.len();

    let mut trace = Trace {
        mean_alpha: vec![0.0; n],
        delivered_since: vec![0; n],
        ..Trace::default()
    };
    let mut next_sample = Instant::ZERO + sample_every;
    let mut last_delivered = vec![0u64; n];
    let mut now = Instant::ZERO;
    let mut area_q = 0f64;
    let mut area_alpha = vec![0f64; n];

    loop {
        // The earliest event; ties in a fixed order (the order of this list).
        let mut best: Option<(Instant, u8, usize)> = None;
        let mut consider = |t: Option<Instant>, kind: u8, i: usize| {
            if let Some(t) = t
                && best.is_none_or(|(b, k, j)| (t, kind, i) < (b, k, j))
            {
                best = Some((t, kind, i));
            }
        };
        consider(Some(next_sample), 0, 0);
        for (i, f) in flows.iter().enumerate() {
            consider(f.rp.poll_timeout(), 1, i);
            consider(f.np.poll_timeout(), 2, i);
        }
        consider(cnps_back.front().map(|c| c.0), 3, 0);
        consider(departing.map(|d| d.0), 4, 0);
        consider(to_receiver.front().map(|r| r.0), 5, 0);
        consider(to_switch.front().map(|s| s.0), 6, 0);
        for (i, f) in flows.iter().enumerate() {
            consider(f.next_send, 7, i);
        }
        let (t, kind, i) = best.unwrap();
        if t > until {
            break;
        }
        // time-weighted averages
        if t > stats_from {
            let from = now.max(stats_from);
            let dt = (t - from).as_ps() as f64;
            area_q += dt * queue_bytes as f64;
            for (a, f) in area_alpha.iter_mut().zip(&flows) {
                *a += dt * f.rp.alpha();
            }
        }
        now = t;
        match kind {
            0 => {
                trace.samples.push(Sample {
                    at: t,
                    rates: flows.iter().map(|f| f.rp.rate().bps()).collect(),
                    delivered: flows
                        .iter()
                        .zip(&last_delivered)
                        .map(|(f, l)| f.delivered - l)
                        .collect(),
                    queue: queue_bytes,
                    alphas: flows.iter().map(|f| f.rp.alpha()).collect(),
                });
                last_delivered = flows.iter().map(|f| f.delivered).collect();
                next_sample = t + sample_every;
            }
            1 => {
                flows[i].rp.handle_timeout(t);
                flows[i].repace(cfg, t);
            }
            2 => {
                if flows[i].np.handle_timeout(t) {
                    trace.cnps += 1;
                    cnps_back.push_back((t + cfg.delay_back, i));
                }
            }
            3 => {
                let (_, f) = cnps_back.pop_front().unwrap();
                flows[f].rp.handle_cnp(t);
                flows[f].repace(cfg, t);
            }
            4 => {
                let (_, f, marked) = departing.take().unwrap();
                to_receiver.push_back((t + cfg.delay_to_receiver, f, marked));
                if let Some((g, m)) = queue.pop_front() {
                    queue_bytes -= cfg.packet_bytes;
                    let m = m || (cfg.ecn.point == MarkPoint::Dequeue && marker.decide(queue_bytes));
                    departing = Some((t + tx_time, g, m));
                }
            }
            5 => {
                let (_, f, marked) = to_receiver.pop_front().unwrap();
                let fl = &mut flows[f];
                fl.delivered += cfg.packet_bytes;
                if t >= stats_from {
                    trace.delivered_since[f] += cfg.packet_bytes;
                }
                if marked {
                    trace.marked += 1;
                    if fl.np.on_ce(t) {
                        trace.cnps += 1;
                        cnps_back.push_back((t + cfg.delay_back, f));
                    }
                }
            }
            6 => {
                let (_, f) = to_switch.pop_front().unwrap();
                let m = cfg.ecn.point == MarkPoint::Enqueue && marker.decide(queue_bytes);
                if departing.is_none() {
                    departing = Some((t + tx_time, f, m));
                } else {
                    queue.push_back((f, m));
                    queue_bytes += cfg.packet_bytes;
                }
            }
            _ => {
                let f = &mut flows[i];
                f.rp.on_sent(t, cfg.packet_bytes);
                to_switch.push_back((t + cfg.delay_to_switch, i));
                f.last_send = Some(t);
                f.repace(cfg, t);
            }
        }
    }
    let span = (until - stats_from).as_ps() as f64;
    trace.mean_queue = area_q / span;
    trace.mean_alpha = area_alpha.iter().map(|a| a / span).collect();
    trace
}
