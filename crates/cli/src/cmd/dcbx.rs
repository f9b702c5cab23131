//! `lossless dcbx`: run the DCBX agent on a real interface (`run`) and report a running
//! agent's Local, Remote and Operational configuration and statistics (`show`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use lossless_live::dcbx::apply::operational_set;
use lossless_live::dcbx::{
    ETHERTYPE_LLDP, FileConfig, InputError, StateLock, default_state_path, read_state as read_state_text,
};
use lossless_live::netlink::dcbnl;
use lossless_live::{RawSocket, signals};
use lossless_proto::dcbx::negotiate::OperPfc;
use lossless_proto::dcbx::{Agent, Event, Operational};
use serde_json::Value;

/// Arguments of `lossless dcbx`.
#[derive(clap::Args, Debug)]
pub struct DcbxArgs {
    #[command(subcommand)]
    command: DcbxCommand,
}

#[derive(clap::Subcommand, Debug)]
enum DcbxCommand {
    /// Run the LLDP/DCBX agent on an interface until SIGTERM/SIGINT (then send the shutdown
    /// LLDPDU). Needs CAP_NET_RAW.
    #[command(after_help = "\
Examples:
  lossless dcbx run --iface eth1                  # a willing host, nothing configured
  lossless dcbx run --iface eth1 --config examples/dcbx/host-willing.toml
  lossless dcbx run --iface eth1 --config examples/dcbx/switch-pfc3.toml --state /tmp/sw.json

Every change of Remote and Operational is logged to stderr as one line with JSON; at most 10
lines of one kind per 10 s, then a count of those suppressed. A peer TLV our own configuration
could not hold (e.g. ETS bandwidths not summing to 100) is refused, logged and counted, and
Operational keeps its last valid state. One agent per state file: a second one refuses to start
and names the first one's PID.

With --apply, each Operational configuration (at start, and after every change) is programmed
into the interface through dcbnl (RTM_SETDCB, DCB_CMD_IEEE_SET with DCB_ATTR_IEEE_ETS,
DCB_ATTR_IEEE_PFC and DCB_ATTR_IEEE_APP_TABLE), as lldpad does; `lossless dcb show dev IF`
reads it back. The interface's driver must implement dcbnl (mlx5_core, bnxt_en, ice, i40e,
ixgbe, …): without it (veth) the agent refuses to start and says so; a NIC whose firmware runs
its own DCBX agent must be put in host mode first. Needs CAP_NET_ADMIN.

Exit status: 0 after SIGTERM/SIGINT, 2 on an error (configuration, interface, capability,
state file in use, --apply on an interface without DCB).")]
    Run {
        /// The interface.
        #[arg(long)]
        iface: String,
        /// The agent configuration (TOML: `[lldp]` timers, `[dcbx]` ETS/PFC/App; see
        /// examples/dcbx/) [default: a willing host with nothing configured, as
        /// examples/dcbx/host-willing.toml].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Where to write the state `dcbx show` reads [default: /run/lossless/dcbx-IFACE.json].
        #[arg(long)]
        state: Option<PathBuf>,
        /// Program each negotiated (Operational) ETS, PFC and App table into the interface
        /// through dcbnl.
        #[arg(long)]
        apply: bool,
    },
    /// Show Local, Remote, Operational and the statistics of the agent running on an interface.
    Show {
        /// The interface.
        #[arg(long)]
        iface: String,
        /// Print the state as JSON.
        #[arg(long)]
        json: bool,
        /// The state file the agent writes [default: /run/lossless/dcbx-IFACE.json].
        #[arg(long)]
        state: Option<PathBuf>,
    },
}

