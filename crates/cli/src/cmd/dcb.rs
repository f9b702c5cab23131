//! `lossless dcb`: an interface's IEEE DCB state (ETS, PFC, Application Priority) read and
//! written through dcbnl, in iproute2 `dcb`'s vocabulary (`dcb ets show dev X`, `dcb pfc set
//! dev X prio-pfc 3:on`, `dcb app add dev X ethtype-prio 0x8906:3`, `dcb apptrust set dev X
//! order dscp pcp`).

use std::process::ExitCode;

use anyhow::bail;
use lossless_live::netlink::dcbnl::{self, DcbApp, DcbSet, DcbState, IeeeEts, IeeePfc};

/// Arguments of `lossless dcb`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Objects and commands, as iproute2's dcb(8) names them:
  dcb show dev IF                       everything below at once
  dcb ets show dev IF
  dcb ets set dev IF [willing on|off] [tc-tsa TC:TSA ...] [tc-bw TC:PERCENT ...]
                     [prio-tc PRIO:TC ...] [reco-tc-tsa ...] [reco-tc-bw ...] [reco-prio-tc ...]
        TSA: strict, cbs, ets, vendor
  dcb pfc show dev IF
  dcb pfc set dev IF [prio-pfc PRIO:on|off ...] [macsec-bypass on|off] [delay BITS]
  dcb app show dev IF
  dcb app add|del dev IF [default-prio PRIO] [ethtype-prio ET:PRIO ...] [port-prio PORT:PRIO ...]
                         [stream-port-prio PORT:PRIO ...] [dgram-port-prio PORT:PRIO ...]
                         [dscp-prio DSCP:PRIO ...]
  dcb apptrust show dev IF [order]
  dcb apptrust set dev IF order [SELECTOR ...]
        SELECTOR: ethtype, stream-port, dgram-port, port, dscp, pcp; most trusted first,
        each once; `order` alone trusts none. The order replaces the whole table. Needs
        Linux 6.2 or later and a driver with apptrust (sparx5, lan966x, DSA switch ports).
A set reads the interface's state first and changes only what is given (as dcb does).

Examples:
  lossless dcb pfc set dev eth1 prio-pfc 3:on 4:on
  lossless dcb ets set dev eth1 tc-tsa 0:ets 1:ets tc-bw 0:60 1:40 prio-tc 3:1 4:1
  lossless dcb app add dev eth1 dscp-prio 26:3
  lossless dcb apptrust set dev eth1 order dscp pcp
  lossless dcb --json show dev eth1

