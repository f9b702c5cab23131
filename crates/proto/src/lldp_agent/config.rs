//! LLDP agent configuration: identity, the 802.1AB-2009 timers and the neighbour-table policy.

use crate::units::Duration;

/// The 802.1AB-2009 transmit and receive timers (10.5.3). All are configurable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timers {
    /// msgTxInterval: time between regular LLDPDUs (default 30 s).
    pub msg_tx_interval: Duration,
    /// msgTxHold: multiplier of msgTxInterval giving the TTL (default 4).
    pub msg_tx_hold: u32,
    /// msgFastTx: time between LLDPDUs during fast transmission (default 1 s).
    pub msg_fast_tx: Duration,
    /// txFastInit: LLDPDUs sent fast after link-up, a new neighbour or a local change (default 4).
    pub tx_fast_init: u32,
    /// txCreditMax: transmit credits, refilled one per second (default 5).
    pub tx_credit_max: u32,
    /// reinitDelay: time after a shutdown before the agent may start again (default 2 s).
    pub reinit_delay: Duration,
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            msg_tx_interval: Duration::from_secs(30),
            msg_tx_hold: 4,
            msg_fast_tx: Duration::from_secs(1),
            tx_fast_init: 4,
            tx_credit_max: 5,
            reinit_delay: Duration::from_secs(2),
        }
    }
}

impl Timers {
    /// The TTL the agent advertises: min(65535, msgTxInterval × msgTxHold + 1) seconds.
    pub fn ttl_secs(&self) -> u16 {
        let interval_s = self.msg_tx_interval.as_ps() / crate::units::PS_PER_SEC;
        let ttl = interval_s
            .saturating_mul(u128::from(self.msg_tx_hold))
            .saturating_add(1);
        u16::try_from(ttl).unwrap_or(u16::MAX)
    }

    /// Checks the values 802.1AB allows (non-zero intervals, hold, fast count and credit).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let checks: [(&'static str, bool, String, &'static str); 5] = [
            (
                "msgTxInterval",
                self.msg_tx_interval >= Duration::from_secs(1),
                self.msg_tx_interval.to_string(),
                "at least 1 s",
            ),
            (
                "msgTxHold",
                self.msg_tx_hold >= 1,
                self.msg_tx_hold.to_string(),
                "at least 1",
            ),
            (
                "msgFastTx",
                self.msg_fast_tx >= Duration::from_ms(1),
                self.msg_fast_tx.to_string(),
                "at least 1 ms",
            ),
            (
                "txFastInit",
                self.tx_fast_init >= 1,
                self.tx_fast_init.to_string(),
                "at least 1",
            ),
            (
                "txCreditMax",
                self.tx_credit_max >= 1,
                self.tx_credit_max.to_string(),
                "at least 1",
            ),
        ];
        for (field, ok, found, allowed) in checks {
            if !ok {
                return Err(ConfigError::Timer {
                    field,
                    found,
                    allowed,
                });
            }
        }
        Ok(())
    }
}

/// What the agent does when a new neighbour arrives and the table is full (802.1AB 9.2.7.7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TooManyNeighbours {
    /// Discard the new neighbour's LLDPDU (the standard's behaviour); it is counted.
    #[default]
    DiscardNew,
    /// Evict the neighbour whose information expires first and store the new one.
    ReplaceEarliestExpiry,
}

/// Configuration of one LLDP agent (one port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// The port's MAC address: the source of our LLDPDUs and the Chassis ID.
    pub mac: [u8; 6],
    /// Port ID sent as an interface name (subtype 5); `None` sends the MAC (subtype 3).
    pub port_name: Option<String>,
    /// System Name TLV, if any.
    pub system_name: Option<String>,
    /// The timers.
    pub timers: Timers,
    /// Largest number of neighbours kept (at least 1).
    pub max_neighbours: usize,
    /// Policy when the table is full.
    pub too_many: TooManyNeighbours,
}

impl AgentConfig {
    /// A configuration with the standard's defaults for the port with MAC `mac`.
    pub fn new(mac: [u8; 6]) -> Self {
        AgentConfig {
            mac,
            port_name: None,
            system_name: None,
            timers: Timers::default(),
            max_neighbours: 4,
            too_many: TooManyNeighbours::default(),
        }
    }
}

/// A configuration value the agent cannot run with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A timer is zero or below its minimum.
    #[error("LLDP timer {field}: found {found}, allowed {allowed}")]
    Timer {
        /// The timer's 802.1AB name.
        field: &'static str,
        /// The value found, with its unit.
        found: String,
        /// Its range, with its unit.
        allowed: &'static str,
    },
    /// max_neighbours is 0.
    #[error("max_neighbours must be at least 1, found 0")]
    NoNeighbours,
    /// The port name is empty or longer than 255 bytes.
    #[error("port name must be 1..=255 bytes, found {0}")]
    PortName(usize),
    /// The system name is longer than 255 bytes (802.1AB-2016 8.5.6).
    #[error("system name must be at most 255 bytes, found {0}")]
    SystemName(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_error_gives_the_timer_its_value_and_its_own_minimum() {
        let bad = |t: Timers| t.validate().unwrap_err().to_string();
        let d = Timers::default();
        let e = bad(Timers { msg_tx_hold: 0, ..d });
        assert_eq!(e, "LLDP timer msgTxHold: found 0, allowed at least 1");
        let e = bad(Timers {
            msg_tx_interval: Duration::from_ms(500),
            ..d
        });
        assert_eq!(e, "LLDP timer msgTxInterval: found 500 ms, allowed at least 1 s");
        let e = bad(Timers {
            msg_fast_tx: Duration::ZERO,
            ..d
        });
        assert!(
            e.starts_with("LLDP timer msgFastTx: found 0") && e.ends_with("allowed at least 1 ms"),
            "{e}"
        );
    }
}
