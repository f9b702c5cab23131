//! A link's parameters: rate, flow control and ETS, merged from `[defaults]`, the link and its
//! ends; every error points at the key's own line (in `[defaults]` or in the `[[link]]`).

use std::ops::Range;

use lossless_proto::dcbx::DcbxConfig;
use lossless_proto::ets::EtsConfig;
use lossless_proto::flow_control::{FlowControlConfig, Mode};
use lossless_proto::units::{Duration, Rate};
use lossless_wire::lldp::Tsa;
use serde::Deserialize as _;
use toml::Spanned;

use super::ScenarioError;
use super::build::Ctx;
use super::raw::RawLinkParams;
use crate::config::qos::{DEFAULT_DSCP_MAP, Trust};

/// Slowest link (and receiver) rate a scenario may use: 10 Mb/s Ethernet.
pub const MIN_LINK_RATE: Rate = Rate::from_mbps(10);

/// Fastest link (and receiver) rate a scenario may use: 1.6 Tb/s Ethernet.
pub const MAX_LINK_RATE: Rate = Rate::from_gbps(1600);

/// Longest one-way delay of a link (`delay`, `length_m` at 5 ns/m, `interface_delay`, and an
/// HPCC ns-3 topology's link delay): 1 s, 200,000 km of cable. A port's headroom grows with
/// its link's delay; beyond this, the headroom of a switch's ports would no longer fit in 64
/// bits.
pub const MAX_LINK_DELAY: Duration = Duration::from_ms(1000);

/// Most metres of cable a link may have: [`MAX_LINK_DELAY`] at 5 ns/m.
pub const MAX_LENGTH_M: u64 = 200_000_000;

/// `v`'s span, or none (line 0) for an absent key.
fn span_of<T>(v: &Option<Spanned<T>>) -> Range<usize> {
    v.as_ref().map_or(0..0, Spanned::span)
}

