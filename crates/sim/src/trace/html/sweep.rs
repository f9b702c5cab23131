//! The HTML page of a sweep (`lossless sim --sweep … --report DIR`): each headline metric
//! drawn against one swept parameter, one line per combination of the other axes' values, and
//! a table of every point. The page is the same template as a single run's, its plots drawn by
//! the same plotters SVG backend.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::{Drawing, LEGEND_LINE, Plot, SimPage, distinct, fmt_num};
use crate::report::Report;

/// Most points a sweep's page holds (each keeps its values and metrics in memory until the
/// page is written, and a plot of more is no longer read point by point).
pub const MAX_SWEEP_REPORT_POINTS: usize = 10_000;

/// Most lines named in a plot's legend (the others are drawn, and counted in the caption).
const LEGEND_MAX: usize = 12;

/// One metric of a sweep's page: its section id, heading and unit.
struct Metric {
    id: &'static str,
    heading: &'static str,
    unit: &'static str,
}

/// The metrics drawn, in page order ([`SweepPoint::metrics`] holds them in this order).
const METRICS: [Metric; 8] = [
    Metric {
        id: "sweep-lossless-drops",
        heading: "Frames of lossless priorities dropped",
        unit: "frames",
    },
    Metric {
        id: "sweep-lossy-drops",
        heading: "Frames of lossy priorities dropped",
        unit: "frames",
    },
    Metric {
        id: "sweep-xoff",
        heading: "PFC XOFF and PAUSE frames sent, summed over ports",
        unit: "frames",
    },
    Metric {
        id: "sweep-max-paused",
        heading: "Longest time one port priority was paused (of the run)",
        unit: "µs",
    },
    Metric {
        id: "sweep-goodput",
        heading: "Delivered throughput of all flows, over the flows' active span",
        unit: "Gb/s",
    },
    Metric {
        id: "sweep-flows-done",
        heading: "Finite flows completed",
        unit: "% of finite flows",
    },
    Metric {
        id: "sweep-fct-p99",
        heading: "FCT p99 of the completed flows",
        unit: "µs",
    },
    Metric {
        id: "sweep-slowdown-p99",
        heading: "FCT slowdown p99 of the completed flows (FCT / ideal FCT)",
        unit: "ratio",
    },
];

/// What a sweep's page keeps of one point.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// Its index in the whole sweep.
    pub index: usize,
    /// Its value of each axis, as given on the command line.
    pub values: Vec<String>,
    /// The metrics in page order; `None` where the run has none (no finite flow, say).
    pub metrics: [Option<f64>; 8],
}

impl SweepPoint {
    /// The point `index` with axis values `values` that ran to `report`.
    pub fn of(index: usize, values: Vec<String>, report: &Report) -> SweepPoint {
        let lossless = report.lossless.dropped_frames;
        let (mut drops, mut xoff, mut paused) = (0u64, 0u64, 0u128);
        for p in &report.ports {
            xoff += p.pause_xoff_sent_frames;
            for q in &p.priorities {
                drops += q.drops_frames.values().sum::<u64>();
                xoff += q.pfc_xoff_sent_frames;
                paused = paused.max(q.paused_ps);
            }
        }
        let delivered: u64 = report.flows.iter().map(|f| f.delivered_bytes).sum();
        let goodput = report
            .active_span
            .as_ref()
            .filter(|s| s.to_ps > s.from_ps)
            .map(|s| delivered as f64 * 8.0 / ((s.to_ps - s.from_ps) as f64 / 1e12) / 1e9);
        let finite = report.flows.iter().filter(|f| f.size_bytes.is_some()).count();
        let done = report
            .flows
            .iter()
            .filter(|f| f.size_bytes.is_some() && f.completion_ps.is_some())
            .count();
        let fct = report.fct.all.as_ref();
        SweepPoint {
            index,
            values,
            metrics: [
                Some(lossless as f64),
                Some(drops.saturating_sub(lossless) as f64),
                Some(xoff as f64),
                Some(paused as f64 / 1e6),
                goodput,
                (finite > 0).then(|| done as f64 * 100.0 / finite as f64),
                fct.map(|s| s.fct_p99_ps as f64 / 1e6),
                fct.map(|s| s.fct_slowdown_p99_ratio),
            ],
        }
    }
}

