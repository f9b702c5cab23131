//! DCQCN (Zhu et al., SIGCOMM 2015): the notification point ([`Np`], receiver) and the
//! reaction point ([`Rp`], sender). The congestion point is [`crate::ecn`].
//!
//! Sans-IO like [`crate::flow_control`]: every call takes `now` (integer picoseconds), rates
//! are integer b/s, alpha is a fixed-point fraction (2⁻³²); no clock, no I/O, no allocation
//! after `new`, no float on a timing or rate path. An engine creates no event nobody can
//! observe: [`Rp::poll_timeout`] names only instants at which the rate changes (a pending
//! cut, an increase that moves the rate). Alpha updates, decrease checks with nothing pending
//! and increase-timer expiries at the maximum rate are brought up to date lazily, when a cut,
//! a CNP or a report needs them, with exactly the result of ticking them (the
//! `dcqcn_properties` tests compare against a reference that ticks every period). A run of
//! alpha updates without CNP costs one multiply-and-shift each until alpha is 0 (about 6 000
//! for g = 1/256 from 1), paid once by the next CNP after an idle spell.
//!
//! # Reaction point, step by step
//!
//! - **First CNP** (or the first after a release): alpha ← `initial_alpha_value`/1024;
//!   rate and target ← `rate_to_set_on_first_cnp` if set, else target ← rate.
//! - **Cut** (`RpMode::Periodic`: at the first decrease check after a CNP; `PerCnp`: at the
//!   CNP itself): target ← rate if `clamp_tgt_rate`, or if a byte-counter increase happened
//!   since the last cut, or (`clamp_tgt_rate_ati`) a timer increase did; then
//!   rate ← max(⌊rate·(1 − α·2¹⁰/2^rpg_gd)⌋, rate·`rpg_min_dec_fac`/100, `rpg_min_rate`);
//!   stages to 0, timer and byte counter restarted.
//! - **Alpha**: α ← α·G/1024, plus (1024 − G)/1024 when a CNP came (`Periodic`: in the last
//!   `dce_tcp_rtt`, on a grid from the first CNP; `PerCnp`: at each CNP, after the cut, and
//!   decaying every `dce_tcp_rtt` after the last CNP).
//! - **Increase**: timer (`rpg_time_reset`, from each cut) and byte counter
//!   (`rpg_byte_reset`); fast recovery, additive, hyper increase, see `increase.rs` for the
//!   stage rule. Target capped at the maximum rate.
//! - **Release** (`release_at_line_rate`): back at the maximum with nothing pending, the rate
//!   limiter is released; the next CNP is a first CNP again.
//!
//! At one instant the order is: alpha update, increase timer, decrease check, then the
//! call's own input.
//!
//! # Presets and where each number comes from
//!
//! Facts file = `congestion-notification.md`; MODEL = `corpus/hpcc-ns3/MODEL.md`.
//!
//! **`connectx`** (NVIDIA ConnectX-4+ firmware defaults, facts §2.4, `mlxconfig -q` dump):
//! timer 300 µs, byte counter 32 767, F = 1, AI 5 Mb/s, HAI 50 Mb/s, min rate 1 Mb/s,
//! `rpg_min_dec_fac` 50 %, `dce_tcp_rtt` 1 µs, `rate_reduce_monitor_period` 4 µs,
//! `initial_alpha_value` 1023, `clamp_tgt_rate` 0, `clamp_tgt_rate_ati` 1, rate on first CNP
//! 0 (= keep; a rate of 0 Mb/s would be below the 1 Mb/s minimum, so 0 cannot mean a rate),
//! NP: 4 µs, DSCP 48, priority 6. Decisions on the disagreements of facts §2.3:
//! - `dce_tcp_g` = 1019 is the weight of the *old* alpha in 1/1024 (g = 5/1024 ≈ 1/205):
//!   DOC-2790 v13's "increase α·G/1024 + (1 − G/1024), decrease α·G/1024" is the only reading
//!   of the revisions that keeps α in [0, 1], and Google isekai's model of these parameters
//!   (`rdma_roce_cc_dcqcn.cc`) computes exactly `α·G/1024 + 1024 − G` in 10-bit units.
//! - `rpg_gd` = 11 is the shift of a 10-bit alpha: a cut takes `rate·α_fp >> 11` = `rate·α/2`,
//!   the paper's factor (isekai's `alpha_to_rate_shift`, DOCA: "base-2 log, fixed point with
//!   10 fractional bits"). 10 would cut by the whole α.
//! - Cuts are periodic (HPCC's "Mellanox version" and isekai both model
//!   `rate_reduce_monitor_period` as a check every period while a CNP arrived in it); the
//!   first CNP leaves a cut pending, as in HPCC (isekai clears it, which with the default
//!   "keep" rate on first CNP would mean no reaction to a first congestion episode at all).
//! - `rpg_byte_reset` is in bytes: mstflint's layout of the firmware parameter says "Given in
//!   Bytes" for a 15-bit field (so 32 767 is its largest value, the dump's default); Google
//!   isekai multiplies it by 64 instead. At 100 Gb/s, 32 767 bytes is one byte-counter event
//!   every 2.6 µs, far faster than the 300 µs timer: with F = 1 the byte counter drives the
//!   recovery.
//! - Back at line rate: no reachable NVIDIA source says whether the next CNP is a "first"
//!   CNP again. DCQCN keeps QCN's reaction-point machinery, and QCN releases a rate limiter
//!   once its rate is back at the maximum (a fresh limiter starts at the next CNM), so
//!   `connectx` releases (`release_at_line_rate`); HPCC ns-3 and isekai never reset
//!   `first_cnp`, and the `hpcc_ns3`/`paper` presets do not release.
//! - The CNP rate limit drops CEs within `min_time_between_cnps` (`late_cnp` off).
//!
//! **`paper`** (Zhu et al. 2015; the paper itself was not reachable, each number is from the
//! first author's simulator ZHU = `bobzhuyb/ns3-rdma` or from htsim's `dcqcn.cpp`):
//! cut at every CNP with the alpha found (the paper's order, RT ← RC; RC ← RC(1 − α/2);
//! α ← (1 − g)α + g; ZHU updates α first), `clamp_tgt_rate` on (ZHU `mix/config.txt`
//! `CLAMP_TARGET_RATE 1`), g = 1/256 (ZHU config, htsim), alpha decay every 55 µs without CNP
//! (ZHU `AlphaResumInterval` 55, htsim 55), timer 55 µs (htsim `_cc_update_period`; ZHU's
//! config says 60 µs), byte counter 10 MB (htsim; ZHU's config 300 MB, effectively off), F = 5
//! (ZHU, htsim), AI 40 Mb/s and HAI 200 Mb/s (ZHU config, 40 Gb/s testbed), min rate 100 Mb/s
//! (ZHU attribute default, htsim), hyper step × (min(T, B) − F) (ZHU), CNP interval N = 50 µs
//! with a late CNP for CEs inside it (paper §3.1 as quoted by the facts file; ZHU and htsim
//! 50 µs). ZHU also halves timer and byte counter in hyper increase; not modelled.
//!
//! **`hpcc_ns3`** (MODEL §3–§4, the reference's `RdmaHw::*Mlx`): alpha ← 1 on the first CNP
//! and that CNP does not count for the next update; alpha update every 1 µs from the first
//! CNP; decrease check every 4 µs from the first CNP + 4 µs + 1 ns, at most one cut per check;
//! target ← rate on a cut only if a timer increase happened since the last cut; timer-only
//! increase every 300 µs restarted by each cut; F = 1 (one fast recovery, one additive, then
//! hyper); AI 20 Mb/s, HAI 200 Mb/s, capped at line rate; min rate 1000 Mb/s; g = 1/256; no
//! byte counter; CNPs as ACK flags ([`CnpMode::AckFlag`]); the state lives to the flow's
//! end. Differences from the reference, all below 1 b/s per step or below 2⁻³² in alpha:
//! the reference's alpha is a double (ours 2⁻³² fixed point, rounded down), its cut
//! truncates a double product (ours the exact integer floor), and its increase rounds
//! `rate/2 + target/2` down (ours rounds up, see `increase.rs`).

pub(crate) mod increase;
mod np;
mod params;
mod rp;

pub use np::{Np, NpCounters};
pub use params::{CnpMode, NpParams, ParamError, RpMode, RpParams};
pub use rp::{Rp, RpCounters};
