//! The HTML page of `lossless sim cc-compare --report DIR`: per fabric, the FCT slowdown by
//! flow size (median, then 99th percentile), one line per congestion control, and the table
//! of every run. The page is the same template as a single run's, its plots drawn by the
//! sweep page's line chart.

use std::path::{Path, PathBuf};

use super::sweep::{Line, sweep_chart};
use super::{Drawing, Plot, SimPage, distinct};
use crate::report::cc_compare::{CcRun, table};
use crate::report::fct_size::BUCKETS;

/// Section ids of the plots: per fabric (in order, at most 4), the p50 and the p99 plot.
const IDS: [[&str; 2]; 4] = [
    ["cc-fabric1-p50", "cc-fabric1-p99"],
    ["cc-fabric2-p50", "cc-fabric2-p99"],
    ["cc-fabric3-p50", "cc-fabric3-p99"],
    ["cc-fabric4-p50", "cc-fabric4-p99"],
];

/// The page of a comparison: its runs, in table order.
#[derive(Clone, Debug)]
pub struct CcCompareReport {
    runs: Vec<CcRun>,
    /// What was compared, said above the plots.
    about: String,
}

impl CcCompareReport {
    /// The one file [`CcCompareReport::stage`] writes in its directory (the plots are inline).
    pub const FILE: &'static str = "index.html";

    /// The page of `runs` (fabric by fabric, each under its CCs), `about` saying what ran.
    pub fn new(runs: Vec<CcRun>, about: &str) -> CcCompareReport {
        CcCompareReport {
            runs,
            about: about.to_string(),
        }
    }

    /// The lines of the plot of quantile `q` (0: p50, 1: p99) of `fabric`: one per CC with
    /// completed flows, a point per size bucket with flows, in the runs' order.
    pub fn lines(&self, fabric: &str, q: usize) -> Vec<(String, Vec<(f64, f64)>)> {
        let runs: Vec<&CcRun> = self.runs.iter().filter(|r| r.fabric == fabric).collect();
        runs.iter()
            .map(|r| {
                let pts = r
                    .by_size
                    .iter()
                    .map(|b| {
                        let s = &b.slowdown;
                        (b.bucket as f64, if q == 0 { s.p50_ratio } else { s.p99_ratio })
                    })
                    .collect();
                (r.cc.clone(), pts)
            })
            .filter(|l: &(String, Vec<(f64, f64)>)| !l.1.is_empty())
            .collect()
    }