/// One line of a plot: its legend name, colour and (x, y) points.
pub(super) type Line = (String, RGBColor, Vec<(f64, f64)>);

/// A sweep's page: the points finished, drawn against one axis.
#[derive(Clone, Debug)]
pub struct SweepReport {
    scenario: String,
    /// Each axis: its path and its values in the order given.
    axes: Vec<(String, Vec<String>)>,
    points: Vec<SweepPoint>,
}

impl SweepReport {
    /// The one file [`SweepReport::stage`] writes in its directory (the plots are inline).
    pub const FILE: &'static str = "index.html";

    /// An empty page for a sweep of `scenario` over `axes` (path, values).
    pub fn new(scenario: &str, axes: Vec<(String, Vec<String>)>) -> SweepReport {
        SweepReport {
            scenario: scenario.to_string(),
            axes,
            points: Vec::new(),
        }
    }

    /// Adds a finished point.
    pub fn add(&mut self, point: SweepPoint) {
        self.points.push(point);
    }

    /// The axis drawn along x: the first whose values are all numbers and that has more than
    /// one, else the first with more than one, else the first.
    fn x_axis(&self) -> usize {
        let many = |a: &(String, Vec<String>)| a.1.len() > 1;
        self.axes
            .iter()
            .position(|a| many(a) && a.1.iter().all(|v| v.trim().parse::<f64>().is_ok()))
            .or_else(|| self.axes.iter().position(many))
            .unwrap_or(0)
    }

