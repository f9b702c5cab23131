//! Configuration of one reliable connection (both ends use the same one), its checks and presets.

use serde::{Deserialize, Serialize};

use super::psn::PSN_MASK;
use crate::units::{Duration, MIN_TIMER_PERIOD};

/// Smallest payload per packet accepted (the smallest InfiniBand MTU).
pub const MIN_MTU: u32 = 256;
/// Largest payload per packet accepted (the largest InfiniBand MTU).
pub const MAX_MTU: u32 = 4096;
/// Most packets an IRN window may hold (`bdp_cap_bytes / mtu`): bounds the memory taken at creation.
pub const MAX_IRN_WINDOW_PACKETS: u64 = 1 << 18;
/// Packets in flight at or below which IRN arms `rto_low` instead of `rto_high` (IRN's N = 3).
pub const IRN_RTO_LOW_MAX_PACKETS: u64 = 3;

/// How a requester recovers from loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Recovery {
    /// RoCE as NICs ship it: the responder drops out-of-order packets and NAKs the first,
    /// the requester resends everything from the NAK's PSN (or, after `rto`, from the oldest
    /// unacknowledged one).
    GoBackN,
    /// IRN (Mittal et al., SIGCOMM 2018): the responder keeps out-of-order packets and SACKs
    /// each one, the requester resends only what is lost, and never has more than
    /// `bdp_cap_bytes` outstanding.
    Irn {
        /// Most bytes between the oldest unacknowledged byte and the end of the newest packet
        /// sent (SACKed bytes count, as in IRN and the TLT ns-3 code); at least one `mtu`.
        bdp_cap_bytes: u64,
        /// Timeout armed when at most 3 packets are outstanding.
        rto_low: Duration,
        /// Timeout armed when more than 3 packets are outstanding.
        rto_high: Duration,
    },
}

/// Everything both ends of one reliable connection need to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcConfig {
    /// Payload bytes per packet (the path MTU less headers): 256..=4096. Every packet but the
    /// last of a message carries exactly this many.
    pub mtu: u32,
    /// The responder acknowledges every `ack_every` in-order packets (at least 1), and always
    /// at once a packet with AckReq set, the last packet of the message, a duplicate, and a
    /// packet that fills an IRN hole.
    pub ack_every: u32,
    /// Go-back-N or IRN selective repeat.
    pub recovery: Recovery,
    /// Go-back-N retransmission timeout (IB "local ACK timeout"); [`Duration::ZERO`] turns it
    /// off, as an IB timeout value of 0 does (infinite) and as the HPCC ns-3 model has none.
    /// IRN uses its own `rto_low`/`rto_high` instead.
    pub rto: Duration,
    /// Retries (timeouts and NAK-sequence-error rewinds) allowed without progress before the
    /// requester gives up (IB `retry_cnt`); `None` retries for ever.
    pub max_retries: Option<u32>,
    /// Go-back-N responder: after a NAK, no second NAK for the same expected PSN before this
    /// much time (HPCC ns-3: 500 µs). [`Duration::MAX`]: never a second one, as Linux rxe.
    pub nak_min_interval: Duration,
    /// The first PSN of the connection (24 bits).
    pub psn_start: u32,
}

/// Why an [`RcConfig`] was refused: the field, what was found, what is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RcConfigError {
    /// `mtu` out of range.
    #[error("mtu: found {found} bytes, allowed {MIN_MTU}..={MAX_MTU} payload bytes per packet")]
    Mtu {
        /// The value given.
        found: u32,
    },
    /// `ack_every` is 0.
    #[error("ack_every: found 0, allowed 1..=4294967295 packets")]
    AckEveryZero,
    /// `psn_start` needs more than 24 bits.
    #[error("psn_start: found {found:#x}, allowed 0..=0xffffff (24 bits)")]
    PsnStart {
        /// The value given.
        found: u32,
    },
    /// `recovery.irn.bdp_cap_bytes` below one packet or above the window limit.
    #[error(
        "recovery.irn.bdp_cap_bytes: found {found}, allowed {min}..={max} (at least one mtu, at most {MAX_IRN_WINDOW_PACKETS} packets of the mtu)"
    )]
    BdpCap {
        /// The value given.
        found: u64,
        /// Smallest allowed (the mtu).
        min: u64,
        /// Largest allowed at this mtu.
        max: u64,
    },
    /// An IRN timeout is zero (IRN needs a timeout: a lost tail is found by nothing else).
    #[error("recovery.irn.{field}: found 0, allowed a duration above 0")]
    IrnRtoZero {
        /// `rto_low` or `rto_high`.
        field: &'static str,
    },
    /// A retransmission timeout shorter than [`MIN_TIMER_PERIOD`] (its timer would fire
    /// without bound as it shrinks).
    #[error("{field}: found {found}, allowed {allowed}")]
    TimeoutTooShort {
        /// `rto`, `recovery.irn.rto_low` or `recovery.irn.rto_high`.
        field: &'static str,
        /// The value given.
        found: Duration,
        /// What is allowed.
        allowed: &'static str,
    },
}

