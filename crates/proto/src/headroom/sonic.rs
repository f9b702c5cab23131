//! SONiC's dynamic headroom model for Mellanox/NVIDIA Spectrum switches
//! (`sonic-swss/cfgmgr/buffer_headroom_mellanox.lua`, as changed by sonic-swss#3235 in 2024),
//! computed in exact fractions; the Lua computes in doubles, which agree except within
//! rounding error of a 1 KiB boundary.
//!
//! ```text
//! worst_case_factor = ceil(cell > 128 ? cell/64 : 2·cell/(1 + cell))
//! spp_by_byte       = 100·64 / ((spp·64 + (100 − spp)·lossless_mtu) / 100)
//! cell_occupancy    = (100 − spp_by_byte + spp_by_byte·worst_case_factor) / 100
//! cable             = 2·length·speed / 1.98e8 m/s / 8 bytes       (speed in b/s)
//! gearbox           = speed_Mbps·gearbox_delay_ns / 8192
//! peer_response     = pause_quanta·64 (802.3 table by exact speed; else the ASIC's figure)
//! tile              = speed_Mbps/1000·120/8                          (Spectrum-4 and -5)
//! propagation       = port_mtu + cable + 2·gearbox + mac_phy_delay + peer_response + tile
//! xoff              = ceil_1KiB(lossless_mtu + propagation·cell_occupancy)
//! xon               = ceil_1KiB(pipeline_latency)       (8-lane ports: 2·pipeline_latency)
//! size              = ceil_1KiB(shared headroom pool ? xon : xon + xoff + (8-lane ? port_mtu : 0))
//! ```
//!
//! The by-byte percentage is reproduced as the Lua writes it: its numerator is 100·64 whatever
//! the percentage, so it is 100·64 / (the pattern's mean packet size), twice the small packets'
//! byte share at 50 % and 6.25 % (not 0) at 0 % with a 1024-byte MTU.
//!
//! Before #3235 the small-packet percentage counted packets, not bytes, the worst-case factor
//! was not rounded up, the cable divided by 8·1024 and 8-lane ports took 2·latency − 1 KiB;
//! sonic-swss#4757 (2026) adds 2 KiB when the pool is off and the percentage is below 100, and
//! #4797 adds 18 KiB for Spectrum-6. Neither is modelled here: the #3235 vectors are the ones
//! published with their inputs.

use core::fmt;

use serde::{Serialize, Serializer};

/// A non-negative fraction, kept exact (reduced after every operation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    num: u128,
    den: u128,
}

const fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Ratio {
    /// `num / den`; `den` must not be zero (a zero denominator is taken as 1).
    pub const fn new(num: u128, den: u128) -> Self {
        let den = if den == 0 { 1 } else { den };
        let g = gcd(num, den);
        let g = if g == 0 { 1 } else { g };
        Ratio {
            num: num / g,
            den: den / g,
        }
    }
    /// The integer `n`.
    pub const fn int(n: u128) -> Self {
        Ratio { num: n, den: 1 }
    }
    /// Sum.
    pub const fn add(self, o: Ratio) -> Ratio {
        Ratio::new(self.num * o.den + o.num * self.den, self.den * o.den)
    }
    /// Difference, clamped at zero.
    pub const fn sub(self, o: Ratio) -> Ratio {
        let a = self.num * o.den;
        let b = o.num * self.den;
        Ratio::new(a.saturating_sub(b), self.den * o.den)
    }
    /// Product.
    pub const fn mul(self, o: Ratio) -> Ratio {
        // cross-reduce first so that products stay small
        let g1 = gcd(self.num, o.den);
        let g2 = gcd(o.num, self.den);
        let (g1, g2) = (if g1 == 0 { 1 } else { g1 }, if g2 == 0 { 1 } else { g2 });
        Ratio::new((self.num / g1) * (o.num / g2), (self.den / g2) * (o.den / g1))
    }
    /// Quotient; dividing by zero gives zero.
    pub const fn div(self, o: Ratio) -> Ratio {
        if o.num == 0 {
            return Ratio::int(0);
        }
        self.mul(Ratio {
            num: o.den,
            den: o.num,
        })
    }
    /// Smallest integer at least this.
    pub const fn ceil(self) -> u128 {
        self.num.div_ceil(self.den)
    }
    /// Largest integer at most this.
    pub const fn floor(self) -> u128 {
        self.num / self.den
    }
    /// Rounded up to a whole number of KiB, in bytes (the Lua's `math.ceil(x / 1024) * 1024`).
    pub const fn ceil_kib(self) -> u64 {
        (self.num.div_ceil(self.den * 1024) * 1024) as u64
    }
    /// This fraction as a float, for reports only.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl fmt::Display for Ratio {
    /// Three decimals, rounded down.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.floor();
        let milli = (self.num % self.den) * 1000 / self.den;
        if self.num.is_multiple_of(self.den) {
            write!(f, "{whole}")
        } else {
            write!(f, "{whole}.{milli:03}")
        }
    }
}

impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.to_f64())
    }
}

/// Pause quanta per speed (Mb/s) in the Lua table, "IEEE 802.3 31B.3.7". 10G is 67 here, 60 in
/// 802.3's table (see [`crate::flow_control::reaction_delay_quanta`]).
pub const PAUSE_QUANTA: [(u64, u64); 10] = [
    (800_000, 905),
    (400_000, 905),
    (200_000, 453),
    (100_000, 394),
    (50_000, 147),
    (40_000, 118),
    (25_000, 80),
    (10_000, 67),
    (1_000, 2),
    (100, 1),
];

/// One ASIC's `ASIC_TABLE` entry (delays in thousandths of a kB, 1 kB = 1024 bytes, as the
/// table writes "0.8").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Asic {
    /// Short name for the command line.
    pub name: &'static str,
    /// What it is.
    pub description: &'static str,
    /// Buffer cell size, bytes; `None` where no stored source gives it.
    pub cell_bytes: Option<u64>,
    /// `pipeline_latency` × 1000 (kB).
    pub pipeline_latency_milli_kb: u64,
    /// `mac_phy_delay` × 1000 (kB).
    pub mac_phy_delay_milli_kb: u64,
    /// `peer_response_time` × 1000 (kB), used only at speeds missing from [`PAUSE_QUANTA`].
    pub peer_response_milli_kb: u64,
    /// Whether the Lua adds the Spectrum-4/-5 "kB on tile" term.
    pub tile: bool,
    /// Fastest lane, Mb/s: a port of 8 such lanes (or more) is an 8-lane port.
    pub lane_mbps: u64,
    /// Where the figures come from.
    pub source: &'static str,
}

const ASIC_TABLE_J2: &str = "sonic-buildimage files/build_templates/asic_table.j2";
const SWSS_3235: &str = "cell size: none stored; pipeline latency 19 kB from the sonic-swss#3235 \
     vectors' xon; mac_phy and peer response as Spectrum-3";

