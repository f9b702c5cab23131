//! How every `lossless` command reads its input files and writes its output files, in one place
//! so that all of them behave alike:
//!
//! - [`read_input`]: an input is a regular file (a FIFO, a device such as `/dev/zero` or a
//!   directory is refused before anything is read) of at most a stated size, read in full.
//! - [`AtomicFile`]: an output is written to a temporary file in its own directory and renamed
//!   into place only when complete, so a failed or interrupted run leaves no half file; the
//!   error names the file that failed.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What the file is for (e.g. "scenario", "cdf_file").
        what: String,
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The path is not a regular file.
    #[error("{what} {}: is {kind}, not a regular file", path.display())]
    NotRegular {
        /// What the file is for.
        what: String,
        /// The file.
        path: PathBuf,
        /// What it is instead ("a directory", "a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// The file is larger than allowed.
    #[error("{what} {}: larger than the {limit} bytes allowed", path.display())]
    TooLarge {
        /// What the file is for.
        what: String,
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
}

fn kind_of(ft: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads the whole of `path`, a regular file of at most `limit` bytes; `what` names the
/// file's role in errors. The file type is checked on the opened file (no race with a
/// rename), and the read stops one byte past `limit` even if the file grows meanwhile.
pub fn read_input(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    let io_err = |source| InputError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    };
    // a FIFO would block in open(2) until a writer appears: look before opening
    let meta = fs::metadata(path).map_err(io_err)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular {
            what: what.to_string(),
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    let file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular {
            what: what.to_string(),
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    let too_large = || InputError::TooLarge {
        what: what.to_string(),
        path: path.to_path_buf(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(io_err)?;
    if buf.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(buf)
}

/// [`read_input`] for a text file: refuses bytes that are not UTF-8, naming the offset.
pub fn read_input_text(path: &Path, what: &str, limit: u64) -> Result<String, InputError> {
    let bytes = read_input(path, what, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        ),
    })
}

/// Why an output file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct OutputError {
    /// The output file (its final name, not the temporary one).
    pub path: PathBuf,
    /// The operating system's reason.
    pub source: io::Error,
}

/// An output file being written: bytes go to a temporary file beside `path`, which
/// [`AtomicFile::commit`] renames to `path`; dropped without a commit, the temporary file is
/// removed and `path` is left as it was.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Starts writing `path` (its directory must exist).
    pub fn create(path: &Path) -> Result<Self, OutputError> {
        let err = |source| OutputError {
            path: path.to_path_buf(),
            source,
        };
        let name = path
            .file_name()
            .ok_or_else(|| err(io::Error::new(io::ErrorKind::InvalidInput, "not a file name")))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut n = 0u32;
        loop {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".{}.{n}.tmp", std::process::id()));
            let tmp = dir.join(tmp_name);
            match fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    return Ok(AtomicFile {
                        path: path.to_path_buf(),
                        tmp,
                        file: Some(file),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(err(e)),
            }
        }
    }

    /// The final name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the data to the disk and renames the file into place.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let err = |source| OutputError {
            path: self.path.clone(),
            source,
        };
        if let Some(f) = self.file.take() {
            f.sync_all().map_err(err)?;
        }
        fs::rename(&self.tmp, &self.path).map_err(err)?;
        Ok(())
    }

    /// Writes all of `bytes`, naming the output file on error.
    pub fn write_all_named(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.write_all(bytes).map_err(|source| OutputError {
            path: self.path.clone(),
            source,
        })
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("output already committed")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` through an [`AtomicFile`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all_named(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lossless-files-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_character_device_is_refused_before_any_read() {
        let e = read_input(Path::new("/dev/zero"), "scenario", 1 << 20).unwrap_err();
        assert!(
            matches!(
                e,
                InputError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "scenario /dev/zero: is a character device, not a regular file"
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tmpdir("fifo");
        let p = d.join("f");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path
        assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&p, "cdf_file", 100).unwrap_err();
        assert!(matches!(e, InputError::NotRegular { kind: "a FIFO", .. }), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    unsafe extern "C" {
        #[link_name = "mkfifo"]
        fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_at_the_limit_read() {
        let d = tmpdir("limit");
        let p = d.join("x");
        fs::write(&p, vec![b'a'; 10]).unwrap();
        assert_eq!(read_input(&p, "x", 10).unwrap().len(), 10);
        let e = read_input(&p, "x", 9).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 9, .. }), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_uncommitted_output_leaves_nothing_and_the_old_file_intact() {
        let d = tmpdir("atomic");
        let p = d.join("out.json");
        fs::write(&p, "old").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"half").unwrap();
        }
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1, "temporary file removed");
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_in_a_missing_directory_names_the_file() {
        let e = AtomicFile::create(Path::new("/nonexistent-dir-lossless/out.json"))
            .err()
            .unwrap();
        assert!(
            e.to_string().starts_with("/nonexistent-dir-lossless/out.json: "),
            "{e}"
        );
    }
}
