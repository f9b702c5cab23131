//! The topology picture of the HTML report: hosts and switches in tiers (hosts at the bottom,
//! each switch at its hop distance from the nearest host), links coloured by how long they were
//! paused, and an arrow per paused link direction pointing the way PFC went (from the port
//! that sent XOFF to the transmitter it paused), numbered in the order the links first paused,
//! so congestion spreading hop by hop reads off the picture; and the bottleneck link
//! directions, the cause (switch ports busy with frames waiting in their queue), in blue.

use std::collections::VecDeque;

use lossless_proto::units::{Duration, Instant};
use plotters::prelude::*;

use super::{Drawing, Pauses};
use crate::config::{NodeKind, SimConfig};
use crate::frame::NodeId;

/// Arrows numbered in the picture (the first to pause); the others are drawn unnumbered.
pub const NUMBERED: usize = 30;

/// Width of the picture in pixels.
const WIDTH: u32 = 1300;

/// Nodes and links of a scenario, laid out in tiers.
pub struct Topology {
    names: Vec<String>,
    /// Per node: its tier (0 = hosts) and its x position in pixels.
    place: Vec<(usize, f64)>,
    tiers: usize,
    is_switch: Vec<bool>,
    /// Per link: its two ends (ports 2i and 2i + 1 are at `a` and `b`).
    links: Vec<(NodeId, NodeId)>,
}

/// One paused link direction, for the list beside the picture.
pub struct Spread {
    /// Node whose port sent XOFF (the congested side).
    pub from: String,
    /// Node whose transmitter it paused.
    pub to: String,
    /// When the direction first paused.
    pub first: Instant,
    /// Total time paused.
    pub paused: Duration,
}

impl Topology {
    /// The layout of `config`: tiers by breadth-first distance from the hosts; within a tier
    /// the nodes ordered by the mean position of their neighbours in the tier below (hosts
    /// under their first switch), so a fat tree's pods sit above their hosts.
    pub fn new(config: &SimConfig) -> Topology {
        let n = config.nodes.len();
        let is_switch: Vec<bool> = config
            .nodes
            .iter()
            .map(|c| matches!(c.kind, NodeKind::Switch(_)))
            .collect();
        let links: Vec<(NodeId, NodeId)> = config.links.iter().map(|l| (l.a, l.b)).collect();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in &links {
            adj[a as usize].push(b as usize);
            adj[b as usize].push(a as usize);
        }
        let mut tier = vec![usize::MAX; n];
        let mut queue = VecDeque::new();
        for i in 0..n {
            if !is_switch[i] {
                tier[i] = 0;
                queue.push_back(i);
            }
        }
        while let Some(i) = queue.pop_front() {
            for &j in &adj[i] {
                if tier[j] == usize::MAX {
                    tier[j] = tier[i] + 1;
                    queue.push_back(j);
                }
            }
        }
        // switches no host reaches go on a tier of their own, above the rest
        let top = tier
            .iter()
            .filter(|&&t| t != usize::MAX)
            .max()
            .copied()
            .unwrap_or(0);
        for t in &mut tier {
            if *t == usize::MAX {
                *t = top + 1;
            }
        }
        let tiers = tier.iter().max().map_or(1, |t| t + 1);
        let mut order: Vec<f64> = vec![0.0; n];
        // tier 1 in scenario order, hosts under their first switch, then upwards by barycentre
        let rank = |members: &mut Vec<usize>, key: &dyn Fn(usize) -> f64| {
            members.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
        };
        let mut by_tier: Vec<Vec<usize>> = vec![Vec::new(); tiers];
        for i in 0..n {
            by_tier[tier[i]].push(i);
        }
        for (k, &i) in by_tier.get(1).into_iter().flatten().enumerate() {
            order[i] = k as f64;
        }
        let first_switch = |i: usize| {
            adj[i]
                .iter()
                .find(|&&j| tier[j] == 1)
                .map_or(f64::MAX, |&j| order[j])
        };
        rank(&mut by_tier[0], &|i| first_switch(i));
        let spread = |members: &[usize], order: &mut [f64]| {
            let w = WIDTH as f64 - 40.0;
            for (k, &i) in members.iter().enumerate() {
                order[i] = 20.0 + (k as f64 + 0.5) * w / members.len() as f64;
            }
        };
        spread(&by_tier[0].clone(), &mut order);
        if tiers > 1 {
            let below = |i: usize, order: &[f64]| {
                let xs: Vec<f64> = adj[i]
                    .iter()
                    .filter(|&&j| tier[j] + 1 == tier[i])
                    .map(|&j| order[j])
                    .collect();
                if xs.is_empty() {
                    f64::MAX
                } else {
                    xs.iter().sum::<f64>() / xs.len() as f64
                }
            };
            for members in by_tier.iter_mut().skip(1) {
                let snapshot = order.clone();
                rank(members, &|i| below(i, &snapshot));
                spread(members, &mut order);
            }
        }
        Topology {
            names: config.nodes.iter().map(|c| c.name.clone()).collect(),
            place: (0..n).map(|i| (tier[i], order[i])).collect(),
            tiers,
            is_switch,
            links,
        }
    }

