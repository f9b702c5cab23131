//! A trace sink that writes an HTML report with inline SVG plots (no network, no scripts):
//! delivered throughput per priority over time, buffer occupancy per (switch, ingress port,
//! priority) and per host receive backlog, and a pause timeline per port. Plots are drawn as
//! plain SVG polylines and rectangles.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use lossless_proto::units::{Duration, Instant, PS_PER_SEC};

use crate::config::{NodeKind, SimConfig};
use crate::frame::{Frame, NodeId, PortId};
use crate::observer::Observer;

/// Time bins across the run.
pub const BINS: usize = 200;

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// Peak per bin, last bin touched, last value.
type Series = (Vec<u64>, usize, u64);

/// Collects time series during a run and renders them.
pub struct HtmlReport {
    title: String,
    bin_ps: u128,
    node_names: Vec<String>,
    is_switch: Vec<bool>,
    port_names: Vec<String>,
    delivered: [Vec<u64>; 8],
    /// Per key: peak per bin, last bin touched, last value.
    occupancy: BTreeMap<(NodeId, u32, u8), Series>,
    pauses: Vec<Vec<(Instant, Instant, u8)>>,
    open: Vec<Option<(Instant, u8)>>,
}

impl HtmlReport {
    /// A collector for `config`.
    pub fn new(config: &SimConfig) -> Self {
        let mut port_names = Vec::new();
        let mut local = vec![0u32; config.nodes.len()];
        for link in &config.links {
            for (me, peer) in [(link.a, link.b), (link.b, link.a)] {
                port_names.push(format!(
                    "{}.{} → {}",
                    config.nodes[me as usize].name, local[me as usize], config.nodes[peer as usize].name
                ));
                local[me as usize] += 1;
            }
        }
        let n = port_names.len();
        HtmlReport {
            title: config.name.clone(),
            bin_ps: (config.duration.as_ps() / BINS as u128).max(1),
            node_names: config.nodes.iter().map(|n| n.name.clone()).collect(),
            is_switch: config
                .nodes
                .iter()
                .map(|n| matches!(n.kind, NodeKind::Switch(_)))
                .collect(),
            port_names,
            delivered: std::array::from_fn(|_| vec![0; BINS]),
            occupancy: BTreeMap::new(),
            pauses: vec![Vec::new(); n],
            open: vec![None; n],
        }
    }

    fn bin(&self, at: Instant) -> usize {
        ((at.as_ps() / self.bin_ps) as usize).min(BINS - 1)
    }

