//! DCTCP as the HPCC ns-3 fork runs it on an RDMA NIC (`CC_MODE 8`, `RdmaHw::HandleAckDctcp`):
//! a rate, not a congestion window, cut by the DCTCP rule on ECN echoes and raised by a fixed
//! step once per batch of acknowledged data. There is no timer and no slow start.
//!
//! Sans-IO: [`Dctcp::handle_ack`] is the only input (the acknowledged byte, the ECN echo of
//! the ACK, the sender's next byte to send), [`Dctcp::rate`] the output. No call allocates.
//!
//! # Per ACK, step by step (`/work/shared/corpus/hpcc-ns3/MODEL.md` §9.8)
//!
//! State: α = 1, ecnCnt = 0, lastUpdateSeq = 0, batch = 0, not in CWR, highSeq = 0; the rate
//! starts at the line rate. On an ACK of byte `a` with echo `cnp`, `snd_nxt` the sender's next
//! byte:
//! 1. ecnCnt += cnp.
//! 2. If a > lastUpdateSeq, a new batch starts. The first one (lastUpdateSeq = 0) only sets
//!    lastUpdateSeq = snd_nxt and batch = snd_nxt/mtu + 1 (ecnCnt is kept). Later ones:
//!    F = min(1, ecnCnt/batch), α ← (1 − g)·α + g·F, lastUpdateSeq = snd_nxt, ecnCnt = 0,
//!    batch = (snd_nxt − a)/mtu + 1.
//! 3. In CWR and a > highSeq: CWR ends.
//! 4. cnp and not in CWR: rate ← max(min_rate, ⌊rate·(1 − α/2)⌋), enter CWR, highSeq =
//!    snd_nxt. At most one cut per window of data; the first cut halves the rate.
//! 5. Not in CWR and a new batch started: rate ← min(line, rate + rate_ai).
//!
//! α and F are `f64` as the fork's doubles are, and the cut truncates the product to whole
//! b/s as ns-3's `DataRate * double` does, so the rates are the fork's to the bit.

use serde::{Deserialize, Serialize};

use crate::dcqcn::ParamError;
use crate::units::Rate;

/// Parameters of a DCTCP sender.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// EWMA gain g of α (the fork's `EWMA_GAIN`).
    pub g: f64,
    /// Rate added once per batch outside CWR (`DCTCP_RATE_AI`).
    pub rate_ai: Rate,
    /// Rate floor of a cut (`MIN_RATE`).
    pub min_rate: Rate,
    /// Bytes per packet that batch sizes are counted in (`PACKET_PAYLOAD_SIZE`).
    pub mtu: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams::hpcc_ns3()
    }
}

impl DctcpParams {
    /// run.py's `dctcp` profile at `--bw 100` (MODEL.md §9.2): g = 1/16, AI 615 Mb/s, floor
    /// 1000 Mb/s, 1000-byte payloads.
    pub fn hpcc_ns3() -> Self {
        DctcpParams {
            g: 0.0625,
            rate_ai: Rate::from_mbps(615),
            min_rate: Rate::from_mbps(1000),
            mtu: 1000,
        }
    }

    /// RFC 8257 where it applies to a rate: the estimation gain g = 1/16 (§4.2) and one cut
    /// by α/2 per window of data (§3.3). The RFC's increase (one MSS per RTT on a window) has
    /// no rate of its own: the additive step, floor and payload are the fork's at 100 Gb/s.
    pub fn rfc8257() -> Self {
        DctcpParams {
            g: 1.0 / 16.0,
            ..DctcpParams::hpcc_ns3()
        }
    }

    /// The preset called `name` (`hpcc-ns3`, `rfc8257`; `_` may stand for `-`).
    pub fn preset(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "hpcc-ns3" => Some(DctcpParams::hpcc_ns3()),
            "rfc8257" => Some(DctcpParams::rfc8257()),
            _ => None,
        }
    }

    /// Checks the values against a sender of line rate `line`.
    pub fn validate(&self, line: Rate) -> Result<(), ParamError> {
        if !(0.0..=1.0).contains(&self.g) {
            return Err(ParamError::new("g", self.g, "0..=1"));
        }
        if self.min_rate > line {
            return Err(ParamError::new(
                "min_rate",
                self.min_rate,
                format!("1 b/s..={line} (the line rate)"),
            ));
        }
        if self.mtu == 0 {
            return Err(ParamError::new("mtu", self.mtu, "1 byte or more"));
        }
        Ok(())
    }
}