What the kernel needs: a driver with dcbnl operations (mlx5_core, bnxt_en, ice, i40e, ixgbe,
…); veth and most virtual interfaces have none and are reported as such (\"veth0 has no DCB
support in its driver (dcbnl: Operation not supported)\"). A NIC whose firmware runs its own
DCBX agent (ice and mlx5 by default) may refuse settings from the host until its agent is
switched to host mode (lldptool/ethtool private flags; see the driver's documentation).
Setting needs CAP_NET_ADMIN.

Exit status: 0 when the request was done; 2 on a bad command line, a missing interface, an
interface without DCB, a refusal by the driver or no permission.")]
pub struct DcbArgs {
    /// Print JSON (`show`: the state; `set`/`add`/`del`: the state after).
    #[arg(short = 'j', long)]
    pub json: bool,
    /// OBJECT COMMAND dev IF [ARGS…] (see below).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

/// A parsed `lossless dcb` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Show `what` (ets, pfc, app or all).
    Show {
        /// The interface.
        dev: String,
        /// Which object (`None`: all).
        what: Option<Object>,
    },
    /// Change ETS fields.
    EtsSet {
        /// The interface.
        dev: String,
        /// The edits.
        edits: Vec<EtsEdit>,
    },
    /// Change PFC fields.
    PfcSet {
        /// The interface.
        dev: String,
        /// The edits.
        edits: Vec<PfcEdit>,
    },
    /// Replace the APP selector trust order.
    AppTrustSet {
        /// The interface.
        dev: String,
        /// The selectors, most trusted first.
        order: Vec<u8>,
    },
    /// Add or delete application entries.
    App {
        /// The interface.
        dev: String,
        /// Add (`true`) or delete.
        add: bool,
        /// The entries.
        apps: Vec<DcbApp>,
    },
}

/// The objects of `dcb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// `ets`.
    Ets,
    /// `pfc`.
    Pfc,
    /// `app`.
    App,
    /// `apptrust`.
    AppTrust,
}

/// The selectors `dcb apptrust` names, with their `struct dcb_app` selector values
/// (IEEE_8021QAZ_APP_SEL_*, DCB_APP_SEL_PCP).
pub const TRUST_SELECTORS: [(&str, u8); 6] = [
    ("ethtype", 1),
    ("stream-port", 2),
    ("dgram-port", 3),
    ("port", 4),
    ("dscp", 5),
    ("pcp", dcbnl::DCB_APP_SEL_PCP),
];

fn trust_name(v: u8) -> String {
    TRUST_SELECTORS
        .iter()
        .find(|(_, n)| *n == v)
        .map(|(s, _)| (*s).to_owned())
        .unwrap_or_else(|| format!("selector-{v}"))
}

fn trust_order(args: &[String]) -> anyhow::Result<Vec<u8>> {
    let mut order: Vec<u8> = Vec::new();
    for a in args {
        let Some(&(_, v)) = TRUST_SELECTORS.iter().find(|(n, _)| n == a) else {
            bail!(
                "apptrust set: order: {a:?} is not a selector: allowed {}",
                TRUST_SELECTORS.map(|t| t.0).join(", ")
            );
        };
        if order.contains(&v) {
            bail!("apptrust set: order: {a} given twice: each selector once");
        }
        order.push(v);
    }
    Ok(order)
}

/// One change to `struct ieee_ets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtsEdit {
    /// `willing on|off`.
    Willing(bool),
    /// `tc-tsa TC:TSA`.
    TcTsa(usize, u8),
    /// `tc-bw TC:PERCENT`.
    TcBw(usize, u8),
    /// `prio-tc PRIO:TC`.
    PrioTc(usize, u8),
    /// `reco-tc-tsa TC:TSA`.
    RecoTcTsa(usize, u8),
    /// `reco-tc-bw TC:PERCENT`.
    RecoTcBw(usize, u8),
    /// `reco-prio-tc PRIO:TC`.
    RecoPrioTc(usize, u8),
}

/// One change to `struct ieee_pfc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PfcEdit {
    /// `prio-pfc PRIO:on|off`.
    Prio(usize, bool),
    /// `macsec-bypass on|off`.
    MacsecBypass(bool),
    /// `delay BITS`.
    Delay(u16),
}

const TSA: [(&str, u8); 4] = [("strict", 0), ("cbs", 1), ("ets", 2), ("vendor", 255)];

fn tsa_name(v: u8) -> String {
    TSA.iter()
        .find(|(_, n)| *n == v)
        .map(|(s, _)| (*s).to_owned())
        .unwrap_or_else(|| v.to_string())
}

fn on_off(key: &str, s: &str) -> anyhow::Result<bool> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => bail!("{key}: {s:?} is neither on nor off"),
    }
}

/// `K:V` with K in `0..keys` (or any u16 for application keys when `keys` is 0).
fn pair(key: &str, s: &str) -> anyhow::Result<(String, String)> {
    match s.split_once(':') {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => bail!("{key}: {s:?} is not KEY:VALUE"),
    }
}

fn index(key: &str, what: &str, s: &str) -> anyhow::Result<usize> {
    match s.parse::<usize>() {
        Ok(i) if i < 8 => Ok(i),
        _ => bail!("{key}: {what} {s:?} is out of range: allowed 0..=7"),
    }
}

