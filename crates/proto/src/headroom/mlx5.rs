//! NVIDIA mlx5 NIC driver headroom (`drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c`),
//! in the driver's own `u32` arithmetic, operator by operator, so that its truncations (and, for
//! long cables at high speed, its wrap-around) come out as the driver's do.
//!
//! Two generations:
//! - [`calculate_xoff`], upstream Linux: `xoff = (301 + 2.16·cable_m)·speed_Gbps + 2.72·MTU`
//!   bytes, speed floored at 40G, the netdev MTU (payload). Its constants fold the cable's round
//!   trip, the MAC/PHY delays and the peer's response into 301 bytes per Gb/s plus 2.16 per
//!   metre; 2.72 MTUs cover the frames in flight at both ends and cell overhead.
//! - [`buffer_and_thresholds`], Mellanox's nic-kernel tree: MAC response from a pause-quanta
//!   table (64 bytes per quantum, counted twice), cable bytes at 1.98·10⁸ m/s, a cell factor for
//!   small frames (cell size over 84 bytes, the minimum frame with IPG), and the port's
//!   operational (hardware, frame-sized) MTU.
//!
//! Cable length: the driver takes `ieee_pfc.delay` (which dcbnl documents as bits) as metres,
//! default 7 m ([`DEFAULT_CABLE_M`]), and refuses 1000 m or more ([`MAX_CABLE_M`]).

use serde::Serialize;

/// The driver's default cable length, metres (`MLX5E_DEFAULT_CABLE_LEN`).
pub const DEFAULT_CABLE_M: u32 = 7;
/// Cable lengths from this many metres on are refused by the driver (`MLX5E_MAX_CABLE_LENGTH`).
pub const MAX_CABLE_M: u32 = 1_000;
/// Floor of the device's largest MTU in the buffer checks (`MINIMUM_MAX_MTU`).
pub const MINIMUM_MAX_MTU: u32 = 9_216;
/// Buffer cell size of older devices (`MLX5E_BUFFER_CELL_SHIFT` 7); newer ones report theirs.
pub const DEFAULT_CELL_BYTES: u32 = 128;
/// Speed floor of [`calculate_xoff`], Mb/s (`SPEED_40000`).
pub const XOFF_SPEED_FLOOR_MBPS: u32 = 40_000;

/// Upstream `calculate_xoff` and the buffer checks around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Xoff {
    /// The speed the formula used, Mb/s (the link speed floored at 40G).
    pub speed_used_mbps: u32,
    /// `(301 + 216·cable/100)·speed/1000`: delays and cable, bytes.
    pub delay_term_bytes: u32,
    /// `272·mtu/100`: the frames in flight, bytes.
    pub mtu_term_bytes: u32,
    /// The headroom above the XOFF threshold (the driver's `xoff`), bytes.
    pub xoff_bytes: u32,
    /// The smallest lossless buffer the driver accepts: `xoff + max_mtu + cell`, bytes.
    pub min_buffer_bytes: u32,
    /// Whether the driver's `u32` arithmetic wrapped (the result is then not the formula's).
    pub wrapped: bool,
}

/// Upstream Linux `calculate_xoff(priv, mtu)` for a link of `speed_mbps` Mb/s, `cable_m`
/// metres and netdev MTU `mtu`; `max_mtu` (floored at [`MINIMUM_MAX_MTU`]) and `cell_bytes`
/// give the smallest buffer the driver then accepts.
pub fn calculate_xoff(speed_mbps: u32, cable_m: u32, mtu: u32, max_mtu: u32, cell_bytes: u32) -> Xoff {
    let speed = speed_mbps.max(XOFF_SPEED_FLOOR_MBPS);
    // C evaluates left to right in u32: ((301 + ((216 * len) / 100)) * speed) / 1000
    let delay = 301u32
        .wrapping_add(216u32.wrapping_mul(cable_m) / 100)
        .wrapping_mul(speed)
        / 1000;
    let mtu_term = 272u32.wrapping_mul(mtu) / 100;
    let xoff = delay.wrapping_add(mtu_term);
    let exact_delay = (301 + 216 * u64::from(cable_m) / 100) * u64::from(speed) / 1000;
    let exact = exact_delay + 272 * u64::from(mtu) / 100;
    let max_mtu = max_mtu.max(MINIMUM_MAX_MTU);
    Xoff {
        speed_used_mbps: speed,
        delay_term_bytes: delay,
        mtu_term_bytes: mtu_term,
        xoff_bytes: xoff,
        min_buffer_bytes: xoff.wrapping_add(max_mtu).wrapping_add(cell_bytes),
        wrapped: exact != u64::from(xoff),
    }
}

