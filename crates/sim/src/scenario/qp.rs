//! Scenario keys of RoCEv2 QPs (`transport = "rocev2"` on a `[[flow]]` or `[[workload]]`,
//! defaults in `[qp]`) and of switch congestion notification (`ecn`, `qcn` on a `[[switch]]`,
//! defaults in top-level `[ecn]` and `[qcn]`).
//!
//! Engine parameters keep their engines' names (NVIDIA's for DCQCN, the 802.1Qau MIB's for
//! QCN, `RcConfig`'s for the transport): a table of overrides is laid over the named preset
//! and read by the engine's own serde shape, so an unknown name is refused with the list of
//! allowed ones. Durations are written with a unit (`"300us"`), rates as `"5M"`, `"100G"`.

use lossless_proto::dcqcn::{NpParams, RpParams};
use lossless_proto::dctcp::DctcpParams;
use lossless_proto::ecn::{EcnConfig, MarkPoint};
use lossless_proto::hpcc::HpccParams;
use lossless_proto::hpcc_pint::PintParams;
use lossless_proto::qcn::{CpParams, QcnRpParams};
use lossless_proto::rocev2::{RcConfig, RcConfigError};
use lossless_proto::timely::TimelyParams;
use lossless_proto::units::{ParseRateError, Rate};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use toml::Spanned;

use super::ScenarioError;
use super::build::Ctx;
use super::{DurationError, parse_duration};
use crate::config::transport::{CcSpec, EcnSpec, QcnSpec, QpSpec, QpWindow};

/// The keys of a QP, in `[qp]` (defaults) and on a flow or workload.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQp {
    /// "dcqcn", "qcn", "dctcp", "hpcc", "hpcc-pint", "timely" or "none".
    pub(super) cc: Option<Spanned<String>>,
    /// Preset of the congestion control: DCQCN "connectx", "paper", "hpcc-ns3"; QCN "mib";
    /// HPCC "hpcc-ns3", "paper", "eta99"; TIMELY "hpcc-ns3", "paper"; DCTCP "hpcc-ns3",
    /// "rfc8257"; HPCC-PINT "hpcc-ns3".
    pub(super) preset: Option<Spanned<String>>,
    /// Priority of the receiver's ACK/NAK packets (default: the data priority).
    pub(super) ack_priority: Option<u8>,
    /// Priority of DCQCN CNP packets (`dcqcn.cnp_802p_prio`).
    pub(super) cnp_priority: Option<u8>,
    /// UDP destination port of the data packets (default 4791).
    pub(super) udp_dport: Option<u16>,
    /// IP DSCP of the data packets and replies (default 26).
    pub(super) dscp: Option<u8>,
    /// DCQCN overrides (reaction and notification point), NVIDIA names.
    pub(super) dcqcn: Option<toml::Table>,
    /// QCN reaction point overrides, 802.1Qau MIB names.
    pub(super) qcn: Option<toml::Table>,
    /// DCTCP (`cc = "dctcp"`): `preset` ("hpcc-ns3") and `DctcpParams` overrides (`g`,
    /// `rate_ai`, `min_rate`).
    pub(super) dctcp: Option<toml::Table>,
    /// HPCC (`cc = "hpcc"`): `preset` ("hpcc-ns3"), `base_rtt`, `bdp` and `HpccParams`
    /// overrides (`eta`, `rate_ai`, `min_rate`, `max_stage`, `fast_react`, `sample_feedback`,
    /// `int_multi`).
    pub(super) hpcc: Option<toml::Table>,
    /// HPCC-PINT (`cc = "hpcc-pint"`): `preset` ("hpcc-ns3"), `base_rtt` (T of the switches'
    /// estimate), `bdp` (the window at line rate) and `PintParams` overrides (`eta`,
    /// `rate_ai`, `min_rate`, `max_stage`, `log_base`, `prob`).
    pub(super) hpcc_pint: Option<toml::Table>,
    /// TIMELY (`cc = "timely"`): `preset` ("hpcc-ns3") and `TimelyParams` overrides.
    pub(super) timely: Option<toml::Table>,
    /// Transport overrides (`preset` "perftest", "hpcc-ns3", "irn-tlt", and `RcConfig` keys).
    pub(super) rocev2: Option<toml::Table>,
}

impl RawQp {
    /// `self` over `base`, key by key (override tables merged key by key too).
    pub(super) fn over(&self, base: &RawQp) -> RawQp {
        fn table(a: &Option<toml::Table>, b: &Option<toml::Table>) -> Option<toml::Table> {
            match (a, b) {
                (None, None) => None,
                (Some(a), None) => Some(a.clone()),
                (None, Some(b)) => Some(b.clone()),
                (Some(a), Some(b)) => {
                    let mut t = b.clone();
                    for (k, v) in a {
                        t.insert(k.clone(), v.clone());
                    }
                    Some(t)
                }
            }
        }
        RawQp {
            cc: self.cc.clone().or_else(|| base.cc.clone()),
            preset: self.preset.clone().or_else(|| base.preset.clone()),
            ack_priority: self.ack_priority.or(base.ack_priority),
            cnp_priority: self.cnp_priority.or(base.cnp_priority),
            udp_dport: self.udp_dport.or(base.udp_dport),
            dscp: self.dscp.or(base.dscp),
            dcqcn: table(&self.dcqcn, &base.dcqcn),
            qcn: table(&self.qcn, &base.qcn),
            dctcp: table(&self.dctcp, &base.dctcp),
            hpcc: table(&self.hpcc, &base.hpcc),
            hpcc_pint: table(&self.hpcc_pint, &base.hpcc_pint),
            timely: table(&self.timely, &base.timely),
            rocev2: table(&self.rocev2, &base.rocev2),
        }
    }
}