    /// Ends of port `p`: its own node and its peer.
    pub(super) fn ends(&self, p: usize) -> (NodeId, NodeId) {
        let (a, b) = self.links[p / 2];
        if p.is_multiple_of(2) { (a, b) } else { (b, a) }
    }

    /// The paused link directions, earliest first pause first.
    pub fn spread(&self, pauses: &Pauses) -> Vec<(usize, Instant, Duration)> {
        let mut v: Vec<(usize, Instant, Duration)> = pauses
            .iter()
            .enumerate()
            .filter(|(p, iv)| !iv.is_empty() && p / 2 < self.links.len())
            .map(|(p, iv)| {
                let total = iv
                    .iter()
                    .fold(Duration::ZERO, |t, &(a, b, _)| t + b.saturating_duration_since(a));
                (p, iv[0].0, total)
            })
            .collect();
        v.sort_by_key(|&(p, first, _)| (first, p));
        v
    }

    /// The list beside the picture: the first `NUMBERED` paused directions in order.
    pub fn spread_list(&self, pauses: &Pauses) -> Vec<Spread> {
        self.spread(pauses)
            .into_iter()
            .take(NUMBERED)
            .map(|(p, first, paused)| {
                let (me, peer) = self.ends(p);
                Spread {
                    from: self.names[peer as usize].clone(),
                    to: self.names[me as usize].clone(),
                    first,
                    paused,
                }
            })
            .collect()
    }

