//! DCBX configuration in the 802.1Qaz vocabulary: ETS (willing, CBS, MaxTCs, up2tc, tcbw, tsa,
//! the recommendation), PFC (willing, MBC, capability, enable) and the application table.

use lossless_wire::lldp::{AppEntry, EtsTables, PfcConfiguration, Tsa};
use serde::{Deserialize, Serialize};

/// Which DCBX protocol the agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeSetting {
    /// As lldpad: IEEE 802.1Qaz, falling back to CEE when the peer sends only CEE TLVs.
    #[default]
    Auto,
    /// IEEE 802.1Qaz only.
    Ieee,
    /// CEE (DCBX 1.01) only.
    Cee,
}

/// The DCBX version in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// IEEE 802.1Qaz TLVs (OUI 00-80-C2).
    Ieee,
    /// CEE TLV (OUI 00-1B-21, subtype 2).
    Cee,
}

/// A transmission selection algorithm by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TsaName {
    /// Strict priority (0).
    Strict,
    /// Credit-based shaper (1).
    Cbs,
    /// Enhanced transmission selection (2).
    #[default]
    Ets,
    /// Vendor specific (255).
    Vendor,
}

impl TsaName {
    /// The wire value.
    pub fn to_wire(self) -> Tsa {
        match self {
            TsaName::Strict => Tsa::STRICT,
            TsaName::Cbs => Tsa::CREDIT_BASED_SHAPER,
            TsaName::Ets => Tsa::ETS,
            TsaName::Vendor => Tsa::VENDOR,
        }
    }
    /// The name of a wire value; other reserved values read as vendor.
    pub fn from_wire(t: Tsa) -> Self {
        match t {
            Tsa::STRICT => TsaName::Strict,
            Tsa::CREDIT_BASED_SHAPER => TsaName::Cbs,
            Tsa::ETS => TsaName::Ets,
            _ => TsaName::Vendor,
        }
    }
}

/// ETS tables: priority → traffic class, bandwidth % per TC, TSA per TC. A table left out
/// of a configuration file takes the value of [`EtsConfig::default`]: every priority in TC 0,
/// which has 100% and, like every TC, ETS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EtsParams {
    /// Traffic class of each priority 0..7 (0..=7).
    #[serde(default = "default_up2tc")]
    pub up2tc: [u8; 8],
    /// Bandwidth % of each TC (ETS TCs sum to 100).
    #[serde(default = "default_tcbw")]
    pub tcbw: [u8; 8],
    /// Transmission selection algorithm of each TC.
    #[serde(default = "default_tsa")]
    pub tsa: [TsaName; 8],
}

fn default_up2tc() -> [u8; 8] {
    [0; 8]
}

fn default_tcbw() -> [u8; 8] {
    [100, 0, 0, 0, 0, 0, 0, 0]
}

fn default_tsa() -> [TsaName; 8] {
    [TsaName::Ets; 8]
}

impl EtsParams {
    /// As the wire's tables.
    pub fn to_tables(&self) -> EtsTables {
        EtsTables {
            priority_tc: self.up2tc,
            tc_bandwidth: self.tcbw,
            tsa: self.tsa.map(TsaName::to_wire),
        }
    }
    /// From the wire's tables.
    pub fn from_tables(t: &EtsTables) -> Self {
        EtsParams {
            up2tc: t.priority_tc,
            tcbw: t.tc_bandwidth,
            tsa: t.tsa.map(TsaName::from_wire),
        }
    }
    /// Checks up2tc < 8 and, when any TC uses ETS, that the bandwidths sum to 100.
    pub fn validate(&self, what: &'static str) -> Result<(), DcbxConfigError> {
        self.check()
            .map_err(|detail| DcbxConfigError::Rule { field: what, detail })
    }

