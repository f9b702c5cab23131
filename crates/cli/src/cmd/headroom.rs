//! `lossless headroom`: how much buffer a lossless priority needs after it sends XOFF, by
//! 802.1Qbb Annex N term by term, beside the mlx5 driver's and SONiC's Mellanox formulas;
//! `--verify` finds the smallest headroom with zero lossless drops in the simulator's worst
//! case by bisection and shows how far each formula is from it.

mod text;

use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use lossless_proto::headroom::{self, AnnexN, AnnexNInput, InterfaceDelay, PeerDelay, mlx5, sonic};
use lossless_proto::units::{Duration, IEEE_RATES, ParseRateError, Rate};
use lossless_sim::experiments::headroom::verify::{Setup, Verified, verify};
use serde::Serialize;

/// Arguments of `lossless headroom`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless headroom --speed 100G --cable 100m --mtu 9216
      Annex N term by term (802.3 interface and reaction delays), beside the mlx5 driver's
      and SONiC's (Spectrum-3) headroom, with what each counts and leaves out
  lossless headroom --speed 25G --cable 3m --mtu 1500 --verify
      also run the worst case in the simulator: the smallest headroom with zero lossless
      drops, found by bisection, and how much each formula over- or under-provisions
  lossless headroom --speed 400G --cable 300m --mtu 9100 --lossless-mtu 1024 --pipeline-latency 19
      SONiC's inputs of sonic-swss#3235's first vector (Spectrum-3, 8 lanes, RDMA MTU 1024,
      50 % small packets): xon 38912, xoff 272384, size 320512
  lossless headroom --speed 100G --cable 5m --interface-delay none --peer-delay 100ns
      your PHY and NIC instead of 802.3's upper bounds
  lossless headroom --speed 100G --cable 100m --verify --reverse-traffic --json
      the switch busy sending a frame to the peer when it decides: one frame more

MTUs are payloads (IP MTU): a frame adds 14 bytes of header, 4 of 802.1Q tag and 4 of FCS.
--mtu is the largest frame of any priority on the link, --lossless-mtu the lossless
priority's (default: --mtu). The interface delay is per direction and per PHY path (Annex N
counts it twice); the peer delay runs from the end of the PFC frame's reception. Each
formula takes its own inputs from these: see docs/headroom.md.

Exit status: 0 when the figures are printed; 2 for a value out of range (the message names
the option and the allowed range).")]
pub struct HeadroomArgs {
    /// Link speed: an IEEE rate (10M, 100M, 1G, 2.5G, 5G, 10G, 25G, 40G, 50G, 100G, 200G, 400G,
    /// 800G, 1.6T).
    #[arg(long, value_parser = parse_speed)]
    pub speed: Rate,
    /// Cable length in whole metres, e.g. 3m or 100m (0..=100000).
    #[arg(long, value_parser = parse_cable)]
    pub cable: u64,
    /// Largest payload of any frame on the link, bytes (42..=65535).
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u64).range(42..=65_535))]
    pub mtu: u64,
    /// Largest payload of the lossless priority's frames, bytes (42..=65535; default --mtu).
    #[arg(long, value_parser = clap::value_parser!(u64).range(42..=65_535))]
    pub lossless_mtu: Option<u64>,
    /// One PHY path's delay per direction: "802.3" (the upper bound at the speed), "none", or a
    /// time up to 1 ms such as 200ns.
    #[arg(long, default_value = "802.3", value_parser = parse_interface_delay)]
    pub interface_delay: InterfaceDelay,
    /// The peer's reaction delay: "802.3" (31B.3.7's maximum at the speed), pause quanta
    /// (0..=65535, e.g. 394) or a time up to 1 ms such as 2us.
    #[arg(long, default_value = "802.3", value_parser = parse_peer_delay)]
    pub peer_delay: PeerDelay,
    /// SONiC: the ASIC preset (spc1, spc2, spc3, spc4, spc5, vs).
    #[arg(long, default_value = "spc3", value_parser = parse_asic)]
    pub asic: &'static sonic::Asic,
    /// SONiC: the ASIC's buffer cell, bytes (1..=4096; default the preset's).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub cell: Option<u64>,
    /// SONiC: the lossless traffic pattern's small-packet percentage (0..=100).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub small_packet_percentage: u64,
    /// SONiC: pipeline latency in KiB (1024 bytes), e.g. 18 or 19 (default the preset's).
    #[arg(long, value_parser = parse_milli_kb)]
    pub pipeline_latency: Option<u64>,
    /// SONiC: gearbox delay, ns (0..=1000000).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub gearbox_delay: u64,
    /// SONiC: the port's lanes (1..=8; default: speed over the ASIC's fastest lane).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=8))]
    pub lanes: Option<u64>,
    /// SONiC: a shared headroom pool is configured (the PG's size is then its XON only).
    #[arg(long)]
    pub shared_headroom_pool: bool,
    /// mlx5 nic-kernel: the NIC's buffer cell, bytes (1..=4096).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub nic_cell: u64,
    /// Run the worst case in the simulator and bisect for the smallest headroom with zero
    /// lossless drops.
    #[arg(long)]
    pub verify: bool,
    /// --verify: the lossless priority (0..=7).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=7))]
    pub priority: u8,
    /// --verify: senders, each at another frame phase (1..=64).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub senders: u32,
    /// --verify: the switch is sending each sender maximum frames of a lossy priority, so its
    /// PFC frame waits for one.
    #[arg(long)]
    pub reverse_traffic: bool,
    /// One JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The speeds `--speed` takes.
