//! Files of flows: the reference's flow file (one flow a line, after their count) and the
//! `fct.txt` it writes (one finished flow a line).

use lossless_proto::units::Instant;

use super::Ns3Error;
use super::parse::{Tokens, ns_of_seconds};

/// Most flows a flow file may announce on its first line. Every flow is a RoCEv2 QP, about
/// 5.8 kB of memory each (docs/limits.md: measured peak RSS per flow), so the limit bounds a
/// run at about 5.8 GB; a larger count is refused before a flow is read.
pub const MAX_FLOWS: u32 = 1_000_000;

/// One flow of a flow file: `src dst pg dport size start_s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Priority class.
    pub pg: u8,
    /// UDP destination port.
    pub dport: u16,
    /// Bytes.
    pub size: u64,
    /// Start, as the reference rounds the file's seconds (down to a nanosecond).
    pub start: Instant,
    /// Its line.
    pub line: usize,
}

/// Parses a flow file named `file`: the count, then one flow per line.
pub fn parse_flows(text: &str, file: &str) -> Result<Vec<Flow>, Ns3Error> {
    let mut t = Tokens::new(file, text);
    let n: u32 = t.num("flow count", "a whole number")?;
    if n > MAX_FLOWS {
        // refused by count: every flow becomes a RoCEv2 QP of several kB (docs/limits.md)
        return Err(t.err(
            t.line(),
            "flow count",
            format!("found {n}, allowed at most {MAX_FLOWS} flows"),
        ));
    }
    let mut flows = Vec::new();
    for _ in 0..n {
        let src: u32 = t.num("src", "a node id")?;
        let line = t.line();
        let dst = t.num("dst", "a node id")?;
        let pg: u8 = t.num("pg", "a priority 0..=7")?;
        if pg > 7 {
            return Err(t.err(line, "pg", format!("found {pg}, allowed 0..=7")));
        }
        let dport = t.num("dport", "a UDP port")?;
        let size: u64 = t.num("size", "a number of bytes")?;
        if size == 0 {
            // a flow of no bytes "completes" without sending anything
            return Err(t.err(line, "size", "found 0, allowed at least 1 byte".into()));
        }
        let s: f64 = t.num("start time", "seconds")?;
        let ns = ns_of_seconds(s)
            .ok_or_else(|| t.err(line, "start time", format!("found {s}, allowed seconds ≥ 0")))?;
        flows.push(Flow {
            src,
            dst,
            pg,
            dport,
            size,
            start: Instant::from_ps(u128::from(ns) * 1_000),
            line,
        });
    }
    if !t.done() {
        let (x, l) = t.next("end")?;
        return Err(t.err(
            l,
            "end",
            format!("found {x:?} after the {n} flows the first line announces"),
        ));
    }
    Ok(flows)
}

/// One line of the reference's `fct.txt`: `sip dip sport dport size start_ns fct_ns
/// standalone_fct_ns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FctLine {
    /// Source node (from the IPv4 address).
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Bytes.
    pub size: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// Flow completion time, ns.
    pub fct_ns: u64,
    /// The reference's ideal ("standalone") FCT, ns.
    pub standalone_ns: u64,
}

/// Parses an `fct.txt` named `file`.
pub fn parse_fct(text: &str, file: &str) -> Result<Vec<FctLine>, Ns3Error> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let err = |what: &str, m: String| Ns3Error {
            file: file.to_string(),
            line,
            what: what.to_string(),
            message: m,
        };
        if f.len() != 8 {
            return Err(err(
                "line",
                format!(
                    "found {} fields, allowed 8 (sip dip sport dport size start fct standalone)",
                    f.len()
                ),
            ));
        }
        let ip = |s: &str, what: &str| {
            u32::from_str_radix(s, 16)
                .map(|ip| (ip >> 8) & 0xffff)
                .map_err(|_| err(what, format!("found {s:?}, allowed 8 hex digits")))
        };
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| err(what, format!("found {s:?}, allowed a whole number")))
        };
        out.push(FctLine {
            src: ip(f[0], "sip")?,
            dst: ip(f[1], "dip")?,
            sport: num(f[2], "sport")? as u16,
            dport: num(f[3], "dport")? as u16,
            size: num(f[4], "size")?,
            start_ns: num(f[5], "start")?,
            fct_ns: num(f[6], "fct")?,
            standalone_ns: num(f[7], "standalone fct")?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fct_lines_give_nodes_from_their_addresses() {
        let l = parse_fct("0b000101 0b000801 10000 100 1000000 0 1068079 88000\n", "fct.txt").unwrap();
        assert_eq!(
            (l[0].src, l[0].dst, l[0].fct_ns, l[0].standalone_ns),
            (1, 8, 1_068_079, 88_000)
        );
        let e = parse_fct("0b000101 x 1 2\n", "fct.txt").unwrap_err();
        assert!(e.message.contains("8"), "{e}");
    }
}
