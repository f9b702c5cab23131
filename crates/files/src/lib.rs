//! How every `lossless` command reads its input files and writes its output files, in one place
//! so that all of them behave alike:
//!
//! - [`read_input`]: an input read whole (scenario, configuration) is a regular file (a FIFO, a
//!   device such as `/dev/zero` or a directory is refused before anything is read) of at most a
//!   stated size. [`open_stream`]: an input read as a stream (a capture) may also be standard
//!   input (`-`), a FIFO or a device, since it is never held in memory whole.
//! - [`Output`]: an output file is written to a temporary file in its own directory and renamed
//!   into place only when complete ([`AtomicFile`]), so a failed or interrupted run leaves no
//!   half file; `-` is standard output; an output that is not a regular file (`/dev/null`, a
//!   FIFO, `/dev/stdout`) is written directly. Errors name the file that failed.
//! - [`Commit`]: the outputs of one run go in place together or not at all ([`Output::finish`]
//!   writes and syncs each, then one [`Commit::commit`] renames them all, putting back what it
//!   replaced if a rename fails), so an output that fails leaves every other output as it was.
//! - One rule for where outputs go: a command creates its output file or directory
//!   ([`create_output_dir`]) but never the directories above it.
//! - [`Claims`]: no output may be an input or another output (compared by canonical path and
//!   by inode).
//! - [`print_stdout`]: what commands print goes through one function whose errors (a closed
//!   pipe, a full disk) are returned, never a panic; [`is_broken_pipe`] tells a reader that went
//!   away (which ends a command quietly) from a real failure.

mod claims;
mod input;
mod output;

pub use claims::{Claims, ClashError};
pub use input::{InputError, open_stream, read_input, read_input_text};
pub use output::{
    AtomicFile, Commit, Output, OutputError, Staged, create_output_dir, is_broken_pipe, name_part,
    print_stdout, write_atomic,
};

#[cfg(test)]
pub(crate) mod test_support {
    use std::path::{Path, PathBuf};

    /// A fresh directory under the system's temporary directory, removed on drop.
    pub struct Scratch(pub PathBuf);

    impl Scratch {
        pub fn new(tag: &str) -> Scratch {
            let d = std::env::temp_dir().join(format!("lossless-files-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Scratch(d)
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    unsafe extern "C" {
        #[link_name = "mkfifo"]
        fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }

    /// Makes a FIFO at `p`.
    pub fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path
        assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
    }
}