/// nic-kernel's pause-quanta table: (speed up to, Mb/s; quanta). Speeds above the last row
/// take the last row; below the first, the first.
pub const PAUSE_QUANTA: [(u32, u32); 7] = [
    (25_000, 80),
    (40_000, 118),
    (100_000, 394),
    (200_000, 453),
    (400_000, 905),
    (800_000, 1_810),
    (1_600_000, 3_620),
];

/// nic-kernel `mlx5e_calculate_buf_sz_and_thresholds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Buffer {
    /// The MAC response time from [`PAUSE_QUANTA`], 64 bytes per quantum.
    pub mac_response_bytes: u32,
    /// `cable·(speed/1000)·1262/1000`: the cable's round trip in fibre, bytes.
    pub cable_bytes: u32,
    /// `cell·100/84`: stored bytes per wire byte for minimum frames, in hundredths.
    pub cell_factor_percent: u32,
    /// `(cable + 2·mac_response + oper_mtu)·cell_factor/100 + oper_mtu`: the buffer above the
    /// XOFF threshold, i.e. the headroom, bytes.
    pub headroom_bytes: u32,
    /// XON threshold: `headroom − oper_mtu + speed/8`, bytes.
    pub xon_bytes: u32,
    /// XOFF threshold: `xon + 2·max_mtu`, bytes.
    pub xoff_bytes: u32,
    /// Lossless buffer size: `headroom + xoff`, bytes.
    pub size_bytes: u32,
    /// Whether the driver's `u32` arithmetic wrapped.
    pub wrapped: bool,
}