impl RcConfig {
    /// Checks every field; the error names the first one at fault.
    pub fn validate(&self) -> Result<(), RcConfigError> {
        if !(MIN_MTU..=MAX_MTU).contains(&self.mtu) {
            return Err(RcConfigError::Mtu { found: self.mtu });
        }
        if self.ack_every == 0 {
            return Err(RcConfigError::AckEveryZero);
        }
        if self.psn_start > PSN_MASK {
            return Err(RcConfigError::PsnStart {
                found: self.psn_start,
            });
        }
        if let Recovery::Irn {
            bdp_cap_bytes,
            rto_low,
            rto_high,
        } = self.recovery
        {
            let mtu = u64::from(self.mtu);
            let max = MAX_IRN_WINDOW_PACKETS * mtu;
            if !(mtu..=max).contains(&bdp_cap_bytes) {
                return Err(RcConfigError::BdpCap {
                    found: bdp_cap_bytes,
                    min: mtu,
                    max,
                });
            }
            if rto_low == Duration::ZERO {
                return Err(RcConfigError::IrnRtoZero { field: "rto_low" });
            }
            if rto_high == Duration::ZERO {
                return Err(RcConfigError::IrnRtoZero { field: "rto_high" });
            }
            for (field, found) in [
                ("recovery.irn.rto_low", rto_low),
                ("recovery.irn.rto_high", rto_high),
            ] {
                if found < MIN_TIMER_PERIOD {
                    return Err(RcConfigError::TimeoutTooShort {
                        field,
                        found,
                        allowed: "at least 1 µs",
                    });
                }
            }
        }
        if self.rto != Duration::ZERO && self.rto < MIN_TIMER_PERIOD {
            return Err(RcConfigError::TimeoutTooShort {
                field: "rto",
                found: self.rto,
                allowed: "0 (no timeout) or at least 1 µs",
            });
        }
        Ok(())
    }

    /// What the HPCC ns-3 reference simulates with run.py's settings (`PACKET_PAYLOAD_SIZE
    /// 1000`, `L2_ACK_INTERVAL 1`, `L2_BACK_TO_ZERO 0`, NACK interval 500 µs, no timeout):
    /// see the module documentation for how each key maps.
    pub fn hpcc_ns3() -> RcConfig {
        RcConfig {
            mtu: 1000,
            ack_every: 1,
            recovery: Recovery::GoBackN,
            rto: Duration::ZERO,
            max_retries: None,
            nak_min_interval: Duration::from_us(500),
            psn_start: 0,
        }
    }

    /// IRN as the TLT ns-3 fork (kaist-ina/ns3-tlt-rdma-public) defaults it: 1000-byte
    /// payloads, ACK per packet, BDP cap 100 000 bytes, RTO_low 454 µs, RTO_high 1350 µs.
    pub fn irn_tlt() -> RcConfig {
        RcConfig {
            recovery: Recovery::Irn {
                bdp_cap_bytes: 100_000,
                rto_low: Duration::from_us(454),
                rto_high: Duration::from_us(1350),
            },
            ..RcConfig::hpcc_ns3()
        }
    }

    /// A RoCE NIC as perftest sets up its QPs: `mtu` (1024 on a 1500-byte Ethernet MTU),
    /// local ACK timeout exponent 14 (4.096 µs · 2^14 = 67.1 ms), `retry_cnt` 7, and a
    /// responder that NAKs once per expected PSN (Linux rxe). ACKs every packet.
    pub fn perftest(mtu: u32) -> RcConfig {
        RcConfig {
            mtu,
            ack_every: 1,
            recovery: Recovery::GoBackN,
            rto: ib_local_ack_timeout(14).unwrap_or(Duration::ZERO),
            max_retries: Some(7),
            nak_min_interval: Duration::MAX,
            psn_start: 0,
        }
    }

    /// A preset by name: `hpcc-ns3`, `irn-tlt`, `perftest` (mtu 1024).
    pub fn preset(name: &str) -> Option<RcConfig> {
        match name {
            "hpcc-ns3" | "hpcc_ns3" => Some(Self::hpcc_ns3()),
            "irn-tlt" | "irn_tlt" => Some(Self::irn_tlt()),
            "perftest" => Some(Self::perftest(1024)),
            _ => None,
        }
    }