    /// [`EtsParams::validate`] without a field name: what is wrong, found and allowed. The
    /// same rule judges our configuration and the tables a peer sends.
    pub fn check(&self) -> Result<(), ValueError> {
        if let Some(p) = self.up2tc.iter().position(|&tc| tc > 7) {
            return Err(ValueError::TrafficClass {
                priority: p,
                tc: self.up2tc[p],
            });
        }
        let sum: u32 = self.tcbw.iter().map(|&b| u32::from(b)).sum();
        if self.tsa.contains(&TsaName::Ets) && sum != 100 {
            return Err(ValueError::BandwidthSum { sum });
        }
        Ok(())
    }
}

/// The ETS feature: the local configuration and the recommendation sent to the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EtsConfig {
    /// Willing to adopt the peer's ETS Recommendation.
    #[serde(default)]
    pub willing: bool,
    /// Credit-based shaper supported.
    #[serde(default)]
    pub cbs: bool,
    /// Traffic classes supported, 1..=8.
    #[serde(default = "eight")]
    pub max_tcs: u8,
    /// The local tables.
    #[serde(flatten)]
    pub params: EtsParams,
    /// The ETS Recommendation sent to the peer; the local tables when absent.
    #[serde(default)]
    pub recommendation: Option<EtsParams>,
}

fn eight() -> u8 {
    8
}

impl Default for EtsConfig {
    fn default() -> Self {
        EtsConfig {
            willing: false,
            cbs: false,
            max_tcs: 8,
            params: EtsParams {
                up2tc: default_up2tc(),
                tcbw: default_tcbw(),
                tsa: default_tsa(),
            },
            recommendation: None,
        }
    }
}

/// The PFC parameters that negotiation compares and adopts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PfcParams {
    /// Bit n set = PFC enabled on priority n.
    pub enable: u8,
    /// MACsec bypass capability.
    pub mbc: bool,
    /// Traffic classes that can be PFC-enabled at once, 0..=8.
    pub cap: u8,
}

impl PfcParams {
    /// The enabled priorities, ascending.
    pub fn priorities(&self) -> Vec<u8> {
        (0..8).filter(|p| self.enable & (1 << p) != 0).collect()
    }
    /// Checks the capability (0..=8) and that the enabled priorities fit it: 802.1Qaz's PFC
    /// capability is how many traffic classes may have PFC at once, so the enabled priorities
    /// may span at most `cap` traffic classes of `up2tc` (the sender's priority table; when
    /// it is unknown they span at least one). The same rule judges our configuration and a
    /// peer's PFC TLV.
    pub fn check(&self, up2tc: Option<&[u8; 8]>) -> Result<(), ValueError> {
        if self.cap > 8 {
            return Err(ValueError::PfcCapability { cap: self.cap });
        }
        if self.enable == 0 {
            return Ok(());
        }
        let prios = self.priorities();
        let tcs = match up2tc {
            Some(map) => {
                let mut seen = 0u16;
                for &p in &prios {
                    seen |= 1 << (map[usize::from(p)] & 0x0f);
                }
                seen.count_ones()
            }
            None => 1,
        };
        if tcs > u32::from(self.cap) {
            return Err(ValueError::PfcClasses {
                priorities: prios,
                tcs,
                cap: self.cap,
            });
        }
        Ok(())
    }
    /// From a received PFC Configuration TLV.
    pub fn from_wire(p: &PfcConfiguration) -> Self {
        PfcParams {
            enable: p.enabled,
            mbc: p.mbc,
            cap: p.pfc_cap,
        }
    }
}

/// The PFC feature as configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    /// Willing to adopt the peer's configuration.
    #[serde(default)]
    pub willing: bool,
    /// MACsec bypass capability.
    #[serde(default)]
    pub mbc: bool,
    /// PFC capability (0..=8 TCs).
    #[serde(default = "eight")]
    pub cap: u8,
    /// Priorities with PFC enabled.
    #[serde(default)]
    pub enable: Vec<u8>,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            willing: false,
            mbc: false,
            cap: 8,
            enable: Vec::new(),
        }
    }
}

