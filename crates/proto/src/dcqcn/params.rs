//! Parameters of the DCQCN notification and reaction points, with their presets.

use serde::{Deserialize, Serialize};

use crate::units::{Duration, MIN_TIMER_PERIOD, Rate};

/// How the notification point signals a CE-marked packet to the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// A RoCEv2 CNP packet (BTH opcode 0x81), at most one per QP per `min_time_between_cnps`.
    Packet,
    /// HPCC ns-3: a CNP flag on the ACK of every marked packet; no rate limit at the receiver.
    AckFlag,
}

/// Parameters of a notification point (the receiving QP).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NpParams {
    /// Least time between two CNPs of one QP (mlx5 `np_min_time_between_cnps`).
    pub min_time_between_cnps: Duration,
    /// 802.1p priority of the CNP (mlx5 `np_cnp_prio`, 0..=7).
    pub cnp_802p_prio: u8,
    /// DSCP of the CNP (mlx5 `np_cnp_dscp`, 0..=63).
    pub cnp_dscp: u8,
    /// CNP packets or CNP flags on ACKs.
    pub mode: CnpMode,
    /// A CE that arrives within `min_time_between_cnps` of the last CNP gets one CNP when that
    /// interval ends (Zhu et al. 2015 §3.1: "at most one CNP every N µs ... if any packet that
    /// arrives within that time window was marked"); `false`: no CNP for it (our reading of
    /// ConnectX, whose documentation only says "minimum time between CNPs").
    pub late_cnp: bool,
}

impl Default for NpParams {
    fn default() -> Self {
        NpParams::connectx()
    }
}

impl NpParams {
    /// ConnectX defaults (`mlxconfig -q` dump in the facts file §2.4): 4 µs, priority 6, DSCP 48.
    pub fn connectx() -> Self {
        NpParams {
            min_time_between_cnps: Duration::from_us(4),
            cnp_802p_prio: 6,
            cnp_dscp: 48,
            mode: CnpMode::Packet,
            late_cnp: false,
        }
    }

    /// Zhu et al. 2015: N = 50 µs (ZHU `CNPInterval`, htsim `_cnp_interval`), late CNP on.
    pub fn paper() -> Self {
        NpParams {
            min_time_between_cnps: Duration::from_us(50),
            late_cnp: true,
            ..NpParams::connectx()
        }
    }

    /// HPCC ns-3 (MODEL.md §4): a CNP flag on the ACK of every marked packet.
    pub fn hpcc_ns3() -> Self {
        NpParams {
            min_time_between_cnps: Duration::ZERO,
            mode: CnpMode::AckFlag,
            late_cnp: false,
            ..NpParams::connectx()
        }
    }

    /// The preset called `name` (`connectx`, `paper`, `hpcc_ns3`; `-` may stand for `_`).
    pub fn preset(name: &str) -> Option<Self> {
        match canonical(name)? {
            Preset::Connectx => Some(NpParams::connectx()),
            Preset::Paper => Some(NpParams::paper()),
            Preset::HpccNs3 => Some(NpParams::hpcc_ns3()),
        }
    }

    /// Checks the priority and the DSCP.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.cnp_802p_prio > 7 {
            return Err(ParamError::new("cnp_802p_prio", self.cnp_802p_prio, "0..=7"));
        }
        if self.cnp_dscp > 63 {
            return Err(ParamError::new("cnp_dscp", self.cnp_dscp, "0..=63"));
        }
        Ok(())
    }
}

/// When the reaction point cuts its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RpMode {
    /// NVIDIA firmware and the HPCC ns-3 "Mellanox version": CNPs only set flags; alpha is
    /// updated every `dce_tcp_rtt` and a pending cut is applied every
    /// `rate_reduce_monitor_period`, on grids that start at the first CNP.
    Periodic,
    /// Zhu et al. 2015: every CNP cuts at once with the alpha it finds, then raises alpha;
    /// alpha decays every `dce_tcp_rtt` after the last CNP.
    PerCnp,
}