/// What a DCTCP sender did, as counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DctcpCounters {
    /// ACKs given to it.
    pub acks: u64,
    /// ACKs that carried an ECN echo.
    pub echoes: u64,
    /// Batches started (α updates, plus the first batch).
    pub batches: u64,
    /// Rate cuts.
    pub rate_decreases: u64,
    /// Additive increases applied (including those capped at the line rate).
    pub rate_increases: u64,
}

/// The DCTCP state of one sending QP: its rate, α and the batch and CWR bookkeeping.
#[derive(Clone, Debug)]
pub struct Dctcp {
    p: DctcpParams,
    line: u64,
    rate: u64,
    alpha: f64,
    ecn_cnt: u64,
    last_update_seq: u64,
    batch: u64,
    cwr: bool,
    high_seq: u64,
    counters: DctcpCounters,
}

impl Dctcp {
    /// A sender on a link of rate `line`, at that rate, α = 1.
    pub fn new(p: DctcpParams, line: Rate) -> Result<Self, ParamError> {
        p.validate(line)?;
        Ok(Dctcp {
            p,
            line: line.bps(),
            rate: line.bps(),
            alpha: 1.0,
            ecn_cnt: 0,
            last_update_seq: 0,
            batch: 0,
            cwr: false,
            high_seq: 0,
            counters: DctcpCounters::default(),
        })
    }

    /// Its parameters.
    pub fn params(&self) -> &DctcpParams {
        &self.p
    }

    /// The rate to pace at now.
    pub fn rate(&self) -> Rate {
        // never below min_rate ≥ 1 b/s, so never 0
        Rate::from_bps(self.rate).unwrap_or(self.p.min_rate)
    }

    /// α, the estimate of the fraction of marked packets.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Whether it is in CWR (a cut happened and the data sent then is not yet acknowledged).
    pub fn in_cwr(&self) -> bool {
        self.cwr
    }

    /// What it did, as counts.
    pub fn counters(&self) -> DctcpCounters {
        self.counters
    }

