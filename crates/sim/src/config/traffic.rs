//! Traffic: flows and their sending patterns, flow-size CDFs, and Poisson flow arrivals.

use lossless_proto::units::{Duration, Instant, Rate};
use rand::Rng;

use crate::config::transport::QpSpec;
use crate::frame::NodeId;
use lossless_proto::headroom::FRAME_OVERHEAD_BYTES;

/// Smallest Ethernet frame in bytes (FCS included).
pub const MIN_FRAME: u64 = 64;

/// Frame length carrying `payload` bytes (header, 802.1Q tag and FCS added; at least 64).
pub const fn frame_len(payload: u64) -> u64 {
    let l = payload + FRAME_OVERHEAD_BYTES;
    if l < MIN_FRAME { MIN_FRAME } else { l }
}

/// How a flow paces its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// As fast as the sending NIC allows.
    Line,
    /// A constant bit rate, counted on the wire (preamble and IFG included).
    Cbr {
        /// The rate.
        rate: Rate,
    },
    /// Constant bit rate during `on`, silent during `off`, repeating.
    OnOff {
        /// Rate while on.
        rate: Rate,
        /// Length of each on period.
        on: Duration,
        /// Length of each off period.
        off: Duration,
    },
}

/// One flow: a source host sending frames of one priority to a destination host.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Name shown in reports.
    pub name: String,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// 802.1Q priority.
    pub priority: u8,
    /// Largest payload per frame in bytes.
    pub mtu: u64,
    /// Pacing.
    pub pattern: Pattern,
    /// When it starts.
    pub start: Instant,
    /// When it stops offering frames (if it has not finished).
    pub stop: Instant,
    /// Payload bytes to send; `None` = unlimited.
    pub size: Option<u64>,
    /// A RoCEv2 QP's transport and congestion control; `None`: plain frames at the pattern's
    /// rate, nothing comes back.
    pub transport: Option<Box<QpSpec>>,
}

impl FlowSpec {
    /// Time from one frame's emission to the next one's, or `None` for line rate.
    pub fn gap(&self, frame: u64) -> Option<Duration> {
        match self.pattern {
            Pattern::Line => None,
            Pattern::Cbr { rate } | Pattern::OnOff { rate, .. } => Some(rate.wire_time(frame)),
        }
    }
    /// The earliest time at or after `t` when the flow may emit (skips off periods).
    pub fn next_on(&self, t: Instant) -> Instant {
        match self.pattern {
            Pattern::OnOff { on, off, .. } if off > Duration::ZERO => {
                let period = (on + off).as_ps();
                let since = t.saturating_duration_since(self.start).as_ps();
                let phase = since % period;
                if phase < on.as_ps() {
                    t
                } else {
                    t + Duration::from_ps(period - phase)
                }
            }
            _ => t,
        }
    }
    /// The offered load in bits per second over `[start, stop)` (wire bits), for reports.
    pub fn offered_bps(&self, line: Rate) -> f64 {
        match self.pattern {
            Pattern::Line => line.bps() as f64,
            Pattern::Cbr { rate } => rate.bps() as f64,
            Pattern::OnOff { rate, on, off } => {
                rate.bps() as f64 * on.as_ps() as f64 / (on + off).as_ps() as f64
            }
        }
    }
}

/// A flow-size distribution: points (size in bytes, cumulative probability 0..=1).
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    points: Vec<(u64, f64)>,
}

/// Error reading a `size cdf` file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct CdfError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