/// The `rocev2` table: a preset (`perftest` by default) and `RcConfig` overrides.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRc {
    preset: Option<String>,
    mtu: Option<u32>,
    ack_every: Option<u32>,
    /// "go_back_n" or `{ irn = { bdp_cap_bytes, rto_low, rto_high } }`.
    recovery: Option<toml::Value>,
    /// A duration, or "off".
    rto: Option<String>,
    /// A count, or "none" (retry for ever).
    max_retries: Option<toml::Value>,
    /// A duration, or "never" (one NAK per expected PSN).
    nak_min_interval: Option<String>,
    psn_start: Option<u32>,
}

/// The IRN recovery table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIrn {
    bdp_cap_bytes: u64,
    rto_low: String,
    rto_high: String,
}

/// Why the `rocev2` table of a QP was refused ([`rc_config`]).
#[derive(Debug)]
enum RcKeyError {
    /// Not of the table's shape: TOML's message.
    Shape(String),
    /// No such preset: the name found.
    Preset(String),
    /// The text of a duration key.
    Duration(&'static str, DurationError),
    /// `max_retries`: the value found.
    MaxRetries(toml::Value),
    /// `recovery.irn` not of its shape: TOML's message.
    Irn(String),
    /// `recovery`: the value found.
    Recovery(toml::Value),
    /// Values the transport refuses together.
    Invalid(RcConfigError),
}

impl std::fmt::Display for RcKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RcKeyError::Shape(m) => f.write_str(m),
            RcKeyError::Preset(name) => write!(
                f,
                "preset: found {name:?}, allowed {}",
                RcConfig::PRESETS.map(|p| format!("{p:?}")).join(", ")
            ),
            RcKeyError::Duration(key, m) => write!(f, "{key}: {m}"),
            RcKeyError::MaxRetries(v) => write!(f, "max_retries: found {v}, allowed a count or \"none\""),
            RcKeyError::Irn(m) => write!(f, "recovery.irn: {m}"),
            RcKeyError::Recovery(v) => write!(
                f,
                "recovery: found {v}, allowed \"go_back_n\" or {{ irn = {{ bdp_cap_bytes, rto_low, rto_high }} }}"
            ),
            RcKeyError::Invalid(e) => std::fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for RcKeyError {}

fn rc_config(t: Option<&toml::Table>) -> Result<RcConfig, RcKeyError> {
    use lossless_proto::rocev2::Recovery;
    use lossless_proto::units::Duration;
    let raw = match t {
        None => RawRc::default(),
        Some(t) => RawRc::deserialize(toml::Value::Table(t.clone()))
            .map_err(|e| RcKeyError::Shape(e.message().trim().to_string()))?,
    };
    let name = raw.preset.as_deref().unwrap_or("perftest");
    let mut rc = RcConfig::preset(name).ok_or_else(|| RcKeyError::Preset(name.to_string()))?;
    let dur = |key: &'static str, s: &str| parse_duration(s).map_err(|m| RcKeyError::Duration(key, m));
    if let Some(v) = raw.mtu {
        rc.mtu = v;
    }
    if let Some(v) = raw.ack_every {
        rc.ack_every = v;
    }
    if let Some(v) = raw.psn_start {
        rc.psn_start = v;
    }
    if let Some(v) = &raw.rto {
        rc.rto = if v == "off" {
            Duration::ZERO
        } else {
            dur("rto", v)?
        };
    }
    if let Some(v) = &raw.nak_min_interval {
        rc.nak_min_interval = if v == "never" {
            Duration::MAX
        } else {
            dur("nak_min_interval", v)?
        };
    }
    match &raw.max_retries {
        None => {}
        Some(toml::Value::String(s)) if s == "none" => rc.max_retries = None,
        Some(toml::Value::Integer(n)) if (0..=i64::from(u32::MAX)).contains(n) => {
            rc.max_retries = Some(*n as u32)
        }
        Some(v) => return Err(RcKeyError::MaxRetries(v.clone())),
    }
    match &raw.recovery {
        None => {}
        Some(toml::Value::String(s)) if s == "go_back_n" => rc.recovery = Recovery::GoBackN,
        Some(v @ toml::Value::Table(t)) if t.len() == 1 && t.contains_key("irn") => {
            let irn = RawIrn::deserialize(t["irn"].clone())
                .map_err(|e| RcKeyError::Irn(e.message().trim().to_string()))?;
            rc.recovery = Recovery::Irn {
                bdp_cap_bytes: irn.bdp_cap_bytes,
                rto_low: dur("rto_low", &irn.rto_low)?,
                rto_high: dur("rto_high", &irn.rto_high)?,
            };
            let _ = v;
        }
        Some(v) => return Err(RcKeyError::Recovery(v.clone())),
    }
    rc.validate().map_err(RcKeyError::Invalid)?;
    Ok(rc)
}

/// Keys whose values are durations, in any engine's table.
const DURATION_KEYS: [&str; 5] = [
    "rpg_time_reset",
    "dce_tcp_rtt",
    "rate_reduce_monitor_period",
    "rate_reduce_monitor_offset",
    "min_time_between_cnps",
];
/// Keys whose values are rates.
const RATE_KEYS: [&str; 7] = [
    "rate_ai",
    "min_rate",
    "rpg_max_rate",
    "rpg_ai_rate",
    "rpg_hai_rate",
    "rpg_min_rate",
    "rate_to_set_on_first_cnp",
];
/// Keys of the DCQCN table that belong to the notification point (`cnp_mode` is its `mode`).
const NP_KEYS: [&str; 5] = [
    "min_time_between_cnps",
    "cnp_802p_prio",
    "cnp_dscp",
    "late_cnp",
    "cnp_mode",
];

/// A TOML value as the engine's serde shape wants it: durations to picoseconds, rates to
/// bits per second ("none" for an optional one), recursively.
fn to_json(key: &str, v: &toml::Value) -> Result<serde_json::Value, EngineKeyError> {
    use serde_json::Value as J;
    if DURATION_KEYS.contains(&key) {
        let Some(s) = v.as_str() else {
            return Err(EngineKeyError::NotDurationText {
                key: key.to_string(),
                found: v.clone(),
            });
        };
        let d = parse_duration(s).map_err(|m| EngineKeyError::Duration {
            key: key.to_string(),
            source: m,
        })?;
        return Ok(J::from(d.as_ps() as u64));
    }
    if RATE_KEYS.contains(&key) {
        let Some(s) = v.as_str() else {
            return Err(EngineKeyError::NotRateText {
                key: key.to_string(),
                found: v.clone(),
            });
        };
        if s == "none" {
            return Ok(J::Null);
        }
        let r: Rate = s.parse().map_err(|e| EngineKeyError::Rate {
            key: key.to_string(),
            source: e,
        })?;
        return Ok(J::from(r.bps()));
    }
    Ok(match v {
        toml::Value::String(s) => J::from(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(f) => J::from(*f),
        toml::Value::Boolean(b) => J::from(*b),
        toml::Value::Datetime(d) => J::from(d.to_string()),
        toml::Value::Array(a) => J::Array(a.iter().map(|x| to_json(key, x)).collect::<Result<_, _>>()?),
        toml::Value::Table(t) => J::Object(
            t.iter()
                .map(|(k, x)| Ok((k.clone(), to_json(k, x)?)))
                .collect::<Result<_, EngineKeyError>>()?,
        ),
    })
}

/// `preset` with the keys of `over` laid over it, read back by its own serde shape.
fn overlay<T: serde::Serialize + DeserializeOwned>(
    preset: &T,
    over: impl Iterator<Item = (String, serde_json::Value)>,
) -> Result<T, EngineKeyError> {
    let mut v = serde_json::to_value(preset).map_err(EngineKeyError::Overlay)?;
    if let serde_json::Value::Object(m) = &mut v {
        for (k, x) in over {
            m.insert(k, x);
        }
    }
    serde_json::from_value(v).map_err(EngineKeyError::Overlay)
}

/// Why a key of an engine's table (`dcqcn`, `qcn`) was refused ([`to_json`], [`overlay`]).
#[derive(Debug)]
enum EngineKeyError {
    /// A duration key whose value is not text.
    NotDurationText { key: String, found: toml::Value },
    /// The text of a duration key.
    Duration { key: String, source: DurationError },
    /// A rate key whose value is not text.
    NotRateText { key: String, found: toml::Value },
    /// The text of a rate key.
    Rate { key: String, source: ParseRateError },
    /// The preset with the keys laid over it does not read back (an unknown key, a value of
    /// the wrong type): serde's error.
    Overlay(serde_json::Error),
}

impl std::fmt::Display for EngineKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineKeyError::NotDurationText { key, found } => write!(
                f,
                "key `{key}`: found {found}, allowed a duration with a unit (e.g. \"300us\", \"4us\")"
            ),
            EngineKeyError::Duration { key, source } => write!(f, "key `{key}`: {source}"),
            EngineKeyError::NotRateText { key, found } => write!(
                f,
                "key `{key}`: found {found}, allowed a rate such as \"5M\", \"100G\" (or \"none\")"
            ),
            EngineKeyError::Rate { key, source } => write!(f, "key `{key}`: {source}"),
            EngineKeyError::Overlay(e) => std::fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for EngineKeyError {}

fn err_at(ctx: &Ctx<'_>, line: usize, key: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: ctx.file.to_string(),
        line,
        key: format!("key `{key}`: "),
        message,
    }
}

/// Resolves the QP keys `q` (already laid over `[qp]`) of a flow of priority `priority`
/// whose sender's line rate is `line`; errors name `line_no`.
pub(super) fn qp_spec(
    ctx: &Ctx<'_>,
    q: &RawQp,
    priority: u8,
    lines: &[Rate],
    line_no: usize,
) -> Result<QpSpec, ScenarioError> {
    let err = |key: &str, m: String| err_at(ctx, line_no, key, m);
    let cc_name = q.cc.as_ref().map_or("dcqcn", |s| s.get_ref().as_str());
    // the transport
    let rc = rc_config(q.rocev2.as_ref()).map_err(|m| err("rocev2", m.to_string()))?;
    // the congestion control
    let preset = q.preset.as_ref().map(|s| s.get_ref().as_str());
    let mut window = QpWindow::NONE;
    let cc = match cc_name {
        "none" => CcSpec::None,
        "dcqcn" => {
            let name = preset.unwrap_or("connectx");
            let (Some(rp0), Some(np0)) = (RpParams::preset(name), NpParams::preset(name)) else {
                return Err(err(
                    "preset",
                    format!("found {name:?}, allowed \"connectx\", \"paper\" or \"hpcc-ns3\" (DCQCN)"),
                ));
            };
            let t = q.dcqcn.clone().unwrap_or_default();
            let mut rp_over = Vec::new();
            let mut np_over = Vec::new();
            for (k, v) in &t {
                let j = to_json(k, v).map_err(|m| err("dcqcn", m.to_string()))?;
                if NP_KEYS.contains(&k.as_str()) {
                    let k = if k == "cnp_mode" {
                        "mode".to_string()
                    } else {
                        k.clone()
                    };
                    np_over.push((k, j));
                } else {
                    rp_over.push((k.clone(), j));
                }
            }
            if let Some(p) = q.cnp_priority {
                np_over.push(("cnp_802p_prio".into(), serde_json::Value::from(p)));
            }
            let rp: RpParams = overlay(&rp0, rp_over.into_iter()).map_err(|m| {
                err(
                    "dcqcn",
                    format!("{m} (notification point keys: {})", NP_KEYS.join(", ")),
                )
            })?;
            let np: NpParams = overlay(&np0, np_over.into_iter()).map_err(|m| err("dcqcn", m.to_string()))?;
            np.validate().map_err(|e| err("dcqcn", e.to_string()))?;
            for &l in lines {
                rp.validate(l)
                    .map_err(|e| err("dcqcn", format!("{e} (sender's line rate {l})")))?;
            }
            CcSpec::Dcqcn { rp, np }
        }
        "qcn" => {
            if let Some(p) = preset
                && p != "mib"
            {
                return Err(err(
                    "preset",
                    format!("found {p:?}, allowed \"mib\" (QCN: the IEEE8021-CN-MIB defaults)"),
                ));
            }
            let t = q.qcn.clone().unwrap_or_default();
            let over = t
                .iter()
                .map(|(k, v)| to_json(k, v).map(|j| (k.clone(), j)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| err("qcn", m.to_string()))?;
            let rp: QcnRpParams =
                overlay(&QcnRpParams::default(), over.into_iter()).map_err(|m| err("qcn", m.to_string()))?;
            for &l in lines {
                rp.validate(l)
                    .map_err(|e| err("qcn", format!("{e} (sender's line rate {l})")))?;
            }
            CcSpec::Qcn { rp }
        }
        "dctcp" => CcSpec::Dctcp {
            params: dctcp_params(q, preset, rc.mtu, lines).map_err(|m| err("dctcp", m.to_string()))?,
        },
        "hpcc" => {
            let (params, base_rtt_ns, bdp) =
                hpcc_params(q, preset, lines).map_err(|m| err("hpcc", m.to_string()))?;
            window = QpWindow {
                bytes: bdp,
                variable: true,
            };
            CcSpec::Hpcc { params, base_rtt_ns }
        }
        "hpcc-pint" => {
            let (params, max_rtt_ns, bdp) =
                pint_params(q, preset, lines).map_err(|m| err("hpcc_pint", m.to_string()))?;
            window = QpWindow {
                bytes: bdp,
                variable: true,
            };
            CcSpec::HpccPint { params, max_rtt_ns }
        }
        "timely" => CcSpec::Timely {
            params: timely_params(q, preset, lines).map_err(|m| err("timely", m))?,
        },
        other => {
            return Err(err(
                "cc",
                format!(
                    "found {other:?}, allowed \"dcqcn\", \"qcn\", \"dctcp\", \"hpcc\", \"hpcc-pint\", \"timely\" or \"none\""
                ),
            ));
        }
    };
    if cc_name != "dcqcn" && q.dcqcn.is_some() {
        return Err(err("dcqcn", format!("given but cc is {cc_name:?}")));
    }
    if cc_name != "qcn" && q.qcn.is_some() {
        return Err(err("qcn", format!("given but cc is {cc_name:?}")));
    }
    if cc_name != "dctcp" && q.dctcp.is_some() {
        return Err(err("dctcp", format!("given but cc is {cc_name:?}")));
    }
    if cc_name != "hpcc" && q.hpcc.is_some() {
        return Err(err("hpcc", format!("given but cc is {cc_name:?}")));
    }
    if cc_name != "hpcc-pint" && q.hpcc_pint.is_some() {
        return Err(err("hpcc_pint", format!("given but cc is {cc_name:?}")));
    }
    if cc_name != "timely" && q.timely.is_some() {
        return Err(err("timely", format!("given but cc is {cc_name:?}")));
    }
    let ack_priority = q.ack_priority.unwrap_or(priority);
    for (key, p) in [
        ("ack_priority", Some(ack_priority)),
        ("cnp_priority", q.cnp_priority),
    ] {
        if let Some(p) = p
            && p > 7
        {
            return Err(err(key, format!("found {p}, allowed 0..=7")));
        }
    }
    let dscp = q.dscp.unwrap_or(crate::config::qos::ROCE_DSCP);
    if dscp > 63 {
        return Err(err("dscp", format!("found {dscp}, allowed 0..=63")));
    }
    Ok(QpSpec {
        rc,
        cc,
        ack_priority,
        udp_dport: q.udp_dport.unwrap_or(crate::config::transport::ROCE_UDP_PORT),
        window,
        dscp,
    })
}

/// Why a QP's `dctcp` table was refused ([`dctcp_params`]).
#[derive(Debug)]
enum DctcpKeyError {
    /// `preset` is not text.
    PresetNotText(toml::Value),
    /// `preset` names no DCTCP preset.
    Preset(String),
    /// `mtu` given: batches are counted in the transport's MTU.
    Mtu,
    /// A key's value does not convert.
    Key(EngineKeyError),
    /// The preset with the keys laid over it does not read back.
    Overlay(EngineKeyError),
    /// A parameter out of range for a sender's line rate.
    Invalid {
        /// The engine's reason.
        source: lossless_proto::dcqcn::ParamError,
        /// The sender's line rate.
        line: Rate,
    },
}

impl std::fmt::Display for DctcpKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DctcpKeyError::PresetNotText(v) => {
                write!(f, "key `preset`: found {v}, allowed \"hpcc-ns3\" or \"rfc8257\"")
            }
            DctcpKeyError::Preset(name) => write!(
                f,
                "preset: found {name:?}, allowed \"hpcc-ns3\" or \"rfc8257\" (DCTCP)"
            ),
            DctcpKeyError::Mtu => f.write_str(
                "key `mtu`: not a DCTCP key here: batches are counted in the transport's `rocev2.mtu`",
            ),
            DctcpKeyError::Key(e) => write!(f, "{e}"),
            DctcpKeyError::Overlay(e) => write!(f, "{e} (keys: preset, g, rate_ai, min_rate)"),
            DctcpKeyError::Invalid { source, line } => write!(f, "{source} (sender's line rate {line})"),
        }
    }
}