    /// Renders the report (closing pauses still running at `end`) with `summary` as text.
    pub fn render(&mut self, end: Instant, summary: &str) -> String {
        for (p, o) in self.open.iter_mut().enumerate() {
            if let Some((from, mask)) = o.take() {
                self.pauses[p].push((from, end, mask));
            }
        }
        let mut h = String::new();
        let _ = write!(
            h,
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>lossless sim: {t}</title>\
             <style>body{{font-family:sans-serif;margin:2em}}pre{{font-size:12px;background:#f6f6f6;padding:1em;overflow:auto}}\
             svg{{background:#fff;border:1px solid #ccc;margin:0.5em 0}}text{{font-size:11px}}</style></head><body>\
             <h1>lossless sim: {t}</h1>",
            t = esc(&self.title)
        );
        let span = Duration::from_ps(self.bin_ps * BINS as u128);
        // 1. delivered throughput per priority
        let secs = self.bin_ps as f64 / PS_PER_SEC as f64;
        let series: Vec<(String, &str, Vec<f64>)> = (0..8)
            .filter(|&p| self.delivered[p].iter().any(|&b| b > 0))
            .map(|p| {
                let v = self.delivered[p]
                    .iter()
                    .map(|&b| b as f64 * 8.0 / secs / 1e9)
                    .collect();
                (format!("priority {p}"), COLORS[p], v)
            })
            .collect();
        h.push_str("<h2>Delivered throughput per priority (Gb/s)</h2>");
        h.push_str(&line_chart(&series, span, "Gb/s"));
        // 2. buffer occupancy
        h.push_str("<h2>Buffer occupancy per ingress port and priority (bytes, peak per bin)</h2>");
        let mut occ: Vec<(String, &str, Vec<f64>)> = Vec::new();
        let end_bin = self.bin(end);
        for (v, last_bin, last) in self.occupancy.values_mut() {
            for x in &mut v[(*last_bin + 1).min(end_bin + 1)..=end_bin] {
                *x = *last;
            }
        }
        for (i, (&(node, port, prio), (v, _, _))) in self.occupancy.iter().enumerate() {
            if v.iter().all(|&b| b == 0) {
                continue;
            }
            let name = if self.is_switch[node as usize] {
                format!("{} in {} prio {}", self.node_names[node as usize], port, prio)
            } else {
                format!("{} rx backlog", self.node_names[node as usize])
            };
            occ.push((name, COLORS[i % 8], v.iter().map(|&b| b as f64).collect()));
        }
        h.push_str(&line_chart(&occ, span, "bytes"));
        // 3. pause timeline
        h.push_str("<h2>Pause timeline: when each port's transmitter was paused by its peer</h2>");
        h.push_str(&self.timeline(span));
        let _ = write!(h, "<h2>Summary</h2><pre>{}</pre></body></html>", esc(summary));
        h
    }

    fn timeline(&self, span: Duration) -> String {
        let rows: Vec<usize> = (0..self.pauses.len())
            .filter(|&p| !self.pauses[p].is_empty())
            .collect();
        let (w, left, row_h) = (900.0, 200.0, 16.0);
        let height = 30.0 + row_h * rows.len().max(1) as f64;
        let mut s = format!(
            "<svg width=\"{}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">",
            w + left + 20.0
        );
        let total = span.as_ps() as f64;
        for (r, &p) in rows.iter().enumerate() {
            let y = 10.0 + row_h * r as f64;
            let _ = write!(
                s,
                "<text x=\"4\" y=\"{}\">{}</text>",
                y + 11.0,
                esc(&self.port_names[p])
            );
            for &(a, b, mask) in &self.pauses[p] {
                let x0 = left + w * a.as_ps() as f64 / total;
                let x1 = left + w * b.as_ps() as f64 / total;
                let c = COLORS[(7 - mask.leading_zeros()) as usize % 8];
                let _ = write!(
                    s,
                    "<rect x=\"{x0:.2}\" y=\"{y}\" width=\"{:.2}\" height=\"{}\" fill=\"{c}\"><title>mask {mask:#04x}: {} … {}</title></rect>",
                    (x1 - x0).max(0.5),
                    row_h - 3.0,
                    a,
                    b
                );
            }
        }
        let _ = write!(
            s,
            "<text x=\"{left}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{span}</text></svg>",
            height - 4.0,
            left + w,
            height - 4.0
        );
        s
    }

    /// Writes `DIR/index.html`.
    pub fn write(&mut self, dir: &Path, end: Instant, summary: &str) -> std::io::Result<std::path::PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("index.html");
        std::fs::write(&path, self.render(end, summary))?;
        Ok(path)
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn line_chart(series: &[(String, &str, Vec<f64>)], span: Duration, unit: &str) -> String {
    let (w, h, left, top) = (900.0, 260.0, 70.0, 10.0);
    let legend_h = 14.0 * series.len() as f64;
    let max = series
        .iter()
        .flat_map(|s| s.2.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let mut s = format!(
        "<svg width=\"{}\" height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
        w + left + 20.0,
        h + top + 30.0 + legend_h
    );
    let _ = write!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"#999\"/>"
    );
    for k in 0..=4 {
        let v = max * k as f64 / 4.0;
        let y = top + h - h * k as f64 / 4.0;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            y + 4.0,
            fmt_num(v)
        );
    }
    let _ = write!(s, "<text x=\"4\" y=\"{}\">{unit}</text>", top + 10.0);
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{span}</text>",
        top + h + 14.0,
        left + w,
        top + h + 14.0
    );
    for (i, (name, color, v)) in series.iter().enumerate() {
        let n = v.len().max(1) as f64;
        let pts: Vec<String> = v
            .iter()
            .enumerate()
            .map(|(k, &y)| {
                format!(
                    "{:.1},{:.1}",
                    left + w * (k as f64 + 0.5) / n,
                    top + h - h * y / max
                )
            })
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
            pts.join(" ")
        );
        let y = top + h + 30.0 + 14.0 * i as f64;
        let _ = write!(
            s,
            "<rect x=\"{left}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"{y}\">{}</text>",
            y - 9.0,
            left + 14.0,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

fn fmt_num(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

impl Observer for HtmlReport {
    const PAUSE_STATE: bool = true;

    fn delivered(&mut self, _node: NodeId, frame: &Frame, at: Instant) {
        let b = self.bin(at);
        self.delivered[frame.priority as usize & 7][b] += u64::from(frame.len);
    }
    fn buffer_changed(&mut self, node: NodeId, local_port: u32, prio: u8, bytes: u64, at: Instant) {
        let b = self.bin(at);
        let (v, last_bin, last) = self
            .occupancy
            .entry((node, local_port, prio))
            .or_insert_with(|| (vec![0; BINS], 0, 0));
        // the level held since the last change fills the bins in between
        for x in &mut v[(*last_bin + 1).min(b)..b] {
            *x = *last;
        }
        v[b] = v[b].max(bytes);
        *last_bin = b;
        *last = bytes;
    }
    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        let p = port as usize;
        if p >= self.open.len() {
            return;
        }
        if let Some((from, m)) = self.open[p].take() {
            self.pauses[p].push((from, at, m));
        }
        if mask != 0 {
            self.open[p] = Some((at, mask));
        }
    }
}
