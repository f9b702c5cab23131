//! Transparent huge pages for simulations: `lossless sim` runs with glibc's
//! `glibc.malloc.hugetlb=1` tunable unless the user's `GLIBC_TUNABLES` says otherwise.
//!
//! A large simulation is bound by memory latency, not by instructions: at 8,192 hosts the
//! ports alone are 230 MB read at random, and their frame queues ~50 MB more on the heap, so
//! nearly every port an event touches is a TLB miss on 4 kB pages (docs/benchmarks.md, "Huge
//! pages for large fabrics"). With the tunable, glibc marks its heap and its large blocks
//! `MADV_HUGEPAGE`, and Linux backs them with 2 MB pages (the default
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` on most distributions). A tunable
//! is read once, when the process starts: so `lossless sim` starts itself again, the same
//! binary with the same arguments and process id, with the tunable added. Nothing else
//! changes: the allocator hands out the same blocks, results are the same bytes.

use std::ffi::{OsStr, OsString};

/// The glibc tunable that marks the heap and large blocks for transparent huge pages.
const TUNABLE: &str = "glibc.malloc.hugetlb";

/// `GLIBC_TUNABLES` with huge pages asked for, given its value now; `None` when it already
/// sets the tunable (either way: `glibc.malloc.hugetlb=0` is the user's opt-out) or is not
/// text.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
fn with_huge_pages(current: Option<&OsStr>) -> Option<OsString> {
    match current.map(OsStr::to_str) {
        None => Some(format!("{TUNABLE}=1").into()),
        Some(None) => None,
        Some(Some(s)) if s.split(':').any(|t| t.split('=').next() == Some(TUNABLE)) => None,
        Some(Some("")) => Some(format!("{TUNABLE}=1").into()),
        Some(Some(s)) => Some(format!("{s}:{TUNABLE}=1").into()),
    }
}

/// Starts this process again with huge pages asked for of glibc, when they are not yet; returns
/// only when that is not needed or not possible (no `/proc`, an exec refused), and the run goes
/// on as it is.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn ensure() {
    use std::os::unix::process::CommandExt as _;
    let Some(tunables) = with_huge_pages(std::env::var_os("GLIBC_TUNABLES").as_deref()) else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| "lossless".into());
    // `exec` returns only on failure: then the run continues here, on small pages
    let _ = std::process::Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .exec();
}

/// Huge pages are asked of glibc only: elsewhere the run goes on as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn ensure() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tunable is added to what the user set, and never overrides the user's own value.
    #[test]
    fn the_tunable_is_added_unless_the_user_set_it() {
        let v = |s: &str| with_huge_pages(Some(OsStr::new(s)));
        assert_eq!(with_huge_pages(None), Some("glibc.malloc.hugetlb=1".into()));
        assert_eq!(v(""), Some("glibc.malloc.hugetlb=1".into()));
        assert_eq!(
            v("glibc.malloc.arena_max=2"),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1".into())
        );
        assert_eq!(v("glibc.malloc.hugetlb=0"), None);
        assert_eq!(v("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"), None);
        assert_eq!(
            v("glibc.malloc.hugetlb_x=1"),
            Some("glibc.malloc.hugetlb_x=1:glibc.malloc.hugetlb=1".into())
        );
    }

    /// A value that is not text is left alone (it cannot be extended without guessing).
    #[test]
    fn a_value_that_is_not_text_is_left_alone() {
        use std::os::unix::ffi::OsStrExt as _;
        assert_eq!(with_huge_pages(Some(OsStr::from_bytes(b"\xff"))), None);
    }
}