const SPEEDS: &str = "allowed: 10M, 100M, 1G, 2.5G, 5G, 10G, 25G, 40G, 50G, 100G, 200G, 400G, 800G, 1.6T";

/// A value of an option of `lossless headroom` that is refused: what was found and what is
/// allowed.
#[derive(Debug, Clone, PartialEq)]
enum ValueError {
    /// `--speed` is not a rate.
    SpeedSyntax(ParseRateError),
    /// `--speed` is not an IEEE 802.3 rate.
    Speed(Rate),
    /// `--cable` is not whole metres 0..=100000.
    Cable(String),
    /// A duration that does not parse.
    Duration(lossless_sim::scenario::DurationError),
    /// A delay above 1 ms.
    DelayRange(Duration),
    /// `--interface-delay` is neither a delay nor `802.3` or `none`.
    InterfaceDelay(Box<ValueError>),
    /// `--peer-delay` quanta above 65535.
    PeerQuanta(String),
    /// `--peer-delay` is neither a delay, quanta nor `802.3`.
    PeerDelay(Box<ValueError>),
    /// `--asic` names no known ASIC.
    Asic(String),
    /// Not a number of KiB 0..=1000 with up to 3 decimals.
    MilliKb(String),
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueError::SpeedSyntax(e) => write!(f, "{e}; {SPEEDS}"),
            ValueError::Speed(r) => write!(f, "found {r}, {SPEEDS}"),
            ValueError::Cable(s) => {
                write!(f, "found {s:?}, allowed whole metres 0..=100000, e.g. 3m or 100m")
            }
            ValueError::Duration(e) => write!(f, "{e}"),
            ValueError::DelayRange(d) => write!(f, "found {d}, allowed 0..=1 ms"),
            ValueError::InterfaceDelay(e) => write!(f, "{e}; or \"802.3\", \"none\""),
            ValueError::PeerQuanta(s) => write!(f, "found {s:?} quanta, allowed 0..=65535"),
            ValueError::PeerDelay(e) => write!(f, "{e}; or \"802.3\", or pause quanta 0..=65535"),
            ValueError::Asic(s) => {
                let names: Vec<&str> = sonic::ASICS.iter().map(|a| a.name).collect();
                write!(f, "found {s:?}, allowed {}", names.join(", "))
            }
            ValueError::MilliKb(s) => write!(
                f,
                "found {s:?}, allowed a number of KiB 0..=1000 with up to 3 decimals, e.g. 18 or 19.5"
            ),
        }
    }
}

