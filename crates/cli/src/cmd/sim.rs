//! `lossless sim`: run a simulation scenario (a built-in by name, or a TOML file) and print
//! what PFC did: per port × priority and per flow, with a frame conservation check.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant as WallClock;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lossless_files::{Claims, Commit, InputError, Output};
use lossless_live::signals;
use lossless_proto::units::Duration;
use lossless_sim::config::SimConfig;
use lossless_sim::experiments::cn_twin::CnTwin;
use lossless_sim::experiments::ranks::{self, Transport};
use lossless_sim::observer::{NoObserver, Observer};
use lossless_sim::scenario::{self, BUILTINS, Builtin, Overrides, ScenarioError};
use lossless_sim::sim::exchange::Shipped;
use lossless_sim::trace::csv::{SERIES_FILES, SeriesSink, series_bin};
use lossless_sim::trace::html::HtmlReport;
use lossless_sim::trace::pcap::PcapSink;
use lossless_sim::trace::split::Recorder;
use lossless_sim::trace::vcd::VcdSink;
use lossless_sim::{Report, Simulator, SummaryOptions};

use super::{Say, Slicer};

/// Arguments of `lossless sim`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless sim
      four-bridge (the default): congestion spreading hop by hop back to three clients
  lossless sim two-chip --vcd two-chip.vcd
      document 002's two MACs, both release cases; open the waveform in GTKWave
  lossless sim incast --set senders=32 --json out.json --report rpt/
      32-to-1 incast at 100 Gb/s; metrics with units in their keys, HTML report with plots
  lossless sim four-bridge --set 'defaults.flow_control=\"off\"'
      the same fabric without PFC: lossless frames are dropped
  lossless sim incast --set 'defaults.interface_delay=\"802.3\"'
      with the PHY delays 802.1Qbb Annex N headroom counts
  lossless sim fabric.toml --top 20 --report rpt/
      a large fabric: totals, the 20 port priorities paused longest and with the largest
      buffers, the 20 slowest flows (--full lists all); the report draws the topology with
      the order PFC spread in, heat maps of pause and buffer, FCT slowdown by flow size
  lossless sim --show incast > my.toml && lossless sim my.toml
      start your own scenario from a built-in (examples/scenarios/README.md lists every key)
  lossless sim incast --sweep senders=2..=64/2 --sweep seed=1..=3 --json sweep.jsonl
      a sweep on every CPU, one JSON line per point; add --shard I/N to split it over machines
  lossless sim incast --sweep senders=2,4,8,16 --sweep 'defaults.flow_control=\"pfc\",\"off\"' --report rpt/
      each metric against senders, one line with PFC and one without, and a table of the points
  cd simulation && lossless sim --ns3 mix/config.txt
      an HPCC ns-3 experiment, unchanged: reads the config.txt of the fork's `third` and the
      files it names (relative to the current directory, as the fork opens them, else to the
      config's), says which keys it ignores, writes fct.txt, pfc.txt (and qlen.txt) in the
      fork's formats at the config's paths, so the fork's scripts keep working (docs/ns3.md)
  C=../shared/corpus/hpcc-ns3/ft-k4-websearch
  lossless sim --ns3 $C/config.txt --ns3-topology $C/topology.txt --ns3-flows $C/flow.txt \\
               --ns3-out out/ --json out/report.json --report out/rpt
      the corpus's 16-host fat-tree with WebSearch traffic at 30 % load and DCQCN; outputs under
      out/ instead; compare out/fct.txt with $C/fct.txt (slowdown p50 1.44 vs 1.45); the
      report's plots span the busy milliseconds from 2 s, where the fork starts the flows
  lossless sim incast-dcqcn --report rpt/
      8 RoCEv2 QPs under DCQCN converge to fair shares; the report plots each QP's rate
  lossless sim incast --set senders=8 --series ser/ --series-bin 10us
      queue depth, pause state and per-flow rate per 10 µs as CSV for pandas/polars:
      ser/queues.csv, ser/pause.csv, ser/flows.csv (docs/series.md has the columns)
  lossless sim four-bridge-cn
      document 003 §3.3: the four-bridge fabric with congestion notification, run side by side
      with a twin without it: how much less PFC fired, what the victim flow gained
  lossless sim cc-compare --json cc.json --report cc/
      a 16-to-1 incast and a k = 4 fat tree with WebSearch at 30 % (the built-ins incast-cc
      and fat-tree-websearch), each under DCQCN, HPCC, TIMELY, DCTCP, HPCC-PINT and no CC
      with the HPCC ns-3 reference's parameters: one table of slowdown p50/p95/p99 overall and
      per flow size, PFC XOFF and pause time, drops, ECN marks, rate cuts and events/s per
      run; the page plots slowdown by flow size, one line per CC, per fabric. --set goes to
      the fabrics that have the value (senders=64, fabric.k=8) and qp.hpcc.eta=0.9 to HPCC's
      runs only; --show cc-compare lists each run as a command of its own
  lossless sim incast-dcqcn --set 'qp.preset=\"connectx\"' --set senders=16
      the same incast with NVIDIA's DCQCN defaults (a [[flow]] with transport = \"rocev2\" is a
      QP; [qp], [ecn], [qcn] and qp.dcqcn.NAME set congestion notification)

Outputs: FILE may be `-` (standard output; the summary then goes to standard error). Files are
written beside their final name and renamed into place when complete, so a failed run leaves no
half file; DIR is created if missing, but not the directories above it. An output may not be an
input or another output. docs/limits.md lists the limits (file sizes, sweep points, --jobs).