impl SizeCdf {
    /// Parses lines `size cdf` (size in whole bytes; cdf in percent 0..100 or fraction 0..1,
    /// non-decreasing; the last must be 100 or 1). Blank lines and `#` comments are skipped.
    ///
    /// A degenerate distribution is refused: no size 0 may have a probability (a `0 0` first
    /// point only anchors the first segment), so every flow drawn has at least one byte, as a
    /// `[[flow]]`'s `size_bytes` must; and the mean is at least one byte. Errors give the line
    /// number and the numbers read, never the line's text (the file may not be a CDF at all).
    pub fn parse(text: &str) -> Result<Self, CdfError> {
        let mut points: Vec<(u64, f64)> = Vec::new();
        let mut last_line = 1;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.split('#').next().unwrap_or("").trim();
            if l.is_empty() {
                continue;
            }
            last_line = line;
            let fields: Vec<&str> = l.split_whitespace().take(3).collect();
            let [s, c] = fields[..] else {
                return Err(CdfError {
                    line,
                    problem: format!(
                        "expected two fields `size cdf` (bytes, cumulative probability), found {}",
                        if fields.len() > 2 { "more" } else { "one" }
                    ),
                });
            };
            let size: u64 = s.parse().map_err(|_| CdfError {
                line,
                problem: "the size (first field) is not a whole number of bytes".into(),
            })?;
            let cdf: f64 = match c.parse::<f64>() {
                Ok(c) if c.is_finite() => c,
                _ => {
                    return Err(CdfError {
                        line,
                        problem: "the cdf (second field) is not a number".into(),
                    });
                }
            };
            if !(0.0..=100.0).contains(&cdf) {
                return Err(CdfError {
                    line,
                    problem: format!("cdf {cdf} is outside 0..=100"),
                });
            }
            if let Some(&(ps, pc)) = points.last()
                && (size < ps || cdf < pc)
            {
                return Err(CdfError {
                    line,
                    problem: format!("({size}, {cdf}) decreases after ({ps}, {pc})"),
                });
            }
            if size == 0 && cdf > 0.0 {
                return Err(CdfError {
                    line,
                    problem: format!(
                        "size 0 with cdf {cdf}: flows of 0 bytes; allowed sizes of at least 1 byte \
                         (a first point `0 0` only starts the first segment)"
                    ),
                });
            }
            points.push((size, cdf));
        }
        let Some(&(_, last)) = points.last() else {
            return Err(CdfError {
                line: 1,
                problem: "no `size cdf` lines".into(),
            });
        };
        let scale = if (last - 100.0).abs() < 1e-9 {
            100.0
        } else if (last - 1.0).abs() < 1e-9 {
            1.0
        } else {
            return Err(CdfError {
                line: last_line,
                problem: format!("the last cdf must be 100 (or 1), found {last}"),
            });
        };
        for p in &mut points {
            p.1 /= scale;
        }
        let cdf = SizeCdf { points };
        let mean = cdf.mean();
        if mean < 1.0 {
            return Err(CdfError {
                line: last_line,
                problem: format!("the mean flow size is {mean} bytes; allowed a mean of at least 1 byte"),
            });
        }
        Ok(cdf)
    }

    /// Where the piecewise-linear CDF starts: probability 0 at the first point's size (the
    /// first point's probability is a step at its size, no smaller size being listed).
    fn start(&self) -> (u64, f64) {
        (self.points.first().map_or(0, |p| p.0), 0.0)
    }

    /// Draws a size by inverse-transform sampling with linear interpolation between points.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        let u: f64 = rng.r#gen();
        let mut prev = self.start();
        for &(s, c) in &self.points {
            if u <= c {
                if c <= prev.1 {
                    return s.max(1);
                }
                let f = (u - prev.1) / (c - prev.1);
                return ((prev.0 as f64 + f * (s as f64 - prev.0 as f64)).round() as u64).max(1);
            }
            prev = (s, c);
        }
        prev.0.max(1)
    }

    /// The mean size in bytes (piecewise-linear).
    pub fn mean(&self) -> f64 {
        let mut prev = self.start();
        let mut m = 0.0;
        for &(s, c) in &self.points {
            m += (c - prev.1) * (s as f64 + prev.0 as f64) / 2.0;
            prev = (s, c);
        }
        m
    }
}

