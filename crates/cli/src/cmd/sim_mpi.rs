//! `lossless sim --mpi`: one run over MPI ranks (`mpirun -n R lossless sim --mpi ...`, or
//! `srun`). Rank 0 runs `lossless sim` as usual — outputs, progress bar, summary — with its
//! partitions; every other rank loads the same scenario (or `--ns3` experiment), runs its
//! partitions and writes nothing: their digests, and with `--ns3` their `pfc.txt` lines, go
//! to rank 0 (`experiments::ranks`). A rank that fails where the others cannot know (a
//! scenario that does not load there, an output that cannot be opened) ends every rank at
//! once (`MPI_Abort`), so that no rank waits for ever; what fails within the run (a fabric the
//! partitioned engine refuses, bytes that do not decode) the ranks agree on at the next
//! window and all stop.

use super::sim::SimArgs;

#[cfg(feature = "mpi")]
pub use with_mpi::run;

/// Without the `mpi` feature: says how to get it.
#[cfg(not(feature = "mpi"))]
pub fn run(_args: SimArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!(
        "--mpi: this lossless was built without MPI; build it with `cargo build --release --features mpi` (it needs an MPI implementation and libclang: scripts/install-peers.sh installs OpenMPI and libclang-dev; docs/parallel.md)"
    )
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::process::ExitCode;

    use anyhow::Context as _;
    use lossless_live::signals;
    use lossless_sim::experiments::ranks::{self, RankError, Transport, mpi::MpiRank};
    use lossless_sim::ns3::run::{Experiment, Ns3Options};
    use lossless_sim::ns3::{Ns3Observer, QlenPart};
    use lossless_sim::scenario::Overrides;
    use mpi::traits::Communicator;

    use super::SimArgs;
    use lossless_sim::trace::split::Recorder;

    use crate::cmd::sim::{Extras, Scenario, interrupted_status, rank_schedule_for};

    /// A transport that remembers whether this rank reached the ranks' first collective.
    struct Counted<'a> {
        inner: &'a mut MpiRank,
        calls: u64,
    }

    impl Transport for Counted<'_> {
        fn rank(&self) -> usize {
            self.inner.rank()
        }
        fn ranks(&self) -> usize {
            self.inner.ranks()
        }
        fn processes_on_this_machine(&self) -> usize {
            self.inner.processes_on_this_machine()
        }
        fn min_all(&mut self, v: [u64; 3]) -> Result<[u64; 3], RankError> {
            self.calls += 1;
            self.inner.min_all(v)
        }
        fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankError> {
            self.calls += 1;
            self.inner.exchange(out)
        }
        fn gather(&mut self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, RankError> {
            self.calls += 1;
            self.inner.gather(bytes)
        }
    }

    /// Runs this process's rank of `lossless sim --mpi`.
    pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .context("--mpi: MPI could not be initialised (run under mpirun or srun)")?;
        let world = universe.world();
        let (rank, size) = (world.rank(), world.size());
        // a panic on any rank ends them all rather than leaving the others waiting
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            hook(info);
            errln!("error: rank {rank} of {size} panicked; ending every rank");
            mpi::topology::SimpleCommunicator::world().abort(101);
        }));
        let mut tr = MpiRank::new(world);
        let mut counted = Counted {
            inner: &mut tr,
            calls: 0,
        };
        let result = if rank == 0 {
            crate::cmd::sim::run_on(args, Some(&mut counted))
        } else {
            follow(&args, &mut counted)
        };
        let reached = counted.calls > 0;
        match result {
            // the others ran with this rank: they are done too
            Ok(code) if reached => Ok(code),
            // the others wait for this rank in the run: end them
            Ok(code) => {
                errln!("(rank {rank} of {size} stopped before the run: ending every rank)");
                tr.abort(exit_code_of(code));
            }
            Err(e) => match e.downcast_ref::<RankError>() {
                // the ranks agreed on it: the rank that failed said why, rank 0 that it
                // stopped
                Some(RankError::Elsewhere) if rank != 0 => {
                    errln!("error (rank {rank} of {size}): {e:#}");
                    Ok(ExitCode::from(2))
                }
                Some(RankError::Partition(_)) if rank != 0 => Ok(ExitCode::from(2)),
                _ if reached => {
                    if rank != 0 {
                        errln!("error (rank {rank} of {size}): {e:#}");
                        return Ok(ExitCode::from(2));
                    }
                    Err(e)
                }
                _ => {
                    errln!("error (rank {rank} of {size}): {e:#}; ending every rank");
                    tr.abort(2);
                }
            },
        }
    }

    /// The number an [`ExitCode`] stands for (those `lossless sim` returns).
    fn exit_code_of(code: ExitCode) -> i32 {
        [0u8, 1, 2, 3, 130, 143]
            .into_iter()
            .find(|&c| ExitCode::from(c) == code)
            .map_or(2, i32::from)
    }

    /// A rank other than 0: loads the scenario as rank 0 does, runs its partitions, writes
    /// nothing.
    fn follow(args: &SimArgs, tr: &mut dyn Transport) -> anyhow::Result<ExitCode> {
        if let Some(config_path) = &args.ns3 {
            return follow_ns3(args, config_path, tr);
        }
        let name = args
            .scenario
            .as_deref()
            .unwrap_or(lossless_sim::scenario::BUILTINS[0].name);
        let scenario = Scenario::resolve(name).map_err(|e| anyhow::anyhow!("{e}"))?;
        let ov = Overrides {
            set: args.set.clone(),
            seed: args.seed,
            duration: args.duration,
        };
        let config = scenario.load(&ov).map_err(|e| anyhow::anyhow!("{e}"))?;
        // SIGINT/SIGTERM reach every rank under mpirun: rank 0 decides where all stop
        signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
        let (part, schedule) = rank_schedule_for(args, &config, tr.ranks())?;
        if traced(args) {
            // each partition's trace records go to rank 0 window by window
            ranks::run_rank_traced(
                &config,
                part,
                schedule,
                tr,
                &|_| Recorder::<Extras>::new(),
                &|r, out| r.take_encoded(out),
                None,
                &|_, _| false,
            )?;
        } else {
            ranks::run_rank_split(&config, Ok(part), schedule, tr, &|_, _| false)?;
        }
        Ok(finished())
    }

    /// Whether rank 0 writes trace outputs (`--pcap`, `--vcd`, `--report`, `--series`): then
    /// every rank's partitions record their calls for it.
    fn traced(args: &SimArgs) -> bool {
        args.pcap.is_some() || args.vcd.is_some() || args.report.is_some() || args.series.is_some()
    }

    /// [`follow`] for `--ns3 CONFIG`: loads the experiment as rank 0 does (which says what
    /// the loading notes), runs its partitions, each observed for `pfc.txt` as on rank 0,
    /// and ships their lines to rank 0; writes nothing.
    fn follow_ns3(
        args: &SimArgs,
        config_path: &std::path::Path,
        tr: &mut dyn Transport,
    ) -> anyhow::Result<ExitCode> {
        let opts = Ns3Options {
            config: config_path,
            topology: args.ns3_topology.as_deref(),
            flows: args.ns3_flows.as_deref(),
            seed: args.seed,
        };
        let experiment = Experiment::load(&opts, &mut |_| {}).map_err(|e| anyhow::anyhow!("{e}"))?;
        let config = &experiment.sim_config;
        // the queue monitor's samples, as rank 0 takes them (`ForkOutputs::part_monitor`)
        let keys = &experiment.keys;
        let qlen = (keys.qlen_file.is_some() && keys.qlen_start_ns < experiment.stop_ns()).then(|| {
            QlenPart::new(
                config,
                keys.qlen_start_ns,
                keys.qlen_end_ns,
                lossless_proto::units::Instant::ZERO + config.duration,
            )
        });
        signals::install_stop_handlers().context("installing the Ctrl-C handler")?;
        let (part, schedule) = rank_schedule_for(args, config, tr.ranks())?;
        let ns3 = || Ns3Observer::for_part(config).with_qlen(qlen.clone());
        if traced(args) {
            ranks::run_rank_traced(
                config,
                part,
                schedule,
                tr,
                &|_| (ns3(), Recorder::<Extras>::new()),
                &|(_, r), out| r.take_encoded(out),
                None,
                &|_, _| false,
            )?;
        } else {
            ranks::run_rank_observed_split(config, part, schedule, tr, &|_| ns3(), &|_, _| false)?;
        }
        Ok(finished())
    }

    /// The exit status of a rank other than 0 whose run ended.
    fn finished() -> ExitCode {
        if signals::stop_requested() {
            interrupted_status()
        } else {
            ExitCode::SUCCESS
        }
    }
}
