//! `lossless analyze`: per-priority PAUSE/PFC totals, paused-time timeline, storms, top talkers
//! and DCBX agreement from a pcap/pcapng capture; `--json`, `--report DIR` (HTML from the
//! askama template `templates/analyze-report.html`, SVG plots beside it).

use std::fmt::Write as _;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use lossless_capture::CaptureReader;
use lossless_capture::analyze::{Analysis, Options, analyze};
use lossless_capture::headroom::HeadroomNeeds;
use lossless_files::Claims;
use lossless_live::monitor::slot_name;
use lossless_live::watchdog::SLOTS;
use lossless_proto::monitor::SlotSnapshot;
use lossless_proto::units::{Duration, Rate};
use plotters::prelude::*;

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
}

/// The files `--report DIR` writes.
const REPORT_FILES: [&str; 3] = ["index.html", "paused.svg", "frames.svg"];

/// Runs `lossless analyze`.
pub fn run(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.report {
        let mut claims = Claims::new();
        claims.input("the capture", &args.file);
        claims.output_dir("--report", dir, REPORT_FILES)?;
        lossless_files::create_output_dir(dir)?;
    }
    let input = lossless_files::open_stream(&args.file, "capture")?;
    let opts = Options {
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
        out!("{}", text(&a))?;
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

/// The analysis as text: totals per slot, storms, headroom, top talkers, RoCEv2, DCBX
/// agreement and what could not be read.
fn text(a: &Analysis) -> String {
    let mut o = String::new();
    totals_text(&mut o, a);
    headroom_text(&mut o, &a.headroom);
    let t = &a.totals;
    for x in &t.top_talkers {
        let _ = writeln!(o, "talker {} {} frames", x.source, x.frames);
    }
    roce_text(&mut o, a);
    dcbx_text(&mut o, a);
    if a.read_errors_total > 0 {
        let _ = writeln!(
            o,
            "{} unreadable blocks skipped, reading went on after each",
            a.read_errors_total
        );
    }
    if let Some(e) = &a.read_error {
        let _ = writeln!(o, "reading stopped early: {e}");
    }
    o
}

/// The frame counts, the table per slot and the storms.
fn totals_text(o: &mut String, a: &Analysis) {
    let t = &a.totals;
    let _ = writeln!(
        o,
        "{} frames over {:.3} s: {} MAC Control ({} malformed, {} with warnings, {} unknown opcode), {} LLDP, {} skipped",
        a.frames,
        a.span_s,
        a.mac_control_frames,
        t.malformed,
        t.with_warnings,
        t.unknown_opcode,
        a.lldp_frames,
        a.skipped_frames
    );
    let _ = writeln!(
        o,
        "{:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>12} {:>7}",
        "slot", "frames", "xoff", "xon", "->xoff", "->xon", "paused_s", "storms"
    );
    for s in &t.slots {
        let c = &s.counters;
        let _ = writeln!(
            o,
            "{:>5} {:>10} {:>10} {:>8} {:>7} {:>7} {:>12.6} {:>7}",
            s.slot,
            c.frames,
            c.xoff_frames,
            c.xon_frames,
            c.xoff_transitions,
            c.xon_transitions,
            s.paused_s,
            s.storms_detected
        );
    }
    for s in &a.storms {
        let end = s
            .restored_s
            .map(|r| format!("{r:.3} s"))
            .unwrap_or_else(|| "end of capture".into());
        let _ = writeln!(
            o,
            "storm {}: paused from {:.3} s, detected {:.3} s, restored {end}",
            s.slot, s.pause_start_s, s.detected_s
        );
    }
}

/// The headroom each XOFF needed, per slot (nothing without XOFF episodes).
fn headroom_text(o: &mut String, h: &HeadroomNeeds) {
    if !h.slots.is_empty() {
        let _ = writeln!(
            o,
            "headroom after each XOFF ({}):",
            if h.directions == "interfaces" {
                "the other direction's frames, told apart by interface"
            } else {
                "ONE interface: both directions counted, an over-estimate"
            }
        );
        let _ = writeln!(
            o,
            "{:>5} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10}",
            "slot", "episodes", "max_bytes", "p50_bytes", "p90_bytes", "p99_bytes", "max_at_s"
        );
        for s in &h.slots {
            let _ = writeln!(
                o,
                "{:>5} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10.6}",
                s.slot, s.episodes_total, s.max_bytes, s.p50_bytes, s.p90_bytes, s.p99_bytes, s.max_at_s
            );
        }
    }
}

/// The RoCEv2 totals and the first queue pairs (nothing without RoCEv2 frames).
fn roce_text(o: &mut String, a: &Analysis) {
    let r = &a.roce;
    if r.data_frames + r.cnps_total + r.undecoded_frames > 0 {
        let pct = if r.data_frames > 0 {
            100.0 * r.ce_marked_frames as f64 / r.data_frames as f64
        } else {
            0.0
        };
        let rate = if a.span_s > 0.0 {
            r.cnps_total as f64 / a.span_s
        } else {
            0.0
        };
        let _ = writeln!(
            o,
            "RoCEv2: {} frames, {} ECN CE-marked ({pct:.2} %), {} CNPs ({rate:.1}/s), {} queue pairs{}",
            r.data_frames,
            r.ce_marked_frames,
            r.cnps_total,
            r.qps_total,
            if r.undecoded_frames > 0 {
                format!(", {} UDP 4791 frames not decoded", r.undecoded_frames)
            } else {
                String::new()
            }
        );
        const ROWS: usize = 20;
        let _ = writeln!(
            o,
            "{:<39} {:>8} {:>10} {:>10} {:>7} {:>9} {:>10}",
            "queue pair (src → dst qp)", "frames", "MB", "CE", "CE %", "CNPs", "CNPs/s"
        );
        for q in r.qps.iter().take(ROWS) {
            let _ = writeln!(
                o,
                "{:<39} {:>8} {:>10.3} {:>10} {:>7.2} {:>9} {:>10.1}",
                format!("{} → {} {}", q.src, q.dst, q.dest_qp),
                q.data_frames,
                q.data_bytes as f64 / 1e6,
                q.ce_marked_frames,
                100.0 * q.ce_marked_ratio,
                q.cnps_total,
                q.cnps_per_s
            );
        }
        if r.qps.len() > ROWS {
            let _ = writeln!(o, "… {} more queue pairs (--json lists them)", r.qps.len() - ROWS);
        }
    }
}

/// The DCBX agreement of each pair of ends.
fn dcbx_text(o: &mut String, a: &Analysis) {
    for g in &a.lldp_agreement {
        const NEITHER: &str = "not sent by either end";
        let pfc = match (g.pfc_agree, g.pfc_reason.as_deref()) {
            (None, Some(NEITHER)) => format!("PFC {NEITHER}"),
            (agree, reason) => format!(
                "PFC {} (0x{:02x} / 0x{:02x}){}",
                match agree {
                    Some(true) => "agrees",
                    Some(false) => "DISAGREES",
                    None => "not compared",
                },
                g.pfc_a,
                g.pfc_b,
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            ),
        };
        let ets = match (g.ets_agree, g.ets_reason.as_deref()) {
            (Some(true), _) => "agrees".to_string(),
            (Some(false), _) => "DISAGREES".to_string(),
            (None, Some(NEITHER)) => NEITHER.to_string(),
            (None, Some(r)) => format!("not compared: {r}"),
            (None, None) => "not compared".to_string(),
        };
        let _ = writeln!(o, "dcbx {} <-> {} ({}): {pfc}; ETS {ets}", g.a, g.b, g.mode);
    }
}

const COLORS: [RGBColor; SLOTS] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

fn plot_timeline(a: &Analysis, svg: &mut String) -> anyhow::Result<()> {
    let root = SVGBackend::with_string(svg, (900, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let x_end = (a.timeline.last().map(|b| b.start_s).unwrap_or(0.0) + a.bucket_s).max(a.bucket_s);
    let mut chart = ChartBuilder::on(&root)
        .caption("Paused time per bucket (% of bucket)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..x_end, 0.0..100.0)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc("seconds from first frame")
        .y_desc("% paused")
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (slot, color) in COLORS.iter().enumerate() {
        if a.totals.slots[slot].counters.frames == 0 {
            continue;
        }
        let pts = a
            .timeline
            .iter()
            .map(|b| (b.start_s, 100.0 * b.paused_s[slot] / a.bucket_s));
        chart
            .draw_series(LineSeries::new(pts, color))
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .label(slot_name(slot))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

fn plot_frames(a: &Analysis, svg: &mut String) -> anyhow::Result<()> {
    let root = SVGBackend::with_string(svg, (900, 300)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let max = a
        .totals
        .slots
        .iter()
        .map(|s| s.counters.frames)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption("Frames per priority (8 = link PAUSE)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d((0u32..8u32).into_segmented(), 0u64..max + max / 10 + 1)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .draw_series(
            Histogram::vertical(&chart)
                .style(COLORS[0].filled())
                .margin(5)
                .data(
                    a.totals
                        .slots
                        .iter()
                        .enumerate()
                        .map(|(i, s)| (i as u32, s.counters.frames)),
                ),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// The page: `templates/analyze-report.html`; askama escapes the file name and the text.
#[derive(askama::Template)]
#[template(path = "analyze-report.html")]
struct AnalyzePage<'a> {
    title: &'a str,
    text: &'a str,
    slots: &'a [SlotSnapshot],
    headroom: &'a HeadroomNeeds,
}

/// Writes the report's files into `dir` (which exists), renamed into place together when
/// all are complete.
fn write_report(a: &Analysis, file: &Path, dir: &Path) -> anyhow::Result<()> {
    use askama::Template as _;
    let mut timeline = String::new();
    plot_timeline(a, &mut timeline).context("drawing paused.svg")?;
    let mut frames = String::new();
    plot_frames(a, &mut frames).context("drawing frames.svg")?;
    let page = AnalyzePage {
        title: &file.display().to_string(),
        text: &text(a),
        slots: &a.totals.slots,
        headroom: &a.headroom,
    };
    let mut h = page.render()?;
    h.push('\n');
    // the three files go in place together: a failure leaves the old report whole
    let mut all = lossless_files::Commit::new();
    for (name, text) in [
        (REPORT_FILES[1], timeline.as_bytes()),
        (REPORT_FILES[2], frames.as_bytes()),
        (REPORT_FILES[0], h.as_bytes()),
    ] {
        let mut f = lossless_files::AtomicFile::create(&dir.join(name))?;
        f.write_all_named(text)?;
        all.add_file(f)?;
    }
    all.commit()?;
    Ok(())
}