Exit status: 0 when the run conserved every frame (a sweep: every point); 1 when the
conservation check or an engine failed; 2 when the scenario does not load (the message names
file, line and key), the command line is wrong or an output cannot be written; 130 (SIGINT) or
143 (SIGTERM) when interrupted: a single run then writes no output, a sweep keeps the points it
finished.")]
pub struct SimArgs {
    /// Built-in scenario name (see --list) or a scenario TOML file; default: four-bridge.
    /// `cc-compare` runs two built-ins under every congestion control (see the examples).
    pub scenario: Option<String>,
    /// Run an experiment of the HPCC ns-3 simulator from its config.txt (and the topology and
    /// flow files it names); writes its fct.txt, pfc.txt (and qlen.txt) in the fork's formats.
    /// See `lossless sim --help` and docs/ns3.md.
    #[arg(long, value_name = "CONFIG", conflicts_with_all = ["scenario", "list", "show", "set", "sweep", "duration"])]
    pub ns3: Option<PathBuf>,
    /// With --ns3: write fct.txt, pfc.txt and qlen.txt into DIR (by the file names the config
    /// gives) instead of at the config's paths.
    #[arg(long, value_name = "DIR", requires = "ns3")]
    pub ns3_out: Option<PathBuf>,
    /// With --ns3: the topology file, instead of the config's TOPOLOGY_FILE.
    #[arg(long, value_name = "FILE", requires = "ns3")]
    pub ns3_topology: Option<PathBuf>,
    /// With --ns3: the flow file, instead of the config's FLOW_FILE.
    #[arg(long, value_name = "FILE", requires = "ns3")]
    pub ns3_flows: Option<PathBuf>,
    /// List the built-in scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// Seed of every random choice (replaces the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Simulated time to run, e.g. 500us, 2ms (replaces the scenario's).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Override a scenario value: PATH=VALUE, e.g. `senders=32`, `defaults.flow_control="off"`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Write the metrics as JSON (every key names its unit).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one pcapng per link direction into DIR (PFC/PAUSE as MAC Control frames; RoCEv2
    /// frames whole, as tshark decodes them; other data frames' first 64 bytes, with their
    /// length on the wire).
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// Write a VCD waveform (GTKWave) of every port: tx, request, paused, received pause time,
    /// and document 002's fc_rdy, fc and mac_tx_state (idle/data/pause).
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// Write an HTML report with SVG plots into DIR (opens with no network): the topology with
    /// links coloured by time paused and the order PFC spread in, throughput per priority,
    /// buffer occupancy and pauses (heat maps past 8 series), FCT CDF and slowdown by flow size.
    /// With --sweep: each headline metric (drops, XOFF sent, longest pause, throughput, flows
    /// completed, FCT and slowdown p99) against the swept parameter, one line per value of the
    /// other axes, and a table of every point (at most 10,000 points).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// With --report: the flows whose throughput over time the page draws, comma-separated:
    /// `victims` (the victim accounting's victims), `slowest` (the --top flows by FCT slowdown,
    /// at most 12) or a flow name pattern, `*` for any run of characters, e.g.
    /// `victim,lossless:*`. Default: victims,slowest.
    #[arg(long, value_name = "FLOWS", value_parser = lossless_sim::trace::html::parse_flow_picks, requires = "report")]
    pub plot_flows: Option<lossless_sim::trace::html::FlowPicks>,
    /// Write time series as CSV into DIR, for pandas/polars: queues.csv (egress queue depth
    /// per port and priority: peak and end of each bin), pause.csv (time each port priority
    /// was paused in each bin) and flows.csv (each flow's delivered bytes and rate per bin,
    /// counted while its bits arrived, so never above the line rate). docs/series.md has the
    /// columns.
    #[arg(long, value_name = "DIR")]
    pub series: Option<PathBuf>,
    /// The bin width of --series, e.g. 10us: at least 1us, at most 1,000,000 bins in the run
    /// (default: the run over 1000, at least 1us).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "series")]
    pub series_bin: Option<Duration>,
    /// Print the scenario file of a built-in and exit.
    #[arg(long)]
    pub show: bool,
    /// Do not print the summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Rows per summary table when a run is too large to list whole: the top N port
    /// priorities by time paused and by peak buffer, flows by FCT slowdown, QPs by rate cuts,
    /// ECN/QCN ports by marks, switches by peak buffer (a table of at most N rows is shown
    /// whole; the JSON always has everything).
    #[arg(long, value_name = "N", default_value_t = lossless_sim::report::summary::DEFAULT_TOP as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub top: u32,
    /// List every port, flow, QP and switch in the summary, however many.
    #[arg(long)]
    pub full: bool,
    /// Do not run the twin without congestion notification. By default a scenario with ECN
    /// marking, QCN or DCQCN/QCN QPs is also run with all of it off (in parallel), and the
    /// summary and JSON say how much less PFC fired and what each flow got without it.
    #[arg(long)]
    pub no_twin: bool,
    /// Run the scenario once per value: PATH=V1,V2,... or PATH=A..=B[/STEP] (integers); repeat
    /// for a cartesian product, e.g. `--sweep senders=2..=64/2 --sweep seed=1..=5`. PATH is
    /// `seed` or any --set path. Prints a table; --json FILE gets one JSON line per point.
    #[arg(long, value_name = "PATH=VALUES", value_parser = super::sweep::parse_axis)]
    pub sweep: Vec<super::sweep::Axis>,
    /// Run only part of a sweep, for splitting it across machines: shard I of N (1 ≤ I ≤ N)
    /// takes points I-1, I-1+N, ...; each JSON line keeps its point number, so the shards'
    /// files concatenate and sort into the whole sweep.
    #[arg(long, value_name = "I/N", value_parser = super::sweep::parse_shard, requires = "sweep")]
    pub shard: Option<super::sweep::Shard>,
    /// Worker threads for a sweep or cc-compare, 1..=1024 (default: one per CPU; never more
    /// than the points); every point is single-threaded and deterministic, so the results do
    /// not depend on this.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=super::sweep::MAX_JOBS as i64))]
    pub jobs: Option<u16>,
    /// Split the fabric over N threads, 1..=1024: each runs partitions (groups of switches
    /// with their hosts; one per thread by default, more with --partitions, placed each
    /// window)
    /// and they run in windows of the cut links' smallest delay; the report is the
    /// one-thread run's, byte for byte, and so are --ns3's fct.txt, pfc.txt and qlen.txt and
    /// the trace outputs (--pcap, --vcd, --report, --series: each partition records its calls,
    /// merged window by window into one run's order) (docs/parallel.md). Default: the cores
    /// that help — the most threads, up to the cores, for which every thread's partition has
    /// windows of at least 200 ns in which its ports can send 2 MB at line rate (0.5 MB on two
    /// threads: a k = 4 fat tree with 1 µs links takes two); otherwise one, and one with the trace outputs or --ns3's
    /// queue monitor (ask for threads to split them). Splits flows, workloads, RoCEv2 QPs under DCQCN, HPCC, HPCC-PINT, TIMELY and
    /// DCTCP, PAUSE/PFC, ECN, ETS, QCN, bit errors, DCBX and the pathology parts (stalls,
    /// storm prevention, pfcwd, static routes, link events, the deadlock detector, victims).
    /// Links shorter than ~40 m (windows under 200 ns) make it slower than one thread.
    #[arg(long, value_name = "N", conflicts_with = "sweep",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Split the fabric into P partitions, P ≥ --threads, placed on the threads each
    /// window by the events each handled in the window before (longest first to the least
    /// loaded thread). Default: --threads, one on each for the whole run (on a 16-core machine
    /// four a thread, placed, lost to one a thread at 2 to 16 threads); at most the fabric's
    /// groups (first-tier switches with their hosts, and each switch above). Each partition
    /// holds a copy of most of the fabric: memory grows with P
    /// (docs/parallel.md, "The scheduler"). With --threads 1, P > 1 runs the P partitions on
    /// the one thread (what the split costs, measured on one core; the same report). With
    /// --mpi on R ranks: P in all, at least R × T (default R × T, one a thread), each rank a
    /// fixed block of ⌊P/R⌋ or ⌈P/R⌉ placed on its T threads each window (a partition
    /// never leaves its rank).
    #[arg(long, value_name = "P", conflicts_with_all = ["sweep", "partition"],
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub partitions: Option<u16>,
    /// How partitions go onto threads when there are more partitions than threads: `events`
    /// (default: each window, weighed by the events each handled in the window before, and
    /// moved only where that leaves the busiest thread 5 % less busy; the same placement on
    /// every machine), `time` (weighed by the time each took), or
    /// `static` (partition p on thread p mod threads throughout). The report is the same.
    /// With --mpi, each rank places its own partitions on its threads.
    #[arg(long, value_name = "HOW", conflicts_with = "sweep")]
    pub placement: Option<PlacementArg>,
    /// How a thread that finished its window waits for the others (as OpenMP's
    /// OMP_WAIT_POLICY): `auto` (default: spins up to 500 µs, then sleeps; sleeps at once
    /// when the threads of all ranks on this machine outnumber its cores, and for a while
    /// after spins ran out, as on a loaded machine) or `passive` (sleeps at once: a machine
    /// shared with other work). The report is the same.
    #[arg(long, value_name = "POLICY", conflicts_with = "sweep")]
    pub wait_policy: Option<WaitPolicyArg>,
    /// Split the fabric as FILE says instead of the automatic tier-and-group partitioning
    /// (alone: one thread per partition of the file; with --threads N: the file's partitions,
    /// at least N, placed on N threads as --placement says; with --mpi: at least ranks ×
    /// threads of them, as --partitions P): a line `NAME PARTITION` per node, or `PREFIX* PARTITION` for every node whose
    /// name starts with PREFIX, `#` comments; every node placed, every partition used
    /// (docs/parallel.md). --show-partition prints the automatic one to start from.
    #[arg(long, value_name = "FILE", conflicts_with = "sweep")]
    pub partition: Option<PathBuf>,
    /// Print the automatic partitioning of the run (the partitions for --threads N, or for the
    /// default's count; --partitions P sets them) as a partition file for --partition, and
    /// exit.
    #[arg(long, conflicts_with_all = ["sweep", "partition", "mpi"])]
    pub show_partition: bool,
    /// Run over MPI ranks: `mpirun -n R lossless sim --mpi [--threads T] [--partitions P] ...`
    /// (a scenario or --ns3) splits the fabric into R × T partitions (or P, at least R × T,
    /// placed on each rank's threads each window), T threads on each rank; rank 0 writes
    /// the outputs (the report, --ns3's fct.txt and pfc.txt, and the trace outputs --pcap,
    /// --vcd, --report and --series are the one-thread run's, byte for byte: each partition's
    /// trace records are gathered on rank 0 window by window and merged there), the others
    /// write nothing. Splits and refuses what --threads does (the pathology parts, QCN, bit
    /// errors and DCBX split). Needs a build with `--features mpi` (docs/parallel.md: choosing
    /// R and T, Slurm).
    #[arg(long, conflicts_with_all = ["sweep", "show", "list"])]
    pub mpi: bool,
}