/// Poisson flow arrivals: new flows from random sources to random destinations with sizes
/// from a CDF, at a rate that offers `load` of `line` rate per source.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Name prefix of the generated flows.
    pub name: String,
    /// Candidate sources.
    pub src: Vec<NodeId>,
    /// Candidate destinations (a flow never goes to its own source).
    pub dst: Vec<NodeId>,
    /// Priority of every flow.
    pub priority: u8,
    /// Largest payload per frame.
    pub mtu: u64,
    /// Flow sizes.
    pub cdf: SizeCdf,
    /// Mean time between arrivals (over all sources).
    pub mean_interarrival: Duration,
    /// First arrival no earlier than this.
    pub start: Instant,
    /// No arrivals at or after this.
    pub stop: Instant,
    /// Every flow is a RoCEv2 QP with this transport (`None`: plain flows).
    pub transport: Option<Box<QpSpec>>,
}

impl Workload {
    /// Mean interarrival for `load` (0..1] of `line` per source with `n_src` sources.
    pub fn interarrival_for(cdf: &SizeCdf, load: f64, line: Rate, n_src: usize) -> Duration {
        Self::interarrival_for_bps(cdf, load, u128::from(line.bps()) * n_src as u128)
    }
    /// Mean interarrival for `load` (0..1] of sources whose line rates add up to `total_bps`:
    /// flows of the CDF's mean payload offering `load` of it (as HPCC's traffic generator).
    pub fn interarrival_for_bps(cdf: &SizeCdf, load: f64, total_bps: u128) -> Duration {
        let bytes_per_s = load * total_bps as f64 / 8.0;
        let flows_per_s = bytes_per_s / cdf.mean().max(1.0);
        Duration::from_ps((1e12 / flows_per_s).round().max(1.0) as u128)
    }
    /// Draws an arrival's source, destination (uniformly among the others) and size, in that
    /// order; `None` (after the source) when no destination but the source is listed.
    pub fn draw_flow<R: Rng>(&self, rng: &mut R) -> Option<(NodeId, NodeId, u64)> {
        let src = self.src[rng.gen_range(0..self.src.len())];
        let dsts: usize = self.dst.iter().filter(|&&d| d != src).count();
        if dsts == 0 {
            return None;
        }
        let k = rng.gen_range(0..dsts);
        let dst = *self.dst.iter().filter(|&&d| d != src).nth(k).unwrap_or(&src);
        Some((src, dst, self.cdf.sample(rng)))
    }

    /// Draws the next interarrival time (exponential).
    pub fn draw_gap<R: Rng>(&self, rng: &mut R) -> Duration {
        let u: f64 = rng.r#gen::<f64>();
        let x = -(1.0 - u).ln() * self.mean_interarrival.as_ps() as f64;
        Duration::from_ps(x.round().max(1.0) as u128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn cdf_files_of_the_corpus_parse() {
        let t = "0 0\n4000 22.93\n8000 69.21\n# c\n\n16000 100\n";
        let c = SizeCdf::parse(t).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        for _ in 0..1000 {
            let s = c.sample(&mut rng);
            assert!((1..=16000).contains(&s));
        }
    }

    #[test]
    fn cdf_errors_name_the_line() {
        assert_eq!(SizeCdf::parse("0 0\n10 50\n5 60\n").unwrap_err().line, 3);
        assert_eq!(SizeCdf::parse("0 0\nx 50\n").unwrap_err().line, 2);
        assert!(
            SizeCdf::parse("0 0\n10 50\n")
                .unwrap_err()
                .problem
                .contains("last cdf")
        );
    }

    #[test]
    fn on_off_skips_off_periods() {
        let f = FlowSpec {
            name: "f".into(),
            src: 0,
            dst: 1,
            priority: 0,
            mtu: 1500,
            pattern: Pattern::OnOff {
                rate: Rate::from_gbps(10),
                on: Duration::from_us(1),
                off: Duration::from_us(3),
            },
            start: Instant::ZERO,
            stop: Instant::MAX,
            size: None,
            transport: None,
        };
        let t = Instant::ZERO + Duration::from_ns(1500);
        assert_eq!(f.next_on(t), Instant::ZERO + Duration::from_us(4));
        let t = Instant::ZERO + Duration::from_ns(4500);
        assert_eq!(f.next_on(t), t);
    }

    #[test]
    fn frame_len_adds_headers_and_pads_to_64() {
        assert_eq!(frame_len(1500), 1522);
        assert_eq!(frame_len(1), 64);
    }
}
