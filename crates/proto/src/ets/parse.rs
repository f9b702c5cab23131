//! ETS settings in the words users type: lldptool's `tsa`, `up2tc`, `tcbw` (`lldptool -T -V
//! ETS-CFG`) and iproute2's `dcb ets` `tc-tsa`, `tc-bw`, `prio-tc`.
//!
//! lldptool: `tsa=0:ets,1:ets,2:strict` (TSA names `strict`, `cb_shaper`, `ets`, `vendor`;
//! `none` = all strict; unlisted TCs strict), `up2tc=0:0,1:1,...` (priority:tc; `none` = all
//! priorities to TC 0), `tcbw=12,13,75` (up to eight percentages for TCs 0.., the rest 0).
//! dcb: `tc-tsa 0:ets 1:strict` (names `strict`, `cbs`, `ets`, `vendor`), `tc-bw 0:10 1:90`,
//! `prio-tc 0:0 1:1`; a key may be `all`, and an explicit key after `all` overrides it.
//! Naming the same key twice is an error, as is a priority left unmapped.

use core::str::FromStr;

use lossless_wire::lldp::Tsa;

use super::config::{EtsConfig, EtsConfigError};

/// Why a setting string did not parse; names the field, the offending item and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// An item is not of the form the field takes.
    #[error("{field}: item {item:?} is not valid; expected {expected}")]
    Syntax {
        /// The field (`tsa`, `up2tc`, `tcbw`, `tc-tsa`, `tc-bw`, `prio-tc`).
        field: &'static str,
        /// The item as written.
        item: String,
        /// What the field takes.
        expected: &'static str,
    },
    /// A TC or priority number above 7.
    #[error("{field}: {what} {found} in {item:?} is out of range, allowed 0..=7")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// `tc` or `priority`.
        what: &'static str,
        /// The number found.
        found: u32,
        /// The item as written.
        item: String,
    },
    /// The same TC or priority given twice.
    #[error("{field}: {what} {index} is given twice")]
    Duplicate {
        /// The field.
        field: &'static str,
        /// `tc` or `priority`.
        what: &'static str,
        /// The repeated index.
        index: u8,
    },
    /// More than eight bandwidth values.
    #[error("{field}: {found} values given, at most 8 (one per TC)")]
    TooMany {
        /// The field.
        field: &'static str,
        /// How many were given.
        found: usize,
    },
    /// A keyword that is not an ETS setting.
    #[error("unknown setting {found:?}; allowed: {allowed}")]
    UnknownKey {
        /// The keyword found.
        found: String,
        /// The settings accepted.
        allowed: &'static str,
    },
    /// The settings parsed but do not form a valid configuration.
    #[error(transparent)]
    Invalid(#[from] EtsConfigError),
}

/// Transmission selection algorithm of each TC, as a setting string gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TsaMap(pub [Tsa; 8]);

/// Traffic class of each priority (`None`: not given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioTcMap(pub [Option<u8>; 8]);

/// Bandwidth percentage of each TC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandwidthMap(pub [u8; 8]);

/// Which tool's spelling a string uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    Lldptool,
    Dcb,
}

fn syntax(field: &'static str, item: &str, expected: &'static str) -> ParseError {
    ParseError::Syntax {
        field,
        item: item.to_string(),
        expected,
    }
}