/// Parameters of a reaction point (the sending QP), named as NVIDIA names them.
///
/// Fractions keep NVIDIA's fixed-point encodings: `dce_tcp_g` and `initial_alpha_value` in
/// 1/1024, `rpg_gd` a shift, `rpg_min_dec_fac` a percentage.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RpParams {
    /// When cuts happen (not an NVIDIA knob: it selects the firmware or the paper algorithm).
    pub mode: RpMode,
    /// Set the target rate to the current rate on every cut.
    pub clamp_tgt_rate: bool,
    /// Set the target rate to the current rate on a cut if a timer increase happened since the
    /// last cut (a byte-counter increase always does).
    pub clamp_tgt_rate_ati: bool,
    /// Period of the rate-increase timer; zero turns the timer off.
    pub rpg_time_reset: Duration,
    /// Bytes sent between two byte-counter increase events; 0 turns the byte counter off.
    pub rpg_byte_reset: u64,
    /// Increase events spent in fast recovery (F).
    pub rpg_threshold: u32,
    /// Highest rate; `None` = the line rate (mlx5 `rp_max_rate` 0).
    pub rpg_max_rate: Option<Rate>,
    /// Target-rate step of additive increase.
    pub rpg_ai_rate: Rate,
    /// Target-rate step of hyper increase.
    pub rpg_hai_rate: Rate,
    /// Alpha-to-cut shift: a cut takes `rate·α·2¹⁰/2^rpg_gd` (11: the paper's `α/2`).
    pub rpg_gd: u32,
    /// A cut keeps at least this percentage of the rate (0 = no bound).
    pub rpg_min_dec_fac: u32,
    /// Lowest rate.
    pub rpg_min_rate: Rate,
    /// Current and target rate set by the first CNP; `None` keeps the rate (mlx5 value 0).
    pub rate_to_set_on_first_cnp: Option<Rate>,
    /// Weight of the old alpha in 1/1024: `α ← α·G/1024 (+ (1024 − G)/1024 with a CNP)`.
    pub dce_tcp_g: u32,
    /// Period of the alpha update.
    pub dce_tcp_rtt: Duration,
    /// Least time between two cuts (`Periodic`: the period of the decrease check).
    pub rate_reduce_monitor_period: Duration,
    /// Delay of the decrease-check grid after the alpha grid (HPCC ns-3: 1 ns, "to make sure
    /// rate decrease is after alpha update"); not an NVIDIA knob.
    pub rate_reduce_monitor_offset: Duration,
    /// Alpha set by the first CNP, in 1/1024 (1024 = 1.0).
    pub initial_alpha_value: u32,
    /// Once the rate is back at its maximum, the rate limiter is released and the next CNP is
    /// a first CNP again (QCN's rate-limiter semantics; our reading for ConnectX); `false`:
    /// the state lives as long as the QP (HPCC ns-3, the paper's simulator). Not an NVIDIA knob.
    pub release_at_line_rate: bool,
}

impl Default for RpParams {
    fn default() -> Self {
        RpParams::connectx()
    }
}

/// Why a parameter set was refused: which field, what was found, what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: found {found}, allowed {allowed}")]
pub struct ParamError {
    /// The field at fault.
    pub field: &'static str,
    /// The value found, as text.
    pub found: String,
    /// What the field accepts.
    pub allowed: String,
}

impl ParamError {
    pub(crate) fn new(
        field: &'static str,
        found: impl core::fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        ParamError {
            field,
            found: found.to_string(),
            allowed: allowed.into(),
        }
    }
}

enum Preset {
    Connectx,
    Paper,
    HpccNs3,
}

fn canonical(name: &str) -> Option<Preset> {
    match name.trim().to_ascii_lowercase().replace('-', "_").as_str() {
        "connectx" => Some(Preset::Connectx),
        "paper" => Some(Preset::Paper),
        "hpcc_ns3" => Some(Preset::HpccNs3),
        _ => None,
    }
}

impl RpParams {
    /// NVIDIA ConnectX defaults (facts §2.4, ConnectX column; module doc for `dce_tcp_g`,
    /// `rpg_gd`, `rpg_byte_reset` and the release at line rate).
    pub fn connectx() -> Self {
        RpParams {
            mode: RpMode::Periodic,
            clamp_tgt_rate: false,
            clamp_tgt_rate_ati: true,
            rpg_time_reset: Duration::from_us(300),
            rpg_byte_reset: 32_767,
            rpg_threshold: 1,
            rpg_max_rate: None,
            rpg_ai_rate: Rate::from_mbps(5),
            rpg_hai_rate: Rate::from_mbps(50),
            rpg_gd: 11,
            rpg_min_dec_fac: 50,
            rpg_min_rate: Rate::from_mbps(1),
            rate_to_set_on_first_cnp: None,
            dce_tcp_g: 1019,
            dce_tcp_rtt: Duration::from_us(1),
            rate_reduce_monitor_period: Duration::from_us(4),
            rate_reduce_monitor_offset: Duration::ZERO,
            initial_alpha_value: 1023,
            release_at_line_rate: true,
        }
    }

