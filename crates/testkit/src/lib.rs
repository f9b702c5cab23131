//! Test support shared by the workspace: locating external reference tools (tshark, python3
//! with scapy, lldpad, lldpd), running them, writing captures for them, and skipping loudly.
//!
//! A test that needs a peer calls [`require`]. When the peer is missing the test is skipped
//! with a loud message on stderr, unless `LOSSLESS_REQUIRE_PEERS=1` is set (the README's test
//! command sets it when it ran as root and installed the peers): then a missing peer fails.

pub mod alloc_count;
pub mod netns;
pub mod pathology;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether missing peers must fail tests instead of skipping them.
pub fn peers_required() -> bool {
    std::env::var("LOSSLESS_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// Finds `program` on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Returns the path of `program`, or reports a skip (or fails, when peers are required).
pub fn require(program: &str, test: &str) -> Option<PathBuf> {
    match which(program) {
        Some(p) => Some(p),
        None => {
            skip(test, &format!("`{program}` is not installed"));
            None
        }
    }
}

/// Whether python3 can import `module`; reports a skip (or fails) when it cannot.
pub fn require_python_module(module: &str, test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(test, &format!("python3 cannot import `{module}`"));
    }
    ok
}

/// Whether the test runs as root (needed for network namespaces); reports a skip otherwise.
pub fn require_root(test: &str) -> bool {
    // SAFETY-free check: read the effective uid from /proc.
    let is_root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false);
    if !is_root {
        skip(test, "it needs root (network namespaces, raw sockets)");
    }
    is_root
}

/// Prints a loud skip notice, or panics when peers are required.
pub fn skip(test: &str, why: &str) {
    skip_with(test, why, "Run the README's test command as root to install it.");
}

/// Says loudly that `test` was skipped because the shared corpus (or `what` in it) is missing,
/// and how to point the tests at it; a failure when peers are required.
pub fn skip_missing_corpus(test: &str, what: &Path) {
    skip_with(
        test,
        &format!("{} not found (the shared corpus)", what.display()),
        "The tests look for shared/corpus beside the checkout or one of its parents; set LOSSLESS_CORPUS=DIR to point elsewhere.",
    );
}

fn skip_with(test: &str, why: &str, hint: &str) {
    let msg = format!("SKIPPED {test}: {why}. {hint}");
    if peers_required() {
        panic!("{msg} (LOSSLESS_REQUIRE_PEERS=1, so this is a failure)");
    }
    // Written to the process's stderr directly: libtest captures `eprintln!` of passing tests,
    // which would hide the skip.
    let _ = std::io::stderr().write_all(format!("\n!!!!!!!! {msg}\n\n").as_bytes());
    if let Some(log) = std::env::var_os("LOSSLESS_SKIP_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log)
    {
        let _ = writeln!(f, "{msg}");
    }
}

/// Writes `frames` (whole Ethernet frames, FCS included or not as given) to a classic pcap
/// file at `path`, one microsecond apart.
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let file = std::fs::File::create(path).expect("create pcap");
    let header = PcapHeader {
        snaplen: 65535,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(file, header).expect("pcap header");
    for (i, f) in frames.iter().enumerate() {
        let ts = std::time::Duration::from_micros(i as u64 + 1);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .expect("write packet");
    }
}

/// Runs `tshark -r pcap -T fields -E separator=| -E occurrence=a -e f1 -e f2 …` and returns one
/// row per frame, one column per field (empty string when absent). `extra` are extra
/// tshark options, such as `-o` preferences.
pub fn tshark_fields(tshark: &Path, pcap: &Path, fields: &[&str], extra: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new(tshark);
    cmd.arg("-n").arg("-r").arg(pcap).args(extra);
    cmd.args([
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

/// Runs python3 with `script` on stdin and returns its stdout; panics with stderr on failure.
pub fn python(script: &str) -> String {
    let mut child = Command::new("python3")
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write script");
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh temporary directory, removed with everything in it when dropped; kept (and named
/// on stderr) when the test is failing, or always with `LOSSLESS_KEEP_TEMP=1`, for
/// debugging. Derefs to its path.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() || std::env::var_os("LOSSLESS_KEEP_TEMP").is_some_and(|v| v == "1") {
            let _ = writeln!(std::io::stderr(), "kept {}", self.path.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A fresh temporary directory `lossless-NAME-PID-N` in the system's temporary directory,
/// removed when the returned guard is dropped: keep it in a variable for as long as the
/// test uses the directory.
pub fn temp_dir(name: &str) -> TempDir {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lossless-{name}-{}-{n}", std::process::id()));
    // a directory left by an earlier process of the same pid
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    TempDir { path: dir }
}

/// The shared corpus directory: `$LOSSLESS_CORPUS` if set, else the first `shared/corpus`
/// found beside the running crate's manifest directory or one of its ancestors (the
/// checkout's `../shared/corpus`). Looked up at run time, so a test binary built in one
/// checkout and run from another still finds its own checkout's corpus.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LOSSLESS_CORPUS") {
        return PathBuf::from(dir);
    }
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    start
        .ancestors()
        .map(|a| a.join("shared/corpus"))
        .find(|c| c.is_dir())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"))
}

/// Writes to `out` the corpus' HPCC fat tree `config.txt` (at `config`) with its queue monitor
/// from 100 ns before its flows start (2 s) to 2.1 s, so that every switch has queues to
/// sample while the monitor runs.
pub fn write_monitored_ft_config(config: &Path, out: &Path) {
    let text: String = std::fs::read_to_string(config)
        .unwrap_or_else(|e| panic!("{}: {e}", config.display()))
        .lines()
        .map(|l| match l.split_whitespace().next() {
            Some("QLEN_MON_START") => "QLEN_MON_START 1999999900\n".to_string(),
            Some("QLEN_MON_END") => "QLEN_MON_END 2100000000\n".to_string(),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(out, text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
