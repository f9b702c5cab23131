//! The pathology plots of the HTML report: a timeline of receiver stalls, the detector's
//! storms and deadlocks, pfcwd's stormed queues and topology events; and each deadlock's
//! cycle of queues, drawn as a ring of "waits for" arrows.

use super::row_label;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use lossless_proto::units::{Duration, Instant};

use super::{Drawing, TimeAxis};
use crate::report::pathology::{FindingReport, PathologyReport};

/// Rows drawn at most in the timeline (pfcwd queues last, so they are the ones cut).
const MAX_ROWS: usize = 48;

/// Queues drawn at most in one cycle diagram.
const MAX_CYCLE: usize = 48;

const STALL: RGBColor = RGBColor(0x7f, 0x7f, 0x7f);
const STORM: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
const DEADLOCK: RGBColor = RGBColor(0x94, 0x67, 0xbd);
const BLOCKED: RGBColor = RGBColor(0xf2, 0xb7, 0xb7);
const STORMED: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// One row of the timeline: its label, its bars (from, to, color), its ticks.
struct Row {
    label: String,
    bars: Vec<(u128, u128, RGBColor)>,
    ticks: Vec<u128>,
}

/// Receiver stalls of the named hosts, from the scenario.
pub(super) type Stalls = Vec<(String, Vec<(Instant, Option<Instant>)>)>;

/// The timeline, or `None` when there is nothing to put on it (no stall, no finding, no
/// storm, no event). Its time axis ends at the run's end.
pub(super) fn timeline(p: &PathologyReport, stalls: &Stalls, axis: TimeAxis) -> Option<Drawing> {
    let end = axis.end_ps;
    let mut rows = Vec::new();
    for (host, spans) in stalls {
        let stopped = p
            .hosts
            .iter()
            .find(|h| &h.host == host)
            .map(|h| h.pause_stopped_at_ps.clone())
            .unwrap_or_default();
        let bars: Vec<_> = spans
            .iter()
            .filter(|(from, _)| from.as_ps() < end)
            .map(|(from, until)| (from.as_ps(), until.map_or(end, |u| u.as_ps().min(end)), STALL))
            .collect();
        if !bars.is_empty() || !stopped.is_empty() {
            rows.push(Row {
                label: format!("{host} rx stalled"),
                bars,
                ticks: stopped,
            });
        }
    }
    for f in p.detector.iter().flatten() {
        let (what, color) = match (f.kind, &f.sink) {
            ("storm", Some(h)) => (format!("storm from {h}"), STORM),
            _ => (format!("deadlock of {} queues", f.members_total), DEADLOCK),
        };
        rows.push(Row {
            label: what,
            bars: vec![(f.formed_at_ps, f.resolved_at_ps.unwrap_or(end), color)],
            ticks: vec![f.detected_at_ps],
        });
    }
    if !p.events.is_empty() {
        rows.push(Row {
            label: "topology events".into(),
            bars: Vec::new(),
            ticks: p.events.iter().map(|e| e.at_ps).collect(),
        });
    }
    for q in p.pfcwd.iter().filter(|q| !q.storms.is_empty()) {
        let mut bars = Vec::new();
        for s in &q.storms {
            if let Some(since) = s.blocked_since_ps.filter(|&t| t < s.detected_at_ps) {
                bars.push((since, s.detected_at_ps, BLOCKED));
            }
            bars.push((s.detected_at_ps, s.restored_at_ps.unwrap_or(end), STORMED));
        }
        rows.push(Row {
            label: format!("pfcwd {}.{}:{} → {}", q.switch, q.port, q.priority, q.peer),
            bars,
            ticks: Vec::new(),
        });
    }
    if rows.is_empty() {
        return None;
    }
    let cut = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    if cut > 0 {
        rows.push(Row {
            label: format!("(and {cut} more pfcwd queues)"),
            bars: Vec::new(),
            ticks: Vec::new(),
        });
    }
    Some(draw_timeline(&rows, &axis))
}