/// The presets.
pub const ASICS: [Asic; 6] = [
    Asic {
        name: "spc1",
        description: "Spectrum-1 (SN2000 series)",
        cell_bytes: Some(96),
        pipeline_latency_milli_kb: 18_000,
        mac_phy_delay_milli_kb: 800,
        peer_response_milli_kb: 3_800,
        tile: false,
        lane_mbps: 25_000,
        source: ASIC_TABLE_J2,
    },
    Asic {
        name: "spc2",
        description: "Spectrum-2 (SN3000 series)",
        cell_bytes: Some(144),
        pipeline_latency_milli_kb: 18_000,
        mac_phy_delay_milli_kb: 800,
        peer_response_milli_kb: 3_800,
        tile: false,
        lane_mbps: 50_000,
        source: ASIC_TABLE_J2,
    },
    Asic {
        name: "spc3",
        description: "Spectrum-3 (SN4000 series)",
        cell_bytes: Some(144),
        pipeline_latency_milli_kb: 18_000,
        mac_phy_delay_milli_kb: 800,
        peer_response_milli_kb: 3_800,
        tile: false,
        lane_mbps: 50_000,
        source: ASIC_TABLE_J2,
    },
    Asic {
        name: "spc4",
        description: "Spectrum-4 (SN5000 series)",
        cell_bytes: None,
        pipeline_latency_milli_kb: 19_000,
        mac_phy_delay_milli_kb: 800,
        peer_response_milli_kb: 3_800,
        tile: true,
        lane_mbps: 100_000,
        source: SWSS_3235,
    },
    Asic {
        name: "spc5",
        description: "Spectrum-5",
        cell_bytes: None,
        pipeline_latency_milli_kb: 19_000,
        mac_phy_delay_milli_kb: 800,
        peer_response_milli_kb: 3_800,
        tile: true,
        lane_mbps: 200_000,
        source: SWSS_3235,
    },
    Asic {
        name: "vs",
        description: "SONiC virtual switch",
        cell_bytes: Some(128),
        pipeline_latency_milli_kb: 18_000,
        mac_phy_delay_milli_kb: 800,
        peer_response_milli_kb: 3_800,
        tile: false,
        lane_mbps: 25_000,
        source: ASIC_TABLE_J2,
    },
];

/// The preset called `name` (case-insensitive).
pub fn asic(name: &str) -> Option<&'static Asic> {
    ASICS.iter().find(|a| a.name.eq_ignore_ascii_case(name))
}

/// Everything the Lua reads: its arguments, `LOSSLESS_TRAFFIC_PATTERN`, `ASIC_TABLE` and
/// whether a shared headroom pool is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Input {
    /// Port speed, Mb/s.
    pub speed_mbps: u64,
    /// Cable length, metres.
    pub cable_m: u64,
    /// The port's MTU (CONFIG_DB `PORT|…|mtu`, e.g. 9100).
    pub port_mtu: u64,
    /// The lossless traffic's MTU (`LOSSLESS_TRAFFIC_PATTERN|…|mtu`, e.g. 1024 for RDMA).
    pub lossless_mtu: u64,
    /// `small_packet_percentage`, 0..=100.
    pub small_packet_percentage: u64,
    /// ASIC cell size, bytes.
    pub cell_bytes: u64,
    /// `pipeline_latency` × 1000 (kB).
    pub pipeline_latency_milli_kb: u64,
    /// `mac_phy_delay` × 1000 (kB).
    pub mac_phy_delay_milli_kb: u64,
    /// `peer_response_time` × 1000 (kB), used only when the speed is not in [`PAUSE_QUANTA`].
    pub peer_response_milli_kb: u64,
    /// Gearbox delay, ns (0: no gearbox).
    pub gearbox_delay_ns: u64,
    /// Whether the port has 8 lanes.
    pub eight_lanes: bool,
    /// Whether the ASIC is a Spectrum-4 or -5 (the "kB on tile" term).
    pub tile: bool,
    /// Whether a shared headroom pool is configured (its size or an over-subscribe ratio).
    pub shared_headroom_pool: bool,
}