/// A `--duration` or `--series-bin` that is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DurationError {
    /// Not a duration.
    Syntax(scenario::DurationError),
    /// Zero.
    Zero(String),
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DurationError::Syntax(e) => write!(f, "{e}"),
            DurationError::Zero(s) => write!(f, "found {s:?}, allowed a positive duration"),
        }
    }
}

impl std::error::Error for DurationError {}

/// `--duration`: a positive duration (a run of no time is refused here, naming the option).
fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    match scenario::parse_duration(s).map_err(DurationError::Syntax)? {
        d if d == Duration::ZERO => Err(DurationError::Zero(s.to_string())),
        d => Ok(d),
    }
}

/// Largest scenario file read, bytes (docs/limits.md).
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

/// A scenario name that is neither a built-in nor a file that can be read.
#[derive(Debug)]
pub enum ResolveError {
    /// No built-in of that name and no such file (and the name does not end in `.toml`).
    NotFound(String),
    /// The file cannot be read.
    Read(InputError),
}

impl std::fmt::Display for ResolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResolveError::NotFound(name) => {
                let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
                write!(
                    f,
                    "{name}: not a built-in scenario (allowed: {}) and no such file",
                    names.join(", ")
                )
            }
            ResolveError::Read(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ResolveError {}

/// The scenario to run: a built-in, or a file read once (a sweep loads it per point).
pub enum Scenario {
    /// A built-in scenario.
    Builtin(&'static Builtin),
    /// A scenario file and its text.
    File {
        /// The file.
        path: PathBuf,
        /// Its text.
        text: String,
    },
}

impl Scenario {
    /// The built-in `name`, else the file `name` read through `lossless-files` (a regular
    /// file of at most [`MAX_SCENARIO_BYTES`]).
    pub fn resolve(name: &str) -> Result<Scenario, ResolveError> {
        if let Some(b) = scenario::builtin(name) {
            return Ok(Scenario::Builtin(b));
        }
        let path = PathBuf::from(name);
        match lossless_files::read_input_text(&path, "scenario", MAX_SCENARIO_BYTES) {
            Ok(text) => Ok(Scenario::File { path, text }),
            Err(InputError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && !name.ends_with(".toml") =>
            {
                Err(ResolveError::NotFound(name.to_string()))
            }
            Err(e) => Err(ResolveError::Read(e)),
        }
    }

    /// Builds the scenario with `ov` applied.
    pub fn load(&self, ov: &Overrides) -> Result<SimConfig, ScenarioError> {
        match self {
            Scenario::Builtin(b) => scenario::load(b.name, ov),
            Scenario::File { path, text } => {
                scenario::load_str(text, &path.display().to_string(), path.parent(), ov)
            }
        }
    }

    /// Checks the paths a sweep varies against the scenario and the other options
    /// ([`scenario::check_sweep`]).
    pub fn check_sweep(&self, ov: &Overrides, paths: &[&str]) -> Result<(), ScenarioError> {
        match self {
            Scenario::Builtin(b) => scenario::check_sweep(b.name, ov, paths),
            Scenario::File { path, text } => {
                scenario::check_sweep_str(text, &path.display().to_string(), ov, paths)
            }
        }
    }

    /// Its name in messages: the built-in's name, or the file.
    pub fn name(&self) -> String {
        match self {
            Scenario::Builtin(b) => format!("{} (built-in)", b.name),
            Scenario::File { path, .. } => path.display().to_string(),
        }
    }

    /// The file, for a scenario file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Scenario::Builtin(_) => None,
            Scenario::File { path, .. } => Some(path),
        }
    }
}

/// The exit status of a command stopped by a signal: 128 + its number (130 for SIGINT, 143
/// for SIGTERM), as shells report a process the signal killed.
pub fn interrupted_status() -> ExitCode {
    const SIGINT: i32 = 2;
    ExitCode::from((128 + signals::stop_signal().unwrap_or(SIGINT)).clamp(0, 255) as u8)
}

/// Runs `lossless sim`.
pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    let compare = args.ns3.is_none() && args.scenario.as_deref() == Some(super::cc_compare::NAME);
    if args.jobs.is_some() && args.sweep.is_empty() && !compare && !args.list && !args.show {
        errln!(
            "error: --jobs is for --sweep and cc-compare: a single run is single-threaded (see --threads)"
        );
        return Ok(ExitCode::from(2));
    }
    if args.mpi {
        return super::sim_mpi::run(args);
    }
    run_on(args, None)
}