/// Parses a decimal number without sign (at most 3 digits, enough for all fields).
fn number(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses an index 0..=7.
fn index(
    field: &'static str,
    what: &'static str,
    s: &str,
    item: &str,
    expected: &'static str,
) -> Result<u8, ParseError> {
    let n = number(s).ok_or_else(|| syntax(field, item, expected))?;
    if n > 7 {
        return Err(ParseError::OutOfRange {
            field,
            what,
            found: n,
            item: item.to_string(),
        });
    }
    Ok(n as u8)
}

/// Splits `key:value` items, separated by commas (lldptool) or whitespace (dcb), and calls
/// `set` for each key (8 times for `all`), refusing a key given twice.
fn items(
    field: &'static str,
    what: &'static str,
    dialect: Dialect,
    s: &str,
    expected: &'static str,
    mut set: impl FnMut(u8, &str, &str) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let mut seen = 0u8;
    let parts: Box<dyn Iterator<Item = &str>> = match dialect {
        Dialect::Lldptool => Box::new(s.trim().split(',')),
        Dialect::Dcb => Box::new(s.split_whitespace()),
    };
    for item in parts {
        let item = item.trim();
        let (k, v) = item
            .split_once(':')
            .ok_or_else(|| syntax(field, item, expected))?;
        if dialect == Dialect::Dcb && k == "all" {
            for i in 0..8 {
                set(i, v, item)?;
            }
            continue;
        }
        let i = index(field, what, k, item, expected)?;
        if seen & (1 << i) != 0 {
            return Err(ParseError::Duplicate {
                field,
                what,
                index: i,
            });
        }
        seen |= 1 << i;
        set(i, v, item)?;
    }
    Ok(())
}

fn tsa_map(field: &'static str, dialect: Dialect, s: &str) -> Result<TsaMap, ParseError> {
    let mut t = [Tsa::STRICT; 8];
    if dialect == Dialect::Lldptool && s.trim() == "none" {
        return Ok(TsaMap(t));
    }
    let expected = match dialect {
        Dialect::Lldptool => "tc:{strict|cb_shaper|ets|vendor}, comma-separated",
        Dialect::Dcb => "{tc|all}:{strict|cbs|ets|vendor}, space-separated",
    };
    items(field, "tc", dialect, s, expected, |i, v, item| {
        t[usize::from(i)] = match (dialect, v) {
            (_, "strict") => Tsa::STRICT,
            (Dialect::Lldptool, "cb_shaper") | (Dialect::Dcb, "cbs") => Tsa::CREDIT_BASED_SHAPER,
            (_, "ets") => Tsa::ETS,
            (_, "vendor") => Tsa::VENDOR,
            _ => return Err(syntax(field, item, expected)),
        };
        Ok(())
    })?;
    Ok(TsaMap(t))
}

fn prio_map(field: &'static str, dialect: Dialect, s: &str) -> Result<PrioTcMap, ParseError> {
    let mut m = [None; 8];
    if dialect == Dialect::Lldptool && s.trim() == "none" {
        return Ok(PrioTcMap([Some(0); 8]));
    }
    let expected = match dialect {
        Dialect::Lldptool => "priority:tc, comma-separated",
        Dialect::Dcb => "{priority|all}:tc, space-separated",
    };
    items(field, "priority", dialect, s, expected, |p, v, item| {
        m[usize::from(p)] = Some(index(field, "tc", v, item, expected)?);
        Ok(())
    })?;
    Ok(PrioTcMap(m))
}

fn percent(field: &'static str, v: &str, item: &str, expected: &'static str) -> Result<u8, ParseError> {
    match number(v) {
        Some(n) if n <= 255 => Ok(n as u8),
        _ => Err(syntax(field, item, expected)),
    }
}

impl TsaMap {
    /// Parses lldptool's `tsa` value, e.g. `0:ets,1:ets,2:strict`.
    pub fn from_lldptool(s: &str) -> Result<Self, ParseError> {
        tsa_map("tsa", Dialect::Lldptool, s)
    }
    /// Parses `dcb ets`'s `tc-tsa` value, e.g. `0:ets 1:strict` or `all:ets 7:strict`.
    pub fn from_dcb(s: &str) -> Result<Self, ParseError> {
        tsa_map("tc-tsa", Dialect::Dcb, s)
    }
}

impl PrioTcMap {
    /// Parses lldptool's `up2tc` value, e.g. `0:0,1:1,2:2`.
    pub fn from_lldptool(s: &str) -> Result<Self, ParseError> {
        prio_map("up2tc", Dialect::Lldptool, s)
    }
    /// Parses `dcb ets`'s `prio-tc` value, e.g. `0:0 1:1` or `all:0 7:1`.
    pub fn from_dcb(s: &str) -> Result<Self, ParseError> {
        prio_map("prio-tc", Dialect::Dcb, s)
    }
}

impl BandwidthMap {
    /// Parses lldptool's `tcbw` value: up to eight comma-separated percentages for TC 0, 1, ...
    pub fn from_lldptool(s: &str) -> Result<Self, ParseError> {
        const EXPECTED: &str = "up to 8 comma-separated percentages 0..=100";
        let mut b = [0u8; 8];
        let vals: Vec<&str> = s.trim().split(',').collect();
        if vals.len() > 8 {
            return Err(ParseError::TooMany {
                field: "tcbw",
                found: vals.len(),
            });
        }
        for (i, v) in vals.iter().enumerate() {
            b[i] = percent("tcbw", v.trim(), v, EXPECTED)?;
        }
        Ok(BandwidthMap(b))
    }
    /// Parses `dcb ets`'s `tc-bw` value, e.g. `0:10 1:90` or `all:0 3:100`.
    pub fn from_dcb(s: &str) -> Result<Self, ParseError> {
        const EXPECTED: &str = "{tc|all}:percent, space-separated";
        let mut b = [0u8; 8];
        items("tc-bw", "tc", Dialect::Dcb, s, EXPECTED, |i, v, item| {
            b[usize::from(i)] = percent("tc-bw", v, item, EXPECTED)?;
            Ok(())
        })?;
        Ok(BandwidthMap(b))
    }
}

impl FromStr for TsaMap {
    type Err = ParseError;
    /// Accepts either spelling: commas mean lldptool's, spaces `dcb`'s.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if s.contains(',') || s.trim() == "none" {
            TsaMap::from_lldptool(s)
        } else {
            TsaMap::from_dcb(s).or_else(|e| TsaMap::from_lldptool(s).map_err(|_| e))
        }
    }
}