impl std::error::Error for DctcpKeyError {}

/// The DCTCP parameters of the QP keys `q`: the table's `preset` (else the QP's `preset`,
/// else "hpcc-ns3") with the table's other keys laid over it; batches are counted in the
/// transport's `mtu`. Checked against every sender line rate of `lines`.
fn dctcp_params(
    q: &RawQp,
    preset: Option<&str>,
    mtu: u32,
    lines: &[Rate],
) -> Result<DctcpParams, DctcpKeyError> {
    let mut t = q.dctcp.clone().unwrap_or_default();
    let name = match t.remove("preset") {
        Some(toml::Value::String(s)) => s,
        Some(v) => return Err(DctcpKeyError::PresetNotText(v)),
        None => preset.unwrap_or("hpcc-ns3").to_string(),
    };
    let base = DctcpParams::preset(&name).ok_or(DctcpKeyError::Preset(name))?;
    if t.contains_key("mtu") {
        return Err(DctcpKeyError::Mtu);
    }
    let over = t
        .iter()
        .map(|(k, v)| to_json(k, v).map(|j| (k.clone(), j)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(DctcpKeyError::Key)?;
    let p: DctcpParams =
        overlay(&DctcpParams { mtu, ..base }, over.into_iter()).map_err(DctcpKeyError::Overlay)?;
    for &line in lines {
        p.validate(line)
            .map_err(|source| DctcpKeyError::Invalid { source, line })?;
    }
    Ok(p)
}

/// Why a QP's `hpcc` table was refused ([`hpcc_params`]).
#[derive(Debug)]
enum HpccKeyError {
    /// `preset` is not text.
    PresetNotText(toml::Value),
    /// `preset` names no HPCC preset.
    Preset(String),
    /// `base_rtt` or `bdp` missing or of the wrong kind.
    Required(&'static str, String),
    /// A key's value does not convert.
    Key(EngineKeyError),
    /// The preset with the keys laid over it does not read back.
    Overlay(EngineKeyError),
    /// A parameter out of range for a sender's line rate.
    Invalid {
        /// The engine's reason.
        source: lossless_proto::dcqcn::ParamError,
        /// The sender's line rate.
        line: Rate,
    },
}

impl std::fmt::Display for HpccKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HpccKeyError::PresetNotText(v) => write!(
                f,
                "key `preset`: found {v}, allowed \"hpcc-ns3\", \"paper\" or \"eta99\""
            ),
            HpccKeyError::Preset(name) => write!(
                f,
                "preset: found {name:?}, allowed \"hpcc-ns3\", \"paper\" or \"eta99\" (HPCC)"
            ),
            HpccKeyError::Required(key, found) => write!(
                f,
                "key `{key}`: found {found}, allowed {}",
                if *key == "base_rtt" {
                    "a duration above 0 (T, the base RTT the utilisation is averaged over, e.g. \"4160ns\")"
                } else {
                    "bytes above 0 (W₀, the window at line rate, e.g. 52000: the fork's maxBdp)"
                }
            ),
            HpccKeyError::Key(e) => write!(f, "{e}"),
            HpccKeyError::Overlay(e) => write!(
                f,
                "{e} (keys: preset, base_rtt, bdp, eta, rate_ai, min_rate, max_stage, fast_react, sample_feedback, int_multi)"
            ),
            HpccKeyError::Invalid { source, line } => write!(f, "{source} (sender's line rate {line})"),
        }
    }
}