    /// Zhu et al. 2015, as its author's simulator and htsim run it (sources in the module doc).
    pub fn paper() -> Self {
        RpParams {
            mode: RpMode::PerCnp,
            clamp_tgt_rate: true,
            clamp_tgt_rate_ati: false,
            rpg_time_reset: Duration::from_us(55),
            rpg_byte_reset: 10_000_000,
            rpg_threshold: 5,
            rpg_max_rate: None,
            rpg_ai_rate: Rate::from_mbps(40),
            rpg_hai_rate: Rate::from_mbps(200),
            rpg_gd: 11,
            rpg_min_dec_fac: 0,
            rpg_min_rate: Rate::from_mbps(100),
            rate_to_set_on_first_cnp: None,
            dce_tcp_g: 1020,
            dce_tcp_rtt: Duration::from_us(55),
            rate_reduce_monitor_period: Duration::from_us(50),
            rate_reduce_monitor_offset: Duration::ZERO,
            initial_alpha_value: 1024,
            release_at_line_rate: false,
        }
    }

    /// The HPCC ns-3 reference, run.py's `dcqcn` profile at 100 Gb/s (MODEL.md §3).
    pub fn hpcc_ns3() -> Self {
        RpParams {
            mode: RpMode::Periodic,
            clamp_tgt_rate: false,
            clamp_tgt_rate_ati: true,
            rpg_time_reset: Duration::from_us(300),
            rpg_byte_reset: 0,
            rpg_threshold: 1,
            rpg_max_rate: None,
            rpg_ai_rate: Rate::from_mbps(20),
            rpg_hai_rate: Rate::from_mbps(200),
            rpg_gd: 11,
            rpg_min_dec_fac: 0,
            rpg_min_rate: Rate::from_mbps(1000),
            rate_to_set_on_first_cnp: None,
            dce_tcp_g: 1020,
            dce_tcp_rtt: Duration::from_us(1),
            rate_reduce_monitor_period: Duration::from_us(4),
            rate_reduce_monitor_offset: Duration::from_ns(1),
            initial_alpha_value: 1024,
            release_at_line_rate: false,
        }
    }

    /// The preset called `name` (`connectx`, `paper`, `hpcc_ns3`; `-` may stand for `_`).
    pub fn preset(name: &str) -> Option<Self> {
        match canonical(name)? {
            Preset::Connectx => Some(RpParams::connectx()),
            Preset::Paper => Some(RpParams::paper()),
            Preset::HpccNs3 => Some(RpParams::hpcc_ns3()),
        }
    }

    /// The highest rate at line rate `line`: `rpg_max_rate`, or `line` when unset.
    pub fn max_rate(&self, line: Rate) -> Rate {
        self.rpg_max_rate.unwrap_or(line)
    }

