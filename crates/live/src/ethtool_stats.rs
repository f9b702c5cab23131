//! `ethtool -S` by hand: the driver's statistics through the SIOCETHTOOL ioctl
//! (ETHTOOL_GSSET_INFO for the count, ETHTOOL_GSTRINGS for the names, ETHTOOL_GSTATS for the
//! values), the buffers read by pure functions ([`parse_strings`], [`parse_stats`]).
//!
//! Layouts from the kernel's `include/uapi/linux/ethtool.h`: `struct ethtool_sset_info`
//! {u32 cmd, u32 reserved, u64 sset_mask, u32 data[]}, `struct ethtool_gstrings` {u32 cmd, u32
//! string_set, u32 len, u8 data[len × ETH_GSTRING_LEN]}, `struct ethtool_stats` {u32 cmd, u32
//! n_stats, u64 data[]}; ETHTOOL_GSTRINGS = 0x1b, ETHTOOL_GSTATS = 0x1d, ETHTOOL_GSSET_INFO =
//! 0x37, ETH_SS_STATS = 1, ETH_GSTRING_LEN = 32; SIOCETHTOOL = 0x8946.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `ETHTOOL_GDRVINFO`.
pub const ETHTOOL_GDRVINFO: u32 = 0x3;
/// Bytes of `struct ethtool_drvinfo`.
pub const DRVINFO_LEN: usize = 196;
/// `ETHTOOL_GSTRINGS`.
pub const ETHTOOL_GSTRINGS: u32 = 0x1b;
/// `ETHTOOL_GSTATS`.
pub const ETHTOOL_GSTATS: u32 = 0x1d;
/// `ETHTOOL_GSSET_INFO`.
pub const ETHTOOL_GSSET_INFO: u32 = 0x37;
/// `ETH_SS_STATS`.
pub const ETH_SS_STATS: u32 = 1;
/// `ETH_GSTRING_LEN`.
pub const ETH_GSTRING_LEN: usize = 32;
/// `SIOCETHTOOL`.
pub const SIOCETHTOOL: libc::c_ulong = 0x8946;
/// Most statistics read from one interface (mlx5 with many channels reports a few thousand):
/// bounds the buffers a driver's count can make us allocate.
pub const MAX_STATS: usize = 65_536;

