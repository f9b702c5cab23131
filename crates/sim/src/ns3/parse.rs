//! Reading the HPCC ns-3 fork's input and output files: whitespace-separated tokens, each
//! kept with its line so that every error names file and line.

use lossless_proto::units::{Duration, Rate};

use super::Ns3Error;
use crate::scenario::parse_duration;

/// The tokens of a file, each with its 1-based line, read one at a time (nothing is held
/// per token: a file of many tokens costs no memory before its count is checked).
pub(super) struct Tokens<'a> {
    file: &'a str,
    /// The text not read yet.
    rest: &'a str,
    /// The line `rest` starts on.
    at_line: usize,
    /// The line of the last token taken.
    last_line: Option<usize>,
}

impl<'a> Tokens<'a> {
    pub(super) fn new(file: &'a str, text: &'a str) -> Self {
        Tokens {
            file,
            rest: text,
            at_line: 1,
            last_line: None,
        }
    }

    /// Steps over white space to the next token (counting lines); the token's line, if any.
    fn skip_space(&mut self) -> Option<usize> {
        let trimmed = self.rest.trim_start();
        let skipped = &self.rest[..self.rest.len() - trimmed.len()];
        self.at_line += skipped.bytes().filter(|&b| b == b'\n').count();
        self.rest = trimmed;
        (!trimmed.is_empty()).then_some(self.at_line)
    }

    /// The line of the last token taken (or of the next one, at the start).
    pub(super) fn line(&self) -> usize {
        self.last_line.unwrap_or_else(|| {
            let rest = self.rest.trim_start();
            let skipped = &self.rest[..self.rest.len() - rest.len()];
            let first = self.at_line + skipped.bytes().filter(|&b| b == b'\n').count();
            if rest.is_empty() { 1 } else { first }
        })
    }

    pub(super) fn err(&self, line: usize, what: &str, message: String) -> Ns3Error {
        Ns3Error {
            file: self.file.to_string(),
            line,
            what: what.to_string(),
            message,
        }
    }

    /// Whether every token was taken.
    pub(super) fn done(&mut self) -> bool {
        self.skip_space().is_none()
    }

    /// The next token, or an error naming `what` was expected.
    pub(super) fn next(&mut self, what: &str) -> Result<(&'a str, usize), Ns3Error> {
        match self.skip_space() {
            Some(line) => {
                let end = self.rest.find(char::is_whitespace).unwrap_or(self.rest.len());
                let (tok, rest) = self.rest.split_at(end);
                self.rest = rest;
                self.last_line = Some(line);
                Ok((tok, line))
            }
            None => Err(self.err(self.line(), what, "missing: the file ends here".into())),
        }
    }

    /// The next token as a number of type `T`.
    pub(super) fn num<T: std::str::FromStr>(&mut self, what: &str, allowed: &str) -> Result<T, Ns3Error> {
        let (t, line) = self.next(what)?;
        t.parse()
            .map_err(|_| self.err(line, what, format!("found {t:?}, allowed {allowed}")))
    }

    /// The next token as an ns-3 data rate (`100Gbps`, `20Mb/s`).
    pub(super) fn rate(&mut self, what: &str) -> Result<Rate, Ns3Error> {
        let (t, line) = self.next(what)?;
        t.parse::<Rate>().map_err(|_| {
            self.err(
                line,
                what,
                format!("found {t:?}, allowed a rate such as 100Gbps or 20Mb/s"),
            )
        })
    }

    /// The next token as an ns-3 time (`1000ns`, `1us`).
    pub(super) fn time(&mut self, what: &str) -> Result<Duration, Ns3Error> {
        let (t, line) = self.next(what)?;
        parse_duration(t).map_err(|m| self.err(line, what, m.to_string()))
    }
}

/// `⌊x × 10⁹⌋` for the exact value of the double `x` ≥ 0: what ns-3 makes of
/// `Seconds(x)` in nanoseconds (it converts the double to 64.64 fixed point, which holds it
/// exactly, multiplies and keeps the integer part). `None` for negative, NaN or huge values.
pub fn ns_of_seconds(x: f64) -> Option<u64> {
    if !(x.is_finite() && x >= 0.0) {
        return None;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, exp - 1075)
    };
    let scaled = u128::from(m) * 1_000_000_000;
    let ns = if e >= 0 {
        scaled.checked_shl(e as u32).filter(|v| v >> e == scaled)?
    } else if -e >= 128 {
        0
    } else {
        scaled >> (-e as u32)
    };
    u64::try_from(ns).ok()
}

/// A time in microseconds written as a decimal number (ns-3 config `RP_TIMER 300`), exactly.
pub(super) fn micros(t: &str) -> Option<Duration> {
    parse_duration(&format!("{t}us")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_convert_as_ns3_truncates_the_double() {
        // flow.txt 2.000013122 s starts at 2000013121 ns in fct.txt (the double is just below)
        assert_eq!(ns_of_seconds(2.000013122), Some(2_000_013_121));
        assert_eq!(ns_of_seconds(2.000000962), Some(2_000_000_962));
        assert_eq!(ns_of_seconds(0.0), Some(0));
        assert_eq!(ns_of_seconds(4.0), Some(4_000_000_000));
        assert_eq!(ns_of_seconds(-1.0), None);
        assert_eq!(ns_of_seconds(f64::NAN), None);
        assert_eq!(ns_of_seconds(1e300), None);
    }

    #[test]
    fn tokens_keep_their_lines() {
        let mut t = Tokens::new("f", "a b\n\nc\n");
        assert_eq!(t.next("x").unwrap(), ("a", 1));
        assert_eq!(t.next("x").unwrap(), ("b", 1));
        assert_eq!(t.next("x").unwrap(), ("c", 3));
        let e = t.next("flow count").unwrap_err();
        assert_eq!((e.line, e.what.as_str()), (3, "flow count"));
        assert!(t.done());
    }
}
