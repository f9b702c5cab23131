//! FCT slowdown by flow size, as the congestion-control papers plot it: the flows that
//! completed, in four size buckets (< 10 KB, 10–100 KB, 100 KB–1 MB, ≥ 1 MB of payload),
//! the CDF of the slowdown in each and its 50th, 95th and 99th percentiles.

use plotters::prelude::*;

use super::{Drawing, distinct, fmt_num};
pub use crate::report::fct_size::{BUCKETS, by_size};
use crate::stats::FctHistogram;

/// The table under the plot: per bucket with flows, its name, flows, p50, p95, p99 and max.
pub fn table(h: &[FctHistogram; 4]) -> Vec<Vec<String>> {
    let mut rows = vec![
        ["flow size", "flows", "slowdown p50", "p95", "p99", "max"]
            .map(String::from)
            .to_vec(),
    ];
    for (k, (name, _)) in BUCKETS.iter().enumerate() {
        if h[k].is_empty() {
            continue;
        }
        let q = |x: f64| format!("{:.2}", h[k].slowdown_quantile(x));
        rows.push(vec![
            name.to_string(),
            h[k].len().to_string(),
            q(0.5),
            q(0.95),
            q(0.99),
            q(1.0),
        ]);
    }
    rows
}

/// The CDF of the slowdown per size bucket (log x axis from 1).
pub fn chart(h: &[FctHistogram; 4]) -> Drawing {
    let series: Vec<super::XySeries> = (0..4)
        .filter(|&k| !h[k].is_empty())
        .map(|k| {
            let mut pts = Vec::new();
            let mut below = 0.0;
            for (v, f) in h[k].slowdown_cdf() {
                let v = v.max(1.0);
                pts.push((v, below));
                pts.push((v, f));
                below = f;
            }
            (
                format!("{} ({} flows)", BUCKETS[k].0, h[k].len()),
                distinct(k, 4),
                pts,
            )
        })
        .collect();
    let hi = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.0))
        .fold(2.0f64, f64::max)
        * 1.3;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (980, 340)).into_drawing_area();
        let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d((1.0..hi).log_scale(), 0.0..1.0)?;
            chart
                .configure_mesh()
                .x_desc("FCT slowdown (FCT / ideal, log scale)")
                .y_desc("fraction of flows")
                .x_label_formatter(&|v| fmt_num(*v))
                .draw()?;
            for (name, c, pts) in &series {
                let c = *c;
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                    .label(name.as_str())
                    .legend(super::legend_swatch(c));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::FlowReport;

    fn flow(size: u64, fct: u128, ideal: u128) -> FlowReport {
        FlowReport {
            name: "f".into(),
            src: "a".into(),
            dst: "b".into(),
            priority: 3,
            offered_bps: 0,
            size_bytes: Some(size),
            sent_frames: 0,
            sent_bytes: 0,
            delivered_frames: 0,
            delivered_bytes: 0,
            dropped_frames: 0,
            throughput_bps: 0,
            completion_ps: Some(fct),
            fct_ideal_ps: Some(ideal),
            fct_slowdown_ratio: Some(fct as f64 / ideal as f64),
            qp: None,
            throughput_without_cn_bps: None,
        }
    }

    #[test]
    fn flows_fall_in_their_size_bucket_and_unfinished_ones_in_none() {
        let mut unfinished = flow(5_000, 1, 1);
        unfinished.completion_ps = None;
        let flows = [
            flow(9_999, 2_000, 1_000),
            flow(10_000, 3_000, 1_000),
            flow(999_999, 1_000, 1_000),
            flow(1_000_000, 4_000, 1_000),
            flow(30_000_000, 5_000, 1_000),
            unfinished,
        ];
        let h = by_size(&flows);
        assert_eq!(h.each_ref().map(FctHistogram::len), [1, 1, 1, 2]);
        assert_eq!(h[0].slowdown_quantile(0.5), 2.0);
        assert_eq!(h[1].slowdown_quantile(0.5), 3.0);
        assert_eq!(h[3].slowdown_quantile(1.0), 5.0);
        let t = table(&h);
        assert_eq!(t.len(), 5);
        assert_eq!(t[4], ["≥ 1 MB", "2", "4.00", "5.00", "5.00", "5.00"]);
        assert!(matches!(chart(&h), Drawing::Svg(_)));
    }
}