    /// Renders the page.
    pub fn render(&self) -> String {
        let mut points = self.points.clone();
        points.sort_by_key(|p| p.index);
        let x = self.x_axis();
        let (x_path, x_values) = self
            .axes
            .get(x)
            .cloned()
            .unwrap_or_else(|| (String::new(), Vec::new()));
        let numeric = x_values.iter().all(|v| v.trim().parse::<f64>().is_ok());
        // a point's x: its value, or its value's position on a non-numeric axis
        let xpos = |p: &SweepPoint| -> f64 {
            let v = p.values.get(x).map_or("", String::as_str);
            if numeric {
                v.trim().parse().unwrap_or(0.0)
            } else {
                x_values.iter().position(|w| w == v).unwrap_or(0) as f64
            }
        };
        // one line per combination of the other axes' values, in the order first met
        let mut groups: Vec<(String, Vec<&SweepPoint>)> = Vec::new();
        for p in &points {
            let key = self
                .axes
                .iter()
                .zip(&p.values)
                .enumerate()
                .filter(|(i, _)| *i != x)
                .map(|(_, ((path, _), v))| format!("{path}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(p),
                None => groups.push((key, vec![p])),
            }
        }
        let mut plots = Vec::new();
        for (m, metric) in METRICS.iter().enumerate() {
            let lines: Vec<Line> = groups
                .iter()
                .enumerate()
                .map(|(g, (key, pts))| {
                    let mut xy: Vec<(f64, f64)> = pts
                        .iter()
                        .filter_map(|p| p.metrics[m].map(|y| (xpos(p), y)))
                        .collect();
                    xy.sort_by(|a, b| a.0.total_cmp(&b.0));
                    (key.clone(), distinct(g, groups.len()), xy)
                })
                .filter(|l| !l.2.is_empty())
                .collect();
            if lines.is_empty() {
                continue;
            }
            let label = |v: f64| -> String {
                if numeric {
                    // whole numbers (senders, seeds) without a decimal point
                    if v.fract() == 0.0 && v.abs() < 1e3 {
                        format!("{v:.0}")
                    } else {
                        fmt_num(v)
                    }
                } else {
                    let i = v.round();
                    if (v - i).abs() < 1e-6 && i >= 0.0 {
                        x_values.get(i as usize).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                }
            };
            let mut plot = Plot::new(metric.id, sweep_chart(&lines, &x_path, metric.unit, &label, None))
                .heading(&format!("{} against {x_path}", metric.heading));
            plot.caption = match lines.len() {
                1 if lines[0].0.is_empty() => format!("{} points.", lines[0].2.len()),
                n if n > LEGEND_MAX => {
                    format!("One line per value of the other axes ({n} lines; the first {LEGEND_MAX} named).")
                }
                n => format!("One line per value of the other axes ({n} lines)."),
            };
            if lines.iter().all(|l| l.2.iter().all(|p| p.1 == 0.0)) {
                plot.caption.push_str(" 0 at every point.");
            }
            plots.push(plot);
        }
        // the table: every point, its values and metrics
        let mut table = Vec::with_capacity(points.len() + 1);
        let mut head = vec!["point".to_string()];
        head.extend(self.axes.iter().map(|a| a.0.clone()));
        head.extend(METRICS.iter().map(|m| format!("{} ({})", m.heading, m.unit)));
        table.push(head);
        for p in &points {
            let mut row = vec![p.index.to_string()];
            row.extend(p.values.iter().cloned());
            row.extend(p.metrics.iter().map(|v| match v {
                None => "-".to_string(),
                Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
                Some(v) => format!("{v:.3}"),
            }));
            table.push(row);
        }
        let mut t = Plot::new("sweep-points", Drawing::Svg(String::new())).heading("Every point");
        t.table = table;
        plots.push(t);
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(p, v)| format!("{p} = {}", v.join(", ")))
            .collect();
        let summary = format!(
            "sweep of {}: {} point(s) on this page; axes: {}\nx axis of the plots: {x_path}{}",
            self.scenario,
            points.len(),
            axes.join("; "),
            if numeric {
                ""
            } else {
                " (its values in the order given)"
            }
        );
        let title = format!("{} sweep", self.scenario);
        let page = SimPage {
            title: &title,
            plots: &plots,
            verdict: None,
            finding: None,
            summary: &summary,
        };
        page.html()
    }

    /// Writes `DIR/index.html` beside its final name and adds it to `all`, to be put in place
    /// with the sweep's other outputs; creates `DIR` if it is missing (not its parents).
    pub fn stage(
        &self,
        dir: &Path,
        all: &mut lossless_files::Commit,
    ) -> Result<PathBuf, lossless_files::OutputError> {
        super::stage_index(dir, &self.render(), all)
    }
}

/// Lines (with a dot at each point) of `lines` against the swept parameter `x_path`; `label`
/// names an x value; `x_range` fixes the x axis (else the points' span). The legend goes
/// under the plot, at most [`LEGEND_MAX`] names.
pub(super) fn sweep_chart(
    lines: &[Line],
    x_path: &str,
    unit: &str,
    label: &dyn Fn(f64) -> String,
    x_range: Option<(f64, f64)>,
) -> Drawing {
    const PLOT_HEIGHT: u32 = 300;
    let pts = || lines.iter().flat_map(|l| l.2.iter().copied());
    let (x0, x1) = x_range.unwrap_or_else(|| {
        pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        })
    });
    let (x0, x1) = if x1 > x0 { (x0, x1) } else { (x0 - 1.0, x0 + 1.0) };
    let pad = (x1 - x0) * 0.03;
    // an all-zero metric still gets a readable axis (0 to 1)
    let max = match pts().map(|p| p.1).fold(0.0f64, f64::max) {
        m if m > 0.0 => m * 1.05,
        _ => 1.0,
    };
    let named: Vec<(&str, RGBColor)> = lines
        .iter()
        .filter(|l| !l.0.is_empty())
        .take(LEGEND_MAX)
        .map(|l| (l.0.as_str(), l.1))
        .collect();
    let legend_height = if named.is_empty() {
        0
    } else {
        LEGEND_LINE * named.len() as u32 + 8
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (980, PLOT_HEIGHT + legend_height)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let (plot, legend) = root.split_vertically(PLOT_HEIGHT);
            let mut chart = ChartBuilder::on(&plot)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d((x0 - pad)..(x1 + pad), 0.0..max)?;
            chart
                .configure_mesh()
                .x_desc(x_path)
                .y_desc(unit)
                .x_label_formatter(&|v| label(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .draw()?;
            for (_, color, xy) in lines {
                chart.draw_series(LineSeries::new(xy.iter().copied(), color.stroke_width(2)))?;
                chart.draw_series(xy.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
            super::draw_legend(&legend, &named)?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = drawn {
            return Drawing::Failed(e.to_string());
        }
    }
    Drawing::Svg(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(index: usize, values: &[&str], lossless: f64) -> SweepPoint {
        SweepPoint {
            index,
            values: values.iter().map(|v| v.to_string()).collect(),
            metrics: [
                Some(lossless),
                Some(0.0),
                Some(index as f64),
                Some(1.5),
                None,
                None,
                None,
                None,
            ],
        }
    }

    #[test]
    fn the_numeric_axis_is_drawn_along_x_with_one_line_per_value_of_the_other() {
        let mut s = SweepReport::new(
            "incast",
            vec![
                (
                    "defaults.flow_control".into(),
                    vec!["\"pfc\"".into(), "\"off\"".into()],
                ),
                ("senders".into(), vec!["2".into(), "4".into(), "8".into()]),
            ],
        );
        assert_eq!(s.x_axis(), 1, "senders: numbers");
        for (k, (fc, n)) in [
            ("\"pfc\"", "2"),
            ("\"pfc\"", "4"),
            ("\"pfc\"", "8"),
            ("\"off\"", "2"),
            ("\"off\"", "4"),
            ("\"off\"", "8"),
        ]
        .into_iter()
        .enumerate()
        .rev()
        {
            s.add(point(
                k,
                &[fc, n],
                if fc == "\"off\"" { 100.0 * k as f64 } else { 0.0 },
            ));
        }
        let page = s.render();
        assert!(page.contains("<section id=\"sweep-lossless-drops\">"), "{page}");
        assert!(page.contains("against senders"));
        assert!(page.contains("One line per value of the other axes (2 lines)."));
        // the legend names both lines (the SVG escapes the quotes)
        assert!(page.contains("defaults.flow_control=&quot;pfc&quot;"), "{page}");
        assert!(page.contains("defaults.flow_control=&quot;off&quot;"));
        // a metric that is 0 everywhere says so (its lines lie on each other)
        let lossy = &page[page.find("<section id=\"sweep-lossy-drops\">").unwrap()..];
        assert!(lossy[..lossy.find("</section>").unwrap()].contains("0 at every point."));
        let lossless = &page[page.find("<section id=\"sweep-lossless-drops\">").unwrap()..];
        assert!(!lossless[..lossless.find("</section>").unwrap()].contains("0 at every point."));
        // metrics no point has are not drawn
        assert!(!page.contains("sweep-fct-p99"));
        // the table lists the points in order, with their values and metrics
        let table = &page[page.find("<section id=\"sweep-points\">").unwrap()..];
        let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
        assert_eq!(rows.len(), 6);
        assert!(
            rows[0].starts_with("<th>0</th><td>&#34;pfc&#34;</td><td>2</td><td>0</td>"),
            "{}",
            rows[0]
        );
        assert!(
            rows[5].starts_with("<th>5</th><td>&#34;off&#34;</td><td>8</td><td>500</td>"),
            "{}",
            rows[5]
        );
        assert!(rows[5].contains("<td>1.500</td><td>-</td>"), "{}", rows[5]);
    }

    #[test]
    fn a_non_numeric_axis_is_drawn_at_its_values_in_the_order_given() {
        let mut s = SweepReport::new(
            "incast",
            vec![("defaults.rate".into(), vec!["\"100G\"".into(), "\"25G\"".into()])],
        );
        assert_eq!(s.x_axis(), 0);
        s.add(point(0, &["\"100G\""], 1.0));
        s.add(point(1, &["\"25G\""], 2.0));
        let page = s.render();
        assert!(page.contains("2 points."), "{page}");
        assert!(page.contains("in the order given"));
        // the x labels are the values themselves
        assert!(page.contains("&quot;25G&quot;"), "{page}");
    }
}
