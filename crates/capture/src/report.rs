//! What `lossless analyze` shows of an [`Analysis`]: the text (totals per slot, storms,
//! headroom, top talkers, RoCEv2, DCBX agreement, what could not be read) and the `--report`
//! page (`templates/analyze-report.html`) with its two SVG plots.

use std::fmt::Write as _;

use plotters::prelude::*;

use crate::analyze::Analysis;
use crate::headroom::HeadroomNeeds;
use lossless_proto::monitor::{SlotSnapshot, slot_name};
use lossless_proto::watchdog::SLOTS;

/// The files of a `--report` directory, in the order they are written (the page last).
pub const REPORT_FILES: [&str; 3] = ["index.html", "paused.svg", "frames.svg"];

/// A report that could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A plot failed to draw.
    #[error("drawing {file}: {message}")]
    Plot {
        /// The plot's file name.
        file: &'static str,
        /// The drawing library's message.
        message: String,
    },
    /// The page's template failed to render.
    #[error("rendering index.html: {0}")]
    Page(#[from] askama::Error),
}

/// The report's files: `(name, contents)` in [`REPORT_FILES`]'s order of writing (the plots,
/// then the page that shows them); `title` heads the page (the capture's name).
pub fn render(a: &Analysis, title: &str) -> Result<[(&'static str, String); 3], ReportError> {
    use askama::Template as _;
    let mut timeline = String::new();
    plot_timeline(a, &mut timeline).map_err(|message| ReportError::Plot {
        file: REPORT_FILES[1],
        message,
    })?;
    let mut frames = String::new();
    plot_frames(a, &mut frames).map_err(|message| ReportError::Plot {
        file: REPORT_FILES[2],
        message,
    })?;
    let page = AnalyzePage {
        title,
        text: &text(a),
        slots: &a.totals.slots,
        headroom: &a.headroom,
    };
    let mut h = page.render()?;
    h.push('\n');
    Ok([
        (REPORT_FILES[1], timeline),
        (REPORT_FILES[2], frames),
        (REPORT_FILES[0], h),
    ])
}

/// The analysis as text: totals per slot, storms, headroom, top talkers, RoCEv2, DCBX
/// agreement and what could not be read.
pub fn text(a: &Analysis) -> String {
    let mut o = String::new();
    totals_text(&mut o, a);
    headroom_text(&mut o, &a.headroom);
    let t = &a.totals;
    for x in &t.top_talkers {
        let _ = writeln!(o, "talker {} {} frames", x.source, x.frames);
    }
    roce_text(&mut o, a);
    if let Some(t) = &a.trust {
        let per: Vec<String> = (0..8)
            .filter(|&p| t.data_frames_by_priority[p] > 0)
            .map(|p| format!("p{p} {}", t.data_frames_by_priority[p]))
            .collect();
        let _ = writeln!(
            o,
            "trust dscp: data frames by priority: {}; {} classified by DSCP ({} untagged, {} whose PCP says otherwise)",
            if per.is_empty() {
                "none".to_string()
            } else {
                per.join(", ")
            },
            t.classified_by_dscp_frames,
            t.untagged_ip_frames,
            t.pcp_disagrees_frames
        );
    }
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

fn plot_timeline(a: &Analysis, svg: &mut String) -> Result<(), String> {
    let root = SVGBackend::with_string(svg, (900, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let x_end = (a.timeline.last().map(|b| b.start_s).unwrap_or(0.0) + a.bucket_s).max(a.bucket_s);
    let mut chart = ChartBuilder::on(&root)
        .caption("Paused time per bucket (% of bucket)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..x_end, 0.0..100.0)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("seconds from first frame")
        .y_desc("% paused")
        .draw()
        .map_err(|e| e.to_string())?;
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
            .map_err(|e| e.to_string())?
            .label(slot_name(slot))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

fn plot_frames(a: &Analysis, svg: &mut String) -> Result<(), String> {
    let root = SVGBackend::with_string(svg, (900, 300)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
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
        .map_err(|e| e.to_string())?;
    chart.configure_mesh().draw().map_err(|e| e.to_string())?;
    // one bar per slot, drawn in slot order (a plotters Histogram groups its data in a hash
    // map and would write the bars in a different order on every run)
    let bar = |(i, frames): (usize, u64)| {
        let mut r = Rectangle::new(
            [
                (SegmentValue::Exact(i as u32), 0),
                (SegmentValue::Exact(i as u32 + 1), frames),
            ],
            COLORS[0].filled(),
        );
        r.set_margin(0, 0, 5, 5);
        r
    };
    chart
        .draw_series(
            a.totals
                .slots
                .iter()
                .map(|s| s.counters.frames)
                .enumerate()
                .map(bar),
        )
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
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