impl std::error::Error for HpccKeyError {}

/// The HPCC parameters of the QP keys `q`, with T (ns) and W₀ (bytes): the table's `preset`
/// (else the QP's, else "hpcc-ns3") with its other keys laid over it; `base_rtt` and `bdp`
/// are required. Checked against every sender line rate of `lines`.
fn hpcc_params(
    q: &RawQp,
    preset: Option<&str>,
    lines: &[Rate],
) -> Result<(HpccParams, u64, u64), HpccKeyError> {
    let mut t = q.hpcc.clone().unwrap_or_default();
    let name = match t.remove("preset") {
        Some(toml::Value::String(s)) => s,
        Some(v) => return Err(HpccKeyError::PresetNotText(v)),
        None => preset.unwrap_or("hpcc-ns3").to_string(),
    };
    let base = HpccParams::preset(&name).ok_or(HpccKeyError::Preset(name))?;
    let rtt = match t.remove("base_rtt") {
        Some(toml::Value::String(d)) => match parse_duration(&d) {
            Ok(d) if d.as_ns() > 0 => d.as_ns() as u64,
            _ => return Err(HpccKeyError::Required("base_rtt", format!("{d:?}"))),
        },
        Some(v) => return Err(HpccKeyError::Required("base_rtt", v.to_string())),
        None => return Err(HpccKeyError::Required("base_rtt", "nothing".into())),
    };
    let bdp = match t.remove("bdp") {
        Some(toml::Value::Integer(b)) if b > 0 => b as u64,
        Some(v) => return Err(HpccKeyError::Required("bdp", v.to_string())),
        None => return Err(HpccKeyError::Required("bdp", "nothing".into())),
    };
    let over = t
        .iter()
        .map(|(k, v)| to_json(k, v).map(|j| (k.clone(), j)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(HpccKeyError::Key)?;
    let p: HpccParams = overlay(&base, over.into_iter()).map_err(HpccKeyError::Overlay)?;
    for &line in lines {
        p.validate(line)
            .map_err(|source| HpccKeyError::Invalid { source, line })?;
    }
    Ok((p, rtt, bdp))
}

/// The HPCC-PINT parameters of the QP keys `q`, with T (ns) and W₀ (bytes): the table's
/// `preset` (else the QP's, else "hpcc-ns3") with its other keys laid over it; `base_rtt` and
/// `bdp` are required, as for HPCC. Checked against every sender line rate of `lines`.
fn pint_params(q: &RawQp, preset: Option<&str>, lines: &[Rate]) -> Result<(PintParams, u64, u64), String> {
    const KEYS: &str = "preset, base_rtt, bdp, eta, rate_ai, min_rate, max_stage, log_base, prob";
    let mut t = q.hpcc_pint.clone().unwrap_or_default();
    let name = match t.remove("preset") {
        Some(toml::Value::String(s)) => s,
        Some(v) => return Err(format!("key `preset`: found {v}, allowed \"hpcc-ns3\"")),
        None => preset.unwrap_or("hpcc-ns3").to_string(),
    };
    let base = PintParams::preset(&name)
        .ok_or_else(|| format!("preset: found {name:?}, allowed \"hpcc-ns3\" (HPCC-PINT)"))?;
    let required = |key: &str, found: String| {
        format!(
            "key `{key}`: found {found}, required: {} (the switches' T: the largest base RTT; the window at line rate: the largest BDP)",
            if key == "base_rtt" {
                "a duration above 0 such as \"12480ns\""
            } else {
                "a number of bytes above 0"
            }
        )
    };
    let rtt = match t.remove("base_rtt") {
        Some(toml::Value::String(d)) => match parse_duration(&d) {
            Ok(d) if d.as_ns() > 0 && d.as_ns() <= i32::MAX as u128 => d.as_ns() as u64,
            _ => return Err(required("base_rtt", format!("{d:?}"))),
        },
        Some(v) => return Err(required("base_rtt", v.to_string())),
        None => return Err(required("base_rtt", "nothing".into())),
    };
    let bdp = match t.remove("bdp") {
        Some(toml::Value::Integer(b)) if b > 0 => b as u64,
        Some(v) => return Err(required("bdp", v.to_string())),
        None => return Err(required("bdp", "nothing".into())),
    };
    let over = t
        .iter()
        .map(|(k, v)| to_json(k, v).map(|j| (k.clone(), j)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let p: PintParams = overlay(&base, over.into_iter()).map_err(|e| format!("{e} (keys: {KEYS})"))?;
    for &line in lines {
        p.validate(line)
            .map_err(|e| format!("{e} (sender's line rate {line})"))?;
    }
    Ok((p, rtt, bdp))
}

/// The TIMELY parameters of the QP keys `q`: the table's `preset` (else the QP's, else
/// "hpcc-ns3") with its other keys laid over it, checked against every sender line rate of
/// `lines`; the error says why, with the keys allowed.
fn timely_params(q: &RawQp, preset: Option<&str>, lines: &[Rate]) -> Result<TimelyParams, String> {
    const KEYS: &str = "preset, alpha, beta, t_low_ns, t_high_ns, min_rtt_ns, rate_ai, rate_hai, min_rate";
    let mut t = q.timely.clone().unwrap_or_default();
    let name = match t.remove("preset") {
        Some(toml::Value::String(s)) => s,
        Some(v) => {
            return Err(format!(
                "key `preset`: found {v}, allowed \"hpcc-ns3\" or \"paper\""
            ));
        }
        None => preset.unwrap_or("hpcc-ns3").to_string(),
    };
    let base = TimelyParams::preset(&name)
        .ok_or_else(|| format!("preset: found {name:?}, allowed \"hpcc-ns3\" or \"paper\" (TIMELY)"))?;
    let over = t
        .iter()
        .map(|(k, v)| to_json(k, v).map(|j| (k.clone(), j)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let p: TimelyParams = overlay(&base, over.into_iter()).map_err(|e| format!("{e} (keys: {KEYS})"))?;
    for &line in lines {
        p.validate(line)
            .map_err(|e| format!("{e} (sender's line rate {line})"))?;
    }
    Ok(p)
}

/// The `ecn` table of a switch (or the top-level `[ecn]`).
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEcn {
    pub(super) kmin_bytes: Option<u64>,
    pub(super) kmax_bytes: Option<u64>,
    pub(super) pmax: Option<f64>,
    pub(super) point: Option<String>,
    pub(super) priorities: Option<Vec<u8>>,
    pub(super) by_rate: Option<Vec<RawEcnRate>>,
    /// "hpcc-ns3": Kmin 100 KB, Kmax 400 KB per 25 Gb/s of the port, Pmax 0.2, at dequeue.
    pub(super) preset: Option<String>,
}

/// One rate-specific entry of an `ecn` table.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEcnRate {
    pub(super) rate: String,
    pub(super) kmin_bytes: u64,
    pub(super) kmax_bytes: u64,
    pub(super) pmax: f64,
}

/// A priority above 7 in an ECN or QCN table's `priorities` ([`priorities_mask`]).
#[derive(Debug)]
struct PriorityError(u8);

impl std::fmt::Display for PriorityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "priorities: found {}, allowed 0..=7", self.0)
    }
}

impl std::error::Error for PriorityError {}

fn priorities_mask(v: &Option<Vec<u8>>, default: u8) -> Result<u8, PriorityError> {
    match v {
        None => Ok(default),
        Some(v) => v.iter().try_fold(0u8, |m, &q| {
            if q > 7 {
                Err(PriorityError(q))
            } else {
                Ok(m | 1 << q)
            }
        }),
    }
}

impl RawEcn {
    fn over(&self, base: &RawEcn) -> RawEcn {
        RawEcn {
            kmin_bytes: self.kmin_bytes.or(base.kmin_bytes),
            kmax_bytes: self.kmax_bytes.or(base.kmax_bytes),
            pmax: self.pmax.or(base.pmax),
            point: self.point.clone().or_else(|| base.point.clone()),
            priorities: self.priorities.clone().or_else(|| base.priorities.clone()),
            by_rate: self.by_rate.clone().or_else(|| base.by_rate.clone()),
            preset: self.preset.clone().or_else(|| base.preset.clone()),
        }
    }
}

/// Resolves a switch's `ecn` (`own`: `true`/`false`/a table) over the default `[ecn]`.
pub(super) fn ecn_spec(
    ctx: &Ctx<'_>,
    own: Option<&toml::Value>,
    default: Option<&RawEcn>,
    line_no: usize,
) -> Result<Option<EcnSpec>, ScenarioError> {
    let err = |m: String| err_at(ctx, line_no, "ecn", m);
    let raw = match own {
        Some(toml::Value::Boolean(false)) => return Ok(None),
        Some(toml::Value::Boolean(true)) | None => match default {
            Some(d) => d.clone(),
            None if own.is_some() => return Err(err("true needs a top-level [ecn] table".into())),
            None => return Ok(None),
        },
        Some(v @ toml::Value::Table(_)) => {
            let t = RawEcn::deserialize(v.clone()).map_err(|e| err(e.message().trim().to_string()))?;
            match default {
                Some(d) => t.over(d),
                None => t,
            }
        }
        Some(v) => return Err(err(format!("found {v}, allowed a table, true or false"))),
    };
    let point = match raw.point.as_deref() {
        None | Some("dequeue") => MarkPoint::Dequeue,
        Some("enqueue") => MarkPoint::Enqueue,
        Some(o) => {
            return Err(err(format!(
                "point: found {o:?}, allowed \"dequeue\" or \"enqueue\""
            )));
        }
    };
    let cfg = |kmin, kmax, pmax| -> Result<EcnConfig, ScenarioError> {
        let c = EcnConfig {
            kmin_bytes: kmin,
            kmax_bytes: kmax,
            pmax,
            point,
        };
        c.validate().map_err(|e| err(e.to_string()))?;
        Ok(c)
    };
    let hpcc = match raw.preset.as_deref() {
        None => false,
        Some("hpcc-ns3") => true,
        Some(o) => return Err(err(format!("preset: found {o:?}, allowed \"hpcc-ns3\""))),
    };
    let config = match (raw.kmin_bytes, raw.kmax_bytes) {
        (Some(a), Some(b)) => Some(cfg(a, b, raw.pmax.unwrap_or(1.0))?),
        (None, None) => None,
        _ => return Err(err("kmin_bytes and kmax_bytes go together".into())),
    };
    let mut by_rate = Vec::new();
    for e in raw.by_rate.iter().flatten() {
        let r: Rate = e
            .rate
            .parse()
            .map_err(|x: lossless_proto::units::ParseRateError| err(x.to_string()))?;
        if by_rate.iter().any(|(x, _)| *x == r) {
            return Err(err(format!(
                "by_rate: found the rate {} a second time, allowed one entry per rate",
                e.rate
            )));
        }
        by_rate.push((r, cfg(e.kmin_bytes, e.kmax_bytes, e.pmax)?));
    }
    if config.is_none() && by_rate.is_empty() && !hpcc {
        return Err(err(
            "no thresholds: give kmin_bytes and kmax_bytes (and pmax), by_rate entries, or preset = \"hpcc-ns3\"".into(),
        ));
    }
    Ok(Some(EcnSpec {
        config,
        by_rate,
        hpcc_ns3_by_rate: hpcc,
        priorities: priorities_mask(&raw.priorities, 0xFF).map_err(|e| err(e.to_string()))?,
    }))
}

/// The `qcn` table of a switch (or the top-level `[qcn]`).
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQcn {
    pub(super) qeq_bytes: Option<u64>,
    pub(super) w_log2: Option<i8>,
    pub(super) min_sample_base: Option<u64>,
    pub(super) min_header_octets: Option<u8>,
    pub(super) priorities: Option<Vec<u8>>,
    pub(super) cnm_priority: Option<u8>,
    pub(super) jitter: Option<bool>,
}

impl RawQcn {
    fn over(&self, base: &RawQcn) -> RawQcn {
        RawQcn {
            qeq_bytes: self.qeq_bytes.or(base.qeq_bytes),
            w_log2: self.w_log2.or(base.w_log2),
            min_sample_base: self.min_sample_base.or(base.min_sample_base),
            min_header_octets: self.min_header_octets.or(base.min_header_octets),
            priorities: self.priorities.clone().or_else(|| base.priorities.clone()),
            cnm_priority: self.cnm_priority.or(base.cnm_priority),
            jitter: self.jitter.or(base.jitter),
        }
    }
}

/// Resolves a switch's `qcn` over the default `[qcn]`.
pub(super) fn qcn_spec(
    ctx: &Ctx<'_>,
    own: Option<&toml::Value>,
    default: Option<&RawQcn>,
    line_no: usize,
) -> Result<Option<QcnSpec>, ScenarioError> {
    let err = |m: String| err_at(ctx, line_no, "qcn", m);
    let raw = match own {
        Some(toml::Value::Boolean(false)) => return Ok(None),
        Some(toml::Value::Boolean(true)) | None => match default {
            Some(d) => d.clone(),
            None if own.is_some() => return Err(err("true needs a top-level [qcn] table".into())),
            None => return Ok(None),
        },
        Some(v @ toml::Value::Table(_)) => {
            let t = RawQcn::deserialize(v.clone()).map_err(|e| err(e.message().trim().to_string()))?;
            match default {
                Some(d) => t.over(d),
                None => t,
            }
        }
        Some(v) => return Err(err(format!("found {v}, allowed a table, true or false"))),
    };
    let d = CpParams::default();
    let cp = CpParams {
        qeq_bytes: raw.qeq_bytes.unwrap_or(d.qeq_bytes),
        w_log2: raw.w_log2.unwrap_or(d.w_log2),
        min_sample_base: raw.min_sample_base.unwrap_or(d.min_sample_base),
        min_header_octets: raw.min_header_octets.unwrap_or(d.min_header_octets),
        cpid: d.cpid,
    };
    cp.validate().map_err(|e| err(e.to_string()))?;
    let Some(prios) = &raw.priorities else {
        return Err(err(
            "priorities missing: the CN priorities (CNPVs) whose queues are congestion points, e.g. priorities = [3]".into(),
        ));
    };
    let cnm_priority = raw.cnm_priority.unwrap_or(6);
    if cnm_priority > 7 {
        return Err(err(format!("cnm_priority: found {cnm_priority}, allowed 0..=7")));
    }
    Ok(Some(QcnSpec {
        cp,
        priorities: priorities_mask(&Some(prios.clone()), 0).map_err(|e| err(e.to_string()))?,
        cnm_priority,
        jitter: raw.jitter.unwrap_or(true),
    }))
}