impl std::error::Error for ValueError {}

fn parse_speed(s: &str) -> Result<Rate, ValueError> {
    let r: Rate = s.parse().map_err(ValueError::SpeedSyntax)?;
    if IEEE_RATES.contains(&r) {
        Ok(r)
    } else {
        Err(ValueError::Speed(r))
    }
}

fn parse_cable(s: &str) -> Result<u64, ValueError> {
    let t = s.trim();
    let n = t.strip_suffix('m').unwrap_or(t).trim();
    match n.parse::<u64>() {
        Ok(m) if m <= lossless_sim::experiments::headroom::worst_case::MAX_CABLE_M => Ok(m),
        _ => Err(ValueError::Cable(s.to_string())),
    }
}

fn parse_delay(s: &str) -> Result<Duration, ValueError> {
    let d = lossless_sim::scenario::parse_duration(s).map_err(ValueError::Duration)?;
    if d > Duration::from_ms(1) {
        return Err(ValueError::DelayRange(d));
    }
    Ok(d)
}

fn parse_interface_delay(s: &str) -> Result<InterfaceDelay, ValueError> {
    match s.trim() {
        "802.3" => Ok(InterfaceDelay::Ieee8023),
        "none" | "0" => Ok(InterfaceDelay::None),
        t => parse_delay(t)
            .map(InterfaceDelay::Given)
            .map_err(|e| ValueError::InterfaceDelay(Box::new(e))),
    }
}

fn parse_peer_delay(s: &str) -> Result<PeerDelay, ValueError> {
    let t = s.trim();
    if t == "802.3" {
        return Ok(PeerDelay::Ieee8023);
    }
    let q = t
        .strip_suffix("quanta")
        .or_else(|| t.strip_suffix('q'))
        .unwrap_or(t)
        .trim();
    if !q.is_empty() && q.bytes().all(|b| b.is_ascii_digit()) {
        return match q.parse::<u64>() {
            Ok(n) if n <= 0xFFFF => Ok(PeerDelay::Quanta(n)),
            _ => Err(ValueError::PeerQuanta(s.to_string())),
        };
    }
    parse_delay(t)
        .map(PeerDelay::Given)
        .map_err(|e| ValueError::PeerDelay(Box::new(e)))
}

fn parse_asic(s: &str) -> Result<&'static sonic::Asic, ValueError> {
    sonic::asic(s).ok_or_else(|| ValueError::Asic(s.to_string()))
}

/// A decimal number of KiB with up to three decimals, as thousandths.
fn parse_milli_kb(s: &str) -> Result<u64, ValueError> {
    let bad = || ValueError::MilliKb(s.to_string());
    let (int, frac) = s.trim().split_once('.').unwrap_or((s.trim(), ""));
    if int.is_empty() || frac.len() > 3 || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let whole: u64 = int.parse().map_err(|_| bad())?;
    let milli: u64 = format!("{frac:0<3}").parse().map_err(|_| bad())?;
    if whole > 1000 {
        return Err(bad());
    }
    Ok(whole * 1000 + milli)
}

/// Everything the command computed, as `--json` prints it.
#[derive(Serialize, Debug)]
pub struct HeadroomReport {
    /// The inputs, resolved.
    pub input: Input,
    /// 802.1Qbb Annex N.
    pub annex_n: AnnexNJson,
    /// mlx5 upstream `calculate_xoff`.
    pub mlx5_upstream: mlx5::Xoff,
    /// mlx5 nic-kernel `mlx5e_calculate_buf_sz_and_thresholds`.
    pub mlx5_nic_kernel: mlx5::Buffer,
    /// SONiC's Mellanox model.
    pub sonic: SonicJson,
    /// Each formula's headroom beside Annex N's.
    pub comparison: Vec<Row>,
    /// The simulator's answer, with `--verify`.
    pub verify: Option<VerifyJson>,
}