/// The result with every intermediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sonic {
    /// Cell bytes per minimum packet, rounded up.
    pub worst_case_factor: u64,
    /// The small-packet percentage counted in bytes.
    pub small_packet_percentage_by_byte: Ratio,
    /// Stored bytes per received byte.
    pub cell_occupancy: Ratio,
    /// Pause quanta found for the speed (`None`: the ASIC's peer response was used).
    pub pause_quanta: Option<u64>,
    /// Bytes on the cable, round trip.
    pub cable_bytes: Ratio,
    /// Bytes in one gearbox.
    pub gearbox_bytes: Ratio,
    /// MAC/PHY delay, bytes.
    pub mac_phy_bytes: Ratio,
    /// Peer response, bytes.
    pub peer_response_bytes: Ratio,
    /// Spectrum-4/-5 tile bytes.
    pub tile_bytes: Ratio,
    /// `port_mtu + cable + 2·gearbox + mac_phy + peer_response + tile`.
    pub propagation_bytes: Ratio,
    /// Pipeline latency after the 8-lane rule, bytes.
    pub pipeline_latency_bytes: Ratio,
    /// The 8-lane speed overhead (one port MTU), bytes.
    pub speed_overhead_bytes: u64,
    /// XOFF: the headroom above the XOFF threshold, bytes.
    pub xoff_bytes: u64,
    /// XON: bytes kept for the pipeline, bytes.
    pub xon_bytes: u64,
    /// The headroom buffer (PG size), bytes.
    pub size_bytes: u64,
}

/// Why an input cannot be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The small-packet percentage is above 100.
    #[error("small packet percentage {found}: allowed 0..=100")]
    Percentage {
        /// What was given.
        found: u64,
    },
    /// The lossless MTU is zero (the percentage by byte would divide by zero).
    #[error("lossless MTU 0: allowed 1..=65535")]
    LosslessMtu,
    /// The cell size is zero.
    #[error("cell size 0: allowed 1..=65535")]
    Cell,
}