fn draw_timeline(rows: &[Row], axis: &TimeAxis) -> Drawing {
    let x = |ps: u128| axis.x(ps);
    let span = axis.len().max(1e-9);
    let desc = axis.desc();
    let n = rows.len();
    let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    let legend: Vec<(&str, Option<RGBColor>)> = [
        ("receiver stalled", STALL),
        ("storm: formed → gone", STORM),
        ("deadlock: formed → gone", DEADLOCK),
        ("pfcwd: queue blocked, undeclared", BLOCKED),
        ("pfcwd: stormed → restored", STORMED),
    ]
    .into_iter()
    .filter(|&(_, c)| rows.iter().any(|r| r.bars.iter().any(|b| b.2 == c)))
    .map(|(name, c)| (name, Some(c)))
    .chain([
        ("tick: found (detector), pause", None),
        ("stopped (NIC), topology event", None),
    ])
    .collect();
    let mut svg = String::new();
    {
        let height = (90 + 20 * n as u32).max(40 + 20 * legend.len() as u32);
        let root = SVGBackend::with_string(&mut svg, (1120, height)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let (left, right) = root.split_horizontally(880);
            let mut chart = ChartBuilder::on(&left)
                .margin(10)
                .margin_right(25)
                .x_label_area_size(30)
                .y_label_area_size(230)
                .build_cartesian_2d(0.0..span, 0.0..n as f64)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(n * 2 + 1)
                .y_label_formatter(&|y| row_label(&labels, *y))
                .x_desc(&desc)
                .draw()?;
            for (r, row) in rows.iter().enumerate() {
                let y = (n - 1 - r) as f64;
                chart.draw_series(row.bars.iter().map(|&(a, b, c)| {
                    let x0 = x(a);
                    let x1 = x(b).max(x0 + span / 1000.0);
                    Rectangle::new([(x0, y + 0.2), (x1, y + 0.8)], c.filled())
                }))?;
                chart.draw_series(row.ticks.iter().map(|&t| {
                    PathElement::new(vec![(x(t), y + 0.05), (x(t), y + 0.95)], BLACK.stroke_width(2))
                }))?;
            }
            let text = TextStyle::from(("sans-serif", 12).into_font());
            for (i, (name, c)) in legend.iter().enumerate() {
                let y = 20 + 20 * i as i32;
                match c {
                    Some(c) => right.draw(&Rectangle::new([(4, y - 5), (14, y + 5)], c.filled()))?,
                    None if i + 1 < legend.len() => right.draw(&PathElement::new(
                        vec![(9, y - 6), (9, y + 6)],
                        BLACK.stroke_width(2),
                    ))?,
                    None => {}
                }
                right.draw(&Text::new(
                    name.to_string(),
                    (20, y),
                    text.pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}

/// A deadlock's cycle: its queues on a ring, each with an arrow to the queue it waits for,
/// and when it formed, was found and went away.
pub(super) fn cycle_diagram(f: &FindingReport) -> Drawing {
    let n = f.cycle.len();
    if n == 0 {
        return Drawing::Failed("the finding names no cycle".into());
    }
    if n > MAX_CYCLE {
        return Drawing::Failed(format!(
            "a cycle of {n} queues is too long to draw; the summary lists it"
        ));
    }
    let d = |ps: u128| Duration::from_ps(ps).to_string();
    let caption = format!(
        "formed {}, found {}, {}; {} flows stuck{}",
        d(f.formed_at_ps),
        d(f.detected_at_ps),
        f.resolved_at_ps
            .map_or("still there at the end".into(), |t| format!("gone at {}", d(t))),
        f.stuck_flows_total,
        if f.stuck_flows.is_empty() {
            String::new()
        } else {
            let mut s = f
                .stuck_flows
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if f.stuck_flows_total > 8 {
                s.push_str(", …");
            }
            format!(": {s}")
        }
    );
    let radius = (110.0f64).max(n as f64 * 14.0);
    let (w, h) = (980i32, (2.0 * radius) as i32 + 150);
    let (cx, cy) = (f64::from(w) / 2.0, radius + 60.0);
    let at = |i: usize| {
        let a = -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * i as f64 / n as f64;
        (cx + radius * a.cos(), cy + radius * a.sin(), a)
    };
    let px = |x: f64, y: f64| (x.round() as i32, y.round() as i32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w as u32, h as u32)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let text = TextStyle::from(("sans-serif", 13).into_font());
            root.draw(&Text::new(
                "each queue (switch.port:priority) is paused and waits for the next to drain".to_string(),
                (10, 10),
                text.clone(),
            ))?;
            for i in 0..n {
                let (x0, y0, _) = at(i);
                let (x1, y1, _) = at((i + 1) % n);
                let (dx, dy) = (x1 - x0, y1 - y0);
                let len = (dx * dx + dy * dy).sqrt().max(1e-9);
                let (ux, uy) = (dx / len, dy / len);
                // offset sideways so that a two-queue cycle shows both arrows
                let (ox, oy) = (-uy * 5.0, ux * 5.0);
                let (sx, sy) = (x0 + ux * 12.0 + ox, y0 + uy * 12.0 + oy);
                let (ex, ey) = (x1 - ux * 12.0 + ox, y1 - uy * 12.0 + oy);
                root.draw(&PathElement::new(
                    vec![px(sx, sy), px(ex, ey)],
                    DEADLOCK.stroke_width(2),
                ))?;
                let head = vec![
                    px(ex, ey),
                    px(ex - ux * 10.0 - uy * 5.0, ey - uy * 10.0 + ux * 5.0),
                    px(ex - ux * 10.0 + uy * 5.0, ey - uy * 10.0 - ux * 5.0),
                ];
                root.draw(&Polygon::new(head, DEADLOCK.filled()))?;
            }
            for (i, name) in f.cycle.iter().enumerate() {
                let (x, y, a) = at(i);
                root.draw(&Circle::new(px(x, y), 7, DEADLOCK.filled()))?;
                let h = if a.cos() > 0.3 {
                    HPos::Left
                } else if a.cos() < -0.3 {
                    HPos::Right
                } else {
                    HPos::Center
                };
                let v = if a.sin() > 0.3 {
                    VPos::Top
                } else if a.sin() < -0.3 {
                    VPos::Bottom
                } else {
                    VPos::Center
                };
                root.draw(&Text::new(
                    name.clone(),
                    px(x + a.cos() * 14.0, y + a.sin() * 14.0),
                    text.pos(Pos::new(h, v)),
                ))?;
            }
            root.draw(&Text::new(caption.clone(), (10, h - 24), text.clone()))?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}
