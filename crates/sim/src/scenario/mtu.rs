//! What the `mtu` keys mean: the largest payload an interface carries. A link's `mtu` (its own,
//! or `[defaults]`'s; 1500 when neither gives one) bounds the frames on that link, a switch's
//! `mtu` the frames its ports take. A flow or workload whose frames are larger than an MTU on
//! its way is refused when the scenario loads: a real interface does not carry them (it drops
//! them as giants), and a switch's default headroom is sized for its own MTU, so letting them
//! through would lose lossless frames that a correct configuration never sends.
//!
//! "On its way": the flow's own two host links, and every switch and switch-to-switch link of
//! the fabric its source's switch belongs to (ECMP, static routes and reroutes after a link
//! event may take any of them). A fabric whose switches and links share one MTU (the usual
//! case) is checked exactly; one that mixes MTUs is checked for the smallest of them.

use std::collections::HashMap;
use std::ops::Range;

use super::ScenarioError;
use super::build::Ctx;
use crate::config::traffic::frame_len;
use crate::config::{LinkConfig, NodeConfig, NodeKind};
use crate::frame::NodeId;

/// The smallest MTU of one connected group of switches, and where it is.
#[derive(Clone, Copy)]
enum Narrowest {
    /// A switch's own `mtu`.
    Switch(NodeId, u64),
    /// A switch-to-switch link's `mtu` (the link's index).
    Link(usize, u64),
}

impl Narrowest {
    fn mtu(self) -> u64 {
        match self {
            Narrowest::Switch(_, m) | Narrowest::Link(_, m) => m,
        }
    }
}

/// The MTUs a frame may meet, by host.
pub(super) struct Mtus {
    /// Per node: for a host, its link (index) and that link's MTU.
    host_link: Vec<Option<(usize, u64)>>,
    /// Per node: for a host on a switch, the group of switches it enters (a switch's root).
    group: Vec<Option<u32>>,
    /// Per group root: its narrowest switch or switch-to-switch link.
    narrowest: HashMap<u32, Narrowest>,
    /// Per link: its ends' names, for messages.
    ends: Vec<(NodeId, NodeId)>,
}

impl Mtus {
    /// The MTUs of `links` (whose own MTUs are `link_mtus`) and of the switches of `nodes`.
    pub(super) fn new(nodes: &[NodeConfig], links: &[LinkConfig], link_mtus: &[u64]) -> Self {
        let n = nodes.len();
        let is_switch = |x: NodeId| matches!(nodes[x as usize].kind, NodeKind::Switch(_));
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        for l in links {
            if is_switch(l.a) && is_switch(l.b) {
                let (ra, rb) = (find(&mut parent, l.a), find(&mut parent, l.b));
                parent[ra as usize] = rb;
            }
        }
        let mut narrowest: HashMap<u32, Narrowest> = HashMap::new();
        let mut keep = |root: u32, cand: Narrowest| {
            let e = narrowest.entry(root).or_insert(cand);
            if cand.mtu() < e.mtu() {
                *e = cand;
            }
        };
        for (i, node) in nodes.iter().enumerate() {
            if let NodeKind::Switch(sw) = &node.kind {
                let root = find(&mut parent, i as u32);
                keep(root, Narrowest::Switch(i as NodeId, sw.mtu));
            }
        }
        let mut host_link = vec![None; n];
        let mut group = vec![None; n];
        for (li, l) in links.iter().enumerate() {
            if is_switch(l.a) && is_switch(l.b) {
                let root = find(&mut parent, l.a);
                keep(root, Narrowest::Link(li, link_mtus[li]));
                continue;
            }
            for (me, peer) in [(l.a, l.b), (l.b, l.a)] {
                if !is_switch(me) {
                    host_link[me as usize].get_or_insert((li, link_mtus[li]));
                    if is_switch(peer) {
                        group[me as usize].get_or_insert(find(&mut parent, peer));
                    }
                }
            }
        }
        Mtus {
            host_link,
            group,
            narrowest,
            ends: links.iter().map(|l| (l.a, l.b)).collect(),
        }
    }

    /// Refuses `what` (a flow or workload), whose frames are `frame` bytes (`how`: where that
    /// size comes from), if they meet a smaller MTU at `host`'s link or in the fabric it enters;
    /// the error is at `span`, key `key`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check(
        &self,
        ctx: &Ctx<'_>,
        nodes: &[NodeConfig],
        span: Range<usize>,
        key: &str,
        what: &str,
        how: &str,
        frame: u64,
        host: NodeId,
    ) -> Result<(), ScenarioError> {
        let name = |x: NodeId| &nodes[x as usize].name;
        let refuse = |hop: String, mtu: u64| {
            ctx.err(
                span.clone(),
                key,
                format!(
                    "{what}: its frames of {frame} bytes ({how}) cross {hop}, whose mtu is {mtu} (frames up \
                     to {} bytes; a switch or NIC does not carry larger ones); allowed frames that fit every \
                     mtu on the way, or a larger `mtu` there (`[defaults] mtu` sets links and switches)",
                    frame_len(mtu)
                ),
            )
        };
        if let Some((li, mtu)) = self.host_link[host as usize]
            && frame > frame_len(mtu)
        {
            let (a, b) = self.ends[li];
            return refuse(format!("the link {} – {}", name(a), name(b)), mtu);
        }
        let Some(root) = self.group[host as usize] else {
            return Ok(());
        };
        match self.narrowest.get(&root) {
            Some(&Narrowest::Switch(s, mtu)) if frame > frame_len(mtu) => refuse(
                format!(
                    "switch {:?} (a frame may reach any switch of its fabric)",
                    name(s)
                ),
                mtu,
            ),
            Some(&Narrowest::Link(li, mtu)) if frame > frame_len(mtu) => {
                let (a, b) = self.ends[li];
                refuse(
                    format!(
                        "the link {} – {} (a frame may take any link of its fabric)",
                        name(a),
                        name(b)
                    ),
                    mtu,
                )
            }
            _ => Ok(()),
        }
    }
}