    /// Checks every field against the others and against the line rate.
    pub fn validate(&self, line: Rate) -> Result<(), ParamError> {
        let max = self.max_rate(line);
        if max > line {
            return Err(ParamError::new(
                "rpg_max_rate",
                max,
                format!("1 b/s..={line} (the line rate)"),
            ));
        }
        if self.rpg_min_rate > max {
            return Err(ParamError::new(
                "rpg_min_rate",
                self.rpg_min_rate,
                format!("1 b/s..={max} (the maximum rate)"),
            ));
        }
        if let Some(r) = self.rate_to_set_on_first_cnp
            && (r < self.rpg_min_rate || r > max)
        {
            return Err(ParamError::new(
                "rate_to_set_on_first_cnp",
                r,
                format!("unset, or {}..={max} (minimum..maximum rate)", self.rpg_min_rate),
            ));
        }
        if self.rpg_time_reset == Duration::ZERO && self.rpg_byte_reset == 0 {
            return Err(ParamError::new(
                "rpg_time_reset",
                "0 with rpg_byte_reset 0",
                "a non-zero period, or a non-zero rpg_byte_reset (else the rate never rises)",
            ));
        }
        if !(10..=31).contains(&self.rpg_gd) {
            return Err(ParamError::new(
                "rpg_gd",
                self.rpg_gd,
                "10..=31 (11: a cut takes α/2)",
            ));
        }
        if self.rpg_min_dec_fac > 100 {
            return Err(ParamError::new(
                "rpg_min_dec_fac",
                self.rpg_min_dec_fac,
                "0..=100 (percent)",
            ));
        }
        if self.dce_tcp_g > 1024 {
            return Err(ParamError::new(
                "dce_tcp_g",
                self.dce_tcp_g,
                "0..=1024 (1/1024 units)",
            ));
        }
        if self.initial_alpha_value > 1024 {
            return Err(ParamError::new(
                "initial_alpha_value",
                self.initial_alpha_value,
                "0..=1024 (1/1024 units)",
            ));
        }
        if self.rpg_time_reset != Duration::ZERO && self.rpg_time_reset < MIN_TIMER_PERIOD {
            return Err(ParamError::new(
                "rpg_time_reset",
                self.rpg_time_reset,
                format!("0 (no timer) or a period of at least {MIN_TIMER_PERIOD}"),
            ));
        }
        if self.dce_tcp_rtt < MIN_TIMER_PERIOD {
            return Err(ParamError::new(
                "dce_tcp_rtt",
                self.dce_tcp_rtt,
                format!("a period of at least {MIN_TIMER_PERIOD}"),
            ));
        }
        if self.mode == RpMode::Periodic && self.rate_reduce_monitor_period < MIN_TIMER_PERIOD {
            return Err(ParamError::new(
                "rate_reduce_monitor_period",
                self.rate_reduce_monitor_period,
                format!("a period of at least {MIN_TIMER_PERIOD} (mode periodic)"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_at_common_rates() {
        for name in ["connectx", "paper", "hpcc-ns3", "HPCC_NS3"] {
            let p = RpParams::preset(name).unwrap();
            for g in [10, 25, 40, 100, 400] {
                p.validate(Rate::from_gbps(g)).unwrap();
            }
            NpParams::preset(name).unwrap().validate().unwrap();
        }
        assert!(RpParams::preset("dcqcn").is_none());
    }

    #[test]
    fn errors_name_field_found_and_allowed() {
        let mut p = RpParams::connectx();
        p.rpg_min_rate = Rate::from_gbps(200);
        assert_eq!(
            p.validate(Rate::from_gbps(100)).unwrap_err().to_string(),
            "rpg_min_rate: found 200G, allowed 1 b/s..=100G (the maximum rate)"
        );
        let mut p = RpParams::connectx();
        p.rpg_gd = 7;
        assert_eq!(p.validate(Rate::from_gbps(100)).unwrap_err().field, "rpg_gd");
        let mut p = RpParams::hpcc_ns3();
        p.rpg_time_reset = Duration::ZERO;
        assert_eq!(
            p.validate(Rate::from_gbps(100)).unwrap_err().field,
            "rpg_time_reset"
        );
        let mut n = NpParams::connectx();
        n.cnp_dscp = 64;
        assert_eq!(
            n.validate().unwrap_err().to_string(),
            "cnp_dscp: found 64, allowed 0..=63"
        );
    }

    #[test]
    fn every_timer_period_has_a_floor_of_one_microsecond() {
        let line = Rate::from_gbps(100);
        for field in ["rpg_time_reset", "dce_tcp_rtt", "rate_reduce_monitor_period"] {
            let mut p = RpParams::connectx();
            let set = |p: &mut RpParams, d: Duration| match field {
                "rpg_time_reset" => p.rpg_time_reset = d,
                "dce_tcp_rtt" => p.dce_tcp_rtt = d,
                _ => p.rate_reduce_monitor_period = d,
            };
            set(&mut p, Duration::from_ps(1));
            let e = p.validate(line).unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.allowed.contains("at least 1 µs"), "{e}");
            set(&mut p, Duration::from_ns(999));
            assert_eq!(p.validate(line).unwrap_err().field, field);
            set(&mut p, MIN_TIMER_PERIOD);
            p.validate(line).unwrap();
        }
        // a zero rpg_time_reset still turns the timer off (with the byte counter on)
        let mut p = RpParams::connectx();
        p.rpg_time_reset = Duration::ZERO;
        p.validate(line).unwrap();
    }

    #[test]
    fn params_round_trip_and_refuse_unknown_fields() {
        for p in [RpParams::paper(), RpParams::connectx(), RpParams::hpcc_ns3()] {
            let text = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<RpParams>(&text).unwrap(), p);
        }
        let n = NpParams::paper();
        assert_eq!(
            serde_json::from_str::<NpParams>(&serde_json::to_string(&n).unwrap()).unwrap(),
            n
        );
        let partial: RpParams = toml::from_str("rpg_threshold = 5").unwrap();
        assert_eq!(
            partial,
            RpParams {
                rpg_threshold: 5,
                ..RpParams::connectx()
            }
        );
        assert!(toml::from_str::<RpParams>("rpg_treshold = 5").is_err());
    }
}
