//! The cost of one window's exchange between MPI ranks, alone: the all-reduce that agrees on
//! where a window starts and the all-to-all of the frames that crossed between ranks
//! (`experiments::ranks`), repeated. Run under MPI:
//!
//! ```text
//! cargo build --release -p lossless-sim --features mpi --example mpi_exchange
//! mpirun -n 2 target/release/examples/mpi_exchange [WINDOWS] [MESSAGES_PER_RANK_PAIR]
//! ```
//!
//! Each window every rank sends every other rank MESSAGES (default 0 and 526, the frames the
//! k = 8 fat tree of docs/parallel.md hands over per window) encoded as the engine encodes them.

use lossless_proto::units::Instant;
use lossless_sim::experiments::ranks::Transport;
use lossless_sim::experiments::ranks::mpi::MpiRank;
use lossless_sim::frame::{Frame, FrameKind};
use lossless_sim::observer::WireFrame;
use lossless_sim::sim::exchange;
use lossless_sim::sim::partition::{Carried, Mail};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let windows: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let sizes: Vec<usize> = match args.get(2).and_then(|s| s.parse().ok()) {
        Some(m) => vec![m],
        None => vec![0, 526],
    };
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("MPI could not be initialised");
        std::process::exit(2);
    };
    let mut tr = MpiRank::new(universe.world());
    let (rank, ranks) = (tr.rank(), tr.ranks());
    let mut mail = Mail::default();
    mail.push(
        1,
        Instant::from_ps(123_456_789),
        42,
        WireFrame::Data(Frame {
            id: 7,
            flow: 3,
            len: 1078,
            ingress: 0,
            src: 1,
            dst: 2,
            priority: 3,
            kind: FrameKind::Plain,
            flags: 0,
            hops: 1,
        }),
        Carried::None,
        0,
    );
    let m = mail.messages[0];
    for &per_pair in &sizes {
        let mut one = Vec::new();
        exchange::encode_group(0, 1, per_pair, &mut one);
        for _ in 0..per_pair {
            exchange::encode_message(&m, None, &mut one);
        }
        let mut t_reduce = 0.0;
        let mut t_swap = 0.0;
        for w in 0..windows {
            let t0 = std::time::Instant::now();
            let _ = tr
                .min_all([w + rank as u64, u64::MAX, u64::MAX])
                .expect("all-reduce");
            let t1 = std::time::Instant::now();
            let out: Vec<Vec<u8>> = (0..ranks)
                .map(|r| if r == rank { Vec::new() } else { one.clone() })
                .collect();
            let got = tr.exchange(out).expect("all-to-all");
            t_swap += t1.elapsed().as_secs_f64();
            t_reduce += (t1 - t0).as_secs_f64();
            assert_eq!(got.iter().map(Vec::len).sum::<usize>(), one.len() * (ranks - 1));
        }
        if rank == 0 {
            println!(
                "{ranks} ranks, {per_pair} messages ({} bytes) to each other rank: per window {:.2} µs all-reduce + {:.2} µs all-to-all = {:.2} µs ({windows} windows)",
                one.len(),
                t_reduce * 1e6 / windows as f64,
                t_swap * 1e6 / windows as f64,
                (t_reduce + t_swap) * 1e6 / windows as f64
            );
        }
    }
}
