//! What the tests of the commands' inputs and outputs share: the binary under test (the
//! environment variable `LOSSLESS_TEST_BIN` points them at another build, to show a test fails
//! on a binary without the fix), runs bounded in time, and standard output closed, full or
//! on a nearly full disk.
#![allow(dead_code)]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The `lossless` binary under test.
pub fn bin() -> PathBuf {
    std::env::var_os("LOSSLESS_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_lossless")))
}

/// A sample capture of the repository.
pub fn sample_capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures/sample.pcapng")
}

/// Waits for `child` at most `limit`, killing it and failing the test after that (a hang).
pub fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `lossless ARGS` (at most 60 s).
pub fn run(args: &[&str]) -> Output {
    run_for(args, Duration::from_secs(60))
}

/// Runs `lossless ARGS` in `dir` (at most 60 s).
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir);
    spawn_bounded(cmd, args, Duration::from_secs(60))
}

/// Runs `lossless ARGS` for at most `limit` (a long run: the HPCC ns-3 corpus in a debug build).
pub fn run_for<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S], limit: Duration) -> Output {
    spawn_bounded(Command::new(bin()), args, limit)
}

/// Runs `cmd` with `args`, no standard input and its outputs captured, for at most `limit`.
fn spawn_bounded<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(
    mut cmd: Command,
    args: &[S],
    limit: Duration,
) -> Output {
    let child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lossless binary runs");
    wait_bounded(child, limit, &format!("lossless {args:?}"))
}

/// Runs `cmd` (a `lossless` command line or a wrapper around one) with standard output a
/// pipe whose reading end is already closed, as after `| head -1`; returns its status and
/// standard error.
pub fn with_closed_stdout(cmd: &mut Command) -> (ExitStatus, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    let out = wait_bounded(child, Duration::from_secs(60), &format!("{cmd:?}"));
    (out.status, err)
}

/// Runs `cmd` with standard output `/dev/full`; returns its status and standard error.
pub fn with_full_stdout(cmd: &mut Command) -> (ExitStatus, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let out = wait_bounded(child, Duration::from_secs(60), &format!("{cmd:?}"));
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `lossless ARGS` as a command to run.
pub fn lossless(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args);
    c
}

/// What a run on a nearly full disk left.
pub struct TinyDiskRun {
    /// The run's status.
    pub status: ExitStatus,
    /// Its standard error.
    pub stderr: String,
    /// Every file left on the disk after it (relative paths, sorted).
    pub left: Vec<String>,
}

/// Runs `lossless ARGS` in a private mount namespace with its working directory on a
/// `kib` KiB tmpfs (gone with the namespace, so nothing leaks), and lists what is left on it.
/// Needs root and `unshare`: `None` (with a loud skip) otherwise.
pub fn on_tiny_disk(test: &str, scratch: &Path, kib: u32, args: &[&str]) -> Option<TinyDiskRun> {
    if !lossless_testkit::require_root(test) || lossless_testkit::require("unshare", test).is_none() {
        return None;
    }
    let mnt = scratch.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let listing = scratch.join("left.txt");
    let script = format!(
        "mount -t tmpfs -o size={kib}k lossless-test \"$0\" || exit 99; cd \"$0\" || exit 98; \
         \"$@\"; rc=$?; find . -mindepth 1 -type f | sort > {}; exit $rc",
        listing.display()
    );
    let child = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .arg(&mnt)
        .arg(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare");
    let out = wait_bounded(
        child,
        Duration::from_secs(60),
        &format!("{args:?} on a tiny disk"),
    );
    assert!(
        !matches!(out.status.code(), Some(98 | 99)),
        "mounting the tmpfs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = std::fs::read_to_string(&listing)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .collect();
    Some(TinyDiskRun {
        status: out.status,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        left,
    })
}

/// Standard error of a run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output of a run, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts a run did not panic (Rust's panic message or exit status 101).
pub fn assert_no_panic(status: ExitStatus, err: &str, what: &str) {
    assert!(
        !err.contains("panicked") && status.code() != Some(101),
        "{what} panicked: {status:?} {err}"
    );
}

/// Every file under `dir` (path relative to it, bytes), sorted by path: the outputs of two
/// runs compared whole.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}