fn num(key: &str, what: &str, s: &str, max: u64) -> anyhow::Result<u64> {
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse::<u64>().ok()
    };
    match v {
        Some(v) if v <= max => Ok(v),
        _ => bail!("{key}: {what} {s:?} is out of range: allowed 0..={max}"),
    }
}

fn dev_and_rest(obj: &str, cmd: &str, rest: &[String]) -> anyhow::Result<(String, Vec<String>)> {
    match rest {
        [d, dev, tail @ ..] if d == "dev" => Ok((dev.clone(), tail.to_vec())),
        _ => bail!("{obj} {cmd}: expected \"dev IF\" next, as in: lossless dcb {obj} {cmd} dev eth0"),
    }
}

/// Groups `KEY v v v KEY v …` where each KEY is one of `keys`.
fn groups<'a>(obj: &str, keys: &[&str], args: &'a [String]) -> anyhow::Result<Vec<(String, Vec<&'a str>)>> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for a in args {
        if keys.contains(&a.as_str()) {
            out.push((a.clone(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(a);
        } else {
            bail!("{obj}: {a:?} is not a parameter: allowed {}", keys.join(", "));
        }
    }
    if let Some((k, _)) = out.iter().find(|(_, v)| v.is_empty()) {
        bail!("{obj}: {k} needs a value");
    }
    Ok(out)
}

/// Parses `OBJECT COMMAND dev IF ARGS…` as dcb(8) does.
pub fn parse(args: &[String]) -> anyhow::Result<Request> {
    let Some((obj, rest)) = args.split_first() else {
        bail!("nothing to do: give an object (ets, pfc, app, apptrust) or show");
    };
    if obj == "show" {
        let (dev, tail) = match rest {
            [d, dev, tail @ ..] if d == "dev" => (dev.clone(), tail.to_vec()),
            _ => bail!("show: expected \"dev IF\" next, as in: lossless dcb show dev eth0"),
        };
        if !tail.is_empty() {
            bail!("show: unexpected {:?}", tail.join(" "));
        }
        return Ok(Request::Show { dev, what: None });
    }
    let object = match obj.as_str() {
        "ets" => Object::Ets,
        "pfc" => Object::Pfc,
        "app" => Object::App,
        "apptrust" => Object::AppTrust,
        o => bail!(
            "{o:?} is not an object: allowed ets, pfc, app, apptrust, show (buffer, maxrate and rewr are iproute2's, not ours)"
        ),
    };
    let Some((cmd, rest)) = rest.split_first() else {
        bail!(
            "{obj}: give a command (show, set{})",
            if object == Object::App { ", add, del" } else { "" }
        );
    };
    let (dev, tail) = dev_and_rest(obj, cmd, rest)?;
    match (object, cmd.as_str()) {
        (Object::AppTrust, "show") => {
            if !(tail.is_empty() || tail == ["order"]) {
                bail!("apptrust show: unexpected {:?}: allowed order", tail.join(" "));
            }
            Ok(Request::Show {
                dev,
                what: Some(object),
            })
        }
        (Object::AppTrust, "set") => match tail.split_first() {
            Some((k, sels)) if k == "order" => Ok(Request::AppTrustSet {
                dev,
                order: trust_order(sels)?,
            }),
            Some((k, _)) => bail!("apptrust set: {k:?} is not a parameter: allowed order"),
            None => bail!("apptrust set: nothing to set: give order SELECTOR ..."),
        },
        (_, "show") => {
            if !tail.is_empty() {
                bail!("{obj} show: unexpected {:?}", tail.join(" "));
            }
            Ok(Request::Show {
                dev,
                what: Some(object),
            })
        }
        (Object::Ets, "set") => {
            let keys = [
                "willing",
                "tc-tsa",
                "tc-bw",
                "prio-tc",
                "reco-tc-tsa",
                "reco-tc-bw",
                "reco-prio-tc",
            ];
            let mut edits = Vec::new();
            for (k, vals) in groups("ets set", &keys, &tail)? {
                if k == "willing" {
                    if vals.len() != 1 {
                        bail!("willing: one value, on or off");
                    }
                    edits.push(EtsEdit::Willing(on_off("willing", vals[0])?));
                    continue;
                }
                for v in vals {
                    let (a, b) = pair(&k, v)?;
                    let what = if k.ends_with("prio-tc") {
                        "priority"
                    } else {
                        "traffic class"
                    };
                    let i = index(&k, what, &a)?;
                    let e = match k.as_str() {
                        "tc-tsa" | "reco-tc-tsa" => {
                            let Some(&(_, t)) = TSA.iter().find(|(n, _)| *n == b) else {
                                bail!("{k}: {b:?} is not a TSA: allowed strict, cbs, ets, vendor");
                            };
                            if k == "tc-tsa" {
                                EtsEdit::TcTsa(i, t)
                            } else {
                                EtsEdit::RecoTcTsa(i, t)
                            }
                        }
                        "tc-bw" | "reco-tc-bw" => {
                            let p = num(&k, "bandwidth", &b, 100)? as u8;
                            if k == "tc-bw" {
                                EtsEdit::TcBw(i, p)
                            } else {
                                EtsEdit::RecoTcBw(i, p)
                            }
                        }
                        _ => {
                            let t = index(&k, "traffic class", &b)? as u8;
                            if k == "prio-tc" {
                                EtsEdit::PrioTc(i, t)
                            } else {
                                EtsEdit::RecoPrioTc(i, t)
                            }
                        }
                    };
                    edits.push(e);
                }
            }
            if edits.is_empty() {
                bail!("ets set: nothing to set: give {}", keys.join(", "));
            }
            Ok(Request::EtsSet { dev, edits })
        }
        (Object::Pfc, "set") => {
            let keys = ["prio-pfc", "macsec-bypass", "delay"];
            let mut edits = Vec::new();
            for (k, vals) in groups("pfc set", &keys, &tail)? {
                match k.as_str() {
                    "prio-pfc" => {
                        for v in vals {
                            let (a, b) = pair(&k, v)?;
                            edits.push(PfcEdit::Prio(index(&k, "priority", &a)?, on_off(&k, &b)?));
                        }
                    }
                    "macsec-bypass" if vals.len() == 1 => {
                        edits.push(PfcEdit::MacsecBypass(on_off(&k, vals[0])?))
                    }
                    "delay" if vals.len() == 1 => {
                        edits.push(PfcEdit::Delay(num(&k, "delay", vals[0], 65535)? as u16))
                    }
                    _ => bail!("{k}: one value"),
                }
            }
            if edits.is_empty() {
                bail!("pfc set: nothing to set: give {}", keys.join(", "));
            }
            Ok(Request::PfcSet { dev, edits })
        }
        (Object::App, "add" | "del") => {
            let keys = [
                "default-prio",
                "ethtype-prio",
                "port-prio",
                "stream-port-prio",
                "dgram-port-prio",
                "dscp-prio",
            ];
            let mut apps = Vec::new();
            for (k, vals) in groups(&format!("app {cmd}"), &keys, &tail)? {
                for v in vals {
                    let (selector, protocol, prio) = if k == "default-prio" {
                        (1, 0, v.to_owned())
                    } else {
                        let (a, b) = pair(&k, v)?;
                        let (sel, max) = match k.as_str() {
                            "ethtype-prio" => (1, 65535),
                            "stream-port-prio" => (2, 65535),
                            "dgram-port-prio" => (3, 65535),
                            "port-prio" => (4, 65535),
                            _ => (5, 63),
                        };
                        (sel, num(&k, "key", &a, max)? as u16, b)
                    };
                    let priority = index(&k, "priority", &prio)? as u8;
                    apps.push(DcbApp {
                        selector,
                        priority,
                        protocol,
                    });
                }
            }
            if apps.is_empty() {
                bail!("app {cmd}: no entry given: give {}", keys.join(", "));
            }
            Ok(Request::App {
                dev,
                add: cmd == "add",
                apps,
            })
        }
        (_, c) => bail!(
            "{obj} {c}: not a command: allowed show, {}",
            if object == Object::App { "add, del" } else { "set" }
        ),
    }
}

/// Applies ETS edits to the state read from the interface.
pub fn apply_ets(mut e: IeeeEts, edits: &[EtsEdit]) -> IeeeEts {
    for x in edits {
        match *x {
            EtsEdit::Willing(w) => e.willing = u8::from(w),
            EtsEdit::TcTsa(i, v) => e.tc_tsa[i] = v,
            EtsEdit::TcBw(i, v) => e.tc_tx_bw[i] = v,
            EtsEdit::PrioTc(i, v) => e.prio_tc[i] = v,
            EtsEdit::RecoTcTsa(i, v) => e.tc_reco_tsa[i] = v,
            EtsEdit::RecoTcBw(i, v) => e.tc_reco_bw[i] = v,
            EtsEdit::RecoPrioTc(i, v) => e.reco_prio_tc[i] = v,
        }
    }
    e
}

/// Applies PFC edits to the state read from the interface.
pub fn apply_pfc(mut p: IeeePfc, edits: &[PfcEdit]) -> IeeePfc {
    for x in edits {
        match *x {
            PfcEdit::Prio(i, on) if on => p.pfc_en |= 1 << i,
            PfcEdit::Prio(i, _) => p.pfc_en &= !(1 << i),
            PfcEdit::MacsecBypass(b) => p.mbc = u8::from(b),
            PfcEdit::Delay(d) => p.delay = d,
        }
    }
    p
}

fn map<T: std::fmt::Display>(a: impl IntoIterator<Item = T>) -> String {
    a.into_iter()
        .enumerate()
        .map(|(i, v)| format!("{i}:{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn onoff(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// The ETS lines as `dcb ets show` prints them.
pub fn ets_text(e: &IeeeEts) -> String {
    format!(
        "willing {} ets-cap {} cbs {}\ntc-bw {}\ntc-tsa {}\nprio-tc {}\nreco-tc-bw {}\nreco-tc-tsa {}\nreco-prio-tc {}\n",
        onoff(e.willing != 0),
        e.ets_cap,
        onoff(e.cbs != 0),
        map(e.tc_tx_bw),
        map(e.tc_tsa.iter().map(|&t| tsa_name(t))),
        map(e.prio_tc),
        map(e.tc_reco_bw),
        map(e.tc_reco_tsa.iter().map(|&t| tsa_name(t))),
        map(e.reco_prio_tc),
    )
}

/// The PFC lines as `dcb pfc show` prints them.
pub fn pfc_text(p: &IeeePfc) -> String {
    format!(
        "pfc-cap {} macsec-bypass {} delay {}\nprio-pfc {}\nrequests {}\nindications {}\n",
        p.pfc_cap,
        onoff(p.mbc != 0),
        p.delay,
        map((0..8).map(|i| onoff(p.pfc_en & (1 << i) != 0))),
        map(p.requests),
        map(p.indications),
    )
}

/// The application table as `dcb app show` groups it.
pub fn app_text(apps: &[DcbApp]) -> String {
    let mut out = String::new();
    for (sel, name) in [
        (1u8, "ethtype-prio"),
        (2, "stream-port-prio"),
        (3, "dgram-port-prio"),
        (4, "port-prio"),
        (5, "dscp-prio"),
    ] {
        let e: Vec<String> = apps
            .iter()
            .filter(|a| a.selector == sel && !(sel == 1 && a.protocol == 0))
            .map(|a| {
                if sel == 1 {
                    format!("{:#06x}:{}", a.protocol, a.priority)
                } else {
                    format!("{}:{}", a.protocol, a.priority)
                }
            })
            .collect();
        if !e.is_empty() {
            out.push_str(&format!("{name} {}\n", e.join(" ")));
        }
    }
    for a in apps.iter().filter(|a| a.selector == 1 && a.protocol == 0) {
        out.push_str(&format!("default-prio {}\n", a.priority));
    }
    for a in apps.iter().filter(|a| !(1..=5).contains(&a.selector)) {
        out.push_str(&format!(
            "selector {} {}:{}\n",
            a.selector, a.protocol, a.priority
        ));
    }
    out
}

const NO_APPTRUST: &str = "apptrust: the driver reports no trust order (no DCB_ATTR_DCB_APP_TRUST_TABLE: a kernel before 6.2, or a driver without apptrust)\n";

/// The trust order as `dcb apptrust show` prints it (`order: dscp pcp`).
pub fn apptrust_text(order: &[u8]) -> String {
    let names: Vec<String> = order.iter().map(|&v| trust_name(v)).collect();
    format!("order: {}\n", names.join(" ")).replace(": \n", ":\n")
}

fn show(st: &DcbState, what: Option<Object>, json: bool) -> anyhow::Result<()> {
    if json {
        let v = match what {
            None => serde_json::to_value(st)?,
            Some(Object::Ets) => serde_json::json!({ "ifname": st.ifname, "ets": st.ets }),
            Some(Object::Pfc) => serde_json::json!({ "ifname": st.ifname, "pfc": st.pfc }),
            Some(Object::App) => serde_json::json!({ "ifname": st.ifname, "apps": st.apps }),
            Some(Object::AppTrust) => serde_json::json!({
                "ifname": st.ifname,
                "apptrust": st.apptrust,
                "order": st.apptrust.as_ref().map(|o| o.iter().map(|&v| trust_name(v)).collect::<Vec<_>>()),
            }),
        };
        outln!("{v}")?;
        return Ok(());
    }
    let none = |o: &str| format!("{o}: the driver reports none\n");
    let mut text = String::new();
    if matches!(what, None | Some(Object::Ets)) {
        text += &st.ets.as_ref().map(ets_text).unwrap_or_else(|| none("ets"));
    }
    if matches!(what, None | Some(Object::Pfc)) {
        text += &st.pfc.as_ref().map(pfc_text).unwrap_or_else(|| none("pfc"));
    }
    if matches!(what, None | Some(Object::App)) {
        text += &app_text(&st.apps);
    }
    match (what, &st.apptrust) {
        (None | Some(Object::AppTrust), Some(order)) => text += &apptrust_text(order),
        (Some(Object::AppTrust), None) => text += NO_APPTRUST,
        _ => {}
    }
    out!("{text}")?;
    Ok(())
}

/// Runs `lossless dcb`.
pub fn run(args: DcbArgs) -> anyhow::Result<ExitCode> {
    let req = parse(&args.args)?;
    match req {
        Request::Show { dev, what } => {
            let st = dcbnl::get(&dev)?;
            show(&st, what, args.json)?;
        }
        Request::EtsSet { dev, edits } => {
            let st = dcbnl::get(&dev)?;
            let ets = apply_ets(st.ets.unwrap_or_default(), &edits);
            dcbnl::set(
                &dev,
                &DcbSet {
                    ets: Some(ets),
                    ..Default::default()
                },
            )?;
            if args.json {
                show(&dcbnl::get(&dev)?, Some(Object::Ets), true)?;
            }
        }
        Request::PfcSet { dev, edits } => {
            let st = dcbnl::get(&dev)?;
            let pfc = apply_pfc(st.pfc.unwrap_or_default(), &edits);
            dcbnl::set(
                &dev,
                &DcbSet {
                    pfc: Some(pfc),
                    ..Default::default()
                },
            )?;
            if args.json {
                show(&dcbnl::get(&dev)?, Some(Object::Pfc), true)?;
            }
        }
        Request::AppTrustSet { dev, order } => {
            dcbnl::set(
                &dev,
                &DcbSet {
                    apptrust: Some(order.clone()),
                    ..Default::default()
                },
            )?;
            // a kernel before 6.2 ignores the attribute it does not know and acknowledges
            let st = dcbnl::get(&dev)?;
            if st.apptrust.as_ref() != Some(&order) {
                let got = st
                    .apptrust
                    .as_deref()
                    .map(apptrust_text)
                    .unwrap_or_else(|| NO_APPTRUST.to_owned());
                bail!(
                    "apptrust set: {dev} acknowledged the trust order but now reports {}; the kernel may predate Linux 6.2 (which ignores DCB_ATTR_DCB_APP_TRUST_TABLE)",
                    got.trim_end()
                );
            }
            if args.json {
                show(&st, Some(Object::AppTrust), true)?;
            }
        }
        Request::App { dev, add, apps } => {
            if add {
                dcbnl::set(
                    &dev,
                    &DcbSet {
                        apps,
                        ..Default::default()
                    },
                )?;
            } else {
                dcbnl::del_apps(&dev, &apps)?;
            }
            if args.json {
                show(&dcbnl::get(&dev)?, Some(Object::App), true)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> anyhow::Result<Request> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn pfc_set_takes_dcbs_prio_pfc_pairs() {
        assert_eq!(
            p("pfc set dev eth1 prio-pfc 3:on 4:off delay 32").unwrap(),
            Request::PfcSet {
                dev: "eth1".into(),
                edits: vec![
                    PfcEdit::Prio(3, true),
                    PfcEdit::Prio(4, false),
                    PfcEdit::Delay(32)
                ]
            }
        );
        let pfc = apply_pfc(
            IeeePfc {
                pfc_en: 0b1_0000,
                ..Default::default()
            },
            &[PfcEdit::Prio(3, true), PfcEdit::Prio(4, false)],
        );
        assert_eq!(pfc.pfc_en, 0b1000);
    }

    #[test]
    fn ets_set_takes_tsa_names_bandwidths_and_the_priority_map() {
        let r = p("ets set dev eth1 willing off tc-tsa 0:ets 1:ets 2:strict tc-bw 0:60 1:40 prio-tc 3:1")
            .unwrap();
        let Request::EtsSet { edits, .. } = r else {
            panic!()
        };
        let e = apply_ets(
            IeeeEts {
                willing: 1,
                ..Default::default()
            },
            &edits,
        );
        assert_eq!(e.willing, 0);
        assert_eq!(e.tc_tsa[..3], [2, 2, 0]);
        assert_eq!(e.tc_tx_bw[..2], [60, 40]);
        assert_eq!(e.prio_tc[3], 1);
    }

    #[test]
    fn app_add_takes_each_selector_of_dcb() {
        let r =
            p("app add dev eth1 ethtype-prio 0x8906:3 dscp-prio 26:3 48:5 default-prio 0 port-prio 4791:3")
                .unwrap();
        assert_eq!(
            r,
            Request::App {
                dev: "eth1".into(),
                add: true,
                apps: vec![
                    DcbApp {
                        selector: 1,
                        priority: 3,
                        protocol: 0x8906
                    },
                    DcbApp {
                        selector: 5,
                        priority: 3,
                        protocol: 26
                    },
                    DcbApp {
                        selector: 5,
                        priority: 5,
                        protocol: 48
                    },
                    DcbApp {
                        selector: 1,
                        priority: 0,
                        protocol: 0
                    },
                    DcbApp {
                        selector: 4,
                        priority: 3,
                        protocol: 4791
                    },
                ]
            }
        );
    }

    #[test]
    fn bad_values_say_what_and_what_is_allowed() {
        for (cmd, says) in [
            ("pfc set dev eth1 prio-pfc 8:on", "allowed 0..=7"),
            ("pfc set dev eth1 prio-pfc 3:maybe", "neither on nor off"),
            (
                "ets set dev eth1 tc-tsa 0:wfq",
                "allowed strict, cbs, ets, vendor",
            ),
            ("ets set dev eth1 tc-bw 0:101", "allowed 0..=100"),
            ("app add dev eth1 dscp-prio 64:3", "allowed 0..=63"),
            ("pfc set eth1 prio-pfc 3:on", "expected \"dev IF\""),
            ("pfc set dev eth1", "nothing to set"),
            ("pfc set dev eth1 prio-pfc", "needs a value"),
            ("buffer show dev eth1", "not an object"),
            ("pfc add dev eth1", "not a command"),
            ("ets set dev eth1 bogus 1", "is not a parameter"),
        ] {
            let e = p(cmd).unwrap_err().to_string();
            assert!(e.contains(says), "{cmd}: {e}");
        }
    }

    #[test]
    fn apptrust_takes_dcbs_selector_names_in_order_and_refuses_repeats() {
        assert_eq!(
            p("apptrust set dev eth1 order dscp pcp").unwrap(),
            Request::AppTrustSet {
                dev: "eth1".into(),
                order: vec![5, 255]
            }
        );
        assert_eq!(
            p("apptrust set dev eth1 order pcp ethtype stream-port dgram-port port").unwrap(),
            Request::AppTrustSet {
                dev: "eth1".into(),
                order: vec![255, 1, 2, 3, 4]
            }
        );
        // `order` alone: trust none
        assert_eq!(
            p("apptrust set dev eth1 order").unwrap(),
            Request::AppTrustSet {
                dev: "eth1".into(),
                order: vec![]
            }
        );
        for (line, want) in [
            ("apptrust set dev eth1 order dscp dscp", "dscp given twice"),
            (
                "apptrust set dev eth1 order dscp vlan",
                "\"vlan\" is not a selector: allowed ethtype, stream-port, dgram-port, port, dscp, pcp",
            ),
            ("apptrust set dev eth1", "nothing to set: give order"),
            (
                "apptrust set dev eth1 trust dscp",
                "\"trust\" is not a parameter: allowed order",
            ),
            ("apptrust show dev eth1 dscp", "allowed order"),
        ] {
            let e = p(line).unwrap_err().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
        for line in ["apptrust show dev eth1", "apptrust show dev eth1 order"] {
            assert_eq!(
                p(line).unwrap(),
                Request::Show {
                    dev: "eth1".into(),
                    what: Some(Object::AppTrust)
                }
            );
        }
        assert_eq!(apptrust_text(&[5, 255]), "order: dscp pcp\n");
        assert_eq!(apptrust_text(&[]), "order:\n");
        assert_eq!(apptrust_text(&[9]), "order: selector-9\n");
    }

    #[test]
    fn show_prints_dcbs_lines() {
        let pfc = IeeePfc {
            pfc_cap: 8,
            pfc_en: 0b1000,
            ..Default::default()
        };
        let t = pfc_text(&pfc);
        assert!(
            t.contains("prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"),
            "{t}"
        );
        let ets = IeeeEts {
            tc_tsa: [2, 2, 0, 0, 0, 0, 0, 255],
            ..Default::default()
        };
        assert!(
            ets_text(&ets)
                .contains("tc-tsa 0:ets 1:ets 2:strict 3:strict 4:strict 5:strict 6:strict 7:vendor")
        );
        let apps = [
            DcbApp {
                selector: 1,
                priority: 3,
                protocol: 0x8906,
            },
            DcbApp {
                selector: 5,
                priority: 3,
                protocol: 26,
            },
        ];
        assert_eq!(app_text(&apps), "ethtype-prio 0x8906:3\ndscp-prio 26:3\n");
        assert_eq!(
            p("show dev eth1").unwrap(),
            Request::Show {
                dev: "eth1".into(),
                what: None
            }
        );
    }
}
