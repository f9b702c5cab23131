//! Per-flow throughput over time for chosen flows (`--plot-flows`): which flows, and their
//! delivered bytes per time bin (kept for at most [`MAX_FLOW_SERIES`] flows, so the page's
//! memory stays bounded at any fabric size).

use crate::report::Report;

/// Most flows whose delivered bytes per bin the report keeps (flows a `--plot-flows` name
/// pattern picks are kept first; past this, others are not).
pub const MAX_FLOW_SERIES: usize = 4096;

/// One item of `--plot-flows`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowPick {
    /// The flows the victim accounting (`[victims]`) found victims.
    Victims,
    /// The flows with the largest FCT slowdown (as many as `--top`, at most the lines a plot
    /// draws).
    Slowest,
    /// Flows whose name matches: `*` stands for any run of characters (`lossless:*`).
    Name(String),
}

/// The items of one `--plot-flows`, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowPicks(pub Vec<FlowPick>);

/// A `--plot-flows` value refused: one of its items is empty.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "--plot-flows {value:?}: item {item} is empty; allowed: victims, slowest or a flow name pattern such as lossless:*"
)]
pub struct FlowPicksError {
    /// The value given.
    pub value: String,
    /// The empty item's position, from 1.
    pub item: usize,
}

/// Parses `--plot-flows`: comma-separated items, each `victims`, `slowest` or a flow name
/// pattern (`*` any run of characters), e.g. `victims,lossless:*`.
pub fn parse_flow_picks(s: &str) -> Result<FlowPicks, FlowPicksError> {
    let mut out = Vec::new();
    for (i, item) in s.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            return Err(FlowPicksError {
                value: s.to_string(),
                item: i + 1,
            });
        }
        out.push(match item {
            "victims" => FlowPick::Victims,
            "slowest" => FlowPick::Slowest,
            p => FlowPick::Name(p.to_string()),
        });
    }
    Ok(FlowPicks(out))
}

/// Whether `name` matches `pattern`, in which `*` stands for any run of characters.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(at) => rest = &rest[at + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The flows `picks` choose in `report` (indices into `report.flows`, first chosen first,
/// each once), and what each item found: `slowest` takes up to `slowest` flows.
pub fn chosen(report: &Report, picks: &[FlowPick], slowest: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut push = |i: usize| {
        if !out.contains(&i) {
            out.push(i);
        }
    };
    for pick in picks {
        match pick {
            FlowPick::Victims => {
                let victims = report
                    .pathology
                    .as_ref()
                    .and_then(|p| p.victims.as_ref())
                    .map(|v| &v.flows[..])
                    .unwrap_or(&[]);
                for v in victims.iter().filter(|v| v.victim) {
                    if let Some(i) = report.flows.iter().position(|f| f.name == v.flow) {
                        push(i);
                    }
                }
            }
            FlowPick::Slowest => {
                let mut by: Vec<(usize, f64)> = report
                    .flows
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| f.fct_slowdown_ratio.map(|s| (i, s)))
                    .collect();
                by.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                for (i, _) in by.into_iter().take(slowest) {
                    push(i);
                }
            }
            FlowPick::Name(p) => {
                for (i, f) in report.flows.iter().enumerate() {
                    if name_matches(p, &f.name) {
                        push(i);
                    }
                }
            }
        }
    }
    out
}

/// What the report keeps of one flow's deliveries.
#[derive(Clone, Debug, Default)]
pub(super) enum FlowSlot {
    /// Not delivered to yet.
    #[default]
    Unseen,
    /// Not kept: [`MAX_FLOW_SERIES`] flows were kept before it.
    Skipped,
    /// Its delivered bytes per bin.
    Kept(Vec<f64>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_name_patterns_match_with_stars_for_any_run_of_characters() {
        assert!(name_matches("lossless:*", "lossless:client1"));
        assert!(name_matches("lossless:*", "lossless:"));
        assert!(!name_matches("lossless:*", "lossy:client1"));
        assert!(name_matches("victim", "victim"));
        assert!(!name_matches("victim", "victims"));
        assert!(name_matches("*:client1", "lossy:client1"));
        assert!(name_matches("a*b*c", "a-x-b-y-c"));
        assert!(!name_matches("a*b*c", "a-x-c-y-b"));
        assert!(!name_matches("ab*ba", "aba"), "the two ends may not overlap");
        assert!(name_matches("*", "anything"));
    }

    #[test]
    fn plot_flows_items_are_keywords_or_name_patterns_and_an_empty_one_is_refused() {
        assert_eq!(
            parse_flow_picks("victims, lossless:*,slowest").unwrap().0,
            [
                FlowPick::Victims,
                FlowPick::Name("lossless:*".into()),
                FlowPick::Slowest
            ]
        );
        let e = parse_flow_picks("victim,,x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--plot-flows \"victim,,x\": item 2 is empty; allowed: victims, slowest or a flow name pattern such as lossless:*"
        );
    }
}
