//! The [`Transport`] over MPI (rsmpi on the system's MPI, feature `mpi`): an `MPI_Allreduce`
//! (minimum) per window, an `MPI_Alltoall` of byte counts and an `MPI_Alltoallv` of the bytes
//! per window, an `MPI_Gather` and `MPI_Gatherv` of the digests at the end (and of the trace
//! records after every window, when the trace outputs are written).

use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};

use super::{RankError, Transport};

/// This process's rank in `MPI_COMM_WORLD`.
pub struct MpiRank {
    world: SimpleCommunicator,
    /// Ranks on this rank's machine (`MPI_Comm_split_type` shared), this one included.
    on_this_machine: usize,
}

impl MpiRank {
    /// The rank of this process in `world` (from [`mpi::environment::Universe::world`]); every
    /// rank calls it at once (it asks which ranks share this one's machine, a collective).
    pub fn new(world: SimpleCommunicator) -> Self {
        let on_this_machine = world.split_shared(world.rank()).size().max(1) as usize;
        MpiRank {
            world,
            on_this_machine,
        }
    }

    /// Ends every rank's process at once (`MPI_Abort`), with `code` as the exit status.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

/// Counts and offsets of `sizes` as MPI's 32-bit counts.
fn layout(sizes: impl Iterator<Item = usize>) -> Result<(Vec<Count>, Vec<Count>), RankError> {
    let mut counts = Vec::new();
    let mut displs = Vec::new();
    let mut at: usize = 0;
    for s in sizes {
        let too_big = || {
            RankError::Transport(format!(
                "{s} bytes in one exchange, more than MPI's 32-bit counts allow"
            ))
        };
        counts.push(Count::try_from(s).map_err(|_| too_big())?);
        displs.push(Count::try_from(at).map_err(|_| too_big())?);
        at += s;
    }
    Ok((counts, displs))
}

/// `v` and one byte more, beyond its counts: an empty send buffer and an empty receive buffer
/// would share Rust's dangling address, which MPI refuses as the same buffer (`MPI_ERR_ARG`).
fn padded(mut v: Vec<u8>) -> Vec<u8> {
    v.push(0);
    v
}

impl Transport for MpiRank {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn ranks(&self) -> usize {
        self.world.size() as usize
    }
    fn processes_on_this_machine(&self) -> usize {
        self.on_this_machine
    }
    fn min_all(&mut self, v: [u64; 3]) -> Result<[u64; 3], RankError> {
        let mut out = [0u64; 3];
        self.world
            .all_reduce_into(&v[..], &mut out[..], SystemOperation::min());
        Ok(out)
    }
    fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankError> {
        let (scounts, sdispls) = layout(out.iter().map(Vec::len))?;
        let mut rcounts: Vec<Count> = vec![0; out.len()];
        self.world.all_to_all_into(&scounts[..], &mut rcounts[..]);
        let (rcounts, rdispls) = layout(rcounts.iter().map(|&c| c.max(0) as usize))?;
        let send = padded(out.concat());
        let total: usize = rcounts.iter().map(|&c| c as usize).sum();
        let mut recv = vec![0u8; total + 1];
        {
            let s = Partition::new(&send[..], &scounts[..], &sdispls[..]);
            let mut r = PartitionMut::new(&mut recv[..], &rcounts[..], &rdispls[..]);
            self.world.all_to_all_varcount_into(&s, &mut r);
        }
        Ok(rcounts
            .iter()
            .zip(&rdispls)
            .map(|(&c, &d)| recv[d as usize..(d + c) as usize].to_vec())
            .collect())
    }
    fn gather(&mut self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, RankError> {
        let root = self.world.process_at_rank(0);
        let bytes = padded(bytes);
        let bytes = &bytes[..bytes.len() - 1];
        let len = Count::try_from(bytes.len()).map_err(|_| {
            RankError::Transport(format!(
                "a digest of {} bytes, more than MPI's 32-bit counts allow",
                bytes.len()
            ))
        })?;
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return Ok(None);
        }
        let mut counts: Vec<Count> = vec![0; self.ranks()];
        root.gather_into_root(&len, &mut counts[..]);
        let (counts, displs) = layout(counts.iter().map(|&c| c.max(0) as usize))?;
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut recv = vec![0u8; total + 1];
        {
            let mut r = PartitionMut::new(&mut recv[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut r);
        }
        Ok(Some(
            counts
                .iter()
                .zip(&displs)
                .map(|(&c, &d)| recv[d as usize..(d + c) as usize].to_vec())
                .collect(),
        ))
    }
}