    /// The picture; the link directions of `bottlenecks` (ports) drawn in blue with an arrow
    /// the way their data went.
    pub fn draw(&self, pauses: &Pauses, span: Duration, bottlenecks: &[usize]) -> Drawing {
        let at = Layout::new(self);
        let span_ps = span.as_ps().max(1) as f64;
        let spread = self.spread(pauses);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, at.height)).into_drawing_area();
            let drawn = (|| -> Drawn {
                root.fill(&WHITE)?;
                legend(&root)?;
                self.draw_links(&root, &at, &spread, span_ps)?;
                self.draw_bottlenecks(&root, &at, bottlenecks)?;
                self.draw_nodes(&root, &at)?;
                self.draw_spread(&root, &at, &spread, span_ps)?;
                root.present()?;
                Ok(())
            })();
            if let Err(e) = drawn {
                return Drawing::Failed(e.to_string());
            }
        }
        Drawing::Svg(svg)
    }

    /// The links: never paused first (thin, grey), paused on top, coloured by the longest
    /// time either direction was paused.
    fn draw_links(
        &self,
        root: &Area<'_>,
        at: &Layout<'_>,
        spread: &[(usize, Instant, Duration)],
        span_ps: f64,
    ) -> Drawn {
        let mut paused_ps = vec![0u128; self.links.len()];
        for &(p, _, total) in spread {
            paused_ps[p / 2] = paused_ps[p / 2].max(total.as_ps());
        }
        let mut order: Vec<usize> = (0..self.links.len()).collect();
        order.sort_by_key(|&l| paused_ps[l]);
        for l in order {
            let (a, b) = self.links[l];
            let style = match paused_ps[l] {
                0 => RGBColor(205, 205, 205).stroke_width(1),
                p => heat(p as f64 / span_ps).stroke_width(3),
            };
            let pts: Vec<(i32, i32)> = (0..=16)
                .map(|k| px(curve(at.xy(a), at.xy(b), k as f64 / 16.0).0))
                .collect();
            root.draw(&PathElement::new(pts, style))?;
        }
        Ok(())
    }

    /// The bottlenecks: thick blue, an open arrowhead the way the data went.
    fn draw_bottlenecks(&self, root: &Area<'_>, at: &Layout<'_>, bottlenecks: &[usize]) -> Drawn {
        for &p in bottlenecks.iter().filter(|&&p| p / 2 < self.links.len()) {
            let (a, b) = self.links[p / 2];
            let pts: Vec<(i32, i32)> = (0..=16)
                .map(|k| px(curve(at.xy(a), at.xy(b), k as f64 / 16.0).0))
                .collect();
            root.draw(&PathElement::new(pts, BOTTLENECK.stroke_width(5)))?;
            let (me, _) = self.ends(p);
            let (tip, (dx, dy)) = curve(at.xy(a), at.xy(b), if me == a { 0.55 } else { 0.45 });
            let sign = if me == a { 1.0 } else { -1.0 };
            let len = (dx * dx + dy * dy).sqrt().max(1e-9);
            let (ux, uy) = (sign * dx / len, sign * dy / len);
            let size = 12.0;
            let base = (tip.0 - ux * size, tip.1 - uy * size);
            let wing = (-uy * size * 0.6, ux * size * 0.6);
            root.draw(&PathElement::new(
                vec![
                    px((base.0 + wing.0, base.1 + wing.1)),
                    px(tip),
                    px((base.0 - wing.0, base.1 - wing.1)),
                ],
                BOTTLENECK.stroke_width(3),
            ))?;
        }
        Ok(())
    }

    /// The nodes, labelled where their tier leaves room.
    fn draw_nodes(&self, root: &Area<'_>, at: &Layout<'_>) -> Drawn {
        for (i, &(t, x)) in self.place.iter().enumerate() {
            let gap = (WIDTH as f64 - 40.0) / at.per_tier[t].max(1) as f64;
            let y = at.y_of(t);
            let r = (gap * 0.35).clamp(1.0, 7.0);
            let c = if self.is_switch[i] {
                RGBColor(40, 70, 140)
            } else {
                RGBColor(90, 90, 90)
            };
            root.draw(&Rectangle::new(
                [px((x - r, y - r)), px((x + r, y + r))],
                c.filled(),
            ))?;
            if gap >= 34.0 {
                let label = Text::new(
                    self.names[i].chars().take(24).collect::<String>(),
                    // centred on the node (about 6 px a character)
                    px((
                        x - 3.0 * self.names[i].chars().count().min(24) as f64,
                        if t == 0 { y + r + 4.0 } else { y - r - 14.0 },
                    )),
                    ("sans-serif", 10).into_font(),
                );
                root.draw(&label)?;
            }
        }
        Ok(())
    }

    /// The arrows: from the XOFF sender towards the paused transmitter, coloured by how long
    /// it paused, the first [`NUMBERED`] numbered.
    fn draw_spread(
        &self,
        root: &Area<'_>,
        at: &Layout<'_>,
        spread: &[(usize, Instant, Duration)],
        span_ps: f64,
    ) -> Drawn {
        for (rank, &(p, _, total)) in spread.iter().enumerate() {
            let (_, peer) = self.ends(p);
            // along the link as drawn (from `a` to `b`), 62 % of the way from the XOFF sender
            let (a, _) = self.links[p / 2];
            let t = if peer == a { 0.62 } else { 0.38 };
            let (tip, (dx, dy)) = curve(at.xy(a), at.xy(self.links[p / 2].1), t);
            let sign = if peer == a { 1.0 } else { -1.0 };
            let len = (dx * dx + dy * dy).sqrt().max(1e-9);
            let (ux, uy) = (sign * dx / len, sign * dy / len);
            let size = 9.0;
            let base = (tip.0 - ux * size, tip.1 - uy * size);
            let wing = (-uy * size * 0.5, ux * size * 0.5);
            let c = heat(total.as_ps() as f64 / span_ps);
            root.draw(&Polygon::new(
                vec![
                    px(tip),
                    px((base.0 + wing.0, base.1 + wing.1)),
                    px((base.0 - wing.0, base.1 - wing.1)),
                ],
                c.mix(1.0).filled(),
            ))?;
            root.draw(&PathElement::new(
                vec![
                    px(tip),
                    px((base.0 + wing.0, base.1 + wing.1)),
                    px((base.0 - wing.0, base.1 - wing.1)),
                    px(tip),
                ],
                BLACK.stroke_width(1),
            ))?;
            if rank < NUMBERED {
                // centred 12 px beside the arrowhead (about 6 × 11 px a digit)
                let label = format!("{}", rank + 1);
                let at = (
                    tip.0 - uy * 12.0 - 3.0 * label.len() as f64,
                    tip.1 + ux * 12.0 - 6.0,
                );
                root.draw(&Text::new(
                    label,
                    px(at),
                    ("sans-serif", 11).into_font().color(&BLACK),
                ))?;
            }
        }
        Ok(())
    }
}

