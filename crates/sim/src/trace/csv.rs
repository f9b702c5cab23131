//! `lossless sim --series DIR`: time series as CSV for pandas/polars, at a bin width the user
//! sets. Three files, each with a header line (docs/series.md has the schema):
//!
//! - `queues.csv`: `time_ps,bin_ps,node,port,peer,priority,max_bytes,end_bytes`: the bytes in
//!   each egress queue (port × priority), its peak in the bin and its level at the bin's end; a
//!   row for every bin in which the queue held bytes (an absent row is an empty queue).
//! - `pause.csv`: `time_ps,bin_ps,node,port,peer,priority,paused_ps`: the picoseconds of the
//!   bin during which the port could not send data of the priority because its peer paused it
//!   (`priority` is `all` on a link under 802.3x PAUSE); a row for every bin with a pause.
//! - `flows.csv`: `time_ps,bin_ps,flow_id,flow,src,dst,priority,delivered_bytes,rate_bps`: the
//!   bytes of the flow's data frames whose bits arrived at its destination during the bin
//!   (a frame is split across the bins its bits took on the receiver's link, so no rate
//!   exceeds the line rate) and that rate; a row for every bin from the flow's first delivery
//!   to its last, zeros between.
//!
//! `time_ps` is the bin's start in simulated time (bins are aligned on multiples of the
//! width from time 0), `bin_ps` its width (the last bin ends at the run's end). Rows of one
//! queue, port or flow are in time order; the rows of different ones are not sorted
//! (sort by `time_ps`). Memory holds one open bin per queue, port and flow, whatever the
//! run's length; every file is written beside its name and put in place with the run's other
//! outputs (all or none).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use lossless_files::{AtomicFile, Commit, OutputError};
use lossless_proto::flow_control::Mode;
use lossless_proto::units::{Duration, Instant, MIN_TIMER_PERIOD, Rate};

use crate::config::{NodeKind, SimConfig};
use crate::frame::{Frame, NodeId, PortId};
use crate::observer::Observer;

/// The narrowest bin `--series-bin` accepts (the floor every period has, docs/limits.md).
pub const MIN_SERIES_BIN: Duration = MIN_TIMER_PERIOD;

/// Most bins a run's series may have (its duration over the bin width): bounds the rows of
/// each queue, port and flow.
pub const MAX_SERIES_BINS: u128 = 1_000_000;

/// The bins a run of `duration` gets when `--series-bin` is not given: 1000, or as many
/// [`MIN_SERIES_BIN`] as the run holds.
pub const DEFAULT_SERIES_BINS: u128 = 1000;

/// The files [`SeriesSink`] writes in its directory.
pub const SERIES_FILES: [&str; 3] = ["queues.csv", "pause.csv", "flows.csv"];

/// The bin width for a run of `duration`: `bin` if given (refused below [`MIN_SERIES_BIN`]
/// or when the run would have more than [`MAX_SERIES_BINS`] bins), else the run over
/// [`DEFAULT_SERIES_BINS`] (at least [`MIN_SERIES_BIN`]).
pub fn series_bin(bin: Option<Duration>, duration: Duration) -> Result<Duration, SeriesBinError> {
    let run = duration.as_ps();
    let Some(bin) = bin else {
        let ps = run.div_ceil(DEFAULT_SERIES_BINS).max(MIN_SERIES_BIN.as_ps());
        return Ok(Duration::from_ps(ps));
    };
    if bin < MIN_SERIES_BIN {
        return Err(SeriesBinError::BelowFloor { bin });
    }
    let bins = run.div_ceil(bin.as_ps());
    if bins > MAX_SERIES_BINS {
        return Err(SeriesBinError::TooMany { bin, duration, bins });
    }
    Ok(bin)
}

/// A `--series-bin` that is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeriesBinError {
    /// Narrower than [`MIN_SERIES_BIN`].
    #[error(
        "--series-bin {bin}: allowed at least {MIN_SERIES_BIN} (every period has a floor, docs/limits.md)"
    )]
    BelowFloor {
        /// The bin asked for.
        bin: Duration,
    },
    /// The run would have more than [`MAX_SERIES_BINS`] bins.
    #[error(
        "--series-bin {bin}: a run of {duration} would have {bins} bins, allowed at most {MAX_SERIES_BINS} (a wider bin, or a shorter --duration)"
    )]
    TooMany {
        /// The bin asked for.
        bin: Duration,
        /// The run's duration.
        duration: Duration,
        /// The bins it would have.
        bins: u128,
    },
}

/// One egress queue's open bin.
#[derive(Clone, Copy, Default)]
struct QueueBin {
    active: bool,
    bin: u64,
    level: u64,
    max: u64,
}