    /// Names accepted by [`RcConfig::preset`].
    pub const PRESETS: [&'static str; 3] = ["hpcc-ns3", "irn-tlt", "perftest"];
}

/// The IB local ACK timeout for the 5-bit QP attribute `timeout` (4.096 µs · 2^exponent;
/// 0 means infinite, returned as [`Duration::ZERO`], "off"); `None` above 31.
pub const fn ib_local_ack_timeout(exponent: u8) -> Option<Duration> {
    if exponent > 31 {
        None
    } else if exponent == 0 {
        Some(Duration::ZERO)
    } else {
        Some(Duration::from_ps(4_096_000u128 << exponent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_are_found_by_name() {
        for name in RcConfig::PRESETS {
            let c = RcConfig::preset(name).unwrap();
            assert_eq!(c.validate(), Ok(()), "{name}");
        }
        assert_eq!(RcConfig::preset("nope"), None);
    }

    #[test]
    fn each_bad_field_is_named_with_found_and_allowed() {
        let ok = RcConfig::hpcc_ns3();
        let e = RcConfig { mtu: 100, ..ok }.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "mtu: found 100 bytes, allowed 256..=4096 payload bytes per packet"
        );
        let e = RcConfig { ack_every: 0, ..ok }.validate().unwrap_err();
        assert!(e.to_string().starts_with("ack_every: found 0"), "{e}");
        let e = RcConfig {
            psn_start: 1 << 24,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "psn_start: found 0x1000000, allowed 0..=0xffffff (24 bits)"
        );
        let irn = |cap, lo, hi| RcConfig {
            recovery: Recovery::Irn {
                bdp_cap_bytes: cap,
                rto_low: lo,
                rto_high: hi,
            },
            ..ok
        };
        let us = Duration::from_us(1);
        let e = irn(999, us, us).validate().unwrap_err();
        assert_eq!(
            e,
            RcConfigError::BdpCap {
                found: 999,
                min: 1000,
                max: 262_144_000
            }
        );
        assert!(
            e.to_string()
                .starts_with("recovery.irn.bdp_cap_bytes: found 999, allowed 1000..="),
            "{e}"
        );
        assert!(irn(262_144_001, us, us).validate().is_err());
        assert_eq!(irn(262_144_000, us, us).validate(), Ok(()));
        let e = irn(4000, Duration::ZERO, us).validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "recovery.irn.rto_low: found 0, allowed a duration above 0"
        );
        let e = irn(4000, us, Duration::ZERO).validate().unwrap_err();
        assert_eq!(e, RcConfigError::IrnRtoZero { field: "rto_high" });
    }

    #[test]
    fn a_retransmission_timeout_below_one_microsecond_is_refused() {
        let mut c = RcConfig::perftest(1024);
        c.rto = Duration::from_ps(1);
        let e = c.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "rto: found 1 ps, allowed 0 (no timeout) or at least 1 µs"
        );
        c.rto = MIN_TIMER_PERIOD;
        c.validate().unwrap();
        c.rto = Duration::ZERO;
        c.validate().unwrap();
        let mut c = RcConfig::irn_tlt();
        if let Recovery::Irn { rto_low, .. } = &mut c.recovery {
            *rto_low = Duration::from_ns(10);
        }
        assert!(matches!(
            c.validate().unwrap_err(),
            RcConfigError::TimeoutTooShort {
                field: "recovery.irn.rto_low",
                ..
            }
        ));
    }

    #[test]
    fn ib_timeout_exponent_follows_4_096_us_times_power_of_two() {
        assert_eq!(ib_local_ack_timeout(0), Some(Duration::ZERO));
        assert_eq!(ib_local_ack_timeout(1), Some(Duration::from_ns(8_192)));
        assert_eq!(ib_local_ack_timeout(14), Some(Duration::from_ns(67_108_864)));
        assert_eq!(
            ib_local_ack_timeout(31),
            Some(Duration::from_ps(4_096_000u128 << 31))
        );
        assert_eq!(ib_local_ack_timeout(32), None);
    }

    #[test]
    fn config_round_trips_through_json_and_refuses_unknown_fields() {
        for c in [
            RcConfig::hpcc_ns3(),
            RcConfig::irn_tlt(),
            RcConfig::perftest(4096),
        ] {
            let s = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<RcConfig>(&s).unwrap(), c, "{s}");
        }
        let mut v = serde_json::to_value(RcConfig::hpcc_ns3()).unwrap();
        v["ack_evry"] = 2.into();
        let e = serde_json::from_value::<RcConfig>(v).unwrap_err().to_string();
        assert!(e.contains("unknown field `ack_evry`"), "{e}");
    }
}