/// The drawing area of the picture.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// What a drawing step returns.
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Where the picture puts the tiers and the nodes.
struct Layout<'a> {
    topology: &'a Topology,
    /// Room above the top tier for arcs between its nodes.
    bow: f64,
    /// The top tier.
    top: usize,
    /// Nodes per tier.
    per_tier: Vec<usize>,
    /// The picture's height in pixels.
    height: u32,
}

/// Pixels between tiers.
const TIER_GAP: f64 = 130.0;

impl<'a> Layout<'a> {
    fn new(topology: &'a Topology) -> Self {
        let top = topology.tiers - 1;
        let place = &topology.place;
        let bow = topology
            .links
            .iter()
            .filter(|&&(a, b)| place[a as usize].0 == top && place[b as usize].0 == top)
            .map(|&(a, b)| ((place[a as usize].1 - place[b as usize].1).abs() * 0.3).min(110.0) / 2.0)
            .fold(0.0, f64::max);
        let mut per_tier = vec![0usize; topology.tiers];
        for &(t, _) in place {
            per_tier[t] += 1;
        }
        Layout {
            topology,
            bow,
            top,
            per_tier,
            height: (70.0 + bow + TIER_GAP * top as f64) as u32 + 50,
        }
    }

    /// The height of tier `t`.
    fn y_of(&self, t: usize) -> f64 {
        70.0 + self.bow + TIER_GAP * (self.top - t) as f64
    }

    /// Where node `i` is.
    fn xy(&self, i: NodeId) -> (f64, f64) {
        let (t, x) = self.topology.place[i as usize];
        (x, self.y_of(t))
    }
}

/// A point in whole pixels.
fn px((x, y): (f64, f64)) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

/// The colour scale and the key, top left.
fn legend(root: &Area<'_>) -> Drawn {
    let font = ("sans-serif", 11).into_font();
    root.draw(&Text::new("link paused for:  0", (10, 10), font.clone()))?;
    for k in 0..=20 {
        let c = heat(k as f64 / 20.0);
        let x = 125 + k * 8;
        root.draw(&Rectangle::new([(x, 9), (x + 8, 21)], c.filled()))?;
    }
    root.draw(&Text::new("100 % of the span", (297, 10), font.clone()))?;
    root.draw(&PathElement::new(
        vec![(410, 15), (440, 15)],
        RGBColor(205, 205, 205).stroke_width(1),
    ))?;
    root.draw(&Text::new("never paused", (445, 10), font.clone()))?;
    root.draw(&Text::new(
            "arrow: PFC from the port that sent XOFF towards the transmitter it paused; number: order of first pause",
            (540, 10),
            font.clone(),
        ))?;
    root.draw(&PathElement::new(
        vec![(10, 33), (40, 33)],
        BOTTLENECK.stroke_width(5),
    ))?;
    root.draw(&Text::new(
            "bottleneck: a switch port busy at least 90 % of the flows' active span with frames waiting in its queue (open arrow: the way its data went)",
            (45, 28),
            font.clone(),
        ))?;
    Ok(())
}

/// The point at `t` (0..=1) of the link drawn from `a` to `b`, and the direction there: a
/// straight line between tiers, an arc bowed upwards (higher the longer it is) within a tier,
/// so links between nodes of one row do not run through the nodes between them.
fn curve(a: (f64, f64), b: (f64, f64), t: f64) -> ((f64, f64), (f64, f64)) {
    let mid = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
    let c = if (a.1 - b.1).abs() < 1.0 {
        (mid.0, mid.1 - ((b.0 - a.0).abs() * 0.3).min(110.0))
    } else {
        mid
    };
    let u = 1.0 - t;
    let point = (
        u * u * a.0 + 2.0 * u * t * c.0 + t * t * b.0,
        u * u * a.1 + 2.0 * u * t * c.1 + t * t * b.1,
    );
    let dir = (
        2.0 * u * (c.0 - a.0) + 2.0 * t * (b.0 - c.0),
        2.0 * u * (c.1 - a.1) + 2.0 * t * (b.1 - c.1),
    );
    (point, dir)
}

/// The colour of a bottleneck link (apart from the paused links' yellow to red).
const BOTTLENECK: RGBColor = RGBColor(30, 90, 200);

/// The colour of a paused fraction `f` (0..=1): yellow through orange to dark red.
pub fn heat(f: f64) -> RGBColor {
    let f = f.clamp(0.0, 1.0);
    // from (253, 216, 53) to (183, 28, 28)
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    RGBColor(mix(253.0, 183.0), mix(216.0, 28.0), mix(53.0, 28.0))
}
