//! Two network namespaces joined by a veth pair, with processes started inside them; all
//! removed on drop (also when a test fails). Names carry the test's tag and the pid.
//! Needs root and iproute2's `ip`; check with [`ready`] first.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Namespaces `a` and `b` with interfaces `ia` (in a) and `ib` (in b), both up.
pub struct Pair {
    /// The first namespace's name.
    pub a: String,
    /// The second namespace's name.
    pub b: String,
    /// The veth end in namespace `a`.
    pub ia: String,
    /// The veth end in namespace `b`.
    pub ib: String,
    /// The directory for the processes' logs and files (removed after the namespaces, unless
    /// the test failed).
    pub dir: crate::TempDir,
    children: Vec<Child>,
}

/// Runs `cmd`, panicking with its stderr unless it succeeds.
fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Pair {
    /// Creates the namespaces and the veth pair; `tag` (short: interface names hold 15
    /// bytes) and the pid make the names unique.
    pub fn new(tag: &str) -> Pair {
        let pid = std::process::id();
        let p = Pair {
            a: format!("ll{tag}{pid}a"),
            b: format!("ll{tag}{pid}b"),
            ia: "dcb0".into(),
            ib: "dcb1".into(),
            dir: crate::temp_dir(&format!("dcbx-{tag}")),
            children: Vec::new(),
        };
        // Permissions for processes that drop privileges (lldpd's own user).
        let _ = std::fs::set_permissions(&p.dir, std::os::unix::fs::PermissionsExt::from_mode(0o755));
        run(Command::new("ip").args(["netns", "add", &p.a]));
        run(Command::new("ip").args(["netns", "add", &p.b]));
        let tmp = format!("lt{tag}{pid}");
        run(Command::new("ip").args([
            "link", "add", &tmp, "type", "veth", "peer", "name", &p.ib, "netns", &p.b,
        ]));
        run(Command::new("ip").args(["link", "set", &tmp, "netns", &p.a, "name", &p.ia]));
        run(Command::new("ip").args(["-n", &p.a, "link", "set", &p.ia, "up"]));
        run(Command::new("ip").args(["-n", &p.b, "link", "set", &p.ib, "up"]));
        p
    }

    /// Starts `args` in namespace `ns` with stdout+stderr to `log` in the pair's directory;
    /// returns its index (its pid is [`Pair::pid`]).
    pub fn spawn(&mut self, ns: &str, args: &[&str], log: &str) -> usize {
        let f = std::fs::File::create(self.dir.join(log)).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {args:?}: {e}"));
        self.children.push(child);
        self.children.len() - 1
    }

    /// The pid of a spawned process (`ip netns exec` execs the command in place).
    pub fn pid(&self, i: usize) -> u32 {
        self.children[i].id()
    }

    /// Waits (at most `limit`) for a spawned process to exit by itself; panics after that.
    pub fn wait_exit(&mut self, i: usize, limit: Duration) -> std::process::ExitStatus {
        let end = Instant::now() + limit;
        loop {
            if let Some(st) = self.children[i].try_wait().unwrap() {
                return st;
            }
            assert!(
                Instant::now() < end,
                "process {} did not exit within {limit:?}; logs in {}",
                self.children[i].id(),
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM to a spawned process and waits (at most 10 s) for it to exit.
    pub fn terminate(&mut self, i: usize) -> std::process::ExitStatus {
        let pid = self.children[i].id();
        let sent = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM {pid}");
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = self.children[i].try_wait().unwrap() {
                return st;
            }
            assert!(
                Instant::now() < end,
                "process {pid} did not exit within 10 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs a command in namespace `ns` (bounded by `timeout 10`) and returns its output.
    pub fn exec(&self, ns: &str, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", ns, "timeout", "10"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    /// A log file's text.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }

    /// Polls `f` every 200 ms until it returns `Some` or `limit` passes.
    pub fn wait_for<T>(&self, limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
        let end = Instant::now() + limit;
        loop {
            if let Some(v) = f() {
                return v;
            }
            if Instant::now() > end {
                panic!(
                    "timed out after {limit:?} waiting for {what}; logs in {}",
                    self.dir.display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for c in &mut self.children {
            if c.try_wait().ok().flatten().is_none() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.a]).status();
        let _ = Command::new("ip").args(["netns", "del", &self.b]).status();
    }
}

/// Whether this test can run: root and the given programs, else it is skipped loudly.
pub fn ready(test: &str, programs: &[&str]) -> bool {
    if !crate::require_root(test) {
        return false;
    }
    programs.iter().all(|p| crate::require(p, test).is_some())
}