impl PfcConfig {
    /// The negotiable parameters; priorities above 7 are rejected by [`DcbxConfig::validate`].
    pub fn params(&self) -> PfcParams {
        PfcParams {
            enable: self
                .enable
                .iter()
                .filter(|&&p| p < 8)
                .fold(0, |m, &p| m | (1 << p)),
            mbc: self.mbc,
            cap: self.cap,
        }
    }
}

/// One application priority entry: selector (1 EtherType, 2 TCP/SCTP, 3 UDP/DCCP,
/// 4 any port, 5 DSCP), protocol, priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppPriority {
    /// The selector, 1..=5.
    pub selector: u8,
    /// The protocol ID (EtherType, port or DSCP).
    pub protocol: u16,
    /// The priority, 0..=7.
    pub priority: u8,
}

impl AppPriority {
    /// As a wire entry.
    pub fn to_wire(self) -> AppEntry {
        AppEntry {
            priority: self.priority,
            reserved: 0,
            selector: self.selector,
            protocol: self.protocol,
        }
    }
    /// From a wire entry.
    pub fn from_wire(e: &AppEntry) -> Self {
        AppPriority {
            selector: e.selector,
            protocol: e.protocol,
            priority: e.priority,
        }
    }
}

/// The whole local DCBX configuration of a port.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcbxConfig {
    /// Protocol version selection.
    #[serde(default)]
    pub mode: ModeSetting,
    /// ETS.
    #[serde(default)]
    pub ets: EtsConfig,
    /// PFC.
    #[serde(default)]
    pub pfc: PfcConfig,
    /// The application priority table.
    #[serde(default)]
    pub app: Vec<AppPriority>,
}

/// Most application entries with a CEE form that fit the CEE DCBX TLV: (511 - 49) / 6.
pub const MAX_CEE_APPS: usize = 77;

impl DcbxConfig {
    /// Checks every value against 802.1Qaz's ranges.
    pub fn validate(&self) -> Result<(), DcbxConfigError> {
        self.ets.params.validate("ets")?;
        if let Some(r) = &self.ets.recommendation {
            r.validate("ets.recommendation")?;
        }
        if !(1..=8).contains(&self.ets.max_tcs) {
            return Err(DcbxConfigError::Value {
                field: "ets.max_tcs",
                detail: format!("{} is not 1..=8", self.ets.max_tcs),
            });
        }
        if self.pfc.cap > 8 {
            return Err(DcbxConfigError::Value {
                field: "pfc.cap",
                detail: format!("{} is not 0..=8", self.pfc.cap),
            });
        }
        if let Some(p) = self.pfc.enable.iter().find(|&&p| p > 7) {
            return Err(DcbxConfigError::Value {
                field: "pfc.enable",
                detail: format!("priority {p} is not 0..=7"),
            });
        }
        if let Some((i, p)) = self
            .pfc
            .enable
            .iter()
            .enumerate()
            .find(|(i, p)| self.pfc.enable[..*i].contains(p))
        {
            return Err(DcbxConfigError::Value {
                field: "pfc.enable",
                detail: format!(
                    "priority {p} a second time (entry {} of {:?}); allowed each priority once",
                    i + 1,
                    self.pfc.enable
                ),
            });
        }
        self.pfc
            .params()
            .check(Some(&self.ets.params.up2tc))
            .map_err(|detail| DcbxConfigError::Rule {
                field: "pfc.cap",
                detail,
            })?;
        for a in &self.app {
            if !(1..=5).contains(&a.selector) || a.priority > 7 {
                return Err(DcbxConfigError::Value {
                    field: "app",
                    detail: format!("selector {} (1..=5) priority {} (0..=7)", a.selector, a.priority),
                });
            }
        }
        if self.app.len() > 166 {
            return Err(DcbxConfigError::Value {
                field: "app",
                detail: format!("{} entries do not fit one TLV (at most 166)", self.app.len()),
            });
        }
        // The CEE DCBX TLV is 49 bytes plus 6 per application entry with a CEE form; its
        // value must fit the 511 bytes of an LLDP length field.
        let cee_apps = self
            .app
            .iter()
            .filter(|a| super::cee::app_to_cee(a).is_some())
            .count();
        if self.mode != ModeSetting::Ieee && cee_apps > MAX_CEE_APPS {
            return Err(DcbxConfigError::Value {
                field: "app",
                detail: format!(
                    "{cee_apps} entries with a CEE form do not fit the CEE TLV (at most {MAX_CEE_APPS}; or mode = \"ieee\")"
                ),
            });
        }
        Ok(())
    }
}