/// nic-kernel `mlx5e_calculate_buf_sz_and_thresholds` for a link of `speed_mbps` Mb/s,
/// `cable_m` metres, port operational MTU `oper_mtu` (a frame size: the netdev MTU + 22) used
/// also as `max_mtu`, and a buffer cell of `cell_bytes`.
pub fn buffer_and_thresholds(speed_mbps: u32, cable_m: u32, oper_mtu: u16, cell_bytes: u16) -> Buffer {
    let row = PAUSE_QUANTA
        .iter()
        .find(|(s, _)| speed_mbps <= *s)
        .unwrap_or(&PAUSE_QUANTA[PAUSE_QUANTA.len() - 1]);
    let mac_rsp = row.1 * 64;
    let cable = cable_m.wrapping_mul(speed_mbps / 1000).wrapping_mul(1262) / 1000;
    // int arithmetic in the driver; the cell size is a u16, so this never overflows
    let cell_factor = u32::from(cell_bytes) * 100 / (20 + 64);
    let mtu = u32::from(oper_mtu);
    let headroom = cable
        .wrapping_add(2 * mac_rsp)
        .wrapping_add(mtu)
        .wrapping_mul(cell_factor)
        / 100
        + mtu;
    let xon = headroom.wrapping_sub(mtu).wrapping_add(speed_mbps / 8);
    let xoff = xon.wrapping_add(2 * mtu);
    let size = headroom.wrapping_add(xoff);
    let exact_cable = u64::from(cable_m) * u64::from(speed_mbps / 1000) * 1262 / 1000;
    let exact_headroom = (exact_cable + 2 * u64::from(mac_rsp) + u64::from(mtu)) * u64::from(cell_factor)
        / 100
        + u64::from(mtu);
    let exact_size = 2 * exact_headroom - u64::from(mtu) + u64::from(speed_mbps / 8) + 2 * u64::from(mtu);
    Buffer {
        mac_response_bytes: mac_rsp,
        cable_bytes: cable,
        cell_factor_percent: cell_factor,
        headroom_bytes: headroom,
        xon_bytes: xon,
        xoff_bytes: xoff,
        size_bytes: size,
        wrapped: exact_size != u64::from(size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_xoff_at_100g_7m_mtu_1500_is_35_680_bytes() {
        // 216·7/100 = 15 (truncated); (301 + 15)·100_000/1000 = 31_600; 272·1500/100 = 4_080
        let x = calculate_xoff(100_000, 7, 1500, 9978, 128);
        assert_eq!(
            (x.delay_term_bytes, x.mtu_term_bytes, x.xoff_bytes),
            (31_600, 4_080, 35_680)
        );
        assert_eq!(x.min_buffer_bytes, 35_680 + 9978 + 128);
        assert!(!x.wrapped);
    }

    #[test]
    fn upstream_xoff_floors_the_speed_at_40g() {
        let a = calculate_xoff(10_000, 3, 1500, 0, 128);
        let b = calculate_xoff(40_000, 3, 1500, 0, 128);
        assert_eq!(a, b);
        assert_eq!(a.speed_used_mbps, 40_000);
        // max_mtu floored at 9216
        assert_eq!(a.min_buffer_bytes, a.xoff_bytes + 9216 + 128);
    }

    #[test]
    fn upstream_xoff_truncates_like_c_integer_division() {
        // 216·1/100 = 2 (not 2.16): (303)·25 = 7_575 at 25G → floored to 40G: 303·40 = 12_120
        let x = calculate_xoff(25_000, 1, 9000, 9216, 128);
        assert_eq!(x.delay_term_bytes, 12_120);
        assert_eq!(x.mtu_term_bytes, 24_480);
    }

    #[test]
    fn upstream_xoff_wraps_in_u32_for_a_long_cable_at_800g() {
        // (301 + 216·3000/100)·800_000 = 6_781·800_000 = 5_424_800_000 > u32::MAX
        let x = calculate_xoff(800_000, 3_000, 1500, 9216, 128);
        assert!(x.wrapped);
        assert_eq!(x.delay_term_bytes, (5_424_800_000u64 - (1 << 32)) as u32 / 1000);
        assert!(!calculate_xoff(800_000, 999, 9000, 9216, 128).wrapped);
    }

    #[test]
    fn nic_kernel_buffer_at_100g_7m_follows_the_driver_term_by_term() {
        // mac_rsp 394·64 = 25_216; cable 7·100·1262/1000 = 883; cell factor 128·100/84 = 152;
        // (883 + 50_432 + 1522)·152/100 + 1522 = 80_312 + 1522 = 81_834
        let b = buffer_and_thresholds(100_000, 7, 1522, 128);
        assert_eq!(b.mac_response_bytes, 25_216);
        assert_eq!(b.cable_bytes, 883);
        assert_eq!(b.cell_factor_percent, 152);
        assert_eq!(b.headroom_bytes, 81_834);
        assert_eq!(b.xon_bytes, 81_834 - 1522 + 12_500);
        assert_eq!(b.xoff_bytes, b.xon_bytes + 2 * 1522);
        assert_eq!(b.size_bytes, b.headroom_bytes + b.xoff_bytes);
        assert!(!b.wrapped);
    }

    #[test]
    fn nic_kernel_quanta_table_takes_the_next_row_up_and_the_last_above_it() {
        assert_eq!(
            buffer_and_thresholds(10_000, 0, 1522, 128).mac_response_bytes,
            80 * 64
        );
        assert_eq!(
            buffer_and_thresholds(50_000, 0, 1522, 128).mac_response_bytes,
            394 * 64
        );
        assert_eq!(
            buffer_and_thresholds(3_200_000, 0, 1522, 128).mac_response_bytes,
            3620 * 64
        );
    }
}