/// Why the driver's statistics could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The name cannot be an interface name.
    #[error("interface name {0:?} is not a Linux interface name (1 to 15 bytes)")]
    BadIfname(String),
    /// The driver reports no statistics (no `get_ethtool_stats`).
    #[error(
        "{iface}: the driver reports no ethtool statistics (ETHTOOL_GSSET_INFO: {})",
        crate::netlink::plain_io_text(source)
    )]
    NotSupported {
        /// The interface.
        iface: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// More statistics than [`MAX_STATS`].
    #[error("{iface}: the driver reports {count} statistics, more than the {MAX_STATS} read")]
    TooMany {
        /// The interface.
        iface: String,
        /// The count it gave.
        count: u64,
    },
    /// The count changed between the calls (a driver reconfiguring), or a reply was short.
    #[error("{iface}: {what}")]
    Inconsistent {
        /// The interface.
        iface: String,
        /// What did not match.
        what: String,
    },
    /// The ioctl failed.
    #[error("{iface}: SIOCETHTOOL {what}: {}", crate::netlink::plain_io_text(source))]
    Io {
        /// The interface.
        iface: String,
        /// The command.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The names in an ETHTOOL_GSTRINGS data area of `n` strings (each NUL-padded to 32 bytes;
/// lossy UTF-8).
pub fn parse_strings(data: &[u8], n: usize) -> Vec<String> {
    data.chunks_exact(ETH_GSTRING_LEN)
        .take(n)
        .map(|c| {
            let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect()
}

/// The values in an ETHTOOL_GSTATS data area of `n` u64 (host byte order).
pub fn parse_stats(data: &[u8], n: usize) -> Vec<u64> {
    data.chunks_exact(8)
        .take(n)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            u64::from_ne_bytes(b)
        })
        .collect()
}

/// The driver's name in an ETHTOOL_GDRVINFO reply (`struct ethtool_drvinfo`: u32 cmd, then
/// `char driver[32]`).
pub fn parse_driver(drvinfo: &[u8]) -> Option<String> {
    let d = drvinfo.get(4..36)?;
    let end = d.iter().position(|&b| b == 0).unwrap_or(d.len());
    (end > 0).then(|| String::from_utf8_lossy(&d[..end]).into_owned())
}

/// Entries of room left beyond the count the driver gave: ETHTOOL_GSTRINGS and ETHTOOL_GSTATS
/// write as many entries as the driver has *at the time of the call*, whatever length the
/// caller says, so a driver whose set grows between the count and the call (mlx5 when PFC is
/// enabled on a priority) would write past a buffer of exactly that count.
pub const SLACK: usize = 1024;

/// An ioctl socket for one interface.
#[derive(Debug)]
pub struct EthtoolStats {
    fd: OwnedFd,
    iface: String,
    names: Vec<String>,
}

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

impl EthtoolStats {
    /// Opens `iface` and reads its statistics' names (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS).
    pub fn open(iface: &str) -> Result<Self, StatsError> {
        if iface.is_empty() || iface.len() >= libc::IFNAMSIZ || iface.contains('\0') {
            return Err(StatsError::BadIfname(iface.to_owned()));
        }
        // SAFETY: plain socket(2); owned at once.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(StatsError::Io {
                iface: iface.to_owned(),
                what: "socket",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: fresh valid descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut s = EthtoolStats {
            fd,
            iface: iface.to_owned(),
            names: Vec::new(),
        };
        let n = s.count()?;
        let mut buf = vec![0u8; 12 + (n + SLACK) * ETH_GSTRING_LEN];
        buf[0..4].copy_from_slice(&ETHTOOL_GSTRINGS.to_ne_bytes());
        buf[4..8].copy_from_slice(&ETH_SS_STATS.to_ne_bytes());
        buf[8..12].copy_from_slice(&(n as u32).to_ne_bytes());
        s.ioctl(&mut buf).map_err(|source| StatsError::Io {
            iface: s.iface.clone(),
            what: "ETHTOOL_GSTRINGS",
            source,
        })?;
        let len = u32::from_ne_bytes([buf[8], buf[9], buf[10], buf[11]]) as usize;
        if len != n {
            return Err(StatsError::Inconsistent {
                iface: s.iface.clone(),
                what: format!("ETHTOOL_GSTRINGS gave {len} names, ETHTOOL_GSSET_INFO said {n}"),
            });
        }
        s.names = parse_strings(&buf[12..], n);
        Ok(s)
    }

    fn ioctl(&self, buf: &mut [u8]) -> Result<(), std::io::Error> {
        let mut ifr = IfReq {
            name: [0; libc::IFNAMSIZ],
            data: buf.as_mut_ptr().cast(),
            _pad: [0; 16],
        };
        ifr.name[..self.iface.len()].copy_from_slice(self.iface.as_bytes());
        // SAFETY: valid fd; ifr points at a live buffer large enough for the command, whose
        // size the kernel learns from the header fields we filled in.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), SIOCETHTOOL as _, &mut ifr) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn count(&self) -> Result<usize, StatsError> {
        let mut buf = [0u8; 20];
        buf[0..4].copy_from_slice(&ETHTOOL_GSSET_INFO.to_ne_bytes());
        buf[8..16].copy_from_slice(&(1u64 << ETH_SS_STATS).to_ne_bytes());
        self.ioctl(&mut buf).map_err(|source| StatsError::NotSupported {
            iface: self.iface.clone(),
            source,
        })?;
        let mask = u64::from_ne_bytes(buf[8..16].try_into().unwrap_or([0; 8]));
        if mask & (1 << ETH_SS_STATS) == 0 {
            return Err(StatsError::NotSupported {
                iface: self.iface.clone(),
                source: std::io::Error::from_raw_os_error(libc::EOPNOTSUPP),
            });
        }
        let n = u64::from(u32::from_ne_bytes([buf[16], buf[17], buf[18], buf[19]]));
        if n as usize > MAX_STATS {
            return Err(StatsError::TooMany {
                iface: self.iface.clone(),
                count: n,
            });
        }
        Ok(n as usize)
    }

    /// The driver's name (ETHTOOL_GDRVINFO), e.g. `mlx5_core`, `veth`.
    pub fn driver(&self) -> Option<String> {
        let mut buf = [0u8; DRVINFO_LEN];
        buf[0..4].copy_from_slice(&ETHTOOL_GDRVINFO.to_ne_bytes());
        self.ioctl(&mut buf).ok()?;
        parse_driver(&buf)
    }

    /// The statistics' names, in the driver's order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Reads the values now (ETHTOOL_GSTATS), paired with their names.
    pub fn read(&self) -> Result<Vec<(String, u64)>, StatsError> {
        let n = self.names.len();
        // the set changed since the names were read: the caller reads them again
        let now = self.count()?;
        if now != n {
            return Err(StatsError::Inconsistent {
                iface: self.iface.clone(),
                what: format!("the driver now has {now} statistics, {n} when their names were read"),
            });
        }
        let mut buf = vec![0u8; 8 + (n + SLACK) * 8];
        buf[0..4].copy_from_slice(&ETHTOOL_GSTATS.to_ne_bytes());
        buf[4..8].copy_from_slice(&(n as u32).to_ne_bytes());
        self.ioctl(&mut buf).map_err(|source| StatsError::Io {
            iface: self.iface.clone(),
            what: "ETHTOOL_GSTATS",
            source,
        })?;
        let got = u32::from_ne_bytes([buf[4], buf[5], buf[6], buf[7]]) as usize;
        if got != n {
            return Err(StatsError::Inconsistent {
                iface: self.iface.clone(),
                what: format!(
                    "ETHTOOL_GSTATS gave {got} values for {n} names (the driver's set changed: restart watch)"
                ),
            });
        }
        Ok(self
            .names
            .iter()
            .cloned()
            .zip(parse_stats(&buf[8..], n))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_cut_at_their_nul_and_at_the_count() {
        let mut d = vec![0u8; 3 * ETH_GSTRING_LEN];
        d[..12].copy_from_slice(b"peer_ifindex");
        d[32..40].copy_from_slice(b"rx_queue");
        assert_eq!(parse_strings(&d, 2), vec!["peer_ifindex", "rx_queue"]);
        // a short buffer gives what is there
        assert_eq!(parse_strings(&d[..40], 2), vec!["peer_ifindex"]);
    }

    #[test]
    fn values_are_host_order_u64() {
        let mut d = Vec::new();
        d.extend_from_slice(&7u64.to_ne_bytes());
        d.extend_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(parse_stats(&d, 2), vec![7, u64::MAX]);
        assert_eq!(parse_stats(&d[..12], 2), vec![7]);
    }
}