impl Input {
    /// Runs the model.
    pub fn compute(&self) -> Result<Sonic, InputError> {
        if self.small_packet_percentage > 100 {
            return Err(InputError::Percentage {
                found: self.small_packet_percentage,
            });
        }
        if self.lossless_mtu == 0 {
            return Err(InputError::LosslessMtu);
        }
        if self.cell_bytes == 0 {
            return Err(InputError::Cell);
        }
        let r = |n: u64| Ratio::int(u128::from(n));
        let kb = |milli: u64| Ratio::new(u128::from(milli) * 1024, 1000);
        let cell = u128::from(self.cell_bytes);
        let wcf = if cell > 2 * 64 {
            Ratio::new(cell, 64)
        } else {
            Ratio::new(2 * cell, 1 + cell)
        }
        .ceil() as u64;
        let spp = r(self.small_packet_percentage);
        let mix = spp
            .mul(r(64))
            .add(r(100 - self.small_packet_percentage).mul(r(self.lossless_mtu)))
            .div(r(100));
        let spp_by_byte = r(100 * 64).div(mix);
        let occupancy = r(100).sub(spp_by_byte).add(spp_by_byte.mul(r(wcf))).div(r(100));
        let pause_quanta = PAUSE_QUANTA
            .iter()
            .find(|(s, _)| *s == self.speed_mbps)
            .map(|(_, q)| *q);
        let peer = match pause_quanta {
            Some(q) => r(q * 64),
            None => kb(self.peer_response_milli_kb),
        };
        // 2·L·speed[b/s] / 1.98e8 / 8000 with speed[b/s] = speed_Mbps·1e9 / 1000 … the Lua
        // multiplies Mb/s by 1e9 and divides by 8·1000: 2·L·Mbps/1584 bytes
        let cable = Ratio::new(2 * u128::from(self.cable_m) * u128::from(self.speed_mbps), 1584);
        let gearbox = Ratio::new(
            u128::from(self.speed_mbps) * u128::from(self.gearbox_delay_ns),
            8 * 1024,
        );
        let mac_phy = kb(self.mac_phy_delay_milli_kb);
        let tile = if self.tile {
            Ratio::new(u128::from(self.speed_mbps) * 120, 1000 * 8)
        } else {
            Ratio::int(0)
        };
        let propagation = r(self.port_mtu)
            .add(cable)
            .add(gearbox.mul(r(2)))
            .add(mac_phy)
            .add(peer)
            .add(tile);
        let mut latency = kb(self.pipeline_latency_milli_kb);
        let mut overhead = 0;
        if self.eight_lanes {
            latency = latency.mul(r(2));
            overhead = self.port_mtu;
        }
        let xoff = r(self.lossless_mtu).add(propagation.mul(occupancy)).ceil_kib();
        let xon = latency.ceil_kib();
        let size = if self.shared_headroom_pool {
            xon
        } else {
            r(xoff + xon + overhead).ceil_kib()
        };
        Ok(Sonic {
            worst_case_factor: wcf,
            small_packet_percentage_by_byte: spp_by_byte,
            cell_occupancy: occupancy,
            pause_quanta,
            cable_bytes: cable,
            gearbox_bytes: gearbox,
            mac_phy_bytes: mac_phy,
            peer_response_bytes: peer,
            tile_bytes: tile,
            propagation_bytes: propagation,
            pipeline_latency_bytes: latency,
            speed_overhead_bytes: overhead,
            xoff_bytes: xoff,
            xon_bytes: xon,
            size_bytes: size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sonic-swss#3235 test inputs: port MTU 9100, RDMA MTU 1024, 50 % small packets, no
    /// shared headroom pool, pipeline latency 19 kB; 400G and 800G ports have 8 lanes.
    fn swss_3235(speed_gbps: u64, cable_m: u64, spectrum4: bool) -> Input {
        Input {
            speed_mbps: speed_gbps * 1000,
            cable_m,
            port_mtu: 9100,
            lossless_mtu: 1024,
            small_packet_percentage: 50,
            // Spectrum-3's 144 B (asic_table.j2); any cell of 129..=192 B gives the same
            // worst-case factor, 3, which is all the model uses
            cell_bytes: 144,
            pipeline_latency_milli_kb: 19_000,
            mac_phy_delay_milli_kb: 800,
            peer_response_milli_kb: 3_800,
            gearbox_delay_ns: 0,
            eight_lanes: speed_gbps >= 400,
            tile: spectrum4,
            shared_headroom_pool: false,
        }
    }

    fn xon_xoff_size(i: Input) -> (u64, u64, u64) {
        let s = i.compute().unwrap();
        (s.xon_bytes, s.xoff_bytes, s.size_bytes)
    }

    #[test]
    fn swss_3235_vector_spc3_400g_300m() {
        assert_eq!(
            xon_xoff_size(swss_3235(400, 300, false)),
            (38_912, 272_384, 320_512)
        );
    }

    #[test]
    fn swss_3235_vector_spc3_100g_40m() {
        assert_eq!(xon_xoff_size(swss_3235(100, 40, false)), (19_456, 51_200, 70_656));
    }

    #[test]
    fn swss_3235_vector_spc4_800g_300m() {
        assert_eq!(
            xon_xoff_size(swss_3235(800, 300, true)),
            (38_912, 474_112, 522_240)
        );
    }

    #[test]
    fn swss_3235_vector_spc4_200g_40m() {
        assert_eq!(xon_xoff_size(swss_3235(200, 40, true)), (19_456, 65_536, 84_992));
    }

    #[test]
    fn intermediates_of_the_spc3_100g_vector_are_exact() {
        let s = swss_3235(100, 40, false).compute().unwrap();
        assert_eq!(s.worst_case_factor, 3); // ceil(144 / 64)
        // 100·64 / ((50·64 + 50·1024)/100) = 6400 / 544 = 200/17
        assert_eq!(s.small_packet_percentage_by_byte, Ratio::new(200, 17));
        // (100 + 2·200/17)/100 = 21/17
        assert_eq!(s.cell_occupancy, Ratio::new(21, 17));
        assert_eq!(s.pause_quanta, Some(394));
        assert_eq!(s.peer_response_bytes, Ratio::int(25_216));
        // 2·40·100_000/1584 = 5050.50…
        assert_eq!(s.cable_bytes, Ratio::new(8_000_000, 1584));
        assert_eq!(s.mac_phy_bytes, Ratio::new(8192, 10));
        assert_eq!(s.cable_bytes.to_string(), "5050.505");
    }

    #[test]
    fn small_cells_take_two_cells_and_the_by_byte_percentage_is_the_luas_own() {
        let mut i = swss_3235(100, 40, false);
        i.cell_bytes = 96;
        let s = i.compute().unwrap();
        assert_eq!(s.worst_case_factor, 2); // ceil(192 / 97)
        i.small_packet_percentage = 100;
        let s = i.compute().unwrap();
        assert_eq!(s.small_packet_percentage_by_byte, Ratio::int(100));
        assert_eq!(s.cell_occupancy, Ratio::int(2));
        // the Lua's numerator is 100·64 whatever the percentage, so 0 % small packets still
        // counts 64/lossless_mtu of the bytes as small: 6.25 % at MTU 1024, occupancy 17/16
        i.small_packet_percentage = 0;
        let s = i.compute().unwrap();
        assert_eq!(s.small_packet_percentage_by_byte, Ratio::new(25, 4));
        assert_eq!(s.cell_occupancy, Ratio::new(17, 16));
    }

    #[test]
    fn shared_pool_makes_the_size_the_xon_and_gearbox_adds_twice() {
        let mut i = swss_3235(100, 40, false);
        i.shared_headroom_pool = true;
        let s = i.compute().unwrap();
        assert_eq!(s.size_bytes, s.xon_bytes);
        let before = i.compute().unwrap().propagation_bytes;
        i.gearbox_delay_ns = 8192;
        let after = i.compute().unwrap().propagation_bytes;
        // 100_000 Mb/s · 8192 ns / 8192 = 100_000 bytes per gearbox, two of them
        assert_eq!(after.sub(before), Ratio::int(200_000));
    }

    #[test]
    fn a_speed_missing_from_the_table_takes_the_asic_peer_response() {
        let mut i = swss_3235(100, 40, false);
        i.speed_mbps = 2_500;
        let s = i.compute().unwrap();
        assert_eq!(s.pause_quanta, None);
        assert_eq!(s.peer_response_bytes, Ratio::new(3800 * 1024, 1000));
    }

    #[test]
    fn ten_gig_takes_67_quanta_in_sonic_where_8023_says_60() {
        assert!(PAUSE_QUANTA.contains(&(10_000, 67)));
        let q = crate::flow_control::reaction_delay_quanta(crate::units::Rate::from_gbps(10));
        assert_eq!(q, 60);
    }

    #[test]
    fn bad_inputs_are_refused_with_the_allowed_range() {
        let mut i = swss_3235(100, 40, false);
        i.small_packet_percentage = 101;
        assert_eq!(
            i.compute().unwrap_err().to_string(),
            "small packet percentage 101: allowed 0..=100"
        );
        let mut i = swss_3235(100, 40, false);
        i.lossless_mtu = 0;
        assert!(i.compute().is_err());
    }

    #[test]
    fn presets_follow_asic_table_j2() {
        assert_eq!(asic("SPC1").unwrap().cell_bytes, Some(96));
        assert_eq!(asic("spc2").unwrap().cell_bytes, Some(144));
        assert_eq!(asic("spc3").unwrap().cell_bytes, Some(144));
        assert_eq!(asic("vs").unwrap().cell_bytes, Some(128));
        assert_eq!(asic("spc4").unwrap().cell_bytes, None);
        assert!(asic("spc9").is_none());
    }

    #[test]
    fn ratios_reduce_and_round() {
        let a = Ratio::new(6, 4);
        assert_eq!(a, Ratio::new(3, 2));
        assert_eq!((a.floor(), a.ceil()), (1, 2));
        assert_eq!(Ratio::new(1025, 1).ceil_kib(), 2048);
        assert_eq!(Ratio::new(1024, 1).ceil_kib(), 1024);
        assert_eq!(Ratio::int(3).sub(Ratio::int(5)), Ratio::int(0));
        assert_eq!(Ratio::int(3).div(Ratio::int(0)), Ratio::int(0));
        assert_eq!(Ratio::new(1, 3).to_string(), "0.333");
    }
}