/// Runs `lossless sim` here, or as rank 0 of the ranks `mpi` reaches (which then run the
/// same scenario with [`super::sim_mpi`]).
pub(super) fn run_on(args: SimArgs, mpi: Option<&mut dyn Transport>) -> anyhow::Result<ExitCode> {
    if args.list {
        let w = BUILTINS
            .iter()
            .map(|b| b.name.len())
            .chain([super::cc_compare::NAME.len()])
            .max()
            .unwrap_or(0);
        for b in BUILTINS {
            outln!("{:<w$}  {}", b.name, b.summary)?;
        }
        outln!("{:<w$}  {}", super::cc_compare::NAME, super::cc_compare::SUMMARY)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(config) = &args.ns3 {
        return super::ns3::run(&args, config, mpi);
    }
    let name = args.scenario.as_deref().unwrap_or(BUILTINS[0].name);
    if name == super::cc_compare::NAME {
        if args.show {
            out!("{}", super::cc_compare::show())?;
            return Ok(ExitCode::SUCCESS);
        }
        return super::cc_compare::run(&args);
    }
    if args.show {
        let b = scenario::builtin(name)
            .with_context(|| format!("{name} is not a built-in scenario (see --list)"))?;
        out!("{}", b.text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let scenario = match Scenario::resolve(name) {
        Ok(s) => s,
        Err(msg) => {
            errln!("error: {msg}");
            return Ok(ExitCode::from(2));
        }
    };
    if !args.sweep.is_empty() {
        return super::sweep::run(&args, &scenario);
    }
    let ov = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        duration: args.duration,
    };
    let config = match scenario.load(&ov) {
        Ok(c) => c,
        Err(e) => {
            // the message names file, line, key, what was found and what is allowed
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if args.show_partition {
        return show_partition(&args, &config);
    }
    // every output is checked and opened before the run: a bad path fails now, not after it
    let mut claims = Claims::new();
    if let Some(p) = scenario.path() {
        claims.input("the scenario", p);
    }
    if let Some(p) = &args.json {
        claims.output("--json", p)?;
    }
    claim_extras(&args, &config, &mut claims)?;
    // before any output exists: a signal from now on stops the run and removes them
    signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
    let json = args.json.as_deref().map(Output::create).transpose()?;
    let vcd = match &args.vcd {
        Some(p) => Some(VcdSink::new(&config, Output::create(p)?)?),
        None => None,
    };
    let to_stdout =
        json.as_ref().is_some_and(Output::is_stdout) || vcd.as_ref().is_some_and(|v| v.get_ref().is_stdout());
    let say = Say::new(args.quiet, to_stdout);
    // the twin without congestion notification runs on another thread meanwhile
    let twin = if args.no_twin {
        None
    } else {
        CnTwin::spawn(&config)
    };
    let (pcap, html) = open_extras(&args, &config)?;
    if !config.description.is_empty() {
        say.line(format_args!("{}: {}\n", config.name, config.description))?;
    }
    let mut wrote = Vec::new();
    // every output file waits here until all are written: one that fails leaves the others'
    // old files as they were
    let mut all = Commit::new();
    let ran = match simulate(
        &args,
        name,
        config,
        twin,
        (pcap, (vcd, html)),
        (&mut wrote, &mut all),
        mpi,
    )? {
        Ok(ran) => ran,
        Err(status) => return Ok(status),
    };
    let report = ran.report;
    if let Some(mut out) = json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        out.write_all_named(b"\n")?;
        if !out.is_stdout() {
            wrote.push(out.path().display().to_string());
        }
        all.add(out.finish()?);
    }
    all.commit()?;
    // the summary comes after the outputs are in place: a reader of it that goes away
    // (`| head`) loses nothing else
    say.text(&report.summary_with(&SummaryOptions {
        top: args.top as usize,
        full: args.full,
    }))?;
    say.line(format_args!(
        "wall {:.3} s, {:.2} M events/s, {:.3} ms simulated per wall second",
        ran.wall_s,
        report.events as f64 / ran.wall_s.max(1e-9) / 1e6,
        ran.simulated_s * 1e3 / ran.wall_s.max(1e-9)
    ))?;
    for w in &wrote {
        say.line(format_args!("wrote {w}"))?;
    }
    Ok(run_status(&report))
}

/// Runs the scenario `name` with the outputs in `extras` observing (none: the plain run
/// observes nothing) and adds the comparison with its CN `twin`; the outputs are finished
/// into `all`. `Ok(Err(status))` when a signal interrupted it (nothing is written).
fn simulate(
    args: &SimArgs,
    name: &str,
    config: SimConfig,
    twin: Option<CnTwin>,
    (pcap, (vcd, html)): Extras,
    (wrote, all): (&mut Vec<String>, &mut Commit),
    mpi: Option<&mut dyn Transport>,
) -> anyhow::Result<Result<Ran, ExitCode>> {
    let built = || format!("{name}: the scenario loads but cannot be built");
    let traced = pcap.is_some() || vcd.is_some() || html.0.is_some() || html.1.is_some();
    // (the default stays one thread with these: the threads that help are asked for)
    let split = args.threads.is_some() || args.partition.is_some() || args.partitions.is_some();
    let threads = if traced && split && mpi.is_none() {
        threads_for(args, &config, twin.is_some())?
    } else {
        1
    };
    if traced && (splits(args, threads)? || mpi.is_some()) {
        // each partition's trace records merged window by window (`trace::split`; over
        // ranks, gathered on rank 0)
        let extras = (pcap, (vcd, html));
        let recorder = |_| Recorder::<Extras>::new();
        let ran = match mpi {
            Some(tr) => simulate_traced_ranks(args, name, &config, tr, extras, &recorder, |r| r)?,
            None => simulate_traced(args, name, &config, threads, extras, &recorder, |r| r)?,
        };
        let (mut ran, _, mut extras) = match ran {
            Ok(done) => done,
            Err(status) => return Ok(Err(status)),
        };
        if let Some(twin) = twin {
            twin.compare_into(&mut ran.report);
        }
        let end = ran.end;
        finish_extras(args, &mut extras, end, &ran.report, wrote, all)?;
        Ok(Ok(ran))
    } else if traced {
        let mut sim = Simulator::with_observer(config, (pcap, (vcd, html))).with_context(built)?;
        let mut ran = execute(&mut sim, &|sim| extras_failed(sim.observer()));
        if ran.interrupted {
            return Ok(Err(interrupted(&sim)));
        }
        let end = sim.now();
        // the page shows what the terminal will: the comparison with the twin run too
        if let Some(twin) = twin {
            twin.compare_into(&mut ran.report);
        }
        finish_extras(args, sim.observer_mut(), end, &ran.report, wrote, all)?;
        Ok(Ok(ran))
    } else if let Some(tr) = mpi {
        let mut ran = match simulate_ranks(args, name, &config, tr, &|_| NoObserver)? {
            Ok((ran, _)) => ran,
            Err(status) => return Ok(Err(status)),
        };
        if let Some(twin) = twin {
            twin.compare_into(&mut ran.report);
        }
        Ok(Ok(ran))
    } else if let threads = threads_for(args, &config, twin.is_some())?
        && splits(args, threads)?
    {
        let mut ran = match simulate_threads(args, name, &config, threads, &|_| NoObserver, &|_, _| {})? {
            Ok((ran, _)) => ran,
            Err(status) => return Ok(Err(status)),
        };
        if let Some(twin) = twin {
            twin.compare_into(&mut ran.report);
        }
        Ok(Ok(ran))
    } else {
        let mut sim = Simulator::with_observer(config, NoObserver).with_context(built)?;
        let mut ran = execute(&mut sim, &|_| false);
        if ran.interrupted {
            return Ok(Err(interrupted(&sim)));
        }
        if let Some(twin) = twin {
            twin.compare_into(&mut ran.report);
        }
        Ok(Ok(ran))
    }
}

/// [`simulate_threads`] with the outputs in `extras` (`trace::split`): each partition's
/// observer (made by `observer`) holds a recorder of its trace calls (`recorder` finds it),
/// whose records a collector thread merges into one simulator's order after every window and
/// replays into `extras`; the outputs are then the one-thread run's, byte for byte. Returns
/// the run, the parts' observers (in partition order) and the outputs to finish;
/// `Ok(Err(status))` when a signal interrupted it (said on stderr; nothing is written).
#[allow(clippy::type_complexity)]
pub(super) fn simulate_traced<P: Observer + Send>(
    args: &SimArgs,
    name: &str,
    config: &SimConfig,
    threads: u16,
    extras: Extras,
    observer: &(dyn Fn(u16) -> P + Sync),
    recorder: fn(&mut P) -> &mut Recorder<Extras>,
) -> anyhow::Result<Result<(Ran, Vec<P>, Extras), ExitCode>> {
    use lossless_sim::trace::split::{Batch, Collector};
    // a few windows in flight at most: the threads wait for the collector, not memory
    // (the partitions the run will have: the collector waits for each one's batch of a window)
    let parts = usize::from(schedule_for(args, config, threads)?.0.parts);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(u16, Batch)>(4 * parts);
    let (ran, extras) = std::thread::scope(|s| {
        let collector = s.spawn(move || {
            let mut c = Collector::new(parts, extras);
            for (part, batch) in rx {
                c.add(usize::from(part), batch);
            }
            c.into_sink()
        });
        let ran = {
            // (dropped when the run ends, however it ends: the collector then finishes)
            let tx = tx;
            simulate_threads(args, name, config, threads, observer, &|part, o: &mut P| {
                // (a collector that panicked is reported at its join)
                let _ = tx.send((part, recorder(o).take()));
            })
        };
        let extras = collector.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (ran, extras)
    });
    Ok(ran?.map(|(ran, parts)| (ran, parts, extras)))
}

/// The threads of a run that may be split: `--threads`, or the partitions of `--partition`'s
/// file, or when neither is given the threads that help (`parallel::auto_threads` over this
/// machine's cores, less one while the CN twin runs beside it), said on stderr when more
/// than one.
pub(super) fn threads_for(args: &SimArgs, config: &SimConfig, twin: bool) -> anyhow::Result<u16> {
    use lossless_sim::experiments::parallel;
    if let Some(t) = args.threads {
        return Ok(t);
    }
    if let Some(file) = &args.partition {
        return partitions_in_file(file);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) - usize::from(twin);
    let mut auto = parallel::auto_threads(config, u16::try_from(cores).unwrap_or(u16::MAX).max(1));
    // (no more threads than the partitions asked for)
    if let Some(p) = args.partitions {
        auto.threads = auto.threads.min(p);
    }
    if auto.threads > 1
        && !args.quiet
        && let Some(w) = auto.window
    {
        errln!(
            "note: running on {} threads, the cores that help: windows of {:.1} ns in which each thread's ports can send {:.1} MB at line rate (docs/parallel.md); --threads 1 runs on one, the report is the same",
            auto.threads,
            w.as_ps() as f64 / 1e3,
            auto.window_bytes as f64 / 1e6
        );
    }
    Ok(auto.threads)
}

/// Whether a run on `threads` threads is split into partitions: on more than one thread, or
/// into more than one partition on one (`--partitions P`, a `--partition` file of more than
/// one: the split run's instructions and memory on one core, its report the same).
pub(super) fn splits(args: &SimArgs, threads: u16) -> anyhow::Result<bool> {
    Ok(threads > 1
        || args.partitions.is_some_and(|p| p > 1)
        || match &args.partition {
            Some(file) => partitions_in_file(file)? > 1,
            None => false,
        })
}

/// The partitions a partition file names (its largest number, plus one).
fn partitions_in_file(file: &Path) -> anyhow::Result<u16> {
    let text = read_partition_file(file)?;
    let most = text
        .lines()
        .filter_map(|l| {
            l.split('#')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse::<u16>()
                .ok()
        })
        .max()
        .with_context(|| format!("--partition {}: no line `NAME PARTITION`", file.display()))?;
    Ok(most.saturating_add(1))
}

/// The text of a partition file, refused past 64 MiB.
fn read_partition_file(file: &Path) -> anyhow::Result<String> {
    let what = || format!("--partition {}", file.display());
    let len = std::fs::metadata(file).with_context(what)?.len();
    anyhow::ensure!(len <= 64 << 20, "{}: {len} bytes, allowed at most 64 MiB", what());
    std::fs::read_to_string(file).with_context(what)
}

/// The partitioning of a run split into `parts` partitions: `--partition`'s file, or the
/// automatic tier-and-group one.
pub(super) fn partitioning_for(
    args: &SimArgs,
    config: &SimConfig,
    parts: u16,
) -> anyhow::Result<lossless_sim::experiments::partition_model::Partitioning> {
    use lossless_sim::experiments::{partition_file, partition_model::Partitioning};
    match &args.partition {
        None => Ok(Partitioning::by_tier(config, parts)),
        Some(file) => {
            let text = read_partition_file(file)?;
            partition_file::parse(config, &text, parts)
                .with_context(|| format!("--partition {}", file.display()))
        }
    }
}

/// The partitions of a run on `threads` threads and how they go onto the threads:
/// `--partition`'s file (at least `threads` partitions), or the automatic partitioning into
/// `--partitions` or `parallel::auto_partitions` partitions; `--placement` (by events by
/// default).
pub(super) fn schedule_for(
    args: &SimArgs,
    config: &SimConfig,
    threads: u16,
) -> anyhow::Result<(
    lossless_sim::experiments::partition_model::Partitioning,
    lossless_sim::experiments::parallel::Schedule,
)> {
    use lossless_sim::experiments::parallel;
    let threads = threads.max(1);
    let parts = match &args.partition {
        Some(file) => {
            let p = partitions_in_file(file)?;
            anyhow::ensure!(
                p >= threads,
                "--partition {}: {p} partition(s), fewer than --threads {threads}: a thread runs at least one",
                file.display()
            );
            p
        }
        None => {
            let p = args
                .partitions
                .unwrap_or_else(|| parallel::auto_partitions(threads));
            anyhow::ensure!(
                p >= threads,
                "--partitions {p}: fewer than --threads {threads}: a thread runs at least one partition"
            );
            p
        }
    };
    placed(args, config, parts, threads)
}

/// `parts` partitions of the run (`partitioning_for`) placed on `threads` threads (of each
/// rank under `--mpi`) as `--placement` says, by events by default.
fn placed(
    args: &SimArgs,
    config: &SimConfig,
    parts: u16,
    threads: u16,
) -> anyhow::Result<(
    lossless_sim::experiments::partition_model::Partitioning,
    lossless_sim::experiments::parallel::Schedule,
)> {
    let part = partitioning_for(args, config, parts)?;
    let schedule = lossless_sim::experiments::parallel::Schedule {
        threads,
        placement: args
            .placement
            .map_or_else(Default::default, PlacementArg::placement),
        wait: args
            .wait_policy
            .map_or_else(Default::default, WaitPolicyArg::policy),
    };
    Ok((part, schedule))
}

/// The partitions of a run over `ranks` MPI ranks (`--mpi`) and how each rank places its own
/// on its `--threads` T: `--partition`'s file or the automatic partitioning into `--partitions`
/// P (default R × T), at least R × T (every thread of every rank runs one; rank r runs the
/// block `ranks::rank_starts`), placed as `--placement` says (by events by default).
pub(super) fn rank_schedule_for(
    args: &SimArgs,
    config: &SimConfig,
    ranks: usize,
) -> anyhow::Result<(
    lossless_sim::experiments::partition_model::Partitioning,
    lossless_sim::experiments::parallel::Schedule,
)> {
    let threads = args.threads.unwrap_or(1).max(1);
    let least = ranks.saturating_mul(usize::from(threads));
    let shape = format!("--mpi on {ranks} ranks × {threads} threads");
    let parts = match (&args.partition, args.partitions) {
        (Some(file), _) => {
            let p = partitions_in_file(file)?;
            anyhow::ensure!(
                usize::from(p) >= least,
                "--partition {}: {p} partition(s), fewer than {least} for {shape}: every thread of every rank runs at least one",
                file.display()
            );
            p
        }
        (None, Some(p)) => {
            anyhow::ensure!(
                usize::from(p) >= least,
                "--partitions {p}: fewer than {least} for {shape}: every thread of every rank runs at least one (--partitions counts the partitions of all ranks)"
            );
            p
        }
        (None, None) => u16::try_from(least)
            .with_context(|| format!("{shape}: more than 65,535 partitions (ranks × threads)"))?,
    };
    placed(args, config, parts, threads)
}

/// `--wait-policy`: how a thread waits at a window's barrier (`barrier::WaitPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WaitPolicyArg {
    /// Spin while the machine has a core for every window thread, then sleep.
    Auto,
    /// Sleep at once.
    Passive,
}

impl WaitPolicyArg {
    /// The engine's policy.
    fn policy(self) -> lossless_sim::experiments::barrier::WaitPolicy {
        use lossless_sim::experiments::barrier::WaitPolicy;
        match self {
            WaitPolicyArg::Auto => WaitPolicy::Auto,
            WaitPolicyArg::Passive => WaitPolicy::Passive,
        }
    }
}

/// `--placement`: how partitions go onto threads (`parallel::Placement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PlacementArg {
    /// Anew each window, by the events each partition handled in the window before.
    Events,
    /// Anew each window, by the time each partition took in the window before.
    Time,
    /// Partition p on thread p mod threads throughout.
    Static,
}

impl PlacementArg {
    /// The engine's placement.
    fn placement(self) -> lossless_sim::experiments::parallel::Placement {
        use lossless_sim::experiments::parallel::Placement;
        match self {
            PlacementArg::Events => Placement::Events,
            PlacementArg::Time => Placement::Time,
            PlacementArg::Static => Placement::Static,
        }
    }
}

/// `--show-partition`: the automatic partitioning of `config` for the run's threads (into
/// `--partitions`, or the automatic count), as a partition file on stdout.
pub(super) fn show_partition(args: &SimArgs, config: &SimConfig) -> anyhow::Result<ExitCode> {
    use lossless_sim::experiments::partition_file;
    let threads = threads_for(args, config, false)?.max(1);
    let (part, _) = schedule_for(args, config, threads)?;
    out!("{}", partition_file::render(config, &part))?;
    Ok(ExitCode::SUCCESS)
}

/// [`simulate`] on `threads` threads (`experiments::parallel`), each part observed by the
/// observer `observer` makes for it: a note first when the windows are too short to pay, a
/// progress bar after one second, a stop at the next window on SIGINT/SIGTERM (nothing
/// written), the windows and each thread's time on stderr. Returns the run and the parts'
/// observers, in partition order.
pub(super) fn simulate_threads<O: Observer + Send>(
    args: &SimArgs,
    name: &str,
    config: &SimConfig,
    threads: u16,
    observer: &(dyn Fn(u16) -> O + Sync),
    after_window: &(dyn Fn(u16, &mut O) + Sync),
) -> anyhow::Result<Result<(Ran, Vec<O>), ExitCode>> {
    use lossless_sim::experiments::parallel;
    let (part, schedule) = schedule_for(args, config, threads)?;
    if let Some(w) = parallel::window_of(config, &part).filter(|&w| w < parallel::SHORT_WINDOW) {
        errln!(
            "note: --threads {threads}: the shortest link between partitions makes windows of {:.1} ns, each a barrier for every thread; expect this run to be slower than on one thread (docs/parallel.md)",
            w.as_ps() as f64 / 1e3
        );
    }
    let wall = WallClock::now();
    let progress = WindowProgress::new(config, "the first thread");
    let window_done = |at, events| progress.window_done(at, events);
    let (mut parts, st) =
        parallel::run_parts_on(config, &part, schedule, observer, &window_done, after_window)
            .with_context(|| format!("{name}: --threads {threads}"))?;
    progress.finish();
    let observers: Vec<O> = parts
        .iter_mut()
        .enumerate()
        .map(|(i, p)| std::mem::replace(p.observer_mut(), observer(i as u16)))
        .collect();
    let sim = Simulator::merge(parts);
    if signals::stop_requested() && sim.now() < sim.end() {
        return Ok(Err(interrupted(&sim)));
    }
    if !args.quiet {
        let w = st.windows.max(1) as f64;
        let per = |v: &[f64]| v.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" ");
        let placed = match (st.partitions > st.threads, st.placement) {
            (false, _) => String::new(),
            (true, parallel::Placement::Static) => {
                format!(", {} partitions placed statically", st.partitions)
            }
            (true, how) => format!(
                ", {} partitions placed by {} each window ({} moves)",
                st.partitions,
                if how == parallel::Placement::Time {
                    "time"
                } else {
                    "events"
                },
                st.moves
            ),
        };
        errln!(
            "{threads} thread{}{placed}: {} windows of {:.1} ns, {:.1} frames handed over per window; seconds busy per thread {}, at barriers {} (waits {} spun, {} slept); critical path {:.3} s busy, {} events",
            if threads == 1 { "" } else { "s" },
            st.windows,
            st.lookahead_ps as f64 / 1e3,
            st.messages as f64 / w,
            per(&st.busy_s_per_thread),
            per(&st.wait_s_per_thread),
            st.barrier_waits.0,
            st.barrier_waits.1,
            st.critical_s,
            st.critical_events
        );
    }
    let ran = Ran {
        report: Report::collect(&sim),
        end: sim.now(),
        wall_s: wall.elapsed().as_secs_f64(),
        simulated_s: sim.now().since_epoch().as_secs_f64(),
        interrupted: false,
    };
    Ok(Ok((ran, observers)))
}