/// A rate a byte of which lasts whole picoseconds (the simulator's clock), without range.
pub(super) fn exact_rate(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<Rate, ScenarioError> {
    let r: Rate = match v.get_ref().parse() {
        Ok(r) => r,
        Err(e) => return ctx.err(v.span(), key, e.to_string()),
    };
    if !r.is_byte_exact() {
        return ctx.err(
            v.span(),
            key,
            format!(
                "found {}: a byte must last whole picoseconds (8e12 / rate a whole number, as \
                 at every IEEE rate: 10M, 100M, 1G, 2.5G, 5G, 10G, 25G, 40G, 50G, 100G, 200G, \
                 400G, 800G, 1.6T)",
                v.get_ref()
            ),
        );
    }
    Ok(r)
}

/// A link or receiver rate: [`MIN_LINK_RATE`] ..= [`MAX_LINK_RATE`], byte-exact.
pub(super) fn link_rate(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<Rate, ScenarioError> {
    let r = exact_rate(ctx, v, key)?;
    if !(MIN_LINK_RATE..=MAX_LINK_RATE).contains(&r) {
        return ctx.err(
            v.span(),
            key,
            format!(
                "found {} ({} b/s), allowed 10M … 1.6T (Ethernet's rates)",
                v.get_ref(),
                r.bps()
            ),
        );
    }
    Ok(r)
}

/// The flow-control configuration of one port of a link.
pub(super) fn link_fc(
    ctx: &Ctx<'_>,
    p: &RawLinkParams,
    rate: Rate,
) -> Result<FlowControlConfig, ScenarioError> {
    let mode = match &p.flow_control {
        None => Mode::Off,
        Some(s) => match s.get_ref().as_str() {
            "off" => Mode::Off,
            "pause" => Mode::Pause,
            "pfc" => Mode::Pfc,
            other => {
                return ctx.err(
                    s.span(),
                    "flow_control",
                    format!("found {other:?}, allowed \"off\", \"pause\" or \"pfc\""),
                );
            }
        },
    };
    let mut enabled = 0u8;
    if let Some(v) = &p.pfc_priorities {
        for &q in v.get_ref() {
            if q > 7 {
                return ctx.err(
                    v.span(),
                    "pfc_priorities",
                    format!("found priority {q}, allowed 0..=7"),
                );
            }
            if enabled & (1 << q) != 0 {
                return ctx.err(
                    v.span(),
                    "pfc_priorities",
                    format!(
                        "found priority {q} twice in {:?}, allowed each priority once",
                        v.get_ref()
                    ),
                );
            }
            enabled |= 1 << q;
        }
    }
    let mut fc = match mode {
        Mode::Off => FlowControlConfig::off(rate, [0; 6]),
        Mode::Pause => FlowControlConfig::pause(rate, [0; 6]),
        Mode::Pfc => FlowControlConfig::pfc(rate, [0; 6], enabled),
    };
    for pc in fc.priorities.iter_mut() {
        if let Some(v) = &p.pause_quanta {
            pc.pause_quanta = *v.get_ref();
        }
        if let Some(v) = &p.refresh_quanta {
            pc.refresh_quanta = *v.get_ref();
        }
        if let Some(v) = &p.xon_on_release {
            pc.xon_on_release = *v.get_ref();
        }
        if let Some(v) = &p.hold_own_data {
            pc.hold_own_data = *v.get_ref();
        }
    }
    if let Some(q) = &p.reaction_delay_quanta {
        fc.reaction_delay = rate.quanta_time(*q.get_ref());
    }
    if let Err(e) = fc.validate() {
        // the engine's own check: blame the key whose value it refused
        use lossless_proto::flow_control::ConfigError as E;
        let (span, key) = match e {
            E::ZeroPauseQuanta { .. } => (span_of(&p.pause_quanta), "pause_quanta"),
            E::ZeroRefresh { .. } => (span_of(&p.refresh_quanta), "refresh_quanta"),
            E::InexactRate { .. } => (span_of(&p.rate), "rate"),
        };
        return ctx.err(span, key, format!("flow control: {e}"));
    }
    Ok(fc)
}

/// `over`'s keys put over `base`'s (a link's over `[defaults]`).
pub(super) fn merge(base: &RawLinkParams, over: &RawLinkParams) -> RawLinkParams {
    fn pick<T: Clone>(over: &Option<T>, base: &Option<T>) -> Option<T> {
        over.clone().or_else(|| base.clone())
    }
    RawLinkParams {
        rate: pick(&over.rate, &base.rate),
        length_m: pick(&over.length_m, &base.length_m),
        delay: pick(&over.delay, &base.delay),
        interface_delay: pick(&over.interface_delay, &base.interface_delay),
        ber: pick(&over.ber, &base.ber),
        mtu: pick(&over.mtu, &base.mtu),
        flow_control: pick(&over.flow_control, &base.flow_control),
        pfc_priorities: pick(&over.pfc_priorities, &base.pfc_priorities),
        pause_quanta: pick(&over.pause_quanta, &base.pause_quanta),
        refresh_quanta: pick(&over.refresh_quanta, &base.refresh_quanta),
        xon_on_release: pick(&over.xon_on_release, &base.xon_on_release),
        hold_own_data: pick(&over.hold_own_data, &base.hold_own_data),
        reaction_delay_quanta: pick(&over.reaction_delay_quanta, &base.reaction_delay_quanta),
        ets_tc_bandwidth: pick(&over.ets_tc_bandwidth, &base.ets_tc_bandwidth),
        ets_prio_tc: pick(&over.ets_prio_tc, &base.ets_prio_tc),
        ets_tsa: pick(&over.ets_tsa, &base.ets_tsa),
        ets_idle_slope: pick(&over.ets_idle_slope, &base.ets_idle_slope),
        dcbx: over.dcbx.or(base.dcbx),
        trust: pick(&over.trust, &base.trust),
        dscp2prio: pick(&over.dscp2prio, &base.dscp2prio),
    }
}

/// What a port classifies received frames by (`trust`, `dscp2prio` over the defaults): a
/// `dscp2prio` without `trust = "dscp"` is refused (it would change nothing).
pub(super) fn link_trust(ctx: &Ctx<'_>, p: &RawLinkParams) -> Result<Trust, ScenarioError> {
    let dscp = match &p.trust {
        None => false,
        Some(t) => match t.get_ref().as_str() {
            "pcp" => false,
            "dscp" => true,
            other => {
                return ctx.err(
                    t.span(),
                    "trust",
                    format!(
                        "found {other:?}, allowed \"pcp\" (the 802.1Q priority, the default) or \"dscp\""
                    ),
                );
            }
        },
    };
    let Some(entries) = &p.dscp2prio else {
        return Ok(if dscp {
            Trust::Dscp(Box::new(DEFAULT_DSCP_MAP))
        } else {
            Trust::Pcp
        });
    };
    if !dscp {
        return ctx.err(
            entries.span(),
            "dscp2prio",
            "given without `trust = \"dscp\"`; allowed only on a port that trusts DSCP (under PCP trust it maps nothing)".into(),
        );
    }
    let mut map = DEFAULT_DSCP_MAP;
    for (k, v) in entries.get_ref() {
        let d = match k.parse::<u8>() {
            Ok(d) if d <= 63 => d,
            _ => {
                return ctx.err(
                    entries.span(),
                    "dscp2prio",
                    format!("found DSCP {k:?}, allowed 0..=63"),
                );
            }
        };
        let prio = *v.get_ref();
        if !(0..=7).contains(&prio) {
            return ctx.err(
                v.span(),
                "dscp2prio",
                format!("found priority {prio} for DSCP {d}, allowed 0..=7"),
            );
        }
        map[usize::from(d)] = prio as u8;
    }
    Ok(Trust::Dscp(Box::new(map)))
}

/// A DCBX table (`lossless_proto::dcbx::DcbxConfig`'s TOML shape: `mode`, `pfc = { willing,
/// mbc, cap, enable }`, `ets = { willing, cbs, max_tcs, up2tc, tcbw, tsa, recommendation }`,
/// `app`); ETS tables an `ets` table leaves out take their defaults.
pub(super) fn dcbx_config(
    ctx: &Ctx<'_>,
    v: &toml::Value,
    span: Range<usize>,
) -> Result<DcbxConfig, ScenarioError> {
    let c = DcbxConfig::deserialize(v.clone())
        .or_else(|e| ctx.err(span.clone(), "dcbx", e.message().trim().to_string()))?;
    c.validate().or_else(|e| ctx.err(span, "dcbx", e.to_string()))?;
    Ok(c)
}

/// idleSlope per TC of a link's credit-based shapers (`ets_idle_slope = { TC = "RATE" }`),
/// each at most the link's rate.
pub(super) fn link_idle_slopes(
    ctx: &Ctx<'_>,
    p: &RawLinkParams,
    rate: Rate,
) -> Result<[Option<Rate>; 8], ScenarioError> {
    let mut out = [None; 8];
    for (k, v) in p.ets_idle_slope.iter().flatten() {
        let tc = match k.parse::<u8>() {
            Ok(tc) if tc < 8 => tc,
            _ => {
                return ctx.err(
                    v.span(),
                    "ets_idle_slope",
                    format!("found traffic class {k:?}, allowed 0..=7"),
                );
            }
        };
        if out[usize::from(tc)].is_some() {
            return ctx.err(
                v.span(),
                "ets_idle_slope",
                format!("found traffic class {tc} a second time (as {k:?}), allowed each TC once"),
            );
        }
        let slope = exact_rate(ctx, v, "ets_idle_slope")?;
        if slope > rate {
            return ctx.err(
                v.span(),
                "ets_idle_slope",
                format!(
                    "found {} for TC {tc}, allowed up to the link's rate {rate}",
                    v.get_ref()
                ),
            );
        }
        out[usize::from(tc)] = Some(slope);
    }
    Ok(out)
}

/// The ETS configuration of a link (`ets_*` keys), `None` when it has none (strict priority).
pub(super) fn link_ets(
    ctx: &Ctx<'_>,
    p: &RawLinkParams,
    slopes: &[Option<Rate>; 8],
    link_span: Range<usize>,
) -> Result<Option<EtsConfig>, ScenarioError> {
    if p.ets_tc_bandwidth.is_none()
        && p.ets_prio_tc.is_none()
        && p.ets_tsa.is_none()
        && p.ets_idle_slope.is_none()
    {
        return Ok(None);
    }
    let eight =
        |key: &str, v: &Option<Spanned<Vec<u8>>>, default: [u8; 8]| -> Result<[u8; 8], ScenarioError> {
            match v {
                None => Ok(default),
                Some(v) => <[u8; 8]>::try_from(v.get_ref().as_slice()).or_else(|_| {
                    ctx.err(
                        v.span(),
                        key,
                        format!(
                            "found {} values, allowed exactly 8 (one per traffic class or priority)",
                            v.get_ref().len()
                        ),
                    )
                }),
            }
        };
    let bw = eight("ets_tc_bandwidth", &p.ets_tc_bandwidth, [0; 8])?;
    let prio_tc = eight("ets_prio_tc", &p.ets_prio_tc, [0, 1, 2, 3, 4, 5, 6, 7])?;
    let mut tsa = [Tsa::STRICT; 8];
    match &p.ets_tsa {
        None => {
            for (t, &b) in tsa.iter_mut().zip(&bw) {
                if b > 0 {
                    *t = Tsa::ETS;
                }
            }
        }
        Some(v) if v.get_ref().len() == 8 => {
            for (t, name) in tsa.iter_mut().zip(v.get_ref()) {
                *t = match name.as_str() {
                    "strict" => Tsa::STRICT,
                    "ets" => Tsa::ETS,
                    "cbs" => Tsa::CREDIT_BASED_SHAPER,
                    other => {
                        return ctx.err(
                            v.span(),
                            "ets_tsa",
                            format!("found {other:?}, allowed \"strict\", \"cbs\" or \"ets\""),
                        );
                    }
                };
            }
        }
        Some(v) => {
            return ctx.err(
                v.span(),
                "ets_tsa",
                format!("found {} values, allowed exactly 8", v.get_ref().len()),
            );
        }
    }
    for (tc, t) in tsa.iter().enumerate() {
        if *t == Tsa::CREDIT_BASED_SHAPER && slopes[tc].is_none() {
            let (span, key) = match &p.ets_idle_slope {
                Some(_) => (span_of(&p.ets_tsa), "ets_idle_slope"),
                None => (span_of(&p.ets_tsa), "ets_tsa"),
            };
            return ctx.err(
                span,
                key,
                format!(
                    "TC {tc} is \"cbs\" but has no idleSlope; allowed: give it one in \
                     ets_idle_slope = {{ {tc} = \"RATE\" }}"
                ),
            );
        }
    }
    EtsConfig::new(8, prio_tc.map(Some), tsa, bw)
        .map(Some)
        .or_else(|e| {
            use lossless_proto::ets::EtsConfigError as E;
            // blame the key whose value the check refused
            let (span, key) = match e {
                E::PriorityMappedNowhere { .. } | E::PriorityTcBeyondMaxTcs { .. } => {
                    (span_of(&p.ets_prio_tc), "ets_prio_tc")
                }
                E::VendorTsa { .. } | E::ReservedTsa { .. } => (span_of(&p.ets_tsa), "ets_tsa"),
                E::BandwidthOnNonEts { .. } if p.ets_tsa.is_some() => (span_of(&p.ets_tsa), "ets_tsa"),
                _ => (span_of(&p.ets_tc_bandwidth), "ets_tc_bandwidth"),
            };
            let span = if span == (0..0) { link_span.clone() } else { span };
            ctx.err(span, key, e.to_string())
        })
}
