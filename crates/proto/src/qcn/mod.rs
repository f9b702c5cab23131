//! QCN, IEEE 802.1Qau (now 802.1Q clauses 30–33): the congestion point ([`Cp`], a bridge
//! egress queue) and the reaction point ([`QcnRp`], a rate limiter in the source).
//!
//! Sans-IO like [`crate::dcqcn`]: integer bytes, picoseconds and b/s, no allocation after
//! `new`, a seeded generator for the CP's sampling jitter.
//!
//! # Congestion point
//!
//! Every enqueued frame counts towards the next sample. When the bytes since the last sample
//! reach the sampling interval, the frame is sampled with the queue length `Q` after it:
//! `Qoff = Q − Qeq`, `Qδ = Q − Qold`, `Fb = −(Qoff + w·Qδ)`, clamped to `[−Qeq·(2w+1), 0]`
//! (facts §1.2: the Linux prototype's and the OMNeT++ model's formula and clamp); `Qold ← Q`
//! at every sample. A CNM is asked for only when `Fb < 0`, carrying the 6-bit
//! `QntzFb = ⌈63·|Fb| / (Qeq·(2w+1))⌉` (1..=63; the facts file: "the 6 most significant bits
//! of |Fb| relative to its maximum"; the prototype truncates a fixed 13-bit shift instead,
//! which maps its maximum to 55, and then needs `QntzFb > 0` as a second condition). The next
//! interval is `min_sample_base / (1 + ⌊QntzFb/8⌋)` (150, 75, 50, 37.5, 30, 25, 21.4, 18.75 KB
//! with the MIB base, the prototype's table of ≈150 KB/k), drawn uniformly in 85..115 % of
//! that when randomised ([`Cp::new`]; the prototype's "TODO: random sampling" notes the
//! standard randomises; the ±15 % is QCN's customary jitter, **unverified** against the text
//! of the standard) or exact ([`Cp::without_jitter`]). `cnmQOffset`/`cnmQDelta` are given in
//! units of 64 octets saturated to 16 bits: their unit is **unverified** (facts §1.5).
//! Defaults: the IEEE8021-CN-MIB (Qeq 26 000 octets, weight 1 → w = 2, sample base 150 000,
//! 0 header octets).
//!
//! # Reaction point
//!
//! On a CNM with `QntzFb > 0`: `TR ← CR` if a byte-counter cycle completed since the last
//! decrease (the QCN pseudo-code as the DCQCN author's simulator keeps it,
//! `rpr_cnm_received`), then `CR ← CR·(1 − QntzFb·2^-rpg_gd)`, kept at or above
//! `rpg_min_dec_fac` % of CR (Linux UAPI: "the minimum factor by which the current transmit
//! rate can be changed by reception of a CNM") and at or above `rpg_min_rate`; both stage
//! counters to 0, timer and byte counter restarted. Increase events come from the byte
//! counter (`rpg_byte_reset` octets, half of that once its stage reached F) and the timer
//! (`rpg_time_reset`, half once its stage reached F): fast recovery `CR ← ⌈(CR + TR)/2⌉` while
//! both stages are below F, active increase `TR += R_AI` first once either reached F,
//! hyper-active `TR += i·R_HAI` with `i = min(stages) − F` once both passed F; on the first
//! event of a counter after a cut, a `TR > 10·CR` is divided by 8 instead (ZHU `AdjustRates`).
//! Back at the maximum rate the limiter is released (`release_at_line_rate`). Defaults: the
//! IEEE8021-CN-MIB (`rpg_time_reset` 15 ms — the MIB's unit is the millisecond —, byte reset
//! 150 000 octets, F = 5, R_AI 5 Mb/s, R_HAI 50 Mb/s, `rpg_gd` 7 → Gd = 1/128,
//! `rpg_min_dec_fac` 50 %, min rate 5 Mb/s). Not modelled: the standard's randomisation of the
//! RP's timer and byte counter, and the CND defense state machine.

mod cp;
mod rp;

pub use crate::dcqcn::ParamError;
pub use cp::{CnmFeedback, Cp, CpCounters, CpParams};
pub use rp::{QcnRp, QcnRpCounters, QcnRpParams};
