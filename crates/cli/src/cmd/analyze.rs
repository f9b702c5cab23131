//! `lossless analyze`: per-priority PAUSE/PFC totals, paused-time timeline, storms, top talkers
//! and DCBX agreement from a pcap/pcapng capture; `--json`, `--report DIR` (HTML from the
//! page and its SVG plots from `lossless_capture::report`).

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lossless_capture::CaptureReader;
use lossless_capture::analyze::{Analysis, Options, analyze};
use lossless_capture::report::{self, REPORT_FILES};
use lossless_files::Claims;
use lossless_proto::units::{Duration, Rate};

/// Arguments of `lossless analyze`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless analyze --speed 100G capture.pcapng
      totals per priority, storms, top talkers, DCBX agreement of the link's two ends
  lossless analyze --speed 25G --json capture.pcap | jq .storms
  lossless analyze --speed 100G --report out/ capture.pcap
      out/index.html with SVG plots of paused time per priority over time
  mergecap -w both.pcapng sw.0-to-h.pcapng h.0-to-sw.pcapng && lossless analyze --speed 100G both.pcapng
      with both directions of a link, one interface each: the headroom each XOFF needed

Captures carry no link speed: give the speed the capture was taken at. Storms follow SONiC
pfcwd (detection and restoration times, default 200 ms), timed by the capture's timestamps.
Frames are read and decoded as `lossless decode` reads them (VLAN-tagged and QinQ frames
included); an unreadable pcapng block is skipped and named, and reading goes on. FILE may be
`-` (standard input) or a FIFO. --report DIR is created if missing (not its parents); its
files are renamed into place when complete.

Headroom: per priority, the bytes of that priority that kept arriving from the other direction
after each XOFF until the pause took effect (max and percentiles over XOFF episodes). A capture
with one interface per direction tells the directions apart; with one interface both are
counted. Taken at the XOFF's sender, it is Annex N's part after the PFC frame left; elsewhere
it misses the round trip to that point (docs/headroom.md).

RoCEv2 (UDP 4791): per queue pair (IP source → destination, BTH destination QP), its frames,
how many arrived ECN CE-marked, and the CNPs sent to it with their rate over the capture; a
CNP names the requester's QP, so a data QP and its CNPs are two rows in opposite directions.
At most 4096 queue pairs get a row (`cn::traffic::MAX_QPS`); all count in the totals.

Exit status: 0 when the whole file was read; 1 when a block was skipped or the file is
damaged (the analysis of what could be read is still printed); 2 when the capture cannot be
opened, is not a capture or holds no readable frame, the command line is wrong (e.g.
--bucket-ms 0) or an output cannot be written.")]
pub struct AnalyzeArgs {
    /// The capture (pcap or pcapng); `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Link speed the capture was taken at (e.g. 100G), for the paused-time estimate.
    #[arg(long)]
    pub speed: Rate,
    /// Storm detection time, ms.
    #[arg(long, default_value_t = 200)]
    pub detection_ms: u64,
    /// Storm restoration time, ms.
    #[arg(long, default_value_t = 200)]
    pub restoration_ms: u64,
    /// Timeline bucket width, ms, 1..=86400000 (a day).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub bucket_ms: u64,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write an HTML report with SVG plots into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// What gives a data frame its priority (for the headroom after each XOFF and the
    /// per-priority counts): pcp (its outer 802.1Q tag, untagged 0) or dscp (an IP frame's
    /// DSCP by --dscp2prio, default DSCP / 8 as ConnectX: untagged RoCE with DSCP 26 on 3).
    #[arg(long, default_value = "pcp", value_parser = ["pcp", "dscp"])]
    pub trust: String,
    /// With --trust dscp: DSCP=PRIORITY entries over the default map, e.g. 26=3,48=6.
    #[arg(long, value_name = "D=P", value_delimiter = ',')]
    pub dscp2prio: Vec<String>,
}

/// The DSCP map of `--trust dscp` (and `--dscp2prio`), `None` under `--trust pcp`.
pub(super) fn trust_map(trust: &str, dscp2prio: &[String]) -> anyhow::Result<Option<[u8; 64]>> {
    if trust != "dscp" {
        if !dscp2prio.is_empty() {
            anyhow::bail!("--dscp2prio given without --trust dscp; under PCP trust it maps nothing");
        }
        return Ok(None);
    }
    lossless_capture::filter::parse_dscp2prio(dscp2prio.iter().map(String::as_str))
        .map(Some)
        .map_err(|e| anyhow::anyhow!("--dscp2prio: {e}"))
}

/// Runs `lossless analyze`.
pub fn run(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.report {
        let mut claims = Claims::new();
        claims.input("the capture", &args.file);
        claims.output_dir("--report", dir, REPORT_FILES)?;
        lossless_files::create_output_dir(dir)?;
    }
    let dscp_map = trust_map(&args.trust, &args.dscp2prio)?;
    let input = lossless_files::open_stream(&args.file, "capture")?;
    let opts = Options {
        dscp_map,
        speed: args.speed,
        detection: Duration::from_ms(args.detection_ms),
        restoration: Duration::from_ms(args.restoration_ms),
        bucket: Duration::from_ms(args.bucket_ms),
    };
    let a = analyze(CaptureReader::new(BufReader::new(input)), opts);
    if a.frames == 0
        && let Some(e) = &a.read_error
    {
        // nothing could be read (not a capture, or damaged before its first frame): an
        // error, as `decode` says it, not a table of zeros
        anyhow::bail!("{}: {e}", args.file.display());
    }
    if let Some(dir) = &args.report {
        write_report(&a, &args.file, dir)?;
    }
    if args.json {
        outln!("{}", serde_json::to_string(&a)?)?;
    } else {
        out!("{}", report::text(&a))?;
    }
    if let Some(dir) = &args.report {
        errln!("report: {}", dir.join(REPORT_FILES[0]).display());
    }
    for e in &a.read_errors {
        errln!("error: {}: block skipped: {e}", args.file.display());
    }
    if a.read_errors_total > a.read_errors.len() as u64 {
        errln!(
            "error: {}: {} more blocks skipped",
            args.file.display(),
            a.read_errors_total - a.read_errors.len() as u64
        );
    }
    if let Some(e) = &a.read_error {
        errln!("error: reading stopped early: {e}");
    }
    if a.read_error.is_some() || a.read_errors_total > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the report's files into `dir` (which exists), renamed into place together when
/// all are complete.
fn write_report(a: &Analysis, file: &Path, dir: &Path) -> anyhow::Result<()> {
    let files = report::render(a, &file.display().to_string())?;
    // the three files go in place together: a failure leaves the old report whole
    let mut all = lossless_files::Commit::new();
    for (name, text) in &files {
        let mut f = lossless_files::AtomicFile::create(&dir.join(name))?;
        f.write_all_named(text.as_bytes())?;
        all.add_file(f)?;
    }
    all.commit()?;
    Ok(())
}