/// One port's pause state and open bin.
#[derive(Clone, Copy, Default)]
struct PauseBin {
    mask: u8,
    since_ps: u128,
    bin: u64,
    paused: [u64; 8],
}

/// One flow's open bin.
#[derive(Clone, Copy, Default)]
struct FlowBin {
    active: bool,
    bin: u64,
    bytes: f64,
}

/// The writer of one CSV file.
struct File {
    path: PathBuf,
    w: BufWriter<AtomicFile>,
}

/// The `--series` sink: streams the three CSV files of the module's schema.
pub struct SeriesSink {
    bin_ps: u128,
    end_ps: u128,
    files: Vec<File>,
    error: Option<OutputError>,
    /// Per port: `node,port,peer` as CSV fields.
    port_fields: Vec<String>,
    /// Per port: whether its link is under 802.3x PAUSE (one pause for every priority).
    port_is_pause: Vec<bool>,
    /// Per port × 8 priorities.
    queues: Vec<QueueBin>,
    pauses: Vec<PauseBin>,
    /// Per flow id (grows as workloads start flows).
    flows: Vec<FlowBin>,
    /// Per flow of the scenario: `flow,src,dst,priority` as CSV fields.
    flow_fields: Vec<String>,
    /// Per node: the rate its data arrives at (a host's fastest link).
    rx_rate: Vec<Option<Rate>>,
}