/// [`simulate`] as rank 0 of the ranks `tr` reaches, each on `--threads` threads
/// (`experiments::ranks`), each partition observed by the observer `observer` makes for it:
/// as [`simulate_threads`], the progress bar and the stop on SIGINT/SIGTERM here, the windows
/// and this rank's times on stderr. Returns the run and every partition's observer, in
/// partition order.
pub(super) fn simulate_ranks<O: Observer + Shipped + Send>(
    args: &SimArgs,
    name: &str,
    config: &SimConfig,
    tr: &mut dyn Transport,
    observer: &(dyn Fn(u16) -> O + Sync),
) -> anyhow::Result<Result<(Ran, Vec<O>), ExitCode>> {
    on_ranks(args, name, config, tr, observer, None)
}

/// [`simulate_ranks`] with the outputs in `extras` (`trace::split`): every partition's
/// observer (made by `observer`, on every rank) holds a recorder of its trace calls (`recorder`
/// finds it), whose records of each window are gathered on rank 0 (`ranks::run_rank_traced`)
/// and handed to a collector thread here, which merges them into one simulator's order and
/// replays them into `extras`: the outputs are the one-thread run's, byte for byte. Returns
/// the run, the parts' observers (in partition order) and the outputs to finish;
/// `Ok(Err(status))` when a signal interrupted it (nothing is written).
#[allow(clippy::type_complexity)]
pub(super) fn simulate_traced_ranks<P: Observer + Shipped + Send>(
    args: &SimArgs,
    name: &str,
    config: &SimConfig,
    tr: &mut dyn Transport,
    extras: Extras,
    observer: &(dyn Fn(u16) -> P + Sync),
    recorder: fn(&mut P) -> &mut Recorder<Extras>,
) -> anyhow::Result<Result<(Ran, Vec<P>, Extras), ExitCode>> {
    use lossless_sim::trace::split::{self, DecodeError};
    // (the partitions of every rank: the collector waits for each one's batch of a window)
    let parts = usize::from(rank_schedule_for(args, config, tr.ranks())?.0.parts);
    // a few windows in flight at most: rank 0 (and so every rank, at its next collective)
    // waits for the collector, not memory
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(4);
    let (ran, (extras, broke)) = std::thread::scope(|s| {
        // (it stops taking windows when they do not decode: the next window's hand-over
        // fails, and every rank stops; an output that fails to write says so when it is
        // finished, after the run, as on threads)
        let collector = s.spawn(move || -> (Extras, Option<DecodeError>) {
            let mut extras = extras;
            for from_ranks in rx {
                match split::decode_window(&from_ranks, parts) {
                    Ok(batches) => split::merge_into(&batches, &mut extras),
                    Err(e) => return (extras, Some(e)),
                }
            }
            (extras, None)
        });
        let ran = {
            // (dropped when the run ends, however it ends: the collector then finishes)
            let tx = tx;
            let take = |o: &mut P, out: &mut Vec<u8>| recorder(o).take_encoded(out);
            let mut window = |from_ranks: Vec<Vec<u8>>| {
                tx.send(from_ranks)
                    .map_err(|_| "rank 0 stopped writing them (its message says why)".to_string())
            };
            on_ranks(args, name, config, tr, observer, Some((&take, &mut window)))
        };
        let done = collector.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (ran, done)
    });
    if let Some(e) = broke {
        return Err(anyhow::Error::new(e).context(format!("{name}: --mpi")));
    }
    Ok(ran?.map(|(ran, parts)| (ran, parts, extras)))
}