    /// The fabrics, in the runs' order.
    fn fabrics(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.fabric.as_str()) {
                out.push(&r.fabric);
            }
        }
        out
    }

    /// Renders the page.
    pub fn render(&self) -> String {
        let label = |v: f64| -> String {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 {
                BUCKETS
                    .get(i as usize)
                    .map_or_else(String::new, |b| b.0.to_string())
            } else {
                String::new()
            }
        };
        let mut plots = Vec::new();
        for (f, fabric) in self.fabrics().into_iter().enumerate().take(IDS.len()) {
            let ccs = self.runs.iter().filter(|r| r.fabric == fabric).count();
            for (q, name) in ["median (p50)", "99th percentile"].into_iter().enumerate() {
                let lines: Vec<Line> = self
                    .lines(fabric, q)
                    .into_iter()
                    .enumerate()
                    .map(|(i, (cc, pts))| (cc, distinct(i, ccs), pts))
                    .collect();
                if lines.is_empty() {
                    continue;
                }
                let mut plot = Plot::new(
                    IDS[f][q],
                    // one category per bucket: the x axis spans all four
                    sweep_chart_buckets(&lines, &label),
                )
                .heading(&format!(
                    "{fabric}: FCT slowdown {name} by flow size, one line per congestion control"
                ));
                let missing: Vec<&str> = self
                    .runs
                    .iter()
                    .filter(|r| r.fabric == fabric && r.by_size.is_empty())
                    .map(|r| r.cc.as_str())
                    .collect();
                plot.caption = format!(
                    "Slowdown = FCT / the flow's FCT alone in the idle fabric; a point per size bucket (payload bytes) with completed flows ({} lines).{}",
                    lines.len(),
                    if missing.is_empty() {
                        String::new()
                    } else {
                        format!(" No completed flow, no line: {}.", missing.join(", "))
                    }
                );
                plots.push(plot);
            }
        }
        let mut t = Plot::new("cc-runs", Drawing::Svg(String::new())).heading("Every run");
        t.table = table(&self.runs)
            .lines()
            .map(|l| {
                // the text table's columns are separated by two spaces or more
                l.split("  ")
                    .filter(|c| !c.is_empty())
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .collect();
        t.caption = "Per run: flows completed of the finite flows; slowdown over all completed flows, then per size bucket; PFC XOFF frames sent and time paused, summed over port priorities; frames dropped (of lossless priorities); CE-marked packets received, rate cuts and the lowest rate of the QPs; events per wall-clock second.".into();
        plots.push(t);
        let title = "congestion controls compared";
        let page = SimPage {
            title,
            plots: &plots,
            verdict: None,
            finding: None,
            summary: &self.about,
        };
        page.html()
    }

    /// Writes `DIR/index.html` beside its final name and adds it to `all`, to be put in place
    /// with the comparison's other outputs; creates `DIR` if it is missing (not its parents).
    pub fn stage(
        &self,
        dir: &Path,
        all: &mut lossless_files::Commit,
    ) -> Result<PathBuf, lossless_files::OutputError> {
        super::stage_index(dir, &self.render(), all)
    }
}

/// [`sweep_chart`] over the four size buckets, whatever buckets the lines reach.
fn sweep_chart_buckets(lines: &[Line], label: &dyn Fn(f64) -> String) -> Drawing {
    sweep_chart(
        lines,
        "flow size (payload bytes)",
        "slowdown (FCT / ideal)",
        label,
        Some((0.0, (BUCKETS.len() - 1) as f64)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::cc_compare::{BucketSlowdown, Slowdown};

    fn run(fabric: &str, cc: &str, buckets: &[(usize, f64)]) -> CcRun {
        let s = |p: f64| Slowdown {
            flows: 3,
            p50_ratio: p,
            p95_ratio: p * 2.0,
            p99_ratio: p * 3.0,
            max_ratio: p * 3.0,
        };
        CcRun {
            fabric: fabric.into(),
            cc: cc.into(),
            flows: 3,
            flows_completed: if buckets.is_empty() { 0 } else { 3 },
            slowdown: buckets.first().map(|b| s(b.1)),
            by_size: buckets
                .iter()
                .map(|&(k, p)| BucketSlowdown {
                    size: BUCKETS[k].0,
                    bucket: k,
                    slowdown: s(p),
                })
                .collect(),
            pfc_xoff_sent_frames: 0,
            paused_ps: 0,
            max_paused_ps: 0,
            lossless_dropped_frames: 0,
            dropped_frames: 0,
            ecn_marked_received_frames: 0,
            rate_decreases_total: 0,
            min_qp_rate_bps: None,
            events: 1,
            wall_s: 1.0,
            events_per_s: 1.0,
            sound: true,
        }
    }

    #[test]
    fn a_cc_without_completed_flows_has_no_line_and_an_empty_bucket_no_point() {
        let page = CcCompareReport::new(
            vec![
                run("a", "dcqcn", &[(0, 1.5), (3, 4.0)]),
                run("a", "hpcc", &[(1, 1.25)]),
                run("a", "timely", &[]),
                run("b", "dcqcn", &[(2, 2.0)]),
            ],
            "test",
        );
        let l = page.lines("a", 1);
        assert_eq!(
            l,
            [
                ("dcqcn".to_string(), vec![(0.0, 4.5), (3.0, 12.0)]),
                ("hpcc".to_string(), vec![(1.0, 3.75)]),
            ]
        );
        assert_eq!(page.lines("b", 0), [("dcqcn".to_string(), vec![(2.0, 2.0)])]);
        let html = page.render();
        let a = &html[html.find("<section id=\"cc-fabric1-p50\">").unwrap()..];
        let a = &a[..a.find("</section>").unwrap()];
        assert!(
            a.contains("(2 lines). No completed flow, no line: timely."),
            "{a}"
        );
        assert!(!a.contains(">\ntimely\n</text>"), "timely is in no legend");
        assert!(html.contains("<section id=\"cc-fabric2-p99\">"));
        assert!(!html.contains("cc-fabric3"));
    }
}
