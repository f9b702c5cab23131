//! The table `lossless headroom` prints.

use std::fmt::Write as _;

use lossless_proto::headroom::TermKind;
use lossless_proto::units::{Duration, Rate};

use super::HeadroomReport;

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn signed(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "+" };
    format!("{sign}{}", thousands(n.unsigned_abs()))
}

/// `(a − b) / b` as a signed percentage with one decimal, rounded half away from zero, from
/// integers.
pub fn percent(a: u64, b: u64) -> String {
    if b == 0 {
        return "n/a".into();
    }
    let diff = i128::from(a) - i128::from(b);
    let tenths = (diff.abs() * 1000 + i128::from(b) / 2) / i128::from(b);
    let sign = if diff < 0 && tenths > 0 { "-" } else { "+" };
    format!("{sign}{}.{} %", tenths / 10, tenths % 10)
}

fn term_label(kind: TermKind, r: &HeadroomReport) -> String {
    let i = &r.input;
    match kind {
        TermKind::MaxFrameReceived => format!("largest frame being received ({} B + 20)", i.frame_bytes),
        TermKind::PfcFrame => "PFC frame (64 B + 20)".into(),
        TermKind::CableRoundTrip => format!("cable round trip (2 x {} m x 5 ns/m)", i.cable_m),
        TermKind::InterfaceDelays => format!(
            "interface delays (2 x {}, {})",
            Duration::from_ps(i.interface_delay_ps),
            i.interface_delay_source
        ),
        TermKind::PeerReaction => format!(
            "peer reaction ({}, {})",
            Duration::from_ps(i.peer_delay_ps),
            match i.peer_delay_source {
                "802.3" => "802.3 31B.3.7",
                s => s,
            }
        ),
        TermKind::PeerMaxFrame => format!(
            "peer's largest lossless frame ({} B + 20)",
            i.lossless_frame_bytes
        ),
    }
}

const KINDS: [TermKind; 6] = [
    TermKind::MaxFrameReceived,
    TermKind::PfcFrame,
    TermKind::CableRoundTrip,
    TermKind::InterfaceDelays,
    TermKind::PeerReaction,
    TermKind::PeerMaxFrame,
];

fn formula_name(f: &str, r: &HeadroomReport) -> String {
    match f {
        "annex_n" => "802.1Qbb Annex N".into(),
        "mlx5_upstream" => "mlx5 upstream calculate_xoff".into(),
        "mlx5_nic_kernel" => "mlx5 nic-kernel buffer".into(),
        "sonic" => format!("SONiC Mellanox {} xoff", r.sonic.asic),
        other => other.into(),
    }
}