/// The trace records of a run over ranks: how a partition's are taken, and where rank 0's
/// collector takes each window's.
type RankTraces<'a, 'b, O> = (ranks::TakeRecords<'a, O>, ranks::WindowRecords<'b>);

/// [`simulate_ranks`], with the trace records `traces` when given.
fn on_ranks<O: Observer + Shipped + Send>(
    args: &SimArgs,
    name: &str,
    config: &SimConfig,
    tr: &mut dyn Transport,
    observer: &(dyn Fn(u16) -> O + Sync),
    traces: Option<RankTraces<'_, '_, O>>,
) -> anyhow::Result<Result<(Ran, Vec<O>), ExitCode>> {
    use lossless_sim::experiments::parallel;
    let (r, threads) = (tr.ranks(), args.threads.unwrap_or(1));
    let (part, schedule) = rank_schedule_for(args, config, r)?;
    if let Some(w) = parallel::window_of(config, &part).filter(|&w| w < parallel::SHORT_WINDOW) {
        errln!(
            "note: --mpi on {r} ranks × {threads} threads: the shortest link between partitions makes windows of {:.1} ns, each an exchange between every rank; expect this run to be slower than on one thread (docs/parallel.md)",
            w.as_ps() as f64 / 1e3
        );
    }
    let wall = WallClock::now();
    let progress = WindowProgress::new(config, "rank 0's first thread");
    let window_done = |at, events| progress.window_done(at, events);
    let run = match traces {
        Some((take, window)) => ranks::run_rank_traced(
            config,
            part,
            schedule,
            tr,
            observer,
            take,
            Some(window),
            &window_done,
        ),
        None => ranks::run_rank_observed_split(config, part, schedule, tr, observer, &window_done),
    };
    let (sim, st) = run.with_context(|| format!("{name}: --mpi on {r} ranks × {threads} threads"))?;
    progress.finish();
    let (sim, observers) = sim.context("rank 0 got no merged simulator")?;
    if signals::stop_requested() && sim.now() < sim.end() {
        return Ok(Err(interrupted(&sim)));
    }
    if !args.quiet {
        let w = st.windows.max(1) as f64;
        let per = |v: &[f64]| v.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" ");
        let placed = if st.partitions_here > usize::from(st.threads) || st.threads > 1 {
            let how = if st.partitions_here > usize::from(st.threads) {
                let by = match st.placement {
                    parallel::Placement::Static => "statically".to_string(),
                    parallel::Placement::Events => format!("by events each window ({} moves)", st.moves),
                    parallel::Placement::Time => format!("by time each window ({} moves)", st.moves),
                };
                format!("rank 0's {} placed {by}", st.partitions_here)
            } else {
                "one a thread".to_string()
            };
            format!(
                " of {} partitions ({how}; its busiest thread's events summed over windows {}, of {} in all)",
                st.partitions,
                st.critical_events,
                st.events_per_thread.iter().sum::<u64>()
            )
        } else {
            String::new()
        };
        errln!(
            "{r} ranks × {threads} threads{placed}: {} windows of {:.1} ns; rank 0 sent {:.1} frames per window ({:.1} to other ranks); its seconds busy per thread {}, waiting {} (barrier waits {} spun, {} slept), in MPI {:.3}",
            st.windows,
            st.lookahead_ps as f64 / 1e3,
            st.messages as f64 / w,
            st.messages_between_ranks as f64 / w,
            per(&st.busy_s_per_thread),
            per(&st.wait_s_per_thread),
            st.barrier_waits.0,
            st.barrier_waits.1,
            st.transport_s
        );
        if st.trace_gathers > 0 {
            errln!(
                "trace records gathered on rank 0: {:.0} bytes per window ({:.1} MB in {} gathers)",
                st.trace_bytes as f64 / st.trace_gathers as f64,
                st.trace_bytes as f64 / 1e6,
                st.trace_gathers
            );
        }
    }
    let ran = Ran {
        report: Report::collect(&sim),
        end: sim.now(),
        wall_s: wall.elapsed().as_secs_f64(),
        simulated_s: sim.now().since_epoch().as_secs_f64(),
        interrupted: false,
    };
    Ok(Ok((ran, observers)))
}

