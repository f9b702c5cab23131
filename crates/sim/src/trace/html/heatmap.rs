//! Heat maps of the HTML report (one row per port or queue, one column per time bin), drawn
//! instead of one line per series once there are more than [`LINES_MAX`] series: hundreds of
//! queues read as a picture, with a colour bar instead of a legend.

use plotters::prelude::*;

use super::{Drawing, TimeAxis, axis_bins, fmt_num};

/// Most series drawn as lines (and a legend); more become a heat map.
pub const LINES_MAX: usize = 8;

/// Most rows a heat map shows: beyond, the rows with the highest peaks.
pub const ROWS_MAX: usize = 240;

/// Colour levels of a heat map (cells are quantised to them, so runs of equal cells are drawn
/// as one rectangle).
const LEVELS: usize = 16;

/// One row: its name and one value per time bin.
pub struct HeatRow {
    /// Port or queue name.
    pub name: String,
    /// Value per bin.
    pub values: Vec<f64>,
}

/// Keeps the [`ROWS_MAX`] rows with the highest peaks, in their order; how many were dropped.
pub fn cap_rows(rows: &mut Vec<HeatRow>) -> usize {
    if rows.len() <= ROWS_MAX {
        return 0;
    }
    let peak = |r: &HeatRow| r.values.iter().copied().fold(0.0f64, f64::max);
    let mut by_peak: Vec<(usize, f64)> = rows.iter().map(peak).enumerate().collect();
    by_peak.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut keep = vec![false; rows.len()];
    for &(i, _) in &by_peak[..ROWS_MAX] {
        keep[i] = true;
    }
    let dropped = rows.len() - ROWS_MAX;
    let mut k = keep.iter();
    rows.retain(|_| *k.next().unwrap_or(&false));
    dropped
}

/// The colour of level `f` in 0..=1: white through light blue to dark blue.
pub fn blues(f: f64) -> RGBColor {
    let f = f.clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    RGBColor(mix(222.0, 8.0), mix(235.0, 48.0), mix(247.0, 107.0))
}

/// A heat map of `rows` (a value per bin of `bin_ps` from the axis's start, up to its end)
/// over `axis`; cells coloured by `palette` from 0 to `max` (a colour bar labelled in `unit` on
/// the right); zero cells stay white.
pub fn heat_map(
    rows: &[HeatRow],
    axis: &TimeAxis,
    bin_ps: u128,
    max: f64,
    unit: &str,
    palette: fn(f64) -> RGBColor,
) -> Drawing {
    let n = rows.len().max(1);
    let row_px = (640 / n).clamp(2, 16) as u32;
    let height = 90 + row_px * n as u32;
    let span_x = axis.len();
    let desc = axis.desc();
    let bins: Vec<(usize, u128, u128)> = axis_bins(axis, bin_ps).collect();
    let x0 = |k: usize| bins.get(k).map_or(span_x, |b| axis.x(b.1));
    let max = max.max(1e-12);
    let level = |v: f64| ((v / max * LEVELS as f64).ceil() as usize).min(LEVELS);
    // every k-th row named, at most about 40 names
    let every = n.div_ceil(40);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, height)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let (left, right) = root.split_horizontally(1010);
            let mut chart = ChartBuilder::on(&left)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(170)
                .build_cartesian_2d(0.0..span_x, 0.0..n as f64)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .y_labels(0)
                .x_desc(&desc)
                .draw()?;
            for (r, row) in rows.iter().enumerate() {
                let y = (n - 1 - r) as f64;
                let cells = row.values.len().min(bins.len());
                let mut k = 0;
                while k < cells {
                    let l = level(row.values[k]);
                    let mut e = k + 1;
                    while e < cells && level(row.values[e]) == l {
                        e += 1;
                    }
                    if l > 0 {
                        let c = palette(l as f64 / LEVELS as f64);
                        chart.draw_series(std::iter::once(Rectangle::new(
                            [(x0(k), y), (x0(e), y + 1.0)],
                            c.filled(),
                        )))?;
                    }
                    k = e;
                }
                if r % every == 0 {
                    let (_, py) = chart.backend_coord(&(0.0, y + 0.5));
                    left.draw(&Text::new(
                        row.name.clone(),
                        (12, py - 5),
                        ("sans-serif", 10).into_font(),
                    ))?;
                }
            }
            // colour bar
            let bar_top = 20;
            let bar_h = (height as i32 - 70).clamp(60, 300);
            for l in 1..=LEVELS {
                let y1 = bar_top + bar_h - (l as i32 * bar_h / LEVELS as i32);
                let y0 = bar_top + bar_h - ((l as i32 - 1) * bar_h / LEVELS as i32);
                right.draw(&Rectangle::new(
                    [(4, y1), (22, y0)],
                    palette(l as f64 / LEVELS as f64).filled(),
                ))?;
            }
            right.draw(&Rectangle::new(
                [(4, bar_top), (22, bar_top + bar_h)],
                BLACK.stroke_width(1),
            ))?;
            let font = ("sans-serif", 10).into_font();
            right.draw(&Text::new(fmt_num(max), (26, bar_top - 4), font.clone()))?;
            right.draw(&Text::new("0", (26, bar_top + bar_h - 8), font.clone()))?;
            right.draw(&Text::new(unit.to_string(), (2, bar_top + bar_h + 8), font))?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}