/// A CSV field: as is, or quoted (with its quotes doubled) when it holds a comma, a quote or
/// a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl SeriesSink {
    /// Creates `dir` if it is missing (not its parents) and starts the three files of a run
    /// of `config` with bins of `bin` (see [`series_bin`]).
    pub fn create(dir: &Path, config: &SimConfig, bin: Duration) -> Result<Self, OutputError> {
        lossless_files::create_output_dir(dir)?;
        let heads = [
            "time_ps,bin_ps,node,port,peer,priority,max_bytes,end_bytes",
            "time_ps,bin_ps,node,port,peer,priority,paused_ps",
            "time_ps,bin_ps,flow_id,flow,src,dst,priority,delivered_bytes,rate_bps",
        ];
        let mut files = Vec::with_capacity(3);
        for (name, head) in SERIES_FILES.iter().zip(heads) {
            let path = dir.join(name);
            let mut w = BufWriter::new(AtomicFile::create(&path)?);
            writeln!(w, "{head}").map_err(|source| OutputError {
                path: path.clone(),
                source,
            })?;
            files.push(File { path, w });
        }
        let name = |n: NodeId| field(&config.nodes[n as usize].name);
        let mut local = vec![0u32; config.nodes.len()];
        let mut port_fields = Vec::with_capacity(config.links.len() * 2);
        let mut port_is_pause = Vec::with_capacity(config.links.len() * 2);
        for link in &config.links {
            for (me, peer, fc) in [(link.a, link.b, &link.fc_a), (link.b, link.a, &link.fc_b)] {
                port_fields.push(format!("{},{},{}", name(me), local[me as usize], name(peer)));
                port_is_pause.push(fc.mode == Mode::Pause);
                local[me as usize] += 1;
            }
        }
        let mut rx_rate: Vec<Option<Rate>> = vec![None; config.nodes.len()];
        for link in &config.links {
            for n in [link.a, link.b] {
                if !matches!(config.nodes[n as usize].kind, NodeKind::Switch(_)) {
                    let r = &mut rx_rate[n as usize];
                    *r = Some(r.map_or(link.rate, |r| r.max(link.rate)));
                }
            }
        }
        let flow_fields = config
            .flows
            .iter()
            .map(|f| {
                format!(
                    "{},{},{},{}",
                    field(&f.name),
                    name(f.src),
                    name(f.dst),
                    f.priority
                )
            })
            .collect();
        let ports = port_fields.len();
        Ok(SeriesSink {
            bin_ps: bin.as_ps().max(1),
            end_ps: config.duration.as_ps(),
            files,
            error: None,
            port_fields,
            port_is_pause,
            queues: vec![QueueBin::default(); ports * 8],
            pauses: vec![PauseBin::default(); ports],
            flows: vec![FlowBin::default(); config.flows.len()],
            flow_fields,
            rx_rate,
        })
    }

    /// Whether a write failed (the error comes from [`SeriesSink::stage`]).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// The width of bin `k`: the bin, or less for the last one, which ends at the run's end.
    fn width(&self, k: u64) -> u128 {
        let start = u128::from(k) * self.bin_ps;
        ((start + self.bin_ps).min(self.end_ps))
            .saturating_sub(start)
            .max(1)
    }

    fn bin_of(&self, ps: u128) -> u64 {
        u64::try_from(ps / self.bin_ps).unwrap_or(u64::MAX)
    }

    fn queue_row(&mut self, i: usize, k: u64, max: u64, end: u64) {
        let (t, w) = (u128::from(k) * self.bin_ps, self.width(k));
        let port = &self.port_fields[i / 8];
        let prio = i % 8;
        row(
            &mut self.files,
            &mut self.error,
            0,
            format_args!("{t},{w},{port},{prio},{max},{end}\n"),
        );
    }

    /// Closes queue `i`'s open bin and the bins it held its level through, up to bin `k`
    /// (exclusive).
    fn queue_advance(&mut self, i: usize, k: u64) {
        let q = self.queues[i];
        if !q.active || k <= q.bin {
            return;
        }
        if q.max > 0 {
            self.queue_row(i, q.bin, q.max, q.level);
        }
        if q.level > 0 {
            for j in q.bin + 1..k {
                self.queue_row(i, j, q.level, q.level);
            }
        }
        let q = &mut self.queues[i];
        q.bin = k;
        q.max = q.level;
    }

    /// Adds port `p`'s pause time up to `t_ps` to its bins, writing the bins it closes.
    fn pause_advance(&mut self, p: usize, t_ps: u128) {
        let mut from = self.pauses[p].since_ps;
        let mask = self.pauses[p].mask;
        if mask != 0 {
            while from < t_ps {
                let k = self.bin_of(from);
                self.pause_close(p, k);
                let edge = ((u128::from(k) + 1) * self.bin_ps).min(t_ps);
                let s = &mut self.pauses[p];
                for (prio, acc) in s.paused.iter_mut().enumerate() {
                    if mask & (1 << prio) != 0 {
                        *acc += u64::try_from(edge - from).unwrap_or(u64::MAX);
                    }
                }
                from = edge;
            }
        }
        self.pauses[p].since_ps = t_ps;
    }

    /// Writes port `p`'s open bin if bin `k` is later, and opens `k`.
    fn pause_close(&mut self, p: usize, k: u64) {
        let s = self.pauses[p];
        if k <= s.bin {
            return;
        }
        let (t, w) = (u128::from(s.bin) * self.bin_ps, self.width(s.bin));
        for (prio, &ps) in s.paused.iter().enumerate() {
            if ps == 0 {
                continue;
            }
            let port = &self.port_fields[p];
            let args = if self.port_is_pause[p] {
                format_args!("{t},{w},{port},all,{ps}\n")
            } else {
                format_args!("{t},{w},{port},{prio},{ps}\n")
            };
            row(&mut self.files, &mut self.error, 1, args);
        }
        let s = &mut self.pauses[p];
        s.bin = k;
        s.paused = [0; 8];
    }

    /// Writes flow `f`'s open bin and the empty bins after it if bin `k` is later, and opens `k`.
    fn flow_advance(&mut self, f: usize, k: u64) {
        let s = self.flows[f];
        if !s.active {
            self.flows[f] = FlowBin {
                active: true,
                bin: k,
                bytes: 0.0,
            };
            return;
        }
        if k <= s.bin {
            return;
        }
        self.flow_row(f, s.bin, s.bytes);
        for j in s.bin + 1..k {
            self.flow_row(f, j, 0.0);
        }
        let s = &mut self.flows[f];
        s.bin = k;
        s.bytes = 0.0;
    }

    fn flow_row(&mut self, f: usize, k: u64, bytes: f64) {
        let (t, w) = (u128::from(k) * self.bin_ps, self.width(k));
        let rate = bytes * 8.0 * 1e12 / w as f64;
        // a flow a workload started: its number only
        let fields = self.flow_fields.get(f).map_or(",,,", String::as_str);
        row(
            &mut self.files,
            &mut self.error,
            2,
            format_args!("{t},{w},{f},{fields},{bytes:.3},{rate:.0}\n"),
        );
    }

    /// Closes every open bin at the run's end `end`, completes the files and adds them to
    /// `all`, to be put in place with the run's other outputs; reports the first error met
    /// while writing, if any (then no file is added and the temporary files are removed).
    /// Returns the files' final names.
    pub fn stage(&mut self, end: Instant, all: &mut Commit) -> Result<Vec<PathBuf>, OutputError> {
        let end_ps = end.as_ps().max(1);
        self.end_ps = end_ps;
        // the bin after the last one: every bin up to the run's end is closed
        let after = self.bin_of(end_ps - 1).saturating_add(1);
        for i in 0..self.queues.len() {
            self.queue_advance(i, after);
        }
        for p in 0..self.pauses.len() {
            self.pause_advance(p, end_ps);
            self.pause_close(p, after);
        }
        for f in 0..self.flows.len() {
            if self.flows[f].active {
                let s = self.flows[f];
                self.flow_row(f, s.bin, s.bytes);
                self.flows[f].active = false;
            }
        }
        if let Some(e) = self.error.take() {
            self.files.clear();
            return Err(e);
        }
        let mut done = Vec::with_capacity(self.files.len());
        // flush all before adding any: a full disk is found before a file is staged
        for File { path, w } in std::mem::take(&mut self.files) {
            let file = w.into_inner().map_err(|e| OutputError {
                path: path.clone(),
                source: e.into_error(),
            })?;
            done.push((path, file));
        }
        let mut staged = Commit::new();
        let mut names = Vec::with_capacity(done.len());
        for (path, file) in done {
            staged.add_file(file)?;
            names.push(path);
        }
        all.append(staged);
        Ok(names)
    }
}