/// The exit status of a finished run: 1 when it must not be trusted (an engine fault or a
/// frame unaccounted for; 2 stays for input that does not load), 3 when it is sound but a
/// lossless priority dropped frames (the summary opened with where and why), else 0.
pub(super) fn run_status(report: &Report) -> ExitCode {
    if let Err(e) = report.check() {
        errln!("error: {e}");
        return ExitCode::from(1);
    }
    if report.lossless.dropped() {
        errln!(
            "finding: {} frame(s) of lossless priorities dropped (exit status 3; the summary and the JSON's `lossless` say where and why)",
            report.lossless.dropped_frames
        );
        return ExitCode::from(3);
    }
    ExitCode::SUCCESS
}

/// The outputs a run may write besides its JSON: pcapng files, a VCD waveform, the HTML
/// report and the CSV time series (each `None` unless asked for).
pub(super) type Extras = (Option<PcapSink>, (Option<VcdSink<Output>>, Pages));

/// The outputs drawn from the whole run: the HTML report and the CSV time series.
pub(super) type Pages = (Option<HtmlReport>, Option<SeriesSink>);

/// Claims the paths of `--pcap`, `--vcd` and `--report` (checked against the inputs and each
/// other before anything is written).
pub(super) fn claim_extras(args: &SimArgs, config: &SimConfig, claims: &mut Claims) -> anyhow::Result<()> {
    if let Some(p) = &args.vcd {
        claims.output("--vcd", p)?;
    }
    if let Some(d) = &args.report {
        claims.output_dir("--report", d, [HtmlReport::FILE])?;
    }
    if let Some(d) = &args.pcap {
        let names = PcapSink::file_names(config);
        claims.output_dir("--pcap", d, names.iter().map(String::as_str))?;
    }
    if let Some(d) = &args.series {
        series_bin(args.series_bin, config.duration).map_err(anyhow::Error::msg)?;
        claims.output_dir("--series", d, SERIES_FILES)?;
    }
    Ok(())
}