impl FromStr for PrioTcMap {
    type Err = ParseError;
    /// Accepts either spelling: commas mean lldptool's, spaces `dcb`'s.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if s.contains(',') || s.trim() == "none" {
            PrioTcMap::from_lldptool(s)
        } else {
            PrioTcMap::from_dcb(s)
        }
    }
}

impl FromStr for BandwidthMap {
    type Err = ParseError;
    /// Accepts either spelling: `tc:percent` items mean `dcb`'s, plain numbers lldptool's.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if s.contains(':') {
            BandwidthMap::from_dcb(s)
        } else {
            BandwidthMap::from_lldptool(s)
        }
    }
}

impl EtsConfig {
    /// Builds a configuration from lldptool settings, e.g.
    /// `tsa=0:ets,1:ets,2:strict up2tc=0:0,1:1,2:2,3:2,4:2,5:2,6:2,7:2 tcbw=20,80`
    /// (settings separated by whitespace; a missing `tsa` means all strict, a missing `tcbw`
    /// all 0; `numtcs=N` sets MaxTCs, default 8).
    pub fn from_lldptool_args(s: &str) -> Result<Self, ParseError> {
        let mut tsa = TsaMap([Tsa::STRICT; 8]);
        let mut up = PrioTcMap([None; 8]);
        let mut bw = BandwidthMap([0; 8]);
        let mut max_tcs = 8u8;
        for arg in s.split_whitespace() {
            let (k, v) = arg.split_once('=').ok_or_else(|| ParseError::UnknownKey {
                found: arg.to_string(),
                allowed: "tsa=, up2tc=, tcbw=, numtcs=",
            })?;
            match k {
                "tsa" => tsa = TsaMap::from_lldptool(v)?,
                "up2tc" => up = PrioTcMap::from_lldptool(v)?,
                "tcbw" => bw = BandwidthMap::from_lldptool(v)?,
                "numtcs" => {
                    max_tcs = number(v)
                        .and_then(|n| u8::try_from(n).ok())
                        .ok_or_else(|| syntax("numtcs", v, "a number 1..=8"))?
                }
                _ => {
                    return Err(ParseError::UnknownKey {
                        found: k.to_string(),
                        allowed: "tsa, up2tc, tcbw, numtcs",
                    });
                }
            }
        }
        Ok(EtsConfig::new(max_tcs, up.0, tsa.0, bw.0)?)
    }

    /// Builds a configuration from `dcb ets set` arguments, e.g.
    /// `tc-tsa 0:ets 1:ets 2:strict tc-bw 0:20 1:80 prio-tc all:0 1:1 7:2` (unlisted TSAs are
    /// strict and unlisted bandwidths 0, as in a zeroed `struct ieee_ets`; MaxTCs 8).
    pub fn from_dcb_args(s: &str) -> Result<Self, ParseError> {
        const KEYS: &str = "tc-tsa, tc-bw, prio-tc";
        let mut tsa = TsaMap([Tsa::STRICT; 8]);
        let mut up = PrioTcMap([None; 8]);
        let mut bw = BandwidthMap([0; 8]);
        let mut rest = s.trim();
        while !rest.is_empty() {
            let (key, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            // the value runs up to the next keyword (the next word without ':')
            let after = after.trim_start();
            let mut end = 0;
            let mut pos = 0;
            for w in after.split_whitespace() {
                let at = pos + after[pos..].find(w).unwrap_or(0);
                if !w.contains(':') {
                    break;
                }
                pos = at + w.len();
                end = pos;
            }
            let (value, next) = after.split_at(end);
            match key {
                "tc-tsa" => tsa = TsaMap::from_dcb(value)?,
                "tc-bw" => bw = BandwidthMap::from_dcb(value)?,
                "prio-tc" => up = PrioTcMap::from_dcb(value)?,
                _ => {
                    return Err(ParseError::UnknownKey {
                        found: key.to_string(),
                        allowed: KEYS,
                    });
                }
            }
            rest = next.trim_start();
        }
        Ok(EtsConfig::new(8, up.0, tsa.0, bw.0)?)
    }
}
