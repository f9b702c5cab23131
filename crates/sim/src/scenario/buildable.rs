//! What the simulator would refuse to build, checked when the scenario loads, so that the
//! error names the file, the line and the key (a scenario that loads builds): every switch's
//! buffer holds its ports' headroom, a scripted `fc_rdy` is on a priority its host's port
//! runs PFC for, a switch with ECN marking has thresholds for each of its ports' rates. (A DCBX
//! port's names always fit its LLDP TLVs: node names have at most 64 bytes.)

use lossless_proto::flow_control::Mode;

use super::ScenarioError;
use super::build::{Ctx, Names};
use super::raw::RawScenario;
use crate::config::headroom::{PortReserve, port_reserve_in};
use crate::config::model::BufferModel;
use crate::config::{LinkConfig, NodeConfig, NodeKind};
use crate::frame::NodeId;

/// The checks' view of a loaded scenario.
pub(super) struct Buildable<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) names: &'a Names,
    pub(super) nodes: &'a [NodeConfig],
    pub(super) links: &'a [LinkConfig],
    /// How switches use their buffer (what a port reserves of it).
    pub(super) buffer_model: BufferModel,
}

impl Buildable<'_> {
    /// Every check, in the order the simulator builds.
    pub(super) fn check(&self, raw: &RawScenario) -> Result<(), ScenarioError> {
        self.buffers(raw)?;
        self.ecn(raw)?;
        self.signals(raw)
    }

    /// A switch's buffer holds the headroom its ports reserve.
    fn buffers(&self, raw: &RawScenario) -> Result<(), ScenarioError> {
        let n = self.nodes.len();
        let mut total = vec![0u128; n];
        // per switch: how many reserves, and of how many bytes each when they are all alike
        let mut count = vec![0u64; n];
        let mut each: Vec<Option<u64>> = vec![None; n];
        let mut mixed = vec![false; n];
        for l in self.links {
            for (node, at_a) in [(l.a, true), (l.b, false)] {
                let NodeKind::Switch(sw) = &self.nodes[node as usize].kind else {
                    continue;
                };
                let r: PortReserve = port_reserve_in(self.buffer_model, l, at_a, sw);
                let i = node as usize;
                total[i] += r.total();
                for b in r.per_priority.into_iter().chain([r.port]).filter(|&b| b > 0) {
                    count[i] += 1;
                    match each[i] {
                        None => each[i] = Some(b),
                        Some(x) if x != b => mixed[i] = true,
                        Some(_) => {}
                    }
                }
            }
        }
        for s in &raw.switch {
            let Some(&id) = self.names.by_name.get(s.name.get_ref()) else {
                continue;
            };
            let NodeKind::Switch(sw) = &self.nodes[id as usize].kind else {
                continue;
            };
            let i = id as usize;
            if total[i] <= u128::from(sw.buffer_bytes) {
                continue;
            }
            let how = match (each[i], mixed[i], s.headroom_bytes) {
                (Some(h), false, Some(_)) => {
                    format!(" ({} lossless port priorities × headroom_bytes {h})", count[i])
                }
                (Some(h), false, None) => format!(
                    " ({} lossless port priorities × the default headroom {h}, from each link's rate, cable and \
                     the switch's mtu)",
                    count[i]
                ),
                _ => format!(" (over {} lossless port priorities)", count[i]),
            };
            return self.ctx.err(
                s.buffer_bytes.span(),
                "buffer_bytes",
                format!(
                    "switch {:?}: found {} bytes, but its headroom reserves total {}{how}; allowed \
                     buffer_bytes of at least the reserves (and room to share), or a smaller \
                     headroom_bytes, or fewer lossless priorities",
                    s.name.get_ref(),
                    sw.buffer_bytes,
                    total[i]
                ),
            );
        }
        Ok(())
    }

    /// A switch that marks ECN has thresholds for the rate of each of its ports.
    fn ecn(&self, raw: &RawScenario) -> Result<(), ScenarioError> {
        for s in &raw.switch {
            let Some(&id) = self.names.by_name.get(s.name.get_ref()) else {
                continue;
            };
            let NodeKind::Switch(sw) = &self.nodes[id as usize].kind else {
                continue;
            };
            let Some(spec) = &sw.ecn else {
                continue;
            };
            for l in self.links.iter().filter(|l| l.a == id || l.b == id) {
                if spec.for_rate(l.rate).is_none() {
                    let peer = if l.a == id { l.b } else { l.a };
                    return self.ctx.err(
                        s.name.span(),
                        "ecn",
                        format!(
                            "switch {:?}: its port to {:?} runs at {}, and the ECN marking has no thresholds \
                             for that rate; allowed `kmin_bytes`/`kmax_bytes` for every rate, or a `by_rate` \
                             entry for {}",
                            s.name.get_ref(),
                            self.nodes[peer as usize].name,
                            l.rate,
                            l.rate
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// A scripted request is on a priority its host's port pauses: a PFC priority (on a
    /// port running PFC without DCBX; DCBX decides at run time).
    fn signals(&self, raw: &RawScenario) -> Result<(), ScenarioError> {
        if raw.signal.is_empty() {
            return Ok(());
        }
        let mut port_of: Vec<Option<(&LinkConfig, bool)>> = vec![None; self.nodes.len()];
        for l in self.links {
            port_of[l.a as usize].get_or_insert((l, true));
            port_of[l.b as usize].get_or_insert((l, false));
        }
        for s in &raw.signal {
            let Ok(hosts) = self.names.resolve(self.ctx, &s.host, "host") else {
                continue;
            };
            for &h in hosts {
                let Some((l, at_a)) = port_of[h as usize] else {
                    continue;
                };
                let (fc, dcbx) = if at_a {
                    (&l.fc_a, &l.dcbx_a)
                } else {
                    (&l.fc_b, &l.dcbx_b)
                };
                if dcbx.is_none() && fc.mode == Mode::Pfc && fc.active_mask() & (1 << (s.priority & 7)) == 0 {
                    let on: Vec<u8> = (0..8).filter(|q| fc.active_mask() & (1 << q) != 0).collect();
                    return self.ctx.err(
                        s.host.span(),
                        "priority",
                        format!(
                            "a [[signal]] of host {:?} on priority {}, which its port does not run PFC for \
                             (pfc_priorities {on:?}); allowed one of those",
                            name(self.nodes, h),
                            s.priority
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

fn name(nodes: &[NodeConfig], n: NodeId) -> &str {
    &nodes[n as usize].name
}