/// Opens the `--pcap` files, the `--report` directory and the `--series` files (the VCD is
/// opened with the other streamed outputs, which decide whether the summary goes to stdout).
pub(super) fn open_extras(args: &SimArgs, config: &SimConfig) -> anyhow::Result<(Option<PcapSink>, Pages)> {
    let pcap = match &args.pcap {
        Some(dir) => Some(PcapSink::create(dir, config)?),
        None => None,
    };
    let html = match &args.report {
        Some(dir) => {
            lossless_files::create_output_dir(dir)?;
            // the page repeats the summary as the terminal shows it
            let page = HtmlReport::new(config).with_summary(SummaryOptions {
                top: args.top as usize,
                full: args.full,
            });
            Some(match &args.plot_flows {
                Some(picks) => page.with_flow_picks(picks.0.clone()),
                None => page,
            })
        }
        None => None,
    };
    let series = match &args.series {
        Some(dir) => {
            let bin = series_bin(args.series_bin, config.duration).map_err(anyhow::Error::msg)?;
            Some(SeriesSink::create(dir, config, bin)?)
        }
        None => None,
    };
    Ok((pcap, (html, series)))
}

/// Whether a streamed output (pcapng, VCD) failed, which stops the run.
pub(super) fn extras_failed((pcap, (vcd, (_, series))): &Extras) -> bool {
    pcap.as_ref().is_some_and(PcapSink::failed)
        || vcd.as_ref().is_some_and(VcdSink::failed)
        || series.as_ref().is_some_and(SeriesSink::failed)
}

/// Finishes the outputs of a run that ended at `end`, saying in `wrote` what was written:
/// each is complete and waits in `all`, to be put in place with the run's other outputs
/// (none is in place before every one is written).
pub(super) fn finish_extras(
    args: &SimArgs,
    (pcap, (vcd, (html, series))): &mut Extras,
    end: lossless_proto::units::Instant,
    report: &Report,
    wrote: &mut Vec<String>,
    all: &mut Commit,
) -> anyhow::Result<()> {
    // the streamed outputs first: one that failed (and stopped the run early) is reported
    // before anything of that run is put in place
    let vcd = match vcd.take() {
        Some(mut sink) => {
            sink.finish()?;
            Some(sink.into_inner())
        }
        None => None,
    };
    if let Some(sink) = pcap {
        let files = sink.stage(all)?;
        if let Some(dir) = &args.pcap {
            wrote.push(format!("{} pcapng files to {}", files.len(), dir.display()));
        }
    }
    if let (Some(sink), Some(dir)) = (series, &args.series) {
        let files = sink.stage(end, all)?;
        wrote.push(format!("{} CSV files to {}", files.len(), dir.display()));
    }
    if let (Some(sink), Some(dir)) = (html, &args.report) {
        let path = sink.stage(dir, end, report, all)?;
        wrote.push(path.display().to_string());
    }
    if let Some(out) = vcd {
        if !out.is_stdout() {
            wrote.push(out.path().display().to_string());
        }
        all.add(out.finish()?);
    }
    Ok(())
}

/// Says where a run stopped by SIGINT/SIGTERM was; nothing is written (the outputs'
/// temporary files go with their writers).
pub(super) fn interrupted<O: Observer>(sim: &Simulator<O>) -> ExitCode {
    errln!(
        "interrupted at {} of {} simulated: no output written",
        sim.now().since_epoch(),
        sim.end().since_epoch()
    );
    interrupted_status()
}

/// What [`execute`] came to.
pub(super) struct Ran {
    pub(super) report: Report,
    /// Where the run stopped (its end, or earlier when the deadlock detector halted it).
    pub(super) end: lossless_proto::units::Instant,
    pub(super) wall_s: f64,
    pub(super) simulated_s: f64,
    /// SIGINT/SIGTERM stopped the run before its end.
    pub(super) interrupted: bool,
}

/// Runs a simulator to its end (or until SIGINT/SIGTERM, or `failed` says an output broke)
/// with a progress bar after one second.
fn execute<O: Observer>(sim: &mut Simulator<O>, failed: &dyn Fn(&Simulator<O>) -> bool) -> Ran {
    execute_with(sim, failed, &mut |sim, until| sim.run_until(until))
}

/// [`execute`] with the step that runs the simulator to an instant and says whether it reached
/// its end (e.g. a monitor sampling on the way).
pub(super) fn execute_with<O: Observer>(
    sim: &mut Simulator<O>,
    failed: &dyn Fn(&Simulator<O>) -> bool,
    step: &mut dyn FnMut(&mut Simulator<O>, lossless_proto::units::Instant) -> bool,
) -> Ran {
    let wall = WallClock::now();
    let end = sim.end();
    let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulating [{bar:40}] {percent}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut slicer = Slicer::new();
    let mut shown = false;
    let mut interrupted = false;
    loop {
        let t0 = WallClock::now();
        let next = slicer.next(sim.now());
        let done = step(sim, next);
        slicer.took(t0.elapsed());
        if signals::stop_requested() {
            interrupted = !done;
            break;
        }
        if !shown && wall.elapsed().as_secs_f64() > 1.0 {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        if shown {
            // only once visible: a hidden bar's updates still cost a lock and a format!
            bar.set_position((sim.now().as_ps() * 1000 / end.as_ps().max(1)) as u64);
            bar.set_message(format!("{} events", sim.events()));
        }
        if done || failed(sim) {
            // an output that failed is reported when it is finished: no point running on
            break;
        }
    }
    bar.finish_and_clear();
    Ran {
        report: Report::collect(&*sim),
        end: sim.now(),
        wall_s: wall.elapsed().as_secs_f64(),
        // what was simulated: a run stopped early (a deadlock halted it) ran to now, not `end`
        simulated_s: sim.now().since_epoch().as_secs_f64(),
        interrupted,
    }
}

/// The progress bar of a run in windows (threads or ranks): hidden for its first second, then
/// the simulated time's share and the events handled by one thread.
struct WindowProgress {
    bar: ProgressBar,
    shown: std::sync::atomic::AtomicBool,
    wall: WallClock,
    end_ps: u128,
    who: &'static str,
}

impl WindowProgress {
    /// A bar for `config`'s run whose events are counted on `who`.
    fn new(config: &SimConfig, who: &'static str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} simulating [{bar:40}] {percent}% {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        let end_ps = (lossless_proto::units::Instant::ZERO + config.duration)
            .as_ps()
            .max(1);
        WindowProgress {
            bar,
            shown: std::sync::atomic::AtomicBool::new(false),
            wall: WallClock::now(),
            end_ps,
            who,
        }
    }

    /// A window ended at `at` after `events` events: redraws, and says whether to stop
    /// (SIGINT/SIGTERM).
    fn window_done(&self, at: lossless_proto::units::Instant, events: u64) -> bool {
        use std::sync::atomic::Ordering;
        if !self.shown.load(Ordering::Relaxed) && self.wall.elapsed().as_secs_f64() > 1.0 {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown.store(true, Ordering::Relaxed);
        }
        if self.shown.load(Ordering::Relaxed) {
            self.bar.set_position((at.as_ps() * 1000 / self.end_ps) as u64);
            self.bar.set_message(format!("{events} events on {}", self.who));
        }
        signals::stop_requested()
    }

    /// The run is over: the bar goes.
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