/// The whole text report.
pub fn render(r: &HeadroomReport) -> String {
    let mut o = String::new();
    let i = &r.input;
    let rate = Rate::from_bps(i.speed_bps).map_or_else(|| "?".into(), |r| r.to_string());
    let _ = writeln!(
        o,
        "Headroom for one lossless priority: {rate}, {} m of cable, MTU {} (frames of {} B), lossless MTU {} ({} B)",
        i.cable_m, i.mtu_bytes, i.frame_bytes, i.lossless_mtu_bytes, i.lossless_frame_bytes
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{:<56} {:>12} {:>10}",
        "802.1Qbb Annex N", "bit times", "bytes"
    );
    for (t, kind) in r.annex_n.terms.iter().zip(KINDS) {
        let _ = writeln!(
            o,
            "  {:<54} {:>12} {:>10}",
            term_label(kind, r),
            thousands(t.bit_times),
            thousands(t.bytes)
        );
    }
    let _ = writeln!(
        o,
        "  {:<54} {:>12} {:>10}",
        "headroom (sum, rounded up to bytes)",
        thousands(r.annex_n.total_bit_times),
        thousands(r.annex_n.headroom_bytes)
    );
    let _ = writeln!(o);
    let verified = r.verify.as_ref().map(|v| v.verified.headroom_bytes);
    let _ = write!(o, "{:<40} {:>14} {:>11}", "formula", "headroom B", "vs Annex N");
    if verified.is_some() {
        let _ = write!(o, " {:>24}", "vs simulator's need");
    }
    let _ = writeln!(o);
    for row in &r.comparison {
        let _ = write!(
            o,
            "  {:<38} {:>14} {:>11}",
            formula_name(row.formula, r),
            thousands(row.headroom_bytes),
            if row.formula == "annex_n" {
                String::new()
            } else {
                percent(row.headroom_bytes, r.annex_n.headroom_bytes)
            }
        );
        if let (Some(v), Some(d)) = (verified, row.vs_verified_bytes) {
            let _ = write!(o, " {:>12} B {:>9}", signed(d), percent(row.headroom_bytes, v));
        }
        let _ = writeln!(o);
    }
    if let Some(v) = &r.verify {
        let v = &v.verified;
        let _ = writeln!(
            o,
            "  {:<38} {:>14} {:>11}",
            "simulator, worst case (--verify)",
            thousands(v.headroom_bytes),
            percent(v.headroom_bytes, r.annex_n.headroom_bytes)
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "What each counts, and leaves out:");
    for row in &r.comparison {
        let _ = writeln!(o, "  {}: {}.", formula_name(row.formula, r), row.counts);
        let _ = writeln!(o, "    leaves out: {}.", row.leaves_out);
    }
    let _ = writeln!(o);
    details(&mut o, r);
    if let Some(v) = &r.verify {
        verify_text(&mut o, r, &v.verified);
    }
    o
}

fn details(o: &mut String, r: &HeadroomReport) {
    let u = &r.mlx5_upstream;
    let _ = writeln!(
        o,
        "mlx5 upstream: speed {} Mb/s, delay term {} B + MTU term {} B = xoff {} B; smallest lossless buffer {} B{}",
        thousands(u64::from(u.speed_used_mbps)),
        thousands(u64::from(u.delay_term_bytes)),
        thousands(u64::from(u.mtu_term_bytes)),
        thousands(u64::from(u.xoff_bytes)),
        thousands(u64::from(u.min_buffer_bytes)),
        if u.wrapped {
            "; the driver's u32 arithmetic WRAPS here: it programs this wrong value"
        } else {
            ""
        }
    );
    if r.input.cable_m >= u64::from(lossless_proto::headroom::mlx5::MAX_CABLE_M) {
        let _ = writeln!(
            o,
            "  (the driver refuses cables of 1000 m or more and keeps the previous length)"
        );
    }
    let n = &r.mlx5_nic_kernel;
    let _ = writeln!(
        o,
        "mlx5 nic-kernel: MAC response {} B, cable {} B, cell factor {}/100: headroom {} B, XON {} B, XOFF {} B, buffer {} B{}",
        thousands(u64::from(n.mac_response_bytes)),
        thousands(u64::from(n.cable_bytes)),
        n.cell_factor_percent,
        thousands(u64::from(n.headroom_bytes)),
        thousands(u64::from(n.xon_bytes)),
        thousands(u64::from(n.xoff_bytes)),
        thousands(u64::from(n.size_bytes)),
        if n.wrapped {
            "; the driver's u32 arithmetic WRAPS here"
        } else {
            ""
        }
    );
    let s = &r.sonic;
    let m = &s.model;
    let _ = writeln!(
        o,
        "SONiC {} (cell {} B, {} lanes): worst-case factor {}, small packets {} % of bytes, occupancy {}; \
         propagation {} B (cable {}, peer {}{}, MAC/PHY {}, tile {}, gearbox 2 x {}); xon {} B, xoff {} B, size {} B{}",
        s.asic,
        s.cell_bytes,
        if s.eight_lanes { "8" } else { "<8" },
        m.worst_case_factor,
        m.small_packet_percentage_by_byte,
        m.cell_occupancy,
        m.propagation_bytes,
        m.cable_bytes,
        m.peer_response_bytes,
        m.pause_quanta
            .map(|q| format!(" = {q} quanta"))
            .unwrap_or_else(|| " from the ASIC table".into()),
        m.mac_phy_bytes,
        m.tile_bytes,
        m.gearbox_bytes,
        thousands(m.xon_bytes),
        thousands(m.xoff_bytes),
        thousands(m.size_bytes),
        if m.pause_quanta == Some(67) {
            "; SONiC takes 67 quanta at 10G where 802.3 says 60"
        } else {
            ""
        }
    );
}

fn verify_text(
    o: &mut String,
    r: &HeadroomReport,
    v: &lossless_sim::experiments::headroom::verify::Verified,
) {
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Verify (simulator): {} senders into one switch port whose egress is paused, frames of {} B, {}; \
         {} runs of {} simulated, bisected to the byte",
        v.setup.senders,
        v.frame_bytes,
        if v.setup.reverse_traffic {
            "the switch sending each sender a frame when it decides"
        } else {
            "no reverse traffic"
        },
        v.runs_total,
        Duration::from_ps(v.run_ps)
    );
    let _ = writeln!(
        o,
        "  smallest headroom with zero lossless drops: {} B (with {} B: {} lossless frames dropped)",
        thousands(v.headroom_bytes),
        thousands(v.headroom_bytes - 1),
        v.drops_below_total
    );
    for row in &r.comparison {
        let d = row.headroom_bytes as i64 - v.headroom_bytes as i64;
        let verdict = if d >= 0 {
            "over-provisions"
        } else {
            "UNDER-provisions"
        };
        let _ = writeln!(
            o,
            "  {:<38} {verdict} by {} B ({})",
            formula_name(row.formula, r),
            thousands(d.unsigned_abs()),
            percent(row.headroom_bytes, v.headroom_bytes)
        );
    }
    let _ = writeln!(
        o,
        "  {:<7} {:>12} {:>8} {:>16} {:>16}  fillers",
        "sender", "needed B", "frames", "decision→pause", "last start ←"
    );
    for p in &v.phases {
        let _ = writeln!(
            o,
            "  {:<7} {:>12} {:>8} {:>16} {:>16}  {:?}",
            p.sender,
            thousands(p.needed_bytes),
            p.frames_in_headroom,
            Duration::from_ps(p.decision_to_pause_ps).to_string(),
            Duration::from_ps(p.last_start_before_pause_ps).to_string(),
            p.filler_frame_bytes
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(87_036), "87,036");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn percent_rounds_half_away_from_zero_from_integers() {
        assert_eq!(percent(87_036, 86_811), "+0.3 %");
        assert_eq!(percent(86_811, 87_036), "-0.3 %");
        assert_eq!(percent(100, 100), "+0.0 %");
        assert_eq!(percent(1, 0), "n/a");
        assert_eq!(percent(2, 1), "+100.0 %");
    }
}
