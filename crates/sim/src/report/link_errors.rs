//! The report's `link_errors` section (present only when a link has a bit error rate): per
//! receiving port of such a link, what its FCS check discarded.

use std::fmt::Write as _;

use serde::Serialize;

use crate::event::EventQueue;
use crate::frame::PortId;
use crate::observer::Observer;
use crate::sim::{Event, Simulator};

/// One receiving port of a link with bit errors.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkErrorReport {
    /// The receiving node.
    pub node: String,
    /// Its port index within the node.
    pub port: u32,
    /// The node sending over the link.
    pub peer: String,
    /// The link's bit error rate.
    pub ber: f64,
    /// Data frames discarded (on a lossless priority each is also in `lossless.drops`).
    pub corrupted_data_frames: u64,
    /// PAUSE/PFC frames discarded: flow control the port never saw.
    pub corrupted_control_frames: u64,
    /// LLDPDUs discarded.
    pub corrupted_lldp_frames: u64,
    /// When the first corrupted frame arrived, if one did.
    pub first_ps: Option<u128>,
}

/// The section, or `None` when no link has a bit error rate.
pub(crate) fn collect<O: Observer, Q: EventQueue<Event>>(
    sim: &Simulator<O, Q>,
) -> Option<Vec<LinkErrorReport>> {
    let names: Vec<&str> = sim.config.nodes.iter().map(|n| n.name.as_str()).collect();
    let out: Vec<LinkErrorReport> = (0..sim.ports.len() as PortId)
        .filter_map(|p| {
            let (ber, e) = sim.fcs_errors(p)?;
            let port = &sim.ports[p as usize];
            Some(LinkErrorReport {
                node: names[port.node as usize].to_string(),
                port: port.local,
                peer: names[sim.ports[port.peer as usize].node as usize].to_string(),
                ber,
                corrupted_data_frames: e.data_frames,
                corrupted_control_frames: e.control_frames,
                corrupted_lldp_frames: e.lldp_frames,
                first_ps: e.first.map(|t| t.as_ps()),
            })
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// The summary line: what the bit errors cost, over all ports.
pub(crate) fn summary(errors: &[LinkErrorReport]) -> String {
    let sum = |f: fn(&LinkErrorReport) -> u64| errors.iter().map(f).sum::<u64>();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "link bit errors: {} data, {} PAUSE/PFC and {} LLDP frames discarded by FCS checks on {} ports",
        sum(|e| e.corrupted_data_frames),
        sum(|e| e.corrupted_control_frames),
        sum(|e| e.corrupted_lldp_frames),
        errors.len()
    );
    s
}