    /// One ACK or NACK: `ack_seq` the byte it acknowledges up to, `cnp` its ECN echo,
    /// `snd_nxt` the sender's next byte to send (after any go-back-N the reply caused).
    pub fn handle_ack(&mut self, ack_seq: u64, cnp: bool, snd_nxt: u64) {
        self.counters.acks += 1;
        if cnp {
            self.counters.echoes += 1;
            self.ecn_cnt += 1;
        }
        let mtu = u64::from(self.p.mtu);
        let new_batch = ack_seq > self.last_update_seq;
        if new_batch {
            self.counters.batches += 1;
            if self.last_update_seq == 0 {
                self.last_update_seq = snd_nxt;
                self.batch = snd_nxt / mtu + 1;
            } else {
                let frac = (self.ecn_cnt as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * frac;
                self.last_update_seq = snd_nxt;
                self.ecn_cnt = 0;
                self.batch = snd_nxt.saturating_sub(ack_seq) / mtu + 1;
            }
        }
        if self.cwr && ack_seq > self.high_seq {
            self.cwr = false;
        }
        if cnp && !self.cwr {
            // ns-3's DataRate * double: the product in double, truncated to whole b/s
            let cut = (self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64;
            self.rate = cut.max(self.p.min_rate.bps());
            self.cwr = true;
            self.high_seq = snd_nxt;
            self.counters.rate_decreases += 1;
        }
        if !self.cwr && new_batch {
            self.rate = self.rate.saturating_add(self.p.rate_ai.bps()).min(self.line);
            self.counters.rate_increases += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::from_gbps(100);

    fn sender() -> Dctcp {
        Dctcp::new(DctcpParams::hpcc_ns3(), LINE).unwrap()
    }

    #[test]
    fn the_rfc8257_preset_has_its_gain_of_one_sixteenth() {
        assert_eq!(DctcpParams::preset("rfc8257").expect("known").g, 1.0 / 16.0);
    }

    #[test]
    fn the_first_cut_halves_the_rate() {
        let mut d = sender();
        d.handle_ack(1000, true, 10_000);
        assert_eq!(d.rate(), Rate::from_gbps(50));
        assert!(d.in_cwr());
        assert_eq!(d.counters().rate_decreases, 1);
    }

    #[test]
    fn at_most_one_cut_per_window_of_data() {
        let mut d = sender();
        d.handle_ack(1000, true, 10_000);
        // echoes for data sent before the cut (up to byte 10 000) cut nothing more
        for a in (2000..=10_000).step_by(1000) {
            d.handle_ack(a, true, 20_000);
        }
        assert_eq!(d.counters().rate_decreases, 1);
        assert_eq!(d.rate(), Rate::from_gbps(50));
        // the first echo past highSeq cuts again
        d.handle_ack(11_000, true, 30_000);
        assert_eq!(d.counters().rate_decreases, 2);
        assert!(d.rate() < Rate::from_gbps(50));
    }

    #[test]
    fn the_rate_rises_by_the_step_once_per_batch_and_stops_at_the_line_rate() {
        let mut d = sender();
        d.handle_ack(1000, true, 3000); // cut to 50 G, first batch up to 3000
        d.handle_ack(2000, false, 4000); // same batch, in CWR
        d.handle_ack(3000, false, 5000); // still a > highSeq? no: 3000 = highSeq
        assert_eq!(d.rate(), Rate::from_gbps(50));
        d.handle_ack(4000, false, 6000); // new batch and CWR ends: + 615 Mb/s
        assert_eq!(d.rate().bps(), 50_000_000_000 + 615_000_000);
        d.handle_ack(5000, false, 7000); // same batch (last update 6000): no step
        assert_eq!(d.rate().bps(), 50_615_000_000);
        let mut seq = 6000;
        for _ in 0..200 {
            seq += 1000;
            d.handle_ack(seq, false, seq + 1);
        }
        assert_eq!(d.rate(), LINE);
    }

    #[test]
    fn the_first_batch_sets_no_alpha_and_keeps_its_echo_count() {
        let mut d = sender();
        d.handle_ack(1000, false, 5000);
        assert_eq!(d.alpha(), 1.0);
        d.handle_ack(2000, true, 6000); // counts towards the first batch, cuts (α = 1)
        assert_eq!(d.rate(), Rate::from_gbps(50));
        // second batch: F = 1 echo / (5000/1000 + 1) packets
        d.handle_ack(6000, false, 9000);
        let want = (1.0 - 0.0625) + 0.0625 / 6.0;
        assert_eq!(d.alpha(), want);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        // every 4th packet marked, one ACK per 1000-byte packet, 10 packets in flight
        let mut d = sender();
        let mut seq = 0u64;
        for i in 0..20_000u64 {
            seq += 1000;
            d.handle_ack(seq, i % 4 == 3, seq + 10_000);
        }
        assert!((d.alpha() - 0.25).abs() < 0.03, "alpha {}", d.alpha());
    }

    #[test]
    fn the_rate_stays_between_the_floor_and_the_line_rate() {
        let mut d = sender();
        let mut seq = 0u64;
        let mut x = 0x2545_f491_u64;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            seq += 1000;
            d.handle_ack(seq, !x.is_multiple_of(3), seq + (x >> 40) % 50_000);
            let r = d.rate().bps();
            assert!((1_000_000_000..=100_000_000_000).contains(&r), "rate {r}");
        }
        assert!(d.counters().rate_decreases > 10);
        // all marks: down to the floor and no lower
        for _ in 0..2000 {
            seq += 1000;
            d.handle_ack(seq, true, seq);
        }
        assert_eq!(d.rate(), Rate::from_mbps(1000));
    }

    #[test]
    fn the_cut_truncates_like_ns3_data_rate_times_double() {
        let mut d = sender();
        d.handle_ack(1000, true, 1000); // 50 G, α = 1, batch = 2
        d.handle_ack(2000, false, 3000); // α = 15/16 + (1/16)(1/2) = 0.96875; CWR ends; +AI
        d.handle_ack(3000, true, 4000);
        let want = (50_615_000_000f64 * (1.0 - 0.96875 / 2.0)) as u64;
        assert_eq!(d.rate().bps(), want);
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let p = DctcpParams {
            g: 1.5,
            ..DctcpParams::hpcc_ns3()
        };
        assert_eq!(Dctcp::new(p, LINE).unwrap_err().field, "g");
        let p = DctcpParams {
            min_rate: Rate::from_gbps(200),
            ..DctcpParams::hpcc_ns3()
        };
        assert_eq!(Dctcp::new(p, LINE).unwrap_err().field, "min_rate");
        assert_eq!(DctcpParams::preset("hpcc_ns3"), Some(DctcpParams::hpcc_ns3()));
        assert_eq!(DctcpParams::preset("tcp"), None);
    }
}