/// Runs `lossless dcbx`.
pub fn run(args: DcbxArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        DcbxCommand::Run {
            iface,
            config,
            state,
            apply,
        } => {
            let cfg = match &config {
                Some(path) => FileConfig::load(path)?,
                None => FileConfig::willing_host(),
            };
            let sock = RawSocket::open(&iface, ETHERTYPE_LLDP)?;
            if apply {
                // before anything else: an interface without DCB cannot be programmed
                dcbnl::get(&iface).map_err(|e| anyhow!("--apply: {e}"))?;
            }
            let agent_cfg = cfg.agent_config(sock.mac(), &iface).map_err(anyhow::Error::msg)?;
            let mut agent = Agent::new(agent_cfg, cfg.dcbx.clone())?;
            let state = match state {
                Some(s) => s,
                None => default_state_path(&iface).map_err(anyhow::Error::msg)?,
            };
            let lock = StateLock::acquire(&state, &iface)?;
            signals::install_stop_handlers().context("installing SIGTERM handler")?;
            if config.is_none() {
                errln!(
                    "dcbx: no --config: running as a willing host with nothing configured (ETS and PFC \
                     willing, no PFC priority, every priority in TC 0; as examples/dcbx/host-willing.toml)"
                );
            }
            errln!(
                "dcbx: agent on {iface} ({}), mode {:?}, state in {}",
                lossless_proto::lldp_agent::mac_text(&sock.mac()),
                cfg.dcbx.mode,
                state.display()
            );
            let start = std::time::Instant::now();
            let mut log = |line: &str| errln!("dcbx {:>9.3}s {iface}: {line}", start.elapsed().as_secs_f64());
            if !apply {
                lossless_live::dcbx::run(&sock, &mut agent, Some(&lock), &signals::stop_requested, &mut log)?;
                return Ok(ExitCode::SUCCESS);
            }
            let program = |op: &Operational, log: &mut dyn FnMut(&str)| match dcbnl::set(
                &iface,
                &operational_set(op),
            ) {
                Ok(()) => log(&format!(
                    "applied through dcbnl: up2tc {:?} tcbw {:?} pfc enable {:#04x} apps {}",
                    op.ets.params.up2tc,
                    op.ets.params.tcbw,
                    match &op.pfc {
                        OperPfc::Operational { params, .. } => params.enable,
                        OperPfc::NotOperational { .. } => 0,
                    },
                    op.app.len()
                )),
                Err(e) => log(&format!("not applied: {e}")),
            };
            program(agent.operational(), &mut log);
            let mut on_event = |e: &Event, log: &mut dyn FnMut(&str)| {
                if let Event::OperationalChanged(op) = e {
                    program(op, log);
                }
            };
            lossless_live::dcbx::run_with(
                &sock,
                &mut agent,
                Some(&lock),
                &signals::stop_requested,
                &mut log,
                &mut on_event,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        DcbxCommand::Show { iface, json, state } => {
            let path = match state {
                Some(s) => s,
                None => default_state_path(&iface).map_err(anyhow::Error::msg)?,
            };
            let v = read_state(&path, &iface)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&v)?)?;
            } else {
                out!("{}", human(&v))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Reads the state file (a regular file of bounded size), checking the agent that wrote it
/// still runs.
fn read_state(path: &Path, iface: &str) -> anyhow::Result<Value> {
    let text = read_state_text(path).map_err(|e| match e {
        InputError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => anyhow!(
            "no DCBX agent state for {iface} at {} (is `lossless dcbx run` running?)",
            path.display()
        ),
        // The error's own text, once (not again as a cause).
        e => anyhow!("{e}"),
    })?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not agent state JSON", path.display()))?;
    let pid = v["pid"].as_u64().unwrap_or(0);
    if pid == 0 || !Path::new(&format!("/proc/{pid}")).exists() {
        bail!(
            "stale state {}: the agent (pid {pid}) on {iface} is not running",
            path.display()
        );
    }
    Ok(v)
}

/// The priorities of a PFC enable bitmap.
fn prios(enable: &Value) -> String {
    let e = enable.as_u64().unwrap_or(0);
    let p: Vec<String> = (0..8)
        .filter(|i| e & (1 << i) != 0)
        .map(|i| i.to_string())
        .collect();
    if p.is_empty() { "none".into() } else { p.join(",") }
}

/// A human summary of a state JSON.
fn human(v: &Value) -> String {
    let mut s = String::new();
    let o = &v["operational"];
    s += &format!(
        "interface {} ({}), pid {}, DCBX mode {}\n",
        v["iface"].as_str().unwrap_or("?"),
        v["mac"].as_str().unwrap_or("?"),
        v["pid"],
        v["mode"].as_str().unwrap_or("?")
    );
    let l = &v["local"];
    s += &format!(
        "local:       PFC willing {} enable [{}]; ETS willing {} up2tc {} tcbw {} tsa {}\n",
        l["pfc"]["willing"],
        l["pfc"]["enable"].as_array().map_or(String::new(), |a| a
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")),
        l["ets"]["willing"],
        l["ets"]["up2tc"],
        l["ets"]["tcbw"],
        l["ets"]["tsa"]
    );
    let r = &v["remote"];
    if r.is_null() {
        s += "remote:      none\n";
    } else {
        s += &format!("remote:      from {}", r["src_mac"].as_str().unwrap_or("?"));
        if !r["pfc"].is_null() {
            s += &format!(
                "; PFC willing {} enable [{}]",
                r["pfc"]["willing"],
                prios(&r["pfc"]["value"]["enable"])
            );
        }
        if !r["ets_recommendation"].is_null() {
            s += &format!("; ETS-REC tcbw {}", r["ets_recommendation"]["tcbw"]);
        }
        if !r["cee"].is_null() {
            let c = &r["cee"];
            s += &format!("; CEE seq {} ack {}", c["control"]["seq"], c["control"]["ack"]);
            if !c["pfc"].is_null() {
                s += &format!(
                    " PFC willing {} enable [{}]",
                    c["pfc"]["willing"],
                    prios(&c["pfc"]["value"]["enable"])
                );
            }
        }
        s += "\n";
        for x in r["rejected"].as_array().map_or(&[][..], Vec::as_slice) {
            s += &format!(
                "refused:     peer's {}: {} (operational keeps the last valid value)\n",
                x["tlv"].as_str().unwrap_or("?"),
                x["reason"].as_str().unwrap_or("?")
            );
        }
    }
    let others = v["neighbours"].as_array().map_or(0, Vec::len).saturating_sub(1);
    if others > 0 {
        s += &format!(
            "neighbours:  {} on the port; DCBX {}\n",
            others + 1,
            if r.is_null() {
                "has no established peer and uses the local configuration"
            } else {
                "keeps its established peer and ignores the others"
            }
        );
    }
    match o["pfc"]["state"].as_str() {
        Some("operational") => {
            s += &format!(
                "operational: PFC enable [{}] ({})",
                prios(&o["pfc"]["params"]["enable"]),
                o["pfc"]["source"].as_str().unwrap_or("?")
            )
        }
        _ => {
            s += &format!(
                "operational: PFC NOT operational: {}",
                o["pfc"]["reason"].as_str().unwrap_or("?")
            )
        }
    }
    s += &format!(
        "; ETS up2tc {} tcbw {} ({}); {} app entries\n",
        o["ets"]["params"]["up2tc"],
        o["ets"]["params"]["tcbw"],
        o["ets"]["source"].as_str().unwrap_or("?"),
        o["app"].as_array().map_or(0, Vec::len)
    );
    let st = &v["statistics"];
    s += &format!(
        "statistics:  out {} in {} discarded {} errors {} tlvs discarded {} unrecognized {} ageouts {} dcbx tlvs refused {}\n",
        st["frames_out_total"],
        st["frames_in_total"],
        st["frames_discarded_total"],
        st["frames_in_errors_total"],
        st["tlvs_discarded_total"],
        st["tlvs_unrecognized_total"],
        st["ageouts_total"],
        st["dcbx_tlvs_rejected_total"]
    );
    s
}
