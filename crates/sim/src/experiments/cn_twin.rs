//! The CN twin: a scenario with congestion notification (ECN marking, QCN, DCQCN/QCN QPs) is
//! also run, on another thread meanwhile, with all of it off
//! ([`cn_off`]); its report says how much less PFC fired and what
//! each flow got without it ([`Report::compare_with_cn_off`]).

use std::thread::JoinHandle;

use crate::config::SimConfig;
use crate::report::Report;
use crate::report::cn::{cn_off, run_cn_off};

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