/// The inputs.
#[derive(Serialize, Debug)]
pub struct Input {
    /// Link speed.
    pub speed_bps: u64,
    /// Cable length.
    pub cable_m: u64,
    /// Largest payload on the link.
    pub mtu_bytes: u64,
    /// Largest lossless payload.
    pub lossless_mtu_bytes: u64,
    /// Largest frame (header, tag, FCS).
    pub frame_bytes: u64,
    /// Largest lossless frame.
    pub lossless_frame_bytes: u64,
    /// One PHY path's delay per direction.
    pub interface_delay_ps: u128,
    /// `802.3`, `none` or `given`.
    pub interface_delay_source: &'static str,
    /// The peer's reaction delay.
    pub peer_delay_ps: u128,
    /// `802.3`, `quanta` or `given`.
    pub peer_delay_source: &'static str,
}

/// One Annex N term.
#[derive(Serialize, Debug)]
pub struct TermJson {
    /// Which term.
    pub name: &'static str,
    /// Bit times at the link rate.
    pub bit_times: u64,
    /// Bytes (bit times / 8, rounded up).
    pub bytes: u64,
}

/// Annex N in JSON.
#[derive(Serialize, Debug)]
pub struct AnnexNJson {
    /// The six terms.
    pub terms: Vec<TermJson>,
    /// Their sum.
    pub total_bit_times: u64,
    /// The headroom.
    pub headroom_bytes: u64,
}

/// SONiC in JSON: the ASIC used and the model's figures.
#[derive(Serialize, Debug)]
pub struct SonicJson {
    /// The preset.
    pub asic: &'static str,
    /// Cell size used.
    pub cell_bytes: u64,
    /// Pipeline latency used, thousandths of a KiB.
    pub pipeline_latency_milli_kb: u64,
    /// Whether the port counts as 8 lanes.
    pub eight_lanes: bool,
    /// The model.
    #[serde(flatten)]
    pub model: sonic::Sonic,
}

/// One formula beside Annex N (and the simulator, with `--verify`).
#[derive(Serialize, Debug, Clone)]
pub struct Row {
    /// `annex_n`, `mlx5_upstream`, `mlx5_nic_kernel`, `sonic`.
    pub formula: &'static str,
    /// Its headroom: the buffer above the XOFF threshold.
    pub headroom_bytes: u64,
    /// Headroom minus Annex N's.
    pub vs_annex_n_bytes: i64,
    /// Headroom over Annex N's.
    pub vs_annex_n_ratio: f64,
    /// Headroom minus the simulator's need (`--verify`): positive over-provisions.
    pub vs_verified_bytes: Option<i64>,
    /// Headroom over the simulator's need.
    pub vs_verified_ratio: Option<f64>,
    /// What it counts.
    pub counts: &'static str,
    /// What it leaves out.
    pub leaves_out: &'static str,
}

