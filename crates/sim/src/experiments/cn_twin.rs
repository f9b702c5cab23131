//! The CN twin: a scenario with congestion notification (ECN marking, QCN, DCQCN/QCN QPs) is
//! also run, on another thread meanwhile, with all of it off
//! ([`cn_off`]); its report says how much less PFC fired and what
//! each flow got without it ([`Report::compare_with_cn_off`]).

use std::thread::JoinHandle;

use crate::config::transport::CcSpec;
use crate::config::{NodeKind, SimConfig};
use crate::report::Report;

/// The twin of a scenario without congestion notification, running on its own thread.
#[derive(Debug)]
pub struct CnTwin {
    thread: JoinHandle<Option<Report>>,
}

impl CnTwin {
    /// Starts the twin of `config` on another thread; `None` when `config` has no congestion
    /// notification to turn off.
    pub fn spawn(config: &SimConfig) -> Option<CnTwin> {
        let twin = cn_off(config)?;
        Some(CnTwin {
            // the twin's config is built here: the thread only runs it
            thread: std::thread::spawn(move || run_cn_off(twin)),
        })
    }

    /// Waits for the twin; its report, or `None` when it could not be built or its thread
    /// failed.
    pub fn join(self) -> Option<Report> {
        self.thread.join().ok().flatten()
    }

    /// Waits for the twin and adds the comparison with it to `report` (nothing when the twin
    /// has no report).
    pub fn compare_into(self, report: &mut Report) {
        if let Some(without) = self.join() {
            report.compare_with_cn_off(&without);
        }
    }
}

/// `config` with congestion notification off: no ECN marking or QCN congestion point at any
/// switch, and every QP without congestion control (it keeps its transport); `None` when
/// `config` has none to turn off.
pub fn cn_off(config: &SimConfig) -> Option<SimConfig> {
    let mut c = config.clone();
    let mut any = false;
    for n in &mut c.nodes {
        if let NodeKind::Switch(s) = &mut n.kind {
            any |= s.ecn.take().is_some() | s.qcn.take().is_some();
        }
    }
    let transports = c
        .flows
        .iter_mut()
        .filter_map(|f| f.transport.as_mut())
        .chain(c.workloads.iter_mut().filter_map(|w| w.transport.as_mut()));
    for t in transports {
        if t.cc != CcSpec::None {
            t.cc = CcSpec::None;
            any = true;
        }
    }
    any.then_some(c)
}

/// Runs the twin of `config` without congestion notification ([`cn_off`]) to its end, or
/// `None` when `config` has none (or the twin does not build).
pub fn run_without_cn(config: &SimConfig) -> Option<Report> {
    run_cn_off(cn_off(config)?)
}

/// Runs `twin`, a config [`cn_off`] made, to its end; `None` when it does not build. The one
/// run of the twin, on this thread or on another
/// ([`CnTwin`]).
pub fn run_cn_off(twin: SimConfig) -> Option<Report> {
    let mut sim = crate::Simulator::new(twin).ok()?;
    sim.run();
    Some(Report::collect(&sim))
}