/// Writes one row to file `f` (0 queues, 1 pause, 2 flows), keeping the first error.
fn row(files: &mut [File], error: &mut Option<OutputError>, f: usize, args: std::fmt::Arguments<'_>) {
    if error.is_some() {
        return;
    }
    let file = &mut files[f];
    if let Err(source) = file.w.write_fmt(args) {
        *error = Some(OutputError {
            path: file.path.clone(),
            source,
        });
    }
}

impl Observer for SeriesSink {
    const PAUSE_STATE: bool = true;
    const BUFFER_STATE: bool = false;

    fn queue_changed(&mut self, port: PortId, prio: u8, bytes: u64, at: Instant) {
        let i = port as usize * 8 + (prio as usize & 7);
        if i >= self.queues.len() || self.error.is_some() {
            return;
        }
        let k = self.bin_of(at.as_ps());
        if !self.queues[i].active {
            if bytes == 0 {
                return;
            }
            self.queues[i] = QueueBin {
                active: true,
                bin: k,
                level: 0,
                max: 0,
            };
        }
        self.queue_advance(i, k);
        let q = &mut self.queues[i];
        q.level = bytes;
        q.max = q.max.max(bytes);
    }

    fn pause_changed(&mut self, port: PortId, mask: u8, at: Instant) {
        let p = port as usize;
        if p >= self.pauses.len() || self.error.is_some() {
            return;
        }
        self.pause_advance(p, at.as_ps());
        self.pauses[p].mask = mask;
    }

    fn delivered(&mut self, node: NodeId, frame: &Frame, at: Instant) {
        if !frame.kind.is_data() || self.error.is_some() {
            return; // ACKs, CNPs and CNMs are no flow's data
        }
        let f = frame.flow as usize;
        if f >= self.flows.len() {
            // a flow a workload started: its open bin is made when it first delivers
            self.flows.resize(f + 1, FlowBin::default());
        }
        let bytes = f64::from(frame.len);
        let t1 = at.as_ps();
        let t0 = match self.rx_rate.get(node as usize).copied().flatten() {
            Some(rate) => t1.saturating_sub(rate.time_for_bytes(u64::from(frame.len)).as_ps()),
            None => t1,
        };
        if t0 == t1 {
            self.flow_advance(f, self.bin_of(t1));
            self.flows[f].bytes += bytes;
            return;
        }
        // the frame's bits arrived over [t0, t1]: each bin gets its share
        let whole = (t1 - t0) as f64;
        let mut t = t0;
        while t < t1 {
            // a bin already closed (another link of the host was faster) takes no more
            let k = self.bin_of(t).max(if self.flows[f].active {
                self.flows[f].bin
            } else {
                0
            });
            self.flow_advance(f, k);
            let edge = ((u128::from(k) + 1) * self.bin_ps).min(t1).max(t + 1);
            self.flows[f].bytes += bytes * (edge - t) as f64 / whole;
            t = edge;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_bin_has_a_floor_and_a_most_bins_and_a_default_of_a_thousand_bins() {
        let ms = Duration::from_us(1000);
        assert_eq!(series_bin(None, ms).unwrap(), Duration::from_us(1));
        assert_eq!(
            series_bin(None, Duration::from_us(10)).unwrap(),
            Duration::from_us(1),
            "the floor"
        );
        assert_eq!(
            series_bin(Some(Duration::from_us(10)), ms).unwrap(),
            Duration::from_us(10)
        );
        let e = series_bin(Some(Duration::from_ps(999_999)), ms).unwrap_err();
        assert!(e.to_string().contains("allowed at least 1"), "{e}");
        let e = series_bin(Some(Duration::from_us(1)), Duration::from_us(2_000_000)).unwrap_err();
        assert!(
            e.to_string().contains("2000000 bins, allowed at most 1000000"),
            "{e}"
        );
    }

    #[test]
    fn csv_fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(field("tor"), "tor");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
