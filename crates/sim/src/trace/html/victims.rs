//! The victims plot of the HTML report: per flow, the time PFC held it, split into pauses
//! caused on its own path and off it (head-of-line blocking), victims marked.

use super::row_label;
use plotters::prelude::*;

use super::Drawing;
use crate::report::pathology::VictimsReport;

/// Flows drawn at most (the most blocked off their paths first).
const MAX_FLOWS: usize = 40;

/// Horizontal bars, one per flow that was blocked: own-path time, then off-path time.
pub(super) fn victims_chart(v: &VictimsReport) -> Drawing {
    let mut flows: Vec<_> = v.flows.iter().filter(|f| f.blocked_ps > 0).collect();
    flows.sort_by(|a, b| {
        b.off_path_blocked_ps
            .cmp(&a.off_path_blocked_ps)
            .then(b.blocked_ps.cmp(&a.blocked_ps))
    });
    flows.truncate(MAX_FLOWS);
    if flows.is_empty() {
        return Drawing::Failed("no flow was blocked by PFC".into());
    }
    let us = |ps: u128| ps as f64 / 1e6;
    // room on the right for the legend
    let top = flows.iter().map(|f| us(f.blocked_ps)).fold(0.0, f64::max) * 2.3;
    let n = flows.len();
    let names: Vec<String> = flows
        .iter()
        .map(|f| format!("{}{}", f.flow, if f.victim { " (victim)" } else { "" }))
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (980, 90 + 20 * n as u32)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(200)
                .build_cartesian_2d(0.0..top.max(1e-3), 0.0..n as f64)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(n * 2 + 1)
                .y_label_formatter(&|y| row_label(&names, *y))
                .x_desc("time blocked by PFC, summed over the hops (µs)")
                .draw()?;
            let own = RGBColor(0x7f, 0x7f, 0x7f);
            let off = RGBColor(0xd6, 0x27, 0x28);
            for (r, f) in flows.iter().enumerate() {
                let y = (n - 1 - r) as f64;
                let own_us = us(f.blocked_ps - f.off_path_blocked_ps);
                let off_us = us(f.off_path_blocked_ps);
                chart.draw_series([
                    Rectangle::new([(0.0, y + 0.15), (own_us, y + 0.85)], own.filled()),
                    Rectangle::new([(own_us, y + 0.15), (own_us + off_us, y + 0.85)], off.filled()),
                ])?;
            }
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, 0.0), (0.0, 0.0)],
                    own.filled(),
                )))?
                .label("paused for congestion on its own path")
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], own.filled()));
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, 0.0), (0.0, 0.0)],
                    off.filled(),
                )))?
                .label("paused for congestion off its path (head-of-line blocking)")
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], off.filled()));
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .draw()?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}