/// A DCBX configuration value out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DcbxConfigError {
    /// The field and what is wrong with it.
    #[error("DCBX config {field}: {detail}")]
    Value {
        /// The field, e.g. `pfc.enable`.
        field: &'static str,
        /// What was found and what is allowed.
        detail: String,
    },
    /// The field breaks a rule that judges our configuration and a peer's TLVs alike.
    #[error("DCBX config {field}: {detail}")]
    Rule {
        /// The field, e.g. `ets`.
        field: &'static str,
        /// The rule broken, with the value found and what is allowed.
        detail: ValueError,
    },
}

impl DcbxConfigError {
    /// The field that is wrong, e.g. `pfc.enable`.
    pub fn field(&self) -> &'static str {
        match self {
            DcbxConfigError::Value { field, .. } | DcbxConfigError::Rule { field, .. } => field,
        }
    }
}

/// A DCBX value that breaks 802.1Qaz or the CEE specification: in our configuration or in a
/// TLV a peer sent. Says the value found and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ValueError {
    /// A priority mapped to a traffic class above 7.
    #[error("up2tc[{priority}] = {tc} is not a traffic class 0..=7")]
    TrafficClass {
        /// The priority.
        priority: usize,
        /// The traffic class found.
        tc: u8,
    },
    /// ETS bandwidths that do not sum to 100 % while a class uses ETS.
    #[error("tcbw sums to {sum}%, ETS needs 100%")]
    BandwidthSum {
        /// Their sum, percent.
        sum: u32,
    },
    /// A reserved transmission selection algorithm.
    #[error("tsa[{tc}] = {value} is reserved (allowed 0 strict, 1 cbs, 2 ets, 255 vendor)")]
    ReservedTsa {
        /// The traffic class.
        tc: usize,
        /// The value found.
        value: u8,
    },
    /// A PFC capability above 8.
    #[error("capability {cap} is not 0..=8")]
    PfcCapability {
        /// The capability found.
        cap: u8,
    },
    /// Enabled priorities spanning more traffic classes than the PFC capability.
    #[error("priorities {priorities:?} enabled in {tcs} traffic class(es), more than the capability {cap}")]
    PfcClasses {
        /// The enabled priorities.
        priorities: Vec<u8>,
        /// The traffic classes they span.
        tcs: u32,
        /// The capability.
        cap: u8,
    },
    /// An IEEE Application Priority entry with a reserved selector.
    #[error("entry {entry}: selector {selector} is reserved (allowed 1..=5)")]
    AppSelector {
        /// The entry's index.
        entry: usize,
        /// The selector found.
        selector: u8,
    },
    /// A CEE priority group that is neither 0..=7 nor strict (15).
    #[error("pgid[{priority}] = {pgid} is not a priority group 0..=7 or 15 (strict)")]
    PriorityGroup {
        /// The priority.
        priority: usize,
        /// The group found.
        pgid: u8,
    },
    /// CEE group bandwidths that do not sum to 100 % while a priority is in a group.
    #[error("PG bandwidths sum to {sum}%, needs 100%")]
    GroupBandwidthSum {
        /// Their sum, percent.
        sum: u32,
    },
    /// A CEE Application entry with a selector other than EtherType or port.
    #[error("entry {entry}: selector {selector} is reserved (allowed 0 EtherType, 1 port)")]
    CeeAppSelector {
        /// The entry's index.
        entry: usize,
        /// The selector found.
        selector: u8,
    },
}

impl Serialize for ValueError {
    /// As its message: what a person reads in a report.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