/// `--verify`'s answer in JSON.
#[derive(Serialize, Debug)]
pub struct VerifyJson {
    /// The simulator's answer.
    #[serde(flatten)]
    pub verified: Verified,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

const ANNEX_N_COUNTS: &str = "the frame being received at the decision, the PFC frame, the cable's round trip at \
     5 ns/m, both PHY paths (802.3 bounds), the peer's 802.3 reaction, the peer's last frame";
const ANNEX_N_LEAVES: &str =
    "a busy transmitter delaying the PFC frame on top of the frame being received; cells";
const UPSTREAM_COUNTS: &str = "301 bytes per Gb/s (delays and responses folded together) + 2.16 per metre per \
     Gb/s + 2.72 MTUs, speed floored at 40G";
const UPSTREAM_LEAVES: &str = "the rate's own 802.3 reaction and PHY figures, cell overhead beyond 2.72 MTUs; \
     cables of 1000 m or more are refused";
const NIC_COUNTS: &str = "cable round trip at 1.98e8 m/s, twice the MAC response (quanta table), one frame, \
     all scaled by cell/84 for minimum frames, plus one frame";
const NIC_LEAVES: &str = "PHY delays beyond the quanta table; rates below 25G take 25G's 80 quanta";
const SONIC_COUNTS: &str = "port MTU + cable at 1.98e8 m/s + 2 gearboxes + MAC/PHY + peer response (its own \
     table: 10G 67 quanta) + Spectrum-4/5 tile, scaled by cell occupancy, + lossless MTU, rounded up to 1 KiB";
const SONIC_LEAVES: &str =
    "802.3's PHY bounds (0.8 KiB MAC/PHY instead); XON (pipeline latency) is kept apart";

/// Why the formulas cannot be computed for the arguments.
#[derive(Debug)]
pub enum ComputeError {
    /// The ASIC's cell size is unknown and `--cell` is not given.
    NoCell(&'static str),
    /// The SONiC model refused its input.
    Sonic(sonic::InputError),
}

impl std::fmt::Display for ComputeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ComputeError::NoCell(asic) => write!(
                f,
                "--asic {asic}: its cell size is in none of the sources this tool was checked against; give \
                 --cell (any of 129..=192 bytes gives the worst-case factor 3)"
            ),
            ComputeError::Sonic(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ComputeError {}

/// Computes every formula for `args` (the simulator aside).
pub fn compute(args: &HeadroomArgs) -> Result<HeadroomReport, ComputeError> {
    let rate = args.speed;
    let lossless_mtu = args.lossless_mtu.unwrap_or(args.mtu);
    let frame = headroom::frame_bytes(args.mtu.max(lossless_mtu));
    let lossless_frame = headroom::frame_bytes(lossless_mtu);
    let annex = AnnexNInput {
        rate,
        cable_m: args.cable,
        max_frame_bytes: frame,
        lossless_frame_bytes: lossless_frame,
        interface_delay: args.interface_delay,
        peer_delay: args.peer_delay,
    }
    .compute();
    let speed_mbps = rate.bps() / 1_000_000;
    let mbps32 = u32::try_from(speed_mbps).unwrap_or(u32::MAX);
    let cable32 = u32::try_from(args.cable).unwrap_or(u32::MAX);
    let mtu32 = args.mtu as u32;
    let upstream = mlx5::calculate_xoff(mbps32, cable32, mtu32, mtu32, mlx5::DEFAULT_CELL_BYTES);
    let oper_mtu = u16::try_from(args.mtu + headroom::FRAME_OVERHEAD_BYTES).unwrap_or(u16::MAX);
    let nic = mlx5::buffer_and_thresholds(mbps32, cable32, oper_mtu, args.nic_cell as u16);
    let asic = args.asic;
    let cell = args
        .cell
        .or(asic.cell_bytes)
        .ok_or(ComputeError::NoCell(asic.name))?;
    let lanes = args
        .lanes
        .unwrap_or_else(|| speed_mbps.div_ceil(asic.lane_mbps).clamp(1, 8));
    let pipeline = args.pipeline_latency.unwrap_or(asic.pipeline_latency_milli_kb);
    let model = sonic::Input {
        speed_mbps,
        cable_m: args.cable,
        port_mtu: args.mtu,
        lossless_mtu,
        small_packet_percentage: args.small_packet_percentage,
        cell_bytes: cell,
        pipeline_latency_milli_kb: pipeline,
        mac_phy_delay_milli_kb: asic.mac_phy_delay_milli_kb,
        peer_response_milli_kb: asic.peer_response_milli_kb,
        gearbox_delay_ns: args.gearbox_delay,
        eight_lanes: lanes >= 8,
        tile: asic.tile,
        shared_headroom_pool: args.shared_headroom_pool,
    }
    .compute()
    .map_err(ComputeError::Sonic)?;
    let a = annex.headroom_bytes;
    let row = |formula, h: u64, counts, leaves_out| Row {
        formula,
        headroom_bytes: h,
        vs_annex_n_bytes: h as i64 - a as i64,
        vs_annex_n_ratio: ratio(h, a),
        vs_verified_bytes: None,
        vs_verified_ratio: None,
        counts,
        leaves_out,
    };
    let comparison = vec![
        row("annex_n", a, ANNEX_N_COUNTS, ANNEX_N_LEAVES),
        row(
            "mlx5_upstream",
            u64::from(upstream.xoff_bytes),
            UPSTREAM_COUNTS,
            UPSTREAM_LEAVES,
        ),
        row(
            "mlx5_nic_kernel",
            u64::from(nic.headroom_bytes),
            NIC_COUNTS,
            NIC_LEAVES,
        ),
        row("sonic", model.xoff_bytes, SONIC_COUNTS, SONIC_LEAVES),
    ];
    let (id_src, pd_src) = (
        match args.interface_delay {
            InterfaceDelay::Ieee8023 => "802.3",
            InterfaceDelay::None => "none",
            InterfaceDelay::Given(_) => "given",
        },
        match args.peer_delay {
            PeerDelay::Ieee8023 => "802.3",
            PeerDelay::Quanta(_) => "quanta",
            PeerDelay::Given(_) => "given",
        },
    );
    Ok(HeadroomReport {
        input: Input {
            speed_bps: rate.bps(),
            cable_m: args.cable,
            mtu_bytes: args.mtu,
            lossless_mtu_bytes: lossless_mtu,
            frame_bytes: frame,
            lossless_frame_bytes: lossless_frame,
            interface_delay_ps: args.interface_delay.duration(rate).as_ps(),
            interface_delay_source: id_src,
            peer_delay_ps: args.peer_delay.duration(rate).as_ps(),
            peer_delay_source: pd_src,
        },
        annex_n: annex_json(&annex),
        mlx5_upstream: upstream,
        mlx5_nic_kernel: nic,
        sonic: SonicJson {
            asic: asic.name,
            cell_bytes: cell,
            pipeline_latency_milli_kb: pipeline,
            eight_lanes: lanes >= 8,
            model,
        },
        comparison,
        verify: None,
    })
}

fn annex_json(a: &AnnexN) -> AnnexNJson {
    AnnexNJson {
        terms: a
            .terms
            .iter()
            .map(|t| TermJson {
                name: t.kind.name(),
                bit_times: t.bit_times,
                bytes: t.bit_times.div_ceil(8),
            })
            .collect(),
        total_bit_times: a.total_bit_times,
        headroom_bytes: a.headroom_bytes,
    }
}

/// Runs `lossless headroom`.
pub fn run(args: HeadroomArgs) -> anyhow::Result<ExitCode> {
    let mut report = match compute(&args) {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if args.verify {
        let setup = Setup {
            rate: args.speed,
            cable_m: args.cable,
            mtu: args.mtu,
            lossless_mtu: report.input.lossless_mtu_bytes,
            interface_delay: args.interface_delay.duration(args.speed),
            peer_delay: args.peer_delay.duration(args.speed),
            priority: args.priority,
            senders: args.senders,
            reverse_traffic: args.reverse_traffic,
        };
        let bar = ProgressBar::new(1);
        bar.set_style(
            ProgressStyle::with_template("{spinner} verify [{bar:40}] {pos}/{len} runs, {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        let v = verify(&setup, &mut |p| {
            bar.set_length(u64::from(p.estimated_total));
            bar.set_position(u64::from(p.runs));
        });
        bar.finish_and_clear();
        let v = v?;
        let need = v.headroom_bytes;
        for r in &mut report.comparison {
            r.vs_verified_bytes = Some(r.headroom_bytes as i64 - need as i64);
            r.vs_verified_ratio = Some(ratio(r.headroom_bytes, need));
        }
        report.verify = Some(VerifyJson { verified: v });
    }
    if args.json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        out!("{}", text::render(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}
